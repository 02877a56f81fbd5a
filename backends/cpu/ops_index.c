/* Ops that compute an index per element: tile (modulo), triangular (a
 * mask on the last two dims), gatherElements and scatterElements
 * (indices wrap once if negative, then clamp into range, like gather). Any dtype with a
 * byte size is moved as bytes. */
#include <string.h>

#include "cpu_internal.h"

typedef struct idx_params {
    uint32_t rank, axis;
    int64_t xdims[BERTH_MAX_RANK], ydims[BERTH_MAX_RANK], xstride[BERTH_MAX_RANK];
    size_t es, n;
    int upper, wide;
    int64_t diagonal;
} idx_params;

static void contiguous(const int64_t *dims, uint32_t rank, int64_t *stride) {
    int64_t s = 1;
    for (int d = (int)rank - 1; d >= 0; d--) stride[d] = s, s *= dims[d];
}

static berth_status same_dtype_io(cpu_prep *c) {
    const cpu_opnd *x = cpu_in(c, 0);
    if (cpu_out(c, 0)->dtype != x->dtype || !bk_dtype_size(x->dtype))
        return bk_fail(&c->bk, "output: expected dtype %s, found %s", bk_dtype_name(x->dtype),
                        bk_dtype_name(cpu_out(c, 0)->dtype));
    return BERTH_OK;
}

/* ---- tile ---- */

static void tile_exec(const cpu_node *n, berth_plan *p) {
    const idx_params *T = n->params;
    const uint8_t *x = cpu_ptr(p, n->in[0]);
    uint8_t *y = cpu_ptr(p, n->out[0]);
    int64_t idx[BERTH_MAX_RANK] = {0};
    for (size_t e = 0; e < T->n; e++) {
        int64_t off = 0;
        for (uint32_t d = 0; d < T->rank; d++) off += (idx[d] % T->xdims[d]) * T->xstride[d];
        memcpy(y + e * T->es, x + (size_t)off * T->es, T->es);
        for (int d = (int)T->rank - 1; d >= 0; d--) {
            if (++idx[d] < T->ydims[d]) break;
            idx[d] = 0;
        }
    }
}

berth_status cpu_prep_tile(cpu_prep *c) {
    berth_status st = BERTH_OK;
    if (!st) st = same_dtype_io(c);
    if (st) return st;
    const cpu_opnd *x = cpu_in(c, 0);
    const int64_t *od = cpu_out(c, 0)->dims;
    idx_params *T = cpu_params(c, sizeof *T);
    if (!T) return BERTH_ERR_NOMEM;
    T->rank = x->rank;
    memcpy(T->xdims, x->dims, sizeof T->xdims);
    memcpy(T->ydims, od, sizeof(int64_t) * x->rank);
    contiguous(x->dims, x->rank, T->xstride);
    T->es = bk_dtype_size(x->dtype);
    T->n = cpu_out(c, 0)->numel;
    c->cn->exec = tile_exec;
    return BERTH_OK;
}

/* ---- triangular ---- */

static void tri_exec(const cpu_node *n, berth_plan *p) {
    const idx_params *T = n->params;
    const uint8_t *x = cpu_ptr(p, n->in[0]);
    uint8_t *y = cpu_ptr(p, n->out[0]);
    int64_t rows = T->xdims[T->rank - 2], cols = T->xdims[T->rank - 1];
    size_t mats = (rows > 0 && cols > 0) ? T->n / (size_t)(rows * cols) : 0;
    for (size_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                size_t at = ((m * (size_t)rows + (size_t)i) * (size_t)cols + (size_t)j) * T->es;
                int keep = T->upper ? j - i >= T->diagonal : j - i <= T->diagonal;
                if (keep) memcpy(y + at, x + at, T->es);
                else memset(y + at, 0, T->es);
            }
}

berth_status cpu_prep_triangular(cpu_prep *c) {
    berth_status st = BERTH_OK;
    if (!st) st = same_dtype_io(c);
    if (st) return st;
    const cpu_opnd *x = cpu_in(c, 0);
    if (x->rank < 2) return bk_fail(&c->bk, "input must have rank >= 2, found %u", x->rank);
    idx_params *T = cpu_params(c, sizeof *T);
    if (!T) return BERTH_ERR_NOMEM;
    if ((st = bk_opt_bool(&c->bk, "upper", 1, &T->upper)) || (st = bk_opt_int(&c->bk, "diagonal", 0, &T->diagonal))) return st;
    T->rank = x->rank;
    memcpy(T->xdims, x->dims, sizeof T->xdims);
    T->es = bk_dtype_size(x->dtype);
    T->n = x->numel;
    c->cn->exec = tri_exec;
    return BERTH_OK;
}

