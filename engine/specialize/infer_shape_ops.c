/* Shape rules for ops that move data without arithmetic: reshape,
 * transpose, concat, split, slice, gather, expand, pad, tile, ... */
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "infer.h"

static int need_ints(sp_ctx *c, const char *key, int64_t *out, size_t cap, int *n) {
    if (sp_opt_ints(c, key, out, cap, n)) return -1;
    if (*n < 0) return sp_fail(c, "expected option '%s', found none", key);
    return 0;
}

static int reshape(sp_ctx *c) {
    sp_val *x = sp_in(c, 0);
    int64_t d[BERTH_MAX_RANK + 1];
    int n, infer = -1;
    char sa[160], sb[160];
    if (need_ints(c, "newShape", d, BERTH_MAX_RANK, &n)) return -1;
    int64_t known = 1, total = sp_numel(x->rank, x->dims);
    for (int i = 0; i < n; i++) {
        if (d[i] == -1 && infer < 0) {
            infer = i;
        } else if (d[i] < 0) {
            return sp_fail(c, "option 'newShape' expected dims >= 0 and at most one -1, found %s",
                           sp_dims_str(sa, sizeof sa, (uint32_t)n, d));
        } else {
            known = sp_numel(1, &d[i]) < 0 || (d[i] && known > INT64_MAX / d[i]) ? -1 : known * d[i];
            if (known < 0) return sp_fail(c, "option 'newShape' has too many elements");
        }
    }
    if (infer >= 0) {
        if (known == 0 || total % known != 0)
            return sp_fail(c, "option 'newShape' %s expected a -1 that divides %lld elements of %s, found a remainder",
                           sp_dims_str(sa, sizeof sa, (uint32_t)n, d), (long long)total,
                           sp_shape_str(sb, sizeof sb, x));
        d[infer] = total / known;
        known = total;
    }
    if (known != total)
        return sp_fail(c, "option 'newShape' expected %lld elements to match operand 0 '%s' %s, found %s (%lld)",
                       (long long)total, sp_in_name(c, 0), sp_shape_str(sb, sizeof sb, x),
                       sp_dims_str(sa, sizeof sa, (uint32_t)n, d), (long long)known);
    return sp_set_out(c, 0, x->dtype, (uint32_t)n, d);
}

static int transpose(sp_ctx *c) {
    sp_val *x = sp_in(c, 0);
    int64_t p[BERTH_MAX_RANK + 1], d[BERTH_MAX_RANK];
    int n;
    char sa[160], sb[160];
    if (sp_opt_ints(c, "permutation", p, BERTH_MAX_RANK + 1, &n)) return -1;
    if (n < 0) {
        n = (int)x->rank;
        for (int i = 0; i < n; i++) p[i] = n - 1 - i;
    }
    unsigned seen = 0;
    int ok = (uint32_t)n == x->rank;
    for (int i = 0; ok && i < n; i++) {
        ok = p[i] >= 0 && p[i] < n && !(seen & (1u << p[i]));
        if (ok) seen |= 1u << p[i];
    }
    if (!ok)
        return sp_fail(c, "option 'permutation' expected a permutation of %u axes for %s, found %s",
                       x->rank, sp_shape_str(sb, sizeof sb, x),
                       sp_dims_str(sa, sizeof sa, (uint32_t)n, p));
    for (int i = 0; i < n; i++) d[i] = x->dims[p[i]];
    return sp_set_out(c, 0, x->dtype, x->rank, d);
}

static int concat(sp_ctx *c) {
    sp_val *a = sp_in(c, 0);
    int64_t axis;
    uint32_t ax;
    if (!sp_attr(c->n, "axis")) return sp_fail(c, "expected an 'axis', found none");
    if (sp_opt_int(c, "axis", 0, &axis) || sp_axis(c, "option 'axis'", axis, a->rank, &ax)) return -1;
    int64_t d[BERTH_MAX_RANK];
    memcpy(d, a->dims, sizeof(int64_t) * a->rank);
    for (uint32_t i = 1; i < c->n->n_inputs; i++) {
        sp_val *b = sp_in(c, i);
        int ok = b->dtype == a->dtype && b->rank == a->rank;
        for (uint32_t k = 0; ok && k < a->rank; k++) ok = k == ax || b->dims[k] == a->dims[k];
        if (!ok) {
            char sa[160], sb[160], want[200];
            snprintf(want, sizeof want, "%s", berth_dtype_name(a->dtype));
            size_t w = strlen(want);
            for (uint32_t k = 0; k < a->rank && w < sizeof want - 24; k++) {
                if (k == ax) snprintf(want + w, sizeof want - w, "%s*", k ? ", " : "[");
                else snprintf(want + w, sizeof want - w, "%s%lld", k ? ", " : "[", (long long)a->dims[k]);
                w = strlen(want);
            }
            snprintf(want + w, sizeof want - w, "]");
            return sp_fail(c, "operand %u '%s' expected %s to match operand 0 '%s' %s, found %s", i,
                           sp_in_name(c, i), want, sp_in_name(c, 0), sp_shape_str(sa, sizeof sa, a),
                           sp_shape_str(sb, sizeof sb, b));
        }
        d[ax] += b->dims[ax];
    }
    return sp_set_out(c, 0, a->dtype, a->rank, d);
}

