/* The op cases of op_cases.h. Expected values are written by hand where
 * they are few, else computed by the plain loops below (double precision,
 * no backend involved). op_cases_run.c runs them. */
#include "op_cases_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- elementwise binary, broadcasting [2, 3] against [3] or [2, 1] ---- */

static const float A23[6] = {-1.5f, 0.5f, 2, 3, -4, 0.25f};
static const float APOS23[6] = {1.5f, 0.5f, 2, 3, 4, 0.25f};
static const float B3[3] = {2, -0.5f, 1};
static const float B21[2] = {0.5f, -2};
static const float BEQ3[3] = {0.5f, 0.5f, 3}; /* some equal to A23 */

/* y[2,3] = op(a[2,3], b[rb]) with numpy broadcasting; `b_col` picks b [2,1]. */
static void broadcast_ref(const char *op, const double *a, const double *b, int b_col, double *y) {
    const int64_t dy[2] = {2, 3}, db[2] = {2, 1}, db1[1] = {3};
    for (size_t i = 0; i < 6; i++) {
        int64_t idx[2];
        h_unravel(i, 2, dy, idx);
        size_t bo = b_col ? h_bcast_off(idx, 2, 2, db) : h_bcast_off(idx, 2, 1, db1);
        y[i] = oc_binary_ref(op, a[i], b[bo]);
    }
}

static void c_binary(oc_case *c, const char *op, int b_col) {
    static double want[64][6];
    static int slot;
    double *w = want[slot++ % 64];
    const float *a = !strcmp(op, "pow") ? APOS23 : A23, *b = b_col ? B21 : B3;
    double ad[6], bd[3];
    for (int i = 0; i < 6; i++) ad[i] = a[i];
    for (int i = 0; i < (b_col ? 2 : 3); i++) bd[i] = b[i];
    broadcast_ref(op, ad, bd, b_col, w);
    uint32_t x = in(c, "a", F32, 2, DIMS(2, 3), a);
    uint32_t y = b_col ? in(c, "b", F32, 2, DIMS(2, 1), b) : in(c, "b", F32, 1, DIMS(3), b);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 3), w);
    node(c, op, 2, IDX(x, y), 1, IDX(o), 0, NULL);
}
static void c_binary_row(oc_case *c, const char *op) { c_binary(c, op, 0); }
static void c_binary_col(oc_case *c, const char *op) { c_binary(c, op, 1); }

static void c_compare(oc_case *c, const char *op) {
    static int64_t want[16][6];
    static int slot;
    int64_t *w = want[slot++ % 16];
    double ad[6], bd[3], yd[6];
    for (int i = 0; i < 6; i++) ad[i] = A23[i];
    for (int i = 0; i < 3; i++) bd[i] = BEQ3[i];
    broadcast_ref(op, ad, bd, 0, yd);
    for (int i = 0; i < 6; i++) w[i] = (int64_t)yd[i];
    uint32_t x = in(c, "a", F32, 2, DIMS(2, 3), A23), y = in(c, "b", F32, 1, DIMS(3), BEQ3);
    uint32_t o = out_i(c, "y", U8, 2, DIMS(2, 3), w);
    node(c, op, 2, IDX(x, y), 1, IDX(o), 0, NULL);
}

static const uint8_t L23[6] = {0, 1, 2, 0, 0, 7};
static const uint8_t L3[3] = {1, 0, 1};

static void c_logical(oc_case *c, const char *op) {
    static int64_t want[4][6];
    static int slot;
    int64_t *w = want[slot++ % 4];
    double ad[6], bd[3], yd[6];
    for (int i = 0; i < 6; i++) ad[i] = L23[i];
    for (int i = 0; i < 3; i++) bd[i] = L3[i];
    broadcast_ref(op, ad, bd, 0, yd);
    for (int i = 0; i < 6; i++) w[i] = (int64_t)yd[i];
    uint32_t x = in(c, "a", U8, 2, DIMS(2, 3), L23), y = in(c, "b", U8, 1, DIMS(3), L3);
    uint32_t o = out_i(c, "y", U8, 2, DIMS(2, 3), w);
    node(c, op, 2, IDX(x, y), 1, IDX(o), 0, NULL);
}

static void c_logical_not(oc_case *c, const char *op) {
    static const int64_t want[6] = {1, 0, 0, 1, 1, 0};
    uint32_t x = in(c, "a", U8, 2, DIMS(2, 3), L23);
    uint32_t o = out_i(c, "y", U8, 2, DIMS(2, 3), want);
    node(c, op, 1, IDX(x), 1, IDX(o), 0, NULL);
}

static void c_where(oc_case *c, const char *op) {
    /* condition [2, 3], trueValue [2, 3], falseValue [3] broadcast */
    static const double want[6] = {2, 0.5, 2, 2, -0.5, 0.25};
    uint32_t k = in(c, "cond", U8, 2, DIMS(2, 3), L23);
    uint32_t t = in(c, "t", F32, 2, DIMS(2, 3), A23), f = in(c, "f", F32, 1, DIMS(3), B3);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 3), want);
    node(c, op, 3, IDX(k, t, f), 1, IDX(o), 0, NULL);
}

static void c_int_binary(oc_case *c, const char *op) {
    /* int32 arithmetic: div truncates toward zero */
    static const int32_t a[4] = {7, -7, 9, -9}, b[4] = {2, 2, -4, -4};
    static int64_t want[8][4];
    static int slot;
    int64_t *w = want[slot++ % 8];
    for (int i = 0; i < 4; i++)
        w[i] = !strcmp(op, "add") ? a[i] + b[i] : !strcmp(op, "sub") ? a[i] - b[i]
             : !strcmp(op, "mul") ? a[i] * b[i] : !strcmp(op, "div") ? a[i] / b[i]
             : !strcmp(op, "max") ? (a[i] > b[i] ? a[i] : b[i]) : (a[i] < b[i] ? a[i] : b[i]);
    uint32_t x = in(c, "a", I32, 1, DIMS(4), a), y = in(c, "b", I32, 1, DIMS(4), b);
    uint32_t o = out_i(c, "y", I32, 1, DIMS(4), w);
    node(c, op, 2, IDX(x, y), 1, IDX(o), 0, NULL);
}

/* ---- elementwise unary ---- */

static const float UX[8] = {-2.5f, -1, -0.25f, 0, 0.25f, 0.75f, 1.5f, 3};
static const float UPOS[8] = {0.125f, 0.25f, 0.5f, 1, 1.5f, 2, 4, 9};

