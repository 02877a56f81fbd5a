/* quantizeLinear and dequantizeLinear with WebNN's block-wise scales, as on
 * the cpu backend: scale and zero point are right-aligned against the
 * input, each of their dims divides the input's, and element i of a dim
 * reads block i / (input dim / scale dim). The integer side is int8,
 * uint8, int32 or uint32 (the GPU backends store no 4-bit tensors). */
#include <string.h>

#include "gpu_core.h"

static berth_status quant(gpu_prep *c, int quantize) {
    const gpu_opnd *x = gpu_in(c, 0);
    bk_quant q;
    bk_param_quant(&c->bk, quantize, &q);
    berth_dtype qt = q.qtype;
    int kind = qt == BERTH_DTYPE_I8 ? 0 : qt == BERTH_DTYPE_U8 ? 1 : qt == BERTH_DTYPE_I32 ? 2 : 3;
    if (x->numel == 0) return BERTH_OK;
    gpu_dispatch *d = gpu_emit(c, "quantize");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 4;
    for (uint32_t i = 0; i < 3; i++) d->bind[i] = c->node->inputs[i];
    d->bind[3] = c->node->outputs[0];
    d->pc[0] = (uint32_t)x->numel;
    d->pc[1] = (uint32_t)quantize;
    d->pc[2] = (uint32_t)kind;
    d->pc[3] = x->rank;
    for (uint32_t i = 0; i < x->rank; i++) {
        d->pc[4 + i] = (uint32_t)q.dims[i];
        d->pc[12 + i] = (uint32_t)q.block[i];
        d->pc[20 + i] = (uint32_t)q.sstride[i];
    }
    /* Packed bytes out: one invocation per output word. */
    d->groups[0] = gpu_groups(quantize && kind < 2 ? (x->numel + 3) / 4 : x->numel, 256);
    return BERTH_OK;
}

berth_status gpu_prep_quantize(gpu_prep *c) { return quant(c, 1); }
berth_status gpu_prep_dequantize(gpu_prep *c) { return quant(c, 0); }
