/* The op registry: WebNN op names (and berth fused ops) to the function
 * that validates a node and picks its kernel, with the dtypes each one
 * accepts, which is also what supports_op answers. */
#include <string.h>

#include "cpu_internal.h"

#define F32 BK_BIT(BERTH_DTYPE_F32)
#define INTS (BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_I64))
#define U8 BK_BIT(BERTH_DTYPE_U8)
#define ANY (F32 | INTS | U8 | BK_BIT(BERTH_DTYPE_I8) | BK_BIT(BERTH_DTYPE_U32) | BK_BIT(BERTH_DTYPE_U64) | \
             BK_BIT(BERTH_DTYPE_F16))

/* Check hooks: what the kernels cannot run, refused from the graph alone
 * (supports_node and plan alike). */
static berth_status check_quantize(const bk_node_ctx *c) {
    const uint32_t ints = BK_BIT(BERTH_DTYPE_I8) | BK_BIT(BERTH_DTYPE_U8) | BK_BIT(BERTH_DTYPE_I32) |
                          BK_BIT(BERTH_DTYPE_U32) | BK_BIT(BERTH_DTYPE_I4) | BK_BIT(BERTH_DTYPE_U4);
    return bk_check_quant_int(c, 1, ints);
}

#define QINTS (BK_BIT(BERTH_DTYPE_I8) | U8 | BK_BIT(BERTH_DTYPE_I4) | BK_BIT(BERTH_DTYPE_U4))

/* berth.matmulQuantized: b, input 1, is one of the quantized dtypes. */
static berth_status check_matmul_quantized(const bk_node_ctx *c) {
    berth_dtype t = bk_in(c, 1)->dtype;
    if ((unsigned)t > 31u || !(BK_BIT(t) & QINTS))
        return bk_refuse(c, "b: expected int8, uint8, int4 or uint4, found %s", bk_dtype_name(t));
    return BERTH_OK;
}

static berth_status check_resample(const bk_node_ctx *c) {
    bk_resample r;
    return bk_param_resample(c, &r);
}

