/* Unary f32 ops with every attribute, cast between dtypes, comparisons,
 * where and logicalNot, each against a plain reference. */
#include "cpu_harness.h"

enum { N = 300 };

static int run_unary(const char *op, uint32_t n_attrs, const berth_attr *attrs, const float *x, float *y) {
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(3, 100));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(3, 100));
    tg_node(&g, op, 1, IDX(xi), 1, IDX(yi), n_attrs, attrs);
    tg_output(&g, yi);
    return h_ok(&g, (void *[]){(void *)x}, (void *[]){y});
}

static double ref_unary(const char *op, double v, double a, double b) {
    if (!strcmp(op, "relu")) return v > 0 ? v : 0;
    if (!strcmp(op, "sigmoid")) return 1 / (1 + exp(-v));
    if (!strcmp(op, "tanh")) return tanh(v);
    if (!strcmp(op, "exp")) return exp(v);
    if (!strcmp(op, "log")) return log(v);
    if (!strcmp(op, "sqrt")) return sqrt(v);
    if (!strcmp(op, "abs")) return fabs(v);
    if (!strcmp(op, "neg")) return -v;
    if (!strcmp(op, "erf")) return erf(v);
    if (!strcmp(op, "gelu")) return 0.5 * v * (1 + erf(v / sqrt(2.0)));
    if (!strcmp(op, "hardSigmoid")) return fmax(0, fmin(1, a * v + b));
    if (!strcmp(op, "hardSwish")) return v * fmax(0, fmin(6, v + 3)) / 6;
    if (!strcmp(op, "clamp")) return fmin(fmax(v, a), b);
    if (!strcmp(op, "leakyRelu")) return v >= 0 ? v : a * v;
    if (!strcmp(op, "elu")) return v >= 0 ? v : a * (exp(v) - 1);
    if (!strcmp(op, "softplus")) return log(1 + exp(v));
    if (!strcmp(op, "reciprocal")) return 1 / v;
    if (!strcmp(op, "floor")) return floor(v);
    if (!strcmp(op, "ceil")) return ceil(v);
    if (!strcmp(op, "sin")) return sin(v);
    if (!strcmp(op, "cos")) return cos(v);
    if (!strcmp(op, "sign")) return v > 0 ? 1 : v < 0 ? -1 : 0;
    return NAN;
}

