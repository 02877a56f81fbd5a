/* Host evaluation of shape arithmetic.
 *
 * ONNX-exported models compute reshape targets at run time: Shape ->
 * Gather -> Unsqueeze -> Concat -> Reshape. Once a bucket fixes every
 * input shape those values are known, so they are computed here, once
 * per plan, and the nodes vanish from what the backend sees. Only small
 * integer and f32 tensors are folded (SP_HOST_CAP elements). */
#include <math.h>
#include <string.h>

#include "dtype.h"
#include "infer.h"

int64_t sp_load_i(const void *data, berth_dtype t, size_t i) {
    switch (t) {
    case BERTH_DTYPE_I64: { int64_t v; memcpy(&v, (const char *)data + 8 * i, 8); return v; }
    case BERTH_DTYPE_U64: { uint64_t v; memcpy(&v, (const char *)data + 8 * i, 8); return (int64_t)v; }
    case BERTH_DTYPE_I32: { int32_t v; memcpy(&v, (const char *)data + 4 * i, 4); return v; }
    case BERTH_DTYPE_U32: { uint32_t v; memcpy(&v, (const char *)data + 4 * i, 4); return v; }
    case BERTH_DTYPE_I8: return ((const int8_t *)data)[i];
    case BERTH_DTYPE_U8: return ((const uint8_t *)data)[i];
    case BERTH_DTYPE_F32: { float v; memcpy(&v, (const char *)data + 4 * i, 4); return (int64_t)v; }
    default: return 0;
    }
}

double sp_load_f(const void *data, berth_dtype t, size_t i) {
    if (t == BERTH_DTYPE_F32) {
        float v;
        memcpy(&v, (const char *)data + 4 * i, 4);
        return v;
    }
    return (double)sp_load_i(data, t, i);
}

void sp_store_i(void *data, berth_dtype t, size_t i, int64_t v) {
    switch (t) {
    case BERTH_DTYPE_I64: case BERTH_DTYPE_U64: memcpy((char *)data + 8 * i, &v, 8); break;
    case BERTH_DTYPE_I32: case BERTH_DTYPE_U32: { int32_t w = (int32_t)v; memcpy((char *)data + 4 * i, &w, 4); break; }
    case BERTH_DTYPE_I8: case BERTH_DTYPE_U8: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case BERTH_DTYPE_F32: { float f = (float)v; memcpy((char *)data + 4 * i, &f, 4); break; }
    default: break;
    }
}

void sp_store_f(void *data, berth_dtype t, size_t i, double v) {
    if (t == BERTH_DTYPE_F32) {
        float f = (float)v;
        memcpy((char *)data + 4 * i, &f, 4);
    } else {
        /* Truncation toward zero, as a float-to-int cast does in C; values
         * out of range saturate rather than invoke undefined behaviour. */
        if (v != v) v = 0;
        if (v > 9.2e18) v = 9.2e18;
        if (v < -9.2e18) v = -9.2e18;
        sp_store_i(data, t, i, (int64_t)v);
    }
}

void sp_fill(void *data, berth_dtype t, size_t count, double x) {
    if (t == BERTH_DTYPE_F16) {
        uint16_t h = berth_f16_from_f32((float)x);
        for (size_t i = 0; i < count; i++) memcpy((char *)data + 2 * i, &h, 2);
    } else if (t == BERTH_DTYPE_I4 || t == BERTH_DTYPE_U4) {
        uint8_t nib = (uint8_t)((int64_t)x & 0xf), *p = data;
        for (size_t i = 0; i < count; i++)
            p[i / 2] = (uint8_t)(i & 1 ? (p[i / 2] & 0x0f) | (nib << 4) : (p[i / 2] & 0xf0) | nib);
    } else {
        for (size_t i = 0; i < count; i++) sp_store_f(data, t, i, x);
    }
}

/* Flat index into an input of shape (rin, din) broadcast to (rout, dout). */
static size_t bcast_index(uint32_t rout, const int64_t *dout, uint32_t rin, const int64_t *din,
                          size_t o) {
    size_t idx = 0, stride = 1;
    for (uint32_t k = rout; k-- > 0;) {
        size_t coord = (size_t)(o % (size_t)dout[k]);
        o /= (size_t)dout[k];
        uint32_t ki = k + rin - rout;
        if (k + rin >= rout) {
            if (din[ki] != 1) idx += coord * stride;
            stride *= (size_t)din[ki];
        }
    }
    return idx;
}

