/* Building the plan for one (lane, bucket): specialize the graph to the
 * bucket's dims, fuse what the backend supports, let the backend plan it,
 * and allocate the host buffers a run needs, so a warm run allocates
 * nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "dtype.h"
#include "executor_internal.h"
#include "infer.h"
#include "util.h"

/* The host builds its arrays as plain C arrays and declares their element
 * sizes as the ABI 1.0 sizes (specialize.c, archive_stream.c): the two
 * must agree, or a module indexing by the declared size reads garbage. */
_Static_assert(sizeof(berth_operand) == BERTH_OPERAND_V1_SIZE, "operand stride");
_Static_assert(sizeof(berth_node) == BERTH_NODE_V1_SIZE, "node stride");
_Static_assert(sizeof(berth_attr) == BERTH_ATTR_V1_SIZE, "attr stride");
_Static_assert(sizeof(berth_tensor) == BERTH_TENSOR_V1_SIZE, "tensor stride");
_Static_assert(sizeof(berth_weight_desc) == BERTH_WEIGHT_DESC_V1_SIZE, "weight desc stride");

/* The ops fusion may create, each of which can be turned off when the
 * backend refuses a node it made. */
static const char *const fused_ops[] = {"berth.matmulEpilogue", "berth.attention",
                                        "layerNormalization"};
#define N_FUSED_OPS (sizeof fused_ops / sizeof fused_ops[0])

typedef struct fuse_ctx {
    berth_executor *ex;
    unsigned disabled; /* bit k: fused_ops[k] is not to be made */
} fuse_ctx;

/* Fusion's cheap pre-filter: supports_op on (op, dtype). The fused nodes
 * are then asked supports_node like every other (berth_node_check). */
static int backend_supports(void *ctx, const char *op, berth_dtype dtype) {
    fuse_ctx *fc = ctx;
    berth_executor *ex = fc->ex;
    for (unsigned k = 0; k < N_FUSED_OPS; k++)
        if ((fc->disabled & (1u << k)) && !strcmp(op, fused_ops[k])) return 0;
    berth_error e;
    berth_backend_msg_reset(&e);
    berth_status st = ex->mod.be->supports_op(ex->dev, op, dtype, &e);
    /* Only the answer matters to fusion; the message is dropped. */
    return berth_backend_result(st, ex->mod.be->name, "supports_op", &e, &e) == BERTH_OK;
}

static size_t describe_operand(char *buf, size_t cap, const berth_operand *o) {
    char dims[160];
    int w = snprintf(buf, cap, "%s %s%s", o->name ? o->name : "?", berth_dtype_name(o->dtype),
                     sp_dims_str(dims, sizeof dims, o->rank, o->dims));
    return w > 0 ? (size_t)w : 0;
}

/* "inputs x f32[1, 4], w1 f32[4, 8]; bias b1 f32[8]; outputs h0 f32[1, 8]":
 * positional inputs, operands given as options, outputs. */
static void describe_operands(char *buf, size_t cap, const berth_graph_desc *d, const berth_node *nd) {
    size_t off = 0;
    buf[0] = 0;
    off += (size_t)snprintf(buf, cap, "inputs ");
    for (uint32_t k = 0; k < nd->n_inputs && off < cap; k++) {
        if (k) off += (size_t)snprintf(buf + off, cap - off, ", ");
        if (off < cap) off += describe_operand(buf + off, cap - off, &d->operands[nd->inputs[k]]);
    }
    for (uint32_t k = 0; k < nd->n_attrs && off < cap; k++) {
        const berth_attr *a = &nd->attrs[k];
        if (a->type == BERTH_ATTR_OPERAND) {
            off += (size_t)snprintf(buf + off, cap - off, "; %s ", a->key);
            if (off < cap) off += describe_operand(buf + off, cap - off, &d->operands[a->i]);
        } else if (a->type == BERTH_ATTR_OPERANDS) {
            off += (size_t)snprintf(buf + off, cap - off, "; %s", a->key);
            for (size_t j = 0; j < a->count && off < cap; j++) {
                off += (size_t)snprintf(buf + off, cap - off, "%s", j ? ", " : " ");
                if (off < cap) off += describe_operand(buf + off, cap - off, &d->operands[a->ints[j]]);
            }
        }
    }
    if (off < cap) off += (size_t)snprintf(buf + off, cap - off, "; outputs ");
    for (uint32_t k = 0; k < nd->n_outputs && off < cap; k++) {
        if (k) off += (size_t)snprintf(buf + off, cap - off, ", ");
        if (off < cap) off += describe_operand(buf + off, cap - off, &d->operands[nd->outputs[k]]);
    }
}

