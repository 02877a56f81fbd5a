/* The AVX-512 tile: 12 rows x 32 columns, twenty-four zmm accumulators,
 * one broadcast of A per row and two loads of B per step. B is either a
 * packed panel or, for the direct convolution, rows found through a
 * table of offsets into a padded input. The same tile cut to its first 8
 * or 4 rows takes a product's last rows (128 tokens are ten tiles and
 * 8 rows), where a full tile computed 4 rows for nothing and went
 * through a buffer. Built with -mavx512f -mfma; called only after CPUID
 * reports AVX-512F. */
#if defined(__x86_64__)
#include <immintrin.h>

#include "cpu_gemm.h"

/* off NULL: step p of B is the packed row b + 32 p, else b + off[p].
 * R, the rows computed (12, 8 or 4), is a constant after inlining, so
 * the rows past it leave no code. */
static inline __attribute__((always_inline)) void tile(size_t kc, const float *a, size_t lda, const float *b,
                                                       const size_t *off, float *c, size_t ldc, int acc, int R,
                                                       const char *pf, size_t lines, unsigned shift) {
    const size_t every = ((size_t)1 << shift) - 1;
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m512 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    __m512 c60 = c00, c61 = c00, c70 = c00, c71 = c00, c80 = c00, c81 = c00;
    __m512 c90 = c00, c91 = c00, ca0 = c00, ca1 = c00, cb0 = c00, cb1 = c00;
    const float *a0 = a, *a3 = a + 3 * lda, *a6 = a + 6 * lda, *a9 = a + 9 * lda;
    for (size_t p = 0; p < kc; p++) {
        const float *bp = off ? b + off[p] : b + 32 * p;
        __m512 b0 = off ? _mm512_loadu_ps(bp) : _mm512_load_ps(bp);
        __m512 b1 = off ? _mm512_loadu_ps(bp + 16) : _mm512_load_ps(bp + 16), x;
        if (pf && (p & every) == 0 && (p >> shift) < lines) _mm_prefetch(pf + (p >> shift) * 64, _MM_HINT_T1);
#define ROW(r, base, o)                                   \
    if (0x##r < R) {                                      \
        x = _mm512_set1_ps(base[(o) * lda + p]);          \
        c##r##0 = _mm512_fmadd_ps(x, b0, c##r##0);        \
        c##r##1 = _mm512_fmadd_ps(x, b1, c##r##1);        \
    }
        ROW(0, a0, 0) ROW(1, a0, 1) ROW(2, a0, 2) ROW(3, a3, 0) ROW(4, a3, 1) ROW(5, a3, 2)
        ROW(6, a6, 0) ROW(7, a6, 1) ROW(8, a6, 2) ROW(9, a9, 0) ROW(a, a9, 1) ROW(b, a9, 2)
#undef ROW
    }
#define STORE(r, i)                                                                       \
    if ((i) < R) {                                                                        \
        float *cr = c + (i) * ldc;                                                        \
        if (acc) {                                                                        \
            c##r##0 = _mm512_add_ps(c##r##0, _mm512_loadu_ps(cr));                        \
            c##r##1 = _mm512_add_ps(c##r##1, _mm512_loadu_ps(cr + 16));                   \
        }                                                                                 \
        _mm512_storeu_ps(cr, c##r##0);                                                    \
        _mm512_storeu_ps(cr + 16, c##r##1);                                               \
    }
    STORE(0, 0) STORE(1, 1) STORE(2, 2) STORE(3, 3) STORE(4, 4) STORE(5, 5)
    STORE(6, 6) STORE(7, 7) STORE(8, 8) STORE(9, 9) STORE(a, 10) STORE(b, 11)
#undef STORE
}

void cpu_ukernel_avx512(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc, int acc) {
    tile(kc, a, lda, b, NULL, c, ldc, acc, 12, NULL, 0, 0);
}

void cpu_ukernel_avx512_pf(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc, int acc,
                           const char *pf, size_t lines, unsigned shift) {
    tile(kc, a, lda, b, NULL, c, ldc, acc, 12, pf, lines, shift);
}

void cpu_ukernel_avx512_part(size_t rows, size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc,
                             int acc) {
    if (rows == 8)
        tile(kc, a, lda, b, NULL, c, ldc, acc, 8, NULL, 0, 0);
    else
        tile(kc, a, lda, b, NULL, c, ldc, acc, 4, NULL, 0, 0);
}

void cpu_ukernel_avx512_ind(size_t kc, const float *a, size_t lda, const float *b, const size_t *off, float *c,
                            size_t ldc) {
    tile(kc, a, lda, b, off, c, ldc, 0, 12, NULL, 0, 0);
}
#endif
