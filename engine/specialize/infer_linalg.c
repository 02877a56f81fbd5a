/* Shape rules for matrix products and (de)quantization.
 *
 * matmul follows WebNN (rank >= 2, batch dims broadcast) and also accepts
 * ONNX-style rank-1 operands: a 1-D `a` is read as [1, K] and a 1-D `b` as
 * [K, 1], and the added dim is removed from the result, so models that
 * came through onnx2webnn keep their meaning. */
#include <string.h>

#include "dtype.h"
#include "infer.h"

static int same_dtype(sp_ctx *c, uint32_t i) {
    sp_val *a = sp_in(c, 0), *b = sp_in(c, i);
    if (a->dtype == b->dtype) return 0;
    char sb[160];
    return sp_fail(c, "operand %u '%s' expected %s to match operand 0 '%s', found %s", i,
                   sp_in_name(c, i), berth_dtype_name(a->dtype), sp_in_name(c, 0),
                   sp_shape_str(sb, sizeof sb, b));
}

static int matmul(sp_ctx *c) {
    if (same_dtype(c, 1)) return -1;
    sp_val *a = sp_in(c, 0), *b = sp_in(c, 1);
    char sa[160], sb[160];
    if (a->rank == 0 || b->rank == 0) {
        uint32_t i = a->rank == 0 ? 0 : 1;
        return sp_fail(c, "operand %u '%s' expected rank >= 1, found %s", i, sp_in_name(c, i),
                       sp_shape_str(sb, sizeof sb, sp_in(c, i)));
    }
    int64_t ad[BERTH_MAX_RANK + 1], bd[BERTH_MAX_RANK + 1];
    uint32_t ra = a->rank, rb = b->rank;
    memcpy(ad, a->dims, sizeof(int64_t) * ra);
    memcpy(bd, b->dims, sizeof(int64_t) * rb);
    if (ra == 1) { ad[1] = ad[0]; ad[0] = 1; ra = 2; }
    if (rb == 1) { bd[1] = 1; rb = 2; }
    int64_t k = ad[ra - 1];
    if (bd[rb - 2] != k)
        return sp_fail(c, "operand 1 '%s' expected %s[..., %lld, *] to match operand 0 '%s' %s, found %s",
                       sp_in_name(c, 1), berth_dtype_name(a->dtype), (long long)k,
                       sp_in_name(c, 0), sp_shape_str(sa, sizeof sa, a),
                       sp_shape_str(sb, sizeof sb, b));
    int64_t out[BERTH_MAX_RANK * 2];
    uint32_t r;
    if (!sp_broadcast(ra - 2, ad, rb - 2, bd, &r, out))
        return sp_fail(c, "operand 1 '%s' expected batch dims broadcastable with operand 0 '%s' %s, found %s",
                       sp_in_name(c, 1), sp_in_name(c, 0), sp_shape_str(sa, sizeof sa, a),
                       sp_shape_str(sb, sizeof sb, b));
    if (a->rank > 1) out[r++] = ad[ra - 2];
    if (b->rank > 1) out[r++] = bd[rb - 1];
    return sp_set_out(c, 0, a->dtype, r, out);
}

static int gemm(sp_ctx *c) {
    if (same_dtype(c, 1)) return -1;
    sp_val *a = sp_in(c, 0), *b = sp_in(c, 1);
    char sa[160], sb[160];
    for (uint32_t i = 0; i < 2; i++)
        if (sp_in(c, i)->rank != 2)
            return sp_fail(c, "operand %u '%s' expected rank 2, found %s", i, sp_in_name(c, i),
                           sp_shape_str(sb, sizeof sb, sp_in(c, i)));
    int at, bt;
    double alpha, beta;
    if (sp_opt_bool(c, "aTranspose", 0, &at) || sp_opt_bool(c, "bTranspose", 0, &bt) ||
        sp_opt_float(c, "alpha", 1.0, &alpha) || sp_opt_float(c, "beta", 1.0, &beta))
        return -1;
    int64_t m = at ? a->dims[1] : a->dims[0], k = at ? a->dims[0] : a->dims[1];
    int64_t kb = bt ? b->dims[1] : b->dims[0], n = bt ? b->dims[0] : b->dims[1];
    if (k != kb)
        return sp_fail(c, "operand 1 '%s' expected %s with %lld rows (bTranspose %d) to match operand 0 '%s' %s, found %s",
                       sp_in_name(c, 1), berth_dtype_name(a->dtype), (long long)k, bt,
                       sp_in_name(c, 0), sp_shape_str(sa, sizeof sa, a),
                       sp_shape_str(sb, sizeof sb, b));
    int64_t out[2] = {m, n};
    sp_val *cv;
    const char *cname;
    if (sp_opt_operand(c, "c", &cv, &cname)) return -1;
    if (cv) {
        int64_t bd[BERTH_MAX_RANK * 2];
        uint32_t r;
        if (cv->dtype != a->dtype || cv->rank > 2 ||
            !sp_broadcast(2, out, cv->rank, cv->dims, &r, bd) || bd[0] != m || bd[1] != n)
            return sp_fail(c, "option 'c' '%s' expected %s broadcastable to [%lld, %lld], found %s",
                           cname, berth_dtype_name(a->dtype), (long long)m, (long long)n,
                           sp_shape_str(sb, sizeof sb, cv));
    }
    return sp_set_out(c, 0, a->dtype, 2, out);
}

