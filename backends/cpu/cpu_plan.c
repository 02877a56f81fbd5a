/* plan(): validate a concrete graph, let each op pre-compute its kernel
 * parameters, and lay every intermediate value out in one arena by
 * liveness. Graph outputs are not in the arena: run() binds them to the
 * caller's buffers so the last node writes straight into place. A view
 * node's output borrows its input's bytes; reads of the view count as
 * reads of the operand that owns them (its root). */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

/* The graph view has checked rank, dims and dtype already. */
static void describe(const berth_operand *o, cpu_opnd *d) {
    int ok;
    d->kind = o->kind;
    d->dtype = o->dtype;
    d->rank = o->rank;
    memcpy(d->dims, o->dims, sizeof d->dims);
    d->numel = bk_numel(o);
    d->bytes = bk_dtype_bytes(o->dtype, d->numel, &ok);
}

static size_t align_up(size_t x) { return (x + CPU_ALIGN - 1) & ~(size_t)(CPU_ALIGN - 1); }

/* Binds WEIGHT operands once the nodes are prepared: the weights some
 * node reads as uploaded (a node input not read only through its packed
 * copy, an operand option, a graph output) are held for the plan's life;
 * the others may be held only packed. */
static berth_status bind_weights(berth_plan *p, berth_weights *w, const berth_graph_desc *g, berth_error *err) {
    if (!w) return BERTH_OK;
    uint8_t *raw = calloc(w->n + 1, 1);
    p->raw_ids = calloc(w->n + 1, sizeof *p->raw_ids);
    if (!raw || !p->raw_ids) {
        free(raw);
        bk_errf(err, "cpu: out of memory binding weights");
        return BERTH_ERR_NOMEM;
    }
#define MARK(idx) do { \
        if (g->operands[idx].kind == BERTH_OPERAND_WEIGHT) raw[g->operands[idx].weight] = 1; \
    } while (0)
    for (uint32_t i = 0; i < g->n_outputs; i++) MARK(g->outputs[i]);
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        const berth_node *nd = &g->nodes[k];
        for (uint32_t j = 0; j < nd->n_inputs; j++)
            if (j >= 32 || !(p->nodes[k].packed_in & (1u << j))) MARK(nd->inputs[j]);
        for (uint32_t a = 0; a < nd->n_attrs; a++) {
            if (nd->attrs[a].type == BERTH_ATTR_OPERAND) MARK(nd->attrs[a].i);
            if (nd->attrs[a].type == BERTH_ATTR_OPERANDS)
                for (size_t j = 0; j < nd->attrs[a].count; j++) MARK(nd->attrs[a].ints[j]);
        }
    }
#undef MARK
    uint32_t n = 0;
    for (uint32_t id = 0; id < w->n; id++)
        if (raw[id]) p->raw_ids[n++] = id;
    free(raw);
    berth_status st = cpu_weights_hold(w, p->raw_ids, n, err);
    if (st) return st;
    p->n_raw = n;
    for (uint32_t i = 0; i < g->n_operands; i++)
        if (g->operands[i].kind == BERTH_OPERAND_WEIGHT) p->ops[i].ptr = w->t[g->operands[i].weight].data;
    cpu_weights_trim(w);
    return BERTH_OK;
}

