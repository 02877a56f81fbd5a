/* Elementwise unary ops on flat buffers, split across the pool, plus
 * logicalNot and cast. Cast saturates float-to-integer conversions (NaN
 * becomes 0), wraps integer narrowing, so no value is undefined, and
 * converts float16 in software. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_internal.h"

static const struct { const char *name; int op; } un_names[] = {
    {"relu", U_RELU}, {"sigmoid", U_SIGMOID}, {"tanh", U_TANH}, {"exp", U_EXP}, {"log", U_LOG},
    {"sqrt", U_SQRT}, {"abs", U_ABS}, {"neg", U_NEG}, {"erf", U_ERF}, {"gelu", U_GELU},
    {"hardSigmoid", U_HARDSIGMOID}, {"hardSwish", U_HARDSWISH}, {"clamp", U_CLAMP},
    {"leakyRelu", U_LEAKYRELU}, {"elu", U_ELU}, {"softplus", U_SOFTPLUS}, {"reciprocal", U_RECIPROCAL},
    {"floor", U_FLOOR}, {"ceil", U_CEIL}, {"sin", U_SIN}, {"cos", U_COS}, {"sign", U_SIGN},
    {"softsign", U_SOFTSIGN},
};

typedef struct un_params {
    int op;
    float alpha, beta;
    size_t n;
    const void *x;
    void *y;
    int half; /* float16 in and out, computed in float32 */
} un_params;

#define LOOP(EXPR) for (size_t i = 0; i < n; i++) { float v = x[i]; y[i] = (EXPR); }

CPU_CLONES static void un_f32(const un_params *u, const float *restrict x, float *restrict y, size_t n) {
    const float al = u->alpha, be = u->beta;
    switch (u->op) {
    case U_RELU: LOOP(cpu_relu1(v)); break;
    /* NEON polynomials on arm64, libm's expf and tanhf elsewhere (cpu_vmath*.c) */
    case U_SIGMOID: cpu_vsigmoid(x, y, n); break;
    case U_TANH: cpu_vtanh(x, y, n); break;
    case U_EXP: cpu_vexp_full(x, y, n); break;
    case U_LOG: LOOP(logf(v)); break;
    case U_SQRT: LOOP(sqrtf(v)); break;
    case U_ABS: LOOP(fabsf(v)); break;
    case U_NEG: LOOP(-v); break;
    case U_ERF: cpu_verf(x, y, n); break;
    case U_GELU: cpu_vgelu(x, y, n); break;
    case U_HARDSIGMOID: LOOP(cpu_hardsigmoid1(v, al, be)); break;
    case U_HARDSWISH: LOOP(cpu_hardswish1(v)); break;
    case U_CLAMP: LOOP(cpu_clamp1(v, al, be)); break;
    case U_LEAKYRELU: LOOP(cpu_leaky1(v, al)); break;
    case U_ELU: LOOP(v >= 0.0f ? v : al * (expf(v) - 1.0f)); break;
    case U_SOFTPLUS: LOOP(v > 20.0f ? v : log1pf(expf(v))); break;
    case U_RECIPROCAL: LOOP(1.0f / v); break;
    case U_FLOOR: LOOP(floorf(v)); break;
    case U_CEIL: LOOP(ceilf(v)); break;
    case U_SIN: LOOP(sinf(v)); break;
    case U_COS: LOOP(cosf(v)); break;
    case U_SIGN: LOOP(v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : v)); break;
    case U_SOFTSIGN: LOOP(isinf(v) ? (v > 0.0f ? 1.0f : -1.0f) : v / (1.0f + fabsf(v))); break; /* not inf/inf */
    default: break;
    }
}

int cpu_unary_code(const char *op) {
    for (size_t i = 0; i < sizeof un_names / sizeof un_names[0]; i++)
        if (strcmp(op, un_names[i].name) == 0) return un_names[i].op;
    return -1;
}

void cpu_unary_f32(int code, float alpha, float beta, const float *x, float *y, size_t n) {
    un_params u = {code, alpha, beta, n, x, y, 0};
    un_f32(&u, x, y, n);
}

