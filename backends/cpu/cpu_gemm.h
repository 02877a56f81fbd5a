/* berth's own packed matrix product: C[m,n] = A[m,k] @ B[k,n], with B
 * packed into column panels of the kernel's width NR (k rows of NR floats
 * each, zero padded past n), and an epilogue (bias, activation, residual)
 * applied to each tile while it is still in cache. One kernel per
 * instruction set, chosen at open from CPUID (AT_HWCAP on arm64) or the
 * `isa` option; the AVX2 and AVX-512 files are compiled with their own
 * flags and only ever called after the CPUID check; the NEON file needs
 * none (Advanced SIMD is arm64's baseline). */
#ifndef BERTH_CPU_GEMM_H
#define BERTH_CPU_GEMM_H

#include <stddef.h>
#include <stdint.h>

/* One MR x NR tile over kc steps: c = (acc ? c : 0) + a[MR rows, lda] @ b
 * (kc rows of NR floats, 64-byte aligned). Reads exactly MR rows of a. */
typedef void (*cpu_ukernel_fn)(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc,
                               int acc);
/* The same tile with step p of B read from the NR floats at b + off[p]
 * (any alignment): the direct convolution's rows of a padded input, so
 * no column matrix is packed. c is overwritten. */
typedef void (*cpu_ukernel_ind_fn)(size_t kc, const float *a, size_t lda, const float *b, const size_t *off,
                                   float *c, size_t ldc);
/* The tile, also fetching `lines` cache lines from pf into L2, one every
 * 2^shift steps: the next slice of B, spread over the tiles that read
 * this one. A burst of them before each tile stalled on the line fill
 * buffers (8% of the 12-layer encoder's time, in gemm_task). */
typedef void (*cpu_ukernel_pf_fn)(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc,
                                  int acc, const char *pf, size_t lines, unsigned shift);
/* The tile's first `rows` rows only (8 or 4, fewer than MR): reads and
 * writes exactly those rows. */
typedef void (*cpu_ukernel_part_fn)(size_t rows, size_t kc, const float *a, size_t lda, const float *b, float *c,
                                    size_t ldc, int acc);

/* n outputs of one depthwise plane, kh x kw at stride 1 and dilation 1:
 * y[i] = b + sum of w[ki kw + kj] P[ki pw + i + kj]. */
typedef void (*cpu_dw_fn)(float *y, const float *P, size_t pw, size_t n, const float *w, float b, int kh, int kw);

typedef struct cpu_gemm_isa {
    const char *name; /* "avx512", "avx2", "neon", "generic" */
    int mr, nr, kc;   /* tile rows, tile columns (the panel width), k block */
    cpu_ukernel_fn kernel;
    cpu_ukernel_ind_fn kernel_ind;
    cpu_dw_fn dw; /* NULL: the depthwise convolution's vectorized C */
    cpu_ukernel_part_fn part; /* NULL: a product's last rows go through a whole tile */
    cpu_ukernel_pf_fn kernel_pf; /* NULL: B is not fetched ahead */
} cpu_gemm_isa;

enum { CPU_ACT_NONE, CPU_ACT_RELU, CPU_ACT_GELU, CPU_ACT_SIGMOID, CPU_ACT_TANH };

typedef struct cpu_gemm_epi {
    const float *bias; /* NULL, or one value per column (per row with bias_rows) */
    int bias_rows;
    int act;          /* CPU_ACT_* */
    const float *res; /* NULL, or [m, n] added last, row stride ldr */
    size_t ldr;
    /* NULL, or called last on each block of C a task finished, while it
     * is still in cache: rows [r0, r1), columns [j0, j1) */
    void (*post)(void *ctx, float *c, size_t ldc, size_t r0, size_t r1, size_t j0, size_t j1);
    void *post_ctx;
} cpu_gemm_epi;

/* Below this many multiply-adds (m * n * k) one thread does a whole
 * product: waking the pool costs more than splitting saves. */
#define CPU_GEMM_SERIAL 262144.0

/* The kernels (each defined in its own file; the x86 ones only exist on
 * x86-64 builds, the NEON one only on arm64 builds). */
void cpu_ukernel_generic(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc, int acc);
void cpu_ukernel_generic_ind(size_t kc, const float *a, size_t lda, const float *b, const size_t *off, float *c,
                             size_t ldc);
#if defined(__x86_64__)
void cpu_ukernel_avx2(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc, int acc);
void cpu_ukernel_avx2_ind(size_t kc, const float *a, size_t lda, const float *b, const size_t *off, float *c,
                          size_t ldc);
void cpu_ukernel_avx512(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc, int acc);
void cpu_ukernel_avx512_pf(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc, int acc,
                           const char *pf, size_t lines, unsigned shift);
void cpu_ukernel_avx512_part(size_t rows, size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc,
                             int acc);
void cpu_ukernel_avx512_ind(size_t kc, const float *a, size_t lda, const float *b, const size_t *off, float *c,
                            size_t ldc);
