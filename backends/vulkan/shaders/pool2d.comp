#version 450
// averagePool2d (padding never counted), maxPool2d and l2Pool2d, one
// output element per thread; layouts as strides.
// pc: 0 n (outputs), 1 channels, 2 oh, 3 ow, 4 H, 5 W, 6 kh, 7 kw, 8 sh, 9 sw,
//     10 dh, 11 dw, 12 pad top, 13 pad left, 14 kind (0 average, 1 max, 2 l2),
//     15..18 input strides (n, c, h, w), 19..22 output strides (n, c, h, w).
layout(local_size_x = 256) in;
#include "common.glsl"
#include "edge.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

void main() {
    uint C = pc.u[1], OH = pc.u[2], OW = pc.u[3], kind = pc.u[14];
    FOR_EACH(i, pc.u[0]) {
        uint ox = i % OW, oy = (i / OW) % OH, c = (i / (OW * OH)) % C, nb = i / (OW * OH * C);
        uint base = nb * pc.u[15] + c * pc.u[16];
        float mx = -1.0 / 0.0, sum = 0.0;
        uint cnt = 0u;
        for (uint ky = 0u; ky < pc.u[6]; ky++) {
            int iy = int(oy * pc.u[8] + ky * pc.u[10]) - int(pc.u[12]);
            if (iy < 0 || iy >= int(pc.u[4])) continue;
            for (uint kx = 0u; kx < pc.u[7]; kx++) {
                int ix = int(ox * pc.u[9] + kx * pc.u[11]) - int(pc.u[13]);
                if (ix < 0 || ix >= int(pc.u[5])) continue;
                float v = x[base + uint(iy) * pc.u[17] + uint(ix) * pc.u[18]];
                mx = edge_max(vec4(mx), vec4(v)).x; // a NaN in the window is the max
                sum += kind == 2u ? v * v : v;
                cnt++;
            }
        }
        float r = kind == 1u ? mx : (kind == 2u ? sqrt(sum) : (cnt > 0u ? sum / float(cnt) : 0.0));
        y[nb * pc.u[19] + c * pc.u[20] + oy * pc.u[21] + ox * pc.u[22]] = r;
    }
}
