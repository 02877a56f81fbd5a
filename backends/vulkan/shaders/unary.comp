#version 450
// Elementwise unary float32 ops (unary.glsl). pc: 0 n, 1 op, 2 alpha, 3 beta.
layout(local_size_x = 256) in;
#include "common.glsl"
#include "unary.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

void main() {
    uint op = pc.u[1];
    float al = PCF(2), be = PCF(3);
    FOR_EACH(i, pc.u[0]) y[i] = unary_op(op, vec4(x[i]), al, be).x;
}