/* Copies CONSTANT operands into one block. */
static berth_status bind_data(berth_plan *p, berth_weights *w, const berth_graph_desc *g, berth_error *err) {
    berth_status st = bk_bind_check(w ? &w->up : NULL, g, "cpu", err);
    if (st) return st;
    size_t total = 0;
    for (uint32_t i = 0; i < g->n_operands; i++)
        if (g->operands[i].kind == BERTH_OPERAND_CONSTANT) total += align_up(p->ops[i].bytes);
    if (total == 0) return BERTH_OK;
    void *block = NULL;
    if (posix_memalign(&block, CPU_ALIGN, total)) {
        bk_errf(err, "cpu: out of memory for %zu bytes of constants", total);
        return BERTH_ERR_NOMEM;
    }
    p->consts = block;
    p->packed_bytes += total;
    p->const_bytes += total;
    size_t at = 0;
    for (uint32_t i = 0; i < g->n_operands; i++) {
        if (g->operands[i].kind != BERTH_OPERAND_CONSTANT) continue;
        p->ops[i].ptr = (uint8_t *)block + at;
        if (p->ops[i].bytes) memcpy(p->ops[i].ptr, g->operands[i].data, p->ops[i].bytes);
        if (g->operands[i].dtype == BERTH_DTYPE_F32) cpu_flush_subnormals(p->ops[i].ptr, p->ops[i].bytes / sizeof(float));
        at += align_up(p->ops[i].bytes);
    }
    return BERTH_OK;
}

/* Per-operand facts the planner gathers. */
typedef struct live {
    int64_t *def;    /* producing node; -1 not produced by a node; -2 VALUE not yet produced */
    int64_t *last;   /* last node that reads it (or a view of it) */
    uint32_t *root;  /* the operand whose bytes it uses (itself unless a view) */
    uint8_t *is_out; /* a graph output */
} live;

typedef struct use_ctx {
    live *lv;
    int64_t node;
} use_ctx;

static void mark_use(void *ctx, uint32_t o) {
    use_ctx *u = ctx;
    uint32_t r = u->lv->root[o];
    if (u->lv->last[r] < u->node) u->lv->last[r] = u->node;
}

static berth_status layout(berth_plan *p, const berth_graph_desc *g, const live *lv, berth_error *err) {
    bk_span *b = calloc((size_t)g->n_operands + g->n_nodes + 1, sizeof *b);
    if (!b) {
        bk_errf(err, "cpu: out of memory laying out the arena");
        return BERTH_ERR_NOMEM;
    }
    /* ids below n_operands are operands, the rest a node's scratch */
    size_t n = 0;
    for (uint32_t i = 0; i < g->n_operands; i++) {
        if (lv->def[i] < 0 || lv->is_out[i] || lv->root[i] != i) continue;
        b[n++] = (bk_span){.size = p->ops[i].bytes, .first = lv->def[i], .last = lv->last[i], .id = i};
    }
    for (uint32_t k = 0; k < p->n_nodes; k++)
        if (p->nodes[k].scratch_bytes)
            b[n++] = (bk_span){.size = p->nodes[k].scratch_bytes, .first = k, .last = k, .id = g->n_operands + k};
    for (uint32_t k = 0; k < p->n_nodes; k++)
        for (size_t i = 0; p->nodes[k].scratch_of && i < n; i++)
            if (b[i].id == g->n_operands + p->nodes[k].scratch_of - 1) b[i].last = k;
    size_t values = bk_place_below(b, n, CPU_ALIGN, g->n_operands);
    size_t top = bk_place(b, n, CPU_ALIGN);
    p->scratch_add = top - values;
    void *arena = NULL;
    if (posix_memalign(&arena, CPU_ALIGN, top ? top : CPU_ALIGN)) {
        free(b);
        bk_errf(err, "cpu: out of memory for a %zu-byte arena", top);
        return BERTH_ERR_NOMEM;
    }
    p->arena = arena;
    p->arena_bytes = top;
    for (size_t i = 0; i < n; i++) {
        if (b[i].id < g->n_operands)
            p->ops[b[i].id].ptr = p->arena + b[i].off;
        else
            p->nodes[b[i].id - g->n_operands].scratch_off = b[i].off;
    }
    for (uint32_t k = 0; k < p->n_nodes; k++)
        if (p->nodes[k].scratch_of) p->nodes[k].scratch_off = p->nodes[p->nodes[k].scratch_of - 1].scratch_off;
    free(b);
    return BERTH_OK;
}

