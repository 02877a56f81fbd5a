/* Binding a symbolic graph to one bucket: bind dims, normalize options,
 * infer shapes node by node (folding what the host can compute), drop
 * what no output needs, and lay out the berth_graph_desc. */
#include "specialize.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "dtype.h"
#include "infer.h"

typedef struct spec_build {
    sp_ctx c;
    berth_spec *s;
    sp_node *nodes;
    const int64_t *syms;
    const uint32_t *weight_ids;
    char *live;
    /* Which dims follow which dyn dim (section 7): alt[k][v] is value v
     * as it would be with dyn dim k one smaller, or NULL where it would
     * be the same; alt[k] itself is NULL when dim k cannot move alone. */
    sp_val ***alt;
    /* For pad_reach.c: moved[i] bit k, node i's offsets follow dim k;
     * tied_at[k], the node whose rule would not let dim k move alone. */
    uint64_t *moved;
    int32_t *tied_at;
} spec_build;

static const char *gpath(const berth_graph *g) { return g->path ? g->path : "<graph>"; }

static int fail_at(spec_build *b, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(spec_build *b, uint32_t line, const char *fmt, ...) {
    berth_error *err = b->c.err;
    int k = line ? snprintf(err->msg, sizeof err->msg, "%s:%u: ", gpath(b->c.g), line)
                 : snprintf(err->msg, sizeof err->msg, "%s: ", gpath(b->c.g));
    if (k < 0) k = 0;
    va_list ap;
    va_start(ap, fmt);
    if ((size_t)k < sizeof err->msg) vsnprintf(err->msg + k, sizeof err->msg - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- 1. binding --------------------------------------------------------- */

static int bind_syms(spec_build *b) {
    const berth_graph *g = b->c.g;
    for (uint32_t i = 0; i < g->n_syms; i++) {
        int64_t v = b->syms ? b->syms[i] : 0;
        if (v < 1 || v > g->syms[i].max)
            return fail_at(b, 0, "dim '%s' expected 1..%lld, found %lld", g->syms[i].name,
                           (long long)g->syms[i].max, (long long)v);
    }
    return 0;
}

/* Inputs and consts: concrete dims; inline consts get host data. */
static int bind_leaf(spec_build *b, uint32_t vi) {
    const bg_value *gv = &b->c.g->values[vi];
    sp_val *v = &b->c.vals[vi];
    if (gv->rank > BERTH_MAX_RANK)
        return fail_at(b, gv->line, "'%s' expected rank <= %d, found %u", gv->name, BERTH_MAX_RANK, gv->rank);
    v->dtype = gv->dtype;
    v->rank = gv->rank;
    for (uint32_t d = 0; d < gv->rank; d++) {
        int32_t sym = gv->dims[d].sym;
        if (sym >= (int32_t)b->c.g->n_syms)
            return fail_at(b, gv->line, "'%s' dim %u names an unknown dyn dim", gv->name, d);
        v->dims[d] = sym >= 0 ? b->syms[sym] : gv->dims[d].value;
        if (v->dims[d] < 0)
            return fail_at(b, gv->line, "'%s' dim %u expected >= 0, found %lld", gv->name, d,
                           (long long)v->dims[d]);
    }
    int64_t n = sp_numel(v->rank, v->dims);
    int ok = n >= 0;
    /* 64-bit: an input's bytes need not fit this machine's size_t (a
     * 32-bit one). A bucket whose input cannot be held is refused later
     * by the memory limit, which names the input and its size; only a
     * const's bytes are held here. */
    uint64_t bytes64 = ok ? berth_dtype_bytes64(v->dtype, (uint64_t)n, &ok) : 0;
    if (!ok) return fail_at(b, gv->line, "'%s' has too many elements", gv->name);
    v->ready = 1;
    if (gv->kind != BG_CONST) return 0;
    if (bytes64 > (uint64_t)SIZE_MAX)
        return fail_at(b, gv->line, "const '%s' takes %llu bytes, more than this machine can address", gv->name,
                       (unsigned long long)bytes64);
    size_t bytes = (size_t)bytes64; /* fits: checked just above */
    if (gv->init == BG_INIT_BYTES) {
        if (gv->n_bytes != bytes) {
            char sb[160];
            return fail_at(b, gv->line, "const '%s' expected %zu bytes for %s, found %zu", gv->name,
                           bytes, sp_shape_str(sb, sizeof sb, v), gv->n_bytes);
        }
        v->data = berth_arena_alloc(b->c.arena, bytes ? bytes : 1);
        if (!v->data) return fail_at(b, gv->line, "out of memory");
        if (bytes) memcpy(v->data, gv->bytes, bytes);
    } else if (gv->init == BG_INIT_SCALAR && n <= SP_HOST_CAP) {
        v->data = berth_arena_alloc(b->c.arena, bytes ? bytes : 1);
        if (!v->data) return fail_at(b, gv->line, "out of memory");
        sp_fill(v->data, v->dtype, (size_t)n, gv->scalar);
    }
    return 0;
}

/* ---- 3. options to berth_attr -------------------------------------------- */

/* Op id's positional non-operand parameters (its BERTH_PARAM rows), in
 * order, into out[0..cap); returns how many. */
static uint32_t op_params(berth_op_id id, const char **out, uint32_t cap) {
    uint32_t n, k = 0;
    const berth_op_param_desc *p = berth_op_params(&n);
    for (uint32_t i = 0; i < n; i++)
        if (p[i].op == id && k < cap) out[k++] = p[i].key;
    return k;
}

static const char *type_text(berth_attr_type t) {
    switch (t) {
    case BERTH_ATTR_NULL: return "null";
    case BERTH_ATTR_INT: return "an integer";
    case BERTH_ATTR_FLOAT: return "a number";
    case BERTH_ATTR_BOOL: return "a boolean";
    case BERTH_ATTR_STRING: return "a string";
    case BERTH_ATTR_INTS: return "an integer array";
    case BERTH_ATTR_FLOATS: return "a number array";
    case BERTH_ATTR_OPERAND: return "an operand";
    case BERTH_ATTR_OPERANDS: return "an operand array";
    }
    return "?";
}

/* Whether a value of type `got` is accepted where the table lists `want`:
 * null is absent; a lone integer reads as a one-item integer list, an
 * integer as a number, an integer list as a number list. */
static int type_fits(berth_attr_type want, berth_attr_type got) {
    if (got == want || got == BERTH_ATTR_NULL) return 1;
    switch (want) {
    case BERTH_ATTR_FLOAT: return got == BERTH_ATTR_INT;
    case BERTH_ATTR_INTS: return got == BERTH_ATTR_INT;
    case BERTH_ATTR_FLOATS: return got == BERTH_ATTR_INTS;
    default: return 0;
    }
}

/* Refuses a key the op table does not list for the node's op, naming the
 * ones it does. */
static int unknown_option(spec_build *b, berth_op_id id, const char *key) {
    char list[640];
    size_t k = 0;
    uint32_t n, seen = 0;
    const berth_op_attr_desc *a = berth_op_attrs(&n);
    list[0] = 0;
    for (uint32_t i = 0; i < n && k < sizeof list; i++) {
        if (a[i].op != id) continue;
        int w = snprintf(list + k, sizeof list - k, "%s%s", seen++ ? ", " : "", a[i].key);
        if (w > 0) k += (size_t)w;
    }
    const char *op = berth_op_table()[id].name;
    if (!seen) return sp_fail(&b->c, "unknown option '%s'; %s takes no options", key, op);
    return sp_fail(&b->c, "unknown option '%s'; %s takes: %s", key, op, list);
}

/* The option's type against the table's. */
static int check_type(spec_build *b, berth_op_id id, const berth_attr *at) {
    const berth_op_attr_desc *d = berth_op_attr(id, at->key);
    if (!d) return unknown_option(b, id, at->key);
    if (type_fits(d->type, at->type)) return 0;
    return sp_fail(&b->c, "option '%s' expected %s, found %s", at->key, type_text(d->type),
                   type_text(at->type));
}

static int convert_attr(spec_build *b, const bg_node *n, const bg_attr *in, const char *key,
                        berth_attr *out) {
    berth_arena *a = b->c.arena;
    out->key = berth_arena_strdup(a, key);
    if (!out->key) return fail_at(b, n->line, "out of memory");
    switch (in->kind) {
    case BG_ATTR_NULL: out->type = BERTH_ATTR_NULL; return 0;
    case BG_ATTR_NUMBER:
        out->type = in->is_int ? BERTH_ATTR_INT : BERTH_ATTR_FLOAT;
        out->i = in->i;
        out->f = in->num;
        return 0;
    case BG_ATTR_BOOL: out->type = BERTH_ATTR_BOOL; out->i = in->i != 0; return 0;
    case BG_ATTR_STRING:
        out->type = BERTH_ATTR_STRING;
        out->s = berth_arena_strdup(a, in->str ? in->str : "");
        return out->s ? 0 : fail_at(b, n->line, "out of memory");
    case BG_ATTR_IDENT:
        if (in->value < 0 || (uint32_t)in->value >= b->c.g->n_values || !b->c.vals[in->value].ready)
            return fail_at(b, n->line, "node '%s' (%s): option '%s' expected a value defined earlier, found '%s'",
                           b->c.g->values[n->outputs[0]].name, n->op, key, in->str ? in->str : "?");
        out->type = BERTH_ATTR_OPERAND;
        out->i = in->value;
        return 0;
    case BG_ATTR_ARRAY: {
        int all_int = 1, all_num = 1, all_ident = 1;
        for (uint32_t k = 0; k < in->count; k++) {
            all_int &= in->items[k].kind == BG_ATTR_NUMBER && in->items[k].is_int;
            all_num &= in->items[k].kind == BG_ATTR_NUMBER;
            all_ident &= in->items[k].kind == BG_ATTR_IDENT;
        }
        out->count = in->count;
        if (all_int || (all_ident && in->count)) {
            int64_t *v = berth_arena_array(a, in->count ? in->count : 1, sizeof(int64_t));
            if (!v) return fail_at(b, n->line, "out of memory");
            for (uint32_t k = 0; k < in->count; k++) v[k] = all_int ? in->items[k].i : in->items[k].value;
            out->type = all_int ? BERTH_ATTR_INTS : BERTH_ATTR_OPERANDS;
            out->ints = v;
            return 0;
        }
        if (all_num) {
            double *v = berth_arena_array(a, in->count, sizeof(double));
            if (!v) return fail_at(b, n->line, "out of memory");
            for (uint32_t k = 0; k < in->count; k++) v[k] = in->items[k].num;
            out->type = BERTH_ATTR_FLOATS;
            out->floats = v;
            return 0;
        }
        return fail_at(b, n->line, "node '%s' (%s): option '%s' expected an array of numbers or operands, found a mixed array",
                       b->c.g->values[n->outputs[0]].name, n->op, key);
    }
    case BG_ATTR_OBJECT:
    default:
        return fail_at(b, n->line, "node '%s' (%s): option '%s' expected a number, string, boolean, array or operand, found an unsupported object option",
                       b->c.g->values[n->outputs[0]].name, n->op, key);
    }
}

/* A host-known tensor passed where WebNN takes a list or a number
 * (ONNX-style reshape(x, shape)). */
static int tensor_to_attr(spec_build *b, sp_node *sn, int32_t vi, uint32_t pos, const char *key,
                          berth_attr *out) {
    const sp_val *v = &b->c.vals[vi];
    const char *vname = b->c.g->values[vi].name;
    char sb[160];
    b->c.n = sn;
    if (!v->data)
        return sp_fail(&b->c, "operand %u '%s' for '%s' expected a value known on the host (consts, input shapes), found one computed on the device",
                       pos, vname, key);
    if (!sp_is_int(v->dtype) || v->rank > 1 || (!strcmp(key, "axis") && sp_numel(v->rank, v->dims) != 1))
        return sp_fail(&b->c, "operand %u '%s' for '%s' expected %s, found %s", pos, vname, key,
                       strcmp(key, "axis") ? "a host-known integer tensor of rank <= 1" : "one integer",
                       sp_shape_str(sb, sizeof sb, v));
    size_t n = (size_t)sp_numel(v->rank, v->dims);
    out->key = key;
    if (!strcmp(key, "axis") || (v->rank == 0 && !strcmp(key, "splits"))) {
        out->type = BERTH_ATTR_INT;
        out->i = sp_load_i(v->data, v->dtype, 0);
        return 0;
    }
    int64_t *ints = berth_arena_array(b->c.arena, n ? n : 1, sizeof(int64_t));
    if (!ints) return sp_fail(&b->c, "out of memory");
    for (size_t k = 0; k < n; k++) ints[k] = sp_load_i(v->data, v->dtype, k);
    out->type = BERTH_ATTR_INTS;
    out->ints = ints;
    out->count = n;
    return 0;
}

/* Node ni's own record: its op, its name (its first output's), and the
 * values it reads and writes checked against the graph, so that a user
 * sees a bad index here rather than a crash in a later pass. */
static int bind_node(spec_build *b, uint32_t ni) {
    const bg_node *n = &b->c.g->nodes[ni];
    sp_node *sn = &b->nodes[ni];
    const berth_graph *g = b->c.g;
    sn->src = n;
    sn->op = n->op;
    if (n->n_outputs == 0 || !n->outputs) return fail_at(b, n->line, "node (%s) expected an output, found none", n->op);
    sn->name = g->values[n->outputs[0]].name;
    b->c.n = sn;
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] < 0 || (uint32_t)n->inputs[i] >= g->n_values || !b->c.vals[n->inputs[i]].ready)
            return sp_fail(&b->c, "operand %u expected a value defined earlier, found index %d", i, n->inputs[i]);
    for (uint32_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] < 0 || (uint32_t)n->outputs[i] >= g->n_values ||
            g->values[n->outputs[i]].kind != BG_NODE_OUTPUT || b->c.vals[n->outputs[i]].ready)
            return sp_fail(&b->c, "output %u expected a new value, found index %d", i, n->outputs[i]);
    return 0;
}

