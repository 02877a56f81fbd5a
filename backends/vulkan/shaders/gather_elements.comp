#version 450
// gatherElements: y[e] = x at e's index with the axis coordinate replaced
// by indices[e] (negative counts from the end; out of range clamps).
// pc: 0 n, 1 rank, 2 axis, 3 extent, 4 int64 indices, 5 words per element,
//     8..15 output dims, 16..23 x strides (elements).
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer I { int idx[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };

void main() {
    uint rank = pc.u[1], axis = pc.u[2], words = pc.u[5];
    int extent = int(pc.u[3]);
    FOR_EACH(e, pc.u[0]) {
        int k;
        if (pc.u[4] != 0u) {
            int hi = idx[2u * e + 1u];
            k = idx[2u * e];
            if (hi > 0 || (hi == 0 && k < 0)) k = extent;
            else if (hi < -1 || (hi == -1 && k >= 0)) k = -2 * extent - 1;
        } else {
            k = idx[e];
        }
        if (k < 0) k += extent;
        k = clamp(k, 0, extent - 1);
        uint rest = e, off = 0u;
        for (int d = int(rank) - 1; d >= 0; d--) {
            uint n = pc.u[8 + d], c = rest % n;
            rest /= n;
            off += (uint(d) == axis ? uint(k) : c) * pc.u[16 + d];
        }
        for (uint w = 0u; w < words; w++) y[e * words + w] = x[off * words + w];
    }
}
