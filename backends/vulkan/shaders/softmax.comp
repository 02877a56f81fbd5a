#version 450
// softmax along one axis: one group of 64 per row, shared-memory
// reductions for the max and the sum.
// pc: 0 rows (outer * inner), 1 extent, 2 inner.
layout(local_size_x = 64) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
shared float red[64];

void main() {
    uint extent = pc.u[1], inner = pc.u[2], t = gl_LocalInvocationID.x;
    for (uint r = gl_WorkGroupID.x; r < pc.u[0]; r += gl_NumWorkGroups.x) {
        uint base = (r / inner) * extent * inner + r % inner;
        float m = -1.0 / 0.0;
        for (uint a = t; a < extent; a += 64u) m = max(m, x[base + a * inner]);
        red[t] = m;
        barrier();
        for (uint s = 32u; s > 0u; s >>= 1u) {
            if (t < s) red[t] = max(red[t], red[t + s]);
            barrier();
        }
        m = red[0];
        barrier();
        float sum = 0.0;
        for (uint a = t; a < extent; a += 64u) sum += exp(x[base + a * inner] - m);
        red[t] = sum;
        barrier();
        for (uint s = 32u; s > 0u; s >>= 1u) {
            if (t < s) red[t] += red[t + s];
            barrier();
        }
        sum = red[0];
        barrier();
        // A row of -inf (fully masked) gives zeros rather than NaN.
        bool dead = isinf(m) && m < 0.0;
        for (uint a = t; a < extent; a += 64u) y[base + a * inner] = dead ? 0.0 : exp(x[base + a * inner] - m) / sum;
    }
}