static void un_task(void *ctx, size_t b, size_t e) {
    const un_params *u = ctx;
    if (u->op == U_NOT) {
        const uint8_t *x = u->x;
        uint8_t *y = u->y;
        for (size_t i = b; i < e; i++) y[i] = x[i] == 0;
        return;
    }
    if (!u->half) {
        un_f32(u, (const float *)u->x + b, (float *)u->y + b, e - b);
        return;
    }
    const uint16_t *x = u->x;
    uint16_t *y = u->y;
    float in[256], out[256];
    for (size_t i = b; i < e; i += 256) {
        size_t m = e - i < 256 ? e - i : 256;
        for (size_t k = 0; k < m; k++) in[k] = cpu_half_to_float(x[i + k]);
        un_f32(u, in, out, m);
        for (size_t k = 0; k < m; k++) y[i + k] = cpu_float_to_half(out[k]);
    }
}

static void un_exec(const cpu_node *n, berth_plan *p) {
    un_params *u = n->params;
    u->x = cpu_ptr(p, n->in[0]);
    u->y = cpu_ptr(p, n->out[0]);
    cpu_pool_for(p->dev->pool, u->n, 16384, un_task, u);
}

/* clamp on the dtypes other than float32: integer bounds are the float
 * bounds rounded inward (x >= 2.5 is x >= 3) and saturated to the type,
 * float16 is clamped in float32 (as every float16 unary op is computed). */
typedef struct clamp_params {
    berth_dtype t;
    size_t n;
    float lo_f, hi_f;
    uint8_t lo[8], hi[8];
} clamp_params;

#define CLAMP_LOOP(T)                                                          \
    do {                                                                       \
        const T *x = xv;                                                       \
        T *y = yv, lo, hi;                                                     \
        memcpy(&lo, cp->lo, sizeof lo);                                        \
        memcpy(&hi, cp->hi, sizeof hi);                                        \
        for (size_t i = 0; i < cp->n; i++) y[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i]; \
    } while (0)

static void clamp_exec(const cpu_node *n, berth_plan *p) {
    const clamp_params *cp = n->params;
    const void *xv = cpu_ptr(p, n->in[0]);
    void *yv = cpu_ptr(p, n->out[0]);
    switch (cp->t) {
    case BERTH_DTYPE_I8: CLAMP_LOOP(int8_t); break;
    case BERTH_DTYPE_U8: CLAMP_LOOP(uint8_t); break;
    case BERTH_DTYPE_I32: CLAMP_LOOP(int32_t); break;
    case BERTH_DTYPE_U32: CLAMP_LOOP(uint32_t); break;
    case BERTH_DTYPE_I64: CLAMP_LOOP(int64_t); break;
    case BERTH_DTYPE_U64: CLAMP_LOOP(uint64_t); break;
    case BERTH_DTYPE_F16: {
        const uint16_t *x = xv;
        uint16_t *y = yv;
        for (size_t i = 0; i < cp->n; i++) {
            float v = cpu_half_to_float(x[i]);
            y[i] = cpu_float_to_half(v < cp->lo_f ? cp->lo_f : v > cp->hi_f ? cp->hi_f : v);
        }
        break;
    }
    default: break;
    }
}

static berth_status prep_clamp_other(cpu_prep *c, double lo, double hi) {
    clamp_params *cp = cpu_params(c, sizeof *cp);
    if (!cp) return BERTH_ERR_NOMEM;
    cp->t = cpu_in(c, 0)->dtype;
    cp->n = cpu_in(c, 0)->numel;
    cp->lo_f = (float)lo;
    cp->hi_f = (float)hi;
    cpu_elem_put(cp->lo, cp->t, 0, (cpu_elem){ceil(lo), 0, 1});
    cpu_elem_put(cp->hi, cp->t, 0, (cpu_elem){floor(hi), 0, 1});
    c->cn->exec = clamp_exec;
    return BERTH_OK;
}

berth_status cpu_check_unary(const bk_node_ctx *c) {
    berth_dtype t = bk_in(c, 0)->dtype;
    if (t != BERTH_DTYPE_F32 && t != BERTH_DTYPE_F16 && cpu_unary_code(c->node->op) != U_CLAMP)
        return bk_refuse(c, "%s on %s is not supported (float32 and float16; clamp takes every numeric dtype)",
                         c->node->op, bk_dtype_name(t));
    return BERTH_OK;
}

static berth_status same_shape(cpu_prep *c) {
    return bk_check_out_dims(&c->bk, 0, cpu_in(c, 0)->rank, cpu_in(c, 0)->dims);
}

