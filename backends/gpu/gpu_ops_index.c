/* Index ops: argMax/argMin and cumulativeSum (one thread walks each line
 * along the axis), triangular, gatherElements and scatterElements.
 * Elements of 4 or 8 bytes move as 32-bit words. */
#include <string.h>

#include "gpu_core.h"

static berth_status axis_line(gpu_prep *c, uint32_t *axis, uint64_t *lines, uint64_t *inner) {
    bk_axis_geom ag;
    berth_status st = bk_param_axis(&c->bk, 0, &ag);
    if (st) return st;
    *axis = ag.axis, *inner = ag.inner, *lines = ag.outer * ag.inner;
    return BERTH_OK;
}

static berth_status emit_axis(gpu_prep *c, uint32_t axis, uint64_t lines, uint64_t inner, uint32_t kind, uint32_t wide,
                              int exclusive, int reversed) {
    if (lines == 0 || gpu_in(c, 0)->numel == 0) return BERTH_OK;
    gpu_dispatch *d = gpu_emit(c, "axis");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->outputs[0];
    d->pc[0] = (uint32_t)lines;
    d->pc[1] = (uint32_t)gpu_in(c, 0)->dims[axis];
    d->pc[2] = (uint32_t)inner;
    d->pc[3] = kind;
    d->pc[4] = wide;
    d->pc[5] = (uint32_t)exclusive;
    d->pc[6] = (uint32_t)reversed;
    d->groups[0] = gpu_groups(lines, 256);
    return BERTH_OK;
}

berth_status gpu_prep_arg(gpu_prep *c) {
    uint32_t axis;
    uint64_t lines, inner;
    berth_status st = axis_line(c, &axis, &lines, &inner);
    if (st) return st;
    const gpu_opnd *x = gpu_in(c, 0), *y = gpu_out(c, 0);
    if (x->dims[axis] == 0) return bk_fail(&c->bk, "axis %u is empty", axis);
    return emit_axis(c, axis, lines, inner, strcmp(c->node->op, "argMin") == 0, y->dtype == BERTH_DTYPE_I64, 0, 0);
}

berth_status gpu_prep_cumsum(gpu_prep *c) {
    uint32_t axis;
    uint64_t lines, inner;
    int exclusive, reversed;
    berth_status st = axis_line(c, &axis, &lines, &inner);
    if (!st) st = bk_opt_bool(&c->bk, "exclusive", 0, &exclusive);
    if (!st) st = bk_opt_bool(&c->bk, "reversed", 0, &reversed);
    if (st) return st;
    return emit_axis(c, axis, lines, inner, 2, 0, exclusive, reversed);
}

static berth_status word_type(gpu_prep *c, uint32_t *words) {
    const gpu_opnd *x = gpu_in(c, 0), *y = gpu_out(c, 0);
    if (x->dtype != y->dtype)
        return bk_fail(&c->bk, "output: expected dtype %s, found %s", bk_dtype_name(x->dtype), bk_dtype_name(y->dtype));
    *words = (uint32_t)(bk_dtype_size(x->dtype) / 4); /* 1 or 2: the table's dtypes */
    return BERTH_OK;
}

berth_status gpu_prep_triangular(gpu_prep *c) {
    uint32_t words = 0;
    berth_status st = BERTH_OK;
    if (!st) st = word_type(c, &words);
    if (st) return st;
    const gpu_opnd *x = gpu_in(c, 0);
    if (x->rank < 2) return bk_fail(&c->bk, "input must have rank >= 2, found %u", x->rank);
    int upper;
    int64_t diagonal;
    if ((st = bk_opt_bool(&c->bk, "upper", 1, &upper)) || (st = bk_opt_int(&c->bk, "diagonal", 0, &diagonal))) return st;
    if (x->numel == 0) return BERTH_OK;
    if (diagonal > INT32_MAX) diagonal = INT32_MAX; /* beyond every column either way */
    if (diagonal < -INT32_MAX) diagonal = -INT32_MAX;
    gpu_dispatch *d = gpu_emit(c, "triangular");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->outputs[0];
    d->pc[0] = (uint32_t)x->numel;
    d->pc[1] = (uint32_t)x->dims[x->rank - 2];
    d->pc[2] = (uint32_t)x->dims[x->rank - 1];
    d->pc[3] = (uint32_t)upper;
    d->pc[4] = (uint32_t)(int32_t)diagonal;
    d->pc[5] = words;
    d->groups[0] = gpu_groups(x->numel, 256);
    return BERTH_OK;
}

