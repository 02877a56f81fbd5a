/* The int8 tile with the dotprod extension's SDOT: 4 rows x 16 columns
 * of int32 sums in sixteen registers; each step loads four columns' 4 k
 * values per register of B and takes A's 4 k values of a row from a lane
 * of a 16-byte load that covers 4 steps, so a step is 4 loads and 16
 * SDOTs for 256 multiply-adds. Built with +dotprod; called only when
 * getauxval(AT_HWCAP) reports it (gemm_int8.c). */
#if defined(__aarch64__)
#include <arm_neon.h>

#include "cpu_gemm.h"

void cpu_dot_sdot(size_t k4, const int8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc, int acc) {
    int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    int32x4_t c20 = c00, c21 = c00, c22 = c00, c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    const int8_t *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
    size_t p = 0;
#define STEP(l)                                                                                                    \
    {                                                                                                              \
        int8x16_t b0 = vld1q_s8(b), b1 = vld1q_s8(b + 16), b2 = vld1q_s8(b + 32), b3 = vld1q_s8(b + 48);           \
        b += 64;                                                                                                   \
        c00 = vdotq_laneq_s32(c00, b0, x0, l), c01 = vdotq_laneq_s32(c01, b1, x0, l);                              \
        c02 = vdotq_laneq_s32(c02, b2, x0, l), c03 = vdotq_laneq_s32(c03, b3, x0, l);                              \
        c10 = vdotq_laneq_s32(c10, b0, x1, l), c11 = vdotq_laneq_s32(c11, b1, x1, l);                              \
        c12 = vdotq_laneq_s32(c12, b2, x1, l), c13 = vdotq_laneq_s32(c13, b3, x1, l);                              \
        c20 = vdotq_laneq_s32(c20, b0, x2, l), c21 = vdotq_laneq_s32(c21, b1, x2, l);                              \
        c22 = vdotq_laneq_s32(c22, b2, x2, l), c23 = vdotq_laneq_s32(c23, b3, x2, l);                              \
        c30 = vdotq_laneq_s32(c30, b0, x3, l), c31 = vdotq_laneq_s32(c31, b1, x3, l);                              \
        c32 = vdotq_laneq_s32(c32, b2, x3, l), c33 = vdotq_laneq_s32(c33, b3, x3, l);                              \
    }
    for (; p + 4 <= k4; p += 4) {
        int8x16_t x0 = vld1q_s8(a0 + 4 * p), x1 = vld1q_s8(a1 + 4 * p), x2 = vld1q_s8(a2 + 4 * p),
                  x3 = vld1q_s8(a3 + 4 * p);
        STEP(0) STEP(1) STEP(2) STEP(3)
    }
    for (; p < k4; p++) { /* the last 1 to 3 steps: a row's 4 values in lane 0 */
        int32_t w0, w1, w2, w3;
        __builtin_memcpy(&w0, a0 + 4 * p, 4), __builtin_memcpy(&w1, a1 + 4 * p, 4);
        __builtin_memcpy(&w2, a2 + 4 * p, 4), __builtin_memcpy(&w3, a3 + 4 * p, 4);
        int8x16_t x0 = vreinterpretq_s8_s32(vdupq_n_s32(w0)), x1 = vreinterpretq_s8_s32(vdupq_n_s32(w1));
        int8x16_t x2 = vreinterpretq_s8_s32(vdupq_n_s32(w2)), x3 = vreinterpretq_s8_s32(vdupq_n_s32(w3));
        STEP(0)
    }
#undef STEP
#define STORE(r)                                                                                      \
    {                                                                                                 \
        int32_t *cr = c + (r) * ldc;                                                                  \
        if (acc) {                                                                                    \
            c##r##0 = vaddq_s32(c##r##0, vld1q_s32(cr)), c##r##1 = vaddq_s32(c##r##1, vld1q_s32(cr + 4)); \
            c##r##2 = vaddq_s32(c##r##2, vld1q_s32(cr + 8)), c##r##3 = vaddq_s32(c##r##3, vld1q_s32(cr + 12)); \
        }                                                                                             \
        vst1q_s32(cr, c##r##0), vst1q_s32(cr + 4, c##r##1), vst1q_s32(cr + 8, c##r##2), vst1q_s32(cr + 12, c##r##3); \
    }
    STORE(0) STORE(1) STORE(2) STORE(3)
#undef STORE
}
#endif
