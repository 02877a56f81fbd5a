/* berth.attention: softmax(q k^T * scale + mask) v for each leading
 * index, with q [..., Sq, D], k [..., Sk, D], v [..., Sk, Dv] (usually
 * [batch, heads, seq, dim]) and an optional additive mask broadcast to
 * [..., Sq, Sk]. Each leading index is one pool task with its own score
 * block and packed panels in arena scratch, so tasks never share; both
 * products run on berth's packed kernel (gemm.c), the scale folded into
 * the packing of k^T and the softmax's exp vectorized (cpu_vmath.c).
 *
 * An encoder moves heads past tokens ([b, s, h, d] to [b, h, s, d]) for
 * q, k and v, and back for the output: four copies of every value a
 * layer, 3% of the 12-layer encoder's time. Those transposes become
 * views here: a head's rows are read, and written, h * d floats apart in
 * the token-major bytes (cpu_opnd.heads_swapped), which the products
 * take as their row stride. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_internal.h"

/* Where leading index t = (b, h) of an operand starts, b * sb + h * sh,
 * and its row stride ld (h: the last leading dim, of `heads` values). */
typedef struct attn_layout {
    size_t sb, sh, ld;
} attn_layout;

typedef struct attn_params {
    int64_t batch, sq, sk, d, dv, heads;
    attn_layout lq, lk, lv, ly;
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

static size_t head_at(const attn_layout *l, int64_t heads, size_t t) {
    return (t / (size_t)heads) * l->sb + (t % (size_t)heads) * l->sh;
}

/* One leading index: both products on berth's kernel, with k^T (scaled)
 * and v packed into this task's own slice of the node scratch. */
static void attn_task(void *ctx, size_t t0, size_t t1) {
    const attn_params *A = ctx;
    for (size_t t = t0; t < t1; t++) {
        const float *q = A->q + head_at(&A->lq, A->heads, t);
        const float *k = A->k + head_at(&A->lk, A->heads, t);
        const float *v = A->v + head_at(&A->lv, A->heads, t);
        float *y = A->y + head_at(&A->ly, A->heads, t);
        float *s = A->scores + (size_t)t * (size_t)(A->sq * A->sk);
        float *kp = A->packs + t * (A->kpack + A->vpack);
        const float *vp = kp + A->kpack;
        if (A->sq == 0) continue;
        if (A->sk == 0 || A->dv == 0) {
            for (int64_t i = 0; i < A->sq; i++) memset(y + (size_t)i * A->ly.ld, 0, sizeof(float) * (size_t)A->dv);
            continue;
        }
        cpu_gemm_pack_b(A->isa, k, A->lk.ld, 1, (size_t)A->d, (size_t)A->sk, A->scale, kp);
        cpu_gemm(NULL, A->isa, (size_t)A->sq, (size_t)A->sk, (size_t)A->d, q, A->lq.ld, kp, s, (size_t)A->sk, NULL);
        for (int64_t i = 0; i < A->sq; i++) softmax_row(A, t, i, s + i * A->sk);
        /* v of exactly one panel's width is already in panel layout */
        if (A->dv == A->isa->nr && A->lv.ld == (size_t)A->dv && ((uintptr_t)v & (CPU_ALIGN - 1)) == 0)
            vp = (float *)v;
        else
            cpu_gemm_pack_b(A->isa, v, A->lv.ld, 0, (size_t)A->sk, (size_t)A->dv, 1.0f, kp + A->kpack);
        cpu_gemm(NULL, A->isa, (size_t)A->sq, (size_t)A->dv, (size_t)A->sk, s, (size_t)A->sk, vp, y, A->ly.ld, NULL);
    }
}

/* [.., heads, s, w] in its own bytes, or heads swapped with tokens. */
static attn_layout layout_of(int swapped, int64_t heads, int64_t s, int64_t w) {
    if (swapped) return (attn_layout){.sb = (size_t)(s * heads * w), .sh = (size_t)w, .ld = (size_t)(heads * w)};
    return (attn_layout){.sb = (size_t)(heads * s * w), .sh = (size_t)(s * w), .ld = (size_t)w};
}

int cpu_perm_swaps_heads(const int64_t *perm, int n) {
    return n == 4 && perm[0] == 0 && perm[1] == 2 && perm[2] == 1 && perm[3] == 3;
}

typedef struct reads {
    uint32_t o;
    uint32_t n;
} reads;

static void count_read(void *ctx, uint32_t x) {
    reads *r = ctx;
    r->n += x == r->o;
}

static int is_output(const berth_graph_desc *g, uint32_t o) {
    for (uint32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == o) return 1;
    return 0;
}

int cpu_read_by_attention_only(const berth_graph_desc *g, uint32_t o) {
    if (is_output(g, o)) return 0;
    int any = 0;
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        const berth_node *n = &g->nodes[k];
        reads r = {o, 0};
        bk_node_reads(n, count_read, &r);
        if (!r.n) continue;
        if (strcmp(n->op, "berth.attention") || n->n_inputs != 3) return 0;
        uint32_t as_qkv = (n->inputs[0] == o) + (n->inputs[1] == o) + (n->inputs[2] == o);
        if (as_qkv != r.n) return 0; /* also its mask */
        any = 1;
    }
    return any;
}

int cpu_read_by_heads_transpose_only(const berth_graph_desc *g, uint32_t o) {
    if (is_output(g, o)) return 0;
    const berth_node *only = NULL;
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        reads r = {o, 0};
        bk_node_reads(&g->nodes[k], count_read, &r);
        if (!r.n) continue;
        if (only || r.n != 1) return 0;
        only = &g->nodes[k];
    }
    if (!only || strcmp(only->op, "transpose")) return 0;
    for (uint32_t a = 0; a < only->n_attrs; a++) {
        const berth_attr *at = &only->attrs[a];
        if (!strcmp(at->key, "permutation") && at->type == BERTH_ATTR_INTS)
            return cpu_perm_swaps_heads(at->ints, (int)at->count);
    }
    return 0;
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
    A->heads = r > 2 ? q->dims[r - 3] : 1;
    cpu_opnd *y = &c->plan->ops[c->node->outputs[0]];
    if (r == 4 && cpu_read_by_heads_transpose_only(c->g, c->node->outputs[0])) y->heads_swapped = 1;
    A->lq = layout_of(q->heads_swapped, A->heads, A->sq, A->d);
    A->lk = layout_of(cpu_in(c, 1)->heads_swapped, A->heads, A->sk, A->d);
    A->lv = layout_of(cpu_in(c, 2)->heads_swapped, A->heads, A->sk, A->dv);
    A->ly = layout_of(y->heads_swapped, A->heads, A->sq, A->dv);
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
