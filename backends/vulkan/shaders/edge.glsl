// The op contract's answers (include/berth/ops.def, "edge values") where
// a GLSL built-in leaves them undefined or to the implementation: pow of
// a negative base or of zero, log and sqrt outside their domain, division
// by zero or by a huge divisor, max and min with a NaN (GLSL's may drop
// it), and activations whose textbook formula makes inf/inf or inf * 0
// at large |x|. Every helper is four lanes wide so unary.glsl, binary.glsl
// and epilogue.glsl share one copy; a vector select (mix with a bvec)
// picks a lane's value without arithmetic on the others, so a NaN or inf
// computed in an unpicked branch never leaks. Metal gets these through
// SPIRV-Cross, so its answers follow too.
#ifndef BERTH_EDGE_GLSL
#define BERTH_EDGE_GLSL

const float EDGE_INF = 1.0 / 0.0;

vec4 edge_nan(vec4 v) { return uintBitsToFloat(uvec4(0x7fc00000u)); }

// NaN if either lane is NaN (IEEE 754-2019 maximum/minimum, numpy's
// maximum), else GLSL's max/min.
vec4 edge_max(vec4 a, vec4 b) {
    return mix(mix(max(a, b), b, isnan(b)), a, isnan(a));
}
vec4 edge_min(vec4 a, vec4 b) {
    return mix(mix(min(a, b), b, isnan(b)), a, isnan(a));
}

// x / z by IEEE rules: GLSL's division is specified only for
// 2^-126 <= |z| <= 2^126 (an implementation may multiply by 1 / z, which
// flushes to 0 above that).
vec4 edge_div(vec4 x, vec4 z) {
    vec4 az = abs(z);
    bvec4 huge = greaterThan(az, vec4(8.507059e37));
    vec4 q = mix(x, x * 0.25, huge) / mix(z, z * 0.25, huge);
    uvec4 sgn = (floatBitsToUint(x) ^ floatBitsToUint(z)) & 0x80000000u;
    vec4 signed_inf = uintBitsToFloat(sgn | 0x7f800000u), signed_zero = uintBitsToFloat(sgn);
    q = mix(q, signed_zero, isinf(z));                          // finite / inf
    q = mix(q, signed_inf, equal(z, vec4(0.0)));                // nonzero / 0
    bvec4 nan = bvec4(uvec4(isnan(x)) | uvec4(isnan(z)) | (uvec4(isinf(x)) & uvec4(isinf(z))) |
                      (uvec4(equal(x, vec4(0.0))) & uvec4(equal(z, vec4(0.0)))));
    return mix(q, edge_nan(x), nan);
}

// log2 of a positive finite v, subnormals included: an implementation
// may read log2's exponent from the bits and misjudge a subnormal, so one
// is scaled by 2^24 first (on a device that flushes it, it is 0 there).
vec4 edge_log2_pos(vec4 v) {
    bvec4 tiny = lessThan(v, vec4(1.17549435e-38));
    return log2(mix(v, v * 16777216.0, tiny)) - mix(vec4(0.0), vec4(24.0), tiny);
}

// Natural log: NaN below 0 and for NaN, -inf at +-0, +inf at +inf.
vec4 edge_log(vec4 v) {
    vec4 r = edge_log2_pos(mix(v, vec4(1.0), lessThanEqual(v, vec4(0.0)))) * 0.69314718055994531;
    r = mix(r, vec4(-EDGE_INF), equal(v, vec4(0.0)));
    r = mix(r, v, isinf(v));
    return mix(r, edge_nan(v), bvec4(uvec4(lessThan(v, vec4(0.0))) | uvec4(isnan(v))));
}

// sqrt: NaN below 0, -0 stays -0, +inf stays +inf.
vec4 edge_sqrt(vec4 v) {
    vec4 r = sqrt(max(v, vec4(0.0)));
    r = mix(r, v, bvec4(uvec4(equal(v, vec4(0.0))) | uvec4(isinf(v))));
    return mix(r, edge_nan(v), bvec4(uvec4(lessThan(v, vec4(0.0))) | uvec4(isnan(v))));
}

// e^v: +inf above float's range, 0 below it, NaN for NaN.
vec4 edge_exp(vec4 v) {
    vec4 r = exp(clamp(v, vec4(-104.0), vec4(88.72283)));
    r = mix(r, vec4(EDGE_INF), greaterThan(v, vec4(88.72284)));
    r = mix(r, vec4(0.0), lessThan(v, vec4(-104.0)));
    return mix(r, v, isnan(v));
}

// Whether each lane is an odd integer (floats of 2^24 and above are even).
bvec4 edge_odd(vec4 y) {
    vec4 ay = abs(y);
    return bvec4(uvec4(equal(fract(ay * 0.5), vec4(0.5))) & uvec4(lessThan(ay, vec4(16777216.0))));
}

