/* The direct convolution: stride 1, any filter size, dilation and
 * groups. Each batch item's input is copied once into a zero-padded
 * buffer; the output is then computed on a grid as wide as that buffer
 * (pw columns per row, the last pw - ow of each row dropped), so the
 * input rows a tap reads for 32 consecutive outputs are 32 consecutive
 * floats at a fixed offset: the product kernel reads B straight from the
 * padded input through one table of those offsets, and no column matrix
 * is built or packed. The images of a pass lie back to back within each
 * channel ([channel][image][row][column]), so the grid runs on from one
 * image into the next and the tiles of small late-layer maps fill up
 * (four 12x6 images: 9 tiles, not 12). Tiles of the grid are handed out in small chunks,
 * so every thread takes part in one image and a stalled worker holds up
 * one chunk. The bias and a berth.conv2dEpilogue program that is one
 * chain on the result run on each tile in L1 before it is stored; a
 * program with other inputs runs on each chunk of tiles once all its
 * channels are stored, while it is in cache, as one run per channel
 * rather than one per tile row (its cost is per call as much as per
 * value). */
#include <string.h>

#include "ops_conv.h"

/* The most bytes of padded input that one pass over several images takes. */
#define FOLD_BYTES (4u << 20)

static int64_t pad_h(const conv_params *cp) { return cp->at.h + cp->at.pad[0] + cp->at.pad[1]; }
static int64_t pad_w(const conv_params *cp) { return cp->at.w + cp->at.pad[2] + cp->at.pad[3]; }

/* Floats past the last padded plane that the last tile may read: its
 * columns run up to nr past the grid, and a tap up to a row further. */
static size_t slack(const conv_params *cp) { return (size_t)pad_w(cp) + 2 * (size_t)cp->isa->nr; }

/* The grid of a pass of k images: k - 1 whole padded planes, then the
 * last image's output rows; and the tiles that cover it. */
static size_t grid_end(const conv_params *cp, size_t k) {
    return (k - 1) * (size_t)(pad_h(cp) * pad_w(cp)) + (size_t)cp->oh * (size_t)pad_w(cp);
}
static size_t grid_tiles(const conv_params *cp, size_t k) {
    return (grid_end(cp, k) + (size_t)cp->isa->nr - 1) / (size_t)cp->isa->nr;
}

size_t cpu_conv_direct_prep(conv_params *cp, int threads) {
    size_t kk = (size_t)(cp->at.cg * cp->at.kh * cp->at.kw), mr = (size_t)cp->isa->mr;
    size_t at = 0;
    cp->off_tab = at;
    at += align64(sizeof(size_t) * kk);
    cp->off_abuf = at;
    /* fewer filter rows than a tile has: each group's filter zero-padded to mr rows */
    if ((size_t)cp->at.og < mr) at += align64(sizeof(float) * mr * kk * (size_t)cp->at.groups);
    cp->off_pad = at;
    size_t image = (size_t)(cp->at.c * pad_h(cp) * pad_w(cp)), n = (size_t)cp->at.n, th = (size_t)threads;
    /* A batch that splits evenly over the threads (or is large enough
     * that the remainder hardly matters), of images small enough that a
     * slot for each thread fits FOLD_BYTES, runs an image per task: the
     * task pads its image into its own slot and computes all of its
     * tiles, so nothing one thread wrote is read by another. Split by
     * tiles, every tile read channels that the other thread had padded,
     * and the speech embedding's batch of 4 ran no faster on 2 threads
     * than on 1. */
    cp->per_image = th > 1 && n >= th && (n % th == 0 || n >= 4 * th) && th * image * sizeof(float) <= FOLD_BYTES;
    if (cp->per_image) {
        cp->fold = 1;
        cp->slot_floats = align64(sizeof(float) * (image + slack(cp))) / sizeof(float);
        return at + sizeof(float) * cp->slot_floats * th;
    }
    /* Otherwise as many images as fit FOLD_BYTES are padded and run in
     * one pass: one image of a late layer is a tile or two, too little to
     * split among threads, and each pass's two pool hand-offs cost more
     * than a small image's work (16 one-image passes per convolution made
     * a batch of 16 slower on 2 threads than on 1). */
    size_t fit = FOLD_BYTES / (image * sizeof(float));
    cp->fold = fit < 1 ? 1 : fit > n ? n : fit;
    at += align64(sizeof(float) * (cp->fold * image + slack(cp)));
    /* about eight claims per thread for each group, of 1 to 8 tiles */
    size_t per = grid_tiles(cp, cp->fold) / (th * 8);
    cp->chunk_tiles = per < 1 ? 1 : per > 8 ? 8 : per;
    return at;
}

