/* Elementwise, data-movement and reduction ops on the vulkan backend:
 * every unary op, comparisons, where, logicalNot, softmax, the reduce
 * family, transpose, slice, expand, concat, split, gather and pad. Each
 * is checked against a reference loop written here, and against the cpu
 * backend on the same graph where it is built. */
#include "vk_harness.h"

/* One-input, one-output graph of `op` with attrs. */
static void unary_graph(tgraph *g, const char *op, berth_dtype tin, uint32_t xr, const int64_t *xd, berth_dtype tout,
                        uint32_t yr, const int64_t *yd, uint32_t na, const berth_attr *attrs) {
    memset(g, 0, sizeof *g);
    uint32_t x = tg_input(g, "x", tin, xr, xd), y = tg_value(g, "y", tout, yr, yd);
    tg_node(g, op, 1, IDX(x), 1, IDX(y), na, attrs);
    tg_output(g, y);
}

static double gelu_ref(double v) { return 0.5 * v * (1.0 + erf(v / sqrt(2.0))); }
static double softsign_ref(double v) { return v / (1.0 + fabs(v)); }

static void test_unary(void) {
    static const struct {
        const char *op;
        double (*f)(double);
    } ops[] = {{"exp", exp}, {"tanh", tanh}, {"sin", sin}, {"cos", cos}, {"erf", erf}, {"gelu", gelu_ref},
               {"floor", floor}, {"ceil", ceil}, {"abs", fabs}, {"softsign", softsign_ref}};
    size_t n = 257;
    float *x = h_randf(n), *got = calloc(n, 4);
    for (size_t i = 0; i < n; i++) x[i] *= 3.0f;
    double *ref = h_zeros(n);
    tgraph g;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        unary_graph(&g, ops[k].op, BERTH_DTYPE_F32, 1, DIMS((int64_t)n), BERTH_DTYPE_F32, 1, DIMS((int64_t)n), 0, NULL);
        for (size_t i = 0; i < n; i++) ref[i] = ops[k].f(x[i]);
        if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) {
            h_close_tol(ops[k].op, got, ref, n, 1e-5, 1e-5);
            h_same_as_cpu(ops[k].op, &g, NULL, (void *const[]){x}, (void *const[]){got});
        }
    }
    /* Attributes: clamp's bounds, leakyRelu's and hardSigmoid's alpha/beta. */
    unary_graph(&g, "clamp", BERTH_DTYPE_F32, 1, DIMS((int64_t)n), BERTH_DTYPE_F32, 1, DIMS((int64_t)n), 2,
                (berth_attr[]){A_FLOAT("minValue", -0.5), A_FLOAT("maxValue", 1.25)});
    for (size_t i = 0; i < n; i++) ref[i] = x[i] < -0.5 ? -0.5 : x[i] > 1.25 ? 1.25 : x[i];
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) h_close("clamp", got, ref, n);
    unary_graph(&g, "leakyRelu", BERTH_DTYPE_F32, 1, DIMS((int64_t)n), BERTH_DTYPE_F32, 1, DIMS((int64_t)n), 1,
                (berth_attr[]){A_FLOAT("alpha", 0.3)});
    for (size_t i = 0; i < n; i++) ref[i] = x[i] >= 0 ? x[i] : 0.3 * x[i];
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) h_close("leakyRelu", got, ref, n);
    unary_graph(&g, "hardSigmoid", BERTH_DTYPE_F32, 1, DIMS((int64_t)n), BERTH_DTYPE_F32, 1, DIMS((int64_t)n), 2,
                (berth_attr[]){A_FLOAT("alpha", 0.25), A_FLOAT("beta", 0.4)});
    for (size_t i = 0; i < n; i++) ref[i] = fmax(0, fmin(1, 0.25 * x[i] + 0.4));
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) h_close("hardSigmoid", got, ref, n);
    free(x), free(got), free(ref);
}

