/* Shape rules for normalizations, reductions, arg reductions and softmax. */
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "infer.h"

/* A 1-D or axes-shaped per-channel operand (mean, scale, ...). */
static int want_shape(sp_ctx *c, const char *what, const char *name, const sp_val *v,
                      berth_dtype t, uint32_t rank, const int64_t *dims) {
    if (v->dtype == t && v->rank == rank && !memcmp(v->dims, dims, sizeof(int64_t) * rank))
        return 0;
    char sa[160], sb[160];
    return sp_fail(c, "%s '%s' expected %s%s, found %s", what, name, berth_dtype_name(t),
                   sp_dims_str(sa, sizeof sa, rank, dims), sp_shape_str(sb, sizeof sb, v));
}

static int want_float(sp_ctx *c, uint32_t i) {
    sp_val *v = sp_in(c, i);
    if (sp_is_float(v->dtype)) return 0;
    char sb[160];
    return sp_fail(c, "operand %u '%s' expected f32 or f16, found %s", i, sp_in_name(c, i),
                   sp_shape_str(sb, sizeof sb, v));
}

static int opt_shape(sp_ctx *c, const char *key, berth_dtype t, uint32_t rank, const int64_t *dims) {
    sp_val *v;
    const char *name;
    char what[48];
    if (sp_opt_operand(c, key, &v, &name)) return -1;
    snprintf(what, sizeof what, "option '%s'", key);
    return v ? want_shape(c, what, name, v, t, rank, dims) : 0;
}

static int batch_norm(sp_ctx *c) {
    if (want_float(c, 0)) return -1;
    sp_val *x = sp_in(c, 0);
    int64_t axis;
    uint32_t ax;
    double eps;
    if (sp_opt_int(c, "axis", 1, &axis) || sp_axis(c, "option 'axis'", axis, x->rank, &ax) ||
        sp_opt_float(c, "epsilon", 1e-5, &eps))
        return -1;
    int64_t ch = x->dims[ax];
    char what[32];
    for (uint32_t i = 1; i < 3; i++) {
        snprintf(what, sizeof what, "operand %u", i);
        if (want_shape(c, what, sp_in_name(c, i), sp_in(c, i), x->dtype, 1, &ch)) return -1;
    }
    if (opt_shape(c, "scale", x->dtype, 1, &ch) || opt_shape(c, "bias", x->dtype, 1, &ch)) return -1;
    return sp_set_like(c, 0, x, x->dtype);
}

static int instance_norm(sp_ctx *c) {
    if (want_float(c, 0)) return -1;
    sp_val *x = sp_in(c, 0);
    const char *layout;
    double eps;
    char sb[160];
    if (x->rank != 4)
        return sp_fail(c, "operand 0 '%s' expected rank 4, found %s", sp_in_name(c, 0),
                       sp_shape_str(sb, sizeof sb, x));
    if (sp_opt_str(c, "layout", "nchw", &layout) || sp_opt_float(c, "epsilon", 1e-5, &eps))
        return -1;
    if (strcmp(layout, "nchw") && strcmp(layout, "nhwc"))
        return sp_fail(c, "option 'layout' expected \"nchw\" or \"nhwc\", found \"%s\"", layout);
    int64_t ch = x->dims[strcmp(layout, "nhwc") ? 1 : 3];
    if (opt_shape(c, "scale", x->dtype, 1, &ch) || opt_shape(c, "bias", x->dtype, 1, &ch)) return -1;
    return sp_set_like(c, 0, x, x->dtype);
}

/* Reads `axes` (default: all axes, or 1..rank-1 when from1) into a mask. */
static int read_axes(sp_ctx *c, const sp_val *x, int from1, uint32_t *axes, int *n, unsigned *mask) {
    int64_t raw[BERTH_MAX_RANK + 1];
    if (sp_opt_ints(c, "axes", raw, BERTH_MAX_RANK + 1, n)) return -1;
    *mask = 0;
    if (*n < 0) {
        *n = 0;
        for (uint32_t i = from1 ? 1 : 0; i < x->rank; i++) axes[(*n)++] = i;
    } else {
        for (int i = 0; i < *n; i++)
            if (sp_axis(c, "option 'axes' item", raw[i], x->rank, &axes[i])) return -1;
    }
    for (int i = 0; i < *n; i++) {
        if (*mask & (1u << axes[i]))
            return sp_fail(c, "option 'axes' expected distinct axes, found %u twice", axes[i]);
        *mask |= 1u << axes[i];
    }
    return 0;
}

