/* The op registry: WebNN op names (and berth fused ops) to the function
 * that validates a node and emits its dispatches, with the first-input
 * dtypes each accepts, which is also what supports_op answers. An op
 * missing here is refused by supports_op, so the engine can refuse the
 * graph before any upload. */
#include <math.h>
#include <string.h>

#include "gpu_core.h"

#define F32 BK_BIT(BERTH_DTYPE_F32)
/* Data movement works on 4- and 8-byte elements as 32-bit words. */
#define WORDS (F32 | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32) | BK_BIT(BERTH_DTYPE_I64) | \
               BK_BIT(BERTH_DTYPE_U64))
#define CASTS (F32 | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32) | BK_BIT(BERTH_DTYPE_I64) | \
               BK_BIT(BERTH_DTYPE_U64) | BK_BIT(BERTH_DTYPE_U8) | BK_BIT(BERTH_DTYPE_I8) | BK_BIT(BERTH_DTYPE_F16))
/* Comparisons read every numeric dtype. */
#define COMPARES ARITH
/* Arithmetic: float32, float16 and every integer dtype. */
#define ARITH (F32 | BK_BIT(BERTH_DTYPE_F16) | BK_BIT(BERTH_DTYPE_I8) | BK_BIT(BERTH_DTYPE_U8) | \
               BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32) | BK_BIT(BERTH_DTYPE_I64) | BK_BIT(BERTH_DTYPE_U64))
/* Integer weights read packed: the quantized fused ops', dequantizeLinear's. */
#define PACKED_INTS (BK_BIT(BERTH_DTYPE_I8) | BK_BIT(BERTH_DTYPE_U8) | BK_BIT(BERTH_DTYPE_I4) | BK_BIT(BERTH_DTYPE_U4))
#define VIEWS (WORDS | BK_BIT(BERTH_DTYPE_U8) | BK_BIT(BERTH_DTYPE_I8) | BK_BIT(BERTH_DTYPE_F16))

/* Check hooks (below and in the op files). */
berth_status gpu_check_matmul(const bk_node_ctx *c);
berth_status gpu_check_reduce(const bk_node_ctx *c);
berth_status gpu_check_layer_norm(const bk_node_ctx *c);
berth_status gpu_check_copy(const bk_node_ctx *c);
berth_status gpu_check_matmul_quantized(const bk_node_ctx *c);
berth_status gpu_check_gather_quantized(const bk_node_ctx *c);
static berth_status check_fits(const bk_node_ctx *c);
static berth_status check_fits_half(const bk_node_ctx *c);
static berth_status check_cast(const bk_node_ctx *c);
static berth_status check_compare(const bk_node_ctx *c);
static berth_status check_where(const bk_node_ctx *c);
static berth_status check_indexed(const bk_node_ctx *c);
static berth_status check_quantize(const bk_node_ctx *c);
static berth_status check_resample(const bk_node_ctx *c);
static berth_status check_attention(const bk_node_ctx *c);
static berth_status check_pad(const bk_node_ctx *c);
static berth_status check_unary(const bk_node_ctx *c);

