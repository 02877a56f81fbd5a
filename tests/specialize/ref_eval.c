#include "ref_eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ten {
    uint32_t rank;
    const int64_t *dims;
    float *data;
} ten;

static size_t numel(uint32_t rank, const int64_t *dims) {
    size_t n = 1;
    for (uint32_t i = 0; i < rank; i++) n *= (size_t)dims[i];
    return n;
}

/* Flat index of output element o in an input broadcast numpy-style. */
static size_t bidx(uint32_t rout, const int64_t *dout, uint32_t rin, const int64_t *din, size_t o) {
    size_t idx = 0, stride = 1;
    for (uint32_t k = rout; k-- > 0;) {
        size_t c = o % (size_t)dout[k];
        o /= (size_t)dout[k];
        if (k + rin >= rout) {
            uint32_t ki = k + rin - rout;
            if (din[ki] != 1) idx += c * stride;
            stride *= (size_t)din[ki];
        }
    }
    return idx;
}

static const berth_attr *attr(const berth_node *n, const char *key) {
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].key, key)) return &n->attrs[i];
    return NULL;
}

static double gelu(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }

static double act(const char *name, double x) {
    if (!name) return x;
    if (!strcmp(name, "relu")) return x > 0 ? x : 0;
    if (!strcmp(name, "gelu")) return gelu(x);
    if (!strcmp(name, "sigmoid")) return 1.0 / (1.0 + exp(-x));
    if (!strcmp(name, "tanh")) return tanh(x);
    if (!strcmp(name, "sqrt")) return sqrt(x);
    if (!strcmp(name, "abs")) return fabs(x);
    if (!strcmp(name, "neg")) return -x;
    if (!strcmp(name, "exp")) return exp(x);
    if (!strcmp(name, "log")) return log(x);
    if (!strcmp(name, "erf")) return erf(x);
    return NAN;
}

static double num_attr(const berth_node *n, const char *key, double def) {
    const berth_attr *a = attr(n, key);
    return !a ? def : a->type == BERTH_ATTR_FLOAT ? a->f : (double)a->i;
}

/* Unary ops with options, at WebNN's defaults when an option is absent. */
static double unary_opts(const berth_node *n, double x) {
    if (!strcmp(n->op, "clamp")) {
        double lo = num_attr(n, "minValue", -INFINITY), hi = num_attr(n, "maxValue", INFINITY);
        return x < lo ? lo : x > hi ? hi : x;
    }
    if (!strcmp(n->op, "leakyRelu")) return x >= 0 ? x : num_attr(n, "alpha", 0.01) * x;
    if (!strcmp(n->op, "elu")) return x >= 0 ? x : num_attr(n, "alpha", 1.0) * (exp(x) - 1);
    return NAN;
}

/* One step of berth.elementwise, in double, by its op's WebNN meaning;
 * opt: the step's options (clamp minValue and maxValue, ...). */
static double ew_step(const char *op, double x, double z, const double *opt) {
    if (!strcmp(op, "add")) return x + z;
    if (!strcmp(op, "sub")) return x - z;
    if (!strcmp(op, "mul")) return x * z;
    if (!strcmp(op, "div")) return x / z;
    if (!strcmp(op, "max")) return x != x || z != z ? NAN : x > z ? x : z;
    if (!strcmp(op, "min")) return x != x || z != z ? NAN : x < z ? x : z;
    if (!strcmp(op, "pow")) return pow(x, z);
    if (!strcmp(op, "clamp")) return x < opt[0] ? opt[0] : x > opt[1] ? opt[1] : x;
    if (!strcmp(op, "leakyRelu")) return x >= 0 ? x : opt[0] * x;
    if (!strcmp(op, "elu")) return x >= 0 ? x : opt[0] * (exp(x) - 1);
    if (!strcmp(op, "hardSigmoid")) return fmax(0, fmin(1, opt[0] * x + opt[1]));
    if (!strcmp(op, "hardSwish")) return x * fmax(0, fmin(6, x + 3)) / 6;
    if (!strcmp(op, "softplus")) return log1p(exp(x));
    if (!strcmp(op, "softsign")) return x / (1 + fabs(x));
    if (!strcmp(op, "reciprocal")) return 1 / x;
    if (!strcmp(op, "floor")) return floor(x);
    if (!strcmp(op, "ceil")) return ceil(x);
    if (!strcmp(op, "sin")) return sin(x);
    if (!strcmp(op, "cos")) return cos(x);
    if (!strcmp(op, "sign")) return x > 0 ? 1 : x < 0 ? -1 : x;
    if (!strcmp(op, "identity")) return x;
    return act(op, x);
}

