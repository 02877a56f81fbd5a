/* Matrix products: matmul (batched, broadcast batch dims, WebNN's 1-D
 * rules), gemm, and the engine's fused berth.matmulEpilogue. Batch
 * offsets are computed at plan time. A product whose right-hand side is a
 * 2-D weight runs berth's packed kernel (gemm.c) on panels packed once
 * per weight, with the epilogue fused per tile. Other products go
 * through OpenBLAS, single threaded: the batches of a batched product
 * are spread over the pool, and one big product is split over it by
 * rows (or columns when it has few rows). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

/* Up to this m*n*k berth multiplies itself: OpenBLAS (0.3.21) sends such
 * products to its small-matrix kernels, which allocate on every call on
 * some cpus (a [1, 200] x [200, 2] product: two mallocs per run), and a
 * warm run must not allocate. */
#define TINY_GEMM 1000000

CPU_CLONES static void tiny_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                                  int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
    for (int64_t i = 0; i < m; i++) {
        float *restrict ci = c + i * ldc;
        for (int64_t j = 0; j < n; j++) ci[j] = beta == 0.0f ? 0.0f : beta * ci[j];
        if (!tb) {
            for (int64_t p = 0; p < k; p++) {
                float av = alpha * (ta ? a[p * lda + i] : a[i * lda + p]);
                const float *restrict bp = b + p * ldb;
                for (int64_t j = 0; j < n; j++) ci[j] += av * bp[j];
            }
        } else {
            for (int64_t j = 0; j < n; j++) {
                const float *restrict bj = b + j * ldb;
                float s = 0.0f;
                for (int64_t p = 0; p < k; p++) s += (ta ? a[p * lda + i] : a[i * lda + p]) * bj[p];
                ci[j] += alpha * s;
            }
        }
    }
}

