#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtype.h"
#include "util.h"

/* A header is a few hundred bytes; anything near this is not an array
 * header but a wrong file, and is refused before it is read. */
#define NPY_HEADER_MAX (1u << 20)

static berth_dtype descr_dtype(const char *d) {
    static const struct {
        const char *descr;
        berth_dtype t;
    } map[] = {{"<f4", BERTH_DTYPE_F32}, {"<f2", BERTH_DTYPE_F16}, {"<i4", BERTH_DTYPE_I32},
               {"<u4", BERTH_DTYPE_U32}, {"<i8", BERTH_DTYPE_I64}, {"<u8", BERTH_DTYPE_U64},
               {"|i1", BERTH_DTYPE_I8},  {"|u1", BERTH_DTYPE_U8},  {"|b1", BERTH_DTYPE_U8}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(d, map[i].descr)) return map[i].t;
    return BERTH_DTYPE_INVALID;
}

/* The magic, version and header length at the start of a file of `total`
 * bytes, of which the first `have` (up to 12) are in `pre`. On success
 * the header text lies at [*hstart, *hstart + *hlen). */
static berth_status read_preamble(const char *name, const unsigned char *pre, size_t have,
                                  size_t total, size_t *hstart, size_t *hlen, berth_error *err) {
    if (have < 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        berth_errorf(err, "%s: not a .npy file (no \\x93NUMPY magic)", name);
        return BERTH_ERR_INVALID;
    }
    if (pre[6] < 1 || pre[6] > 3) {
        berth_errorf(err, "%s: npy format version %u.%u is not one berth reads (1.0 to 3.0)", name,
                     pre[6], pre[7]);
        return BERTH_ERR_INVALID;
    }
    size_t len = pre[8] | (size_t)pre[9] << 8;
    size_t start = 10;
    if (pre[6] >= 2) {
        if (have < 12) {
            berth_errorf(err, "%s: npy file is truncated in its preamble (%zu bytes)", name, have);
            return BERTH_ERR_INVALID;
        }
        len |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        start = 12;
    }
    if (len > NPY_HEADER_MAX) {
        berth_errorf(err, "%s: npy header of %zu bytes is larger than 1 MiB", name, len);
        return BERTH_ERR_INVALID;
    }
    if (total < start || len > total - start) {
        berth_errorf(err, "%s: npy file is truncated: expected a %zu-byte header, file has %zu bytes after the preamble",
                     name, len, total - start);
        return BERTH_ERR_INVALID;
    }
    *hstart = start;
    *hlen = len;
    return BERTH_OK;
}

/* "(2, 3)" or "()" for messages. */
static void format_shape(char *out, size_t cap, const berth_tensor *t) {
    size_t n = (size_t)snprintf(out, cap, "(");
    for (uint32_t d = 0; d < t->rank && n < cap; d++)
        n += (size_t)snprintf(out + n, cap - n, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
    if (n < cap) snprintf(out + n, cap - n, t->rank == 1 ? ",)" : ")");
}

/* The shape tuple after 'shape': "(4, 5)", "(4,)" or "()": integers
 * >= 0 that fit 64 bits, separated by commas. */
static berth_status parse_shape(const char *name, const char *h, const char *p, berth_tensor *t,
                                berth_error *err) {
    p += strspn(p, " ");
    if (*p != '(') {
        berth_errorf(err, "%s: npy 'shape' is not a tuple", name);
        return BERTH_ERR_INVALID;
    }
    p++;
    t->rank = 0;
    for (;;) {
        p += strspn(p, " ");
        if (*p == ')') return BERTH_OK;
        if (t->rank == BERTH_MAX_RANK) {
            berth_errorf(err, "%s: npy shape has more than %d dims", name, BERTH_MAX_RANK);
            return BERTH_ERR_INVALID;
        }
        if (*p == '-') {
            berth_errorf(err, "%s: npy shape dim %u is negative, expected a size >= 0", name, t->rank);
            return BERTH_ERR_INVALID;
        }
        if (*p < '0' || *p > '9') {
            berth_errorf(err, "%s: npy shape is malformed, expected a dim or ')' at byte %zu of the header",
                     name, (size_t)(p - h));
            return BERTH_ERR_INVALID;
        }
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno == ERANGE) {
            berth_errorf(err, "%s: npy shape dim %u (%.*s) does not fit 64 bits", name, t->rank,
                         (int)(end - p < 24 ? end - p : 24), p);
            return BERTH_ERR_INVALID;
        }
        t->dims[t->rank++] = v;
        p = end + strspn(end, " ");
        if (*p == ',') p++;
        else if (*p != ')') {
            berth_errorf(err, "%s: npy shape is malformed, expected ',' or ')' at byte %zu of the header",
                         name, (size_t)(p - h));
            return BERTH_ERR_INVALID;
        }
    }
}

/* The header is a Python dict literal (NUL-terminated here); we read the
 * three keys we need and refuse anything else, rather than guess. */
static berth_status parse_header(const char *name, const char *h, berth_tensor *t,
                                 berth_error *err) {
    const char *p = strstr(h, "'descr':");
    char descr[16] = {0};
    if (!p || sscanf(p + 8, " '%15[^']'", descr) != 1) {
        berth_errorf(err, "%s: npy header has no 'descr'", name);
        return BERTH_ERR_INVALID;
    }
    t->dtype = descr_dtype(descr);
    if (t->dtype == BERTH_DTYPE_INVALID) {
        /* Echoed in a one-line message: no control bytes from the file. */
        for (char *c = descr; *c; c++)
            if (*c < 0x20 || *c == 0x7f) *c = '?';
        berth_errorf(err, "%s: npy dtype '%s' is not one berth reads (f4 f2 i4 u4 i8 u8 i1 u1 b1, little-endian)",
                     name, descr);
        return BERTH_ERR_INVALID;
    }
    p = strstr(h, "'fortran_order':");
    if (!p || strncmp(p + 16 + strspn(p + 16, " "), "False", 5) != 0) {
        berth_errorf(err, "%s: npy array is not in C order (fortran_order must be False)", name);
        return BERTH_ERR_INVALID;
    }
    p = strstr(h, "'shape':");
    if (!p) {
        berth_errorf(err, "%s: npy header has no 'shape'", name);
        return BERTH_ERR_INVALID;
    }
    return parse_shape(name, h, p + 8, t, err);
}

