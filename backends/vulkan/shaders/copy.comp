#version 450
// Strided copy of 32-bit words: transpose, slice, expand, concat and
// split are all this shader with different dims and strides (8-byte
// elements travel as two words).
// pc: 0 n, 1 rank, 2 input base, 3 output base, 4..11 dims,
//     12..19 input strides, 20..27 output strides.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) buffer Y { uint y[]; };

void main() {
    uint rank = pc.u[1];
    FOR_EACH(i, pc.u[0]) {
        y[pc.u[3] + strided_offset(i, rank, 4, 20)] = x[pc.u[2] + strided_offset(i, rank, 4, 12)];
    }
}
