/* averagePool2d, maxPool2d, l2Pool2d (NCHW, or NHWC permuted through
 * scratch) and resample2d. Average pooling
 * divides by the number of window cells inside the input, never
 * counting padding, as WebNN specifies. resample2d maps output to input
 * coordinates with half-pixel centres for linear (src = (dst + 0.5) /
 * scale - 0.5, clamped to the edge) and ONNX's asymmetric mapping with
 * floor for nearest-neighbor (src = floor(dst / scale)). */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

typedef struct pool_params {
    int is_max, is_l2, nhwc;
    int64_t n, c, planes, h, w, oh, ow, kh, kw;
    size_t off_y; /* scratch offset of the NCHW output when nhwc */
    int64_t pad[4], stride[2], dil[2];
    const float *x;
    float *y;
} pool_params;

static inline float max_nan(float v, float m) { return ((v > m) | (v != v)) ? v : m; } /* a NaN in the window is the max */

static void pool_task(void *ctx, size_t t0, size_t t1) {
    const pool_params *P = ctx;
    for (size_t t = t0; t < t1; t++) {
        const float *xp = P->x + t * (size_t)(P->h * P->w);
        float *yp = P->y + t * (size_t)(P->oh * P->ow);
        for (int64_t oy = 0; oy < P->oh; oy++)
            for (int64_t ox = 0; ox < P->ow; ox++) {
                float mx = -INFINITY;
                double sum = 0;
                int64_t cnt = 0;
                for (int64_t ki = 0; ki < P->kh; ki++) {
                    int64_t iy = oy * P->stride[0] - P->pad[0] + ki * P->dil[0];
                    if (iy < 0 || iy >= P->h) continue;
                    for (int64_t kj = 0; kj < P->kw; kj++) {
                        int64_t ix = ox * P->stride[1] - P->pad[2] + kj * P->dil[1];
                        if (ix < 0 || ix >= P->w) continue;
                        float v = xp[iy * P->w + ix];
                        mx = max_nan(v, mx);
                        sum += P->is_l2 ? (double)v * v : v;
                        cnt++;
                    }
                }
                yp[oy * P->ow + ox] = P->is_max ? mx : P->is_l2 ? (float)sqrt(sum) : (cnt ? (float)(sum / (double)cnt) : 0.0f);
            }
    }
}

/* Windows two wide at stride 2 (the common pools) over n outputs whose
 * one or two input rows (w apart) lie inside the input: the taps in
 * pool_task's order, all n in one pass that the compiler vectorizes.
 * max_nan(v, -inf) is v, so the first tap needs no comparison. */
CPU_CLONES __attribute__((noinline)) static void pairs1(const float *restrict x, float *restrict y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = max_nan(x[2 * i + 1], x[2 * i]);
}
CPU_CLONES __attribute__((noinline)) static void pairs2(const float *restrict x, size_t w, float *restrict y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const float *r = x + 2 * i;
        y[i] = max_nan(r[w + 1], max_nan(r[w], max_nan(r[1], r[0])));
    }
}

/* The columns outside [ox0, ox1) of an output row, checked one by one. */
static void max_edges(const pool_params *P, const float *xp, int64_t oy, float *yr, int64_t ox0, int64_t ox1) {
    for (int64_t ox = 0; ox < P->ow; ox++) {
        if (ox == ox0) ox = ox1;
        if (ox >= P->ow) break;
        float m = -INFINITY;
        for (int64_t ki = 0; ki < P->kh; ki++) {
            int64_t iy = oy * P->stride[0] - P->pad[0] + ki;
            if (iy < 0 || iy >= P->h) continue;
            for (int64_t kj = 0; kj < P->kw; kj++) {
                int64_t ix = ox * P->stride[1] - P->pad[2] + kj;
                if (ix >= 0 && ix < P->w) m = max_nan(xp[iy * P->w + ix], m);
            }
        }
        yr[ox] = m;
    }
}

/* maxPool2d without dilation, by rows: each output row is the running
 * max of its window's input rows, each tap a strided pass over the row
 * that vectorizes; only the columns whose window crosses the padding go
 * through the checked loop. Same answers as pool_task, NaN included. */