void cpu_dw_avx512(float *y, const float *P, size_t pw, size_t n, const float *w, float b, int kh, int kw);
#endif
#if defined(__aarch64__)
void cpu_ukernel_neon(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc, int acc);
void cpu_ukernel_neon_ind(size_t kc, const float *a, size_t lda, const float *b, const size_t *off, float *c,
                          size_t ldc);
#endif

/* Resolves "auto", "avx512", "avx2", "neon" or "generic" against this
 * machine. NULL when the name is unknown (*known = 0) or the cpu lacks
 * it (a name of the other architecture: known, never there). */
const cpu_gemm_isa *cpu_gemm_select(const char *name, int *known);

/* Floats a packed copy of a k x n matrix takes. */
size_t cpu_gemm_packed_floats(const cpu_gemm_isa *isa, size_t k, size_t n);
/* Packs B (k x n; or n x k stored when tb) scaled by alpha into dst. */
void cpu_gemm_pack_b(const cpu_gemm_isa *isa, const float *b, size_t ldb, int tb, size_t k, size_t n, float alpha,
                     float *dst);

struct cpu_pool;
/* The inverse of cpu_gemm_pack_b with alpha 1: b (leading dimension
 * ldb, n x k when tb) rebuilt from its packed panels. */
void cpu_gemm_unpack_b(const cpu_gemm_isa *isa, const float *packed, size_t ldb, int tb, size_t k, size_t n, float *b);

/* A quantized right-hand side read in place, never widened as a whole:
 * b [k, n] row-major of int8, uint8, int4 or uint4 (4-bit values two per
 * byte, low nibble first), its value (b - zero) * scale, with zero (b's
 * type) and scale [k / rows, n]: blocks of `rows` rows. */
enum { CPU_Q_I8, CPU_Q_U8, CPU_Q_I4, CPU_Q_U4 };
/* The largest kc * nr (one dequantized slice of a quantized B) and nr of
 * any kernel: the stack buffers of the quantized product. */
#define CPU_GEMM_SLICE 12288
#define CPU_GEMM_NR_MAX 32

/* The offset o that brings a kind's values into int8: uint8 - 128,
 * uint4 - 8, the signed kinds as they are. */
static inline int cpu_q_offset(int kind) { return kind == CPU_Q_U8 ? 128 : kind == CPU_Q_U4 ? 8 : 0; }

typedef struct cpu_gemm_qb {
    int kind; /* CPU_Q_* */
    const uint8_t *b, *zero; /* zero NULL: every zero point is 0 */
    const float *scale;
    size_t rows;
    /* b already in the fused int8 tile's panels (cpu_gemm_q8_pack), for
     * the int8-activation product only; b is then unused. NULL: each task
     * packs the slices it needs. */
    const int8_t *packed;
} cpu_gemm_qb;
/* Rows [k0, k0 + kc) and columns [j0, j0 + w) of the dequantized b
 * (n columns) into one panel of width nr, zeros past w (gemm_dequant.c). */
void cpu_gemm_dequant_panel(const cpu_gemm_qb *q, size_t n, size_t k0, size_t kc, size_t j0, size_t w, size_t nr,
                            float *dst);
/* Row r of a quantized table [v, d] (blocks of `rows` values within a
 * row, scale and zero [v, d / rows]) dequantized into d floats. */
void cpu_dequant_row(const cpu_gemm_qb *q, size_t d, size_t r, float *dst);

/* The int8-activation product (gemm_int8.c, the backend's
 * quantized_activations = int8). Its tile: c [MR rows, ldc] of int32
 * (+= when acc) = a (MR rows of 4 k4 int8, row stride lda) times b
 * (k4 steps of NR columns x 4 int8: [k4][NR][4]). Exact, so every
 * kernel gives the same sums. */
#define CPU_DOT_MR 4
#define CPU_DOT_NR 16
typedef void (*cpu_dot_fn)(size_t k4, const int8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc, int acc);
#if defined(__aarch64__)
void cpu_dot_sdot(size_t k4, const int8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc, int acc);
#endif
#if defined(__x86_64__)
void cpu_dot_avx512vnni(size_t k4, const int8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc, int acc);
void cpu_dot_avxvnni(size_t k4, const int8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc, int acc);
void cpu_dot_avx2(size_t k4, const int8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc, int acc);
#endif
/* The same product with the scaling fused in, on CPU_Q8_MR rows of two
 * panels (32 columns) over nb whole blocks: for each block the exact
 * integer sums of the tile above (less zero * the row's sum), then
 * y = fma(sa s, sum, y) in float, the steps and order of the separate
 * scaling pass, so the same bits; y stays in registers across the blocks
 * and is stored once. */
