/* berth's quantized product with int8 activations, the cpu backend's
 * `quantized_activations = int8`: each row of A is quantized per block of
 * the weights' rows (symmetric, scale max|a| / 127), the products are
 * integer dot products of four int8 pairs (gemm_dot.c: VNNI or AVX2 on
 * x86-64, SDOT on arm64 cpus with the dotprod extension, plain C
 * elsewhere: the same integers either way),
 * and each block's sum is scaled back:
 *   y[i,j] = sum over blocks g of sa[i,g] s[g,j] (sum_k aq[i,k] b'[k,j] - z'[g,j] sum_k aq[i,k])
 * with b' = b - o and z' = z - o, o = 128 for uint8 and 8 for uint4 (0
 * for the signed kinds), so that b' fits in int8. The integer sums are
 * exact (|aq b'| <= 127 * 128, a block would need 130,000 rows to reach
 * 2^31). What is lost is A's precision: each value moves by up to
 * max|a| / 254 of its block. With AVX512-VNNI, blocks of at most 512
 * rows go through a fused tile that also scales, keeping y in registers
 * across blocks (cpu_q8_tile): the same integers and float steps, so the
 * same bits, where the tile's sums went through memory to a separate
 * scaling pass; the 12-layer encoder at batch 8 took 650 ms where it
 * took 830. Its 8-bit weights are packed for it once, at plan time
 * (cpu_gemm_q8_pack). The default path (gemm.c, gemm_dequant.c)
 * widens the weights to floats instead and matches dequantizeLinear then
 * matmul; this one trades that for integer products, as onnxruntime's
 * int8 accuracy level does. */
#include <math.h>
#include <string.h>

#include "cpu_gemm.h"
#include "cpu_internal.h"

enum { MR = CPU_DOT_MR, NR = CPU_DOT_NR };
/* k values of one B slice (a block is cut into slices of this many) and
 * rows of A per task: the slice (8 KiB), the task's int32 sums and its
 * outputs (8 KiB each) live on the stack. Each task packs its panels' B
 * slices again, so fewer, taller tasks pack less: from 64 rows to 128,
 * packing fell from 0.22 to 0.15 of the tile's time on the 12-layer
 * encoder at batch 8 (perf samples); at 256 it fell to 0.10, but the
 * scaling, its sums and outputs no longer in L1, rose by more. */
#define KCH 512
#define ROWS 128
/* The fused tile keeps no sums or outputs on the stack, so its tasks
 * can be taller and pack each B slice less often: at 256 rows, the
 * batch-8 encoder ran 4% faster than at 128 (512 and 1024: no better).
 * 240: whole tiles of 6 rows, as every tile but the last of a task must
 * be. */
#define FROWS 240
/* Rows of the quantized A padded to whole tiles of either kind: each
 * tile reads its rows in full and stores only those below m. */
#define Q8_PAD 12
_Static_assert(Q8_PAD % MR == 0 && Q8_PAD % CPU_Q8_MR == 0 && FROWS % CPU_Q8_MR == 0 && ROWS % MR == 0,
               "tasks start on whole tiles, and the padding holds the last one");

/* The layout of the quantized A in node scratch: rows padded to
 * Q8_PAD (the padding rows zero), each row nb blocks of lp = L rounded
 * up to 4 bytes (zeros past L), then per row and block its scale and its
 * sum (for the fused tile with no zero points, the correction its sums
 * start from instead: -(128 - o) sum, see cpu_q8_tile). */
typedef struct q8_layout {
    size_t mp, nb, L, lp, kq;
    size_t off_scale, off_sum, bytes;
} q8_layout;

static q8_layout layout(size_t m, size_t k, size_t rows) {
    q8_layout l = {.mp = (m + Q8_PAD - 1) / Q8_PAD * Q8_PAD, .L = rows, .nb = rows ? k / rows : 0};
    l.lp = (l.L + 3) / 4 * 4;
    l.kq = l.nb * l.lp;
    l.off_scale = (l.mp * l.kq + 63) / 64 * 64;
    l.off_sum = l.off_scale + l.mp * l.nb * sizeof(float);
    l.bytes = l.off_sum + l.mp * l.nb * sizeof(int32_t);
    return l;
}

