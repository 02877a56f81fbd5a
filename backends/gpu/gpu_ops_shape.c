/* Data movement: transpose, slice, expand, concat and split as strided
 * word copies on one shader, plus gather, where, pad and logicalNot.
 * Elements of 4 or 8 bytes move as 32-bit words, so int64 indices or
 * shapes travel through the same kernels as float32. */
#include <string.h>

#include "gpu_core.h"

typedef struct strided {
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK + 1], in[BERTH_MAX_RANK + 1], out[BERTH_MAX_RANK + 1];
    int64_t in_base, out_base;
} strided;

static void contiguous(const berth_operand *o, int64_t *s) {
    int64_t st = 1;
    for (int d = (int)o->rank - 1; d >= 0; d--) {
        s[d] = st;
        st *= o->dims[d];
    }
}

static uint32_t words_of(berth_dtype t) { return (uint32_t)(bk_dtype_size(t) / 4); }

/* Drops size-1 dims, widens to words, merges neighbours contiguous on
 * both sides, refuses what the copy shader cannot index, and emits one
 * copy dispatch from operand src to dst (none while gpu_check_copy runs
 * the op with no plan). The copy ops below read only the graph. */
static berth_status emit_copy(gpu_prep *c, uint32_t src, uint32_t dst, strided *s) {
    uint32_t w = words_of(c->g->operands[src].dtype); /* 1 or 2: the table's dtypes */
    uint64_t n = 1;
    for (uint32_t d = 0; d < s->rank; d++) n *= (uint64_t)s->dims[d];
    if (n == 0) return BERTH_OK;
    strided t = {.in_base = s->in_base * w, .out_base = s->out_base * w};
    for (uint32_t d = 0; d <= s->rank; d++) {
        int64_t dim = d < s->rank ? s->dims[d] : w;
        int64_t is = d < s->rank ? s->in[d] * w : 1, os = d < s->rank ? s->out[d] * w : 1;
        if (dim == 1) continue;
        if (t.rank > 0 && t.in[t.rank - 1] == is * dim && t.out[t.rank - 1] == os * dim) {
            t.dims[t.rank - 1] *= dim;
            t.in[t.rank - 1] = is;
            t.out[t.rank - 1] = os;
            continue;
        }
        t.dims[t.rank] = dim;
        t.in[t.rank] = is;
        t.out[t.rank] = os;
        t.rank++;
    }
    if (t.rank > 8) return bk_refuse(&c->bk, "a copy over %u distinct dims exceeds the shader's 8", t.rank);
    n *= w;
    if (n > UINT32_MAX || (uint64_t)t.in_base > UINT32_MAX || (uint64_t)t.out_base > UINT32_MAX)
        return bk_refuse(&c->bk, "%llu words exceed the shaders' 32-bit indexing", (unsigned long long)n);
    if (!c->plan) return BERTH_OK; /* gpu_check_copy: geometry only */
    gpu_dispatch *d = gpu_emit(c, "copy");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = src;
    d->bind[1] = dst;
    d->pc[0] = (uint32_t)n;
    d->pc[1] = t.rank;
    d->pc[2] = (uint32_t)t.in_base;
    d->pc[3] = (uint32_t)t.out_base;
    for (uint32_t i = 0; i < t.rank; i++) {
        d->pc[4 + i] = (uint32_t)t.dims[i];
        d->pc[12 + i] = (uint32_t)t.in[i];
        d->pc[20 + i] = (uint32_t)t.out[i];
    }
    d->groups[0] = gpu_groups(n, 256);
    return BERTH_OK;
}

static berth_status same_type(gpu_prep *c) {
    if (bk_in(&c->bk, 0)->dtype != bk_out(&c->bk, 0)->dtype)
        return bk_fail(&c->bk, "output: expected dtype %s, found %s", bk_dtype_name(bk_in(&c->bk, 0)->dtype),
                       bk_dtype_name(bk_out(&c->bk, 0)->dtype));
    return BERTH_OK;
}