static int unary_positive(const char *op) {
    return !strcmp(op, "sqrt") || !strcmp(op, "log") || !strcmp(op, "reciprocal");
}

static void c_unary(oc_case *c, const char *op) {
    static double want[64][8];
    static int slot;
    double *w = want[slot++ % 64];
    const float *x = unary_positive(op) ? UPOS : UX;
    for (int i = 0; i < 8; i++) w[i] = oc_unary_ref(op, x[i]);
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 4), x);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 4), w);
    oc_unary_node(c, op, a, o);
}

static void c_cast_f32_i32(oc_case *c, const char *op) {
    static const float x[6] = {-2.75f, -1, -0.5f, 0.5f, 3.9f, 100};
    static const int64_t want[6] = {-2, -1, 0, 0, 3, 100}; /* truncated toward zero */
    uint32_t a = in(c, "x", F32, 1, DIMS(6), x);
    uint32_t o = out_i(c, "y", I32, 1, DIMS(6), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_STR("type", "int32")));
}

static void c_cast_i32_f32(oc_case *c, const char *op) {
    static const int32_t x[4] = {-7, 0, 3, 1 << 20};
    static const double want[4] = {-7, 0, 3, 1 << 20};
    uint32_t a = in(c, "x", I32, 1, DIMS(4), x);
    uint32_t o = out_f(c, "y", 1, DIMS(4), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_STR("type", "float32")));
}

/* ---- matrix products ---- */

/* y = a * b over the last two dims; leading dims broadcast. */
static void matmul_ref(const float *a, uint32_t ra, const int64_t *da, const float *b, uint32_t rb,
                       const int64_t *db, double *y, uint32_t ry, const int64_t *dy) {
    int64_t M = dy[ry - 2], N = dy[ry - 1], K = da[ra - 1];
    size_t lead = numel(ry - 2, dy);
    for (size_t l = 0; l < lead; l++) {
        int64_t idx[BERTH_MAX_RANK];
        h_unravel(l, ry - 2, dy, idx);
        size_t ao = h_bcast_off(idx, ry - 2, ra - 2, da) * (size_t)(M * K);
        size_t bo = h_bcast_off(idx, ry - 2, rb - 2, db) * (size_t)(K * N);
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++) s += (double)a[ao + m * K + k] * b[bo + k * N + n];
                y[l * (size_t)(M * N) + m * N + n] = s;
            }
    }
}

static void c_matmul_2d(oc_case *c, const char *op) {
    static const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, -1, 2, 0.5f, -1};
    /* [1 2 3; 4 5 6] * [1 0; -1 2; 0.5 -1] */
    static const double want[4] = {0.5, 1, 2, 4};
    uint32_t x = in(c, "a", F32, 2, DIMS(2, 3), a), y = in(c, "b", F32, 2, DIMS(3, 2), b);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 2), want);
    node(c, op, 2, IDX(x, y), 1, IDX(o), 0, NULL);
}

static void c_matmul_batched(oc_case *c, const char *op) {
    static float a[12], b[12];
    static double want[8];
    fill(a, 12, 1), fill(b, 12, 2);
    matmul_ref(a, 3, DIMS(2, 2, 3), b, 3, DIMS(2, 3, 2), want, 3, DIMS(2, 2, 2));
    uint32_t x = in(c, "a", F32, 3, DIMS(2, 2, 3), a), y = in(c, "b", F32, 3, DIMS(2, 3, 2), b);
    uint32_t o = out_f(c, "y", 3, DIMS(2, 2, 2), want);
    node(c, op, 2, IDX(x, y), 1, IDX(o), 0, NULL);
}

static void c_matmul_broadcast(oc_case *c, const char *op) {
    /* [2, 1, 2, 3] * [3, 3, 2] -> [2, 3, 2, 2] */
    static float a[12], b[18];
    static double want[24];
    fill(a, 12, 3), fill(b, 18, 4);
    matmul_ref(a, 4, DIMS(2, 1, 2, 3), b, 3, DIMS(3, 3, 2), want, 4, DIMS(2, 3, 2, 2));
    uint32_t x = in(c, "a", F32, 4, DIMS(2, 1, 2, 3), a), y = in(c, "b", F32, 3, DIMS(3, 3, 2), b);
    uint32_t o = out_f(c, "y", 4, DIMS(2, 3, 2, 2), want);
    node(c, op, 2, IDX(x, y), 1, IDX(o), 0, NULL);
}

static void c_gemm(oc_case *c, const char *op) {
    /* alpha * a * b' + beta * c, a [2, 3], b [2, 3] (bTranspose), c [2, 2] */
    static const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, -1, 0.5f, 0.5f, 0.5f}, cc[4] = {1, 2, 3, 4};
    /* a * b' = [-2 3; -2 7.5]; * 2 + 0.5 * c */
    static const double want[4] = {-3.5, 7, -2.5, 17};
    uint32_t x = in(c, "a", F32, 2, DIMS(2, 3), a), y = in(c, "b", F32, 2, DIMS(2, 3), b);
    uint32_t z = in(c, "c", F32, 2, DIMS(2, 2), cc);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 2), want);
    node(c, op, 2, IDX(x, y), 1, IDX(o),
         ATTRS(A_OPND("c", z), A_FLOAT("alpha", 2), A_FLOAT("beta", 0.5), A_BOOL("bTranspose", 1)));
}

static void c_matmul_epilogue(oc_case *c, const char *op) {
    /* relu(a * b + bias) + residual */
    static const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, -1, 2, 0.5f, -1};
    static const float bias[2] = {-1, -2}, res[4] = {10, 20, 30, 40};
    /* a * b = [0.5 1; 2 4]; + bias = [-0.5 -1; 1 2]; relu; + residual */
    static const double want[4] = {10, 20, 31, 42};
    uint32_t x = in(c, "a", F32, 2, DIMS(2, 3), a), y = in(c, "b", F32, 2, DIMS(3, 2), b);
    uint32_t bi = tg_const(&c->g, "bias", F32, 1, DIMS(2), bias, sizeof bias);
    uint32_t r = in(c, "res", F32, 2, DIMS(2, 2), res);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 2), want);
    node(c, op, 2, IDX(x, y), 1, IDX(o), ATTRS(A_OPND("bias", bi), A_STR("activation", "relu"), A_OPND("residual", r)));
}

