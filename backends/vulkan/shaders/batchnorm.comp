#version 450
// batchNormalization with given mean and variance, per channel.
// pc: 0 n, 1 channels, 2 inner, 3 epsilon, 4 flags (1 scale, 2 bias).
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer M { float mean[]; };
layout(std430, binding = 2) readonly buffer V { float var[]; };
layout(std430, binding = 3) readonly buffer S { float sc[]; };
layout(std430, binding = 4) readonly buffer B { float bi[]; };
layout(std430, binding = 5) writeonly buffer Y { float y[]; };

void main() {
    FOR_EACH(i, pc.u[0]) {
        uint ch = (i / pc.u[2]) % pc.u[1];
        float r = (x[i] - mean[ch]) / sqrt(var[ch] + PCF(3));
        if ((pc.u[4] & 1u) != 0u) r *= sc[ch];
        if ((pc.u[4] & 2u) != 0u) r += bi[ch];
        y[i] = r;
    }
}