CPU_CLONES static void max_task(void *ctx, size_t t0, size_t t1) {
    const pool_params *P = ctx;
    int64_t sw = P->stride[1], pl = P->pad[2];
    /* output columns [ox0, ox1) read only columns inside the input */
    int64_t ox0 = (pl + sw - 1) / sw, ox1 = P->w - P->kw + pl < 0 ? 0 : (P->w - P->kw + pl) / sw + 1;
    if (ox1 > P->ow) ox1 = P->ow;
    if (ox0 > ox1) ox0 = ox1;
    int pairs = P->kw == 2 && sw == 2 && (P->kh == 1 || P->kh == 2);
    if (pairs && P->kh == 1 && P->stride[0] == 1 && P->w == 2 * P->ow && P->h == P->oh && !P->pad[0] && !P->pad[1] &&
        !pl && !P->pad[3]) { /* the planes' rows back to back are one row of pairs */
        pairs1(P->x + t0 * (size_t)(P->h * P->w), P->y + t0 * (size_t)(P->oh * P->ow), (t1 - t0) * (size_t)(P->oh * P->ow));
        return;
    }
    for (size_t t = t0; t < t1; t++) {
        const float *xp = P->x + t * (size_t)(P->h * P->w);
        float *yp = P->y + t * (size_t)(P->oh * P->ow);
        for (int64_t oy = 0; oy < P->oh; oy++) {
            float *restrict yr = yp + oy * P->ow;
            int64_t iy0 = oy * P->stride[0] - P->pad[0];
            if (pairs && ox1 - ox0 >= 16 && iy0 >= 0 && iy0 + P->kh <= P->h) {
                const float *x0 = xp + iy0 * P->w - pl + 2 * ox0;
                if (P->kh == 1) pairs1(x0, yr + ox0, (size_t)(ox1 - ox0));
                else pairs2(x0, (size_t)P->w, yr + ox0, (size_t)(ox1 - ox0));
            } else {
                for (int64_t ox = ox0; ox < ox1; ox++) yr[ox] = -INFINITY;
                for (int64_t ki = 0; ki < P->kh; ki++) {
                    int64_t iy = iy0 + ki;
                    if (iy < 0 || iy >= P->h) continue;
                    const float *restrict xs = xp + iy * P->w - pl;
                    for (int64_t kj = 0; kj < P->kw; kj++)
                        for (int64_t ox = ox0; ox < ox1; ox++) yr[ox] = max_nan(xs[ox * sw + kj], yr[ox]);
                }
            }
            max_edges(P, xp, oy, yr, ox0, ox1);
        }
    }
}

static void pool_exec(const cpu_node *n, berth_plan *p) {
    pool_params *P = n->params;
    P->x = cpu_ptr(p, n->in[0]);
    P->y = cpu_ptr(p, n->out[0]);
    if (P->nhwc) {
        static const int to_nchw[4] = {0, 3, 1, 2};
        int64_t d[4] = {P->n, P->h, P->w, P->c};
        float *xs = (float *)cpu_scratch(p, n);
        cpu_permute4(P->x, d, to_nchw, xs);
        P->x = xs;
        P->y = (float *)(cpu_scratch(p, n) + P->off_y);
    }
    cpu_pool_for(p->dev->pool, (size_t)P->planes, 1,
                 P->is_max && P->dil[0] == 1 && P->dil[1] == 1 ? max_task : pool_task, P);
    if (P->nhwc) {
        static const int to_nhwc[4] = {0, 2, 3, 1};
        int64_t d[4] = {P->n, P->c, P->oh, P->ow};
        cpu_permute4(P->y, d, to_nhwc, cpu_ptr(p, n->out[0]));
    }
}

