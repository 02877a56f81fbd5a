/* conv2d, berth.conv2dEpilogue and convTranspose2d. The kernels work in
 * NCHW with OIHW (conv) or IOHW (transposed) filters; NHWC inputs and
 * other filter layouts are permuted into node scratch first (and the
 * output back). conv2d picks one of five kernels at plan time: a direct
 * loop over a zero-padded copy of each plane for depthwise, a product
 * straight on the input for 1x1 stride-1 unpadded, the direct product of
 * ops_conv_direct.c for other stride-1 filters, a product over the frames
 * of a one-channel signal (an STFT's convolution), and im2col plus a
 * product otherwise (the 1x1 product packs its panels: read through the
 * direct kernel's offsets, rows a plane apart ran the recognizer's 1x1
 * convolutions 40% slower). The products run on berth's packed kernel: the
 * filter is the left-hand side as stored, the input (or its columns) is
 * packed into panels per run, and the bias is fused per output channel.
 * A large result is done in column blocks, each packed straight from the
 * input and multiplied while in cache, so no im2col matrix is written.
 * berth.conv2dEpilogue's program runs on each block of the result as the
 * kernel finishes it. The transposed convolution is sgemm into columns,
 * then a scatter-add (col2im). */
#include <string.h>

#include "ops_conv.h"

/* Maps the filterLayout attribute onto the canonical letter order. */
static berth_status filter_layout(cpu_prep *c, conv_params *cp, const char *canonical, const char *const *allowed) {
    const char *fl;
    berth_status st = bk_opt_string(&c->bk, "filterLayout", canonical, &fl);
    if (st) return st;
    int ok = 0;
    for (int i = 0; allowed[i]; i++) ok |= strcmp(fl, allowed[i]) == 0;
    if (!ok) return bk_fail(&c->bk, "filterLayout '%s' is not supported (%s, %s, %s%s%s)", fl, allowed[0], allowed[1],
                             allowed[2], allowed[3] ? ", " : "", allowed[3] ? allowed[3] : "");
    for (int d = 0; d < 4; d++) cp->fperm[d] = (int)(strchr(fl, canonical[d]) - fl);
    cp->fmoved = strcmp(fl, canonical) != 0;
    const cpu_opnd *f = cpu_in(c, 1);
    if (f->rank == 4)
        for (int d = 0; d < 4; d++) cp->fdims[d] = f->dims[d];
    return BERTH_OK;
}

/* dst = src with dst dim d taken from src dim perm[d]. */
void cpu_permute4(const float *src, const int64_t *sdims, const int *perm, float *dst) {
    int64_t ss[4], dd[4], ds[4];
    ss[3] = 1;
    for (int d = 2; d >= 0; d--) ss[d] = ss[d + 1] * sdims[d + 1];
    for (int d = 0; d < 4; d++) dd[d] = sdims[perm[d]], ds[d] = ss[perm[d]];
    size_t at = 0;
    for (int64_t a = 0; a < dd[0]; a++)
        for (int64_t b = 0; b < dd[1]; b++)
            for (int64_t e = 0; e < dd[2]; e++) {
                const float *row = src + a * ds[0] + b * ds[1] + e * ds[2];
                for (int64_t f = 0; f < dd[3]; f++) dst[at++] = row[f * ds[3]];
            }
}

/* Scratch: [kernel scratch | input as NCHW | filter canonical | output as NCHW]. */
static void conv_scratch(cpu_prep *c, conv_params *cp, size_t kernel_bytes) {
    size_t at = align64(kernel_bytes);
    if (cp->at.nhwc) cp->off_x = at, at += align64(sizeof(float) * (size_t)(cp->at.n * cp->at.c * cp->at.h * cp->at.w));
    if (cp->fmoved) cp->off_f = at, at += align64(sizeof(float) * cpu_in(c, 1)->numel);
    if (cp->at.nhwc) cp->off_y = at, at += align64(sizeof(float) * (size_t)(cp->at.n * cp->at.o * cp->oh * cp->ow));
    c->cn->scratch_bytes = at;
}

static void relayout_in(const conv_params *cp, const berth_plan *p, const cpu_node *nd, const float **x,
                        const float **f, float **y) {
    uint8_t *s = cpu_scratch(p, nd);
    *x = cpu_ptr(p, nd->in[0]);
    *f = cpu_ptr(p, nd->in[1]);
    *y = cpu_ptr(p, nd->out[0]);
    if (cp->at.nhwc) {
        static const int to_nchw[4] = {0, 3, 1, 2};
        int64_t d[4] = {cp->at.n, cp->at.h, cp->at.w, cp->at.c};
        cpu_permute4(*x, d, to_nchw, (float *)(s + cp->off_x));
        *x = (const float *)(s + cp->off_x);
        *y = (float *)(s + cp->off_y);
    }
    if (cp->fmoved) {
        cpu_permute4(*f, cp->fdims, cp->fperm, (float *)(s + cp->off_f));
        *f = (const float *)(s + cp->off_f);
    }
}

