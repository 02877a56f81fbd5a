/* The vector math of arm64 in NEON (Advanced SIMD): exp, erf, tanh and
 * sigmoid over arrays, four floats at a time with fused multiply-adds.
 * NEON is part of the AArch64 base architecture, so every arm64 cpu has
 * it and nothing is checked at run time (x86 picks its clones from
 * CPUID). Other architectures build the loops of cpu_vmath.c instead.
 *
 * exp and erf use cpu_vmath.c's reduction and polynomials
 * (cpu_vmath_poly.h), so arm64 and x86 differ only by the rounding of the
 * fused steps. Where the portable exp serves softmax only (0 below e^-87,
 * an overflow clamped), this one is also the exp op: exact scaling to
 * subnormal results and to infinity. tanh and sigmoid, which x86 takes
 * from libm, are built on it, written so neither divides inf by inf:
 *   tanh(x) = sign(x) q / (q + 2) with q = e^(2|x|) - 1, |x| capped at 10
 *     (tanh rounds to 1 from 9.02 on); q from the same reduction with
 *     e^r - 1 as r + r^2 P(r), so it keeps its relative accuracy near 0
 *     where e^r - 1 would cancel;
 *   sigmoid(x) = 1 / (1 + z) for x >= 0 and z / (1 + z) below, with
 *     z = e^-|x| in (0, 1], so no term overflows and sigmoid(-100) is
 *     e^-100, not 0.
 * A NaN lane is the input NaN; -0 stays -0 where libm keeps it (erf,
 * tanh). */
#include <stddef.h>

#include "cpu_internal.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>

#include "cpu_vmath_poly.h"

/* x = k ln 2 + r with k = round(x log2 e), for x whose k fits [-150, 128]. */
static inline float32x4_t v_reduce(float32x4_t x, int32x4_t *k) {
    float32x4_t kf = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(VM_LOG2E)));
    float32x4_t r = vfmsq_f32(x, kf, vdupq_n_f32(VM_LN2_HI)); /* exact: the high part has 12 bits */
    *k = vcvtq_s32_f32(kf);
    return vfmsq_f32(r, kf, vdupq_n_f32(VM_LN2_LO));
}

/* 2^k for k in [-126, 127], from the exponent bits. */
static inline float32x4_t v_pow2(int32x4_t k) {
    return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k, vdupq_n_s32(127)), 23));
}

/* A NaN lane of x in place of the result. */
static inline float32x4_t v_keep_nan(float32x4_t x, float32x4_t y) { return vbslq_f32(vceqq_f32(x, x), y, x); }

/* y with the sign bit of x (y's own is clear). */
static inline float32x4_t v_sign_of(float32x4_t x, float32x4_t y) {
    uint32x4_t s = vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x80000000u));
    return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(y), s));
}

static inline float32x4_t v_exp(float32x4_t x) {
    /* Below -104 e^x rounds to 0 and above 89 to infinity, so the clamp
     * changes no result and keeps k in [-150, 128]. maxnm and minnm turn
     * a NaN into a bound (no NaN reaches the int conversion); it is put
     * back at the end. */
    float32x4_t v = vminnmq_f32(vmaxnmq_f32(x, vdupq_n_f32(-104.0f)), vdupq_n_f32(89.0f));
    int32x4_t k;
    float32x4_t r = v_reduce(v, &k);
    float32x4_t p = vfmaq_f32(vdupq_n_f32(1.0f / 120), vdupq_n_f32(1.0f / 720), r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 24), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 6), p, r);
    p = vfmaq_f32(vdupq_n_f32(0.5f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    /* 2^k as two normal factors: p 2^k1 is exact, and the one rounding
     * is the last product's, into a subnormal or to infinity as libm's. */
    int32x4_t k1 = vshrq_n_s32(k, 1);
    float32x4_t y = vmulq_f32(vmulq_f32(p, v_pow2(k1)), v_pow2(vsubq_s32(k, k1)));
    return v_keep_nan(x, y);
}

/* e^x - 1 for x in [0, 20]: 2^k (e^r - 1) + (2^k - 1), where e^r - 1 is
 * r + r^2 P(r), Taylor to degree 7: the relative error of e^r - 1 stays
 * under 2e-8 down to r = 0, where the degree-6 e^r minus 1 would lose it. */
static inline float32x4_t v_expm1(float32x4_t x) {
    int32x4_t k;
    float32x4_t r = v_reduce(x, &k);
    float32x4_t p = vfmaq_f32(vdupq_n_f32(1.0f / 720), vdupq_n_f32(1.0f / 5040), r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 120), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 24), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 6), p, r);
    p = vfmaq_f32(vdupq_n_f32(0.5f), p, r);
    float32x4_t t = vfmaq_f32(r, vmulq_f32(r, r), p);
    float32x4_t s = v_pow2(k);
    return vfmaq_f32(vsubq_f32(s, vdupq_n_f32(1.0f)), t, s);
}

