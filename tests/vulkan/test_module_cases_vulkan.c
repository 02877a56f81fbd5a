/* The table of op cases (apps/check/op_cases.c) on the vulkan module.
 * `minimum` lists the cases the module passes today: one of them turning
 * unsupported or wrong fails this test. A case it does not support yet
 * is reported, not failed; once it passes, add it here. Exits 77
 * (skipped) only when the machine has no Vulkan device at all. */
#include <stdio.h>
#include <string.h>

#include "op_cases.h"

static const char *const minimum[] = {
    "add broadcast row", "add broadcast column", "sub broadcast row", "mul broadcast column",
    "div broadcast row", "pow broadcast row", "max broadcast column", "min broadcast row",
    "prelu broadcast row", "add int32", "mul int32", "div int32 truncates", "equal", "notEqual", "greater",
    "greaterOrEqual", "lesser", "lesserOrEqual", "logicalAnd", "logicalOr", "logicalNot", "where broadcast",
    "identity", "relu", "abs", "neg", "sign", "clamp", "leakyRelu", "elu", "sigmoid", "hardSigmoid",
    "hardSwish", "softplus", "softsign", "tanh", "gelu", "erf", "sqrt", "exp", "log", "ceil", "floor",
    "reciprocal", "sin", "cos", "cast float32 to int32", "cast int32 to float32", "matmul 2-D",
    "matmul batched", "matmul broadcast batch", "gemm alpha beta c bTranspose", "conv2d padding strides bias",
    "conv2d groups", "convTranspose2d strides padding", "averagePool2d", "maxPool2d", "l2Pool2d",
    "resample2d nearest scales", "resample2d linear sizes", "batchNormalization", "instanceNormalization",
    "layerNormalization", "reduceMean", "reduceSum", "reduceMax", "reduceMin", "reduceProduct", "reduceL1",
    "reduceL2", "reduceLogSum", "reduceLogSumExp", "reduceSumSquare", "reduceSum axis 0 keepDimensions",
    "reduceMax axis 0 keepDimensions", "argMax", "argMin", "softmax", "cumulativeSum",
    "cumulativeSum exclusive reversed", "reshape", "transpose", "concat", "split", "slice strided", "gather",
    "gatherElements", "scatterElements", "expand", "squeeze", "unsqueeze", "pad constant", "pad reflection",
    "pad edge", "tile", "triangular upper", "triangular lower diagonal 1", "quantizeLinear uint8",
    "dequantizeLinear int8 blockwise", "berth.matmulEpilogue", "berth.attention",
    "berth.matmulQuantized int8 three blocks bias gelu residual", "berth.matmulQuantized uint8 per column",
    "berth.matmulQuantized int4 odd count bias relu", "berth.matmulQuantized uint4 deep residual",
    "berth.gatherQuantized int8 int64 indices", "berth.gatherQuantized uint4 odd count int32 indices",
    "berth.matmulQuantized int4 no zero point tanh", "berth.gatherQuantized int8 no zero point",
    "dequantizeLinear int4 odd count", "dequantizeLinear uint4 odd count", "gather out of range clamps",
    "gather int64 out of range clamps", "gatherElements out of range clamps",
    "berth.gatherQuantized int8 int64 out of range clamps", "berth.gatherQuantized uint4 int32 out of range clamps",
};

int main(void) {
    mh_host host;
    mh_module m;
    berth_error err;
    mh_host_init(&host);
    if (mh_load(&m, BERTH_VULKAN_MODULE, &host, &err) != BERTH_OK) {
        fprintf(stderr, "the vulkan module did not load: %s\n", err.msg);
        return 1;
    }
    berth_status st = mh_open(&m, &err);
    if (st == BERTH_ERR_DEVICE &&
        (strstr(err.msg, "no Vulkan device") || strstr(err.msg, "no usable Vulkan driver"))) {
        fprintf(stderr, "SKIP: this machine has no Vulkan device (%s)\n", err.msg);
        mh_unload(&m);
        return 77;
    }
    if (st != BERTH_OK) {
        fprintf(stderr, "open: %s\n", err.msg);
        mh_unload(&m);
        return 1;
    }
    return oc_test_module(&m, minimum, sizeof minimum / sizeof minimum[0]);
}
