#version 450
// logicalNot on uint8, four bytes per word. pc: 0 words.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };

void main() {
    FOR_EACH(w, pc.u[0]) {
        uint v = x[w], r = 0u;
        for (uint j = 0u; j < 4u; j++)
            if (((v >> (8u * j)) & 255u) == 0u) r |= 1u << (8u * j);
        y[w] = r;
    }
}