/* The node's written options, converted into sn->attrs: a literal at a
 * position ('@N') takes the name of the op's parameter there, then each
 * option must be one the op knows, given once, of the type it takes. */
static int named_options(spec_build *b, const bg_node *n, sp_node *sn, const char *const *params,
                         uint32_t n_params, uint32_t n_ops) {
    for (uint32_t i = 0; i < n->n_attrs; i++) {
        const bg_attr *a = &n->attrs[i];
        const char *key = a->key ? a->key : "?";
        if (key[0] == '@') {
            unsigned long pos = strtoul(key + 1, NULL, 10);
            const char *name = NULL;
            if (n_params && n_ops == UINT32_MAX) name = params[0];
            else if (n_params && pos >= n_ops && pos - n_ops < n_params) name = params[pos - n_ops];
            if (!name)
                return sp_fail(&b->c, "expected at most %u positional operands and named options, found a literal at position %lu",
                               n_params ? n_ops : n->n_inputs, pos);
            key = name;
        }
        if (!berth_op_attr(sn->id, key)) return unknown_option(b, sn->id, key);
        for (uint32_t j = 0; j < sn->n_attrs; j++)
            if (!strcmp(sn->attrs[j].key, key))
                return sp_fail(&b->c, "option '%s' expected once, found twice", key);
        if (convert_attr(b, n, a, key, &sn->attrs[sn->n_attrs])) return -1;
        if (check_type(b, sn->id, &sn->attrs[sn->n_attrs++])) return -1;
    }
    return 0;
}

