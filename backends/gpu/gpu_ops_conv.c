/* Convolutions, pooling and resampling. conv2d picks its kernel by shape
 * at plan time: a depthwise shader where each group reads one input
 * channel, the matmul shaders for 1x1 convs, else a direct
 * register-tiled shader; convTranspose2d runs on an
 * implicit-GEMM shader. Every input and filter layout WebNN names is
 * expressed as strides, so nothing is permuted in memory. */
#include <string.h>

#include "gpu_core.h"

typedef struct conv {
    bk_conv_attrs at;
    int64_t oh, ow;
    int64_t fs[4]; /* filter strides of the letters o, i, h, w */
} conv;

/* Image dims in n, c, h, w order, and its strides in that order. */
static void image(const int64_t *dims, int nhwc, int64_t *nchw, int64_t *strides) {
    if (nhwc) {
        nchw[0] = dims[0], nchw[1] = dims[3], nchw[2] = dims[1], nchw[3] = dims[2];
        strides[0] = dims[1] * dims[2] * dims[3], strides[1] = 1, strides[2] = dims[2] * dims[3], strides[3] = dims[3];
    } else {
        memcpy(nchw, dims, sizeof(int64_t) * 4);
        strides[0] = dims[1] * dims[2] * dims[3], strides[1] = dims[2] * dims[3], strides[2] = dims[3], strides[3] = 1;
    }
}

static berth_status conv_common(gpu_prep *c, conv *cv, int transposed) {
    berth_status st = bk_param_conv(&c->bk, &cv->at);
    if (st) return st;
    const gpu_opnd *f = gpu_in(c, 1);
    const char *canonical = transposed ? "iohw" : "oihw", *fl;
    static const char *const conv_layouts[] = {"oihw", "hwio", "ohwi", "ihwo", NULL};
    static const char *const convt_layouts[] = {"iohw", "hwoi", "ohwi", NULL};
    const char *const *allowed = transposed ? convt_layouts : conv_layouts;
    st = bk_opt_string(&c->bk, "filterLayout", canonical, &fl);
    if (st) return st;
    int ok = 0;
    for (int i = 0; allowed[i]; i++) ok |= strcmp(fl, allowed[i]) == 0;
    if (!ok) return bk_fail(&c->bk, "filterLayout '%s' is not supported", fl);
    int64_t fst[4], s = 1, cdims[4];
    for (int d = 3; d >= 0; d--) {
        fst[d] = s;
        s *= f->dims[d];
    }
    for (int d = 0; d < 4; d++) cdims[d] = f->dims[strchr(fl, canonical[d]) - fl];
    static const char letters[] = "oihw";
    for (int d = 0; d < 4; d++) cv->fs[d] = fst[strchr(fl, letters[d]) - fl];
    st = bk_conv_geom(&c->bk, cdims, transposed, &cv->at);
    if (st) return st;
    if (cv->at.bias != GPU_NONE) {
        const gpu_opnd *b = &c->plan->ops[cv->at.bias];
        if (b->dtype != BERTH_DTYPE_F32 || b->rank != 1 || b->dims[0] != cv->at.o)
            return bk_fail(&c->bk, "bias: expected float32 [%lld], found %s of %zu elements", (long long)cv->at.o,
                           bk_dtype_name(b->dtype), b->numel);
    }
    return BERTH_OK;
}

/* convTranspose2d: the implicit-GEMM shader, which solves each output
 * pixel's input position per filter tap. */
static berth_status emit_transposed(gpu_prep *c, const conv *cv, const int64_t *xs, const int64_t *ys) {
    gpu_dispatch *d = gpu_emit(c, "conv2d");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 4;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->inputs[1];
    d->bind[2] = cv->at.bias;
    d->bind[3] = c->node->outputs[0];
    uint64_t pixels = (uint64_t)(cv->at.n * cv->oh * cv->ow);
    const int64_t v[] = {cv->at.og, (int64_t)pixels, cv->at.cg * cv->at.kh * cv->at.kw, cv->at.groups, cv->oh, cv->ow, cv->at.kh, cv->at.kw,
                         cv->at.cg, cv->at.h, cv->at.w, cv->at.stride[0], cv->at.stride[1], cv->at.dil[0], cv->at.dil[1], cv->at.pad[0],
                         cv->at.pad[2], cv->fs[0], cv->fs[1], cv->fs[2], cv->fs[3], xs[0], xs[1], xs[2], xs[3], ys[0],
                         ys[1], ys[2], ys[3]};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) d->pc[i] = (uint32_t)v[i];
    d->pc[29] = (cv->at.bias != GPU_NONE ? 1u : 0u) | 2u;
    d->groups[0] = gpu_groups(pixels, 32);
    d->groups[1] = gpu_groups((uint64_t)cv->at.og, 32);
    d->groups[2] = gpu_groups((uint64_t)cv->at.groups, 1);
    return BERTH_OK;
}

