#include "backend_call.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *berth_status_name(berth_status st) {
    switch (st) {
    case BERTH_OK: return "BERTH_OK";
    case BERTH_ERR_INVALID: return "BERTH_ERR_INVALID";
    case BERTH_ERR_UNSUPPORTED: return "BERTH_ERR_UNSUPPORTED";
    case BERTH_ERR_NOMEM: return "BERTH_ERR_NOMEM";
    case BERTH_ERR_DEVICE: return "BERTH_ERR_DEVICE";
    case BERTH_ERR_IO: return "BERTH_ERR_IO";
    case BERTH_ERR_INTERNAL: return "BERTH_ERR_INTERNAL";
    }
    return NULL;
}

void berth_backend_msg_reset(berth_error *why) {
    why->msg[0] = 0;
    why->msg[BERTH_ERROR_CAP - 1] = 0;
}

/* A message the backend did not terminate is shown by its first bytes
 * and a note: the user sees it was cut, the backend's author sees why.
 * The bytes kept are few enough that the note survives the context a
 * caller puts in front (a file and tensor name), where the whole buffer
 * would push it out. */
#define CUT_KEEP 200
static const char cut_note[] = " [cut: the backend did not end its message within 512 bytes]";

/* Append at most `max` bytes of src to out (BERTH_ERROR_CAP bytes, kept
 * terminated). */
static void put(berth_error *out, size_t *off, const char *src, size_t max) {
    size_t n = strnlen(src, max);
    if (n > BERTH_ERROR_CAP - 1 - *off) n = BERTH_ERROR_CAP - 1 - *off;
    memcpy(out->msg + *off, src, n);
    *off += n;
    out->msg[*off] = 0;
}

berth_status berth_backend_result(berth_status st, const char *backend, const char *verb,
                                  berth_error *why, berth_error *err) {
    if (st == BERTH_OK) return BERTH_OK;
    /* A copy, so `why` and `err` may be one buffer. */
    char msg[BERTH_ERROR_CAP];
    int unterminated = why->msg[BERTH_ERROR_CAP - 1] != 0;
    memcpy(msg, why->msg, BERTH_ERROR_CAP);
    msg[BERTH_ERROR_CAP - 1] = 0;

    const char *name = berth_status_name(st);
    char unknown[64];
    if (!name) {
        snprintf(unknown, sizeof unknown, "status %d, which no berth release defines", (int)st);
        name = unknown;
    }
    char head[BERTH_ERROR_CAP];
    snprintf(head, sizeof head, "backend '%s' %s()", backend ? backend : "?", verb);
    size_t off = 0;
    err->msg[0] = 0;
    put(err, &off, head, sizeof head);
    if (!msg[0]) {
        put(err, &off, " returned ", SIZE_MAX);
        put(err, &off, name, SIZE_MAX);
        put(err, &off, " with no message", SIZE_MAX);
    } else {
        put(err, &off, ": ", SIZE_MAX);
        put(err, &off, name, SIZE_MAX);
        put(err, &off, ": ", SIZE_MAX);
        if (unterminated) {
            put(err, &off, msg, CUT_KEEP);
            put(err, &off, cut_note, SIZE_MAX);
        } else {
            put(err, &off, msg, SIZE_MAX);
        }
    }
    return berth_status_name(st) ? st : BERTH_ERR_INTERNAL;
}
