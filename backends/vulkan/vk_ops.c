/* The op registry: WebNN op names (and berth fused ops) to the function
 * that validates a node and emits its dispatches, with the first-input
 * dtypes each accepts, which is also what supports_op answers. An op
 * missing here is refused by supports_op, so the engine can refuse the
 * graph before any upload. Also broadcasting, shared by elementwise ops. */
#include <string.h>

#include "vk_internal.h"

#define F32 BK_BIT(BERTH_DTYPE_F32)
/* Data movement works on 4- and 8-byte elements as 32-bit words. */
#define WORDS (F32 | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32) | BK_BIT(BERTH_DTYPE_I64) | \
               BK_BIT(BERTH_DTYPE_U64))
#define CASTS (F32 | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32) | BK_BIT(BERTH_DTYPE_I64) | \
               BK_BIT(BERTH_DTYPE_U8) | BK_BIT(BERTH_DTYPE_I8) | BK_BIT(BERTH_DTYPE_F16))
/* Comparisons read float32, int32, uint32, uint8 and int64. */
#define COMPARES (F32 | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32) | BK_BIT(BERTH_DTYPE_U8) | \
                  BK_BIT(BERTH_DTYPE_I64))
/* Integer arithmetic: int32 and int64 (not pow or prelu: refused at plan). */
#define ARITH (F32 | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_I64))
#define VIEWS (WORDS | BK_BIT(BERTH_DTYPE_U8) | BK_BIT(BERTH_DTYPE_I8) | BK_BIT(BERTH_DTYPE_F16))

