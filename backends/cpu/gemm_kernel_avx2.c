/* The AVX2 + FMA tile: 6 rows x 16 columns, twelve ymm accumulators, one
 * broadcast of A and two loads of B per step, B packed or found through
 * an offset table (see gemm_kernel_avx512.c). Built with -mavx2 -mfma;
 * called only after CPUID reports both. */
#if defined(__x86_64__)
#include <immintrin.h>

#include "cpu_gemm.h"

static inline __attribute__((always_inline)) void tile(size_t kc, const float *a, size_t lda, const float *b,
                                                       const size_t *off, float *c, size_t ldc, int acc) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    const float *a0 = a, *a3 = a + 3 * lda;
    for (size_t p = 0; p < kc; p++) {
        const float *bp = off ? b + off[p] : b + 16 * p;
        __m256 b0 = off ? _mm256_loadu_ps(bp) : _mm256_load_ps(bp);
        __m256 b1 = off ? _mm256_loadu_ps(bp + 8) : _mm256_load_ps(bp + 8), x;
#define ROW(r, base, o)                                  \
    x = _mm256_broadcast_ss(base + (o) * lda + p);       \
    c##r##0 = _mm256_fmadd_ps(x, b0, c##r##0);           \
    c##r##1 = _mm256_fmadd_ps(x, b1, c##r##1);
        ROW(0, a0, 0) ROW(1, a0, 1) ROW(2, a0, 2) ROW(3, a3, 0) ROW(4, a3, 1) ROW(5, a3, 2)
#undef ROW
    }
#define STORE(r)                                                                          \
    {                                                                                     \
        float *cr = c + (r) * ldc;                                                        \
        if (acc) {                                                                        \
            c##r##0 = _mm256_add_ps(c##r##0, _mm256_loadu_ps(cr));                        \
            c##r##1 = _mm256_add_ps(c##r##1, _mm256_loadu_ps(cr + 8));                    \
        }                                                                                 \
        _mm256_storeu_ps(cr, c##r##0);                                                    \
        _mm256_storeu_ps(cr + 8, c##r##1);                                                \
    }
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5)
#undef STORE
}

void cpu_ukernel_avx2(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc, int acc) {
    tile(kc, a, lda, b, NULL, c, ldc, acc);
}

void cpu_ukernel_avx2_ind(size_t kc, const float *a, size_t lda, const float *b, const size_t *off, float *c,
                          size_t ldc) {
    tile(kc, a, lda, b, off, c, ldc, 0);
}
#endif
