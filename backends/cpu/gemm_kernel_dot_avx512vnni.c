/* The int8 tile with AVX512-VNNI: 4 rows x 16 columns of int32 sums, one
 * zmm per row. vpdpbusd multiplies unsigned bytes by signed ones, so A
 * (signed, [-127, 127]) goes in as a + 128 (a xor 0x80: in [1, 255]) and
 * the tile takes 128 times B's column sums back off at the end:
 *   sum (a + 128) b = sum a b + 128 sum b.
 * The column sums come from one more vpdpbusd per step (ones times B), so
 * the four rows share it. Exact: |sum (a + 128) b| <= 255 * 128 * 4 k4 and
 * 128 |sum b| <= 128 * 128 * 4 k4 stay below 2^31 for k4 up to 16,000
 * (callers pass at most a 512-deep slice, k4 128), and the subtraction
 * gives the true sum, which fits as well. Two sets of accumulators, even
 * and odd steps, so the 5-cycle latency of vpdpbusd does not bound it.
 * Built with -mavx512f -mavx512bw -mavx512vnni; called only after CPUID
 * reports them (gemm_dot.c). */
#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#include "cpu_gemm.h"

_Static_assert(CPU_DOT_MR == 4 && CPU_DOT_NR == 16, "the tile is 4 rows of one zmm");

/* A's 4 bytes at row r, step p, as unsigned bytes broadcast to all lanes */
static inline __m512i bcast_u(const int8_t *a, size_t lda, int r, size_t p) {
    uint32_t w;
    memcpy(&w, a + (size_t)r * lda + 4 * p, 4);
    return _mm512_set1_epi32((int)(w ^ 0x80808080u));
}

/* Row r's 16 bytes at step p (4 steps) as unsigned bytes, in all four
 * 128-bit lanes: vpshufd then broadcasts each step's 4 bytes with one
 * shuffle, where a broadcast per step went through a general register. */
static inline __m512i lanes_u(const int8_t *a, size_t lda, int r, size_t p, __m512i flip) {
    return _mm512_xor_si512(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(a + (size_t)r * lda + 4 * p))),
                            flip);
}

