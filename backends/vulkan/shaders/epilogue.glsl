// The activations of berth.matmulEpilogue's epilogue, shared by the
// matmul shaders (matmul.glsl, matmul_q.glsl): kind 0 none, 1 relu,
// 2 gelu, 3 sigmoid, 4 tanh. gelu's erf is Abramowitz and Stegun 7.1.26
// (error below 1.5e-7).
float erf_approx(float v) {
    float s = sign(v), x = abs(v);
    float t = 1.0 / (1.0 + 0.3275911 * x);
    float p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return s * (1.0 - p * exp(-x * x));
}

float act(uint kind, float v) {
    if (kind == 1u) return max(v, 0.0);
    if (kind == 2u) return 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752));
    if (kind == 3u) return 1.0 / (1.0 + exp(-v));
    if (kind == 4u) return v > 15.0 ? 1.0 : (v < -15.0 ? -1.0 : tanh(v));
    return v;
}
