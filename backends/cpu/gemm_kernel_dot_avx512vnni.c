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

/* Row r's 4 signed bytes at a, broadcast to every lane, and acc += bu
 * (unsigned) times x. In assembly: GCC 12 kept the intrinsic's
 * accumulators in other registers and copied each in and out on every
 * step (two moves per product), and would fold a broadcast used twice
 * into each product as a second load. */
static inline __attribute__((always_inline)) __m512i bcast4(const int8_t *a) {
    __m512i x;
    __asm__("vpbroadcastd %1, %0" : "=v"(x) : "m"(*(const int32_t *)(const void *)a));
    return x;
}
static inline __attribute__((always_inline)) __m512i dp(__m512i acc, __m512i bu, __m512i x) {
    __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(bu), "v"(x));
    return acc;
}

/* Block g of the tile: its products, then its sums scaled into y (the
 * first 16 columns) and z (the second).
 * FIRST: y = v (the first block, when the call does not add to c);
 * ZVEC: zero points per column (t->zq), taken off after the products;
 * else each row's sums start from its correction (t->suma), which costs
 * a load where the subtraction took a broadcast and a vector op.
 * Both are constants where the macro is used, so each of the four loops
 * has no branch per row. Rows 0-2 are addressed from one pointer and
 * rows 3-5 from another, with lda as the index register. */
#define Q8_BLOCK(FIRST, ZVEC)                                                                                       \
    {                                                                                                               \
        const int8_t *p0 = t->a + g * t->lpa, *p3 = p0 + 3 * lda, *b = t->b + g * t->k4 * 64, *e = b + pb;        \
        const int32_t *suma = t->suma + g;                                                                          \
        __m512i c0 = START(0, ZVEC), c1 = START(1, ZVEC), c2 = START(2, ZVEC);                                      \
        __m512i c3 = START(3, ZVEC), c4 = START(4, ZVEC), c5 = START(5, ZVEC);                                      \
        __m512i d0 = c0, d1 = c1, d2 = c2, d3 = c3, d4 = c4, d5 = c5;                                               \
        for (size_t p = 0; p < t->k4; p++, p0 += 4, p3 += 4, b += 64, e += 64) {                                   \
            __m512i b0 = _mm512_load_si512(b), b1 = _mm512_load_si512(e), x;                                        \
            x = bcast4(p0), c0 = dp(c0, b0, x), d0 = dp(d0, b1, x);                                                 \
            x = bcast4(p0 + lda), c1 = dp(c1, b0, x), d1 = dp(d1, b1, x);                                           \
            x = bcast4(p0 + 2 * lda), c2 = dp(c2, b0, x), d2 = dp(d2, b1, x);                                       \
            x = bcast4(p3), c3 = dp(c3, b0, x), d3 = dp(d3, b1, x);                                                 \
            x = bcast4(p3 + lda), c4 = dp(c4, b0, x), d4 = dp(d4, b1, x);                                           \
            x = bcast4(p3 + 2 * lda), c5 = dp(c5, b0, x), d5 = dp(d5, b1, x);                                       \
        }                                                                                                           \
        const __m512 s0 = _mm512_maskz_loadu_ps(m0, t->s + g * t->lds);                                             \
        const __m512 s1 = _mm512_maskz_loadu_ps(m1, t->s + g * t->lds + 16);                                        \
        const float *sa = t->sa + g;                                                                                \
        SCALE(0, FIRST, ZVEC) SCALE(1, FIRST, ZVEC) SCALE(2, FIRST, ZVEC)                                           \
        SCALE(3, FIRST, ZVEC) SCALE(4, FIRST, ZVEC) SCALE(5, FIRST, ZVEC)                                           \
    }
#define START(r, ZVEC) (ZVEC ? _mm512_setzero_si512() : _mm512_set1_epi32(suma[(r) * ld]))
#define SCALE(r, FIRST, ZVEC)                                                                                       \
    {                                                                                                               \
        __m512i u = c##r, w = d##r;                                                                                 \
        if (ZVEC) {                                                                                                 \
            __m512i sr = _mm512_set1_epi32(suma[(r) * ld]);                                                         \
            u = _mm512_sub_epi32(u, _mm512_mullo_epi32(_mm512_loadu_si512(t->zq + 32 * g), sr));                    \
            w = _mm512_sub_epi32(w, _mm512_mullo_epi32(_mm512_loadu_si512(t->zq + 32 * g + 16), sr));               \
        }                                                                                                           \
        __m512 sar = _mm512_set1_ps(sa[(r) * ld]);                                                                  \
        __m512 v = _mm512_mul_ps(sar, s0), f = _mm512_cvtepi32_ps(u);                                               \
        __m512 vz = _mm512_mul_ps(sar, s1), fz = _mm512_cvtepi32_ps(w);                                             \
        y##r = FIRST ? _mm512_mul_ps(v, f) : _mm512_fmadd_ps(v, f, y##r);                                           \
        z##r = FIRST ? _mm512_mul_ps(vz, fz) : _mm512_fmadd_ps(vz, fz, z##r);                                       \
    }

/* The fused tile (cpu_q8_tile): 6 rows of two 16-column panels. Here B
 * comes in unsigned, packed as b' xor 0x80 (that is b' + 128), and each
 * row's 4 bytes of A, signed, are broadcast once and multiplied into
 * both panels: 8 loads per 12 vpdpbusd. One panel of 8 rows, each
 * product with its broadcast from memory (9 loads per 8), ran 2.8 G
 * products a second on an Intel Xeon with AVX512-VNNI, two panels of 6
 * rows 4.5 G. The 128 sum a that the flip adds is taken off with the
 * zero point's term, (z' + 128) sum a, from the row sums the
 * quantization already keeps; the difference is the same exact integer
 * as the tile's. Each block's sums then go into y as the scaling pass
 * does it: y = (sa s) float(sum) for the first block, else
 * fma(sa s, float(sum), y). */
void cpu_q8_avx512vnni(const cpu_q8_tile *t) {
    const __mmask16 m0 = (__mmask16)(t->w >= 16 ? 0xffffu : (1u << t->w) - 1u);
    const __mmask16 m1 = (__mmask16)(t->w >= 32 ? 0xffffu : t->w > 16 ? (1u << (t->w - 16)) - 1u : 0u);
    const size_t lda = t->lda, rows = t->rows, ld = t->ldsa, pb = t->w > 16 ? t->pb : 0;
    /* y0..y5 and z0..z5 named, not arrays, so they stay in registers */
#define LOAD_Y(r)                                                                                   \
    __m512 y##r = _mm512_setzero_ps(), z##r = y##r;                                                 \
    if (t->acc && (r) < rows) {                                                                     \
        y##r = _mm512_maskz_loadu_ps(m0, t->c + (size_t)(r) * t->ldc);                              \
        z##r = _mm512_maskz_loadu_ps(m1, t->c + (size_t)(r) * t->ldc + 16);                         \
    }
    LOAD_Y(0) LOAD_Y(1) LOAD_Y(2) LOAD_Y(3) LOAD_Y(4) LOAD_Y(5)
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
#undef START
#undef Q8_BLOCK
#define STORE_Y(r)                                                                  \
    if ((r) < rows) {                                                               \
        _mm512_mask_storeu_ps(t->c + (size_t)(r) * t->ldc, m0, y##r);               \
        _mm512_mask_storeu_ps(t->c + (size_t)(r) * t->ldc + 16, m1, z##r);          \
    }
    STORE_Y(0) STORE_Y(1) STORE_Y(2) STORE_Y(3) STORE_Y(4) STORE_Y(5)
#undef STORE_Y
}
#endif
