/* A backend module that is the cpu backend, except that one verb fails
 * the way its [backend.misbehave] section says:
 *
 *     verb = open | caps | supports_op | upload_begin | upload_dest |
 *            upload_tensor | upload_end | plan | run | plan_profile
 *     status = INVALID | UNSUPPORTED | NOMEM | DEVICE | IO | INTERNAL | a number
 *     message = text | empty | unterminated
 *
 * `text` writes "misbehave: VERB fails as asked"; `empty` writes nothing;
 * `unterminated` fills all BERTH_ERROR_CAP bytes with 'A' and no NUL.
 * Without `verb` nothing fails: it is the cpu backend under another name.
 * An unknown key fails open() with BERTH_ERR_INVALID naming it, as a
 * backend must. So every way a backend's error can reach the user has a
 * real module to come from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/backend.h"
#include "cpu_wrap.h"

static const berth_backend *cpu;
static berth_backend table;

/* The host services handed to the cpu backend: the host's own, except
 * that the options are this module's, not cpu's. */
static berth_host_services cpu_host;

static char fail_verb[32];
static berth_status fail_status = BERTH_ERR_INVALID;
static enum { MSG_TEXT, MSG_EMPTY, MSG_UNTERMINATED } fail_msg;

static uint32_t no_options(void *ctx) {
    (void)ctx;
    return 0;
}

static int failing(const char *verb) { return !strcmp(fail_verb, verb); }

static berth_status misbehave(const char *verb, berth_error *err) {
    if (fail_msg == MSG_TEXT) snprintf(err->msg, sizeof err->msg, "misbehave: %s fails as asked", verb);
    else if (fail_msg == MSG_UNTERMINATED) memset(err->msg, 'A', sizeof err->msg);
    /* MSG_EMPTY: the message is left as the host passed it. */
    return fail_status;
}

static berth_status bad_option(berth_error *err, const char *key, const char *value) {
    snprintf(err->msg, sizeof err->msg, "option '%s' in [backend.misbehave]: '%s' is not one of its values",
             key, value);
    return BERTH_ERR_INVALID;
}

static berth_status parse_options(const berth_host_services *host, berth_error *err) {
    /* In berth_status order from BERTH_ERR_INVALID = 1. */
    static const char *const statuses[] = {"INVALID", "UNSUPPORTED", "NOMEM", "DEVICE", "IO", "INTERNAL"};
    static const char *const verbs[] = {"open", "caps", "supports_op", "upload_begin", "upload_dest",
                                        "upload_tensor", "upload_end", "plan", "run", "plan_profile"};
    fail_verb[0] = 0;
    fail_status = BERTH_ERR_INVALID;
    fail_msg = MSG_TEXT;
    uint32_t n = host->option_count(host->ctx);
    for (uint32_t i = 0; i < n; i++) {
        const char *key = NULL, *value = NULL;
        if (host->option_at(host->ctx, i, &key, &value) != BERTH_OK || !key || !value) {
            snprintf(err->msg, sizeof err->msg, "misbehave: option %u of [backend.misbehave] could not be read", i);
            return BERTH_ERR_INVALID;
        }
        if (!strcmp(key, "verb")) {
            size_t k = 0;
            while (k < sizeof verbs / sizeof verbs[0] && strcmp(verbs[k], value)) k++;
            if (k == sizeof verbs / sizeof verbs[0]) return bad_option(err, key, value);
            snprintf(fail_verb, sizeof fail_verb, "%s", value);
        } else if (!strcmp(key, "status")) {
            char *end;
            long v = strtol(value, &end, 10);
            if (*value && !*end) {
                fail_status = (berth_status)v;
                continue;
            }
            size_t k = 0;
            while (k < sizeof statuses / sizeof statuses[0] && strcmp(statuses[k], value)) k++;
            if (k == sizeof statuses / sizeof statuses[0]) return bad_option(err, key, value);
            fail_status = (berth_status)(k + 1);
        } else if (!strcmp(key, "message")) {
            if (!strcmp(value, "text")) fail_msg = MSG_TEXT;
            else if (!strcmp(value, "empty")) fail_msg = MSG_EMPTY;
            else if (!strcmp(value, "unterminated")) fail_msg = MSG_UNTERMINATED;
            else return bad_option(err, key, value);
        } else {
            snprintf(err->msg, sizeof err->msg,
                     "unknown option '%s' in [backend.misbehave] (known: verb, status, message)", key);
            return BERTH_ERR_INVALID;
        }
    }
    return BERTH_OK;
}