static berth_status plan_nodes(berth_plan *p, const berth_graph_desc *g, live *lv, berth_error *err) {
    int64_t *def = lv->def, *last = lv->last;
    use_ctx u = {.lv = lv};
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        const berth_node *n = &g->nodes[k];
        u.node = k;
        bk_node_reads(n, mark_use, &u);
        for (uint32_t j = 0; j < n->n_outputs; j++) {
            def[n->outputs[j]] = k;
            last[n->outputs[j]] = k;
        }
        cpu_node *cn = &p->nodes[k];
        cpu_prep c = {.bk = {.g = g, .node = n, .err = err}, .plan = p, .cn = cn};
        berth_op_id id;
        berth_status st = bk_node_op(&cpu_op_set, &c.bk, &id);
        if (st) return st;
        cn->n_in = n->n_inputs;
        cn->n_out = n->n_outputs;
        cn->in = malloc(sizeof(uint32_t) * (n->n_inputs + n->n_outputs + 1));
        if (!cn->in) return bk_fail(&c.bk, "out of memory planning the node");
        cn->out = cn->in + n->n_inputs;
        memcpy(cn->in, n->inputs, sizeof(uint32_t) * n->n_inputs);
        memcpy(cn->out, n->outputs, sizeof(uint32_t) * n->n_outputs);
        p->packed_bytes += sizeof(uint32_t) * (n->n_inputs + n->n_outputs);
        st = cpu_op_at(id)->prep(&c);
        if (st) return st;
        if (!cn->exec) {
            bk_fail(&c.bk, "no kernel chosen");
            return BERTH_ERR_INTERNAL;
        }
        p->packed_bytes += cn->params_bytes;
        p->const_bytes += cn->params_bytes;
        cn->empty = 1;
        for (uint32_t j = 0; j < n->n_outputs; j++) cn->empty &= p->ops[n->outputs[j]].numel == 0;
        uint32_t o0 = n->outputs[0];
        if (cn->is_view && !lv->is_out[o0]) {
            lv->root[o0] = lv->root[n->inputs[0]];
            p->alias[2 * p->n_alias] = o0;
            p->alias[2 * p->n_alias + 1] = n->inputs[0];
            p->n_alias++;
        }
    }
    return BERTH_OK;
}

/* The plan of g; with prepare_only, stops once the nodes have packed the
 * weights they read (no outputs bound, no arena). */
