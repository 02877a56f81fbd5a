#version 450
// where(condition uint8, a, b) on 32-bit words, or pairs of them for
// 64-bit elements, with three-way broadcasting.
// pc: 0 n, 1 rank (<= 6), 2..7 dims, 8..13 condition strides,
//     14..19 a strides, 20..25 b strides, 26 words per element (1 or 2).
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer C { uint cw[]; };
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 2) readonly buffer B { uint b[]; };
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };

void main() {
    uint rank = pc.u[1], words = pc.u[26];
    FOR_EACH(i, pc.u[0]) {
        uint co = strided_offset(i, rank, 2, 8);
        uint cond = (cw[co >> 2u] >> ((co & 3u) * 8u)) & 255u;
        uint src = cond != 0u ? strided_offset(i, rank, 2, 14) : strided_offset(i, rank, 2, 20);
        for (uint k = 0u; k < words; k++) y[i * words + k] = cond != 0u ? a[src * words + k] : b[src * words + k];
    }
}
