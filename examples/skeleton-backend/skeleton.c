/* skeleton: the smallest useful berth backend, to copy and grow. It runs
 * float32 matmul (2-D), add (same shape, or the second operand matching
 * the first's trailing dims, as a bias does) and relu with plain loops on
 * the host, through the ABI of <berth/backend.h> and the backend kit
 * (bk.h: negotiation, graph views, upload bookkeeping, messages).
 *
 * A real device replaces the loops in run_node() with its kernels and
 * the malloc'd buffers with device memory; the shape of everything else
 * stays: refuse early and precisely in supports_node, allocate in plan,
 * never in run. */
#include <stdlib.h>
#include <string.h>

#include "bk.h"

struct berth_device {
    const berth_host_services *host;
};

struct berth_weights {
    bk_upload up;  /* which ids arrived, with which sizes */
    float **data;  /* by weight id: our copy */
    uint64_t bytes;
};

enum { OP_MATMUL, OP_ADD, OP_RELU };

typedef struct step {
    int op;
    uint32_t a, b, y;   /* operand indices (b unused by relu) */
    size_t m, k, n;     /* matmul: [m, k] x [k, n]; add: n elements, b repeats every k */
} step;

struct berth_plan {
    uint32_t n_operands, n_steps, n_inputs, n_outputs;
    float **ptr;        /* by operand: where its elements are during run */
    uint8_t *owned;     /* by operand: ptr was allocated by this plan */
    uint32_t *inputs, *outputs;
    step *steps;
    size_t *out_bytes;
    size_t tensor_size; /* the stride of run()'s tensor arrays, as the host laid them out */
    uint64_t bytes;
};

static berth_status sk_open(const berth_host_services *host, berth_device **out, berth_error *err) {
    berth_device *d = calloc(1, sizeof *d);
    if (!d) {
        bk_errf(err, "skeleton: out of memory opening the device");
        return BERTH_ERR_NOMEM;
    }
    d->host = host;
    *out = d;
    return BERTH_OK;
}

static void sk_close(berth_device *d) { free(d); }

static berth_status sk_caps(berth_device *d, berth_caps *caps, berth_error *err) {
    (void)d;
    return bk_caps_fill(caps, "skeleton (host loops)", 0, 1, BK_BIT(BERTH_DTYPE_F32), err);
}

/* The op table: nodes name their op (berth_node.op); berth_op_find
 * (berth/ops.h, generated from ops.def) maps the name to an id once, and
 * an array indexed by id says what this backend does with it. Growing
 * the backend is a row here and a case in run_node(). */
static const int8_t op_steps[BERTH_OP_COUNT] = {
    [BERTH_OP_MATMUL] = OP_MATMUL + 1, [BERTH_OP_ADD] = OP_ADD + 1, [BERTH_OP_RELU] = OP_RELU + 1};

static int op_code(const char *op) {
    berth_op_id id = berth_op_find(op);
    return id == BERTH_OP_UNKNOWN ? -1 : op_steps[id] - 1;
}

static berth_status sk_supports_op(berth_device *d, const char *op, berth_dtype dtype, berth_error *err) {
    (void)d;
    if (op_code(op) < 0 || dtype != BERTH_DTYPE_F32) {
        bk_errf(err, "skeleton runs float32 matmul, add and relu, not %s on %s", op, bk_dtype_name(dtype));
        return BERTH_ERR_UNSUPPORTED;
    }
    return BERTH_OK;
}

/* The whole node in hand: refuse what run_node() cannot do. */
static berth_status check_node(const berth_graph_desc *g, uint32_t k, berth_error *err) {
    const berth_node *nd = &g->nodes[k];
    int op = op_code(nd->op);
    berth_status st = sk_supports_op(NULL, nd->op, g->operands[nd->outputs[0]].dtype, err);
    if (st) return st;
    for (uint32_t i = 0; i < nd->n_inputs; i++)
        if (g->operands[nd->inputs[i]].dtype != BERTH_DTYPE_F32)
            return bk_errf(err, "skeleton: %s '%s': input %u is not float32", nd->op, nd->name, i),
                   BERTH_ERR_UNSUPPORTED;
    const berth_operand *a = &g->operands[nd->inputs[0]];
    if (op == OP_MATMUL && (a->rank != 2 || g->operands[nd->inputs[1]].rank != 2)) {
        bk_errf(err, "skeleton: matmul '%s': only 2-D operands", nd->name);
        return BERTH_ERR_UNSUPPORTED;
    }
    if (op == OP_ADD) {
        const berth_operand *b = &g->operands[nd->inputs[1]];
        int ok = b->rank <= a->rank;
        for (uint32_t i = 0; ok && i < b->rank; i++) ok = b->dims[b->rank - 1 - i] == a->dims[a->rank - 1 - i];
        if (!ok) {
            bk_errf(err, "skeleton: add '%s': the second operand must match the first's trailing dims", nd->name);
            return BERTH_ERR_UNSUPPORTED;
        }
    }
    return BERTH_OK;
}