static const vk_op ops[BERTH_OP_COUNT] = {
    [BERTH_OP_MATMUL] = {vk_prep_matmul, {F32}},
    [BERTH_OP_GEMM] = {vk_prep_gemm, {F32}},
    [BERTH_OP_MATMUL_EPILOGUE] = {vk_prep_matmul_epilogue, {F32}},
    [BERTH_OP_ADD] = {vk_prep_binary, {ARITH}},
    [BERTH_OP_SUB] = {vk_prep_binary, {ARITH}},
    [BERTH_OP_MUL] = {vk_prep_binary, {ARITH}},
    [BERTH_OP_DIV] = {vk_prep_binary, {ARITH}},
    [BERTH_OP_MAX] = {vk_prep_binary, {ARITH}},
    [BERTH_OP_MIN] = {vk_prep_binary, {ARITH}},
    [BERTH_OP_POW] = {vk_prep_binary, {F32}},
    [BERTH_OP_PRELU] = {vk_prep_binary, {F32}},
    [BERTH_OP_LOGICAL_AND] = {vk_prep_logical, {BK_BIT(BERTH_DTYPE_U8)}},
    [BERTH_OP_LOGICAL_OR] = {vk_prep_logical, {BK_BIT(BERTH_DTYPE_U8)}},
    [BERTH_OP_EQUAL] = {vk_prep_compare, {COMPARES}},
    [BERTH_OP_GREATER] = {vk_prep_compare, {COMPARES}},
    [BERTH_OP_GREATER_OR_EQUAL] = {vk_prep_compare, {COMPARES}},
    [BERTH_OP_LESSER] = {vk_prep_compare, {COMPARES}},
    [BERTH_OP_LESSER_OR_EQUAL] = {vk_prep_compare, {COMPARES}},
    [BERTH_OP_NOT_EQUAL] = {vk_prep_compare, {COMPARES}},
    [BERTH_OP_RELU] = {vk_prep_unary, {F32}},
    [BERTH_OP_SIGMOID] = {vk_prep_unary, {F32}},
    [BERTH_OP_TANH] = {vk_prep_unary, {F32}},
    [BERTH_OP_EXP] = {vk_prep_unary, {F32}},
    [BERTH_OP_LOG] = {vk_prep_unary, {F32}},
    [BERTH_OP_SQRT] = {vk_prep_unary, {F32}},
    [BERTH_OP_ABS] = {vk_prep_unary, {F32}},
    [BERTH_OP_NEG] = {vk_prep_unary, {F32}},
    [BERTH_OP_ERF] = {vk_prep_unary, {F32}},
    [BERTH_OP_GELU] = {vk_prep_unary, {F32}},
    [BERTH_OP_HARD_SIGMOID] = {vk_prep_unary, {F32}},
    [BERTH_OP_HARD_SWISH] = {vk_prep_unary, {F32}},
    [BERTH_OP_CLAMP] = {vk_prep_unary, {F32}},
    [BERTH_OP_LEAKY_RELU] = {vk_prep_unary, {F32}},
    [BERTH_OP_ELU] = {vk_prep_unary, {F32}},
    [BERTH_OP_SOFTPLUS] = {vk_prep_unary, {F32}},
    [BERTH_OP_RECIPROCAL] = {vk_prep_unary, {F32}},
    [BERTH_OP_FLOOR] = {vk_prep_unary, {F32}},
    [BERTH_OP_CEIL] = {vk_prep_unary, {F32}},
    [BERTH_OP_SIN] = {vk_prep_unary, {F32}},
    [BERTH_OP_COS] = {vk_prep_unary, {F32}},
    [BERTH_OP_SIGN] = {vk_prep_unary, {F32}},
    [BERTH_OP_SOFTSIGN] = {vk_prep_unary, {F32}},
    [BERTH_OP_CAST] = {vk_prep_cast, {CASTS}},
    [BERTH_OP_IDENTITY] = {vk_prep_view, {VIEWS}},
    [BERTH_OP_RESHAPE] = {vk_prep_view, {VIEWS}},
    [BERTH_OP_SQUEEZE] = {vk_prep_view, {VIEWS}},
    [BERTH_OP_UNSQUEEZE] = {vk_prep_view, {VIEWS}},
    [BERTH_OP_TRANSPOSE] = {vk_prep_transpose, {WORDS}},
    [BERTH_OP_SLICE] = {vk_prep_slice, {WORDS}},
    [BERTH_OP_EXPAND] = {vk_prep_expand, {WORDS}},
    [BERTH_OP_TILE] = {vk_prep_tile, {WORDS}},
    [BERTH_OP_CONCAT] = {vk_prep_concat, {WORDS}},
    [BERTH_OP_SPLIT] = {vk_prep_split, {WORDS}},
    [BERTH_OP_GATHER] = {vk_prep_gather, {WORDS}},
    [BERTH_OP_GATHER_ELEMENTS] = {vk_prep_gather_elements, {WORDS}},
    [BERTH_OP_TRIANGULAR] = {vk_prep_triangular, {WORDS}},
    [BERTH_OP_ARG_MAX] = {vk_prep_arg, {F32}},
    [BERTH_OP_ARG_MIN] = {vk_prep_arg, {F32}},
    [BERTH_OP_CUMULATIVE_SUM] = {vk_prep_cumsum, {F32}},
    [BERTH_OP_WHERE] = {vk_prep_where, {BK_BIT(BERTH_DTYPE_U8)}},
    [BERTH_OP_LOGICAL_NOT] = {vk_prep_logical_not, {BK_BIT(BERTH_DTYPE_U8)}},
    [BERTH_OP_PAD] = {vk_prep_pad, {F32}},
    [BERTH_OP_SOFTMAX] = {vk_prep_softmax, {F32}},
    [BERTH_OP_REDUCE_MEAN] = {vk_prep_reduce, {F32}},
    [BERTH_OP_REDUCE_SUM] = {vk_prep_reduce, {F32}},
    [BERTH_OP_REDUCE_MAX] = {vk_prep_reduce, {F32}},
    [BERTH_OP_REDUCE_MIN] = {vk_prep_reduce, {F32}},
    [BERTH_OP_REDUCE_PRODUCT] = {vk_prep_reduce, {F32}},
    [BERTH_OP_REDUCE_L2] = {vk_prep_reduce, {F32}},
    [BERTH_OP_REDUCE_SUM_SQUARE] = {vk_prep_reduce, {F32}},
    [BERTH_OP_REDUCE_L1] = {vk_prep_reduce, {F32}},
    [BERTH_OP_REDUCE_LOG_SUM] = {vk_prep_reduce, {F32}},
    [BERTH_OP_REDUCE_LOG_SUM_EXP] = {vk_prep_reduce, {F32}},
    [BERTH_OP_CONV2D] = {vk_prep_conv2d, {F32}},
    [BERTH_OP_CONV_TRANSPOSE2D] = {vk_prep_conv_transpose2d, {F32}},
    [BERTH_OP_AVERAGE_POOL2D] = {vk_prep_pool2d, {F32}},
    [BERTH_OP_MAX_POOL2D] = {vk_prep_pool2d, {F32}},
    [BERTH_OP_L2_POOL2D] = {vk_prep_pool2d, {F32}},
    [BERTH_OP_RESAMPLE2D] = {vk_prep_resample2d, {F32}},
    [BERTH_OP_LAYER_NORMALIZATION] = {vk_prep_layer_norm, {F32}},
    [BERTH_OP_INSTANCE_NORMALIZATION] = {vk_prep_instance_norm, {F32}},
    [BERTH_OP_BATCH_NORMALIZATION] = {vk_prep_batch_norm, {F32}},
    [BERTH_OP_ATTENTION] = {vk_prep_attention, {F32}},
    [BERTH_OP_SCATTER_ELEMENTS] = {vk_prep_scatter_elements, {WORDS}},
    [BERTH_OP_QUANTIZE_LINEAR] = {vk_prep_quantize, {F32}},
    [BERTH_OP_DEQUANTIZE_LINEAR] = {vk_prep_dequantize, {BK_BIT(BERTH_DTYPE_I8) | BK_BIT(BERTH_DTYPE_U8) | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32)}},
};

