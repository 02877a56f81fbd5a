/* Op cases of quantized weights: berth.matmulQuantized and
 * berth.gatherQuantized on each integer dtype, with block counts that do
 * not divide a kernel's tile or k block, an odd count of 4-bit values (a
 * last byte half used) and zero points away from zero or absent, and
 * dequantizeLinear on 4-bit tensors. Weights are drawn from a fixed LCG;
 * the expected values are the ops' notes computed in double by the loops
 * below. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "op_cases_build.h"

#define I4 BERTH_DTYPE_I4
#define U4 BERTH_DTYPE_U4

/* Room for a case's data, which must outlive its run: a ring, as each
 * case needs far less than the whole and runs before the next is built. */
static unsigned char q_pool[1 << 20];
static size_t q_used;

static void *q_alloc(size_t bytes) {
    size_t at = (q_used + 63) & ~(size_t)63;
    if (bytes > sizeof q_pool) abort();
    if (at + bytes > sizeof q_pool) at = 0;
    q_used = at + bytes;
    return q_pool + at;
}

static uint32_t lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* The integer range of each dtype. */
static void q_range(berth_dtype t, int *lo, int *hi) {
    *lo = t == I8 ? -128 : t == I4 ? -8 : 0;
    *hi = t == I8 ? 127 : t == U8 ? 255 : t == I4 ? 7 : 15;
}

/* n integers of dtype t in its range, stored as the archive stores them
 * (4-bit: two per byte, low nibble first); vals gets them as ints. */
static void *q_ints(berth_dtype t, size_t n, uint32_t seed, int *vals, size_t *bytes) {
    int lo, hi;
    q_range(t, &lo, &hi);
    int packed = t == I4 || t == U4;
    *bytes = packed ? (n + 1) / 2 : n;
    unsigned char *p = q_alloc(*bytes);
    memset(p, 0, *bytes);
    for (size_t i = 0; i < n; i++) {
        int v = lo + (int)(lcg(&seed) % (uint32_t)(hi - lo + 1));
        vals[i] = v;
        if (packed)
            p[i / 2] |= (unsigned char)((v & 15) << (4 * (i % 2)));
        else
            p[i] = (unsigned char)v;
    }
    return p;
}

static float *q_floats(size_t n, uint32_t seed, float lo, float span) {
    float *p = q_alloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = lo + span * (float)(lcg(&seed) % 1024) / 1024.0f;
    return p;
}

static double act_ref(const char *act, double v) {
    if (!strcmp(act, "relu")) return v > 0 ? v : 0;
    if (!strcmp(act, "gelu")) return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    if (!strcmp(act, "sigmoid")) return 1.0 / (1.0 + exp(-v));
    if (!strcmp(act, "tanh")) return tanh(v);
    return v;
}

/* Zero points: drawn (zp_on), or absent from the node and all zero. */
static const void *q_zero(berth_dtype t, size_t n, int zp_on, uint32_t seed, int *vals, size_t *bytes) {
    if (zp_on) return q_ints(t, n, seed, vals, bytes);
    memset(vals, 0, n * sizeof(int));
    *bytes = 0;
    return NULL;
}

/* y[batch, m, n] = act(a[batch, m, k] @ dequantize(b[k, n]) + bias) + res,
 * with g blocks along k; bias, act, res and the zero point optional. */
