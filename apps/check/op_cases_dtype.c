/* Op cases on the dtypes other than float32 and int32: 8-bit and 64-bit
 * integer arithmetic with its wrap-around, division by zero and MIN / -1,
 * unsigned values above the signed range, integer powers, float16
 * (outputs compared as bits), integer clamp bounds and integer pads. A
 * backend that keeps to float32 answers unsupported, which berth check
 * reports as such. */
#include <math.h>
#include <stdint.h>

#include "op_cases_build.h"

#define U32 BERTH_DTYPE_U32
#define U64 BERTH_DTYPE_U64
#define F16 BERTH_DTYPE_F16

void c_add_u8_wraps(oc_case *c, const char *op) {
    static const uint8_t a[3] = {250, 3, 255}, b[3] = {10, 4, 1};
    static const int64_t want[3] = {4, 7, 0};
    uint32_t x = in(c, "a", U8, 1, DIMS(3), a), y = in(c, "b", U8, 1, DIMS(3), b);
    node(c, op, 2, IDX(x, y), 1, IDX(out_i(c, "y", U8, 1, DIMS(3), want)), 0, NULL);
}

void c_div_i8_edges(oc_case *c, const char *op) {
    /* truncation toward zero, x / 0 = 0, -128 / -1 wraps to -128 */
    static const int8_t a[4] = {-7, 7, 5, -128}, b[4] = {2, -2, 0, -1};
    static const int64_t want[4] = {-3, -3, 0, -128};
    uint32_t x = in(c, "a", I8, 1, DIMS(4), a), y = in(c, "b", I8, 1, DIMS(4), b);
    node(c, op, 2, IDX(x, y), 1, IDX(out_i(c, "y", I8, 1, DIMS(4), want)), 0, NULL);
}

void c_max_u64_high(oc_case *c, const char *op) {
    /* values of 2^63 and above order as unsigned (want: their bits) */
    static const uint64_t a[2] = {(1ull << 63) + 1, 5}, b[2] = {3, UINT64_MAX};
    static const int64_t want[2] = {INT64_MIN + 1, -1};
    uint32_t x = in(c, "a", U64, 1, DIMS(2), a), y = in(c, "b", U64, 1, DIMS(2), b);
    node(c, op, 2, IDX(x, y), 1, IDX(out_i(c, "y", U64, 1, DIMS(2), want)), 0, NULL);
}

void c_min_u32(oc_case *c, const char *op) {
    static const uint32_t a[2] = {4000000000u, 1}, b[2] = {5, 2};
    static const int64_t want[2] = {5, 1};
    uint32_t x = in(c, "a", U32, 1, DIMS(2), a), y = in(c, "b", U32, 1, DIMS(2), b);
    node(c, op, 2, IDX(x, y), 1, IDX(out_i(c, "y", U32, 1, DIMS(2), want)), 0, NULL);
}

void c_pow_i32(oc_case *c, const char *op) {
    /* a negative exponent: 0, but for bases 1 and -1 */
    static const int32_t a[6] = {2, 3, -2, 1, -1, 5}, b[6] = {10, 3, 3, -2, -3, -1};
    static const int64_t want[6] = {1024, 27, -8, 1, -1, 0};
    uint32_t x = in(c, "a", I32, 1, DIMS(6), a), y = in(c, "b", I32, 1, DIMS(6), b);
    node(c, op, 2, IDX(x, y), 1, IDX(out_i(c, "y", I32, 1, DIMS(6), want)), 0, NULL);
}

void c_sub_f16(oc_case *c, const char *op) {
    /* 1.5 - 0.25 = 1.25; 65504 - -65504 overflows to infinity; 1 - 1 = +0 */
    static const uint16_t a[3] = {0x3e00, 0x7bff, 0x3c00}, b[3] = {0x3400, 0xfbff, 0x3c00};
    static const int64_t want[3] = {0x3d00, 0x7c00, 0x0000};
    uint32_t x = in(c, "a", F16, 1, DIMS(3), a), y = in(c, "b", F16, 1, DIMS(3), b);
    node(c, op, 2, IDX(x, y), 1, IDX(out_i(c, "y", F16, 1, DIMS(3), want)), 0, NULL);
}