static berth_status mb_open(const berth_host_services *host, berth_device **out, berth_error *err) {
    *out = NULL;
    berth_status st = parse_options(host, err);
    if (st != BERTH_OK) return st;
    if (failing("open")) return misbehave("open", err);
    cpu_host = *host;
    cpu_host.option_count = no_options;
    return cpu->open(&cpu_host, out, err);
}

static berth_status mb_caps(berth_device *dev, berth_caps *caps, berth_error *err) {
    if (failing("caps")) return misbehave("caps", err);
    return cpu->caps(dev, caps, err);
}

static berth_status mb_supports_op(berth_device *dev, const char *op, berth_dtype dtype, berth_error *err) {
    if (failing("supports_op")) return misbehave("supports_op", err);
    return cpu->supports_op(dev, op, dtype, err);
}

static berth_status mb_upload_begin(berth_device *dev, const berth_upload_info *info, berth_weights **out,
                                    berth_error *err) {
    if (failing("upload_begin")) {
        *out = NULL;
        return misbehave("upload_begin", err);
    }
    return cpu->upload_begin(dev, info, out, err);
}

static berth_status mb_upload_dest(berth_weights *w, const berth_weight_desc *desc, void **dest,
                                   berth_error *err) {
    *dest = NULL;
    if (failing("upload_dest")) return misbehave("upload_dest", err);
    return cpu->upload_dest ? cpu->upload_dest(w, desc, dest, err) : BERTH_OK;
}

static berth_status mb_upload_tensor(berth_weights *w, const berth_weight_desc *desc, void *data, uint32_t flags,
                                     int *taken, berth_error *err) {
    if (failing("upload_tensor")) {
        *taken = 0;
        return misbehave("upload_tensor", err);
    }
    return cpu->upload_tensor(w, desc, data, flags, taken, err);
}

static berth_status mb_upload_end(berth_weights *w, berth_error *err) {
    if (failing("upload_end")) return misbehave("upload_end", err);
    return cpu->upload_end(w, err);
}

static berth_status mb_plan(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                            berth_error *err) {
    if (failing("plan")) {
        *out = NULL;
        return misbehave("plan", err);
    }
    return cpu->plan(dev, w, g, out, err);
}

static berth_status mb_run(berth_plan *p, const berth_tensor *in, uint32_t ni, berth_tensor *out, uint32_t no,
                           berth_error *err) {
    if (failing("run")) return misbehave("run", err);
    return cpu->run(p, in, ni, out, no, err);
}

static berth_status mb_plan_profile(const berth_plan *p, uint64_t *ns, uint32_t n, berth_error *err) {
    if (failing("plan_profile")) return misbehave("plan_profile", err);
    return cpu->plan_profile(p, ns, n, err);
}

BERTH_BACKEND_EXPORT const berth_backend *berth_backend_entry(uint32_t host_abi_version,
                                                              const berth_host_services *host,
                                                              berth_error *why) {
    /* It speaks ABI 1.0: it validates its own options in open() and is
     * asked supports_op, so every verb a 1.0 module has can fail here
     * (the 1.1 paths have their own fixture in tests/abi). */
    (void)host_abi_version;
    if (!(cpu = cpu_wrap("misbehave", BERTH_BACKEND_ABI_V1_0, host, why, &table))) return NULL;
    table.open = mb_open;
    table.caps = mb_caps;
    table.supports_op = mb_supports_op;
    table.upload_begin = mb_upload_begin;
    table.upload_dest = mb_upload_dest;
    table.upload_tensor = mb_upload_tensor;
    table.upload_end = mb_upload_end;
    table.plan = mb_plan;
    table.run = mb_run;
    table.plan_profile = mb_plan_profile;
    return &table;
}
