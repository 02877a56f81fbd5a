/* Data movement: transpose, slice and expand are one strided copy whose
 * input strides are worked out at plan time; concat, split, gather and
 * pad have loops of their own. Gather clamps indices into range (after
 * wrapping negatives once), as WebNN asks, so no index reads outside. */
#include <string.h>

#include "cpu_internal.h"

/* ---- strided copy: out (contiguous) <- in[base + sum idx[d]*stride[d]] ---- */

typedef struct strided {
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    int64_t stride[BERTH_MAX_RANK]; /* input element strides */
    int64_t base;
    size_t es, rows;
    const uint8_t *x;
    uint8_t *y;
} strided;

/* Drops size-1 dims and merges dims that stay contiguous in the input. */
static void strided_finish(strided *s) {
    uint32_t r = 0;
    for (uint32_t d = 0; d < s->rank; d++) {
        if (s->dims[d] == 1) continue;
        if (r > 0 && s->stride[r - 1] == s->stride[d] * s->dims[d]) {
            s->dims[r - 1] *= s->dims[d];
            s->stride[r - 1] = s->stride[d];
            continue;
        }
        s->dims[r] = s->dims[d];
        s->stride[r] = s->stride[d];
        r++;
    }
    if (r == 0) {
        s->dims[0] = 1;
        s->stride[0] = 1;
        r = 1;
    }
    s->rank = r;
    s->rows = 1;
    for (uint32_t d = 0; d + 1 < r; d++) s->rows *= (size_t)s->dims[d];
}

static void strided_task(void *ctx, size_t r0, size_t r1) {
    const strided *s = ctx;
    size_t inner = (size_t)s->dims[s->rank - 1];
    int64_t is = s->stride[s->rank - 1];
    for (size_t r = r0; r < r1; r++) {
        int64_t off = s->base;
        size_t rest = r;
        for (int d = (int)s->rank - 2; d >= 0; d--) {
            off += (int64_t)(rest % (size_t)s->dims[d]) * s->stride[d];
            rest /= (size_t)s->dims[d];
        }
        uint8_t *y = s->y + r * inner * s->es;
        const uint8_t *x = s->x + off * (int64_t)s->es;
        if (is == 1)
            memcpy(y, x, inner * s->es);
        else if (s->es == 4)
            for (size_t i = 0; i < inner; i++) ((uint32_t *)y)[i] = ((const uint32_t *)x)[(int64_t)i * is];
        else
            for (size_t i = 0; i < inner; i++) memcpy(y + i * s->es, x + (int64_t)i * is * (int64_t)s->es, s->es);
    }
}

static void strided_exec(const cpu_node *n, berth_plan *p) {
    strided *s = n->params;
    s->x = cpu_ptr(p, n->in[0]);
    s->y = cpu_ptr(p, n->out[0]);
    if (p->ops[n->out[0]].numel == 0) return;
    size_t inner = (size_t)s->dims[s->rank - 1];
    cpu_pool_for(p->dev->pool, s->rows, inner >= 4096 ? 1 : 4096 / inner, strided_task, s);
}

static berth_status strided_begin(cpu_prep *c, strided **out) {
    const cpu_opnd *x = cpu_in(c, 0);
    if (cpu_out(c, 0)->dtype != x->dtype || !bk_dtype_size(x->dtype))
        return bk_fail(&c->bk, "output: expected dtype %s, found %s", bk_dtype_name(x->dtype),
                        bk_dtype_name(cpu_out(c, 0)->dtype));
    strided *s = cpu_params(c, sizeof *s);
    if (!s) return BERTH_ERR_NOMEM;
    s->es = bk_dtype_size(x->dtype);
    *out = s;
    return BERTH_OK;
}

static void contiguous_strides(const cpu_opnd *x, int64_t *st) {
    int64_t s = 1;
    for (int d = (int)x->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= x->dims[d];
    }
}

