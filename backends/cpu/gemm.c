/* The driver of berth's packed matrix product: kernel selection, packing
 * of B into panels, the blocking and threading of C = A @ B, and the
 * fused epilogue. Blocking follows the usual scheme: a kc-deep slice of
 * one B panel (16 to 48 KiB) stays near while the kernel walks down the
 * task's rows of A. Each pool task owns a block of rows and a group of
 * panels, so tasks never write the same bytes and nothing is allocated:
 * edge tiles go through small buffers on the stack. */
#include <string.h>
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "cpu_gemm.h"
#include "cpu_internal.h"

static const cpu_gemm_isa isa_generic = {"generic", 4, 16, 256, cpu_ukernel_generic, cpu_ukernel_generic_ind, NULL, NULL, NULL};
#if defined(__x86_64__)
static const cpu_gemm_isa isa_avx2 = {"avx2", 6, 16, 256, cpu_ukernel_avx2, cpu_ukernel_avx2_ind, NULL, NULL, NULL};
/* kc 256, with k cut into blocks of equal depth (768 into three of 256,
 * 384 into two of 192): a task's 32 KiB slice of B stays in a 48 KiB L1
 * while its tiles walk down the rows of A, and the next slice is fetched
 * into L2 meanwhile (next_slice). kc 384 streamed a 48 KiB slice from L2
 * for every tile (it had beaten 128 on an AMD EPYC, 95 to 86 ms on the
 * 12-layer encoder at batch 1 on 2 threads); on an Intel Xeon with a
 * 48 KiB L1, 256 and the fetch ahead took that encoder from 211 to 197
 * ms on 1 thread and the 6-layer one from 29 to 27 ms. */
static const cpu_gemm_isa isa_avx512 = {"avx512", 12, 32, 256, cpu_ukernel_avx512, cpu_ukernel_avx512_ind,
                                       cpu_dw_avx512, cpu_ukernel_avx512_part, cpu_ukernel_avx512_pf};
#endif
#if defined(__aarch64__)
/* kc 256: an 8 KiB slice of B and the tile's 8 KiB of A rows share L1. */
static const cpu_gemm_isa isa_neon = {"neon", 8, 8, 256, cpu_ukernel_neon, cpu_ukernel_neon_ind, NULL, NULL, NULL};
#endif

/* The largest mr * kc and mr * nr of any kernel above: the stack buffers. */
#define EDGE_A 4608
#define EDGE_C 384
_Static_assert(EDGE_A >= 4 * 256 && EDGE_A >= 6 * 256 && EDGE_A >= 12 * 384 && EDGE_A >= 8 * 256,
               "EDGE_A holds mr * kc of every kernel");
_Static_assert(EDGE_C >= 4 * 16 && EDGE_C >= 6 * 16 && EDGE_C >= 12 * 32 && EDGE_C >= 8 * 8,
               "EDGE_C holds mr * nr of every kernel");