static void c_elementwise(oc_case *c, const char *op) {
    /* hardswish(x * s) + r, spelled as six steps, s per channel:
     * a = x * s; b = a + 3; c = clamp(b, 0, 6); d = a * c; e = d / 6; y = e + r */
    static const float x[8] = {-4, -1, 0, 0.5f, 1, 2, 3, 5}, sc[2] = {1, -0.5f};
    static const float r[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    static double want[8];
    for (int i = 0; i < 8; i++) {
        double a = (double)x[i] * sc[i / 4], cl = a + 3 < 0 ? 0 : a + 3 > 6 ? 6 : a + 3;
        want[i] = a * cl / 6 + r[i];
    }
    uint32_t xi = in(c, "x", F32, 4, DIMS(1, 2, 2, 2), x), si = in(c, "s", F32, 3, DIMS(2, 1, 1), sc);
    uint32_t ri = in(c, "r", F32, 4, DIMS(1, 2, 2, 2), r);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 2, 2, 2), want);
    /* references: inputs 0-2, steps from 3 on, constants -1 (3), -2 and -3 (0, 6) */
    node(c, op, 3, IDX(xi, si, ri), 1, IDX(o),
         ATTRS(A_STR("ops", "mul add clamp mul div add"),
               A_INTS("steps", 12, 0, 1, 3, -1, 4, -2, 3, 5, 6, -3, 7, 2),
               A_FLOATS("constants", 3, 3.0, 0.0, 6.0)));
}

static void c_attention(oc_case *c, const char *op) {
    /* softmax(q * k' * scale + mask) * v; q [1, 2, 2], k and v [1, 3, 2], mask [2, 3] */
    static const float q[4] = {1, 0, 0.5f, -1}, k[6] = {1, 1, 0, 2, -1, 0.5f}, v[6] = {1, 2, 3, 4, 5, 6};
    static const float mask[6] = {0, 0, -1e9f, 0, -0.5f, 0};
    static double want[4];
    for (int i = 0; i < 2; i++) {
        double s[3], mx = -INFINITY, sum = 0;
        for (int j = 0; j < 3; j++) {
            s[j] = 0.5 * ((double)q[i * 2] * k[j * 2] + (double)q[i * 2 + 1] * k[j * 2 + 1]) + mask[i * 3 + j];
            if (s[j] > mx) mx = s[j];
        }
        for (int j = 0; j < 3; j++) sum += s[j] = exp(s[j] - mx);
        for (int d = 0; d < 2; d++) {
            double acc = 0;
            for (int j = 0; j < 3; j++) acc += s[j] / sum * v[j * 2 + d];
            want[i * 2 + d] = acc;
        }
    }
    uint32_t a = in(c, "q", F32, 3, DIMS(1, 2, 2), q), b = in(c, "k", F32, 3, DIMS(1, 3, 2), k);
    uint32_t d = in(c, "v", F32, 3, DIMS(1, 3, 2), v), m = in(c, "mask", F32, 2, DIMS(2, 3), mask);
    uint32_t o = out_f(c, "y", 3, DIMS(1, 2, 2), want);
    node(c, op, 3, IDX(a, b, d), 1, IDX(o), ATTRS(A_FLOAT("scale", 0.5), A_OPND("mask", m)));
}

/* ---- normalization ---- */

static void c_batch_norm(oc_case *c, const char *op) {
    static const float x[4] = {1, 2, 3, 4}, mean[2] = {1.5f, 3.5f}, var[2] = {0.25f, 1}, sc[2] = {2, 1},
                       bi[2] = {0, 1};
    static double want[4];
    for (int i = 0; i < 4; i++) {
        int ch = i / 2;
        want[i] = ((double)x[i] - mean[ch]) / sqrt((double)var[ch] + 1e-5) * sc[ch] + bi[ch];
    }
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 2, 1, 2), x), m = in(c, "mean", F32, 1, DIMS(2), mean);
    uint32_t v = in(c, "var", F32, 1, DIMS(2), var);
    uint32_t s = tg_const(&c->g, "scale", F32, 1, DIMS(2), sc, sizeof sc);
    uint32_t b = tg_const(&c->g, "bias", F32, 1, DIMS(2), bi, sizeof bi);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 2, 1, 2), want);
    node(c, op, 3, IDX(a, m, v), 1, IDX(o), ATTRS(A_OPND("scale", s), A_OPND("bias", b), A_FLOAT("epsilon", 1e-5)));
}

/* Normalizes groups of `len` consecutive values of x; scale/bias by group
 * (per_group) or by position. */
static void norm_ref(const float *x, size_t groups, size_t len, const float *sc, const float *bi, int per_group,
                     double *y) {
    for (size_t g = 0; g < groups; g++) {
        double mean = 0, var = 0;
        for (size_t i = 0; i < len; i++) mean += x[g * len + i];
        mean /= (double)len;
        for (size_t i = 0; i < len; i++) var += (x[g * len + i] - mean) * (x[g * len + i] - mean);
        var /= (double)len;
        for (size_t i = 0; i < len; i++) {
            size_t p = per_group ? g : i;
            y[g * len + i] = (x[g * len + i] - mean) / sqrt(var + 1e-5) * sc[p] + bi[p];
        }
    }
}

static void c_instance_norm(oc_case *c, const char *op) {
    static const float x[6] = {1, 2, 4, -1, 0, 3}, sc[2] = {2, 0.5f}, bi[2] = {1, -1};
    static double want[6];
    norm_ref(x, 2, 3, sc, bi, 1, want);
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 2, 1, 3), x);
    uint32_t s = in(c, "scale", F32, 1, DIMS(2), sc), b = in(c, "bias", F32, 1, DIMS(2), bi);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 2, 1, 3), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_OPND("scale", s), A_OPND("bias", b), A_FLOAT("epsilon", 1e-5)));
}

static void c_layer_norm(oc_case *c, const char *op) {
    static const float x[6] = {1, 2, 4, -1, 0, 3}, sc[3] = {2, 0.5f, 1}, bi[3] = {1, -1, 0};
    static double want[6];
    norm_ref(x, 2, 3, sc, bi, 0, want);
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), x);
    uint32_t s = in(c, "scale", F32, 1, DIMS(3), sc), b = in(c, "bias", F32, 1, DIMS(3), bi);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 3), want);
    node(c, op, 1, IDX(a), 1, IDX(o),
         ATTRS(A_INTS("axes", 1, 1), A_OPND("scale", s), A_OPND("bias", b), A_FLOAT("epsilon", 1e-5)));
}

/* ---- reductions, arg, softmax, cumulative sum ---- */

static const float R23[6] = {1, -2, 3, 0.5f, 1.5f, 4};

