/* Normalizations: layerNormalization over any axes (scale and bias laid
 * out in the order of `axes`), instanceNormalization over the spatial
 * dims of NCHW or NHWC, and batchNormalization from given statistics. */
#include <string.h>

#include "vk_internal.h"

/* `o` must be float32 with exactly `dims`. */
static berth_status check_param(vk_prep *c, const char *what, uint32_t o, uint32_t rank, const int64_t *dims) {
    const vk_opnd *t = &c->plan->ops[o];
    int same = t->dtype == BERTH_DTYPE_F32 && t->rank == rank;
    for (uint32_t d = 0; same && d < rank; d++) same = t->dims[d] == dims[d];
    if (same) return BERTH_OK;
    char want[128], got[128];
    bk_dims_str(dims, rank, want, sizeof want);
    bk_dims_str(t->dims, t->rank, got, sizeof got);
    return bk_fail(&c->bk, "%s: expected float32 %s, found %s %s", what, want, bk_dtype_name(t->dtype), got);
}

/* Dims of one kind (kept or reduced), collapsed where contiguous in both x
 * and scale; at most 4. */
typedef struct dimlist {
    uint32_t n;
    int64_t dims[4], xs[4], ss[4];
} dimlist;

static int push(dimlist *l, int64_t dim, int64_t xs, int64_t ss, int *adjacent) {
    if (dim == 1) return 1;
    if (*adjacent && l->n > 0 && l->xs[l->n - 1] == xs * dim && l->ss[l->n - 1] == ss * dim) {
        l->dims[l->n - 1] *= dim;
        l->xs[l->n - 1] = xs;
        l->ss[l->n - 1] = ss;
        return 1;
    }
    if (l->n == 4) return 0;
    l->dims[l->n] = dim, l->xs[l->n] = xs, l->ss[l->n] = ss;
    l->n++;
    *adjacent = 1;
    return 1;
}

static berth_status emit_norm(vk_prep *c, const dimlist *k, const dimlist *r, uint64_t groups, uint64_t count, double eps,
                              uint32_t scale, uint32_t bias, int by_kept) {
    const vk_opnd *x = vk_in(c, 0);
    if (x->numel == 0) return BERTH_OK;
    if (x->numel > UINT32_MAX) return bk_refuse(&c->bk, "%zu elements exceed 32-bit indexing", x->numel);
    vk_dispatch *d = vk_emit(c, "norm");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 4;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = scale;
    d->bind[2] = bias;
    d->bind[3] = c->node->outputs[0];
    d->pc[0] = (uint32_t)groups;
    d->pc[1] = (uint32_t)count;
    d->pc[2] = k->n;
    d->pc[3] = r->n;
    d->pc[4] = vk_f2u((float)eps);
    d->pc[5] = (scale != VK_NONE ? 1u : 0u) | (bias != VK_NONE ? 2u : 0u) | (by_kept ? 4u : 0u);
    for (uint32_t i = 0; i < 4; i++) {
        d->pc[6 + i] = (uint32_t)k->dims[i];
        d->pc[10 + i] = (uint32_t)k->xs[i];
        d->pc[14 + i] = (uint32_t)k->ss[i];
        d->pc[18 + i] = (uint32_t)r->dims[i];
        d->pc[22 + i] = (uint32_t)r->xs[i];
        d->pc[26 + i] = (uint32_t)r->ss[i];
    }
    d->groups[0] = vk_groups(groups, 1);
    return BERTH_OK;
}

berth_status vk_prep_layer_norm(vk_prep *c) {
    berth_status st = bk_check_counts(&c->bk, 1, 1, 1);
    if (!st) st = bk_check_same_dtype(&c->bk, 1, BK_BIT(BERTH_DTYPE_F32));
    if (st) return st;
    const vk_opnd *x = vk_in(c, 0);
    if ((st = bk_check_out_dims(&c->bk, 0, x->rank, x->dims))) return st;
    int64_t axes[BERTH_MAX_RANK];
    int n_axes;
    double eps;
    uint32_t scale, bias;
    st = bk_opt_ints(&c->bk, "axes", axes, BERTH_MAX_RANK, &n_axes);
    if (!st) st = bk_opt_float(&c->bk, "epsilon", 1e-5, &eps);
    if (!st) st = bk_opt_operand(&c->bk, "scale", &scale);
    if (!st) st = bk_opt_operand(&c->bk, "bias", &bias);
    if (st) return st;
    if (n_axes < 0) { /* WebNN's default: every dim but the first */
        n_axes = x->rank > 1 ? (int)x->rank - 1 : 0;
        for (int i = 0; i < n_axes; i++) axes[i] = i + 1;
    }
    uint32_t ax[BERTH_MAX_RANK], mask = 0;
    int64_t pdims[BERTH_MAX_RANK], pstride[BERTH_MAX_RANK], xs[BERTH_MAX_RANK];
    for (int i = 0; i < n_axes; i++) {
        if ((st = bk_axis(&c->bk, axes[i], x->rank, "axes value", &ax[i]))) return st;
        if (mask & (1u << ax[i])) return bk_fail(&c->bk, "axes: axis %u appears twice", ax[i]);
        mask |= 1u << ax[i];
        pdims[i] = x->dims[ax[i]];
    }
    int64_t s = 1;
    for (int i = n_axes - 1; i >= 0; i--) pstride[i] = s, s *= pdims[i];
    if (scale != VK_NONE && (st = check_param(c, "scale", scale, (uint32_t)n_axes, pdims))) return st;
    if (bias != VK_NONE && (st = check_param(c, "bias", bias, (uint32_t)n_axes, pdims))) return st;
    s = 1;
    for (int d = (int)x->rank - 1; d >= 0; d--) xs[d] = s, s *= x->dims[d];
    dimlist k = {0}, r = {0};
    uint64_t groups = 1, count = 1;
    int kadj = 0, radj = 0;
    for (uint32_t d = 0; d < x->rank; d++) {
        int ok;
        if (mask & (1u << d)) {
            int pos = 0;
            while (ax[pos] != d) pos++;
            count *= (uint64_t)x->dims[d];
            ok = push(&r, x->dims[d], xs[d], pstride[pos], &radj);
            if (x->dims[d] != 1) kadj = 0;
        } else {
            groups *= (uint64_t)x->dims[d];
            ok = push(&k, x->dims[d], xs[d], 0, &kadj);
            if (x->dims[d] != 1) radj = 0;
        }
        if (!ok) return bk_refuse(&c->bk, "more than 4 separate groups of %s dims", (mask >> d) & 1u ? "normalized" : "kept");
    }
    return emit_norm(c, &k, &r, groups, count, eps, scale, bias, 0);
}