static void relayout_out(const conv_params *cp, const berth_plan *p, const cpu_node *nd, const float *y) {
    if (!cp->at.nhwc) return;
    static const int to_nhwc[4] = {0, 2, 3, 1};
    int64_t d[4] = {cp->at.n, cp->at.o, cp->oh, cp->ow};
    cpu_permute4(y, d, to_nhwc, cpu_ptr(p, nd->out[0]));
}

static berth_status conv_bias(cpu_prep *c, conv_params *cp) {
    if (cp->at.bias == CPU_NONE) return BERTH_OK;
    const cpu_opnd *b = &c->plan->ops[cp->at.bias];
    if (b->dtype != BERTH_DTYPE_F32 || b->rank != 1 || b->dims[0] != cp->at.o)
        return bk_fail(&c->bk, "bias: expected float32 [%lld], found %s of %zu elements", (long long)cp->at.o,
                        bk_dtype_name(b->dtype), b->numel);
    return BERTH_OK;
}

static void add_bias(const conv_params *cp, const berth_plan *p, float *y) {
    if (cp->at.bias == CPU_NONE) return;
    const float *b = cpu_ptr(p, cp->at.bias);
    size_t plane = (size_t)(cp->oh * cp->ow);
    for (int64_t n = 0; n < cp->at.n; n++)
        for (int64_t o = 0; o < cp->at.o; o++) {
            float *restrict yp = y + ((size_t)(n * cp->at.o + o)) * plane;
            for (size_t i = 0; i < plane; i++) yp[i] += b[o];
        }
}

/* Row r of the column matrix is (channel, ki, kj) of one group. */
static void im2col_task(void *ctx, size_t r0, size_t r1) {
    const conv_params *cp = ctx;
    for (size_t r = r0; r < r1; r++) {
        int64_t ch = (int64_t)r / (cp->at.kh * cp->at.kw), ki = ((int64_t)r / cp->at.kw) % cp->at.kh, kj = (int64_t)r % cp->at.kw;
        const float *xp = cp->x + ch * cp->at.h * cp->at.w;
        float *dst = cp->col + r * (size_t)(cp->oh * cp->ow);
        for (int64_t oy = 0; oy < cp->oh; oy++) {
            int64_t iy = oy * cp->at.stride[0] - cp->at.pad[0] + ki * cp->at.dil[0];
            float *d = dst + oy * cp->ow;
            if (iy < 0 || iy >= cp->at.h) {
                memset(d, 0, sizeof(float) * (size_t)cp->ow);
                continue;
            }
            for (int64_t ox = 0; ox < cp->ow; ox++) {
                int64_t ix = ox * cp->at.stride[1] - cp->at.pad[2] + kj * cp->at.dil[1];
                d[ox] = (ix >= 0 && ix < cp->at.w) ? xp[iy * cp->at.w + ix] : 0.0f;
            }
        }
    }
}

/* Depthwise convolution works one (batch, channel) plane at a time on a
 * zero-padded copy in the task's scratch slot, so no tap needs a bounds
 * check. At stride 1 and dilation 1 across, the ISA's span kernel sums
 * where there is one (cpu_dw_avx512); the C below sums the bias, then
 * the taps in row-major order, the same on the flat and the row paths. */
#define DW_FLAT 1024 /* floats of one flattened block of output rows, a multiple of 16 */

/* The slot's floats: the padded plane, then room for the flattened sum,
 * which runs in whole vectors and so reads up to 16 + kw - 1 floats past
 * the plane for the columns it drops. */
static size_t dw_slot_floats(const conv_params *cp) {
    size_t ph = (size_t)(cp->at.h + cp->at.pad[0] + cp->at.pad[1]), pw = (size_t)(cp->at.w + cp->at.pad[2] + cp->at.pad[3]);
    return (ph * pw + (size_t)cp->at.kw + 31) & ~(size_t)15;
}

/* n outputs of a KH x KW filter at stride 1 and dilation 1, where output
 * i reads the padded plane from P + i: KH and KW are constants at each
 * call, so the taps unroll and each output is summed in a register. */
static inline void dw_sum(float *restrict y, const float *restrict P, size_t pw, size_t n, const float *restrict w,
                          float b, const int KH, const int KW) {
    const float *r[5]; /* a base per filter row, the columns as displacements */
    for (int ki = 0; ki < KH; ki++) r[ki] = P + (size_t)ki * pw;
    for (size_t i = 0; i < n; i++) {
        float acc = b;
        for (int ki = 0; ki < KH; ki++)
            for (int kj = 0; kj < KW; kj++) acc += w[ki * KW + kj] * r[ki][i + (size_t)kj];
        y[i] = acc;
    }
}

/* Any other filter: the outputs start at the bias and gain one tap per pass. */
static inline void dw_taps(float *restrict y, const float *restrict P, size_t pw, size_t n, const float *restrict w,
                           float b, int64_t kh, int64_t kw, int64_t dh, int64_t dw, int64_t sx) {
    for (size_t i = 0; i < n; i++) y[i] = b;
    for (int64_t ki = 0; ki < kh; ki++)
        for (int64_t kj = 0; kj < kw; kj++) {
            float wv = w[ki * kw + kj];
            const float *r = P + (size_t)(ki * dh) * pw + (size_t)(kj * dw);
            if (sx == 1)
                for (size_t i = 0; i < n; i++) y[i] += wv * r[i];
            else
                for (size_t i = 0; i < n; i++) y[i] += wv * r[i * (size_t)sx];
        }
}