/* conv2d, nchw input, oihw filter: padding, strides, dilations, groups,
 * bias, straight from WebNN's definition. */
static void conv2d(const berth_node *n, ten x, ten w, const float *bias, ten y) {
    int64_t pad[4] = {0, 0, 0, 0}, st[2] = {1, 1}, dil[2] = {1, 1}, groups = 1;
    const berth_attr *a;
    if ((a = attr(n, "padding"))) for (int i = 0; i < 4; i++) pad[i] = a->ints[i];
    if ((a = attr(n, "strides"))) for (int i = 0; i < 2; i++) st[i] = a->ints[i];
    if ((a = attr(n, "dilations"))) for (int i = 0; i < 2; i++) dil[i] = a->ints[i];
    if ((a = attr(n, "groups"))) groups = a->i;
    int64_t cg = w.dims[1], og = y.dims[1] / groups;
    for (int64_t b = 0; b < y.dims[0]; b++)
        for (int64_t o = 0; o < y.dims[1]; o++)
            for (int64_t i = 0; i < y.dims[2]; i++)
                for (int64_t j = 0; j < y.dims[3]; j++) {
                    double s = bias ? bias[o] : 0;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t p = 0; p < w.dims[2]; p++)
                            for (int64_t q = 0; q < w.dims[3]; q++) {
                                int64_t h = i * st[0] - pad[0] + p * dil[0], v = j * st[1] - pad[2] + q * dil[1];
                                if (h < 0 || h >= x.dims[2] || v < 0 || v >= x.dims[3]) continue;
                                s += (double)x.data[((b * x.dims[1] + (o / og) * cg + c) * x.dims[2] + h) * x.dims[3] + v] *
                                     w.data[((o * cg + c) * w.dims[2] + p) * w.dims[3] + q];
                            }
                    y.data[((b * y.dims[1] + o) * y.dims[2] + i) * y.dims[3] + j] = (float)s;
                }
}

/* berth.elementwise as its notes in docs/backend-ops.md define it,
 * element by element, every input broadcast numpy-style; with `first`
 * (berth.conv2dEpilogue), program input 0 is that tensor and the node's
 * epilogueInputs the rest. */
static void elementwise(const berth_graph_desc *d, const berth_node *n, float **buf, ten y, const float *first) {
    const berth_attr *ops = attr(n, "ops"), *steps = attr(n, "steps"), *cs = attr(n, "constants");
    char words[64][32];
    uint32_t ns = 0;
    for (const char *at = ops->s; *at && ns < 64;) {
        while (*at == ' ') at++;
        size_t len = strcspn(at, " ");
        if (!len) break;
        snprintf(words[ns++], sizeof words[0], "%.*s", (int)len, at);
        at += len;
    }
    double val[64];
    size_t ny = numel(y.rank, y.dims);
    const berth_attr *extra = attr(n, "epilogueInputs");
    int64_t n_in = first ? 1 + (extra ? (int64_t)extra->count : 0) : (int64_t)n->n_inputs;
    for (size_t i = 0; i < ny; i++) {
        for (uint32_t k = 0; k < ns; k++) {
            double v[2];
            for (int r = 0; r < 2; r++) {
                int64_t ref = steps->ints[2 * k + r];
                if (ref < 0) {
                    v[r] = cs->floats[-ref - 1];
                } else if (ref < n_in && first && ref == 0) {
                    v[r] = first[i];
                } else if (ref < n_in) {
                    uint32_t opi = first ? (uint32_t)extra->ints[ref - 1] : n->inputs[ref];
                    const berth_operand *o = &d->operands[opi];
                    v[r] = buf[opi][bidx(y.rank, y.dims, o->rank, o->dims, i)];
                } else {
                    v[r] = val[ref - n_in];
                }
            }
            int64_t b = steps->ints[2 * k + 1];
            const double *opt = b < 0 && cs ? &cs->floats[-b - 1] : NULL;
            /* each step rounds to f32, as the unfused nodes would */
            val[k] = (float)ew_step(words[k], v[0], v[1], opt);
        }
        y.data[i] = (float)val[ns - 1];
    }
}

