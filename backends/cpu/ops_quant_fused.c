/* The engine's quantized fused ops, computed from the weights as
 * uploaded (int8, uint8, or 4-bit packed two per byte), never from a
 * float copy of them: berth.matmulQuantized runs berth's packed kernel on
 * slices dequantized per task (gemm.c, gemm_dequant.c), or with
 * quantized_activations = int8 integer dot products (gemm_int8.c), with
 * berth.matmulEpilogue's epilogue; berth.gatherQuantized dequantizes the
 * rows it picks. */
#include <string.h>

#include "cpu_internal.h"

typedef struct mmq_params {
    size_t m, n, k; /* a's leading dims folded into m */
    cpu_gemm_qb qb; /* pointers filled per run */
    uint32_t b, scale, zero, bias, residual;
    int act;
    int quantized; /* int8 activations: an earlier product quantized a into the scratch this one reads */
} mmq_params;

static int q_kind(berth_dtype t) {
    return t == BERTH_DTYPE_I8 ? CPU_Q_I8 : t == BERTH_DTYPE_U8 ? CPU_Q_U8 : t == BERTH_DTYPE_I4 ? CPU_Q_I4 : CPU_Q_U4;
}

static int is_q(berth_dtype t) {
    return t == BERTH_DTYPE_I8 || t == BERTH_DTYPE_U8 || t == BERTH_DTYPE_I4 || t == BERTH_DTYPE_U4;
}

/* The weights, scale and zero point of a quantized node: q [r, c] with
 * scale and zero [g0, g1] of the same 2-D shape (zero, input 3, may be
 * left out: all zeros), blocks along the rows (by_rows) or within them.
 * Returns the block length in *rows and zero's operand (or CPU_NONE). */
static berth_status q_operands(cpu_prep *c, uint32_t qi, int by_rows, size_t *rows, uint32_t *zero) {
    const cpu_opnd *q = cpu_in(c, qi), *s = cpu_in(c, 2), *z = c->node->n_inputs > 3 ? cpu_in(c, 3) : NULL;
    *zero = z ? c->node->inputs[3] : CPU_NONE;
    if (!is_q(q->dtype))
        return bk_refuse(&c->bk, "quantized weights: expected int8, uint8, int4 or uint4, found %s",
                         bk_dtype_name(q->dtype));
    if (q->rank != 2 || s->rank != 2 || s->dtype != BERTH_DTYPE_F32)
        return bk_fail(&c->bk, "expected 2-D weights and a 2-D float32 scale, found rank %u and %s rank %u", q->rank,
                       bk_dtype_name(s->dtype), s->rank);
    if (z && (z->dtype != q->dtype || z->rank != 2 || memcmp(z->dims, s->dims, sizeof(int64_t) * 2)))
        return bk_fail(&c->bk, "zeroPoint must have the weights' dtype %s and the scale's shape",
                       bk_dtype_name(q->dtype));
    int keep = by_rows ? 1 : 0, cut = 1 - keep;
    if (s->dims[keep] != q->dims[keep] || s->dims[cut] < 1 || q->dims[cut] % s->dims[cut])
        return bk_fail(&c->bk, "scale dims [%lld, %lld] do not cut weights [%lld, %lld] into blocks along dim %d",
                       (long long)s->dims[0], (long long)s->dims[1], (long long)q->dims[0], (long long)q->dims[1], cut);
    *rows = (size_t)(q->dims[cut] / s->dims[cut]);
    return BERTH_OK;
}

