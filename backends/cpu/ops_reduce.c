/* Reductions and softmax. A reduction splits the input dims into kept
 * and reduced sets at plan time; each output element walks its reduced
 * index space with a counter, accumulating in double. Outputs are spread
 * over the pool. A NaN reaches every reduction's result (max and min
 * included); an empty reduction gives the op's identity: 0 for the sums,
 * 1 for the product, -inf for max, logSum and logSumExp, +inf for min,
 * NaN (0 / 0) for mean. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

enum { R_MEAN, R_SUM, R_MAX, R_MIN, R_PROD, R_L2, R_SUMSQ, R_L1, R_LOGSUM, R_LOGSUMEXP };

static const struct { const char *name; int op; } red_names[] = {
    {"reduceMean", R_MEAN}, {"reduceSum", R_SUM}, {"reduceMax", R_MAX}, {"reduceMin", R_MIN},
    {"reduceProduct", R_PROD}, {"reduceL2", R_L2}, {"reduceSumSquare", R_SUMSQ}, {"reduceL1", R_L1},
    {"reduceLogSum", R_LOGSUM}, {"reduceLogSumExp", R_LOGSUMEXP},
};

typedef struct red_params {
    int op;
    uint32_t n_kept, n_red;
    int64_t kept_dims[BERTH_MAX_RANK], kept_stride[BERTH_MAX_RANK];
    int64_t red_dims[BERTH_MAX_RANK], red_stride[BERTH_MAX_RANK];
    size_t n_out, n_red_elems;
    int contiguous; /* a sum or mean over the trailing dims: runs of n_red_elems */
    const float *x;
    float *y;
} red_params;

static double red_one(const red_params *r, const float *x) {
    int64_t idx[BERTH_MAX_RANK] = {0};
    double acc = r->op == R_PROD ? 1.0 : r->op == R_MAX ? -INFINITY : r->op == R_MIN ? INFINITY : 0.0;
    double mx = -INFINITY;
    if (r->op == R_LOGSUMEXP) { /* shift by the max so exp cannot overflow */
        for (size_t e = 0; e < r->n_red_elems; e++) {
            int64_t off = 0;
            for (uint32_t d = 0; d < r->n_red; d++) off += idx[d] * r->red_stride[d];
            if (x[off] > mx || x[off] != x[off]) mx = x[off];
            if (mx != mx) return mx;
            for (int d = (int)r->n_red - 1; d >= 0; d--) {
                if (++idx[d] < r->red_dims[d]) break;
                idx[d] = 0;
            }
        }
        if (isinf(mx)) return mx; /* all -inf (or empty), or a +inf: e^(x - mx) would be NaN */
    }
    for (size_t e = 0; e < r->n_red_elems; e++) {
        int64_t off = 0;
        for (uint32_t d = 0; d < r->n_red; d++) off += idx[d] * r->red_stride[d];
        double v = x[off];
        switch (r->op) {
        case R_MAX: acc = v > acc || v != v ? v : acc; break;
        case R_MIN: acc = v < acc || v != v ? v : acc; break;
        case R_PROD: acc *= v; break;
        case R_L2: case R_SUMSQ: acc += v * v; break;
        case R_L1: acc += fabs(v); break;
        case R_LOGSUMEXP: acc += exp(v - mx); break;
        default: acc += v; break;
        }
        for (int d = (int)r->n_red - 1; d >= 0; d--) {
            if (++idx[d] < r->red_dims[d]) break;
            idx[d] = 0;
        }
    }
    switch (r->op) {
    case R_MEAN: return r->n_red_elems ? acc / (double)r->n_red_elems : NAN;
    case R_L2: return sqrt(acc);
    case R_LOGSUM: return log(acc);
    case R_LOGSUMEXP: return mx + log(acc);
    default: return acc;
    }
}

/* Sum of n contiguous floats in double, in eight independent partial
 * sums so the additions overlap instead of waiting on each other (the
 * same double accuracy as one running sum, in another order). */
CPU_CLONES static double sum_run(const float *restrict x, size_t n) {
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) s[k] += x[i + k];
    double t = 0;
    for (; i < n; i++) t += x[i];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + t;
}

static void red_task(void *ctx, size_t b, size_t e) {
    const red_params *r = ctx;
    if (r->contiguous) { /* each output reduces one run of the input */
        for (size_t o = b; o < e; o++) {
            double acc = sum_run(r->x + o * r->n_red_elems, r->n_red_elems);
            r->y[o] = (float)(r->op == R_MEAN ? (r->n_red_elems ? acc / (double)r->n_red_elems : NAN) : acc);
        }
        return;
    }
    for (size_t o = b; o < e; o++) {
        int64_t off = 0;
        size_t rest = o;
        for (int d = (int)r->n_kept - 1; d >= 0; d--) {
            off += (int64_t)(rest % (size_t)r->kept_dims[d]) * r->kept_stride[d];
            rest /= (size_t)r->kept_dims[d];
        }
        r->y[o] = (float)red_one(r, r->x + off);
    }
}

