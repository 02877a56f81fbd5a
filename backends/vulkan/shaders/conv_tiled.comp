#version 450
// Direct conv2d for any groups.
// Lavapipe (Mesa's CPU device) runs 8 invocations in SIMD lanes and pays
// a per-lane loop for every storage-buffer load inside control flow, so
// the cost of this kernel is its loads: each invocation keeps an 8 x 8
// block of sums (8 output channels of one group, RN consecutive output
// pixels of one image) in registers and, per (input channel, ky, kx),
// loads 8 filter values and RN input values for 8 * RN products. No
// shared memory, no barriers, no im2col buffer, no division in the loop.
// pc: 0 outputs per group, 1 pixels per image (oh * ow), 2 cg, 3 groups,
//     4 n * groups, 5 ow, 6 kh, 7 kw, 8 H, 9 W, 10 sh, 11 sw, 12 dh, 13 dw,
//     14 pad top, 15 pad left, 16..19 filter strides (o, i, h, w),
//     20..23 input strides (n, c, h, w), 24..27 output strides (n, c, h, w),
//     28 flags (1 bias).
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 8) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer F { float f[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };

#define RM 8
#define RN 8

void main() {
    uint OG = pc.u[0], P = pc.u[1], CG = pc.u[2], G = pc.u[3], OW = pc.u[5], KH = pc.u[6], KW = pc.u[7];
    int H = int(pc.u[8]), W = int(pc.u[9]);
    uint tiles_m = (OG + RM - 1u) / RM, blocks = (P + RN - 1u) / RN;
    uint lanes = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint z = gl_WorkGroupID.z; z < pc.u[4]; z += gl_NumWorkGroups.z) {
        uint nb = z / G, g = z % G;
        uint xb = nb * pc.u[20] + g * CG * pc.u[21];
        for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
            uint o0 = tm * RM;
            uint fo[RM];
            // Rows past the group's last channel repeat it; they are not stored.
            [[unroll]] for (uint r = 0u; r < RM; r++) fo[r] = (g * OG + min(o0 + r, OG - 1u)) * pc.u[16];
            for (uint pb = gl_GlobalInvocationID.x; pb < blocks; pb += lanes) {
                int iy0[RN], ix0[RN];
                bool live[RN];
                float acc[RM][RN];
                [[unroll]] for (uint j = 0u; j < RN; j++) {
                    uint p = pb * RN + j;
                    live[j] = p < P;
                    iy0[j] = int((p / OW) * pc.u[10]) - int(pc.u[14]);
                    ix0[j] = int((p % OW) * pc.u[11]) - int(pc.u[15]);
                    [[unroll]] for (uint r = 0u; r < RM; r++) acc[r][j] = 0.0;
                }
                for (uint ci = 0u; ci < CG; ci++) {
                    uint xc = xb + ci * pc.u[21], fc = ci * pc.u[17];
                    for (uint ky = 0u; ky < KH; ky++) {
                        for (uint kx = 0u; kx < KW; kx++) {
                            float v[RN], w[RM];
                            [[unroll]] for (uint j = 0u; j < RN; j++) {
                                int iy = iy0[j] + int(ky * pc.u[12]), ix = ix0[j] + int(kx * pc.u[13]);
                                bool in_img = live[j] && iy >= 0 && iy < H && ix >= 0 && ix < W;
                                v[j] = in_img ? x[xc + uint(iy) * pc.u[22] + uint(ix) * pc.u[23]] : 0.0;
                            }
                            uint fk = fc + ky * pc.u[18] + kx * pc.u[19];
                            [[unroll]] for (uint r = 0u; r < RM; r++) w[r] = f[fo[r] + fk];
                            [[unroll]] for (uint r = 0u; r < RM; r++)
                                [[unroll]] for (uint j = 0u; j < RN; j++) acc[r][j] += w[r] * v[j];
                        }
                    }
                }
                bool has_bias = (pc.u[28] & 1u) != 0u;
                [[unroll]] for (uint j = 0u; j < RN; j++) {
                    uint p = pb * RN + j;
                    if (!live[j]) continue;
                    uint yb = nb * pc.u[24] + (p / OW) * pc.u[26] + (p % OW) * pc.u[27];
                    [[unroll]] for (uint r = 0u; r < RM; r++) {
                        uint o = g * OG + o0 + r;
                        if (o0 + r < OG) y[yb + o * pc.u[25]] = acc[r][j] + (has_bias ? bias[o] : 0.0);
                    }
                }
            }
        }
    }
}
