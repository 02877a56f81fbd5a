/* The op registry: WebNN op names (and berth fused ops) to the function
 * that validates a node and emits its dispatches, with the first-input
 * dtypes each accepts, which is also what supports_op answers. An op
 * missing here is refused by supports_op, so the engine can refuse the
 * graph before any upload. */
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