berth_status gpu_prep_transpose(gpu_prep *c) {
    berth_status st = same_type(c);
    if (st) return st;
    const berth_operand *x = bk_in(&c->bk, 0), *y = bk_out(&c->bk, 0);
    int64_t perm[BERTH_MAX_RANK];
    int n;
    st = bk_opt_ints(&c->bk, "permutation", perm, BERTH_MAX_RANK, &n);
    if (st) return st;
    if (n < 0) { /* WebNN's default reverses the dims */
        n = (int)x->rank;
        for (int i = 0; i < n; i++) perm[i] = n - 1 - i;
    }
    if ((uint32_t)n != x->rank) return bk_fail(&c->bk, "permutation: expected %u values, found %d", x->rank, n);
    uint32_t seen = 0;
    strided s = {.rank = x->rank};
    int64_t xs[BERTH_MAX_RANK], od[BERTH_MAX_RANK];
    contiguous(x, xs);
    for (int i = 0; i < n; i++) {
        if (perm[i] < 0 || perm[i] >= n || (seen & (1u << perm[i])))
            return bk_fail(&c->bk, "permutation: value %lld at %d is out of range or repeated", (long long)perm[i], i);
        seen |= 1u << perm[i];
        od[i] = x->dims[perm[i]];
        s.dims[i] = od[i];
        s.in[i] = xs[perm[i]];
    }
    contiguous(y, s.out);
    return emit_copy(c, c->node->inputs[0], c->node->outputs[0], &s);
}

berth_status gpu_prep_slice(gpu_prep *c) {
    berth_status st = same_type(c);
    if (st) return st;
    const berth_operand *x = bk_in(&c->bk, 0);
    int64_t starts[BERTH_MAX_RANK], steps[BERTH_MAX_RANK], xs[BERTH_MAX_RANK];
    if ((st = bk_param_slice(&c->bk, starts, steps))) return st;
    contiguous(x, xs);
    strided s = {.rank = x->rank};
    int64_t out[BERTH_MAX_RANK];
    for (uint32_t d = 0; d < x->rank; d++) {
        int64_t step = steps[d];
        out[d] = bk_out(&c->bk, 0)->dims[d];
        s.dims[d] = out[d];
        s.in[d] = xs[d] * step;
        s.in_base += starts[d] * xs[d];
    }
    contiguous(bk_out(&c->bk, 0), s.out);
    return emit_copy(c, c->node->inputs[0], c->node->outputs[0], &s);
}

berth_status gpu_prep_expand(gpu_prep *c) {
    berth_status st = same_type(c);
    if (st) return st;
    const berth_operand *x = bk_in(&c->bk, 0), *y = bk_out(&c->bk, 0);
    if (y->rank < x->rank) return bk_fail(&c->bk, "output rank %u is below the input rank %u", y->rank, x->rank);
    int64_t xs[BERTH_MAX_RANK];
    contiguous(x, xs);
    strided s = {.rank = y->rank};
    uint32_t lead = y->rank - x->rank;
    for (uint32_t d = 0; d < y->rank; d++) {
        s.dims[d] = y->dims[d];
        if (d < lead) continue;
        int64_t xd = x->dims[d - lead];
        if (xd != 1 && xd != y->dims[d])
            return bk_fail(&c->bk, "dim %u: input extent %lld does not expand to %lld", d, (long long)xd,
                           (long long)y->dims[d]);
        s.in[d] = xd == 1 ? 0 : xs[d - lead];
    }
    contiguous(y, s.out);
    return emit_copy(c, c->node->inputs[0], c->node->outputs[0], &s);
}

/* tile: each dim d becomes (repetitions, extent) with the input stride 0
 * over the repetitions, so the strided copy does it. */
berth_status gpu_prep_tile(gpu_prep *c) {
    berth_status st = same_type(c);
    if (st) return st;
    const berth_operand *x = bk_in(&c->bk, 0), *y = bk_out(&c->bk, 0);
    int64_t xs[BERTH_MAX_RANK], ys[BERTH_MAX_RANK];
    contiguous(x, xs);
    contiguous(y, ys);
    strided s = {0};
    for (uint32_t d = 0; d < x->rank; d++) {
        int64_t rep = x->dims[d] ? y->dims[d] / x->dims[d] : 1;
        if (rep > 1) {
            if (s.rank == BERTH_MAX_RANK) return bk_refuse(&c->bk, "tiling more than 8 split dims");
            s.dims[s.rank] = rep, s.in[s.rank] = 0, s.out[s.rank] = ys[d] * x->dims[d];
            s.rank++;
        }
        if (s.rank == BERTH_MAX_RANK) return bk_refuse(&c->bk, "tiling more than 8 split dims");
        s.dims[s.rank] = x->dims[d], s.in[s.rank] = xs[d], s.out[s.rank] = ys[d];
        s.rank++;
    }
    return emit_copy(c, c->node->inputs[0], c->node->outputs[0], &s);
}