/* Parse the header text h[0..hlen) into t's dtype and shape and check
 * the data it promises is exactly the `have` bytes that follow it; *bytes
 * is that size. Nothing is allocated for the data until this passes, so
 * a header claiming gigabytes in a small file costs nothing. */
static berth_status describe(const char *name, const unsigned char *h, size_t hlen, size_t have,
                             berth_tensor *t, size_t *bytes, berth_error *err) {
    char *text = malloc(hlen + 1);
    if (!text) {
        berth_errorf(err, "%s: out of memory", name);
        return BERTH_ERR_NOMEM;
    }
    memcpy(text, h, hlen);
    text[hlen] = 0;
    berth_status st = parse_header(name, text, t, err);
    free(text);
    if (st != BERTH_OK) return st;
    char shape[BERTH_MAX_RANK * 22 + 4];
    format_shape(shape, sizeof shape, t);
    int ok = 1;
    int64_t n = 1;
    for (uint32_t d = 0; d < t->rank; d++) n = berth_mul_checked(n, t->dims[d], &ok);
    /* In 64 bits: on a 32-bit build a size_t count would wrap, and a
     * header claiming 2^62 elements would pass as an empty tensor. */
    uint64_t need = berth_dtype_bytes64(t->dtype, (uint64_t)n, &ok);
    if (!ok) {
        berth_errorf(err, "%s: npy shape %s of %s is too large: its byte size overflows 64 bits",
                     name, shape, berth_dtype_name(t->dtype));
        return BERTH_ERR_INVALID;
    }
    if (need != have) {
        berth_errorf(err, "%s: npy shape %s of %s: expected %llu bytes of data after the header, file has %zu",
                     name, shape, berth_dtype_name(t->dtype), (unsigned long long)need, have);
        return BERTH_ERR_INVALID;
    }
    *bytes = (size_t)need; /* equals `have`, a size_t */
    return BERTH_OK;
}

berth_status berth_npy_parse(const char *name, const void *buf, size_t size, berth_tensor *t,
                             berth_error *err) {
    memset(t, 0, sizeof *t);
    const unsigned char *b = buf;
    size_t hstart, hlen, bytes;
    berth_status st = read_preamble(name, b, size < 12 ? size : 12, size, &hstart, &hlen, err);
    if (st == BERTH_OK)
        st = describe(name, b + hstart, hlen, size - hstart - hlen, t, &bytes, err);
    if (st == BERTH_OK && !(t->data = malloc(bytes ? bytes : 1))) {
        berth_errorf(err, "%s: out of memory", name);
        st = BERTH_ERR_NOMEM;
    }
    if (st != BERTH_OK) {
        memset(t, 0, sizeof *t);
        return st;
    }
    if (bytes) memcpy(t->data, b + hstart + hlen, bytes);
    t->bytes = t->capacity = bytes;
    return BERTH_OK;
}

berth_status berth_npy_read(const char *path, berth_tensor *t, berth_error *err) {
    memset(t, 0, sizeof *t);
    struct stat sb;
    int fd = berth_open_regular(path, ".npy input", &sb, err);
    if (fd < 0) return BERTH_ERR_IO;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        berth_errorf(err, "%s: cannot open the .npy input: %s", path, strerror(errno));
        close(fd);
        return BERTH_ERR_IO;
    }
    /* A file past SIZE_MAX (a 32-bit build) cannot be read into memory,
     * and its size would wrap in every check below. */
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
        berth_errorf(err, "%s: npy file is %llu bytes, more than this %u-bit build's address space",
                     path, (unsigned long long)sb.st_size, (unsigned)(sizeof(size_t) * 8));
        fclose(f);
        return BERTH_ERR_INVALID;
    }
    /* Every size check below is against the file's size as stat saw it;
     * a read that comes up short later means the file changed under us. */
    size_t total = (size_t)sb.st_size;
    unsigned char pre[12], *h = NULL;
    size_t have = fread(pre, 1, sizeof pre, f);
    size_t hstart, hlen, bytes;
    berth_status st = read_preamble(path, pre, have, total, &hstart, &hlen, err);
    if (st != BERTH_OK) goto out;
    if (!(h = malloc(hlen ? hlen : 1))) goto nomem;
    if (fseek(f, (long)hstart, SEEK_SET) != 0 || fread(h, 1, hlen, f) != hlen) goto trunc;
    st = describe(path, h, hlen, total - hstart - hlen, t, &bytes, err);
    if (st != BERTH_OK) goto out;
    if (!(t->data = malloc(bytes ? bytes : 1))) goto nomem;
    t->bytes = t->capacity = bytes;
    if (fread(t->data, 1, bytes, f) != bytes) goto trunc;
    goto out;
trunc:
    berth_errorf(err, "%s: npy file is shorter than when it was opened", path);
    st = BERTH_ERR_IO;
    goto out;
nomem:
    berth_errorf(err, "%s: out of memory", path);
    st = BERTH_ERR_NOMEM;
out:
    if (st != BERTH_OK) {
        free(t->data);
        memset(t, 0, sizeof *t);
    }
    free(h);
    fclose(f);
    return st;
}
