/* Matrix products on the register-tiled matmul shaders: matmul (batched,
 * broadcast batch dims, WebNN's 1-D rules), gemm (transposes as strides, C
 * broadcast), the engine's fused berth.matmulEpilogue (bias, activation,
 * residual applied in the same pass), and 1x1 convolutions for
 * gpu_ops_conv.c. The variant that reads vec4s is picked where the strides
 * allow it. */
#include <string.h>

#include "gpu_core.h"

/* Each invocation of the matmul shader owns an 8 x 8 block of the output;
 * a workgroup is 8 invocations side by side along the columns. */
#define MM_TILE 8

typedef gpu_gemm mm_shape;

/* The vec4 variants need every offset they step by to be a multiple of 4
 * floats (binding offsets themselves are aligned by the planner). */
static int all_mult4(const int64_t *v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (v[i] % 4) return 0;
    return 1;
}

gpu_dispatch *gpu_emit_gemm(gpu_prep *c, const gpu_gemm *s) {
    int va = s->sak == 1 && s->sam % 4 == 0 && s->k % 4 == 0 && all_mult4(s->astr, s->brank);
    int vb = va && s->sbn == 1 && s->sbk % 4 == 0 && s->n % 4 == 0 && all_mult4(s->bstr, s->brank);
    gpu_dispatch *d = gpu_emit(c, vb ? "matmul_ab4" : va ? "matmul_a4" : "matmul");
    if (!d) return NULL;
    d->n_bind = 6;
    d->bind[0] = s->a;
    d->bind[1] = s->b;
    d->bind[2] = d->bind[4] = GPU_NONE;
    d->bind[3] = s->bias;
    d->bind[5] = s->y;
    d->pc[0] = (uint32_t)s->m;
    d->pc[1] = (uint32_t)s->n;
    d->pc[2] = (uint32_t)s->k;
    d->pc[3] = (uint32_t)s->batch;
    d->pc[4] = s->brank;
    for (uint32_t i = 0; i < s->brank; i++) {
        d->pc[5 + i] = (uint32_t)s->bdims[i];
        d->pc[9 + i] = (uint32_t)s->astr[i];
        d->pc[13 + i] = (uint32_t)s->bstr[i];
    }
    d->pc[17] = s->sam;
    d->pc[18] = s->sak;
    d->pc[19] = s->sbk;
    d->pc[20] = s->sbn;
    d->pc[21] = s->bias == GPU_NONE ? 0u : s->bias_rows ? 2u | 8u : 2u;
    d->pc[22] = gpu_f2u(1.0f);
    d->groups[0] = gpu_groups(((uint64_t)s->n + MM_TILE - 1) / MM_TILE, 8);
    d->groups[1] = gpu_groups((uint64_t)s->m, MM_TILE);
    d->groups[2] = gpu_groups(s->batch, 1);
    return d;
}

static gpu_dispatch *emit_mm(gpu_prep *c, mm_shape *s, uint32_t a, uint32_t b, uint32_t sam, uint32_t sak,
                            uint32_t sbk, uint32_t sbn) {
    s->a = a, s->b = b, s->y = c->node->outputs[0], s->bias = GPU_NONE;
    s->sam = sam, s->sak = sak, s->sbk = sbk, s->sbn = sbn;
    return gpu_emit_gemm(c, s);
}

gpu_dispatch *gpu_emit_matmul(gpu_prep *c, uint32_t a, uint32_t b, uint32_t y, const uint32_t mnk_batch[4],
                            const uint32_t batch_strides[2], const uint32_t strides[4]) {
    gpu_gemm s = {.a = a, .b = b, .y = y, .bias = GPU_NONE, .m = mnk_batch[0], .n = mnk_batch[1],
                 .k = mnk_batch[2], .batch = mnk_batch[3], .brank = 1, .bdims = {mnk_batch[3]},
                 .astr = {batch_strides[0]}, .bstr = {batch_strides[1]}, .sam = strides[0], .sak = strides[1],
                 .sbk = strides[2], .sbn = strides[3]};
    return gpu_emit_gemm(c, &s);
}

