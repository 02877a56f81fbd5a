#version 450
// Reductions over any set of axes: one group of 64 per output element.
// pc: 0 outputs, 1 reduced count, 2 kept rank, 3 reduced rank, 4 op,
//     5..8 kept dims, 9..12 kept strides, 13..16 reduced dims, 17..20 reduced strides.
// ops: 0 mean, 1 sum, 2 max, 3 min, 4 product, 5 L2, 6 sumSquare, 7 L1, 8 logSum, 9 logSumExp.
// A NaN reaches the result of every op (max and min included); an empty
// reduction gives the op's identity (0, 1, -inf, +inf; mean 0 / 0 = NaN).
layout(local_size_x = 64) in;
#include "common.glsl"
#include "edge.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
shared float red[64];

float combine(uint op, float a, float b) {
    if (op == 2u) return edge_max(vec4(a), vec4(b)).x;
    if (op == 3u) return edge_min(vec4(a), vec4(b)).x;
    if (op == 4u) return a * b;
    return a + b;
}

float reduce_group(uint op, float v) {
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = 32u; s > 0u; s >>= 1u) {
        if (t < s) red[t] = combine(op, red[t], red[t + s]);
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

void main() {
    uint nred = pc.u[1], op = pc.u[4], t = gl_LocalInvocationID.x;
    float inf = 1.0 / 0.0;
    for (uint o = gl_WorkGroupID.x; o < pc.u[0]; o += gl_NumWorkGroups.x) {
        uint base = strided_offset(o, pc.u[2], 5, 9);
        float m = 0.0;
        if (op == 9u) {
            float mx = -inf;
            for (uint j = t; j < nred; j += 64u) mx = edge_max(vec4(mx), vec4(x[base + strided_offset(j, pc.u[3], 13, 17)])).x;
            m = reduce_group(2u, mx);
            // all -inf, or an inf that x - m would turn into NaN: shift by
            // 0 (e^-inf = 0, e^inf = inf); a NaN stays, and reaches the sum
            if (isinf(m)) m = 0.0;
        }
        float acc = op == 4u ? 1.0 : (op == 2u ? -inf : (op == 3u ? inf : 0.0));
        for (uint j = t; j < nred; j += 64u) {
            float v = x[base + strided_offset(j, pc.u[3], 13, 17)];
            if (op == 5u || op == 6u) v = v * v;
            else if (op == 7u) v = abs(v);
            else if (op == 9u) v = edge_exp(vec4(v - m)).x;
            acc = combine(op, acc, v);
        }
        acc = reduce_group(op, acc);
        if (t == 0u) {
            if (op == 0u) acc = edge_div(vec4(acc), vec4(float(nred))).x;
            else if (op == 5u) acc = edge_sqrt(vec4(acc)).x;
            else if (op == 8u) acc = edge_log(vec4(acc)).x;
            else if (op == 9u) acc = m + edge_log(vec4(acc)).x;
            y[o] = acc;
        }
    }
}