static const cpu_op ops[BERTH_OP_COUNT] = {
    [BERTH_OP_MATMUL] = {cpu_prep_matmul, {F32, NULL}},
    [BERTH_OP_ADD] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_SUB] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_MUL] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_DIV] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_MAX] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_MIN] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_POW] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_EQUAL] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_GREATER] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_GREATER_OR_EQUAL] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_LESSER] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_LESSER_OR_EQUAL] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_NOT_EQUAL] = {cpu_prep_binary, {CPU_NUMERIC, NULL}},
    [BERTH_OP_PRELU] = {cpu_prep_binary, {F32 | BK_BIT(BERTH_DTYPE_F16), NULL}},
    [BERTH_OP_LOGICAL_AND] = {cpu_prep_binary, {U8, NULL}},
    [BERTH_OP_LOGICAL_OR] = {cpu_prep_binary, {U8, NULL}},
    [BERTH_OP_WHERE] = {cpu_prep_where, {ANY, NULL}},
    [BERTH_OP_LOGICAL_NOT] = {cpu_prep_logical_not, {U8, NULL}},
    [BERTH_OP_CAST] = {cpu_prep_cast, {CPU_NUMERIC, NULL}},
    BK_UNARY_OPS(cpu_prep_unary, CPU_NUMERIC, cpu_check_unary),
    BK_VIEW_OPS(cpu_prep_view, ANY),
    [BERTH_OP_SOFTMAX] = {cpu_prep_softmax, {F32, NULL}},
    BK_COPY_OPS(cpu_prep, ANY, NULL),
    BK_GATHER_OPS(cpu_prep, ANY, bk_check_indices),
    [BERTH_OP_SCATTER_ELEMENTS] = {cpu_prep_scatter_elements, {ANY, bk_check_indices}},
    [BERTH_OP_TRIANGULAR] = {cpu_prep_triangular, {ANY, NULL}},
    BK_ARG_OPS(cpu_prep, F32, NULL),
    [BERTH_OP_CUMULATIVE_SUM] = {cpu_prep_cumsum, {F32, NULL}},
    [BERTH_OP_PAD] = {cpu_prep_pad, {CPU_NUMERIC, NULL}},
    [BERTH_OP_REDUCE_MEAN] = {cpu_prep_reduce, {F32, NULL}},
    [BERTH_OP_REDUCE_SUM] = {cpu_prep_reduce, {F32, NULL}},
    [BERTH_OP_REDUCE_MAX] = {cpu_prep_reduce, {F32, NULL}},
    [BERTH_OP_REDUCE_MIN] = {cpu_prep_reduce, {F32, NULL}},
    [BERTH_OP_REDUCE_PRODUCT] = {cpu_prep_reduce, {F32, NULL}},
    [BERTH_OP_REDUCE_L2] = {cpu_prep_reduce, {F32, NULL}},
    [BERTH_OP_REDUCE_SUM_SQUARE] = {cpu_prep_reduce, {F32, NULL}},
    [BERTH_OP_REDUCE_L1] = {cpu_prep_reduce, {F32, NULL}},
    [BERTH_OP_REDUCE_LOG_SUM] = {cpu_prep_reduce, {F32, NULL}},
    [BERTH_OP_REDUCE_LOG_SUM_EXP] = {cpu_prep_reduce, {F32, NULL}},
    [BERTH_OP_GEMM] = {cpu_prep_gemm, {F32, NULL}},
    [BERTH_OP_LAYER_NORMALIZATION] = {cpu_prep_layer_norm, {F32, NULL}},
    [BERTH_OP_BATCH_NORMALIZATION] = {cpu_prep_batch_norm, {F32, NULL}},
    [BERTH_OP_INSTANCE_NORMALIZATION] = {cpu_prep_instance_norm, {F32, NULL}},
    [BERTH_OP_CONV2D] = {cpu_prep_conv2d, {F32, NULL}},
    [BERTH_OP_CONV_TRANSPOSE2D] = {cpu_prep_conv_transpose2d, {F32, NULL}},
    [BERTH_OP_AVERAGE_POOL2D] = {cpu_prep_pool2d, {F32, NULL}},
    [BERTH_OP_MAX_POOL2D] = {cpu_prep_pool2d, {F32, NULL}},
    [BERTH_OP_L2_POOL2D] = {cpu_prep_pool2d, {F32, NULL}},
    [BERTH_OP_RESAMPLE2D] = {cpu_prep_resample2d, {F32, check_resample}},
    [BERTH_OP_QUANTIZE_LINEAR] = {cpu_prep_quantize, {F32, check_quantize}},
    [BERTH_OP_DEQUANTIZE_LINEAR] = {cpu_prep_dequantize, {BK_BIT(BERTH_DTYPE_I8) | U8 | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32) | BK_BIT(BERTH_DTYPE_I4) | BK_BIT(BERTH_DTYPE_U4), NULL}},
    [BERTH_OP_MATMUL_EPILOGUE] = {cpu_prep_matmul_epilogue, {F32, NULL}},
    [BERTH_OP_MATMUL_QUANTIZED] = {cpu_prep_matmul_quantized, {F32, check_matmul_quantized}},
    [BERTH_OP_GATHER_QUANTIZED] = {cpu_prep_gather_quantized, {QINTS, NULL}},
    [BERTH_OP_ATTENTION] = {cpu_prep_attention, {F32, NULL}},
    [BERTH_OP_ELEMENTWISE] = {cpu_prep_elementwise_program, {F32, NULL}},
    [BERTH_OP_CONV2D_EPILOGUE] = {cpu_prep_conv2d_epilogue, {F32, NULL}},
};

const bk_op_set cpu_op_set = BK_OP_SET("cpu", ops, cpu_op);

const cpu_op *cpu_op_at(berth_op_id id) { return &ops[id]; }
