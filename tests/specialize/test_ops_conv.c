/* conv2d, convTranspose2d, pools and resample2d: output sizes computed by
 * hand from WebNN's formulas, layouts, groups and the error paths. */
#include "expect.h"

int main(void) {
    /* (32 + 1 + 1 - 3) / 2 + 1 = 16 */
    expect_shape("x: f32[1, 3, 32, 32]; w: f32[8, 3, 3, 3]; b: f32[8];", "",
                 "y = conv2d(x, w, padding=[1, 1, 1, 1], strides=[2, 2], bias=b);", "y", "f32[1, 8, 16, 16]");
    /* dilated 3x3 spans 5: 10 - 5 + 1 = 6, 12 - 5 + 1 = 8; hwio filter */
    expect_shape("x: f32[2, 10, 12, 4]; w: f32[3, 3, 4, 6];", "",
                 "y = conv2d(x, w, dilations=[2, 2], inputLayout=\"nhwc\", filterLayout=\"hwio\");", "y", "f32[2, 6, 8, 6]");
    expect_shape("x: f32[1, 4, 8, 8]; w: f32[4, 1, 3, 3];", "", "y = conv2d(x, w, groups=4);", "y", "f32[1, 4, 6, 6]");
    expect_shape("x: f32[1, 4, 8, 8]; w: f32[6, 3, 3, 4];", "", "y = conv2d(x, w, filterLayout=\"ohwi\");", "y", "f32[1, 6, 6, 6]");
    expect_error("x: f32[1, 3, 8, 8]; w: f32[8, 4, 3, 3];", "", "y = conv2d(x, w);", "y",
                 ERR("m.webnn:5:", "node 'y' (conv2d)", "operand 1 'w' expected 3 input channels", "operand 0 'x' f32[1, 3, 8, 8]", "found f32[8, 4, 3, 3]"));
    expect_error("x: f32[1, 3, 8, 8]; w: f32[8, 3, 3, 3]; b: f32[4];", "", "y = conv2d(x, w, bias=b);", "y",
                 ERR("node 'y' (conv2d)", "option 'bias' 'b' expected f32[8], found f32[4]"));
    expect_error("x: f32[1, 3, 2, 2]; w: f32[8, 3, 3, 3];", "", "y = conv2d(x, w);", "y",
                 ERR("node 'y' (conv2d)", "operand 1 'w' expected a window of at most 2", "found 3"));
    expect_error("x: f32[3, 8, 8]; w: f32[8, 3, 3, 3];", "", "y = conv2d(x, w);", "y",
                 ERR("node 'y' (conv2d)", "operand 0 'x' expected rank 4, found f32[3, 8, 8]"));
    expect_error("x: f32[1, 3, 8, 8]; w: f32[8, 3, 3, 3];", "", "y = conv2d(x, w, filterLayout=\"xyzw\");", "y",
                 ERR("node 'y' (conv2d)", "option 'filterLayout' expected one of oihw", "found \"xyzw\""));

    /* (5 - 1) * 2 + 3 = 11 */
    expect_shape("x: f32[1, 4, 5, 5]; w: f32[4, 2, 3, 3];", "", "y = convTranspose2d(x, w, strides=[2, 2]);", "y", "f32[1, 2, 11, 11]");
    expect_shape("x: f32[1, 4, 5, 5]; w: f32[4, 2, 3, 3];", "",
                 "y = convTranspose2d(x, w, strides=[2, 2], outputPadding=[1, 1]);", "y", "f32[1, 2, 12, 12]");
    expect_shape("x: f32[1, 4, 5, 5]; w: f32[4, 2, 3, 3];", "",
                 "y = convTranspose2d(x, w, strides=[2, 2], outputSizes=[12, 11], groups=2);", "y", "f32[1, 4, 12, 11]");
    expect_error("x: f32[1, 4, 5, 5]; w: f32[4, 2, 3, 3];", "", "y = convTranspose2d(x, w, strides=[2, 2], outputSizes=[14, 14]);", "y",
                 ERR("node 'y' (convTranspose2d)", "option 'outputSizes' expected item 0 in [11, 13), found 14"));
    expect_error("x: f32[1, 4, 5, 5]; w: f32[3, 2, 3, 3];", "", "y = convTranspose2d(x, w);", "y",
                 ERR("node 'y' (convTranspose2d)", "operand 1 'w' expected 4 input channels", "found f32[3, 2, 3, 3]"));

    /* floor((8 - 3) / 2) + 1 = 3; ceil gives 4 */
    expect_shape("x: f32[1, 3, 8, 8];", "", "y = maxPool2d(x, windowDimensions=[3, 3], strides=[2, 2]);", "y", "f32[1, 3, 3, 3]");
    expect_shape("x: f32[1, 3, 8, 8];", "", "y = averagePool2d(x, windowDimensions=[3, 3], strides=[2, 2], roundingType=\"ceil\");", "y", "f32[1, 3, 4, 4]");
    expect_shape("x: f32[1, 3, 8, 8];", "", "y = l2Pool2d(x, windowDimensions=[3, 3], strides=[2, 2], outputSizes=[4, 3]);", "y", "f32[1, 3, 4, 3]");
    expect_shape("x: f32[2, 7, 5, 6];", "", "y = averagePool2d(x, layout=\"nhwc\");", "y", "f32[2, 1, 1, 6]");
    expect_error("x: f32[1, 3, 8, 8];", "", "y = maxPool2d(x, windowDimensions=[9, 9]);", "y",
                 ERR("node 'y' (maxPool2d)", "option 'windowDimensions' expected a window of at most 8", "found 9"));
    expect_error("x: f32[1, 3, 8, 8];", "", "y = maxPool2d(x, windowDimensions=[3, 3], strides=[2, 2], outputSizes=[5, 5]);", "y",
                 ERR("node 'y' (maxPool2d)", "option 'outputSizes' expected item 0 to be 3 or 4, found 5"));
    expect_error("x: f32[1, 3, 8, 8];", "", "y = maxPool2d(x, roundingType=\"up\");", "y",
                 ERR("node 'y' (maxPool2d)", "option 'roundingType' expected \"floor\" or \"ceil\", found \"up\""));

    expect_shape("x: f32[1, 3, 10, 20];", "", "y = resample2d(x, scales=[2.0, 0.5]);", "y", "f32[1, 3, 20, 10]");
    expect_shape("x: f32[1, 3, 10, 20];", "", "y = resample2d(x, sizes=[7, 9], mode=\"linear\");", "y", "f32[1, 3, 7, 9]");
    expect_shape("x: f32[1, 3, 10, 20];", "", "y = resample2d(x, sizes=[5, 6], axes=[1, 2]);", "y", "f32[1, 5, 6, 20]");
    expect_error("x: f32[1, 3, 10, 20];", "", "y = resample2d(x, mode=\"cubic\");", "y",
                 ERR("node 'y' (resample2d)", "option 'mode' expected \"nearest-neighbor\" or \"linear\", found \"cubic\""));
    expect_error("x: f32[1, 3, 10, 20];", "", "y = resample2d(x, scales=[1.0]);", "y",
                 ERR("node 'y' (resample2d)", "expected 2 items each, found 1"));
    return check_exit();
}
