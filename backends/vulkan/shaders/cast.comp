#version 450
// cast between float32, int32, uint32, int64, uint64, uint8 and int8, and
// between float32 and float16, with no 8-, 16- or 64-bit shader types:
// 64-bit integers travel as (low, high) words, bytes are packed four per word, halves two
// per word, and each thread owns whole output words. Float to integer
// saturates (NaN gives 0); integer narrowing wraps; float16 rounds to
// nearest even, by hand, so every device gives the cpu backend's bits.
// pc: 0 n (elements), 1 source dtype, 2 target dtype (berth_dtype codes), 3 units.
layout(local_size_x = 256) in;
#include "common.glsl"
#include "half.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };

#define F32 1u
#define F16 2u
#define I32 3u
#define U32 4u
#define I64 5u
#define U64 6u
#define I8 7u
#define U8 8u

bool is_float(uint t) { return t == F32; }

// Integer source element i as (low, high) words of an int64.
uvec2 read_int(uint t, uint i) {
    if (t == I64 || t == U64) return uvec2(x[2u * i], x[2u * i + 1u]);
    if (t == I32) return uvec2(x[i], int(x[i]) < 0 ? 0xffffffffu : 0u);
    if (t == U32) return uvec2(x[i], 0u);
    uint b = (x[i >> 2u] >> ((i & 3u) * 8u)) & 255u;
    if (t == I8 && b >= 128u) return uvec2(b | 0xffffff00u, 0xffffffffu);
    return uvec2(b, 0u);
}

float int_to_float(uvec2 v, bool is_unsigned) {
    if (is_unsigned) return float(v.y) * 4294967296.0 + float(v.x);
    bool neg = int(v.y) < 0;
    if (v.y == (int(v.x) < 0 ? 0xffffffffu : 0u)) return float(int(v.x)); // fits int32
    if (neg) { // magnitude by two's complement negation, so nothing cancels
        v = uvec2(~v.x + 1u, ~v.y + (v.x == 0u ? 1u : 0u));
    }
    float m = float(v.y) * 4294967296.0 + float(v.x);
    return neg ? -m : m;
}

// Float to the target's range, saturated, as (low, high) words.
uvec2 float_to_int(float f, uint t) {
    if (isnan(f)) return uvec2(0u);
    f = trunc(f);
    if (t == U8) return uvec2(uint(clamp(f, 0.0, 255.0)), 0u);
    if (t == I8) return uvec2(uint(int(clamp(f, -128.0, 127.0))), 0u);
    if (t == U32) return uvec2(f >= 4294967295.0 ? 0xffffffffu : uint(max(f, 0.0)), 0u);
    if (t == I32) {
        if (f >= 2147483647.0) return uvec2(0x7fffffffu, 0u);
        if (f <= -2147483648.0) return uvec2(0x80000000u, 0xffffffffu);
        int v = int(f);
        return uvec2(uint(v), v < 0 ? 0xffffffffu : 0u);
    }
    if (t == U64) {
        if (f <= 0.0) return uvec2(0u);
        if (f >= 18446744073709551616.0) return uvec2(0xffffffffu);
        float hi = floor(f / 4294967296.0);
        return uvec2(uint(f - hi * 4294967296.0), uint(hi));
    }
    // int64: small values directly, since f + 2^32 would round for them
    if (abs(f) < 2147483648.0) {
        int v = int(f);
        return uvec2(uint(v), v < 0 ? 0xffffffffu : 0u);
    }
    if (f >= 9223372036854775808.0) return uvec2(0xffffffffu, 0x7fffffffu);
    if (f <= -9223372036854775808.0) return uvec2(0u, 0x80000000u);
    float hi = floor(f / 4294967296.0);
    return uvec2(uint(f - hi * 4294967296.0), uint(int(hi)));
}

uvec2 convert(uint i, uint from, uint to) {
    if (from == F16) return uvec2(floatBitsToUint(half_to_float((x[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu)), 0u);
    if (to == F16) return uvec2(float_to_half(uintBitsToFloat(x[i])), 0u);
    if (is_float(from)) {
        float f = uintBitsToFloat(x[i]);
        return to == F32 ? uvec2(x[i], 0u) : float_to_int(f, to);
    }
    uvec2 v = read_int(from, i);
    return to == F32 ? uvec2(floatBitsToUint(int_to_float(v, from == U64)), 0u) : v;
}

void main() {
    uint n = pc.u[0], from = pc.u[1], to = pc.u[2];
    FOR_EACH(u, pc.u[3]) {
        if (to == F16) {
            uint word = convert(2u * u, from, to).x;
            if (2u * u + 1u < n) word |= convert(2u * u + 1u, from, to).x << 16;
            y[u] = word;
        } else if (to == U8 || to == I8) {
            uint word = 0u;
            for (uint j = 0u; j < 4u && 4u * u + j < n; j++) word |= (convert(4u * u + j, from, to).x & 255u) << (8u * j);
            y[u] = word;
        } else if (to == I64 || to == U64) {
            uvec2 v = convert(u, from, to);
            y[2u * u] = v.x;
            y[2u * u + 1u] = v.y;
        } else {
            y[u] = convert(u, from, to).x;
        }
    }
}