static inline float32x4_t v_tanh(float32x4_t x) {
    /* minnm: a NaN lane becomes 10, and is put back at the end */
    float32x4_t a = vminnmq_f32(vabsq_f32(x), vdupq_n_f32(10.0f));
    float32x4_t q = v_expm1(vaddq_f32(a, a));
    float32x4_t t = vdivq_f32(q, vaddq_f32(q, vdupq_n_f32(2.0f)));
    return v_keep_nan(x, v_sign_of(x, t));
}

static inline float32x4_t v_sigmoid(float32x4_t x) {
    float32x4_t z = v_exp(vnegq_f32(vabsq_f32(x)));
    float32x4_t num = vbslq_f32(vcltq_f32(x, vdupq_n_f32(0.0f)), z, vdupq_n_f32(1.0f));
    return v_keep_nan(x, vdivq_f32(num, vaddq_f32(z, vdupq_n_f32(1.0f))));
}

static inline float32x4_t v_erf(float32x4_t x) {
    float32x4_t a = vabsq_f32(x);
    float32x4_t z1 = vfmaq_f32(vdupq_n_f32(-1.0f), vaddq_f32(a, a), a), p1 = vdupq_n_f32(vm_erf_small[5]);
    for (int c = 4; c >= 0; c--) p1 = vfmaq_f32(vdupq_n_f32(vm_erf_small[c]), p1, z1);
    float32x4_t am = vminq_f32(a, vdupq_n_f32(4.0f));
    float32x4_t z2 = vmulq_f32(vsubq_f32(vaddq_f32(am, am), vdupq_n_f32(5.0f)), vdupq_n_f32(1.0f / 3.0f));
    float32x4_t p2 = vdupq_n_f32(vm_erf_mid[12]);
    for (int c = 11; c >= 0; c--) p2 = vfmaq_f32(vdupq_n_f32(vm_erf_mid[c]), p2, z2);
    /* both evaluated, one kept per lane: |x| < 1, < 4, and 1 beyond */
    float32x4_t r = vbslq_f32(vcltq_f32(a, vdupq_n_f32(4.0f)), p2, vdupq_n_f32(1.0f));
    r = vbslq_f32(vcltq_f32(a, vdupq_n_f32(1.0f)), vmulq_f32(a, p1), r);
    return v_keep_nan(x, v_sign_of(x, r));
}

/* y[i] = F(x[i]); x may be y. The tail goes through a padded vector. */
#define VM_ARRAY(NAME, F)                                                        \
    void NAME(const float *x, float *y, size_t n) {                              \
        size_t i = 0;                                                            \
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, F(vld1q_f32(x + i)));        \
        if (i < n) {                                                             \
            float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};                               \
            memcpy(t, x + i, sizeof(float) * (n - i));                           \
            vst1q_f32(t, F(vld1q_f32(t)));                                       \
            memcpy(y + i, t, sizeof(float) * (n - i));                           \
        }                                                                        \
    }

VM_ARRAY(cpu_vexp_full, v_exp)
VM_ARRAY(cpu_vtanh, v_tanh)
VM_ARRAY(cpu_vsigmoid, v_sigmoid)
VM_ARRAY(cpu_verf, v_erf)

void cpu_vexp(float *x, size_t n) { cpu_vexp_full(x, x, n); }
#endif
