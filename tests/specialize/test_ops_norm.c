/* Normalizations, reductions, arg reductions and softmax. */
#include "expect.h"

int main(void) {
    expect_shape("x: f32[2, 3, 4, 4]; m: f32[3]; v: f32[3]; s: f32[3];", "",
                 "y = batchNormalization(x, m, v, scale=s, epsilon=0.001);", "y", "f32[2, 3, 4, 4]");
    expect_shape("x: f32[2, 3, 4, 5]; m: f32[5]; v: f32[5];", "", "y = batchNormalization(x, m, v, axis=3);", "y", "f32[2, 3, 4, 5]");
    expect_error("x: f32[2, 3, 4, 4]; m: f32[4]; v: f32[3];", "", "y = batchNormalization(x, m, v);", "y",
                 ERR("node 'y' (batchNormalization)", "operand 1 'm' expected f32[3], found f32[4]"));
    expect_error("x: f32[2, 3, 4, 4]; m: f32[3]; v: f32[3]; b: f32[2];", "", "y = batchNormalization(x, m, v, bias=b);", "y",
                 ERR("node 'y' (batchNormalization)", "option 'bias' 'b' expected f32[3], found f32[2]"));

    expect_shape("x: f32[2, 3, 4, 4]; s: f32[3];", "", "y = instanceNormalization(x, scale=s);", "y", "f32[2, 3, 4, 4]");
    expect_error("x: f32[2, 3, 4, 4]; s: f32[4];", "", "y = instanceNormalization(x, scale=s);", "y",
                 ERR("node 'y' (instanceNormalization)", "option 'scale' 's' expected f32[3], found f32[4]"));

    expect_shape("x: f32[2, 5, 6]; s: f32[6]; b: f32[6];", "", "y = layerNormalization(x, axes=[2], scale=s, bias=b);", "y", "f32[2, 5, 6]");
    expect_error("x: f32[2, 5, 6]; s: f32[6];", "", "y = layerNormalization(x, scale=s);", "y",
                 ERR("node 'y' (layerNormalization)", "option 'scale' 's' expected f32[5, 6], found f32[6]"));
    expect_error("x: i32[2, 5, 6];", "", "y = layerNormalization(x);", "y",
                 ERR("node 'y' (layerNormalization)", "operand 0 'x' expected f32 or f16, found i32[2, 5, 6]"));

    expect_shape("x: f32[2, 3, 4];", "", "y = reduceMean(x, axes=[1]);", "y", "f32[2, 4]");
    expect_shape("x: f32[2, 3, 4];", "", "y = reduceSum(x, axes=[1], keepDimensions=true);", "y", "f32[2, 1, 4]");
    expect_shape("x: f32[2, 3, 4];", "", "y = reduceMax(x);", "y", "f32[]");
    expect_shape("x: f32[2, 3, 4];", "", "y = reduceL2(x, axes=[-1, 0]);", "y", "f32[3]");
    expect_shape("x: i32[2, 3, 4];", "", "y = reduceProduct(x, axes=[]);", "y", "i32[2, 3, 4]");
    expect_error("x: f32[2, 3, 4];", "", "y = reduceMin(x, axes=[3]);", "y",
                 ERR("node 'y' (reduceMin)", "option 'axes' item expected in [-3, 3), found 3"));
    expect_error("x: f32[2, 3, 4];", "", "y = reduceLogSumExp(x, axes=[1, -2]);", "y",
                 ERR("node 'y' (reduceLogSumExp)", "option 'axes' expected distinct axes, found 1 twice"));

    expect_shape("x: f32[2, 3, 4];", "", "y = argMax(x, 1);", "y", "i32[2, 4]");
    expect_shape("x: f32[2, 3, 4];", "", "y = argMin(x, 2, keepDimensions=true, outputDataType=\"int64\");", "y", "i64[2, 3, 1]");
    expect_error("x: f32[2, 3, 4];", "", "y = argMax(x, 5);", "y",
                 ERR("node 'y' (argMax)", "option 'axis' expected in [-3, 3), found 5"));
    expect_error("x: f32[2, 3, 4];", "", "y = argMax(x, 0, outputDataType=\"float32\");", "y",
                 ERR("node 'y' (argMax)", "option 'outputDataType' expected \"int32\" or \"int64\", found \"float32\""));

    expect_shape("x: f32[2, 3];", "", "y = softmax(x, 1);", "y", "f32[2, 3]");
    expect_shape("x: f32[2, 3];", "", "y = softmax(x, axis=-1);", "y", "f32[2, 3]");
    expect_error("x: f32[2, 3];", "", "y = softmax(x, 2);", "y",
                 ERR("node 'y' (softmax)", "option 'axis' expected in [-2, 2), found 2"));
    return check_exit();
}