static void test_compare_where_not(void) {
    tgraph g = {0};
    uint32_t a = tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(3, 5)), b = tg_input(&g, "b", BERTH_DTYPE_F32, 1, DIMS(5));
    uint32_t c = tg_value(&g, "c", BERTH_DTYPE_U8, 2, DIMS(3, 5)), nc = tg_value(&g, "nc", BERTH_DTYPE_U8, 2, DIMS(3, 5));
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(3, 5));
    tg_node(&g, "greater", 2, IDX(a, b), 1, IDX(c), 0, NULL);
    tg_node(&g, "logicalNot", 1, IDX(c), 1, IDX(nc), 0, NULL);
    tg_node(&g, "where", 3, IDX(nc, b, a), 1, IDX(y), 0, NULL);
    tg_output(&g, c);
    tg_output(&g, y);
    float *av = h_randf(15), *bv = h_randf(5), yv[15];
    uint8_t cv[15];
    double ref[15];
    for (int i = 0; i < 15; i++) ref[i] = av[i] > bv[i % 5] ? av[i] : bv[i % 5];
    if (h_ok(&g, (void *const[]){av, bv}, (void *const[]){cv, yv})) {
        int cmp_ok = 1;
        for (int i = 0; i < 15; i++) cmp_ok &= cv[i] == (av[i] > bv[i % 5]);
        CHECK(cmp_ok);
        h_close("where", yv, ref, 15);
        h_same_as_cpu("compare/where", &g, NULL, (void *const[]){av, bv}, (void *const[]){cv, yv});
    }
    free(av), free(bv);
}

/* prelu with a per-channel slope; logical ops on uint8 with broadcasting. */
static void test_prelu_logical(void) {
    tgraph g = {0};
    uint32_t x = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(4, 3)), s = tg_input(&g, "s", BERTH_DTYPE_F32, 1, DIMS(3));
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(4, 3));
    tg_node(&g, "prelu", 2, IDX(x, s), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    float *xv = h_randf(12), sv[3] = {0.1f, -2.0f, 0.5f}, yv[12];
    double ref[12];
    for (int i = 0; i < 12; i++) ref[i] = xv[i] >= 0 ? xv[i] : (double)xv[i] * sv[i % 3];
    if (h_ok(&g, (void *const[]){xv, sv}, (void *const[]){yv})) h_close("prelu", yv, ref, 12);
    free(xv);

    static const char *const ops[] = {"logicalAnd", "logicalOr"};
    uint8_t a[10] = {0, 1, 2, 0, 1, 0, 7, 0, 1, 1}, b[5] = {1, 0, 1, 0, 3}, got[10];
    for (int k = 0; k < 2; k++) {
        tgraph g2 = {0};
        uint32_t ai = tg_input(&g2, "a", BERTH_DTYPE_U8, 2, DIMS(2, 5)), bi = tg_input(&g2, "b", BERTH_DTYPE_U8, 1, DIMS(5));
        uint32_t yi = tg_value(&g2, "y", BERTH_DTYPE_U8, 2, DIMS(2, 5));
        tg_node(&g2, ops[k], 2, IDX(ai, bi), 1, IDX(yi), 0, NULL);
        tg_output(&g2, yi);
        if (!h_ok(&g2, (void *const[]){a, b}, (void *const[]){got})) continue;
        int same = 1;
        for (int i = 0; i < 10; i++) {
            int p = a[i] != 0, q = b[i % 5] != 0;
            same &= got[i] == (k == 0 ? (p && q) : (p || q));
        }
        CHECK(same);
        h_same_as_cpu(ops[k], &g2, NULL, (void *const[]){a, b}, (void *const[]){got});
    }
}