#define CPU_Q8_MR 6
typedef struct cpu_q8_tile {
    size_t nb, k4;         /* blocks, and 4-byte steps in each */
    const int8_t *a;       /* row 0 of block 0 of the quantized A */
    size_t lda, lpa;       /* bytes from row to row, and from block to block */
    const float *sa;       /* row r, block g: scale sa[r * ldsa + g] */
    const int32_t *suma;   /* and sum suma[r * ldsa + g]; with zq NULL, the */
                           /* integer its sums start from: -(128 - o) sum */
    size_t ldsa;
    const int8_t *b;       /* nb blocks of [k4][16][4] (b - o) xor 0x80, back to back */
    size_t pb;             /* bytes from b to the second panel's blocks (used when w > 16) */
    const float *s;        /* block g, column j: scale s[g * lds + j] */
    size_t lds;
    const int32_t *zq;     /* [nb][32]: the zero point less o, plus 128; NULL: no zero points */
    float *c;              /* rows x w outputs (w <= 32), row stride ldc; added to when acc */
    size_t ldc, rows, w;
    int acc;
} cpu_q8_tile;
typedef void (*cpu_q8_fn)(const cpu_q8_tile *t);
#if defined(__x86_64__)
void cpu_q8_avx512vnni(const cpu_q8_tile *t);
#endif
/* The fused form of tile f, where it has one; NULL: the tile and the
 * separate scaling. */
cpu_q8_fn cpu_q8_fused(cpu_dot_fn f);
/* The best tile this cpu has within the float kernels' isa (gemm_dot.c):
 * avx512 (or auto) takes AVX512-VNNI, else AVX-VNNI, else AVX2; avx2
 * takes AVX-VNNI, else AVX2; neon takes SDOT; generic, and anything the
 * cpu lacks, the portable tile. */
cpu_dot_fn cpu_dot_select(const char *isa);
/* One tile by its name ("avx512vnni", "avxvnni", "avx2", "sdot",
 * "generic"); NULL where the name is unknown or this cpu lacks it. */
cpu_dot_fn cpu_dot_by_name(const char *name);
const char *cpu_dot_name(cpu_dot_fn f);
/* Node scratch the product needs for m rows of A, k columns, blocks of
 * `rows` weight rows. */
size_t cpu_gemm_q8_scratch(size_t m, size_t k, size_t rows);
/* quantized: scratch already holds a quantized for blocks of qb->rows,
 * by a product of the same m, k, block length and kind whose weights
 * had zero points exactly when these do (q8_same_a). */
void cpu_gemm_q8(struct cpu_pool *pool, cpu_dot_fn kernel, size_t m, size_t n, size_t k, const float *a, size_t lda,
                 const cpu_gemm_qb *qb, float *c, size_t ldc, const cpu_gemm_epi *epi, void *scratch, int quantized);
/* B packed once for the fused tile (the weight cache keeps it, and drops
 * the weight as uploaded): 8-bit weights in blocks of at most the fused
 * tile's slice, where tile f has a fused form. The layout is the one each
 * task would build: per panel of 16 columns, every block's
 * [k4][16][4] bytes of b - o, xor 0x80 (so unsigned), back to back. */
int cpu_gemm_q8_packable(cpu_dot_fn f, int kind, size_t rows);
size_t cpu_gemm_q8_packed_bytes(size_t k, size_t n, size_t rows);
void cpu_gemm_q8_pack(const cpu_gemm_qb *q, size_t k, size_t n, int8_t *dst);
/* Its inverse: the k x n weight as uploaded, from the packed panels. */
void cpu_gemm_q8_unpack(int kind, const int8_t *src, size_t k, size_t n, size_t rows, uint8_t *dst);
/* Rows [k0, k0 + kc) and columns [j0, j0 + w) of q as b - o (o: 128 for
 * uint8, 8 for uint4, else 0), each byte xor flip (0, or 0x80 for the
 * fused tile's unsigned B), into dst in the tile's [k4][CPU_DOT_NR][4]
 * layout, b - o = 0 past kc and w (gemm_dequant.c). */
void cpu_gemm_qpanel_i8(const cpu_gemm_qb *q, size_t n, size_t k0, size_t kc, size_t j0, size_t w, uint8_t flip,
                        int8_t *dst);
/* Block g's zero points of columns [j0, j0 + w) less the same o. */
void cpu_gemm_qzero_i32(const cpu_gemm_qb *q, size_t n, size_t g, size_t j0, size_t w, int32_t *z);

/* C = A @ Bpacked, then the epilogue; spread over the pool. */
void cpu_gemm(struct cpu_pool *pool, const cpu_gemm_isa *isa, size_t m, size_t n, size_t k, const float *a,
              size_t lda, const float *bp, float *c, size_t ldc, const cpu_gemm_epi *epi);
/* C = A @ B with B quantized: each task dequantizes the kc x nr slice
 * of a panel it is about to use into a buffer on its stack, then runs
 * the float kernel on it, so a slice is widened once per block of rows
 * and the weights stay in their packed form. */
void cpu_gemm_q(struct cpu_pool *pool, const cpu_gemm_isa *isa, size_t m, size_t n, size_t k, const float *a,
                size_t lda, const cpu_gemm_qb *qb, float *c, size_t ldc, const cpu_gemm_epi *epi);
/* The epilogue alone over rows [r0, r1) and columns [j0, j1) of c. */
void cpu_gemm_epilogue(const cpu_gemm_epi *epi, float *c, size_t ldc, size_t r0, size_t r1, size_t j0, size_t j1);

#endif
