/* quantizeLinear and dequantizeLinear with WebNN's block-wise scales, as on
 * the cpu backend: scale and zero point are right-aligned against the
 * input, each of their dims divides the input's, and element i of a dim
 * reads block i / (input dim / scale dim). The integer side is int8,
 * uint8, int32 or uint32 (the vulkan backend stores no 4-bit tensors). */
#include <string.h>

#include "vk_internal.h"

static berth_status quant(vk_prep *c, int quantize) {
    berth_status st = bk_check_counts(&c->bk, 3, 3, 1);
    if (st) return st;
    const vk_opnd *x = vk_in(c, 0), *s = vk_in(c, 1), *z = vk_in(c, 2), *y = vk_out(c, 0);
    berth_dtype ft = quantize ? x->dtype : y->dtype, qt = quantize ? y->dtype : x->dtype;
    if (ft != BERTH_DTYPE_F32 || s->dtype != BERTH_DTYPE_F32)
        return bk_fail(&c->bk, "the float side and the scale must be float32, found %s and %s", bk_dtype_name(ft),
                       bk_dtype_name(s->dtype));
    int kind = qt == BERTH_DTYPE_I8 ? 0 : qt == BERTH_DTYPE_U8 ? 1 : qt == BERTH_DTYPE_I32 ? 2
             : qt == BERTH_DTYPE_U32 ? 3 : -1;
    if (kind < 0 || z->dtype != qt)
        return bk_refuse(&c->bk, "the integer side and zeroPoint must share an int8, uint8, int32 or uint32 dtype, "
                              "found %s and %s", bk_dtype_name(qt), bk_dtype_name(z->dtype));
    if ((st = bk_check_out_dims(&c->bk, 0, x->rank, x->dims))) return st;
    int ok = s->rank <= x->rank && z->rank == s->rank;
    for (uint32_t d = 0; ok && d < s->rank; d++) {
        int64_t xd = x->dims[x->rank - s->rank + d], sd = s->dims[d];
        ok = z->dims[d] == sd && (sd > 0 ? xd % sd == 0 : xd == 0);
    }
    if (!ok) {
        char sx[128], ss[128];
        bk_dims_str(x->dims, x->rank, sx, sizeof sx);
        bk_dims_str(s->dims, s->rank, ss, sizeof ss);
        return bk_fail(&c->bk, "scale %s and zeroPoint must share a shape whose dims divide the input's %s", ss, sx);
    }
    if (x->numel == 0) return BERTH_OK;
    if (x->numel > UINT32_MAX / 2) return bk_refuse(&c->bk, "%zu elements exceed 32-bit indexing", x->numel);
    vk_dispatch *d = vk_emit(c, "quantize");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 4;
    for (uint32_t i = 0; i < 3; i++) d->bind[i] = c->node->inputs[i];
    d->bind[3] = c->node->outputs[0];
    d->pc[0] = (uint32_t)x->numel;
    d->pc[1] = (uint32_t)quantize;
    d->pc[2] = (uint32_t)kind;
    d->pc[3] = x->rank;
    int64_t stride = 1;
    for (int i = (int)x->rank - 1; i >= 0; i--) {
        int sd = i - (int)(x->rank - s->rank);
        int64_t ext = sd < 0 ? 1 : s->dims[sd];
        d->pc[4 + i] = (uint32_t)x->dims[i];
        d->pc[12 + i] = (uint32_t)(ext > 0 ? x->dims[i] / ext : 1);
        d->pc[20 + i] = (uint32_t)(ext == 1 ? 0 : stride);
        stride *= ext;
    }
    /* Packed bytes out: one invocation per output word. */
    d->groups[0] = vk_groups(quantize && kind < 2 ? (x->numel + 3) / 4 : x->numel, 256);
    return BERTH_OK;
}

berth_status vk_prep_quantize(vk_prep *c) { return quant(c, 1); }
berth_status vk_prep_dequantize(vk_prep *c) { return quant(c, 0); }