/* Planes [t0, t1) of a pass's input x ([image][channel], as in the
 * input) into the padded buffer pad ([channel][image]). Rows are a few
 * dozen floats and their margins one or two: plain loops, which the
 * compiler vectorizes, cost less there than three library calls a row. */
CPU_CLONES static void pad_planes(const conv_params *cp, const float *x, float *pad, size_t t0, size_t t1) {
    size_t ph = (size_t)pad_h(cp), pw = (size_t)pad_w(cp), w = (size_t)cp->at.w, h = (size_t)cp->at.h;
    size_t top = (size_t)cp->at.pad[0], left = (size_t)cp->at.pad[2], c = (size_t)cp->at.c;
    if (ph == h && pw == w && cp->fold == 1) { /* no padding, one image: laid out so already */
        memcpy(pad + t0 * h * w, x + t0 * h * w, sizeof(float) * (t1 - t0) * h * w);
        return;
    }
    for (size_t t = t0; t < t1; t++) {
        float *P = pad + (t % c * cp->fold + t / c) * ph * pw;
        const float *xp = x + t * h * w;
        if (ph == h && pw == w) {
            memcpy(P, xp, sizeof(float) * h * w);
            continue;
        }
        for (size_t py = 0; py < ph; py++) {
            float *restrict row = P + py * pw;
            if (py < top || py >= top + h) {
                for (size_t k = 0; k < pw; k++) row[k] = 0.0f;
                continue;
            }
            const float *restrict src = xp + (py - top) * w;
            for (size_t k = 0; k < left; k++) row[k] = 0.0f;
            for (size_t k = 0; k < w; k++) row[left + k] = src[k];
            for (size_t k = left + w; k < pw; k++) row[k] = 0.0f;
        }
    }
}

static void pad_task(void *ctx, size_t t0, size_t t1) {
    const conv_params *cp = ctx;
    pad_planes(cp, cp->x, (float *)cp->pad, t0, t1);
}

/* n <= 32 floats to a buffer apart from src: two fixed-size copies that
 * overlap where n is not their size, which compile to vector moves (a
 * loop of unknown length, one per tile row, cost more in its prologue
 * and tail than in its stores); a loop below 4. */
static inline __attribute__((always_inline)) void copy_short(float *restrict dst, const float *restrict src,
                                                             size_t n) {
    _Static_assert(CPU_GEMM_NR_MAX <= 32, "a tile row is at most 32 floats");
    if (n >= 16) {
        memcpy(dst, src, 64);
        memcpy(dst + n - 16, src + n - 16, 64);
    } else if (n >= 8) {
        memcpy(dst, src, 32);
        memcpy(dst + n - 8, src + n - 8, 32);
    } else if (n >= 4) {
        memcpy(dst, src, 16);
        memcpy(dst + n - 4, src + n - 4, 16);
    } else {
        for (size_t k = 0; k < n; k++) dst[k] = src[k];
    }
}

/* Rows [r0, r1) of a tile computed into cbuf (grid columns [j0, j0 + nr))
 * go to rows out_row.. of the group's result yg (in the pass's first
 * image), its valid pixels only: a grid row R is row R % ph of image
 * R / ph, valid below oh. */
CPU_CLONES static void store_tile(const conv_params *cp, float *yg, const float *cbuf, size_t r0, size_t r1, size_t out_row,
                       size_t j0) {
    size_t nr = (size_t)cp->isa->nr, pw = (size_t)pad_w(cp), ph = (size_t)pad_h(cp), ow = (size_t)cp->ow;
    size_t plane = (size_t)(cp->oh * cp->ow), end = cp->pass_grid, image = (size_t)cp->at.o * plane;
    size_t j1 = j0 + nr < end ? j0 + nr : end;
    for (size_t j = j0; j < j1;) {
        size_t R = j / pw, oy = R % ph, ox = j % pw, next = (R + 1) * pw < j1 ? (R + 1) * pw : j1;
        if (ox < ow && oy < (size_t)cp->oh) { /* pieces of up to nr floats */
            size_t n = (next - j) < ow - ox ? next - j : ow - ox, at = R / ph * image + oy * ow + ox;
            for (size_t r = r0; r < r1; r++)
                copy_short(yg + (out_row + r - r0) * plane + at, cbuf + r * nr + (j - j0), n);
        }
        j = next;
    }
}