static berth_status sk_supports_node(berth_device *d, const berth_graph_desc *g, uint32_t k, berth_error *err) {
    (void)d;
    bk_graph v;
    berth_status st = bk_graph_view(g, &v, err); /* the host's layout, read in ours */
    if (st) return st;
    st = check_node(&v.g, k, err);
    bk_graph_release(&v);
    return st;
}

static berth_status sk_upload_begin(berth_device *d, const berth_upload_info *info, berth_weights **out,
                                    berth_error *err) {
    (void)d;
    berth_weights *w = calloc(1, sizeof *w);
    berth_status st = w ? bk_upload_begin(&w->up, info, "skeleton", err) : BERTH_ERR_NOMEM;
    if (st == BERTH_OK && !(w->data = calloc(w->up.n ? w->up.n : 1, sizeof *w->data))) st = BERTH_ERR_NOMEM;
    if (st) {
        if (st == BERTH_ERR_NOMEM) bk_errf(err, "skeleton: out of memory starting an upload");
        if (w) bk_upload_free(&w->up), free(w->data), free(w);
        return st;
    }
    *out = w;
    return BERTH_OK;
}

/* The host reads each tensor into its scratch and we copy it: a device
 * with memory the host can write would offer it in upload_dest instead. */
static berth_status sk_upload_tensor(berth_weights *w, const berth_weight_desc *desc, void *data, uint32_t flags,
                                     int *taken, berth_error *err) {
    (void)flags; /* a GIVEN buffer could be kept (*taken = 1, freed with host->free): we copy */
    if (taken) *taken = 0;
    berth_status st = bk_upload_check(&w->up, desc, data, "skeleton", err);
    if (st) return st;
    if (!(w->data[desc->id] = malloc(desc->bytes ? desc->bytes : 1))) {
        bk_errf(err, "skeleton: weight '%s': out of memory for %zu bytes", desc->name, desc->bytes);
        return BERTH_ERR_NOMEM;
    }
    memcpy(w->data[desc->id], data, desc->bytes);
    bk_upload_mark(&w->up, desc);
    w->bytes += desc->bytes;
    return BERTH_OK;
}

static berth_status sk_upload_end(berth_weights *w, berth_error *err) { return bk_upload_end(&w->up, "skeleton", err); }

/* Also called on a half-filled upload: frees what arrived. */
static void sk_free_weights(berth_weights *w) {
    if (!w) return;
    for (uint32_t i = 0; i < w->up.n; i++) free(w->data[i]);
    free(w->data);
    bk_upload_free(&w->up);
    free(w);
}

static uint64_t sk_weights_bytes(const berth_weights *w) { return w->bytes; }

static void sk_free_plan(berth_plan *p) {
    if (!p) return;
    for (uint32_t i = 0; p->owned && i < p->n_operands; i++)
        if (p->owned[i]) free(p->ptr[i]);
    free(p->ptr), free(p->owned), free(p->inputs), free(p->outputs), free(p->steps), free(p->out_bytes), free(p);
}