static const gpu_op ops[BERTH_OP_COUNT] = {
    [BERTH_OP_MATMUL] = {gpu_prep_matmul, {F32, gpu_check_matmul}},
    [BERTH_OP_GEMM] = {gpu_prep_gemm, {F32, check_fits}},
    [BERTH_OP_MATMUL_EPILOGUE] = {gpu_prep_matmul_epilogue, {F32, gpu_check_matmul}},
    [BERTH_OP_ADD] = {gpu_prep_binary, {ARITH, check_fits}},
    [BERTH_OP_SUB] = {gpu_prep_binary, {ARITH, check_fits}},
    [BERTH_OP_MUL] = {gpu_prep_binary, {ARITH, check_fits}},
    [BERTH_OP_DIV] = {gpu_prep_binary, {ARITH, check_fits}},
    [BERTH_OP_MAX] = {gpu_prep_binary, {ARITH, check_fits}},
    [BERTH_OP_MIN] = {gpu_prep_binary, {ARITH, check_fits}},
    [BERTH_OP_POW] = {gpu_prep_binary, {ARITH, check_fits}},
    [BERTH_OP_PRELU] = {gpu_prep_binary, {F32, check_fits}},
    [BERTH_OP_LOGICAL_AND] = {gpu_prep_logical, {BK_BIT(BERTH_DTYPE_U8), check_fits}},
    [BERTH_OP_LOGICAL_OR] = {gpu_prep_logical, {BK_BIT(BERTH_DTYPE_U8), check_fits}},
    [BERTH_OP_EQUAL] = {gpu_prep_compare, {COMPARES, check_compare}},
    [BERTH_OP_GREATER] = {gpu_prep_compare, {COMPARES, check_compare}},
    [BERTH_OP_GREATER_OR_EQUAL] = {gpu_prep_compare, {COMPARES, check_compare}},
    [BERTH_OP_LESSER] = {gpu_prep_compare, {COMPARES, check_compare}},
    [BERTH_OP_LESSER_OR_EQUAL] = {gpu_prep_compare, {COMPARES, check_compare}},
    [BERTH_OP_NOT_EQUAL] = {gpu_prep_compare, {COMPARES, check_compare}},
    BK_UNARY_OPS(gpu_prep_unary, ARITH, check_unary),
    [BERTH_OP_CAST] = {gpu_prep_cast, {CASTS, check_cast}},
    BK_VIEW_OPS(gpu_prep_view, VIEWS),
    BK_COPY_OPS(gpu_prep, WORDS, gpu_check_copy),
    BK_GATHER_OPS(gpu_prep, WORDS, check_indexed),
    [BERTH_OP_TRIANGULAR] = {gpu_prep_triangular, {WORDS, check_fits}},
    BK_ARG_OPS(gpu_prep, F32, check_fits),
    [BERTH_OP_CUMULATIVE_SUM] = {gpu_prep_cumsum, {F32, check_fits}},
    [BERTH_OP_WHERE] = {gpu_prep_where, {BK_BIT(BERTH_DTYPE_U8), check_where}},
    [BERTH_OP_LOGICAL_NOT] = {gpu_prep_logical_not, {BK_BIT(BERTH_DTYPE_U8), NULL}},
    [BERTH_OP_PAD] = {gpu_prep_pad, {WORDS, check_pad}},
    [BERTH_OP_SOFTMAX] = {gpu_prep_softmax, {F32, check_fits}},
    [BERTH_OP_REDUCE_MEAN] = {gpu_prep_reduce, {F32, gpu_check_reduce}},
    [BERTH_OP_REDUCE_SUM] = {gpu_prep_reduce, {F32, gpu_check_reduce}},
    [BERTH_OP_REDUCE_MAX] = {gpu_prep_reduce, {F32, gpu_check_reduce}},
    [BERTH_OP_REDUCE_MIN] = {gpu_prep_reduce, {F32, gpu_check_reduce}},
    [BERTH_OP_REDUCE_PRODUCT] = {gpu_prep_reduce, {F32, gpu_check_reduce}},
    [BERTH_OP_REDUCE_L2] = {gpu_prep_reduce, {F32, gpu_check_reduce}},
    [BERTH_OP_REDUCE_SUM_SQUARE] = {gpu_prep_reduce, {F32, gpu_check_reduce}},
    [BERTH_OP_REDUCE_L1] = {gpu_prep_reduce, {F32, gpu_check_reduce}},
    [BERTH_OP_REDUCE_LOG_SUM] = {gpu_prep_reduce, {F32, gpu_check_reduce}},
    [BERTH_OP_REDUCE_LOG_SUM_EXP] = {gpu_prep_reduce, {F32, gpu_check_reduce}},
    [BERTH_OP_CONV2D] = {gpu_prep_conv2d, {F32, check_fits}},
    [BERTH_OP_CONV_TRANSPOSE2D] = {gpu_prep_conv_transpose2d, {F32, check_fits}},
    [BERTH_OP_AVERAGE_POOL2D] = {gpu_prep_pool2d, {F32, check_fits}},
    [BERTH_OP_MAX_POOL2D] = {gpu_prep_pool2d, {F32, check_fits}},
    [BERTH_OP_L2_POOL2D] = {gpu_prep_pool2d, {F32, check_fits}},
    [BERTH_OP_RESAMPLE2D] = {gpu_prep_resample2d, {F32, check_resample}},
    [BERTH_OP_LAYER_NORMALIZATION] = {gpu_prep_layer_norm, {F32, gpu_check_layer_norm}},
    [BERTH_OP_INSTANCE_NORMALIZATION] = {gpu_prep_instance_norm, {F32, check_fits}},
    [BERTH_OP_BATCH_NORMALIZATION] = {gpu_prep_batch_norm, {F32, check_fits}},
    [BERTH_OP_ATTENTION] = {gpu_prep_attention, {F32, check_attention}},
    [BERTH_OP_SCATTER_ELEMENTS] = {gpu_prep_scatter_elements, {WORDS, check_indexed}},
    [BERTH_OP_QUANTIZE_LINEAR] = {gpu_prep_quantize, {F32, check_quantize}},
    [BERTH_OP_DEQUANTIZE_LINEAR] = {gpu_prep_dequantize, {PACKED_INTS | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32), check_fits_half}},
    [BERTH_OP_MATMUL_QUANTIZED] = {gpu_prep_matmul_quantized, {F32, gpu_check_matmul_quantized}},
    [BERTH_OP_GATHER_QUANTIZED] = {gpu_prep_gather_quantized, {PACKED_INTS, gpu_check_gather_quantized}},
};

