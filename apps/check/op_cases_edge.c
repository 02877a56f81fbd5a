/* Generated edge-value cases: every elementwise op and every reduction
 * fed +-0, +-inf, NaN, subnormals, huge, negative, integral and small
 * fractional values, with the answers the op contract states (BERTH_EDGE
 * in include/berth/ops.def) computed by the plain reference below, in
 * double, rounded once to float32 as a float32 op would be, never by a
 * backend. A binary op takes every pair of values (a column against a
 * row, so broadcasting runs too); a reduction, argMax, argMin, softmax
 * and cumulativeSum take rows that each hold one edge (a NaN, a -inf, a
 * row of only -inf, a +inf, huge values) and an empty axis.
 *
 * Where an input is subnormal, the contract lets a backend read it as a
 * zero of its sign: the cases carry that answer too (want_alt). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "op_cases_build.h"

/* ---- values ---- */

#define NE 23
static const float EV[NE] = {0.0f,  -0.0f, INFINITY, -INFINITY, NAN,   1e-40f, -1e-40f, 3e38f,
                             -3e38f, -3.0f, -2.0f,    -1.0f,     -0.5f, 0.5f,   1.0f,    2.0f,
                             3.0f,   0.25f, 1.5f,     20.5f,     -20.5f, 100.0f, -100.0f};

/* A double rounded to float32 as an op's result would be: out of range
 * is an infinity (a C conversion there would be undefined). */
static double to_f32(double v) {
    if (isfinite(v) && fabs(v) >= 0x1.ffffffp127) return v > 0 ? INFINITY : -INFINITY;
    return (double)(float)v;
}
/* A subnormal read as zero of its sign, as a GPU may. */
static double ftz(double v) { return fpclassify((float)v) == FP_SUBNORMAL ? copysign(0.0, v) : v; }
static int has_subnormal(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (fpclassify(x[i]) == FP_SUBNORMAL) return 1;
    return 0;
}

/* ---- the reference: the contract's answer in double ---- */