size_t cpu_gemm_q8_scratch(size_t m, size_t k, size_t rows) { return layout(m, k, rows).bytes; }

/* ---- B packed once, for the fused tile ---- */

int cpu_gemm_q8_packable(cpu_dot_fn f, int kind, size_t rows) {
    return cpu_q8_fused(f) && (kind == CPU_Q_I8 || kind == CPU_Q_U8) && rows > 0 && rows <= KCH;
}

/* Bytes of one block of one panel: lp = rows rounded up to 4. */
static size_t block_bytes(size_t rows) { return (rows + 3) / 4 * 4 * NR; }

size_t cpu_gemm_q8_packed_bytes(size_t k, size_t n, size_t rows) {
    return (n + NR - 1) / NR * (k / rows) * block_bytes(rows);
}

void cpu_gemm_q8_pack(const cpu_gemm_qb *q, size_t k, size_t n, int8_t *dst) {
    size_t nb = k / q->rows, bb = block_bytes(q->rows);
    for (size_t j0 = 0; j0 < n; j0 += NR)
        for (size_t g = 0; g < nb; g++, dst += bb)
            cpu_gemm_qpanel_i8(q, n, g * q->rows, q->rows, j0, n - j0 < NR ? n - j0 : NR, 0x80, dst);
}

void cpu_gemm_q8_unpack(int kind, const int8_t *src, size_t k, size_t n, size_t rows, uint8_t *dst) {
    const uint8_t *s = (const uint8_t *)src;
    /* stored (b - o) xor 0x80: b is that xor 0x80 plus o, modulo 256 */
    uint8_t o = (uint8_t)cpu_q_offset(kind);
    size_t nb = k / rows, bb = block_bytes(rows);
    for (size_t j0 = 0; j0 < n; j0 += NR) {
        size_t w = n - j0 < NR ? n - j0 : NR;
        for (size_t g = 0; g < nb; g++, s += bb)
            for (size_t p = 0; p < rows; p++)
                for (size_t j = 0; j < w; j++)
                    dst[(g * rows + p) * n + j0 + j] = (uint8_t)((s[(p / 4) * NR * 4 + 4 * j + p % 4] ^ 0x80) + o);
    }
}

typedef struct q8_job {
    cpu_dot_fn kernel;
    cpu_q8_fn fused; /* NULL: the tile, then the scaling pass */
    q8_layout l;
    size_t m, n, lda, ldc;
    const float *a;
    int8_t *aq;
    float *sa;
    int32_t *suma;
    const cpu_gemm_qb *qb;
    float *c;
    const cpu_gemm_epi *epi;
    size_t rows, n_rb, panel_group; /* rows a task */
} q8_job;

typedef float f32x16 __attribute__((vector_size(64)));
typedef int32_t i32x16 __attribute__((vector_size(64)));
typedef uint32_t u32x16 __attribute__((vector_size(64)));
typedef int8_t i8x16 __attribute__((vector_size(16)));

/* One block of L values of a row of A quantized into q, its scale and
 * sum returned (scale 0 for an all-zero block, NaN for one holding an inf
 * or NaN, whose q then stays zero). Inlined into quantize_rows, which is
 * cloned per instruction set: on the baseline build rintf is a library
 * call per value (no roundps before SSE4.1), and the block's two passes
 * took as long as the AVX512-VNNI tile's products. Whole vectors of 16
 * go through GCC's and clang's vector extensions, where the loops left
 * to the vectorizer came out as half-width vectors, masks and packs: 9%
 * of the 12-layer encoder's int8 run. */