berth_status cpu_prep_pool2d(cpu_prep *c) {
    berth_status st;
    const cpu_opnd *x = cpu_in(c, 0);
    pool_params *P = cpu_params(c, sizeof *P);
    if (!P) return BERTH_ERR_NOMEM;
    P->is_max = strcmp(c->node->op, "maxPool2d") == 0;
    P->is_l2 = strcmp(c->node->op, "l2Pool2d") == 0;
    int64_t win[2];
    const char *layout, *rounding;
    if ((st = bk_param_ints_n(&c->bk, "windowDimensions", 2, -1, win)) || (st = bk_param_ints_n(&c->bk, "padding", 4, 0, P->pad)) ||
        (st = bk_param_ints_n(&c->bk, "strides", 2, 1, P->stride)) || (st = bk_param_ints_n(&c->bk, "dilations", 2, 1, P->dil)) ||
        (st = bk_opt_string(&c->bk, "layout", "nchw", &layout)) || (st = bk_opt_string(&c->bk, "roundingType", "floor", &rounding)))
        return st;
    P->nhwc = strcmp(layout, "nhwc") == 0;
    if (!P->nhwc && strcmp(layout, "nchw") != 0) return bk_fail(&c->bk, "layout: expected nchw or nhwc, found '%s'", layout);
    if (P->nhwc)
        P->n = x->dims[0], P->h = x->dims[1], P->w = x->dims[2], P->c = x->dims[3];
    else
        P->n = x->dims[0], P->c = x->dims[1], P->h = x->dims[2], P->w = x->dims[3];
    P->planes = P->n * P->c;
    int ceil_mode = strcmp(rounding, "ceil") == 0;
    if (!ceil_mode && strcmp(rounding, "floor") != 0)
        return bk_fail(&c->bk, "roundingType: expected floor or ceil, found '%s'", rounding);
    P->kh = win[0] < 0 ? P->h : win[0];
    P->kw = win[1] < 0 ? P->w : win[1];
    for (int i = 0; i < 4; i++)
        if (P->pad[i] < 0) return bk_fail(&c->bk, "padding[%d] is negative", i);
    if (P->kh < 1 || P->kw < 1 || P->stride[0] < 1 || P->stride[1] < 1 || P->dil[0] < 1 || P->dil[1] < 1)
        return bk_fail(&c->bk, "windowDimensions, strides and dilations must be >= 1");
    int64_t eh = P->dil[0] * (P->kh - 1) + 1, ew = P->dil[1] * (P->kw - 1) + 1;
    int64_t sh = P->h + P->pad[0] + P->pad[1] - eh, sw = P->w + P->pad[2] + P->pad[3] - ew;
    if (sh < 0 || sw < 0) return bk_fail(&c->bk, "the window is larger than the padded input");
    P->oh = (ceil_mode ? (sh + P->stride[0] - 1) / P->stride[0] : sh / P->stride[0]) + 1;
    P->ow = (ceil_mode ? (sw + P->stride[1] - 1) / P->stride[1] : sw / P->stride[1]) + 1;
    int64_t sizes[2];
    int n_sz;
    if ((st = bk_opt_ints(&c->bk, "outputSizes", sizes, 2, &n_sz))) return st;
    if (n_sz == 2) P->oh = sizes[0], P->ow = sizes[1];
    if (P->nhwc) {
        P->off_y = (x->bytes + CPU_ALIGN - 1) & ~(size_t)(CPU_ALIGN - 1);
        c->cn->scratch_bytes = P->off_y + cpu_out(c, 0)->bytes;
    }
    c->cn->exec = pool_exec;
    return BERTH_OK;
}

/* ---- resample2d ---- */

typedef struct rs_params {
    int linear;
    int64_t outer, h, w, oh, ow; /* the two resampled axes, made innermost by an outer/mid split */
    int64_t mid;                 /* elements between the two axes (1 for adjacent axes) */
    int64_t inner;
    /* per output row and column, made at plan time: the source rows
     * (columns) and the weight of the second (0 for nearest-neighbor);
     * they follow the struct in the node's params */
    int64_t *y0, *y1, *x0, *x1;
    double *dy, *dx;
    const float *x;
    float *y;
} rs_params;

static double src_coord(int linear, int64_t dst, double scale, int64_t extent) {
    double s = linear ? ((double)dst + 0.5) / scale - 0.5 : floor((double)dst / scale);
    if (s < 0) s = 0;
    if (s > (double)(extent - 1)) s = (double)(extent - 1);
    return s;
}