/* Shapes, 1-D rules and batch broadcasting shared by matmul and the epilogue. */
static berth_status mm_shape_of(const bk_node_ctx *c, mm_shape *s) {
    const berth_operand *a = bk_in(c, 0), *b = bk_in(c, 1);
    if (a->rank == 0 || b->rank == 0)
        return bk_fail(c, "inputs must have rank >= 1, found %u and %u", a->rank, b->rank);
    int64_t ad[BERTH_MAX_RANK + 1], bd[BERTH_MAX_RANK + 1];
    uint32_t ar = a->rank, br = b->rank;
    memcpy(ad, a->dims, sizeof a->dims);
    memcpy(bd, b->dims, sizeof b->dims);
    if (ar == 1) {
        ad[1] = ad[0];
        ad[0] = 1;
        ar = 2;
    }
    if (br == 1) {
        bd[1] = 1;
        br = 2;
    }
    memset(s, 0, sizeof *s);
    s->m = ad[ar - 2];
    s->k = ad[ar - 1];
    s->n = bd[br - 1];
    if (bd[br - 2] != s->k)
        return bk_fail(c, "inner dims differ: a has %lld columns, b has %lld rows", (long long)s->k,
                       (long long)bd[br - 2]);
    uint32_t ba = ar - 2, bb = br - 2, rb = ba > bb ? ba : bb;
    int64_t od[BERTH_MAX_RANK + 2], sa[BERTH_MAX_RANK], sb[BERTH_MAX_RANK];
    int64_t stride_a = s->m * s->k, stride_b = s->k * s->n;
    for (int d = (int)rb - 1; d >= 0; d--) {
        int64_t xa = d - (int64_t)(rb - ba), xb = d - (int64_t)(rb - bb);
        int64_t x = xa >= 0 ? ad[xa] : 1, y = xb >= 0 ? bd[xb] : 1;
        if (x != y && x != 1 && y != 1)
            return bk_fail(c, "batch dim %d does not broadcast: %lld vs %lld", d, (long long)x, (long long)y);
        od[d] = x == 1 ? y : x;
        sa[d] = x == 1 ? 0 : stride_a;
        sb[d] = y == 1 ? 0 : stride_b;
        stride_a *= x;
        stride_b *= y;
    }
    uint32_t orank = rb;
    if (a->rank > 1) od[orank++] = s->m;
    if (b->rank > 1) od[orank++] = s->n;
    if (orank > BERTH_MAX_RANK) return bk_fail(c, "output rank %u exceeds %d", orank, BERTH_MAX_RANK);
    /* Collapse batch dims: drop ones, merge neighbours contiguous in both. */
    s->batch = 1;
    for (uint32_t d = 0; d < rb; d++) {
        s->batch *= (uint64_t)od[d];
        if (od[d] == 1) continue;
        if (s->brank > 0 && s->astr[s->brank - 1] == sa[d] * od[d] && s->bstr[s->brank - 1] == sb[d] * od[d]) {
            s->bdims[s->brank - 1] *= od[d];
            s->astr[s->brank - 1] = sa[d];
            s->bstr[s->brank - 1] = sb[d];
            continue;
        }
        if (s->brank == 4) return bk_refuse(c, "more than 4 distinct broadcast batch dims");
        s->bdims[s->brank] = od[d];
        s->astr[s->brank] = sa[d];
        s->bstr[s->brank] = sb[d];
        s->brank++;
    }
    return BERTH_OK;
}

berth_status gpu_check_matmul(const bk_node_ctx *c) {
    mm_shape s;
    berth_status st = gpu_check_fits(c, UINT32_MAX);
    return st ? st : mm_shape_of(c, &s);
}

berth_status gpu_prep_matmul(gpu_prep *c) {
    berth_status st = BERTH_OK;
    mm_shape s;
    if (!st) st = mm_shape_of(&c->bk, &s);
    if (st) return st;
    if (gpu_out(c, 0)->numel == 0) return BERTH_OK;
    return emit_mm(c, &s, c->node->inputs[0], c->node->inputs[1], (uint32_t)s.k, 1, (uint32_t)s.n, 1)
               ? BERTH_OK
               : BERTH_ERR_NOMEM;
}