static int foldable_dtype(berth_dtype t) { return t == BERTH_DTYPE_F32 || sp_is_int(t); }

static const sp_val *out_val(sp_ctx *c, uint32_t i) { return &c->vals[c->n->src->outputs[i]]; }

static void *alloc_out(sp_ctx *c, uint32_t i) {
    sp_val *v = &c->vals[c->n->src->outputs[i]];
    int ok = 1;
    uint64_t n = (uint64_t)sp_numel(v->rank, v->dims); /* no size_t wrap on 32-bit */
    size_t bytes = berth_dtype_bytes(v->dtype, n, &ok);
    v->data = berth_arena_alloc(c->arena, bytes ? bytes : 1);
    return v->data;
}

static int elementwise(sp_ctx *c, const char *op) {
    const sp_val *o = out_val(c, 0);
    size_t n = (size_t)sp_numel(o->rank, o->dims);
    void *out = alloc_out(c, 0);
    if (!out) return sp_fail(c, "out of memory folding");
    int is_where = !strcmp(op, "where");
    const sp_val *a = sp_in(c, is_where ? 1 : 0), *b = sp_in(c, is_where ? 2 : 1);
    const sp_val *cond = is_where ? sp_in(c, 0) : NULL;
    int fl = a->dtype == BERTH_DTYPE_F32;
    for (size_t i = 0; i < n; i++) {
        size_t ia = bcast_index(o->rank, o->dims, a->rank, a->dims, i);
        size_t ib = bcast_index(o->rank, o->dims, b->rank, b->dims, i);
        if (cond) {
            size_t ic = bcast_index(o->rank, o->dims, cond->rank, cond->dims, i);
            const sp_val *pick = sp_load_i(cond->data, cond->dtype, ic) ? a : b;
            memcpy((char *)out + i * (berth_dtype_bits(o->dtype) / 8),
                   (const char *)pick->data + (pick == a ? ia : ib) * (berth_dtype_bits(o->dtype) / 8),
                   berth_dtype_bits(o->dtype) / 8);
            continue;
        }
        if (fl) {
            double x = sp_load_f(a->data, a->dtype, ia), y = sp_load_f(b->data, b->dtype, ib), r;
            if (!strcmp(op, "add")) r = x + y;
            else if (!strcmp(op, "sub")) r = x - y;
            else if (!strcmp(op, "mul")) r = x * y;
            else if (!strcmp(op, "div")) r = x / y;
            else if (!strcmp(op, "max")) r = x > y ? x : y;
            else if (!strcmp(op, "min")) r = x < y ? x : y;
            else if (!strcmp(op, "equal")) r = x == y;
            else if (!strcmp(op, "greater")) r = x > y;
            else r = x < y; /* lesser */
            sp_store_f(out, o->dtype, i, r);
        } else {
            int64_t x = sp_load_i(a->data, a->dtype, ia), y = sp_load_i(b->data, b->dtype, ib), r;
            uint64_t ux = (uint64_t)x, uy = (uint64_t)y; /* wrap instead of overflowing */
            if (!strcmp(op, "add")) r = (int64_t)(ux + uy);
            else if (!strcmp(op, "sub")) r = (int64_t)(ux - uy);
            else if (!strcmp(op, "mul")) r = (int64_t)(ux * uy);
            else if (!strcmp(op, "div")) {
                if (y == 0 || (x == INT64_MIN && y == -1))
                    return sp_fail(c, "folding expected a nonzero divisor, found %lld / %lld",
                                   (long long)x, (long long)y);
                r = x / y;
            } else if (!strcmp(op, "max")) r = x > y ? x : y;
            else if (!strcmp(op, "min")) r = x < y ? x : y;
            else if (!strcmp(op, "equal")) r = x == y;
            else if (!strcmp(op, "greater")) r = x > y;
            else r = x < y;
            sp_store_i(out, o->dtype, i, r);
        }
    }
    return 1;
}