static inline void dw_span(float *restrict y, const float *restrict P, size_t pw, size_t n, const float *restrict w,
                           float b, const conv_params *cp) {
    int unit = cp->at.stride[1] == 1 && cp->at.dil[0] == 1 && cp->at.dil[1] == 1;
    if (unit && cp->dw) cp->dw(y, P, pw, n, w, b, (int)cp->at.kh, (int)cp->at.kw);
    else if (unit && cp->at.kh == 3 && cp->at.kw == 3) dw_sum(y, P, pw, n, w, b, 3, 3);
    else if (unit && cp->at.kh == 5 && cp->at.kw == 5) dw_sum(y, P, pw, n, w, b, 5, 5);
    else dw_taps(y, P, pw, n, w, b, cp->at.kh, cp->at.kw, cp->at.dil[0], cp->at.dil[1], cp->at.stride[1]);
}

/* Planes [t0, t1). A plane whose padded rows are narrow is summed as one
 * flat run over its rows back to back, the columns between rows computed
 * and dropped (a 3 x 24 map is 84 sums in 6 vectors, not 3 rows of a
 * vector and a tail); wide rows, and vertical strides, go row by row.
 * The program runs over the finished planes every DW_FLAT floats or so,
 * while they are still in cache. */
CPU_CLONES static void depthwise_task(void *ctx, size_t t0, size_t t1) {
    const conv_params *cp = ctx;
    size_t pw = (size_t)(cp->at.w + cp->at.pad[2] + cp->at.pad[3]);
    size_t h = (size_t)cp->at.h, w = (size_t)cp->at.w, top = (size_t)cp->at.pad[0], left = (size_t)cp->at.pad[2];
    size_t oh = (size_t)cp->oh, ow = (size_t)cp->ow, plane = oh * ow, sy = (size_t)cp->at.stride[0];
    int flat = sy == 1 && cp->at.stride[1] == 1 && cp->at.dil[0] == 1 && cp->at.dil[1] == 1 && ow < pw && pw <= 64;
    size_t rows = flat ? DW_FLAT / pw : 0;
    int slot = cpu_pool_slot_claim(cp->pool);
    float *P = cp->col + (size_t)slot * cp->block_floats;
    /* the padding is the same for every plane: zeroed once */
    for (size_t i = 0; i < cp->block_floats; i++) P[i] = 0.0f;
    float tmp[DW_FLAT];
    size_t pending = t0; /* the first plane the program has not run on */
    for (size_t t = t0; t < t1; t++) {
        int64_t ch = (int64_t)t % cp->at.c;
        const float *xp = cp->x + t * h * w, *fp = cp->f + ch * cp->at.kh * cp->at.kw;
        float *yp = cp->y + t * plane, b = cp->bv ? cp->bv[ch] : 0.0f;
        for (size_t iy = 0; iy < h; iy++)
            for (size_t j = 0; j < w; j++) P[(top + iy) * pw + left + j] = xp[iy * w + j];
        if (flat) {
            for (size_t oy = 0; oy < oh; oy += rows) {
                size_t r = oh - oy < rows ? oh - oy : rows;
                dw_span(tmp, P + oy * pw, pw, (r * pw + 15) & ~(size_t)15, fp, b, cp);
                for (size_t k = 0; k < r; k++)
                    for (size_t j = 0; j < ow; j++) yp[(oy + k) * ow + j] = tmp[k * pw + j];
            }
        } else {
            for (size_t oy = 0; oy < oh; oy++) dw_span(yp + oy * ow, P + oy * sy * pw, pw, ow, fp, b, cp);
        }
        if (cp->prog && ((t + 1 - pending) * plane >= DW_FLAT || t + 1 == t1)) {
            cpu_program_range(cp->prog, pending * plane, (t + 1 - pending) * plane);
            pending = t + 1;
        }
    }
    cpu_pool_slot_release(cp->pool, slot);
}

/* The program on a block of one (batch, group)'s result the product just
 * wrote: rows are output channels of the group, columns pixels. */
void cpu_conv_post(void *ctx, float *c, size_t ldc, size_t r0, size_t r1, size_t j0, size_t j1) {
    const conv_params *cp = ctx;
    size_t base = (size_t)(c - cp->prog->out); /* where this product's C starts in the result */
    if (j0 == 0 && j1 == ldc && ldc == (size_t)(cp->oh * cp->ow)) { /* whole rows: one range */
        cpu_program_range(cp->prog, base + r0 * ldc, (r1 - r0) * ldc);
        return;
    }
    for (size_t r = r0; r < r1; r++) cpu_program_range(cp->prog, base + r * ldc + j0, j1 - j0);
}

/* Packed panels of the columns [j0, j1) of one (batch, group)'s column
 * matrix (kk rows: channel, ki, kj), built straight from the input: the
 * im2col matrix itself is never written. Past j1 the last panel is 0. */
