/* berth.attention: softmax(q k^T * scale + mask) v per leading index, as
 * three or four dispatches over two plan scratch buffers of [batch, Sq, Sk]
 * scores: the scaled product (k read transposed through strides), the
 * broadcast mask add, a row softmax, and the product with v. */
#include <math.h>
#include <string.h>

#include "gpu_core.h"

berth_status gpu_prep_attention(gpu_prep *c) {
    berth_status st;
    const gpu_opnd *q = gpu_in(c, 0);
    uint32_t r = q->rank;
    bk_attention at;
    if ((st = bk_param_attention(&c->bk, &at))) return st;
    uint64_t batch = at.batch;
    int64_t Sq = at.sq, D = at.d, Sk = at.sk, Dv = at.dv;
    double scale = at.scale;
    uint32_t mask = at.mask;
    const int64_t *mstr = at.mstride;
    int64_t full[BERTH_MAX_RANK]; /* the scores' shape [..., Sq, Sk] */
    memcpy(full, q->dims, sizeof(int64_t) * r);
    full[r - 1] = Sk;
    const gpu_opnd *y = gpu_out(c, 0);
    uint64_t nscores = batch * (uint64_t)Sq * (uint64_t)Sk;
    if (y->numel == 0) return BERTH_OK;
    uint32_t s1 = gpu_scratch(c, nscores * 4), s2 = gpu_scratch(c, nscores * 4);
    if (s1 == GPU_NONE || s2 == GPU_NONE) return BERTH_ERR_NOMEM;
    /* scores = scale * q k^T: b's (k, n) element is k[n * D + k]. */
    gpu_dispatch *d = gpu_emit_matmul(c, c->node->inputs[0], c->node->inputs[1], s1,
                                    (const uint32_t[]){(uint32_t)Sq, (uint32_t)Sk, (uint32_t)D, (uint32_t)batch},
                                    (const uint32_t[]){(uint32_t)(Sq * D), (uint32_t)(Sk * D)},
                                    (const uint32_t[]){(uint32_t)D, 1, 1, (uint32_t)D});
    if (!d) return BERTH_ERR_NOMEM;
    d->pc[22] = gpu_f2u((float)scale);
    uint32_t scores = s1;
    if (mask != GPU_NONE) {
        d = gpu_emit(c, "binary");
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
        d->groups[0] = gpu_groups(nscores, 256);
        scores = s2;
    }
    uint32_t probs = scores == s1 ? s2 : s1;
    d = gpu_emit(c, "softmax");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = scores;
    d->bind[1] = probs;
    d->pc[0] = (uint32_t)(batch * (uint64_t)Sq);
    d->pc[1] = (uint32_t)Sk;
    d->pc[2] = 1;
    d->pc[3] = 1; /* a fully masked row: zeros, not the softmax op's NaN */
    d->groups[0] = gpu_groups(batch * (uint64_t)Sq, 1);
    d = gpu_emit_matmul(c, probs, c->node->inputs[2], c->node->outputs[0],
                       (const uint32_t[]){(uint32_t)Sq, (uint32_t)Dv, (uint32_t)Sk, (uint32_t)batch},
                       (const uint32_t[]){(uint32_t)(Sq * Sk), (uint32_t)(Sk * Dv)},
                       (const uint32_t[]){(uint32_t)Sk, 1, (uint32_t)Dv, 1});
    return d ? BERTH_OK : BERTH_ERR_NOMEM;
}