static int copy_same(sp_ctx *c) {
    const sp_val *x = sp_in(c, 0);
    int ok = 1;
    size_t bytes = berth_dtype_bytes(x->dtype, (uint64_t)sp_numel(x->rank, x->dims), &ok);
    void *out = alloc_out(c, 0);
    if (!out) return sp_fail(c, "out of memory folding");
    memcpy(out, x->data, bytes);
    return 1;
}

static int cast(sp_ctx *c) {
    const sp_val *x = sp_in(c, 0), *o = out_val(c, 0);
    size_t n = (size_t)sp_numel(x->rank, x->dims);
    void *out = alloc_out(c, 0);
    if (!out) return sp_fail(c, "out of memory folding");
    for (size_t i = 0; i < n; i++) {
        if (x->dtype == BERTH_DTYPE_F32) sp_store_f(out, o->dtype, i, sp_load_f(x->data, x->dtype, i));
        else sp_store_i(out, o->dtype, i, sp_load_i(x->data, x->dtype, i));
    }
    return 1;
}

/* Copies along one axis: out[pre, j, post] = in[pre, map(j), post]. */
static size_t elem_bytes(const sp_val *v) { return berth_dtype_bits(v->dtype) / 8; }

static int gather(sp_ctx *c) {
    const sp_val *x = sp_in(c, 0), *idx = sp_in(c, 1);
    int64_t axis;
    uint32_t ax;
    if (sp_opt_int(c, "axis", 0, &axis) || sp_axis(c, "option 'axis'", axis, x->rank, &ax)) return -1;
    size_t pre = (size_t)sp_numel(ax, x->dims), dim = (size_t)x->dims[ax];
    size_t post = (size_t)sp_numel(x->rank - ax - 1, x->dims + ax + 1), es = elem_bytes(x);
    size_t ni = (size_t)sp_numel(idx->rank, idx->dims);
    char *out = alloc_out(c, 0);
    if (!out) return sp_fail(c, "out of memory folding");
    for (size_t j = 0; j < ni; j++) {
        int64_t k = sp_load_i(idx->data, idx->dtype, j);
        if (k < 0) k += (int64_t)dim;
        if (k < 0 || (size_t)k >= dim)
            return sp_fail(c, "operand 1 '%s' expected indices in [-%zu, %zu), found %lld",
                           sp_in_name(c, 1), dim, dim, (long long)sp_load_i(idx->data, idx->dtype, j));
        for (size_t p = 0; p < pre; p++)
            memcpy(out + ((p * ni + j) * post) * es,
                   (const char *)x->data + ((p * dim + (size_t)k) * post) * es, post * es);
    }
    return 1;
}

static int concat(sp_ctx *c) {
    const sp_val *o = out_val(c, 0);
    int64_t axis;
    uint32_t ax;
    if (sp_opt_int(c, "axis", 0, &axis) || sp_axis(c, "option 'axis'", axis, o->rank, &ax)) return -1;
    size_t pre = (size_t)sp_numel(ax, o->dims), post = (size_t)sp_numel(o->rank - ax - 1, o->dims + ax + 1);
    size_t es = elem_bytes(o), off = 0;
    char *out = alloc_out(c, 0);
    if (!out) return sp_fail(c, "out of memory folding");
    for (uint32_t i = 0; i < c->n->n_inputs; i++) {
        const sp_val *x = sp_in(c, i);
        size_t run = (size_t)x->dims[ax] * post * es;
        for (size_t p = 0; p < pre; p++)
            memcpy(out + (p * (size_t)o->dims[ax] * post) * es + off, (const char *)x->data + p * run, run);
        off += run;
    }
    return 1;
}