CPU_CLONES static void pack_cols(const conv_params *cp, const float *x, size_t j0, size_t j1, float *dst) {
    size_t nr = (size_t)cp->isa->nr, kk = (size_t)(cp->at.cg * cp->at.kh * cp->at.kw);
    size_t plane = (size_t)(cp->oh * cp->ow), ow = (size_t)cp->ow;
    int64_t h = cp->at.h, wd = cp->at.w, sx = cp->at.stride[1];
    for (size_t jp = j0; jp < j1; jp += nr) {
        size_t w = j1 - jp < nr ? j1 - jp : nr;
        float *panel = dst + (jp - j0) * kk;
        if (cp->kernel == K_POINTWISE) {
            for (size_t k = 0; k < kk; k++) {
                float *row = panel + k * nr;
                const float *src = x + k * plane + jp;
                for (size_t j = 0; j < w; j++) row[j] = src[j];
                for (size_t j = w; j < nr; j++) row[j] = 0.0f;
            }
            continue;
        }
        /* the panel's columns as segments of output rows, found once for
         * all kk rows: where each starts in the panel, its length, and its
         * first output pixel */
        size_t seg_j[CPU_GEMM_NR_MAX], seg_n[CPU_GEMM_NR_MAX], ns = 0;
        int64_t seg_oy[CPU_GEMM_NR_MAX], seg_ox[CPU_GEMM_NR_MAX];
        for (size_t j = 0; j < w; ns++) {
            size_t col = jp + j, ox0 = col % ow;
            seg_j[ns] = j, seg_oy[ns] = (int64_t)(col / ow), seg_ox[ns] = (int64_t)ox0;
            seg_n[ns] = ow - ox0 < w - j ? ow - ox0 : w - j;
            j += seg_n[ns];
        }
        int64_t ch = 0, ki = 0, kj = 0; /* row k of the column matrix */
        for (size_t k = 0; k < kk; k++) {
            float *row = panel + k * nr;
            const float *xp = x + ch * h * wd;
            for (size_t g = 0; g < ns; g++) {
                int64_t seg = (int64_t)seg_n[g];
                int64_t iy = seg_oy[g] * cp->at.stride[0] - cp->at.pad[0] + ki * cp->at.dil[0];
                float *d = row + seg_j[g];
                if (iy < 0 || iy >= h) {
                    for (int64_t t = 0; t < seg; t++) d[t] = 0.0f;
                    continue;
                }
                const float *xr = xp + iy * wd;
                int64_t ix0 = seg_ox[g] * sx - cp->at.pad[2] + kj * cp->at.dil[1];
                /* the columns whose ix lies in [0, w): [lo, hi) of the segment */
                int64_t lo = ix0 >= 0 ? 0 : (-ix0 + sx - 1) / sx;
                int64_t hi = ix0 + (seg - 1) * sx < wd ? seg : (wd - 1 - ix0 < 0 ? 0 : (wd - 1 - ix0) / sx + 1);
                if (lo > seg) lo = seg;
                if (hi < lo) hi = lo;
                for (int64_t t = 0; t < lo; t++) d[t] = 0.0f;
                if (sx == 1) for (int64_t t = lo; t < hi; t++) d[t] = xr[ix0 + t];
                else if (sx == 2) for (int64_t t = lo; t < hi; t++) d[t] = xr[ix0 + 2 * t];
                else for (int64_t t = lo; t < hi; t++) d[t] = xr[ix0 + t * sx];
                for (int64_t t = hi; t < seg; t++) d[t] = 0.0f;
            }
            for (size_t j = w; j < nr; j++) row[j] = 0.0f;
            if (++kj == cp->at.kw) {
                kj = 0;
                if (++ki == cp->at.kh) ki = 0, ch++;
            }
        }
    }
}

/* Column blocks of every (batch, group), in one pool job so that a batch
 * of small images keeps every thread busy: each task packs its block's
 * panels into a scratch slot it holds while it runs and multiplies them
 * while they are in cache, the epilogue (bias, program) applied per
 * tile. cp->src, f_g and y_g are the input, filter and result of batch
 * item 0, group 0. */
static void block_task(void *ctx, size_t b0, size_t b1) {
    const conv_params *cp = ctx;
    size_t plane = (size_t)(cp->oh * cp->ow), kk = (size_t)(cp->at.cg * cp->at.kh * cp->at.kw);
    size_t blocks = (plane + cp->block_cols - 1) / cp->block_cols, groups = (size_t)cp->at.groups;
    size_t og = (size_t)cp->at.og, plane_in = (size_t)(cp->at.h * cp->at.w);
    int slot = cpu_pool_slot_claim(cp->pool);
    float *mine = cp->pack + (size_t)slot * cp->block_floats;
    for (size_t t = b0; t < b1; t++) {
        size_t ng = t / blocks, blk = t % blocks, g = ng % groups, n = ng / groups;
        size_t j0 = blk * cp->block_cols, j1 = j0 + cp->block_cols < plane ? j0 + cp->block_cols : plane;
        cpu_gemm_epi epi = *cp->epi;
        if (epi.bias) epi.bias += g * og;
        pack_cols(cp, cp->src + (n * (size_t)cp->at.c + g * (size_t)cp->at.cg) * plane_in, j0, j1, mine);
        cpu_gemm(NULL, cp->isa, og, j1 - j0, kk, cp->f_g + g * og * kk, kk, mine,
                 cp->y_g + (n * (size_t)cp->at.o + g * og) * plane + j0, plane, &epi);
    }
    cpu_pool_slot_release(cp->pool, slot);
}

