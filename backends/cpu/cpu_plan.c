/* plan(): validate a concrete graph, let each op pre-compute its kernel
 * parameters, and lay every intermediate value out in one arena by
 * liveness. Graph outputs are not in the arena: run() binds them to the
 * caller's buffers so the last node writes straight into place. A view
 * node's output borrows its input's bytes; reads of the view count as
 * reads of the operand that owns them (its root). */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

static berth_status operand_bytes(const berth_operand *o, uint32_t idx, cpu_opnd *d, berth_error *err) {
    const char *name = o->name ? o->name : "?";
    if (o->rank > BERTH_MAX_RANK) {
        cpu_errf(err, "cpu: operand %u '%s': rank %u exceeds %d", idx, name, o->rank, BERTH_MAX_RANK);
        return BERTH_ERR_INVALID;
    }
    size_t n = 1;
    for (uint32_t i = 0; i < o->rank; i++) {
        if (o->dims[i] < 0) {
            cpu_errf(err, "cpu: operand %u '%s': dim %u is %lld, expected >= 0", idx, name, i,
                     (long long)o->dims[i]);
            return BERTH_ERR_INVALID;
        }
        if (o->dims[i] && n > SIZE_MAX / 64 / (size_t)o->dims[i]) {
            cpu_errf(err, "cpu: operand %u '%s': element count overflows", idx, name);
            return BERTH_ERR_INVALID;
        }
        n *= (size_t)o->dims[i];
    }
    size_t es = cpu_dtype_size(o->dtype);
    d->kind = o->kind;
    d->dtype = o->dtype;
    d->rank = o->rank;
    memcpy(d->dims, o->dims, sizeof d->dims);
    d->numel = n;
    if (es)
        d->bytes = n * es;
    else if (o->dtype == BERTH_DTYPE_I4 || o->dtype == BERTH_DTYPE_U4)
        d->bytes = (n + 1) / 2;
    else {
        cpu_errf(err, "cpu: operand %u '%s': dtype %d is not valid", idx, name, (int)o->dtype);
        return BERTH_ERR_INVALID;
    }
    return BERTH_OK;
}

static size_t align_up(size_t x) { return (x + CPU_ALIGN - 1) & ~(size_t)(CPU_ALIGN - 1); }

/* Binds WEIGHT and CONSTANT operands; constants are copied into one block. */
static berth_status bind_data(berth_plan *p, berth_weights *w, const berth_graph_desc *g, berth_error *err) {
    size_t total = 0;
    for (uint32_t i = 0; i < g->n_operands; i++) {
        const berth_operand *o = &g->operands[i];
        cpu_opnd *d = &p->ops[i];
        if (o->kind == BERTH_OPERAND_CONSTANT) {
            if (o->bytes != d->bytes || (!o->data && o->bytes)) {
                cpu_errf(err, "cpu: constant '%s': expected %zu bytes of data, found %zu",
                         o->name ? o->name : "?", d->bytes, o->data ? o->bytes : 0);
                return BERTH_ERR_INVALID;
            }
            total += align_up(d->bytes);
        } else if (o->kind == BERTH_OPERAND_WEIGHT) {
            if (!w || o->weight >= w->n || !w->t[o->weight].present) {
                cpu_errf(err, "cpu: weight operand '%s': id %u was not uploaded (%u weights)",
                         o->name ? o->name : "?", o->weight, w ? w->n : 0u);
                return BERTH_ERR_INVALID;
            }
            if (w->t[o->weight].bytes != d->bytes) {
                cpu_errf(err, "cpu: weight operand '%s': shape needs %zu bytes, uploaded tensor %u has %zu",
                         o->name ? o->name : "?", d->bytes, o->weight, w->t[o->weight].bytes);
                return BERTH_ERR_INVALID;
            }
            d->ptr = w->t[o->weight].data;
        } else if (o->kind != BERTH_OPERAND_INPUT && o->kind != BERTH_OPERAND_VALUE) {
            cpu_errf(err, "cpu: operand %u '%s': unknown kind %d", i, o->name ? o->name : "?", (int)o->kind);
            return BERTH_ERR_INVALID;
        }
    }
    if (total == 0) return BERTH_OK;
    void *block = NULL;
    if (posix_memalign(&block, CPU_ALIGN, total)) {
        cpu_errf(err, "cpu: out of memory for %zu bytes of constants", total);
        return BERTH_ERR_NOMEM;
    }
    p->consts = block;
    p->packed_bytes += total;
    size_t at = 0;
    for (uint32_t i = 0; i < g->n_operands; i++) {
        if (g->operands[i].kind != BERTH_OPERAND_CONSTANT) continue;
        p->ops[i].ptr = (uint8_t *)block + at;
        if (p->ops[i].bytes) memcpy(p->ops[i].ptr, g->operands[i].data, p->ops[i].bytes);
        at += align_up(p->ops[i].bytes);
    }
    return BERTH_OK;
}

