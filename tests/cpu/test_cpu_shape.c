/* Data movement, softmax and reductions against index-arithmetic
 * references: transpose (given and default permutation), slice with
 * strides, expand, concat, split, gather (negative and clamped indices),
 * pad in every mode, softmax on inner and outer axes, every reduction
 * with and without keepDimensions. */
#include "cpu_harness.h"

static void one_in_one_out(const char *op, uint32_t xr, const int64_t *xd, uint32_t yr, const int64_t *yd,
                           uint32_t na, const berth_attr *attrs, const float *x, float *y) {
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, xr, xd), yi = tg_value(&g, "y", BERTH_DTYPE_F32, yr, yd);
    tg_node(&g, op, 1, IDX(xi), 1, IDX(yi), na, attrs);
    tg_output(&g, yi);
    if (!h_ok(&g, (void *[]){(void *)x}, (void *[]){y})) memset(y, 0xff, h_numel(&g.ops[yi]) * 4);
}

static void test_transpose(void) {
    float *x = h_randf(2 * 3 * 4 * 5), y[120];
    double ref[120];
    int64_t xd[4] = {2, 3, 4, 5}, perm[4] = {2, 0, 3, 1}, yd[4];
    for (int d = 0; d < 4; d++) yd[d] = xd[perm[d]];
    for (int i = 0; i < 120; i++) {
        int64_t yi[4], xi[4];
        h_unravel((size_t)i, 4, yd, yi);
        for (int d = 0; d < 4; d++) xi[perm[d]] = yi[d];
        ref[i] = x[((xi[0] * 3 + xi[1]) * 4 + xi[2]) * 5 + xi[3]];
    }
    one_in_one_out("transpose", 4, xd, 4, yd, 1, (berth_attr[]){A_INTS("permutation", 4, 2, 0, 3, 1)}, x, y);
    h_close("transpose", y, ref, 120);
    /* default: reversed */
    for (int i = 0; i < 120; i++) {
        int64_t yi[4];
        h_unravel((size_t)i, 4, DIMS(5, 4, 3, 2), yi);
        ref[i] = x[((yi[3] * 3 + yi[2]) * 4 + yi[1]) * 5 + yi[0]];
    }
    one_in_one_out("transpose", 4, xd, 4, DIMS(5, 4, 3, 2), 0, NULL, x, y);
    h_close("transpose default", y, ref, 120);
    free(x);
}

static void test_slice_expand(void) {
    float *x = h_randf(6 * 7), y[64];
    double ref[64];
    /* starts [1, 2], sizes [5, 5], strides [2, 3]: sizes is the window
     * read (rows 1..5, columns 2..6), of which every 2nd row and every
     * 3rd column are kept, ceil(5/2) x ceil(5/3) = [3, 2], as the engine
     * infers it */
    int k = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) ref[k++] = x[(1 + 2 * i) * 7 + 2 + 3 * j];
    one_in_one_out("slice", 2, DIMS(6, 7), 2, DIMS(3, 2), 3,
                   (berth_attr[]){A_INTS("starts", 2, 1, 2), A_INTS("sizes", 2, 5, 5), A_INTS("strides", 2, 2, 3)}, x, y);
    h_close("slice strided", y, ref, 6);
    /* a window that ends on a skipped element: [0, 4) step 2 of 5 is [0, 2] */
    ref[0] = x[0], ref[1] = x[2];
    one_in_one_out("slice", 1, DIMS(5), 1, DIMS(2), 3,
                   (berth_attr[]){A_INTS("starts", 1, 0), A_INTS("sizes", 1, 4), A_INTS("strides", 1, 2)}, x, y);
    h_close("slice strided window", y, ref, 2);
    k = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 7; j++) ref[k++] = x[(4 + i) * 7 + j];
    one_in_one_out("slice", 2, DIMS(6, 7), 2, DIMS(2, 7), 2,
                   (berth_attr[]){A_INTS("starts", 2, 4, 0), A_INTS("sizes", 2, 2, 7)}, x, y);
    h_close("slice rows", y, ref, 14);
    /* expand [3, 1] -> [2, 3, 4] */
    for (int i = 0; i < 24; i++) ref[i] = x[(i / 4) % 3];
    one_in_one_out("expand", 2, DIMS(3, 1), 3, DIMS(2, 3, 4), 0, NULL, x, y);
    h_close("expand", y, ref, 24);
    free(x);
}

