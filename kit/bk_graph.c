/* Graph descs: the size checks every reader owes the ABI, a view in this
 * build's layout (arrays indexed by the host's declared element sizes,
 * copied only when they differ from ours), and the topological-order
 * check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk.h"

#define FITS(st, field) ((st)->struct_size >= offsetof(berth_graph_desc, field) + sizeof((st)->field))
/* A size field past the struct's end, or left 0 by a writer that knew the
 * field but not its use, means the ABI 1.0 size. */
#define SIZE_OR(st, field, v1) (FITS(st, field) && (st)->field ? (size_t)(st)->field : (size_t)(v1))
#define AT(base, i, size) ((const void *)((const char *)(base) + (size_t)(i) * (size)))

typedef struct sizes {
    size_t operand, node, attr;
} sizes;

static const char *opname(const berth_node *n) { return n->op ? n->op : "(null)"; }
static const char *nodename(const berth_node *n) { return n->name ? n->name : "?"; }

static berth_status check_sizes(const berth_graph_desc *in, sizes *z, berth_error *err) {
    if (!in || in->struct_size < BERTH_GRAPH_DESC_V1_MIN_SIZE) {
        bk_errf(err, "graph description missing or %u bytes, expected at least %zu (ABI 1.0's)",
                in ? in->struct_size : 0u, (size_t)BERTH_GRAPH_DESC_V1_MIN_SIZE);
        return BERTH_ERR_INVALID;
    }
    z->operand = SIZE_OR(in, operand_size, BERTH_OPERAND_V1_SIZE);
    z->node = SIZE_OR(in, node_size, BERTH_NODE_V1_SIZE);
    z->attr = SIZE_OR(in, attr_size, BERTH_ATTR_V1_SIZE);
    size_t tensor = SIZE_OR(in, tensor_size, BERTH_TENSOR_V1_SIZE);
    const char *what = z->operand < BERTH_OPERAND_V1_SIZE ? "operand_size"
                     : z->node < BERTH_NODE_V1_SIZE ? "node_size"
                     : z->attr < BERTH_ATTR_V1_SIZE ? "attr_size"
                     : tensor < BERTH_TENSOR_V1_SIZE ? "tensor_size" : NULL;
    if (what) {
        bk_errf(err, "graph description: %s is smaller than ABI 1.0's element (operand %zu, node %zu, attr %zu, "
                "tensor %zu bytes)", what, z->operand, z->node, z->attr, tensor);
        return BERTH_ERR_INVALID;
    }
    if ((in->n_operands && !in->operands) || (in->n_nodes && !in->nodes) || (in->n_inputs && !in->inputs) ||
        (in->n_outputs && !in->outputs)) {
        bk_errf(err, "graph description has a count without its array");
        return BERTH_ERR_INVALID;
    }
    return BERTH_OK;
}

static berth_status check_operand(const berth_operand *o, uint32_t i, berth_error *err) {
    const char *name = o->name ? o->name : "?";
    if (o->kind < BERTH_OPERAND_INPUT || o->kind > BERTH_OPERAND_VALUE) {
        bk_errf(err, "operand %u '%s': unknown kind %d", i, name, (int)o->kind);
        return BERTH_ERR_INVALID;
    }
    if (o->dtype <= BERTH_DTYPE_INVALID || o->dtype > BERTH_DTYPE_U4) {
        bk_errf(err, "operand %u '%s': dtype %d is not valid", i, name, (int)o->dtype);
        return BERTH_ERR_INVALID;
    }
    if (o->rank > BERTH_MAX_RANK) {
        bk_errf(err, "operand %u '%s': rank %u exceeds %d", i, name, o->rank, BERTH_MAX_RANK);
        return BERTH_ERR_INVALID;
    }
    size_t n = 1;
    for (uint32_t d = 0; d < o->rank; d++) {
        if (o->dims[d] < 0 || (o->dims[d] && n > (SIZE_MAX >> 8) / (size_t)o->dims[d])) {
            bk_errf(err, "operand %u '%s': dim %u is %lld, expected a size >= 0 that does not overflow", i, name, d,
                    (long long)o->dims[d]);
            return BERTH_ERR_INVALID;
        }
        n *= (size_t)o->dims[d];
    }
    return BERTH_OK;
}