/* The first position from pos on that no literal ('@N' option) holds,
 * up to n_pos: identifiers fill the positions literals leave. */
static uint32_t free_position(const bg_node *n, uint32_t pos, uint32_t n_pos) {
    while (pos < n_pos) {
        char lit[16];
        snprintf(lit, sizeof lit, "@%u", pos);
        int taken = 0;
        for (uint32_t j = 0; j < n->n_attrs && !taken; j++) taken = n->attrs[j].key && !strcmp(n->attrs[j].key, lit);
        if (!taken) break;
        pos++;
    }
    return pos;
}

/* The node's positional identifiers: those at operand parameters go to
 * ins (their count to *n_ins); those past them are host data, turned into
 * the options the op's later parameters name. */
static int positional_inputs(spec_build *b, const bg_node *n, sp_node *sn, const char *const *params,
                             uint32_t n_params, uint32_t n_ops, uint32_t n_pos, int32_t *ins, uint32_t *n_ins) {
    uint32_t k = 0, pos = 0;
    for (uint32_t i = 0; i < n->n_inputs; i++, pos++) {
        pos = free_position(n, pos, n_pos);
        if (n_ops == UINT32_MAX || pos < n_ops) {
            ins[k++] = n->inputs[i];
            continue;
        }
        if (pos - n_ops >= n_params)
            return sp_fail(&b->c, "expected %u operands, found %u", n_ops, n->n_inputs);
        const char *name = params[pos - n_ops];
        if (sp_attr(sn, name)) return sp_fail(&b->c, "option '%s' expected once, found twice", name);
        if (tensor_to_attr(b, sn, n->inputs[i], i, name, &sn->attrs[sn->n_attrs])) return -1;
        if (check_type(b, sn->id, &sn->attrs[sn->n_attrs++])) return -1;
    }
    *n_ins = k;
    return 0;
}

