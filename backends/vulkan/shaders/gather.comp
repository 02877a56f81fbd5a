#version 450
// gather along one axis, on 32-bit words. Indices are int32 or int64
// (read as two words; values beyond int32 are clamped like any other
// out-of-range index). Negative indices count from the end.
// pc: 0 n (output words), 1 inner (words), 2 index count, 3 extent, 4 int64 indices.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer I { int idx[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };

void main() {
    uint inner = pc.u[1], nidx = pc.u[2];
    int extent = int(pc.u[3]);
    FOR_EACH(w, pc.u[0]) {
        uint e = w % inner, j = (w / inner) % nidx, o = w / (inner * nidx);
        int v;
        if (pc.u[4] != 0u) {
            int hi = idx[2u * j + 1u];
            v = idx[2u * j];
            if (hi > 0 || (hi == 0 && v < 0)) v = extent;      // a large positive value
            else if (hi < -1 || (hi == -1 && v >= 0)) v = -2 * extent - 1; // a large negative one
        } else {
            v = idx[j];
        }
        if (v < 0) v += extent;
        v = clamp(v, 0, extent - 1);
        y[w] = x[(o * uint(extent) + uint(v)) * inner + e];
    }
}