static void test_concat_split(void) {
    float *a = h_randf(2 * 3 * 2), *b = h_randf(2 * 1 * 2), *c = h_randf(2 * 4 * 2);
    tgraph g = {0};
    uint32_t ai = tg_input(&g, "a", BERTH_DTYPE_F32, 3, DIMS(2, 3, 2)), bi = tg_input(&g, "b", BERTH_DTYPE_F32, 3, DIMS(2, 1, 2));
    uint32_t ci = tg_input(&g, "c", BERTH_DTYPE_F32, 3, DIMS(2, 4, 2));
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 3, DIMS(2, 8, 2));
    uint32_t s0 = tg_value(&g, "s0", BERTH_DTYPE_F32, 3, DIMS(2, 5, 2)), s1 = tg_value(&g, "s1", BERTH_DTYPE_F32, 3, DIMS(2, 3, 2));
    tg_node(&g, "concat", 3, IDX(ai, bi, ci), 1, IDX(y), 1, (berth_attr[]){A_INT("axis", -2)});
    tg_node(&g, "split", 1, IDX(y), 2, IDX(s0, s1), 1, (berth_attr[]){A_INT("axis", 1)});
    tg_output(&g, y);
    tg_output(&g, s0);
    tg_output(&g, s1);
    float yv[32], v0[20], v1[12];
    double ref[32], r0[20], r1[12];
    for (int o = 0; o < 2; o++)
        for (int j = 0; j < 8; j++)
            for (int i = 0; i < 2; i++)
                ref[(o * 8 + j) * 2 + i] = j < 3 ? a[(o * 3 + j) * 2 + i] : j < 4 ? b[o * 2 + i] : c[(o * 4 + j - 4) * 2 + i];
    for (int o = 0; o < 2; o++)
        for (int j = 0; j < 8; j++)
            for (int i = 0; i < 2; i++) {
                if (j < 5) r0[(o * 5 + j) * 2 + i] = ref[(o * 8 + j) * 2 + i];
                else r1[(o * 3 + j - 5) * 2 + i] = ref[(o * 8 + j) * 2 + i];
            }
    if (h_ok(&g, (void *[]){a, b, c}, (void *[]){yv, v0, v1})) {
        h_close("concat", yv, ref, 32);
        h_close("split 0", v0, r0, 20);
        h_close("split 1", v1, r1, 12);
    }
    free(a), free(b), free(c);
}

static void test_gather(void) {
    float *x = h_randf(4 * 5 * 3);
    for (int wide = 0; wide < 2; wide++) {
        tgraph g = {0};
        uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 3, DIMS(4, 5, 3));
        uint32_t ii = tg_input(&g, "i", wide ? BERTH_DTYPE_I64 : BERTH_DTYPE_I32, 2, DIMS(2, 3));
        uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 4, DIMS(4, 2, 3, 3));
        tg_node(&g, "gather", 2, IDX(xi, ii), 1, IDX(y), 1, (berth_attr[]){A_INT("axis", 1)});
        tg_output(&g, y);
        int64_t idx[6] = {0, 4, -1, 2, 99, -99}; /* -1 wraps to 4; 99 clamps to 4; -99 clamps to 0 */
        int64_t eff[6] = {0, 4, 4, 2, 4, 0};
        int32_t idx32[6];
        for (int i = 0; i < 6; i++) idx32[i] = (int32_t)idx[i];
        float yv[72];
        double ref[72];
        for (int o = 0; o < 4; o++)
            for (int j = 0; j < 6; j++)
                for (int i = 0; i < 3; i++) ref[(o * 6 + j) * 3 + i] = x[(o * 5 + eff[j]) * 3 + i];
        if (h_ok(&g, (void *[]){x, wide ? (void *)idx : idx32}, (void *[]){yv})) h_close("gather", yv, ref, 72);
    }
    free(x);
}