static void c_reduce_rows(oc_case *c, const char *op) {
    /* [2, 3] over axis 1 -> [2] */
    static double want[16][2];
    static int slot;
    double *w = want[slot++ % 16];
    for (int r = 0; r < 2; r++) {
        double v[3] = {R23[r * 3], R23[r * 3 + 1], R23[r * 3 + 2]};
        w[r] = oc_reduce_ref(op, v, 3);
    }
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), R23);
    uint32_t o = out_f(c, "y", 1, DIMS(2), w);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INTS("axes", 1, 1), A_BOOL("keepDimensions", 0)));
}

static void c_reduce_cols_keep(oc_case *c, const char *op) {
    /* [2, 3] over axis 0, keepDimensions -> [1, 3] */
    static double want[16][3];
    static int slot;
    double *w = want[slot++ % 16];
    for (int k = 0; k < 3; k++) {
        double v[2] = {R23[k], R23[3 + k]};
        w[k] = oc_reduce_ref(op, v, 2);
    }
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), R23);
    uint32_t o = out_f(c, "y", 2, DIMS(1, 3), w);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INTS("axes", 1, 0), A_BOOL("keepDimensions", 1)));
}

static void c_argmax(oc_case *c, const char *op) {
    static const float x[6] = {1, 5, 3, 4, -2, 4};
    static const int64_t want_max[2] = {1, 0}, want_min[2] = {0, 1}; /* ties: the first */
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), x);
    uint32_t o = out_i(c, "y", I64, 1, DIMS(2), !strcmp(op, "argMax") ? want_max : want_min);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INT("axis", 1), A_BOOL("keepDimensions", 0)));
}

static void c_softmax(oc_case *c, const char *op) {
    static double want[6];
    for (int r = 0; r < 2; r++) {
        double mx = -INFINITY, s = 0;
        for (int k = 0; k < 3; k++) mx = R23[r * 3 + k] > mx ? R23[r * 3 + k] : mx;
        for (int k = 0; k < 3; k++) s += exp(R23[r * 3 + k] - mx);
        for (int k = 0; k < 3; k++) want[r * 3 + k] = exp(R23[r * 3 + k] - mx) / s;
    }
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), R23);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 3), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INT("axis", 1)));
}

static void c_cumsum(oc_case *c, const char *op) {
    static const double want[6] = {1, -1, 2, 0.5, 2, 6};
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), R23);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 3), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INT("axis", 1)));
}

static void c_cumsum_exclusive_reversed(oc_case *c, const char *op) {
    /* along axis 0, from the end, not counting the element itself */
    static const double want[6] = {0.5, 1.5, 4, 0, 0, 0};
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), R23);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 3), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INT("axis", 0), A_BOOL("exclusive", 1), A_BOOL("reversed", 1)));
}

/* ---- shape and data movement; 0..11 as the input ---- */

static const float S12[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

static void c_reshape(oc_case *c, const char *op) {
    static const double want[6] = {0, 1, 2, 3, 4, 5};
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), S12);
    uint32_t o = out_f(c, "y", 3, DIMS(3, 1, 2), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INTS("newShape", 3, 3, 1, 2)));
}

static void c_transpose(oc_case *c, const char *op) {
    /* [2, 3, 2] permuted (2, 0, 1) -> [2, 2, 3]: y[k][i][j] = x[i][j][k] */
    static double want[12];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) want[(k * 2 + i) * 3 + j] = S12[(i * 3 + j) * 2 + k];
    uint32_t a = in(c, "x", F32, 3, DIMS(2, 3, 2), S12);
    uint32_t o = out_f(c, "y", 3, DIMS(2, 2, 3), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INTS("permutation", 3, 2, 0, 1)));
}

static void c_concat(oc_case *c, const char *op) {
    static const float p[2] = {-1, -2}, q[4] = {1, 2, 3, 4};
    static const double want[6] = {-1, 1, 2, -2, 3, 4};
    uint32_t a = in(c, "a", F32, 2, DIMS(2, 1), p), b = in(c, "b", F32, 2, DIMS(2, 2), q);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 3), want);
    node(c, op, 2, IDX(a, b), 1, IDX(o), ATTRS(A_INT("axis", 1)));
}

static void c_split(oc_case *c, const char *op) {
    static const double w0[2] = {0, 3}, w1[4] = {1, 2, 4, 5};
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), S12);
    uint32_t o0 = out_f(c, "y0", 2, DIMS(2, 1), w0), o1 = out_f(c, "y1", 2, DIMS(2, 2), w1);
    node(c, op, 1, IDX(a), 2, IDX(o0, o1), ATTRS(A_INT("axis", 1)));
}

static void c_slice(oc_case *c, const char *op) {
    /* [3, 4]: rows 0 and 2, columns 1 and 3 (windows of 3, strides 2) */
    static const double want[4] = {1, 3, 9, 11};
    uint32_t a = in(c, "x", F32, 2, DIMS(3, 4), S12);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 2), want);
    node(c, op, 1, IDX(a), 1, IDX(o),
         ATTRS(A_INTS("starts", 2, 0, 1), A_INTS("sizes", 2, 3, 3), A_INTS("strides", 2, 2, 2)));
}

static void c_gather(oc_case *c, const char *op) {
    /* rows 2, 0, 2 of [3, 2] */
    static const int32_t idx[3] = {2, 0, 2};
    static const double want[6] = {4, 5, 0, 1, 4, 5};
    uint32_t a = in(c, "x", F32, 2, DIMS(3, 2), S12), i = in(c, "i", I32, 1, DIMS(3), idx);
    uint32_t o = out_f(c, "y", 2, DIMS(3, 2), want);
    node(c, op, 2, IDX(a, i), 1, IDX(o), ATTRS(A_INT("axis", 0)));
}

static void c_gather_elements(oc_case *c, const char *op) {
    /* y[r][k] = x[r][idx[r][k]] on [2, 3] */
    static const int32_t idx[4] = {2, 0, 1, 1};
    static const double want[4] = {2, 0, 4, 4};
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), S12), i = in(c, "i", I32, 2, DIMS(2, 2), idx);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 2), want);
    node(c, op, 2, IDX(a, i), 1, IDX(o), ATTRS(A_INT("axis", 1)));
}

/* Indices out of range, as a computed index may be (the engine refuses
 * them only from a graph input): a negative one counts from the end
 * once, then each clamps into [0, n), the same on every backend. */
