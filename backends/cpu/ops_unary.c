/* Elementwise unary ops on flat buffers, split across the pool, plus
 * logicalNot and cast. Cast saturates float-to-integer conversions (NaN
 * becomes 0), wraps integer narrowing, so no value is undefined, and
 * converts float16 in software. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_internal.h"

enum {
    U_RELU, U_SIGMOID, U_TANH, U_EXP, U_LOG, U_SQRT, U_ABS, U_NEG, U_ERF, U_GELU, U_HARDSIGMOID,
    U_HARDSWISH, U_CLAMP, U_LEAKYRELU, U_ELU, U_SOFTPLUS, U_RECIPROCAL, U_FLOOR, U_CEIL, U_SIN, U_COS,
    U_SIGN, U_SOFTSIGN, U_NOT
};

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
} un_params;

static inline float clamp01(float t) { return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t; }
static inline float clamp06(float t) { return t < 0.0f ? 0.0f : t > 6.0f ? 6.0f : t; }

#define LOOP(EXPR) for (size_t i = 0; i < n; i++) { float v = x[i]; y[i] = (EXPR); }

CPU_CLONES static void un_f32(const un_params *u, const float *restrict x, float *restrict y, size_t n) {
    const float al = u->alpha, be = u->beta;
    switch (u->op) {
    case U_RELU: LOOP(v > 0.0f ? v : 0.0f); break;
    case U_SIGMOID: LOOP(1.0f / (1.0f + expf(-v))); break;
    case U_TANH: LOOP(tanhf(v)); break;
    case U_EXP: LOOP(expf(v)); break;
    case U_LOG: LOOP(logf(v)); break;
    case U_SQRT: LOOP(sqrtf(v)); break;
    case U_ABS: LOOP(fabsf(v)); break;
    case U_NEG: LOOP(-v); break;
    case U_ERF: cpu_verf(x, y, n); break;
    case U_GELU: cpu_vgelu(x, y, n); break;
    /* comparisons, not fmaxf/fminf, which the compiler turns into a call
     * per element; a NaN passes through either way */
    case U_HARDSIGMOID: LOOP(clamp01(al * v + be)); break;
    case U_HARDSWISH: LOOP(v * clamp06(v + 3.0f) / 6.0f); break;
    case U_CLAMP: LOOP(v < al ? al : (v > be ? be : v)); break;
    case U_LEAKYRELU: LOOP(v >= 0.0f ? v : al * v); break;
    case U_ELU: LOOP(v >= 0.0f ? v : al * (expf(v) - 1.0f)); break;
    case U_SOFTPLUS: LOOP(v > 20.0f ? v : log1pf(expf(v))); break;
    case U_RECIPROCAL: LOOP(1.0f / v); break;
    case U_FLOOR: LOOP(floorf(v)); break;
    case U_CEIL: LOOP(ceilf(v)); break;
    case U_SIN: LOOP(sinf(v)); break;
    case U_COS: LOOP(cosf(v)); break;
    case U_SIGN: LOOP(v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : v)); break;
    case U_SOFTSIGN: LOOP(v / (1.0f + fabsf(v))); break;
    default: break;
    }
}

int cpu_unary_code(const char *op) {
    for (size_t i = 0; i < sizeof un_names / sizeof un_names[0]; i++)
        if (strcmp(op, un_names[i].name) == 0) return un_names[i].op;
    return -1;
}

void cpu_unary_f32(int code, float alpha, float beta, const float *x, float *y, size_t n) {
    un_params u = {code, alpha, beta, n, x, y};
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
    un_f32(u, (const float *)u->x + b, (float *)u->y + b, e - b);
}

static void un_exec(const cpu_node *n, berth_plan *p) {
    un_params *u = n->params;
    u->x = cpu_ptr(p, n->in[0]);
    u->y = cpu_ptr(p, n->out[0]);
    cpu_pool_for(p->dev->pool, u->n, 16384, un_task, u);
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
    un_params *u = cpu_params(c, sizeof *u);
    if (!u) return BERTH_ERR_NOMEM;
    u->op = op;
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

static int64_t sat_i64(double v, double lo, double hi) {
    if (v != v) return 0;
    if (v <= lo) return (int64_t)lo;
    if (v >= hi) return (int64_t)hi;
    return (int64_t)v;
}

/* IEEE half precision by hand (no compiler type is portable C11):
 * round to nearest even, overflow to infinity, subnormals kept. */
static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, f;
    if (exp == 0 && man == 0)
        f = sign;
    else if (exp == 0) { /* subnormal: normalize */
        exp = 127 - 15 + 1;
        while (!(man & 0x400u)) man <<= 1, exp--;
        f = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    } else if (exp == 31)
        f = sign | 0x7f800000u | (man << 13);
    else
        f = sign | ((exp + 112) << 23) | (man << 13);
    float out;
    memcpy(&out, &f, sizeof out);
    return out;
}

static uint16_t float_to_half(float v) {
    uint32_t f;
    memcpy(&f, &v, sizeof f);
    uint32_t sign = (f >> 16) & 0x8000u, man = f & 0x7fffffu;
    int32_t fexp = (int32_t)((f >> 23) & 0xffu), exp = fexp - 127 + 15;
    if (fexp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0u));
    if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
    uint32_t half, rem, mid;
    if (exp <= 0) {
        if (exp < -10) return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        half = man >> shift;
        rem = man & ((1u << shift) - 1);
        mid = 1u << (shift - 1);
    } else {
        half = ((uint32_t)exp << 10) | (man >> 13);
        rem = man & 0x1fffu;
        mid = 0x1000u;
    }
    if (rem > mid || (rem == mid && (half & 1u))) half++; /* a carry rolls into the exponent, as it should */
    return (uint16_t)(sign | half);
}

