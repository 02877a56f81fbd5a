/* conv2d (im2col, pointwise and depthwise kernels), convTranspose2d,
 * average and max pooling and resample2d against direct loops. */
#include "cpu_harness.h"

typedef struct geo {
    int64_t n, c, h, w, o, kh, kw, groups;
    int64_t pad[4], stride[2], dil[2];
} geo;

static int64_t out_extent(int64_t in, int64_t pb, int64_t pe, int64_t k, int64_t s, int64_t d) {
    return (in + pb + pe - d * (k - 1) - 1) / s + 1;
}

/* Copies a canonical 4-D tensor (letters `from`, e.g. "oihw") into the
 * layout `to` (e.g. "hwio"). */
static void relayout(const float *src, const int64_t *dims, const char *from, const char *to, float *dst) {
    int64_t tdims[4], tstride[4], idx[4];
    for (int k = 0; k < 4; k++) tdims[k] = dims[strchr(from, to[k]) - from];
    tstride[3] = 1;
    for (int k = 2; k >= 0; k--) tstride[k] = tstride[k + 1] * tdims[k + 1];
    size_t n = (size_t)(dims[0] * dims[1] * dims[2] * dims[3]);
    for (size_t i = 0; i < n; i++) {
        h_unravel(i, 4, dims, idx);
        size_t off = 0;
        for (int k = 0; k < 4; k++) off += (size_t)(idx[strchr(from, to[k]) - from] * tstride[k]);
        dst[off] = src[i];
    }
}

static void test_conv_case_layout(geo g, int with_bias, int nhwc, const char *flayout);
static void test_conv_case(geo g, int with_bias) { test_conv_case_layout(g, with_bias, 0, "oihw"); }

static void test_conv_case_layout(geo g, int with_bias, int nhwc, const char *flayout) {
    int64_t oh = out_extent(g.h, g.pad[0], g.pad[1], g.kh, g.stride[0], g.dil[0]);
    int64_t ow = out_extent(g.w, g.pad[2], g.pad[3], g.kw, g.stride[1], g.dil[1]);
    int64_t cg = g.c / g.groups, og = g.o / g.groups;
    size_t nx = (size_t)(g.n * g.c * g.h * g.w), nf = (size_t)(g.o * cg * g.kh * g.kw), ny = (size_t)(g.n * g.o * oh * ow);
    float *x = h_randf(nx), *f = h_randf(nf), *b = h_randf((size_t)g.o), *y = calloc(ny, sizeof(float));
    double *ref = h_zeros(ny);
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t o = 0; o < g.o; o++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double s = with_bias ? b[o] : 0;
                    int64_t grp = o / og;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t ki = 0; ki < g.kh; ki++)
                            for (int64_t kj = 0; kj < g.kw; kj++) {
                                int64_t iy = i * g.stride[0] - g.pad[0] + ki * g.dil[0];
                                int64_t ix = j * g.stride[1] - g.pad[2] + kj * g.dil[1];
                                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                                s += (double)x[((n * g.c + grp * cg + ci) * g.h + iy) * g.w + ix] *
                                     f[((o * cg + ci) * g.kh + ki) * g.kw + kj];
                            }
                    ref[((n * g.o + o) * oh + i) * ow + j] = s;
                }
    int64_t xd[4] = {g.n, g.c, g.h, g.w}, fd[4] = {g.o, cg, g.kh, g.kw}, yd[4] = {g.n, g.o, oh, ow}, sd[4];
    float *xs = malloc(nx * 4), *fs = malloc(nf * 4), *ys = malloc(ny * 4);
    relayout(x, xd, "nchw", nhwc ? "nhwc" : "nchw", xs);
    relayout(f, fd, "oihw", flayout, fs);
    tgraph t = {0};
    for (int k = 0; k < 4; k++) sd[k] = xd[strchr("nchw", (nhwc ? "nhwc" : "nchw")[k]) - "nchw"];
    uint32_t xi = tg_input(&t, "x", BERTH_DTYPE_F32, 4, sd);
    for (int k = 0; k < 4; k++) sd[k] = fd[strchr("oihw", flayout[k]) - "oihw"];
    uint32_t fi = tg_const(&t, "f", BERTH_DTYPE_F32, 4, sd, fs, nf * 4);
    uint32_t bi = tg_const(&t, "b", BERTH_DTYPE_F32, 1, DIMS(g.o), b, (size_t)g.o * 4);
    uint32_t yi = tg_value(&t, "y", BERTH_DTYPE_F32, 4, nhwc ? DIMS(g.n, oh, ow, g.o) : yd);
    berth_attr attrs[] = {
        A_INTS("padding", 4, g.pad[0], g.pad[1], g.pad[2], g.pad[3]), A_INTS("strides", 2, g.stride[0], g.stride[1]),
        A_INTS("dilations", 2, g.dil[0], g.dil[1]), A_INT("groups", g.groups), A_STR("inputLayout", nhwc ? "nhwc" : "nchw"),
        A_STR("filterLayout", flayout), A_OPND("bias", bi)};
    tg_node(&t, "conv2d", 2, IDX(xi, fi), 1, IDX(yi), with_bias ? 7 : 6, attrs);
    tg_output(&t, yi);
    if (h_ok(&t, (void *[]){xs}, (void *[]){ys})) {
        /* bring the result back to NCHW to compare */
        int64_t got_dims[4] = {g.n, nhwc ? oh : g.o, nhwc ? ow : oh, nhwc ? g.o : ow};
        relayout(ys, got_dims, nhwc ? "nhwc" : "nchw", "nchw", y);
        h_close(nhwc || strcmp(flayout, "oihw") ? "conv2d relaid" : "conv2d", y, ref, ny);
    }
    free(x), free(f), free(b), free(y), free(ref), free(xs), free(fs), free(ys);
}