static void test_softmax_reduce(void) {
    tgraph g;
    float *x = h_randf(2 * 5 * 3), got[30];
    double ref[30];
    unary_graph(&g, "softmax", BERTH_DTYPE_F32, 3, DIMS(2, 5, 3), BERTH_DTYPE_F32, 3, DIMS(2, 5, 3), 1,
                (berth_attr[]){A_INT("axis", 1)});
    for (int o = 0; o < 2; o++)
        for (int i = 0; i < 3; i++) {
            double m = -1e300, s = 0;
            for (int a = 0; a < 5; a++) m = fmax(m, x[(o * 5 + a) * 3 + i]);
            for (int a = 0; a < 5; a++) s += exp(x[(o * 5 + a) * 3 + i] - m);
            for (int a = 0; a < 5; a++) ref[(o * 5 + a) * 3 + i] = exp(x[(o * 5 + a) * 3 + i] - m) / s;
        }
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) h_close("softmax axis 1", got, ref, 30);

    /* A long row uses the whole group's loop. */
    size_t n = 1000;
    float *xl = h_randf(n), *gl = calloc(n, 4);
    double *rl = h_zeros(n), s = 0;
    unary_graph(&g, "softmax", BERTH_DTYPE_F32, 1, DIMS((int64_t)n), BERTH_DTYPE_F32, 1, DIMS((int64_t)n), 0, NULL);
    for (size_t i = 0; i < n; i++) s += exp(xl[i]);
    for (size_t i = 0; i < n; i++) rl[i] = exp(xl[i]) / s;
    if (h_ok(&g, (void *const[]){xl}, (void *const[]){gl})) h_close("softmax long", gl, rl, n);

    /* reduceSum over axes 0 and 2 of [2, 5, 3], kept as [1, 5, 1]. */
    unary_graph(&g, "reduceSum", BERTH_DTYPE_F32, 3, DIMS(2, 5, 3), BERTH_DTYPE_F32, 3, DIMS(1, 5, 1), 2,
                (berth_attr[]){A_INTS("axes", 2, 0, 2), A_BOOL("keepDimensions", 1)});
    double rs[5] = {0};
    for (int o = 0; o < 2; o++)
        for (int a = 0; a < 5; a++)
            for (int i = 0; i < 3; i++) rs[a] += x[(o * 5 + a) * 3 + i];
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) h_close("reduceSum", got, rs, 5);

    static const char *const reds[] = {"reduceMean", "reduceMax", "reduceMin", "reduceProduct", "reduceL2",
                                       "reduceSumSquare", "reduceL1", "reduceLogSumExp"};
    for (size_t k = 0; k < sizeof reds / sizeof reds[0]; k++) {
        unary_graph(&g, reds[k], BERTH_DTYPE_F32, 3, DIMS(2, 5, 3), BERTH_DTYPE_F32, 1, DIMS(5), 1,
                    (berth_attr[]){A_INTS("axes", 2, 2, 0)});
        double r[5];
        for (int a = 0; a < 5; a++) {
            double acc = k == 1 ? -1e300 : k == 2 ? 1e300 : k == 3 ? 1 : 0;
            for (int o = 0; o < 2; o++)
                for (int i = 0; i < 3; i++) {
                    double v = x[(o * 5 + a) * 3 + i];
                    if (k == 0) acc += v / 6;
                    else if (k == 1) acc = fmax(acc, v);
                    else if (k == 2) acc = fmin(acc, v);
                    else if (k == 3) acc *= v;
                    else if (k == 4 || k == 5) acc += v * v;
                    else if (k == 6) acc += fabs(v);
                    else acc += exp(v);
                }
            r[a] = k == 4 ? sqrt(acc) : k == 7 ? log(acc) : acc;
        }
        if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) {
            h_close(reds[k], got, r, 5);
            h_same_as_cpu(reds[k], &g, NULL, (void *const[]){x}, (void *const[]){got});
        }
    }
    /* Every element of a large tensor: many rows per group. */
    unary_graph(&g, "reduceMean", BERTH_DTYPE_F32, 1, DIMS((int64_t)n), BERTH_DTYPE_F32, 0, DIMS(0), 0, NULL);
    double mean = 0;
    for (size_t i = 0; i < n; i++) mean += xl[i] / (double)n;
    if (h_ok(&g, (void *const[]){xl}, (void *const[]){got})) h_close("reduceMean all", got, &mean, 1);
    free(x), free(xl), free(gl), free(rl);
}