/* Node ni as the later passes take it: a known WebNN op, its operands,
 * and its options from both named options and positional literals or
 * host-known tensors; 0 or -1 with the error in c->err. */
static int normalize(spec_build *b, uint32_t ni) {
    const bg_node *n = &b->c.g->nodes[ni];
    sp_node *sn = &b->nodes[ni];
    if (bind_node(b, ni)) return -1;

    sn->id = berth_op_find(n->op);
    if (sn->id == BERTH_OP_UNKNOWN) return sp_fail(&b->c, "expected a known op, found '%s'", n->op);
    if (berth_op_table()[sn->id].kind != BERTH_OP_KIND_WEBNN)
        return sp_fail(&b->c, "'%s' is made by the engine's fusion passes, not written in a graph", n->op);
    const char *params[4];
    uint32_t n_params = op_params(sn->id, params, 4);
    /* leading operand parameters; UINT32_MAX: all (a list, as concat's,
     * or an op without positional parameters) */
    uint32_t n_ops = n_params ? berth_op_table()[sn->id].max_inputs : UINT32_MAX;

    /* Positions taken by literals; identifiers fill the rest in order. */
    uint32_t n_lit = 0;
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].key && n->attrs[i].key[0] == '@') n_lit++;
    uint32_t n_pos = n->n_inputs + n_lit;
    sn->attrs = berth_arena_array(b->c.arena, n->n_attrs + n->n_inputs + 1, sizeof(berth_attr));
    int32_t *ins = berth_arena_array(b->c.arena, n->n_inputs + 1, sizeof(int32_t));
    if (!sn->attrs || !ins) return sp_fail(&b->c, "out of memory");
    sn->inputs = ins;

    if (named_options(b, n, sn, params, n_params, n_ops)) return -1;
    /* Positional identifiers past the operand parameters are host data. */
    uint32_t k = 0;
    if (positional_inputs(b, n, sn, params, n_params, n_ops, n_pos, ins, &k)) return -1;
    sn->n_inputs = k;
    return 0;
}

/* ---- 2, 4, 5: the walk ------------------------------------------------------- */

/* The uploaded weight graph value v is, or is a view of: -1 if none. */
static int32_t weight_source(const spec_build *b, int32_t v) {
    for (;;) {
        const bg_value *gv = &b->c.g->values[v];
        if (gv->kind == BG_CONST && gv->init == BG_INIT_WEIGHTS) return v;
        if (gv->node < 0 || b->nodes[gv->node].folded != SP_WEIGHT_VIEW) return -1;
        v = b->nodes[gv->node].inputs[0];
    }
}

/* A reshape (squeeze, unsqueeze, identity) of an uploaded weight is that
 * weight under another shape: the same bytes, so its output becomes a
 * weight operand and the node leaves the desc. Backends then see the
 * weight itself where a model reshapes it for its consumer (an STFT's
 * unsqueezed filter), and can prepare it once. Not for a graph output,
 * which a run writes. */
static int weight_view(const spec_build *b, const sp_node *sn) {
    if (strcmp(sn->op, "reshape") && strcmp(sn->op, "squeeze") && strcmp(sn->op, "unsqueeze") &&
        strcmp(sn->op, "identity"))
        return 0;
    if (sn->n_inputs < 1 || sn->src->n_outputs != 1 || weight_source(b, sn->inputs[0]) < 0) return 0;
    const berth_graph *g = b->c.g;
    for (uint32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == sn->src->outputs[0]) return 0;
    return 1;
}

/* Node i's options, shape rule and host evaluation, on whatever its
 * inputs hold now; 0 or -1 with the error in c->err. */
static int infer_node(spec_build *b, uint32_t i) {
    if (normalize(b, i)) return -1;
    sp_node *sn = &b->nodes[i];
    b->c.n = sn;
    sp_infer_fn fn = sp_find_rule(sn->id);
    if (!fn) return sp_fail(&b->c, "expected an op with a shape rule, found '%s'", sn->op);
    if (sp_check_counts(&b->c, sn->id) || fn(&b->c)) return -1;
    for (uint32_t o = 0; o < sn->src->n_outputs; o++)
        if (!b->c.vals[sn->src->outputs[o]].ready) return sp_fail(&b->c, "output %u was not inferred", o);
    int r = sp_fold(&b->c);
    if (r < 0) return -1;
    sn->folded = r ? r : weight_view(b, sn) ? SP_WEIGHT_VIEW : 0;
    return 0;
}

static int alt_node(spec_build *b, uint32_t i);

static int walk(spec_build *b) {
    for (uint32_t i = 0; i < b->c.g->n_nodes; i++)
        if (infer_node(b, i) || alt_node(b, i)) return -1;
    return 0;
}