berth_status cpu_prep_unary(cpu_prep *c) {
    int op = cpu_unary_code(c->node->op);
    berth_status st = BERTH_OK;
    if (!st) st = same_shape(c);
    if (st) return st;
    double alpha = 0, beta = 0;
    switch (op) {
    case U_HARDSIGMOID:
        st = bk_opt_float(&c->bk, "alpha", 0.2, &alpha);
        if (!st) st = bk_opt_float(&c->bk, "beta", 0.5, &beta);
        break;
    case U_CLAMP:
        st = bk_opt_float(&c->bk, "minValue", -INFINITY, &alpha);
        if (!st) st = bk_opt_float(&c->bk, "maxValue", INFINITY, &beta);
        if (!st && alpha > beta) return bk_fail(&c->bk, "minValue %g is greater than maxValue %g", alpha, beta);
        break;
    case U_LEAKYRELU: st = bk_opt_float(&c->bk, "alpha", 0.01, &alpha); break;
    case U_ELU: st = bk_opt_float(&c->bk, "alpha", 1.0, &alpha); break;
    default: break;
    }
    if (st) return st;
    berth_dtype t = cpu_in(c, 0)->dtype;
    if (t != BERTH_DTYPE_F32 && (t != BERTH_DTYPE_F16 || op == U_CLAMP)) return prep_clamp_other(c, alpha, beta);
    un_params *u = cpu_params(c, sizeof *u);
    if (!u) return BERTH_ERR_NOMEM;
    u->op = op;
    u->half = t == BERTH_DTYPE_F16;
    u->alpha = (float)alpha;
    u->beta = (float)beta;
    u->n = cpu_in(c, 0)->numel;
    c->cn->exec = un_exec;
    return BERTH_OK;
}

berth_status cpu_prep_logical_not(cpu_prep *c) {
    berth_status st = BERTH_OK;
    if (!st) st = same_shape(c);
    if (st) return st;
    un_params *u = cpu_params(c, sizeof *u);
    if (!u) return BERTH_ERR_NOMEM;
    u->op = U_NOT;
    u->n = cpu_in(c, 0)->numel;
    c->cn->exec = un_exec;
    return BERTH_OK;
}

/* ---- cast ---- */

typedef struct cast_params {
    berth_dtype from, to;
    size_t n;
} cast_params;

static void cast_exec(const cpu_node *n, berth_plan *p) {
    const cast_params *cp = n->params;
    const void *x = cpu_ptr(p, n->in[0]);
    void *y = cpu_ptr(p, n->out[0]);
    if (cp->from == cp->to) {
        memcpy(y, x, cp->n * bk_dtype_size(cp->to));
        return;
    }
    for (size_t i = 0; i < cp->n; i++) cpu_elem_put(y, cp->to, i, cpu_elem_get(x, cp->from, i));
}

berth_status cpu_prep_cast(cpu_prep *c) {
    const uint32_t ok = CPU_NUMERIC;
    berth_status st = BERTH_OK;
    if (!st) st = same_shape(c);
    if (st) return st;
    berth_dtype from = cpu_in(c, 0)->dtype, to = cpu_out(c, 0)->dtype;
    if (!(ok & BK_BIT(from)) || !(ok & BK_BIT(to)))
        return bk_fail(&c->bk, "cast from %s to %s is not supported (float32, float16, int8, uint8, int32, uint32, int64, uint64)",
                        bk_dtype_name(from), bk_dtype_name(to));
    const char *type;
    if ((st = bk_opt_string(&c->bk, "type", NULL, &type))) return st;
    static const char *const short_names[] = {[BERTH_DTYPE_F32] = "f32", [BERTH_DTYPE_F16] = "f16",
                                              [BERTH_DTYPE_I32] = "i32", [BERTH_DTYPE_U32] = "u32",
                                              [BERTH_DTYPE_I64] = "i64", [BERTH_DTYPE_U64] = "u64",
                                              [BERTH_DTYPE_I8] = "i8", [BERTH_DTYPE_U8] = "u8"};
    if (type && strcmp(type, bk_dtype_name(to)) != 0 && strcmp(type, short_names[to]) != 0)
        return bk_fail(&c->bk, "type '%s' disagrees with the output dtype %s", type, bk_dtype_name(to));
    cast_params *cp = cpu_params(c, sizeof *cp);
    if (!cp) return BERTH_ERR_NOMEM;
    cp->from = from;
    cp->to = to;
    cp->n = cpu_in(c, 0)->numel;
    c->cn->exec = cast_exec;
    return BERTH_OK;
}