static inline __attribute__((always_inline)) int32_t quantize_block(const float *restrict x, size_t L,
                                                                    int8_t *restrict q, float *sa) {
    /* The largest magnitude as the largest bit pattern less the sign:
     * among non-negative floats the orders agree, and inf and NaN come
     * above every finite value. An unsigned max vectorizes; the float
     * compare that let a NaN through did not, and was most of the time. */
    uint32_t top = 0;
    size_t p = 0;
    u32x16 tv = {0};
    for (; p + 16 <= L; p += 16) {
        u32x16 u;
        memcpy(&u, x + p, sizeof u);
        u &= 0x7fffffffu;
        u32x16 gt = (u32x16)(u > tv);
        tv = (u & gt) | (tv & ~gt);
    }
    for (int j = 0; j < 16; j++) top = tv[j] > top ? tv[j] : top;
    for (; p < L; p++) {
        uint32_t u;
        memcpy(&u, x + p, 4);
        u &= 0x7fffffffu;
        top = u > top ? u : top;
    }
    float amax;
    memcpy(&amax, &top, 4);
    *sa = 0.0f;
    if (amax == 0.0f) return 0;
    if (!isfinite(amax)) {
        *sa = NAN;
        return 0;
    }
    float inv = 127.0f / amax;
    int32_t s = 0;
    i32x16 sv = {0};
    /* |x inv| <= 127 (1 + 2^-23)^2 < 127.5, so it rounds into [-127, 127];
     * adding and taking off 1.5 2^23 rounds it to the nearest integer,
     * ties to even, as rintf does in the default rounding mode (the
     * product rounded first, in its own statement, so no compiler fuses
     * it into the addition) */
    for (p = 0; p + 16 <= L; p += 16) {
        f32x16 v;
        memcpy(&v, x + p, sizeof v);
        v *= inv;
        v = (v + 12582912.0f) - 12582912.0f;
        i32x16 qi = __builtin_convertvector(v, i32x16);
        i8x16 qb = __builtin_convertvector(qi, i8x16);
        memcpy(q + p, &qb, sizeof qb);
        sv += qi;
    }
    for (int j = 0; j < 16; j++) s += sv[j];
    for (; p < L; p++) {
        float v = rintf(x[p] * inv);
        v = v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v;
        q[p] = (int8_t)v;
        s += q[p];
    }
    *sa = amax / 127.0f;
    return s;
}

/* z' + 128 for weights with no zero points (z' = -o): one constant. */
static int32_t q8_zq1(int kind) { return 128 - cpu_q_offset(kind); }

/* Rows [r0, r1) of A quantized. */
CPU_CLONES static void quantize_rows(void *ctx, size_t r0, size_t r1) {
    const q8_job *J = ctx;
    const q8_layout *l = &J->l;
    int32_t corr = J->fused && !J->qb->zero ? -q8_zq1(J->qb->kind) : 1;
    for (size_t i = r0; i < r1; i++) {
        int8_t *qrow = J->aq + i * l->kq;
        memset(qrow, 0, l->kq);
        for (size_t g = 0; g < l->nb; g++) {
            float *sa = J->sa + i * l->nb + g;
            int32_t *sum = J->suma + i * l->nb + g;
            *sa = 0.0f, *sum = 0;
            if (i < J->m) *sum = corr * quantize_block(J->a + i * J->lda + g * l->L, l->L, qrow + g * l->lp, sa);
        }
    }
}

/* Block g's integer sums of rows [i0, i1) (acc, NR per row) scaled into
 * their w columns of yb (NR per row): y = (sa s) (sum - z' suma), then
 * past the first block y = fma(sa s, sum - z' suma, y): one rounding
 * where an add took two, and the fused tile's vfmadd. Cloned per instruction set, for the same reason as
 * quantize_block: a block of 32 weight rows is 8 steps of the tile, and
 * this, at baseline SSE2 (no pmulld), took longer than they did. */