const bk_op_set gpu_op_set = BK_OP_SET(GPU_BACKEND_NAME, ops, gpu_op);

const gpu_op *gpu_op_at(berth_op_id id) { return &ops[id]; }


/* ---- check hooks: what the shaders cannot run, refused from the graph
 * alone, so supports_node and plan give the same answer ---- */

berth_status gpu_check_fits(const bk_node_ctx *c, uint64_t limit) {
    const berth_node *n = c->node;
    int empty = 1;
    for (uint32_t j = 0; j < n->n_outputs; j++) empty &= bk_numel(bk_out(c, j)) == 0;
    if (empty) return BERTH_OK; /* nothing to run */
    for (uint32_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
        const berth_operand *o = k < n->n_inputs ? bk_in(c, k) : bk_out(c, k - n->n_inputs);
        size_t es = bk_dtype_size(o->dtype);
        uint64_t words = (uint64_t)bk_numel(o) * (es > 4 ? es / 4 : 1);
        if (words > limit)
            return bk_refuse(c, "%s %u of %zu elements exceeds the shaders' 32-bit indexing",
                             k < n->n_inputs ? "input" : "output", k < n->n_inputs ? k : k - n->n_inputs, bk_numel(o));
    }
    return BERTH_OK;
}

static berth_status check_fits(const bk_node_ctx *c) { return gpu_check_fits(c, UINT32_MAX); }
static berth_status check_fits_half(const bk_node_ctx *c) { return gpu_check_fits(c, UINT32_MAX / 2); }

static berth_status check_compare(const bk_node_ctx *c) {
    berth_dtype a = bk_in(c, 0)->dtype, b = bk_in(c, 1)->dtype;
    if (a != b)
        return bk_refuse(c, "inputs must share one dtype, found %s and %s", bk_dtype_name(a), bk_dtype_name(b));
    return check_fits(c);
}

static berth_status check_cast(const bk_node_ctx *c) {
    const uint32_t ok = BK_BIT(BERTH_DTYPE_F32) | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32) |
                        BK_BIT(BERTH_DTYPE_I64) | BK_BIT(BERTH_DTYPE_U64) | BK_BIT(BERTH_DTYPE_U8) |
                        BK_BIT(BERTH_DTYPE_I8);
    berth_dtype x = bk_in(c, 0)->dtype, y = bk_out(c, 0)->dtype;
    int half = x == BERTH_DTYPE_F16 || y == BERTH_DTYPE_F16;
    int pair_ok = half ? (x == BERTH_DTYPE_F32 || y == BERTH_DTYPE_F32) : (ok & BK_BIT(x)) && (ok & BK_BIT(y));
    if (!pair_ok)
        return bk_refuse(c, "cast from %s to %s is not supported (float32, int32, uint32, int64, uint64, uint8, int8; "
                            "float16 to and from float32)", bk_dtype_name(x), bk_dtype_name(y));
    return check_fits_half(c);
}