static void test_unary(void) {
    static const char *const plain[] = {"relu", "sigmoid", "tanh", "exp", "log", "sqrt", "abs", "neg", "erf",
                                        "gelu", "hardSwish", "softplus", "reciprocal", "floor", "ceil", "sin",
                                        "cos", "sign"};
    float *x = h_randf(N), y[N];
    double ref[N];
    for (int i = 0; i < N; i++) x[i] *= 4; /* [-4, 4): crosses every kink */
    x[0] = 0;
    for (size_t o = 0; o < sizeof plain / sizeof plain[0]; o++) {
        int positive = !strcmp(plain[o], "log") || !strcmp(plain[o], "sqrt") || !strcmp(plain[o], "reciprocal");
        float xv[N];
        for (int i = 0; i < N; i++) xv[i] = positive ? fabsf(x[i]) + 0.05f : x[i];
        for (int i = 0; i < N; i++) ref[i] = ref_unary(plain[o], xv[i], 0, 0);
        if (run_unary(plain[o], 0, NULL, xv, y)) h_close(plain[o], y, ref, N);
    }
    /* defaults of attributed ops */
    struct { const char *op; double a, b; } defs[] = {
        {"hardSigmoid", 0.2, 0.5}, {"clamp", -INFINITY, INFINITY}, {"leakyRelu", 0.01, 0}, {"elu", 1.0, 0}};
    for (size_t o = 0; o < 4; o++) {
        for (int i = 0; i < N; i++) ref[i] = ref_unary(defs[o].op, x[i], defs[o].a, defs[o].b);
        if (run_unary(defs[o].op, 0, NULL, x, y)) h_close(defs[o].op, y, ref, N);
    }
    /* every attribute set */
    for (int i = 0; i < N; i++) ref[i] = ref_unary("hardSigmoid", x[i], 0.3, 0.1);
    if (run_unary("hardSigmoid", 2, (berth_attr[]){A_FLOAT("alpha", 0.3), A_FLOAT("beta", 0.1)}, x, y))
        h_close("hardSigmoid attrs", y, ref, N);
    for (int i = 0; i < N; i++) ref[i] = ref_unary("clamp", x[i], -1.5, 0.75);
    if (run_unary("clamp", 2, (berth_attr[]){A_FLOAT("minValue", -1.5), A_FLOAT("maxValue", 0.75)}, x, y))
        h_close("clamp attrs", y, ref, N);
    for (int i = 0; i < N; i++) ref[i] = ref_unary("leakyRelu", x[i], 0.2, 0);
    if (run_unary("leakyRelu", 1, (berth_attr[]){A_FLOAT("alpha", 0.2)}, x, y)) h_close("leakyRelu attrs", y, ref, N);
    for (int i = 0; i < N; i++) ref[i] = ref_unary("elu", x[i], 0.5, 0);
    if (run_unary("elu", 1, (berth_attr[]){A_FLOAT("alpha", 0.5)}, x, y)) h_close("elu attrs", y, ref, N);
    free(x);

    /* a large input goes through the pool in chunks */
    enum { BIG = 200000 };
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(BIG));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(BIG));
    tg_node(&g, "sigmoid", 1, IDX(xi), 1, IDX(yi), 0, NULL);
    tg_output(&g, yi);
    float *bx = h_randf(BIG), *by = calloc(BIG, sizeof(float));
    double *bref = h_zeros(BIG);
    for (int i = 0; i < BIG; i++) bref[i] = 1 / (1 + exp(-(double)bx[i]));
    if (h_ok(&g, (void *[]){bx}, (void *[]){by})) h_close("sigmoid big", by, bref, BIG);
    free(bx), free(by), free(bref);
}

static void test_cast(void) {
    float fx[8] = {1.75f, -2.5f, 0.0f, 300.7f, -1e10f, 1e10f, NAN, 3.0f};
    /* float -> int32 truncates, saturates, NaN -> 0 */
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(8));
    uint32_t a = tg_value(&g, "i32", BERTH_DTYPE_I32, 1, DIMS(8));
    uint32_t b = tg_value(&g, "i64", BERTH_DTYPE_I64, 1, DIMS(8));
    uint32_t u = tg_value(&g, "u8", BERTH_DTYPE_U8, 1, DIMS(8));
    uint32_t back = tg_value(&g, "back", BERTH_DTYPE_F32, 1, DIMS(8));
    tg_node(&g, "cast", 1, IDX(xi), 1, IDX(a), 1, (berth_attr[]){A_STR("type", "int32")});
    tg_node(&g, "cast", 1, IDX(a), 1, IDX(b), 1, (berth_attr[]){A_STR("type", "int64")});
    tg_node(&g, "cast", 1, IDX(xi), 1, IDX(u), 1, (berth_attr[]){A_STR("type", "uint8")});
    tg_node(&g, "cast", 1, IDX(b), 1, IDX(back), 1, (berth_attr[]){A_STR("type", "float32")});
    tg_output(&g, a);
    tg_output(&g, b);
    tg_output(&g, u);
    tg_output(&g, back);
    int32_t ya[8];
    int64_t yb[8];
    uint8_t yu[8];
    float yf[8];
    if (h_ok(&g, (void *[]){fx}, (void *[]){ya, yb, yu, yf})) {
        const int32_t wa[8] = {1, -2, 0, 300, INT32_MIN, INT32_MAX, 0, 3};
        const uint8_t wu[8] = {1, 0, 0, 255, 0, 255, 0, 3};
        int ok = 1;
        for (int i = 0; i < 8; i++) ok &= ya[i] == wa[i] && yb[i] == wa[i] && yu[i] == wu[i] && yf[i] == (float)wa[i];
        CHECK(ok);
    }
    /* the short spelling is accepted; a type that contradicts the output is named */
    g.nodes[3].attrs = (berth_attr[]){A_STR("type", "f32")};
    if (h_ok(&g, (void *[]){fx}, (void *[]){ya, yb, yu, yf})) CHECK(yf[3] == 300.0f);
    g.nodes[0].attrs = (berth_attr[]){A_STR("type", "int64")};
    berth_error err;
    CHECK(h_run(&g, (void *[]){fx}, (void *[]){ya, yb, yu, yf}, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "'int64'");
    CHECK_CONTAINS(err.msg, "output dtype int32");
}