static double nan_max(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static double nan_min(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }

double oc_binary_ref(const char *op, double a, double b) {
    if (!strcmp(op, "add")) return a + b;
    if (!strcmp(op, "sub")) return a - b;
    if (!strcmp(op, "mul")) return a * b;
    if (!strcmp(op, "div")) return a / b;
    if (!strcmp(op, "max")) return nan_max(a, b);
    if (!strcmp(op, "min")) return nan_min(a, b);
    if (!strcmp(op, "pow")) return pow(a, b); /* C99 Annex F's pow is the contract's */
    if (!strcmp(op, "prelu")) return a >= 0 ? a : a * b;
    if (!strcmp(op, "equal")) return a == b;
    if (!strcmp(op, "notEqual")) return a != b;
    if (!strcmp(op, "greater")) return a > b;
    if (!strcmp(op, "greaterOrEqual")) return a >= b;
    if (!strcmp(op, "lesser")) return a < b;
    if (!strcmp(op, "lesserOrEqual")) return a <= b;
    if (!strcmp(op, "logicalAnd")) return a != 0 && b != 0;
    if (!strcmp(op, "logicalOr")) return a != 0 || b != 0;
    fprintf(stderr, "op_cases: no reference for '%s'\n", op);
    abort();
}

/* Options of the parameterized activations in these cases. */
#define CLAMP_LO -1.0
#define CLAMP_HI 2.0
#define ALPHA 0.5
#define BETA 0.25

double oc_unary_ref(const char *op, double x) {
    if (!strcmp(op, "identity")) return x;
    if (!strcmp(op, "relu")) return isnan(x) ? x : x < 0 ? 0 : x;
    if (!strcmp(op, "abs")) return fabs(x);
    if (!strcmp(op, "neg")) return -x;
    if (!strcmp(op, "sign")) return isnan(x) || x == 0 ? x : x > 0 ? 1 : -1;
    if (!strcmp(op, "clamp")) return x < CLAMP_LO ? CLAMP_LO : x > CLAMP_HI ? CLAMP_HI : x;
    if (!strcmp(op, "leakyRelu")) return x >= 0 ? x : (float)ALPHA * x;
    if (!strcmp(op, "elu")) return x >= 0 ? x : ALPHA * expm1(x);
    if (!strcmp(op, "sigmoid")) return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
    if (!strcmp(op, "hardSigmoid")) {
        double v = ALPHA * x + BETA;
        return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    if (!strcmp(op, "hardSwish")) return x <= -3 ? 0 : x >= 3 ? x : x * (x + 3) / 6;
    if (!strcmp(op, "softplus")) return x > 20 ? x : log1p(exp(x));
    if (!strcmp(op, "softsign")) return isinf(x) ? copysign(1.0, x) : x / (1 + fabs(x));
    if (!strcmp(op, "tanh")) return tanh(x);
    if (!strcmp(op, "gelu")) return x < -10 ? 0 : x * 0.5 * (1 + erf(x / sqrt(2.0)));
    if (!strcmp(op, "erf")) return erf(x);
    if (!strcmp(op, "sqrt")) return sqrt(x);
    if (!strcmp(op, "exp")) return exp(x);
    if (!strcmp(op, "log")) return log(x);
    if (!strcmp(op, "ceil")) return ceil(x);
    if (!strcmp(op, "floor")) return floor(x);
    if (!strcmp(op, "reciprocal")) return 1 / x;
    if (!strcmp(op, "sin")) return sin(x);
    if (!strcmp(op, "cos")) return cos(x);
    fprintf(stderr, "op_cases: no reference for '%s'\n", op);
    abort();
}

/* ---- elementwise float32 ---- */

/* Values an op's case takes: sin and cos keep to |x| <= 1e4, where the
 * contract's tolerance holds. */
static size_t values_for(const char *op, float *x) {
    size_t n = 0;
    int bounded = !strcmp(op, "sin") || !strcmp(op, "cos");
    for (size_t i = 0; i < NE; i++)
        if (!bounded || !(fabsf(EV[i]) > 1e4f)) x[n++] = EV[i];
    return n;
}

/* One slot of static storage per case: a case's data must outlive its
 * build call (the runner plans after it returns). */
#define SLOTS 64

void c_edge_unary(oc_case *c, const char *op) {
    static float xs[SLOTS][NE];
    static double want[SLOTS][NE], alt[SLOTS][NE];
    static int slot;
    int s = slot++ % SLOTS;
    size_t n = values_for(op, xs[s]);
    for (size_t i = 0; i < n; i++) {
        want[s][i] = to_f32(oc_unary_ref(op, xs[s][i]));
        alt[s][i] = to_f32(oc_unary_ref(op, ftz(xs[s][i])));
    }
    uint32_t a = in(c, "x", F32, 1, DIMS((int64_t)n), xs[s]);
    uint32_t o = out_f(c, "y", 1, DIMS((int64_t)n), want[s]);
    c->want_alt[0] = has_subnormal(xs[s], n) ? alt[s] : NULL;
    oc_unary_node(c, op, a, o);
}

void oc_unary_node(oc_case *c, const char *op, uint32_t a, uint32_t o) {
    if (!strcmp(op, "clamp"))
        node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_FLOAT("minValue", CLAMP_LO), A_FLOAT("maxValue", CLAMP_HI)));
    else if (!strcmp(op, "leakyRelu") || !strcmp(op, "elu"))
        node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_FLOAT("alpha", ALPHA)));
    else if (!strcmp(op, "hardSigmoid"))
        node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_FLOAT("alpha", ALPHA), A_FLOAT("beta", BETA)));
    else
        node(c, op, 1, IDX(a), 1, IDX(o), 0, NULL);
}

/* y[i][j] = op(a[i], b[j]) over every pair of edge values: a is [NE, 1],
 * b is [NE]. */
