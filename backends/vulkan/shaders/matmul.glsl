// The body of the matmul*.comp shaders, which define VA and VB.
// Matrix product with a fused epilogue, for matmul, gemm and
// berth.matmulEpilogue: y = act(alpha * A B + beta * C + bias) + residual.
// Register-tiled for lavapipe, where every storage-buffer load in a loop
// costs a per-lane loop and arithmetic is cheap: each invocation owns an
// 8 x 8 block of y and loads 8 values of A and 8 of B per step of k for 64
// products. No shared memory and no barriers. Rows and columns past the
// edge read the last row or column and are not stored. The matmul*.comp
// files set VA (A read as vec4 along k: K, the A row stride and A batch
// strides are multiples of 4, k stride 1) and VB (B read as vec4 along
// its columns: N, the B k stride and B batch strides are multiples of 4,
// column stride 1); a vec4 load costs lavapipe one lane loop, like a
// float. The planner checks the conditions. pc[21] bit 3: bias per row.
// pc: 0 M, 1 N, 2 K, 3 batch, 4 batch rank (<= 4), 5..8 batch dims,
//     9..12 A batch strides, 13..16 B batch strides,
//     17 A row stride, 18 A k stride, 19 B k stride, 20 B col stride,
//     21 flags (1 C, 2 bias, 4 residual, act << 4), 22 alpha, 23 beta,
//     24 C row stride, 25 C col stride.
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 8) in;
#include "common.glsl"
#include "epilogue.glsl"
#if VA
layout(std430, binding = 0) readonly buffer A { vec4 a4[]; };
#else
layout(std430, binding = 0) readonly buffer A { float a[]; };
#endif
#if VB
layout(std430, binding = 1) readonly buffer B { vec4 b4[]; };
#else
layout(std430, binding = 1) readonly buffer B { float b[]; };
#endif
layout(std430, binding = 2) readonly buffer C { float cv[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
layout(std430, binding = 4) readonly buffer Res { float res[]; };
layout(std430, binding = 5) writeonly buffer Y { float y[]; };

#define RM 8
#define RN 8

void main() {
    uint M = pc.u[0], N = pc.u[1], K = pc.u[2], batch = pc.u[3], brank = pc.u[4];
    uint sam = pc.u[17], sak = pc.u[18], sbk = pc.u[19], sbn = pc.u[20], flags = pc.u[21];
    uint tiles_m = (M + RM - 1u) / RM, tiles_n = (N + RN - 1u) / RN;
    uint lanes = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint z = gl_WorkGroupID.z; z < batch; z += gl_NumWorkGroups.z) {
        uint aoff = strided_offset(z, brank, 5, 9), boff = strided_offset(z, brank, 5, 13);
        for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
            uint ar[RM];
            [[unroll]] for (uint i = 0u; i < RM; i++) ar[i] = aoff + min(tm * RM + i, M - 1u) * sam;
            for (uint tn = gl_GlobalInvocationID.x; tn < tiles_n; tn += lanes) {
                float acc[RM][RN];
                [[unroll]] for (uint i = 0u; i < RM; i++)
                    [[unroll]] for (uint j = 0u; j < RN; j++) acc[i][j] = 0.0;
#if VB
                // Two aligned vec4 columns; a block past N rereads the last one.
                uint bc0 = boff + min(tn * RN, N - 4u), bc1 = boff + min(tn * RN + 4u, N - 4u);
#else
                uint bc[RN];
                [[unroll]] for (uint j = 0u; j < RN; j++) bc[j] = boff + min(tn * RN + j, N - 1u) * sbn;
#endif
#if VA
                for (uint k = 0u; k < K; k += 4u) {
                    vec4 av[RM];
                    [[unroll]] for (uint i = 0u; i < RM; i++) av[i] = a4[(ar[i] + k) >> 2];
                    [[unroll]] for (uint kk = 0u; kk < 4u; kk++) {
                        float bv[RN];
#if VB
                        uint kb = (k + kk) * sbk;
                        vec4 b0 = b4[(bc0 + kb) >> 2], b1 = b4[(bc1 + kb) >> 2];
                        [[unroll]] for (uint j = 0u; j < 4u; j++) {
                            bv[j] = b0[j];
                            bv[j + 4u] = b1[j];
                        }
#else
                        [[unroll]] for (uint j = 0u; j < RN; j++) bv[j] = b[bc[j] + (k + kk) * sbk];
#endif
                        [[unroll]] for (uint i = 0u; i < RM; i++)
                            [[unroll]] for (uint j = 0u; j < RN; j++) acc[i][j] += av[i][kk] * bv[j];
                    }
                }
#else
                for (uint k = 0u; k < K; k++) {
                    float av[RM], bv[RN];
                    [[unroll]] for (uint i = 0u; i < RM; i++) av[i] = a[ar[i] + k * sak];
                    [[unroll]] for (uint j = 0u; j < RN; j++) bv[j] = b[bc[j] + k * sbk];
                    [[unroll]] for (uint i = 0u; i < RM; i++)
                        [[unroll]] for (uint j = 0u; j < RN; j++) acc[i][j] += av[i] * bv[j];
                }
#endif
                [[unroll]] for (uint i = 0u; i < RM; i++) {
                    uint row = tm * RM + i;
                    if (row >= M) break;
                    [[unroll]] for (uint j = 0u; j < RN; j++) {
                        uint col = tn * RN + j;
                        if (col >= N) break;
                        float v = PCF(22) * acc[i][j];
                        if ((flags & 1u) != 0u) v += PCF(23) * cv[row * pc.u[24] + col * pc.u[25]];
                        if ((flags & 2u) != 0u) v += bias[(flags & 8u) != 0u ? row : col];
                        v = act(flags >> 4u, v);
                        uint yi = (z * M + row) * N + col;
                        if ((flags & 4u) != 0u) v += res[yi];
                        y[yi] = v;
                    }
                }
            }
        }
    }
}