static inline __attribute__((always_inline)) void scale_rows(const q8_job *J, size_t g, size_t i0, size_t i1,
                                                             size_t j0, size_t w, const int32_t *restrict acc,
                                                             const int32_t *restrict zp, float *restrict yb) {
    const q8_layout *l = &J->l;
    const float *restrict s = J->qb->scale + g * J->n + j0;
    for (size_t i = i0; i < i1; i++) {
        float sa = J->sa[i * l->nb + g], *restrict y = yb + (i - i0) * NR;
        int32_t sum = J->suma[i * l->nb + g];
        const int32_t *restrict ai = acc + (i - i0) * NR;
        /* symmetric weights (no zero points, int8 or int4) have no
         * correction: a third of the loop's work */
        if (!zp && g)
            for (size_t j = 0; j < w; j++) y[j] = fmaf(sa * s[j], (float)ai[j], y[j]);
        else if (!zp)
            for (size_t j = 0; j < w; j++) y[j] = sa * s[j] * (float)ai[j];
        else if (g)
            for (size_t j = 0; j < w; j++) y[j] = fmaf(sa * s[j], (float)(ai[j] - zp[j] * sum), y[j]);
        else
            for (size_t j = 0; j < w; j++) y[j] = sa * s[j] * (float)(ai[j] - zp[j] * sum);
    }
}

/* A full panel (w = NR) in vectors of 16 (GCC and clang vector
 * extensions; the clones make them one zmm, two ymm or four xmm): the
 * loops above, given 16 values a row, spent more choosing their vector
 * path than on the values, and with the count known GCC unrolled them
 * into scalar code. The same operations in the same order, so the same
 * bits. */
static inline __attribute__((always_inline)) void scale_full(const q8_job *J, size_t g, size_t i0, size_t i1,
                                                             size_t j0, const int32_t *acc, const int32_t *zp,
                                                             float *yb) {
    const q8_layout *l = &J->l;
    f32x16 sv;
    i32x16 zv = {0};
    memcpy(&sv, J->qb->scale + g * J->n + j0, sizeof sv);
    if (zp) memcpy(&zv, zp, sizeof zv);
    for (size_t i = i0; i < i1; i++) {
        float sa = J->sa[i * l->nb + g], *y = yb + (i - i0) * NR;
        i32x16 ai;
        memcpy(&ai, acc + (i - i0) * NR, sizeof ai);
        if (zp) ai -= zv * J->suma[i * l->nb + g];
        f32x16 v = sa * sv, f = __builtin_convertvector(ai, f32x16);
        if (g) {
            float t[NR];
            memcpy(t, y, sizeof t);
            for (int j = 0; j < NR; j++) t[j] = fmaf(v[j], f[j], t[j]);
            memcpy(y, t, sizeof t);
        } else {
            v *= f;
            memcpy(y, &v, sizeof v);
        }
    }
}

CPU_CLONES static void scale_block(const q8_job *J, size_t g, size_t i0, size_t i1, size_t j0, size_t w,
                                   const int32_t *restrict acc, const int32_t *restrict zp, float *restrict yb) {
    _Static_assert(NR == 16, "a row of the tile is one f32x16");
    if (w == NR)
        scale_full(J, g, i0, i1, j0, acc, zp, yb);
    else
        scale_rows(J, g, i0, i1, j0, w, acc, zp, yb);
}

/* The task with the fused tile, two panels at a time: the B slices of
 * as many whole blocks as fill KCH rows (packed at once, unless B was
 * packed at plan time), then each CPU_Q8_MR rows of the task over them. */
