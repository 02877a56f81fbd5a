/* The portable 4 x 16 tile: plain C the compiler vectorizes for whatever
 * the build targets. Used where neither AVX2 nor AVX-512 is present, and
 * on request (isa = generic) as a reference for the faster paths. */
#include "cpu_gemm.h"

#define MR 4
#define NR 16

/* off NULL: step p of B is the packed row b + NR p, else b + off[p]. */
static inline void tile(size_t kc, const float *a, size_t lda, const float *b, const size_t *off, float *c, size_t ldc,
                        int acc) {
    float t[MR][NR] = {{0}};
    for (size_t p = 0; p < kc; p++) {
        const float *bp = off ? b + off[p] : b + p * NR;
        for (int r = 0; r < MR; r++) {
            float ar = a[(size_t)r * lda + p];
            for (int j = 0; j < NR; j++) t[r][j] += ar * bp[j];
        }
    }
    for (int r = 0; r < MR; r++) {
        float *cr = c + (size_t)r * ldc;
        if (acc)
            for (int j = 0; j < NR; j++) cr[j] += t[r][j];
        else
            for (int j = 0; j < NR; j++) cr[j] = t[r][j];
    }
}

void cpu_ukernel_generic(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc, int acc) {
    tile(kc, a, lda, b, NULL, c, ldc, acc);
}

void cpu_ukernel_generic_ind(size_t kc, const float *a, size_t lda, const float *b, const size_t *off, float *c,
                             size_t ldc) {
    tile(kc, a, lda, b, off, c, ldc, 0);
}