/* float16 bit patterns, worked out by hand from IEEE 754 binary16. */
static void test_cast_f16(void) {
    float x[8] = {1.0f, -2.5f, 65504.0f, 1e5f, 0.1f, 1e-7f, 0.0f, 3.0e-5f};
    /* 0.1 -> 0x2e66; 1e-7 -> 1.68 ulps of 2^-24 -> 0x0002; 3e-5 -> 0x01f7 (subnormal, 503.3 ulps) */
    const uint16_t want[8] = {0x3c00, 0xc100, 0x7bff, 0x7c00, 0x2e66, 0x0002, 0x0000, 0x01f7};
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(8));
    uint32_t h = tg_value(&g, "h", BERTH_DTYPE_F16, 1, DIMS(8));
    uint32_t back = tg_value(&g, "back", BERTH_DTYPE_F32, 1, DIMS(8));
    uint32_t i = tg_value(&g, "i", BERTH_DTYPE_I32, 1, DIMS(8));
    tg_node(&g, "cast", 1, IDX(xi), 1, IDX(h), 1, (berth_attr[]){A_STR("type", "float16")});
    tg_node(&g, "cast", 1, IDX(h), 1, IDX(back), 0, NULL);
    tg_node(&g, "cast", 1, IDX(h), 1, IDX(i), 0, NULL);
    tg_output(&g, h);
    tg_output(&g, back);
    tg_output(&g, i);
    uint16_t yh[8];
    float yb[8];
    int32_t yi[8];
    if (!h_ok(&g, (void *[]){x}, (void *[]){yh, yb, yi})) return;
    int ok = 1;
    for (int k = 0; k < 8; k++) ok &= yh[k] == want[k];
    CHECK(ok);
    if (!ok)
        for (int k = 0; k < 8; k++) fprintf(stderr, "  f16[%d] = 0x%04x want 0x%04x\n", k, yh[k], want[k]);
    /* back to float32: exact for representable values, the half's value otherwise */
    CHECK(yb[0] == 1.0f && yb[1] == -2.5f && yb[2] == 65504.0f && isinf(yb[3]) && yb[6] == 0.0f);
    CHECK_NEAR(yb[4], 0.0999755859375, 1e-12);
    CHECK_NEAR(yb[5], 2.0 / 16777216.0, 1e-15);
    CHECK(yi[0] == 1 && yi[1] == -2 && yi[2] == 65504 && yi[3] == INT32_MAX);
}