berth_status berth_node_check(berth_executor *ex, const char *graph_path, const berth_graph_desc *d,
                              uint32_t i, berth_error *err) {
    const berth_backend *be = ex->mod.be;
    const berth_node *nd = &d->nodes[i];
    berth_dtype t = nd->n_inputs ? d->operands[nd->inputs[0]].dtype : d->operands[nd->outputs[0]].dtype;
    berth_error e;
    berth_backend_msg_reset(&e);
    berth_status st;
    const char *verb;
    if (berth_backend_has_supports_node(be)) {
        verb = "supports_node";
        st = be->supports_node(ex->dev, d, i, &e);
    } else {
        verb = "supports_op";
        st = be->supports_op(ex->dev, nd->op, t, &e);
    }
    st = berth_backend_result(st, be->name, verb, &e, &e);
    if (st == BERTH_OK) return BERTH_OK;
    if (!berth_backend_has_supports_node(be)) {
        /* A 1.0 module was asked about the op and one dtype: name those. */
        berth_errorf(err, "%s: node '%s' (op %s on %s): %s", graph_path, nd->name, nd->op,
                     berth_dtype_name(t), e.msg);
        return st;
    }
    char ops[BERTH_ERROR_CAP];
    describe_operands(ops, sizeof ops, d, nd);
    berth_errorf(err, "%s: node '%s' (op %s; %s): %s", graph_path, nd->name, nd->op, ops, e.msg);
    return st;
}

/* Specialize (ln, b), fuse, and ask the backend about every node. A
 * fused node the backend refuses does not fail the bucket: the bucket is
 * specialized again with that fusion turned off. A node of the graph
 * itself that is refused stops here, before plan() is called. */
static berth_spec *specialize_checked(berth_executor *ex, lane *ln, uint32_t b, berth_status *st,
                                      berth_error *err) {
    fuse_ctx fc = {ex, 0};
    for (;;) {
        berth_spec *spec;
        if (b == 0 && ln->first_spec) {
            /* open() specialized bucket 0 already; fusion has not touched it */
            spec = ln->first_spec;
            ln->first_spec = NULL;
        } else {
            spec = berth_lane_specialize(ln, b, err);
        }
        if (!spec) {
            *st = BERTH_ERR_INVALID;
            return NULL;
        }
        berth_fuse(spec, backend_supports, &fc);
        uint32_t i;
        *st = BERTH_OK;
        for (i = 0; i < spec->desc.n_nodes; i++)
            if ((*st = berth_node_check(ex, ln->g->path, &spec->desc, i, err)) != BERTH_OK) break;
        if (*st == BERTH_OK) return spec;
        unsigned k = 0;
        while (k < N_FUSED_OPS && strcmp(spec->desc.nodes[i].op, fused_ops[k])) k++;
        if (k == N_FUSED_OPS || (fc.disabled & (1u << k))) {
            berth_spec_free(spec);
            return NULL;
        }
        berth_logf(&ex->log, BERTH_LOG_INFO, "%s: not fusing to %s: %s", ln->g->path, fused_ops[k], err->msg);
        fc.disabled |= 1u << k;
        berth_spec_free(spec);
    }
}

static size_t tensor_bytes(const berth_operand *o, int *ok) {
    int64_t n = 1;
    for (uint32_t d = 0; d < o->rank; d++) n = berth_mul_checked(n, o->dims[d], ok);
    return berth_dtype_bytes(o->dtype, (size_t)n, ok);
}

