// The elementwise unary float32 ops of unary.comp and unary4.comp.
// erf by Abramowitz and Stegun 7.1.26 refined: |error| < 1.5e-7.
float erf_approx(float v) {
    float s = sign(v), a = abs(v);
    float t = 1.0 / (1.0 + 0.3275911 * a);
    float p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return s * (1.0 - p * exp(-a * a));
}

float unary_op(uint op, float v, float al, float be) {
    switch (op) {
    case 0: return max(v, 0.0);
    case 1: return 1.0 / (1.0 + exp(-v));
    case 2: return v > 15.0 ? 1.0 : (v < -15.0 ? -1.0 : tanh(v));
    case 3: return exp(v);
    case 4: return log(v);
    case 5: return sqrt(v);
    case 6: return abs(v);
    case 7: return -v;
    case 8: return erf_approx(v);
    case 9: return 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752));
    case 10: return clamp(al * v + be, 0.0, 1.0);
    case 11: return v * clamp(v + 3.0, 0.0, 6.0) / 6.0;
    case 12: return v < al ? al : (v > be ? be : v);
    case 13: return v >= 0.0 ? v : al * v;
    case 14: return v >= 0.0 ? v : al * (exp(v) - 1.0);
    case 15: return v > 20.0 ? v : log(1.0 + exp(v));
    case 16: return 1.0 / v;
    case 17: return floor(v);
    case 18: return ceil(v);
    case 19: return sin(v);
    case 20: return cos(v);
    case 21: return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : v);
    default: return v / (1.0 + abs(v));
    }
}