berth_status cpu_prep_transpose(cpu_prep *c) {
    strided *s = NULL;
    berth_status st = strided_begin(c, &s);
    if (st) return st;
    const cpu_opnd *x = cpu_in(c, 0);
    int64_t perm[BERTH_MAX_RANK], xs[BERTH_MAX_RANK], od[BERTH_MAX_RANK];
    int n;
    st = bk_opt_ints(&c->bk, "permutation", perm, BERTH_MAX_RANK, &n);
    if (st) return st;
    if (n < 0) {
        n = (int)x->rank;
        for (int i = 0; i < n; i++) perm[i] = n - 1 - i;
    }
    if ((uint32_t)n != x->rank) return bk_fail(&c->bk, "permutation: expected %u values, found %d", x->rank, n);
    uint32_t seen = 0;
    for (int i = 0; i < n; i++) {
        if (perm[i] < 0 || perm[i] >= n || (seen & (1u << perm[i])))
            return bk_fail(&c->bk, "permutation: value %lld at %d is out of range or repeated", (long long)perm[i], i);
        seen |= 1u << perm[i];
    }
    /* heads moved past tokens around berth.attention: a view (see
     * ops_attention.c), of a value attention wrote heads swapped or of
     * one it will read so */
    if (x->heads_swapped || (cpu_perm_swaps_heads(perm, n) && cpu_read_by_attention_only(c->g, c->node->outputs[0]))) {
        if (!x->heads_swapped) c->plan->ops[c->node->outputs[0]].heads_swapped = 1;
        else if (!cpu_perm_swaps_heads(perm, n))
            return bk_fail(&c->bk, "internal: a value stored heads swapped is read by a transpose of another permutation");
        return cpu_prep_view(c);
    }
    contiguous_strides(x, xs);
    for (int i = 0; i < n; i++) {
        od[i] = x->dims[perm[i]];
        s->dims[i] = od[i];
        s->stride[i] = xs[perm[i]];
    }
    s->rank = (uint32_t)n;
    strided_finish(s);
    c->cn->exec = strided_exec;
    return BERTH_OK;
}

berth_status cpu_prep_slice(cpu_prep *c) {
    strided *s = NULL;
    berth_status st = strided_begin(c, &s);
    if (st) return st;
    const cpu_opnd *x = cpu_in(c, 0);
    int64_t starts[BERTH_MAX_RANK], steps[BERTH_MAX_RANK], xs[BERTH_MAX_RANK];
    if ((st = bk_param_slice(&c->bk, starts, steps))) return st;
    contiguous_strides(x, xs);
    int64_t out[BERTH_MAX_RANK];
    for (uint32_t d = 0; d < x->rank; d++) {
        out[d] = cpu_out(c, 0)->dims[d];
        s->dims[d] = out[d];
        s->stride[d] = xs[d] * steps[d];
        s->base += starts[d] * xs[d];
    }
    s->rank = x->rank;
    strided_finish(s);
    c->cn->exec = strided_exec;
    return BERTH_OK;
}

berth_status cpu_prep_expand(cpu_prep *c) {
    strided *s = NULL;
    berth_status st = strided_begin(c, &s);
    if (st) return st;
    const cpu_opnd *x = cpu_in(c, 0), *y = cpu_out(c, 0);
    if (y->rank < x->rank) return bk_fail(&c->bk, "output rank %u is below the input rank %u", y->rank, x->rank);
    int64_t xs[BERTH_MAX_RANK];
    contiguous_strides(x, xs);
    uint32_t lead = y->rank - x->rank;
    for (uint32_t d = 0; d < y->rank; d++) {
        s->dims[d] = y->dims[d];
        if (d < lead) continue;
        int64_t xd = x->dims[d - lead];
        if (xd != 1 && xd != y->dims[d])
            return bk_fail(&c->bk, "dim %u: input extent %lld does not expand to %lld", d, (long long)xd,
                            (long long)y->dims[d]);
        s->stride[d] = xd == 1 ? 0 : xs[d - lead];
    }
    s->rank = y->rank;
    strided_finish(s);
    c->cn->exec = strided_exec;
    return BERTH_OK;
}

/* ---- concat / split: [outer, extent_i * inner] blocks ---- */

typedef struct cat_params {
    size_t outer, inner, es, total; /* total = sum of extents */
} cat_params;

static void concat_exec(const cpu_node *n, berth_plan *p) {
    const cat_params *cp = n->params;
    uint8_t *y = cpu_ptr(p, n->out[0]);
    size_t at = 0, row = cp->total * cp->inner * cp->es;
    for (uint32_t k = 0; k < n->n_in; k++) {
        const cpu_opnd *o = &p->ops[n->in[k]];
        size_t chunk = (cp->outer ? o->numel / cp->outer : 0) * cp->es;
        const uint8_t *x = o->ptr;
        for (size_t r = 0; r < cp->outer && chunk; r++) memcpy(y + r * row + at, x + r * chunk, chunk);
        at += chunk;
    }
}