static void red_exec(const cpu_node *n, berth_plan *p) {
    red_params *r = n->params;
    r->x = cpu_ptr(p, n->in[0]);
    r->y = cpu_ptr(p, n->out[0]);
    size_t grain = r->n_red_elems >= 4096 ? 1 : 4096 / (r->n_red_elems ? r->n_red_elems : 1);
    cpu_pool_for(p->dev->pool, r->n_out, grain, red_task, r);
}

berth_status cpu_prep_reduce(cpu_prep *c) {
    int op = -1;
    for (size_t i = 0; i < sizeof red_names / sizeof red_names[0]; i++)
        if (!strcmp(c->node->op, red_names[i].name)) op = red_names[i].op;
    berth_status st;
    const cpu_opnd *x = cpu_in(c, 0);
    uint32_t axes[BERTH_MAX_RANK], reduced;
    int n_axes, keep;
    st = bk_param_axes(&c->bk, 0, axes, &n_axes, &reduced);
    if (!st) st = bk_opt_bool(&c->bk, "keepDimensions", 0, &keep);
    if (st) return st;
    red_params *r = cpu_params(c, sizeof *r);
    if (!r) return BERTH_ERR_NOMEM;
    r->op = op;
    int64_t stride = 1, strides[BERTH_MAX_RANK];
    for (int d = (int)x->rank - 1; d >= 0; d--) {
        strides[d] = stride;
        stride *= x->dims[d];
    }
    r->n_out = 1, r->n_red_elems = 1;
    for (uint32_t d = 0; d < x->rank; d++) {
        if (reduced & (1u << d)) {
            r->red_dims[r->n_red] = x->dims[d];
            r->red_stride[r->n_red++] = strides[d];
            r->n_red_elems *= (size_t)x->dims[d];
        } else {
            r->kept_dims[r->n_kept] = x->dims[d];
            r->kept_stride[r->n_kept++] = strides[d];
            r->n_out *= (size_t)x->dims[d];
        }
    }
    /* the reduced dims are the last ones (dims of 1 aside) */
    int trailing = 1, seen_reduced = 0;
    for (uint32_t d = 0; d < x->rank; d++) {
        if (x->dims[d] == 1) continue;
        if (reduced & (1u << d)) seen_reduced = 1;
        else if (seen_reduced) trailing = 0;
    }
    r->contiguous = trailing && (op == R_MEAN || op == R_SUM);
    c->cn->exec = red_exec;
    return BERTH_OK;
}

/* ---- softmax along one axis: [outer, extent, inner] ---- */

typedef struct soft_params {
    size_t outer, extent, inner;
    const float *x;
    float *y;
} soft_params;

static void soft_task(void *ctx, size_t b, size_t e) {
    const soft_params *s = ctx;
    if (s->inner == 1) { /* contiguous rows: the vectorized softmax */
        for (size_t t = b; t < e; t++) {
            float *y = s->y + t * s->extent;
            if (y != s->x + t * s->extent) memcpy(y, s->x + t * s->extent, sizeof(float) * s->extent);
            if (!cpu_vsoftmax(y, s->extent))
                for (size_t k = 0; k < s->extent; k++) y[k] = NAN; /* all -inf: e^(-inf - -inf) */
        }
        return;
    }
    for (size_t t = b; t < e; t++) {
        size_t o = t / s->inner, i = t % s->inner;
        const float *x = s->x + o * s->extent * s->inner + i;
        float *y = s->y + o * s->extent * s->inner + i;
        float mx = -INFINITY;
        for (size_t k = 0; k < s->extent; k++) mx = fmaxf(mx, x[k * s->inner]);
        double sum = 0;
        /* the column's exps a buffer at a time, for the vector exp of arm64 */
        float ex[256];
        for (size_t k0 = 0; k0 < s->extent; k0 += 256) {
            size_t m = s->extent - k0 < 256 ? s->extent - k0 : 256;
            for (size_t k = 0; k < m; k++) ex[k] = x[(k0 + k) * s->inner] - mx;
            cpu_vexp_full(ex, ex, m);
            for (size_t k = 0; k < m; k++) {
                y[(k0 + k) * s->inner] = ex[k];
                sum += ex[k];
            }
        }
        float inv = (float)(1.0 / sum);
        for (size_t k = 0; k < s->extent; k++) y[k * s->inner] *= inv;
    }
}