static int split(sp_ctx *c) {
    if (c->n->src->n_outputs == 0) return sp_fail(c, "expected at least 1 output, found 0");
    sp_val *x = sp_in(c, 0);
    int64_t axis, sizes[64];
    uint32_t ax, outs = c->n->src->n_outputs;
    int n;
    char sb[160];
    if (sp_opt_int(c, "axis", 0, &axis) || sp_axis(c, "option 'axis'", axis, x->rank, &ax)) return -1;
    const berth_attr *a = sp_attr(c->n, "splits");
    if (!a) return sp_fail(c, "expected option 'splits', found none");
    int64_t dim = x->dims[ax];
    if (a->type == BERTH_ATTR_INT) {
        if (a->i < 1 || dim % a->i != 0)
            return sp_fail(c, "option 'splits' expected a count >= 1 dividing dim %u of %s, found %lld",
                           ax, sp_shape_str(sb, sizeof sb, x), (long long)a->i);
        if ((uint64_t)a->i != outs)
            return sp_fail(c, "expected %lld outputs for splits %lld, found %u", (long long)a->i,
                           (long long)a->i, outs);
        n = (int)a->i;
        for (int i = 0; i < n && i < 64; i++) sizes[i] = dim / a->i;
    } else {
        if (sp_opt_ints(c, "splits", sizes, 64, &n)) return -1;
        int64_t sum = 0;
        for (int i = 0; i < n; i++) {
            if (sizes[i] < 0)
                return sp_fail(c, "option 'splits' expected sizes >= 0, found %lld", (long long)sizes[i]);
            sum += sizes[i];
        }
        if (sum != dim)
            return sp_fail(c, "option 'splits' expected sizes summing to %lld (dim %u of %s), found %lld",
                           (long long)dim, ax, sp_shape_str(sb, sizeof sb, x), (long long)sum);
        if ((uint32_t)n != outs)
            return sp_fail(c, "expected %d outputs for %d splits, found %u", n, n, outs);
    }
    if (n > 64) return sp_fail(c, "option 'splits' expected at most 64 parts, found %d", n);
    int64_t d[BERTH_MAX_RANK];
    memcpy(d, x->dims, sizeof(int64_t) * x->rank);
    for (int i = 0; i < n; i++) {
        d[ax] = sizes[i];
        if (sp_set_out(c, (uint32_t)i, x->dtype, x->rank, d)) return -1;
    }
    return 0;
}

static int slice(sp_ctx *c) {
    sp_val *x = sp_in(c, 0);
    int64_t st[BERTH_MAX_RANK], sz[BERTH_MAX_RANK], sd[BERTH_MAX_RANK], d[BERTH_MAX_RANK];
    int ns, nz, nd;
    char sa[160], sb[160], sc[160];
    if (need_ints(c, "starts", st, BERTH_MAX_RANK, &ns) || need_ints(c, "sizes", sz, BERTH_MAX_RANK, &nz) ||
        sp_opt_ints(c, "strides", sd, BERTH_MAX_RANK, &nd))
        return -1;
    if ((uint32_t)ns != x->rank || (uint32_t)nz != x->rank || (nd >= 0 && (uint32_t)nd != x->rank))
        return sp_fail(c, "options 'starts', 'sizes' and 'strides' expected %u items for %s, found %d, %d, %d",
                       x->rank, sp_shape_str(sb, sizeof sb, x), ns, nz, nd);
    for (uint32_t i = 0; i < x->rank; i++) {
        int64_t stride = nd >= 0 ? sd[i] : 1;
        if (stride < 1) return sp_fail(c, "option 'strides' expected items >= 1, found %lld", (long long)stride);
        if (st[i] < 0 || sz[i] < 0 || st[i] > x->dims[i] || sz[i] > x->dims[i] - st[i])
            return sp_fail(c, "slice of axis %u expected start + size within %lld (operand 0 '%s' %s), found starts %s sizes %s",
                           i, (long long)x->dims[i], sp_in_name(c, 0), sp_shape_str(sb, sizeof sb, x),
                           sp_dims_str(sa, sizeof sa, x->rank, st),
                           sp_dims_str(sc, sizeof sc, x->rank, sz));
        d[i] = (sz[i] + stride - 1) / stride;
    }
    return sp_set_out(c, 0, x->dtype, x->rank, d);
}

