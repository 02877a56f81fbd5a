/* Normalizations: layerNormalization over any axes (scale and bias laid
 * out in the order of `axes`), instanceNormalization over the spatial
 * dims of NCHW or NHWC, and batchNormalization from given statistics. */
#include <string.h>

#include "gpu_core.h"

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

static berth_status emit_norm(gpu_prep *c, const dimlist *k, const dimlist *r, uint64_t groups, uint64_t count, double eps,
                              uint32_t scale, uint32_t bias, int by_kept) {
    const gpu_opnd *x = gpu_in(c, 0);
    if (x->numel == 0) return BERTH_OK;
    gpu_dispatch *d = gpu_emit(c, "norm");
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
    d->pc[4] = gpu_f2u((float)eps);
    d->pc[5] = (scale != GPU_NONE ? 1u : 0u) | (bias != GPU_NONE ? 2u : 0u) | (by_kept ? 4u : 0u);
    for (uint32_t i = 0; i < 4; i++) {
        d->pc[6 + i] = (uint32_t)k->dims[i];
        d->pc[10 + i] = (uint32_t)k->xs[i];
        d->pc[14 + i] = (uint32_t)k->ss[i];
        d->pc[18 + i] = (uint32_t)r->dims[i];
        d->pc[22 + i] = (uint32_t)r->xs[i];
        d->pc[26 + i] = (uint32_t)r->ss[i];
    }
    d->groups[0] = gpu_groups(groups, 1);
    return BERTH_OK;
}

/* layerNormalization's kept and normalized dims, collapsed (at most 4
 * groups of each, else refused), with scale/bias strides in axes order. */
typedef struct ln_geom {
    dimlist k, r;
    uint64_t groups, count;
} ln_geom;

static berth_status ln_geom_of(const bk_node_ctx *c, ln_geom *g) {
    const berth_operand *x = bk_in(c, 0);
    uint32_t ax[BERTH_MAX_RANK], mask;
    int n_axes;
    berth_status st = bk_param_axes(c, 1, ax, &n_axes, &mask);
    if (st) return st;
    int64_t pdims[BERTH_MAX_RANK], pstride[BERTH_MAX_RANK], xs[BERTH_MAX_RANK];
    for (int i = 0; i < n_axes; i++) pdims[i] = x->dims[ax[i]];
    int64_t s = 1;
    for (int i = n_axes - 1; i >= 0; i--) pstride[i] = s, s *= pdims[i];
    s = 1;
    for (int d = (int)x->rank - 1; d >= 0; d--) xs[d] = s, s *= x->dims[d];
    memset(g, 0, sizeof *g);
    g->groups = g->count = 1;
    int kadj = 0, radj = 0;
    for (uint32_t d = 0; d < x->rank; d++) {
        int ok;
        if (mask & (1u << d)) {
            int pos = 0;
            while (ax[pos] != d) pos++;
            g->count *= (uint64_t)x->dims[d];
            ok = push(&g->r, x->dims[d], xs[d], pstride[pos], &radj);
            if (x->dims[d] != 1) kadj = 0;
        } else {
            g->groups *= (uint64_t)x->dims[d];
            ok = push(&g->k, x->dims[d], xs[d], 0, &kadj);
            if (x->dims[d] != 1) radj = 0;
        }
        if (!ok) return bk_refuse(c, "more than 4 separate groups of %s dims", (mask >> d) & 1u ? "normalized" : "kept");
    }
    return BERTH_OK;
}

berth_status gpu_check_layer_norm(const bk_node_ctx *c) {
    ln_geom g;
    berth_status st = ln_geom_of(c, &g);
    return st ? st : gpu_check_fits(c, UINT32_MAX);
}

berth_status gpu_prep_layer_norm(gpu_prep *c) {
    uint32_t scale, bias;
    double eps;
    ln_geom g;
    berth_status st = ln_geom_of(&c->bk, &g);
    if (!st) st = bk_opt_float(&c->bk, "epsilon", 1e-5, &eps);
    if (!st) st = bk_opt_operand(&c->bk, "scale", &scale);
    if (!st) st = bk_opt_operand(&c->bk, "bias", &bias);
    if (st) return st;
    return emit_norm(c, &g.k, &g.r, g.groups, g.count, eps, scale, bias, 0);
}

berth_status gpu_prep_instance_norm(gpu_prep *c) {
    berth_status st;
    const gpu_opnd *x = gpu_in(c, 0);
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
    /* Kept: (n, c); reduced: the plane, one dim of stride 1 (nchw) or c (nhwc). */
    dimlist k = {.n = 2, .dims = {n, ch}, .xs = {plane * ch, nhwc ? 1 : plane}, .ss = {0, 1}};
    dimlist r = {.n = 1, .dims = {plane}, .xs = {nhwc ? ch : 1}, .ss = {0}};
    return emit_norm(c, &k, &r, (uint64_t)(n * ch), (uint64_t)plane, eps, scale, bias, 1);
}

berth_status gpu_prep_batch_norm(gpu_prep *c) {
    berth_status st;
    const gpu_opnd *x = gpu_in(c, 0);
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
    uint64_t inner = 1;
    for (uint32_t d = axis + 1; d < x->rank; d++) inner *= (uint64_t)x->dims[d];
    if (x->numel == 0) return BERTH_OK;
    gpu_dispatch *d = gpu_emit(c, "batchnorm");
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
    d->pc[3] = gpu_f2u((float)eps);
    d->pc[4] = (scale != GPU_NONE ? 1u : 0u) | (bias != GPU_NONE ? 2u : 0u);
    d->groups[0] = gpu_groups(x->numel, 256);
    return BERTH_OK;
}
