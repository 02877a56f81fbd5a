/* Convolutions, pooling and resampling on the vulkan backend: conv2d with
 * padding, strides, dilations, groups and bias in NCHW/OIHW and in
 * NHWC/HWIO on each of its kernels (depthwise, direct tiled, 1x1 as a
 * matrix product), convTranspose2d, the three pools and resample2d,
 * each against reference loops here and the cpu backend where built. */
#include "vk_harness.h"

typedef struct cshape {
    int64_t n, c, h, w, o, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, groups;
} cshape;

static int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1) {
    return (in + p0 + p1 - (d * (k - 1) + 1)) / s + 1;
}

/* NCHW input, OIHW filter, NCHW output. */
static void ref_conv(const cshape *s, const float *x, const float *f, const float *b, double *y) {
    int64_t oh = out_dim(s->h, s->kh, s->sh, s->dh, s->pt, s->pb), ow = out_dim(s->w, s->kw, s->sw, s->dw, s->pl, s->pr);
    int64_t cg = s->c / s->groups, og = s->o / s->groups;
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t o = 0; o < s->o; o++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double acc = b ? b[o] : 0;
                    int64_t g = o / og;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t ky = 0; ky < s->kh; ky++)
                            for (int64_t kx = 0; kx < s->kw; kx++) {
                                int64_t iy = i * s->sh - s->pt + ky * s->dh, ix = j * s->sw - s->pl + kx * s->dw;
                                if (iy < 0 || ix < 0 || iy >= s->h || ix >= s->w) continue;
                                acc += (double)x[((n * s->c + g * cg + ci) * s->h + iy) * s->w + ix] *
                                       f[((o * cg + ci) * s->kh + ky) * s->kw + kx];
                            }
                    y[((n * s->o + o) * oh + i) * ow + j] = acc;
                }
}

static void check_conv(const cshape *s, int nhwc, int bias) {
    int64_t oh = out_dim(s->h, s->kh, s->sh, s->dh, s->pt, s->pb), ow = out_dim(s->w, s->kw, s->sw, s->dw, s->pl, s->pr);
    int64_t cg = s->c / s->groups;
    size_t nx = (size_t)(s->n * s->c * s->h * s->w), nf = (size_t)(s->o * cg * s->kh * s->kw);
    size_t ny = (size_t)(s->n * s->o * oh * ow);
    float *x = h_randf(nx), *f = h_randf(nf), *b = h_randf((size_t)s->o), *got = calloc(ny, 4);
    float *xl = malloc(nx * 4), *fl = malloc(nf * 4);
    double *ref = h_zeros(ny), *refl = h_zeros(ny);
    ref_conv(s, x, f, bias ? b : NULL, ref);
    /* The same data in NHWC / HWIO when asked. */
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t c = 0; c < s->c; c++)
            for (int64_t i = 0; i < s->h; i++)
                for (int64_t j = 0; j < s->w; j++)
                    xl[nhwc ? ((n * s->h + i) * s->w + j) * s->c + c : ((n * s->c + c) * s->h + i) * s->w + j] =
                        x[((n * s->c + c) * s->h + i) * s->w + j];
    for (int64_t o = 0; o < s->o; o++)
        for (int64_t c = 0; c < cg; c++)
            for (int64_t i = 0; i < s->kh; i++)
                for (int64_t j = 0; j < s->kw; j++)
                    fl[nhwc ? ((i * s->kw + j) * cg + c) * s->o + o : ((o * cg + c) * s->kh + i) * s->kw + j] =
                        f[((o * cg + c) * s->kh + i) * s->kw + j];
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t o = 0; o < s->o; o++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++)
                    refl[nhwc ? ((n * oh + i) * ow + j) * s->o + o : ((n * s->o + o) * oh + i) * ow + j] =
                        ref[((n * s->o + o) * oh + i) * ow + j];
    tgraph g = {0};
    uint32_t xi = nhwc ? tg_input(&g, "x", BERTH_DTYPE_F32, 4, DIMS(s->n, s->h, s->w, s->c))
                       : tg_input(&g, "x", BERTH_DTYPE_F32, 4, DIMS(s->n, s->c, s->h, s->w));
    uint32_t fi = nhwc ? tg_input(&g, "f", BERTH_DTYPE_F32, 4, DIMS(s->kh, s->kw, cg, s->o))
                       : tg_input(&g, "f", BERTH_DTYPE_F32, 4, DIMS(s->o, cg, s->kh, s->kw));
    uint32_t bi = tg_input(&g, "b", BERTH_DTYPE_F32, 1, DIMS(s->o));
    uint32_t yi = nhwc ? tg_value(&g, "y", BERTH_DTYPE_F32, 4, DIMS(s->n, oh, ow, s->o))
                       : tg_value(&g, "y", BERTH_DTYPE_F32, 4, DIMS(s->n, s->o, oh, ow));
    berth_attr at[8];
    uint32_t na = 0;
    at[na++] = A_INTS("padding", 4, s->pt, s->pb, s->pl, s->pr);
    at[na++] = A_INTS("strides", 2, s->sh, s->sw);
    at[na++] = A_INTS("dilations", 2, s->dh, s->dw);
    at[na++] = A_INT("groups", s->groups);
    if (bias) at[na++] = A_OPND("bias", bi);
    if (nhwc) {
        at[na++] = A_STR("inputLayout", "nhwc");
        at[na++] = A_STR("filterLayout", "hwio");
    }
    tg_node(&g, "conv2d", 2, IDX(xi, fi), 1, IDX(yi), na, at);
    tg_output(&g, yi);
    if (h_ok(&g, (void *const[]){xl, fl, b}, (void *const[]){got})) {
        h_close_tol("conv2d", got, refl, ny, 1e-4, 1e-4);
        h_same_as_cpu("conv2d vs cpu", &g, NULL, (void *const[]){xl, fl, b}, (void *const[]){got});
    }
    free(x), free(f), free(b), free(got), free(xl), free(fl), free(ref), free(refl);
}