/* K_FRAMES: frame j of a one-row, one-channel image is the kw floats at
 * x + j * stride, so the frames are the rows of a matrix read in place
 * (row stride: the stride) and the product with the packed filter gives
 * the result as [frames, filters] in scratch, transposed into place 16
 * frames at a time (their rows stay in L1 while the filters pass). */
CPU_CLONES static void frames_run(const conv_params *cp, berth_plan *p, const cpu_node *nd, const float *x, float *y) {
    size_t ow = (size_t)cp->ow, o = (size_t)cp->at.o, kw = (size_t)cp->at.kw, sx = (size_t)cp->at.stride[1];
    float *t = (float *)cpu_scratch(p, nd);
    cpu_gemm_epi epi = {.bias = cp->at.bias != CPU_NONE ? (const float *)cpu_ptr(p, cp->at.bias) : NULL};
    for (int64_t n = 0; n < cp->at.n; n++) {
        float *yn = y + (size_t)n * o * ow;
        cpu_gemm(p->dev->pool, cp->isa, ow, o, kw, x + (size_t)(n * cp->at.w), sx, cp->fpack, t, o, &epi);
        for (size_t j0 = 0; j0 < ow; j0 += 16) {
            size_t j1 = j0 + 16 < ow ? j0 + 16 : ow;
            for (size_t f = 0; f < o; f++)
                for (size_t j = j0; j < j1; j++) yn[f * ow + j] = t[j * o + f];
        }
    }
}

/* Binds the program's pointers for this run: input 0 and the output are
 * the convolution's result. */
static void prog_bind(conv_params *cp, const cpu_node *nd, berth_plan *p) {
    if (!cp->prog) return;
    float *y = cpu_ptr(p, nd->out[0]);
    cp->prog->out = y;
    cp->prog->in[0] = y;
    for (uint32_t k = 1; k < cp->prog->prog.n_in; k++) cp->prog->in[k] = cpu_ptr(p, cp->prog_in[k]);
}

/* Panels [p0, p1) of the column matrix of src, one (batch, group)'s input. */
static void pack_task(void *ctx, size_t p0, size_t p1) {
    const conv_params *cp = ctx;
    size_t nr = (size_t)cp->isa->nr, plane = (size_t)(cp->oh * cp->ow), kk = (size_t)(cp->at.cg * cp->at.kh * cp->at.kw);
    size_t j0 = p0 * nr, j1 = p1 * nr < plane ? p1 * nr : plane;
    pack_cols(cp, cp->src, j0, j1, cp->pack + j0 * kk);
}

/* Blocks of output columns, each im2col'd into its own panel and
 * multiplied while in cache (cp->block_cols). */
static void run_blocked(conv_params *cp, berth_plan *p, const cpu_node *nd, const float *x, const float *f, float *y) {
    cpu_gemm_epi epi = {.bias = cp->at.bias != CPU_NONE ? (const float *)cpu_ptr(p, cp->at.bias) : NULL,
                        .bias_rows = 1, .post = cp->prog ? cpu_conv_post : NULL, .post_ctx = cp};
    cp->src = x;
    cp->pack = (float *)(cpu_scratch(p, nd) + cp->off_pack);
    cp->f_g = f;
    cp->y_g = y;
    cp->epi = &epi;
    cp->pool = p->dev->pool;
    size_t blocks = ((size_t)(cp->oh * cp->ow) + cp->block_cols - 1) / cp->block_cols;
    cpu_pool_for(p->dev->pool, (size_t)(cp->at.n * cp->at.groups) * blocks, 1, block_task, cp);
}

/* One product per image and group: panels packed straight from the
 * input for berth's kernels, else im2col (K_GEMM) and the BLAS product
 * (whose bias add_bias puts on after). */
