#include "bucket.h"

#include <string.h>

#include "dtype.h"

int32_t berth_bucket_choose(const int64_t *buckets, uint32_t n_buckets, uint32_t n_syms,
                            const int64_t *asked, uint32_t n_inputs, const uint32_t *in_rank,
                            const int64_t *in_dims, const int32_t *in_sym) {
    int32_t best = -1;
    /* Elements are counted in long double: products of several dims can
     * pass 2^63 in a hostile config, and only their order matters. */
    long double best_cost = 0;
    for (uint32_t b = 0; b < n_buckets; b++) {
        const int64_t *val = buckets + (size_t)b * n_syms;
        int holds = 1;
        for (uint32_t s = 0; s < n_syms && holds; s++) holds = val[s] >= asked[s];
        if (!holds) continue;
        long double cost = 0;
        for (uint32_t i = 0; i < n_inputs; i++) {
            long double elems = 1;
            for (uint32_t d = 0; d < in_rank[i]; d++) {
                int32_t s = in_sym[i * BERTH_MAX_RANK + d];
                elems *= (long double)(s >= 0 ? val[s] : in_dims[i * BERTH_MAX_RANK + d]);
            }
            cost += elems;
        }
        if (best < 0 || cost < best_cost) {
            best = (int32_t)b;
            best_cost = cost;
        }
    }
    return best;
}

/* Both copies walk the outer dims with an index vector and copy the
 * innermost run with memcpy; no recursion, no allocation. */
static void corner_copy(char *dst, const int64_t *dst_dims, const char *src,
                        const int64_t *src_dims, const int64_t *count, uint32_t rank,
                        size_t elem) {
    if (rank == 0) {
        memcpy(dst, src, elem);
        return;
    }
    for (uint32_t d = 0; d < rank; d++)
        if (count[d] == 0) return;
    int64_t dst_stride[BERTH_MAX_RANK], src_stride[BERTH_MAX_RANK], idx[BERTH_MAX_RANK];
    int64_t ds = 1, ss = 1;
    for (int d = (int)rank - 1; d >= 0; d--) {
        dst_stride[d] = ds;
        src_stride[d] = ss;
        ds *= dst_dims[d];
        ss *= src_dims[d];
        idx[d] = 0;
    }
    size_t run = (size_t)count[rank - 1] * elem;
    for (;;) {
        int64_t doff = 0, soff = 0;
        for (uint32_t d = 0; d + 1 < rank; d++) {
            doff += idx[d] * dst_stride[d];
            soff += idx[d] * src_stride[d];
        }
        memcpy(dst + (size_t)doff * elem, src + (size_t)soff * elem, run);
        int d = (int)rank - 2;
        while (d >= 0 && ++idx[d] == count[d]) idx[d--] = 0;
        if (d < 0) return;
    }
}

void berth_pad_copy(void *dst, const int64_t *dst_dims, const void *src, const int64_t *src_dims,
                    uint32_t rank, size_t elem) {
    corner_copy(dst, dst_dims, src, src_dims, src_dims, rank, elem);
}

void berth_trim_copy(void *dst, const int64_t *dst_dims, const void *src, const int64_t *src_dims,
                     uint32_t rank, size_t elem) {
    corner_copy(dst, dst_dims, src, src_dims, dst_dims, rank, elem);
}

void berth_fill(void *dst, berth_dtype dtype, size_t n, double v) {
    switch (dtype) {
    case BERTH_DTYPE_F32: {
        float *p = dst, f = (float)v;
        for (size_t i = 0; i < n; i++) p[i] = f;
        return;
    }
    case BERTH_DTYPE_I32: {
        int32_t *p = dst, x = (int32_t)v;
        for (size_t i = 0; i < n; i++) p[i] = x;
        return;
    }
    case BERTH_DTYPE_U32: {
        uint32_t *p = dst, x = (uint32_t)v;
        for (size_t i = 0; i < n; i++) p[i] = x;
        return;
    }
    case BERTH_DTYPE_I64: {
        int64_t *p = dst, x = (int64_t)v;
        for (size_t i = 0; i < n; i++) p[i] = x;
        return;
    }
    case BERTH_DTYPE_U64: {
        uint64_t *p = dst, x = (uint64_t)v;
        for (size_t i = 0; i < n; i++) p[i] = x;
        return;
    }
    case BERTH_DTYPE_I8:
        memset(dst, (int8_t)v, n);
        return;
    case BERTH_DTYPE_U8:
        memset(dst, (uint8_t)v, n);
        return;
    default: {
        /* f16 and 4-bit inputs are padded with zero bits. */
        int ok = 1;
        memset(dst, 0, berth_dtype_bytes(dtype, n, &ok));
        return;
    }
    }
}