/* concat (parts are inputs) and split (parts are outputs). */
static berth_status cat_split(gpu_prep *c, int concat) {
    const berth_operand *whole = concat ? bk_out(&c->bk, 0) : bk_in(&c->bk, 0);
    uint32_t n_parts = concat ? c->node->n_inputs : c->node->n_outputs;
    int64_t a;
    uint32_t axis;
    berth_status st = bk_opt_int(&c->bk, "axis", 0, &a);
    if (!st) st = bk_axis(&c->bk, a, whole->rank, "axis", &axis);
    if (st) return st;
    int64_t ws[BERTH_MAX_RANK];
    contiguous(whole, ws);
    int64_t at = 0;
    for (uint32_t k = 0; k < n_parts; k++) {
        const berth_operand *o = concat ? bk_in(&c->bk, k) : bk_out(&c->bk, k);
        strided s = {.rank = o->rank};
        int64_t ps[BERTH_MAX_RANK];
        contiguous(o, ps);
        memcpy(s.dims, o->dims, sizeof(int64_t) * o->rank);
        memcpy(concat ? s.in : s.out, ps, sizeof(int64_t) * o->rank);
        memcpy(concat ? s.out : s.in, ws, sizeof(int64_t) * o->rank);
        if (concat) s.out_base = at * ws[axis];
        else s.in_base = at * ws[axis];
        st = concat ? emit_copy(c, c->node->inputs[k], c->node->outputs[0], &s)
                    : emit_copy(c, c->node->inputs[0], c->node->outputs[k], &s);
        if (st) return st;
        at += o->dims[axis];
    }
    return BERTH_OK;
}

berth_status gpu_prep_concat(gpu_prep *c) {
    berth_status st = BERTH_OK;
    return st ? st : cat_split(c, 1);
}

berth_status gpu_prep_split(gpu_prep *c) {
    berth_status st = BERTH_OK;
    if (!st && c->node->n_outputs < 1) return bk_fail(&c->bk, "expected at least 1 output, found 0");
    return st ? st : cat_split(c, 0);
}

/* Check hook of transpose, slice, expand, tile, concat and split: the
 * op's own geometry and refusals, run with no plan. */
berth_status gpu_check_copy(const bk_node_ctx *c) {
    gpu_prep p = {.bk = *c};
    berth_op_id id = berth_op_find(c->node->op);
    return id == BERTH_OP_TRANSPOSE ? gpu_prep_transpose(&p)
         : id == BERTH_OP_SLICE     ? gpu_prep_slice(&p)
         : id == BERTH_OP_EXPAND    ? gpu_prep_expand(&p)
         : id == BERTH_OP_TILE      ? gpu_prep_tile(&p)
         : id == BERTH_OP_CONCAT    ? gpu_prep_concat(&p)
                                    : gpu_prep_split(&p);
}

berth_status gpu_prep_gather(gpu_prep *c) {
    berth_status st;
    const gpu_opnd *x = gpu_in(c, 0), *ix = gpu_in(c, 1), *y = gpu_out(c, 0);
    uint32_t w = words_of(x->dtype);
    bk_axis_geom ag;
    if ((st = bk_param_index_axis(&c->bk, &ag))) return st;
    uint32_t axis = ag.axis;
    uint64_t inner = w;
    for (uint32_t d = axis + 1; d < x->rank; d++) inner *= (uint64_t)x->dims[d];
    uint64_t n = (uint64_t)y->numel * w;
    gpu_dispatch *d = gpu_emit(c, "gather");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 3;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->inputs[1];
    d->bind[2] = c->node->outputs[0];
    d->pc[0] = (uint32_t)n;
    d->pc[1] = (uint32_t)inner;
    d->pc[2] = (uint32_t)ix->numel;
    d->pc[3] = (uint32_t)x->dims[axis];
    d->pc[4] = ix->dtype == BERTH_DTYPE_I64;
    d->groups[0] = gpu_groups(n, 256);
    return BERTH_OK;
}

berth_status gpu_prep_where(gpu_prep *c) {
    const gpu_opnd *in[3] = {gpu_in(c, 0), gpu_in(c, 1), gpu_in(c, 2)}, *y = gpu_out(c, 0);
    if (in[0]->dtype != BERTH_DTYPE_U8)
        return bk_fail(&c->bk, "condition: expected dtype uint8, found %s", bk_dtype_name(in[0]->dtype));
    if (in[1]->dtype != y->dtype || in[2]->dtype != y->dtype)
        return bk_fail(&c->bk, "inputs 1 and 2: expected dtype %s, found %s and %s", bk_dtype_name(y->dtype),
                       bk_dtype_name(in[1]->dtype), bk_dtype_name(in[2]->dtype));
    size_t es = bk_dtype_size(y->dtype);
    bk_bcast b; /* element size and rank pass check_where */
    bk_bcast_of(&c->bk, 3, &b);
    if (y->numel == 0) return BERTH_OK;
    gpu_dispatch *d = gpu_emit(c, "where");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 4;
    for (uint32_t i = 0; i < 3; i++) d->bind[i] = c->node->inputs[i];
    d->bind[3] = c->node->outputs[0];
    d->pc[0] = (uint32_t)y->numel;
    d->pc[1] = b.rank;
    for (uint32_t i = 0; i < b.rank; i++) {
        d->pc[2 + i] = (uint32_t)b.dims[i];
        d->pc[8 + i] = (uint32_t)b.strides[0][i];
        d->pc[14 + i] = (uint32_t)b.strides[1][i];
        d->pc[20 + i] = (uint32_t)b.strides[2][i];
    }
    d->pc[26] = (uint32_t)(es / 4);
    d->pc[27] = (uint32_t)es;
    d->groups[0] = gpu_groups(y->numel, 256);
    return BERTH_OK;
}

