/* berth.attention: softmax(q k^T * scale + mask) v for each leading
 * index, with q [..., Sq, D], k [..., Sk, D], v [..., Sk, Dv] (usually
 * [batch, heads, seq, dim]) and an optional additive mask broadcast to
 * [..., Sq, Sk]. Each leading index is one pool task with its own score
 * block and packed panels in arena scratch, so tasks never share; both
 * products run on berth's packed kernel (gemm.c), the scale folded into
 * the packing of k^T and the softmax's exp vectorized (cpu_vmath.c). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_internal.h"

typedef struct attn_params {
    int64_t batch, sq, sk, d, dv;
    uint32_t n_lead;
    int64_t lead[BERTH_MAX_RANK];
    float scale;
    uint32_t mask;
    int64_t mstride[BERTH_MAX_RANK]; /* mask strides over [..., Sq, Sk], 0 where it broadcasts */
    const cpu_gemm_isa *isa;
    size_t kpack, vpack; /* floats of each task's packed k^T and v */
    const float *q, *k, *v, *m;
    float *y, *scores, *packs;
} attn_params;

/* Scores row i += mask, then softmax over it. */
static void softmax_row(const attn_params *A, size_t t, int64_t i, float *row) {
    if (A->m) {
        int64_t off = i * A->mstride[A->n_lead];
        size_t rest = t;
        for (int d = (int)A->n_lead - 1; d >= 0; d--) {
            off += (int64_t)(rest % (size_t)A->lead[d]) * A->mstride[d];
            rest /= (size_t)A->lead[d];
        }
        const float *mr = A->m + off;
        int64_t ms = A->mstride[A->n_lead + 1];
        if (ms == 1)
            for (int64_t j = 0; j < A->sk; j++) row[j] += mr[j];
        else
            for (int64_t j = 0; j < A->sk; j++) row[j] += mr[j * ms];
    }
    cpu_vsoftmax(row, (size_t)A->sk);
}

/* One leading index: both products on berth's kernel, with k^T (scaled)
 * and v packed into this task's own slice of the node scratch. */
static void attn_task(void *ctx, size_t t0, size_t t1) {
    const attn_params *A = ctx;
    for (size_t t = t0; t < t1; t++) {
        const float *q = A->q + (size_t)t * (size_t)(A->sq * A->d);
        const float *k = A->k + (size_t)t * (size_t)(A->sk * A->d);
        const float *v = A->v + (size_t)t * (size_t)(A->sk * A->dv);
        float *s = A->scores + (size_t)t * (size_t)(A->sq * A->sk);
        float *y = A->y + (size_t)t * (size_t)(A->sq * A->dv);
        float *kp = A->packs + t * (A->kpack + A->vpack);
        const float *vp = kp + A->kpack;
        if (A->sq == 0) continue;
        if (A->sk == 0 || A->dv == 0) {
            memset(y, 0, sizeof(float) * (size_t)(A->sq * A->dv));
            continue;
        }
        cpu_gemm_pack_b(A->isa, k, (size_t)A->d, 1, (size_t)A->d, (size_t)A->sk, A->scale, kp);
        cpu_gemm(NULL, A->isa, (size_t)A->sq, (size_t)A->sk, (size_t)A->d, q, (size_t)A->d, kp, s, (size_t)A->sk, NULL);
        for (int64_t i = 0; i < A->sq; i++) softmax_row(A, t, i, s + i * A->sk);
        /* v of exactly one panel's width is already in panel layout */
        if (A->dv == A->isa->nr && ((uintptr_t)v & (CPU_ALIGN - 1)) == 0)
            vp = (float *)v;
        else
            cpu_gemm_pack_b(A->isa, v, (size_t)A->dv, 0, (size_t)A->sk, (size_t)A->dv, 1.0f, kp + A->kpack);
        cpu_gemm(NULL, A->isa, (size_t)A->sq, (size_t)A->dv, (size_t)A->sk, s, (size_t)A->sk, vp, y, (size_t)A->dv, NULL);
    }
}

static void attn_exec(const cpu_node *n, berth_plan *p) {
    attn_params *A = n->params;
    A->q = cpu_ptr(p, n->in[0]);
    A->k = cpu_ptr(p, n->in[1]);
    A->v = cpu_ptr(p, n->in[2]);
    A->m = A->mask != CPU_NONE ? cpu_ptr(p, A->mask) : NULL;
    A->y = cpu_ptr(p, n->out[0]);
    A->scores = (float *)cpu_scratch(p, n);
    A->packs = A->scores + (((size_t)(A->batch * A->sq * A->sk) + 15) & ~(size_t)15);
    cpu_pool_for(p->dev->pool, (size_t)A->batch, 1, attn_task, A);
}

berth_status cpu_prep_attention(cpu_prep *c) {
    const cpu_opnd *q = cpu_in(c, 0);
    uint32_t r = q->rank;
    attn_params *A = cpu_params(c, sizeof *A);
    if (!A) return BERTH_ERR_NOMEM;
    bk_attention at;
    berth_status st = bk_param_attention(&c->bk, &at);
    if (st) return st;
    A->n_lead = r - 2;
    A->batch = (int64_t)at.batch;
    for (uint32_t d = 0; d < r - 2; d++) A->lead[d] = q->dims[d];
    A->sq = at.sq, A->d = at.d, A->sk = at.sk, A->dv = at.dv;
    A->scale = (float)at.scale;
    A->mask = at.mask;
    memcpy(A->mstride, at.mstride, sizeof A->mstride);
    A->isa = c->plan->dev->gemm;
    A->kpack = cpu_gemm_packed_floats(A->isa, (size_t)A->d, (size_t)A->sk);
    A->vpack = cpu_gemm_packed_floats(A->isa, (size_t)A->sk, (size_t)A->dv);
    /* [scores of every task | each task's packed k^T and v]; the score
     * block's size keeps the packs 64-byte aligned only when rounded */
    size_t scores = (size_t)(A->batch * A->sq * A->sk);
    scores = (scores + 15) & ~(size_t)15;
    c->cn->scratch_bytes = sizeof(float) * (scores + (size_t)A->batch * (A->kpack + A->vpack));
    c->cn->exec = attn_exec;
    return BERTH_OK;
}