/* Every buffer is made here: constants copied, each value given its own. */
static berth_status sk_plan_native(berth_device *d, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                                   berth_error *err) {
    (void)d;
    berth_status st = bk_bind_check(w ? &w->up : NULL, g, "skeleton", err);
    for (uint32_t k = 0; st == BERTH_OK && k < g->n_nodes; k++) st = check_node(g, k, err);
    if (st) return st;
    berth_plan *p = calloc(1, sizeof *p);
    if (!p) goto nomem;
    p->n_operands = g->n_operands, p->n_steps = g->n_nodes, p->n_inputs = g->n_inputs, p->n_outputs = g->n_outputs;
    p->tensor_size = g->tensor_size;
    p->ptr = calloc(g->n_operands + 1, sizeof *p->ptr);
    p->owned = calloc(g->n_operands + 1, 1);
    p->inputs = calloc(g->n_inputs + 1, sizeof *p->inputs);
    p->outputs = calloc(g->n_outputs + 1, sizeof *p->outputs);
    p->out_bytes = calloc(g->n_outputs + 1, sizeof *p->out_bytes);
    p->steps = calloc(g->n_nodes + 1, sizeof *p->steps);
    if (!p->ptr || !p->owned || !p->inputs || !p->outputs || !p->out_bytes || !p->steps) goto nomem;
    for (uint32_t i = 0; i < g->n_operands; i++) {
        const berth_operand *o = &g->operands[i];
        size_t bytes = bk_numel(o) * sizeof(float);
        if (o->kind == BERTH_OPERAND_WEIGHT) {
            p->ptr[i] = w->data[o->weight];
        } else if (o->kind == BERTH_OPERAND_CONSTANT || o->kind == BERTH_OPERAND_VALUE) {
            if (!(p->ptr[i] = malloc(bytes ? bytes : 1))) goto nomem;
            p->owned[i] = 1;
            p->bytes += bytes;
            if (o->kind == BERTH_OPERAND_CONSTANT) memcpy(p->ptr[i], o->data, bytes);
        }
    }
    memcpy(p->inputs, g->inputs, sizeof *p->inputs * g->n_inputs);
    memcpy(p->outputs, g->outputs, sizeof *p->outputs * g->n_outputs);
    for (uint32_t i = 0; i < g->n_outputs; i++) p->out_bytes[i] = bk_numel(&g->operands[g->outputs[i]]) * sizeof(float);
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        const berth_node *nd = &g->nodes[k];
        step *s = &p->steps[k];
        const berth_operand *a = &g->operands[nd->inputs[0]];
        s->op = op_code(nd->op), s->a = nd->inputs[0], s->y = nd->outputs[0];
        s->b = nd->n_inputs > 1 ? nd->inputs[1] : 0;
        if (s->op == OP_MATMUL) s->m = (size_t)a->dims[0], s->k = (size_t)a->dims[1], s->n = (size_t)g->operands[s->b].dims[1];
        else s->n = bk_numel(a), s->k = s->op == OP_ADD ? bk_numel(&g->operands[s->b]) : 1;
    }
    *out = p;
    return BERTH_OK;
nomem:
    sk_free_plan(p);
    bk_errf(err, "skeleton: out of memory planning a graph of %u operands", g->n_operands);
    return BERTH_ERR_NOMEM;
}
BK_PLAN_VERB(sk_plan, sk_plan_native)

static void run_node(const berth_plan *p, const step *s) {
    const float *a = p->ptr[s->a], *b = p->ptr[s->b];
    float *y = p->ptr[s->y];
    if (s->op == OP_MATMUL) {
        for (size_t i = 0; i < s->m; i++)
            for (size_t j = 0; j < s->n; j++) {
                float acc = 0.0f;
                for (size_t q = 0; q < s->k; q++) acc += a[i * s->k + q] * b[q * s->n + j];
                y[i * s->n + j] = acc;
            }
    } else if (s->op == OP_ADD) {
        for (size_t i = 0; i < s->n; i++) y[i] = a[i] + b[i % s->k];
    } else {
        /* WebNN's relu is max(0, x): NaN stays NaN, so test for < 0 */
        for (size_t i = 0; i < s->n; i++) y[i] = a[i] < 0.0f ? 0.0f : a[i];
    }
}

/* No allocation here: inputs are read where the caller keeps them. */
static berth_status sk_run(berth_plan *p, const berth_tensor *in, uint32_t n_in, berth_tensor *out, uint32_t n_out,
                           berth_error *err) {
    if (n_in != p->n_inputs || n_out != p->n_outputs) {
        bk_errf(err, "skeleton: run: expected %u inputs and %u outputs, found %u and %u", p->n_inputs, p->n_outputs,
                n_in, n_out);
        return BERTH_ERR_INVALID;
    }
    for (uint32_t i = 0; i < n_in; i++) p->ptr[p->inputs[i]] = bk_tensor_at(in, i, p->tensor_size)->data;
    for (uint32_t k = 0; k < p->n_steps; k++) run_node(p, &p->steps[k]);
    for (uint32_t i = 0; i < n_out; i++)
        memcpy(bk_tensor_at(out, i, p->tensor_size)->data, p->ptr[p->outputs[i]], p->out_bytes[i]);
    return BERTH_OK;
}

static uint64_t sk_plan_bytes(const berth_plan *p) { return p->bytes; }

BK_BACKEND(.name = "skeleton", .version = "0.1", .open = sk_open, .close = sk_close, .caps = sk_caps,
           .supports_op = sk_supports_op, .supports_node = sk_supports_node, .upload_begin = sk_upload_begin,
           .upload_tensor = sk_upload_tensor, .upload_end = sk_upload_end, .plan = sk_plan, .run = sk_run,
           .free_plan = sk_free_plan, .free_weights = sk_free_weights, .weights_bytes = sk_weights_bytes,
           .plan_bytes = sk_plan_bytes, .option_decl_size = sizeof(berth_option_decl))
