/* Node parameters both modules need, decoded once from the native graph:
 * axis geometry, broadcasting, resampling. Host-checked rules are not
 * checked again here. */
#include <math.h>
#include <string.h>

#include "bk.h"

static void split_at(const berth_operand *x, uint32_t axis, bk_axis_geom *g) {
    g->axis = axis;
    g->outer = g->inner = 1;
    for (uint32_t d = 0; d < axis; d++) g->outer *= (uint64_t)x->dims[d];
    for (uint32_t d = axis + 1; d < x->rank; d++) g->inner *= (uint64_t)x->dims[d];
    g->extent = x->rank ? (uint64_t)x->dims[axis] : 1;
}

berth_status bk_param_axis(const bk_node_ctx *c, int64_t def, bk_axis_geom *g) {
    const berth_operand *x = bk_in(c, 0);
    int64_t a;
    uint32_t axis;
    berth_status st = bk_opt_int(c, "axis", def, &a);
    if (!st) st = bk_axis(c, a, x->rank, "axis", &axis);
    if (st) return st;
    split_at(x, axis, g);
    return BERTH_OK;
}

berth_status bk_param_index_axis(const bk_node_ctx *c, bk_axis_geom *g) {
    berth_status st = bk_param_axis(c, 0, g);
    if (st) return st;
    if (g->extent == 0 && bk_numel(bk_in(c, 1)))
        return bk_fail(c, "indexing into an empty axis %u", g->axis);
    return BERTH_OK;
}

berth_status bk_check_indices(const bk_node_ctx *c) {
    berth_dtype t = bk_in(c, 1)->dtype;
    if (t != BERTH_DTYPE_I32 && t != BERTH_DTYPE_I64)
        return bk_refuse(c, "indices: expected int32 or int64, found %s", bk_dtype_name(t));
    return BERTH_OK;
}

void bk_bcast_of(const bk_node_ctx *c, uint32_t n, bk_bcast *b) {
    const berth_operand *y = bk_out(c, 0);
    uint32_t rank = y->rank;
    int64_t strides[3][BERTH_MAX_RANK];
    for (uint32_t k = 0; k < n; k++) {
        const berth_operand *x = bk_in(c, k);
        int64_t s = 1;
        for (int d = (int)rank - 1; d >= 0; d--) {
            int64_t at = d - (int64_t)(rank - x->rank);
            int64_t e = at < 0 ? 1 : x->dims[at];
            strides[k][d] = e == 1 ? 0 : s;
            s *= e;
        }
    }
    memset(b, 0, sizeof *b);
    uint32_t r = 0;
    for (uint32_t d = 0; d < rank; d++) {
        if (y->dims[d] == 1) continue;
        int merge = r > 0;
        for (uint32_t k = 0; k < n && merge; k++)
            if (b->strides[k][r - 1] != strides[k][d] * y->dims[d]) merge = 0;
        if (merge) {
            b->dims[r - 1] *= y->dims[d];
            for (uint32_t k = 0; k < n; k++) b->strides[k][r - 1] = strides[k][d];
            continue;
        }
        b->dims[r] = y->dims[d];
        for (uint32_t k = 0; k < n; k++) b->strides[k][r] = strides[k][d];
        r++;
    }
    if (r == 0) { /* a scalar, or all ones */
        b->dims[0] = 1;
        r = 1;
    }
    b->rank = r;
}

