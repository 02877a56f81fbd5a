#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

berth_status ocr_npy_write(const char *path, const berth_tensor *t, berth_error *err) {
    if (t->dtype != BERTH_DTYPE_F32) {
        snprintf(err->msg, sizeof err->msg, "%s: expected a float32 tensor to dump, found dtype %d",
                 path, (int)t->dtype);
        return BERTH_ERR_INVALID;
    }
    /* Header: magic, version 1.0, u16 length, then a dict padded with
     * spaces and ended by a newline so the data starts 64-aligned. */
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    for (uint32_t d = 0; d < t->rank; d++)
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%lld,%s", (long long)t->dims[d],
                        d + 1 < t->rank ? " " : "");
    len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");
    size_t total = 10 + (size_t)len + 1;
    size_t padded = (total + 63) / 64 * 64;
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    size_t hlen = padded - 10;
    head[8] = (unsigned char)(hlen & 0xff);
    head[9] = (unsigned char)(hlen >> 8);
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err->msg, sizeof err->msg, "%s: cannot create: %s", path, strerror(errno));
        return BERTH_ERR_IO;
    }
    int ok = fwrite(head, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)len, f) == (size_t)len;
    for (size_t i = 10 + (size_t)len; ok && i + 1 < padded; i++) ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;
    /* The hosts berth targets are little-endian, as .npy '<f4' says. */
    ok = ok && fwrite(t->data, 1, t->bytes, f) == t->bytes;
    if (fclose(f) != 0) ok = 0;
    if (!ok) {
        snprintf(err->msg, sizeof err->msg, "%s: write failed", path);
        remove(path);
        return BERTH_ERR_IO;
    }
    return BERTH_OK;
}