/* ---- gatherElements ---- */

static void ge_exec(const cpu_node *n, berth_plan *p) {
    const idx_params *G = n->params;
    const uint8_t *x = cpu_ptr(p, n->in[0]);
    const void *ix = cpu_ptr(p, n->in[1]);
    uint8_t *y = cpu_ptr(p, n->out[0]);
    int64_t idx[BERTH_MAX_RANK] = {0}, extent = G->xdims[G->axis];
    for (size_t e = 0; e < G->n; e++) {
        int64_t k = G->wide ? ((const int64_t *)ix)[e] : ((const int32_t *)ix)[e];
        if (k < 0) k += extent;
        if (k < 0) k = 0;
        if (k >= extent) k = extent - 1;
        int64_t off = 0;
        for (uint32_t d = 0; d < G->rank; d++) off += (d == G->axis ? k : idx[d]) * G->xstride[d];
        memcpy(y + e * G->es, x + (size_t)off * G->es, G->es);
        for (int d = (int)G->rank - 1; d >= 0; d--) {
            if (++idx[d] < G->ydims[d]) break;
            idx[d] = 0;
        }
    }
}

berth_status cpu_prep_gather_elements(cpu_prep *c) {
    berth_status st = BERTH_OK;
    if (!st) st = same_dtype_io(c);
    if (st) return st;
    const cpu_opnd *x = cpu_in(c, 0), *ix = cpu_in(c, 1);
    bk_axis_geom ag;
    if ((st = bk_param_index_axis(&c->bk, &ag))) return st;
    uint32_t axis = ag.axis;
    idx_params *G = cpu_params(c, sizeof *G);
    if (!G) return BERTH_ERR_NOMEM;
    G->rank = x->rank;
    G->axis = axis;
    memcpy(G->xdims, x->dims, sizeof G->xdims);
    memcpy(G->ydims, ix->dims, sizeof G->ydims);
    contiguous(x->dims, x->rank, G->xstride);
    G->es = bk_dtype_size(x->dtype);
    G->n = ix->numel;
    G->wide = ix->dtype == BERTH_DTYPE_I64;
    c->cn->exec = ge_exec;
    return BERTH_OK;
}

/* ---- scatterElements: a copy of the input with updates written at the
 * indexed positions along the axis; a later duplicate index wins ---- */

static void se_exec(const cpu_node *n, berth_plan *p) {
    const idx_params *G = n->params;
    const uint8_t *x = cpu_ptr(p, n->in[0]), *up = cpu_ptr(p, n->in[2]);
    const void *ix = cpu_ptr(p, n->in[1]);
    uint8_t *y = cpu_ptr(p, n->out[0]);
    size_t total = 1;
    for (uint32_t d = 0; d < G->rank; d++) total *= (size_t)G->xdims[d];
    if (y != x && total) memcpy(y, x, total * G->es);
    int64_t idx[BERTH_MAX_RANK] = {0}, extent = G->xdims[G->axis];
    for (size_t e = 0; e < G->n; e++) {
        int64_t k = G->wide ? ((const int64_t *)ix)[e] : ((const int32_t *)ix)[e];
        if (k < 0) k += extent;
        if (k < 0) k = 0;
        if (k >= extent) k = extent - 1;
        int64_t off = 0;
        for (uint32_t d = 0; d < G->rank; d++) off += (d == G->axis ? k : idx[d]) * G->xstride[d];
        memcpy(y + (size_t)off * G->es, up + e * G->es, G->es);
        for (int d = (int)G->rank - 1; d >= 0; d--) {
            if (++idx[d] < G->ydims[d]) break;
            idx[d] = 0;
        }
    }
}

berth_status cpu_prep_scatter_elements(cpu_prep *c) {
    berth_status st = BERTH_OK;
    if (!st) st = same_dtype_io(c);
    if (st) return st;
    const cpu_opnd *x = cpu_in(c, 0), *ix = cpu_in(c, 1);
    bk_axis_geom ag;
    if ((st = bk_param_index_axis(&c->bk, &ag))) return st;
    uint32_t axis = ag.axis;
    idx_params *G = cpu_params(c, sizeof *G);
    if (!G) return BERTH_ERR_NOMEM;
    G->rank = x->rank;
    G->axis = axis;
    memcpy(G->xdims, x->dims, sizeof G->xdims);
    memcpy(G->ydims, ix->dims, sizeof G->ydims);
    contiguous(x->dims, x->rank, G->xstride);
    G->es = bk_dtype_size(x->dtype);
    G->n = ix->numel;
    G->wide = ix->dtype == BERTH_DTYPE_I64;
    c->cn->exec = se_exec;
    return BERTH_OK;
}
