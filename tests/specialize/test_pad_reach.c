/* Whether padding along a dyn dim can reach an output's kept values
 * (berth_spec.pad_reach), op by op: the first node that mixes padded
 * positions in is named, or none where a padded run's trimmed output is
 * what an unpadded run gives. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "util.h"

/* Output o's reach along dyn dim 0 must be `node` (NULL: none). */
static void expect(const char *what, const char *inputs, const char *consts, const char *nodes,
                   const char *outputs, int64_t t, uint32_t o, const char *node) {
    spec_case c;
    int64_t syms[1] = {t};
    spec_open(&c, spec_graph(inputs, consts, nodes, outputs), syms);
    CHECK(c.s != NULL);
    if (!c.s) {
        fprintf(stderr, "%s: %s\n", what, c.err.msg);
        spec_close(&c);
        return;
    }
    const berth_pad_reach *pr = &c.s->pad_reach[o * c.s->n_syms];
    int ok = node ? pr->node && !strcmp(pr->node, node) : !pr->node;
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "%s: output %u reached by %s (%s), expected %s\n", what, o, pr->node ? pr->node : "nothing",
                pr->why ? pr->why : "", node ? node : "nothing");
    spec_close(&c);
}

#define T1 "x: f32[1, dyn(\"t\", 64)];"
#define TW "x: f32[1, 1, 1, dyn(\"t\", 64)];"

int main(void) {
    expect("elementwise", T1, "", "y = relu(x);", "y;", 64, 0, NULL);
    expect("mean over t", T1, "", "m = reduceMean(x, axes=[1]);", "m;", 64, 0, "m");
    expect("mean over another axis", "x: f32[dyn(\"t\", 64), 4];", "", "m = reduceMean(x, axes=[1]);", "m;", 64,
           0, NULL);
    expect("mixed values spread", T1, "",
           "m = reduceMean(x, axes=[1], keepDimensions=true);\n y = sub(x, m);\n z = relu(y);", "z;", 64, 0, "m");
    expect("softmax along t", T1, "", "y = softmax(x, axis=1);", "y;", 64, 0, "y");
    expect("softmax across t", "x: f32[dyn(\"t\", 64), 4];", "", "y = softmax(x, axis=1);", "y;", 64, 0, NULL);
    expect("causal cumulative sum", T1, "", "y = cumulativeSum(x, axis=1);", "y;", 64, 0, NULL);
    expect("reversed cumulative sum", T1, "", "y = cumulativeSum(x, axis=1, reversed=true);", "y;", 64, 0, "y");
    expect("matmul keeping t", "x: f32[dyn(\"t\", 64), 4];", "w: f32[4, 3] @weights(\"w\");", "y = matmul(x, w);",
           "y;", 64, 0, NULL);
    expect("matmul contracting t", "x: f32[dyn(\"t\", 64), 4];", "",
           "xt = transpose(x, permutation=[1, 0]);\n y = matmul(xt, x);", "y;", 64, 0, "y");
    expect("conv, no end padding", TW, "w: f32[1, 1, 1, 3] @weights(\"w\");",
           "y = conv2d(x, w, strides=[1, 2], padding=[0, 0, 2, 0]);", "y;", 64, 0, NULL);
    expect("conv, end padding", TW, "w: f32[1, 1, 1, 3] @weights(\"w\");",
           "y = conv2d(x, w, padding=[0, 0, 1, 1]);", "y;", 64, 0, "y");
    /* 64 and 63 samples make as many frames here (8): the frame axis
     * must still be known to follow t, so the sum over it mixes. */
    expect("strided frames, then a sum", TW, "w: f32[1, 1, 1, 4] @weights(\"w\");",
           "f = conv2d(x, w, strides=[1, 8]);\n s = reduceSum(f);", "s;", 64, 0, "s");
    expect("pool over the whole axis", TW, "", "y = averagePool2d(x);", "y;", 64, 0, "y");
    expect("pool with a window", TW, "", "y = maxPool2d(x, windowDimensions=[1, 4], strides=[1, 4]);", "y;", 64, 0,
           NULL);
    expect("concat after t", T1, "", "y = concat([x, x], 1);", "y;", 64, 0, "y");
    expect("concat of a fixed head", T1, "c: f32[1, 2] @scalar(1.0);", "y = concat([c, x], 1);", "y;", 64, 0, NULL);
    expect("transpose, then mean over t", T1, "",
           "y = transpose(x, permutation=[1, 0]);\n m = reduceMean(y, axes=[0]);", "m;", 64, 0, "m");
    expect("slice from a fixed start", "x: f32[dyn(\"t\", 64)];", "",
           "y = slice(x, [2], [10]);", "y;", 64, 0, NULL);
    expect("slice of the last ten", "x: f32[dyn(\"t\", 64)];", "ten: i64[1] @scalar(10);",
           "n = shape(x);\n st = sub(n, ten);\n y = slice(x, st, ten);", "y;", 64, 0, "y");
    expect("pad at the end", T1, "", "y = pad(x, [0, 0], [0, 3]);", "y;", 64, 0, "y");
    expect("pad at the start", T1, "", "y = pad(x, [0, 3], [0, 0]);", "y;", 64, 0, NULL);
    expect("gather along t", T1, "i: i32[2] @bytes([0, 0, 0, 0, 1, 0, 0, 0]);", "y = gather(x, i, axis=1);", "y;",
           64, 0, "y");
    expect("batch padding", "x: f32[dyn(\"t\", 64), 4];", "w: f32[4, 3] @weights(\"w\");",
           "h = matmul(x, w);\n y = softmax(h, axis=1);", "y;", 64, 0, NULL);
    expect("nothing to pad at 1", T1, "", "m = reduceMean(x, axes=[1]);", "m;", 1, 0, NULL);
    return check_exit();
}
