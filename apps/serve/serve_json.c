/* Responses as JSON: a growing buffer, strings escaped, tensor data
 * printed so that it reads back to the same values. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "serve.h"

static int grow(serve_buf *b, size_t more) {
    if (b->failed) return 0;
    if (b->len + more + 1 <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + more + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

void serve_buf_printf(serve_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0 || !grow(b, (size_t)n)) return;
    if ((size_t)n < sizeof small) {
        memcpy(b->p + b->len, small, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

void serve_buf_put(serve_buf *b, const void *data, size_t n) {
    if (!grow(b, n)) return;
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = 0;
}

/* The length of the well-formed UTF-8 sequence at c (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *c) {
    if (c[0] < 0x80) return 1;
    size_t n = c[0] >= 0xC2 && c[0] <= 0xDF ? 2 : c[0] >= 0xE0 && c[0] <= 0xEF ? 3 : c[0] >= 0xF0 && c[0] <= 0xF4 ? 4 : 0;
    for (size_t i = 1; i < n; i++)
        if ((c[i] & 0xC0) != 0x80) return 0;
    if ((c[0] == 0xE0 && c[1] < 0xA0) || (c[0] == 0xED && c[1] > 0x9F) || (c[0] == 0xF0 && c[1] < 0x90) ||
        (c[0] == 0xF4 && c[1] > 0x8F))
        return 0;
    return n;
}

void serve_buf_json_str(serve_buf *b, const char *s) {
    serve_buf_put(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c;) {
        size_t n = utf8_len(c);
        if (*c == '"' || *c == '\\') {
            char esc[2] = {'\\', (char)*c};
            serve_buf_put(b, esc, 2);
        } else if (*c < 0x20) {
            serve_buf_printf(b, "\\u%04x", *c);
        } else if (!n) {
            serve_buf_put(b, "\\ufffd", 6);
            n = 1;
        } else {
            serve_buf_put(b, c, n);
        }
        c += n ? n : 1;
    }
    serve_buf_put(b, "\"", 1);
}

void serve_buf_label(serve_buf *b, const char *s) {
    serve_buf_put(b, "\"", 1);
    for (const char *c = s; *c; c++) {
        if (*c == '\\' || *c == '"') {
            char esc[2] = {'\\', *c};
            serve_buf_put(b, esc, 2);
        } else if (*c == '\n') {
            serve_buf_put(b, "\\n", 2);
        } else {
            serve_buf_put(b, c, 1);
        }
    }
    serve_buf_put(b, "\"", 1);
}

void serve_printable(char *dst, size_t cap, const char *s, size_t len, size_t max) {
    size_t o = 0;
    for (size_t i = 0; i < len && o + 8 < cap; i++) {
        if (i == max) {
            memcpy(dst + o, "...", 3);
            o += 3;
            break;
        }
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7F && c != '\\') dst[o++] = (char)c;
        else o += (size_t)snprintf(dst + o, cap - o, "\\x%02x", c);
    }
    if (cap) dst[o < cap ? o : cap - 1] = 0;
}

static void put_double(serve_buf *b, double v, int digits) {
    if (!isfinite(v)) serve_buf_put(b, "null", 4);
    else serve_buf_printf(b, "%.*g", digits, v);
}

void serve_buf_json_data(serve_buf *b, berth_dtype t, const void *data, size_t n) {
    /* Reserve roughly what the numbers take, so the loop rarely grows. */
    grow(b, n * (t == BERTH_DTYPE_F32 ? 16 : 8));
    serve_buf_put(b, "[", 1);
    for (size_t i = 0; i < n && !b->failed; i++) {
        if (i) serve_buf_put(b, ",", 1);
        switch (t) {
        case BERTH_DTYPE_F32: put_double(b, ((const float *)data)[i], 9); break;
        case BERTH_DTYPE_F16: put_double(b, berth_f16_to_f32(((const uint16_t *)data)[i]), 5); break;
        case BERTH_DTYPE_I8: serve_buf_printf(b, "%d", ((const int8_t *)data)[i]); break;
        case BERTH_DTYPE_U8: serve_buf_printf(b, "%u", ((const uint8_t *)data)[i]); break;
        case BERTH_DTYPE_I32: serve_buf_printf(b, "%d", ((const int32_t *)data)[i]); break;
        case BERTH_DTYPE_U32: serve_buf_printf(b, "%u", ((const uint32_t *)data)[i]); break;
        case BERTH_DTYPE_I64: serve_buf_printf(b, "%lld", (long long)((const int64_t *)data)[i]); break;
        case BERTH_DTYPE_U64: serve_buf_printf(b, "%llu", (unsigned long long)((const uint64_t *)data)[i]); break;
        default: serve_buf_put(b, "null", 4); break;
        }
    }
    serve_buf_put(b, "]", 1);
}

void serve_buf_free(serve_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

void serve_json_error(serve_buf *b, const char *msg) {
    serve_buf_put(b, "{\"error\":", 9);
    serve_buf_json_str(b, msg);
    serve_buf_put(b, "}", 1);
}

void serve_json_shape(serve_buf *b, const berth_io_info *io) {
    serve_buf_put(b, "[", 1);
    for (uint32_t d = 0; d < io->rank; d++)
        serve_buf_printf(b, "%s%lld", d ? "," : "", io->dyn[d] ? -1LL : (long long)io->dims[d]);
    serve_buf_put(b, "]", 1);
}
