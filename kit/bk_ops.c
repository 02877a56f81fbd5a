/* Op tables indexed by berth_op_id, and supports_op / supports_node
 * answered from them: op known to ops.def and registered, input 0's
 * dtype in the op's mask, then the op's check hook. */
#include <string.h>

#include "bk.h"

const bk_op_caps *bk_op_caps_of(const bk_op_set *s, berth_op_id id) {
    if ((int)id < 0 || id >= BERTH_OP_COUNT) return NULL;
    const bk_op_caps *caps =
        (const bk_op_caps *)(const void *)((const char *)s->table + (size_t)id * s->stride + s->caps_off);
    return caps->dtypes ? caps : NULL;
}

static const bk_op_caps *find(const bk_op_set *s, const char *op, berth_op_id *id, berth_error *err) {
    *id = berth_op_find(op);
    const bk_op_caps *caps = bk_op_caps_of(s, *id);
    if (!caps)
        bk_errf(err, "%s: op '%s' is %s", s->backend, op ? op : "(null)",
                *id == BERTH_OP_UNKNOWN ? "not a berth op" : "not implemented");
    return caps;
}

berth_status bk_supports_op(const bk_op_set *s, const char *op, berth_dtype dtype, berth_error *err) {
    berth_op_id id;
    const bk_op_caps *caps = find(s, op, &id, err);
    if (!caps) return BERTH_ERR_UNSUPPORTED;
    if (!(caps->dtypes & BK_BIT(dtype))) {
        bk_errf(err, "%s: op '%s' does not support dtype %s", s->backend, op, bk_dtype_name(dtype));
        return BERTH_ERR_UNSUPPORTED;
    }
    return BERTH_OK;
}

berth_status bk_check_op_rules(const bk_node_ctx *c, berth_op_id id) {
    const berth_op_desc *d = &berth_op_table()[id];
    berth_status st = bk_check_counts(c, d->min_inputs, d->max_inputs, d->n_outputs);
    if (st) return st;
    int from = d->out_dtype == BERTH_OUT_IN0 ? 0 : d->out_dtype == BERTH_OUT_IN1 ? 1
             : d->out_dtype == BERTH_OUT_IN2 ? 2 : -1;
    berth_dtype want = from >= 0 ? bk_in(c, (uint32_t)from)->dtype
                     : d->out_dtype == BERTH_OUT_U8 ? BERTH_DTYPE_U8
                     : d->out_dtype == BERTH_OUT_I64 ? BERTH_DTYPE_I64 : BERTH_DTYPE_INVALID;
    for (uint32_t j = 0; want != BERTH_DTYPE_INVALID && j < c->node->n_outputs; j++)
        if (bk_out(c, j)->dtype != want)
            return bk_fail(c, "output %u: expected dtype %s, found %s", j, bk_dtype_name(want),
                           bk_dtype_name(bk_out(c, j)->dtype));
    return BERTH_OK;
}

berth_status bk_node_op(const bk_op_set *s, const bk_node_ctx *c, berth_op_id *id) {
    const berth_node *n = c->node;
    const bk_op_caps *caps = find(s, n->op, id, NULL);
    if (!caps) {
        bk_errf(c->err, "node '%s': op '%s' is not supported by the %s backend", n->name ? n->name : "?",
                n->op ? n->op : "(null)", s->backend);
        return BERTH_ERR_UNSUPPORTED;
    }
    berth_status st = bk_check_op_rules(c, *id);
    if (st) return st;
    berth_dtype t = n->n_inputs ? bk_in(c, 0)->dtype : bk_out(c, 0)->dtype;
    if (!(caps->dtypes & BK_BIT(t))) return bk_refuse(c, "dtype %s is not supported", bk_dtype_name(t));
    return caps->check ? caps->check(c) : BERTH_OK;
}

berth_status bk_supports_node(const bk_op_set *s, const berth_graph_desc *g, uint32_t k, berth_error *err) {
    bk_graph view;
    berth_status st = bk_graph_view(g, &view, err);
    if (st) return st;
    if (k >= view.g.n_nodes) {
        bk_errf(err, "%s: supports_node: node %u of %u", s->backend, k, view.g.n_nodes);
        st = BERTH_ERR_INVALID;
    } else {
        bk_node_ctx c = {.g = &view.g, .node = &view.g.nodes[k], .err = err};
        berth_op_id id;
        st = bk_node_op(s, &c, &id);
    }
    bk_graph_release(&view);
    return st;
}
