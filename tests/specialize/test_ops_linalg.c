/* matmul (WebNN batch broadcast, ONNX-style rank-1 promotion), gemm, and
 * (de)quantization. */
#include "expect.h"

int main(void) {
    expect_shape("a: f32[2, 3, 4]; b: f32[4, 5];", "", "y = matmul(a, b);", "y", "f32[2, 3, 5]");
    expect_shape("a: f32[7, 1, 3, 4]; b: f32[6, 4, 2];", "", "y = matmul(a, b);", "y", "f32[7, 6, 3, 2]");
    expect_shape("a: f32[4]; b: f32[2, 4, 5];", "", "y = matmul(a, b);", "y", "f32[2, 5]");
    expect_shape("a: f32[3, 4]; b: f32[4];", "", "y = matmul(a, b);", "y", "f32[3]");
    expect_shape("a: f32[4]; b: f32[4];", "", "y = matmul(a, b);", "y", "f32[]");
    expect_error("a: f32[4, 3]; b: f32[2, 5];", "", "y = matmul(a, b);", "y",
                 ERR("m.webnn:5:", "node 'y' (matmul)", "operand 1 'b' expected f32[..., 3, *]", "operand 0 'a' f32[4, 3]", "found f32[2, 5]"));
    expect_error("a: f32[2, 3, 4]; b: f32[3, 4, 5];", "", "y = matmul(a, b);", "y",
                 ERR("node 'y' (matmul)", "operand 1 'b' expected batch dims broadcastable", "found f32[3, 4, 5]"));
    expect_error("a: f32[]; b: f32[3];", "", "y = matmul(a, b);", "y",
                 ERR("node 'y' (matmul)", "operand 0 'a' expected rank >= 1, found f32[]"));

    expect_shape("a: f32[3, 4]; b: f32[4, 5]; c: f32[5];", "", "y = gemm(a, b, c=c, alpha=0.5);", "y", "f32[3, 5]");
    expect_shape("a: f32[4, 3]; b: f32[5, 4];", "", "y = gemm(a, b, aTranspose=true, bTranspose=true);", "y", "f32[3, 5]");
    expect_error("a: f32[3, 4]; b: f32[5, 4];", "", "y = gemm(a, b);", "y",
                 ERR("node 'y' (gemm)", "operand 1 'b' expected f32 with 4 rows", "found f32[5, 4]"));
    expect_error("a: f32[3, 4]; b: f32[4, 5]; c: f32[3];", "", "y = gemm(a, b, c=c);", "y",
                 ERR("node 'y' (gemm)", "option 'c' 'c' expected f32 broadcastable to [3, 5]", "found f32[3]"));
    expect_error("a: f32[2, 3, 4]; b: f32[4, 5];", "", "y = gemm(a, b);", "y",
                 ERR("node 'y' (gemm)", "operand 0 'a' expected rank 2", "found f32[2, 3, 4]"));

    expect_shape("x: f32[4, 6]; s: f32[4, 2]; z: i8[4, 2];", "", "y = quantizeLinear(x, s, z);", "y", "i8[4, 6]");
    expect_shape("x: u8[4, 6]; s: f32[1]; z: u8[1];", "", "y = dequantizeLinear(x, s, z);", "y", "f32[4, 6]");
    expect_error("x: f32[4, 6]; s: f32[4, 4]; z: i8[4, 4];", "", "y = quantizeLinear(x, s, z);", "y",
                 ERR("node 'y' (quantizeLinear)", "operand 1 's' expected a shape whose dims divide f32[4, 6]", "found f32[4, 4]"));
    expect_error("x: u8[4]; s: f32[1]; z: i8[1];", "", "y = dequantizeLinear(x, s, z);", "y",
                 ERR("node 'y' (dequantizeLinear)", "operand 2 'z' expected u8", "found i8[1]"));
    return check_exit();
}
