#version 450
// Broadcasting comparisons of float32 into uint8 (0 or 1), four results
// packed per word so no 8-bit storage feature is needed.
// pc: 0 n, 1 op, 2 rank, 4..11 dims, 12..19 a strides, 20..27 b strides.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };

void main() {
    uint n = pc.u[0], op = pc.u[1], rank = pc.u[2];
    FOR_EACH(w, (n + 3u) / 4u) {
        uint word = 0u;
        for (uint j = 0u; j < 4u; j++) {
            uint i = w * 4u + j;
            if (i >= n) break;
            float x = a[strided_offset(i, rank, 4, 12)];
            float z = b[strided_offset(i, rank, 4, 20)];
            bool r;
            switch (op) {
            case 0: r = x == z; break;
            case 1: r = x > z; break;
            case 2: r = x >= z; break;
            case 3: r = x < z; break;
            case 4: r = x <= z; break;
            default: r = x != z; break;
            }
            word |= (r ? 1u : 0u) << (8u * j);
        }
        y[w] = word;
    }
}