static void test_transpose_slice_expand(void) {
    tgraph g;
    float *x = h_randf(2 * 3 * 4), got[64];
    double ref[64];
    unary_graph(&g, "transpose", BERTH_DTYPE_F32, 3, DIMS(2, 3, 4), BERTH_DTYPE_F32, 3, DIMS(4, 2, 3), 1,
                (berth_attr[]){A_INTS("permutation", 3, 2, 0, 1)});
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 3; k++) ref[(i * 2 + j) * 3 + k] = x[(j * 3 + k) * 4 + i];
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) h_close("transpose", got, ref, 24);

    /* int64 elements move as word pairs. */
    int64_t xi[6] = {1, -2, 3000000000LL, 4, -5, 6}, yi[6];
    unary_graph(&g, "transpose", BERTH_DTYPE_I64, 2, DIMS(2, 3), BERTH_DTYPE_I64, 2, DIMS(3, 2), 0, NULL);
    if (h_ok(&g, (void *const[]){xi}, (void *const[]){yi})) {
        int64_t want[6] = {1, 4, -2, -5, 3000000000LL, 6};
        CHECK(memcmp(yi, want, sizeof want) == 0);
    }

    unary_graph(&g, "tile", BERTH_DTYPE_F32, 2, DIMS(2, 3), BERTH_DTYPE_F32, 2, DIMS(4, 9), 1,
                (berth_attr[]){A_INTS("repetitions", 2, 2, 3)});
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 9; j++) ref[i * 9 + j] = x[(i % 2) * 3 + j % 3];
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) h_close("tile", got, ref, 36);
    int64_t ti[3] = {-9, 8000000000LL, 7}, to[6];
    unary_graph(&g, "tile", BERTH_DTYPE_I64, 1, DIMS(3), BERTH_DTYPE_I64, 1, DIMS(6), 1, (berth_attr[]){A_INTS("repetitions", 1, 2)});
    if (h_ok(&g, (void *const[]){ti}, (void *const[]){to})) {
        int64_t want[6] = {-9, 8000000000LL, 7, -9, 8000000000LL, 7};
        CHECK(memcmp(to, want, sizeof want) == 0);
    }

    unary_graph(&g, "slice", BERTH_DTYPE_F32, 3, DIMS(2, 3, 4), BERTH_DTYPE_F32, 3, DIMS(1, 2, 2), 3,
                (berth_attr[]){A_INTS("starts", 3, 1, 0, 1), A_INTS("sizes", 3, 1, 3, 3), A_INTS("strides", 3, 1, 2, 2)});
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 2; k++) ref[j * 2 + k] = x[(1 * 3 + j * 2) * 4 + 1 + k * 2];
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) {
        h_close("slice", got, ref, 4);
        h_same_as_cpu("slice", &g, NULL, (void *const[]){x}, (void *const[]){got});
    }

    unary_graph(&g, "expand", BERTH_DTYPE_F32, 2, DIMS(3, 1), BERTH_DTYPE_F32, 3, DIMS(2, 3, 4), 0, NULL);
    for (int i = 0; i < 24; i++) ref[i] = x[(i / 4) % 3];
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) h_close("expand", got, ref, 24);

    unary_graph(&g, "pad", BERTH_DTYPE_F32, 2, DIMS(2, 3), BERTH_DTYPE_F32, 2, DIMS(4, 4), 4,
                (berth_attr[]){A_INTS("beginningPadding", 2, 1, 0), A_INTS("endingPadding", 2, 1, 1),
                               A_STR("mode", "reflection"), A_FLOAT("value", 0)});
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int si = i - 1, sj = j;
            si = si < 0 ? -si : si > 1 ? 2 - si : si;
            sj = sj > 2 ? 4 - sj : sj;
            ref[i * 4 + j] = x[si * 3 + sj];
        }
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) {
        h_close("pad reflection", got, ref, 16);
        h_same_as_cpu("pad", &g, NULL, (void *const[]){x}, (void *const[]){got});
    }
    unary_graph(&g, "pad", BERTH_DTYPE_F32, 2, DIMS(2, 3), BERTH_DTYPE_F32, 2, DIMS(3, 5), 3,
                (berth_attr[]){A_INTS("beginningPadding", 2, 1, 1), A_INTS("endingPadding", 2, 0, 1),
                               A_FLOAT("value", 7.5)});
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            ref[i * 5 + j] = (i >= 1 && j >= 1 && j <= 3) ? x[(i - 1) * 3 + j - 1] : 7.5;
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) h_close("pad constant", got, ref, 15);
    free(x);
}

