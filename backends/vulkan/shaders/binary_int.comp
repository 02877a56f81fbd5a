#version 450
// Broadcasting integer add, sub, mul, div, max and min with the cpu
// backend's rules: arithmetic wraps (two's complement), division truncates
// and division by zero gives 0. int64 is a pair of 32-bit words (low
// first), added with carries, so no 64-bit shader feature is needed; it
// has no div.
// pc: 0 n, 1 op (0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min), 2 rank,
//     3 kind (1 int32, 4 int64), 4..11 dims, 12..19 a strides, 20..27 b strides.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };

int op32(uint op, int x, int z) {
    switch (op) {
    case 0: return int(uint(x) + uint(z));
    case 1: return int(uint(x) - uint(z));
    case 2: return int(uint(x) * uint(z));
    case 3: return z == 0 ? 0 : (z == -1 ? int(0u - uint(x)) : x / z);
    case 4: return max(x, z);
    default: return min(x, z);
    }
}

// x < z for int64 words (lo, hi).
bool less64(uvec2 x, uvec2 z) {
    return int(x.y) < int(z.y) || (x.y == z.y && x.x < z.x);
}

uvec2 op64(uint op, uvec2 x, uvec2 z) {
    uvec2 r;
    uint carry;
    switch (op) {
    case 0:
        r.x = uaddCarry(x.x, z.x, carry);
        r.y = x.y + z.y + carry;
        return r;
    case 1:
        r.x = usubBorrow(x.x, z.x, carry);
        r.y = x.y - z.y - carry;
        return r;
    case 2:
        umulExtended(x.x, z.x, r.y, r.x);
        r.y += x.y * z.x + x.x * z.y;
        return r;
    case 4: return less64(x, z) ? z : x;
    default: return less64(x, z) ? x : z;
    }
}

void main() {
    uint op = pc.u[1], rank = pc.u[2], kind = pc.u[3];
    FOR_EACH(i, pc.u[0]) {
        uint ia = strided_offset(i, rank, 4, 12), ib = strided_offset(i, rank, 4, 20);
        if (kind == 4u) {
            uvec2 r = op64(op, uvec2(a[2u * ia], a[2u * ia + 1u]), uvec2(b[2u * ib], b[2u * ib + 1u]));
            y[2u * i] = r.x;
            y[2u * i + 1u] = r.y;
        } else {
            y[i] = uint(op32(op, int(a[ia]), int(b[ib])));
        }
    }
}
