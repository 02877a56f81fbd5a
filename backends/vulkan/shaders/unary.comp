#version 450
// Elementwise unary float32 ops. pc: 0 n, 1 op, 2 alpha, 3 beta.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

// erf by Abramowitz and Stegun 7.1.26 refined: |error| < 1.5e-7.
float erf_approx(float v) {
    float s = sign(v), a = abs(v);
    float t = 1.0 / (1.0 + 0.3275911 * a);
    float p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return s * (1.0 - p * exp(-a * a));
}

void main() {
    uint op = pc.u[1];
    float al = PCF(2), be = PCF(3);
    FOR_EACH(i, pc.u[0]) {
        float v = x[i], r;
        switch (op) {
        case 0: r = max(v, 0.0); break;
        case 1: r = 1.0 / (1.0 + exp(-v)); break;
        case 2: r = v > 15.0 ? 1.0 : (v < -15.0 ? -1.0 : tanh(v)); break;
        case 3: r = exp(v); break;
        case 4: r = log(v); break;
        case 5: r = sqrt(v); break;
        case 6: r = abs(v); break;
        case 7: r = -v; break;
        case 8: r = erf_approx(v); break;
        case 9: r = 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752)); break;
        case 10: r = clamp(al * v + be, 0.0, 1.0); break;
        case 11: r = v * clamp(v + 3.0, 0.0, 6.0) / 6.0; break;
        case 12: r = v < al ? al : (v > be ? be : v); break;
        case 13: r = v >= 0.0 ? v : al * v; break;
        case 14: r = v >= 0.0 ? v : al * (exp(v) - 1.0); break;
        case 15: r = v > 20.0 ? v : log(1.0 + exp(v)); break;
        case 16: r = 1.0 / v; break;
        case 17: r = floor(v); break;
        case 18: r = ceil(v); break;
        case 19: r = sin(v); break;
        case 20: r = cos(v); break;
        case 21: r = v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : v); break;
        default: r = v / (1.0 + abs(v)); break;
        }
        y[i] = r;
    }
}