berth_status gpu_prep_matmul_epilogue(gpu_prep *c) {
    berth_status st = BERTH_OK;
    mm_shape s;
    if (!st) st = mm_shape_of(&c->bk, &s);
    if (st) return st;
    int code;
    if ((st = bk_param_activation(&c->bk, &code))) return st;
    uint32_t bias, res;
    st = bk_opt_operand(&c->bk, "bias", &bias);
    if (!st) st = bk_opt_operand(&c->bk, "residual", &res);
    if (st) return st;
    const gpu_opnd *o = gpu_out(c, 0);
    if (o->numel == 0) return BERTH_OK;
    gpu_dispatch *d = emit_mm(c, &s, c->node->inputs[0], c->node->inputs[1], (uint32_t)s.k, 1, (uint32_t)s.n, 1);
    if (!d) return BERTH_ERR_NOMEM;
    d->bind[3] = bias;
    d->bind[4] = res;
    d->pc[21] = (bias != GPU_NONE ? 2u : 0u) | (res != GPU_NONE ? 4u : 0u) | ((uint32_t)code << 4);
    return BERTH_OK;
}

berth_status gpu_prep_gemm(gpu_prep *c) {
    berth_status st;
    int ta, tb;
    double alpha, beta;
    uint32_t cop;
    st = bk_opt_bool(&c->bk, "aTranspose", 0, &ta);
    if (!st) st = bk_opt_bool(&c->bk, "bTranspose", 0, &tb);
    if (!st) st = bk_opt_float(&c->bk, "alpha", 1.0, &alpha);
    if (!st) st = bk_opt_float(&c->bk, "beta", 1.0, &beta);
    if (!st) st = bk_opt_operand(&c->bk, "c", &cop);
    if (st) return st;
    const gpu_opnd *a = gpu_in(c, 0), *b = gpu_in(c, 1);
    if (a->rank != 2 || b->rank != 2) return bk_fail(&c->bk, "inputs must be 2-D, found rank %u and %u", a->rank, b->rank);
    mm_shape s = {.batch = 1};
    s.m = ta ? a->dims[1] : a->dims[0];
    s.k = ta ? a->dims[0] : a->dims[1];
    s.n = tb ? b->dims[0] : b->dims[1];
    int64_t kb = tb ? b->dims[1] : b->dims[0];
    if (kb != s.k) return bk_fail(&c->bk, "inner dims differ: a gives %lld, b gives %lld", (long long)s.k, (long long)kb);
    int64_t cm = 1, cn = 1;
    if (cop != GPU_NONE) {
        const gpu_opnd *cv = &c->plan->ops[cop];
        if (cv->dtype != BERTH_DTYPE_F32 || cv->rank > 2)
            return bk_fail(&c->bk, "c: expected float32 of rank <= 2, found %s rank %u", bk_dtype_name(cv->dtype), cv->rank);
        cm = cv->rank == 2 ? cv->dims[0] : 1;
        cn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
        if ((cm != 1 && cm != s.m) || (cn != 1 && cn != s.n))
            return bk_fail(&c->bk, "c: shape does not broadcast to [%lld, %lld]", (long long)s.m, (long long)s.n);
    }
    if (gpu_out(c, 0)->numel == 0) return BERTH_OK;
    gpu_dispatch *d = emit_mm(c, &s, c->node->inputs[0], c->node->inputs[1], ta ? 1u : (uint32_t)s.k,
                             ta ? (uint32_t)s.m : 1u, tb ? 1u : (uint32_t)s.n, tb ? (uint32_t)s.k : 1u);
    if (!d) return BERTH_ERR_NOMEM;
    d->pc[22] = gpu_f2u((float)alpha);
    if (cop != GPU_NONE && beta != 0.0) {
        d->bind[2] = cop;
        d->pc[21] = 1u;
        d->pc[23] = gpu_f2u((float)beta);
        d->pc[24] = cm == 1 ? 0u : (uint32_t)cn;
        d->pc[25] = cn == 1 ? 0u : 1u;
    }
    return BERTH_OK;
}
