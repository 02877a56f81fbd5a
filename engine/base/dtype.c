#include "dtype.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const struct {
    berth_dtype t;
    const char *name;  /* .webnn spelling */
    const char *webnn; /* WebNN MLOperandDataType spelling */
    size_t bits;
} dtypes[] = {
    {BERTH_DTYPE_F32, "f32", "float32", 32}, {BERTH_DTYPE_F16, "f16", "float16", 16},
    {BERTH_DTYPE_I32, "i32", "int32", 32},   {BERTH_DTYPE_U32, "u32", "uint32", 32},
    {BERTH_DTYPE_I64, "i64", "int64", 64},   {BERTH_DTYPE_U64, "u64", "uint64", 64},
    {BERTH_DTYPE_I8, "i8", "int8", 8},       {BERTH_DTYPE_U8, "u8", "uint8", 8},
    {BERTH_DTYPE_I4, "i4", "int4", 4},       {BERTH_DTYPE_U4, "u4", "uint4", 4},
};

const char *berth_dtype_name(berth_dtype t) {
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].t == t) return dtypes[i].name;
    return "?";
}

berth_dtype berth_dtype_parse(const char *s) {
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (!strcmp(s, dtypes[i].name) || !strcmp(s, dtypes[i].webnn)) return dtypes[i].t;
    return BERTH_DTYPE_INVALID;
}

size_t berth_dtype_bits(berth_dtype t) {
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].t == t) return dtypes[i].bits;
    return 0;
}

/* *ok is only ever cleared: callers chain it through berth_mul_checked
 * over the dims first, and an overflow there must not be forgotten here
 * (a shape of 2^32 x 2^32 would otherwise read as a 0-byte tensor). */
uint64_t berth_dtype_bytes64(berth_dtype t, uint64_t count, int *ok) {
    uint64_t bits = berth_dtype_bits(t);
    if (!bits) {
        *ok = 0;
        return 0;
    }
    if (bits == 4) return count / 2 + (count & 1);
    if (count > UINT64_MAX / (bits / 8)) {
        *ok = 0;
        return 0;
    }
    return count * (bits / 8);
}

size_t berth_dtype_bytes(berth_dtype t, uint64_t count, int *ok) {
    int fits = 1;
    uint64_t bytes = berth_dtype_bytes64(t, count, &fits);
    if (!fits || bytes > (uint64_t)SIZE_MAX) {
        *ok = 0;
        return 0;
    }
    return (size_t)bytes;
}

uint16_t berth_f16_from_f32(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

float berth_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    float f;
    if (exp == 0) {
        f = (float)man * (1.0f / 16777216.0f); /* zero or subnormal: man * 2^-24, exact */
        return sign ? -f : f;
    }
    uint32_t x = sign | (exp == 31 ? 0x7f800000u | (man << 13) : ((exp + 112) << 23) | (man << 13));
    memcpy(&f, &x, 4);
    return f;
}

void berth_shape_text(char *buf, size_t cap, berth_dtype t, uint32_t rank, const int64_t *dims) {
    size_t o = (size_t)snprintf(buf, cap, "%s[", berth_dtype_name(t));
    for (uint32_t d = 0; d < rank && o < cap; d++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", d ? ", " : "", (long long)dims[d]);
    if (o < cap) snprintf(buf + o, cap - o, "]");
}
