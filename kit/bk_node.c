/* Messages about a node and the checks op code shares: counts, dtypes,
 * output shapes, axes, and the node's options through bk_attr. */
#include <stdarg.h>
#include <stdio.h>

#include "bk.h"

void bk_errf(berth_error *err, const char *fmt, ...) {
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

void bk_dims_str(const int64_t *dims, uint32_t rank, char *buf, size_t cap) {
    size_t at = (size_t)snprintf(buf, cap, "[");
    for (uint32_t i = 0; i < rank && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, i ? ", %lld" : "%lld", (long long)dims[i]);
    if (at < cap) snprintf(buf + at, cap - at, "]");
}

static berth_status node_msg(const bk_node_ctx *c, berth_status st, const char *fmt, va_list ap) {
    char tail[400];
    vsnprintf(tail, sizeof tail, fmt, ap);
    bk_errf(c->err, "node '%s' (%s): %s", c->node->name ? c->node->name : "?", c->node->op ? c->node->op : "?",
            tail);
    return st;
}

berth_status bk_fail(const bk_node_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    berth_status st = node_msg(c, BERTH_ERR_INVALID, fmt, ap);
    va_end(ap);
    return st;
}

berth_status bk_refuse(const bk_node_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    berth_status st = node_msg(c, BERTH_ERR_UNSUPPORTED, fmt, ap);
    va_end(ap);
    return st;
}

berth_status bk_check_counts(const bk_node_ctx *c, uint32_t in_min, uint32_t in_max, uint32_t n_out) {
    const berth_node *n = c->node;
    if (n->n_inputs < in_min || n->n_inputs > in_max) {
        if (in_min == in_max) return bk_fail(c, "expected %u inputs, found %u", in_min, n->n_inputs);
        if (in_max == BERTH_OPS_MANY) return bk_fail(c, "expected at least %u inputs, found %u", in_min, n->n_inputs);
        return bk_fail(c, "expected %u to %u inputs, found %u", in_min, in_max, n->n_inputs);
    }
    if (n_out == BERTH_OPS_MANY ? n->n_outputs == 0 : n->n_outputs != n_out)
        return bk_fail(c, "expected %u outputs, found %u", n_out == BERTH_OPS_MANY ? 1u : n_out, n->n_outputs);
    return BERTH_OK;
}

berth_status bk_check_same_dtype(const bk_node_ctx *c, uint32_t n_same, uint32_t mask) {
    berth_dtype t = bk_out(c, 0)->dtype;
    if (!(mask & BK_BIT(t))) return bk_refuse(c, "dtype %s is not supported", bk_dtype_name(t));
    for (uint32_t i = 0; i < n_same && i < c->node->n_inputs; i++)
        if (bk_in(c, i)->dtype != t)
            return bk_fail(c, "input %u: expected dtype %s, found %s", i, bk_dtype_name(t),
                           bk_dtype_name(bk_in(c, i)->dtype));
    return BERTH_OK;
}

berth_status bk_check_out_dims(const bk_node_ctx *c, uint32_t out, uint32_t rank, const int64_t *dims) {
    const berth_operand *o = bk_out(c, out);
    int same = o->rank == rank;
    for (uint32_t i = 0; same && i < rank; i++) same = o->dims[i] == dims[i];
    if (same) return BERTH_OK;
    char want[128], got[128];
    bk_dims_str(dims, rank, want, sizeof want);
    bk_dims_str(o->dims, o->rank, got, sizeof got);
    return bk_fail(c, "output %u: expected shape %s, found %s", out, want, got);
}

berth_status bk_axis(const bk_node_ctx *c, int64_t a, uint32_t rank, const char *what, uint32_t *axis) {
    if (a < -(int64_t)rank || a >= (int64_t)rank)
        return bk_fail(c, "%s %lld out of range for rank %u", what, (long long)a, rank);
    *axis = (uint32_t)(a < 0 ? a + (int64_t)rank : a);
    return BERTH_OK;
}

size_t bk_numel(const berth_operand *o) {
    size_t n = 1;
    for (uint32_t i = 0; i < o->rank && i < BERTH_MAX_RANK; i++) {
        if (o->dims[i] < 0) return SIZE_MAX;
        if (o->dims[i] && n > SIZE_MAX / (size_t)o->dims[i]) return SIZE_MAX;
        n *= (size_t)o->dims[i];
    }
    return n;
}

/* ---- options ---- */

static bk_attrs node_attrs(const bk_node_ctx *c) { return bk_node_attrs(c->node, c->g->attr_size, 0); }

/* Adds the node prefix to a reader's message. */
static berth_status opt_done(const bk_node_ctx *c, berth_status st, const berth_error *e) {
    return st ? bk_fail(c, "%s", e->msg) : BERTH_OK;
}

const berth_attr *bk_opt_find(const bk_node_ctx *c, const char *key) { return bk_attr_find(node_attrs(c), key); }

berth_status bk_opt_int(const bk_node_ctx *c, const char *key, int64_t def, int64_t *out) {
    berth_error e;
    return opt_done(c, bk_attr_int(node_attrs(c), key, def, out, &e), &e);
}

berth_status bk_opt_float(const bk_node_ctx *c, const char *key, double def, double *out) {
    berth_error e;
    return opt_done(c, bk_attr_float(node_attrs(c), key, def, out, &e), &e);
}

berth_status bk_opt_bool(const bk_node_ctx *c, const char *key, int def, int *out) {
    berth_error e;
    return opt_done(c, bk_attr_bool(node_attrs(c), key, def, out, &e), &e);
}

berth_status bk_opt_string(const bk_node_ctx *c, const char *key, const char *def, const char **out) {
    berth_error e;
    return opt_done(c, bk_attr_string(node_attrs(c), key, def, out, &e), &e);
}

berth_status bk_opt_ints(const bk_node_ctx *c, const char *key, int64_t *vals, int cap, int *n) {
    berth_error e;
    return opt_done(c, bk_attr_ints(node_attrs(c), key, vals, (size_t)cap, n, &e), &e);
}

berth_status bk_opt_floats(const bk_node_ctx *c, const char *key, double *vals, int cap, int *n) {
    berth_error e;
    return opt_done(c, bk_attr_floats(node_attrs(c), key, vals, (size_t)cap, n, &e), &e);
}

berth_status bk_opt_operand(const bk_node_ctx *c, const char *key, uint32_t *idx) {
    berth_error e;
    return opt_done(c, bk_attr_operand(node_attrs(c), key, c->g->n_operands, idx, &e), &e);
}