static berth_status check_node(const berth_graph_desc *g, const berth_node *n, size_t attr_size, size_t *n_attrs,
                               berth_error *err) {
    if ((n->n_inputs && !n->inputs) || (n->n_outputs && !n->outputs) || (n->n_attrs && !n->attrs)) {
        bk_errf(err, "node '%s' (%s): operand or attribute list missing", nodename(n), opname(n));
        return BERTH_ERR_INVALID;
    }
    int bad = 0;
    for (uint32_t i = 0; i < n->n_inputs; i++) bad |= n->inputs[i] >= g->n_operands;
    for (uint32_t i = 0; i < n->n_outputs; i++) bad |= n->outputs[i] >= g->n_operands;
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        const berth_attr *at = AT(n->attrs, a, attr_size);
        if (at->type == BERTH_ATTR_OPERAND) bad |= at->i < 0 || at->i >= (int64_t)g->n_operands;
        if (at->type == BERTH_ATTR_OPERANDS && at->count && !at->ints) bad = 1;
        for (size_t j = 0; at->type == BERTH_ATTR_OPERANDS && at->ints && j < at->count; j++)
            bad |= at->ints[j] < 0 || at->ints[j] >= (int64_t)g->n_operands;
    }
    if (bad) {
        bk_errf(err, "node '%s' (%s): an operand index is out of range (%u operands)", nodename(n), opname(n),
                g->n_operands);
        return BERTH_ERR_INVALID;
    }
    *n_attrs += n->n_attrs;
    return BERTH_OK;
}

/* Copies every element the host declared into arrays of our layout. */
static berth_status copy_native(const berth_graph_desc *in, const sizes *z, size_t n_attrs, bk_graph *out,
                                berth_error *err) {
    size_t bytes = sizeof(berth_operand) * in->n_operands + sizeof(berth_node) * in->n_nodes +
                   sizeof(berth_attr) * n_attrs;
    char *block = calloc(1, bytes ? bytes : 1);
    if (!block) {
        bk_errf(err, "out of memory copying a graph description (%zu bytes)", bytes);
        return BERTH_ERR_NOMEM;
    }
    berth_operand *ops = (berth_operand *)(void *)block;
    berth_node *nodes = (berth_node *)(void *)(ops + in->n_operands);
    berth_attr *attrs = (berth_attr *)(void *)(nodes + in->n_nodes);
    for (uint32_t i = 0; i < in->n_operands; i++)
        memcpy(&ops[i], AT(in->operands, i, z->operand), z->operand < sizeof *ops ? z->operand : sizeof *ops);
    for (uint32_t k = 0; k < in->n_nodes; k++) {
        memcpy(&nodes[k], AT(in->nodes, k, z->node), z->node < sizeof *nodes ? z->node : sizeof *nodes);
        for (uint32_t a = 0; a < nodes[k].n_attrs; a++)
            memcpy(&attrs[a], AT(nodes[k].attrs, a, z->attr), z->attr < sizeof *attrs ? z->attr : sizeof *attrs);
        nodes[k].attrs = nodes[k].n_attrs ? attrs : NULL;
        attrs += nodes[k].n_attrs;
    }
    out->g.operands = ops;
    out->g.nodes = nodes;
    out->owned = block;
    return BERTH_OK;
}

berth_status bk_graph_view(const berth_graph_desc *in, bk_graph *out, berth_error *err) {
    memset(out, 0, sizeof *out);
    sizes z;
    berth_status st = check_sizes(in, &z, err);
    if (st) return st;
    for (uint32_t i = 0; i < in->n_operands; i++)
        if ((st = check_operand(AT(in->operands, i, z.operand), i, err))) return st;
    size_t n_attrs = 0;
    for (uint32_t k = 0; k < in->n_nodes; k++)
        if ((st = check_node(in, AT(in->nodes, k, z.node), z.attr, &n_attrs, err))) return st;
    for (uint32_t i = 0; i < in->n_inputs; i++)
        if (in->inputs[i] >= in->n_operands) {
            bk_errf(err, "graph input %u: operand %u out of range (%u operands)", i, in->inputs[i], in->n_operands);
            return BERTH_ERR_INVALID;
        }
    for (uint32_t i = 0; i < in->n_outputs; i++)
        if (in->outputs[i] >= in->n_operands) {
            bk_errf(err, "graph output %u: operand %u out of range (%u operands)", i, in->outputs[i], in->n_operands);
            return BERTH_ERR_INVALID;
        }
    out->g.n_operands = in->n_operands;
    out->g.operands = in->operands;
    out->g.n_nodes = in->n_nodes;
    out->g.nodes = in->nodes;
    out->g.n_inputs = in->n_inputs;
    out->g.inputs = in->inputs;
    out->g.n_outputs = in->n_outputs;
    out->g.outputs = in->outputs;
    out->g.struct_size = sizeof out->g;
    out->g.operand_size = sizeof(berth_operand);
    out->g.node_size = sizeof(berth_node);
    out->g.attr_size = sizeof(berth_attr);
    out->g.tensor_size = (uint32_t)SIZE_OR(in, tensor_size, BERTH_TENSOR_V1_SIZE);
    if (z.operand == sizeof(berth_operand) && z.node == sizeof(berth_node) && z.attr == sizeof(berth_attr))
        return BERTH_OK;
    return copy_native(in, &z, n_attrs, out, err);
}