static void split_exec(const cpu_node *n, berth_plan *p) {
    const cat_params *cp = n->params;
    const uint8_t *x = cpu_ptr(p, n->in[0]);
    size_t at = 0, row = cp->total * cp->inner * cp->es;
    for (uint32_t k = 0; k < n->n_out; k++) {
        const cpu_opnd *o = &p->ops[n->out[k]];
        size_t chunk = (cp->outer ? o->numel / cp->outer : 0) * cp->es;
        uint8_t *y = o->ptr;
        for (size_t r = 0; r < cp->outer && chunk; r++) memcpy(y + r * chunk, x + r * row + at, chunk);
        at += chunk;
    }
}

/* Checks that `parts` agree with `whole` except along axis and that the
 * extents add up. */
static berth_status cat_common(cpu_prep *c, const cpu_opnd *whole, uint32_t n_parts, int parts_are_inputs) {
    int64_t axis_attr;
    berth_status st = bk_opt_int(&c->bk, "axis", 0, &axis_attr);
    if (st) return st;
    uint32_t axis;
    st = bk_axis(&c->bk, axis_attr, whole->rank, "axis", &axis);
    if (st) return st;
    cat_params *cp = cpu_params(c, sizeof *cp);
    if (!cp) return BERTH_ERR_NOMEM;
    cp->outer = 1, cp->inner = 1;
    for (uint32_t d = 0; d < axis; d++) cp->outer *= (size_t)whole->dims[d];
    for (uint32_t d = axis + 1; d < whole->rank; d++) cp->inner *= (size_t)whole->dims[d];
    cp->es = bk_dtype_size(whole->dtype);
    cp->total = (size_t)whole->dims[axis];
    return BERTH_OK;
}

berth_status cpu_prep_concat(cpu_prep *c) {
    berth_status st = BERTH_OK;
    if (!st) st = cat_common(c, cpu_out(c, 0), c->node->n_inputs, 1);
    if (st) return st;
    c->cn->exec = concat_exec;
    return BERTH_OK;
}

berth_status cpu_prep_split(cpu_prep *c) {
    berth_status st = BERTH_OK;
    if (!st && c->node->n_outputs < 1) return bk_fail(&c->bk, "expected at least 1 output, found 0");
    if (!st) st = cat_common(c, cpu_in(c, 0), c->node->n_outputs, 0);
    if (st) return st;
    c->cn->exec = split_exec;
    return BERTH_OK;
}

/* ---- gather ---- */

typedef struct gather_params {
    size_t outer, inner, n_idx, es;
    int64_t extent;
    int wide; /* indices are int64 */
} gather_params;

static void gather_exec(const cpu_node *n, berth_plan *p) {
    const gather_params *gp = n->params;
    const uint8_t *x = cpu_ptr(p, n->in[0]);
    const void *ix = cpu_ptr(p, n->in[1]);
    uint8_t *y = cpu_ptr(p, n->out[0]);
    size_t blk = gp->inner * gp->es;
    for (size_t o = 0; o < gp->outer; o++)
        for (size_t j = 0; j < gp->n_idx; j++) {
            int64_t i = gp->wide ? ((const int64_t *)ix)[j] : ((const int32_t *)ix)[j];
            if (i < 0) i += gp->extent;
            if (i < 0) i = 0;
            if (i >= gp->extent) i = gp->extent - 1;
            memcpy(y + (o * gp->n_idx + j) * blk, x + (o * (size_t)gp->extent + (size_t)i) * blk, blk);
        }
}

berth_status cpu_prep_gather(cpu_prep *c) {
    berth_status st;
    const cpu_opnd *x = cpu_in(c, 0), *ix = cpu_in(c, 1);
    bk_axis_geom ag;
    if ((st = bk_param_index_axis(&c->bk, &ag))) return st;
    uint32_t axis = ag.axis;
    gather_params *gp = cpu_params(c, sizeof *gp);
    if (!gp) return BERTH_ERR_NOMEM;
    gp->outer = 1, gp->inner = 1;
    for (uint32_t d = 0; d < axis; d++) gp->outer *= (size_t)x->dims[d];
    for (uint32_t d = axis + 1; d < x->rank; d++) gp->inner *= (size_t)x->dims[d];
    gp->n_idx = ix->numel;
    gp->extent = x->dims[axis];
    gp->es = bk_dtype_size(x->dtype);
    gp->wide = ix->dtype == BERTH_DTYPE_I64;
    c->cn->exec = gather_exec;
    return BERTH_OK;
}

/* ---- pad ---- */

enum { PAD_CONSTANT, PAD_EDGE, PAD_REFLECTION };

