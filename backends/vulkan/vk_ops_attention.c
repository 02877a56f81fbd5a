/* berth.attention: softmax(q k^T * scale + mask) v per leading index, as
 * three or four dispatches over two plan scratch buffers of [batch, Sq, Sk]
 * scores: the scaled product (k read transposed through strides), the
 * broadcast mask add, a row softmax, and the product with v. */
#include <math.h>
#include <string.h>

#include "vk_internal.h"

berth_status vk_prep_attention(vk_prep *c) {
    berth_status st = bk_check_counts(&c->bk, 3, 3, 1);
    if (!st) st = bk_check_same_dtype(&c->bk, 3, BK_BIT(BERTH_DTYPE_F32));
    if (st) return st;
    const vk_opnd *q = vk_in(c, 0), *k = vk_in(c, 1), *v = vk_in(c, 2);
    uint32_t r = q->rank;
    if (r < 2 || k->rank != r || v->rank != r)
        return bk_fail(&c->bk, "q, k and v must share a rank >= 2, found %u, %u, %u", q->rank, k->rank, v->rank);
    uint64_t batch = 1;
    int agree = k->dims[r - 1] == q->dims[r - 1] && v->dims[r - 2] == k->dims[r - 2];
    for (uint32_t d = 0; d < r - 2; d++) {
        batch *= (uint64_t)q->dims[d];
        agree &= k->dims[d] == q->dims[d] && v->dims[d] == q->dims[d];
    }
    if (!agree) {
        char sq[96], sk[96], sv[96];
        bk_dims_str(q->dims, r, sq, sizeof sq);
        bk_dims_str(k->dims, r, sk, sizeof sk);
        bk_dims_str(v->dims, r, sv, sizeof sv);
        return bk_fail(&c->bk, "q %s, k %s and v %s do not agree", sq, sk, sv);
    }
    int64_t Sq = q->dims[r - 2], D = q->dims[r - 1], Sk = k->dims[r - 2], Dv = v->dims[r - 1];
    int64_t od[BERTH_MAX_RANK];
    memcpy(od, q->dims, sizeof(int64_t) * r);
    od[r - 1] = Dv;
    if ((st = bk_check_out_dims(&c->bk, 0, r, od))) return st;
    double scale;
    uint32_t mask;
    if ((st = bk_opt_float(&c->bk, "scale", D > 0 ? 1.0 / sqrt((double)D) : 1.0, &scale))) return st;
    if ((st = bk_opt_operand(&c->bk, "mask", &mask))) return st;
    /* The mask broadcasts, right-aligned, to [..., Sq, Sk]. */
    int64_t full[BERTH_MAX_RANK], mstr[BERTH_MAX_RANK];
    memcpy(full, q->dims, sizeof(int64_t) * r);
    full[r - 1] = Sk;
    if (mask != VK_NONE) {
        const vk_opnd *m = &c->plan->ops[mask];
        if (m->dtype != BERTH_DTYPE_F32 || m->rank > r)
            return bk_fail(&c->bk, "mask: expected float32 of rank <= %u, found %s of rank %u", r, bk_dtype_name(m->dtype), m->rank);
        int64_t s = 1;
        for (int d = (int)r - 1; d >= 0; d--) {
            int64_t at = d - (int64_t)(r - m->rank), ext = at < 0 ? 1 : m->dims[at];
            if (ext != 1 && ext != full[d])
                return bk_fail(&c->bk, "mask: dim %d is %lld, does not broadcast to %lld", d, (long long)ext, (long long)full[d]);
            mstr[d] = ext == 1 ? 0 : s;
            s *= ext;
        }
    }
    const vk_opnd *y = vk_out(c, 0);
    uint64_t nscores = batch * (uint64_t)Sq * (uint64_t)Sk;
    if (y->numel == 0) return BERTH_OK;
    if (nscores > UINT32_MAX || q->numel > UINT32_MAX || k->numel > UINT32_MAX || v->numel > UINT32_MAX ||
        batch > UINT32_MAX)
        return bk_refuse(&c->bk, "tensors above 2^32 elements exceed the shaders' 32-bit indexing");
    uint32_t s1 = vk_scratch(c, nscores * 4), s2 = vk_scratch(c, nscores * 4);
    if (s1 == VK_NONE || s2 == VK_NONE) return BERTH_ERR_NOMEM;
    /* scores = scale * q k^T: b's (k, n) element is k[n * D + k]. */
    vk_dispatch *d = vk_emit_matmul(c, c->node->inputs[0], c->node->inputs[1], s1,
                                    (const uint32_t[]){(uint32_t)Sq, (uint32_t)Sk, (uint32_t)D, (uint32_t)batch},
                                    (const uint32_t[]){(uint32_t)(Sq * D), (uint32_t)(Sk * D)},
                                    (const uint32_t[]){(uint32_t)D, 1, 1, (uint32_t)D});
    if (!d) return BERTH_ERR_NOMEM;
    d->pc[22] = vk_f2u((float)scale);
    uint32_t scores = s1;
    if (mask != VK_NONE) {
        d = vk_emit(c, "binary");
        if (!d) return BERTH_ERR_NOMEM;
        d->n_bind = 3;
        d->bind[0] = s1;
        d->bind[1] = mask;
        d->bind[2] = s2;
        d->pc[0] = (uint32_t)nscores;
        d->pc[1] = 0; /* add */
        d->pc[2] = r;
        int64_t s = 1;
        for (int i = (int)r - 1; i >= 0; i--) {
            d->pc[4 + i] = (uint32_t)full[i];
            d->pc[12 + i] = (uint32_t)s;
            d->pc[20 + i] = (uint32_t)mstr[i];
            s *= full[i];
        }
        d->groups[0] = vk_groups(nscores, 256);
        scores = s2;
    }
    uint32_t probs = scores == s1 ? s2 : s1;
    d = vk_emit(c, "softmax");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = scores;
    d->bind[1] = probs;
    d->pc[0] = (uint32_t)(batch * (uint64_t)Sq);
    d->pc[1] = (uint32_t)Sk;
    d->pc[2] = 1;
    d->groups[0] = vk_groups(batch * (uint64_t)Sq, 1);
    d = vk_emit_matmul(c, probs, c->node->inputs[2], c->node->outputs[0],
                       (const uint32_t[]){(uint32_t)Sq, (uint32_t)Dv, (uint32_t)Sk, (uint32_t)batch},
                       (const uint32_t[]){(uint32_t)(Sq * Sk), (uint32_t)(Sk * Dv)},
                       (const uint32_t[]){(uint32_t)Sk, 1, (uint32_t)Dv, 1});
    return d ? BERTH_OK : BERTH_ERR_NOMEM;
}