static int slice(sp_ctx *c) {
    const sp_val *x = sp_in(c, 0), *o = out_val(c, 0);
    int64_t st[BERTH_MAX_RANK], sd[BERTH_MAX_RANK];
    int ns, nd;
    if (sp_opt_ints(c, "starts", st, BERTH_MAX_RANK, &ns) || sp_opt_ints(c, "strides", sd, BERTH_MAX_RANK, &nd))
        return -1;
    size_t n = (size_t)sp_numel(o->rank, o->dims), es = elem_bytes(x);
    char *out = alloc_out(c, 0);
    if (!out) return sp_fail(c, "out of memory folding");
    for (size_t i = 0; i < n; i++) {
        size_t rem = i, src = 0, stride = 1;
        for (uint32_t k = o->rank; k-- > 0;) {
            size_t coord = rem % (size_t)o->dims[k];
            rem /= (size_t)o->dims[k];
            src += ((size_t)st[k] + coord * (size_t)(nd >= 0 ? sd[k] : 1)) * stride;
            stride *= (size_t)x->dims[k];
        }
        memcpy(out + i * es, (const char *)x->data + src * es, es);
    }
    return 1;
}

static int expand(sp_ctx *c) {
    const sp_val *x = sp_in(c, 0), *o = out_val(c, 0);
    size_t n = (size_t)sp_numel(o->rank, o->dims), es = elem_bytes(x);
    char *out = alloc_out(c, 0);
    if (!out) return sp_fail(c, "out of memory folding");
    for (size_t i = 0; i < n; i++)
        memcpy(out + i * es, (const char *)x->data + bcast_index(o->rank, o->dims, x->rank, x->dims, i) * es, es);
    return 1;
}

static int shape(sp_ctx *c) {
    const sp_val *x = sp_in(c, 0);
    int64_t *out = alloc_out(c, 0);
    if (!out) return sp_fail(c, "out of memory folding");
    memcpy(out, x->dims, sizeof(int64_t) * x->rank);
    return 1;
}

/* pow(x, 0) is 1 for every x, NaN and inf included (ops.def), so it is
 * known without x's data: ones, where the exponent is a host constant of
 * zeros and the result small enough to hold. */
static int pow_zero(sp_ctx *c) {
    const sp_val *e = sp_in(c, 1), *o = out_val(c, 0);
    if (!e->data || !foldable_dtype(e->dtype) || !foldable_dtype(o->dtype) ||
        sp_numel(o->rank, o->dims) > SP_HOST_CAP)
        return 0;
    size_t ne = (size_t)sp_numel(e->rank, e->dims), n = (size_t)sp_numel(o->rank, o->dims);
    for (size_t i = 0; i < ne; i++)
        if (sp_load_f(e->data, e->dtype, i) != 0) return 0;
    void *out = alloc_out(c, 0);
    if (!out) return sp_fail(c, "out of memory folding");
    sp_fill(out, o->dtype, n, 1.0);
    return 1;
}

int sp_fold(sp_ctx *c) {
    const char *op = c->n->op;
    if (!strcmp(op, "shape")) return shape(c);
    if (!strcmp(op, "pow") && c->n->n_inputs == 2) {
        int r = pow_zero(c);
        if (r) return r;
    }
    for (uint32_t i = 0; i < c->n->n_inputs; i++)
        if (!sp_in(c, i)->data || !foldable_dtype(sp_in(c, i)->dtype)) return 0;
    for (uint32_t i = 0; i < c->n->src->n_outputs; i++) {
        const sp_val *o = out_val(c, i);
        if (!foldable_dtype(o->dtype) || sp_numel(o->rank, o->dims) > SP_HOST_CAP) return 0;
    }
    /* Operand options (gemm's c, a bias) would need their own data too;
     * none of the folded ops takes one, so the option list is not read. */
    static const char *const binary[] = {"add", "sub", "mul", "div", "max", "min",
                                         "equal", "greater", "lesser", "where", NULL};
    for (int i = 0; binary[i]; i++)
        if (!strcmp(op, binary[i])) return elementwise(c, op);
    if (!strcmp(op, "reshape") || !strcmp(op, "squeeze") || !strcmp(op, "unsqueeze") ||
        !strcmp(op, "identity"))
        return copy_same(c);
    if (!strcmp(op, "cast")) return cast(c);
    if (!strcmp(op, "gather")) return gather(c);
    if (!strcmp(op, "concat")) return concat(c);
    if (!strcmp(op, "slice")) return slice(c);
    if (!strcmp(op, "expand")) return expand(c);
    return 0;
}