static void binary(const char *op, ten a, ten b, ten y) {
    size_t n = numel(y.rank, y.dims);
    for (size_t i = 0; i < n; i++) {
        double x = a.data[bidx(y.rank, y.dims, a.rank, a.dims, i)];
        double z = b.data[bidx(y.rank, y.dims, b.rank, b.dims, i)];
        double r = !strcmp(op, "add") ? x + z : !strcmp(op, "sub") ? x - z : !strcmp(op, "mul") ? x * z
                 : !strcmp(op, "div") ? x / z : !strcmp(op, "max") ? (x > z ? x : z)
                 : !strcmp(op, "min") ? (x < z ? x : z) : pow(x, z);
        y.data[i] = (float)r;
    }
}

/* Batched matmul; b transposed (last two axes swapped) when bt. */
static void matmul(ten a, ten b, int bt, ten y) {
    uint32_t r = y.rank;
    size_t M = (size_t)y.dims[r - 2], N = (size_t)y.dims[r - 1], K = (size_t)a.dims[a.rank - 1];
    size_t batches = numel(r - 2, y.dims);
    int64_t ab[8], bb[8];
    for (uint32_t i = 0; i + 2 < a.rank; i++) ab[i] = a.dims[i];
    for (uint32_t i = 0; i + 2 < b.rank; i++) bb[i] = b.dims[i];
    for (size_t bi = 0; bi < batches; bi++) {
        const float *pa = a.data + bidx(r - 2, y.dims, a.rank - 2, ab, bi) * M * K;
        const float *pb = b.data + bidx(r - 2, y.dims, b.rank - 2, bb, bi) * K * N;
        for (size_t m = 0; m < M; m++)
            for (size_t n = 0; n < N; n++) {
                double s = 0;
                for (size_t k = 0; k < K; k++) s += (double)pa[m * K + k] * pb[bt ? n * K + k : k * N + n];
                y.data[bi * M * N + m * N + n] = (float)s;
            }
    }
}

/* matmul as the engine accepts it: a rank-1 operand is read the ONNX
 * way, [K] on the left as [1, K] and on the right as [K, 1], and the
 * result lacks that dim (same elements, same order). */
static void matmul_any(ten a, ten b, ten y) {
    int64_t ad[2], bd[2], yd[8];
    if (a.rank == 1) ad[0] = 1, ad[1] = a.dims[0], a.dims = ad, a.rank = 2;
    if (b.rank == 1) bd[0] = b.dims[0], bd[1] = 1, b.dims = bd, b.rank = 2;
    uint32_t nb = (a.rank > b.rank ? a.rank : b.rank) - 2;
    for (uint32_t i = 0; i < nb; i++) yd[i] = y.dims[i];
    yd[nb] = a.dims[a.rank - 2];
    yd[nb + 1] = b.dims[b.rank - 1];
    matmul(a, b, 0, (ten){nb + 2, yd, y.data});
}

static void softmax(ten x, uint32_t ax, ten y) {
    size_t inner = numel(x.rank - ax - 1, x.dims + ax + 1), d = (size_t)x.dims[ax];
    size_t outer = numel(ax, x.dims);
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            const float *p = x.data + o * d * inner + i;
            float *q = y.data + o * d * inner + i;
            double mx = -INFINITY, s = 0;
            for (size_t k = 0; k < d; k++) mx = p[k * inner] > mx ? p[k * inner] : mx;
            for (size_t k = 0; k < d; k++) s += exp(p[k * inner] - mx);
            for (size_t k = 0; k < d; k++) q[k * inner] = (float)(exp(p[k * inner] - mx) / s);
        }
}

/* reduceSum, reduceMean, reduceMax or reduceMin over the axes in mask.
 * y's elements are in the order of x's rank with those dims 1, which is
 * also their order when the dims are dropped (keepDimensions=false). */
