/* layerNormalization and batchNormalization. Layer normalization takes
 * any set of axes (WebNN default: [1, ..., rank-1]); its scale and bias
 * are laid out in the order the axes are listed, so each normalized dim
 * carries its own stride into them. Statistics accumulate in double. */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

typedef struct ln_params {
    uint32_t n_kept, n_red;
    int64_t kept_dims[BERTH_MAX_RANK], kept_stride[BERTH_MAX_RANK];
    int64_t red_dims[BERTH_MAX_RANK], red_stride[BERTH_MAX_RANK], sb_stride[BERTH_MAX_RANK];
    size_t groups, count;
    int rows; /* every group is a contiguous row (see ln_row) */
    float eps;
    uint32_t scale, bias;
    const float *x, *s, *b;
    float *y;
} ln_params;

/* The common case: the normalized axes are the trailing dims in order, so
 * each group is one contiguous row and scale and bias are plain vectors.
 * Sums run in sixteen float lanes (vectorizable), finished in double. */
static void ln_row(const ln_params *L, const float *restrict x, float *restrict y) {
    size_t n = L->count, j;
    float acc[16] = {0};
    for (j = 0; j + 16 <= n; j += 16)
        for (int l = 0; l < 16; l++) acc[l] += x[j + (size_t)l];
    double sum = 0;
    for (int l = 0; l < 16; l++) sum += acc[l];
    for (; j < n; j++) sum += x[j];
    float mean = (float)(sum / (double)n);
    float sq[16] = {0};
    for (j = 0; j + 16 <= n; j += 16)
        for (int l = 0; l < 16; l++) {
            float d = x[j + (size_t)l] - mean;
            sq[l] += d * d;
        }
    double var = 0;
    for (int l = 0; l < 16; l++) var += sq[l];
    for (; j < n; j++) var += (double)(x[j] - mean) * (x[j] - mean);
    float inv = (float)(1.0 / sqrt(var / (double)n + L->eps));
    const float *restrict s = L->s, *restrict b = L->b;
    if (s && b)
        for (j = 0; j < n; j++) y[j] = (x[j] - mean) * inv * s[j] + b[j];
    else
        for (j = 0; j < n; j++) y[j] = ((x[j] - mean) * inv) * (s ? s[j] : 1.0f) + (b ? b[j] : 0.0f);
}

static void ln_task(void *ctx, size_t g0, size_t g1) {
    const ln_params *L = ctx;
    if (L->rows && L->count) {
        for (size_t g = g0; g < g1; g++) ln_row(L, L->x + g * L->count, L->y + g * L->count);
        return;
    }
    for (size_t g = g0; g < g1; g++) {
        int64_t base = 0;
        size_t rest = g;
        for (int d = (int)L->n_kept - 1; d >= 0; d--) {
            base += (int64_t)(rest % (size_t)L->kept_dims[d]) * L->kept_stride[d];
            rest /= (size_t)L->kept_dims[d];
        }
        double sum = 0, sq = 0;
        int64_t idx[BERTH_MAX_RANK] = {0};
        for (int pass = 0; pass < 3; pass++) {
            double mean = sum / (double)(L->count ? L->count : 1);
            double inv = 1.0 / sqrt(sq / (double)(L->count ? L->count : 1) + L->eps);
            memset(idx, 0, sizeof idx);
            for (size_t e = 0; e < L->count; e++) {
                int64_t off = base, so = 0;
                for (uint32_t d = 0; d < L->n_red; d++) off += idx[d] * L->red_stride[d], so += idx[d] * L->sb_stride[d];
                double v = L->x[off];
                if (pass == 0) sum += v;
                else if (pass == 1) sq += (v - mean) * (v - mean);
                else {
                    double t = (v - mean) * inv;
                    if (L->s) t *= L->s[so];
                    if (L->b) t += L->b[so];
                    L->y[off] = (float)t;
                }
                for (int d = (int)L->n_red - 1; d >= 0; d--) {
                    if (++idx[d] < L->red_dims[d]) break;
                    idx[d] = 0;
                }
            }
        }
    }
}