void c_edge_binary(oc_case *c, const char *op) {
    static double want[16][NE * NE], alt[16][NE * NE];
    static int64_t want_u8[8][NE * NE];
    static int slot, slot_u8;
    int cmp = strcmp(op, "equal") == 0 || strcmp(op, "notEqual") == 0 || strncmp(op, "greater", 7) == 0 ||
              strncmp(op, "lesser", 6) == 0;
    int s = cmp ? slot_u8++ % 8 : slot++ % 16;
    for (size_t i = 0; i < NE; i++)
        for (size_t j = 0; j < NE; j++) {
            double r = oc_binary_ref(op, EV[i], EV[j]);
            if (cmp)
                want_u8[s][i * NE + j] = (int64_t)r;
            else {
                want[s][i * NE + j] = to_f32(r);
                alt[s][i * NE + j] = to_f32(oc_binary_ref(op, ftz(EV[i]), ftz(EV[j])));
            }
        }
    uint32_t a = in(c, "a", F32, 2, DIMS(NE, 1), EV), b = in(c, "b", F32, 1, DIMS(NE), EV);
    uint32_t o;
    if (cmp) {
        /* the compare itself needs no alternative: a subnormal read as 0
         * changes an order, so the contract's compare reads it exactly */
        o = out_i(c, "y", U8, 2, DIMS(NE, NE), want_u8[s]);
    } else {
        o = out_f(c, "y", 2, DIMS(NE, NE), want[s]);
        c->want_alt[0] = alt[s];
    }
    node(c, op, 2, IDX(a, b), 1, IDX(o), 0, NULL);
}

/* ---- integers: wrap-around, division by zero, MIN / -1 ---- */

#define NI 11
static const int32_t I32V[NI] = {0, 1, -1, 2, -2, 7, -7, 31, INT32_MAX, INT32_MIN, INT32_MIN + 1};
static const int64_t I64V[NI] = {0, 1, -1, 2, -2, 7, -7, 63, INT64_MAX, INT64_MIN, ((int64_t)1 << 32) + 1};

static uint64_t ipow_wrap(int64_t b, int64_t e) {
    if (e < 0) return b == 1 ? 1u : b == -1 ? ((e & 1) ? UINT64_MAX : 1u) : 0u;
    uint64_t r = 1, x = (uint64_t)b;
    for (uint64_t k = (uint64_t)e; k; k >>= 1, x *= x)
        if (k & 1) r *= x;
    return r;
}

/* op on two's complement values of `bits` bits, wrapping; the result as
 * that type's value. */
static int64_t edge_int(const char *op, int64_t a, int64_t b, int bits) {
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b, r;
    int64_t lo = bits == 32 ? INT32_MIN : INT64_MIN;
    if (!strcmp(op, "add")) r = ua + ub;
    else if (!strcmp(op, "sub")) r = ua - ub;
    else if (!strcmp(op, "mul")) r = ua * ub;
    else if (!strcmp(op, "div")) r = b == 0 ? 0 : (a == lo && b == -1) ? (uint64_t)lo : (uint64_t)(a / b);
    else if (!strcmp(op, "max")) r = (uint64_t)(a > b ? a : b);
    else if (!strcmp(op, "min")) r = (uint64_t)(a < b ? a : b);
    else if (!strcmp(op, "pow")) r = ipow_wrap(a, b);
    else return oc_binary_ref(op, (double)a, (double)b) != 0; /* comparisons: exact on these values */
    if (bits == 32) return (int32_t)(uint32_t)r;
    return (int64_t)r;
}

static void edge_int_case(oc_case *c, const char *op, int bits) {
    static int64_t want[32][NI * NI];
    static int slot;
    int s = slot++ % 32;
    int cmp = strcmp(op, "equal") == 0 || strcmp(op, "notEqual") == 0 || strncmp(op, "greater", 7) == 0 ||
          strncmp(op, "lesser", 6) == 0;
    for (size_t i = 0; i < NI; i++)
        for (size_t j = 0; j < NI; j++)
            want[s][i * NI + j] = bits == 32 ? edge_int(op, I32V[i], I32V[j], 32) : edge_int(op, I64V[i], I64V[j], 64);
    berth_dtype t = bits == 32 ? I32 : I64;
    const void *v = bits == 32 ? (const void *)I32V : (const void *)I64V;
    uint32_t a = in(c, "a", t, 2, DIMS(NI, 1), v), b = in(c, "b", t, 1, DIMS(NI), v);
    uint32_t o = out_i(c, "y", cmp ? U8 : t, 2, DIMS(NI, NI), want[s]);
    node(c, op, 2, IDX(a, b), 1, IDX(o), 0, NULL);
}
void c_edge_int32(oc_case *c, const char *op) { edge_int_case(c, op, 32); }
void c_edge_int64(oc_case *c, const char *op) { edge_int_case(c, op, 64); }