/* With cp->in_tile, the bias and the program's chain on a tile's rows
 * (channels ch0.. of the group) while it is in L1, before the store:
 * the same steps in the same order as the epilogue over the stored
 * result, without its second sweep over memory. Dropped columns are
 * computed too; they are never stored. */
static void tile_epilogue(const conv_params *cp, const cpu_gemm_epi *epi, float *cbuf, size_t ch0, size_t rows) {
    if (!cp->in_tile) return;
    size_t nr = (size_t)cp->isa->nr;
    if (epi->bias) {
        cpu_gemm_epi bias = {.bias = epi->bias + ch0, .bias_rows = 1};
        cpu_gemm_epilogue(&bias, cbuf, nr, 0, rows, 0, nr);
    }
    if (cp->prog) cpu_chain_apply(cp->prog, cbuf, cbuf, rows * nr);
}

/* The output pixels of one image before its grid column j. */
static size_t pixels_before(const conv_params *cp, size_t j) {
    size_t pw = (size_t)pad_w(cp), ow = (size_t)cp->ow, end = (size_t)cp->oh * pw;
    if (j > end) j = end;
    return j / pw * ow + (j % pw < ow ? j % pw : ow);
}

/* The non-chain epilogue on the pixels of grid columns [j0, j1), image
 * by image: a chunk of tiles covers, in each image it reaches, the
 * pixels between its two ends, one run per channel. */
static void chunk_epilogue(const conv_params *cp, const cpu_gemm_epi *epi, float *yg, size_t j0, size_t j1) {
    size_t plane_p = (size_t)(pad_h(cp) * pad_w(cp)), plane_out = (size_t)(cp->oh * cp->ow);
    for (size_t img = j0 / plane_p; img * plane_p < j1; img++) {
        size_t lo = j0 > img * plane_p ? j0 - img * plane_p : 0, hi = j1 - img * plane_p;
        size_t at0 = pixels_before(cp, lo), at1 = pixels_before(cp, hi);
        if (at1 > at0) cpu_gemm_epilogue(epi, yg + img * (size_t)cp->at.o * plane_out, plane_out, 0, (size_t)cp->at.og, at0, at1);
    }
}

/* Tiles [c0, c1) of group g of a pass: P its padded input, y where its
 * first image's result starts. */
CPU_CLONES static void tiles_run(const conv_params *cp, const float *P, float *y, size_t g, size_t c0, size_t c1) {
    size_t mr = (size_t)cp->isa->mr, nr = (size_t)cp->isa->nr, og = (size_t)cp->at.og;
    size_t kk = (size_t)(cp->at.cg * cp->at.kh * cp->at.kw), plane_p = (size_t)(pad_h(cp) * pad_w(cp));
    size_t plane_out = (size_t)(cp->oh * cp->ow);
    float cbuf[12 * 32] __attribute__((aligned(64))); /* mr * nr of the largest kernel */
    P += g * (size_t)cp->at.cg * cp->fold * plane_p;
    float *yg = y + g * og * plane_out;
    cpu_gemm_epi epi = *cp->epi;
    if (epi.bias) epi.bias += g * og;
    for (size_t tile = c0; tile < c1; tile++) {
        size_t j0 = tile * nr;
        if (og < mr) {
            cp->isa->kernel_ind(kk, cp->abuf + g * mr * kk, kk, P + j0, cp->tab, cbuf, nr);
            tile_epilogue(cp, &epi, cbuf, 0, og);
            store_tile(cp, yg, cbuf, 0, og, 0, j0);
            continue;
        }
        /* the last tile of rows ends at og: rows the one above also
         * computed are dropped */
        for (size_t i = 0; i < og; i += mr) {
            size_t at = i + mr <= og ? i : og - mr;
            cp->isa->kernel_ind(kk, cp->f_g + (g * og + at) * kk, kk, P + j0, cp->tab, cbuf, nr);
            tile_epilogue(cp, &epi, cbuf, at, mr);
            store_tile(cp, yg, cbuf, i - at, mr, i, j0);
        }
    }
    if (!cp->in_tile) chunk_epilogue(cp, &epi, yg, c0 * nr, c1 * nr < cp->pass_grid ? c1 * nr : cp->pass_grid);
}

/* Tasks are (group, chunk of tiles) of the current pass. */
static void direct_task(void *ctx, size_t t0, size_t t1) {
    const conv_params *cp = ctx;
    size_t nr = (size_t)cp->isa->nr, tiles = (cp->pass_grid + nr - 1) / nr;
    size_t chunks = (tiles + cp->chunk_tiles - 1) / cp->chunk_tiles;
    for (size_t t = t0; t < t1; t++) {
        size_t g = t / chunks, c0 = (t % chunks) * cp->chunk_tiles;
        tiles_run(cp, cp->pad, cp->y_g, g, c0, c0 + cp->chunk_tiles < tiles ? c0 + cp->chunk_tiles : tiles);
    }
}