/* Read element i of any supported dtype as double (floats) or int64. */
static int is_float(berth_dtype t) { return t == BERTH_DTYPE_F32 || t == BERTH_DTYPE_F16; }
static double get_f(const void *x, berth_dtype t, size_t i) {
    switch (t) {
    case BERTH_DTYPE_F32: return ((const float *)x)[i];
    case BERTH_DTYPE_F16: return half_to_float(((const uint16_t *)x)[i]);
    case BERTH_DTYPE_I32: return ((const int32_t *)x)[i];
    case BERTH_DTYPE_I64: return (double)((const int64_t *)x)[i];
    case BERTH_DTYPE_U8: return ((const uint8_t *)x)[i];
    case BERTH_DTYPE_I8: return ((const int8_t *)x)[i];
    case BERTH_DTYPE_U32: return ((const uint32_t *)x)[i];
    default: return 0;
    }
}
static int64_t get_i(const void *x, berth_dtype t, size_t i) {
    switch (t) {
    case BERTH_DTYPE_I32: return ((const int32_t *)x)[i];
    case BERTH_DTYPE_I64: return ((const int64_t *)x)[i];
    case BERTH_DTYPE_U8: return ((const uint8_t *)x)[i];
    case BERTH_DTYPE_I8: return ((const int8_t *)x)[i];
    case BERTH_DTYPE_U32: return ((const uint32_t *)x)[i];
    default: return 0;
    }
}

static void cast_exec(const cpu_node *n, berth_plan *p) {
    const cast_params *cp = n->params;
    const void *x = cpu_ptr(p, n->in[0]);
    void *y = cpu_ptr(p, n->out[0]);
    berth_dtype to = cp->to;
    if (cp->from == to) {
        memcpy(y, x, cp->n * bk_dtype_size(to));
        return;
    }
    if (to == BERTH_DTYPE_F32) {
        float *o = y;
        for (size_t i = 0; i < cp->n; i++) o[i] = (float)get_f(x, cp->from, i);
        return;
    }
    if (to == BERTH_DTYPE_F16) {
        uint16_t *o = y;
        for (size_t i = 0; i < cp->n; i++) o[i] = float_to_half((float)get_f(x, cp->from, i));
        return;
    }
    static const double lo[] = {[BERTH_DTYPE_I32] = -2147483648.0, [BERTH_DTYPE_I64] = -9223372036854775808.0,
                                [BERTH_DTYPE_U8] = 0, [BERTH_DTYPE_I8] = -128, [BERTH_DTYPE_U32] = 0};
    static const double hi[] = {[BERTH_DTYPE_I32] = 2147483647.0, [BERTH_DTYPE_I64] = 9223372036854774784.0,
                                [BERTH_DTYPE_U8] = 255, [BERTH_DTYPE_I8] = 127, [BERTH_DTYPE_U32] = 4294967295.0};
    for (size_t i = 0; i < cp->n; i++) {
        int64_t v = is_float(cp->from) ? sat_i64(get_f(x, cp->from, i), lo[to], hi[to]) : get_i(x, cp->from, i);
        uint64_t u = (uint64_t)v; /* narrowing wraps */
        switch (to) {
        case BERTH_DTYPE_I32: ((int32_t *)y)[i] = (int32_t)(uint32_t)u; break;
        case BERTH_DTYPE_I64: ((int64_t *)y)[i] = v; break;
        case BERTH_DTYPE_U8: ((uint8_t *)y)[i] = (uint8_t)u; break;
        case BERTH_DTYPE_I8: ((int8_t *)y)[i] = (int8_t)(uint8_t)u; break;
        case BERTH_DTYPE_U32: ((uint32_t *)y)[i] = (uint32_t)u; break;
        default: break;
        }
    }
}

berth_status cpu_prep_cast(cpu_prep *c) {
    const uint32_t ok = BK_BIT(BERTH_DTYPE_F32) | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_I64) |
                        BK_BIT(BERTH_DTYPE_U8) | BK_BIT(BERTH_DTYPE_I8) | BK_BIT(BERTH_DTYPE_U32) |
                        BK_BIT(BERTH_DTYPE_F16);
    berth_status st = BERTH_OK;
    if (!st) st = same_shape(c);
    if (st) return st;
    berth_dtype from = cpu_in(c, 0)->dtype, to = cpu_out(c, 0)->dtype;
    if (!(ok & BK_BIT(from)) || !(ok & BK_BIT(to)))
        return bk_fail(&c->bk, "cast from %s to %s is not supported (float32, float16, int32, int64, uint8, int8, uint32)",
                        bk_dtype_name(from), bk_dtype_name(to));
    const char *type;
    if ((st = bk_opt_string(&c->bk, "type", NULL, &type))) return st;
    static const char *const short_names[] = {[BERTH_DTYPE_F32] = "f32", [BERTH_DTYPE_F16] = "f16",
                                              [BERTH_DTYPE_I32] = "i32", [BERTH_DTYPE_U32] = "u32",
                                              [BERTH_DTYPE_I64] = "i64", [BERTH_DTYPE_I8] = "i8", [BERTH_DTYPE_U8] = "u8"};
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
