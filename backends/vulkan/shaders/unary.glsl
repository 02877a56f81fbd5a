// The elementwise unary float32 ops of unary.comp, unary4.comp and
// fused.comp, four lanes at a time (unary.comp uses lane x): one copy of
// the op switch per shader keeps pipeline compilation short.

// erf by Abramowitz and Stegun 7.1.26 refined: |error| < 1.5e-7.
vec4 erf_approx(vec4 v) {
    vec4 s = sign(v), a = abs(v);
    vec4 t = 1.0 / (1.0 + 0.3275911 * a);
    vec4 p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return s * (1.0 - p * exp(-a * a));
}

vec4 unary_op(uint op, vec4 v, float al, float be) {
    switch (op) {
    case 0: return max(v, 0.0);
    case 1: return 1.0 / (1.0 + exp(-v));
    case 2: return mix(mix(tanh(v), vec4(-1.0), lessThan(v, vec4(-15.0))), vec4(1.0), greaterThan(v, vec4(15.0)));
    case 3: return exp(v);
    case 4: return log(v);
    case 5: return sqrt(v);
    case 6: return abs(v);
    case 7: return -v;
    case 8: return erf_approx(v);
    case 9: return 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752));
    case 10: return clamp(al * v + be, 0.0, 1.0);
    case 11: return v * clamp(v + 3.0, 0.0, 6.0) / 6.0;
    case 12: return mix(mix(v, vec4(be), greaterThan(v, vec4(be))), vec4(al), lessThan(v, vec4(al)));
    case 13: return mix(al * v, v, greaterThanEqual(v, vec4(0.0)));
    case 14: return mix(al * (exp(v) - 1.0), v, greaterThanEqual(v, vec4(0.0)));
    case 15: return mix(log(1.0 + exp(v)), v, greaterThan(v, vec4(20.0)));
    case 16: return 1.0 / v;
    case 17: return floor(v);
    case 18: return ceil(v);
    case 19: return sin(v);
    case 20: return cos(v);
    case 21: return mix(mix(v, vec4(-1.0), lessThan(v, vec4(0.0))), vec4(1.0), greaterThan(v, vec4(0.0)));
    default: return v / (1.0 + abs(v));
    }
}