berth_status vk_prep_instance_norm(vk_prep *c) {
    berth_status st = bk_check_counts(&c->bk, 1, 1, 1);
    if (!st) st = bk_check_same_dtype(&c->bk, 1, BK_BIT(BERTH_DTYPE_F32));
    if (st) return st;
    const vk_opnd *x = vk_in(c, 0);
    if (x->rank != 4) return bk_fail(&c->bk, "input must be 4-D, found rank %u", x->rank);
    if ((st = bk_check_out_dims(&c->bk, 0, x->rank, x->dims))) return st;
    const char *layout;
    double eps;
    uint32_t scale, bias;
    if ((st = bk_opt_string(&c->bk, "layout", "nchw", &layout)) || (st = bk_opt_float(&c->bk, "epsilon", 1e-5, &eps)) ||
        (st = bk_opt_operand(&c->bk, "scale", &scale)) || (st = bk_opt_operand(&c->bk, "bias", &bias)))
        return st;
    int nhwc = strcmp(layout, "nhwc") == 0;
    if (!nhwc && strcmp(layout, "nchw") != 0) return bk_fail(&c->bk, "layout: expected nchw or nhwc, found '%s'", layout);
    int64_t n = x->dims[0], ch = nhwc ? x->dims[3] : x->dims[1];
    int64_t plane = nhwc ? x->dims[1] * x->dims[2] : x->dims[2] * x->dims[3];
    int64_t cdim[1] = {ch};
    if (scale != VK_NONE && (st = check_param(c, "scale", scale, 1, cdim))) return st;
    if (bias != VK_NONE && (st = check_param(c, "bias", bias, 1, cdim))) return st;
    /* Kept: (n, c); reduced: the plane, one dim of stride 1 (nchw) or c (nhwc). */
    dimlist k = {.n = 2, .dims = {n, ch}, .xs = {plane * ch, nhwc ? 1 : plane}, .ss = {0, 1}};
    dimlist r = {.n = 1, .dims = {plane}, .xs = {nhwc ? ch : 1}, .ss = {0}};
    return emit_norm(c, &k, &r, (uint64_t)(n * ch), (uint64_t)plane, eps, scale, bias, 1);
}

berth_status vk_prep_batch_norm(vk_prep *c) {
    berth_status st = bk_check_counts(&c->bk, 3, 3, 1);
    if (!st) st = bk_check_same_dtype(&c->bk, 1, BK_BIT(BERTH_DTYPE_F32));
    if (st) return st;
    const vk_opnd *x = vk_in(c, 0);
    if ((st = bk_check_out_dims(&c->bk, 0, x->rank, x->dims))) return st;
    int64_t a;
    uint32_t axis, scale, bias;
    double eps;
    st = bk_opt_int(&c->bk, "axis", 1, &a);
    if (!st) st = bk_axis(&c->bk, a, x->rank, "axis", &axis);
    if (!st) st = bk_opt_float(&c->bk, "epsilon", 1e-5, &eps);
    if (!st) st = bk_opt_operand(&c->bk, "scale", &scale);
    if (!st) st = bk_opt_operand(&c->bk, "bias", &bias);
    if (st) return st;
    int64_t cdim[1] = {x->dims[axis]};
    if ((st = check_param(c, "mean", c->node->inputs[1], 1, cdim))) return st;
    if ((st = check_param(c, "variance", c->node->inputs[2], 1, cdim))) return st;
    if (scale != VK_NONE && (st = check_param(c, "scale", scale, 1, cdim))) return st;
    if (bias != VK_NONE && (st = check_param(c, "bias", bias, 1, cdim))) return st;
    uint64_t inner = 1;
    for (uint32_t d = axis + 1; d < x->rank; d++) inner *= (uint64_t)x->dims[d];
    if (x->numel == 0) return BERTH_OK;
    if (x->numel > UINT32_MAX) return bk_refuse(&c->bk, "%zu elements exceed 32-bit indexing", x->numel);
    vk_dispatch *d = vk_emit(c, "batchnorm");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 6;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->inputs[1];
    d->bind[2] = c->node->inputs[2];
    d->bind[3] = scale;
    d->bind[4] = bias;
    d->bind[5] = c->node->outputs[0];
    d->pc[0] = (uint32_t)x->numel;
    d->pc[1] = (uint32_t)cdim[0];
    d->pc[2] = (uint32_t)inner;
    d->pc[3] = vk_f2u((float)eps);
    d->pc[4] = (scale != VK_NONE ? 1u : 0u) | (bias != VK_NONE ? 2u : 0u);
    d->groups[0] = vk_groups(x->numel, 256);
    return BERTH_OK;
}