static void ln_exec(const cpu_node *n, berth_plan *p) {
    ln_params *L = n->params;
    L->x = cpu_ptr(p, n->in[0]);
    L->y = cpu_ptr(p, n->out[0]);
    L->s = L->scale != CPU_NONE ? cpu_ptr(p, L->scale) : NULL;
    L->b = L->bias != CPU_NONE ? cpu_ptr(p, L->bias) : NULL;
    cpu_pool_for(p->dev->pool, L->groups, L->count >= 1024 ? 1 : 1024 / (L->count ? L->count : 1), ln_task, L);
}

berth_status cpu_prep_layer_norm(cpu_prep *c) {
    berth_status st;
    const cpu_opnd *x = cpu_in(c, 0);
    ln_params *L = cpu_params(c, sizeof *L);
    if (!L) return BERTH_ERR_NOMEM;
    uint32_t ax[BERTH_MAX_RANK], mask;
    int n_axes;
    double eps;
    st = bk_param_axes(&c->bk, 1, ax, &n_axes, &mask);
    if (!st) st = bk_opt_float(&c->bk, "epsilon", 1e-5, &eps);
    if (!st) st = bk_opt_operand(&c->bk, "scale", &L->scale);
    if (!st) st = bk_opt_operand(&c->bk, "bias", &L->bias);
    if (st) return st;
    int64_t pdims[BERTH_MAX_RANK], pstride[BERTH_MAX_RANK];
    for (int i = 0; i < n_axes; i++) pdims[i] = x->dims[ax[i]];
    int64_t s = 1;
    for (int i = n_axes - 1; i >= 0; i--) pstride[i] = s, s *= pdims[i];
    int64_t xs[BERTH_MAX_RANK];
    s = 1;
    for (int d = (int)x->rank - 1; d >= 0; d--) xs[d] = s, s *= x->dims[d];
    L->groups = 1, L->count = 1;
    for (uint32_t d = 0; d < x->rank; d++) {
        if (mask & (1u << d)) {
            int pos = 0;
            while (ax[pos] != d) pos++;
            L->red_dims[L->n_red] = x->dims[d];
            L->red_stride[L->n_red] = xs[d];
            L->sb_stride[L->n_red++] = pstride[pos];
            L->count *= (size_t)x->dims[d];
        } else {
            L->kept_dims[L->n_kept] = x->dims[d];
            L->kept_stride[L->n_kept++] = xs[d];
            L->groups *= (size_t)x->dims[d];
        }
    }
    L->eps = (float)eps;
    L->rows = 1;
    for (int i = 0; i < n_axes; i++) L->rows &= ax[i] == x->rank - (uint32_t)n_axes + (uint32_t)i;
    c->cn->exec = ln_exec;
    return BERTH_OK;
}

/* ---- batchNormalization(input, mean, variance) ---- */

typedef struct bn_params {
    size_t outer, channels, inner;
    float eps;
    uint32_t scale, bias;
} bn_params;

static void bn_exec(const cpu_node *n, berth_plan *p) {
    const bn_params *B = n->params;
    const float *x = cpu_ptr(p, n->in[0]), *mean = cpu_ptr(p, n->in[1]), *var = cpu_ptr(p, n->in[2]);
    const float *sc = B->scale != CPU_NONE ? cpu_ptr(p, B->scale) : NULL;
    const float *bi = B->bias != CPU_NONE ? cpu_ptr(p, B->bias) : NULL;
    float *y = cpu_ptr(p, n->out[0]);
    for (size_t o = 0; o < B->outer; o++)
        for (size_t ch = 0; ch < B->channels; ch++) {
            float mul = 1.0f / sqrtf(var[ch] + B->eps), add;
            if (sc) mul *= sc[ch];
            add = (bi ? bi[ch] : 0.0f) - mean[ch] * mul;
            const float *restrict xr = x + (o * B->channels + ch) * B->inner;
            float *restrict yr = y + (o * B->channels + ch) * B->inner;
            for (size_t i = 0; i < B->inner; i++) yr[i] = xr[i] * mul + add;
        }
}