static void reduce_keep(const char *op, ten x, unsigned mask, float *y) {
    int64_t yd[8];
    for (uint32_t i = 0; i < x.rank; i++) yd[i] = (mask >> i) & 1 ? 1 : x.dims[i];
    size_t ny = numel(x.rank, yd), nx = numel(x.rank, x.dims), cnt = nx / (ny ? ny : 1);
    int extreme = !strcmp(op, "reduceMax") ? 1 : !strcmp(op, "reduceMin") ? -1 : 0;
    double *acc = calloc(ny ? ny : 1, sizeof(double));
    for (size_t i = 0; i < ny; i++) acc[i] = extreme ? extreme * -INFINITY : 0;
    for (size_t i = 0; i < nx; i++) {
        double *a = &acc[bidx(x.rank, x.dims, x.rank, yd, i)], v = x.data[i];
        if (!extreme) *a += v;
        else if (isnan(v) || (extreme > 0 ? v > *a : v < *a)) *a = v;
    }
    for (size_t i = 0; i < ny; i++) y[i] = (float)(!strcmp(op, "reduceMean") ? acc[i] / (double)cnt : acc[i]);
    free(acc);
}

static void mean_keep(ten x, unsigned mask, float *y) { reduce_keep("reduceMean", x, mask, y); }

/* Row-major strides of dims. */
static void strides_of(uint32_t rank, const int64_t *dims, size_t *st) {
    size_t s = 1;
    for (uint32_t k = rank; k-- > 0;) {
        st[k] = s;
        s *= (size_t)dims[k];
    }
}

/* y = x[starts + i * strides] along every axis. */
static void slice(ten x, const berth_attr *starts, const berth_attr *strides, ten y) {
    size_t xs[8], n = numel(y.rank, y.dims);
    strides_of(x.rank, x.dims, xs);
    for (size_t o = 0; o < n; o++) {
        size_t rem = o, src = 0;
        for (uint32_t k = y.rank; k-- > 0;) {
            size_t c = rem % (size_t)y.dims[k];
            rem /= (size_t)y.dims[k];
            size_t step = strides ? (size_t)strides->ints[k] : 1;
            src += ((size_t)starts->ints[k] + c * step) * xs[k];
        }
        y.data[o] = x.data[src];
    }
}

/* Inputs laid end to end along axis. */
static void concat(const berth_graph_desc *d, const berth_node *n, float **buf, uint32_t axis, ten y) {
    size_t outer = numel(axis, y.dims), inner = numel(y.rank - axis - 1, y.dims + axis + 1);
    size_t ydim = (size_t)y.dims[axis], at = 0;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const berth_operand *o = &d->operands[n->inputs[i]];
        size_t xdim = (size_t)o->dims[axis];
        for (size_t a = 0; a < outer; a++)
            memcpy(y.data + (a * ydim + at) * inner, buf[n->inputs[i]] + a * xdim * inner,
                   xdim * inner * sizeof(float));
        at += xdim;
    }
}

static unsigned axes_mask(const berth_attr *a, uint32_t rank) {
    if (!a) return (1u << rank) - 1;
    unsigned m = 0;
    for (size_t i = 0; i < a->count; i++) m |= 1u << (a->ints[i] < 0 ? a->ints[i] + rank : a->ints[i]);
    return m;
}

static void layer_norm(ten x, unsigned mask, double eps, const ten *scale, const ten *bias, ten y) {
    size_t n = numel(x.rank, x.dims);
    float *mean = malloc(n * sizeof(float)), *var = malloc(n * sizeof(float));
    float *d = malloc(n * sizeof(float));
    int64_t kd[8];
    for (uint32_t i = 0; i < x.rank; i++) kd[i] = (mask >> i) & 1 ? 1 : x.dims[i];
    mean_keep(x, mask, mean);
    for (size_t i = 0; i < n; i++) d[i] = x.data[i] - mean[bidx(x.rank, x.dims, x.rank, kd, i)];
    float *sq = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) sq[i] = d[i] * d[i];
    mean_keep((ten){x.rank, x.dims, sq}, mask, var);
    for (size_t i = 0; i < n; i++) {
        /* the scale/bias element: the coordinates along the axes only */
        size_t rem = i, si = 0, stride = 1;
        for (uint32_t k = x.rank; k-- > 0;) {
            size_t c = rem % (size_t)x.dims[k];
            rem /= (size_t)x.dims[k];
            if ((mask >> k) & 1) {
                si += c * stride;
                stride *= (size_t)x.dims[k];
            }
        }
        double v = d[i] / sqrt((double)var[bidx(x.rank, x.dims, x.rank, kd, i)] + eps);
        if (scale) v *= scale->data[si];
        if (bias) v += bias->data[si];
        y.data[i] = (float)v;
    }
    free(mean), free(var), free(d), free(sq);
}