/* Depthwise (one input channel per group): a dot product over the window
 * per output element, with no tile of output channels to waste. */
static berth_status emit_depthwise(gpu_prep *c, const conv *cv, const int64_t *xs, const int64_t *ys) {
    gpu_dispatch *d = gpu_emit(c, "conv_depthwise");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 4;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->inputs[1];
    d->bind[2] = cv->at.bias;
    d->bind[3] = c->node->outputs[0];
    const int64_t v[] = {cv->at.n * cv->at.o, cv->at.o, cv->at.og, cv->oh, cv->ow, cv->at.h, cv->at.w, cv->at.kh, cv->at.kw,
                         cv->at.stride[0], cv->at.stride[1], cv->at.dil[0], cv->at.dil[1], cv->at.pad[0], cv->at.pad[2],
                         xs[0], xs[1], xs[2], xs[3], ys[0], ys[1], ys[2], ys[3], cv->fs[0], cv->fs[2], cv->fs[3]};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) d->pc[i] = (uint32_t)v[i];
    d->pc[26] = cv->at.bias != GPU_NONE ? 1u : 0u;
    /* x: (output row, block of 8 columns) per invocation; z: planes. */
    d->groups[0] = gpu_groups((uint64_t)cv->oh * (uint64_t)((cv->ow + 7) / 8), 64);
    d->groups[2] = gpu_groups((uint64_t)(cv->at.n * cv->at.o), 1);
    return BERTH_OK;
}

/* Any other conv2d: direct, register-tiled over 8 output channels and 8
 * pixels per invocation. Even at a few dozen pixels the wide tile wins on
 * lavapipe, whose cost is loads, not lanes left idle. */
static berth_status emit_tiled(gpu_prep *c, const conv *cv, const int64_t *xs, const int64_t *ys) {
    int64_t pixels = cv->oh * cv->ow;
    const uint32_t rn = 8;
    gpu_dispatch *d = gpu_emit(c, "conv_tiled");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 4;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->inputs[1];
    d->bind[2] = cv->at.bias;
    d->bind[3] = c->node->outputs[0];
    const int64_t v[] = {cv->at.og, pixels, cv->at.cg, cv->at.groups, cv->at.n * cv->at.groups, cv->ow, cv->at.kh, cv->at.kw, cv->at.h,
                         cv->at.w, cv->at.stride[0], cv->at.stride[1], cv->at.dil[0], cv->at.dil[1], cv->at.pad[0], cv->at.pad[2],
                         cv->fs[0], cv->fs[1], cv->fs[2], cv->fs[3], xs[0], xs[1], xs[2], xs[3], ys[0], ys[1],
                         ys[2], ys[3]};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) d->pc[i] = (uint32_t)v[i];
    d->pc[28] = cv->at.bias != GPU_NONE ? 1u : 0u;
    d->groups[0] = gpu_groups(((uint64_t)pixels + rn - 1) / rn, 8);
    d->groups[1] = gpu_groups((uint64_t)cv->at.og, 8);
    d->groups[2] = gpu_groups((uint64_t)(cv->at.n * cv->at.groups), 1);
    return BERTH_OK;
}

/* A 1x1 conv with stride 1 and no padding over one group is a matrix
 * product per image: filter [O, C] times image [C, pixels] in NCHW, image
 * [pixels, C] times filter [C, O] in NHWC, with the bias along O. */
static int pointwise(const conv *cv) {
    return cv->at.kh == 1 && cv->at.kw == 1 && cv->at.stride[0] == 1 && cv->at.stride[1] == 1 && cv->at.groups == 1 &&
           cv->at.pad[0] == 0 && cv->at.pad[1] == 0 && cv->at.pad[2] == 0 && cv->at.pad[3] == 0;
}

