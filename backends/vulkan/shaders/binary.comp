#version 450
// Broadcasting binary arithmetic on float32 (op 7 is prelu).
// pc: 0 n, 1 op, 2 rank, 4..11 dims, 12..19 a strides, 20..27 b strides.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

void main() {
    uint op = pc.u[1], rank = pc.u[2];
    FOR_EACH(i, pc.u[0]) {
        float x = a[strided_offset(i, rank, 4, 12)];
        float z = b[strided_offset(i, rank, 4, 20)];
        float r;
        switch (op) {
        case 0: r = x + z; break;
        case 1: r = x - z; break;
        case 2: r = x * z; break;
        case 3: r = x / z; break;
        case 4: r = max(x, z); break;
        case 5: r = min(x, z); break;
        case 6: r = pow(x, z); break;
        default: r = x >= 0.0 ? x : x * z; break;
        }
        y[i] = r;
    }
}