static void transpose(ten x, const berth_attr *perm, ten y) {
    size_t n = numel(y.rank, y.dims);
    for (size_t o = 0; o < n; o++) {
        size_t rem = o, src = 0;
        size_t xstride[8];
        xstride[x.rank - 1] = 1;
        for (uint32_t k = x.rank - 1; k-- > 0;) xstride[k] = xstride[k + 1] * (size_t)x.dims[k + 1];
        for (uint32_t k = y.rank; k-- > 0;) {
            size_t c = rem % (size_t)y.dims[k];
            rem /= (size_t)y.dims[k];
            uint32_t from = perm ? (uint32_t)perm->ints[k] : x.rank - 1 - k;
            src += c * xstride[from];
        }
        y.data[o] = x.data[src];
    }
}

static void attention(ten q, ten k, ten v, double scale, const ten *mask, ten y) {
    uint32_t r = q.rank;
    size_t sq = (size_t)q.dims[r - 2], sk = (size_t)k.dims[r - 2];
    int64_t sd[8];
    memcpy(sd, q.dims, sizeof(int64_t) * r);
    sd[r - 1] = (int64_t)sk;
    size_t ns = numel(r, sd);
    float *s = malloc(ns * sizeof(float)), *p = malloc(ns * sizeof(float));
    matmul(q, k, 1, (ten){r, sd, s});
    for (size_t i = 0; i < ns; i++) {
        s[i] = (float)(s[i] * scale);
        if (mask) s[i] += mask->data[bidx(r, sd, mask->rank, mask->dims, i)];
    }
    softmax((ten){r, sd, s}, r - 1, (ten){r, sd, p});
    matmul((ten){r, sd, p}, v, 0, y);
    (void)sq;
    free(s), free(p);
}

