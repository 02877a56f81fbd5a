/* quantizeLinear and dequantizeLinear with WebNN's block-wise scales, as on
 * the cpu backend: scale and zero point are right-aligned against the
 * input, each of their dims divides the input's, and element i of a dim
 * reads block i / (input dim / scale dim). The integer side is int8,
 * uint8, int32 or uint32, and for dequantizeLinear int4 or uint4 too.
 *
 * The engine's quantized fused ops, berth.matmulQuantized and
 * berth.gatherQuantized: their weights stay packed on the device as
 * uploaded (int8, uint8, and int4 and uint4 two to a byte, low nibble
 * first; gpu_plan.c stores 4-bit operands in ceil(n / 2) bytes) and the
 * kernels (matmul_q.glsl, gather_q.comp) dequantize each value as they
 * read it, so no float copy of a weight is ever made. */
#include <stdio.h>
#include <string.h>

#include "gpu_core.h"

static berth_status quant(gpu_prep *c, int quantize) {
    const gpu_opnd *x = gpu_in(c, 0);
    bk_quant q;
    bk_param_quant(&c->bk, quantize, &q);
    berth_dtype qt = q.qtype;
    int kind = qt == BERTH_DTYPE_I8    ? 0
               : qt == BERTH_DTYPE_U8  ? 1
               : qt == BERTH_DTYPE_I32 ? 2
               : qt == BERTH_DTYPE_U32 ? 3
               : qt == BERTH_DTYPE_I4  ? 4
                                       : 5;
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

/* ---- berth.matmulQuantized and berth.gatherQuantized ---- */

/* The kernels' code of a packed integer dtype (packed.glsl's KIND), -1
 * for any other. */
static int packed_kind(berth_dtype t) {
    return t == BERTH_DTYPE_I8 ? 0 : t == BERTH_DTYPE_U8 ? 1 : t == BERTH_DTYPE_I4 ? 2 : t == BERTH_DTYPE_U4 ? 3 : -1;
}

/* Index of the last 32-bit word of an operand (0 when it is empty). */
static uint32_t last_word(const gpu_opnd *o) { return o->bytes ? (uint32_t)((o->bytes + 3) / 4 - 1) : 0u; }

/* "dtype [d0, d1, ...]" of an operand, for messages. */
static const char *desc_of(const berth_operand *o, char *buf, size_t cap) {
    char dims[96];
    bk_dims_str(o->dims, o->rank, dims, sizeof dims);
    snprintf(buf, cap, "%s %s", bk_dtype_name(o->dtype), dims);
    return buf;
}

/* Input 2, scale, is float32 [rows, cols] and input 3, zeroPoint, when
 * given (absent: all zeros), has dtype t and the same shape. */
static berth_status check_scale_zp(const bk_node_ctx *c, berth_dtype t, int64_t rows, int64_t cols) {
    const berth_operand *s = bk_in(c, 2), *z = c->node->n_inputs > 3 ? bk_in(c, 3) : NULL;
    char got[160];
    if (s->dtype != BERTH_DTYPE_F32 || s->rank != 2 || s->dims[0] != rows || s->dims[1] != cols)
        return bk_refuse(c, "scale: expected float32 [%lld, %lld], found %s", (long long)rows, (long long)cols,
                         desc_of(s, got, sizeof got));
    if (z && (z->dtype != t || z->rank != 2 || z->dims[0] != rows || z->dims[1] != cols))
        return bk_refuse(c, "zeroPoint: expected %s [%lld, %lld] (the weights' dtype, scale's shape), found %s",
                         bk_dtype_name(t), (long long)rows, (long long)cols, desc_of(z, got, sizeof got));
    return BERTH_OK;
}

typedef struct mmq_shape {
    uint64_t rows; /* a's leading dims folded: y is [rows, n] */
    int64_t k, n, g;
    int kind, act;
    uint32_t bias, res;
} mmq_shape;

/* berth.matmulQuantized: a float32 [..., M, K]; b [K, N] of int8, uint8,
 * int4 or uint4; scale float32 [G, N], G dividing K; zeroPoint b's dtype
 * [G, N]; y [..., M, N]; bias float32 [..., N] with every dim before N
 * 1; residual float32 of y's shape. Anything else is refused. */
static berth_status mmq_shape_of(const bk_node_ctx *c, mmq_shape *s) {
    const berth_operand *a = bk_in(c, 0), *b = bk_in(c, 1), *y = bk_out(c, 0);
    char got[160];
    memset(s, 0, sizeof *s);
    s->kind = packed_kind(b->dtype);
    if (s->kind < 0)
        return bk_refuse(c, "b: %s weights are not supported (int8, uint8, int4 or uint4)", bk_dtype_name(b->dtype));
    if (a->dtype != BERTH_DTYPE_F32 || a->rank < 2)
        return bk_refuse(c, "a: expected float32 of rank >= 2, found %s", desc_of(a, got, sizeof got));
    if (b->rank != 2) return bk_refuse(c, "b: expected a 2-D [K, N] weight, found %s", desc_of(b, got, sizeof got));
    s->k = b->dims[0];
    s->n = b->dims[1];
    if (a->dims[a->rank - 1] != s->k)
        return bk_refuse(c, "inner dims differ: a has %lld columns, b has %lld rows", (long long)a->dims[a->rank - 1],
                         (long long)s->k);
    const berth_operand *sc = bk_in(c, 2);
    s->g = sc->rank == 2 ? sc->dims[0] : 0;
    if (s->g < 1 || s->k % s->g)
        return bk_refuse(c, "scale: expected float32 [G, %lld] with G dividing K = %lld, found %s", (long long)s->n,
                         (long long)s->k, desc_of(sc, got, sizeof got));
    berth_status st = check_scale_zp(c, b->dtype, s->g, s->n);
    if (st) return st;
    int64_t yd[BERTH_MAX_RANK];
    memcpy(yd, a->dims, sizeof yd);
    yd[a->rank - 1] = s->n;
    if ((st = bk_check_out_dims(c, 0, a->rank, yd))) return st;
    s->rows = 1;
    for (uint32_t i = 0; i + 1 < a->rank; i++) s->rows *= (uint64_t)a->dims[i];
    if ((st = bk_param_activation(c, &s->act))) return st;
    if ((st = bk_opt_operand(c, "bias", &s->bias)) || (st = bk_opt_operand(c, "residual", &s->res))) return st;
    if (s->bias != BK_NONE) {
        const berth_operand *o = &c->g->operands[s->bias];
        int ok = o->dtype == BERTH_DTYPE_F32 && o->rank >= 1 && o->rank <= y->rank && o->dims[o->rank - 1] == s->n;
        for (uint32_t i = 0; ok && i + 1 < o->rank; i++) ok = o->dims[i] == 1;
        if (!ok)
            return bk_refuse(c, "bias: expected float32 [%lld] (ones before it allowed), found %s", (long long)s->n,
                             desc_of(o, got, sizeof got));
    }
    if (s->res != BK_NONE) {
        const berth_operand *o = &c->g->operands[s->res];
        int ok = o->dtype == BERTH_DTYPE_F32 && o->rank == y->rank;
        for (uint32_t i = 0; ok && i < o->rank; i++) ok = o->dims[i] == y->dims[i];
        if (!ok) return bk_refuse(c, "residual: expected the output's shape in float32, found %s", desc_of(o, got, sizeof got));
    }
    return BERTH_OK;
}

berth_status gpu_check_matmul_quantized(const bk_node_ctx *c) {
    mmq_shape s;
    berth_status st = mmq_shape_of(c, &s);
    return st ? st : gpu_check_fits(c, UINT32_MAX);
}

berth_status gpu_prep_matmul_quantized(gpu_prep *c) {
    mmq_shape s;
    berth_status st = mmq_shape_of(&c->bk, &s);
    if (st) return st;
    if (gpu_out(c, 0)->numel == 0) return BERTH_OK;
    int64_t block = s.k / s.g;
    /* A as vec4s along k when no step of 4 leaves a row or a block. */
    int va = s.k % 4 == 0 && block % 4 == 0;
    gpu_dispatch *d = gpu_emit(c, va ? "matmul_q_a4" : "matmul_q");
    if (!d) return BERTH_ERR_NOMEM;
    int zp = c->node->n_inputs > 3;
    d->n_bind = 7;
    for (uint32_t i = 0; i < 4; i++) d->bind[i] = i < 3 || zp ? c->node->inputs[i] : GPU_NONE;
    d->bind[4] = s.bias;
    d->bind[5] = s.res;
    d->bind[6] = c->node->outputs[0];
    d->n_spec = 1;
    d->spec[0] = (uint32_t)s.kind;
    d->pc[0] = (uint32_t)s.rows;
    d->pc[1] = (uint32_t)s.n;
    d->pc[2] = (uint32_t)s.k;
    d->pc[3] = (uint32_t)block;
    d->pc[4] = s.k ? (uint32_t)s.g : 0u;
    d->pc[5] = (s.bias != GPU_NONE ? 2u : 0u) | (s.res != GPU_NONE ? 4u : 0u) | (zp ? 8u : 0u) |
               ((uint32_t)s.act << 4);
    d->pc[6] = last_word(gpu_in(c, 1));
    d->pc[7] = zp ? last_word(gpu_in(c, 3)) : 0u;
    /* as the matmul shaders: 8 x 8 blocks of y, 8 invocations a group */
    d->groups[0] = gpu_groups(((uint64_t)s.n + 7) / 8, 8);
    d->groups[1] = gpu_groups(s.rows, 8);
    return BERTH_OK;
}

typedef struct gq_shape {
    int64_t v, d, g;
    int kind;
} gq_shape;

/* berth.gatherQuantized: input [V, D] of int8, uint8, int4 or uint4;
 * indices int32 or int64; scale float32 [V, G], G dividing D; zeroPoint
 * input's dtype [V, G]; y float32 indices' dims + [D]. */
static berth_status gq_shape_of(const bk_node_ctx *c, gq_shape *s) {
    const berth_operand *x = bk_in(c, 0), *ix = bk_in(c, 1), *sc = bk_in(c, 2), *y = bk_out(c, 0);
    char got[160];
    memset(s, 0, sizeof *s);
    s->kind = packed_kind(x->dtype);
    if (s->kind < 0)
        return bk_refuse(c, "input: %s tables are not supported (int8, uint8, int4 or uint4)", bk_dtype_name(x->dtype));
    berth_status st = bk_check_indices(c);
    if (st) return st;
    if (x->rank != 2) return bk_refuse(c, "input: expected a 2-D [V, D] table, found %s", desc_of(x, got, sizeof got));
    s->v = x->dims[0];
    s->d = x->dims[1];
    s->g = sc->rank == 2 ? sc->dims[1] : 0;
    if (s->g < 1 || s->d % s->g)
        return bk_refuse(c, "scale: expected float32 [%lld, G] with G dividing D = %lld, found %s", (long long)s->v,
                         (long long)s->d, desc_of(sc, got, sizeof got));
    if ((st = check_scale_zp(c, x->dtype, s->v, s->g))) return st;
    if (y->dtype != BERTH_DTYPE_F32) return bk_fail(c, "output: expected float32, found %s", bk_dtype_name(y->dtype));
    if (ix->rank + 1 > BERTH_MAX_RANK)
        return bk_fail(c, "output rank %u exceeds %d", ix->rank + 1, BERTH_MAX_RANK);
    int64_t yd[BERTH_MAX_RANK];
    memcpy(yd, ix->dims, sizeof(int64_t) * ix->rank);
    yd[ix->rank] = s->d;
    if ((st = bk_check_out_dims(c, 0, ix->rank + 1, yd))) return st;
    if (s->v == 0 && bk_numel(ix) > 0) return bk_fail(c, "indices into an empty table");
    if (s->v > INT32_MAX)
        return bk_refuse(c, "a table of %lld rows exceeds the shaders' 32-bit indexing", (long long)s->v);
    return BERTH_OK;
}

berth_status gpu_check_gather_quantized(const bk_node_ctx *c) {
    gq_shape s;
    berth_status st = gq_shape_of(c, &s);
    return st ? st : gpu_check_fits(c, UINT32_MAX);
}

berth_status gpu_prep_gather_quantized(gpu_prep *c) {
    gq_shape s;
    berth_status st = gq_shape_of(&c->bk, &s);
    if (st) return st;
    const gpu_opnd *y = gpu_out(c, 0), *ix = gpu_in(c, 1);
    if (y->numel == 0) return BERTH_OK;
    gpu_dispatch *d = gpu_emit(c, "gather_q");
    if (!d) return BERTH_ERR_NOMEM;
    int zp = c->node->n_inputs > 3;
    d->n_bind = 5;
    for (uint32_t i = 0; i < 4; i++) d->bind[i] = i < 3 || zp ? c->node->inputs[i] : GPU_NONE;
    d->bind[4] = c->node->outputs[0];
    d->n_spec = 1;
    d->spec[0] = (uint32_t)s.kind;
    d->pc[0] = (uint32_t)y->numel;
    d->pc[1] = (uint32_t)s.d;
    d->pc[2] = (uint32_t)ix->numel;
    d->pc[3] = (uint32_t)s.v;
    d->pc[4] = ix->dtype == BERTH_DTYPE_I64;
    d->pc[5] = (uint32_t)(s.d / s.g);
    d->pc[6] = (uint32_t)s.g;
    d->pc[7] = (uint32_t)zp;
    d->groups[0] = gpu_groups(y->numel, 256);
    return BERTH_OK;
}
