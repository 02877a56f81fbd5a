/* Unary ops keep shape and dtype; float-only ops refuse integers; prelu's
 * slope broadcasts to the input; clamp checks its bounds. */
#include "expect.h"

int main(void) {
    static const char *float_ops[] = {"sigmoid", "tanh", "gelu", "erf", "sqrt", "exp", "log",
                                      "softplus", "softsign", "hardSwish", "hardSigmoid", "elu",
                                      "leakyRelu", "ceil", "floor", "reciprocal", "sin", "cos", NULL};
    char node[128];
    for (int i = 0; float_ops[i]; i++) {
        snprintf(node, sizeof node, "y = %s(x);", float_ops[i]);
        expect_shape("x: f32[2, 3, 4];", "", node, "y", "f32[2, 3, 4]");
        char want[64];
        snprintf(want, sizeof want, "node 'y' (%s)", float_ops[i]);
        expect_error("x: i32[2];", "", node, "y", ERR(want, "operand 0 'x' expected f32 or f16", "found i32[2]"));
    }
    static const char *any_ops[] = {"relu", "abs", "neg", "sign", "identity", NULL};
    for (int i = 0; any_ops[i]; i++) {
        snprintf(node, sizeof node, "y = %s(x);", any_ops[i]);
        expect_shape("x: i64[5];", "", node, "y", "i64[5]");
    }
    expect_shape("x: u8[3, 2];", "", "y = logicalNot(x);", "y", "u8[3, 2]");
    expect_error("x: f32[3];", "", "y = logicalNot(x);", "y", ERR("node 'y' (logicalNot)", "operand 0 'x' expected u8", "found f32[3]"));
    expect_shape("x: f32[1, 3, 4, 4]; s: f32[3, 1, 1];", "", "y = prelu(x, s);", "y", "f32[1, 3, 4, 4]");
    expect_error("x: f32[3]; s: f32[2, 3];", "", "y = prelu(x, s);", "y",
                 ERR("node 'y' (prelu)", "operand 1 's' expected a shape broadcastable to f32[3]", "found f32[2, 3]"));
    expect_shape("x: f32[4];", "", "y = clamp(x, minValue=0, maxValue=6);", "y", "f32[4]");
    expect_error("x: f32[4];", "", "y = clamp(x, minValue=2, maxValue=1);", "y",
                 ERR("node 'y' (clamp)", "option 'minValue' expected <= maxValue 1, found 2"));
    expect_error("x: f32[4];", "", "y = clamp(x, minValue=\"a\");", "y",
                 ERR("node 'y' (clamp)", "option 'minValue' expected a number, found a string"));
    expect_shape("x: f32[4];", "", "y = leakyRelu(x, alpha=0.1);", "y", "f32[4]");
    expect_error("x: f32[4];", "", "y = hardSigmoid(x, alpha=0.2, beta=true);", "y",
                 ERR("node 'y' (hardSigmoid)", "option 'beta' expected a number, found a boolean"));
    expect_error("x: f32[4];", "", "y = clamp(x, minValue={a: 1});", "y",
                 ERR("node 'y' (clamp)", "option 'minValue'", "unsupported object option"));
    return check_exit();
}