// pow(x, y) as C's pow (IEEE 754 pow): y == 0 or x == 1 give 1 (NaN
// included); a negative base takes an integral exponent (the sign from
// its parity) and gives NaN for another; +-0 to a negative power is
// +-inf, to a positive one +-0; +-inf and infinite exponents by their
// limits. GLSL's pow is undefined for x < 0 and for x == 0, y <= 0.
vec4 edge_pow(vec4 x, vec4 y) {
    vec4 ax = abs(x), ay = abs(y);
    bvec4 odd = edge_odd(y);
    bvec4 integral = equal(floor(y), y);
    vec4 safe = mix(ax, vec4(1.0), bvec4(uvec4(equal(ax, vec4(0.0))) | uvec4(isinf(ax)) | uvec4(isnan(ax))));
    vec4 t = y * edge_log2_pos(safe); // exp2 is specified only where its result is a finite float
    vec4 r = exp2(clamp(t, vec4(-150.0), vec4(127.99999)));
    r = mix(r, vec4(0.0), lessThan(t, vec4(-150.0)));
    r = mix(r, vec4(EDGE_INF), greaterThanEqual(t, vec4(128.0)));
    // |x| is 0 or inf: 0 or inf by the sign of y (0^-y = inf^y)
    bvec4 big = bvec4((uvec4(isinf(ax)) & uvec4(greaterThan(y, vec4(0.0)))) |
                      (uvec4(equal(ax, vec4(0.0))) & uvec4(lessThan(y, vec4(0.0)))));
    bvec4 zero_or_inf = bvec4(uvec4(isinf(ax)) | uvec4(equal(ax, vec4(0.0))));
    r = mix(r, mix(vec4(0.0), vec4(EDGE_INF), big), zero_or_inf);
    // y is +-inf: |x| == 1 gives 1, else 0 or inf by whether |x| > 1 agrees with y > 0
    bvec4 grows = equal(greaterThan(ax, vec4(1.0)), greaterThan(y, vec4(0.0)));
    vec4 lim = mix(mix(vec4(0.0), vec4(EDGE_INF), grows), vec4(1.0), equal(ax, vec4(1.0)));
    r = mix(r, lim, isinf(y));
    // the sign of a negative base (-0 and -inf included) to an odd power
    bvec4 plus = equal(floatBitsToUint(x) & 0x80000000u, uvec4(0u)); // x's sign bit is clear
    r = mix(-r, r, bvec4(uvec4(plus) | uvec4(not(odd))));
    // a finite negative base to a finite non-integral power
    bvec4 bad = bvec4(uvec4(lessThan(x, vec4(0.0))) & uvec4(not(isinf(x))) & uvec4(not(integral)) & uvec4(not(isinf(y))));
    r = mix(r, edge_nan(x), bvec4(uvec4(bad) | uvec4(isnan(x)) | uvec4(isnan(y))));
    return mix(r, vec4(1.0), bvec4(uvec4(equal(y, vec4(0.0))) | uvec4(equal(x, vec4(1.0)))));
}

// erf by Abramowitz and Stegun 7.1.26: |error| < 1.5e-7; +-1 at +-inf.
vec4 edge_erf(vec4 v) {
    vec4 a = abs(v);
    vec4 t = 1.0 / (1.0 + 0.3275911 * min(a, vec4(10.0)));
    vec4 p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    vec4 r = 1.0 - p * exp(-min(a, vec4(10.0)) * min(a, vec4(10.0)));
    return mix(mix(r, -r, lessThan(v, vec4(0.0))), v, isnan(v));
}

// max(v, 0), a NaN kept.
vec4 edge_relu(vec4 v) { return mix(v, vec4(0.0), lessThan(v, vec4(0.0))); }

// 1 / (1 + e^-v) without overflow: for v < 0 as e^v / (1 + e^v).
vec4 edge_sigmoid(vec4 v) {
    vec4 e = edge_exp(-abs(v));
    return mix(1.0 / (1.0 + e), e / (1.0 + e), lessThan(v, vec4(0.0)));
}

// tanh: +-1 beyond 15 (GLSL's tanh may be (e^2v - 1) / (e^2v + 1), inf/inf), NaN kept.
vec4 edge_tanh(vec4 v) {
    vec4 r = tanh(clamp(v, vec4(-15.0), vec4(15.0)));
    r = mix(r, sign(v), greaterThan(abs(v), vec4(15.0)));
    return mix(r, v, isnan(v));
}

// x * Phi(x): 0 at -inf rather than -inf * 0.
vec4 edge_gelu(vec4 v) {
    vec4 r = 0.5 * v * (1.0 + edge_erf(v * 0.70710678118654752));
    return mix(r, vec4(0.0), lessThan(v, vec4(-10.0)));
}

// log(1 + e^v): v itself above 20, where e^-v is below float's resolution of v.
vec4 edge_softplus(vec4 v) {
    return mix(log(1.0 + edge_exp(v)), v, bvec4(uvec4(greaterThan(v, vec4(20.0))) | uvec4(isnan(v))));
}

// v / (1 + |v|): +-1 at +-inf rather than inf/inf.
vec4 edge_softsign(vec4 v) { return mix(v / (1.0 + abs(v)), sign(v), isinf(v)); }

// v * clamp(v + 3, 0, 6) / 6 piecewise: 0 at and below -3 (so -inf gives 0, not -inf * 0), v at and above 3.
vec4 edge_hardswish(vec4 v) {
    vec4 r = mix(v * (v + 3.0) / 6.0, v, greaterThanEqual(v, vec4(3.0)));
    return mix(r, vec4(0.0), lessThanEqual(v, vec4(-3.0)));
}

// lo <= v <= hi by comparisons, so a NaN passes through (GLSL's clamp may drop it).
vec4 edge_clamp(vec4 v, float lo, float hi) {
    return mix(mix(v, vec4(hi), greaterThan(v, vec4(hi))), vec4(lo), lessThan(v, vec4(lo)));
}

#endif
