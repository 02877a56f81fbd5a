#version 450
// unary.comp four elements per invocation, where the count is a multiple
// of 4: lavapipe pays for a vec4 load what it pays for a float.
// pc: 0 n / 4, 1 op, 2 alpha, 3 beta.
layout(local_size_x = 64) in;
#include "common.glsl"
#include "unary.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) writeonly buffer Y { vec4 y[]; };

void main() {
    uint op = pc.u[1];
    float al = PCF(2), be = PCF(3);
    FOR_EACH(i, pc.u[0]) {
        y[i] = unary_op(op, x[i], al, be);
    }
}