const cpu_gemm_isa *cpu_gemm_select(const char *name, int *known) {
    *known = 1;
#if defined(__x86_64__)
    __builtin_cpu_init();
    int has512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    int has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (strcmp(name, "auto") == 0) return has512 ? &isa_avx512 : has2 ? &isa_avx2 : &isa_generic;
    if (strcmp(name, "avx512") == 0) return has512 ? &isa_avx512 : NULL;
    if (strcmp(name, "avx2") == 0) return has2 ? &isa_avx2 : NULL;
    if (strcmp(name, "neon") == 0) return NULL;
#elif defined(__aarch64__)
    int neon = (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
    if (strcmp(name, "auto") == 0) return neon ? &isa_neon : &isa_generic;
    if (strcmp(name, "neon") == 0) return neon ? &isa_neon : NULL;
    if (strcmp(name, "avx512") == 0 || strcmp(name, "avx2") == 0) return NULL;
#else
    if (strcmp(name, "auto") == 0) return &isa_generic;
    if (strcmp(name, "avx512") == 0 || strcmp(name, "avx2") == 0 || strcmp(name, "neon") == 0) return NULL;
#endif
    if (strcmp(name, "generic") == 0) return &isa_generic;
    *known = 0;
    return NULL;
}

size_t cpu_gemm_packed_floats(const cpu_gemm_isa *isa, size_t k, size_t n) {
    size_t nr = (size_t)isa->nr, panels = (n + nr - 1) / nr;
    return panels * (k ? k : 1) * nr;
}

/* One full panel of width nr (a constant after inlining). */
static inline void pack_panel(float *restrict dst, const float *restrict b, size_t ldb, int tb, size_t k, size_t nr,
                              float alpha) {
    if (tb) {
        for (size_t j = 0; j < nr; j++)
            for (size_t p = 0; p < k; p++) dst[p * nr + j] = alpha * b[j * ldb + p];
    } else {
        for (size_t p = 0; p < k; p++)
            for (size_t j = 0; j < nr; j++) dst[p * nr + j] = alpha * b[p * ldb + j];
    }
}

void cpu_gemm_pack_b(const cpu_gemm_isa *isa, const float *b, size_t ldb, int tb, size_t k, size_t n, float alpha,
                     float *dst) {
    size_t nr = (size_t)isa->nr, j0 = 0;
    for (; j0 + nr <= n; j0 += nr) {
        const float *src = tb ? b + j0 * ldb : b + j0;
        if (nr == 32)
            pack_panel(dst + j0 * k, src, ldb, tb, k, 32, alpha);
        else if (nr == 16)
            pack_panel(dst + j0 * k, src, ldb, tb, k, 16, alpha);
        else if (nr == 8)
            pack_panel(dst + j0 * k, src, ldb, tb, k, 8, alpha);
        else
            pack_panel(dst + j0 * k, src, ldb, tb, k, nr, alpha);
    }
    if (j0 < n) { /* the last, partial panel: zeros past n */
        size_t w = n - j0;
        float *panel = dst + j0 * k;
        for (size_t p = 0; p < k; p++) {
            float *row = panel + p * nr;
            if (tb)
                for (size_t j = 0; j < w; j++) row[j] = alpha * b[(j0 + j) * ldb + p];
            else
                for (size_t j = 0; j < w; j++) row[j] = alpha * b[p * ldb + j0 + j];
            for (size_t j = w; j < nr; j++) row[j] = 0.0f;
        }
    }
}

void cpu_gemm_unpack_b(const cpu_gemm_isa *isa, const float *packed, size_t ldb, int tb, size_t k, size_t n, float *b) {
    size_t nr = (size_t)isa->nr;
    for (size_t j = 0; j < n; j++) {
        const float *col = packed + (j / nr) * nr * k + j % nr;
        if (tb)
            for (size_t p = 0; p < k; p++) b[j * ldb + p] = col[p * nr];
        else
            for (size_t p = 0; p < k; p++) b[p * ldb + j] = col[p * nr];
    }
}

CPU_CLONES void cpu_gemm_epilogue(const cpu_gemm_epi *epi, float *c, size_t ldc, size_t r0, size_t r1, size_t j0, size_t j1) {
    if (!epi) return;
    for (size_t i = r0; i < r1; i++) {
        float *restrict row = c + i * ldc;
        if (epi->bias && epi->bias_rows) {
            float bv = epi->bias[i];
            for (size_t j = j0; j < j1; j++) row[j] += bv;
        } else if (epi->bias) {
            const float *restrict bias = epi->bias;
            for (size_t j = j0; j < j1; j++) row[j] += bias[j];
        }
        if (epi->act == CPU_ACT_RELU)
            for (size_t j = j0; j < j1; j++) row[j] = row[j] > 0.0f ? row[j] : 0.0f;
        else if (epi->act == CPU_ACT_GELU)
            cpu_vgelu(row + j0, row + j0, j1 - j0);
        else if (epi->act == CPU_ACT_SIGMOID) /* the row's span at once: vector code on arm64 */
            cpu_vsigmoid(row + j0, row + j0, j1 - j0);
        else if (epi->act == CPU_ACT_TANH)
            cpu_vtanh(row + j0, row + j0, j1 - j0);
        if (epi->res) {
            const float *restrict rr = epi->res + i * epi->ldr;
            for (size_t j = j0; j < j1; j++) row[j] += rr[j];
        }
    }
    if (epi->post) epi->post(epi->post_ctx, c, ldc, r0, r1, j0, j1);
}

typedef struct gemm_job {
    const cpu_gemm_isa *isa;
    size_t m, n, k, kc, lda, ldc; /* kc: k in blocks of equal depth, at most isa->kc */
    const float *a, *bp;
    const cpu_gemm_qb *qb; /* set: B is quantized, bp unused */
    float *c;
    const cpu_gemm_epi *epi;
    size_t row_block, panel_group, n_groups;
} gemm_job;

/* A last panel this narrow (a product 97 or 257 wide, as an STFT's
 * frames and bins are) would cost a full tile of nr columns for w: each
 * of its outputs is instead the dot product of an A row with the column
 * copied out of the panel, sixteen lanes and two sums at a time. */
#define EDGE_DOT_W 4
#define EDGE_KC 384 /* the largest kc of any kernel */

CPU_CLONES static void edge_dots(const float *a, size_t lda, const float *bp, size_t nr, size_t kc, float *c,
                                 size_t ldc, size_t rows, size_t w, int acc) {
    float col[EDGE_KC] __attribute__((aligned(64)));
    for (size_t j = 0; j < w; j++) {
        for (size_t p = 0; p < kc; p++) col[p] = bp[p * nr + j];
        for (size_t r = 0; r < rows; r++) {
            const float *ar = a + r * lda;
            float s0[16] = {0}, s1[16] = {0};
            size_t p = 0;
            for (; p + 32 <= kc; p += 32)
                for (size_t l = 0; l < 16; l++) s0[l] += ar[p + l] * col[p + l], s1[l] += ar[p + 16 + l] * col[p + 16 + l];
            float s = 0.0f;
            for (; p < kc; p++) s += ar[p] * col[p];
            for (size_t l = 0; l < 16; l++) s += s0[l] + s1[l];
            c[r * ldc + j] = acc ? c[r * ldc + j] + s : s;
        }
    }
}

/* A tile of `rows` <= mr rows and `w` <= nr columns at row i. A full
 * panel of 8 or 4 rows goes to the ISA's part tile where it has one.
 * Otherwise the kernel computes a full tile into cbuf: when A has mr rows at or above
 * i it reads the last mr rows ending at the tile's end (rows the tile
 * above also covers are computed twice and dropped); only a product of
 * fewer than mr rows in all copies A into a zero-padded buffer. */
static void edge_tile(const gemm_job *J, size_t kc, size_t i, size_t k0, const float *bp, float *c, size_t rows,
                      size_t w, int acc) {
    if (J->isa->part && w == (size_t)J->isa->nr && (rows == 8 || rows == 4)) {
        J->isa->part(rows, kc, J->a + i * J->lda + k0, J->lda, bp, c, J->ldc, acc);
        return;
    }
    size_t mr = (size_t)J->isa->mr, nr = (size_t)J->isa->nr, skip = 0;
    float abuf[EDGE_A] __attribute__((aligned(64)));
    float cbuf[EDGE_C] __attribute__((aligned(64)));
    const float *src;
    size_t lda = J->lda;
    if (w <= EDGE_DOT_W && kc <= EDGE_KC) {
        edge_dots(J->a + i * J->lda + k0, J->lda, bp, nr, kc, c, J->ldc, rows, w, acc);
        return;
    }
    if (rows == mr) {
        src = J->a + i * J->lda + k0;
    } else if (J->m >= mr) {
        skip = mr - rows;
        src = J->a + (i - skip) * J->lda + k0;
    } else {
        for (size_t r = 0; r < mr; r++)
            for (size_t p = 0; p < kc; p++) abuf[r * kc + p] = r < rows ? J->a[(i + r) * J->lda + k0 + p] : 0.0f;
        src = abuf;
        lda = kc;
    }
    J->isa->kernel(kc, src, lda, bp, cbuf, nr, 0);
    for (size_t r = 0; r < rows; r++) {
        const float *cr = cbuf + (r + skip) * nr;
        float *dst = c + r * J->ldc;
        if (acc)
            for (size_t j = 0; j < w; j++) dst[j] += cr[j];
        else
            memcpy(dst, cr, sizeof(float) * w);
    }
}

/* The packed B slice a task reads after panel pn's at k0, and its bytes
 * (NULL: none, or B is dequantized per slice). */
static const float *next_slice(const gemm_job *J, size_t pn, size_t p0, size_t p1, size_t k0, size_t kc,
                               size_t *bytes) {
    size_t nr = (size_t)J->isa->nr;
    if (J->qb) return NULL;
    if (pn + 1 < p1) {
        *bytes = kc * nr * sizeof(float);
        return J->bp + (pn + 1) * nr * J->k + k0 * nr;
    }
    if (k0 + kc >= J->k) return NULL;
    size_t next = J->k - k0 - kc < J->kc ? J->k - k0 - kc : J->kc;
    *bytes = next * nr * sizeof(float);
    return J->bp + p0 * nr * J->k + (k0 + kc) * nr;
}

static void gemm_task(void *ctx, size_t t0, size_t t1) {
    const gemm_job *J = ctx;
    size_t mr = (size_t)J->isa->mr, nr = (size_t)J->isa->nr;
    size_t panels = (J->n + nr - 1) / nr;
    float slice[CPU_GEMM_SLICE] __attribute__((aligned(64)));
    for (size_t t = t0; t < t1; t++) {
        /* Consecutive tasks take the panel groups of one row block, so a
         * thread's next task finds that block of A still in its L2 and
         * streams B, which is packed and fetched ahead, not A's twelve
         * strided rows per tile (a 1024 x 3072 x 768 product with cold
         * caches: 36.4 against 39.3 ms row blocks first, best of 8). */
        size_t i0 = (t / J->n_groups) * J->row_block, i1 = i0 + J->row_block < J->m ? i0 + J->row_block : J->m;
        size_t p0 = (t % J->n_groups) * J->panel_group, p1 = p0 + J->panel_group < panels ? p0 + J->panel_group : panels;
        size_t full = (i1 - i0) / mr; /* whole tiles of a full panel */
        for (size_t k0 = 0; k0 < J->k; k0 += J->kc) {
            size_t kc = J->k - k0 < J->kc ? J->k - k0 : J->kc;
            int acc = k0 > 0;
            for (size_t pn = p0; pn < p1; pn++) {
                size_t j0 = pn * nr, w = J->n - j0 < nr ? J->n - j0 : nr;
                const float *bp = slice;
                if (J->qb)
                    cpu_gemm_dequant_panel(J->qb, J->n, k0, kc, j0, w, nr, slice);
                else
                    bp = J->bp + j0 * J->k + k0 * nr;
                /* the next slice, a share of its lines fetched by each
                 * full tile as it runs */
                size_t ahead = 0, line = 0, lines = 0;
                unsigned shift = 0;
                const char *nx = full && J->isa->kernel_pf ? (const char *)next_slice(J, pn, p0, p1, k0, kc, &ahead) : NULL;
                if (nx) {
                    lines = (ahead / 64 + full - 1) / full;
                    while (shift < 6 && (lines << (shift + 1)) <= kc) shift++;
                }
                for (size_t i = i0; i < i1; i += mr) {
                    const float *a = J->a + i * J->lda + k0;
                    float *c = J->c + i * J->ldc + j0;
                    size_t rows = i1 - i < mr ? i1 - i : mr;
                    if (rows == mr && w == nr && nx) {
                        size_t left = ahead / 64 - line, n = lines < left ? lines : left;
                        J->isa->kernel_pf(kc, a, J->lda, bp, c, J->ldc, acc, nx + line * 64, n, shift);
                        line += n;
                    } else if (rows == mr && w == nr) {
                        J->isa->kernel(kc, a, J->lda, bp, c, J->ldc, acc);
                    } else
                        edge_tile(J, kc, i, k0, bp, c, rows, w, acc);
                }
            }
        }
        size_t j1 = p1 * nr < J->n ? p1 * nr : J->n;
        cpu_gemm_epilogue(J->epi, J->c, J->ldc, i0, i1, p0 * nr, j1);
    }
}

/* Products of fewer rows than GEMV_ROWS read B once per row, panel by
 * panel, with no tile: a full tile would compute mr rows (12 on avx512)
 * for one. Four partial sums per column hide the FMA latency. */
#define GEMV_ROWS 4

static inline void gemv_panel(size_t m, size_t k, const float *a, size_t lda, const float *restrict panel,
                              float *c, size_t ldc, size_t w, size_t nr) {
    for (size_t i = 0; i < m; i++) {
        const float *restrict ai = a + i * lda;
        float s0[CPU_GEMM_NR_MAX] = {0}, s1[CPU_GEMM_NR_MAX] = {0}, s2[CPU_GEMM_NR_MAX] = {0},
              s3[CPU_GEMM_NR_MAX] = {0};
        size_t p = 0;
        for (; p + 4 <= k; p += 4) {
            const float *restrict b = panel + p * nr;
            for (size_t j = 0; j < nr; j++) {
                s0[j] += ai[p] * b[j];
                s1[j] += ai[p + 1] * b[nr + j];
                s2[j] += ai[p + 2] * b[2 * nr + j];
                s3[j] += ai[p + 3] * b[3 * nr + j];
            }
        }
        for (; p < k; p++)
            for (size_t j = 0; j < nr; j++) s0[j] += ai[p] * panel[p * nr + j];
        float *restrict ci = c + i * ldc;
        for (size_t j = 0; j < w; j++) ci[j] = (s0[j] + s1[j]) + (s2[j] + s3[j]);
    }
}

typedef struct gemv_job {
    size_t m, n, k, lda, ldc, nr, group;
    const float *a, *bp;
    float *c;
    const cpu_gemm_epi *epi;
} gemv_job;

CPU_CLONES static void gemv_task(void *ctx, size_t t0, size_t t1) {
    const gemv_job *J = ctx;
    for (size_t pn = t0 * J->group; pn < t1 * J->group && pn * J->nr < J->n; pn++) {
        size_t j0 = pn * J->nr, w = J->n - j0 < J->nr ? J->n - j0 : J->nr;
        const float *panel = J->bp + j0 * J->k;
        if (J->nr == 32)
            gemv_panel(J->m, J->k, J->a, J->lda, panel, J->c + j0, J->ldc, w, 32);
        else if (J->nr == 16)
            gemv_panel(J->m, J->k, J->a, J->lda, panel, J->c + j0, J->ldc, w, 16);
        else if (J->nr == 8)
            gemv_panel(J->m, J->k, J->a, J->lda, panel, J->c + j0, J->ldc, w, 8);
        else
            gemv_panel(J->m, J->k, J->a, J->lda, panel, J->c + j0, J->ldc, w, J->nr);
        cpu_gemm_epilogue(J->epi, J->c, J->ldc, 0, J->m, j0, j0 + w);
    }
}

static void gemv_run(cpu_pool *pool, const cpu_gemm_isa *isa, size_t m, size_t n, size_t k, const float *a,
                     size_t lda, const float *bp, float *c, size_t ldc, const cpu_gemm_epi *epi) {
    size_t nr = (size_t)isa->nr, panels = (n + nr - 1) / nr;
    size_t tasks = (double)m * (double)n * (double)k < CPU_GEMM_SERIAL ? 1 : (size_t)cpu_pool_threads(pool) * 2;
    if (tasks > panels) tasks = panels;
    gemv_job J = {.m = m, .n = n, .k = k, .lda = lda, .ldc = ldc, .nr = nr, .group = (panels + tasks - 1) / tasks,
                  .a = a, .bp = bp, .c = c, .epi = epi};
    tasks = (panels + J.group - 1) / J.group;
    cpu_pool_for(tasks > 1 ? pool : NULL, tasks, 1, gemv_task, &J);
}

static void gemm_run(cpu_pool *pool, const cpu_gemm_isa *isa, size_t m, size_t n, size_t k, const float *a,
                     size_t lda, const float *bp, const cpu_gemm_qb *qb, float *c, size_t ldc,
                     const cpu_gemm_epi *epi) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        for (size_t i = 0; i < m; i++) memset(c + i * ldc, 0, sizeof(float) * n);
        cpu_gemm_epilogue(epi, c, ldc, 0, m, 0, n);
        return;
    }
    if (m < GEMV_ROWS && !qb) {
        gemv_run(pool, isa, m, n, k, a, lda, bp, c, ldc, epi);
        return;
    }
    size_t mr = (size_t)isa->mr, nr = (size_t)isa->nr, panels = (n + nr - 1) / nr;
    size_t tiles_m = (m + mr - 1) / mr;
    int threads = cpu_pool_threads(pool);
    /* Rows in blocks of at most 16 tiles so a block's kc-slice of A stays
     * in L2; then enough panel groups for about four tasks per thread. */
    size_t want = (double)m * (double)n * (double)k < CPU_GEMM_SERIAL ? 1 : (size_t)threads * 4;
    size_t row_tiles = tiles_m < 16 ? tiles_m : 16;
    size_t n_rb = (tiles_m + row_tiles - 1) / row_tiles;
    /* Rows that fit one block are split by panel groups when there are
     * panels enough for the tasks wanted: the block then reuses each B
     * slice over all its tiles, and equal groups keep threads even (3
     * row blocks of 4, 4 and 3 tiles, times 3 groups, left one of 2
     * threads a task behind at batch 1 of a 128-token encoder: 1.30x
     * onnxruntime's time, 1.05x split by panels). Otherwise rows are
     * split further; a quantized B is widened once per row block, so its
     * rows never are. */
    if (n_rb < want && tiles_m > n_rb && !qb && (n_rb > 1 || panels < want)) {
        size_t per = (tiles_m + want - 1) / want;
        if (per < 4) per = tiles_m < 4 ? tiles_m : 4;
        row_tiles = per < row_tiles ? per : row_tiles;
        n_rb = (tiles_m + row_tiles - 1) / row_tiles;
    }
    size_t groups = n_rb >= want ? 1 : (want + n_rb - 1) / n_rb;
    /* A task's block of C is revisited once per k block: keep it near
     * 128 KiB so it stays in L2. */
    size_t max_group = (size_t)32768 / (row_tiles * mr * nr);
    if (max_group < 1) max_group = 1;
    if ((panels + groups - 1) / groups > max_group) groups = (panels + max_group - 1) / max_group;
    if (groups > panels) groups = panels;
    gemm_job J = {.isa = isa, .m = m, .n = n, .k = k, .lda = lda, .ldc = ldc, .a = a, .bp = bp, .qb = qb, .c = c, .epi = epi,
                  .row_block = row_tiles * mr};
    size_t kb = (k + (size_t)isa->kc - 1) / (size_t)isa->kc;
    J.kc = (k + kb - 1) / kb;
    J.panel_group = (panels + groups - 1) / groups;
    J.n_groups = (panels + J.panel_group - 1) / J.panel_group;
    size_t tasks = n_rb * J.n_groups;
    cpu_pool_for(tasks > 1 ? pool : NULL, tasks, 1, gemm_task, &J);
}

void cpu_gemm(cpu_pool *pool, const cpu_gemm_isa *isa, size_t m, size_t n, size_t k, const float *a, size_t lda,
              const float *bp, float *c, size_t ldc, const cpu_gemm_epi *epi) {
    gemm_run(pool, isa, m, n, k, a, lda, bp, NULL, c, ldc, epi);
}

void cpu_gemm_q(cpu_pool *pool, const cpu_gemm_isa *isa, size_t m, size_t n, size_t k, const float *a, size_t lda,
                const cpu_gemm_qb *qb, float *c, size_t ldc, const cpu_gemm_epi *epi) {
    _Static_assert(CPU_GEMM_SLICE >= 384 * 32 && CPU_GEMM_SLICE >= 256 * 16 && CPU_GEMM_SLICE >= 256 * 8 &&
                       CPU_GEMM_NR_MAX >= 32,
                   "a kc x nr slice and an nr row fit");
    gemm_run(pool, isa, m, n, k, a, lda, NULL, qb, c, ldc, epi);
}
