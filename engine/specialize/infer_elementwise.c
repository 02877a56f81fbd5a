/* Shape rules for element-wise ops: numpy broadcasting for binary,
 * comparison, logical and where; unary ops keep shape and dtype. */
#include <string.h>

#include "dtype.h"
#include "infer.h"

/* Operand i must have the dtype of operand 0. */
static int same_dtype(sp_ctx *c, uint32_t i, uint32_t ref) {
    sp_val *a = sp_in(c, ref), *b = sp_in(c, i);
    if (a->dtype == b->dtype) return 0;
    char sb[160];
    return sp_fail(c, "operand %u '%s' expected %s to match operand %u '%s', found %s", i,
                   sp_in_name(c, i), berth_dtype_name(a->dtype), ref, sp_in_name(c, ref),
                   sp_shape_str(sb, sizeof sb, b));
}

/* Broadcasts operands 0..n-1 together into rank/dims. */
static int broadcast_all(sp_ctx *c, uint32_t n, uint32_t *rank, int64_t *dims) {
    sp_val *a = sp_in(c, 0);
    *rank = a->rank;
    memcpy(dims, a->dims, sizeof(int64_t) * a->rank);
    for (uint32_t i = 1; i < n; i++) {
        sp_val *b = sp_in(c, i);
        int64_t out[BERTH_MAX_RANK * 2];
        uint32_t r;
        if (b->rank > BERTH_MAX_RANK || !sp_broadcast(*rank, dims, b->rank, b->dims, &r, out)) {
            char sa[160], sb[160];
            return sp_fail(c, "operand %u '%s' expected a shape broadcastable with %s, found %s",
                           i, sp_in_name(c, i), sp_dims_str(sa, sizeof sa, *rank, dims),
                           sp_shape_str(sb, sizeof sb, b));
        }
        *rank = r;
        memcpy(dims, out, sizeof(int64_t) * r);
    }
    return 0;
}

static int binary(sp_ctx *c) {
    if (same_dtype(c, 1, 0)) return -1;
    uint32_t r;
    int64_t d[BERTH_MAX_RANK];
    if (broadcast_all(c, 2, &r, d)) return -1;
    return sp_set_out(c, 0, sp_in(c, 0)->dtype, r, d);
}

static int compare(sp_ctx *c) {
    if (same_dtype(c, 1, 0)) return -1;
    uint32_t r;
    int64_t d[BERTH_MAX_RANK];
    if (broadcast_all(c, 2, &r, d)) return -1;
    return sp_set_out(c, 0, BERTH_DTYPE_U8, r, d);
}

static int want_u8(sp_ctx *c, uint32_t i) {
    sp_val *v = sp_in(c, i);
    if (v->dtype == BERTH_DTYPE_U8) return 0;
    char sb[160];
    return sp_fail(c, "operand %u '%s' expected u8, found %s", i, sp_in_name(c, i),
                   sp_shape_str(sb, sizeof sb, v));
}

static int logical(sp_ctx *c) {
    if (want_u8(c, 0) || want_u8(c, 1)) return -1;
    uint32_t r;
    int64_t d[BERTH_MAX_RANK];
    if (broadcast_all(c, 2, &r, d)) return -1;
    return sp_set_out(c, 0, BERTH_DTYPE_U8, r, d);
}

static int logical_not(sp_ctx *c) {
    if (want_u8(c, 0)) return -1;
    return sp_set_like(c, 0, sp_in(c, 0), BERTH_DTYPE_U8);
}

static int where(sp_ctx *c) {
    if (want_u8(c, 0) || same_dtype(c, 2, 1)) return -1;
    uint32_t r;
    int64_t d[BERTH_MAX_RANK];
    if (broadcast_all(c, 3, &r, d)) return -1;
    return sp_set_out(c, 0, sp_in(c, 1)->dtype, r, d);
}

/* Unary ops any numeric dtype may take. */
static int unary(sp_ctx *c) {
    return sp_set_like(c, 0, sp_in(c, 0), sp_in(c, 0)->dtype);
}

