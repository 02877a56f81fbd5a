/* Dtype facts: names as WebNN spells them and element sizes. */
#include "bk.h"

size_t bk_dtype_size(berth_dtype t) {
    switch (t) {
    case BERTH_DTYPE_F32: case BERTH_DTYPE_I32: case BERTH_DTYPE_U32: return 4;
    case BERTH_DTYPE_F16: return 2;
    case BERTH_DTYPE_I64: case BERTH_DTYPE_U64: return 8;
    case BERTH_DTYPE_I8: case BERTH_DTYPE_U8: return 1;
    default: return 0;
    }
}

const char *bk_dtype_name(berth_dtype t) {
    static const char *const names[] = {"invalid", "float32", "float16", "int32", "uint32", "int64",
                                        "uint64",  "int8",    "uint8",   "int4",  "uint4"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "invalid";
}

size_t bk_dtype_bytes(berth_dtype t, size_t n, int *ok) {
    size_t es = bk_dtype_size(t);
    *ok = 1;
    if (es) return n * es;
    if (t == BERTH_DTYPE_I4 || t == BERTH_DTYPE_U4) return n / 2 + (n & 1);
    *ok = 0;
    return 0;
}