static int want_index_dtype(sp_ctx *c, uint32_t i) {
    sp_val *v = sp_in(c, i);
    if (v->dtype == BERTH_DTYPE_I32 || v->dtype == BERTH_DTYPE_U32 || v->dtype == BERTH_DTYPE_I64)
        return 0;
    char sb[160];
    return sp_fail(c, "operand %u '%s' expected i32, u32 or i64 indices, found %s", i,
                   sp_in_name(c, i), sp_shape_str(sb, sizeof sb, v));
}

static int gather(sp_ctx *c) {
    if (want_index_dtype(c, 1)) return -1;
    sp_val *x = sp_in(c, 0), *idx = sp_in(c, 1);
    int64_t axis, d[BERTH_MAX_RANK * 2];
    uint32_t ax, r = 0;
    if (sp_opt_int(c, "axis", 0, &axis) || sp_axis(c, "option 'axis'", axis, x->rank, &ax)) return -1;
    if (x->rank - 1 + idx->rank > BERTH_MAX_RANK) {
        char sb[160];
        return sp_fail(c, "operand 1 '%s' expected rank <= %u, found %s", sp_in_name(c, 1),
                       BERTH_MAX_RANK + 1 - x->rank, sp_shape_str(sb, sizeof sb, idx));
    }
    for (uint32_t i = 0; i < ax; i++) d[r++] = x->dims[i];
    for (uint32_t i = 0; i < idx->rank; i++) d[r++] = idx->dims[i];
    for (uint32_t i = ax + 1; i < x->rank; i++) d[r++] = x->dims[i];
    return sp_set_out(c, 0, x->dtype, r, d);
}

/* gatherElements / scatterElements: indices have the input's rank and
 * its dims except along the axis. */
static int elements_indices(sp_ctx *c, const sp_val *x, uint32_t i, uint32_t ax) {
    sp_val *idx = sp_in(c, i);
    int ok = idx->rank == x->rank;
    for (uint32_t k = 0; ok && k < x->rank; k++) ok = k == ax || idx->dims[k] == x->dims[k];
    if (ok) return 0;
    char sa[160], sb[160];
    return sp_fail(c, "operand %u '%s' expected the dims of operand 0 '%s' %s except axis %u, found %s",
                   i, sp_in_name(c, i), sp_in_name(c, 0), sp_shape_str(sa, sizeof sa, x), ax,
                   sp_shape_str(sb, sizeof sb, idx));
}

static int gather_elements(sp_ctx *c) {
    if (want_index_dtype(c, 1)) return -1;
    sp_val *x = sp_in(c, 0), *idx = sp_in(c, 1);
    int64_t axis;
    uint32_t ax;
    if (sp_opt_int(c, "axis", 0, &axis) || sp_axis(c, "option 'axis'", axis, x->rank, &ax) ||
        elements_indices(c, x, 1, ax))
        return -1;
    return sp_set_like(c, 0, idx, x->dtype);
}

static int scatter_elements(sp_ctx *c) {
    if (want_index_dtype(c, 1)) return -1;
    sp_val *x = sp_in(c, 0), *idx = sp_in(c, 1), *up = sp_in(c, 2);
    int64_t axis;
    uint32_t ax;
    char sa[160], sb[160];
    if (sp_opt_int(c, "axis", 0, &axis) || sp_axis(c, "option 'axis'", axis, x->rank, &ax) ||
        elements_indices(c, x, 1, ax))
        return -1;
    if (up->dtype != x->dtype || up->rank != idx->rank ||
        memcmp(up->dims, idx->dims, sizeof(int64_t) * idx->rank))
        return sp_fail(c, "operand 2 '%s' expected %s%s (indices' shape), found %s", sp_in_name(c, 2),
                       berth_dtype_name(x->dtype), sp_dims_str(sa, sizeof sa, idx->rank, idx->dims),
                       sp_shape_str(sb, sizeof sb, up));
    return sp_set_like(c, 0, x, x->dtype);
}

