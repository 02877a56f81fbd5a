#version 450
// Depthwise conv2d: every group reads one input channel, so an output
// element is a short dot product over the kernel window only. Each
// invocation computes RN horizontally adjacent outputs of one row of one
// plane, so a filter value loads once for RN products; with unit
// horizontal stride and dilation (and kw <= 7) the RN + kw - 1 input
// values of a kernel row load once too. Lavapipe pays a per-lane loop for
// each storage-buffer load, so loads are what this saves. z walks
// (image, output channel); x walks (output row, block of RN columns), with
// one division per invocation and none in the window loops.
// pc: 0 planes (n * O), 1 O, 2 multiplier (outputs per input channel),
//     3 oh, 4 ow, 5 H, 6 W, 7 kh, 8 kw, 9 sh, 10 sw, 11 dh, 12 dw,
//     13 pad top, 14 pad left, 15..18 input strides (n, c, h, w),
//     19..22 output strides (n, c, h, w), 23..25 filter strides
//     (output channel, h, w), 26 flags (1 bias).
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 64) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer F { float f[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };

#define RN 8
#define KWMAX 7

void main() {
    uint O = pc.u[1], OH = pc.u[3], OW = pc.u[4], KH = pc.u[7], KW = pc.u[8];
    int H = int(pc.u[5]), W = int(pc.u[6]);
    uint blocks = (OW + RN - 1u) / RN;
    bool unit = pc.u[10] == 1u && pc.u[12] == 1u && KW <= KWMAX;
    for (uint z = gl_WorkGroupID.z; z < pc.u[0]; z += gl_NumWorkGroups.z) {
        uint nb = z / O, o = z % O, ci = o / pc.u[2];
        uint xbase = nb * pc.u[15] + ci * pc.u[16], fbase = o * pc.u[23];
        float b0 = (pc.u[26] & 1u) != 0u ? bias[o] : 0.0;
        FOR_EACH(l, OH * blocks) {
            uint oy = l / blocks, ox0 = (l % blocks) * RN;
            int iy0 = int(oy * pc.u[9]) - int(pc.u[13]), ix0 = int(ox0 * pc.u[10]) - int(pc.u[14]);
            float acc[RN];
            [[unroll]] for (uint j = 0u; j < RN; j++) acc[j] = b0;
            for (uint ky = 0u; ky < KH; ky++) {
                int iy = iy0 + int(ky * pc.u[11]);
                if (iy < 0 || iy >= H) continue;
                uint row = xbase + uint(iy) * pc.u[17];
                uint frow = fbase + ky * pc.u[24];
                if (unit) {
                    float r[RN + KWMAX - 1];
                    [[unroll]] for (uint t = 0u; t < RN + KWMAX - 1u; t++) {
                        int ix = ix0 + int(t);
                        r[t] = t < RN + KW - 1u && ix >= 0 && ix < W ? x[row + uint(ix) * pc.u[18]] : 0.0;
                    }
                    [[unroll]] for (uint kx = 0u; kx < KWMAX; kx++) {
                        if (kx >= KW) break;
                        float w = f[frow + kx * pc.u[25]];
                        [[unroll]] for (uint j = 0u; j < RN; j++) acc[j] += w * r[j + kx];
                    }
                } else {
                    for (uint kx = 0u; kx < KW; kx++) {
                        float w = f[frow + kx * pc.u[25]];
                        [[unroll]] for (uint j = 0u; j < RN; j++) {
                            int ix = ix0 + int(j * pc.u[10] + kx * pc.u[12]);
                            if (ix >= 0 && ix < W) acc[j] += w * x[row + uint(ix) * pc.u[18]];
                        }
                    }
                }
            }
            uint yb = nb * pc.u[19] + o * pc.u[20] + oy * pc.u[21];
            [[unroll]] for (uint j = 0u; j < RN; j++)
                if (ox0 + j < OW) y[yb + (ox0 + j) * pc.u[22]] = acc[j];
        }
    }
}
