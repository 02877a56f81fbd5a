/* Helpers every shape rule uses: messages, option readers, broadcasting. */
#include "infer.h"

#include <stdio.h>
#include <string.h>

#include "bk_attr.h"
#include "dtype.h"
#include "specialize.h"

static const sp_rule *const rule_tables[] = {
    sp_rules_elementwise, sp_rules_linalg, sp_rules_conv, sp_rules_norm, sp_rules_shape,
};

sp_infer_fn sp_find_rule(berth_op_id id) {
    if (id < 0 || id >= BERTH_OP_COUNT) return NULL;
    for (size_t t = 0; t < sizeof rule_tables / sizeof rule_tables[0]; t++)
        for (const sp_rule *r = rule_tables[t]; r->infer; r++)
            if (r->op == id) return r->infer;
    return NULL;
}


int sp_fail(sp_ctx *c, const char *fmt, ...) {
    const bg_node *src = c->n->src;
    int k = snprintf(c->err->msg, sizeof c->err->msg, "%s:%u: node '%s' (%s): ",
                     c->g->path ? c->g->path : "<graph>", src ? src->line : 0,
                     c->n->name ? c->n->name : "?", c->n->op);
    if (k < 0) k = 0;
    if ((size_t)k < sizeof c->err->msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err->msg + k, sizeof c->err->msg - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *sp_dims_str(char *buf, size_t cap, uint32_t rank, const int64_t *dims) {
    size_t k = 0;
    int w = snprintf(buf, cap, "[");
    k = w > 0 ? (size_t)w : 0;
    for (uint32_t i = 0; i < rank && k < cap; i++) {
        w = snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", (long long)dims[i]);
        if (w > 0) k += (size_t)w;
    }
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

const char *sp_shape_str(char *buf, size_t cap, const sp_val *v) {
    int w = snprintf(buf, cap, "%s", berth_dtype_name(v->dtype));
    size_t k = w > 0 ? (size_t)w : 0;
    if (k < cap) sp_dims_str(buf + k, cap - k, v->rank, v->dims);
    return buf;
}

sp_val *sp_in(sp_ctx *c, uint32_t i) { return &c->vals[c->n->inputs[i]]; }

const char *sp_in_name(sp_ctx *c, uint32_t i) { return c->g->values[c->n->inputs[i]].name; }

int sp_check_counts(sp_ctx *c, berth_op_id id) {
    const berth_op_desc *d = &berth_op_table()[id];
    uint32_t n = c->n->n_inputs, outs = c->n->src->n_outputs;
    if (n < d->min_inputs || n > d->max_inputs) {
        if (d->min_inputs == d->max_inputs)
            return sp_fail(c, "expected %u operand%s, found %u", d->min_inputs,
                           d->min_inputs == 1 ? "" : "s", n);
        if (d->max_inputs == BERTH_OPS_MANY)
            return sp_fail(c, "expected at least %u operand%s, found %u", d->min_inputs,
                           d->min_inputs == 1 ? "" : "s", n);
        return sp_fail(c, "expected %u to %u operands, found %u", d->min_inputs, d->max_inputs, n);
    }
    if (d->n_outputs == BERTH_OPS_MANY ? outs < 1 : outs != d->n_outputs) {
        if (d->n_outputs == BERTH_OPS_MANY) return sp_fail(c, "expected at least 1 output, found %u", outs);
        return sp_fail(c, "expected %u output%s, found %u", d->n_outputs, d->n_outputs == 1 ? "" : "s", outs);
    }
    return 0;
}

int64_t sp_numel(uint32_t rank, const int64_t *dims) {
    int64_t n = 1;
    for (uint32_t i = 0; i < rank; i++) {
        if (dims[i] < 0) return -1;
        if (dims[i] && n > INT64_MAX / dims[i]) return -1;
        n *= dims[i];
    }
    return n;
}

int sp_set_out(sp_ctx *c, uint32_t i, berth_dtype t, uint32_t rank, const int64_t *dims) {
    if (i >= c->n->src->n_outputs) return sp_fail(c, "output %u missing", i);
    if (rank > BERTH_MAX_RANK)
        return sp_fail(c, "output %u expected rank <= %d, found %u", i, BERTH_MAX_RANK, rank);
    for (uint32_t d = 0; d < rank; d++)
        if (dims[d] < 0) {
            char b[160];
            return sp_fail(c, "output %u expected dims >= 0, found %s", i,
                           sp_dims_str(b, sizeof b, rank, dims));
        }
    if (sp_numel(rank, dims) < 0) return sp_fail(c, "output %u has too many elements", i);
    sp_val *v = &c->vals[c->n->src->outputs[i]];
    v->dtype = t;
    v->rank = rank;
    memcpy(v->dims, dims, sizeof(int64_t) * rank);
    v->data = NULL;
    v->ready = 1;
    return 0;
}

int sp_set_like(sp_ctx *c, uint32_t i, const sp_val *v, berth_dtype t) {
    return sp_set_out(c, i, t, v->rank, v->dims);
}

const berth_attr *sp_attr(const sp_node *n, const char *key) {
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].key, key)) return n->attrs[i].type == BERTH_ATTR_NULL ? NULL : &n->attrs[i];
    return NULL;
}

