#version 450
// Broadcasting add, sub, mul, div, max, min and pow on the integer dtypes
// and float16, with the cpu backend's rules: integer arithmetic wraps
// (two's complement), division truncates, division by zero gives 0, MIN /
// -1 wraps to MIN, a negative integer exponent gives 0 but for bases 1
// and -1; float16 is computed in float32 and rounded back. No 8-, 16- or
// 64-bit shader feature is needed: 64-bit values are pairs of 32-bit
// words (low first), 8-bit ones four to a word, float16 two to a word,
// and an invocation writes whole words.
// clamp (op 7) reads a alone, between bounds in push constants.
// pc: 0 n, 1 op (0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min, 6 pow, 7 clamp),
//     2 rank, 3 kind (1 int32, 2 uint32, 4 int64, 5 uint64, 6 int8,
//     7 uint8, 8 float16), 4..11 dims, 12..19 a strides, 20..27 b strides,
//     28..29 clamp's lower bound, 30..31 its upper bound (low word first;
//     float32 bits for float16).
layout(local_size_x = 256) in;
#include "common.glsl"
#include "half.glsl"
#include "edge.glsl"
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };

uint ipow32(uint x, uint e) {
    uint r = 1u;
    for (; e != 0u; e >>= 1u, x *= x)
        if ((e & 1u) != 0u) r *= x;
    return r;
}

// 32-bit results as words; sign: the operands are signed.
uint op32(uint op, uint x, uint z, bool sign) {
    switch (op) {
    case 0: return x + z;
    case 1: return x - z;
    case 2: return x * z;
    case 3:
        if (z == 0u) return 0u;
        if (!sign) return x / z;
        if (int(z) == -1) return 0u - x;
        return uint(int(x) / int(z));
    case 4: return sign ? uint(max(int(x), int(z))) : max(x, z);
    case 5: return sign ? uint(min(int(x), int(z))) : min(x, z);
    case 7:
        return sign ? uint(clamp(int(x), int(pc.u[28]), int(pc.u[30]))) : clamp(x, pc.u[28], pc.u[30]);
    default:
        if (sign && int(z) < 0) return int(x) == 1 ? 1u : (int(x) == -1 ? ((z & 1u) != 0u ? 0xffffffffu : 1u) : 0u);
        return ipow32(x, z);
    }
}

bool less64(uvec2 x, uvec2 z, bool sign) {
    bool hi_less = sign ? int(x.y) < int(z.y) : x.y < z.y;
    return hi_less || (x.y == z.y && x.x < z.x);
}

uvec2 add64(uvec2 x, uvec2 z) {
    uint carry;
    uvec2 r;
    r.x = uaddCarry(x.x, z.x, carry);
    r.y = x.y + z.y + carry;
    return r;
}

uvec2 sub64(uvec2 x, uvec2 z) {
    uint borrow;
    uvec2 r;
    r.x = usubBorrow(x.x, z.x, borrow);
    r.y = x.y - z.y - borrow;
    return r;
}

uvec2 mul64(uvec2 x, uvec2 z) {
    uvec2 r;
    umulExtended(x.x, z.x, r.y, r.x);
    r.y += x.y * z.x + x.x * z.y;
    return r;
}

uvec2 neg64(uvec2 x) { return sub64(uvec2(0u), x); }

// Unsigned 64-bit division by shift and subtract; z != 0.
uvec2 udiv64(uvec2 x, uvec2 z) {
    uvec2 q = uvec2(0u), r = uvec2(0u);
    for (int k = 63; k >= 0; k--) {
        r = uvec2(r.x << 1u, (r.y << 1u) | (r.x >> 31u));
        uint bit = k >= 32 ? (x.y >> uint(k - 32)) & 1u : (x.x >> uint(k)) & 1u;
        r.x |= bit;
        if (!less64(r, z, false)) {
            r = sub64(r, z);
            if (k >= 32) q.y |= 1u << uint(k - 32);
            else q.x |= 1u << uint(k);
        }
    }
    return q;
}

