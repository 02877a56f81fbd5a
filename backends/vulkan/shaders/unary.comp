#version 450
// Elementwise unary ops (unary.glsl) on float32, or on float16 computed
// in float32, two to a word. pc: 0 n, 1 op, 2 alpha, 3 beta, 4 float16.
layout(local_size_x = 256) in;
#include "common.glsl"
#include "half.glsl"
#include "unary.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };

void main() {
    uint op = pc.u[1], n = pc.u[0];
    float al = PCF(2), be = PCF(3);
    if (pc.u[4] == 0u) {
        FOR_EACH(i, n) y[i] = floatBitsToUint(unary_op(op, vec4(uintBitsToFloat(x[i])), al, be).x);
        return;
    }
    FOR_EACH(w, (n + 1u) / 2u) {
        vec4 v = vec4(half_to_float(x[w] & 0xffffu), half_to_float(x[w] >> 16u), 0.0, 0.0);
        v = unary_op(op, v, al, be);
        y[w] = float_to_half(v.x) | (2u * w + 1u < n ? float_to_half(v.y) << 16u : 0u);
    }
}