void cpu_dot_avx512vnni(size_t k4, const int8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc, int acc) {
    const __m512i ones = _mm512_set1_epi8(1), flip = _mm512_set1_epi8((char)0x80);
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, s = c0;
    __m512i d0 = c0, d1 = c0, d2 = c0, d3 = c0, t = c0;
    size_t p = 0;
    for (; p + 4 <= k4; p += 4) {
        __m512i x0 = lanes_u(a, lda, 0, p, flip), x1 = lanes_u(a, lda, 1, p, flip);
        __m512i x2 = lanes_u(a, lda, 2, p, flip), x3 = lanes_u(a, lda, 3, p, flip);
#define STEP(q, C0, C1, C2, C3, S)                                                          \
    {                                                                                   \
        __m512i bq = _mm512_loadu_si512(b + 64 * (p + (q)));                            \
        S = _mm512_dpbusd_epi32(S, ones, bq);                                           \
        C0 = _mm512_dpbusd_epi32(C0, _mm512_shuffle_epi32(x0, (_MM_PERM_ENUM)((q) * 0x55)), bq); \
        C1 = _mm512_dpbusd_epi32(C1, _mm512_shuffle_epi32(x1, (_MM_PERM_ENUM)((q) * 0x55)), bq); \
        C2 = _mm512_dpbusd_epi32(C2, _mm512_shuffle_epi32(x2, (_MM_PERM_ENUM)((q) * 0x55)), bq); \
        C3 = _mm512_dpbusd_epi32(C3, _mm512_shuffle_epi32(x3, (_MM_PERM_ENUM)((q) * 0x55)), bq); \
    }
        STEP(0, c0, c1, c2, c3, s) STEP(1, d0, d1, d2, d3, t) STEP(2, c0, c1, c2, c3, s) STEP(3, d0, d1, d2, d3, t)
#undef STEP
    }
    for (; p + 2 <= k4; p += 2) {
        __m512i b0 = _mm512_loadu_si512(b + 64 * p), b1 = _mm512_loadu_si512(b + 64 * p + 64);
        s = _mm512_dpbusd_epi32(s, ones, b0), t = _mm512_dpbusd_epi32(t, ones, b1);
        c0 = _mm512_dpbusd_epi32(c0, bcast_u(a, lda, 0, p), b0), d0 = _mm512_dpbusd_epi32(d0, bcast_u(a, lda, 0, p + 1), b1);
        c1 = _mm512_dpbusd_epi32(c1, bcast_u(a, lda, 1, p), b0), d1 = _mm512_dpbusd_epi32(d1, bcast_u(a, lda, 1, p + 1), b1);
        c2 = _mm512_dpbusd_epi32(c2, bcast_u(a, lda, 2, p), b0), d2 = _mm512_dpbusd_epi32(d2, bcast_u(a, lda, 2, p + 1), b1);
        c3 = _mm512_dpbusd_epi32(c3, bcast_u(a, lda, 3, p), b0), d3 = _mm512_dpbusd_epi32(d3, bcast_u(a, lda, 3, p + 1), b1);
    }
    if (p < k4) {
        __m512i b0 = _mm512_loadu_si512(b + 64 * p);
        s = _mm512_dpbusd_epi32(s, ones, b0);
        c0 = _mm512_dpbusd_epi32(c0, bcast_u(a, lda, 0, p), b0);
        c1 = _mm512_dpbusd_epi32(c1, bcast_u(a, lda, 1, p), b0);
        c2 = _mm512_dpbusd_epi32(c2, bcast_u(a, lda, 2, p), b0);
        c3 = _mm512_dpbusd_epi32(c3, bcast_u(a, lda, 3, p), b0);
    }
    __m512i off = _mm512_slli_epi32(_mm512_add_epi32(s, t), 7);
    __m512i r[4] = {_mm512_add_epi32(c0, d0), _mm512_add_epi32(c1, d1), _mm512_add_epi32(c2, d2),
                    _mm512_add_epi32(c3, d3)};
    for (int i = 0; i < 4; i++) {
        int32_t *cr = c + (size_t)i * ldc;
        __m512i v = _mm512_sub_epi32(r[i], off);
        if (acc) v = _mm512_add_epi32(v, _mm512_loadu_si512(cr));
        _mm512_storeu_si512(cr, v);
    }
}

/* acc += bu (unsigned) times the 4 signed bytes at a, broadcast from
 * memory. In assembly: GCC 12 kept the intrinsic's accumulators in
 * other registers and copied each in and out on every step (two moves
 * per product). a is 4-byte aligned. */
static inline __attribute__((always_inline)) __m512i dp_bcast(__m512i acc, __m512i bu, const int8_t *a) {
    __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(bu), "m"(*(const int32_t *)(const void *)a));
    return acc;
}

/* The fused tile (cpu_q8_tile): 8 rows of one 16-column panel. Here B
 * comes in unsigned, packed as b' xor 0x80 (that is b' + 128), and each row's 4 bytes
 * of A, signed, are broadcast straight from memory: one load and one
 * vpdpbusd per row and step, with no shuffle and no column sums. The
 * 128 sum a that the flip adds is taken off with the zero point's term,
 * (z' + 128) sum a, from the row sums the quantization already keeps;
 * the difference is the same exact integer as the tile's. Each block's
 * sums then go into y as the scaling pass does it: v = (sa s) * float(sum),
 * y = v for the first block, else y + v. */
/* Block g of the tile: its products, then its sums scaled into y0..y7.
 * FIRST: y = v (the first block, when the call does not add to c);
 * ZVEC: zero points per column (t->zq), else the one constant t->zq1.
 * Both are constants where the macro is used, so each of the four loops
 * has no branch per row. Rows 0-4 are addressed from one pointer and
 * rows 5-7 from another, with lda and 3 lda as index registers: two
 * pointer steps a step of k, where a pointer per row took eight. */