/* Every operand a node reads: positional inputs and operand attributes. */
typedef void (*use_fn)(void *ctx, uint32_t operand);
static berth_status node_uses(const berth_graph_desc *g, const berth_node *n, use_fn fn, void *ctx,
                              berth_error *err) {
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        if (n->inputs[k] >= g->n_operands) goto range;
        fn(ctx, n->inputs[k]);
    }
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        const berth_attr *at = &n->attrs[a];
        if (at->type == BERTH_ATTR_OPERAND) {
            if (at->i < 0 || at->i >= (int64_t)g->n_operands) goto range;
            fn(ctx, (uint32_t)at->i);
        } else if (at->type == BERTH_ATTR_OPERANDS) {
            for (size_t k = 0; k < at->count; k++) {
                if (at->ints[k] < 0 || at->ints[k] >= (int64_t)g->n_operands) goto range;
                fn(ctx, (uint32_t)at->ints[k]);
            }
        }
    }
    return BERTH_OK;
range:
    cpu_errf(err, "node '%s' (%s): an operand index is out of range (%u operands)", n->name ? n->name : "?",
             n->op ? n->op : "?", g->n_operands);
    return BERTH_ERR_INVALID;
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
    uint32_t bad;
} use_ctx;

static void mark_use(void *ctx, uint32_t o) {
    use_ctx *u = ctx;
    uint32_t r = u->lv->root[o];
    if (u->lv->last[r] < u->node) u->lv->last[r] = u->node;
    if (u->lv->def[o] == -2 && u->bad == CPU_NONE) u->bad = o; /* VALUE not yet produced */
}

typedef struct buf {
    size_t size, off;
    int64_t start, end;
    uint32_t operand; /* CPU_NONE for a node's scratch */
    uint32_t node;
} buf;