/* Depthwise convolutions, on the ISA's span kernel where it has one and
 * on the vectorized C (run again with isa = generic). */
static void test_depthwise(void) {
    /* strided and dilated (a pass per tap) */
    test_conv_case((geo){2, 5, 8, 7, 5, 3, 3, 5, {1, 1, 2, 0}, {2, 2}, {1, 1}}, 1);
    test_conv_case((geo){1, 4, 9, 12, 4, 3, 3, 4, {2, 2, 2, 2}, {1, 1}, {2, 2}}, 1);
    /* narrow maps, summed flat over the padded rows: 5x5 on 3 x 24 maps;
     * 3x3 on 40 rows of 62, in three blocks of rows; 3x5 with uneven padding */
    test_conv_case((geo){2, 12, 3, 24, 12, 5, 5, 12, {2, 2, 2, 2}, {1, 1}, {1, 1}}, 1);
    test_conv_case((geo){1, 3, 40, 60, 3, 3, 3, 3, {1, 1, 1, 1}, {1, 1}, {1, 1}}, 0);
    test_conv_case((geo){1, 4, 6, 10, 4, 3, 5, 4, {0, 2, 1, 3}, {1, 1}, {1, 1}}, 1);
    /* row by row: wide rows (the classifier's 2 x 96 and 3 x 96 maps; 70
     * and 130 wide, a block of six vectors and a masked tail), and a
     * vertical stride */
    test_conv_case((geo){2, 8, 2, 96, 8, 5, 5, 8, {2, 2, 2, 2}, {1, 1}, {1, 1}}, 1);
    test_conv_case((geo){1, 4, 9, 70, 4, 5, 5, 4, {2, 2, 2, 2}, {1, 1}, {1, 1}}, 1);
    test_conv_case((geo){1, 3, 4, 130, 3, 3, 3, 3, {1, 1, 1, 1}, {1, 1}, {1, 1}}, 0);
    test_conv_case((geo){2, 6, 9, 24, 6, 5, 5, 6, {2, 2, 2, 2}, {2, 1}, {1, 1}}, 1);
}