berth_status gpu_prep_logical_not(gpu_prep *c) {
    uint64_t words = (gpu_out(c, 0)->numel + 3) / 4;
    if (words == 0) return BERTH_OK;
    gpu_dispatch *d = gpu_emit(c, "logical_not");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->outputs[0];
    d->pc[0] = (uint32_t)words;
    d->groups[0] = gpu_groups(words, 256);
    return BERTH_OK;
}

berth_status gpu_prep_pad(gpu_prep *c) {
    berth_status st;
    const gpu_opnd *x = gpu_in(c, 0), *y = gpu_out(c, 0);
    int64_t b[BERTH_MAX_RANK], e[BERTH_MAX_RANK], od[BERTH_MAX_RANK];
    int nb, ne;
    const char *mode;
    double value;
    st = bk_opt_ints(&c->bk, "beginningPadding", b, BERTH_MAX_RANK, &nb);
    if (!st) st = bk_opt_ints(&c->bk, "endingPadding", e, BERTH_MAX_RANK, &ne);
    if (!st) st = bk_opt_string(&c->bk, "mode", "constant", &mode);
    if (!st) st = bk_opt_float(&c->bk, "value", 0.0, &value);
    if (st) return st;
    if (nb != (int)x->rank || ne != (int)x->rank)
        return bk_fail(&c->bk, "beginningPadding and endingPadding: expected %u values each, found %d and %d", x->rank, nb,
                       ne);
    uint32_t m = strcmp(mode, "constant") == 0 ? 0 : strcmp(mode, "edge") == 0 ? 1 : strcmp(mode, "reflection") == 0 ? 2 : 9;
    if (m == 9) return bk_fail(&c->bk, "mode: expected constant, edge or reflection, found '%s'", mode);
    for (uint32_t d = 0; d < x->rank; d++) {
        if (b[d] < 0 || e[d] < 0) return bk_fail(&c->bk, "dim %u: negative padding", d);
        if (m == 2 && (b[d] >= x->dims[d] || e[d] >= x->dims[d]))
            return bk_fail(&c->bk, "dim %u: reflection padding %lld/%lld needs an extent above it, found %lld", d,
                           (long long)b[d], (long long)e[d], (long long)x->dims[d]);
        if (m == 1 && x->dims[d] == 0 && (b[d] || e[d])) return bk_fail(&c->bk, "dim %u: edge padding of an empty dim", d);
        od[d] = x->dims[d] + b[d] + e[d];
    }
    if (y->numel == 0) return BERTH_OK;
    gpu_dispatch *d = gpu_emit(c, "pad");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->outputs[0];
    d->pc[0] = (uint32_t)y->numel;
    d->pc[1] = x->rank;
    d->pc[2] = m;
    /* the constant as one element of the dtype, in words */
    uint64_t fill = 0;
    switch (x->dtype) {
    case BERTH_DTYPE_F32: fill = gpu_f2u((float)value); break;
    case BERTH_DTYPE_I32: case BERTH_DTYPE_I64: fill = (uint64_t)(int64_t)value; break;
    default: fill = (uint64_t)value; break; /* uint32, uint64 */
    }
    d->pc[3] = (uint32_t)fill;
    d->pc[29] = (uint32_t)(fill >> 32);
    d->pc[28] = (uint32_t)(bk_dtype_size(x->dtype) / 4);
    for (uint32_t i = 0; i < x->rank; i++) {
        d->pc[4 + i] = (uint32_t)od[i];
        d->pc[12 + i] = (uint32_t)x->dims[i];
        d->pc[20 + i] = (uint32_t)b[i];
    }
    d->groups[0] = gpu_groups(y->numel, 256);
    return BERTH_OK;
}