static int expand(sp_ctx *c) {
    sp_val *x = sp_in(c, 0);
    int64_t s[BERTH_MAX_RANK], d[BERTH_MAX_RANK * 2];
    int n;
    uint32_t r;
    char sa[160], sb[160];
    if (need_ints(c, "newShape", s, BERTH_MAX_RANK, &n)) return -1;
    if (!sp_broadcast(x->rank, x->dims, (uint32_t)n, s, &r, d) || r > BERTH_MAX_RANK)
        return sp_fail(c, "option 'newShape' expected a shape broadcastable with operand 0 '%s' %s, found %s",
                       sp_in_name(c, 0), sp_shape_str(sb, sizeof sb, x),
                       sp_dims_str(sa, sizeof sa, (uint32_t)n, s));
    return sp_set_out(c, 0, x->dtype, r, d);
}

static int squeeze(sp_ctx *c) {
    sp_val *x = sp_in(c, 0);
    int64_t raw[BERTH_MAX_RANK], d[BERTH_MAX_RANK];
    int n;
    unsigned mask = 0;
    char sb[160];
    if (sp_opt_ints(c, "axes", raw, BERTH_MAX_RANK, &n)) return -1;
    for (int i = 0; i < n; i++) {
        uint32_t ax;
        if (sp_axis(c, "option 'axes' item", raw[i], x->rank, &ax)) return -1;
        if (x->dims[ax] != 1)
            return sp_fail(c, "option 'axes' expected dim %u of %s to be 1, found %lld", ax,
                           sp_shape_str(sb, sizeof sb, x), (long long)x->dims[ax]);
        mask |= 1u << ax;
    }
    uint32_t r = 0;
    for (uint32_t i = 0; i < x->rank; i++)
        if (n < 0 ? x->dims[i] != 1 : !(mask & (1u << i))) d[r++] = x->dims[i];
    return sp_set_out(c, 0, x->dtype, r, d);
}

static int unsqueeze(sp_ctx *c) {
    sp_val *x = sp_in(c, 0);
    int64_t raw[BERTH_MAX_RANK], d[BERTH_MAX_RANK];
    int n;
    unsigned mask = 0;
    if (need_ints(c, "axes", raw, BERTH_MAX_RANK, &n)) return -1;
    uint32_t r = x->rank + (uint32_t)n;
    if (r > BERTH_MAX_RANK)
        return sp_fail(c, "output expected rank <= %d, found %u", BERTH_MAX_RANK, r);
    for (int i = 0; i < n; i++) {
        uint32_t ax;
        if (sp_axis(c, "option 'axes' item", raw[i], r, &ax)) return -1;
        if (mask & (1u << ax)) return sp_fail(c, "option 'axes' expected distinct axes, found %u twice", ax);
        mask |= 1u << ax;
    }
    for (uint32_t i = 0, k = 0; i < r; i++) d[i] = (mask & (1u << i)) ? 1 : x->dims[k++];
    return sp_set_out(c, 0, x->dtype, r, d);
}

static int cast(sp_ctx *c) {
    const char *ts;
    if (sp_opt_str(c, "type", NULL, &ts)) return -1;
    if (!ts) return sp_fail(c, "expected option 'type', found none");
    berth_dtype t = berth_dtype_parse(ts);
    if (t == BERTH_DTYPE_INVALID)
        return sp_fail(c, "option 'type' expected a dtype such as \"float32\" or \"int64\", found \"%s\"", ts);
    return sp_set_like(c, 0, sp_in(c, 0), t);
}