static void test_conv(void) {
    /* im2col: padding, strides, dilations, groups, bias */
    test_conv_case((geo){2, 4, 9, 8, 6, 3, 2, 2, {1, 2, 0, 1}, {2, 1}, {1, 2}}, 1);
    test_conv_case((geo){1, 3, 7, 7, 5, 3, 3, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}}, 0);
    /* pointwise */
    test_conv_case((geo){2, 6, 5, 4, 8, 1, 1, 1, {0, 0, 0, 0}, {1, 1}, {1, 1}}, 1);
    test_conv_case((geo){1, 6, 5, 4, 4, 1, 1, 2, {0, 0, 0, 0}, {1, 1}, {1, 1}}, 0);
    test_depthwise();
    /* NHWC input and every filter layout, on each kernel */
    static const char *const fls[] = {"oihw", "hwio", "ohwi", "ihwo"};
    for (int k = 0; k < 4; k++) {
        test_conv_case_layout((geo){2, 4, 9, 8, 6, 3, 2, 2, {1, 2, 0, 1}, {2, 1}, {1, 2}}, 1, k % 2, fls[k]);
        test_conv_case_layout((geo){2, 6, 5, 4, 8, 1, 1, 1, {0, 0, 0, 0}, {1, 1}, {1, 1}}, 1, 1, fls[k]);
        test_conv_case_layout((geo){2, 5, 8, 7, 5, 3, 3, 5, {1, 1, 2, 0}, {2, 2}, {1, 1}}, 0, 1, fls[k]);
    }
    /* im2col on berth's kernel, the panels packed from the input: stride
     * 2 over 7-wide rows (a panel spans several rows), stride 3 with
     * dilation and uneven padding, and the classifier's first layer at
     * batch 2 (in column blocks) */
    test_conv_case((geo){2, 3, 11, 13, 8, 3, 3, 1, {1, 1, 1, 1}, {2, 2}, {1, 1}}, 1);
    test_conv_case((geo){1, 4, 14, 15, 6, 3, 2, 1, {1, 0, 2, 1}, {3, 3}, {2, 1}}, 0);
    test_conv_case((geo){2, 3, 48, 192, 16, 3, 3, 1, {1, 1, 1, 1}, {2, 2}, {1, 1}}, 1);
    /* large enough to split the product over the pool */
    test_conv_case((geo){1, 16, 20, 20, 32, 3, 3, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}}, 1);
    /* the direct kernel: a batch of 3 on 2 threads in one pass, unpadded
     * (the input copied whole); a batch of 4, an image per task, padded on
     * the width only, as the speech models' 3x1 and 1x3 filters are */
    test_conv_case((geo){3, 8, 10, 12, 12, 3, 1, 1, {0, 0, 0, 0}, {1, 1}, {1, 1}}, 1);
    test_conv_case((geo){4, 24, 9, 32, 24, 1, 3, 1, {0, 0, 1, 1}, {1, 1}, {1, 1}}, 1);
    /* padded images of 1.2 MB: three a pass, then a last pass of two */
    test_conv_case((geo){5, 256, 32, 32, 4, 3, 3, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}}, 1);
    /* an image per task, each image's tiles in 3 groups of 4 channels */
    test_conv_case((geo){6, 12, 7, 9, 12, 3, 3, 3, {1, 1, 1, 1}, {1, 1}, {1, 1}}, 1);
}

static void test_conv_transpose_layout(int nhwc, const char *flayout) {
    geo g = {2, 4, 3, 4, 0, 3, 2, 2, {1, 0, 0, 1}, {2, 3}, {1, 2}};
    int64_t og = 3, cg = g.c / g.groups, op[2] = {1, 2};
    g.o = og * g.groups;
    int64_t oh = (g.h - 1) * g.stride[0] + g.dil[0] * (g.kh - 1) + 1 - g.pad[0] - g.pad[1] + op[0];
    int64_t ow = (g.w - 1) * g.stride[1] + g.dil[1] * (g.kw - 1) + 1 - g.pad[2] - g.pad[3] + op[1];
    size_t nx = (size_t)(g.n * g.c * g.h * g.w), nf = (size_t)(g.c * og * g.kh * g.kw), ny = (size_t)(g.n * g.o * oh * ow);
    float *x = h_randf(nx), *f = h_randf(nf), *b = h_randf((size_t)g.o), *y = calloc(ny, sizeof(float));
    double *ref = h_zeros(ny);
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t o = 0; o < g.o; o++)
            for (int64_t i = 0; i < oh * ow; i++) ref[(n * g.o + o) * oh * ow + i] = b[o];
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t ci = 0; ci < g.c; ci++)
            for (int64_t iy = 0; iy < g.h; iy++)
                for (int64_t ix = 0; ix < g.w; ix++)
                    for (int64_t o = 0; o < og; o++)
                        for (int64_t ki = 0; ki < g.kh; ki++)
                            for (int64_t kj = 0; kj < g.kw; kj++) {
                                int64_t oy = iy * g.stride[0] - g.pad[0] + ki * g.dil[0];
                                int64_t ox = ix * g.stride[1] - g.pad[2] + kj * g.dil[1];
                                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                                int64_t oc = (ci / cg) * og + o;
                                ref[((n * g.o + oc) * oh + oy) * ow + ox] +=
                                    (double)x[((n * g.c + ci) * g.h + iy) * g.w + ix] * f[((ci * og + o) * g.kh + ki) * g.kw + kj];
                            }
    int64_t xd[4] = {g.n, g.c, g.h, g.w}, fd[4] = {g.c, og, g.kh, g.kw}, sx[4], sf[4];
    const char *xl = nhwc ? "nhwc" : "nchw";
    for (int k = 0; k < 4; k++) sx[k] = xd[strchr("nchw", xl[k]) - "nchw"], sf[k] = fd[strchr("iohw", flayout[k]) - "iohw"];
    float *xs = malloc(nx * 4), *fs = malloc(nf * 4), *ys = malloc(ny * 4);
    relayout(x, xd, "nchw", xl, xs);
    relayout(f, fd, "iohw", flayout, fs);
    tgraph t = {0};
    uint32_t xi = tg_input(&t, "x", BERTH_DTYPE_F32, 4, sx);
    uint32_t fi = tg_input(&t, "f", BERTH_DTYPE_F32, 4, sf);
    uint32_t bi = tg_input(&t, "b", BERTH_DTYPE_F32, 1, DIMS(g.o));
    uint32_t yi = tg_value(&t, "y", BERTH_DTYPE_F32, 4, nhwc ? DIMS(g.n, oh, ow, g.o) : DIMS(g.n, g.o, oh, ow));
    tg_node(&t, "convTranspose2d", 2, IDX(xi, fi), 1, IDX(yi), 8,
            (berth_attr[]){A_INTS("padding", 4, 1, 0, 0, 1), A_INTS("strides", 2, 2, 3), A_INTS("dilations", 2, 1, 2),
                           A_INT("groups", 2), A_INTS("outputPadding", 2, 1, 2), A_STR("filterLayout", flayout),
                           A_STR("inputLayout", xl), A_OPND("bias", bi)});
    tg_output(&t, yi);
    if (h_ok(&t, (void *[]){xs, fs, b}, (void *[]){ys})) {
        int64_t got_dims[4] = {g.n, nhwc ? oh : g.o, nhwc ? ow : oh, nhwc ? g.o : ow};
        relayout(ys, got_dims, xl, "nchw", y);
        h_close("convTranspose2d", y, ref, ny);
    }
    free(x), free(f), free(b), free(y), free(ref), free(xs), free(fs), free(ys);
}