/* scale and zeroPoint have the input's rank, each dim dividing the
 * input's (WebNN block-wise quantization); a lower rank broadcasts. */
static int check_block(sp_ctx *c, uint32_t i, const sp_val *x) {
    sp_val *v = sp_in(c, i);
    int ok = v->rank <= x->rank;
    for (uint32_t d = 0; ok && d < v->rank; d++) {
        int64_t xd = x->dims[x->rank - v->rank + d], vd = v->dims[d];
        ok = vd > 0 ? xd % vd == 0 : xd == 0;
    }
    if (ok) return 0;
    char sa[160], sb[160];
    return sp_fail(c, "operand %u '%s' expected a shape whose dims divide %s, found %s", i,
                   sp_in_name(c, i), sp_shape_str(sa, sizeof sa, x),
                   sp_shape_str(sb, sizeof sb, v));
}

static int quantize(sp_ctx *c) {
    sp_val *x = sp_in(c, 0), *s = sp_in(c, 1), *z = sp_in(c, 2);
    char sb[160];
    if (!sp_is_float(x->dtype))
        return sp_fail(c, "operand 0 '%s' expected f32 or f16, found %s", sp_in_name(c, 0),
                       sp_shape_str(sb, sizeof sb, x));
    if (s->dtype != x->dtype)
        return sp_fail(c, "operand 1 '%s' expected %s to match operand 0 '%s', found %s",
                       sp_in_name(c, 1), berth_dtype_name(x->dtype), sp_in_name(c, 0),
                       sp_shape_str(sb, sizeof sb, s));
    if (check_block(c, 1, x) || check_block(c, 2, x)) return -1;
    if (s->rank != z->rank || memcmp(s->dims, z->dims, sizeof(int64_t) * s->rank)) {
        char sa[160];
        return sp_fail(c, "operand 2 '%s' expected the shape of scale %s, found %s",
                       sp_in_name(c, 2), sp_shape_str(sa, sizeof sa, s),
                       sp_shape_str(sb, sizeof sb, z));
    }
    return sp_set_like(c, 0, x, z->dtype);
}

static int dequantize(sp_ctx *c) {
    sp_val *x = sp_in(c, 0), *s = sp_in(c, 1), *z = sp_in(c, 2);
    char sa[160], sb[160];
    if (!sp_is_float(s->dtype))
        return sp_fail(c, "operand 1 '%s' expected f32 or f16, found %s", sp_in_name(c, 1),
                       sp_shape_str(sb, sizeof sb, s));
    if (z->dtype != x->dtype)
        return sp_fail(c, "operand 2 '%s' expected %s to match operand 0 '%s', found %s",
                       sp_in_name(c, 2), berth_dtype_name(x->dtype), sp_in_name(c, 0),
                       sp_shape_str(sb, sizeof sb, z));
    if (check_block(c, 1, x) || check_block(c, 2, x)) return -1;
    if (s->rank != z->rank || memcmp(s->dims, z->dims, sizeof(int64_t) * s->rank))
        return sp_fail(c, "operand 2 '%s' expected the shape of scale %s, found %s",
                       sp_in_name(c, 2), sp_shape_str(sa, sizeof sa, s),
                       sp_shape_str(sb, sizeof sb, z));
    return sp_set_like(c, 0, x, s->dtype);
}

const sp_rule sp_rules_linalg[] = {
    {BERTH_OP_MATMUL, matmul},
    {BERTH_OP_GEMM, gemm},
    {BERTH_OP_QUANTIZE_LINEAR, quantize},
    {BERTH_OP_DEQUANTIZE_LINEAR, dequantize},
    {BERTH_OP_UNKNOWN, NULL},
};