berth_status bk_param_resample(const bk_node_ctx *c, bk_resample *r) {
    const berth_operand *x = bk_in(c, 0), *y = bk_out(c, 0);
    const char *mode;
    int64_t axes[2] = {2, 3}; /* WebNN's default */
    double scales[2];
    int n_ax, n_sc;
    berth_status st = bk_opt_string(c, "mode", "nearest-neighbor", &mode);
    if (!st) st = bk_opt_ints(c, "axes", axes, 2, &n_ax);
    if (!st) st = bk_opt_floats(c, "scales", scales, 2, &n_sc);
    if (st) return st;
    if (n_ax < 0) axes[0] = 2, axes[1] = 3;
    memset(r, 0, sizeof *r);
    r->linear = strcmp(mode, "linear") == 0;
    if ((st = bk_axis(c, axes[0], x->rank, "axes value", &r->a0)) ||
        (st = bk_axis(c, axes[1], x->rank, "axes value", &r->a1)))
        return st;
    if (r->a0 >= r->a1)
        return bk_refuse(c, "axes: resamples two increasing axes, found [%lld, %lld]", (long long)axes[0],
                         (long long)axes[1]);
    if (x->dims[r->a0] == 0 || x->dims[r->a1] == 0) return bk_fail(c, "cannot resample an empty axis");
    r->outer = r->mid = r->inner = 1;
    for (uint32_t d = 0; d < r->a0; d++) r->outer *= (uint64_t)x->dims[d];
    for (uint32_t d = r->a0 + 1; d < r->a1; d++) r->mid *= (uint64_t)x->dims[d];
    for (uint32_t d = r->a1 + 1; d < x->rank; d++) r->inner *= (uint64_t)x->dims[d];
    int use_scales = n_sc == 2 && bk_opt_find(c, "sizes") == NULL;
    r->sh = use_scales ? scales[0] : (double)y->dims[r->a0] / (double)x->dims[r->a0];
    r->sw = use_scales ? scales[1] : (double)y->dims[r->a1] / (double)x->dims[r->a1];
    return BERTH_OK;
}

void bk_param_quant(const bk_node_ctx *c, int quantize, bk_quant *q) {
    const berth_operand *x = bk_in(c, 0), *s = bk_in(c, 1);
    memset(q, 0, sizeof *q);
    q->qtype = quantize ? bk_out(c, 0)->dtype : x->dtype;
    q->rank = x->rank;
    int64_t stride = 1;
    for (int d = (int)x->rank - 1; d >= 0; d--) {
        int sd = d - (int)(x->rank - s->rank);
        int64_t ext = sd < 0 ? 1 : s->dims[sd];
        q->dims[d] = x->dims[d];
        q->block[d] = ext > 0 && x->dims[d] > 0 ? x->dims[d] / ext : 1;
        q->sstride[d] = ext == 1 ? 0 : stride;
        stride *= ext;
    }
}

berth_status bk_check_quant_int(const bk_node_ctx *c, int quantize, uint32_t mask) {
    berth_dtype t = quantize ? bk_out(c, 0)->dtype : bk_in(c, 0)->dtype;
    if (!(mask & BK_BIT(t))) return bk_refuse(c, "integer side of dtype %s is not supported", bk_dtype_name(t));
    return BERTH_OK;
}

berth_status bk_param_axes(const bk_node_ctx *c, uint32_t from, uint32_t *axes, int *n, uint32_t *mask) {
    const berth_operand *x = bk_in(c, 0);
    int64_t raw[BERTH_MAX_RANK];
    berth_status st = bk_opt_ints(c, "axes", raw, BERTH_MAX_RANK, n);
    if (st) return st;
    *mask = 0;
    if (*n < 0) {
        *n = 0;
        for (uint32_t d = from; d < x->rank; d++) raw[(*n)++] = d;
    }
    for (int i = 0; i < *n; i++) {
        if ((st = bk_axis(c, raw[i], x->rank, "axes value", &axes[i]))) return st;
        *mask |= 1u << axes[i];
    }
    return BERTH_OK;
}

berth_status bk_param_slice(const bk_node_ctx *c, int64_t *starts, int64_t *steps) {
    uint32_t rank = bk_in(c, 0)->rank;
    int ns, nt;
    berth_status st = bk_opt_ints(c, "starts", starts, BERTH_MAX_RANK, &ns);
    if (!st) st = bk_opt_ints(c, "strides", steps, BERTH_MAX_RANK, &nt);
    if (st) return st;
    for (uint32_t d = 0; d < rank; d++) {
        if (nt < 0) steps[d] = 1;
        if (ns < 0) starts[d] = 0;
    }
    return BERTH_OK;
}

