/* The constants of the vector exp and erf, shared by the portable loops
 * (cpu_vmath.c) and the NEON ones (cpu_vmath_neon.c), so both evaluate
 * the same reduction and the same polynomials and their results differ
 * only by the rounding of fused multiply-adds. How they were found is in
 * cpu_vmath.c. */
#ifndef BERTH_CPU_VMATH_POLY_H
#define BERTH_CPU_VMATH_POLY_H

/* exp: k = round(x log2 e), r = x - k ln 2 with ln 2 split in two (the
 * high part has 12 significant bits, so k times it is exact for every k
 * a float exponent allows), e^r by its Taylor polynomial to degree 6. */
#define VM_LOG2E 1.44269504088896341f
#define VM_LN2_HI 0.693145751953125f
#define VM_LN2_LO 1.428606765330187e-06f

/* erf on |x| < 1: x * P(2x^2 - 1); on 1 <= |x| < 4: Q((2|x| - 5) / 3).
 * Coefficients from the constant term up. */
static const float vm_erf_small[6] = {0.965468777f, -0.140536097f, 0.0198518049f, -0.00228541953f, 0.00021935945f,
                                      -1.76690808e-05f};
static const float vm_erf_mid[13] = {0.999593079f,  0.00326696896f, -0.0122559081f, 0.0281958455f, -0.043602196f,
                                     0.0463220683f, -0.032164326f,  0.00981079118f, 0.00748362596f, -0.0107976606f,
                                     0.00342609975f, 0.0018515676f, -0.00113001805f};

#endif