static int layer_norm(sp_ctx *c) {
    if (want_float(c, 0)) return -1;
    sp_val *x = sp_in(c, 0);
    uint32_t axes[BERTH_MAX_RANK];
    int n;
    unsigned mask;
    double eps;
    if (read_axes(c, x, 1, axes, &n, &mask) || sp_opt_float(c, "epsilon", 1e-5, &eps)) return -1;
    int64_t d[BERTH_MAX_RANK];
    for (int i = 0; i < n; i++) d[i] = x->dims[axes[i]];
    if (opt_shape(c, "scale", x->dtype, (uint32_t)n, d) || opt_shape(c, "bias", x->dtype, (uint32_t)n, d))
        return -1;
    return sp_set_like(c, 0, x, x->dtype);
}

static int reduce(sp_ctx *c) {
    sp_val *x = sp_in(c, 0);
    uint32_t axes[BERTH_MAX_RANK];
    int n, keep;
    unsigned mask;
    if (read_axes(c, x, 0, axes, &n, &mask) || sp_opt_bool(c, "keepDimensions", 0, &keep)) return -1;
    int64_t d[BERTH_MAX_RANK];
    uint32_t r = 0;
    for (uint32_t i = 0; i < x->rank; i++) {
        if (!(mask & (1u << i))) d[r++] = x->dims[i];
        else if (keep) d[r++] = 1;
    }
    return sp_set_out(c, 0, x->dtype, r, d);
}

static int arg_reduce(sp_ctx *c) {
    sp_val *x = sp_in(c, 0);
    int64_t axis;
    uint32_t ax;
    int keep;
    const char *ot;
    if (!sp_attr(c->n, "axis")) return sp_fail(c, "expected an 'axis', found none");
    if (sp_opt_int(c, "axis", 0, &axis) || sp_axis(c, "option 'axis'", axis, x->rank, &ax) ||
        sp_opt_bool(c, "keepDimensions", 0, &keep) || sp_opt_str(c, "outputDataType", "int32", &ot))
        return -1;
    berth_dtype t = berth_dtype_parse(ot);
    if (t != BERTH_DTYPE_I32 && t != BERTH_DTYPE_I64)
        return sp_fail(c, "option 'outputDataType' expected \"int32\" or \"int64\", found \"%s\"", ot);
    int64_t d[BERTH_MAX_RANK];
    uint32_t r = 0;
    for (uint32_t i = 0; i < x->rank; i++) {
        if (i != ax) d[r++] = x->dims[i];
        else if (keep) d[r++] = 1;
    }
    return sp_set_out(c, 0, t, r, d);
}

/* softmax: WebNN requires an axis; a negative one counts from the end. */
static int softmax(sp_ctx *c) {
    if (want_float(c, 0)) return -1;
    sp_val *x = sp_in(c, 0);
    int64_t axis;
    uint32_t ax;
    if (sp_opt_int(c, "axis", (int64_t)x->rank - 1, &axis) ||
        sp_axis(c, "option 'axis'", axis, x->rank, &ax))
        return -1;
    return sp_set_like(c, 0, x, x->dtype);
}

const sp_rule sp_rules_norm[] = {
    {BERTH_OP_BATCH_NORMALIZATION, batch_norm},
    {BERTH_OP_INSTANCE_NORMALIZATION, instance_norm},
    {BERTH_OP_LAYER_NORMALIZATION, layer_norm},
    {BERTH_OP_REDUCE_MEAN, reduce},
    {BERTH_OP_REDUCE_SUM, reduce},
    {BERTH_OP_REDUCE_MAX, reduce},
    {BERTH_OP_REDUCE_MIN, reduce},
    {BERTH_OP_REDUCE_PRODUCT, reduce},
    {BERTH_OP_REDUCE_L1, reduce},
    {BERTH_OP_REDUCE_L2, reduce},
    {BERTH_OP_REDUCE_LOG_SUM, reduce},
    {BERTH_OP_REDUCE_LOG_SUM_EXP, reduce},
    {BERTH_OP_REDUCE_SUM_SQUARE, reduce},
    {BERTH_OP_ARG_MAX, arg_reduce},
    {BERTH_OP_ARG_MIN, arg_reduce},
    {BERTH_OP_SOFTMAX, softmax},
    {BERTH_OP_UNKNOWN, NULL},
};