berth_status bk_param_attention(const bk_node_ctx *c, bk_attention *a) {
    const berth_operand *q = bk_in(c, 0), *k = bk_in(c, 1), *v = bk_in(c, 2);
    uint32_t r = q->rank;
    memset(a, 0, sizeof *a);
    a->rank = r;
    a->batch = 1;
    for (uint32_t d = 0; d + 2 < r; d++) a->batch *= (uint64_t)q->dims[d];
    a->sq = q->dims[r - 2], a->d = q->dims[r - 1], a->sk = k->dims[r - 2], a->dv = v->dims[r - 1];
    berth_status st = bk_opt_float(c, "scale", a->d > 0 ? 1.0 / sqrt((double)a->d) : 1.0, &a->scale);
    if (!st) st = bk_opt_operand(c, "mask", &a->mask);
    if (st || a->mask == BK_NONE) return st;
    const berth_operand *m = &c->g->operands[a->mask];
    int64_t s = 1;
    for (int d = (int)r - 1; d >= 0; d--) {
        int64_t at = d - (int64_t)(r - m->rank), ext = at < 0 ? 1 : m->dims[at];
        a->mstride[d] = ext == 1 ? 0 : s;
        s *= ext;
    }
    return BERTH_OK;
}

berth_status bk_param_activation(const bk_node_ctx *c, int *code) {
    static const char *const acts[] = {"none", "relu", "gelu", "sigmoid", "tanh"};
    const char *act;
    berth_status st = bk_opt_string(c, "activation", "none", &act);
    if (st) return st;
    for (int i = 0; i < 5; i++)
        if (strcmp(act, acts[i]) == 0) return *code = i, BERTH_OK;
    return bk_fail(c, "activation: expected none, relu, gelu, sigmoid or tanh, found '%s'", act);
}

berth_status bk_param_ints_n(const bk_node_ctx *c, const char *key, int want, int64_t def, int64_t *out) {
    int n;
    berth_status st = bk_opt_ints(c, key, out, want, &n);
    if (st) return st;
    if (n < 0)
        for (int i = 0; i < want; i++) out[i] = def;
    else if (n != want)
        return bk_fail(c, "%s: expected %d values, found %d", key, want, n);
    return BERTH_OK;
}

berth_status bk_param_layout(const bk_node_ctx *c, const char *key, int *nhwc) {
    const char *l;
    berth_status st = bk_opt_string(c, key, "nchw", &l);
    if (st) return st;
    *nhwc = strcmp(l, "nhwc") == 0;
    if (!*nhwc && strcmp(l, "nchw") != 0) return bk_fail(c, "%s: expected nchw or nhwc, found '%s'", key, l);
    return BERTH_OK;
}

berth_status bk_param_conv(const bk_node_ctx *c, bk_conv_attrs *a) {
    berth_status st = bk_param_ints_n(c, "padding", 4, 0, a->pad);
    if (!st) st = bk_param_ints_n(c, "strides", 2, 1, a->stride);
    if (!st) st = bk_param_ints_n(c, "dilations", 2, 1, a->dil);
    if (!st) st = bk_opt_int(c, "groups", 1, &a->groups);
    if (!st) st = bk_opt_operand(c, "bias", &a->bias);
    if (!st) st = bk_param_layout(c, "inputLayout", &a->nhwc);
    return st;
}

berth_status bk_conv_geom(const bk_node_ctx *c, const int64_t *fd, int transposed, bk_conv_attrs *a) {
    const int64_t *x = bk_in(c, 0)->dims;
    a->n = x[0];
    a->c = a->nhwc ? x[3] : x[1];
    a->h = a->nhwc ? x[1] : x[2];
    a->w = a->nhwc ? x[2] : x[3];
    a->kh = fd[2], a->kw = fd[3];
    if (a->c % a->groups)
        return bk_fail(c, "input channels %lld are not divisible by groups %lld", (long long)a->c, (long long)a->groups);
    a->cg = a->c / a->groups;
    a->og = transposed ? fd[1] : fd[0] / a->groups;
    a->o = transposed ? a->og * a->groups : fd[0];
    return BERTH_OK;
}
