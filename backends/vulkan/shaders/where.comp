#version 450
// where(condition uint8, a, b) on 32-bit words with three-way broadcasting.
// pc: 0 n, 1 rank (<= 6), 2..7 dims, 8..13 condition strides,
//     14..19 a strides, 20..25 b strides.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer C { uint cw[]; };
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 2) readonly buffer B { uint b[]; };
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };

void main() {
    uint rank = pc.u[1];
    FOR_EACH(i, pc.u[0]) {
        uint co = strided_offset(i, rank, 2, 8);
        uint cond = (cw[co >> 2u] >> ((co & 3u) * 8u)) & 255u;
        y[i] = cond != 0u ? a[strided_offset(i, rank, 2, 14)] : b[strided_offset(i, rank, 2, 20)];
    }
}