static berth_status emit_pointwise(gpu_prep *c, const conv *cv, const int64_t *xs) {
    int64_t pixels = cv->oh * cv->ow;
    gpu_gemm g = {.y = c->node->outputs[0], .bias = cv->at.bias, .k = cv->at.c, .batch = (uint64_t)cv->at.n, .brank = 1,
                 .bdims = {cv->at.n}};
    if (cv->at.nhwc) {
        g.a = c->node->inputs[0], g.b = c->node->inputs[1];
        g.m = pixels, g.n = cv->at.o;
        g.astr[0] = xs[0], g.bstr[0] = 0;
        g.sam = (uint32_t)xs[3], g.sak = (uint32_t)xs[1], g.sbk = (uint32_t)cv->fs[1], g.sbn = (uint32_t)cv->fs[0];
    } else {
        g.a = c->node->inputs[1], g.b = c->node->inputs[0];
        g.m = cv->at.o, g.n = pixels, g.bias_rows = 1;
        g.astr[0] = 0, g.bstr[0] = xs[0];
        g.sam = (uint32_t)cv->fs[0], g.sak = (uint32_t)cv->fs[1], g.sbk = (uint32_t)xs[1], g.sbn = (uint32_t)xs[3];
    }
    return gpu_emit_gemm(c, &g) ? BERTH_OK : BERTH_ERR_NOMEM;
}

static berth_status conv_emit(gpu_prep *c, conv *cv, int transposed) {
    int64_t od[4] = {cv->at.n, cv->at.o, cv->oh, cv->ow}, od_nhwc[4] = {cv->at.n, cv->oh, cv->ow, cv->at.o};
    berth_status st = bk_check_out_dims(&c->bk, 0, 4, cv->at.nhwc ? od_nhwc : od);
    if (st) return st;
    const gpu_opnd *y = gpu_out(c, 0);
    int64_t xd[4], xs[4], yd[4], ys[4];
    image(gpu_in(c, 0)->dims, cv->at.nhwc, xd, xs);
    image(y->dims, cv->at.nhwc, yd, ys);
    if (transposed) return emit_transposed(c, cv, xs, ys);
    if (cv->at.cg == 1 && cv->at.groups == cv->at.c) return emit_depthwise(c, cv, xs, ys);
    if (pointwise(cv)) return emit_pointwise(c, cv, xs);
    return emit_tiled(c, cv, xs, ys);
}

berth_status gpu_prep_conv2d(gpu_prep *c) {
    conv cv;
    memset(&cv, 0, sizeof cv);
    berth_status st = conv_common(c, &cv, 0);
    if (st) return st;
    int64_t eh = cv.at.dil[0] * (cv.at.kh - 1) + 1, ew = cv.at.dil[1] * (cv.at.kw - 1) + 1;
    int64_t ph = cv.at.h + cv.at.pad[0] + cv.at.pad[1], pw = cv.at.w + cv.at.pad[2] + cv.at.pad[3];
    if (ph < eh || pw < ew) return bk_fail(&c->bk, "the padded input is smaller than the dilated filter");
    cv.oh = (ph - eh) / cv.at.stride[0] + 1;
    cv.ow = (pw - ew) / cv.at.stride[1] + 1;
    return conv_emit(c, &cv, 0);
}

berth_status gpu_prep_conv_transpose2d(gpu_prep *c) {
    conv cv;
    memset(&cv, 0, sizeof cv);
    berth_status st = conv_common(c, &cv, 1);
    if (st) return st;
    int64_t op[2] = {0, 0}, sizes[2] = {0, 0};
    int n_sz;
    st = bk_param_ints_n(&c->bk, "outputPadding", 2, 0, op);
    if (!st) st = bk_opt_ints(&c->bk, "outputSizes", sizes, 2, &n_sz);
    if (st) return st;
    int64_t base_h = (cv.at.h - 1) * cv.at.stride[0] + cv.at.dil[0] * (cv.at.kh - 1) + 1 - cv.at.pad[0] - cv.at.pad[1];
    int64_t base_w = (cv.at.w - 1) * cv.at.stride[1] + cv.at.dil[1] * (cv.at.kw - 1) + 1 - cv.at.pad[2] - cv.at.pad[3];
    if (n_sz == 2) {
        if (sizes[0] < base_h || sizes[0] >= base_h + cv.at.stride[0] || sizes[1] < base_w || sizes[1] >= base_w + cv.at.stride[1])
            return bk_fail(&c->bk, "outputSizes [%lld, %lld] are not reachable from [%lld, %lld] with strides [%lld, %lld]",
                           (long long)sizes[0], (long long)sizes[1], (long long)base_h, (long long)base_w,
                           (long long)cv.at.stride[0], (long long)cv.at.stride[1]);
        cv.oh = sizes[0], cv.ow = sizes[1];
    } else {
        cv.oh = base_h + op[0], cv.ow = base_w + op[1];
    }
    if (cv.oh < 1 || cv.ow < 1)
        return bk_fail(&c->bk, "output spatial size [%lld, %lld] is empty", (long long)cv.oh, (long long)cv.ow);
    return conv_emit(c, &cv, 1);
}

