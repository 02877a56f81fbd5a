#version 450
// where(condition uint8, a, b) with three-way broadcasting: on 32-bit
// words, pairs of them for 64-bit elements, or 8- and 16-bit elements
// packed in words (each invocation then writes a whole word).
// pc: 0 n, 1 rank (<= 6), 2..7 dims, 8..13 condition strides,
//     14..19 a strides, 20..25 b strides, 26 words per element (1 or 2;
//     0: narrower), 27 bytes per element (1 or 2, when narrower).
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer C { uint cw[]; };
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 2) readonly buffer B { uint b[]; };
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };

uint pick(uint i, uint rank) {
    uint co = strided_offset(i, rank, 2, 8);
    return (cw[co >> 2u] >> ((co & 3u) * 8u)) & 255u;
}

void main() {
    uint rank = pc.u[1], words = pc.u[26], n = pc.u[0];
    if (words == 0u) {
        uint bits = 8u * pc.u[27], per = 32u / bits, mask = (1u << bits) - 1u;
        FOR_EACH(w, (n + per - 1u) / per) {
            uint word = 0u;
            for (uint j = 0u; j < per && w * per + j < n; j++) {
                uint i = w * per + j;
                bool c = pick(i, rank) != 0u;
                uint s = c ? strided_offset(i, rank, 2, 14) : strided_offset(i, rank, 2, 20);
                uint v = ((c ? a[s / per] : b[s / per]) >> ((s % per) * bits)) & mask;
                word |= v << (j * bits);
            }
            y[w] = word;
        }
        return;
    }
    FOR_EACH(i, n) {
        uint co = strided_offset(i, rank, 2, 8);
        uint cond = (cw[co >> 2u] >> ((co & 3u) * 8u)) & 255u;
        uint src = cond != 0u ? strided_offset(i, rank, 2, 14) : strided_offset(i, rank, 2, 20);
        for (uint k = 0u; k < words; k++) y[i * words + k] = cond != 0u ? a[src * words + k] : b[src * words + k];
    }
}