static void soft_exec(const cpu_node *n, berth_plan *p) {
    soft_params *s = n->params;
    s->x = cpu_ptr(p, n->in[0]);
    s->y = cpu_ptr(p, n->out[0]);
    size_t grain = s->extent >= 1024 ? 1 : 1024 / (s->extent ? s->extent : 1);
    cpu_pool_for(p->dev->pool, s->outer * s->inner, grain, soft_task, s);
}

berth_status cpu_prep_softmax(cpu_prep *c) {
    bk_axis_geom ag;
    berth_status st = bk_param_axis(&c->bk, (int64_t)cpu_in(c, 0)->rank - 1, &ag);
    if (st) return st;
    soft_params *s = cpu_params(c, sizeof *s);
    if (!s) return BERTH_ERR_NOMEM;
    s->outer = (size_t)ag.outer, s->inner = (size_t)ag.inner, s->extent = (size_t)ag.extent;
    c->cn->exec = soft_exec;
    return BERTH_OK;
}

/* ---- argMax / argMin and cumulativeSum along one axis: [outer, extent, inner] ---- */

typedef struct axis_params {
    size_t outer, extent, inner;
    int is_min, wide;      /* arg: smallest wins; int64 result */
    int exclusive, reversed; /* cumulativeSum */
} axis_params;

/* The first index of the extreme value wins, as WebNN asks. A NaN is the
 * extreme of both, so the first NaN wins (numpy's argmax and argmin). */
static void arg_exec(const cpu_node *n, berth_plan *p) {
    const axis_params *A = n->params;
    const float *x = cpu_ptr(p, n->in[0]);
    void *y = cpu_ptr(p, n->out[0]);
    for (size_t o = 0; o < A->outer; o++)
        for (size_t i = 0; i < A->inner; i++) {
            const float *xr = x + o * A->extent * A->inner + i;
            size_t best = 0;
            for (size_t k = 1; k < A->extent; k++) {
                float v = xr[k * A->inner], b = xr[best * A->inner];
                if (b != b) break;
                if (v != v || (A->is_min ? v < b : v > b)) best = k;
            }
            if (A->wide) ((int64_t *)y)[o * A->inner + i] = (int64_t)best;
            else ((int32_t *)y)[o * A->inner + i] = (int32_t)best;
        }
}

static berth_status axis_prep(cpu_prep *c, axis_params **out, uint32_t *axis) {
    bk_axis_geom ag;
    berth_status st = bk_param_axis(&c->bk, 0, &ag);
    if (st) return st;
    axis_params *A = cpu_params(c, sizeof *A);
    if (!A) return BERTH_ERR_NOMEM;
    *axis = ag.axis;
    A->outer = (size_t)ag.outer, A->inner = (size_t)ag.inner, A->extent = (size_t)ag.extent;
    *out = A;
    return BERTH_OK;
}

berth_status cpu_prep_arg(cpu_prep *c) {
    axis_params *A = NULL;
    uint32_t axis;
    berth_status st = axis_prep(c, &A, &axis);
    if (st) return st;
    const cpu_opnd *y = cpu_out(c, 0);
    if (A->extent == 0) return bk_fail(&c->bk, "axis %u is empty", axis);
    A->is_min = strcmp(c->node->op, "argMin") == 0;
    A->wide = y->dtype == BERTH_DTYPE_I64;
    c->cn->exec = arg_exec;
    return BERTH_OK;
}

static void cumsum_exec(const cpu_node *n, berth_plan *p) {
    const axis_params *A = n->params;
    const float *x = cpu_ptr(p, n->in[0]);
    float *y = cpu_ptr(p, n->out[0]);
    for (size_t o = 0; o < A->outer; o++)
        for (size_t i = 0; i < A->inner; i++) {
            double acc = 0;
            for (size_t s = 0; s < A->extent; s++) {
                size_t k = A->reversed ? A->extent - 1 - s : s;
                size_t at = (o * A->extent + k) * A->inner + i;
                double v = x[at];
                if (!A->exclusive) acc += v;
                y[at] = (float)acc;
                if (A->exclusive) acc += v;
            }
        }
}

berth_status cpu_prep_cumsum(cpu_prep *c) {
    axis_params *A = NULL;
    uint32_t axis;
    berth_status st = axis_prep(c, &A, &axis);
    if (!st) st = bk_opt_bool(&c->bk, "exclusive", 0, &A->exclusive);
    if (!st) st = bk_opt_bool(&c->bk, "reversed", 0, &A->reversed);
    if (st) return st;
    c->cn->exec = cumsum_exec;
    return BERTH_OK;
}