berth_status gpu_prep_pool2d(gpu_prep *c) {
    berth_status st;
    const gpu_opnd *x = gpu_in(c, 0);
    uint32_t kind = strcmp(c->node->op, "maxPool2d") == 0 ? 1 : strcmp(c->node->op, "l2Pool2d") == 0 ? 2 : 0;
    int64_t win[2] = {0}, pad[4] = {0}, stride[2] = {1, 1}, dil[2] = {1, 1}, sizes[2] = {0};
    const char *rounding;
    int nhwc, n_sz;
    if ((st = bk_param_ints_n(&c->bk, "windowDimensions", 2, -1, win)) || (st = bk_param_ints_n(&c->bk, "padding", 4, 0, pad)) ||
        (st = bk_param_ints_n(&c->bk, "strides", 2, 1, stride)) || (st = bk_param_ints_n(&c->bk, "dilations", 2, 1, dil)) ||
        (st = bk_param_layout(&c->bk, "layout", &nhwc)) || (st = bk_opt_string(&c->bk, "roundingType", "floor", &rounding)) ||
        (st = bk_opt_ints(&c->bk, "outputSizes", sizes, 2, &n_sz)))
        return st;
    int ceil_mode = strcmp(rounding, "ceil") == 0;
    if (!ceil_mode && strcmp(rounding, "floor") != 0)
        return bk_fail(&c->bk, "roundingType: expected floor or ceil, found '%s'", rounding);
    int64_t xd[4], xs[4];
    image(x->dims, nhwc, xd, xs);
    int64_t kh = win[0] < 0 ? xd[2] : win[0], kw = win[1] < 0 ? xd[3] : win[1];
    for (int i = 0; i < 4; i++)
        if (pad[i] < 0) return bk_fail(&c->bk, "padding[%d] is negative", i);
    if (kh < 1 || kw < 1 || stride[0] < 1 || stride[1] < 1 || dil[0] < 1 || dil[1] < 1)
        return bk_fail(&c->bk, "windowDimensions, strides and dilations must be >= 1");
    int64_t sh = xd[2] + pad[0] + pad[1] - (dil[0] * (kh - 1) + 1), sw = xd[3] + pad[2] + pad[3] - (dil[1] * (kw - 1) + 1);
    if (sh < 0 || sw < 0) return bk_fail(&c->bk, "the window is larger than the padded input");
    int64_t oh = (ceil_mode ? (sh + stride[0] - 1) / stride[0] : sh / stride[0]) + 1;
    int64_t ow = (ceil_mode ? (sw + stride[1] - 1) / stride[1] : sw / stride[1]) + 1;
    if (n_sz == 2) oh = sizes[0], ow = sizes[1];
    const gpu_opnd *y = gpu_out(c, 0);
    int64_t yd[4], ys[4];
    image(y->dims, nhwc, yd, ys);
    gpu_dispatch *d = gpu_emit(c, "pool2d");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->outputs[0];
    const int64_t v[] = {(int64_t)y->numel, xd[1], oh, ow, xd[2], xd[3], kh, kw, stride[0], stride[1], dil[0], dil[1],
                         pad[0], pad[2], kind, xs[0], xs[1], xs[2], xs[3], ys[0], ys[1], ys[2], ys[3]};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) d->pc[i] = (uint32_t)v[i];
    d->groups[0] = gpu_groups(y->numel, 256);
    return BERTH_OK;
}

berth_status gpu_prep_resample2d(gpu_prep *c) {
    const gpu_opnd *x = gpu_in(c, 0), *y = gpu_out(c, 0);
    bk_resample r;
    berth_status st = bk_param_resample(&c->bk, &r);
    if (st) return st;
    uint32_t a0 = r.a0, a1 = r.a1;
    gpu_dispatch *d = gpu_emit(c, "resample2d");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->outputs[0];
    d->pc[0] = (uint32_t)y->numel;
    d->pc[1] = (uint32_t)x->dims[a0];
    d->pc[2] = (uint32_t)x->dims[a1];
    d->pc[3] = (uint32_t)y->dims[a0];
    d->pc[4] = (uint32_t)y->dims[a1];
    d->pc[5] = (uint32_t)r.mid;
    d->pc[6] = (uint32_t)r.inner;
    d->pc[7] = gpu_f2u((float)r.sh);
    d->pc[8] = gpu_f2u((float)r.sw);
    d->pc[9] = (uint32_t)r.linear;
    d->groups[0] = gpu_groups(y->numel, 256);
    return BERTH_OK;
}