static void test_concat_split_gather(void) {
    tgraph g = {0};
    uint32_t a = tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(2, 3)), b = tg_input(&g, "b", BERTH_DTYPE_F32, 2, DIMS(2, 1));
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(2, 4));
    uint32_t s0 = tg_value(&g, "s0", BERTH_DTYPE_F32, 2, DIMS(2, 2)), s1 = tg_value(&g, "s1", BERTH_DTYPE_F32, 2, DIMS(2, 2));
    tg_node(&g, "concat", 2, IDX(a, b), 1, IDX(y), 1, (berth_attr[]){A_INT("axis", 1)});
    tg_node(&g, "split", 1, IDX(y), 2, IDX(s0, s1), 1, (berth_attr[]){A_INT("axis", -1)});
    tg_output(&g, y);
    tg_output(&g, s1);
    float av[6] = {1, 2, 3, 4, 5, 6}, bv[2] = {7, 8}, yv[8], sv[4];
    if (h_ok(&g, (void *const[]){av, bv}, (void *const[]){yv, sv})) {
        double ry[8] = {1, 2, 3, 7, 4, 5, 6, 8}, rs[4] = {3, 7, 6, 8};
        h_close("concat", yv, ry, 8);
        h_close("split", sv, rs, 4);
    }

    /* gather rows with int64 indices, one negative; and int32 along axis 1. */
    tgraph g2 = {0};
    uint32_t x = tg_input(&g2, "x", BERTH_DTYPE_F32, 2, DIMS(4, 3));
    uint32_t ix = tg_input(&g2, "ix", BERTH_DTYPE_I64, 2, DIMS(2, 2)), iy = tg_input(&g2, "iy", BERTH_DTYPE_I32, 1, DIMS(2));
    uint32_t r = tg_value(&g2, "rows", BERTH_DTYPE_F32, 3, DIMS(2, 2, 3)), c = tg_value(&g2, "cols", BERTH_DTYPE_F32, 2, DIMS(4, 2));
    tg_node(&g2, "gather", 2, IDX(x, ix), 1, IDX(r), 0, NULL);
    tg_node(&g2, "gather", 2, IDX(x, iy), 1, IDX(c), 1, (berth_attr[]){A_INT("axis", 1)});
    tg_output(&g2, r);
    tg_output(&g2, c);
    float *xv = h_randf(12), rv[12], cv[8];
    int64_t ixv[4] = {3, -1, 0, 2};
    int32_t iyv[2] = {2, 0};
    if (h_ok(&g2, (void *const[]){xv, ixv, iyv}, (void *const[]){rv, cv})) {
        double rr[12], rc[8];
        const int rows[4] = {3, 3, 0, 2};
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++) rr[j * 3 + k] = xv[rows[j] * 3 + k];
        for (int i = 0; i < 4; i++) {
            rc[i * 2] = xv[i * 3 + 2];
            rc[i * 2 + 1] = xv[i * 3];
        }
        h_close("gather rows", rv, rr, 12);
        h_close("gather cols", cv, rc, 8);
        h_same_as_cpu("gather", &g2, NULL, (void *const[]){xv, ixv, iyv}, (void *const[]){rv, cv});
    }
    free(xv);
}

/* A reshape chain feeding an output keeps its storage alive to the end. */
static void test_views(void) {
    tgraph g = {0};
    uint32_t x = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(2, 6));
    uint32_t r = tg_value(&g, "r", BERTH_DTYPE_F32, 3, DIMS(3, 2, 2)), e = tg_value(&g, "e", BERTH_DTYPE_F32, 3, DIMS(3, 2, 2));
    uint32_t v = tg_value(&g, "v", BERTH_DTYPE_F32, 1, DIMS(12));
    tg_node(&g, "reshape", 1, IDX(x), 1, IDX(r), 0, NULL);
    tg_node(&g, "exp", 1, IDX(r), 1, IDX(e), 0, NULL);
    tg_node(&g, "reshape", 1, IDX(e), 1, IDX(v), 0, NULL);
    tg_output(&g, v);
    tg_output(&g, r);
    float *xv = h_randf(12), vv[12], rv[12];
    double rv_ref[12], rr[12];
    for (int i = 0; i < 12; i++) {
        rv_ref[i] = exp(xv[i]);
        rr[i] = xv[i];
    }
    if (h_ok(&g, (void *const[]){xv}, (void *const[]){vv, rv})) {
        h_close("view of exp", vv, rv_ref, 12);
        h_close("view of input", rv, rr, 12);
    }
    free(xv);
}

