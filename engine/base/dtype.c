#include "dtype.h"

#include <stdint.h>
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
size_t berth_dtype_bytes(berth_dtype t, size_t count, int *ok) {
    size_t bits = berth_dtype_bits(t);
    if (!bits) {
        *ok = 0;
        return 0;
    }
    if (bits == 4) return count / 2 + (count & 1);
    if (count > SIZE_MAX / (bits / 8)) {
        *ok = 0;
        return 0;
    }
    return count * (bits / 8);
}