static int pad(sp_ctx *c) {
    sp_val *x = sp_in(c, 0);
    int64_t b[BERTH_MAX_RANK], e[BERTH_MAX_RANK], d[BERTH_MAX_RANK];
    int nb, ne;
    const char *mode;
    char sb[160];
    if (need_ints(c, "beginningPadding", b, BERTH_MAX_RANK, &nb) ||
        need_ints(c, "endingPadding", e, BERTH_MAX_RANK, &ne) ||
        sp_opt_str(c, "mode", "constant", &mode))
        return -1;
    if (strcmp(mode, "constant") && strcmp(mode, "edge") && strcmp(mode, "reflection"))
        return sp_fail(c, "option 'mode' expected \"constant\", \"edge\" or \"reflection\", found \"%s\"", mode);
    if ((uint32_t)nb != x->rank || (uint32_t)ne != x->rank)
        return sp_fail(c, "options 'beginningPadding' and 'endingPadding' expected %u items for %s, found %d and %d",
                       x->rank, sp_shape_str(sb, sizeof sb, x), nb, ne);
    for (uint32_t i = 0; i < x->rank; i++) {
        if (b[i] < 0 || e[i] < 0)
            return sp_fail(c, "padding of axis %u expected >= 0, found %lld and %lld", i,
                           (long long)b[i], (long long)e[i]);
        d[i] = x->dims[i] + b[i] + e[i];
    }
    return sp_set_out(c, 0, x->dtype, x->rank, d);
}

static int tile(sp_ctx *c) {
    sp_val *x = sp_in(c, 0);
    int64_t reps[BERTH_MAX_RANK], d[BERTH_MAX_RANK];
    int n;
    char sa[160], sb[160];
    if (need_ints(c, "repetitions", reps, BERTH_MAX_RANK, &n)) return -1;
    int ok = (uint32_t)n == x->rank;
    for (int i = 0; ok && i < n; i++) ok = reps[i] >= 1;
    if (!ok)
        return sp_fail(c, "option 'repetitions' expected %u items >= 1 for %s, found %s", x->rank,
                       sp_shape_str(sb, sizeof sb, x), sp_dims_str(sa, sizeof sa, (uint32_t)n, reps));
    for (int i = 0; i < n; i++) {
        if (x->dims[i] && reps[i] > INT64_MAX / x->dims[i])
            return sp_fail(c, "output has too many elements");
        d[i] = x->dims[i] * reps[i];
    }
    return sp_set_out(c, 0, x->dtype, x->rank, d);
}

static int triangular(sp_ctx *c) {
    sp_val *x = sp_in(c, 0);
    int upper;
    int64_t diag;
    if (sp_opt_bool(c, "upper", 1, &upper) || sp_opt_int(c, "diagonal", 0, &diag)) return -1;
    if (x->rank < 2) {
        char sb[160];
        return sp_fail(c, "operand 0 '%s' expected rank >= 2, found %s", sp_in_name(c, 0),
                       sp_shape_str(sb, sizeof sb, x));
    }
    return sp_set_like(c, 0, x, x->dtype);
}

static int cumulative_sum(sp_ctx *c) {
    sp_val *x = sp_in(c, 0);
    int64_t axis;
    uint32_t ax;
    int ex, rev;
    if (!sp_attr(c->n, "axis")) return sp_fail(c, "expected an 'axis', found none");
    if (sp_opt_int(c, "axis", 0, &axis) || sp_axis(c, "option 'axis'", axis, x->rank, &ax) ||
        sp_opt_bool(c, "exclusive", 0, &ex) || sp_opt_bool(c, "reversed", 0, &rev))
        return -1;
    return sp_set_like(c, 0, x, x->dtype);
}

/* shape: its data is known on the host (fold.c fills it). */
static int shape(sp_ctx *c) {
    int64_t r = sp_in(c, 0)->rank;
    return sp_set_out(c, 0, BERTH_DTYPE_I64, 1, &r);
}

const sp_rule sp_rules_shape[] = {
    {BERTH_OP_RESHAPE, reshape},
    {BERTH_OP_TRANSPOSE, transpose},
    {BERTH_OP_CONCAT, concat},
    {BERTH_OP_SPLIT, split},
    {BERTH_OP_SLICE, slice},
    {BERTH_OP_GATHER, gather},
    {BERTH_OP_GATHER_ELEMENTS, gather_elements},
    {BERTH_OP_SCATTER_ELEMENTS, scatter_elements},
    {BERTH_OP_EXPAND, expand},
    {BERTH_OP_SQUEEZE, squeeze},
    {BERTH_OP_UNSQUEEZE, unsqueeze},
    {BERTH_OP_CAST, cast},
    {BERTH_OP_PAD, pad},
    {BERTH_OP_TILE, tile},
    {BERTH_OP_TRIANGULAR, triangular},
    {BERTH_OP_CUMULATIVE_SUM, cumulative_sum},
    {BERTH_OP_SHAPE, shape},
    {BERTH_OP_UNKNOWN, NULL},
};