/* ---- 6. dead code and the desc --------------------------------------------- */

static void mark_live(spec_build *b) {
    const berth_graph *g = b->c.g;
    for (uint32_t i = 0; i < g->n_outputs; i++) b->live[g->outputs[i]] = 1;
    for (uint32_t i = g->n_nodes; i-- > 0;) {
        const sp_node *sn = &b->nodes[i];
        int used = 0;
        for (uint32_t o = 0; o < sn->src->n_outputs; o++) used |= b->live[sn->src->outputs[o]];
        if (!used || sn->folded) continue;
        for (uint32_t o = 0; o < sn->src->n_outputs; o++) b->live[sn->src->outputs[o]] = 1;
        for (uint32_t k = 0; k < sn->n_inputs; k++) b->live[sn->inputs[k]] = 1;
        for (uint32_t k = 0; k < sn->n_attrs; k++) {
            const berth_attr *a = &sn->attrs[k];
            if (a->type == BERTH_ATTR_OPERAND) b->live[a->i] = 1;
            if (a->type == BERTH_ATTR_OPERANDS)
                for (size_t j = 0; j < a->count; j++) b->live[a->ints[j]] = 1;
        }
    }
}

static int fill_operand(spec_build *b, uint32_t vi, berth_operand *op) {
    const bg_value *gv = &b->c.g->values[vi];
    sp_val *v = &b->c.vals[vi];
    /* names are copied: the spec may outlive the graph it came from */
    op->name = berth_arena_strdup(b->c.arena, gv->name ? gv->name : "");
    if (!op->name) return fail_at(b, gv->line, "out of memory");
    op->dtype = v->dtype;
    op->rank = v->rank;
    memcpy(op->dims, v->dims, sizeof(int64_t) * v->rank);
    int ok = 1;
    size_t bytes = berth_dtype_bytes(v->dtype, (uint64_t)sp_numel(v->rank, v->dims), &ok);
    if (gv->kind == BG_INPUT) {
        op->kind = BERTH_OPERAND_INPUT;
    } else if ((gv->kind == BG_CONST && gv->init == BG_INIT_WEIGHTS) ||
               (gv->node >= 0 && b->nodes[gv->node].folded == SP_WEIGHT_VIEW)) {
        int32_t src = weight_source(b, (int32_t)vi);
        uint32_t id = b->weight_ids && src >= 0 ? b->weight_ids[src] : UINT32_MAX;
        if (id == UINT32_MAX)
            return fail_at(b, gv->line, "const '%s' has no uploaded weight", b->c.g->values[src >= 0 ? src : (int32_t)vi].name);
        op->kind = BERTH_OPERAND_WEIGHT;
        op->weight = id;
    } else if (gv->kind == BG_CONST || (gv->node >= 0 && b->nodes[gv->node].folded)) {
        if (!v->data) { /* a large @scalar const: expanded only now it is used */
            v->data = berth_arena_alloc(b->c.arena, bytes ? bytes : 1);
            if (!v->data) return fail_at(b, gv->line, "out of memory expanding const '%s'", gv->name);
            sp_fill(v->data, v->dtype, (size_t)sp_numel(v->rank, v->dims), gv->scalar);
        }
        op->kind = BERTH_OPERAND_CONSTANT;
        op->data = v->data;
        op->bytes = bytes;
    } else {
        op->kind = BERTH_OPERAND_VALUE;
    }
    return 0;
}

