#version 450
// Depthwise conv2d: every group reads one input channel, so an output
// element is a short dot product over the kernel window only. One
// invocation per output element; x and y walk a plane, z walks (image,
// output channel), so every filter and bias read is the same for the
// whole workgroup and no index is divided inside the window loop.
// pc: 0 planes (n * O), 1 O, 2 multiplier (outputs per input channel),
//     3 oh, 4 ow, 5 H, 6 W, 7 kh, 8 kw, 9 sh, 10 sw, 11 dh, 12 dw,
//     13 pad top, 14 pad left, 15..18 input strides (n, c, h, w),
//     19..22 output strides (n, c, h, w), 23..25 filter strides
//     (output channel, h, w), 26 flags (1 bias).
layout(local_size_x = 16, local_size_y = 4) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer F { float f[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };

void main() {
    uint O = pc.u[1], OH = pc.u[3], OW = pc.u[4], KH = pc.u[7], KW = pc.u[8];
    int H = int(pc.u[5]), W = int(pc.u[6]);
    for (uint z = gl_WorkGroupID.z; z < pc.u[0]; z += gl_NumWorkGroups.z) {
        uint nb = z / O, o = z % O, ci = o / pc.u[2];
        uint xbase = nb * pc.u[15] + ci * pc.u[16], fbase = o * pc.u[23];
        float b0 = (pc.u[26] & 1u) != 0u ? bias[o] : 0.0;
        for (uint oy = gl_GlobalInvocationID.y; oy < OH; oy += gl_NumWorkGroups.y * gl_WorkGroupSize.y) {
            for (uint ox = gl_GlobalInvocationID.x; ox < OW; ox += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
                int iy0 = int(oy * pc.u[9]) - int(pc.u[13]), ix0 = int(ox * pc.u[10]) - int(pc.u[14]);
                float acc = b0;
                for (uint ky = 0u; ky < KH; ky++) {
                    int iy = iy0 + int(ky * pc.u[11]);
                    if (iy < 0 || iy >= H) continue;
                    uint row = xbase + uint(iy) * pc.u[17];
                    for (uint kx = 0u; kx < KW; kx++) {
                        int ix = ix0 + int(kx * pc.u[12]);
                        if (ix < 0 || ix >= W) continue;
                        acc += x[row + uint(ix) * pc.u[18]] * f[fbase + ky * pc.u[24] + kx * pc.u[25]];
                    }
                }
                y[nb * pc.u[19] + o * pc.u[20] + oy * pc.u[21] + ox * pc.u[22]] = acc;
            }
        }
    }
}
