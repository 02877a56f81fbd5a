#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "util.h"

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

/* The header is a Python dict literal; we read the three keys we need
 * and refuse anything else, rather than guess. */
static berth_status parse_header(const char *path, const char *h, berth_tensor *t,
                                 berth_error *err) {
    const char *p = strstr(h, "'descr':");
    char descr[16] = {0};
    if (!p || sscanf(p + 8, " '%15[^']'", descr) != 1) {
        berth_errorf(err, "%s: npy header has no 'descr'", path);
        return BERTH_ERR_INVALID;
    }
    t->dtype = descr_dtype(descr);
    if (t->dtype == BERTH_DTYPE_INVALID) {
        berth_errorf(err, "%s: npy dtype '%s' is not one berth reads (f4 f2 i4 u4 i8 u8 i1 u1 b1, little-endian)",
                     path, descr);
        return BERTH_ERR_INVALID;
    }
    p = strstr(h, "'fortran_order':");
    if (!p || strncmp(p + 16 + strspn(p + 16, " "), "False", 5) != 0) {
        berth_errorf(err, "%s: npy array is not in C order (fortran_order must be False)", path);
        return BERTH_ERR_INVALID;
    }
    p = strstr(h, "'shape':");
    if (!p || !(p = strchr(p, '('))) {
        berth_errorf(err, "%s: npy header has no 'shape'", path);
        return BERTH_ERR_INVALID;
    }
    p++;
    t->rank = 0;
    for (;;) {
        p += strspn(p, " ,");
        if (*p == ')') break;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 0 || t->rank == BERTH_MAX_RANK) {
            berth_errorf(err, "%s: npy shape is malformed or has more than %d dims", path, BERTH_MAX_RANK);
            return BERTH_ERR_INVALID;
        }
        t->dims[t->rank++] = v;
        p = end;
    }
    return BERTH_OK;
}

berth_status berth_npy_read(const char *path, berth_tensor *t, berth_error *err) {
    memset(t, 0, sizeof *t);
    FILE *f = berth_fopen_regular(path, ".npy input", err);
    if (!f) return BERTH_ERR_IO;
    berth_status st = BERTH_ERR_INVALID;
    unsigned char pre[12];
    char *h = NULL;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        berth_errorf(err, "%s: not a .npy file (no \\x93NUMPY magic)", path);
        goto out;
    }
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    if (pre[6] >= 2) {
        if (fread(pre + 10, 1, 2, f) != 2) goto trunc;
        hlen |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    }
    if (hlen > 1 << 20) {
        berth_errorf(err, "%s: npy header of %zu bytes is larger than 1 MiB", path, hlen);
        goto out;
    }
    h = malloc(hlen + 1);
    if (!h) goto nomem;
    if (fread(h, 1, hlen, f) != hlen) goto trunc;
    h[hlen] = 0;
    if ((st = parse_header(path, h, t, err)) != BERTH_OK) goto out;
    st = BERTH_ERR_INVALID;
    int ok = 1;
    int64_t n = 1;
    for (uint32_t d = 0; d < t->rank; d++) n = berth_mul_checked(n, t->dims[d], &ok);
    size_t bytes = berth_dtype_bytes(t->dtype, (size_t)n, &ok);
    if (!ok) {
        berth_errorf(err, "%s: npy shape is too large", path);
        goto out;
    }
    t->data = malloc(bytes ? bytes : 1);
    if (!t->data) goto nomem;
    t->bytes = t->capacity = bytes;
    if (fread(t->data, 1, bytes, f) != bytes) goto trunc;
    st = BERTH_OK;
    goto out;
trunc:
    berth_errorf(err, "%s: npy file is truncated", path);
    st = BERTH_ERR_INVALID;
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