berth_status gpu_prep_gather_elements(gpu_prep *c) {
    uint32_t words = 0;
    berth_status st = BERTH_OK;
    if (!st) st = word_type(c, &words);
    if (st) return st;
    const gpu_opnd *x = gpu_in(c, 0), *ix = gpu_in(c, 1);
    bk_axis_geom ag;
    if ((st = bk_param_index_axis(&c->bk, &ag))) return st;
    uint32_t axis = ag.axis;
    gpu_dispatch *d = gpu_emit(c, "gather_elements");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 3;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->inputs[1];
    d->bind[2] = c->node->outputs[0];
    d->pc[0] = (uint32_t)ix->numel;
    d->pc[1] = x->rank;
    d->pc[2] = axis;
    d->pc[3] = (uint32_t)x->dims[axis];
    d->pc[4] = ix->dtype == BERTH_DTYPE_I64;
    d->pc[5] = words;
    int64_t s = 1;
    for (int i = (int)x->rank - 1; i >= 0; i--) {
        d->pc[8 + i] = (uint32_t)ix->dims[i];
        d->pc[16 + i] = (uint32_t)s;
        s *= x->dims[i];
    }
    d->groups[0] = gpu_groups(ix->numel, 256);
    return BERTH_OK;
}

/* scatterElements: y = x, then each update written at its index along the
 * axis (a later duplicate wins, as on the cpu backend; the shader checks
 * later positions instead of racing). */
berth_status gpu_prep_scatter_elements(gpu_prep *c) {
    uint32_t words = 0;
    berth_status st = BERTH_OK;
    if (!st) st = word_type(c, &words);
    if (st) return st;
    const gpu_opnd *x = gpu_in(c, 0), *ix = gpu_in(c, 1);
    bk_axis_geom ag;
    if ((st = bk_param_index_axis(&c->bk, &ag))) return st;
    uint32_t axis = ag.axis;
    gpu_dispatch *d = gpu_emit(c, "copy");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->outputs[0];
    d->pc[0] = (uint32_t)(x->numel * words);
    d->pc[1] = 1;
    d->pc[4] = d->pc[0];
    d->pc[12] = d->pc[20] = 1;
    d->groups[0] = gpu_groups(x->numel * words, 256);
    if (ix->numel == 0) return BERTH_OK;
    d = gpu_emit(c, "scatter_elements");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 3;
    d->bind[0] = c->node->inputs[1];
    d->bind[1] = c->node->inputs[2];
    d->bind[2] = c->node->outputs[0];
    d->pc[0] = (uint32_t)ix->numel;
    d->pc[1] = x->rank;
    d->pc[2] = axis;
    d->pc[3] = (uint32_t)x->dims[axis];
    d->pc[4] = ix->dtype == BERTH_DTYPE_I64;
    d->pc[5] = words;
    d->pc[6] = (uint32_t)ix->dims[axis];
    int64_t s = 1, is = 1;
    for (int i = (int)x->rank - 1; i >= 0; i--) {
        if ((uint32_t)i == axis) d->pc[7] = (uint32_t)is;
        d->pc[8 + i] = (uint32_t)ix->dims[i];
        d->pc[16 + i] = (uint32_t)s;
        s *= x->dims[i];
        is *= ix->dims[i];
    }
    d->groups[0] = gpu_groups(ix->numel, 256);
    return BERTH_OK;
}