const bk_op_set vk_op_set = BK_OP_SET("vulkan", ops, vk_op);

const vk_op *vk_op_at(berth_op_id id) { return &ops[id]; }

berth_status vk_bcast_init(vk_prep *c, uint32_t n, const vk_opnd *const *in, const vk_opnd *out, vk_bcast *b) {
    uint32_t rank = 0;
    for (uint32_t k = 0; k < n; k++)
        if (in[k]->rank > rank) rank = in[k]->rank;
    int64_t want[BERTH_MAX_RANK] = {0};
    for (uint32_t d = 0; d < rank; d++) {
        int64_t v = 1;
        for (uint32_t k = 0; k < n; k++) {
            int64_t at = (int64_t)d - (int64_t)(rank - in[k]->rank);
            int64_t x = at < 0 ? 1 : in[k]->dims[at];
            if (x == 1) continue;
            if (v != 1 && v != x) {
                char s0[128], s1[128];
                bk_dims_str(in[0]->dims, in[0]->rank, s0, sizeof s0);
                bk_dims_str(in[k]->dims, in[k]->rank, s1, sizeof s1);
                return bk_fail(&c->bk, "shapes %s and %s do not broadcast (dim %u: %lld vs %lld)", s0, s1, d,
                               (long long)v, (long long)x);
            }
            v = x;
        }
        want[d] = v;
    }
    berth_status st = bk_check_out_dims(&c->bk, 0, rank, want);
    if (st) return st;
    /* Full-rank strides (0 where an input repeats), then drop size-1 dims
     * and merge neighbours contiguous for every input, so the shader's
     * index arithmetic runs over as few dims as possible. */
    int64_t strides[3][BERTH_MAX_RANK];
    for (uint32_t k = 0; k < n; k++) {
        int64_t s = 1;
        for (int d = (int)rank - 1; d >= 0; d--) {
            int64_t at = d - (int64_t)(rank - in[k]->rank);
            int64_t x = at < 0 ? 1 : in[k]->dims[at];
            strides[k][d] = x == 1 ? 0 : s;
            s *= x;
        }
    }
    memset(b, 0, sizeof *b);
    uint32_t r = 0;
    for (uint32_t d = 0; d < rank; d++) {
        if (want[d] == 1) continue;
        int merge = r > 0;
        for (uint32_t k = 0; k < n && merge; k++)
            if (b->strides[k][r - 1] != strides[k][d] * want[d]) merge = 0;
        if (merge) {
            b->dims[r - 1] *= want[d];
            for (uint32_t k = 0; k < n; k++) b->strides[k][r - 1] = strides[k][d];
            continue;
        }
        b->dims[r] = want[d];
        for (uint32_t k = 0; k < n; k++) b->strides[k][r] = strides[k][d];
        r++;
    }
    if (r == 0) {
        b->dims[0] = 1;
        r = 1;
    }
    b->rank = r;
    for (uint32_t d = 0; d < r; d++)
        for (uint32_t k = 0; k < n; k++)
            if (b->dims[d] > UINT32_MAX || b->strides[k][d] > UINT32_MAX)
                return bk_refuse(&c->bk, "a dim of %lld elements exceeds the shaders' 32-bit indexing",
                                      (long long)b->dims[d]);
    return BERTH_OK;
}