#define Q8_BLOCK(FIRST, ZVEC)                                                                                       \
    {                                                                                                               \
        const int8_t *p0 = t->a + g * t->lpa, *p4 = p0 + 4 * lda, *b = t->b + g * t->k4 * 64;                      \
        __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;         \
        for (size_t p = 0; p < t->k4; p++, p0 += 4, p4 += 4, b += 64) {                                             \
            __m512i bu = _mm512_load_si512(b);                                                                      \
            c0 = dp_bcast(c0, bu, p0);                                                                              \
            c1 = dp_bcast(c1, bu, p0 + lda);                                                                        \
            c2 = dp_bcast(c2, bu, p0 + 2 * lda);                                                                    \
            c3 = dp_bcast(c3, bu, p0 + lda3);                                                                       \
            c4 = dp_bcast(c4, bu, p4);                                                                              \
            c5 = dp_bcast(c5, bu, p4 + lda);                                                                        \
            c6 = dp_bcast(c6, bu, p4 + 2 * lda);                                                                    \
            c7 = dp_bcast(c7, bu, p4 + lda3);                                                                       \
        }                                                                                                           \
        const __m512i zq = ZVEC ? _mm512_loadu_si512(t->zq + 16 * g) : _mm512_setzero_si512();                     \
        const __m512 sv = _mm512_maskz_loadu_ps(mk, t->s + g * t->lds);                                             \
        const float *sa = t->sa + g;                                                                                \
        const int32_t *suma = t->suma + g;                                                                          \
        SCALE(0, FIRST, ZVEC) SCALE(1, FIRST, ZVEC) SCALE(2, FIRST, ZVEC) SCALE(3, FIRST, ZVEC)                     \
        SCALE(4, FIRST, ZVEC) SCALE(5, FIRST, ZVEC) SCALE(6, FIRST, ZVEC) SCALE(7, FIRST, ZVEC)                     \
    }
#define SCALE(r, FIRST, ZVEC)                                                                                       \
    {                                                                                                               \
        __m512i sum = _mm512_sub_epi32(c##r, ZVEC ? _mm512_mullo_epi32(zq, _mm512_set1_epi32(suma[(r) * ld]))       \
                                                  : _mm512_set1_epi32(t->zq1 * suma[(r) * ld]));                    \
        __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(sa[(r) * ld]), sv), _mm512_cvtepi32_ps(sum));         \
        y##r = FIRST ? v : _mm512_add_ps(y##r, v);                                                                  \
    }

void cpu_q8_avx512vnni(const cpu_q8_tile *t) {
    const __mmask16 mk = (__mmask16)((1u << t->w) - 1u);
    const size_t lda = t->lda, lda3 = 3 * t->lda, rows = t->rows, ld = t->ldsa;
    /* y0..y7 named, not an array, so they stay in registers */
#define LOAD_Y(r) \
    __m512 y##r = t->acc && (r) < rows ? _mm512_maskz_loadu_ps(mk, t->c + (size_t)(r) * t->ldc) : _mm512_setzero_ps();
    LOAD_Y(0) LOAD_Y(1) LOAD_Y(2) LOAD_Y(3) LOAD_Y(4) LOAD_Y(5) LOAD_Y(6) LOAD_Y(7)
#undef LOAD_Y
    size_t g = 0;
    if (!t->acc && t->nb) {
        if (t->zq) Q8_BLOCK(1, 1) else Q8_BLOCK(1, 0)
        g = 1;
    }
    if (t->zq)
        for (; g < t->nb; g++) Q8_BLOCK(0, 1)
    else
        for (; g < t->nb; g++) Q8_BLOCK(0, 0)
#undef SCALE
#undef Q8_BLOCK
#define STORE_Y(r) \
    if ((r) < rows) _mm512_mask_storeu_ps(t->c + (size_t)(r) * t->ldc, mk, y##r);
    STORE_Y(0) STORE_Y(1) STORE_Y(2) STORE_Y(3) STORE_Y(4) STORE_Y(5) STORE_Y(6) STORE_Y(7)
#undef STORE_Y
}
#endif
