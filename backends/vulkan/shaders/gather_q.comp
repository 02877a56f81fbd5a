#version 450
// berth.gatherQuantized: rows of a packed integer table [V, D]
// (packed.glsl) picked along axis 0 and dequantized as they are read:
// y[i, d] = (q[r, d] - zp[r, d / block]) * scale[r, d / block] with
// r = indices[i]. Indices are int32 or int64 (read as two words), a
// negative one counts from the end and one out of range is clamped, as
// in gather.comp. One invocation per output value.
// pc: 0 n (output values), 1 D, 2 index count, 3 V, 4 int64 indices,
//     5 block (values per scale), 6 G (scales per row), 7 zp given (else
//     every zero point is 0).
layout(local_size_x = 256) in;
#include "common.glsl"
#include "packed.glsl"
layout(std430, binding = 0) readonly buffer Q { uint q[]; };
layout(std430, binding = 1) readonly buffer I { int idx[]; };
layout(std430, binding = 2) readonly buffer S { float scale[]; };
layout(std430, binding = 3) readonly buffer Z { uint zp[]; };
layout(std430, binding = 4) writeonly buffer Y { float y[]; };

void main() {
    uint D = pc.u[1], block = pc.u[5], G = pc.u[6];
    int extent = int(pc.u[3]);
    FOR_EACH(e, pc.u[0]) {
        uint j = e / D, d = e - j * D;
        int v;
        if (pc.u[4] != 0u) {
            int hi = idx[2u * j + 1u];
            v = idx[2u * j];
            if (hi > 0 || (hi == 0 && v < 0)) v = extent;                  // a large positive value
            else if (hi < -1 || (hi == -1 && v >= 0)) v = -2 * extent - 1; // a large negative one
        } else {
            v = idx[j];
        }
        if (v < 0) v += extent;
        uint r = uint(clamp(v, 0, extent - 1));
        uint qe = r * D + d, ze = r * G + d / block;
        int x = packed_at(q[packed_word(qe)], qe) - (pc.u[7] != 0u ? packed_at(zp[packed_word(ze)], ze) : 0);
        y[e] = float(x) * scale[ze];
    }
}
