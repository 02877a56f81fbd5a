/* The op registry: WebNN op names (and berth fused ops) to the function
 * that validates a node and emits its dispatches, with the first-input
 * dtypes each accepts, which is also what supports_op answers. An op
 * missing here is refused by supports_op, so the engine can refuse the
 * graph before any upload. Also broadcasting, shared by elementwise ops. */
#include <string.h>

#include "vk_internal.h"

#define F32 VK_BIT(BERTH_DTYPE_F32)
/* Data movement works on 4- and 8-byte elements as 32-bit words. */
#define WORDS (F32 | VK_BIT(BERTH_DTYPE_I32) | VK_BIT(BERTH_DTYPE_U32) | VK_BIT(BERTH_DTYPE_I64) | \
               VK_BIT(BERTH_DTYPE_U64))
#define CASTS (F32 | VK_BIT(BERTH_DTYPE_I32) | VK_BIT(BERTH_DTYPE_U32) | VK_BIT(BERTH_DTYPE_I64) | \
               VK_BIT(BERTH_DTYPE_U8) | VK_BIT(BERTH_DTYPE_I8) | VK_BIT(BERTH_DTYPE_F16))
/* Comparisons read float32, int32, uint32, uint8 and int64. */
#define COMPARES (F32 | VK_BIT(BERTH_DTYPE_I32) | VK_BIT(BERTH_DTYPE_U32) | VK_BIT(BERTH_DTYPE_U8) | \
                  VK_BIT(BERTH_DTYPE_I64))
/* Integer arithmetic: int32 and int64 (not pow or prelu: refused at plan). */
#define ARITH (F32 | VK_BIT(BERTH_DTYPE_I32) | VK_BIT(BERTH_DTYPE_I64))
#define VIEWS (WORDS | VK_BIT(BERTH_DTYPE_U8) | VK_BIT(BERTH_DTYPE_I8) | VK_BIT(BERTH_DTYPE_F16))

