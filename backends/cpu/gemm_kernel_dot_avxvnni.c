/* The int8 tile with AVX-VNNI, the VEX form of vpdpbusd on ymm (Alder
 * Lake, Sapphire Rapids, Zen 5): 4 rows x 16 columns of int32 sums, two
 * ymm per row. As in the AVX512-VNNI tile (its comment has the bounds),
 * A goes in as a + 128 and 128 times B's column sums, from one vpdpbusd
 * of ones per register of B and step, comes off at the end. Eight row
 * accumulators and two of column sums are ten independent chains, enough
 * to cover vpdpbusd's latency at two per cycle. Built with -mavx2
 * -mavxvnni; called only after CPUID reports both (gemm_dot.c). */
#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#include "cpu_gemm.h"

_Static_assert(CPU_DOT_MR == 4 && CPU_DOT_NR == 16, "the tile is 4 rows of two ymm");

static inline __m256i bcast_u(const int8_t *a, size_t lda, int r, size_t p) {
    uint32_t w;
    memcpy(&w, a + (size_t)r * lda + 4 * p, 4);
    return _mm256_set1_epi32((int)(w ^ 0x80808080u));
}

void cpu_dot_avxvnni(size_t k4, const int8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc, int acc) {
    const __m256i ones = _mm256_set1_epi8(1);
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
            c31 = c00, s0 = c00, s1 = c00;
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    size_t p = 0;
    /* Four steps at a time: each row's 16 bytes in both 128-bit lanes,
     * made unsigned once, then one vpshufd a step broadcasts its 4 bytes
     * (a broadcast per step went through a general register). */
    for (; p + 4 <= k4; p += 4) {
        __m256i x0 = _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(a + 4 * p))), flip);
        __m256i x1 = _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(a + lda + 4 * p))), flip);
        __m256i x2 = _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(a + 2 * lda + 4 * p))), flip);
        __m256i x3 = _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(a + 3 * lda + 4 * p))), flip);
#define STEP(q)                                                                                  \
    {                                                                                            \
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(b + 64 * (p + (q))));                  \
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + 64 * (p + (q)) + 32)), x;           \
        s0 = _mm256_dpbusd_avx_epi32(s0, ones, b0), s1 = _mm256_dpbusd_avx_epi32(s1, ones, b1);   \
        x = _mm256_shuffle_epi32(x0, (q) * 0x55);                                                \
        c00 = _mm256_dpbusd_avx_epi32(c00, x, b0), c01 = _mm256_dpbusd_avx_epi32(c01, x, b1);    \
        x = _mm256_shuffle_epi32(x1, (q) * 0x55);                                                \
        c10 = _mm256_dpbusd_avx_epi32(c10, x, b0), c11 = _mm256_dpbusd_avx_epi32(c11, x, b1);    \
        x = _mm256_shuffle_epi32(x2, (q) * 0x55);                                                \
        c20 = _mm256_dpbusd_avx_epi32(c20, x, b0), c21 = _mm256_dpbusd_avx_epi32(c21, x, b1);    \
        x = _mm256_shuffle_epi32(x3, (q) * 0x55);                                                \
        c30 = _mm256_dpbusd_avx_epi32(c30, x, b0), c31 = _mm256_dpbusd_avx_epi32(c31, x, b1);    \
    }
        STEP(0) STEP(1) STEP(2) STEP(3)
#undef STEP
    }
    for (; p < k4; p++) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(b + 64 * p));
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + 64 * p + 32)), x;
        s0 = _mm256_dpbusd_avx_epi32(s0, ones, b0), s1 = _mm256_dpbusd_avx_epi32(s1, ones, b1);
#define ROW(r)                                     \
    x = bcast_u(a, lda, r, p);                     \
    c##r##0 = _mm256_dpbusd_avx_epi32(c##r##0, x, b0); \
    c##r##1 = _mm256_dpbusd_avx_epi32(c##r##1, x, b1);
        ROW(0) ROW(1) ROW(2) ROW(3)
#undef ROW
    }
    s0 = _mm256_slli_epi32(s0, 7), s1 = _mm256_slli_epi32(s1, 7);
#define STORE(r)                                                                                           \
    {                                                                                                      \
        int32_t *cr = c + (size_t)(r) * ldc;                                                               \
        __m256i v0 = _mm256_sub_epi32(c##r##0, s0), v1 = _mm256_sub_epi32(c##r##1, s1);                     \
        if (acc) {                                                                                         \
            v0 = _mm256_add_epi32(v0, _mm256_loadu_si256((const __m256i *)cr));                            \
            v1 = _mm256_add_epi32(v1, _mm256_loadu_si256((const __m256i *)(cr + 8)));                      \
        }                                                                                                  \
        _mm256_storeu_si256((__m256i *)cr, v0), _mm256_storeu_si256((__m256i *)(cr + 8), v1);              \
    }
    STORE(0) STORE(1) STORE(2) STORE(3)
#undef STORE
}
#endif