/* ---- cast ---- */

/* float to integer: truncated toward zero, saturated, NaN 0 */
static int64_t sat_trunc(double v, double lo, double hi) {
    if (isnan(v)) return 0;
    v = trunc(v);
    return v <= lo ? (int64_t)lo : v >= hi ? (int64_t)hi : (int64_t)v;
}

void c_edge_cast_from_f32(oc_case *c, const char *type) {
    static int64_t want[4][NE];
    static int slot;
    int s = slot++ % 4;
    berth_dtype t = !strcmp(type, "int32") ? I32 : !strcmp(type, "int64") ? I64 : !strcmp(type, "uint8") ? U8
                                                                                               : BERTH_DTYPE_U32;
    for (size_t i = 0; i < NE; i++) {
        double v = EV[i];
        switch (t) {
        case I32: want[s][i] = sat_trunc(v, INT32_MIN, INT32_MAX); break;
        case U8: want[s][i] = sat_trunc(v, 0, UINT8_MAX); break;
        case BERTH_DTYPE_U32: want[s][i] = sat_trunc(v, 0, UINT32_MAX); break;
        default: /* int64: the bounds are not doubles; +-3e38 and inf saturate */
            want[s][i] = isnan(v) ? 0 : v >= 0x1p63 ? INT64_MAX : v <= -0x1p63 ? INT64_MIN : (int64_t)trunc(v);
        }
    }
    uint32_t a = in(c, "x", F32, 1, DIMS(NE), EV);
    uint32_t o = out_i(c, "y", t, 1, DIMS(NE), want[s]);
    node(c, "cast", 1, IDX(a), 1, IDX(o), ATTRS(A_STR("type", type)));
}

void c_edge_cast_to_f32(oc_case *c, const char *from) {
    /* integers to float32 round to nearest even: 2^31 - 1 is 2^31,
     * 2^53 + 1 is 2^53, INT64_MIN is -2^63 exactly */
    static const int32_t x32[5] = {INT32_MAX, INT32_MIN, 16777217, -16777217, 0};
    static const double w32[5] = {0x1p31, -0x1p31, 16777216, -16777216, 0};
    static const int64_t x64[5] = {INT64_MAX, INT64_MIN, ((int64_t)1 << 53) + 1, -((int64_t)1 << 40) - 1, -1};
    static const double w64[5] = {0x1p63, -0x1p63, 0x1p53, -0x1p40, -1};
    int wide = !strcmp(from, "int64");
    uint32_t a = in(c, "x", wide ? I64 : I32, 1, DIMS(5), wide ? (const void *)x64 : (const void *)x32);
    uint32_t o = out_f(c, "y", 1, DIMS(5), wide ? w64 : w32);
    node(c, "cast", 1, IDX(a), 1, IDX(o), ATTRS(A_STR("type", "float32")));
}

/* ---- where and logical ---- */

void c_edge_where(oc_case *c, const char *op) {
    /* conditions 0, 1, 2 and 255 (any nonzero is true); values copied as bits */
    static uint8_t cond[NE];
    static float f[NE];
    static double want[NE];
    for (size_t i = 0; i < NE; i++) {
        cond[i] = (uint8_t)(i % 4 == 0 ? 0 : i % 4 == 1 ? 1 : i % 4 == 2 ? 2 : 255);
        f[i] = EV[NE - 1 - i];
        want[i] = cond[i] ? EV[i] : f[i];
    }
    uint32_t k = in(c, "cond", U8, 1, DIMS(NE), cond), t = in(c, "t", F32, 1, DIMS(NE), EV);
    uint32_t e = in(c, "f", F32, 1, DIMS(NE), f);
    uint32_t o = out_f(c, "y", 1, DIMS(NE), want);
    node(c, op, 3, IDX(k, t, e), 1, IDX(o), 0, NULL);
}