static void run_per_group(conv_params *cp, berth_plan *p, const cpu_node *nd, const float *x, const float *f,
                          float *y) {
    int64_t plane_in = cp->at.h * cp->at.w, plane_out = cp->oh * cp->ow, kk = cp->at.cg * cp->at.kh * cp->at.kw;
    for (int64_t n = 0; n < cp->at.n; n++)
        for (int64_t g = 0; g < cp->at.groups; g++) {
            const float *xg = x + (n * cp->at.c + g * cp->at.cg) * plane_in;
            const float *b = xg;
            cpu_gemm_epi epi = {.bias = cp->at.bias != CPU_NONE ? (const float *)cpu_ptr(p, cp->at.bias) + g * cp->at.og : NULL,
                                .bias_rows = 1, .post = cp->prog ? cpu_conv_post : NULL, .post_ctx = cp};
            if (cp->isa) { /* panels packed straight from the input */
                size_t panels = ((size_t)plane_out + (size_t)cp->isa->nr - 1) / (size_t)cp->isa->nr;
                cp->src = xg;
                cp->pack = (float *)(cpu_scratch(p, nd) + cp->off_pack);
                cpu_pool_for(p->dev->pool, panels, 4, pack_task, cp);
                cpu_gemm(p->dev->pool, cp->isa, (size_t)cp->at.og, (size_t)plane_out, (size_t)kk, f + g * cp->at.og * kk,
                         (size_t)kk, cp->pack, y + (n * cp->at.o + g * cp->at.og) * plane_out, (size_t)plane_out, &epi);
                continue;
            }
            if (cp->kernel == K_GEMM) {
                cp->x = xg;
                cpu_pool_for(p->dev->pool, (size_t)kk, 1, im2col_task, cp);
                b = cp->col;
            }
            cpu_matmul_f32(p, 0, 0, cp->at.og, plane_out, kk, 1.0f, f + g * cp->at.og * kk, kk, b, plane_out, 0.0f,
                           y + (n * cp->at.o + g * cp->at.og) * plane_out, plane_out);
        }
}

static void conv_exec(const cpu_node *nd, berth_plan *p) {
    conv_params *cp = nd->params;
    const float *x, *f;
    float *y;
    relayout_in(cp, p, nd, &x, &f, &y);
    cp->f = f;
    cp->y = y;
    prog_bind(cp, nd, p);
    cpu_program *prog = cp->prog;
    int as_it_goes = prog && !cp->at.nhwc && (cp->kernel == K_DEPTHWISE || cp->isa);
    if (!as_it_goes) cp->prog = NULL; /* the kernels see none; it runs at the end */
    if (cp->kernel == K_DEPTHWISE) {
        cp->x = x;
        cp->col = (float *)cpu_scratch(p, nd);
        cp->bv = cp->at.bias != CPU_NONE ? cpu_ptr(p, cp->at.bias) : NULL;
        cp->pool = p->dev->pool;
        cpu_pool_for(p->dev->pool, (size_t)(cp->at.n * cp->at.c), 1, depthwise_task, cp);
        relayout_out(cp, p, nd, y);
        cp->prog = prog;
        if (prog && !as_it_goes) cpu_program_run(p->dev->pool, prog);
        return;
    }
    if (cp->kernel == K_FRAMES) { /* no relayout: NCHW and OIHW only */
        frames_run(cp, p, nd, x, y);
        cp->prog = prog;
        if (prog) cpu_program_run(p->dev->pool, prog);
        return;
    }
    if (cp->kernel == K_DIRECT) {
        cpu_conv_direct_run(cp, p, nd, x, f, y);
        relayout_out(cp, p, nd, y);
        cp->prog = prog;
        return;
    }
    cp->col = (float *)cpu_scratch(p, nd);
    if (cp->block_cols) {
        run_blocked(cp, p, nd, x, f, y);
        relayout_out(cp, p, nd, y);
        cp->prog = prog;
        return;
    }
    run_per_group(cp, p, nd, x, f, y);
    if (!cp->isa) add_bias(cp, p, y);
    relayout_out(cp, p, nd, y);
    cp->prog = prog;
    /* a program the kernels could not run as they went (an nhwc result
     * is relaid after them; OpenBLAS adds the bias after its product)
     * runs on the final result */
    if (prog && !as_it_goes) cpu_program_run(p->dev->pool, prog);
}

static berth_status conv_shapes(cpu_prep *c, conv_params *cp, int transposed) {
    const cpu_opnd *fo = cpu_in(c, 1);
    int64_t fd[4]; /* the filter's dims in canonical order (oihw or iohw) */
    for (int d = 0; d < 4; d++) fd[d] = fo->dims[cp->fperm[d]];
    return bk_conv_geom(&c->bk, fd, transposed, &cp->at);
}