static void sgemm1(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                   const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return;
    }
    if ((double)m * (double)n * (double)k <= TINY_GEMM) {
        tiny_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m,
                (blasint)n, (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

void cpu_blas_thread_init(void) {
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
}

typedef struct rows_job {
    int ta, tb;
    int64_t m, n, k, lda, ldb, ldc, block;
    float alpha, beta;
    const float *a, *b;
    float *c;
} rows_job;

static void cols_task(void *ctx, size_t b0, size_t b1) {
    const rows_job *j = ctx;
    for (size_t blk = b0; blk < b1; blk++) {
        int64_t j0 = (int64_t)blk * j->block, j1 = j0 + j->block < j->n ? j0 + j->block : j->n;
        const float *b = j->tb ? j->b + j0 * j->ldb : j->b + j0;
        sgemm1(j->ta, j->tb, j->m, j1 - j0, j->k, j->alpha, j->a, j->lda, b, j->ldb, j->beta, j->c + j0, j->ldc);
    }
}

static void rows_task(void *ctx, size_t b0, size_t b1) {
    const rows_job *j = ctx;
    for (size_t blk = b0; blk < b1; blk++) {
        int64_t i0 = (int64_t)blk * j->block, i1 = i0 + j->block < j->m ? i0 + j->block : j->m;
        const float *a = j->ta ? j->a + i0 : j->a + i0 * j->lda;
        sgemm1(j->ta, j->tb, i1 - i0, j->n, j->k, j->alpha, a, j->lda, j->b, j->ldb, j->beta, j->c + i0 * j->ldc,
               j->ldc);
    }
}

/* OpenBLAS runs single threaded (its threaded driver allocates a job
 * table on every call, and run() must not allocate), so a large product
 * is split into row blocks over the pool, or column blocks when it has
 * few rows. Call from the run thread only. */
void cpu_matmul_f32(berth_plan *p, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                    int64_t ldc) {
    int threads = cpu_pool_threads(p->dev->pool);
    if (threads <= 1 || (m < 32 && n < 128) || (double)m * (double)n * (double)k < CPU_GEMM_SERIAL) {
        sgemm1(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    int by_rows = m >= 32;
    int64_t extent = by_rows ? m : n, min_block = by_rows ? 16 : 64;
    int64_t block = (extent + threads * 2 - 1) / (threads * 2);
    if (block < min_block) block = min_block;
    rows_job j = {ta, tb, m, n, k, lda, ldb, ldc, block, alpha, beta, a, b, c};
    cpu_pool_for(p->dev->pool, (size_t)((extent + block - 1) / block), 1, by_rows ? rows_task : cols_task, &j);
}

typedef struct mm_params {
    int64_t m, n, k;
    size_t batch;
    size_t *a_off, *b_off; /* element offsets per batch, in the params block */
    /* B is a 2-D weight: its panels, packed once and shared by every plan
     * on these weights; then each batch (or all of them folded into the
     * rows when A is contiguous) runs berth's own kernel */
    const float *bpack;
    const float *a, *b;
    float *y;
    berth_plan *p;
    /* epilogue */
    int act;
    uint32_t bias, residual;
} mm_params;

static void mm_task(void *ctx, size_t b0, size_t b1) {
    const mm_params *mp = ctx;
    for (size_t i = b0; i < b1; i++)
        sgemm1(0, 0, mp->m, mp->n, mp->k, 1.0f, mp->a + mp->a_off[i], mp->k,
                       mp->b + mp->b_off[i], mp->n, 0.0f, mp->y + i * (size_t)(mp->m * mp->n), mp->n);
}

/* y = a @ b, then the epilogue (which may be NULL) over all of y. */
static void mm_run(mm_params *mp, const cpu_node *n, berth_plan *p, const cpu_gemm_epi *epi) {
    mp->a = cpu_ptr(p, n->in[0]);
    mp->b = cpu_ptr(p, n->in[1]);
    mp->y = cpu_ptr(p, n->out[0]);
    mp->p = p;
    size_t mn = (size_t)(mp->m * mp->n);
    if (mp->bpack) {
        for (size_t i = 0; i < mp->batch; i++) {
            cpu_gemm_epi e;
            if (epi) {
                e = *epi;
                if (e.res) e.res += i * mn;
            }
            cpu_gemm(p->dev->pool, p->dev->gemm, (size_t)mp->m, (size_t)mp->n, (size_t)mp->k, mp->a + mp->a_off[i],
                     (size_t)mp->k, mp->bpack, mp->y + i * mn, (size_t)mp->n, epi ? &e : NULL);
        }
        return;
    }
    if (mp->batch == 1)
        cpu_matmul_f32(p, 0, 0, mp->m, mp->n, mp->k, 1.0f, mp->a, mp->k, mp->b, mp->n, 0.0f, mp->y, mp->n);
    else
        cpu_pool_for(p->dev->pool, mp->batch, 1, mm_task, mp);
    if (epi) cpu_gemm_epilogue(epi, mp->y, (size_t)mp->n, 0, mp->batch * (size_t)mp->m, 0, (size_t)mp->n);
}

static void mm_exec(const cpu_node *n, berth_plan *p) { mm_run(n->params, n, p, NULL); }

/* B (input 1) as a 2-D weight worth packing into panels, or NULL: one
 * narrower than half a panel would be mostly padding, in memory and in
 * the products, and stays as uploaded. */
static const berth_operand *packable_b(const cpu_prep *c, int64_t n, int64_t k) {
    const berth_operand *bo = &c->g->operands[c->node->inputs[1]];
    if (bo->kind != BERTH_OPERAND_WEIGHT || bo->rank != 2 || !c->plan->w || n <= 0 || k <= 0 ||
        2 * n < c->plan->dev->gemm->nr)
        return NULL;
    return bo;
}

/* Packs a 2-D weight B at plan time and folds the batch into the rows
 * where A's batches lie back to back. */
static berth_status mm_pack(cpu_prep *c, mm_params *mp) {
    const berth_operand *bo = packable_b(c, mp->n, mp->k);
    if (!bo) return BERTH_OK;
    int contiguous = 1;
    for (size_t i = 0; i < mp->batch; i++) contiguous &= mp->a_off[i] == i * (size_t)(mp->m * mp->k);
    mp->bpack = cpu_weight_packed(c->plan->w, bo->weight, 0, (size_t)mp->k, (size_t)mp->n, c->err);
    if (!mp->bpack) return BERTH_ERR_NOMEM;
    c->cn->packed_in |= 1u << 1; /* b is never read as uploaded */
    if (contiguous && mp->batch > 1) {
        mp->m *= (int64_t)mp->batch;
        mp->batch = 1;
    }
    return BERTH_OK;
}

/* Shapes, 1-D rules and batch broadcasting shared by matmul and the epilogue. */
static berth_status mm_prepare(cpu_prep *c, mm_params **out) {
    berth_status st = bk_check_same_dtype(&c->bk, 2, BK_BIT(BERTH_DTYPE_F32));
    if (st) return st;
    const cpu_opnd *a = cpu_in(c, 0), *b = cpu_in(c, 1);
    if (a->rank == 0 || b->rank == 0) return bk_fail(&c->bk, "inputs must have rank >= 1, found %u and %u", a->rank, b->rank);
    int64_t ad[BERTH_MAX_RANK + 1], bd[BERTH_MAX_RANK + 1];
    uint32_t ar = a->rank, br = b->rank;
    memcpy(ad, a->dims, sizeof a->dims);
    memcpy(bd, b->dims, sizeof b->dims);
    if (ar == 1) { ad[1] = ad[0]; ad[0] = 1; ar = 2; }
    if (br == 1) { bd[1] = 1; br = 2; }
    int64_t m = ad[ar - 2], k = ad[ar - 1], n = bd[br - 1];
    if (bd[br - 2] != k)
        return bk_fail(&c->bk, "inner dims differ: a has %lld columns, b has %lld rows", (long long)k,
                        (long long)bd[br - 2]);
    uint32_t ba = ar - 2, bb = br - 2, rb = ba > bb ? ba : bb;
    int64_t od[BERTH_MAX_RANK + 2];
    size_t batch = 1;
    for (uint32_t d = 0; d < rb; d++) {
        int64_t x = (int64_t)d - (int64_t)(rb - ba) >= 0 ? ad[d - (rb - ba)] : 1;
        int64_t y = (int64_t)d - (int64_t)(rb - bb) >= 0 ? bd[d - (rb - bb)] : 1;
        if (x != y && x != 1 && y != 1)
            return bk_fail(&c->bk, "batch dim %u does not broadcast: %lld vs %lld", d, (long long)x, (long long)y);
        od[d] = x == 1 ? y : x;
        batch *= (size_t)od[d];
    }
    uint32_t orank = rb;
    if (a->rank > 1) od[orank++] = m;
    if (b->rank > 1) od[orank++] = n;
    if (orank > BERTH_MAX_RANK) return bk_fail(&c->bk, "output rank %u exceeds %d", orank, BERTH_MAX_RANK);
    mm_params *mp = cpu_params(c, sizeof *mp + 2 * sizeof(size_t) * (batch ? batch : 1));
    if (!mp) return BERTH_ERR_NOMEM;
    mp->a_off = (size_t *)(mp + 1);
    mp->b_off = mp->a_off + batch;
    mp->m = m, mp->n = n, mp->k = k, mp->batch = batch;
    for (size_t i = 0; i < batch; i++) {
        size_t rest = i, oa = 0, ob = 0, sa = (size_t)(m * k), sb = (size_t)(k * n);
        for (int d = (int)rb - 1; d >= 0; d--) {
            size_t idx = rest % (size_t)od[d];
            rest /= (size_t)od[d];
            int64_t xa = d - (int64_t)(rb - ba), xb = d - (int64_t)(rb - bb);
            if (xa >= 0) {
                if (ad[xa] != 1) oa += idx * sa;
                sa *= (size_t)ad[xa];
            }
            if (xb >= 0) {
                if (bd[xb] != 1) ob += idx * sb;
                sb *= (size_t)bd[xb];
            }
        }
        mp->a_off[i] = oa;
        mp->b_off[i] = ob;
    }
    mp->bias = mp->residual = CPU_NONE;
    *out = mp;
    return BERTH_OK;
}

berth_status cpu_prep_matmul(cpu_prep *c) {
    berth_status st = BERTH_OK;
    mm_params *mp;
    if (!st) st = mm_prepare(c, &mp);
    if (!st) st = mm_pack(c, mp);
    if (st) return st;
    c->cn->exec = mm_exec;
    return BERTH_OK;
}

/* ---- berth.matmulEpilogue: y = act(a @ b + bias) + residual ---- */

static void epi_exec(const cpu_node *n, berth_plan *p) {
    mm_params *mp = n->params;
    cpu_gemm_epi epi = {.act = mp->act, .ldr = (size_t)mp->n};
    if (mp->bias != CPU_NONE) epi.bias = cpu_ptr(p, mp->bias);
    if (mp->residual != CPU_NONE) epi.res = cpu_ptr(p, mp->residual);
    mm_run(mp, n, p, &epi);
}

berth_status cpu_prep_matmul_epilogue(cpu_prep *c) {
    berth_status st = BERTH_OK;
    mm_params *mp;
    if (!st) st = mm_prepare(c, &mp);
    if (st) return st;
    st = bk_param_activation(&c->bk, &mp->act); /* in CPU_ACT_* order */
    if (st) return st;
    st = bk_opt_operand(&c->bk, "bias", &mp->bias);
    if (!st) st = bk_opt_operand(&c->bk, "residual", &mp->residual);
    if (st) return st;
    st = mm_pack(c, mp);
    if (st) return st;
    c->cn->exec = epi_exec;
    return BERTH_OK;
}

/* ---- gemm: alpha * op(a) @ op(b) + beta * c ---- */

typedef struct gemm_params {
    int ta, tb;
    int64_t m, n, k;
    float alpha, beta;
    uint32_t c;
    int64_t cm, cn; /* c's extent along m and n: 1 broadcasts */
    /* B is a 2-D weight packed once (with its transpose), and beta * c is
     * the kernel's epilogue: a bias per column or per row, or a residual */
    const float *bpack;
    int epi; /* GEMM_EPI_* */
} gemm_params;

enum { GEMM_EPI_NONE, GEMM_EPI_COLS, GEMM_EPI_ROWS, GEMM_EPI_FULL };

static void gemm_exec(const cpu_node *nd, berth_plan *p) {
    const gemm_params *g = nd->params;
    const float *a = cpu_ptr(p, nd->in[0]);
    float *y = cpu_ptr(p, nd->out[0]);
    if (g->bpack) {
        cpu_gemm_epi e = {.ldr = (size_t)g->n}, *epi = NULL;
        if (g->epi != GEMM_EPI_NONE) {
            const float *cv = cpu_ptr(p, g->c);
            epi = &e;
            if (g->epi == GEMM_EPI_FULL) e.res = cv;
            else e.bias = cv, e.bias_rows = g->epi == GEMM_EPI_ROWS;
        }
        cpu_gemm(p->dev->pool, p->dev->gemm, (size_t)g->m, (size_t)g->n, (size_t)g->k, a, (size_t)g->k, g->bpack, y,
                 (size_t)g->n, epi);
        return;
    }
    const float *b = cpu_ptr(p, nd->in[1]);
    float beta = 0.0f;
    if (g->c != CPU_NONE && g->beta != 0.0f) {
        const float *cv = cpu_ptr(p, g->c);
        for (int64_t i = 0; i < g->m; i++)
            for (int64_t j = 0; j < g->n; j++)
                y[i * g->n + j] = g->beta * cv[(g->cm == 1 ? 0 : i) * g->cn + (g->cn == 1 ? 0 : j)];
        beta = 1.0f;
    }
    cpu_matmul_f32(p, g->ta, g->tb, g->m, g->n, g->k, g->alpha, a, g->ta ? g->m : g->k, b, g->tb ? g->k : g->n,
                   beta, y, g->n);
}

/* The packed path: B a 2-D weight, A not transposed, alpha 1, and c
 * absent, scaled by 0, or added as it is in a shape the epilogue takes
 * (a scalar c of a product wider than one column is not). */
static berth_status gemm_pack(cpu_prep *c, gemm_params *g) {
    const berth_operand *bo = packable_b(c, g->n, g->k);
    if (!bo || g->ta || g->alpha != 1.0f) return BERTH_OK;
    int epi = GEMM_EPI_NONE;
    if (g->c != CPU_NONE && g->beta != 0.0f) {
        if (g->beta != 1.0f) return BERTH_OK;
        if (g->cm == g->m && g->cn == g->n) epi = GEMM_EPI_FULL;
        else if (g->cm == 1 && g->cn == g->n) epi = GEMM_EPI_COLS;
        else if (g->cm == g->m && g->cn == 1) epi = GEMM_EPI_ROWS;
        else return BERTH_OK;
    }
    g->bpack = cpu_weight_packed(c->plan->w, bo->weight, g->tb, (size_t)g->k, (size_t)g->n, c->err);
    if (!g->bpack) return BERTH_ERR_NOMEM;
    g->epi = epi;
    c->cn->packed_in |= 1u << 1; /* b is never read as uploaded */
    return BERTH_OK;
}

berth_status cpu_prep_gemm(cpu_prep *c) {
    berth_status st;
    gemm_params *g = cpu_params(c, sizeof *g);
    if (!g) return BERTH_ERR_NOMEM;
    double alpha, beta;
    st = bk_opt_bool(&c->bk, "aTranspose", 0, &g->ta);
    if (!st) st = bk_opt_bool(&c->bk, "bTranspose", 0, &g->tb);
    if (!st) st = bk_opt_float(&c->bk, "alpha", 1.0, &alpha);
    if (!st) st = bk_opt_float(&c->bk, "beta", 1.0, &beta);
    if (!st) st = bk_opt_operand(&c->bk, "c", &g->c);
    if (st) return st;
    g->alpha = (float)alpha;
    g->beta = (float)beta;
    const cpu_opnd *a = cpu_in(c, 0), *b = cpu_in(c, 1);
    if (a->rank != 2 || b->rank != 2) return bk_fail(&c->bk, "inputs must be 2-D, found rank %u and %u", a->rank, b->rank);
    g->m = g->ta ? a->dims[1] : a->dims[0];
    g->k = g->ta ? a->dims[0] : a->dims[1];
    int64_t kb = g->tb ? b->dims[1] : b->dims[0];
    g->n = g->tb ? b->dims[0] : b->dims[1];
    if (kb != g->k) return bk_fail(&c->bk, "inner dims differ: a gives %lld, b gives %lld", (long long)g->k, (long long)kb);
    if (g->c != CPU_NONE) {
        const cpu_opnd *cv = &c->plan->ops[g->c];
        if (cv->dtype != BERTH_DTYPE_F32 || cv->rank > 2)
            return bk_fail(&c->bk, "c: expected float32 of rank <= 2, found %s rank %u", bk_dtype_name(cv->dtype), cv->rank);
        g->cm = cv->rank == 2 ? cv->dims[0] : 1;
        g->cn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
        if ((g->cm != 1 && g->cm != g->m) || (g->cn != 1 && g->cn != g->n))
            return bk_fail(&c->bk, "c: shape does not broadcast to [%lld, %lld]", (long long)g->m, (long long)g->n);
    }
    st = gemm_pack(c, g);
    if (st) return st;
    c->cn->exec = gemm_exec;
    return BERTH_OK;
}