void c_edge_logical(oc_case *c, const char *op) {
    static const uint8_t v[4] = {0, 1, 2, 255};
    static int64_t want[3][16];
    static int slot;
    int s = slot++ % 3;
    int is_not = !strcmp(op, "logicalNot");
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            want[s][i * 4 + j] = is_not ? v[j] == 0 : !strcmp(op, "logicalAnd") ? (v[i] && v[j]) : (v[i] || v[j]);
    uint32_t a = in(c, "a", U8, 2, DIMS(4, 1), v);
    if (is_not) {
        uint32_t o = out_i(c, "y", U8, 2, DIMS(4, 1), want[s]);
        node(c, op, 1, IDX(a), 1, IDX(o), 0, NULL);
        return;
    }
    uint32_t b = in(c, "b", U8, 1, DIMS(4), v);
    uint32_t o = out_i(c, "y", U8, 2, DIMS(4, 4), want[s]);
    node(c, op, 2, IDX(a, b), 1, IDX(o), 0, NULL);
}

/* ---- reductions, arg, softmax, cumulativeSum: one edge per row ---- */

#define NR 9
#define RL 4
static const float RV[NR][RL] = {
    {1, NAN, 2, 3},                         /* a NaN */
    {-INFINITY, 1, 2, 3},                   /* a -inf */
    {-INFINITY, -INFINITY, -INFINITY, -INFINITY}, /* only -inf */
    {INFINITY, -INFINITY, 1, 2},            /* both infinities */
    {INFINITY, 1, 2, 3},                    /* a +inf */
    {3e38f, -3e38f, 1, -1},                 /* huge, cancelling */
    {-3, -2, 0.5f, 0.25f},                  /* negative, fractions */
    {-100, -100, -100, -100},               /* far below 0 */
    {NAN, NAN, NAN, NAN},                   /* only NaN */
};

double oc_reduce_ref(const char *op, const double *v, size_t n) {
    double s = 0, p = 1, l1 = 0, sq = 0, mx = -INFINITY, mn = INFINITY;
    for (size_t i = 0; i < n; i++) {
        s += v[i], p *= v[i], l1 += fabs(v[i]), sq += v[i] * v[i];
        mx = isnan(mx) || isnan(v[i]) ? NAN : v[i] > mx ? v[i] : mx;
        mn = isnan(mn) || isnan(v[i]) ? NAN : v[i] < mn ? v[i] : mn;
    }
    if (!strcmp(op, "reduceMean")) return s / (double)n; /* empty: 0 / 0 */
    if (!strcmp(op, "reduceSum")) return s;
    if (!strcmp(op, "reduceMax")) return mx;
    if (!strcmp(op, "reduceMin")) return mn;
    if (!strcmp(op, "reduceProduct")) return p;
    if (!strcmp(op, "reduceL1")) return l1;
    if (!strcmp(op, "reduceL2")) return sqrt(sq);
    if (!strcmp(op, "reduceLogSum")) return log(s);
    if (!strcmp(op, "reduceSumSquare")) return sq;
    if (strcmp(op, "reduceLogSumExp")) {
        fprintf(stderr, "op_cases: no reference for '%s'\n", op);
        abort();
    }
    /* reduceLogSumExp: max + log(sum(exp(x - max))); an infinite max is the answer */
    if (isnan(mx) || isinf(mx)) return mx;
    double se = 0;
    for (size_t i = 0; i < n; i++) se += exp(v[i] - mx);
    return mx + log(se);
}

void c_edge_reduce(oc_case *c, const char *op) {
    static double want[16][NR];
    static int slot;
    int s = slot++ % 16;
    for (int r = 0; r < NR; r++) {
        double v[RL];
        for (int k = 0; k < RL; k++) v[k] = RV[r][k];
        want[s][r] = to_f32(oc_reduce_ref(op, v, RL));
    }
    uint32_t a = in(c, "x", F32, 2, DIMS(NR, RL), RV);
    uint32_t o = out_f(c, "y", 1, DIMS(NR), want[s]);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INTS("axes", 1, 1), A_BOOL("keepDimensions", 0)));
}