static void test_conv_transpose(void) {
    test_conv_transpose_layout(0, "iohw");
    test_conv_transpose_layout(1, "hwoi");
    test_conv_transpose_layout(1, "ohwi");
}

static void test_pool(void) {
    enum { N = 2, C = 3, H = 7, W = 6 };
    float *x = h_randf(N * C * H * W);
    struct { int is_max, ceil; int64_t kh, kw, pad[4], s[2], d[2]; } cases[] = {
        {0, 0, 3, 3, {1, 1, 1, 1}, {2, 2}, {1, 1}}, /* average excludes padding */
        {1, 1, 2, 3, {0, 1, 1, 0}, {2, 2}, {1, 1}}, /* ceil rounding */
        {1, 0, 2, 2, {0, 0, 0, 0}, {1, 1}, {2, 2}}, /* dilations */
        {0, 1, 3, 2, {1, 0, 1, 0}, {3, 2}, {1, 1}},
        /* max without dilation goes by rows: padding on each side, strides 1 and 2 */
        {1, 0, 3, 3, {1, 1, 1, 1}, {1, 1}, {1, 1}},
        {1, 1, 2, 2, {0, 1, 0, 1}, {2, 2}, {1, 1}},
        {1, 0, 1, 3, {0, 0, 2, 2}, {1, 2}, {1, 1}},
        {1, 0, 2, 1, {0, 0, 0, 0}, {2, 1}, {1, 1}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t eh = cases[k].d[0] * (cases[k].kh - 1) + 1, ew = cases[k].d[1] * (cases[k].kw - 1) + 1;
        int64_t sh = H + cases[k].pad[0] + cases[k].pad[1] - eh, sw = W + cases[k].pad[2] + cases[k].pad[3] - ew;
        int64_t oh = (int64_t)(cases[k].ceil ? ceil((double)sh / (double)cases[k].s[0]) : floor((double)sh / (double)cases[k].s[0])) + 1;
        int64_t ow = (int64_t)(cases[k].ceil ? ceil((double)sw / (double)cases[k].s[1]) : floor((double)sw / (double)cases[k].s[1])) + 1;
        size_t ny = (size_t)(N * C * oh * ow);
        float *y = calloc(ny, sizeof(float));
        double *ref = h_zeros(ny);
        for (int64_t pl = 0; pl < N * C; pl++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double acc = cases[k].is_max ? -INFINITY : 0;
                    int cnt = 0;
                    for (int64_t a = 0; a < cases[k].kh; a++)
                        for (int64_t b = 0; b < cases[k].kw; b++) {
                            int64_t iy = i * cases[k].s[0] - cases[k].pad[0] + a * cases[k].d[0];
                            int64_t ix = j * cases[k].s[1] - cases[k].pad[2] + b * cases[k].d[1];
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                            double v = x[(pl * H + iy) * W + ix];
                            acc = cases[k].is_max ? fmax(acc, v) : acc + v;
                            cnt++;
                        }
                    ref[(pl * oh + i) * ow + j] = cases[k].is_max ? acc : acc / cnt;
                }
        tgraph t = {0};
        uint32_t xi = tg_input(&t, "x", BERTH_DTYPE_F32, 4, DIMS(N, C, H, W));
        uint32_t yi = tg_value(&t, "y", BERTH_DTYPE_F32, 4, DIMS(N, C, oh, ow));
        tg_node(&t, cases[k].is_max ? "maxPool2d" : "averagePool2d", 1, IDX(xi), 1, IDX(yi), 6,
                (berth_attr[]){A_INTS("windowDimensions", 2, cases[k].kh, cases[k].kw),
                               A_INTS("padding", 4, cases[k].pad[0], cases[k].pad[1], cases[k].pad[2], cases[k].pad[3]),
                               A_INTS("strides", 2, cases[k].s[0], cases[k].s[1]),
                               A_INTS("dilations", 2, cases[k].d[0], cases[k].d[1]),
                               A_STR("roundingType", cases[k].ceil ? "ceil" : "floor"), A_STR("layout", "nchw")});
        tg_output(&t, yi);
        if (h_ok(&t, (void *[]){x}, (void *[]){y})) h_close(cases[k].is_max ? "maxPool2d" : "averagePool2d", y, ref, ny);
        free(y), free(ref);
    }
    /* default window: the whole plane (global average) */
    tgraph t = {0};
    uint32_t xi = tg_input(&t, "x", BERTH_DTYPE_F32, 4, DIMS(N, C, H, W));
    uint32_t yi = tg_value(&t, "y", BERTH_DTYPE_F32, 4, DIMS(N, C, 1, 1));
    tg_node(&t, "averagePool2d", 1, IDX(xi), 1, IDX(yi), 0, NULL);
    tg_output(&t, yi);
    float y[N * C];
    double ref[N * C];
    for (int pl = 0; pl < N * C; pl++) {
        double s = 0;
        for (int i = 0; i < H * W; i++) s += x[pl * H * W + i];
        ref[pl] = s / (H * W);
    }
    if (h_ok(&t, (void *[]){x}, (void *[]){y})) h_close("global average", y, ref, N * C);

    /* NHWC: a 3x3 stride-2 max pool with padding, checked in NCHW */
    {
        enum { OH = 4, OW = 3 };
        float *xs = malloc(sizeof(float) * N * C * H * W), ys[N * OH * OW * C], yc[N * C * OH * OW];
        double r2[N * C * OH * OW];
        relayout(x, DIMS(N, C, H, W), "nchw", "nhwc", xs);
        for (int pl = 0; pl < N * C; pl++)
            for (int i = 0; i < OH; i++)
                for (int j = 0; j < OW; j++) {
                    double m = -INFINITY;
                    for (int a = 0; a < 3; a++)
                        for (int b = 0; b < 3; b++) {
                            int iy = i * 2 - 1 + a, ix = j * 2 - 1 + b;
                            if (iy >= 0 && iy < H && ix >= 0 && ix < W) m = fmax(m, x[(pl * H + iy) * W + ix]);
                        }
                    r2[(pl * OH + i) * OW + j] = m;
                }
        tgraph u = {0};
        xi = tg_input(&u, "x", BERTH_DTYPE_F32, 4, DIMS(N, H, W, C));
        yi = tg_value(&u, "y", BERTH_DTYPE_F32, 4, DIMS(N, OH, OW, C));
        tg_node(&u, "maxPool2d", 1, IDX(xi), 1, IDX(yi), 4,
                (berth_attr[]){A_INTS("windowDimensions", 2, 3, 3), A_INTS("padding", 4, 1, 1, 1, 1),
                               A_INTS("strides", 2, 2, 2), A_STR("layout", "nhwc")});
        tg_output(&u, yi);
        if (h_ok(&u, (void *[]){xs}, (void *[]){ys})) {
            relayout(ys, DIMS(N, OH, OW, C), "nhwc", "nchw", yc);
            h_close("maxPool2d nhwc", yc, r2, N * C * OH * OW);
        }
        free(xs);
    }
    free(x);
}

/* berth.conv2dEpilogue: a program that is one chain on the result
 * (leakyRelu, then max with a scalar) and one with a second input (a
 * residual), against a reference. g is the geometry, padded to keep the
 * map's size. */
static void test_epilogue_case(geo g, const char *what) {
    int64_t cg = g.c / g.groups, og = g.o / g.groups;
    size_t nx = (size_t)(g.n * g.c * g.h * g.w), nf = (size_t)(g.o * cg * g.kh * g.kw), ny = (size_t)(g.n * g.o * g.h * g.w);
    float *x = h_randf(nx), *f = h_randf(nf), *b = h_randf((size_t)g.o), *res = h_randf(ny), *y = calloc(ny, sizeof(float));
    double *conv = h_zeros(ny), *ref = h_zeros(ny);
    x[5] = NAN, x[77] = INFINITY;
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t o = 0; o < g.o; o++)
            for (int64_t i = 0; i < g.h; i++)
                for (int64_t j = 0; j < g.w; j++) {
                    double acc = b[o];
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t ki = 0; ki < g.kh; ki++)
                            for (int64_t kj = 0; kj < g.kw; kj++) {
                                int64_t iy = i - g.pad[0] + ki, ix = j - g.pad[2] + kj;
                                if (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w)
                                    acc += (double)x[((n * g.c + o / og * cg + ci) * g.h + iy) * g.w + ix] *
                                           f[((o * cg + ci) * g.kh + ki) * g.kw + kj];
                            }
                    conv[((n * g.o + o) * g.h + i) * g.w + j] = acc;
                }
    for (int general = 0; general < 2; general++) {
        for (size_t i = 0; i < ny; i++) {
            double v = conv[i] >= 0 ? conv[i] : 0.2 * conv[i];
            v = isnan(v) ? v : v > -0.4 ? v : -0.4;
            ref[i] = general ? v + res[i] : v;
        }
        tgraph t = {0};
        uint32_t xi = tg_input(&t, "x", BERTH_DTYPE_F32, 4, DIMS(g.n, g.c, g.h, g.w));
        uint32_t ri = tg_input(&t, "res", BERTH_DTYPE_F32, 4, DIMS(g.n, g.o, g.h, g.w));
        uint32_t fi = tg_const(&t, "f", BERTH_DTYPE_F32, 4, DIMS(g.o, cg, g.kh, g.kw), f, nf * 4);
        uint32_t bi = tg_const(&t, "b", BERTH_DTYPE_F32, 1, DIMS(g.o), b, (size_t)g.o * 4);
        uint32_t yi = tg_value(&t, "y", BERTH_DTYPE_F32, 4, DIMS(g.n, g.o, g.h, g.w));
        berth_attr attrs[] = {A_INTS("padding", 4, g.pad[0], g.pad[1], g.pad[2], g.pad[3]), A_INT("groups", g.groups),
                              A_OPND("bias", bi), A_STR("ops", general ? "leakyRelu max add" : "leakyRelu max"),
                              general ? A_INTS("steps", 6, 0, -1, 2, -2, 3, 1) : A_INTS("steps", 4, 0, -1, 1, -2),
                              A_FLOATS("constants", 2, 0.2, -0.4),
                              {.key = "epilogueInputs", .type = BERTH_ATTR_OPERANDS, .count = 1, .ints = (const int64_t[]){ri}}};
        tg_node(&t, "berth.conv2dEpilogue", 2, IDX(xi, fi), 1, IDX(yi), general ? 7 : 6, attrs);
        tg_output(&t, yi);
        if (h_ok(&t, (void *[]){x, res}, (void *[]){y})) {
            char name[96];
            snprintf(name, sizeof name, "conv2dEpilogue %s (%s)", what, general ? "general" : "chain");
            h_close(name, y, ref, ny);
        }
    }
    free(x), free(f), free(b), free(res), free(y), free(conv), free(ref);
}

