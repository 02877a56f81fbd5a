#version 450
// Walks one axis per thread: argMax / argMin (the first index of the
// extreme wins; a NaN is the extreme of both, so the first NaN wins, as
// numpy's argmax) and cumulativeSum (exclusive, reversed).
// pc: 0 lines (outer * inner), 1 extent, 2 inner, 3 kind (0 argMax,
//     1 argMin, 2 cumulativeSum), 4 int64 result, 5 exclusive, 6 reversed.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };

void main() {
    uint extent = pc.u[1], inner = pc.u[2], kind = pc.u[3];
    FOR_EACH(l, pc.u[0]) {
        uint base = (l / inner) * extent * inner + l % inner;
        if (kind == 2u) {
            float acc = 0.0;
            for (uint s = 0u; s < extent; s++) {
                uint k = pc.u[6] != 0u ? extent - 1u - s : s;
                float v = x[base + k * inner];
                if (pc.u[5] == 0u) acc += v;
                y[base + k * inner] = floatBitsToUint(acc);
                if (pc.u[5] != 0u) acc += v;
            }
        } else {
            uint best = 0u;
            for (uint k = 1u; k < extent; k++) {
                float v = x[base + k * inner], b = x[base + best * inner];
                if (isnan(b)) break;
                if (isnan(v) || (kind == 1u ? v < b : v > b)) best = k;
            }
            if (pc.u[4] != 0u) {
                y[2u * l] = best;
                y[2u * l + 1u] = 0u;
            } else {
                y[l] = best;
            }
        }
    }
}
