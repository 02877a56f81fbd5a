#version 450
// softmax along one axis: one group of 64 per row, shared-memory
// reductions for the max and the sum. The answer is the formula's, at
// every edge: a NaN in a row, a +inf in it, or a row of only -inf (e^(-inf
// - -inf)) make the whole row NaN; -inf entries of another row give 0.
// berth.attention's rows differ in one: a row whose every key is masked
// out (only -inf) gives zeros, as its contract and cpu's kernel say.
// pc: 0 rows (outer * inner), 1 extent, 2 inner, 3 a row of only -inf
//     gives zeros (berth.attention).
layout(local_size_x = 64) in;
#include "common.glsl"
#include "edge.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
shared float red[64];

void main() {
    uint extent = pc.u[1], inner = pc.u[2], t = gl_LocalInvocationID.x;
    for (uint r = gl_WorkGroupID.x; r < pc.u[0]; r += gl_NumWorkGroups.x) {
        uint base = (r / inner) * extent * inner + r % inner;
        float m = -1.0 / 0.0;
        for (uint a = t; a < extent; a += 64u) m = edge_max(vec4(m), vec4(x[base + a * inner])).x;
        red[t] = m;
        barrier();
        for (uint s = 32u; s > 0u; s >>= 1u) {
            if (t < s) red[t] = edge_max(vec4(red[t]), vec4(red[t + s])).x;
            barrier();
        }
        m = red[0];
        barrier();
        float sum = 0.0;
        for (uint a = t; a < extent; a += 64u) sum += edge_exp(vec4(x[base + a * inner] - m)).x;
        red[t] = sum;
        barrier();
        for (uint s = 32u; s > 0u; s >>= 1u) {
            if (t < s) red[t] += red[t + s];
            barrier();
        }
        sum = red[0];
        barrier();
        // inf - inf is NaN by IEEE rules; written out so no device's
        // subtraction or exp decides it
        bool masked = pc.u[3] != 0u && m == -EDGE_INF;
        bool nan_row = isnan(m) || isinf(m) || isnan(sum);
        for (uint a = t; a < extent; a += 64u)
            y[base + a * inner] = masked ? 0.0
                                : nan_row ? edge_nan(vec4(0.0)).x : edge_exp(vec4(x[base + a * inner] - m)).x / sum;
    }
}