static void test_pad(void) {
    float x[6] = {1, 2, 3, 4, 5, 6}; /* [2, 3] */
    /* begin [1, 2], end [1, 1] -> [4, 6] */
    static const char *const modes[] = {"constant", "edge", "reflection"};
    for (int m = 0; m < 3; m++) {
        float y[24];
        double ref[24];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 6; j++) {
                int64_t si = i - 1, sj = j - 2;
                int out = si < 0 || si >= 2 || sj < 0 || sj >= 3;
                if (m == 1) si = si < 0 ? 0 : si > 1 ? 1 : si, sj = sj < 0 ? 0 : sj > 2 ? 2 : sj;
                if (m == 2) {
                    si = si < 0 ? -si : si > 1 ? 2 - si : si;
                    sj = sj < 0 ? -sj : sj > 2 ? 4 - sj : sj;
                }
                ref[i * 6 + j] = (m == 0 && out) ? 9.5 : x[si * 3 + sj];
            }
        one_in_one_out("pad", 2, DIMS(2, 3), 2, DIMS(4, 6), 4,
                       (berth_attr[]){A_INTS("beginningPadding", 2, 1, 2), A_INTS("endingPadding", 2, 1, 1),
                                      A_STR("mode", modes[m]), A_FLOAT("value", 9.5)},
                       x, y);
        h_close(modes[m], y, ref, 24);
    }
}

static void test_softmax(void) {
    float *x = h_randf(3 * 4 * 5), y[60];
    double ref[60];
    for (int axis = 0; axis < 3; axis++) {
        int64_t d[3] = {3, 4, 5};
        size_t inner = 1, outer = 1;
        for (int k = axis + 1; k < 3; k++) inner *= (size_t)d[k];
        for (int k = 0; k < axis; k++) outer *= (size_t)d[k];
        for (size_t o = 0; o < outer; o++)
            for (size_t i = 0; i < inner; i++) {
                double s = 0;
                for (int k = 0; k < d[axis]; k++) s += exp(x[(o * (size_t)d[axis] + (size_t)k) * inner + i]);
                for (int k = 0; k < d[axis]; k++) {
                    size_t at = (o * (size_t)d[axis] + (size_t)k) * inner + i;
                    ref[at] = exp(x[at]) / s;
                }
            }
        int64_t a = axis == 2 ? -1 : axis; /* a negative axis too */
        one_in_one_out("softmax", 3, d, 3, d, 1, (berth_attr[]){A_INT("axis", a)}, x, y);
        h_close("softmax", y, ref, 60);
    }
    free(x);
}

/* A NaN in a softmax row makes the whole row NaN, on the contiguous
 * (vectorized) path and on the strided one alike, and leaves the other
 * rows alone; a row holding +inf has a NaN there (inf - inf). */
static void test_softmax_nan(void) {
    float x[3 * 20], y[3 * 20];
    for (int i = 0; i < 60; i++) x[i] = (float)((i * 7) % 11) / 4.0f - 1.0f;
    x[5] = NAN;           /* row 0 of the last axis, column 0 of the first */
    x[20 + 17] = INFINITY; /* row 1 */
    for (int axis = 0; axis < 2; axis++) {
        int64_t d[2] = {3, 20};
        one_in_one_out("softmax", 2, d, 2, d, 1, (berth_attr[]){A_INT("axis", axis == 0 ? 1 : 0)}, x, y);
        if (axis == 0) { /* rows of 20 */
            int nan0 = 1, fine2 = 1;
            double s = 0;
            for (int k = 0; k < 20; k++) nan0 &= isnan(y[k]);
            for (int k = 0; k < 20; k++) s += y[40 + k], fine2 &= isfinite(y[40 + k]);
            CHECK(nan0);
            CHECK(isnan(y[20 + 17]));
            CHECK(fine2);
            CHECK_NEAR(s, 1.0, 1e-5);
        } else { /* columns of 3: column 5 holds the NaN, column 17 the inf */
            CHECK(isnan(y[5]) && isnan(y[25]) && isnan(y[45]));
            CHECK(isnan(y[37]));
            CHECK_NEAR(y[0] + y[20] + y[40], 1.0, 1e-5);
        }
    }
}

