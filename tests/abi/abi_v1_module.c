/* An ABI 1.0 backend, built against the frozen 1.0 header alone (no
 * include path reaches include/): the compatibility test runs the first
 * graph (examples/first: matmul, add, relu on f32) through it and
 * compares its output with the cpu backend's. Plain loops, no fusion. */
#include <stdlib.h>
#include <string.h>

#include "backend_v1_0.h"

#define MAX_OPS 64

struct berth_device {
    int unused;
};

struct berth_weights {
    uint32_t n;
    float **data; /* by upload id */
    uint64_t bytes;
};

typedef struct v1_node {
    int op; /* 0 matmul, 1 add, 2 relu */
    uint32_t in[2], out;
} v1_node;

typedef struct v1_shape {
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    size_t n;
} v1_shape;

struct berth_plan {
    uint32_t n_operands, n_nodes, n_inputs, n_outputs;
    v1_shape *shape;
    float **buf;     /* per operand: where its values are during run */
    char *owned;     /* per operand: buf is this plan's */
    v1_node *nodes;
    uint32_t *inputs, *outputs;
    uint64_t bytes;
};

static void say(berth_error *e, const char *msg) {
    size_t n = strlen(msg);
    if (n >= sizeof e->msg) n = sizeof e->msg - 1;
    memcpy(e->msg, msg, n);
    e->msg[n] = 0;
}

static int op_index(const char *op) {
    if (!strcmp(op, "matmul")) return 0;
    if (!strcmp(op, "add")) return 1;
    if (!strcmp(op, "relu")) return 2;
    return -1;
}

