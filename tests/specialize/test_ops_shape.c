/* reshape, transpose, concat, split, slice, gather, gatherElements,
 * scatterElements, expand, squeeze, unsqueeze, cast, pad, tile,
 * triangular, cumulativeSum and shape. */
#include "expect.h"

int main(void) {
    const char *x234 = "x: f32[2, 3, 4];";
    expect_shape(x234, "", "y = reshape(x, [4, -1]);", "y", "f32[4, 6]");
    expect_shape(x234, "", "y = reshape(x, newShape=[24]);", "y", "f32[24]");
    expect_error(x234, "", "y = reshape(x, [5, 5]);", "y",
                 ERR("node 'y' (reshape)", "option 'newShape' expected 24 elements to match operand 0 'x' f32[2, 3, 4]", "found [5, 5] (25)"));
    expect_error(x234, "", "y = reshape(x, [-1, -1]);", "y",
                 ERR("node 'y' (reshape)", "at most one -1", "found [-1, -1]"));
    expect_error(x234, "", "y = reshape(x, [5, -1]);", "y",
                 ERR("node 'y' (reshape)", "expected a -1 that divides 24 elements"));

    expect_shape(x234, "", "y = transpose(x);", "y", "f32[4, 3, 2]");
    expect_shape(x234, "", "y = transpose(x, permutation=[0, 2, 1]);", "y", "f32[2, 4, 3]");
    expect_error(x234, "", "y = transpose(x, permutation=[0, 0, 1]);", "y",
                 ERR("node 'y' (transpose)", "option 'permutation' expected a permutation of 3 axes for f32[2, 3, 4], found [0, 0, 1]"));

    expect_shape("a: f32[2, 3]; b: f32[2, 5];", "", "y = concat([a, b], 1);", "y", "f32[2, 8]");
    expect_shape("a: f32[2, 3]; b: f32[4, 3]; c: f32[1, 3];", "", "y = concat([a, b, c], axis=0);", "y", "f32[7, 3]");
    expect_error("a: f32[2, 3]; b: f32[3, 5];", "", "y = concat([a, b], 1);", "y",
                 ERR("m.webnn:5:", "node 'y' (concat)", "operand 1 'b' expected f32[2, *] to match operand 0 'a' f32[2, 3], found f32[3, 5]"));
    expect_error("a: f32[2, 3]; b: i32[2, 3];", "", "y = concat([a, b], 0);", "y",
                 ERR("node 'y' (concat)", "operand 1 'b' expected f32[*, 3]", "found i32[2, 3]"));

    expect_shape("x: f32[6, 4];", "", "[p, q] = split(x, 2);", "q", "f32[3, 4]");
    expect_shape("x: f32[6, 4];", "", "[p, q] = split(x, [1, 3], axis=1);", "q", "f32[6, 3]");
    expect_error("x: f32[6, 4];", "", "[p, q] = split(x, [2, 3]);", "q",
                 ERR("node 'p' (split)", "option 'splits' expected sizes summing to 6 (dim 0 of f32[6, 4]), found 5"));
    expect_error("x: f32[6, 4];", "", "[p, q] = split(x, 3);", "q",
                 ERR("node 'p' (split)", "expected 3 outputs for splits 3, found 2"));
    expect_error("x: f32[6, 4];", "", "[p, q] = split(x, 4);", "q",
                 ERR("node 'p' (split)", "option 'splits' expected a count >= 1 dividing dim 0 of f32[6, 4], found 4"));

    expect_shape("x: f32[5, 6];", "", "y = slice(x, [1, 2], [3, 4]);", "y", "f32[3, 4]");
    expect_shape("x: f32[5, 6];", "", "y = slice(x, [0, 1], [5, 5], strides=[2, 2]);", "y", "f32[3, 3]");
    expect_error("x: f32[5, 6];", "", "y = slice(x, [3, 0], [3, 1]);", "y",
                 ERR("node 'y' (slice)", "slice of axis 0 expected start + size within 5", "found starts [3, 0] sizes [3, 1]"));
    expect_error("x: f32[5, 6];", "", "y = slice(x, [0], [1]);", "y",
                 ERR("node 'y' (slice)", "expected 2 items for f32[5, 6], found 1, 1, -1"));

    expect_shape("x: f32[5, 6]; i: i64[2, 3];", "", "y = gather(x, i, axis=1);", "y", "f32[5, 2, 3]");
    expect_shape("x: f32[5, 6]; i: i32[];", "", "y = gather(x, i);", "y", "f32[6]");
    expect_error("x: f32[5, 6]; i: f32[2];", "", "y = gather(x, i);", "y",
                 ERR("node 'y' (gather)", "operand 1 'i' expected i32, u32 or i64 indices, found f32[2]"));

    expect_shape("x: f32[4, 5]; i: i64[4, 2];", "", "y = gatherElements(x, i, axis=1);", "y", "f32[4, 2]");
    expect_error("x: f32[4, 5]; i: i64[3, 2];", "", "y = gatherElements(x, i, axis=1);", "y",
                 ERR("node 'y' (gatherElements)", "operand 1 'i' expected the dims of operand 0 'x' f32[4, 5] except axis 1, found i64[3, 2]"));
    expect_shape("x: f32[4, 5]; i: i64[4, 2]; u: f32[4, 2];", "", "y = scatterElements(x, i, u, axis=1);", "y", "f32[4, 5]");
    expect_error("x: f32[4, 5]; i: i64[4, 2]; u: f32[4, 3];", "", "y = scatterElements(x, i, u, axis=1);", "y",
                 ERR("node 'y' (scatterElements)", "operand 2 'u' expected f32[4, 2] (indices' shape), found f32[4, 3]"));

    expect_shape("x: f32[3, 1];", "", "y = expand(x, [2, 3, 4]);", "y", "f32[2, 3, 4]");
    expect_shape("x: f32[3, 4];", "", "y = expand(x, [1, 1]);", "y", "f32[3, 4]");
    expect_error("x: f32[3, 1];", "", "y = expand(x, [2, 4]);", "y",
                 ERR("node 'y' (expand)", "option 'newShape' expected a shape broadcastable with operand 0 'x' f32[3, 1], found [2, 4]"));

    expect_shape("x: f32[1, 3, 1, 4];", "", "y = squeeze(x);", "y", "f32[3, 4]");
    expect_shape("x: f32[1, 3, 1, 4];", "", "y = squeeze(x, axes=[0]);", "y", "f32[3, 1, 4]");
    expect_error("x: f32[1, 3, 1, 4];", "", "y = squeeze(x, axes=[1]);", "y",
                 ERR("node 'y' (squeeze)", "option 'axes' expected dim 1 of f32[1, 3, 1, 4] to be 1, found 3"));
    expect_shape("x: f32[3, 4];", "", "y = unsqueeze(x, axes=[0, 3]);", "y", "f32[1, 3, 4, 1]");
    expect_shape("x: f32[3, 4];", "", "y = unsqueeze(x, [-1]);", "y", "f32[3, 4, 1]");
    expect_error("x: f32[3, 4];", "", "y = unsqueeze(x);", "y", ERR("node 'y' (unsqueeze)", "expected option 'axes', found none"));

    expect_shape("x: f32[3, 4];", "", "y = cast(x, \"int64\");", "y", "i64[3, 4]");
    expect_shape("x: i64[3];", "", "y = cast(x, type=\"float32\");", "y", "f32[3]");
    expect_error("x: f32[3, 4];", "", "y = cast(x, \"bogus\");", "y",
                 ERR("node 'y' (cast)", "option 'type' expected a dtype such as \"float32\" or \"int64\", found \"bogus\""));

    expect_shape("x: f32[2, 3];", "", "y = pad(x, [1, 0], [0, 2]);", "y", "f32[3, 5]");
    expect_shape("x: f32[2, 3];", "", "y = pad(x, [1, 1], [1, 1], mode=\"reflection\");", "y", "f32[4, 5]");
    expect_error("x: f32[2, 3];", "", "y = pad(x, [1], [0, 2]);", "y",
                 ERR("node 'y' (pad)", "expected 2 items for f32[2, 3], found 1 and 2"));

    expect_shape("x: f32[2, 3];", "", "y = tile(x, [2, 2]);", "y", "f32[4, 6]");
    expect_error("x: f32[2, 3];", "", "y = tile(x, [0, 1]);", "y",
                 ERR("node 'y' (tile)", "option 'repetitions' expected 2 items >= 1 for f32[2, 3], found [0, 1]"));

    expect_shape("x: f32[3, 3];", "", "y = triangular(x, upper=false, diagonal=1);", "y", "f32[3, 3]");
    expect_error("x: f32[3];", "", "y = triangular(x);", "y", ERR("node 'y' (triangular)", "operand 0 'x' expected rank >= 2, found f32[3]"));

    expect_shape("x: f32[3, 4];", "", "y = cumulativeSum(x, 1, exclusive=true);", "y", "f32[3, 4]");
    expect_error("x: f32[3, 4];", "", "y = cumulativeSum(x, 2);", "y",
                 ERR("node 'y' (cumulativeSum)", "option 'axis' expected in [-2, 2), found 2"));

    expect_shape(x234, "", "y = shape(x);", "y", "i64[3]");
    expect_error(x234, "", "y = shape(x, x);", "y", ERR("node 'y' (shape)", "expected 1 operand, found 2"));
    return check_exit();
}
