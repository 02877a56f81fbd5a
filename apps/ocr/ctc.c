#include "ctc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* PaddleOCR's Chinese table has 6623 lines; a file far larger than any
 * such table is a wrong argument. */
#define OCR_KEYS_MAX_BYTES (16L * 1024 * 1024)

berth_status ocr_keys_load(const char *path, ocr_keys *keys, berth_error *err) {
    memset(keys, 0, sizeof *keys);
    FILE *f = berth_fopen_regular(path, "key file", err);
    if (!f) return BERTH_ERR_IO;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (n < 0 || n > OCR_KEYS_MAX_BYTES || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        snprintf(err->msg, sizeof err->msg,
                 "%s: expected a key file of at most 16 MiB, one character per line", path);
        return BERTH_ERR_INVALID;
    }
    char *text = malloc((size_t)n + 1);
    if (!text) {
        fclose(f);
        snprintf(err->msg, sizeof err->msg, "%s: out of memory reading the key file", path);
        return BERTH_ERR_NOMEM;
    }
    size_t got = fread(text, 1, (size_t)n, f);
    fclose(f);
    if (got != (size_t)n) {
        free(text);
        snprintf(err->msg, sizeof err->msg, "%s: short read of the key file", path);
        return BERTH_ERR_IO;
    }
    text[n] = '\0';
    size_t lines = 0;
    for (long i = 0; i < n; i++) lines += text[i] == '\n';
    if (n > 0 && text[n - 1] != '\n') lines++; /* last line without newline */
    if (lines == 0) {
        free(text);
        snprintf(err->msg, sizeof err->msg, "%s: key file is empty, expected one character per line",
                 path);
        return BERTH_ERR_INVALID;
    }
    char **line = malloc(lines * sizeof *line);
    if (!line) {
        free(text);
        snprintf(err->msg, sizeof err->msg, "%s: out of memory indexing the key file", path);
        return BERTH_ERR_NOMEM;
    }
    size_t k = 0;
    char *start = text;
    for (long i = 0; i <= n; i++) {
        if (i == n && start == text + n) break;
        if (i < n && text[i] != '\n') continue;
        text[i] = '\0';
        /* Lines may end in CRLF; PaddleOCR strips both. */
        if (text + i > start && text[i - 1] == '\r') text[i - 1] = '\0';
        line[k++] = start;
        start = text + i + 1;
    }
    keys->text = text;
    keys->line = line;
    keys->count = k;
    return BERTH_OK;
}

void ocr_keys_free(ocr_keys *keys) {
    free(keys->line);
    free(keys->text);
    memset(keys, 0, sizeof *keys);
}

size_t ocr_keys_classes(const ocr_keys *keys) { return keys->count + 2; }

const char *ocr_keys_text(const ocr_keys *keys, int64_t id) {
    if (id >= 1 && (uint64_t)id <= keys->count) return keys->line[id - 1];
    if (id >= 1 && (uint64_t)id == keys->count + 1) return " ";
    return NULL;
}

void ocr_ctc_decode(const float *probs, int64_t steps, int64_t classes, int64_t *ids,
                    int64_t *n_ids, float *confidence) {
    int64_t n = 0, prev = -1;
    double sum = 0;
    for (int64_t t = 0; t < steps; t++) {
        const float *p = probs + t * classes;
        int64_t best = 0;
        for (int64_t c = 1; c < classes; c++)
            if (p[c] > p[best]) best = c;
        /* A repeat collapses only when no other class (blank included)
         * came between: "a a" is one a, "a _ a" is two. */
        if (best != 0 && best != prev) {
            ids[n++] = best;
            sum += p[best];
        }
        prev = best;
    }
    *n_ids = n;
    *confidence = n ? (float)(sum / (double)n) : 0.0f;
}

berth_status ocr_keys_join(const ocr_keys *keys, const int64_t *ids, int64_t n, char *out,
                           size_t cap, berth_error *err) {
    size_t len = 0;
    if (cap) out[0] = '\0';
    for (int64_t i = 0; i < n; i++) {
        const char *s = ocr_keys_text(keys, ids[i]);
        if (!s) {
            snprintf(err->msg, sizeof err->msg,
                     "class %lld has no character: expected 1..%zu for a key file of %zu lines",
                     (long long)ids[i], keys->count + 1, keys->count);
            return BERTH_ERR_INVALID;
        }
        size_t sl = strlen(s);
        if (len + sl + 1 > cap) {
            snprintf(err->msg, sizeof err->msg, "decoded text longer than %zu bytes", cap);
            return BERTH_ERR_NOMEM;
        }
        memcpy(out + len, s, sl + 1);
        len += sl;
    }
    return BERTH_OK;
}
