/* Broadcasting binary ops: arithmetic (add sub mul div max min pow
 * prelu), comparisons and logical and/or/xor (u8 results) and where, on
 * every numeric dtype (float16 computed in float32). Integer arithmetic
 * wraps like two's complement and integer division by zero yields 0, so
 * no input value can trap or reach undefined behaviour. Float max and min
 * give NaN if either operand is NaN; float pow is C's powf, which is the
 * contract's (a negative base takes an integral exponent). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_internal.h"

enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN, B_POW, B_PRELU, B_EQ, B_GT, B_GE, B_LT, B_LE, B_NE, B_AND, B_OR, B_XOR };

static const struct { const char *name; int op; } bin_names[] = {
    {"add", B_ADD}, {"sub", B_SUB}, {"mul", B_MUL}, {"div", B_DIV}, {"max", B_MAX}, {"min", B_MIN},
    {"pow", B_POW}, {"equal", B_EQ}, {"greater", B_GT}, {"greaterOrEqual", B_GE}, {"lesser", B_LT},
    {"lesserOrEqual", B_LE}, {"notEqual", B_NE}, {"prelu", B_PRELU}, {"logicalAnd", B_AND}, {"logicalOr", B_OR},
    {"logicalXor", B_XOR},
};

typedef struct bin_params {
    int op;
    berth_dtype dtype; /* operand dtype (inputs) */
    size_t in_es, out_es;
    cpu_bcast b;
    const berth_plan *p;
    const cpu_node *n;
} bin_params;

/* Integer power, wrapping like repeated multiplication; a negative
 * exponent gives 0 except for bases 1 and -1 (the integer part of the
 * real power). */
static uint64_t ipow_u(uint64_t b, uint64_t e) {
    uint64_t r = 1;
    for (; e; e >>= 1, b *= b)
        if (e & 1) r *= b;
    return r;
}
static uint64_t ipow_s(int64_t b, int64_t e) {
    if (e < 0) return b == 1 ? 1u : b == -1 ? ((e & 1) ? UINT64_MAX : 1u) : 0u;
    return ipow_u((uint64_t)b, (uint64_t)e);
}

/* One row: y[i] = f(a[i*sa], b[i*sb]) with sa, sb in {0, 1} mostly. */
#define ROW(T, TY, EXPR)                                                                            \
    do {                                                                                           \
        const T *restrict a = av;                                                                  \
        const T *restrict b = bv;                                                                  \
        TY *restrict y = yv;                                                                       \
        if (sa == 1 && sb == 1)                                                                    \
            for (size_t i = 0; i < n; i++) { T x = a[i], z = b[i]; y[i] = (TY)(EXPR); }           \
        else if (sa == 1 && sb == 0) {                                                             \
            T z = b[0];                                                                            \
            for (size_t i = 0; i < n; i++) { T x = a[i]; y[i] = (TY)(EXPR); }                      \
        } else if (sa == 0 && sb == 1) {                                                           \
            T x = a[0];                                                                            \
            for (size_t i = 0; i < n; i++) { T z = b[i]; y[i] = (TY)(EXPR); }                      \
        } else                                                                                     \
            for (size_t i = 0; i < n; i++) { T x = a[i * sa], z = b[i * sb]; y[i] = (TY)(EXPR); } \
    } while (0)

/* Integer arithmetic in the unsigned type U, so it wraps; division by
 * zero gives 0, and MIN / -1 wraps to MIN. */
#define ARITH(T, U, SIGNED)                                                                        \
    switch (op) {                                                                                  \
    case B_ADD: ROW(T, T, (T)(U)((U)x + (U)z)); break;                                             \
    case B_SUB: ROW(T, T, (T)(U)((U)x - (U)z)); break;                                             \
    case B_MUL: ROW(T, T, (T)(U)((uint64_t)(U)x * (U)z)); break;                                   \
    case B_MAX: ROW(T, T, x > z ? x : z); break;                                                   \
    case B_MIN: ROW(T, T, x < z ? x : z); break;                                                   \
    case B_DIV:                                                                                    \
        if (SIGNED) ROW(T, T, z == 0 ? (T)0 : z == (T)-1 ? (T)(U)(0u - (uint64_t)(U)x) : (T)(x / z)); \
        else ROW(T, T, z == 0 ? (T)0 : (T)(x / z));                                                \
        break;                                                                                     \
    case B_POW:                                                                                    \
        if (SIGNED) ROW(T, T, (T)(U)ipow_s((int64_t)x, (int64_t)z));                               \
        else ROW(T, T, (T)(U)ipow_u((uint64_t)x, (uint64_t)z));                                    \
        break;                                                                                     \
    default: break;                                                                                \
    }