berth_status cpu_prep_batch_norm(cpu_prep *c) {
    berth_status st;
    const cpu_opnd *x = cpu_in(c, 0);
    bn_params *B = cpu_params(c, sizeof *B);
    if (!B) return BERTH_ERR_NOMEM;
    int64_t a;
    uint32_t axis;
    double eps;
    st = bk_opt_int(&c->bk, "axis", 1, &a);
    if (!st) st = bk_axis(&c->bk, a, x->rank, "axis", &axis);
    if (!st) st = bk_opt_float(&c->bk, "epsilon", 1e-5, &eps);
    if (!st) st = bk_opt_operand(&c->bk, "scale", &B->scale);
    if (!st) st = bk_opt_operand(&c->bk, "bias", &B->bias);
    if (st) return st;
    int64_t cdim[1] = {x->dims[axis]};
    B->outer = 1, B->inner = 1;
    for (uint32_t d = 0; d < axis; d++) B->outer *= (size_t)x->dims[d];
    for (uint32_t d = axis + 1; d < x->rank; d++) B->inner *= (size_t)x->dims[d];
    B->channels = (size_t)cdim[0];
    B->eps = (float)eps;
    c->cn->exec = bn_exec;
    return BERTH_OK;
}

/* ---- instanceNormalization: per (batch, channel) over the spatial dims ---- */

typedef struct in_params {
    int64_t n, c, plane;
    int64_t cstride, estride; /* element strides of a channel and of a spatial step */
    float eps;
    uint32_t scale, bias;
} in_params;

static void in_exec(const cpu_node *nd, berth_plan *p) {
    const in_params *I = nd->params;
    const float *x = cpu_ptr(p, nd->in[0]);
    const float *sc = I->scale != CPU_NONE ? cpu_ptr(p, I->scale) : NULL;
    const float *bi = I->bias != CPU_NONE ? cpu_ptr(p, I->bias) : NULL;
    float *y = cpu_ptr(p, nd->out[0]);
    for (int64_t n = 0; n < I->n; n++)
        for (int64_t ch = 0; ch < I->c; ch++) {
            int64_t base = n * I->c * I->plane + ch * I->cstride;
            double sum = 0, sq = 0;
            for (int64_t i = 0; i < I->plane; i++) sum += x[base + i * I->estride];
            double mean = I->plane ? sum / (double)I->plane : 0;
            for (int64_t i = 0; i < I->plane; i++) {
                double d = x[base + i * I->estride] - mean;
                sq += d * d;
            }
            double inv = 1.0 / sqrt((I->plane ? sq / (double)I->plane : 0) + I->eps);
            double mul = inv * (sc ? sc[ch] : 1.0), add = bi ? bi[ch] : 0.0;
            for (int64_t i = 0; i < I->plane; i++)
                y[base + i * I->estride] = (float)((x[base + i * I->estride] - mean) * mul + add);
        }
}

berth_status cpu_prep_instance_norm(cpu_prep *c) {
    berth_status st;
    const cpu_opnd *x = cpu_in(c, 0);
    in_params *I = cpu_params(c, sizeof *I);
    if (!I) return BERTH_ERR_NOMEM;
    const char *layout;
    double eps;
    if ((st = bk_opt_string(&c->bk, "layout", "nchw", &layout)) || (st = bk_opt_float(&c->bk, "epsilon", 1e-5, &eps)) ||
        (st = bk_opt_operand(&c->bk, "scale", &I->scale)) || (st = bk_opt_operand(&c->bk, "bias", &I->bias)))
        return st;
    int nhwc = strcmp(layout, "nhwc") == 0;
    if (!nhwc && strcmp(layout, "nchw") != 0) return bk_fail(&c->bk, "layout: expected nchw or nhwc, found '%s'", layout);
    I->n = x->dims[0];
    I->c = nhwc ? x->dims[3] : x->dims[1];
    I->plane = nhwc ? x->dims[1] * x->dims[2] : x->dims[2] * x->dims[3];
    I->cstride = nhwc ? 1 : I->plane;
    I->estride = nhwc ? I->c : 1;
    I->eps = (float)eps;
    c->cn->exec = in_exec;
    return BERTH_OK;
}