static void c_gather_clamp(oc_case *c, const char *op) {
    /* rows of [3, 2] at 3, -4, 7, -1: 2, 0, 2, 2 */
    static const int32_t idx[4] = {3, -4, 7, -1};
    static const double want[8] = {4, 5, 0, 1, 4, 5, 4, 5};
    uint32_t a = in(c, "x", F32, 2, DIMS(3, 2), S12), i = in(c, "i", I32, 1, DIMS(4), idx);
    uint32_t o = out_f(c, "y", 2, DIMS(4, 2), want);
    node(c, op, 2, IDX(a, i), 1, IDX(o), ATTRS(A_INT("axis", 0)));
}

static void c_gather_clamp_i64(oc_case *c, const char *op) {
    /* columns of [2, 3] at 2^40, -2^40, -3, -5 (beyond 32 bits both ways;
     * -5 + 3 still negative): 2, 0, 0, 0 */
    static const int64_t idx[4] = {(int64_t)1 << 40, -((int64_t)1 << 40), -3, -5};
    static const double want[8] = {2, 0, 0, 0, 5, 3, 3, 3};
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), S12), i = in(c, "i", I64, 1, DIMS(4), idx);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 4), want);
    node(c, op, 2, IDX(a, i), 1, IDX(o), ATTRS(A_INT("axis", 1)));
}

static void c_gather_elements_clamp(oc_case *c, const char *op) {
    /* y[r][k] = x[r][clamp(idx[r][k])] on [2, 3]: 3, -4 -> 2, 0; 9, -1 -> 2, 2 */
    static const int32_t idx[4] = {3, -4, 9, -1};
    static const double want[4] = {2, 0, 5, 5};
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), S12), i = in(c, "i", I32, 2, DIMS(2, 2), idx);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 2), want);
    node(c, op, 2, IDX(a, i), 1, IDX(o), ATTRS(A_INT("axis", 1)));
}

static void c_scatter_elements(oc_case *c, const char *op) {
    /* y = x; y[r][idx[r][k]] = u[r][k] on [2, 3] */
    static const int32_t idx[4] = {2, 0, 1, 2};
    static const float u[4] = {-1, -2, -3, -4};
    static const double want[6] = {-2, 1, -1, 3, -3, -4};
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 3), S12), i = in(c, "i", I32, 2, DIMS(2, 2), idx);
    uint32_t v = in(c, "u", F32, 2, DIMS(2, 2), u);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 3), want);
    node(c, op, 3, IDX(a, i, v), 1, IDX(o), ATTRS(A_INT("axis", 1)));
}

static void c_expand(oc_case *c, const char *op) {
    /* [3, 1] -> [2, 3, 2] */
    static const double want[12] = {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2};
    uint32_t a = in(c, "x", F32, 2, DIMS(3, 1), S12);
    uint32_t o = out_f(c, "y", 3, DIMS(2, 3, 2), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INTS("newShape", 3, 2, 3, 2)));
}

static void c_squeeze(oc_case *c, const char *op) {
    static const double want[3] = {0, 1, 2};
    uint32_t a = in(c, "x", F32, 3, DIMS(1, 3, 1), S12);
    uint32_t o = out_f(c, "y", 1, DIMS(3), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INTS("axes", 2, 0, 2)));
}

static void c_unsqueeze(oc_case *c, const char *op) {
    static const double want[3] = {0, 1, 2};
    uint32_t a = in(c, "x", F32, 1, DIMS(3), S12);
    uint32_t o = out_f(c, "y", 3, DIMS(1, 3, 1), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INTS("axes", 2, 0, 2)));
}

static void c_pad_constant(oc_case *c, const char *op) {
    /* [2, 2] padded 1 row before, 2 columns after, with 9 */
    static const double want[12] = {9, 9, 9, 9, 0, 1, 9, 9, 2, 3, 9, 9};
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 2), S12);
    uint32_t o = out_f(c, "y", 2, DIMS(3, 4), want);
    node(c, op, 1, IDX(a), 1, IDX(o),
         ATTRS(A_INTS("beginningPadding", 2, 1, 0), A_INTS("endingPadding", 2, 0, 2), A_STR("mode", "constant"),
               A_FLOAT("value", 9)));
}

static void c_pad_reflect(oc_case *c, const char *op) {
    /* [0 1 2] reflected 2 before, 1 after: 2 1 | 0 1 2 | 1 */
    static const double want[6] = {2, 1, 0, 1, 2, 1};
    uint32_t a = in(c, "x", F32, 1, DIMS(3), S12);
    uint32_t o = out_f(c, "y", 1, DIMS(6), want);
    node(c, op, 1, IDX(a), 1, IDX(o),
         ATTRS(A_INTS("beginningPadding", 1, 2), A_INTS("endingPadding", 1, 1), A_STR("mode", "reflection")));
}

static void c_pad_edge(oc_case *c, const char *op) {
    static const double want[6] = {0, 0, 0, 1, 2, 2};
    uint32_t a = in(c, "x", F32, 1, DIMS(3), S12);
    uint32_t o = out_f(c, "y", 1, DIMS(6), want);
    node(c, op, 1, IDX(a), 1, IDX(o),
         ATTRS(A_INTS("beginningPadding", 1, 2), A_INTS("endingPadding", 1, 1), A_STR("mode", "edge")));
}

static void c_tile(oc_case *c, const char *op) {
    /* [2, 2] repeated (2, 3) -> [4, 6] */
    static double want[24];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++) want[i * 6 + j] = S12[(i % 2) * 2 + j % 2];
    uint32_t a = in(c, "x", F32, 2, DIMS(2, 2), S12);
    uint32_t o = out_f(c, "y", 2, DIMS(4, 6), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INTS("repetitions", 2, 2, 3)));
}

static void c_triangular_upper(oc_case *c, const char *op) {
    /* [3, 3], upper triangle from the diagonal up */
    static const double want[9] = {0, 1, 2, 0, 4, 5, 0, 0, 8};
    uint32_t a = in(c, "x", F32, 2, DIMS(3, 3), S12);
    uint32_t o = out_f(c, "y", 2, DIMS(3, 3), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_BOOL("upper", 1), A_INT("diagonal", 0)));
}

static void c_triangular_lower(oc_case *c, const char *op) {
    /* [3, 3], lower triangle below the first superdiagonal: j <= i + 1 */
    static const double want[9] = {0, 1, 0, 3, 4, 5, 6, 7, 8};
    uint32_t a = in(c, "x", F32, 2, DIMS(3, 3), S12);
    uint32_t o = out_f(c, "y", 2, DIMS(3, 3), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_BOOL("upper", 0), A_INT("diagonal", 1)));
}

