/* berth.attention: softmax(q k^T * scale + mask) v per (batch, head),
 * with q [B, H, Sq, D], k and v [B, H, Sk, D] and an optional additive
 * mask broadcast to [B, H, Sq, Sk]. Each (batch, head) is one pool task
 * with its own score block in arena scratch, so tasks never share. */
#include <cblas.h>
#include <math.h>

#include "cpu_internal.h"

typedef struct attn_params {
    int64_t b, h, sq, sk, d, dv;
    float scale;
    uint32_t mask;
    int64_t mstride[4]; /* element strides of the mask over [B, H, Sq, Sk], 0 where it broadcasts */
    const float *q, *k, *v, *m;
    float *y, *scores;
} attn_params;

static void attn_task(void *ctx, size_t t0, size_t t1) {
    const attn_params *A = ctx;
    for (size_t t = t0; t < t1; t++) {
        int64_t bi = (int64_t)t / A->h, hi = (int64_t)t % A->h;
        const float *q = A->q + (size_t)t * (size_t)(A->sq * A->d);
        const float *k = A->k + (size_t)t * (size_t)(A->sk * A->d);
        const float *v = A->v + (size_t)t * (size_t)(A->sk * A->dv);
        float *s = A->scores + (size_t)t * (size_t)(A->sq * A->sk);
        float *y = A->y + (size_t)t * (size_t)(A->sq * A->dv);
        if (A->sq == 0) continue;
        if (A->sk == 0 || A->d == 0) {
            for (int64_t i = 0; i < A->sq * A->sk; i++) s[i] = 0.0f;
        } else {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)A->sq, (blasint)A->sk, (blasint)A->d, A->scale,
                        q, (blasint)A->d, k, (blasint)A->d, 0.0f, s, (blasint)A->sk);
        }
        for (int64_t i = 0; i < A->sq; i++) {
            float *row = s + i * A->sk;
            if (A->m) {
                const float *mr = A->m + bi * A->mstride[0] + hi * A->mstride[1] + i * A->mstride[2];
                for (int64_t j = 0; j < A->sk; j++) row[j] += mr[j * A->mstride[3]];
            }
            float mx = -INFINITY;
            for (int64_t j = 0; j < A->sk; j++) mx = fmaxf(mx, row[j]);
            double sum = 0;
            for (int64_t j = 0; j < A->sk; j++) {
                row[j] = isinf(mx) && mx < 0 ? 0.0f : expf(row[j] - mx);
                sum += row[j];
            }
            float inv = sum > 0 ? (float)(1.0 / sum) : 0.0f;
            for (int64_t j = 0; j < A->sk; j++) row[j] *= inv;
        }
        if (A->sk == 0 || A->dv == 0) {
            for (int64_t i = 0; i < A->sq * A->dv; i++) y[i] = 0.0f;
            continue;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)A->sq, (blasint)A->dv, (blasint)A->sk, 1.0f, s,
                    (blasint)A->sk, v, (blasint)A->dv, 0.0f, y, (blasint)A->dv);
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
    cpu_pool_for(p->dev->pool, (size_t)(A->b * A->h), 1, attn_task, A);
}

berth_status cpu_prep_attention(cpu_prep *c) {
    berth_status st = cpu_check_counts(c, 3, 3, 1);
    if (!st) st = cpu_check_same_dtype(c, 3, CPU_BIT(BERTH_DTYPE_F32));
    if (st) return st;
    const cpu_opnd *q = cpu_in(c, 0), *k = cpu_in(c, 1), *v = cpu_in(c, 2);
    if (q->rank != 4 || k->rank != 4 || v->rank != 4)
        return cpu_fail(c, "q, k and v must be 4-D [batch, heads, seq, dim], found ranks %u, %u, %u", q->rank, k->rank, v->rank);
    attn_params *A = cpu_params(c, sizeof *A);
    if (!A) return BERTH_ERR_NOMEM;
    A->b = q->dims[0], A->h = q->dims[1], A->sq = q->dims[2], A->d = q->dims[3];
    A->sk = k->dims[2], A->dv = v->dims[3];
    if (k->dims[0] != A->b || k->dims[1] != A->h || k->dims[3] != A->d || v->dims[0] != A->b || v->dims[1] != A->h ||
        v->dims[2] != A->sk) {
        char sq[96], sk[96], sv[96];
        cpu_dims_str(q->dims, 4, sq, sizeof sq);
        cpu_dims_str(k->dims, 4, sk, sizeof sk);
        cpu_dims_str(v->dims, 4, sv, sizeof sv);
        return cpu_fail(c, "q %s, k %s and v %s do not agree", sq, sk, sv);
    }
    int64_t od[4] = {A->b, A->h, A->sq, A->dv};
    if ((st = cpu_check_out_dims(c, 0, 4, od))) return st;
    double scale;
    if ((st = cpu_attr_float(c, "scale", A->d > 0 ? 1.0 / sqrt((double)A->d) : 1.0, &scale))) return st;
    A->scale = (float)scale;
    if ((st = cpu_attr_operand(c, "mask", &A->mask))) return st;
    if (A->mask != CPU_NONE) {
        const cpu_opnd *m = &c->plan->ops[A->mask];
        int64_t full[4] = {A->b, A->h, A->sq, A->sk};
        if (m->dtype != BERTH_DTYPE_F32 || m->rank > 4) return cpu_fail(c, "mask: expected float32 of rank <= 4");
        int64_t s = 1;
        for (int d = 3; d >= 0; d--) {
            int md = d - (4 - (int)m->rank);
            int64_t ext = md < 0 ? 1 : m->dims[md];
            if (ext != 1 && ext != full[d])
                return cpu_fail(c, "mask: dim %d is %lld, does not broadcast to %lld", d, (long long)ext, (long long)full[d]);
            A->mstride[d] = ext == 1 ? 0 : s;
            s *= ext;
        }
    }
    c->cn->scratch_bytes = sizeof(float) * (size_t)(A->b * A->h * A->sq * A->sk);
    c->cn->exec = attn_exec;
    return BERTH_OK;
}
