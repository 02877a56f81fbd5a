/* Numpy-style broadcasting, resolved once at plan time into a collapsed
 * iteration shape with per-input strides, so run time walks rows with a
 * contiguous (or stride-0) inner loop the compiler can vectorize. */
#include <string.h>

#include "cpu_internal.h"

berth_status cpu_bcast_init(cpu_prep *c, uint32_t n, const cpu_opnd *const *in, const cpu_opnd *out,
                            cpu_bcast *b) {
    uint32_t rank = 0;
    for (uint32_t k = 0; k < n; k++)
        if (in[k]->rank > rank) rank = in[k]->rank;
    int64_t want[BERTH_MAX_RANK] = {0};
    for (uint32_t d = 0; d < rank; d++) {
        int64_t v = 1;
        for (uint32_t k = 0; k < n; k++) {
            int64_t off = (int64_t)d - (int64_t)(rank - in[k]->rank);
            if (off < 0) continue;
            int64_t x = in[k]->dims[off];
            if (x == 1) continue;
            if (v != 1 && v != x) {
                char s0[128], s1[128];
                bk_dims_str(in[0]->dims, in[0]->rank, s0, sizeof s0);
                bk_dims_str(in[k]->dims, in[k]->rank, s1, sizeof s1);
                return bk_fail(&c->bk, "shapes %s and %s do not broadcast (dim %u: %lld vs %lld)", s0, s1,
                                d, (long long)v, (long long)x);
            }
            v = x;
        }
        want[d] = v;
    }
    berth_status st = bk_check_out_dims(&c->bk, 0, rank, want);
    if (st) return st;

    /* Full-rank strides, 0 where an input broadcasts. */
    int64_t dims[BERTH_MAX_RANK], strides[3][BERTH_MAX_RANK];
    for (uint32_t k = 0; k < n; k++) {
        int64_t s = 1;
        for (int d = (int)rank - 1; d >= 0; d--) {
            int64_t off = d - (int64_t)(rank - in[k]->rank);
            int64_t x = off < 0 ? 1 : in[k]->dims[off];
            strides[k][d] = (x == 1) ? 0 : s;
            s *= x;
        }
    }
    memcpy(dims, want, sizeof(int64_t) * rank);

    /* Drop size-1 dims, then merge neighbours that are contiguous for
     * every input. */
    memset(b, 0, sizeof *b);
    uint32_t r = 0;
    for (uint32_t d = 0; d < rank; d++) {
        if (dims[d] == 1) continue;
        if (r > 0) {
            int merge = 1;
            for (uint32_t k = 0; k < n; k++)
                if (b->strides[k][r - 1] != strides[k][d] * dims[d]) merge = 0;
            if (merge) {
                b->dims[r - 1] *= dims[d];
                for (uint32_t k = 0; k < n; k++) b->strides[k][r - 1] = strides[k][d];
                continue;
            }
        }
        b->dims[r] = dims[d];
        for (uint32_t k = 0; k < n; k++) b->strides[k][r] = strides[k][d];
        r++;
    }
    if (r == 0) { /* a scalar, or all ones */
        b->dims[0] = 1;
        r = 1;
    }
    b->rank = r;
    b->rows = 1;
    for (uint32_t d = 0; d + 1 < r; d++) b->rows *= (size_t)b->dims[d];
    return BERTH_OK;
}

void cpu_bcast_row(const cpu_bcast *b, size_t row, uint32_t n, size_t *off) {
    for (uint32_t k = 0; k < n; k++) off[k] = 0;
    for (int d = (int)b->rank - 2; d >= 0; d--) {
        size_t dim = (size_t)b->dims[d];
        size_t i = row % dim;
        row /= dim;
        for (uint32_t k = 0; k < n; k++) off[k] += i * (size_t)b->strides[k][d];
    }
}