/* Over an empty axis: [3, 0] reduced along axis 1 gives each op's identity. */
void c_edge_reduce_empty(oc_case *c, const char *op) {
    static double want[16][3];
    static int slot;
    int s = slot++ % 16;
    for (int r = 0; r < 3; r++) want[s][r] = oc_reduce_ref(op, NULL, 0);
    uint32_t a = in(c, "x", F32, 2, DIMS(3, 0), NULL);
    uint32_t o = out_f(c, "y", 1, DIMS(3), want[s]);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INTS("axes", 1, 1), A_BOOL("keepDimensions", 0)));
}

void c_edge_arg(oc_case *c, const char *op) {
    static int64_t want[2][NR];
    int is_min = !strcmp(op, "argMin");
    for (int r = 0; r < NR; r++) { /* the first extreme; the first NaN beats everything */
        int best = 0;
        for (int k = 1; k < RL && !isnan(RV[r][best]); k++) {
            float v = RV[r][k], b = RV[r][best];
            if (isnan(v) || (is_min ? v < b : v > b)) best = k;
        }
        want[is_min][r] = best;
    }
    uint32_t a = in(c, "x", F32, 2, DIMS(NR, RL), RV);
    uint32_t o = out_i(c, "y", I64, 1, DIMS(NR), want[is_min]);
    node(c, op, 1, IDX(a), 1, IDX(o),
         ATTRS(A_INT("axis", 1), A_BOOL("keepDimensions", 0), A_STR("outputDataType", "int64")));
}

/* softmax along the rows (axis 1), or down the columns of their
 * transpose (axis 0), where a backend may take a strided path. */
void c_edge_softmax(oc_case *c, const char *axis) {
    static float xt[RL][NR];
    static double want[2][NR * RL];
    int down = !strcmp(axis, "0");
    for (int r = 0; r < NR; r++) {
        double mx = -INFINITY, sum = 0, e[RL];
        for (int k = 0; k < RL; k++) mx = nan_max(mx, RV[r][k]);
        for (int k = 0; k < RL; k++) sum += e[k] = exp(RV[r][k] - mx);
        for (int k = 0; k < RL; k++) {
            double y = to_f32(e[k] / sum);
            if (down) want[1][k * NR + r] = y, xt[k][r] = RV[r][k];
            else want[0][r * RL + k] = y;
        }
    }
    uint32_t a = down ? in(c, "x", F32, 2, DIMS(RL, NR), xt) : in(c, "x", F32, 2, DIMS(NR, RL), RV);
    uint32_t o = down ? out_f(c, "y", 2, DIMS(RL, NR), want[1]) : out_f(c, "y", 2, DIMS(NR, RL), want[0]);
    node(c, "softmax", 1, IDX(a), 1, IDX(o), ATTRS(A_INT("axis", down ? 0 : 1)));
}

void c_edge_cumsum(oc_case *c, const char *op) {
    static double want[NR * RL];
    for (int r = 0; r < NR; r++) {
        double acc = 0;
        for (int k = 0; k < RL; k++) want[r * RL + k] = to_f32(acc += RV[r][k]);
    }
    uint32_t a = in(c, "x", F32, 2, DIMS(NR, RL), RV);
    uint32_t o = out_f(c, "y", 2, DIMS(NR, RL), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INT("axis", 1)));
}

/* maxPool2d, 2x2 windows at stride 2 over [1, 1, 2, 2 * NR]: each window
 * holds the first two values of a row and the last two. */
void c_edge_max_pool(oc_case *c, const char *op) {
    static float x[2 * 2 * NR];
    static double want[NR];
    for (int r = 0; r < NR; r++) {
        x[2 * r] = RV[r][0], x[2 * r + 1] = RV[r][1];
        x[2 * NR + 2 * r] = RV[r][2], x[2 * NR + 2 * r + 1] = RV[r][3];
        double v[RL] = {RV[r][0], RV[r][1], RV[r][2], RV[r][3]};
        want[r] = oc_reduce_ref("reduceMax", v, RL);
    }
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 1, 2, 2 * NR), x);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 1, 1, NR), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INTS("windowDimensions", 2, 2, 2), A_INTS("strides", 2, 2, 2)));
}