uvec2 op64(uint op, uvec2 x, uvec2 z, bool sign) {
    switch (op) {
    case 0: return add64(x, z);
    case 1: return sub64(x, z);
    case 2: return mul64(x, z);
    case 3: {
        if (z == uvec2(0u)) return uvec2(0u);
        if (!sign) return udiv64(x, z);
        bool nx = int(x.y) < 0, nz = int(z.y) < 0;
        uvec2 q = udiv64(nx ? neg64(x) : x, nz ? neg64(z) : z);
        return nx != nz ? neg64(q) : q;
    }
    case 4: return less64(x, z, sign) ? z : x;
    case 5: return less64(x, z, sign) ? x : z;
    case 7: {
        uvec2 lo = uvec2(pc.u[28], pc.u[29]), hi = uvec2(pc.u[30], pc.u[31]);
        return less64(x, lo, sign) ? lo : (less64(hi, x, sign) ? hi : x);
    }
    default: {
        if (sign && int(z.y) < 0) {
            if (x == uvec2(1u, 0u)) return x;
            if (x == uvec2(0xffffffffu)) return (z.x & 1u) != 0u ? x : uvec2(1u, 0u);
            return uvec2(0u);
        }
        uvec2 r = uvec2(1u, 0u);
        for (int k = 0; k < 64; k++) {
            uint bit = k >= 32 ? (z.y >> uint(k - 32)) & 1u : (z.x >> uint(k)) & 1u;
            if (bit != 0u) r = mul64(r, x);
            x = mul64(x, x);
        }
        return r;
    }
    }
}

float opf(uint op, float x, float z) {
    switch (op) {
    case 0: return x + z;
    case 1: return x - z;
    case 2: return x * z;
    case 3: return edge_div(vec4(x), vec4(z)).x;
    case 4: return edge_max(vec4(x), vec4(z)).x;
    case 5: return edge_min(vec4(x), vec4(z)).x;
    case 7: { // NaN passes through
        float lo = uintBitsToFloat(pc.u[28]), hi = uintBitsToFloat(pc.u[30]);
        return x < lo ? lo : (x > hi ? hi : x);
    }
    default: return edge_pow(vec4(x), vec4(z)).x;
    }
}

// Element e of a packed-narrow operand: 8-bit (sign-extended for int8)
// or float16 bits.
uint byte_at(uint w, uint e, bool sign) {
    uint v = (w >> ((e & 3u) * 8u)) & 255u;
    return sign && v >= 128u ? v | 0xffffff00u : v;
}

void main() {
    uint n = pc.u[0], op = pc.u[1], rank = pc.u[2], kind = pc.u[3];
    bool sign = kind == 1u || kind == 4u || kind == 6u;
    if (kind == 6u || kind == 7u) {
        FOR_EACH(w, (n + 3u) / 4u) {
            uint word = 0u;
            for (uint j = 0u; j < 4u && w * 4u + j < n; j++) {
                uint i = w * 4u + j;
                uint ia = strided_offset(i, rank, 4, 12), ib = strided_offset(i, rank, 4, 20);
                uint r = op32(op, byte_at(a[ia >> 2u], ia, sign), byte_at(b[ib >> 2u], ib, sign), sign);
                word |= (r & 255u) << (8u * j);
            }
            y[w] = word;
        }
    } else if (kind == 8u) {
        FOR_EACH(w, (n + 1u) / 2u) {
            vec2 r = vec2(0.0);
            for (uint j = 0u; j < 2u && w * 2u + j < n; j++) {
                uint i = w * 2u + j;
                uint ia = strided_offset(i, rank, 4, 12), ib = strided_offset(i, rank, 4, 20);
                float x = half_to_float((a[ia >> 1u] >> ((ia & 1u) * 16u)) & 0xffffu);
                float z = half_to_float((b[ib >> 1u] >> ((ib & 1u) * 16u)) & 0xffffu);
                r[j] = opf(op, x, z);
            }
            y[w] = float_to_half(r.x) | (float_to_half(r.y) << 16u);
        }
    } else if (kind == 4u || kind == 5u) {
        FOR_EACH(i, n) {
            uint ia = strided_offset(i, rank, 4, 12), ib = strided_offset(i, rank, 4, 20);
            uvec2 r = op64(op, uvec2(a[2u * ia], a[2u * ia + 1u]), uvec2(b[2u * ib], b[2u * ib + 1u]), sign);
            y[2u * i] = r.x;
            y[2u * i + 1u] = r.y;
        }
    } else {
        FOR_EACH(i, n) {
            y[i] = op32(op, a[strided_offset(i, rank, 4, 12)], b[strided_offset(i, rank, 4, 20)], sign);
        }
    }
}