/* ---- quantization ---- */

static void c_quantize_u8(oc_case *c, const char *op) {
    /* round(x / 0.5) half to even, + 10, saturated to uint8 */
    static const float x[5] = {-1, 0.25f, 0.75f, 2.5f, 300}, sc[1] = {0.5f};
    static const uint8_t zp[1] = {10};
    static const int64_t want[5] = {8, 10, 12, 15, 255};
    uint32_t a = in(c, "x", F32, 1, DIMS(5), x), s = in(c, "scale", F32, 1, DIMS(1), sc);
    uint32_t z = in(c, "zp", U8, 1, DIMS(1), zp);
    uint32_t o = out_i(c, "y", U8, 1, DIMS(5), want);
    node(c, op, 3, IDX(a, s, z), 1, IDX(o), 0, NULL);
}

static void c_quantize_tie(oc_case *c, const char *op) {
    /* the quotient is taken in float, as WebNN and ONNX define it:
     * 0.5 / 0.019607844 is exactly 25.5 in float32 and rounds to the even
     * 26 (in double it lies just below 25.5 and would round to 25) */
    static const float x[1] = {0.5f}, sc[1] = {0.019607844f};
    static const uint8_t zp[1] = {153};
    static const int64_t want[1] = {179};
    uint32_t a = in(c, "x", F32, 1, DIMS(1), x), s = in(c, "scale", F32, 1, DIMS(1), sc);
    uint32_t z = in(c, "zp", U8, 1, DIMS(1), zp);
    uint32_t o = out_i(c, "y", U8, 1, DIMS(1), want);
    node(c, op, 3, IDX(a, s, z), 1, IDX(o), 0, NULL);
}

static void c_dequantize_blockwise(oc_case *c, const char *op) {
    /* int8 [2, 4] with scale and zero point [2, 2]: blocks of 1 x 2 */
    static const int8_t x[8] = {-128, 0, 5, 7, 127, -1, 2, 3};
    static const float sc[4] = {0.5f, 2, 1, 0.25f};
    static const int8_t zp[4] = {0, 1, -1, 3};
    static const double want[8] = {-64, 0, 8, 12, 128, 0, -0.25, 0};
    uint32_t a = in(c, "x", I8, 2, DIMS(2, 4), x), s = in(c, "scale", F32, 2, DIMS(2, 2), sc);
    uint32_t z = in(c, "zp", I8, 2, DIMS(2, 2), zp);
    uint32_t o = out_f(c, "y", 2, DIMS(2, 4), want);
    node(c, op, 3, IDX(a, s, z), 1, IDX(o), 0, NULL);
}

/* ---- the table ---- */