typedef struct pad_params {
    uint32_t rank;
    int mode;
    size_t es;
    uint8_t fill[8]; /* the constant, as one element of the dtype */
    int64_t begin[BERTH_MAX_RANK];
    int64_t xdims[BERTH_MAX_RANK], ydims[BERTH_MAX_RANK], xstride[BERTH_MAX_RANK];
    size_t n;
} pad_params;

/* Source index along one dim, or -1 for the constant. */
static int64_t pad_src(int mode, int64_t i, int64_t extent) {
    if (i >= 0 && i < extent) return i;
    if (mode == PAD_CONSTANT) return -1;
    if (mode == PAD_EDGE) return i < 0 ? 0 : extent - 1;
    if (extent == 1) return 0;
    int64_t period = 2 * (extent - 1);
    int64_t m = ((i % period) + period) % period;
    return m < extent ? m : period - m;
}

static void pad_exec(const cpu_node *n, berth_plan *p) {
    const pad_params *pp = n->params;
    const uint8_t *x = cpu_ptr(p, n->in[0]);
    uint8_t *y = cpu_ptr(p, n->out[0]);
    size_t es = pp->es;
    int64_t idx[BERTH_MAX_RANK] = {0};
    for (size_t e = 0; e < pp->n; e++) {
        int64_t off = 0;
        int outside = 0;
        for (uint32_t d = 0; d < pp->rank; d++) {
            int64_t s = pad_src(pp->mode, idx[d] - pp->begin[d], pp->xdims[d]);
            if (s < 0) outside = 1;
            off += s * pp->xstride[d];
        }
        memcpy(y + e * es, outside ? pp->fill : x + (size_t)off * es, es);
        for (int d = (int)pp->rank - 1; d >= 0; d--) {
            if (++idx[d] < pp->ydims[d]) break;
            idx[d] = 0;
        }
    }
}

berth_status cpu_prep_pad(cpu_prep *c) {
    berth_status st;
    const cpu_opnd *x = cpu_in(c, 0);
    int64_t b[BERTH_MAX_RANK], e[BERTH_MAX_RANK], od[BERTH_MAX_RANK];
    int nb, ne;
    st = bk_opt_ints(&c->bk, "beginningPadding", b, BERTH_MAX_RANK, &nb);
    if (!st) st = bk_opt_ints(&c->bk, "endingPadding", e, BERTH_MAX_RANK, &ne);
    if (st) return st;
    if (nb != (int)x->rank || ne != (int)x->rank)
        return bk_fail(&c->bk, "beginningPadding and endingPadding: expected %u values each, found %d and %d", x->rank, nb, ne);
    const char *mode;
    double value;
    st = bk_opt_string(&c->bk, "mode", "constant", &mode);
    if (!st) st = bk_opt_float(&c->bk, "value", 0.0, &value);
    if (st) return st;
    pad_params *pp = cpu_params(c, sizeof *pp);
    if (!pp) return BERTH_ERR_NOMEM;
    if (!strcmp(mode, "constant")) pp->mode = PAD_CONSTANT;
    else if (!strcmp(mode, "edge")) pp->mode = PAD_EDGE;
    else if (!strcmp(mode, "reflection")) pp->mode = PAD_REFLECTION;
    else return bk_fail(&c->bk, "mode: expected constant, edge or reflection, found '%s'", mode);
    for (uint32_t d = 0; d < x->rank; d++) {
        if (b[d] < 0 || e[d] < 0) return bk_fail(&c->bk, "dim %u: negative padding", d);
        if (pp->mode == PAD_REFLECTION && (b[d] >= x->dims[d] || e[d] >= x->dims[d]) && (b[d] || e[d]))
            return bk_fail(&c->bk, "dim %u: reflection padding %lld/%lld needs an extent above it, found %lld", d,
                            (long long)b[d], (long long)e[d], (long long)x->dims[d]);
        if (pp->mode == PAD_EDGE && x->dims[d] == 0 && (b[d] || e[d]))
            return bk_fail(&c->bk, "dim %u: edge padding of an empty dim", d);
        od[d] = x->dims[d] + b[d] + e[d];
    }
    pp->rank = x->rank;
    pp->es = bk_dtype_size(x->dtype);
    cpu_elem_put(pp->fill, x->dtype, 0, (cpu_elem){value, 0, 1});
    pp->n = cpu_out(c, 0)->numel;
    contiguous_strides(x, pp->xstride);
    memcpy(pp->begin, b, sizeof b);
    memcpy(pp->xdims, x->dims, sizeof pp->xdims);
    memcpy(pp->ydims, od, sizeof od);
    c->cn->exec = pad_exec;
    return BERTH_OK;
}