/* float16 through float32, rounded back to nearest even. */
#define H(v) cpu_half_to_float(v)
#define HROW(EXPR) ROW(uint16_t, uint16_t, cpu_float_to_half(EXPR))

#define COMPARE(T)                                                                                 \
    switch (op) {                                                                                  \
    case B_EQ: ROW(T, uint8_t, x == z); break;                                                     \
    case B_GT: ROW(T, uint8_t, x > z); break;                                                      \
    case B_GE: ROW(T, uint8_t, x >= z); break;                                                     \
    case B_LT: ROW(T, uint8_t, x < z); break;                                                      \
    case B_LE: ROW(T, uint8_t, x <= z); break;                                                     \
    case B_NE: ROW(T, uint8_t, x != z); break;                                                     \
    default: break;                                                                                \
    }

CPU_CLONES static void bin_row(int op, berth_dtype t, const void *av, size_t sa, const void *bv, size_t sb, void *yv,
                    size_t n) {
    if (op >= B_AND) { /* u8 operands, any nonzero is true */
        if (op == B_AND) ROW(uint8_t, uint8_t, (x != 0) & (z != 0));
        else if (op == B_OR) ROW(uint8_t, uint8_t, (x != 0) | (z != 0));
        else ROW(uint8_t, uint8_t, (x != 0) ^ (z != 0));
        return;
    }
    if (op >= B_EQ) {
        switch (t) {
        case BERTH_DTYPE_F32: COMPARE(float); break;
        case BERTH_DTYPE_I8: COMPARE(int8_t); break;
        case BERTH_DTYPE_U8: COMPARE(uint8_t); break;
        case BERTH_DTYPE_I32: COMPARE(int32_t); break;
        case BERTH_DTYPE_U32: COMPARE(uint32_t); break;
        case BERTH_DTYPE_I64: COMPARE(int64_t); break;
        case BERTH_DTYPE_U64: COMPARE(uint64_t); break;
        case BERTH_DTYPE_F16:
            switch (op) {
            case B_EQ: ROW(uint16_t, uint8_t, H(x) == H(z)); break;
            case B_GT: ROW(uint16_t, uint8_t, H(x) > H(z)); break;
            case B_GE: ROW(uint16_t, uint8_t, H(x) >= H(z)); break;
            case B_LT: ROW(uint16_t, uint8_t, H(x) < H(z)); break;
            case B_LE: ROW(uint16_t, uint8_t, H(x) <= H(z)); break;
            case B_NE: ROW(uint16_t, uint8_t, H(x) != H(z)); break;
            default: break;
            }
            break;
        default: break;
        }
        return;
    }
    switch (t) {
    case BERTH_DTYPE_F32:
        switch (op) {
        case B_ADD: ROW(float, float, x + z); break;
        case B_SUB: ROW(float, float, x - z); break;
        case B_MUL: ROW(float, float, x * z); break;
        case B_DIV: ROW(float, float, x / z); break;
        case B_MAX: ROW(float, float, cpu_fmax_nan(x, z)); break;
        case B_MIN: ROW(float, float, cpu_fmin_nan(x, z)); break;
        case B_POW: ROW(float, float, powf(x, z)); break;
        case B_PRELU: ROW(float, float, x >= 0.0f ? x : x * z); break;
        default: break;
        }
        break;
    case BERTH_DTYPE_F16:
        switch (op) {
        case B_ADD: HROW(H(x) + H(z)); break;
        case B_SUB: HROW(H(x) - H(z)); break;
        case B_MUL: HROW(H(x) * H(z)); break;
        case B_DIV: HROW(H(x) / H(z)); break;
        case B_MAX: HROW(cpu_fmax_nan(H(x), H(z))); break;
        case B_MIN: HROW(cpu_fmin_nan(H(x), H(z))); break;
        case B_POW: HROW(powf(H(x), H(z))); break;
        case B_PRELU: HROW(H(x) >= 0.0f ? H(x) : H(x) * H(z)); break;
        default: break;
        }
        break;
    case BERTH_DTYPE_I8: ARITH(int8_t, uint8_t, 1); break;
    case BERTH_DTYPE_U8: ARITH(uint8_t, uint8_t, 0); break;
    case BERTH_DTYPE_I32: ARITH(int32_t, uint32_t, 1); break;
    case BERTH_DTYPE_U32: ARITH(uint32_t, uint32_t, 0); break;
    case BERTH_DTYPE_I64: ARITH(int64_t, uint64_t, 1); break;
    case BERTH_DTYPE_U64: ARITH(uint64_t, uint64_t, 0); break;
    default: break;
    }
}