static void test_reduce(void) {
    static const char *const ops[] = {"reduceMean", "reduceSum", "reduceMax", "reduceMin", "reduceProduct",
                                      "reduceL2", "reduceSumSquare"};
    float *x = h_randf(2 * 3 * 4);
    for (int i = 0; i < 24; i++) x[i] += x[i] > 0 ? 0.5f : -0.5f; /* keep products away from 0 */
    for (int o = 0; o < 7; o++)
        for (int variant = 0; variant < 3; variant++) {
            /* 0: axes [0, 2] keep; 1: axes [-2] no keep; 2: default (all) */
            float y[24];
            double ref[24];
            int red[3] = {variant == 0 || variant == 2, variant != 0, variant == 0 || variant == 2};
            int64_t yd[3];
            uint32_t yr = 0;
            for (int d = 0; d < 3; d++) {
                int64_t ext = d == 0 ? 2 : d == 1 ? 3 : 4;
                if (!red[d]) yd[yr++] = ext;
                else if (variant == 0) yd[yr++] = 1;
            }
            size_t n_out = 1;
            for (uint32_t d = 0; d < yr; d++) n_out *= (size_t)yd[d];
            for (size_t q = 0; q < n_out; q++) {
                double acc = o == 4 ? 1 : o == 2 ? -INFINITY : o == 3 ? INFINITY : 0;
                int cnt = 0;
                for (int i = 0; i < 24; i++) {
                    int64_t id[3];
                    h_unravel((size_t)i, 3, DIMS(2, 3, 4), id);
                    size_t key = 0;
                    for (int d = 0; d < 3; d++)
                        if (!red[d]) key = key * (size_t)(d == 0 ? 2 : d == 1 ? 3 : 4) + (size_t)id[d];
                    if (key != q) continue;
                    double v = x[i];
                    cnt++;
                    acc = o == 2 ? fmax(acc, v) : o == 3 ? fmin(acc, v) : o == 4 ? acc * v : (o == 5 || o == 6) ? acc + v * v : acc + v;
                }
                ref[q] = o == 0 ? acc / cnt : o == 5 ? sqrt(acc) : acc;
            }
            static const int64_t ax02[2] = {0, 2}, axm2[1] = {-2};
            berth_attr attrs[2];
            uint32_t na = 0;
            if (variant == 0) {
                attrs[na++] = (berth_attr){.key = "axes", .type = BERTH_ATTR_INTS, .count = 2, .ints = ax02};
                attrs[na++] = A_BOOL("keepDimensions", 1);
            } else if (variant == 1) {
                attrs[na++] = (berth_attr){.key = "axes", .type = BERTH_ATTR_INTS, .count = 1, .ints = axm2};
            }
            one_in_one_out(ops[o], 3, DIMS(2, 3, 4), yr, yd, na, attrs, x, y);
            h_close(ops[o], y, ref, n_out);
        }
    free(x);
}

int main(void) {
    if (!h_open(2)) {
        CHECK(0);
        return check_exit();
    }
    test_transpose();
    test_slice_expand();
    test_concat_split();
    test_gather();
    test_pad();
    test_softmax();
    test_softmax_nan();
    test_reduce();
    h_shutdown();
    return check_exit();
}