static int build_desc(spec_build *b) {
    const berth_graph *g = b->c.g;
    berth_spec *s = b->s;
    berth_arena *a = b->c.arena;
    uint32_t n_ops = 0, n_nodes = 0;
    for (uint32_t i = 0; i < g->n_inputs; i++) b->live[g->inputs[i]] = 1;
    for (uint32_t v = 0; v < g->n_values; v++) n_ops += b->live[v] != 0;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        n_nodes += !b->nodes[i].folded && b->live[b->nodes[i].src->outputs[0]];
    berth_operand *ops = berth_arena_array(a, n_ops + 1, sizeof(berth_operand));
    berth_node *nodes = berth_arena_array(a, n_nodes + 1, sizeof(berth_node));
    uint32_t *ins = berth_arena_array(a, g->n_inputs + 1, sizeof(uint32_t));
    uint32_t *outs = berth_arena_array(a, g->n_outputs + 1, sizeof(uint32_t));
    if (!ops || !nodes || !ins || !outs) return fail_at(b, 0, "out of memory");
    for (uint32_t v = 0; v < g->n_values; v++) s->operand_of[v] = -1;
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        int32_t v = g->inputs[i];
        if (s->operand_of[v] < 0) {
            s->operand_of[v] = (int32_t)k;
            if (fill_operand(b, (uint32_t)v, &ops[k++])) return -1;
        }
        ins[i] = (uint32_t)s->operand_of[v];
    }
    for (uint32_t v = 0; v < g->n_values; v++)
        if (b->live[v] && s->operand_of[v] < 0) {
            s->operand_of[v] = (int32_t)k;
            if (fill_operand(b, v, &ops[k++])) return -1;
        }
    for (uint32_t i = 0; i < g->n_outputs; i++) outs[i] = (uint32_t)s->operand_of[g->outputs[i]];
    uint32_t kn = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        sp_node *sn = &b->nodes[i];
        if (sn->folded || !b->live[sn->src->outputs[0]]) continue;
        berth_node *d = &nodes[kn++];
        uint32_t *ni = berth_arena_array(a, sn->n_inputs + 1, sizeof(uint32_t));
        uint32_t *no = berth_arena_array(a, sn->src->n_outputs, sizeof(uint32_t));
        if (!ni || !no) return fail_at(b, 0, "out of memory");
        for (uint32_t j = 0; j < sn->n_inputs; j++) ni[j] = (uint32_t)s->operand_of[sn->inputs[j]];
        for (uint32_t j = 0; j < sn->src->n_outputs; j++) no[j] = (uint32_t)s->operand_of[sn->src->outputs[j]];
        for (uint32_t j = 0; j < sn->n_attrs; j++) {
            berth_attr *at = &sn->attrs[j];
            if (at->type == BERTH_ATTR_OPERAND) at->i = s->operand_of[at->i];
            if (at->type == BERTH_ATTR_OPERANDS) {
                int64_t *m = (int64_t *)at->ints;
                for (size_t q = 0; q < at->count; q++) m[q] = s->operand_of[m[q]];
            }
        }
        d->op = berth_arena_strdup(a, sn->op);
        d->name = berth_arena_strdup(a, sn->name ? sn->name : "");
        if (!d->op || !d->name) return fail_at(b, 0, "out of memory");
        d->n_inputs = sn->n_inputs;
        d->inputs = ni;
        d->n_outputs = sn->src->n_outputs;
        d->outputs = no;
        d->n_attrs = sn->n_attrs;
        d->attrs = sn->attrs;
    }
    s->desc.struct_size = sizeof(berth_graph_desc);
    s->desc.n_operands = k;
    s->desc.operands = ops;
    s->desc.n_nodes = kn;
    s->desc.nodes = nodes;
    s->desc.n_inputs = g->n_inputs;
    s->desc.inputs = ins;
    s->desc.n_outputs = g->n_outputs;
    s->desc.outputs = outs;
    /* Element sizes of the arrays above: the ABI 1.0 sizes, which every
     * module version reads today (loader.h says how an append would
     * differ per module version). */
    s->desc.operand_size = (uint32_t)BERTH_OPERAND_V1_SIZE;
    s->desc.node_size = (uint32_t)BERTH_NODE_V1_SIZE;
    s->desc.attr_size = (uint32_t)BERTH_ATTR_V1_SIZE;
    s->desc.tensor_size = (uint32_t)BERTH_TENSOR_V1_SIZE;
    return 0;
}

/* ---- 7. which output dims follow which dyn dim ------------------------------
 *
 * What berth_executor_output_info reports as dyn, and what pad_reach.c
 * reads to know which axes follow a dim. Which those are is
 * found alongside the inference: for each dyn dim k, every value whose
 * shape or host data would differ were k one smaller is kept in that
 * form (alt[k]), node by node, by running the node's rule again on its
 * inputs' alternatives. This is exactly what specializing the whole graph
 * once more per dyn dim would find, at the cost of the nodes each dim
 * reaches. A node whose rule refuses the alternative means the dim cannot
 * move alone (it is tied to another): no output follows it. */