static void mmq_exec(const cpu_node *nd, berth_plan *p) {
    const mmq_params *mp = nd->params;
    cpu_gemm_qb qb = mp->qb;
    if (!qb.packed) qb.b = cpu_ptr(p, mp->b);
    qb.scale = cpu_ptr(p, mp->scale);
    qb.zero = mp->zero != CPU_NONE ? cpu_ptr(p, mp->zero) : NULL;
    cpu_gemm_epi epi = {.act = mp->act, .ldr = mp->n};
    if (mp->bias != CPU_NONE) epi.bias = cpu_ptr(p, mp->bias);
    if (mp->residual != CPU_NONE) epi.res = cpu_ptr(p, mp->residual);
    if (p->dev->qdot)
        cpu_gemm_q8(p->dev->pool, p->dev->qdot, mp->m, mp->n, mp->k, cpu_ptr(p, nd->in[0]), mp->k, &qb,
                    cpu_ptr(p, nd->out[0]), mp->n, &epi, cpu_scratch(p, nd), mp->quantized);
    else
        cpu_gemm_q(p->dev->pool, p->dev->gemm, mp->m, mp->n, mp->k, cpu_ptr(p, nd->in[0]), mp->k, &qb,
                   cpu_ptr(p, nd->out[0]), mp->n, &epi);
}

/* An earlier product (of the few nodes before this one: an encoder's q,
 * k and v projections sit side by side) with int8 activations that
 * quantized the same a into the same layout; -1 when none. Its scratch
 * then serves this one too: 2 of the 6 quantizations of a layer. */
static int64_t q8_same_a(const cpu_prep *c, const mmq_params *mp) {
    int64_t self = c->node - c->g->nodes;
    for (int64_t j = self - 1; j >= 0 && j >= self - 4; j--) {
        const cpu_node *o = &c->plan->nodes[j];
        if (o->exec != mmq_exec || o->scratch_of || o->in[0] != c->node->inputs[0]) continue;
        const mmq_params *op = o->params;
        if (op->m == mp->m && op->k == mp->k && op->qb.rows == mp->qb.rows && op->qb.kind == mp->qb.kind &&
            (op->zero == CPU_NONE) == (mp->zero == CPU_NONE))
            return j;
    }
    return -1;
}

berth_status cpu_prep_matmul_quantized(cpu_prep *c) {
    mmq_params *mp = cpu_params(c, sizeof *mp);
    if (!mp) return BERTH_ERR_NOMEM;
    size_t rows = 1;
    berth_status st = q_operands(c, 1, 1, &rows, &mp->zero);
    if (st) return st;
    const cpu_opnd *a = cpu_in(c, 0), *b = cpu_in(c, 1), *y = cpu_out(c, 0);
    if (a->dtype != BERTH_DTYPE_F32 || a->rank < 2 || a->dims[a->rank - 1] != b->dims[0])
        return bk_fail(&c->bk, "a: expected float32 [..., M, %lld], found %s of rank %u", (long long)b->dims[0],
                       bk_dtype_name(a->dtype), a->rank);
    if (y->numel != a->numel / (size_t)b->dims[0] * (size_t)b->dims[1] || y->dims[y->rank - 1] != b->dims[1])
        return bk_fail(&c->bk, "output: expected a's leading dims and %lld columns", (long long)b->dims[1]);
    mp->k = (size_t)b->dims[0];
    mp->n = (size_t)b->dims[1];
    mp->m = mp->k ? a->numel / mp->k : 0;
    mp->qb = (cpu_gemm_qb){.kind = q_kind(b->dtype), .rows = rows};
    mp->b = c->node->inputs[1], mp->scale = c->node->inputs[2];
    st = bk_param_activation(&c->bk, &mp->act); /* in CPU_ACT_* order */
    if (!st) st = bk_opt_operand(&c->bk, "bias", &mp->bias);
    if (!st) st = bk_opt_operand(&c->bk, "residual", &mp->residual);
    if (st) return st;
    if (mp->bias != CPU_NONE) {
        const cpu_opnd *bo = &c->plan->ops[mp->bias];
        if (bo->dtype != BERTH_DTYPE_F32 || bo->numel != mp->n)
            return bk_fail(&c->bk, "bias: expected float32 of %zu values, found %s of %zu", mp->n,
                           bk_dtype_name(bo->dtype), bo->numel);
    }
    if (mp->residual != CPU_NONE) {
        const cpu_opnd *r = &c->plan->ops[mp->residual];
        if (r->dtype != BERTH_DTYPE_F32 || r->numel != y->numel)
            return bk_fail(&c->bk, "residual: expected float32 of the output's %zu values", y->numel);
    }
    /* int8 activations: the quantized rows of a, their scales and sums;
     * B packed for the fused tile once, at the first plan, and kept so
     * (the weight as uploaded is dropped where nothing else reads it) */
    berth_device *dev = c->plan->dev;
    if (dev->qdot) {
        int64_t j = q8_same_a(c, mp);
        if (j >= 0)
            mp->quantized = 1, c->cn->scratch_of = (uint32_t)j + 1;
        else
            c->cn->scratch_bytes = cpu_gemm_q8_scratch(mp->m, mp->k, rows);
        const berth_operand *bo = &c->g->operands[mp->b];
        if (bo->kind == BERTH_OPERAND_WEIGHT && c->plan->w) {
            st = cpu_weight_q8(c->plan->w, bo->weight, dev->qdot, &mp->qb, mp->k, mp->n, &mp->qb.packed, c->err);
            if (st) return st;
            if (mp->qb.packed) c->cn->packed_in |= 1u << 1;
        }
    }
    c->cn->exec = mmq_exec;
    return BERTH_OK;
}

