/* quantizeLinear and dequantizeLinear with WebNN's block-wise scales: the
 * scale and zero point are right-aligned against the input and each of
 * their dims divides the input's, so element i of a dim reads block
 * i / (input dim / scale dim). 4-bit types are packed two per byte, low
 * nibble first. Quantizing rounds half to even and saturates. */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

typedef struct q_params {
    int quantize;
    berth_dtype qtype; /* the integer side */
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK], block[BERTH_MAX_RANK], sstride[BERTH_MAX_RANK];
    size_t n;
} q_params;

static int64_t q_get(const void *p, berth_dtype t, size_t i) {
    switch (t) {
    case BERTH_DTYPE_I8: return ((const int8_t *)p)[i];
    case BERTH_DTYPE_U8: return ((const uint8_t *)p)[i];
    case BERTH_DTYPE_I32: return ((const int32_t *)p)[i];
    case BERTH_DTYPE_U32: return ((const uint32_t *)p)[i];
    case BERTH_DTYPE_U4: return (((const uint8_t *)p)[i / 2] >> (4 * (i % 2))) & 15;
    case BERTH_DTYPE_I4: {
        int v = (((const uint8_t *)p)[i / 2] >> (4 * (i % 2))) & 15;
        return v >= 8 ? v - 16 : v;
    }
    default: return 0;
    }
}

static void q_set(void *p, berth_dtype t, size_t i, int64_t v) {
    switch (t) {
    case BERTH_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case BERTH_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case BERTH_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case BERTH_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case BERTH_DTYPE_I4: case BERTH_DTYPE_U4: {
        uint8_t *b = (uint8_t *)p + i / 2;
        unsigned shift = 4 * (unsigned)(i % 2);
        *b = (uint8_t)((*b & ~(15u << shift)) | (((unsigned)v & 15u) << shift));
        break;
    }
    default: break;
    }
}

static void q_range(berth_dtype t, double *lo, double *hi) {
    switch (t) {
    case BERTH_DTYPE_I8: *lo = -128, *hi = 127; break;
    case BERTH_DTYPE_U8: *lo = 0, *hi = 255; break;
    case BERTH_DTYPE_I32: *lo = -2147483648.0, *hi = 2147483647.0; break;
    case BERTH_DTYPE_U32: *lo = 0, *hi = 4294967295.0; break;
    case BERTH_DTYPE_I4: *lo = -8, *hi = 7; break;
    default: *lo = 0, *hi = 15; break;
    }
}

static void q_exec(const cpu_node *n, berth_plan *p) {
    const q_params *Q = n->params;
    const void *x = cpu_ptr(p, n->in[0]), *zp = cpu_ptr(p, n->in[2]);
    const float *scale = cpu_ptr(p, n->in[1]);
    void *y = cpu_ptr(p, n->out[0]);
    double lo, hi;
    q_range(Q->qtype, &lo, &hi);
    int64_t idx[BERTH_MAX_RANK] = {0};
    for (size_t e = 0; e < Q->n; e++) {
        size_t s = 0;
        for (uint32_t d = 0; d < Q->rank; d++) s += (size_t)(idx[d] / Q->block[d] * Q->sstride[d]);
        int64_t z = q_get(zp, Q->qtype, s);
        if (Q->quantize) {
            /* the quotient in float, as WebNN and ONNX define it: in
             * double, 0.5 / 0.019607844f came out below the tie 25.5
             * and rounded to 25 where the reference gives 26 */
            float q = ((const float *)x)[e] / scale[s];
            double v = nearbyint((double)q) + (double)z;
            if (v != v) v = 0;
            v = v < lo ? lo : v > hi ? hi : v;
            q_set(y, Q->qtype, e, (int64_t)v);
        } else {
            ((float *)y)[e] = (float)((double)(q_get(x, Q->qtype, e) - z) * scale[s]);
        }
        for (int d = (int)Q->rank - 1; d >= 0; d--) {
            if (++idx[d] < Q->dims[d]) break;
            idx[d] = 0;
        }
    }
}

static berth_status q_prep(cpu_prep *c, int quantize) {
    q_params *Q = cpu_params(c, sizeof *Q);
    if (!Q) return BERTH_ERR_NOMEM;
    bk_quant q;
    bk_param_quant(&c->bk, quantize, &q);
    Q->quantize = quantize;
    Q->qtype = q.qtype;
    Q->rank = q.rank;
    Q->n = cpu_in(c, 0)->numel;
    memcpy(Q->dims, q.dims, sizeof Q->dims);
    memcpy(Q->block, q.block, sizeof Q->block);
    memcpy(Q->sstride, q.sstride, sizeof Q->sstride);
    c->cn->exec = q_exec;
    return BERTH_OK;
}

berth_status cpu_prep_quantize(cpu_prep *c) { return q_prep(c, 1); }
berth_status cpu_prep_dequantize(cpu_prep *c) { return q_prep(c, 0); }