/* cast: saturation from float (NaN gives 0), wrapping between integers,
 * int64 as word pairs and bytes packed four to a word. */
static void test_cast(void) {
    tgraph g;
    float f[7] = {1.9f, -2.7f, NAN, 3e9f, -3e9f, 300.0f, -0.5f};
    int32_t i32[7];
    unary_graph(&g, "cast", BERTH_DTYPE_F32, 1, DIMS(7), BERTH_DTYPE_I32, 1, DIMS(7), 0, NULL);
    if (h_ok(&g, (void *const[]){f}, (void *const[]){i32})) {
        int32_t want[7] = {1, -2, 0, INT32_MAX, INT32_MIN, 300, 0};
        CHECK(memcmp(i32, want, sizeof want) == 0);
        h_same_as_cpu("cast f32->i32", &g, NULL, (void *const[]){f}, (void *const[]){i32});
    }
    uint8_t u8[7];
    unary_graph(&g, "cast", BERTH_DTYPE_F32, 1, DIMS(7), BERTH_DTYPE_U8, 1, DIMS(7), 0, NULL);
    if (h_ok(&g, (void *const[]){f}, (void *const[]){u8})) {
        uint8_t want[7] = {1, 0, 0, 255, 0, 255, 0};
        CHECK(memcmp(u8, want, sizeof want) == 0);
    }
    int64_t i64[5] = {-1, 5000000000LL, -300, 127, 256}, back[5];
    int8_t i8[5];
    float fl[5];
    unary_graph(&g, "cast", BERTH_DTYPE_I64, 1, DIMS(5), BERTH_DTYPE_I8, 1, DIMS(5), 0, NULL);
    if (h_ok(&g, (void *const[]){i64}, (void *const[]){i8})) {
        for (int i = 0; i < 5; i++) CHECK(i8[i] == (int8_t)(uint8_t)(uint64_t)i64[i]);
    }
    unary_graph(&g, "cast", BERTH_DTYPE_I64, 1, DIMS(5), BERTH_DTYPE_F32, 1, DIMS(5), 0, NULL);
    if (h_ok(&g, (void *const[]){i64}, (void *const[]){fl})) {
        double want[5] = {-1, 5e9, -300, 127, 256};
        h_close("cast i64->f32", fl, want, 5);
    }
    int32_t src[5] = {-7, 0, 2147483647, -2147483647 - 1, 42};
    unary_graph(&g, "cast", BERTH_DTYPE_I32, 1, DIMS(5), BERTH_DTYPE_I64, 1, DIMS(5), 0, NULL);
    if (h_ok(&g, (void *const[]){src}, (void *const[]){back})) {
        for (int i = 0; i < 5; i++) CHECK(back[i] == (int64_t)src[i]);
        h_same_as_cpu("cast i32->i64", &g, NULL, (void *const[]){src}, (void *const[]){back});
    }
    float big[3] = {-1e12f, 1e20f, -7.0f};
    unary_graph(&g, "cast", BERTH_DTYPE_F32, 1, DIMS(3), BERTH_DTYPE_I64, 1, DIMS(3), 0, NULL);
    if (h_ok(&g, (void *const[]){big}, (void *const[]){back})) {
        CHECK(back[0] == (int64_t)-1e12f);
        CHECK(back[1] == INT64_MAX); /* saturated, as on the cpu */
        CHECK(back[2] == -7);
    }
}

int main(void) {
    h_start();
    test_unary();
    test_compare_where_not();
    test_prelu_logical();
    test_softmax_reduce();
    test_transpose_slice_expand();
    test_concat_split_gather();
    test_views();
    test_cast();
    h_stop();
    return check_exit();
}
