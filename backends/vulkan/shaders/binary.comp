#version 450
// Broadcasting binary arithmetic on float32 (binary.glsl has the ops).
// pc: 0 n, 1 op, 2 rank, 4..11 dims, 12..19 a strides, 20..27 b strides.
layout(local_size_x = 256) in;
#include "common.glsl"
#include "binary.glsl"
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

void main() {
    uint op = pc.u[1], rank = pc.u[2];
    FOR_EACH(i, pc.u[0]) y[i] = binary_op(op, vec4(a[strided_offset(i, rank, 4, 12)]), vec4(b[strided_offset(i, rank, 4, 20)])).x;
}