static berth_status check_where(const bk_node_ctx *c) {
    berth_dtype t = bk_out(c, 0)->dtype;
    if (!bk_dtype_size(t)) return bk_refuse(c, "dtype %s: where runs on 8- to 64-bit elements", bk_dtype_name(t));
    bk_bcast b;
    bk_bcast_of(c, 3, &b);
    if (b.rank > 6) return bk_refuse(c, "broadcasting over %u distinct dims exceeds the shader's 6", b.rank);
    return check_fits(c);
}

/* gather, gatherElements, scatterElements: int32 or int64 indices, and an
 * axis extent the shaders index with a signed 32-bit int. */
static berth_status check_indexed(const bk_node_ctx *c) {
    berth_status st = bk_check_indices(c);
    if (st) return st;
    bk_axis_geom ag;
    if ((st = bk_param_axis(c, 0, &ag))) return st;
    if (ag.extent > INT32_MAX)
        return bk_refuse(c, "an axis of %llu elements exceeds the shaders' 32-bit indexing",
                         (unsigned long long)ag.extent);
    return check_fits(c);
}

static berth_status check_quantize(const bk_node_ctx *c) {
    const uint32_t ints = BK_BIT(BERTH_DTYPE_I8) | BK_BIT(BERTH_DTYPE_U8) | BK_BIT(BERTH_DTYPE_I32) |
                          BK_BIT(BERTH_DTYPE_U32);
    berth_status st = bk_check_quant_int(c, 1, ints);
    return st ? st : check_fits_half(c);
}

/* The unary ops run on float32 and float16; clamp on every ARITH dtype. */
static berth_status check_unary(const bk_node_ctx *c) {
    berth_dtype t = bk_in(c, 0)->dtype;
    if (t != BERTH_DTYPE_F32 && t != BERTH_DTYPE_F16 && berth_op_find(c->node->op) != BERTH_OP_CLAMP)
        return bk_refuse(c, "%s on %s is not supported (float32 and float16; clamp takes every numeric dtype)",
                         c->node->op, bk_dtype_name(t));
    return check_fits(c);
}

/* pad moves words; an integer constant must be one the dtype holds. */
static berth_status check_pad(const bk_node_ctx *c) {
    berth_dtype t = bk_in(c, 0)->dtype;
    double v;
    berth_status st = bk_opt_float(c, "value", 0.0, &v);
    if (st) return st;
    if (t != BERTH_DTYPE_F32 && (v != floor(v) || v < (t == BERTH_DTYPE_I32 || t == BERTH_DTYPE_I64 ? -0x1p31 : 0) ||
                                 v >= 0x1p32))
        return bk_refuse(c, "pad value %g on %s: the vulkan backend pads integers with whole values below 2^32",
                         v, bk_dtype_name(t));
    return check_fits(c);
}

static berth_status check_resample(const bk_node_ctx *c) {
    bk_resample r;
    berth_status st = bk_param_resample(c, &r);
    return st ? st : check_fits(c);
}

static berth_status check_attention(const bk_node_ctx *c) {
    bk_attention a;
    berth_status st = bk_param_attention(c, &a);
    if (st) return st;
    if (bk_numel(bk_out(c, 0)) && (a.batch * (uint64_t)a.sq * (uint64_t)a.sk > UINT32_MAX || a.batch > UINT32_MAX))
        return bk_refuse(c, "%llu attention scores exceed the shaders' 32-bit indexing",
                         (unsigned long long)(a.batch * (uint64_t)a.sq * (uint64_t)a.sk));
    return check_fits(c);
}