static void q8_fused_rows(const q8_job *J, size_t i0, size_t i1, size_t p0, size_t p1) {
    const q8_layout *l = &J->l;
    int8_t bq[2 * KCH * NR] __attribute__((aligned(64)));
    int32_t zq[KCH / 4 * 2 * NR], zp[NR];
    size_t per = KCH / l->lp; /* blocks a pass; at least one, as L <= KCH */
    for (size_t pn = p0; pn < p1; pn += 2) {
        size_t j0 = pn * NR, w = J->n - j0 < 2 * NR ? J->n - j0 : 2 * NR;
        /* bytes from a panel's blocks to the next panel's */
        size_t pb = J->qb->packed ? l->nb * l->lp * NR : KCH * NR;
        for (size_t g0 = 0; g0 < l->nb; g0 += per) {
            size_t nbk = l->nb - g0 < per ? l->nb - g0 : per;
            const int8_t *b = J->qb->packed ? J->qb->packed + (pn * l->nb + g0) * l->lp * NR : bq;
            for (size_t h = 0; h < 2 && h * NR < w; h++) {
                size_t wh = w - h * NR < NR ? w - h * NR : NR;
                for (size_t g = 0; g < nbk; g++) {
                    if (!J->qb->packed)
                        cpu_gemm_qpanel_i8(J->qb, J->n, (g0 + g) * l->L, l->L, j0 + h * NR, wh, 0x80,
                                           bq + h * pb + g * l->lp * NR);
                    if (!J->qb->zero) continue;
                    for (size_t j = 0; j < NR; j++) zp[j] = 0;
                    cpu_gemm_qzero_i32(J->qb, J->n, g0 + g, j0 + h * NR, wh, zp);
                    for (size_t j = 0; j < NR; j++) zq[g * 2 * NR + h * NR + j] = zp[j] + 128;
                }
            }
            /* the packed B of the next pass, a share of its lines before
             * each tile: the first tile would otherwise wait on memory */
            const int8_t *nx = NULL;
            size_t ahead = 0, line = 0, tiles = (i1 - i0 + CPU_Q8_MR - 1) / CPU_Q8_MR, both = w > NR;
            if (J->qb->packed && g0 + nbk < l->nb) {
                nx = b + nbk * l->lp * NR;
                ahead = (l->nb - g0 - nbk < per ? l->nb - g0 - nbk : per) * l->lp * NR;
            } else if (J->qb->packed && pn + 2 < p1) {
                nx = J->qb->packed + (pn + 2) * l->nb * l->lp * NR;
                ahead = (l->nb < per ? l->nb : per) * l->lp * NR;
                both = (pn + 3) * NR < J->n;
            }
            size_t lines = (ahead / 64 + tiles - 1) / tiles;
            for (size_t i = i0; i < i1; i += CPU_Q8_MR) {
                for (size_t e = line + lines; nx && line < e && line * 64 < ahead; line++) {
                    __builtin_prefetch(nx + line * 64, 0, 2);
                    if (both) __builtin_prefetch(nx + pb + line * 64, 0, 2);
                }
                cpu_q8_tile t = {.nb = nbk, .k4 = l->lp / 4, .a = J->aq + i * l->kq + g0 * l->lp, .lda = l->kq,
                                 .lpa = l->lp, .sa = J->sa + i * l->nb + g0, .suma = J->suma + i * l->nb + g0,
                                 .ldsa = l->nb, .b = b, .pb = pb, .s = J->qb->scale + g0 * J->n + j0, .lds = J->n,
                                 .zq = J->qb->zero ? zq : NULL, .c = J->c + i * J->ldc + j0, .ldc = J->ldc,
                                 .rows = i1 - i < CPU_Q8_MR ? i1 - i : CPU_Q8_MR, .w = w, .acc = g0 > 0};
                J->fused(&t);
            }
        }
    }
}

/* The task with the tile: its int32 sums, block by block, then the
 * scaling pass into the panel's outputs. */