static int same_val(const sp_val *a, const sp_val *b) {
    if (a->dtype != b->dtype || a->rank != b->rank) return 0;
    for (uint32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return 0;
    if (!a->data != !b->data) return 0;
    if (!a->data) return 1;
    int ok = 1;
    size_t bytes = berth_dtype_bytes(a->dtype, (uint64_t)sp_numel(a->rank, a->dims), &ok);
    return ok && memcmp(a->data, b->data, bytes) == 0;
}

static int keep_alt(spec_build *b, uint32_t k, uint32_t v) {
    sp_val *copy = berth_arena_alloc(b->c.arena, sizeof *copy);
    if (!copy) return fail_at(b, 0, "out of memory");
    *copy = b->c.vals[v];
    b->alt[k][v] = copy;
    return 0;
}

static int alt_leaves(spec_build *b) {
    const berth_graph *g = b->c.g;
    int64_t *syms = malloc(sizeof *syms * (g->n_syms + 1));
    if (!syms) return fail_at(b, 0, "out of memory");
    int rc = 0;
    for (uint32_t k = 0; k < g->n_syms && !rc; k++) {
        if (!b->alt[k]) continue;
        memcpy(syms, b->syms, sizeof *syms * g->n_syms);
        syms[k]--;
        const int64_t *base = b->syms;
        b->syms = syms;
        for (uint32_t v = 0; v < g->n_values && !rc; v++) {
            const bg_value *gv = &g->values[v];
            int uses = 0;
            for (uint32_t d = 0; d < gv->rank && d < BERTH_MAX_RANK; d++) uses |= gv->dims[d].sym == (int32_t)k;
            if (gv->kind == BG_NODE_OUTPUT || !uses) continue;
            sp_val save = b->c.vals[v];
            berth_error *err = b->c.err, scratch;
            b->c.err = &scratch;
            int bad = bind_leaf(b, v);
            b->c.err = err;
            rc = !bad ? keep_alt(b, k, v) : 0;
            b->c.vals[v] = save;
            if (bad) { /* cannot happen for a dim within 1..max; then it does not move */
                free(b->alt[k]);
                b->alt[k] = NULL;
                break;
            }
        }
        b->syms = base;
    }
    free(syms);
    return rc;
}

/* The values node i reads: its operands, option operands, host tensors. */
static uint32_t node_reads(const spec_build *b, uint32_t i, int32_t *out, uint32_t cap) {
    const bg_node *n = &b->c.g->nodes[i];
    const sp_node *sn = &b->nodes[i];
    uint32_t m = 0;
    for (uint32_t j = 0; j < n->n_inputs && m < cap; j++) out[m++] = n->inputs[j];
    for (uint32_t a = 0; a < sn->n_attrs; a++) {
        const berth_attr *at = &sn->attrs[a];
        if (at->type == BERTH_ATTR_OPERAND && m < cap) out[m++] = (int32_t)at->i;
        if (at->type == BERTH_ATTR_OPERANDS)
            for (size_t j = 0; j < at->count && m < cap; j++) out[m++] = (int32_t)at->ints[j];
    }
    return m;
}

static int attr_same(const berth_attr *x, const berth_attr *y) {
    if (x->type != y->type) return 0;
    switch (x->type) {
    case BERTH_ATTR_NULL: return 1;
    case BERTH_ATTR_INT:
    case BERTH_ATTR_BOOL:
    case BERTH_ATTR_OPERAND: return x->i == y->i;
    case BERTH_ATTR_FLOAT: return x->f == y->f;
    case BERTH_ATTR_STRING: return !strcmp(x->s, y->s);
    case BERTH_ATTR_INTS:
    case BERTH_ATTR_OPERANDS:
        return x->count == y->count && (!x->count || !memcmp(x->ints, y->ints, x->count * sizeof *x->ints));
    case BERTH_ATTR_FLOATS:
        return x->count == y->count && (!x->count || !memcmp(x->floats, y->floats, x->count * sizeof *x->floats));
    }
    return 0;
}

/* Whether an option other than a shape (reshape's and expand's newShape,
 * slice's sizes, which are meant to follow the dims) differs between the
 * node as inferred at the bucket and with a dim one smaller: a slice
 * start or a padding computed from a dim moves where the node reads. */
static int offsets_moved(const sp_node *base, const sp_node *alt) {
    if (base->n_attrs != alt->n_attrs) return 1;
    for (uint32_t a = 0; a < base->n_attrs; a++) {
        const berth_attr *x = &base->attrs[a];
        if (!strcmp(x->key, "newShape") || !strcmp(x->key, "sizes")) continue;
        const berth_attr *y = NULL;
        for (uint32_t j = 0; j < alt->n_attrs && !y; j++)
            if (!strcmp(alt->attrs[j].key, x->key)) y = &alt->attrs[j];
        if (!y || !attr_same(x, y)) return 1;
    }
    return 0;
}

static int alt_node(spec_build *b, uint32_t i) {
    const berth_graph *g = b->c.g;
    if (!b->alt) return 0; /* shapes only (berth_specialize_shapes) */
    const bg_node *n = &g->nodes[i];
    int32_t reads[64];
    sp_val saved_in[64], saved_out[16];
    uint32_t n_reads = node_reads(b, i, reads, 64);
    if (n->n_outputs > 16) return 0; /* no op has that many */
    for (uint32_t k = 0; k < g->n_syms; k++) {
        if (!b->alt[k]) continue;
        int touched = 0;
        for (uint32_t j = 0; j < n_reads; j++) touched |= b->alt[k][reads[j]] != NULL;
        if (!touched) continue;
        /* The node's inputs as they would be, then its rule again. A value
         * read twice is swapped once (saved_in keeps the first save). */
        for (uint32_t j = 0; j < n_reads; j++) {
            saved_in[j] = b->c.vals[reads[j]];
            if (b->alt[k][reads[j]]) b->c.vals[reads[j]] = *b->alt[k][reads[j]];
        }
        for (uint32_t o = 0; o < n->n_outputs; o++) {
            saved_out[o] = b->c.vals[n->outputs[o]];
            memset(&b->c.vals[n->outputs[o]], 0, sizeof(sp_val));
        }
        sp_node saved_node = b->nodes[i];
        memset(&b->nodes[i], 0, sizeof b->nodes[i]); /* normalize starts from nothing */
        berth_error *err = b->c.err, scratch;
        b->c.err = &scratch;
        int bad = infer_node(b, i);
        b->c.err = err;
        int rc = 0;
        for (uint32_t o = 0; o < n->n_outputs && !bad && !rc; o++)
            if (!same_val(&b->c.vals[n->outputs[o]], &saved_out[o])) rc = keep_alt(b, k, (uint32_t)n->outputs[o]);
        if (!bad && k < 64 && offsets_moved(&saved_node, &b->nodes[i])) b->moved[i] |= UINT64_C(1) << k;
        for (uint32_t o = 0; o < n->n_outputs; o++) b->c.vals[n->outputs[o]] = saved_out[o];
        for (uint32_t j = n_reads; j-- > 0;) b->c.vals[reads[j]] = saved_in[j];
        b->nodes[i] = saved_node;
        b->c.n = &b->nodes[i];
        if (rc) return -1;
        if (bad) { /* dim k cannot move alone */
            free(b->alt[k]);
            b->alt[k] = NULL;
            if (b->tied_at[k] < 0) b->tied_at[k] = (int32_t)i;
        }
    }
    return 0;
}

/* Bit k of out_dep[o * BERTH_MAX_RANK + d]: output o's dim d follows dyn dim k. */
static int record_deps(spec_build *b) {
    const berth_graph *g = b->c.g;
    berth_spec *s = b->s;
    s->out_dep = berth_arena_array(b->c.arena, (size_t)g->n_outputs * BERTH_MAX_RANK + 1, sizeof(uint64_t));
    if (!s->out_dep) return fail_at(b, 0, "out of memory");
    for (uint32_t k = 0; k < g->n_syms && k < 64; k++) {
        if (!b->alt[k]) continue;
        for (uint32_t o = 0; o < g->n_outputs; o++) {
            const sp_val *a = b->alt[k][g->outputs[o]], *v = &b->c.vals[g->outputs[o]];
            for (uint32_t d = 0; a && d < v->rank && d < a->rank; d++)
                if (a->dims[d] != v->dims[d]) s->out_dep[o * BERTH_MAX_RANK + d] |= UINT64_C(1) << k;
        }
    }
    return 0;
}

static void free_alt(spec_build *b, uint32_t n_syms) {
    if (!b->alt) return;
    for (uint32_t k = 0; k < n_syms; k++) free(b->alt[k]);
    free(b->alt);
}

berth_spec *berth_specialize(const berth_graph *g, const int64_t *sym_values,
                             const uint32_t *weight_ids, berth_error *err) {
    if (!g || !err) {
        if (err) snprintf(err->msg, sizeof err->msg, "berth_specialize: expected a graph, found NULL");
        return NULL;
    }
    berth_arena *a = berth_arena_new();
    berth_spec *s = a ? berth_arena_alloc(a, sizeof *s) : NULL;
    spec_build b = {0};
    b.c.g = g;
    b.c.arena = a;
    b.c.err = err;
    b.s = s;
    b.syms = sym_values;
    b.weight_ids = weight_ids;
    if (!s) goto oom;
    s->arena = a;
    s->n_values = g->n_values;
    s->operand_of = berth_arena_array(a, g->n_values + 1, sizeof(int32_t));
    b.c.vals = berth_arena_array(a, g->n_values + 1, sizeof(sp_val));
    b.nodes = berth_arena_array(a, g->n_nodes + 1, sizeof(sp_node));
    b.live = berth_arena_alloc(a, g->n_values + 1);
    b.moved = berth_arena_array(a, g->n_nodes + 1, sizeof *b.moved);
    b.tied_at = berth_arena_array(a, g->n_syms + 1, sizeof *b.tied_at);
    s->n_syms = g->n_syms;
    s->pad_reach = berth_arena_array(a, (size_t)g->n_outputs * g->n_syms + 1, sizeof *s->pad_reach);
    if (!s->operand_of || !b.c.vals || !b.nodes || !b.live || !b.moved || !b.tied_at || !s->pad_reach) goto oom;
    for (uint32_t k = 0; k < g->n_syms; k++) b.tied_at[k] = -1;
    if (bind_syms(&b)) goto fail;
    for (uint32_t v = 0; v < g->n_values; v++)
        if (g->values[v].kind != BG_NODE_OUTPUT && bind_leaf(&b, v)) goto fail;
    /* A dim at 1 cannot be one smaller, and at most 64 are tracked (the
     * parser allows no more). */
    b.alt = calloc(g->n_syms + 1, sizeof *b.alt);
    if (!b.alt) goto oom;
    for (uint32_t k = 0; k < g->n_syms && k < 64; k++)
        if (sym_values[k] > 1 && !(b.alt[k] = calloc(g->n_values + 1, sizeof **b.alt))) goto oom;
    if (alt_leaves(&b) || walk(&b) || record_deps(&b)) goto fail;
    if (sp_pad_reach(g, b.nodes, b.c.vals, b.alt, b.moved, b.tied_at, sym_values, s->pad_reach)) goto oom;
    for (size_t i = 0; i < (size_t)g->n_outputs * g->n_syms; i++) { /* names outlive the graph */
        berth_pad_reach *pr = &s->pad_reach[i];
        if (pr->node && (!(pr->node = berth_arena_strdup(a, pr->node)) || !(pr->op = berth_arena_strdup(a, pr->op))))
            goto oom;
    }
    free_alt(&b, g->n_syms);
    mark_live(&b);
    if (build_desc(&b)) goto fail_freed;
    return s;
oom:
    snprintf(err->msg, sizeof err->msg, "%s: out of memory specializing", gpath(g));
fail:
    free_alt(&b, g->n_syms);
fail_freed:
    berth_arena_free(a);
    return NULL;
}

int berth_specialize_shapes(const berth_graph *g, const int64_t *sym_values, void *arena,
                            uint32_t *out_rank, int64_t *out_dims, berth_error *err) {
    berth_arena *a = arena;
    berth_arena_reset(a);
    spec_build b = {0};
    b.c.g = g;
    b.c.arena = a;
    b.c.err = err;
    b.syms = sym_values;
    b.c.vals = berth_arena_array(a, g->n_values + 1, sizeof(sp_val));
    b.nodes = berth_arena_array(a, g->n_nodes + 1, sizeof(sp_node));
    if (!b.c.vals || !b.nodes) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory inferring shapes", gpath(g));
        return -1;
    }
    if (bind_syms(&b)) return -1;
    for (uint32_t v = 0; v < g->n_values; v++)
        if (g->values[v].kind != BG_NODE_OUTPUT && bind_leaf(&b, v)) return -1;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (infer_node(&b, i)) return -1;
    for (uint32_t o = 0; o < g->n_outputs; o++) {
        const sp_val *v = &b.c.vals[g->outputs[o]];
        out_rank[o] = v->rank;
        memcpy(&out_dims[(size_t)o * BERTH_MAX_RANK], v->dims, sizeof(int64_t) * v->rank);
    }
    return 0;
}

void berth_spec_free(berth_spec *s) {
    if (s) berth_arena_free(s->arena);
}

const berth_operand *berth_spec_value(const berth_spec *s, int32_t value) {
    if (!s || value < 0 || (uint32_t)value >= s->n_values || s->operand_of[value] < 0) return NULL;
    return &s->desc.operands[s->operand_of[value]];
}