/* Work units are (row, chunk of the row), so one long contiguous row
 * (same-shape operands collapse to a single row) still spreads over the
 * pool. */
#define CHUNK 16384

static size_t chunks_per_row(const cpu_bcast *b) {
    size_t inner = (size_t)b->k.dims[b->k.rank - 1];
    return inner > CHUNK ? (inner + CHUNK - 1) / CHUNK : 1;
}

static void bin_task(void *ctx, size_t u0, size_t u1) {
    const bin_params *bp = ctx;
    const berth_plan *p = bp->p;
    const cpu_node *nd = bp->n;
    const uint8_t *a = cpu_ptr(p, nd->in[0]), *b = cpu_ptr(p, nd->in[1]);
    uint8_t *y = cpu_ptr(p, nd->out[0]);
    size_t inner = (size_t)bp->b.k.dims[bp->b.k.rank - 1], cpr = chunks_per_row(&bp->b);
    size_t sa = (size_t)bp->b.k.strides[0][bp->b.k.rank - 1], sb = (size_t)bp->b.k.strides[1][bp->b.k.rank - 1];
    for (size_t u = u0; u < u1; u++) {
        size_t r = u / cpr, c0 = (u % cpr) * CHUNK, len = inner - c0 < CHUNK ? inner - c0 : CHUNK;
        if (cpr == 1) c0 = 0, len = inner;
        size_t off[2];
        cpu_bcast_row(&bp->b, r, 2, off);
        bin_row(bp->op, bp->dtype, a + (off[0] + c0 * sa) * bp->in_es, sa, b + (off[1] + c0 * sb) * bp->in_es, sb,
                y + (r * inner + c0) * bp->out_es, len);
    }
}

static void bin_exec(const cpu_node *n, berth_plan *p) {
    bin_params *bp = n->params;
    bp->p = p;
    bp->n = n;
    size_t inner = (size_t)bp->b.k.dims[bp->b.k.rank - 1], cpr = chunks_per_row(&bp->b);
    size_t grain = cpr > 1 || inner >= CHUNK ? 1 : CHUNK / (inner ? inner : 1);
    cpu_pool_for(p->dev->pool, bp->b.rows * cpr, grain, bin_task, bp);
}