static void q8_tile_rows(const q8_job *J, size_t i0, size_t i1, size_t p0, size_t p1) {
    const q8_layout *l = &J->l;
    int8_t bq[KCH * NR] __attribute__((aligned(64)));
    int32_t acc[ROWS * NR], zp[NR];
    /* the panel's outputs while its blocks add up: C's rows are n floats
     * apart, and at n = 1536 (6 KiB) a task's rows fall into two
     * sets of a 48 KiB L1, so adding each block there missed every time */
    float yb[ROWS * NR];
    for (size_t pn = p0; pn < p1; pn++) {
        size_t j0 = pn * NR, w = J->n - j0 < NR ? J->n - j0 : NR;
        for (size_t g = 0; g < l->nb; g++) {
            for (size_t kk = 0; kk < l->L; kk += KCH) {
                size_t kc = l->L - kk < KCH ? l->L - kk : KCH, k4 = (kc + 3) / 4;
                cpu_gemm_qpanel_i8(J->qb, J->n, g * l->L + kk, kc, j0, w, 0, bq);
                for (size_t i = i0; i < i1; i += MR)
                    J->kernel(k4, J->aq + i * l->kq + g * l->lp + kk, l->kq, bq, acc + (i - i0) * NR, NR, kk > 0);
            }
            int32_t any = 0;
            if (J->qb->zero || J->qb->kind == CPU_Q_U8 || J->qb->kind == CPU_Q_U4) {
                cpu_gemm_qzero_i32(J->qb, J->n, g, j0, w, zp);
                for (size_t j = 0; j < w; j++) any |= zp[j];
            }
            scale_block(J, g, i0, i1, j0, w, acc, any ? zp : NULL, yb);
        }
        for (size_t i = i0; i < i1; i++) memcpy(J->c + i * J->ldc + j0, yb + (i - i0) * NR, sizeof(float) * w);
    }
}

/* Tasks are (block of rows, group of panels). */
static void q8_task(void *ctx, size_t t0, size_t t1) {
    const q8_job *J = ctx;
    size_t panels = (J->n + NR - 1) / NR;
    for (size_t t = t0; t < t1; t++) {
        size_t i0 = (t % J->n_rb) * J->rows, i1 = i0 + J->rows < J->m ? i0 + J->rows : J->m;
        size_t p0 = (t / J->n_rb) * J->panel_group, p1 = p0 + J->panel_group < panels ? p0 + J->panel_group : panels;
        if (J->fused)
            q8_fused_rows(J, i0, i1, p0, p1);
        else
            q8_tile_rows(J, i0, i1, p0, p1);
        cpu_gemm_epilogue(J->epi, J->c, J->ldc, i0, i1, p0 * NR, p1 * NR < J->n ? p1 * NR : J->n);
    }
}

void cpu_gemm_q8(cpu_pool *pool, cpu_dot_fn kernel, size_t m, size_t n, size_t k, const float *a, size_t lda,
                 const cpu_gemm_qb *qb, float *c, size_t ldc, const cpu_gemm_epi *epi, void *scratch, int quantized) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        for (size_t i = 0; i < m; i++) memset(c + i * ldc, 0, sizeof(float) * n);
        cpu_gemm_epilogue(epi, c, ldc, 0, m, 0, n);
        return;
    }
    q8_job J = {.kernel = kernel, .l = layout(m, k, qb->rows), .m = m, .n = n, .lda = lda, .ldc = ldc, .a = a,
                .qb = qb, .c = c, .epi = epi};
    /* blocks longer than a B slice keep the tile: their sums span slices */
    if (J.l.L <= KCH) J.fused = cpu_q8_fused(kernel);
    J.aq = scratch;
    J.sa = (float *)((uint8_t *)scratch + J.l.off_scale);
    J.suma = (int32_t *)((uint8_t *)scratch + J.l.off_sum);
    if (!quantized) cpu_pool_for(m * k >= 65536 ? pool : NULL, J.l.mp, MR, quantize_rows, &J);
    size_t panels = (n + NR - 1) / NR, want = (size_t)cpu_pool_threads(pool) * 4;
    J.rows = J.fused ? FROWS : ROWS;
    J.n_rb = (m + J.rows - 1) / J.rows;
    size_t groups = J.n_rb >= want ? 1 : (want + J.n_rb - 1) / J.n_rb;
    /* the fused tile takes panels in pairs: groups of whole pairs */
    size_t unit = J.fused ? 2 : 1, units = (panels + unit - 1) / unit;
    if (groups > units) groups = units;
    J.panel_group = (units + groups - 1) / groups * unit;
    size_t tasks = J.n_rb * ((panels + J.panel_group - 1) / J.panel_group);
    cpu_pool_for(tasks > 1 && (double)m * (double)n * (double)k >= CPU_GEMM_SERIAL ? pool : NULL, tasks, 1, q8_task, &J);
}
