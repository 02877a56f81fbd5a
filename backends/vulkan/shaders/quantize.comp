#version 450
// quantizeLinear and dequantizeLinear with block-wise scales: element i of
// a dim reads scale and zero point block i / block[d]. The integer side is
// int8 or uint8 (four per word) or int32 or uint32, and when dequantizing
// int4 or uint4 (eight per word, low nibble first). Quantizing rounds half
// to even, saturates, and maps NaN to 0, like the cpu backend. Each
// invocation owns one word of the output, so packed bytes never race.
// pc: 0 n (elements), 1 quantize (1) or dequantize (0), 2 kind (0 int8,
//     1 uint8, 2 int32, 3 uint32, 4 int4, 5 uint4), 3 rank, 4..11 dims,
//     12..19 blocks,
//     20..27 scale strides.
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer S { float scale[]; };
layout(std430, binding = 2) readonly buffer Z { uint zp[]; };
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };

int int_at(uint kind, uint i, bool from_zp) {
    if (kind == 2u || kind == 3u) return int(from_zp ? zp[i] : x[i]);
    if (kind >= 4u) {
        uint n = ((from_zp ? zp[i >> 3u] : x[i >> 3u]) >> ((i & 7u) * 4u)) & 15u;
        return kind == 4u ? int(n << 28) >> 28 : int(n);
    }
    uint w = from_zp ? zp[i >> 2u] : x[i >> 2u];
    uint b = (w >> ((i & 3u) * 8u)) & 255u;
    return kind == 0u ? int(b << 24) >> 24 : int(b);
}

uint scale_index(uint e) {
    uint rest = e, s = 0u;
    for (int d = int(pc.u[3]) - 1; d >= 0; d--) {
        uint n = pc.u[4 + d], c = rest % n;
        rest /= n;
        s += c / pc.u[12 + d] * pc.u[20 + d];
    }
    return s;
}

// The saturated quantized value of element e, as the output's bits.
uint quantize_at(uint kind, uint e) {
    uint s = scale_index(e);
    float v = roundEven(uintBitsToFloat(x[e]) / scale[s]) + float(int_at(kind, s, true));
    if (isnan(v)) v = 0.0;
    if (kind == 0u) return uint(int(clamp(v, -128.0, 127.0))) & 255u;
    if (kind == 1u) return uint(clamp(v, 0.0, 255.0));
    if (kind == 2u) return v >= 2147483647.0 ? 0x7fffffffu : (v <= -2147483648.0 ? 0x80000000u : uint(int(v)));
    return v >= 4294967295.0 ? 0xffffffffu : (v <= 0.0 ? 0u : uint(v));
}

void main() {
    uint n = pc.u[0], kind = pc.u[2];
    if (pc.u[1] == 0u) {
        FOR_EACH(e, n) {
            uint s = scale_index(e);
            float q = float(int_at(kind, e, false) - int_at(kind, s, true));
            if (kind == 3u) q = float(x[e]) - float(zp[s]);
            y[e] = floatBitsToUint(q * scale[s]);
        }
    } else if (kind == 2u || kind == 3u) {
        FOR_EACH(e, n) y[e] = quantize_at(kind, e);
    } else {
        FOR_EACH(w, (n + 3u) / 4u) {
            uint word = 0u;
            for (uint j = 0u; j < 4u && w * 4u + j < n; j++) word |= quantize_at(kind, w * 4u + j) << (8u * j);
            y[w] = word;
        }
    }
}