/* ---- berth.gatherQuantized ---- */

typedef struct gq_params {
    size_t v, d, n_idx;
    uint32_t zero;
    int wide; /* int64 indices */
    cpu_gemm_qb qb;
} gq_params;

static void gq_exec(const cpu_node *nd, berth_plan *p) {
    const gq_params *g = nd->params;
    cpu_gemm_qb qb = g->qb;
    qb.b = cpu_ptr(p, nd->in[0]);
    qb.scale = cpu_ptr(p, nd->in[2]);
    qb.zero = g->zero != CPU_NONE ? cpu_ptr(p, g->zero) : NULL;
    const void *idx = cpu_ptr(p, nd->in[1]);
    float *y = cpu_ptr(p, nd->out[0]);
    for (size_t i = 0; i < g->n_idx; i++) {
        int64_t r = g->wide ? ((const int64_t *)idx)[i] : ((const int32_t *)idx)[i];
        /* like gather: wrap once if negative, then clamp into range */
        if (r < 0) r += (int64_t)g->v;
        if (r < 0) r = 0;
        if (r >= (int64_t)g->v) r = (int64_t)g->v - 1;
        cpu_dequant_row(&qb, g->d, (size_t)r, y + i * g->d);
    }
}

berth_status cpu_prep_gather_quantized(cpu_prep *c) {
    gq_params *g = cpu_params(c, sizeof *g);
    if (!g) return BERTH_ERR_NOMEM;
    size_t rows = 1;
    berth_status st = q_operands(c, 0, 0, &rows, &g->zero);
    if (!st) st = bk_check_indices(&c->bk);
    if (st) return st;
    const cpu_opnd *t = cpu_in(c, 0), *ix = cpu_in(c, 1), *y = cpu_out(c, 0);
    g->v = (size_t)t->dims[0];
    g->d = (size_t)t->dims[1];
    g->n_idx = ix->numel;
    g->wide = ix->dtype == BERTH_DTYPE_I64;
    if (g->v == 0 && g->n_idx) return bk_fail(&c->bk, "indices into an empty table");
    if (y->dtype != BERTH_DTYPE_F32 || y->numel != g->n_idx * g->d)
        return bk_fail(&c->bk, "output: expected float32 of indices' dims + [%zu]", g->d);
    g->qb = (cpu_gemm_qb){.kind = q_kind(t->dtype), .rows = rows};
    c->cn->exec = gq_exec;
    return BERTH_OK;
}