berth_status cpu_prep_binary(cpu_prep *c) {
    int op = -1;
    for (size_t i = 0; i < sizeof bin_names / sizeof bin_names[0]; i++)
        if (strcmp(c->node->op, bin_names[i].name) == 0) op = bin_names[i].op;
    berth_dtype t = cpu_in(c, 0)->dtype;
    uint32_t mask = op == B_PRELU ? BK_BIT(BERTH_DTYPE_F32) | BK_BIT(BERTH_DTYPE_F16)
                    : op >= B_AND ? BK_BIT(BERTH_DTYPE_U8)
                                  : CPU_NUMERIC;
    if (!(mask & BK_BIT(t))) return bk_fail(&c->bk, "input dtype %s is not supported", bk_dtype_name(t));
    if (cpu_in(c, 1)->dtype != t)
        return bk_fail(&c->bk, "input 1: expected dtype %s, found %s", bk_dtype_name(t),
                        bk_dtype_name(cpu_in(c, 1)->dtype));
    berth_dtype want_out = op >= B_EQ ? BERTH_DTYPE_U8 : t;
    if (cpu_out(c, 0)->dtype != want_out)
        return bk_fail(&c->bk, "output: expected dtype %s, found %s", bk_dtype_name(want_out),
                        bk_dtype_name(cpu_out(c, 0)->dtype));
    bin_params *bp = cpu_params(c, sizeof *bp);
    if (!bp) return BERTH_ERR_NOMEM;
    bp->op = op;
    bp->dtype = t;
    bp->in_es = bk_dtype_size(t);
    bp->out_es = bk_dtype_size(want_out);
    cpu_bcast_init(c, 2, &bp->b);
    c->cn->exec = bin_exec;
    return BERTH_OK;
}

/* ---- where(condition, trueValue, falseValue) ---- */

static void where_task(void *ctx, size_t r0, size_t r1) {
    const bin_params *bp = ctx;
    const berth_plan *p = bp->p;
    const cpu_node *nd = bp->n;
    const uint8_t *cnd = cpu_ptr(p, nd->in[0]);
    const uint8_t *a = cpu_ptr(p, nd->in[1]), *b = cpu_ptr(p, nd->in[2]);
    uint8_t *y = cpu_ptr(p, nd->out[0]);
    size_t es = bp->out_es;
    size_t inner = (size_t)bp->b.k.dims[bp->b.k.rank - 1];
    size_t sc = (size_t)bp->b.k.strides[0][bp->b.k.rank - 1], sa = (size_t)bp->b.k.strides[1][bp->b.k.rank - 1],
           sb = (size_t)bp->b.k.strides[2][bp->b.k.rank - 1];
    for (size_t r = r0; r < r1; r++) {
        size_t off[3];
        cpu_bcast_row(&bp->b, r, 3, off);
        const uint8_t *cr = cnd + off[0], *ar = a + off[1] * es, *br = b + off[2] * es;
        uint8_t *yr = y + r * inner * es;
        if (es == 4) {
            const uint32_t *a4 = (const uint32_t *)ar, *b4 = (const uint32_t *)br;
            uint32_t *y4 = (uint32_t *)yr;
            for (size_t i = 0; i < inner; i++) y4[i] = cr[i * sc] ? a4[i * sa] : b4[i * sb];
        } else {
            for (size_t i = 0; i < inner; i++)
                memcpy(yr + i * es, cr[i * sc] ? ar + i * sa * es : br + i * sb * es, es);
        }
    }
}

static void where_exec(const cpu_node *n, berth_plan *p) {
    bin_params *bp = n->params;
    bp->p = p;
    bp->n = n;
    cpu_pool_for(p->dev->pool, bp->b.rows, 64, where_task, bp);
}

berth_status cpu_prep_where(cpu_prep *c) {
    if (cpu_in(c, 0)->dtype != BERTH_DTYPE_U8)
        return bk_fail(&c->bk, "condition: expected dtype uint8, found %s", bk_dtype_name(cpu_in(c, 0)->dtype));
    berth_dtype t = cpu_out(c, 0)->dtype;
    for (uint32_t i = 1; i < 3; i++)
        if (cpu_in(c, i)->dtype != t)
            return bk_fail(&c->bk, "input %u: expected dtype %s, found %s", i, bk_dtype_name(t),
                            bk_dtype_name(cpu_in(c, i)->dtype));
    if (!bk_dtype_size(t)) return bk_fail(&c->bk, "dtype %s is not supported", bk_dtype_name(t));
    bin_params *bp = cpu_params(c, sizeof *bp);
    if (!bp) return BERTH_ERR_NOMEM;
    bp->out_es = bk_dtype_size(t);
    cpu_bcast_init(c, 3, &bp->b);
    c->cn->exec = where_exec;
    return BERTH_OK;
}
