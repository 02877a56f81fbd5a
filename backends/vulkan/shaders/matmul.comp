#version 450
// Tiled matrix product with a fused epilogue, for matmul, gemm and
// berth.matmulEpilogue: y = act(alpha * A B + beta * C + bias) + residual.
// Each 16x16 group computes a 32x32 tile of y, each thread 2x2 outputs,
// staging 32x16 panels of A and B in shared memory.
// pc: 0 M, 1 N, 2 K, 3 batch, 4 batch rank (<= 4), 5..8 batch dims,
//     9..12 A batch strides, 13..16 B batch strides,
//     17 A row stride, 18 A k stride, 19 B k stride, 20 B col stride,
//     21 flags (1 C, 2 bias, 4 residual, act << 4), 22 alpha, 23 beta,
//     24 C row stride, 25 C col stride.
layout(local_size_x = 16, local_size_y = 16) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) readonly buffer C { float cv[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
layout(std430, binding = 4) readonly buffer Res { float res[]; };
layout(std430, binding = 5) writeonly buffer Y { float y[]; };

#define TM 32
#define TK 16
shared float As[TK][TM + 1];
shared float Bs[TK][TM + 1];

float erf_approx(float v) {
    float s = sign(v), x = abs(v);
    float t = 1.0 / (1.0 + 0.3275911 * x);
    float p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return s * (1.0 - p * exp(-x * x));
}

float act(uint kind, float v) {
    if (kind == 1u) return max(v, 0.0);
    if (kind == 2u) return 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752));
    if (kind == 3u) return 1.0 / (1.0 + exp(-v));
    if (kind == 4u) return v > 15.0 ? 1.0 : (v < -15.0 ? -1.0 : tanh(v));
    return v;
}

void main() {
    uint M = pc.u[0], N = pc.u[1], K = pc.u[2], batch = pc.u[3], brank = pc.u[4];
    uint sam = pc.u[17], sak = pc.u[18], sbk = pc.u[19], sbn = pc.u[20], flags = pc.u[21];
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y, lin = ty * 16u + tx;
    uint tiles_m = (M + TM - 1u) / TM, tiles_n = (N + TM - 1u) / TM;
    for (uint z = gl_WorkGroupID.z; z < batch; z += gl_NumWorkGroups.z) {
        uint aoff = strided_offset(z, brank, 5, 9), boff = strided_offset(z, brank, 5, 13);
        for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
            for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
                uint r0 = tm * TM, c0 = tn * TM;
                float acc[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
                for (uint k0 = 0u; k0 < K; k0 += TK) {
                    // 256 threads load 512 values of each panel: two each.
                    for (uint e = lin; e < TK * TM; e += 256u) {
                        uint kk = e % TK, mm = e / TK;
                        uint row = r0 + mm, k = k0 + kk;
                        As[kk][mm] = (row < M && k < K) ? a[aoff + row * sam + k * sak] : 0.0;
                        uint nn = e % TM, kb = e / TM;
                        uint col = c0 + nn, k2 = k0 + kb;
                        Bs[kb][nn] = (col < N && k2 < K) ? b[boff + k2 * sbk + col * sbn] : 0.0;
                    }
                    barrier();
                    for (uint kk = 0u; kk < TK; kk++) {
                        float a0 = As[kk][ty], a1 = As[kk][ty + 16u];
                        float b0 = Bs[kk][tx], b1 = Bs[kk][tx + 16u];
                        acc[0][0] += a0 * b0;
                        acc[0][1] += a0 * b1;
                        acc[1][0] += a1 * b0;
                        acc[1][1] += a1 * b1;
                    }
                    barrier();
                }
                for (uint i = 0u; i < 2u; i++) {
                    for (uint j = 0u; j < 2u; j++) {
                        uint row = r0 + ty + 16u * i, col = c0 + tx + 16u * j;
                        if (row >= M || col >= N) continue;
                        float v = PCF(22) * acc[i][j];
                        if ((flags & 1u) != 0u) v += PCF(23) * cv[row * pc.u[24] + col * pc.u[25]];
                        if ((flags & 2u) != 0u) v += bias[col];
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
