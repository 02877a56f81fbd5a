#version 450
// A chain of up to 8 elementwise float32 ops over one shape, four
// elements per invocation, as one pass: the planner fuses consecutive
// unary4/binary4 dispatches whose intermediate results nothing else reads,
// so those never touch memory (on lavapipe each load and store costs a
// per-lane loop, and each dispatch a wake-up of its threads).
// The program is in specialization constants, so each chain compiles to
// straight-line code: lavapipe runs every arm of a branch under a mask, so
// a switch on a run-time op code would cost all the ops it names.
// Operands: the results of earlier ops in the chain (0..7) or bindings
// 0..6 (sources 8..14), each a tensor shaped like the output or a single
// value (MASK bit s set for binding s).
// Constants: 0 ops, 1..8 op words (bits 0-4 op code, bit 5 unary, 8-11
// source a, 12-15 source b), 9 single-value mask.
// pc: 0 n / 4, 10..25 alpha and beta per op.
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 64) in;
#include "common.glsl"
#include "binary.glsl"
#include "unary.glsl"
layout(constant_id = 0) const uint NOPS = 1u;
layout(constant_id = 1) const uint OP0 = 0u;
layout(constant_id = 2) const uint OP1 = 0u;
layout(constant_id = 3) const uint OP2 = 0u;
layout(constant_id = 4) const uint OP3 = 0u;
layout(constant_id = 5) const uint OP4 = 0u;
layout(constant_id = 6) const uint OP5 = 0u;
layout(constant_id = 7) const uint OP6 = 0u;
layout(constant_id = 8) const uint OP7 = 0u;
layout(constant_id = 9) const uint MASK = 0u;
layout(std430, binding = 0) readonly buffer T0 { vec4 t0[]; };
layout(std430, binding = 1) readonly buffer T1 { vec4 t1[]; };
layout(std430, binding = 2) readonly buffer T2 { vec4 t2[]; };
layout(std430, binding = 3) readonly buffer T3 { vec4 t3[]; };
layout(std430, binding = 4) readonly buffer T4 { vec4 t4[]; };
layout(std430, binding = 5) readonly buffer T5 { vec4 t5[]; };
layout(std430, binding = 6) readonly buffer T6 { vec4 t6[]; };
layout(std430, binding = 0) readonly buffer S0 { float s0[]; };
layout(std430, binding = 1) readonly buffer S1 { float s1[]; };
layout(std430, binding = 2) readonly buffer S2 { float s2[]; };
layout(std430, binding = 3) readonly buffer S3 { float s3[]; };
layout(std430, binding = 4) readonly buffer S4 { float s4[]; };
layout(std430, binding = 5) readonly buffer S5 { float s5[]; };
layout(std430, binding = 6) readonly buffer S6 { float s6[]; };
layout(std430, binding = 7) writeonly buffer Y { vec4 y[]; };

float single(uint s) {
    switch (s) {
    case 0: return s0[0];
    case 1: return s1[0];
    case 2: return s2[0];
    case 3: return s3[0];
    case 4: return s4[0];
    case 5: return s5[0];
    default: return s6[0];
    }
}

vec4 tensor(uint s, uint i) {
    switch (s) {
    case 0: return t0[i];
    case 1: return t1[i];
    case 2: return t2[i];
    case 3: return t3[i];
    case 4: return t4[i];
    case 5: return t5[i];
    default: return t6[i];
    }
}

uint op_word(uint k) {
    switch (k) {
    case 0: return OP0;
    case 1: return OP1;
    case 2: return OP2;
    case 3: return OP3;
    case 4: return OP4;
    case 5: return OP5;
    case 6: return OP6;
    default: return OP7;
    }
}

vec4 operand(uint s, uint i, vec4 r[8]) {
    if (s < 8u) return r[s];
    uint b = s - 8u;
    return (MASK & (1u << b)) != 0u ? vec4(single(b)) : tensor(b, i);
}

void main() {
    FOR_EACH(i, pc.u[0]) {
        vec4 r[8];
        [[unroll]] for (uint k = 0u; k < 8u; k++) {
            if (k >= NOPS) break;
            uint w = op_word(k), code = w & 31u;
            vec4 a = operand((w >> 8) & 15u, i, r);
            if ((w & 32u) != 0u) {
                r[k] = unary_op(code, a, PCF(10u + 2u * k), PCF(11u + 2u * k));
            } else {
                r[k] = binary_op(code, a, operand((w >> 12) & 15u, i, r));
            }
        }
        y[i] = r[NOPS - 1u];
    }
}