/* conv2d's plan-time work; params of `bytes` (a conv_params first). */
static berth_status conv_prep(cpu_prep *c, size_t bytes) {
    berth_status st;
    conv_params *cp = cpu_params(c, bytes);
    if (!cp) return BERTH_ERR_NOMEM;
    static const char *const layouts[] = {"oihw", "hwio", "ohwi", "ihwo", NULL};
    if ((st = bk_param_conv(&c->bk, &cp->at)) || (st = filter_layout(c, cp, "oihw", layouts))) return st;
    if ((st = conv_shapes(c, cp, 0)) || (st = conv_bias(c, cp))) return st;
    int64_t eh = cp->at.dil[0] * (cp->at.kh - 1) + 1, ew = cp->at.dil[1] * (cp->at.kw - 1) + 1;
    int64_t ph = cp->at.h + cp->at.pad[0] + cp->at.pad[1], pw = cp->at.w + cp->at.pad[2] + cp->at.pad[3];
    if (ph < eh || pw < ew) return bk_fail(&c->bk, "the padded input is smaller than the dilated filter");
    cp->oh = (ph - eh) / cp->at.stride[0] + 1;
    cp->ow = (pw - ew) / cp->at.stride[1] + 1;
    size_t kernel_bytes = 0;
    if (cp->at.cg == 1 && cp->at.og == 1) {
        cp->kernel = K_DEPTHWISE;
        cp->block_floats = dw_slot_floats(cp);
        cp->dw = c->plan->dev->gemm->dw;
        kernel_bytes = sizeof(float) * cp->block_floats * (size_t)cpu_pool_threads(c->plan->dev->pool);
    }
    else if (cp->at.kh == 1 && cp->at.kw == 1 && cp->at.stride[0] == 1 && cp->at.stride[1] == 1 && !cp->at.pad[0] && !cp->at.pad[1] &&
             !cp->at.pad[2] && !cp->at.pad[3])
        cp->kernel = K_POINTWISE;
    else {
        cp->kernel = K_GEMM;
        kernel_bytes = align64(sizeof(float) * (size_t)(cp->at.cg * cp->at.kh * cp->at.kw * cp->oh * cp->ow));
    }
    /* A filter of fewer than four rows per group would fill a tile mostly
     * with padding: OpenBLAS does those. */
    if (cp->kernel != K_DEPTHWISE && cp->at.og >= 4) cp->isa = c->plan->dev->gemm;
    /* an unpadded one-channel row cut into at least a tile's rows of
     * frames, with an uploaded filter to pack once */
    const berth_operand *fo = &c->g->operands[c->node->inputs[1]];
    int frames = cp->isa && cp->kernel == K_GEMM && cp->at.c == 1 && cp->at.groups == 1 && cp->at.h == 1 &&
                 cp->at.kh == 1 && cp->at.dil[1] == 1 && !cp->at.pad[2] && !cp->at.pad[3] && !cp->at.pad[0] &&
                 !cp->at.pad[1] && !cp->at.nhwc && !cp->fmoved && fo->kind == BERTH_OPERAND_WEIGHT && c->plan->w &&
                 cp->ow >= cp->isa->mr && 2 * cp->at.o >= cp->isa->nr;
    if (frames) {
        cp->kernel = K_FRAMES;
        cp->fpack = cpu_weight_packed(c->plan->w, fo->weight, 1, (size_t)cp->at.kw, (size_t)cp->at.o, c->err);
        if (!cp->fpack) return BERTH_ERR_NOMEM;
        c->cn->packed_in |= 1u << 1; /* the filter is never read as uploaded */
        kernel_bytes = sizeof(float) * (size_t)(cp->ow * cp->at.o);
    } else if (cp->isa && cp->kernel == K_GEMM && cp->at.stride[0] == 1 && cp->at.stride[1] == 1) {
        /* stride 1 with more than one tap reads the padded input directly */
        cp->kernel = K_DIRECT;
        kernel_bytes = cpu_conv_direct_prep(cp, cpu_pool_threads(c->plan->dev->pool));
    } else if (cp->isa) {
        size_t kk = (size_t)(cp->at.cg * cp->at.kh * cp->at.kw), plane = (size_t)(cp->oh * cp->ow);
        size_t threads = (size_t)cpu_pool_threads(c->plan->dev->pool);
        /* A large result, or a batch of small ones, is done in blocks of
         * columns, each packed from the input and multiplied while in
         * cache, so neither the im2col matrix nor a packed copy of all of
         * it is written; with enough blocks for every thread. Fewer blocks
         * than that: one product per image, split over the pool by rows
         * (the classifier's 1x1 convolutions at batch 8 ran on one thread
         * as eight such products). */
        size_t cols = (size_t)cp->isa->nr * (256 / (size_t)cp->isa->nr);
        size_t blocks = (size_t)(cp->at.n * cp->at.groups) * ((plane + cols - 1) / cols);
        if (plane >= cols * threads * 2 || blocks >= threads * 4) {
            cp->block_cols = cols;
            cp->block_floats = cols * kk;
            kernel_bytes = 0; /* no im2col matrix */
            cp->off_pack = 0;
            kernel_bytes += sizeof(float) * cp->block_floats * threads;
        } else { /* the panels, packed from the input: no im2col matrix */
            cp->off_pack = 0;
            kernel_bytes = sizeof(float) * cpu_gemm_packed_floats(cp->isa, kk, plane);
        }
    }
    conv_scratch(c, cp, kernel_bytes);
    c->cn->exec = conv_exec;
    return BERTH_OK;
}

berth_status cpu_prep_conv2d(cpu_prep *c) { return conv_prep(c, sizeof(conv_params)); }

/* conv2d with a program on its result (see conv_exec), which lives in
 * the node's params after the convolution's. */
typedef struct conv_epi_params {
    conv_params conv;
    cpu_program prog;
} conv_epi_params;

berth_status cpu_prep_conv2d_epilogue(cpu_prep *c) {
    berth_status st = conv_prep(c, sizeof(conv_epi_params));
    if (st) return st;
    conv_epi_params *ep = c->cn->params;
    conv_params *cp = &ep->conv;
    cpu_program *pp = &ep->prog;
    if ((st = bk_param_conv_epilogue(&c->bk, &pp->prog)) || (st = cpu_program_prep(c, pp))) return st;
    pp->in_place = 1;
    const berth_attr *a = bk_opt_find(&c->bk, "epilogueInputs");
    for (uint32_t k = 1; k < pp->prog.n_in; k++) cp->prog_in[k] = (uint32_t)a->ints[k - 1];
    cp->prog = pp;
    return BERTH_OK;
}

