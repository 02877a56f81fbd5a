/* The parameters conv2d's kernels share (ops_conv.c holds the plan-time
 * choice and three kernels, ops_conv_direct.c the direct one). */
#ifndef BERTH_CPU_OPS_CONV_H
#define BERTH_CPU_OPS_CONV_H

#include "cpu_internal.h"

enum { K_GEMM, K_POINTWISE, K_DEPTHWISE, K_DIRECT, K_FRAMES };

typedef struct conv_params {
    int kernel;
    int64_t oh, ow;
    bk_conv_attrs at; /* padding, strides, dilations, groups, bias, NHWC input and output */
    int fperm[4];     /* canonical filter dim d is stored dim fperm[d] */
    int fmoved;       /* the filter is stored in another layout */
    int64_t fdims[4]; /* stored filter dims */
    size_t off_x, off_f, off_y; /* scratch offsets of the relaid copies */
    /* K_GEMM and K_POINTWISE on berth's kernel: the columns (or the input
     * itself) packed into panels at this scratch offset; NULL isa: OpenBLAS */
    const cpu_gemm_isa *isa;
    size_t off_pack;
    cpu_dw_fn dw; /* K_DEPTHWISE at stride 1 and dilation 1: the ISA's kernel, or NULL */
    const float *fpack; /* K_FRAMES: the filter packed as the product's right-hand side */
    /* run-time context for pool tasks */
    const float *x, *f, *src, *bv;
    float *y, *col, *pack;
    /* berth.conv2dEpilogue: the program run on the result (NULL for
     * conv2d), and where the current (batch, group) starts in it */
    cpu_program *prog;
    uint32_t prog_in[BK_EW_MAX_INPUTS]; /* operand of program input k >= 1 */
    /* the blocked path: columns per block, floats of one thread's packed
     * block, and the current (batch, group)'s filter, result and epilogue */
    size_t block_cols, block_floats;
    const float *f_g;
    float *y_g;
    const cpu_gemm_epi *epi;
    cpu_pool *pool;
    /* K_DIRECT: where its offsets, padded filters and padded input lie in
     * scratch, the tiles a task claims, and this run's pointers into them */
    size_t off_tab, off_abuf, off_pad, chunk_tiles;
    size_t fold;      /* batch items padded and run in one pass */
    int per_image;    /* tasks are whole images, each padded into a slot of slot_floats */
    size_t slot_floats;
    size_t pass_grid; /* grid columns of the current pass */
    int in_tile; /* the bias and program (none, or a chain on the result) applied to each tile before its store */
    const float *pad, *abuf;
    const size_t *tab;
} conv_params;

static inline size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

/* The epilogue hook that runs berth.conv2dEpilogue's program on a block
 * of one (batch, group)'s result (rows: channels, columns: pixels). */
void cpu_conv_post(void *ctx, float *c, size_t ldc, size_t r0, size_t r1, size_t j0, size_t j1);

/* The direct kernel (stride 1, more than one tap, og >= 4, on berth's
 * product kernels): its scratch bytes, set at plan time, and its run. */
size_t cpu_conv_direct_prep(conv_params *cp, int threads);
void cpu_conv_direct_run(conv_params *cp, berth_plan *p, const cpu_node *nd, const float *x, const float *f, float *y);

#endif
