/* Numpy-style broadcasting, resolved once at plan time (by the kit) into
 * a collapsed iteration shape with per-input strides, so run time walks
 * rows with a contiguous (or stride-0) inner loop the compiler can
 * vectorize. */
#include <string.h>

#include "cpu_internal.h"

void cpu_bcast_init(cpu_prep *c, uint32_t n, cpu_bcast *b) {
    bk_bcast_of(&c->bk, n, &b->k);
    b->rows = 1;
    for (uint32_t d = 0; d + 1 < b->k.rank; d++) b->rows *= (size_t)b->k.dims[d];
}

void cpu_bcast_row(const cpu_bcast *b, size_t row, uint32_t n, size_t *off) {
    for (uint32_t k = 0; k < n; k++) off[k] = 0;
    for (int d = (int)b->k.rank - 2; d >= 0; d--) {
        size_t dim = (size_t)b->k.dims[d];
        size_t i = row % dim;
        row /= dim;
        for (uint32_t k = 0; k < n; k++) off[k] += i * (size_t)b->k.strides[k][d];
    }
}