static void coords(int linear, int64_t n, double scale, int64_t extent, int64_t *i0, int64_t *i1, double *d) {
    for (int64_t k = 0; k < n; k++) {
        double f = src_coord(linear, k, scale, extent);
        i0[k] = (int64_t)f;
        i1[k] = i0[k] + 1 < extent ? i0[k] + 1 : i0[k];
        d[k] = f - (double)i0[k];
    }
}

/* Output rows [r0, r1) of [outer, oh]; layout [outer, h, mid, w, inner]. */
static void rs_task(void *ctx, size_t r0, size_t r1) {
    const rs_params *R = ctx;
    const float *x = R->x;
    for (size_t r = r0; r < r1; r++) {
        int64_t o = (int64_t)r / R->oh, oy = (int64_t)r % R->oh;
        int64_t y0 = R->y0[oy], y1 = R->y1[oy];
        double dy = R->dy[oy];
        for (int64_t m = 0; m < R->mid; m++) {
            const float *r0p = x + ((o * R->h + y0) * R->mid + m) * R->w * R->inner;
            const float *r1p = x + ((o * R->h + y1) * R->mid + m) * R->w * R->inner;
            float *yo = R->y + ((o * R->oh + oy) * R->mid + m) * R->ow * R->inner;
            if (!R->linear && R->inner == 1) {
                for (int64_t ox = 0; ox < R->ow; ox++) yo[ox] = r0p[R->x0[ox]];
                continue;
            }
            for (int64_t ox = 0; ox < R->ow; ox++) {
                const float *a0 = r0p + R->x0[ox] * R->inner, *a1 = r0p + R->x1[ox] * R->inner;
                const float *b0 = r1p + R->x0[ox] * R->inner, *b1 = r1p + R->x1[ox] * R->inner;
                double dx = R->dx[ox];
                float *yi = yo + ox * R->inner;
                for (int64_t i = 0; i < R->inner; i++)
                    yi[i] = !R->linear ? a0[i]
                                       : (float)((1 - dy) * ((1 - dx) * a0[i] + dx * a1[i]) +
                                                 dy * ((1 - dx) * b0[i] + dx * b1[i]));
            }
        }
    }
}

static void rs_exec(const cpu_node *n, berth_plan *p) {
    rs_params *R = n->params;
    R->x = cpu_ptr(p, n->in[0]);
    R->y = cpu_ptr(p, n->out[0]);
    cpu_pool_for(p->dev->pool, (size_t)(R->outer * R->oh), 4, rs_task, R);
}

berth_status cpu_prep_resample2d(cpu_prep *c) {
    const cpu_opnd *x = cpu_in(c, 0), *y = cpu_out(c, 0);
    bk_resample r;
    berth_status st = bk_param_resample(&c->bk, &r);
    if (st) return st;
    int64_t oh = y->dims[r.a0], ow = y->dims[r.a1];
    size_t tables = (size_t)(oh + ow) * (2 * sizeof(int64_t) + sizeof(double));
    rs_params *R = cpu_params(c, sizeof *R + tables);
    if (!R) return BERTH_ERR_NOMEM;
    R->linear = r.linear;
    R->outer = (int64_t)r.outer, R->mid = (int64_t)r.mid, R->inner = (int64_t)r.inner;
    R->h = x->dims[r.a0], R->w = x->dims[r.a1], R->oh = oh, R->ow = ow;
    int64_t *t = (int64_t *)(R + 1);
    R->y0 = t, R->y1 = t + oh, R->x0 = t + 2 * oh, R->x1 = t + 2 * oh + ow;
    R->dy = (double *)(t + 2 * (oh + ow)), R->dx = R->dy + oh;
    coords(R->linear, oh, r.sh, R->h, R->y0, R->y1, R->dy);
    coords(R->linear, ow, r.sw, R->w, R->x0, R->x1, R->dx);
    c->cn->exec = rs_exec;
    return BERTH_OK;
}