void bk_graph_release(bk_graph *g) {
    free(g->owned);
    g->owned = NULL;
}

void bk_node_reads(const berth_node *n, bk_use_fn fn, void *ctx) {
    for (uint32_t k = 0; k < n->n_inputs; k++) fn(ctx, n->inputs[k]);
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        const berth_attr *at = &n->attrs[a];
        if (at->type == BERTH_ATTR_OPERAND) fn(ctx, (uint32_t)at->i);
        for (size_t k = 0; at->type == BERTH_ATTR_OPERANDS && k < at->count; k++) fn(ctx, (uint32_t)at->ints[k]);
    }
}

typedef struct order_ctx {
    const berth_graph_desc *g;
    const uint8_t *made;
    uint32_t bad;
} order_ctx;

static void check_ready(void *ctx, uint32_t o) {
    order_ctx *c = ctx;
    if (c->bad == BK_NONE && c->g->operands[o].kind == BERTH_OPERAND_VALUE && !c->made[o]) c->bad = o;
}

berth_status bk_graph_check_order(const berth_graph_desc *g, berth_error *err) {
    for (uint32_t i = 0; i < g->n_inputs; i++)
        if (g->operands[g->inputs[i]].kind != BERTH_OPERAND_INPUT) {
            bk_errf(err, "graph input %u must name an input operand", i);
            return BERTH_ERR_INVALID;
        }
    uint8_t *made = calloc(g->n_operands + 1u, 1);
    if (!made) {
        bk_errf(err, "out of memory checking the graph's order");
        return BERTH_ERR_NOMEM;
    }
    berth_status st = BERTH_OK;
    for (uint32_t k = 0; k < g->n_nodes && !st; k++) {
        const berth_node *n = &g->nodes[k];
        order_ctx c = {g, made, BK_NONE};
        char where[32] = "an option";
        for (uint32_t i = 0; i < n->n_inputs && c.bad == BK_NONE; i++) {
            check_ready(&c, n->inputs[i]);
            if (c.bad != BK_NONE) snprintf(where, sizeof where, "input %u", i);
        }
        if (c.bad == BK_NONE) bk_node_reads(n, check_ready, &c);
        if (c.bad != BK_NONE) {
            bk_errf(err, "node '%s' (%s): %s reads '%s' before any node produces it", nodename(n), opname(n), where,
                    g->operands[c.bad].name ? g->operands[c.bad].name : "?");
            st = BERTH_ERR_INVALID;
        }
        for (uint32_t j = 0; j < n->n_outputs && !st; j++) {
            uint32_t o = n->outputs[j];
            if (g->operands[o].kind != BERTH_OPERAND_VALUE || made[o]) {
                bk_errf(err, "node '%s' (%s): output %u must be a value operand produced once", nodename(n),
                        opname(n), j);
                st = BERTH_ERR_INVALID;
            }
            made[o] = 1;
        }
        if (!st && n->n_outputs == 0) {
            bk_errf(err, "node '%s' (%s): no outputs", nodename(n), opname(n));
            st = BERTH_ERR_INVALID;
        }
    }
    for (uint32_t i = 0; i < g->n_outputs && !st; i++) {
        uint32_t o = g->outputs[i];
        if (g->operands[o].kind == BERTH_OPERAND_VALUE && !made[o]) {
            bk_errf(err, "graph output %u ('%s') is not produced by any node", i,
                    g->operands[o].name ? g->operands[o].name : "?");
            st = BERTH_ERR_INVALID;
        }
    }
    free(made);
    return st;
}

berth_status bk_plan_native(bk_plan_fn fn, berth_device *dev, berth_weights *w, const berth_graph_desc *g,
                            berth_plan **out, berth_error *err) {
    *out = NULL;
    bk_graph view;
    berth_status st = bk_graph_view(g, &view, err);
    if (st) return st;
    st = fn(dev, w, &view.g, out, err);
    bk_graph_release(&view);
    return st;
}