static void test_compare_where_not(void) {
    static const char *const ops[] = {"equal", "greater", "greaterOrEqual", "lesser", "lesserOrEqual", "notEqual"};
    float a[12], b[4] = {0.0f, 1.0f, -1.0f, 0.5f};
    for (int i = 0; i < 12; i++) a[i] = (float)((i % 5) - 2) * 0.5f;
    for (int o = 0; o < 6; o++) {
        tgraph g = {0};
        uint32_t ai = tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(3, 4)), bi = tg_input(&g, "b", BERTH_DTYPE_F32, 1, DIMS(4));
        uint32_t c = tg_value(&g, "c", BERTH_DTYPE_U8, 2, DIMS(3, 4));
        uint32_t nc = tg_value(&g, "nc", BERTH_DTYPE_U8, 2, DIMS(3, 4));
        uint32_t w = tg_value(&g, "w", BERTH_DTYPE_F32, 2, DIMS(3, 4));
        tg_node(&g, ops[o], 2, IDX(ai, bi), 1, IDX(c), 0, NULL);
        tg_node(&g, "logicalNot", 1, IDX(c), 1, IDX(nc), 0, NULL);
        tg_node(&g, "where", 3, IDX(nc, ai, bi), 1, IDX(w), 0, NULL);
        tg_output(&g, c);
        tg_output(&g, w);
        uint8_t yc[12];
        float yw[12];
        if (!h_ok(&g, (void *[]){a, b}, (void *[]){yc, yw})) continue;
        int ok = 1;
        for (int i = 0; i < 12; i++) {
            float x = a[i], z = b[i % 4];
            int want = o == 0 ? x == z : o == 1 ? x > z : o == 2 ? x >= z : o == 3 ? x < z : o == 4 ? x <= z : x != z;
            ok &= yc[i] == want && yw[i] == (want ? z : x);
        }
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s/where differs\n", ops[o]);
    }
    /* integer comparisons and a where over i32 with a broadcast condition */
    tgraph g = {0};
    uint32_t ai = tg_input(&g, "a", BERTH_DTYPE_I64, 1, DIMS(5)), bi = tg_input(&g, "b", BERTH_DTYPE_I64, 0, NULL);
    uint32_t c = tg_value(&g, "c", BERTH_DTYPE_U8, 1, DIMS(5));
    tg_node(&g, "greater", 2, IDX(ai, bi), 1, IDX(c), 0, NULL);
    uint32_t cond = tg_input(&g, "cond", BERTH_DTYPE_U8, 2, DIMS(2, 1));
    uint32_t ti = tg_input(&g, "t", BERTH_DTYPE_I32, 1, DIMS(3)), fi = tg_input(&g, "f", BERTH_DTYPE_I32, 2, DIMS(2, 3));
    uint32_t w = tg_value(&g, "w", BERTH_DTYPE_I32, 2, DIMS(2, 3));
    tg_node(&g, "where", 3, IDX(cond, ti, fi), 1, IDX(w), 0, NULL);
    tg_output(&g, c);
    tg_output(&g, w);
    int64_t av[5] = {-3, 7, 2, 2, 9}, bv = 2;
    uint8_t cv[2] = {0, 5};
    int32_t tv[3] = {1, 2, 3}, fv[6] = {10, 20, 30, 40, 50, 60}, yw[6];
    uint8_t yc[5];
    if (h_ok(&g, (void *[]){av, &bv, cv, tv, fv}, (void *[]){yc, yw})) {
        CHECK(yc[0] == 0 && yc[1] == 1 && yc[2] == 0 && yc[3] == 0 && yc[4] == 1);
        CHECK(yw[0] == 10 && yw[1] == 20 && yw[2] == 30 && yw[3] == 1 && yw[4] == 2 && yw[5] == 3);
    }
    /* integer division by zero and INT_MIN / -1 are defined: 0 and wrap */
    tgraph h = {0};
    ai = tg_input(&h, "a", BERTH_DTYPE_I32, 1, DIMS(3)), bi = tg_input(&h, "b", BERTH_DTYPE_I32, 1, DIMS(3));
    uint32_t q = tg_value(&h, "q", BERTH_DTYPE_I32, 1, DIMS(3));
    tg_node(&h, "div", 2, IDX(ai, bi), 1, IDX(q), 0, NULL);
    tg_output(&h, q);
    int32_t na[3] = {7, INT32_MIN, -9}, nb[3] = {0, -1, 2}, nq[3];
    if (h_ok(&h, (void *[]){na, nb}, (void *[]){nq})) CHECK(nq[0] == 0 && nq[1] == INT32_MIN && nq[2] == -4);
}

/* A berth.elementwise program of one chain (each step reads the one
 * before and at most a scalar) runs in place, one pass per step; the
 * same steps followed by a multiply by per-row ones, which makes the
 * program a general one, run block by block through registers. Both
 * must give the same bits, and the reference's values, on edge inputs
 * (a NaN stays NaN through every step). */
