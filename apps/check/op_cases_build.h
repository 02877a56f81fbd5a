/* What the op case files share: the builders that add a case's inputs,
 * outputs and node with their data, deterministic fill values, and the
 * cases op_cases_conv.c defines for the table in op_cases.c. */
#ifndef BERTH_TEST_OP_CASES_BUILD_H
#define BERTH_TEST_OP_CASES_BUILD_H

#include <stddef.h>

#include "op_cases.h"

#define F32 BERTH_DTYPE_F32
#define I32 BERTH_DTYPE_I32
#define I64 BERTH_DTYPE_I64
#define U8 BERTH_DTYPE_U8
#define I8 BERTH_DTYPE_I8

/* ---- building ---- */

static inline uint32_t in(oc_case *c, const char *name, berth_dtype t, uint32_t rank, const int64_t *dims,
                          const void *data) {
    c->in[c->g.n_ins] = data;
    return tg_input(&c->g, name, t, rank, dims);
}
static inline uint32_t out_f(oc_case *c, const char *name, uint32_t rank, const int64_t *dims, const double *want) {
    uint32_t y = tg_value(&c->g, name, F32, rank, dims);
    c->want_f[c->g.n_outs] = want;
    tg_output(&c->g, y);
    return y;
}
static inline uint32_t out_i(oc_case *c, const char *name, berth_dtype t, uint32_t rank, const int64_t *dims,
                             const int64_t *want) {
    uint32_t y = tg_value(&c->g, name, t, rank, dims);
    c->want_i[c->g.n_outs] = want;
    tg_output(&c->g, y);
    return y;
}
static inline void node(oc_case *c, const char *op, uint32_t n_in, const uint32_t *ins, uint32_t n_out,
                        const uint32_t *outs, uint32_t n_attrs, const berth_attr *attrs) {
    tg_node(&c->g, op, n_in, ins, n_out, outs, n_attrs, attrs);
}
#define ATTRS(...) (uint32_t)(sizeof((berth_attr[]){__VA_ARGS__}) / sizeof(berth_attr)), (const berth_attr[]){__VA_ARGS__}

/* Deterministic small values: multiples of 1/4 in [-2, 2.5]. */
static inline void fill(float *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (float)((int)((i * 7 + seed * 3) % 19) - 8) * 0.25f;
}

static inline size_t numel(uint32_t rank, const int64_t *dims) {
    size_t n = 1;
    for (uint32_t i = 0; i < rank; i++) n *= (size_t)dims[i];
    return n;
}

/* op_cases_conv.c: convolution, pooling and resampling, the fused
 * convolution's epilogue included */
void c_conv2d_pad_stride(oc_case *c, const char *op);
void c_conv2d_groups(oc_case *c, const char *op);
void c_conv_epilogue_gemm(oc_case *c, const char *op);
void c_conv_epilogue_depthwise(oc_case *c, const char *op);
void c_conv_epilogue_narrow(oc_case *c, const char *op);
void c_conv2d_large(oc_case *c, const char *op);
void c_conv2d_large_strided(oc_case *c, const char *op);
void c_conv_epilogue_large(oc_case *c, const char *op);
void c_conv_transpose2d(oc_case *c, const char *op);
void c_pool(oc_case *c, const char *op);
void c_resample_nearest(oc_case *c, const char *op);
void c_resample_linear(oc_case *c, const char *op);

/* op_cases_quant.c: the quantized fused ops */
void c_mmq_i8_epilogue(oc_case *c, const char *op);
void c_mmq_u8_per_column(oc_case *c, const char *op);
void c_mmq_i4_odd(oc_case *c, const char *op);
void c_mmq_u4_deep(oc_case *c, const char *op);
void c_mmq_i4_no_zero(oc_case *c, const char *op);
void c_gq_i8(oc_case *c, const char *op);
void c_gq_u4_odd(oc_case *c, const char *op);
void c_gq_i8_no_zero(oc_case *c, const char *op);
void c_gq_i8_clamp(oc_case *c, const char *op);
void c_gq_u4_clamp(oc_case *c, const char *op);
void c_dequantize_i4(oc_case *c, const char *op);
void c_dequantize_u4(oc_case *c, const char *op);

/* op_cases_dtype.c: integer and float16 dtypes */
void c_add_u8_wraps(oc_case *c, const char *op);
void c_div_i8_edges(oc_case *c, const char *op);
void c_max_u64_high(oc_case *c, const char *op);
void c_min_u32(oc_case *c, const char *op);
void c_pow_i32(oc_case *c, const char *op);
void c_sub_f16(oc_case *c, const char *op);
void c_clamp_i8(oc_case *c, const char *op);
void c_pad_i64_reflection(oc_case *c, const char *op);
void c_pad_u8_constant(oc_case *c, const char *op);
void c_cast_f32_u64(oc_case *c, const char *op);
void c_cast_f32_i64(oc_case *c, const char *op);
void c_greater_i8(oc_case *c, const char *op);
void c_lesser_f16(oc_case *c, const char *op);

/* op_cases_edge.c: generated edge values for every elementwise op and
 * reduction (the `arg` is the op, or cast's type, or softmax's axis) */
void c_edge_unary(oc_case *c, const char *op);
/* The one reference of the unary float ops, the contract's answer at
 * every value, and the node with the options it assumes (clamp to
 * [-1, 2], alpha 0.5, beta 0.25), for the edge cases and the plain ones. */
double oc_unary_ref(const char *op, double x);
void oc_unary_node(oc_case *c, const char *op, uint32_t a, uint32_t o);
/* The one reference of the binary float ops, comparisons and logical
 * ops (NaN through max and min, C's pow). */
double oc_binary_ref(const char *op, double a, double b);
/* The one reference of the float reductions over n values (n may be 0). */
double oc_reduce_ref(const char *op, const double *v, size_t n);
void c_edge_binary(oc_case *c, const char *op);
void c_edge_int32(oc_case *c, const char *op);
void c_edge_int64(oc_case *c, const char *op);
void c_edge_cast_from_f32(oc_case *c, const char *type);
void c_edge_cast_to_f32(oc_case *c, const char *from);
void c_edge_where(oc_case *c, const char *op);
void c_edge_logical(oc_case *c, const char *op);
void c_edge_reduce(oc_case *c, const char *op);
void c_edge_reduce_empty(oc_case *c, const char *op);
void c_edge_arg(oc_case *c, const char *op);
void c_edge_softmax(oc_case *c, const char *axis);
void c_edge_cumsum(oc_case *c, const char *op);
void c_edge_max_pool(oc_case *c, const char *op);

#endif