static void test_conv2d(void) {
    check_conv(&(cshape){1, 3, 9, 11, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 0, 1);
    check_conv(&(cshape){2, 4, 10, 7, 6, 3, 2, 2, 1, 2, 1, 2, 0, 1, 0, 2}, 0, 0);
    check_conv(&(cshape){1, 6, 8, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6}, 0, 1); /* depthwise */
    check_conv(&(cshape){2, 5, 7, 6, 33, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, 0, 1); /* pointwise, M over a tile */
    check_conv(&(cshape){1, 3, 9, 11, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, 1, 1); /* nhwc, hwio */
}

/* The depthwise shader: one input channel per group, with strides,
 * dilations, uneven padding, bias, a channel multiplier and both layouts. */
static void test_depthwise(void) {
    check_conv(&(cshape){1, 8, 9, 13, 8, 3, 3, 2, 1, 1, 2, 1, 2, 2, 0, 8}, 0, 1);
    check_conv(&(cshape){2, 4, 7, 9, 8, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 4}, 0, 0); /* 2 outputs per channel */
    check_conv(&(cshape){1, 6, 8, 10, 6, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 6}, 1, 1);
    check_conv(&(cshape){2, 5, 6, 7, 10, 3, 2, 1, 2, 1, 1, 0, 1, 1, 0, 5}, 1, 0);
    check_conv(&(cshape){1, 3, 20, 70, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3}, 0, 1); /* rows of many 8-wide blocks */
    check_conv(&(cshape){1, 2, 5, 12, 2, 1, 9, 1, 1, 1, 1, 0, 0, 4, 4, 2}, 0, 1);  /* kw 9: no row cache */
}

/* The register-tiled direct shader (8 channels x 8 pixels per invocation)
 * with channel and pixel tails, groups, strides, dilations and padding,
 * and 1x1 convs, which run as matrix products: vec4 reads where the
 * channel and pixel counts are multiples of 4, scalar reads elsewhere. */
static void test_conv_kernels(void) {
    check_conv(&(cshape){2, 6, 11, 13, 20, 3, 3, 1, 2, 1, 1, 1, 1, 0, 2, 2}, 0, 1);
    check_conv(&(cshape){1, 5, 12, 10, 9, 5, 3, 1, 1, 2, 1, 2, 2, 1, 1, 1}, 1, 1);
    check_conv(&(cshape){1, 8, 17, 19, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, 0, 0);
    check_conv(&(cshape){1, 6, 9, 9, 4, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1}, 0, 1);   /* 1x1 strided: tiled */
    check_conv(&(cshape){2, 16, 6, 10, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, 0, 1); /* vec4 A and B */
    check_conv(&(cshape){2, 8, 5, 6, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, 1, 1);   /* nhwc, vec4 A and B */
    check_conv(&(cshape){1, 8, 5, 6, 10, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, 1, 0);   /* nhwc, vec4 A only */
    check_conv(&(cshape){1, 12, 3, 7, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, 0, 1);   /* 21 pixels: vec4 A only */
    check_conv(&(cshape){1, 4, 6, 6, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2}, 0, 1);    /* grouped 1x1: tiled */
}

/* convTranspose2d NCHW/IOHW: each input pixel scatters filter * value. */
static void test_conv_transpose(void) {
    const int64_t N = 1, C = 4, H = 3, W = 4, OG = 3, G = 2, K = 3, S = 2, P = 1;
    const int64_t CG = C / G, O = OG * G;
    const int64_t OH = (H - 1) * S + K - 2 * P, OW = (W - 1) * S + K - 2 * P;
    size_t nx = (size_t)(N * C * H * W), nf = (size_t)(C * OG * K * K), ny = (size_t)(N * O * OH * OW);
    float *x = h_randf(nx), *f = h_randf(nf), *b = h_randf((size_t)O), *got = calloc(ny, 4);
    double *ref = h_zeros(ny);
    for (int64_t o = 0; o < O; o++)
        for (int64_t i = 0; i < OH * OW; i++) ref[o * OH * OW + i] = b[o];
    for (int64_t c = 0; c < C; c++)
        for (int64_t iy = 0; iy < H; iy++)
            for (int64_t ix = 0; ix < W; ix++)
                for (int64_t m = 0; m < OG; m++)
                    for (int64_t ky = 0; ky < K; ky++)
                        for (int64_t kx = 0; kx < K; kx++) {
                            int64_t oy = iy * S - P + ky, ox = ix * S - P + kx;
                            if (oy < 0 || ox < 0 || oy >= OH || ox >= OW) continue;
                            int64_t o = (c / CG) * OG + m;
                            ref[(o * OH + oy) * OW + ox] += (double)x[(c * H + iy) * W + ix] * f[((c * OG + m) * K + ky) * K + kx];
                        }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 4, DIMS(N, C, H, W)), fi = tg_input(&g, "f", BERTH_DTYPE_F32, 4, DIMS(C, OG, K, K));
    uint32_t bi = tg_input(&g, "b", BERTH_DTYPE_F32, 1, DIMS(O)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 4, DIMS(N, O, OH, OW));
    tg_node(&g, "convTranspose2d", 2, IDX(xi, fi), 1, IDX(yi), 4,
            (berth_attr[]){A_INTS("padding", 4, P, P, P, P), A_INTS("strides", 2, S, S), A_INT("groups", G), A_OPND("bias", bi)});
    tg_output(&g, yi);
    if (h_ok(&g, (void *const[]){x, f, b}, (void *const[]){got})) {
        h_close("convTranspose2d", got, ref, ny);
        h_same_as_cpu("convTranspose2d vs cpu", &g, NULL, (void *const[]){x, f, b}, (void *const[]){got});
    }
    free(x), free(f), free(b), free(got), free(ref);
}

static void test_pools(void) {
    const int64_t N = 2, C = 3, H = 7, W = 6, K = 3, S = 2, P = 1;
    const int64_t OH = (H + 2 * P - K) / S + 1, OW = (W + 2 * P - K) / S + 1;
    size_t nx = (size_t)(N * C * H * W), ny = (size_t)(N * C * OH * OW);
    float *x = h_randf(nx), *got = calloc(ny, 4);
    double *ref = h_zeros(ny);
    static const char *const ops[] = {"averagePool2d", "maxPool2d", "l2Pool2d"};
    for (int k = 0; k < 3; k++) {
        for (int64_t pl = 0; pl < N * C; pl++)
            for (int64_t i = 0; i < OH; i++)
                for (int64_t j = 0; j < OW; j++) {
                    double sum = 0, mx = -INFINITY;
                    int cnt = 0;
                    for (int64_t a = 0; a < K; a++)
                        for (int64_t bb = 0; bb < K; bb++) {
                            int64_t iy = i * S - P + a, ix = j * S - P + bb;
                            if (iy < 0 || ix < 0 || iy >= H || ix >= W) continue;
                            double v = x[(pl * H + iy) * W + ix];
                            sum += k == 2 ? v * v : v;
                            mx = fmax(mx, v);
                            cnt++;
                        }
                    ref[(pl * OH + i) * OW + j] = k == 0 ? sum / cnt : k == 1 ? mx : sqrt(sum);
                }
        tgraph g = {0};
        uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 4, DIMS(N, C, H, W)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 4, DIMS(N, C, OH, OW));
        tg_node(&g, ops[k], 1, IDX(xi), 1, IDX(yi), 3,
                (berth_attr[]){A_INTS("windowDimensions", 2, K, K), A_INTS("padding", 4, P, P, P, P), A_INTS("strides", 2, S, S)});
        tg_output(&g, yi);
        if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) {
            h_close(ops[k], got, ref, ny);
            h_same_as_cpu(ops[k], &g, NULL, (void *const[]){x}, (void *const[]){got});
        }
    }
    /* Global average pooling in NHWC: no window given means the whole plane. */
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 4, DIMS(N, H, W, C)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 4, DIMS(N, 1, 1, C));
    tg_node(&g, "averagePool2d", 1, IDX(xi), 1, IDX(yi), 1, (berth_attr[]){A_STR("layout", "nhwc")});
    tg_output(&g, yi);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            double s = 0;
            for (int64_t i = 0; i < H * W; i++) s += x[(n * H * W + i) * C + c];
            ref[n * C + c] = s / (double)(H * W);
        }
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) h_close("global average nhwc", got, ref, (size_t)(N * C));
    free(x), free(got), free(ref);
}

static void test_resample(void) {
    const int64_t H = 3, W = 4, OH = 6, OW = 10;
    float *x = h_randf(2 * H * W), got[2 * OH * OW];
    double ref[2 * OH * OW];
    for (int linear = 0; linear < 2; linear++) {
        double sh = (double)OH / H, sw = (double)OW / W;
        for (int64_t c = 0; c < 2; c++)
            for (int64_t i = 0; i < OH; i++)
                for (int64_t j = 0; j < OW; j++) {
                    double fy = linear ? (i + 0.5) / sh - 0.5 : floor(i / sh), fx = linear ? (j + 0.5) / sw - 0.5 : floor(j / sw);
                    fy = fmin(fmax(fy, 0), H - 1), fx = fmin(fmax(fx, 0), W - 1);
                    int64_t y0 = (int64_t)fy, x0 = (int64_t)fx, y1 = y0 + 1 < H ? y0 + 1 : y0, x1 = x0 + 1 < W ? x0 + 1 : x0;
                    double dy = fy - y0, dx = fx - x0;
                    const float *p = x + c * H * W;
                    ref[(c * OH + i) * OW + j] = linear ? (1 - dy) * ((1 - dx) * p[y0 * W + x0] + dx * p[y0 * W + x1]) +
                                                              dy * ((1 - dx) * p[y1 * W + x0] + dx * p[y1 * W + x1])
                                                        : p[y0 * W + x0];
                }
        tgraph g = {0};
        uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 4, DIMS(1, 2, H, W)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 4, DIMS(1, 2, OH, OW));
        tg_node(&g, "resample2d", 1, IDX(xi), 1, IDX(yi), 1, (berth_attr[]){A_STR("mode", linear ? "linear" : "nearest-neighbor")});
        tg_output(&g, yi);
        if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) {
            h_close(linear ? "resample linear" : "resample nearest", got, ref, (size_t)(2 * OH * OW));
            h_same_as_cpu("resample2d vs cpu", &g, NULL, (void *const[]){x}, (void *const[]){got});
        }
    }
    free(x);
}

int main(void) {
    h_start();
    test_conv2d();
    test_depthwise();
    test_conv_kernels();
    test_conv_transpose();
    test_pools();
    test_resample();
    h_stop();
    return check_exit();
}