static void set_tensor(berth_tensor *t, const berth_operand *o, size_t bytes) {
    t->dtype = o->dtype;
    t->rank = o->rank;
    memcpy(t->dims, o->dims, sizeof t->dims);
    t->bytes = bytes;
}

/* Which output dims scale with which dyn dim: specialize again with one
 * dim one smaller and see which output dims move. Trimming then scales
 * those dims by asked/bucket, which is exact for batch-like dims. */
static void find_output_deps(const lane *ln, uint32_t b, plan_slot *s) {
    const berth_graph *g = ln->g;
    const int64_t *vals = ln->bucket_vals + (size_t)b * g->n_syms;
    int64_t probe[64];
    if (g->n_syms > 64) return;
    for (uint32_t k = 0; k < g->n_syms; k++) {
        if (vals[k] <= 1) continue;
        memcpy(probe, vals, sizeof(int64_t) * g->n_syms);
        probe[k] = vals[k] - 1;
        berth_error e;
        berth_spec *alt = berth_specialize(g, probe, ln->weight_ids, &e);
        if (!alt) continue; /* this dim cannot move alone: never trimmed */
        for (uint32_t o = 0; o < g->n_outputs; o++) {
            const berth_operand *a = &s->spec->desc.operands[s->spec->desc.outputs[o]];
            const berth_operand *c = &alt->desc.operands[alt->desc.outputs[o]];
            for (uint32_t d = 0; d < a->rank && d < c->rank; d++)
                if (a->dims[d] != c->dims[d]) s->out_dep[o * BERTH_MAX_RANK + d] |= UINT64_C(1) << k;
        }
        berth_spec_free(alt);
    }
}

static const berth_attr *find_attr(const berth_node *n, const char *key) {
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].key, key)) return &n->attrs[i];
    return NULL;
}

/* Record every graph input that a gather reads as indices, with the size
 * of the axis it indexes, so run() refuses an out-of-range index instead
 * of letting any backend read out of bounds. */
static berth_status find_index_checks(const lane *ln, plan_slot *s, berth_error *err) {
    const berth_graph_desc *d = &s->spec->desc;
    for (uint32_t i = 0; i < d->n_nodes; i++) {
        const berth_node *n = &d->nodes[i];
        if (strcmp(n->op, "gather") || n->n_inputs < 2) continue;
        uint32_t input = UINT32_MAX;
        for (uint32_t k = 0; k < d->n_inputs; k++)
            if (d->inputs[k] == n->inputs[1]) input = k;
        if (input == UINT32_MAX) continue;
        const berth_operand *table = &d->operands[n->inputs[0]];
        const berth_attr *a = find_attr(n, "axis");
        int64_t axis = a ? a->i : 0;
        if (axis < 0) axis += table->rank;
        if (axis < 0 || axis >= (int64_t)table->rank) continue; /* refused by inference */
        int64_t bound = table->dims[axis];
        if (ln->pad[input] < -(double)bound || ln->pad[input] >= (double)bound) {
            berth_errorf(err, "input '%s' is padded with %g, outside [%lld, %lld) of the gather at node '%s'",
                         d->operands[n->inputs[1]].name, ln->pad[input], (long long)-bound,
                         (long long)bound, n->name);
            return BERTH_ERR_INVALID;
        }
        struct index_check *nc = realloc(s->index_checks, sizeof *nc * (s->n_index_checks + 1));
        if (!nc) {
            berth_errorf(err, "out of memory");
            return BERTH_ERR_NOMEM;
        }
        s->index_checks = nc;
        nc[s->n_index_checks++] = (struct index_check){input, bound, n->name};
    }
    return BERTH_OK;
}

