/* Vectorizable exp and erf for the hot loops (softmax, GELU). exp: range reduction to
 * r in [-ln2/2, ln2/2] by a Cody-Waite split of ln 2, a degree-6 Taylor
 * polynomial of e^r (truncation below 1.7e-7 relative, r^7/7! at
 * r = -ln2/2; 2.4e-7 in all, measured by tests/cpu), and 2^n built in
 * the exponent bits. Written branch-free over arrays so the compiler
 * turns it into vector code; libm's expf is a scalar call per element,
 * which costs more than the matrix products around a softmax.
 * erf: two polynomials fitted for berth at Chebyshev nodes (numpy's
 * chebfit, then the power basis): |x| < 1 as x * P(2x^2 - 1) within
 * 2e-7 relative, 1 <= |x| < 4 as Q((2|x| - 5) / 3) within 1e-7, and
 * +-1 beyond, where erf rounds to 1 in float. Both are evaluated and one
 * is chosen per element, so the loop has no branches.
 * On arm64 exp and erf, and the exp, tanh and sigmoid ops, are NEON code
 * with the same constants (cpu_vmath_neon.c); the loops here are the
 * other architectures'. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_internal.h"

/* Sixteen lanes with AVX-512, eight with AVX2, where the cpu has them
 * (CPU_CLONES). */
#define VM_CLONES CPU_CLONES

#if !defined(__aarch64__)
#include "cpu_vmath_poly.h"

VM_CLONES void cpu_vexp(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        /* Clamped so 2^n stays a float. Written so a NaN clamps too (a
         * comparison with it is false): converting a NaN to int below is
         * undefined behaviour. The NaN is put back at the end. */
        float x0 = x[i], v = x0 > -87.0f ? x0 : -87.0f;
        v = v < 88.0f ? v : 88.0f;
        /* round to nearest by the 1.5 * 2^23 trick: no rounding calls */
        float k = (v * VM_LOG2E + 12582912.0f) - 12582912.0f;
        float r = v - k * VM_LN2_HI - k * VM_LN2_LO;
        float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
        int32_t bits = ((int32_t)k + 127) << 23;
        float s;
        memcpy(&s, &bits, sizeof s);
        /* below -87 e^x is under FLT_MIN: 0 (-inf included), not the
         * clamped e^-87 */
        x[i] = x0 == x0 ? (x0 < -87.0f ? 0.0f : p * s) : x0;
    }
}

VM_CLONES void cpu_verf(const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float v = x[i], a = v < 0.0f ? -v : v;
        float z1 = 2.0f * a * a - 1.0f, p1 = vm_erf_small[5];
        for (int c = 4; c >= 0; c--) p1 = p1 * z1 + vm_erf_small[c];
        float am = a < 4.0f ? a : 4.0f, z2 = (2.0f * am - 5.0f) * (1.0f / 3.0f), p2 = vm_erf_mid[12];
        for (int c = 11; c >= 0; c--) p2 = p2 * z2 + vm_erf_mid[c];
        float r = a < 1.0f ? a * p1 : a < 4.0f ? p2 : a >= 4.0f ? 1.0f : v; /* the last: NaN stays NaN */
        y[i] = v < 0.0f ? -r : r;
    }
}

/* The exp, tanh and sigmoid ops as libm computes them, one call per
 * element: the numbers these ops have always given on x86. */
void cpu_vexp_full(const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = expf(x[i]);
}

void cpu_vtanh(const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
}

void cpu_vsigmoid(const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + expf(-x[i]));
}
#endif

VM_CLONES void cpu_vgelu(const float *x, float *y, size_t n) {
    float t[256];
    for (size_t i0 = 0; i0 < n; i0 += 256) {
        size_t m = n - i0 < 256 ? n - i0 : 256;
        for (size_t i = 0; i < m; i++) t[i] = x[i0 + i] * 0.70710678118654752f;
        cpu_verf(t, t, m);
        /* below -10 gelu is under 1e-22 of x: 0, so -inf gives 0, not -inf * 0 */
        for (size_t i = 0; i < m; i++) y[i0 + i] = x[i0 + i] < -10.0f ? 0.0f : 0.5f * x[i0 + i] * (1.0f + t[i]);
    }
}

VM_CLONES int cpu_vsoftmax(float *x, size_t n) {
    float lane[16];
    for (int l = 0; l < 16; l++) lane[l] = -INFINITY;
    size_t j;
    for (j = 0; j + 16 <= n; j += 16)
        for (int l = 0; l < 16; l++) lane[l] = x[j + (size_t)l] > lane[l] ? x[j + (size_t)l] : lane[l];
    float mx = -INFINITY;
    for (int l = 0; l < 16; l++) mx = lane[l] > mx ? lane[l] : mx;
    for (; j < n; j++) mx = x[j] > mx ? x[j] : mx;
    if (mx == -INFINITY) { /* every entry masked out: the row is all zeros */
        memset(x, 0, sizeof(float) * n);
        return 0;
    }
    /* An entry more than 40 below the row's largest weighs under 4e-18
     * of it, beneath float's resolution of the sum: it is 0. Without
     * this, masked entries (a mask of -10000) came out near FLT_MIN and
     * their products with v were denormal, which x86 multiplies about a
     * hundred times slower: a padded batch of BERT spent 8x in attention. */
    for (j = 0; j < n; j++) x[j] = x[j] - mx < -40.0f ? -INFINITY : x[j] - mx;
    cpu_vexp(x, n);
    for (int l = 0; l < 16; l++) lane[l] = 0.0f;
    for (j = 0; j + 16 <= n; j += 16)
        for (int l = 0; l < 16; l++) lane[l] += x[j + (size_t)l];
    float sum = 0.0f;
    for (int l = 0; l < 16; l++) sum += lane[l];
    for (; j < n; j++) sum += x[j];
    /* sum >= 1 (the largest entry contributes e^0), or NaN when the row
     * holds one: then the whole row is NaN, as on the strided path */
    float inv = 1.0f / sum;
    for (j = 0; j < n; j++) x[j] *= inv;
    return 1;
}