const oc_entry oc_table[] = {
    {"add broadcast row", c_binary_row, "add"},
    {"add broadcast column", c_binary_col, "add"},
    {"sub broadcast row", c_binary_row, "sub"},
    {"mul broadcast column", c_binary_col, "mul"},
    {"div broadcast row", c_binary_row, "div"},
    {"pow broadcast row", c_binary_row, "pow"},
    {"max broadcast column", c_binary_col, "max"},
    {"min broadcast row", c_binary_row, "min"},
    {"prelu broadcast row", c_binary_row, "prelu"},
    {"add int32", c_int_binary, "add"},
    {"mul int32", c_int_binary, "mul"},
    {"div int32 truncates", c_int_binary, "div"},
    {"equal", c_compare, "equal"},
    {"notEqual", c_compare, "notEqual"},
    {"greater", c_compare, "greater"},
    {"greaterOrEqual", c_compare, "greaterOrEqual"},
    {"lesser", c_compare, "lesser"},
    {"lesserOrEqual", c_compare, "lesserOrEqual"},
    {"logicalAnd", c_logical, "logicalAnd"},
    {"logicalOr", c_logical, "logicalOr"},
    {"logicalNot", c_logical_not, "logicalNot"},
    {"where broadcast", c_where, "where"},
    {"identity", c_unary, "identity"},
    {"relu", c_unary, "relu"},
    {"abs", c_unary, "abs"},
    {"neg", c_unary, "neg"},
    {"sign", c_unary, "sign"},
    {"clamp", c_unary, "clamp"},
    {"leakyRelu", c_unary, "leakyRelu"},
    {"elu", c_unary, "elu"},
    {"sigmoid", c_unary, "sigmoid"},
    {"hardSigmoid", c_unary, "hardSigmoid"},
    {"hardSwish", c_unary, "hardSwish"},
    {"softplus", c_unary, "softplus"},
    {"softsign", c_unary, "softsign"},
    {"tanh", c_unary, "tanh"},
    {"gelu", c_unary, "gelu"},
    {"erf", c_unary, "erf"},
    {"sqrt", c_unary, "sqrt"},
    {"exp", c_unary, "exp"},
    {"log", c_unary, "log"},
    {"ceil", c_unary, "ceil"},
    {"floor", c_unary, "floor"},
    {"reciprocal", c_unary, "reciprocal"},
    {"sin", c_unary, "sin"},
    {"cos", c_unary, "cos"},
    {"cast float32 to int32", c_cast_f32_i32, "cast"},
    {"cast int32 to float32", c_cast_i32_f32, "cast"},
    {"matmul 2-D", c_matmul_2d, "matmul"},
    {"matmul batched", c_matmul_batched, "matmul"},
    {"matmul broadcast batch", c_matmul_broadcast, "matmul"},
    {"gemm alpha beta c bTranspose", c_gemm, "gemm"},
    {"conv2d padding strides bias", c_conv2d_pad_stride, "conv2d"},
    {"conv2d groups", c_conv2d_groups, "conv2d"},
    {"convTranspose2d strides padding", c_conv_transpose2d, "convTranspose2d"},
    {"averagePool2d", c_pool, "averagePool2d"},
    {"maxPool2d", c_pool, "maxPool2d"},
    {"l2Pool2d", c_pool, "l2Pool2d"},
    {"resample2d nearest scales", c_resample_nearest, "resample2d"},
    {"resample2d linear sizes", c_resample_linear, "resample2d"},
    {"batchNormalization", c_batch_norm, "batchNormalization"},
    {"instanceNormalization", c_instance_norm, "instanceNormalization"},
    {"layerNormalization", c_layer_norm, "layerNormalization"},
    {"reduceMean", c_reduce_rows, "reduceMean"},
    {"reduceSum", c_reduce_rows, "reduceSum"},
    {"reduceMax", c_reduce_rows, "reduceMax"},
    {"reduceMin", c_reduce_rows, "reduceMin"},
    {"reduceProduct", c_reduce_rows, "reduceProduct"},
    {"reduceL1", c_reduce_rows, "reduceL1"},
    {"reduceL2", c_reduce_rows, "reduceL2"},
    {"reduceLogSum", c_reduce_rows, "reduceLogSum"},
    {"reduceLogSumExp", c_reduce_rows, "reduceLogSumExp"},
    {"reduceSumSquare", c_reduce_rows, "reduceSumSquare"},
    {"reduceSum axis 0 keepDimensions", c_reduce_cols_keep, "reduceSum"},
    {"reduceMax axis 0 keepDimensions", c_reduce_cols_keep, "reduceMax"},
    {"argMax", c_argmax, "argMax"},
    {"argMin", c_argmax, "argMin"},
    {"softmax", c_softmax, "softmax"},
    {"cumulativeSum", c_cumsum, "cumulativeSum"},
    {"cumulativeSum exclusive reversed", c_cumsum_exclusive_reversed, "cumulativeSum"},
    {"reshape", c_reshape, "reshape"},
    {"transpose", c_transpose, "transpose"},
    {"concat", c_concat, "concat"},
    {"split", c_split, "split"},
    {"slice strided", c_slice, "slice"},
    {"gather", c_gather, "gather"},
    {"gather out of range clamps", c_gather_clamp, "gather"},
    {"gather int64 out of range clamps", c_gather_clamp_i64, "gather"},
    {"gatherElements", c_gather_elements, "gatherElements"},
    {"gatherElements out of range clamps", c_gather_elements_clamp, "gatherElements"},
    {"scatterElements", c_scatter_elements, "scatterElements"},
    {"expand", c_expand, "expand"},
    {"squeeze", c_squeeze, "squeeze"},
    {"unsqueeze", c_unsqueeze, "unsqueeze"},
    {"pad constant", c_pad_constant, "pad"},
    {"pad reflection", c_pad_reflect, "pad"},
    {"pad edge", c_pad_edge, "pad"},
    {"tile", c_tile, "tile"},
    {"triangular upper", c_triangular_upper, "triangular"},
    {"triangular lower diagonal 1", c_triangular_lower, "triangular"},
    {"quantizeLinear uint8", c_quantize_u8, "quantizeLinear"},
    {"quantizeLinear float quotient at a tie", c_quantize_tie, "quantizeLinear"},
    {"dequantizeLinear int8 blockwise", c_dequantize_blockwise, "dequantizeLinear"},
    {"dequantizeLinear int4 odd count", c_dequantize_i4, "dequantizeLinear"},
    {"dequantizeLinear uint4 odd count", c_dequantize_u4, "dequantizeLinear"},
    {"berth.matmulEpilogue", c_matmul_epilogue, "berth.matmulEpilogue"},
    {"berth.attention", c_attention, "berth.attention"},
    {"berth.matmulQuantized int8 three blocks bias gelu residual", c_mmq_i8_epilogue, "berth.matmulQuantized"},
    {"berth.matmulQuantized uint8 per column", c_mmq_u8_per_column, "berth.matmulQuantized"},
    {"berth.matmulQuantized int4 odd count bias relu", c_mmq_i4_odd, "berth.matmulQuantized"},
    {"berth.matmulQuantized uint4 deep residual", c_mmq_u4_deep, "berth.matmulQuantized"},
    {"berth.matmulQuantized int4 no zero point tanh", c_mmq_i4_no_zero, "berth.matmulQuantized"},
    {"berth.gatherQuantized int8 int64 indices", c_gq_i8, "berth.gatherQuantized"},
    {"berth.gatherQuantized uint4 odd count int32 indices", c_gq_u4_odd, "berth.gatherQuantized"},
    {"berth.gatherQuantized int8 no zero point", c_gq_i8_no_zero, "berth.gatherQuantized"},
    {"berth.gatherQuantized int8 int64 out of range clamps", c_gq_i8_clamp, "berth.gatherQuantized"},
    {"berth.gatherQuantized uint4 int32 out of range clamps", c_gq_u4_clamp, "berth.gatherQuantized"},
    {"berth.elementwise hardswish per channel residual", c_elementwise, "berth.elementwise"},
    {"berth.conv2dEpilogue 3x3 hardswish scale residual", c_conv_epilogue_gemm, "berth.conv2dEpilogue"},
    {"berth.conv2dEpilogue depthwise relu", c_conv_epilogue_depthwise, "berth.conv2dEpilogue"},
    {"berth.conv2dEpilogue 1x1 two channels silu", c_conv_epilogue_narrow, "berth.conv2dEpilogue"},
    {"conv2d 3x3 large result", c_conv2d_large, "conv2d"},
    {"conv2d 3x3 large result strided dilated", c_conv2d_large_strided, "conv2d"},
    {"berth.conv2dEpilogue 1x1 large result per channel", c_conv_epilogue_large, "berth.conv2dEpilogue"},
    {"add uint8 wraps", c_add_u8_wraps, "add"},
    {"div int8 by zero and MIN / -1", c_div_i8_edges, "div"},
    {"max uint64 above the int64 range", c_max_u64_high, "max"},
    {"min uint32", c_min_u32, "min"},
    {"pow int32 negative exponents", c_pow_i32, "pow"},
    {"sub float16 to infinity", c_sub_f16, "sub"},
    {"clamp int8 fractional bounds", c_clamp_i8, "clamp"},
    {"pad int64 reflection", c_pad_i64_reflection, "pad"},
    {"pad uint8 constant", c_pad_u8_constant, "pad"},
    {"cast float32 to uint64 saturates", c_cast_f32_u64, "cast"},
    {"cast float32 to int64 saturates", c_cast_f32_i64, "cast"},
    {"greater int8 signed", c_greater_i8, "greater"},
    {"lesser float16 with NaN", c_lesser_f16, "lesser"},
    {"edge identity float32", c_edge_unary, "identity"},
    {"edge relu float32", c_edge_unary, "relu"},
    {"edge abs float32", c_edge_unary, "abs"},
    {"edge neg float32", c_edge_unary, "neg"},
    {"edge sign float32", c_edge_unary, "sign"},
    {"edge clamp float32", c_edge_unary, "clamp"},
    {"edge leakyRelu float32", c_edge_unary, "leakyRelu"},
    {"edge elu float32", c_edge_unary, "elu"},
    {"edge sigmoid float32", c_edge_unary, "sigmoid"},
    {"edge hardSigmoid float32", c_edge_unary, "hardSigmoid"},
    {"edge hardSwish float32", c_edge_unary, "hardSwish"},
    {"edge softplus float32", c_edge_unary, "softplus"},
    {"edge softsign float32", c_edge_unary, "softsign"},
    {"edge tanh float32", c_edge_unary, "tanh"},
    {"edge gelu float32", c_edge_unary, "gelu"},
    {"edge erf float32", c_edge_unary, "erf"},
    {"edge sqrt float32", c_edge_unary, "sqrt"},
    {"edge exp float32", c_edge_unary, "exp"},
    {"edge log float32", c_edge_unary, "log"},
    {"edge ceil float32", c_edge_unary, "ceil"},
    {"edge floor float32", c_edge_unary, "floor"},
    {"edge reciprocal float32", c_edge_unary, "reciprocal"},
    {"edge sin float32", c_edge_unary, "sin"},
    {"edge cos float32", c_edge_unary, "cos"},
    {"edge add float32 every pair", c_edge_binary, "add"},
    {"edge sub float32 every pair", c_edge_binary, "sub"},
    {"edge mul float32 every pair", c_edge_binary, "mul"},
    {"edge div float32 every pair", c_edge_binary, "div"},
    {"edge max float32 every pair", c_edge_binary, "max"},
    {"edge min float32 every pair", c_edge_binary, "min"},
    {"edge pow float32 every pair", c_edge_binary, "pow"},
    {"edge prelu float32 every pair", c_edge_binary, "prelu"},
    {"edge equal float32 every pair", c_edge_binary, "equal"},
    {"edge notEqual float32 every pair", c_edge_binary, "notEqual"},
    {"edge greater float32 every pair", c_edge_binary, "greater"},
    {"edge greaterOrEqual float32 every pair", c_edge_binary, "greaterOrEqual"},
    {"edge lesser float32 every pair", c_edge_binary, "lesser"},
    {"edge lesserOrEqual float32 every pair", c_edge_binary, "lesserOrEqual"},
    {"edge add int32 every pair", c_edge_int32, "add"},
    {"edge sub int32 every pair", c_edge_int32, "sub"},
    {"edge mul int32 every pair", c_edge_int32, "mul"},
    {"edge div int32 every pair", c_edge_int32, "div"},
    {"edge max int32 every pair", c_edge_int32, "max"},
    {"edge min int32 every pair", c_edge_int32, "min"},
    {"edge pow int32 every pair", c_edge_int32, "pow"},
    {"edge equal int32 every pair", c_edge_int32, "equal"},
    {"edge greater int32 every pair", c_edge_int32, "greater"},
    {"edge lesser int32 every pair", c_edge_int32, "lesser"},
    {"edge add int64 every pair", c_edge_int64, "add"},
    {"edge sub int64 every pair", c_edge_int64, "sub"},
    {"edge mul int64 every pair", c_edge_int64, "mul"},
    {"edge div int64 every pair", c_edge_int64, "div"},
    {"edge max int64 every pair", c_edge_int64, "max"},
    {"edge min int64 every pair", c_edge_int64, "min"},
    {"edge pow int64 every pair", c_edge_int64, "pow"},
    {"edge equal int64 every pair", c_edge_int64, "equal"},
    {"edge greater int64 every pair", c_edge_int64, "greater"},
    {"edge lesser int64 every pair", c_edge_int64, "lesser"},
    {"edge cast float32 to int32", c_edge_cast_from_f32, "int32"},
    {"edge cast float32 to int64", c_edge_cast_from_f32, "int64"},
    {"edge cast float32 to uint8", c_edge_cast_from_f32, "uint8"},
    {"edge cast float32 to uint32", c_edge_cast_from_f32, "uint32"},
    {"edge cast int32 to float32", c_edge_cast_to_f32, "int32"},
    {"edge cast int64 to float32", c_edge_cast_to_f32, "int64"},
    {"edge where", c_edge_where, "where"},
    {"edge logicalAnd", c_edge_logical, "logicalAnd"},
    {"edge logicalOr", c_edge_logical, "logicalOr"},
    {"edge logicalNot", c_edge_logical, "logicalNot"},
    {"edge reduceMean rows", c_edge_reduce, "reduceMean"},
    {"edge reduceSum rows", c_edge_reduce, "reduceSum"},
    {"edge reduceMax rows", c_edge_reduce, "reduceMax"},
    {"edge reduceMin rows", c_edge_reduce, "reduceMin"},
    {"edge reduceProduct rows", c_edge_reduce, "reduceProduct"},
    {"edge reduceL1 rows", c_edge_reduce, "reduceL1"},
    {"edge reduceL2 rows", c_edge_reduce, "reduceL2"},
    {"edge reduceLogSum rows", c_edge_reduce, "reduceLogSum"},
    {"edge reduceLogSumExp rows", c_edge_reduce, "reduceLogSumExp"},
    {"edge reduceSumSquare rows", c_edge_reduce, "reduceSumSquare"},
    {"edge reduceMean empty axis", c_edge_reduce_empty, "reduceMean"},
    {"edge reduceSum empty axis", c_edge_reduce_empty, "reduceSum"},
    {"edge reduceMax empty axis", c_edge_reduce_empty, "reduceMax"},
    {"edge reduceMin empty axis", c_edge_reduce_empty, "reduceMin"},
    {"edge reduceProduct empty axis", c_edge_reduce_empty, "reduceProduct"},
    {"edge reduceL1 empty axis", c_edge_reduce_empty, "reduceL1"},
    {"edge reduceL2 empty axis", c_edge_reduce_empty, "reduceL2"},
    {"edge reduceLogSum empty axis", c_edge_reduce_empty, "reduceLogSum"},
    {"edge reduceLogSumExp empty axis", c_edge_reduce_empty, "reduceLogSumExp"},
    {"edge reduceSumSquare empty axis", c_edge_reduce_empty, "reduceSumSquare"},
    {"edge argMax rows", c_edge_arg, "argMax"},
    {"edge argMin rows", c_edge_arg, "argMin"},
    {"edge softmax rows", c_edge_softmax, "1"},
    {"edge softmax down columns", c_edge_softmax, "0"},
    {"edge cumulativeSum rows", c_edge_cumsum, "cumulativeSum"},
    {"edge maxPool2d windows", c_edge_max_pool, "maxPool2d"},
};
const size_t oc_count = sizeof oc_table / sizeof oc_table[0];
