#version 450
// Binary arithmetic where each input is either shaped like the output or
// a single value, four elements per invocation: no index arithmetic, and
// one vec4 load costs lavapipe what one float does. The planner checks
// that the element count is a multiple of 4. A single value is read
// through its own float binding, so no load reaches past its buffer.
// pc: 0 n / 4, 1 op, 2 flags (1 a is a single value, 2 b is).
layout(local_size_x = 64) in;
#include "common.glsl"
#include "binary.glsl"
layout(std430, binding = 0) readonly buffer A { vec4 a[]; };
layout(std430, binding = 1) readonly buffer B { vec4 b[]; };
layout(std430, binding = 2) readonly buffer A1 { float a1[]; };
layout(std430, binding = 3) readonly buffer B1 { float b1[]; };
layout(std430, binding = 4) writeonly buffer Y { vec4 y[]; };

void main() {
    uint op = pc.u[1], flags = pc.u[2];
    float sa = (flags & 1u) != 0u ? a1[0] : 0.0, sb = (flags & 2u) != 0u ? b1[0] : 0.0;
    FOR_EACH(i, pc.u[0]) {
        vec4 x = (flags & 1u) != 0u ? vec4(sa) : a[i];
        vec4 z = (flags & 2u) != 0u ? vec4(sb) : b[i];
        y[i] = binary_op(op, x, z);
    }
}