/* Tasks are images, each padded into the task's slot and run whole. */
static void image_task(void *ctx, size_t t0, size_t t1) {
    const conv_params *cp = ctx;
    size_t c = (size_t)cp->at.c, image = c * (size_t)(pad_h(cp) * pad_w(cp));
    size_t tiles = (cp->pass_grid + (size_t)cp->isa->nr - 1) / (size_t)cp->isa->nr;
    int slot = cpu_pool_slot_claim(cp->pool);
    float *P = (float *)cp->pad + (size_t)slot * cp->slot_floats;
    memset(P + image, 0, sizeof(float) * slack(cp));
    for (size_t t = t0; t < t1; t++) {
        pad_planes(cp, cp->x + t * c * (size_t)(cp->at.h * cp->at.w), P, 0, c);
        for (size_t g = 0; g < (size_t)cp->at.groups; g++)
            tiles_run(cp, P, cp->y_g + t * (size_t)(cp->at.o * cp->oh * cp->ow), g, 0, tiles);
    }
    cpu_pool_slot_release(cp->pool, slot);
}

void cpu_conv_direct_run(conv_params *cp, berth_plan *p, const cpu_node *nd, const float *x, const float *f, float *y) {
    uint8_t *s = cpu_scratch(p, nd);
    size_t kk = (size_t)(cp->at.cg * cp->at.kh * cp->at.kw), mr = (size_t)cp->isa->mr, og = (size_t)cp->at.og;
    size_t ph = (size_t)pad_h(cp), pw = (size_t)pad_w(cp), c = (size_t)cp->at.c;
    size_t *tab = (size_t *)(s + cp->off_tab);
    for (size_t k = 0; k < kk; k++) {
        size_t ch = k / (size_t)(cp->at.kh * cp->at.kw), ki = (k / (size_t)cp->at.kw) % (size_t)cp->at.kh;
        size_t kj = k % (size_t)cp->at.kw;
        tab[k] = ch * cp->fold * ph * pw + ki * (size_t)cp->at.dil[0] * pw + kj * (size_t)cp->at.dil[1];
    }
    if (og < mr) {
        float *ab = (float *)(s + cp->off_abuf);
        memset(ab, 0, sizeof(float) * mr * kk * (size_t)cp->at.groups);
        for (size_t g = 0; g < (size_t)cp->at.groups; g++) memcpy(ab + g * mr * kk, f + g * og * kk, sizeof(float) * og * kk);
        cp->abuf = ab;
    }
    float *P = (float *)(s + cp->off_pad);
    cp->pad = P;
    cp->tab = tab;
    cp->f_g = f;
    cpu_gemm_epi epi = {.bias = cp->at.bias != CPU_NONE ? (const float *)cpu_ptr(p, cp->at.bias) : NULL,
                        .bias_rows = 1, .post = cp->prog ? cpu_conv_post : NULL, .post_ctx = cp};
    cp->epi = &epi;
    cp->in_tile = !cp->prog || (cp->prog->chain && cp->prog->chain_in == 0);
    if (cp->per_image) {
        cp->x = x;
        cp->y_g = y;
        cp->pass_grid = grid_end(cp, 1);
        cp->pool = p->dev->pool;
        cpu_pool_for(p->dev->pool, (size_t)cp->at.n, 1, image_task, cp);
        return;
    }
    memset(P + cp->fold * c * ph * pw, 0, sizeof(float) * slack(cp));
    for (size_t n = 0; n < (size_t)cp->at.n; n += cp->fold) {
        /* the last pass may hold fewer; past them the buffer keeps the
         * pass before's images, read only for grid columns dropped */
        size_t k = (size_t)cp->at.n - n < cp->fold ? (size_t)cp->at.n - n : cp->fold;
        size_t chunks = (grid_tiles(cp, k) + cp->chunk_tiles - 1) / cp->chunk_tiles;
        cp->x = x + n * c * (size_t)(cp->at.h * cp->at.w);
        cpu_pool_for(p->dev->pool, k * c, 4, pad_task, cp);
        cp->y_g = y + n * (size_t)(cp->at.o * cp->oh * cp->ow);
        cp->pass_grid = grid_end(cp, k);
        cpu_pool_for(p->dev->pool, (size_t)cp->at.groups * chunks, 1, direct_task, cp);
    }
}