static void mmq(oc_case *c, berth_dtype t, int64_t batch, int64_t m, int64_t k, int64_t n, int64_t g,
                int bias_on, const char *act, int res_on, int zp_on, uint32_t seed) {
    size_t rows = (size_t)(batch * m), kn = (size_t)(k * n), gn = (size_t)(g * n);
    int *bq = q_alloc(kn * sizeof(int)), *zq = q_alloc(gn * sizeof(int));
    size_t bb, zb;
    const void *bd = q_ints(t, kn, seed, bq, &bb), *zd = q_zero(t, gn, zp_on, seed + 1, zq, &zb);
    /* scales near 1/64 keep |y| of order one for any k here */
    const float *sc = q_floats(gn, seed + 2, 0.004f, 0.03f);
    const float *a = q_floats(rows * (size_t)k, seed + 3, -1.0f, 2.0f);
    const float *bias = q_floats((size_t)n, seed + 4, -0.5f, 1.0f);
    const float *res = q_floats(rows * (size_t)n, seed + 5, -1.0f, 2.0f);
    double *want = q_alloc(rows * (size_t)n * sizeof(double));
    int64_t block = k / g;
    for (size_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) {
                size_t blk = (size_t)((p / block) * n + j);
                s += (double)a[i * (size_t)k + (size_t)p] * ((double)(bq[p * n + j] - zq[blk]) * sc[blk]);
            }
            if (bias_on) s += bias[j];
            if (act) s = act_ref(act, s);
            if (res_on) s += res[i * (size_t)n + (size_t)j];
            want[i * (size_t)n + (size_t)j] = s;
        }
    uint32_t ai = in(c, "a", F32, 3, DIMS(batch, m, k), a);
    uint32_t bi = tg_const(&c->g, "b", t, 2, DIMS(k, n), bd, bb);
    uint32_t si = tg_const(&c->g, "scale", F32, 2, DIMS(g, n), sc, gn * sizeof(float));
    uint32_t zi = zp_on ? tg_const(&c->g, "zero", t, 2, DIMS(g, n), zd, zb) : 0;
    uint32_t ri = res_on ? in(c, "res", F32, 3, DIMS(batch, m, n), res) : 0;
    uint32_t bo = bias_on ? tg_const(&c->g, "bias", F32, 1, DIMS(n), bias, (size_t)n * sizeof(float)) : 0;
    uint32_t o = out_f(c, "y", 3, DIMS(batch, m, n), want);
    berth_attr at[3];
    uint32_t na = 0;
    if (bias_on) at[na++] = A_OPND("bias", bo);
    if (act) at[na++] = A_STR("activation", act);
    if (res_on) at[na++] = A_OPND("residual", ri);
    node(c, "berth.matmulQuantized", zp_on ? 4 : 3, IDX(ai, bi, si, zi), 1, IDX(o), na, at);
}

void c_mmq_i8_epilogue(oc_case *c, const char *op) {
    (void)op; /* three blocks of 32 along k, 37 columns: bias, gelu, residual */
    mmq(c, I8, 2, 5, 96, 37, 3, 1, "gelu", 1, 1, 11);
}
void c_mmq_u8_per_column(oc_case *c, const char *op) {
    (void)op; /* one block: a scale and zero point per column */
    mmq(c, U8, 1, 13, 40, 19, 1, 0, NULL, 0, 1, 23);
}
void c_mmq_i4_odd(oc_case *c, const char *op) {
    (void)op; /* 45 x 11 = 495 values: the last byte holds one; blocks of 9 */
    mmq(c, I4, 3, 7, 45, 11, 5, 1, "relu", 0, 1, 37);
}
void c_mmq_u4_deep(oc_case *c, const char *op) {
    (void)op; /* k = 160 crosses every kernel's k block; 25 rows, 67 columns */
    mmq(c, U4, 1, 25, 160, 67, 5, 0, NULL, 1, 1, 41);
}
void c_mmq_i4_no_zero(oc_case *c, const char *op) {
    (void)op; /* symmetric, as onnx2webnn writes it: no zeroPoint; 64 columns of whole panels */
    mmq(c, I4, 1, 9, 128, 64, 4, 1, "tanh", 0, 0, 43);
}

/* y[idx..., d] = dequantize(table[v, d])[indices], g blocks per row. */
static void gq(oc_case *c, berth_dtype t, int64_t v, int64_t d, int64_t g, berth_dtype it, int zp_on,
               uint32_t seed, int far) {
    size_t vd = (size_t)(v * d), vg = (size_t)(v * g);
    int *tq = q_alloc(vd * sizeof(int)), *zq = q_alloc(vg * sizeof(int));
    size_t tb, zb;
    const void *td = q_ints(t, vd, seed, tq, &tb), *zd = q_zero(t, vg, zp_on, seed + 1, zq, &zb);
    const float *sc = q_floats(vg, seed + 2, 0.01f, 0.1f);
    static const int64_t in64[6] = {3, 0, -1, 5, 5, 2};
    static const int32_t in32[4] = {6, -7, 1, 4};
    /* far: out of range both ways, beyond 32 bits for int64, as a
     * computed index may be; clamped (after one wrap if negative) */
    static const int64_t far64[6] = {10, -11, (int64_t)1 << 33, -((int64_t)1 << 33), 4, -10};
    static const int32_t far32[4] = {7, -8, 1000, -1000};
    const int64_t *idx64 = far ? far64 : in64;
    const int32_t *idx32 = far ? far32 : in32;
    int n_idx = it == I64 ? 6 : 4;
    double *want = q_alloc((size_t)n_idx * (size_t)d * sizeof(double));
    int64_t block = d / g;
    for (int i = 0; i < n_idx; i++) {
        int64_t r = it == I64 ? idx64[i] : idx32[i];
        if (r < 0) r += v;
        r = r < 0 ? 0 : r >= v ? v - 1 : r;
        for (int64_t j = 0; j < d; j++) {
            size_t blk = (size_t)(r * g + j / block);
            want[(size_t)i * (size_t)d + (size_t)j] = (double)(tq[r * d + j] - zq[blk]) * sc[blk];
        }
    }
    uint32_t ti = tg_const(&c->g, "table", t, 2, DIMS(v, d), td, tb);
    uint32_t ii = it == I64 ? in(c, "indices", I64, 2, DIMS(2, 3), idx64) : in(c, "indices", I32, 1, DIMS(4), idx32);
    uint32_t si = tg_const(&c->g, "scale", F32, 2, DIMS(v, g), sc, vg * sizeof(float));
    uint32_t zi = zp_on ? tg_const(&c->g, "zero", t, 2, DIMS(v, g), zd, zb) : 0;
    uint32_t o = it == I64 ? out_f(c, "y", 3, DIMS(2, 3, d), want) : out_f(c, "y", 2, DIMS(4, d), want);
    node(c, "berth.gatherQuantized", zp_on ? 4 : 3, IDX(ti, ii, si, zi), 1, IDX(o), 0, NULL);
}

