/* The int8 tile with AVX2 alone: 4 rows x 16 columns of int32 sums, two
 * ymm per row. vpmaddubsw multiplies unsigned bytes by signed ones and
 * adds adjacent pairs into int16 with saturation, so the signs move over
 * to A: |b| (vpabsb, read as unsigned: -128 becomes 128) times
 * sign(a, b) (vpsignb: a negated where b < 0, zeroed where b = 0) is
 * a b for every pair. No saturation: |a| <= 127 (A is quantized to
 * [-127, 127], so negating it never wraps) and |b| <= 128, so each
 * product is at most 128 * 127 = 16256 in magnitude and a pair's sum at
 * most 32512 < 32767. vpmaddwd with ones then adds the two pairs of each
 * column's 4 values into int32, exactly. Built with -mavx2; called only
 * after CPUID reports it (gemm_dot.c). */
#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#include "cpu_gemm.h"

_Static_assert(CPU_DOT_MR == 4 && CPU_DOT_NR == 16, "the tile is 4 rows of two ymm");

void cpu_dot_avx2(size_t k4, const int8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc, int acc) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
            c31 = c00;
    size_t p = 0;
#define ROW(r, x)                                                                                          \
    c##r##0 = _mm256_add_epi32(c##r##0, _mm256_madd_epi16(_mm256_maddubs_epi16(u0, _mm256_sign_epi8(x, b0)), ones)); \
    c##r##1 = _mm256_add_epi32(c##r##1, _mm256_madd_epi16(_mm256_maddubs_epi16(u1, _mm256_sign_epi8(x, b1)), ones));
    /* Four steps at a time: each row's 16 bytes in both 128-bit lanes,
     * and one vpshufd a step broadcasts its 4 bytes. */
    for (; p + 4 <= k4; p += 4) {
        __m256i x0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(a + 4 * p)));
        __m256i x1 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(a + lda + 4 * p)));
        __m256i x2 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(a + 2 * lda + 4 * p)));
        __m256i x3 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(a + 3 * lda + 4 * p)));
#define STEP(q)                                                                                  \
    {                                                                                            \
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(b + 64 * (p + (q))));                  \
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + 64 * (p + (q)) + 32));             \
        __m256i u0 = _mm256_abs_epi8(b0), u1 = _mm256_abs_epi8(b1);                              \
        ROW(0, _mm256_shuffle_epi32(x0, (q) * 0x55))                                             \
        ROW(1, _mm256_shuffle_epi32(x1, (q) * 0x55))                                             \
        ROW(2, _mm256_shuffle_epi32(x2, (q) * 0x55))                                             \
        ROW(3, _mm256_shuffle_epi32(x3, (q) * 0x55))                                             \
    }
        STEP(0) STEP(1) STEP(2) STEP(3)
#undef STEP
    }
    for (; p < k4; p++) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(b + 64 * p));
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + 64 * p + 32));
        __m256i u0 = _mm256_abs_epi8(b0), u1 = _mm256_abs_epi8(b1);
        int32_t w0, w1, w2, w3;
        memcpy(&w0, a + 4 * p, 4), memcpy(&w1, a + lda + 4 * p, 4);
        memcpy(&w2, a + 2 * lda + 4 * p, 4), memcpy(&w3, a + 3 * lda + 4 * p, 4);
        ROW(0, _mm256_set1_epi32(w0)) ROW(1, _mm256_set1_epi32(w1)) ROW(2, _mm256_set1_epi32(w2))
        ROW(3, _mm256_set1_epi32(w3))
    }
#undef ROW
#define STORE(r)                                                                                           \
    {                                                                                                      \
        int32_t *cr = c + (size_t)(r) * ldc;                                                               \
        if (acc) {                                                                                         \
            c##r##0 = _mm256_add_epi32(c##r##0, _mm256_loadu_si256((const __m256i *)cr));                  \
            c##r##1 = _mm256_add_epi32(c##r##1, _mm256_loadu_si256((const __m256i *)(cr + 8)));            \
        }                                                                                                  \
        _mm256_storeu_si256((__m256i *)cr, c##r##0), _mm256_storeu_si256((__m256i *)(cr + 8), c##r##1);    \
    }
    STORE(0) STORE(1) STORE(2) STORE(3)
#undef STORE
}
#endif
