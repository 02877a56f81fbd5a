/* Vectorizable exp for the hot loops (softmax): range reduction to
 * r in [-ln2/2, ln2/2] by a Cody-Waite split of ln 2, a degree-6 Taylor
 * polynomial of e^r (truncation below 2e-8 relative), and 2^n built in
 * the exponent bits. Written branch-free over arrays so the compiler
 * turns it into vector code; libm's expf is a scalar call per element,
 * which costs more than the matrix products around a softmax. */
#include <stdint.h>
#include <string.h>

#include "cpu_internal.h"

void cpu_vexp(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        v = v < -87.0f ? -87.0f : v;
        v = v > 88.0f ? 88.0f : v;
        /* round to nearest by the 1.5 * 2^23 trick: no rounding calls */
        float k = (v * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
        float r = v - k * 0.693145751953125f - k * 1.428606765330187e-06f;
        float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
        int32_t bits = ((int32_t)k + 127) << 23;
        float s;
        memcpy(&s, &bits, sizeof s);
        x[i] = p * s;
    }
}