static void test_conv_epilogue(void) {
    /* the direct kernel, the chain on each tile before it is stored, an
     * image per task and a batch in one pass; 20 channels, so a tile of
     * rows is computed twice where 12 do not divide them */
    test_epilogue_case((geo){2, 6, 9, 37, 20, 1, 3, 1, {0, 0, 1, 1}, {1, 1}, {1, 1}}, "direct, an image a task");
    test_epilogue_case((geo){3, 6, 9, 37, 20, 1, 3, 1, {0, 0, 1, 1}, {1, 1}, {1, 1}}, "direct, one pass");
    /* depthwise, the program run over a task's finished planes every
     * thousand floats or so: 200 planes of 3 x 24, 25 to a task on two threads */
    test_epilogue_case((geo){1, 200, 3, 24, 200, 3, 3, 200, {1, 1, 1, 1}, {1, 1}, {1, 1}}, "depthwise");
}

/* maxPool2d's windows two wide at stride 2 take a vectorized pass per
 * row (or per task, when the rows of a plane are back to back): wide
 * rows with and without padding, narrow ones, one and two window rows,
 * against a reference where a NaN in the window is the max. */
static void test_pool_pairs(void) {
    enum { N = 2, C = 3, H = 6 };
    struct { int64_t w, kh, sh, pad[4]; } cases[] = {
        {40, 2, 2, {0, 0, 0, 0}}, /* two rows, interior only */
        {40, 2, 2, {0, 1, 1, 1}}, /* padding: edge columns checked */
        {40, 1, 1, {0, 0, 0, 0}}, /* one row: the planes as one run */
        {8, 1, 1, {0, 0, 0, 0}},  /* the same, rows narrower than a vector */
        {41, 1, 1, {0, 0, 0, 0}}, /* an odd width: row by row */
        {40, 1, 1, {1, 0, 1, 1}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t w = cases[k].w, kh = cases[k].kh, sh = cases[k].sh, *pad = cases[k].pad;
        int64_t oh = (H + pad[0] + pad[1] - kh) / sh + 1, ow = (w + pad[2] + pad[3] - 2) / 2 + 1;
        size_t nx = (size_t)(N * C * H * w), ny = (size_t)(N * C * oh * ow);
        float *x = h_randf(nx), *y = calloc(ny, sizeof(float));
        double *ref = h_zeros(ny);
        const float edges[] = {NAN, INFINITY, -INFINITY, -0.0f, NAN};
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) x[(i * 37) % nx] = edges[i];
        for (int64_t pl = 0; pl < N * C; pl++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double m = -INFINITY;
                    for (int64_t a = 0; a < kh; a++)
                        for (int64_t b = 0; b < 2; b++) {
                            int64_t iy = i * sh - pad[0] + a, ix = j * 2 - pad[2] + b;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= w) continue;
                            double v = x[(pl * H + iy) * w + ix];
                            m = isnan(m) || isnan(v) ? NAN : fmax(m, v);
                        }
                    ref[(pl * oh + i) * ow + j] = m;
                }
        tgraph t = {0};
        uint32_t xi = tg_input(&t, "x", BERTH_DTYPE_F32, 4, DIMS(N, C, H, w));
        uint32_t yi = tg_value(&t, "y", BERTH_DTYPE_F32, 4, DIMS(N, C, oh, ow));
        tg_node(&t, "maxPool2d", 1, IDX(xi), 1, IDX(yi), 3,
                (berth_attr[]){A_INTS("windowDimensions", 2, kh, 2), A_INTS("padding", 4, pad[0], pad[1], pad[2], pad[3]),
                               A_INTS("strides", 2, sh, 2)});
        tg_output(&t, yi);
        if (h_ok(&t, (void *[]){x}, (void *[]){y})) h_close("maxPool2d pairs", y, ref, ny);
        free(x), free(y), free(ref);
    }
}

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* A one-channel signal cut into frames (an STFT's convolution) with its
 * filter uploaded, so the filter is packed once and the frames are read
 * in place: [2, 1, 1, 1000] by 40 filters of 64 at stride 24 (40 frames),
 * as conv2d with a bias and as berth.conv2dEpilogue with a chain. */
static void test_frames(void) {
    enum { N = 2, W = 1000, O = 40, KW = 64, S = 24, OW = (W - KW) / S + 1 };
    float *x = h_randf(N * W), *f = h_randf(O * KW), *b = h_randf(O), *y = calloc(N * O * OW, sizeof(float));
    double *ref = h_zeros(N * O * OW);
    x[7] = NAN;
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 1, .total_bytes = 4 * O * KW,
                              .largest_bytes = 4 * O * KW};
    berth_weights *w = NULL;
    berth_error err = {{0}};
    int taken = 0;
    CHECK(cpu.be->upload_begin(cpu.dev, &info, &w, &err) == BERTH_OK);
    berth_weight_desc d = {.name = "f", .id = 0, .dtype = BERTH_DTYPE_F32, .rank = 4, .dims = {O, 1, 1, KW},
                           .bytes = 4 * O * KW};
    CHECK(cpu.be->upload_tensor(w, &d, f, 0, &taken, &err) == BERTH_OK);
    CHECK(cpu.be->upload_end(w, &err) == BERTH_OK);
    for (int fused = 0; fused < 2; fused++) {
        for (int n = 0; n < N; n++)
            for (int o = 0; o < O; o++)
                for (int j = 0; j < OW; j++) {
                    double s = b[o];
                    for (int k = 0; k < KW; k++) s += (double)x[n * W + j * S + k] * f[o * KW + k];
                    if (fused) s = s >= 0 ? s : 0.2 * s, s = isnan(s) ? s : s > -0.4 ? s : -0.4;
                    ref[(n * O + o) * OW + j] = s;
                }
        tgraph t = {0};
        uint32_t xi = tg_input(&t, "x", BERTH_DTYPE_F32, 4, DIMS(N, 1, 1, W));
        uint32_t fi = tg_operand(&t, "f", BERTH_OPERAND_WEIGHT, BERTH_DTYPE_F32, 4, DIMS(O, 1, 1, KW));
        t.ops[fi].weight = 0;
        uint32_t bi = tg_const(&t, "b", BERTH_DTYPE_F32, 1, DIMS(O), b, O * 4);
        uint32_t yi = tg_value(&t, "y", BERTH_DTYPE_F32, 4, DIMS(N, O, 1, OW));
        berth_attr attrs[] = {A_INTS("strides", 2, 1, S), A_OPND("bias", bi), A_STR("ops", "leakyRelu max"),
                              A_INTS("steps", 4, 0, -1, 1, -2), A_FLOATS("constants", 2, 0.2, -0.4)};
        tg_node(&t, fused ? "berth.conv2dEpilogue" : "conv2d", 2, IDX(xi, fi), 1, IDX(yi), fused ? 5 : 2, attrs);
        tg_output(&t, yi);
        berth_status st = h_run_w(&t, w, (void *[]){x}, (void *[]){y}, &err);
        CHECK(st == BERTH_OK);
        if (st) fprintf(stderr, "  status %d: %s\n", (int)st, err.msg);
        else h_close(fused ? "conv2dEpilogue over frames" : "conv2d over frames", y, ref, N * O * OW);
    }
    cpu.be->free_weights(w);
    free(x), free(f), free(b), free(y), free(ref);
}

