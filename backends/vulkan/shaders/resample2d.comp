#version 450
// resample2d over two axes of a tensor viewed as [outer, h, mid, w, inner]:
// nearest-neighbor maps dst to floor(dst / scale); linear uses half-pixel
// centres, clamped to the edge.
// pc: 0 n (outputs), 1 h, 2 w, 3 oh, 4 ow, 5 mid, 6 inner, 7 scale h, 8 scale w, 9 linear.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

float src_coord(uint dst, float scale, uint extent, bool linear) {
    float s = linear ? (float(dst) + 0.5) / scale - 0.5 : floor(float(dst) / scale);
    return clamp(s, 0.0, float(extent - 1u));
}

void main() {
    uint H = pc.u[1], W = pc.u[2], OH = pc.u[3], OW = pc.u[4], MID = pc.u[5], IN = pc.u[6];
    bool linear = pc.u[9] != 0u;
    FOR_EACH(i, pc.u[0]) {
        uint e = i % IN, ox = (i / IN) % OW, m = (i / (IN * OW)) % MID, oy = (i / (IN * OW * MID)) % OH;
        uint o = i / (IN * OW * MID * OH);
        float fy = src_coord(oy, PCF(7), H, linear), fx = src_coord(ox, PCF(8), W, linear);
        uint y0 = uint(fy), x0 = uint(fx);
        uint y1 = min(y0 + 1u, H - 1u), x1 = min(x0 + 1u, W - 1u);
        #define AT(yy, xx) x[(((o * H + (yy)) * MID + m) * W + (xx)) * IN + e]
        if (!linear) {
            y[i] = AT(y0, x0);
        } else {
            float dy = fy - float(y0), dx = fx - float(x0);
            y[i] = (1.0 - dy) * ((1.0 - dx) * AT(y0, x0) + dx * AT(y0, x1)) +
                   dy * ((1.0 - dx) * AT(y1, x0) + dx * AT(y1, x1));
        }
    }
}
