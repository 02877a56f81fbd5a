#version 450
// Broadcasting logicalAnd, logicalOr and logicalXor on uint8 (0 or
// nonzero), four bytes per word in and out.
// pc: 0 n, 1 op (0 and, 1 or, 2 xor), 2 rank, 4..11 dims, 12..19 a strides, 20..27 b strides.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };

bool byte_at(uint o, bool first) {
    uint w = first ? a[o >> 2u] : b[o >> 2u];
    return ((w >> ((o & 3u) * 8u)) & 255u) != 0u;
}

void main() {
    uint n = pc.u[0], op = pc.u[1], rank = pc.u[2];
    FOR_EACH(w, (n + 3u) / 4u) {
        uint word = 0u;
        for (uint j = 0u; j < 4u && w * 4u + j < n; j++) {
            uint i = w * 4u + j;
            bool x = byte_at(strided_offset(i, rank, 4, 12), true), z = byte_at(strided_offset(i, rank, 4, 20), false);
            bool r = op == 0u ? (x && z) : (op == 1u ? (x || z) : (x != z));
            word |= (r ? 1u : 0u) << (8u * j);
        }
        y[w] = word;
    }
}