static void test_resample(void) {
    enum { N = 1, C = 2, H = 3, W = 4 };
    float *x = h_randf(N * C * H * W);
    /* nearest, scales [2, 1.5] on [2, 3] -> [6, 6]: src = floor(dst / scale) */
    {
        float y[N * C * 6 * 6];
        double ref[N * C * 6 * 6];
        for (int c = 0; c < C; c++)
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++) {
                    int sy = (int)clampd(floor(i / 2.0), 0, H - 1), sx = (int)clampd(floor(j / 1.5), 0, W - 1);
                    ref[(c * 6 + i) * 6 + j] = x[(c * H + sy) * W + sx];
                }
        tgraph t = {0};
        uint32_t xi = tg_input(&t, "x", BERTH_DTYPE_F32, 4, DIMS(N, C, H, W));
        uint32_t yi = tg_value(&t, "y", BERTH_DTYPE_F32, 4, DIMS(N, C, 6, 6));
        tg_node(&t, "resample2d", 1, IDX(xi), 1, IDX(yi), 2,
                (berth_attr[]){A_STR("mode", "nearest-neighbor"), A_FLOATS("scales", 2, 2.0, 1.5)});
        tg_output(&t, yi);
        if (h_ok(&t, (void *[]){x}, (void *[]){y})) h_close("resample nearest", y, ref, N * C * 36);
    }
    /* linear, sizes [5, 7], axes [1, 2] of a [2, 3, 4, 1]-shaped input (NHWC-like), half-pixel */
    {
        enum { OH = 5, OW = 7 };
        float y[C * OH * OW];
        double ref[C * OH * OW];
        /* x viewed as [2, 3, 4, 1]: n = channel index c, h, w */
        for (int n = 0; n < 2; n++)
            for (int i = 0; i < OH; i++)
                for (int j = 0; j < OW; j++) {
                    double fy = clampd((i + 0.5) * H / OH - 0.5, 0, H - 1), fx = clampd((j + 0.5) * W / OW - 0.5, 0, W - 1);
                    int y0 = (int)fy, x0 = (int)fx, y1 = y0 + 1 < H ? y0 + 1 : y0, x1 = x0 + 1 < W ? x0 + 1 : x0;
                    double dy = fy - y0, dx = fx - x0;
                    const float *p = x + n * H * W;
                    ref[(n * OH + i) * OW + j] = (1 - dy) * ((1 - dx) * p[y0 * W + x0] + dx * p[y0 * W + x1]) +
                                                 dy * ((1 - dx) * p[y1 * W + x0] + dx * p[y1 * W + x1]);
                }
        tgraph t = {0};
        uint32_t xi = tg_input(&t, "x", BERTH_DTYPE_F32, 4, DIMS(2, H, W, 1));
        uint32_t yi = tg_value(&t, "y", BERTH_DTYPE_F32, 4, DIMS(2, OH, OW, 1));
        tg_node(&t, "resample2d", 1, IDX(xi), 1, IDX(yi), 3,
                (berth_attr[]){A_STR("mode", "linear"), A_INTS("sizes", 2, OH, OW), A_INTS("axes", 2, 1, 2)});
        tg_output(&t, yi);
        if (h_ok(&t, (void *[]){x}, (void *[]){y})) h_close("resample linear", y, ref, C * OH * OW);
    }
    free(x);
}

int main(void) {
    if (!h_open(2)) {
        CHECK(0);
        return check_exit();
    }
    test_conv();
    test_conv_transpose();
    test_conv_epilogue();
    test_frames();
    test_pool();
    test_pool_pairs();
    test_resample();
    if (h_reopen("isa", "generic")) {
        test_depthwise();
        test_epilogue_case((geo){1, 200, 3, 24, 200, 3, 3, 200, {1, 1, 1, 1}, {1, 1}, {1, 1}}, "depthwise generic");
    } else {
        CHECK(0);
    }
    h_shutdown();
    return check_exit();
}
