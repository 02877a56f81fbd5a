#version 450
// layerNormalization and instanceNormalization: one group of 64 per
// normalized group, mean then variance by shared-memory reductions (two
// passes, so large offsets do not cancel), then the affine step.
// pc: 0 groups, 1 count, 2 kept rank, 3 reduced rank, 4 epsilon,
//     5 flags (1 scale, 2 bias, 4 scale/bias follow the kept index),
//     6..9 kept dims, 10..13 kept x strides, 14..17 kept scale strides,
//     18..21 reduced dims, 22..25 reduced x strides, 26..29 reduced scale strides.
layout(local_size_x = 64) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer S { float sc[]; };
layout(std430, binding = 2) readonly buffer B { float bi[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
shared float red[64];

float group_sum(float v) {
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = 32u; s > 0u; s >>= 1u) {
        if (t < s) red[t] += red[t + s];
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

void main() {
    uint count = pc.u[1], nk = pc.u[2], nr = pc.u[3], flags = pc.u[5], t = gl_LocalInvocationID.x;
    for (uint g = gl_WorkGroupID.x; g < pc.u[0]; g += gl_NumWorkGroups.x) {
        uint base = strided_offset(g, nk, 6, 10), kbase = strided_offset(g, nk, 6, 14);
        float s = 0.0;
        for (uint j = t; j < count; j += 64u) s += x[base + strided_offset(j, nr, 18, 22)];
        float mean = group_sum(s) / float(count);
        float v = 0.0;
        for (uint j = t; j < count; j += 64u) {
            float d = x[base + strided_offset(j, nr, 18, 22)] - mean;
            v += d * d;
        }
        float inv = 1.0 / sqrt(group_sum(v) / float(count) + PCF(4));
        for (uint j = t; j < count; j += 64u) {
            uint xo = base + strided_offset(j, nr, 18, 22);
            uint so = (flags & 4u) != 0u ? kbase : strided_offset(j, nr, 18, 26);
            float r = (x[xo] - mean) * inv;
            if ((flags & 1u) != 0u) r *= sc[so];
            if ((flags & 2u) != 0u) r += bi[so];
            y[xo] = r;
        }
    }
}
