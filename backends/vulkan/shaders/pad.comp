#version 450
// pad on 4- and 8-byte elements, moved as 32-bit words: constant, edge
// or reflection.
// pc: 0 n, 1 rank, 2 mode (0 constant, 1 edge, 2 reflection), 3 the
//     constant's low word, 4..11 output dims, 12..19 input dims, 20..27
//     leading padding, 28 words per element (1 or 2), 29 the constant's
//     high word.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };

void main() {
    uint rank = pc.u[1], mode = pc.u[2], w = pc.u[28];
    FOR_EACH(i, pc.u[0]) {
        uint rest = i, off = 0u, stride = 1u;
        bool outside = false;
        for (int d = int(rank) - 1; d >= 0; d--) {
            uint od = pc.u[4 + d], id = pc.u[12 + d];
            int p = int(rest % od) - int(pc.u[20 + d]);
            rest /= od;
            int n = int(id);
            if (p < 0 || p >= n) {
                if (mode == 0u) outside = true;
                else if (mode == 1u) p = clamp(p, 0, n - 1);
                else {
                    int period = 2 * (n - 1);
                    p = abs(p) % max(period, 1);
                    if (p >= n) p = period - p;
                }
            }
            off += uint(max(p, 0)) * stride;
            stride *= id;
        }
        for (uint k = 0u; k < w; k++) y[i * w + k] = outside ? pc.u[k == 0u ? 3 : 29] : x[off * w + k];
    }
}
