#version 450
// scatterElements after y = copy of x: writes each update at its index
// along the axis (negative counts from the end; out of range clamps). Of
// updates that land on one element, the last in index order wins, as on
// the cpu backend: an update skips its write when a later position along
// the axis names the same index, so no write races another.
// pc: 0 n (updates), 1 rank, 2 axis, 3 extent, 4 int64 indices,
//     5 words per element, 6 index positions along the axis, 7 their
//     stride in the indices, 8..15 index dims, 16..23 y strides (elements).
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer I { int idx[]; };
layout(std430, binding = 1) readonly buffer U { uint up[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };

int index_at(uint e) {
    int extent = int(pc.u[3]), k;
    if (pc.u[4] != 0u) {
        int hi = idx[2u * e + 1u];
        k = idx[2u * e];
        if (hi > 0 || (hi == 0 && k < 0)) k = extent;
        else if (hi < -1 || (hi == -1 && k >= 0)) k = -2 * extent - 1;
    } else {
        k = idx[e];
    }
    if (k < 0) k += extent;
    return clamp(k, 0, extent - 1);
}

void main() {
    uint rank = pc.u[1], axis = pc.u[2], words = pc.u[5], along = pc.u[6], step = pc.u[7];
    FOR_EACH(e, pc.u[0]) {
        int k = index_at(e);
        uint rest = e, off = 0u, j = 0u;
        for (int d = int(rank) - 1; d >= 0; d--) {
            uint n = pc.u[8 + d], c = rest % n;
            rest /= n;
            if (uint(d) == axis) j = c;
            off += (uint(d) == axis ? uint(k) : c) * pc.u[16 + d];
        }
        bool last = true;
        for (uint later = j + 1u; later < along && last; later++) last = index_at(e + (later - j) * step) != k;
        if (!last) continue;
        for (uint w = 0u; w < words; w++) y[off * words + w] = up[e * words + w];
    }
}