float **ref_run(const berth_graph_desc *d, const float *const *inputs, const float *const *weights) {
    float **buf = calloc(d->n_operands + 1, sizeof(float *));
    for (uint32_t i = 0; i < d->n_operands; i++) {
        const berth_operand *o = &d->operands[i];
        size_t n = numel(o->rank, o->dims);
        buf[i] = calloc(n ? n : 1, sizeof(float));
        if (o->kind == BERTH_OPERAND_WEIGHT) memcpy(buf[i], weights[o->weight], n * sizeof(float));
        if (o->kind == BERTH_OPERAND_CONSTANT) memcpy(buf[i], o->data, n * sizeof(float));
    }
    for (uint32_t i = 0; i < d->n_inputs; i++) {
        const berth_operand *o = &d->operands[d->inputs[i]];
        memcpy(buf[d->inputs[i]], inputs[i], numel(o->rank, o->dims) * sizeof(float));
    }
#define T(idx) ((ten){d->operands[idx].rank, d->operands[idx].dims, buf[idx]})
    for (uint32_t ni = 0; ni < d->n_nodes; ni++) {
        const berth_node *n = &d->nodes[ni];
        const char *op = n->op;
        ten y = T(n->outputs[0]);
        size_t ny = numel(y.rank, y.dims);
        if (!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "mul") || !strcmp(op, "div") ||
            !strcmp(op, "pow")) {
            binary(op, T(n->inputs[0]), T(n->inputs[1]), y);
        } else if (!strcmp(op, "max") || !strcmp(op, "min")) {
            binary(op, T(n->inputs[0]), T(n->inputs[1]), y);
        } else if (!strcmp(op, "relu") || !strcmp(op, "gelu") || !strcmp(op, "sigmoid") ||
                   !strcmp(op, "tanh") || !strcmp(op, "sqrt") || !strcmp(op, "abs") || !strcmp(op, "neg") ||
                   !strcmp(op, "exp") || !strcmp(op, "log") || !strcmp(op, "erf")) {
            for (size_t i = 0; i < ny; i++) y.data[i] = (float)act(op, buf[n->inputs[0]][i]);
        } else if (!strcmp(op, "reciprocal")) {
            for (size_t i = 0; i < ny; i++) y.data[i] = (float)(1.0 / buf[n->inputs[0]][i]);
        } else if (!strcmp(op, "clamp") || !strcmp(op, "leakyRelu") || !strcmp(op, "elu")) {
            for (size_t i = 0; i < ny; i++) y.data[i] = (float)unary_opts(n, buf[n->inputs[0]][i]);
        } else if (!strcmp(op, "reshape") || !strcmp(op, "identity") || !strcmp(op, "squeeze") ||
                   !strcmp(op, "unsqueeze")) {
            memcpy(y.data, buf[n->inputs[0]], ny * sizeof(float)); /* the same elements, in order */
        } else if (!strcmp(op, "expand")) {
            ten x = T(n->inputs[0]);
            for (size_t i = 0; i < ny; i++) y.data[i] = x.data[bidx(y.rank, y.dims, x.rank, x.dims, i)];
        } else if (!strcmp(op, "slice")) {
            slice(T(n->inputs[0]), attr(n, "starts"), attr(n, "strides"), y);
        } else if (!strcmp(op, "concat")) {
            int64_t ax = attr(n, "axis")->i;
            concat(d, n, buf, (uint32_t)(ax < 0 ? ax + y.rank : ax), y);
        } else if (!strcmp(op, "reduceSum") || !strcmp(op, "reduceMax") || !strcmp(op, "reduceMin")) {
            ten x = T(n->inputs[0]);
            reduce_keep(op, x, axes_mask(attr(n, "axes"), x.rank), y.data);
        } else if (!strcmp(op, "matmul")) {
            matmul_any(T(n->inputs[0]), T(n->inputs[1]), y);
        } else if (!strcmp(op, "transpose")) {
            transpose(T(n->inputs[0]), attr(n, "permutation"), y);
        } else if (!strcmp(op, "softmax")) {
            const berth_attr *a = attr(n, "axis");
            int64_t ax = a ? a->i : (int64_t)y.rank - 1;
            softmax(T(n->inputs[0]), (uint32_t)(ax < 0 ? ax + y.rank : ax), y);
        } else if (!strcmp(op, "reduceMean")) {
            ten x = T(n->inputs[0]);
            mean_keep(x, axes_mask(attr(n, "axes"), x.rank), y.data);
        } else if (!strcmp(op, "layerNormalization")) {
            const berth_attr *s = attr(n, "scale"), *b = attr(n, "bias"), *e = attr(n, "epsilon");
            ten st = s ? T(s->i) : y, bt = b ? T(b->i) : y, x = T(n->inputs[0]);
            layer_norm(x, axes_mask(attr(n, "axes"), x.rank), e ? e->f : 1e-5, s ? &st : NULL,
                       b ? &bt : NULL, y);
        } else if (!strcmp(op, "berth.matmulEpilogue")) {
            const berth_attr *b = attr(n, "bias"), *r = attr(n, "residual"), *a = attr(n, "activation");
            matmul_any(T(n->inputs[0]), T(n->inputs[1]), y);
            ten bt = T(b->i);
            for (size_t i = 0; i < ny; i++) {
                double v = act(a ? a->s : NULL, y.data[i] + bt.data[bidx(y.rank, y.dims, bt.rank, bt.dims, i)]);
                if (r) v += buf[r->i][i];
                y.data[i] = (float)v;
            }
        } else if (!strcmp(op, "berth.elementwise")) {
            elementwise(d, n, buf, y, NULL);
        } else if (!strcmp(op, "conv2d") || !strcmp(op, "berth.conv2dEpilogue")) {
            const berth_attr *b = attr(n, "bias");
            conv2d(n, T(n->inputs[0]), T(n->inputs[1]), b ? buf[b->i] : NULL, y);
            if (!strcmp(op, "berth.conv2dEpilogue")) {
                float *c = malloc(ny * sizeof(float));
                memcpy(c, y.data, ny * sizeof(float));
                elementwise(d, n, buf, y, c);
                free(c);
            }
        } else if (!strcmp(op, "berth.attention")) {
            const berth_attr *s = attr(n, "scale"), *m = attr(n, "mask");
            ten mt = m ? T(m->i) : y;
            attention(T(n->inputs[0]), T(n->inputs[1]), T(n->inputs[2]), s ? s->f : 1.0, m ? &mt : NULL, y);
        } else {
            fprintf(stderr, "ref_eval: op '%s' not implemented\n", op);
            ref_free(buf, d->n_operands);
            return NULL;
        }
    }
#undef T
    return buf;
}

void ref_free(float **bufs, uint32_t n) {
    if (!bufs) return;
    for (uint32_t i = 0; i < n; i++) free(bufs[i]);
    free(bufs);
}
