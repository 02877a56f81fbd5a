#version 450
// Broadcasting comparisons into uint8 (0 or 1), four results packed per
// word so no 8-bit storage feature is needed. Inputs are read as words:
// float32, int32, uint32, 8-bit (four per word), float16 (two per word)
// or 64-bit (two words, little-endian).
// pc: 0 n, 1 op, 2 rank, 3 kind (0 f32, 1 i32, 2 u32, 3 u8, 4 i64, 5 u64,
//     6 i8, 7 f16), 4..11 dims, 12..19 a strides, 20..27 b strides.
layout(local_size_x = 256) in;
#include "common.glsl"
#include "half.glsl"
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };

// -1, 0 or 1 as x is below, equal to or above z, for the integer kinds.
int order_int(uint kind, uint ia, uint ib) {
    if (kind == 1u) {
        int x = int(a[ia]), z = int(b[ib]);
        return x < z ? -1 : (x > z ? 1 : 0);
    }
    if (kind == 2u) {
        uint x = a[ia], z = b[ib];
        return x < z ? -1 : (x > z ? 1 : 0);
    }
    if (kind == 3u || kind == 6u) {
        uint x = (a[ia >> 2u] >> ((ia & 3u) * 8u)) & 255u, z = (b[ib >> 2u] >> ((ib & 3u) * 8u)) & 255u;
        if (kind == 6u) { // int8: flip the sign bit, so unsigned order is signed order
            x ^= 128u;
            z ^= 128u;
        }
        return x < z ? -1 : (x > z ? 1 : 0);
    }
    uint xh = a[2u * ia + 1u], zh = b[2u * ib + 1u];
    if (kind == 4u) { // int64: the high words compare signed
        xh ^= 0x80000000u;
        zh ^= 0x80000000u;
    }
    if (xh != zh) return xh < zh ? -1 : 1;
    uint xl = a[2u * ia], zl = b[2u * ib];
    return xl < zl ? -1 : (xl > zl ? 1 : 0);
}

bool compare_at(uint op, uint kind, uint ia, uint ib) {
    if (kind == 0u || kind == 7u) {
        // Floats keep IEEE rules: NaN is unequal to everything and unordered.
        float x = kind == 0u ? uintBitsToFloat(a[ia]) : half_to_float((a[ia >> 1u] >> ((ia & 1u) * 16u)) & 0xffffu);
        float z = kind == 0u ? uintBitsToFloat(b[ib]) : half_to_float((b[ib >> 1u] >> ((ib & 1u) * 16u)) & 0xffffu);
        switch (op) {
        case 0: return x == z;
        case 1: return x > z;
        case 2: return x >= z;
        case 3: return x < z;
        case 4: return x <= z;
        default: return x != z;
        }
    }
    int o = order_int(kind, ia, ib);
    switch (op) {
    case 0: return o == 0;
    case 1: return o > 0;
    case 2: return o >= 0;
    case 3: return o < 0;
    case 4: return o <= 0;
    default: return o != 0;
    }
}

void main() {
    uint n = pc.u[0], op = pc.u[1], rank = pc.u[2], kind = pc.u[3];
    FOR_EACH(w, (n + 3u) / 4u) {
        uint word = 0u;
        for (uint j = 0u; j < 4u; j++) {
            uint i = w * 4u + j;
            if (i >= n) break;
            bool r = compare_at(op, kind, strided_offset(i, rank, 4, 12), strided_offset(i, rank, 4, 20));
            word |= (r ? 1u : 0u) << (8u * j);
        }
        y[w] = word;
    }
}