/* The options of the node being inferred, read by the backend kit's
 * readers with the engine's rules (exact types) and words. */
static bk_attrs node_opts(const sp_ctx *c) {
    bk_attrs a = {c->n->attrs, c->n->n_attrs, sizeof(berth_attr), BK_ATTR_EXACT | BK_ATTR_PROSE};
    return a;
}

static int opt_done(sp_ctx *c, berth_status st, const berth_error *e) { return st ? sp_fail(c, "%s", e->msg) : 0; }

int sp_opt_int(sp_ctx *c, const char *key, int64_t def, int64_t *out) {
    berth_error e;
    return opt_done(c, bk_attr_int(node_opts(c), key, def, out, &e), &e);
}

int sp_opt_float(sp_ctx *c, const char *key, double def, double *out) {
    berth_error e;
    return opt_done(c, bk_attr_float(node_opts(c), key, def, out, &e), &e);
}

int sp_opt_bool(sp_ctx *c, const char *key, int def, int *out) {
    berth_error e;
    return opt_done(c, bk_attr_bool(node_opts(c), key, def, out, &e), &e);
}

int sp_opt_str(sp_ctx *c, const char *key, const char *def, const char **out) {
    berth_error e;
    return opt_done(c, bk_attr_string(node_opts(c), key, def, out, &e), &e);
}

int sp_opt_ints(sp_ctx *c, const char *key, int64_t *out, size_t cap, int *count) {
    berth_error e;
    return opt_done(c, bk_attr_ints(node_opts(c), key, out, cap, count, &e), &e);
}

int sp_opt_floats(sp_ctx *c, const char *key, double *out, size_t cap, int *count) {
    berth_error e;
    return opt_done(c, bk_attr_floats(node_opts(c), key, out, cap, count, &e), &e);
}

int sp_opt_operand(sp_ctx *c, const char *key, sp_val **v, const char **name) {
    berth_error e;
    uint32_t idx;
    *v = NULL;
    if (name) *name = NULL;
    if (opt_done(c, bk_attr_operand(node_opts(c), key, c->g->n_values, &idx, &e), &e)) return -1;
    if (idx == UINT32_MAX) return 0;
    *v = &c->vals[idx];
    if (name) *name = c->g->values[idx].name;
    return 0;
}

int sp_axis(sp_ctx *c, const char *what, int64_t axis, uint32_t rank, uint32_t *out) {
    int64_t r = rank;
    if (axis < -r || axis >= r || rank == 0)
        return sp_fail(c, "%s expected in [%lld, %lld), found %lld", what, (long long)-r,
                       (long long)r, (long long)axis);
    *out = (uint32_t)(axis < 0 ? axis + r : axis);
    return 0;
}

int sp_broadcast(uint32_t ra, const int64_t *a, uint32_t rb, const int64_t *b, uint32_t *rout,
                 int64_t *out) {
    uint32_t r = ra > rb ? ra : rb;
    for (uint32_t i = 0; i < r; i++) {
        int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
        int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
        if (da == db || db == 1) out[i] = da;
        else if (da == 1) out[i] = db;
        else return 0;
    }
    *rout = r;
    return 1;
}

int sp_is_float(berth_dtype t) { return t == BERTH_DTYPE_F32 || t == BERTH_DTYPE_F16; }

int sp_is_int(berth_dtype t) {
    return t == BERTH_DTYPE_I32 || t == BERTH_DTYPE_U32 || t == BERTH_DTYPE_I64 ||
           t == BERTH_DTYPE_U64 || t == BERTH_DTYPE_I8 || t == BERTH_DTYPE_U8;
}