berth_status berth_slot_build(berth_executor *ex, lane *ln, uint32_t b, berth_error *err) {
    plan_slot *s = &ln->slots[b];
    const berth_graph *g = ln->g;
    if (s->plan) return BERTH_OK;
    berth_status st = BERTH_ERR_NOMEM;
    uint32_t ni = g->n_inputs, no = g->n_outputs;
    s->spec = specialize_checked(ex, ln, b, &st, err);
    if (!s->spec) return st;
    /* Before any buffer of the plan exists, so a bucket too large for the
     * limit costs nothing but its specialization. */
    if ((st = berth_limit_check_plan(ex, ln, b, s->spec, err)) != BERTH_OK) goto fail;

    s->in_pad = calloc(ni ? ni : 1, sizeof *s->in_pad);
    s->in_view = calloc(ni ? ni : 1, sizeof *s->in_view);
    s->out_full = calloc(no ? no : 1, sizeof *s->out_full);
    s->out_dep = calloc((size_t)(no ? no : 1) * BERTH_MAX_RANK, sizeof *s->out_dep);
    if (!s->in_pad || !s->in_view || !s->out_full || !s->out_dep) goto nomem;

    const berth_graph_desc *d = &s->spec->desc;
    for (uint32_t i = 0; i < ni; i++) {
        const berth_operand *o = &d->operands[d->inputs[i]];
        int ok = 1;
        size_t bytes = tensor_bytes(o, &ok);
        if (!ok) goto overflow;
        set_tensor(&s->in_pad[i], o, bytes);
        int dynamic = 0;
        for (uint32_t k = 0; k < ln->in_rank[i]; k++) dynamic |= ln->in_sym[i * BERTH_MAX_RANK + k] >= 0;
        if (dynamic) {
            s->in_pad[i].data = malloc(bytes ? bytes : 1);
            if (!s->in_pad[i].data) goto nomem;
            s->in_pad[i].capacity = bytes;
            s->host_bytes += bytes;
        }
    }
    for (uint32_t i = 0; i < no; i++) {
        const berth_operand *o = &d->operands[d->outputs[i]];
        int ok = 1;
        size_t bytes = tensor_bytes(o, &ok);
        if (!ok) goto overflow;
        set_tensor(&s->out_full[i], o, bytes);
        s->out_full[i].data = malloc(bytes ? bytes : 1);
        if (!s->out_full[i].data) goto nomem;
        s->out_full[i].capacity = bytes;
        s->host_bytes += bytes;
    }
    find_output_deps(ln, b, s);
    if ((st = find_index_checks(ln, s, err)) != BERTH_OK) goto fail;

    berth_backend_msg_reset(err);
    st = ex->mod.be->plan(ex->dev, ex->w, d, &s->plan, err);
    st = berth_backend_result(st, ex->mod.be->name, "plan", err, err);
    if (st != BERTH_OK) {
        s->plan = NULL;
        goto fail;
    }
    /* The backend may hold more than the estimate (packed weights,
     * scratch): what it reports now must fit too. */
    if ((st = berth_limit_check_built(ex, ln, b, err)) != BERTH_OK) goto fail;
    return BERTH_OK;
overflow:
    berth_errorf(err, "%s: a tensor of the bucket is too large to address", g->path);
    st = BERTH_ERR_INVALID;
    goto fail;
nomem:
    berth_errorf(err, "out of memory preparing a plan of %s", g->path);
    st = BERTH_ERR_NOMEM; /* st held the last check's BERTH_OK */
fail:
    berth_slot_free(ex, s, ni, no);
    return st;
}

void berth_slot_free(berth_executor *ex, plan_slot *s, uint32_t n_inputs, uint32_t n_outputs) {
    if (s->plan) ex->mod.be->free_plan(s->plan);
    if (s->in_pad)
        for (uint32_t i = 0; i < n_inputs; i++) free(s->in_pad[i].data);
    if (s->out_full)
        for (uint32_t i = 0; i < n_outputs; i++) free(s->out_full[i].data);
    free(s->in_pad);
    free(s->in_view);
    free(s->out_full);
    free(s->out_dep);
    free(s->index_checks);
    if (s->spec) berth_spec_free(s->spec);
    memset(s, 0, sizeof *s);
}