void c_gq_i8(oc_case *c, const char *op) {
    (void)op; /* [10, 12] in blocks of 4, int64 indices [2, 3], one negative */
    gq(c, I8, 10, 12, 3, I64, 1, 53, 0);
}
void c_gq_i8_no_zero(oc_case *c, const char *op) {
    (void)op; /* no zeroPoint: all zeros */
    gq(c, I8, 10, 12, 3, I32, 0, 59, 0);
}
void c_gq_u4_odd(oc_case *c, const char *op) {
    (void)op; /* [7, 9] = 63 values, the last byte half used; blocks of 3 */
    gq(c, U4, 7, 9, 3, I32, 1, 67, 0);
}
void c_gq_i8_clamp(oc_case *c, const char *op) {
    (void)op; /* [10, 12]: 10, -11, 2^33, -2^33, 4, -10 read rows 9, 0, 9, 0, 4, 0 */
    gq(c, I8, 10, 12, 3, I64, 1, 71, 1);
}
void c_gq_u4_clamp(oc_case *c, const char *op) {
    (void)op; /* [7, 9]: 7, -8, 1000, -1000 read rows 6, 0, 6, 0 */
    gq(c, U4, 7, 9, 3, I32, 1, 73, 1);
}

/* dequantizeLinear on 4-bit tensors, packed two per byte: x [3, 5] (15
 * values, the last byte half used), scale and zero point [3, 1], one
 * block per row. */
static void pack4(const int *v, size_t n, unsigned char *p) {
    memset(p, 0, (n + 1) / 2);
    for (size_t i = 0; i < n; i++) p[i / 2] |= (unsigned char)((v[i] & 15) << (4 * (i % 2)));
}

static void dequantize4(oc_case *c, berth_dtype t) {
    static const int xi[15] = {-8, -1, 0, 3, 7, 1, 2, -3, 4, -5, 7, 6, -8, 0, 5};
    static const int xu[15] = {0, 15, 8, 1, 2, 9, 3, 14, 7, 0, 5, 6, 12, 10, 4};
    static const int zi[3] = {1, -2, 0}, zu[3] = {8, 3, 15};
    static const float sc[3] = {0.5f, 2, 0.25f};
    const int *x = t == I4 ? xi : xu, *z = t == I4 ? zi : zu;
    unsigned char *xp = q_alloc(8), *zp = q_alloc(2);
    double *want = q_alloc(15 * sizeof(double));
    pack4(x, 15, xp);
    pack4(z, 3, zp);
    for (int i = 0; i < 15; i++) want[i] = (double)(x[i] - z[i / 5]) * sc[i / 5];
    uint32_t a = tg_const(&c->g, "x", t, 2, DIMS(3, 5), xp, 8);
    uint32_t s = tg_const(&c->g, "scale", F32, 2, DIMS(3, 1), sc, sizeof sc);
    uint32_t zo = tg_const(&c->g, "zp", t, 2, DIMS(3, 1), zp, 2);
    uint32_t o = out_f(c, "y", 2, DIMS(3, 5), want);
    node(c, "dequantizeLinear", 3, IDX(a, s, zo), 1, IDX(o), 0, NULL);
}

void c_dequantize_i4(oc_case *c, const char *op) {
    (void)op;
    dequantize4(c, I4);
}
void c_dequantize_u4(oc_case *c, const char *op) {
    (void)op;
    dequantize4(c, U4);
}
