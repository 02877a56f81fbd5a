#version 450
// triangular: keeps the upper (j - i >= diagonal) or lower (j - i <=
// diagonal) part of the last two dims and zeroes the rest, on 32-bit words.
// pc: 0 n (elements), 1 rows, 2 cols, 3 upper, 4 diagonal (int), 5 words per element.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };

void main() {
    uint cols = pc.u[2], words = pc.u[5];
    int diag = int(pc.u[4]);
    FOR_EACH(e, pc.u[0]) {
        int j = int(e % cols), i = int((e / cols) % pc.u[1]);
        bool keep = pc.u[3] != 0u ? j - i >= diag : j - i <= diag;
        for (uint w = 0u; w < words; w++) y[e * words + w] = keep ? x[e * words + w] : 0u;
    }
}