static int by_size_desc(const void *a, const void *b) {
    const buf *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Greedy by size: each buffer goes at the lowest aligned offset that
 * clears every placed buffer whose lifetime overlaps its own. */
static size_t place(buf *b, size_t n) {
    qsort(b, n, sizeof *b, by_size_desc);
    size_t top = 0;
    for (size_t i = 0; i < n; i++) {
        size_t off = 0;
        for (;;) {
            int moved = 0;
            for (size_t j = 0; j < i; j++) {
                if (b[j].end < b[i].start || b[i].end < b[j].start) continue;
                if (off < b[j].off + b[j].size && b[j].off < off + b[i].size) {
                    off = align_up(b[j].off + b[j].size);
                    moved = 1;
                }
            }
            if (!moved) break;
        }
        b[i].off = off;
        if (off + b[i].size > top) top = off + b[i].size;
    }
    return top;
}

static berth_status layout(berth_plan *p, const berth_graph_desc *g, const live *lv, berth_error *err) {
    buf *b = calloc((size_t)g->n_operands + g->n_nodes + 1, sizeof *b);
    if (!b) {
        cpu_errf(err, "cpu: out of memory laying out the arena");
        return BERTH_ERR_NOMEM;
    }
    size_t n = 0;
    for (uint32_t i = 0; i < g->n_operands; i++) {
        if (lv->def[i] < 0 || lv->is_out[i] || lv->root[i] != i) continue;
        b[n++] = (buf){.size = align_up(p->ops[i].bytes), .start = lv->def[i], .end = lv->last[i], .operand = i};
    }
    for (uint32_t k = 0; k < p->n_nodes; k++)
        if (p->nodes[k].scratch_bytes)
            b[n++] = (buf){.size = align_up(p->nodes[k].scratch_bytes), .start = k, .end = k,
                           .operand = CPU_NONE, .node = k};
    size_t top = place(b, n);
    void *arena = NULL;
    if (posix_memalign(&arena, CPU_ALIGN, top ? top : CPU_ALIGN)) {
        free(b);
        cpu_errf(err, "cpu: out of memory for a %zu-byte arena", top);
        return BERTH_ERR_NOMEM;
    }
    p->arena = arena;
    p->arena_bytes = top;
    for (size_t i = 0; i < n; i++) {
        if (b[i].operand != CPU_NONE)
            p->ops[b[i].operand].ptr = p->arena + b[i].off;
        else
            p->nodes[b[i].node].scratch_off = b[i].off;
    }
    free(b);
    return BERTH_OK;
}

static berth_status plan_nodes(berth_plan *p, const berth_graph_desc *g, live *lv, berth_error *err) {
    int64_t *def = lv->def, *last = lv->last;
    use_ctx u = {.lv = lv};
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        const berth_node *n = &g->nodes[k];
        const char *nm = n->name ? n->name : "?";
        const char *op = n->op ? n->op : "(null)";
        if ((n->n_inputs && !n->inputs) || (n->n_outputs && !n->outputs) || (n->n_attrs && !n->attrs)) {
            cpu_errf(err, "node '%s' (%s): operand or attribute list missing", nm, op);
            return BERTH_ERR_INVALID;
        }
        u.node = k;
        u.bad = CPU_NONE;
        berth_status st = node_uses(g, n, mark_use, &u, err);
        if (st) return st;
        if (u.bad != CPU_NONE) {
            cpu_errf(err, "node '%s' (%s): reads '%s' before any node produces it", nm, op,
                     g->operands[u.bad].name ? g->operands[u.bad].name : "?");
            return BERTH_ERR_INVALID;
        }
        for (uint32_t j = 0; j < n->n_outputs; j++) {
            uint32_t o = n->outputs[j];
            if (o >= g->n_operands || g->operands[o].kind != BERTH_OPERAND_VALUE || def[o] != -2) {
                cpu_errf(err, "node '%s' (%s): output %u must be a value operand produced once", nm, op, j);
                return BERTH_ERR_INVALID;
            }
            def[o] = k;
            last[o] = k;
        }
        const cpu_op_info *info = n->op ? cpu_find_op(n->op) : NULL;
        if (!info) {
            cpu_errf(err, "node '%s': op '%s' is not supported by the cpu backend", nm, op);
            return BERTH_ERR_UNSUPPORTED;
        }
        cpu_node *cn = &p->nodes[k];
        cn->n_in = n->n_inputs;
        cn->n_out = n->n_outputs;
        cn->in = malloc(sizeof(uint32_t) * (n->n_inputs + n->n_outputs + 1));
        if (!cn->in) {
            cpu_errf(err, "cpu: out of memory planning node '%s'", nm);
            return BERTH_ERR_NOMEM;
        }
        cn->out = cn->in + n->n_inputs;
        memcpy(cn->in, n->inputs, sizeof(uint32_t) * n->n_inputs);
        memcpy(cn->out, n->outputs, sizeof(uint32_t) * n->n_outputs);
        p->packed_bytes += sizeof(uint32_t) * (n->n_inputs + n->n_outputs);
        cpu_prep c = {.g = g, .node = n, .plan = p, .cn = cn, .err = err};
        st = info->prep(&c);
        if (st) return st;
        if (!cn->exec) {
            cpu_errf(err, "node '%s' (%s): no kernel chosen", nm, op);
            return BERTH_ERR_INTERNAL;
        }
        p->packed_bytes += cn->params_bytes;
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

berth_status cpu_plan_create(berth_device *dev, berth_weights *w, const berth_graph_desc *g,
                             berth_plan **out, berth_error *err) {
    *out = NULL;
    if (!g || g->struct_size < offsetof(berth_graph_desc, outputs) + sizeof(void *)) {
        cpu_errf(err, "cpu: plan: graph description missing or smaller than ABI v1's");
        return BERTH_ERR_INVALID;
    }
    if ((g->n_operands && !g->operands) || (g->n_nodes && !g->nodes) || (g->n_inputs && !g->inputs) ||
        (g->n_outputs && !g->outputs)) {
        cpu_errf(err, "cpu: plan: graph description has a count without its array");
        return BERTH_ERR_INVALID;
    }
    berth_plan *p = calloc(1, sizeof *p);
    int64_t *def = calloc((size_t)g->n_operands * 2 + 1, sizeof *def);
    uint32_t *root = calloc((size_t)g->n_operands + 1, sizeof *root);
    uint8_t *is_out = calloc((size_t)g->n_operands + 1, 1);
    berth_status st = BERTH_ERR_NOMEM;
    if (!p || !def || !root || !is_out) {
        cpu_errf(err, "cpu: out of memory creating a plan");
        free(p), free(def), free(root), free(is_out);
        return BERTH_ERR_NOMEM;
    }
    int64_t *last = def + g->n_operands;
    live lv = {.def = def, .last = last, .root = root, .is_out = is_out};
    p->dev = dev;
    p->w = w;
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
        cpu_errf(err, "cpu: out of memory creating a plan");
        goto fail;
    }
    p->outputs = p->inputs + g->n_inputs;
    for (uint32_t i = 0; i < g->n_operands; i++) {
        st = operand_bytes(&g->operands[i], i, &p->ops[i], err);
        if (st) goto fail;
        def[i] = g->operands[i].kind == BERTH_OPERAND_VALUE ? -2 : -1;
        last[i] = -1;
        root[i] = i;
    }
    for (uint32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] < g->n_operands) is_out[g->outputs[i]] = 1;
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        if (g->inputs[i] >= g->n_operands || g->operands[g->inputs[i]].kind != BERTH_OPERAND_INPUT) {
            cpu_errf(err, "cpu: graph input %u must name an input operand", i);
            st = BERTH_ERR_INVALID;
            goto fail;
        }
        p->inputs[i] = g->inputs[i];
    }
    st = bind_data(p, w, g, err);
    if (st) goto fail;
    st = plan_nodes(p, g, &lv, err);
    if (st) goto fail;
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        uint32_t o = g->outputs[i];
        if (o >= g->n_operands || def[o] == -2) {
            cpu_errf(err, "cpu: graph output %u ('%s') is not produced by any node", i,
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
    free(def), free(root), free(is_out);
    *out = p;
    return BERTH_OK;
fail:
    free(def), free(root), free(is_out);
    cpu_plan_free(p);
    return st;
}

void cpu_plan_free(berth_plan *p) {
    if (!p) return;
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
