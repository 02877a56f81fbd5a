/* The AArch64 NEON tile: 8 rows x 8 columns, sixteen q-register
 * accumulators. A is read four k steps at a time, one 4-float load per
 * row, and each step multiplies a lane of those loads by the step's row of
 * B (fmla by element, vfmaq_laneq_f32), so A needs no broadcast loads:
 * four steps are 64 fmla, 8 loads of A and 4 load pairs (ldp) of B; with
 * the loop's count and pointers clang 14 makes 81 instructions of them,
 * 1.27 per fmla. The shape is the one with the fewest instructions per
 * fmla that fits the 32 vector registers:
 *   8 x 12 by element: 24 accumulators + 8 of A + 3 of B = 35, too many;
 *   8 x 12 with a broadcast load (ld1r) per A value: 24 fmla, 8 ld1r and
 *     2 loads of B a step, 1.42 per fmla;
 *   6 x 16 by element: 24 + 6 + 2 = 32 at the least, every register, so
 *     no load of B ahead of its use;
 *   4 x 16 by element: as few instructions as 8 x 8, but 20 q loads per
 *     64 fmla against 16: for the same accumulators the square tile reads
 *     the least;
 *   8 x 8 by element: 16 + 8 + 2 = 26, room to load the next B early.
 * kc past the last multiple of four is done a step at a time, each A
 * value loaded on its own: the kernel never reads A past column kc. B is
 * either a packed panel or, for the direct convolution, rows found
 * through a table of offsets (any alignment: NEON loads need none).
 * Chosen when Linux reports ASIMD in AT_HWCAP (every arm64 Linux cpu in
 * practice); Advanced SIMD is in the arm64 baseline, so no flags. */
#if defined(__aarch64__)
#include <arm_neon.h>

#include "cpu_gemm.h"

#define NR 8

/* ind 0: step p of B is the packed row b + NR p; 1: b + off[p] (a
 * constant after inlining, so neither tile tests off in its loop). */
static inline __attribute__((always_inline)) void tile(size_t kc, const float *a, size_t lda, const float *b,
                                                       int ind, const size_t *off, float *c, size_t ldc, int acc) {
    float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00;
    float32x4_t c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
    const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
    const float *a4 = a + 4 * lda, *a5 = a + 5 * lda, *a6 = a + 6 * lda, *a7 = a + 7 * lda;
    /* Eight row pointers. Seen as a + r lda, clang rebuilds seven of them
     * from the first every iteration, seven adds per 64 fmla; the empty
     * asm hides how they were made, so each row is one load at a shared
     * offset. */
    __asm__("" : "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5), "+r"(a6), "+r"(a7));
#define ROW(r, l)                                    \
    c##r##0 = vfmaq_laneq_f32(c##r##0, b0, x##r, l); \
    c##r##1 = vfmaq_laneq_f32(c##r##1, b1, x##r, l);
#define STEP(l)                                                               \
    {                                                                         \
        const float *bp = ind ? b + off[l] : b + NR * (l);                    \
        float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4);               \
        ROW(0, l) ROW(1, l) ROW(2, l) ROW(3, l) ROW(4, l) ROW(5, l) ROW(6, l) \
        ROW(7, l)                                                             \
    }
    for (size_t q = kc / 4; q; q--) {
        float32x4_t x0 = vld1q_f32(a0), x1 = vld1q_f32(a1), x2 = vld1q_f32(a2), x3 = vld1q_f32(a3);
        float32x4_t x4 = vld1q_f32(a4), x5 = vld1q_f32(a5), x6 = vld1q_f32(a6), x7 = vld1q_f32(a7);
        a0 += 4, a1 += 4, a2 += 4, a3 += 4, a4 += 4, a5 += 4, a6 += 4, a7 += 4;
        STEP(0) STEP(1) STEP(2) STEP(3)
        if (ind)
            off += 4;
        else
            b += 4 * NR;
    }
#undef STEP
#undef ROW
    /* the last kc % 4 steps: one A value per row and step */
#define ROW(r)                                  \
    c##r##0 = vfmaq_n_f32(c##r##0, b0, *a##r); \
    c##r##1 = vfmaq_n_f32(c##r##1, b1, *a##r++);
    for (size_t t = kc % 4; t; t--) {
        const float *bp = ind ? b + *off++ : b;
        float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4);
        ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7)
        if (!ind) b += NR;
    }
#undef ROW
#define STORE(r)                                             \
    {                                                        \
        float *cr = c + (r) * ldc;                           \
        if (acc) {                                           \
            c##r##0 = vaddq_f32(c##r##0, vld1q_f32(cr));     \
            c##r##1 = vaddq_f32(c##r##1, vld1q_f32(cr + 4)); \
        }                                                    \
        vst1q_f32(cr, c##r##0);                              \
        vst1q_f32(cr + 4, c##r##1);                          \
    }
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5) STORE(6) STORE(7)
#undef STORE
}

void cpu_ukernel_neon(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc, int acc) {
    tile(kc, a, lda, b, 0, NULL, c, ldc, acc);
}

void cpu_ukernel_neon_ind(size_t kc, const float *a, size_t lda, const float *b, const size_t *off, float *c,
                          size_t ldc) {
    tile(kc, a, lda, b, 1, off, c, ldc, 0);
}
#endif