static double nan_or(double v, double r) { return isnan(v) ? v : r; }
static double ref_max(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static double ref_min(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }

/* the steps' references, S the first step's (the input count) */
#define CHAIN_STEPS(S)                                                                                        \
    0, -1,              /* add x 0.25 */                                                                      \
        S + 0, -2,      /* leakyRelu, alpha 0.2 */                                                            \
        S + 1, -3,      /* max(v, -0.4) */                                                                    \
        -4, S + 2,      /* sub 1.5 - v */                                                                     \
        S + 3, S + 3,   /* mul v * v */                                                                       \
        S + 4, 0,       /* hardSwish */                                                                       \
        S + 5, -5,      /* clamp -1, 5 */                                                                     \
        -7, S + 6,      /* min(2, v) */                                                                       \
        S + 7, -8,      /* div v / 3 */                                                                       \
        S + 8, 0, S + 9, 0, S + 10, 0, /* neg, abs, relu */                                                   \
        S + 11, -9,     /* hardSigmoid 0.3, 0.4 */                                                            \
        S + 12, 0       /* identity */
#define CHAIN_OPS "add leakyRelu max sub mul hardSwish clamp min div neg abs relu hardSigmoid identity"
#define CHAIN_CONSTANTS A_FLOATS("constants", 10, 0.25, 0.2, -0.4, 1.5, -1.0, 5.0, 2.0, 3.0, 0.3, 0.4)

static void test_program_chain(void) {
    enum { C = 3, W = 157 }; /* W: a tail after whole vectors */
    float *x = h_randf(C * W), ya[C * W], yb[C * W], ones[C] = {1, 1, 1};
    double ref[C * W];
    for (int i = 0; i < C * W; i++) x[i] *= 8;
    const float edges[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, -3.0f, 3.0f, -1e30f, 1e30f, 1e-40f, -0.25f};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) x[i * 13] = edges[i];
    for (int i = 0; i < C * W; i++) {
        float v = x[i] + 0.25f;
        v = v >= 0 ? v : 0.2f * v;
        v = (float)ref_max(v, -0.4f);
        v = 1.5f - v;
        v = v * v;
        v = (float)nan_or(v, v <= -3 ? 0 : v >= 3 ? v : v * (v + 3) / 6);
        v = (float)nan_or(v, v < -1 ? -1 : v > 5 ? 5 : v);
        v = (float)ref_min(2, v);
        v = fabsf(-(v / 3));
        v = (float)nan_or(v, v > 0 ? v : 0);
        ref[i] = nan_or(v, fmin(1, fmax(0, 0.3 * v + 0.4)));
    }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(C, W));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(C, W));
    tg_node(&g, "berth.elementwise", 1, IDX(xi), 1, IDX(yi), 3,
            (berth_attr[]){A_STR("ops", CHAIN_OPS), A_INTS("steps", 28, CHAIN_STEPS(1)), CHAIN_CONSTANTS});
    tg_output(&g, yi);
    if (h_ok(&g, (void *[]){x}, (void *[]){ya})) h_close("program (chain)", ya, ref, C * W);

    tgraph u = {0};
    xi = tg_input(&u, "x", BERTH_DTYPE_F32, 2, DIMS(C, W));
    uint32_t oi = tg_input(&u, "ones", BERTH_DTYPE_F32, 2, DIMS(C, 1));
    yi = tg_value(&u, "y", BERTH_DTYPE_F32, 2, DIMS(C, W));
    tg_node(&u, "berth.elementwise", 2, IDX(xi, oi), 1, IDX(yi), 3,
            (berth_attr[]){A_STR("ops", CHAIN_OPS " mul"), A_INTS("steps", 30, CHAIN_STEPS(2), 2 + 13, 1),
                           CHAIN_CONSTANTS});
    tg_output(&u, yi);
    if (h_ok(&u, (void *[]){x, ones}, (void *[]){yb})) h_close("program (general)", yb, ref, C * W);
    CHECK(memcmp(ya, yb, sizeof ya) == 0);
    free(x);
}

int main(void) {
    if (!h_open(2)) {
        CHECK(0);
        return check_exit();
    }
    test_unary();
    test_cast();
    test_cast_f16();
    test_compare_where_not();
    test_program_chain();
    h_shutdown();
    return check_exit();
}