/* Unary ops that are only defined on floating point. */
static int unary_float(sp_ctx *c) {
    sp_val *v = sp_in(c, 0);
    if (!sp_is_float(v->dtype)) {
        char sb[160];
        return sp_fail(c, "operand 0 '%s' expected f32 or f16, found %s", sp_in_name(c, 0),
                       sp_shape_str(sb, sizeof sb, v));
    }
    return sp_set_like(c, 0, v, v->dtype);
}

/* Float ops with number options (leakyRelu's alpha, hardSigmoid's alpha
 * and beta, ...): a misspelled type is refused here, not in a kernel. */
static int unary_float_opts(sp_ctx *c) {
    double v;
    if (unary_float(c) || sp_opt_float(c, "alpha", 0, &v) || sp_opt_float(c, "beta", 0, &v)) return -1;
    return 0;
}

static int clamp(sp_ctx *c) {
    double lo, hi;
    if (unary(c) || sp_opt_float(c, "minValue", -1e300, &lo) ||
        sp_opt_float(c, "maxValue", 1e300, &hi))
        return -1;
    if (lo > hi) return sp_fail(c, "option 'minValue' expected <= maxValue %g, found %g", hi, lo);
    return 0;
}

/* prelu: slope broadcasts to the input, never the other way. */
static int prelu(sp_ctx *c) {
    if (same_dtype(c, 1, 0)) return -1;
    sp_val *x = sp_in(c, 0), *s = sp_in(c, 1);
    uint32_t r;
    int64_t d[BERTH_MAX_RANK * 2];
    if (s->rank > x->rank || !sp_broadcast(x->rank, x->dims, s->rank, s->dims, &r, d) ||
        memcmp(d, x->dims, sizeof(int64_t) * r) != 0) {
        char sa[160], sb[160];
        return sp_fail(c, "operand 1 '%s' expected a shape broadcastable to %s, found %s",
                       sp_in_name(c, 1), sp_shape_str(sa, sizeof sa, x),
                       sp_shape_str(sb, sizeof sb, s));
    }
    return sp_set_like(c, 0, x, x->dtype);
}

const sp_rule sp_rules_elementwise[] = {
    {BERTH_OP_ADD, binary},
    {BERTH_OP_SUB, binary},
    {BERTH_OP_MUL, binary},
    {BERTH_OP_DIV, binary},
    {BERTH_OP_POW, binary},
    {BERTH_OP_MAX, binary},
    {BERTH_OP_MIN, binary},
    {BERTH_OP_EQUAL, compare},
    {BERTH_OP_NOT_EQUAL, compare},
    {BERTH_OP_GREATER, compare},
    {BERTH_OP_GREATER_OR_EQUAL, compare},
    {BERTH_OP_LESSER, compare},
    {BERTH_OP_LESSER_OR_EQUAL, compare},
    {BERTH_OP_LOGICAL_AND, logical},
    {BERTH_OP_LOGICAL_OR, logical},
    {BERTH_OP_LOGICAL_NOT, logical_not},
    {BERTH_OP_WHERE, where},
    {BERTH_OP_RELU, unary},
    {BERTH_OP_ABS, unary},
    {BERTH_OP_NEG, unary},
    {BERTH_OP_SIGN, unary},
    {BERTH_OP_IDENTITY, unary},
    {BERTH_OP_CLAMP, clamp},
    {BERTH_OP_PRELU, prelu},
    {BERTH_OP_LEAKY_RELU, unary_float_opts},
    {BERTH_OP_ELU, unary_float_opts},
    {BERTH_OP_SIGMOID, unary_float},
    {BERTH_OP_HARD_SIGMOID, unary_float_opts},
    {BERTH_OP_HARD_SWISH, unary_float},
    {BERTH_OP_SOFTPLUS, unary_float},
    {BERTH_OP_SOFTSIGN, unary_float},
    {BERTH_OP_TANH, unary_float},
    {BERTH_OP_GELU, unary_float},
    {BERTH_OP_ERF, unary_float},
    {BERTH_OP_SQRT, unary_float},
    {BERTH_OP_EXP, unary_float},
    {BERTH_OP_LOG, unary_float},
    {BERTH_OP_CEIL, unary_float},
    {BERTH_OP_FLOOR, unary_float},
    {BERTH_OP_RECIPROCAL, unary_float},
    {BERTH_OP_SIN, unary_float},
    {BERTH_OP_COS, unary_float},
    {BERTH_OP_UNKNOWN, NULL},
};
