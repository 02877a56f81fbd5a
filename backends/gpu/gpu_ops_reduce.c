/* softmax and the reduce* family. Both give one workgroup to each output
 * row and reduce in shared memory, so long rows use the whole group. */
#include <string.h>

#include "gpu_core.h"

berth_status gpu_prep_softmax(gpu_prep *c) {
    const gpu_opnd *x = gpu_in(c, 0);
    bk_axis_geom ag;
    berth_status st = bk_param_axis(&c->bk, (int64_t)x->rank - 1, &ag);
    if (st) return st;
    uint32_t axis = ag.axis;
    uint64_t outer = ag.outer, inner = ag.inner;
    if (x->numel == 0) return BERTH_OK;
    gpu_dispatch *d = gpu_emit(c, "softmax");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->outputs[0];
    d->pc[0] = (uint32_t)(outer * inner);
    d->pc[1] = (uint32_t)x->dims[axis];
    d->pc[2] = (uint32_t)inner;
    d->groups[0] = gpu_groups(outer * inner, 1);
    return BERTH_OK;
}

static const char *const red_names[] = {"reduceMean", "reduceSum",       "reduceMax", "reduceMin",    "reduceProduct",
                                        "reduceL2",   "reduceSumSquare", "reduceL1",  "reduceLogSum", "reduceLogSumExp"};

/* Appends a dim to a collapsed list, merging with the previous one when
 * contiguous; returns 0 if the list is full. */
static int push_dim(int64_t *dims, int64_t *strides, uint32_t *n, int64_t dim, int64_t stride, int *last_kind,
                    int kind) {
    if (*n > 0 && *last_kind == kind && strides[*n - 1] == stride * dim) {
        dims[*n - 1] *= dim;
        strides[*n - 1] = stride;
        return 1;
    }
    if (*n == 4) return 0;
    dims[*n] = dim;
    strides[*n] = stride;
    (*n)++;
    *last_kind = kind;
    return 1;
}

/* Kept and reduced dims, each collapsed where contiguous: at most 4 of
 * each kind, else refused. */
typedef struct red_geom {
    uint32_t nk, nr;
    uint64_t n_red;
    int64_t kd[4], ks[4], rd[4], rs[4];
} red_geom;

static berth_status red_geom_of(const bk_node_ctx *c, red_geom *g) {
    const berth_operand *x = bk_in(c, 0);
    uint32_t axes[BERTH_MAX_RANK], reduced;
    int n_axes;
    berth_status st = bk_param_axes(c, 0, axes, &n_axes, &reduced);
    if (st) return st;
    memset(g, 0, sizeof *g);
    int64_t xs[BERTH_MAX_RANK], s = 1;
    for (int d = (int)x->rank - 1; d >= 0; d--) {
        xs[d] = s;
        s *= x->dims[d];
    }
    g->n_red = 1;
    int lk = -1, lr = -1;
    for (uint32_t d = 0; d < x->rank; d++) {
        int is_red = (reduced >> d) & 1u;
        if (is_red) g->n_red *= (uint64_t)x->dims[d];
        if (x->dims[d] == 1) continue;
        int ok = is_red ? push_dim(g->rd, g->rs, &g->nr, x->dims[d], xs[d], &lr, 1)
                        : push_dim(g->kd, g->ks, &g->nk, x->dims[d], xs[d], &lk, 0);
        if (!ok) return bk_refuse(c, "more than 4 separate %s dim groups", is_red ? "reduced" : "kept");
        /* A dim of the other kind in between breaks contiguity. */
        if (is_red) lk = -1;
        else lr = -1;
    }
    return BERTH_OK;
}

berth_status gpu_check_reduce(const bk_node_ctx *c) {
    red_geom g;
    berth_status st = red_geom_of(c, &g);
    return st ? st : gpu_check_fits(c, UINT32_MAX);
}

berth_status gpu_prep_reduce(gpu_prep *c) {
    int op = -1;
    for (int i = 0; i < 10; i++)
        if (strcmp(c->node->op, red_names[i]) == 0) op = i;
    if (op < 0) return bk_fail(&c->bk, "not a reduction");
    const gpu_opnd *y = gpu_out(c, 0);
    red_geom g;
    berth_status st = red_geom_of(&c->bk, &g);
    if (st) return st;
    if (y->numel == 0) return BERTH_OK;
    gpu_dispatch *d = gpu_emit(c, "reduce");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->outputs[0];
    d->pc[0] = (uint32_t)y->numel;
    d->pc[1] = (uint32_t)g.n_red;
    d->pc[2] = g.nk;
    d->pc[3] = g.nr;
    d->pc[4] = (uint32_t)op;
    for (uint32_t i = 0; i < 4; i++) {
        d->pc[5 + i] = (uint32_t)g.kd[i];
        d->pc[9 + i] = (uint32_t)g.ks[i];
        d->pc[13 + i] = (uint32_t)g.rd[i];
        d->pc[17 + i] = (uint32_t)g.rs[i];
    }
    d->groups[0] = gpu_groups(y->numel, 1);
    return BERTH_OK;
}