void c_clamp_i8(oc_case *c, const char *op) {
    /* float bounds rounded inward: x >= -2.5 is x >= -2 */
    static const int8_t a[6] = {-100, -3, 0, 2, 3, 100};
    static const int64_t want[6] = {-2, -2, 0, 2, 2, 2};
    uint32_t x = in(c, "x", I8, 1, DIMS(6), a);
    node(c, op, 1, IDX(x), 1, IDX(out_i(c, "y", I8, 1, DIMS(6), want)),
         ATTRS(A_FLOAT("minValue", -2.5), A_FLOAT("maxValue", 2.5)));
}

void c_pad_i64_reflection(oc_case *c, const char *op) {
    static const int64_t a[3] = {INT64_MIN, 2, INT64_MAX};
    static const int64_t want[6] = {INT64_MAX, 2, INT64_MIN, 2, INT64_MAX, 2};
    uint32_t x = in(c, "x", I64, 1, DIMS(3), a);
    node(c, op, 1, IDX(x), 1, IDX(out_i(c, "y", I64, 1, DIMS(6), want)),
         ATTRS(A_INTS("beginningPadding", 1, 2), A_INTS("endingPadding", 1, 1), A_STR("mode", "reflection")));
}

void c_pad_u8_constant(oc_case *c, const char *op) {
    static const uint8_t a[2] = {1, 255};
    static const int64_t want[4] = {7, 1, 255, 7};
    uint32_t x = in(c, "x", U8, 1, DIMS(2), a);
    node(c, op, 1, IDX(x), 1, IDX(out_i(c, "y", U8, 1, DIMS(4), want)),
         ATTRS(A_INTS("beginningPadding", 1, 1), A_INTS("endingPadding", 1, 1), A_FLOAT("value", 7)));
}

void c_cast_f32_u64(oc_case *c, const char *op) {
    /* saturating: below 0 gives 0, 1e20 gives 2^64 - 1, NaN gives 0 */
    static const float a[4] = {-1.0f, 3.7f, 1e20f, NAN};
    static const int64_t want[4] = {0, 3, -1, 0};
    uint32_t x = in(c, "x", F32, 1, DIMS(4), a);
    node(c, op, 1, IDX(x), 1, IDX(out_i(c, "y", U64, 1, DIMS(4), want)), ATTRS(A_STR("type", "uint64")));
}

void c_cast_f32_i64(oc_case *c, const char *op) {
    /* saturating at the true ends of int64 */
    static const float a[4] = {1e19f, -1e19f, -3.5f, NAN};
    static const int64_t want[4] = {INT64_MAX, INT64_MIN, -3, 0};
    uint32_t x = in(c, "x", F32, 1, DIMS(4), a);
    node(c, op, 1, IDX(x), 1, IDX(out_i(c, "y", I64, 1, DIMS(4), want)), ATTRS(A_STR("type", "int64")));
}

void c_greater_i8(oc_case *c, const char *op) {
    /* signed order: -128 < -1 < 0 < 127 */
    static const int8_t a[4] = {-1, 127, -128, 0}, b[4] = {-128, -1, 0, 0};
    static const int64_t want[4] = {1, 1, 0, 0};
    uint32_t x = in(c, "a", I8, 1, DIMS(4), a), y = in(c, "b", I8, 1, DIMS(4), b);
    node(c, op, 2, IDX(x, y), 1, IDX(out_i(c, "y", U8, 1, DIMS(4), want)), 0, NULL);
}

void c_lesser_f16(oc_case *c, const char *op) {
    /* -2 < 0.5; 0.5 < 0.5 is false; NaN is unordered */
    static const uint16_t a[3] = {0xc000, 0x3800, 0x7e00}, b[3] = {0x3800, 0x3800, 0x3c00};
    static const int64_t want[3] = {1, 0, 0};
    uint32_t x = in(c, "a", F16, 1, DIMS(3), a), y = in(c, "b", F16, 1, DIMS(3), b);
    node(c, op, 2, IDX(x, y), 1, IDX(out_i(c, "y", U8, 1, DIMS(3), want)), 0, NULL);
}
