/* The op registry: WebNN op names (and berth fused ops) to the function
 * that validates a node and picks its kernel, with the dtypes each one
 * accepts, which is also what supports_op answers. */
#include <string.h>

#include "cpu_internal.h"

#define F32 CPU_BIT(BERTH_DTYPE_F32)
#define INTS (CPU_BIT(BERTH_DTYPE_I32) | CPU_BIT(BERTH_DTYPE_I64))
#define U8 CPU_BIT(BERTH_DTYPE_U8)
#define ANY (F32 | INTS | U8 | CPU_BIT(BERTH_DTYPE_I8) | CPU_BIT(BERTH_DTYPE_U32) | CPU_BIT(BERTH_DTYPE_U64) | \
             CPU_BIT(BERTH_DTYPE_F16))

static const cpu_op_info ops[] = {
    {"matmul", cpu_prep_matmul, F32},
    {"add", cpu_prep_binary, F32 | INTS},
    {"sub", cpu_prep_binary, F32 | INTS},
    {"mul", cpu_prep_binary, F32 | INTS},
    {"div", cpu_prep_binary, F32 | INTS},
    {"max", cpu_prep_binary, F32 | INTS},
    {"min", cpu_prep_binary, F32 | INTS},
    {"pow", cpu_prep_binary, F32},
    {"equal", cpu_prep_binary, F32 | INTS | U8},
    {"greater", cpu_prep_binary, F32 | INTS | U8},
    {"greaterOrEqual", cpu_prep_binary, F32 | INTS | U8},
    {"lesser", cpu_prep_binary, F32 | INTS | U8},
    {"lesserOrEqual", cpu_prep_binary, F32 | INTS | U8},
    {"notEqual", cpu_prep_binary, F32 | INTS | U8},
    {"prelu", cpu_prep_binary, F32},
    {"logicalAnd", cpu_prep_binary, U8},
    {"logicalOr", cpu_prep_binary, U8},
    {"logicalXor", cpu_prep_binary, U8},
    {"where", cpu_prep_where, ANY},
    {"logicalNot", cpu_prep_logical_not, U8},
    {"cast", cpu_prep_cast, F32 | INTS | U8 | CPU_BIT(BERTH_DTYPE_I8) | CPU_BIT(BERTH_DTYPE_U32) | CPU_BIT(BERTH_DTYPE_F16)},
    {"relu", cpu_prep_unary, F32},
    {"sigmoid", cpu_prep_unary, F32},
    {"tanh", cpu_prep_unary, F32},
    {"exp", cpu_prep_unary, F32},
    {"log", cpu_prep_unary, F32},
    {"sqrt", cpu_prep_unary, F32},
    {"abs", cpu_prep_unary, F32},
    {"neg", cpu_prep_unary, F32},
    {"erf", cpu_prep_unary, F32},
    {"gelu", cpu_prep_unary, F32},
    {"hardSigmoid", cpu_prep_unary, F32},
    {"hardSwish", cpu_prep_unary, F32},
    {"clamp", cpu_prep_unary, F32},
    {"leakyRelu", cpu_prep_unary, F32},
    {"elu", cpu_prep_unary, F32},
    {"softplus", cpu_prep_unary, F32},
    {"reciprocal", cpu_prep_unary, F32},
    {"floor", cpu_prep_unary, F32},
    {"ceil", cpu_prep_unary, F32},
    {"sin", cpu_prep_unary, F32},
    {"cos", cpu_prep_unary, F32},
    {"sign", cpu_prep_unary, F32},
    {"softsign", cpu_prep_unary, F32},
    {"identity", cpu_prep_view, ANY},
    {"reshape", cpu_prep_view, ANY},
    {"squeeze", cpu_prep_view, ANY},
    {"unsqueeze", cpu_prep_view, ANY},
    {"softmax", cpu_prep_softmax, F32},
    {"transpose", cpu_prep_transpose, ANY},
    {"slice", cpu_prep_slice, ANY},
    {"expand", cpu_prep_expand, ANY},
    {"concat", cpu_prep_concat, ANY},
    {"split", cpu_prep_split, ANY},
    {"gather", cpu_prep_gather, ANY},
    {"gatherElements", cpu_prep_gather_elements, ANY},
    {"scatterElements", cpu_prep_scatter_elements, ANY},
    {"tile", cpu_prep_tile, ANY},
    {"triangular", cpu_prep_triangular, ANY},
    {"argMax", cpu_prep_arg, F32},
    {"argMin", cpu_prep_arg, F32},
    {"cumulativeSum", cpu_prep_cumsum, F32},
    {"pad", cpu_prep_pad, F32},
    {"reduceMean", cpu_prep_reduce, F32},
    {"reduceSum", cpu_prep_reduce, F32},
    {"reduceMax", cpu_prep_reduce, F32},
    {"reduceMin", cpu_prep_reduce, F32},
    {"reduceProduct", cpu_prep_reduce, F32},
    {"reduceL2", cpu_prep_reduce, F32},
    {"reduceSumSquare", cpu_prep_reduce, F32},
    {"reduceL1", cpu_prep_reduce, F32},
    {"reduceLogSum", cpu_prep_reduce, F32},
    {"reduceLogSumExp", cpu_prep_reduce, F32},
    {"gemm", cpu_prep_gemm, F32},
    {"layerNormalization", cpu_prep_layer_norm, F32},
    {"batchNormalization", cpu_prep_batch_norm, F32},
    {"instanceNormalization", cpu_prep_instance_norm, F32},
    {"conv2d", cpu_prep_conv2d, F32},
    {"convTranspose2d", cpu_prep_conv_transpose2d, F32},
    {"averagePool2d", cpu_prep_pool2d, F32},
    {"maxPool2d", cpu_prep_pool2d, F32},
    {"l2Pool2d", cpu_prep_pool2d, F32},
    {"resample2d", cpu_prep_resample2d, F32},
    {"quantizeLinear", cpu_prep_quantize, F32},
    {"dequantizeLinear", cpu_prep_dequantize,
     CPU_BIT(BERTH_DTYPE_I8) | U8 | CPU_BIT(BERTH_DTYPE_I32) | CPU_BIT(BERTH_DTYPE_U32) | CPU_BIT(BERTH_DTYPE_I4) |
         CPU_BIT(BERTH_DTYPE_U4)},
    {"berth.matmulEpilogue", cpu_prep_matmul_epilogue, F32},
    {"berth.attention", cpu_prep_attention, F32},
};

const cpu_op_info *cpu_find_op(const char *name) {
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(ops[i].name, name) == 0) return &ops[i];
    return NULL;
}