static berth_status v1_open(const berth_host_services *host, berth_device **out, berth_error *err) {
    /* A 1.0 module checks its options itself: it has none. */
    if (host->option_count(host->ctx) != 0) {
        say(err, "abi_v1 takes no options");
        return BERTH_ERR_INVALID;
    }
    *out = calloc(1, sizeof **out);
    if (!*out) {
        say(err, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    return BERTH_OK;
}

static void v1_close(berth_device *d) { free(d); }

static berth_status v1_caps(berth_device *d, berth_caps *c, berth_error *e) {
    (void)d, (void)e;
    if (c->struct_size >= offsetof(berth_caps, dtype_mask) + sizeof(uint32_t)) {
        c->device_name = "abi 1.0 loops";
        c->memory_bytes = 0;
        c->unified_memory = 1;
        c->dtype_mask = 1u << BERTH_DTYPE_F32;
    }
    return BERTH_OK;
}

static berth_status v1_supports(berth_device *d, const char *op, berth_dtype t, berth_error *e) {
    (void)d;
    if (op_index(op) >= 0 && t == BERTH_DTYPE_F32) return BERTH_OK;
    say(e, "abi_v1 runs matmul, add and relu on f32 only");
    return BERTH_ERR_UNSUPPORTED;
}

static berth_status v1_begin(berth_device *d, const berth_upload_info *info, berth_weights **out,
                             berth_error *e) {
    (void)d;
    berth_weights *w = calloc(1, sizeof *w);
    if (w) w->data = calloc(info->n_tensors ? info->n_tensors : 1, sizeof *w->data);
    if (!w || !w->data) {
        free(w);
        say(e, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    w->n = info->n_tensors;
    *out = w;
    return BERTH_OK;
}

static berth_status v1_tensor(berth_weights *w, const berth_weight_desc *d, void *data, uint32_t flags,
                              int *taken, berth_error *e) {
    (void)flags, (void)taken;
    if (d->id >= w->n || d->dtype != BERTH_DTYPE_F32) {
        say(e, "abi_v1 holds f32 weights only");
        return BERTH_ERR_UNSUPPORTED;
    }
    w->data[d->id] = malloc(d->bytes ? d->bytes : 1);
    if (!w->data[d->id]) {
        say(e, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    memcpy(w->data[d->id], data, d->bytes);
    w->bytes += d->bytes;
    return BERTH_OK;
}

static berth_status v1_end(berth_weights *w, berth_error *e) {
    (void)w, (void)e;
    return BERTH_OK;
}

static void v1_free_weights(berth_weights *w) {
    if (!w) return;
    for (uint32_t i = 0; i < w->n; i++) free(w->data[i]);
    free(w->data);
    free(w);
}

static void v1_free_plan(berth_plan *p) {
    if (!p) return;
    for (uint32_t i = 0; i < p->n_operands; i++)
        if (p->owned && p->owned[i]) free(p->buf[i]);
    free(p->shape);
    free(p->buf);
    free(p->owned);
    free(p->nodes);
    free(p->inputs);
    free(p->outputs);
    free(p);
}

static berth_status v1_plan(berth_device *d, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                            berth_error *e) {
    (void)d;
    berth_plan *p = calloc(1, sizeof *p);
    if (!p) goto nomem;
    p->n_operands = g->n_operands;
    p->n_nodes = g->n_nodes;
    p->n_inputs = g->n_inputs;
    p->n_outputs = g->n_outputs;
    p->shape = calloc(g->n_operands + 1, sizeof *p->shape);
    p->buf = calloc(g->n_operands + 1, sizeof *p->buf);
    p->owned = calloc(g->n_operands + 1, 1);
    p->nodes = calloc(g->n_nodes + 1, sizeof *p->nodes);
    p->inputs = calloc(g->n_inputs + 1, sizeof *p->inputs);
    p->outputs = calloc(g->n_outputs + 1, sizeof *p->outputs);
    if (!p->shape || !p->buf || !p->owned || !p->nodes || !p->inputs || !p->outputs) goto nomem;
    memcpy(p->inputs, g->inputs, sizeof *p->inputs * g->n_inputs);
    memcpy(p->outputs, g->outputs, sizeof *p->outputs * g->n_outputs);
    for (uint32_t i = 0; i < g->n_operands; i++) {
        const berth_operand *o = &g->operands[i];
        if (o->dtype != BERTH_DTYPE_F32) {
            say(e, "abi_v1 runs f32 operands only");
            v1_free_plan(p);
            return BERTH_ERR_UNSUPPORTED;
        }
        v1_shape *s = &p->shape[i];
        s->rank = o->rank;
        s->n = 1;
        for (uint32_t k = 0; k < o->rank; k++) {
            s->dims[k] = o->dims[k];
            s->n *= (size_t)o->dims[k];
        }
        if (o->kind == BERTH_OPERAND_WEIGHT) {
            p->buf[i] = o->weight < w->n ? w->data[o->weight] : NULL;
        } else if (o->kind != BERTH_OPERAND_INPUT) {
            p->buf[i] = calloc(s->n ? s->n : 1, sizeof(float));
            if (!p->buf[i]) goto nomem;
            p->owned[i] = 1;
            p->bytes += s->n * sizeof(float);
            if (o->kind == BERTH_OPERAND_CONSTANT && o->data) memcpy(p->buf[i], o->data, o->bytes);
        }
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const berth_node *nd = &g->nodes[i];
        int op = op_index(nd->op);
        uint32_t want = op == 2 ? 1 : 2;
        if (op < 0 || nd->n_inputs != want || nd->n_outputs != 1) {
            say(e, "abi_v1 runs matmul, add and relu only");
            v1_free_plan(p);
            return BERTH_ERR_UNSUPPORTED;
        }
        if (op == 0 && (p->shape[nd->inputs[0]].rank != 2 || p->shape[nd->inputs[1]].rank != 2)) {
            say(e, "abi_v1 runs matmul of rank 2 only");
            v1_free_plan(p);
            return BERTH_ERR_UNSUPPORTED;
        }
        p->nodes[i].op = op;
        p->nodes[i].in[0] = nd->inputs[0];
        p->nodes[i].in[1] = want == 2 ? nd->inputs[1] : 0;
        p->nodes[i].out = nd->outputs[0];
    }
    *out = p;
    return BERTH_OK;
nomem:
    v1_free_plan(p);
    say(e, "out of memory");
    return BERTH_ERR_NOMEM;
}

/* Element k of operand `a` read at output index `k` of shape `out`, with
 * numpy broadcasting (dims aligned from the right). */
static float bcast(const v1_shape *a, const float *ad, const v1_shape *out, size_t k) {
    size_t off = 0, stride = 1;
    for (uint32_t d = 0; d < out->rank; d++) {
        uint32_t od = out->rank - 1 - d;
        size_t idx = (size_t)(k % (size_t)out->dims[od]);
        k /= (size_t)out->dims[od];
        if (d < a->rank) {
            uint32_t ad_i = a->rank - 1 - d;
            if (a->dims[ad_i] != 1) off += idx * stride;
            stride *= (size_t)a->dims[ad_i];
        }
    }
    return ad[off];
}

static berth_status v1_run(berth_plan *p, const berth_tensor *in, uint32_t ni, berth_tensor *out, uint32_t no,
                           berth_error *e) {
    if (ni != p->n_inputs || no != p->n_outputs) {
        say(e, "wrong number of inputs or outputs");
        return BERTH_ERR_INVALID;
    }
    for (uint32_t i = 0; i < ni; i++) p->buf[p->inputs[i]] = in[i].data;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const v1_node *n = &p->nodes[i];
        const v1_shape *so = &p->shape[n->out];
        float *y = p->buf[n->out];
        const float *a = p->buf[n->in[0]], *b = p->buf[n->in[1]];
        if (n->op == 0) {
            int64_t M = p->shape[n->in[0]].dims[0], K = p->shape[n->in[0]].dims[1];
            int64_t N = p->shape[n->in[1]].dims[1];
            for (int64_t r = 0; r < M; r++)
                for (int64_t c = 0; c < N; c++) {
                    float acc = 0;
                    for (int64_t k = 0; k < K; k++) acc += a[r * K + k] * b[k * N + c];
                    y[r * N + c] = acc;
                }
        } else if (n->op == 1) {
            for (size_t k = 0; k < so->n; k++)
                y[k] = bcast(&p->shape[n->in[0]], a, so, k) + bcast(&p->shape[n->in[1]], b, so, k);
        } else {
            for (size_t k = 0; k < so->n; k++) y[k] = a[k] > 0 ? a[k] : 0;
        }
    }
    /* Every output, a computed value or one passed through, is copied. */
    for (uint32_t o = 0; o < no; o++) {
        const v1_shape *s = &p->shape[p->outputs[o]];
        if (out[o].bytes != s->n * sizeof(float)) {
            say(e, "output buffer of the wrong size");
            return BERTH_ERR_INVALID;
        }
        if (s->n) memcpy(out[o].data, p->buf[p->outputs[o]], s->n * sizeof(float));
    }
    return BERTH_OK;
}

static uint64_t v1_wbytes(const berth_weights *w) { return w->bytes; }
static uint64_t v1_pbytes(const berth_plan *p) { return p->bytes; }

static const berth_backend table = {
    .abi_version = 1,
    .struct_size = sizeof(berth_backend), /* the 1.0 table, smaller than a 1.1 one */
    .name = "abi_v1",
    .version = "1.0-frozen",
    .open = v1_open,
    .close = v1_close,
    .caps = v1_caps,
    .supports_op = v1_supports,
    .upload_begin = v1_begin,
    .upload_tensor = v1_tensor,
    .upload_end = v1_end,
    .plan = v1_plan,
    .run = v1_run,
    .free_plan = v1_free_plan,
    .free_weights = v1_free_weights,
    .weights_bytes = v1_wbytes,
    .plan_bytes = v1_pbytes,
};

#ifdef ABI_V1_SHORT_TABLE
/* A 1.0 table that ends before plan_profile: shorter than ABI 1.0. */
static berth_backend short_table;
#endif

BERTH_BACKEND_EXPORT const berth_backend *berth_backend_entry(uint32_t host_abi_version,
                                                              const berth_host_services *host,
                                                              berth_error *why) {
    (void)host;
    if (host_abi_version < 1) {
        say(why, "abi_v1 needs a host of ABI 1.0 or later");
        return NULL;
    }
#ifdef ABI_V1_SHORT_TABLE
    short_table = table;
    short_table.struct_size = (uint32_t)offsetof(berth_backend, plan_profile);
    return &short_table;
#else
    return &table;
#endif
}