static berth_status plan_build(berth_device *dev, berth_weights *w, const berth_graph_desc *g, int prepare_only,
                               berth_plan **out, berth_error *err) {
    berth_status st = bk_graph_check_order(g, err);
    if (st) return st;
    berth_plan *p = calloc(1, sizeof *p);
    int64_t *def = calloc((size_t)g->n_operands * 2 + 1, sizeof *def);
    uint32_t *root = calloc((size_t)g->n_operands + 1, sizeof *root);
    uint8_t *is_out = calloc((size_t)g->n_operands + 1, 1);
    st = BERTH_ERR_NOMEM;
    if (!p || !def || !root || !is_out) {
        bk_errf(err, "cpu: out of memory creating a plan");
        free(p), free(def), free(root), free(is_out);
        return BERTH_ERR_NOMEM;
    }
    int64_t *last = def + g->n_operands;
    live lv = {.def = def, .last = last, .root = root, .is_out = is_out};
    p->dev = dev;
    p->w = w;
    p->tensor_size = g->tensor_size;
    p->n_ops = g->n_operands;
    p->n_nodes = g->n_nodes;
    p->n_inputs = g->n_inputs;
    p->n_outputs = g->n_outputs;
    p->ops = calloc(g->n_operands + 1u, sizeof *p->ops);
    p->nodes = calloc(g->n_nodes + 1u, sizeof *p->nodes);
    p->inputs = calloc((size_t)g->n_inputs + g->n_outputs + 1, sizeof *p->inputs);
    p->out_direct = calloc(g->n_outputs + 1u, 1);
    p->ns = calloc(g->n_nodes + 1u, sizeof *p->ns);
    p->alias = calloc(2 * (size_t)g->n_nodes + 1, sizeof *p->alias);
    if (!p->ops || !p->nodes || !p->inputs || !p->out_direct || !p->ns || !p->alias) {
        bk_errf(err, "cpu: out of memory creating a plan");
        goto fail;
    }
    p->outputs = p->inputs + g->n_inputs;
    for (uint32_t i = 0; i < g->n_operands; i++) {
        describe(&g->operands[i], &p->ops[i]);
        def[i] = g->operands[i].kind == BERTH_OPERAND_VALUE ? -2 : -1;
        last[i] = -1;
        root[i] = i;
    }
    for (uint32_t i = 0; i < g->n_outputs; i++) is_out[g->outputs[i]] = 1;
    memcpy(p->inputs, g->inputs, sizeof(uint32_t) * g->n_inputs);
    st = bind_data(p, w, g, err);
    if (st) goto fail;
    st = plan_nodes(p, g, &lv, err);
    if (st == BERTH_OK) st = bind_weights(p, w, g, err);
    if (st) goto fail;
    if (prepare_only) goto done;
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        uint32_t o = g->outputs[i];
        if (o >= g->n_operands || def[o] == -2) {
            bk_errf(err, "cpu: graph output %u ('%s') is not produced by any node", i,
                     o < g->n_operands && g->operands[o].name ? g->operands[o].name : "?");
            st = BERTH_ERR_INVALID;
            goto fail;
        }
        p->outputs[i] = o;
        int first = g->operands[o].kind == BERTH_OPERAND_VALUE;
        for (uint32_t j = 0; j < i && first; j++)
            if (g->outputs[j] == o) first = 0;
        p->out_direct[i] = (uint8_t)first;
    }
    st = layout(p, g, &lv, err);
    if (st) goto fail;
    p->packed_bytes += sizeof *p->ops * g->n_operands + sizeof *p->nodes * g->n_nodes;
done:
    free(def), free(root), free(is_out);
    *out = p;
    return BERTH_OK;
fail:
    free(def), free(root), free(is_out);
    cpu_plan_free(p);
    return st;
}

berth_status cpu_plan_graph(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                            berth_error *err) {
    return plan_build(dev, w, g, 0, out, err);
}

/* Packing is what the op files do at plan time, so preparing is planning
 * the nodes and keeping only what they packed: the plan is freed, and
 * with it every hold on an uploaded form that only a packed copy is
 * read through. */
berth_status cpu_prepare_graph(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                               berth_error *err) {
    berth_plan *p = NULL;
    berth_status st = plan_build(dev, w, g, 1, &p, err);
    cpu_plan_free(p);
    *out = NULL;
    return st;
}

void cpu_plan_free(berth_plan *p) {
    if (!p) return;
    if (p->w && p->n_raw) {
        cpu_weights_release(p->w, p->raw_ids, p->n_raw);
        cpu_weights_trim(p->w);
    }
    free(p->raw_ids);
    for (uint32_t k = 0; p->nodes && k < p->n_nodes; k++) {
        free(p->nodes[k].params);
        free(p->nodes[k].in);
    }
    free(p->nodes);
    free(p->ops);
    free(p->inputs);
    free(p->out_direct);
    free(p->ns);
    free(p->alias);
    free(p->arena);
    free(p->consts);
    free(p);
}

uint64_t cpu_plan_bytes(const berth_plan *p) { return p ? (uint64_t)p->arena_bytes + p->packed_bytes : 0; }

/* No io: run() binds the caller's inputs and outputs in place. */
berth_status cpu_plan_memory(const berth_plan *p, berth_plan_memory *m, berth_error *err) {
    bk_plan_memory_fill(m, p->arena_bytes - p->scratch_add, p->scratch_add, 0, p->const_bytes,
                        p->packed_bytes - p->const_bytes, 0);
    (void)err;
    return BERTH_OK;
}