static const vk_op_info ops[] = {
    {"matmul", vk_prep_matmul, F32},
    {"gemm", vk_prep_gemm, F32},
    {"berth.matmulEpilogue", vk_prep_matmul_epilogue, F32},
    {"add", vk_prep_binary, ARITH},
    {"sub", vk_prep_binary, ARITH},
    {"mul", vk_prep_binary, ARITH},
    {"div", vk_prep_binary, ARITH},
    {"max", vk_prep_binary, ARITH},
    {"min", vk_prep_binary, ARITH},
    {"pow", vk_prep_binary, F32},
    {"prelu", vk_prep_binary, F32},
    {"logicalAnd", vk_prep_logical, VK_BIT(BERTH_DTYPE_U8)},
    {"logicalOr", vk_prep_logical, VK_BIT(BERTH_DTYPE_U8)},
    {"logicalXor", vk_prep_logical, VK_BIT(BERTH_DTYPE_U8)},
    {"equal", vk_prep_compare, COMPARES},
    {"greater", vk_prep_compare, COMPARES},
    {"greaterOrEqual", vk_prep_compare, COMPARES},
    {"lesser", vk_prep_compare, COMPARES},
    {"lesserOrEqual", vk_prep_compare, COMPARES},
    {"notEqual", vk_prep_compare, COMPARES},
    {"relu", vk_prep_unary, F32},
    {"sigmoid", vk_prep_unary, F32},
    {"tanh", vk_prep_unary, F32},
    {"exp", vk_prep_unary, F32},
    {"log", vk_prep_unary, F32},
    {"sqrt", vk_prep_unary, F32},
    {"abs", vk_prep_unary, F32},
    {"neg", vk_prep_unary, F32},
    {"erf", vk_prep_unary, F32},
    {"gelu", vk_prep_unary, F32},
    {"hardSigmoid", vk_prep_unary, F32},
    {"hardSwish", vk_prep_unary, F32},
    {"clamp", vk_prep_unary, F32},
    {"leakyRelu", vk_prep_unary, F32},
    {"elu", vk_prep_unary, F32},
    {"softplus", vk_prep_unary, F32},
    {"reciprocal", vk_prep_unary, F32},
    {"floor", vk_prep_unary, F32},
    {"ceil", vk_prep_unary, F32},
    {"sin", vk_prep_unary, F32},
    {"cos", vk_prep_unary, F32},
    {"sign", vk_prep_unary, F32},
    {"softsign", vk_prep_unary, F32},
    {"cast", vk_prep_cast, CASTS},
    {"identity", vk_prep_view, VIEWS},
    {"reshape", vk_prep_view, VIEWS},
    {"squeeze", vk_prep_view, VIEWS},
    {"unsqueeze", vk_prep_view, VIEWS},
    {"transpose", vk_prep_transpose, WORDS},
    {"slice", vk_prep_slice, WORDS},
    {"expand", vk_prep_expand, WORDS},
    {"tile", vk_prep_tile, WORDS},
    {"concat", vk_prep_concat, WORDS},
    {"split", vk_prep_split, WORDS},
    {"gather", vk_prep_gather, WORDS},
    {"gatherElements", vk_prep_gather_elements, WORDS},
    {"triangular", vk_prep_triangular, WORDS},
    {"argMax", vk_prep_arg, F32},
    {"argMin", vk_prep_arg, F32},
    {"cumulativeSum", vk_prep_cumsum, F32},
    {"where", vk_prep_where, VK_BIT(BERTH_DTYPE_U8)},
    {"logicalNot", vk_prep_logical_not, VK_BIT(BERTH_DTYPE_U8)},
    {"pad", vk_prep_pad, F32},
    {"softmax", vk_prep_softmax, F32},
    {"reduceMean", vk_prep_reduce, F32},
    {"reduceSum", vk_prep_reduce, F32},
    {"reduceMax", vk_prep_reduce, F32},
    {"reduceMin", vk_prep_reduce, F32},
    {"reduceProduct", vk_prep_reduce, F32},
    {"reduceL2", vk_prep_reduce, F32},
    {"reduceSumSquare", vk_prep_reduce, F32},
    {"reduceL1", vk_prep_reduce, F32},
    {"reduceLogSum", vk_prep_reduce, F32},
    {"reduceLogSumExp", vk_prep_reduce, F32},
    {"conv2d", vk_prep_conv2d, F32},
    {"convTranspose2d", vk_prep_conv_transpose2d, F32},
    {"averagePool2d", vk_prep_pool2d, F32},
    {"maxPool2d", vk_prep_pool2d, F32},
    {"l2Pool2d", vk_prep_pool2d, F32},
    {"resample2d", vk_prep_resample2d, F32},
    {"layerNormalization", vk_prep_layer_norm, F32},
    {"instanceNormalization", vk_prep_instance_norm, F32},
    {"batchNormalization", vk_prep_batch_norm, F32},
    {"berth.attention", vk_prep_attention, F32},
    {"scatterElements", vk_prep_scatter_elements, WORDS},
    {"quantizeLinear", vk_prep_quantize, F32},
    {"dequantizeLinear", vk_prep_dequantize,
     VK_BIT(BERTH_DTYPE_I8) | VK_BIT(BERTH_DTYPE_U8) | VK_BIT(BERTH_DTYPE_I32) | VK_BIT(BERTH_DTYPE_U32)},
};

const vk_op_info *vk_find_op(const char *name) {
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(ops[i].name, name) == 0) return &ops[i];
    return NULL;
}

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
                vk_dims_str(in[0]->dims, in[0]->rank, s0, sizeof s0);
                vk_dims_str(in[k]->dims, in[k]->rank, s1, sizeof s1);
                return vk_fail(c, "shapes %s and %s do not broadcast (dim %u: %lld vs %lld)", s0, s1, d,
                               (long long)v, (long long)x);
            }
            v = x;
        }
        want[d] = v;
    }
    berth_status st = vk_check_out_dims(c, 0, rank, want);
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
                return vk_unsupported(c, "a dim of %lld elements exceeds the shaders' 32-bit indexing",
                                      (long long)b->dims[d]);
    return BERTH_OK;
}
