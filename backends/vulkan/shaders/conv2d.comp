#version 450
// convTranspose2d (and conv2d, flag 2 clear: vk_ops_conv.c now picks
// conv_depthwise, the matmul shaders or conv_tiled for conv2d, which cost
// lavapipe far less than this kernel's shared-memory tiles and barriers)
// as an implicit matrix product per group:
// y[o, p] = sum over k of F[o, k] * X[k, p] with p an output pixel and k
// (input channel, ky, kx). Nothing is unfolded in memory: each tile
// gathers its input panel straight from the image into shared memory.
// Layouts are strides, so nchw/nhwc and every filter layout run as is.
// pc: 0 outputs per group, 1 pixels (n*oh*ow), 2 K (cg*kh*kw), 3 groups,
//     4 oh, 5 ow, 6 kh, 7 kw, 8 cg, 9 H, 10 W, 11 sh, 12 sw, 13 dh, 14 dw,
//     15 pad top, 16 pad left, 17..20 filter strides (o, i, h, w),
//     21..24 input strides (n, c, h, w), 25..28 output strides (n, c, h, w),
//     29 flags (1 bias, 2 transposed).
layout(local_size_x = 16, local_size_y = 16) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer F { float f[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };

#define TM 32
#define TK 16
shared float As[TK][TM + 1];
shared float Bs[TK][TM + 1];

// The input value for reduction index k and output pixel p of group g.
float gather_input(uint g, uint k, uint p) {
    uint khw = pc.u[6] * pc.u[7];
    uint ci = k / khw, r = k % khw, ky = r / pc.u[7], kx = r % pc.u[7];
    uint ohw = pc.u[4] * pc.u[5];
    uint nb = p / ohw, q = p % ohw, oy = q / pc.u[5], ox = q % pc.u[5];
    int iy, ix;
    if ((pc.u[29] & 2u) == 0u) {
        iy = int(oy * pc.u[11] + ky * pc.u[13]) - int(pc.u[15]);
        ix = int(ox * pc.u[12] + kx * pc.u[14]) - int(pc.u[16]);
    } else {
        // oy = iy * stride - pad + ky * dilation, solved for iy.
        int ty = int(oy) + int(pc.u[15]) - int(ky * pc.u[13]);
        int tx = int(ox) + int(pc.u[16]) - int(kx * pc.u[14]);
        if (ty < 0 || tx < 0 || ty % int(pc.u[11]) != 0 || tx % int(pc.u[12]) != 0) return 0.0;
        iy = ty / int(pc.u[11]);
        ix = tx / int(pc.u[12]);
    }
    if (iy < 0 || ix < 0 || iy >= int(pc.u[9]) || ix >= int(pc.u[10])) return 0.0;
    uint c = g * pc.u[8] + ci;
    return x[nb * pc.u[21] + c * pc.u[22] + uint(iy) * pc.u[23] + uint(ix) * pc.u[24]];
}

float filter_at(uint g, uint m, uint k) {
    uint khw = pc.u[6] * pc.u[7];
    uint ci = k / khw, r = k % khw, ky = r / pc.u[7], kx = r % pc.u[7];
    uint o, i;
    if ((pc.u[29] & 2u) == 0u) {
        o = g * pc.u[0] + m;  // [o, i/groups, kh, kw]
        i = ci;
    } else {
        o = m;                // [i, o/groups, kh, kw]
        i = g * pc.u[8] + ci;
    }
    return f[o * pc.u[17] + i * pc.u[18] + ky * pc.u[19] + kx * pc.u[20]];
}

void main() {
    uint M = pc.u[0], N = pc.u[1], K = pc.u[2];
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y, lin = ty * 16u + tx;
    uint tiles_m = (M + TM - 1u) / TM, tiles_n = (N + TM - 1u) / TM;
    uint ohw = pc.u[4] * pc.u[5];
    for (uint g = gl_WorkGroupID.z; g < pc.u[3]; g += gl_NumWorkGroups.z) {
        for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
            for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
                uint r0 = tm * TM, c0 = tn * TM;
                float acc[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
                for (uint k0 = 0u; k0 < K; k0 += TK) {
                    for (uint e = lin; e < TK * TM; e += 256u) {
                        uint kk = e % TK, mm = e / TK;
                        As[kk][mm] = (r0 + mm < M && k0 + kk < K) ? filter_at(g, r0 + mm, k0 + kk) : 0.0;
                        uint nn = e % TM, kb = e / TM;
                        Bs[kb][nn] = (c0 + nn < N && k0 + kb < K) ? gather_input(g, k0 + kb, c0 + nn) : 0.0;
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
                        uint m = r0 + ty + 16u * i, p = c0 + tx + 16u * j;
                        if (m >= M || p >= N) continue;
                        uint o = g * M + m;
                        float v = acc[i][j];
                        if ((pc.u[29] & 1u) != 0u) v += bias[o];
                        uint nb = p / ohw, q = p % ohw, oy = q / pc.u[5], ox = q % pc.u[5];
                        y[nb * pc.u[25] + o * pc.u[26] + oy * pc.u[27] + ox * pc.u[28]] = v;
                    }
                }
            }
        }
    }
}