/* ---- convTranspose2d ---- */

static void convt_exec(const cpu_node *nd, berth_plan *p) {
    conv_params *cp = nd->params;
    const float *x, *f;
    float *y;
    relayout_in(cp, p, nd, &x, &f, &y);
    float *col = (float *)cpu_scratch(p, nd);
    int64_t plane_in = cp->at.h * cp->at.w, plane_out = cp->oh * cp->ow, rows = cp->at.og * cp->at.kh * cp->at.kw;
    memset(y, 0, sizeof(float) * (size_t)(cp->at.n * cp->at.o * plane_out));
    for (int64_t n = 0; n < cp->at.n; n++)
        for (int64_t g = 0; g < cp->at.groups; g++) {
            /* col[og*kh*kw, h*w] = W_g^T @ X_g, W_g being [cg, og*kh*kw] */
            cpu_matmul_f32(p, 1, 0, rows, plane_in, cp->at.cg, 1.0f, f + g * cp->at.cg * rows, rows,
                           x + (n * cp->at.c + g * cp->at.cg) * plane_in, plane_in, 0.0f, col, plane_in);
            float *yg = y + (n * cp->at.o + g * cp->at.og) * plane_out;
            for (int64_t r = 0; r < rows; r++) {
                int64_t o = r / (cp->at.kh * cp->at.kw), ki = (r / cp->at.kw) % cp->at.kh, kj = r % cp->at.kw;
                const float *cr = col + r * plane_in;
                float *yo = yg + o * plane_out;
                for (int64_t iy = 0; iy < cp->at.h; iy++) {
                    int64_t oy = iy * cp->at.stride[0] - cp->at.pad[0] + ki * cp->at.dil[0];
                    if (oy < 0 || oy >= cp->oh) continue;
                    for (int64_t ix = 0; ix < cp->at.w; ix++) {
                        int64_t ox = ix * cp->at.stride[1] - cp->at.pad[2] + kj * cp->at.dil[1];
                        if (ox >= 0 && ox < cp->ow) yo[oy * cp->ow + ox] += cr[iy * cp->at.w + ix];
                    }
                }
            }
        }
    add_bias(cp, p, y);
    relayout_out(cp, p, nd, y);
}

berth_status cpu_prep_conv_transpose2d(cpu_prep *c) {
    berth_status st;
    conv_params *cp = cpu_params(c, sizeof *cp);
    if (!cp) return BERTH_ERR_NOMEM;
    static const char *const layouts[] = {"iohw", "hwoi", "ohwi", NULL};
    if ((st = bk_param_conv(&c->bk, &cp->at)) || (st = filter_layout(c, cp, "iohw", layouts))) return st;
    if ((st = conv_shapes(c, cp, 1)) || (st = conv_bias(c, cp))) return st;
    int64_t op[2] = {0, 0}, sizes[2];
    int n_op, n_sz;
    if ((st = bk_opt_ints(&c->bk, "outputPadding", op, 2, &n_op)) || (st = bk_opt_ints(&c->bk, "outputSizes", sizes, 2, &n_sz)))
        return st;
    if (n_op >= 0 && n_op != 2) return bk_fail(&c->bk, "outputPadding: expected 2 values, found %d", n_op);
    if (n_op < 0) op[0] = op[1] = 0;
    int64_t base_h = (cp->at.h - 1) * cp->at.stride[0] + cp->at.dil[0] * (cp->at.kh - 1) + 1 - cp->at.pad[0] - cp->at.pad[1];
    int64_t base_w = (cp->at.w - 1) * cp->at.stride[1] + cp->at.dil[1] * (cp->at.kw - 1) + 1 - cp->at.pad[2] - cp->at.pad[3];
    if (n_sz == 2) {
        if (sizes[0] < base_h || sizes[0] >= base_h + cp->at.stride[0] || sizes[1] < base_w || sizes[1] >= base_w + cp->at.stride[1])
            return bk_fail(&c->bk, "outputSizes [%lld, %lld] are not reachable from [%lld, %lld] with strides [%lld, %lld]",
                            (long long)sizes[0], (long long)sizes[1], (long long)base_h, (long long)base_w,
                            (long long)cp->at.stride[0], (long long)cp->at.stride[1]);
        cp->oh = sizes[0], cp->ow = sizes[1];
    } else {
        cp->oh = base_h + op[0], cp->ow = base_w + op[1];
    }
    if (cp->oh < 1 || cp->ow < 1) return bk_fail(&c->bk, "output spatial size [%lld, %lld] is empty", (long long)cp->oh, (long long)cp->ow);
    conv_scratch(c, cp, sizeof(float) * (size_t)(cp->at.og * cp->at.kh * cp->at.kw * cp->at.h * cp->at.w));
    c->cn->exec = convt_exec;
    return BERTH_OK;
}
