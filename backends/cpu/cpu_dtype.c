/* Elements of every numeric dtype the cpu backend stores, read and
 * written through one value type, with cast's rules: float to integer
 * saturates (NaN becomes 0), integer to integer wraps (two's complement
 * narrowing), float16 rounds to nearest even. */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

/* IEEE half precision by hand (no compiler type is portable C11):
 * round to nearest even, overflow to infinity, subnormals kept. */
float cpu_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, f;
    if (exp == 0 && man == 0)
        f = sign;
    else if (exp == 0) { /* subnormal: normalize */
        exp = 127 - 15 + 1;
        while (!(man & 0x400u)) man <<= 1, exp--;
        f = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    } else if (exp == 31)
        f = sign | 0x7f800000u | (man << 13);
    else
        f = sign | ((exp + 112) << 23) | (man << 13);
    float out;
    memcpy(&out, &f, sizeof out);
    return out;
}

uint16_t cpu_float_to_half(float v) {
    uint32_t f;
    memcpy(&f, &v, sizeof f);
    uint32_t sign = (f >> 16) & 0x8000u, man = f & 0x7fffffu;
    int32_t fexp = (int32_t)((f >> 23) & 0xffu), exp = fexp - 127 + 15;
    if (fexp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0u));
    if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
    uint32_t half, rem, mid;
    if (exp <= 0) {
        if (exp < -10) return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        half = man >> shift;
        rem = man & ((1u << shift) - 1);
        mid = 1u << (shift - 1);
    } else {
        half = ((uint32_t)exp << 10) | (man >> 13);
        rem = man & 0x1fffu;
        mid = 0x1000u;
    }
    if (rem > mid || (rem == mid && (half & 1u))) half++; /* a carry rolls into the exponent, as it should */
    return (uint16_t)(sign | half);
}

cpu_elem cpu_elem_get(const void *x, berth_dtype t, size_t i) {
    cpu_elem e = {0, 0, 0};
    switch (t) {
    case BERTH_DTYPE_F32: e.f = ((const float *)x)[i]; e.is_float = 1; break;
    case BERTH_DTYPE_F16: e.f = cpu_half_to_float(((const uint16_t *)x)[i]); e.is_float = 1; break;
    case BERTH_DTYPE_I8: e.i = ((const int8_t *)x)[i]; break;
    case BERTH_DTYPE_U8: e.i = ((const uint8_t *)x)[i]; break;
    case BERTH_DTYPE_I32: e.i = ((const int32_t *)x)[i]; break;
    case BERTH_DTYPE_U32: e.i = ((const uint32_t *)x)[i]; break;
    case BERTH_DTYPE_I64: e.i = (uint64_t)((const int64_t *)x)[i]; break;
    case BERTH_DTYPE_U64: e.i = ((const uint64_t *)x)[i]; break;
    default: break;
    }
    /* The integer's value as a double, for integer-to-float casts. */
    if (!e.is_float) e.f = t == BERTH_DTYPE_I64 || t == BERTH_DTYPE_I32 || t == BERTH_DTYPE_I8
                               ? (double)(int64_t)e.i : (double)e.i;
    return e;
}

/* A float truncated toward zero and saturated to [lo, top): lo and top
 * are the type's range as exact powers of two (top excluded), max the
 * type's largest value as bits. */
static uint64_t sat(double v, double lo, double top, uint64_t max, int is_signed) {
    if (v != v) return 0;
    if (v >= top) return max;
    if (v <= lo) return is_signed ? (uint64_t)(int64_t)lo : 0;
    return is_signed ? (uint64_t)(int64_t)v : (uint64_t)v;
}

void cpu_elem_put(void *y, berth_dtype t, size_t i, cpu_elem e) {
    uint64_t u = e.i;
    if (t == BERTH_DTYPE_F32) {
        ((float *)y)[i] = (float)e.f;
        return;
    }
    if (t == BERTH_DTYPE_F16) {
        ((uint16_t *)y)[i] = cpu_float_to_half((float)e.f);
        return;
    }
    if (e.is_float) switch (t) {
        case BERTH_DTYPE_I8: u = sat(e.f, -0x1p7, 0x1p7, INT8_MAX, 1); break;
        case BERTH_DTYPE_U8: u = sat(e.f, 0.0, 0x1p8, UINT8_MAX, 0); break;
        case BERTH_DTYPE_I32: u = sat(e.f, -0x1p31, 0x1p31, INT32_MAX, 1); break;
        case BERTH_DTYPE_U32: u = sat(e.f, 0.0, 0x1p32, UINT32_MAX, 0); break;
        case BERTH_DTYPE_I64: u = sat(e.f, -0x1p63, 0x1p63, INT64_MAX, 1); break;
        case BERTH_DTYPE_U64: u = sat(e.f, 0.0, 0x1p64, UINT64_MAX, 0); break;
        default: break;
        }
    switch (t) {
    case BERTH_DTYPE_I8: ((int8_t *)y)[i] = (int8_t)(uint8_t)u; break;
    case BERTH_DTYPE_U8: ((uint8_t *)y)[i] = (uint8_t)u; break;
    case BERTH_DTYPE_I32: ((int32_t *)y)[i] = (int32_t)(uint32_t)u; break;
    case BERTH_DTYPE_U32: ((uint32_t *)y)[i] = (uint32_t)u; break;
    case BERTH_DTYPE_I64: ((int64_t *)y)[i] = (int64_t)u; break;
    case BERTH_DTYPE_U64: ((uint64_t *)y)[i] = u; break;
    default: break;
    }
}
