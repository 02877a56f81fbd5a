/* Building the plan for one (lane, bucket): specialize the graph to the
 * bucket's dims, fuse what the backend supports, let the backend plan it,
 * and allocate the host buffers a run needs, so a warm run allocates
 * nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "dtype.h"
#include "arena.h"
#include "bk.h"
#include "cost.h"
#include "cache.h"
#include "executor_internal.h"
#include "partition.h"
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
 * backend refuses a node it made, with the op of the graph each starts
 * from (with split = on, the backend that runs that op decides). */
static const struct fused_op {
    const char *op, *anchor;
} fused_ops[] = {{"berth.matmulEpilogue", "matmul"},
                 {"berth.attention", "matmul"},
                 {"layerNormalization", "reduceMean"},
                 {"berth.elementwise", "add"},
                 {"berth.conv2dEpilogue", "conv2d"},
                 {"berth.matmulQuantized", "matmul"},
                 {"berth.gatherQuantized", "gather"}};
#define N_FUSED_OPS (sizeof fused_ops / sizeof fused_ops[0])

typedef struct fuse_ctx {
    berth_executor *ex;
    unsigned disabled; /* bit k: fused_ops[k] is not to be made */
} fuse_ctx;

static int supports_op_on(berth_executor *ex, uint32_t k, const char *op, berth_dtype dtype) {
    const exec_backend *b = &ex->be[k];
    berth_error e;
    berth_backend_msg_reset(&e);
    berth_status st = b->mod.be->supports_op(b->dev, op, dtype, &e);
    /* Only the answer matters to fusion; the message is dropped. */
    return berth_backend_result(st, b->mod.be->name, "supports_op", &e, &e) == BERTH_OK;
}

/* Fusion's cheap pre-filter: supports_op on (op, dtype). The fused nodes
 * are then asked supports_node like every other (berth_node_check). With
 * split = on, a fused op is made only where the first backend that runs
 * the op it starts from runs the fused op too, so fusing moves no work
 * to another backend; any other op, where some backend runs it. */
static int backend_supports(void *ctx, const char *op, berth_dtype dtype) {
    fuse_ctx *fc = ctx;
    berth_executor *ex = fc->ex;
    const char *anchor = NULL;
    for (unsigned k = 0; k < N_FUSED_OPS; k++)
        if (!strcmp(op, fused_ops[k].op)) {
            if (fc->disabled & (1u << k)) return 0;
            anchor = fused_ops[k].anchor;
        }
    if (!ex->split) return supports_op_on(ex, 0, op, dtype);
    for (uint32_t k = 0; k < ex->n_be; k++)
        /* the op a fused one starts from reads f32 (a dequantized table) */
        if (supports_op_on(ex, k, anchor ? anchor : op, anchor ? BERTH_DTYPE_F32 : dtype))
            return anchor ? supports_op_on(ex, k, op, dtype) : 1;
    return 0;
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

berth_status berth_node_check(berth_executor *ex, uint32_t k, const char *graph_path,
                              const berth_graph_desc *d, uint32_t i, berth_error *err) {
    const berth_backend *be = ex->be[k].mod.be;
    berth_device *dev = ex->be[k].dev;
    const berth_node *nd = &d->nodes[i];
    berth_dtype t = nd->n_inputs ? d->operands[nd->inputs[0]].dtype : d->operands[nd->outputs[0]].dtype;
    berth_error e;
    berth_backend_msg_reset(&e);
    berth_status st;
    const char *verb;
    if (berth_backend_has_supports_node(be)) {
        verb = "supports_node";
        st = be->supports_node(dev, d, i, &e);
    } else {
        verb = "supports_op";
        st = be->supports_op(dev, nd->op, t, &e);
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

/* The weight operand node i of d reads that backend k was not given, or
 * -1: with split = on a backend holds only what its first-bucket
 * subgraphs read. */
static int64_t missing_weight(const berth_executor *ex, uint32_t k, const berth_graph_desc *d,
                              uint32_t i) {
    const berth_node *nd = &d->nodes[i];
    const uint32_t *wid = ex->be[k].weight_id;
    for (uint32_t j = 0; j < nd->n_inputs; j++) {
        const berth_operand *o = &d->operands[nd->inputs[j]];
        if (o->kind == BERTH_OPERAND_WEIGHT && wid && wid[o->weight] == UINT32_MAX) return nd->inputs[j];
    }
    for (uint32_t a = 0; a < nd->n_attrs; a++) {
        const berth_attr *at = &nd->attrs[a];
        size_t n = at->type == BERTH_ATTR_OPERAND ? 1 : at->type == BERTH_ATTR_OPERANDS ? at->count : 0;
        for (size_t j = 0; j < n; j++) {
            uint32_t o = at->type == BERTH_ATTR_OPERAND ? (uint32_t)at->i : (uint32_t)at->ints[j];
            if (d->operands[o].kind == BERTH_OPERAND_WEIGHT && wid && wid[d->operands[o].weight] == UINT32_MAX)
                return o;
        }
    }
    return -1;
}

int berth_node_runs_on(berth_executor *ex, uint32_t k, const berth_graph_desc *d, uint32_t i, int held) {
    berth_error e;
    if (berth_node_check(ex, k, "", d, i, &e) != BERTH_OK) return 0;
    return !held || missing_weight(ex, k, d, i) < 0;
}

typedef struct part_ctx {
    berth_executor *ex;
    int held;
} part_ctx;

static int part_supports(void *ctx, uint32_t k, const berth_graph_desc *d, uint32_t i) {
    part_ctx *pc = ctx;
    return berth_node_runs_on(pc->ex, k, d, i, pc->held);
}

/* The backend's estimate of node i (ABI 1.3), or the host's from the
 * node's work; an error or a time that is not a positive number is no
 * estimate. */
static double part_node_ns(void *ctx, uint32_t k, const berth_graph_desc *d, uint32_t i) {
    part_ctx *pc = ctx;
    exec_backend *b = &pc->ex->be[k];
    berth_node_cost c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    berth_node_work(d, i, &c.flops, &c.bytes);
    if (berth_backend_has_node_cost(b->mod.be)) {
        berth_error e;
        berth_backend_msg_reset(&e);
        if (b->mod.be->node_cost(b->dev, d, i, &c, &e) == BERTH_OK && c.node_ns > 0 && c.node_ns < 1e15)
            return c.node_ns;
    }
    return c.flops * BERTH_COST_NS_PER_FLOP + c.bytes * BERTH_COST_NS_PER_BYTE;
}

/* Why no backend runs node i: each backend's reason, in `use` order. */
static berth_status split_refusal(berth_executor *ex, const char *path, const berth_graph_desc *d,
                                  uint32_t i, int held, berth_error *err) {
    char why[BERTH_ERROR_CAP];
    size_t off = 0;
    why[0] = 0;
    berth_status st = BERTH_ERR_UNSUPPORTED;
    for (uint32_t k = 0; k < ex->n_be && off < sizeof why; k++) {
        berth_error e;
        berth_status ks = berth_node_check(ex, k, path, d, i, &e);
        int64_t w = held && ks == BERTH_OK ? missing_weight(ex, k, d, i) : -1;
        if (ks != BERTH_OK && ks != BERTH_ERR_UNSUPPORTED) st = ks; /* a fault, not a refusal */
        if (ks == BERTH_OK && w < 0) continue;
        if (k == 0) /* the first message names the node; the others need only their reason */
            off += (size_t)snprintf(why + off, sizeof why - off, "%s", ks != BERTH_OK ? e.msg : "");
        const char *reason = ks != BERTH_OK ? strstr(e.msg, "): ") : NULL;
        if (ks == BERTH_OK)
            off += (size_t)snprintf(why + off, sizeof why - off,
                                    "%s%s: node '%s' reads weight '%s', which this backend was not "
                                    "given (the first bucket's partition read it elsewhere)",
                                    off ? "; " : "", ex->be[k].item, d->nodes[i].name,
                                    d->operands[w].name);
        else if (k)
            off += (size_t)snprintf(why + off, sizeof why - off, "; %s: %s", ex->be[k].item,
                                    reason ? reason + 3 : e.msg);
    }
    berth_errorf(err, "no backend of use runs it: %s", why);
    return st;
}

/* 1 when every backend p gives nodes to holds the weights they read. */
static int weights_held(berth_executor *ex, const berth_graph_desc *d, const berth_partition *p) {
    for (uint32_t g = 0; g < p->n_subgraphs; g++)
        for (uint32_t j = 0; j < p->subgraphs[g].n_nodes; j++)
            if (missing_weight(ex, p->subgraphs[g].backend, d, p->subgraphs[g].nodes[j]) >= 0) return 0;
    return 1;
}

/* Partition d among the backends (by the cost model with split = on); a
 * refusal names every backend's reason. */
static berth_status partition(berth_executor *ex, const char *path, const berth_graph_desc *d,
                              int held, berth_partition *p, uint32_t *failed, berth_error *err) {
    part_ctx pc = {ex, held};
    double region_ns[BERTH_MAX_USE], crossing_ns_per_byte[BERTH_MAX_USE];
    for (uint32_t k = 0; k < ex->n_be; k++) {
        region_ns[k] = ex->be[k].region_ns;
        crossing_ns_per_byte[k] = ex->be[k].crossing_ns_per_byte;
    }
    berth_part_costs costs = {part_node_ns, &pc, region_ns, crossing_ns_per_byte};
    const berth_part_costs *cm = ex->split == BERTH_SPLIT_ON ? &costs : NULL;
    if (cm && held) {
        /* Partitioned as the weights were placed, the plan usually finds
         * each node's weights where the cost model put the node; when it
         * does not (a bucket whose shapes move a node), it is partitioned
         * again among the backends holding them, and keeps the first
         * estimate of node by node, which --explain compares against. */
        pc.held = 0;
        berth_status st = berth_partition_build(d, ex->n_be, part_supports, &pc, cm, p, failed, err);
        if (st != BERTH_OK || weights_held(ex, d, p)) {
            if (st == BERTH_ERR_UNSUPPORTED) st = split_refusal(ex, path, d, *failed, 0, err);
            return st;
        }
        uint32_t first_subgraphs = p->first_subgraphs;
        double first_ns = p->first_ns;
        berth_partition_free(p);
        pc.held = 1;
        st = berth_partition_build(d, ex->n_be, part_supports, &pc, cm, p, failed, err);
        if (st == BERTH_OK) {
            p->first_subgraphs = first_subgraphs;
            p->first_ns = first_ns;
        }
        if (st == BERTH_ERR_UNSUPPORTED) st = split_refusal(ex, path, d, *failed, held, err);
        return st;
    }
    berth_status st = berth_partition_build(d, ex->n_be, part_supports, &pc, cm, p, failed, err);
    if (st == BERTH_ERR_UNSUPPORTED) st = split_refusal(ex, path, d, *failed, held, err);
    return st;
}

/* Mark in need the weights each backend's subgraphs of d read; a graph
 * no backend runs fails with every backend's reason. */
static berth_status mark_weights(berth_executor *ex, const lane *ln, const berth_graph_desc *d, uint8_t *need,
                                 berth_error *err) {
    berth_partition p;
    uint32_t failed;
    berth_status st = partition(ex, ln->g->path, d, 0, &p, &failed, err);
    if (st != BERTH_OK) return st;
    for (uint32_t k = 0; k < ex->n_be; k++)
        for (uint32_t o = 0; o < d->n_operands; o++)
            if (p.reads_weight[(size_t)k * d->n_operands + o])
                need[(size_t)k * ex->n_weights + d->operands[o].weight] = 1;
    berth_partition_free(&p);
    return BERTH_OK;
}

berth_status berth_split_weights(berth_executor *ex, lane *ln, uint8_t *need, berth_error *err) {
    /* lane 0's first bucket is kept unfused for its first plan; another
     * lane's is fused in place once its unfused partition is marked */
    int keep = ln == &ex->lanes[0];
    berth_spec *spec = ln->first_spec ? ln->first_spec : berth_lane_specialize(ln, 0, err);
    if (!spec) return BERTH_ERR_INVALID;
    if (keep) ln->first_spec = spec;
    /* A node no backend takes unfused may be taken fused (a 4-bit
     * dequantizeLinear inside berth.matmulQuantized): then the fused
     * partition alone decides, and the unfused refusal stands if it
     * fails too. */
    berth_status unfused = mark_weights(ex, ln, &spec->desc, need, err), st = unfused;
    berth_spec *fused = st != BERTH_OK && st != BERTH_ERR_UNSUPPORTED ? NULL
                        : keep ? berth_lane_specialize(ln, 0, err) : spec;
    if ((st == BERTH_OK || st == BERTH_ERR_UNSUPPORTED) && !fused) st = BERTH_ERR_INVALID;
    if (fused) {
        fuse_ctx fc = {ex, 0};
        berth_error fe;
        berth_fuse(fused, backend_supports, &fc);
        st = mark_weights(ex, ln, &fused->desc, need, unfused == BERTH_OK ? err : &fe);
        /* the plan will unfuse what no backend takes */
        if (st != BERTH_OK && (st == BERTH_ERR_UNSUPPORTED || unfused != BERTH_OK)) st = unfused;
    }
    if (fused && fused != ln->first_spec) berth_spec_free(fused);
    if (!keep && spec != fused) berth_spec_free(spec);
    return st;
}

/* Specialize (ln, b), fuse, and find where every node runs: on the one
 * backend (split = off: every node asked), or partitioned among them
 * (split = on, into *part). A fused node no backend takes does not fail
 * the bucket: it is specialized again with that fusion turned off. A
 * node of the graph itself that is refused stops here, before plan() is
 * called. */
static berth_spec *specialize_checked(berth_executor *ex, lane *ln, uint32_t b, berth_partition *part,
                                      int check_limit, berth_status *st, berth_error *err) {
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
        /* Before any backend is asked about the nodes, so a bucket too
         * large for the limit is refused by the limit, naming the plan's
         * size and its largest tensor, and costs nothing but its
         * specialization; a backend asked first would see only a shape it
         * cannot address (a 4 GiB tensor on a 32-bit machine). */
        if (check_limit && (*st = berth_limit_check_plan(ex, ln, b, spec, err)) != BERTH_OK) {
            berth_spec_free(spec);
            return NULL;
        }
        uint32_t i = 0;
        *st = BERTH_OK;
        if (ex->split) {
            *st = partition(ex, ln->g->path, &spec->desc, 1, part, &i, err);
        } else {
            for (i = 0; i < spec->desc.n_nodes; i++)
                if ((*st = berth_node_check(ex, 0, ln->g->path, &spec->desc, i, err)) != BERTH_OK) break;
        }
        if (*st == BERTH_OK) return spec;
        /* The partitioner names the node only when none takes it. */
        int named = ex->split ? *st == BERTH_ERR_UNSUPPORTED : i < spec->desc.n_nodes;
        unsigned k = 0;
        while (named && k < N_FUSED_OPS && strcmp(spec->desc.nodes[i].op, fused_ops[k].op)) k++;
        if (!named || k == N_FUSED_OPS || (fc.disabled & (1u << k))) {
            berth_spec_free(spec);
            return NULL;
        }
        berth_logf(&ex->log, BERTH_LOG_INFO, "%s: not fusing to %s: %s", ln->g->path, fused_ops[k].op, err->msg);
        fc.disabled |= 1u << k;
        berth_spec_free(spec);
    }
}

berth_status berth_check_fused(berth_executor *ex, lane *ln, berth_error *err) {
    berth_spec *unfused = ln->first_spec;
    ln->first_spec = NULL; /* specialize afresh: the kept one stays unfused */
    berth_status st;
    berth_spec *spec = specialize_checked(ex, ln, 0, NULL, 0, &st, err);
    ln->first_spec = unfused;
    if (spec) berth_spec_free(spec);
    return st;
}

berth_status berth_lane_first_steps(berth_executor *ex, lane *ln, berth_step_fn fn, void *ctx, berth_error *err) {
    berth_spec *unfused = ln->first_spec;
    ln->first_spec = NULL;
    berth_partition part;
    memset(&part, 0, sizeof part);
    plan_slot s;
    memset(&s, 0, sizeof s);
    berth_status st;
    s.spec = specialize_checked(ex, ln, 0, &part, 0, &st, err);
    ln->first_spec = unfused;
    if (!s.spec) return st;
    s.n_steps = ex->split ? part.n_subgraphs : 1;
    s.steps = calloc(s.n_steps, sizeof *s.steps);
    st = !s.steps ? BERTH_ERR_NOMEM : ex->split ? berth_split_cut(ex, &s, &part, err) : BERTH_OK;
    if (st == BERTH_ERR_NOMEM) berth_errorf(err, "out of memory preparing the weights of %s", ln->g->path);
    if (st == BERTH_OK && !ex->split) s.steps[0].desc = s.spec->desc;
    for (uint32_t i = 0; st == BERTH_OK && i < s.n_steps; i++) {
        st = fn(ctx, s.steps[i].backend, &s.steps[i].desc, err);
        if (st != BERTH_OK) berth_step_error(&s, i, err);
    }
    berth_arena_free(s.cut);
    free(s.steps);
    berth_partition_free(&part);
    berth_spec_free(s.spec);
    return st;
}

static size_t tensor_bytes(const berth_operand *o, int *ok) {
    int64_t n = 1;
    for (uint32_t d = 0; d < o->rank; d++) n = berth_mul_checked(n, o->dims[d], ok);
    return berth_dtype_bytes(o->dtype, (uint64_t)n, ok);
}

void berth_tensor_describe(berth_tensor *t, const berth_operand *o, size_t bytes) {
    t->dtype = o->dtype;
    t->rank = o->rank;
    memcpy(t->dims, o->dims, sizeof t->dims);
    t->bytes = bytes;
}

static const berth_attr *find_attr(const berth_node *n, const char *key) {
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].key, key)) return &n->attrs[i];
    return NULL;
}

/* The ops that read an index per element from one operand: the operand
 * indexed, the one holding indices, and the axis they index (-1: the
 * node's axis option, default 0). shown is the op the graph wrote:
 * berth.gatherQuantized is a gather fusion made, so a bad index is
 * reported alike whether or not the backend took the fused node. */
static const struct index_op {
    const char *op, *shown;
    uint32_t table, indices;
    int64_t axis;
} index_ops[] = {{"gather", "gather", 0, 1, -1},
                 {"gatherElements", "gatherElements", 0, 1, -1},
                 {"berth.gatherQuantized", "gather", 0, 1, 0}};

/* Record every graph input that a node of index_ops reads as indices,
 * with the size of the axis it indexes, so run() refuses an
 * out-of-range index the same way on every backend instead of letting
 * one clamp it and another read out of bounds. */
static berth_status find_index_checks(const lane *ln, plan_slot *s, berth_error *err) {
    const berth_graph_desc *d = &s->spec->desc;
    for (uint32_t i = 0; i < d->n_nodes; i++) {
        const berth_node *n = &d->nodes[i];
        const struct index_op *io = NULL;
        for (size_t k = 0; k < sizeof index_ops / sizeof index_ops[0]; k++)
            if (!strcmp(n->op, index_ops[k].op)) io = &index_ops[k];
        if (!io || n->n_inputs <= io->indices) continue;
        uint32_t input = UINT32_MAX;
        for (uint32_t k = 0; k < d->n_inputs; k++)
            if (d->inputs[k] == n->inputs[io->indices]) input = k;
        if (input == UINT32_MAX) continue;
        const berth_operand *table = &d->operands[n->inputs[io->table]];
        const berth_attr *a = io->axis < 0 ? find_attr(n, "axis") : NULL;
        int64_t axis = io->axis >= 0 ? io->axis : a ? a->i : 0;
        if (axis < 0) axis += table->rank;
        if (axis < 0 || axis >= (int64_t)table->rank) continue; /* refused by inference */
        int64_t bound = table->dims[axis];
        if (ln->pad[input] < -(double)bound || ln->pad[input] >= (double)bound) {
            berth_errorf(err, "input '%s' is padded with %g, outside [%lld, %lld) for the %s at node '%s'",
                         d->operands[n->inputs[io->indices]].name, ln->pad[input], (long long)-bound,
                         (long long)bound, io->shown, n->name);
            return BERTH_ERR_INVALID;
        }
        struct index_check *nc = realloc(s->index_checks, sizeof *nc * (s->n_index_checks + 1));
        if (!nc) {
            berth_errorf(err, "out of memory");
            return BERTH_ERR_NOMEM;
        }
        s->index_checks = nc;
        nc[s->n_index_checks++] = (struct index_check){input, bound, n->name, io->shown};
    }
    return BERTH_OK;
}

/* split = off: one step, the whole graph on the one backend, handed the
 * slot's own input views and output buffers. */
static berth_status one_step(plan_slot *s) {
    const berth_graph_desc *d = &s->spec->desc;
    plan_step *ps = &s->steps[0];
    ps->backend = 0;
    ps->desc = *d;
    ps->n_in = d->n_inputs;
    ps->n_out = d->n_outputs;
    ps->in = s->in_view;
    ps->out = s->out_full;
    ps->in_names = calloc(d->n_inputs + 1, sizeof *ps->in_names);
    ps->out_names = calloc(d->n_outputs + 1, sizeof *ps->out_names);
    ps->in_crosses = calloc(d->n_inputs + 1, 1);
    ps->out_crosses = calloc(d->n_outputs + 1, 1);
    if (!ps->in_names || !ps->out_names || !ps->in_crosses || !ps->out_crosses) return BERTH_ERR_NOMEM;
    for (uint32_t j = 0; j < d->n_inputs; j++) ps->in_names[j] = d->operands[d->inputs[j]].name;
    for (uint32_t j = 0; j < d->n_outputs; j++) ps->out_names[j] = d->operands[d->outputs[j]].name;
    return BERTH_OK;
}

/* Plan every step on its backend. */
static berth_status plan_steps(berth_executor *ex, plan_slot *s, berth_error *err) {
    for (uint32_t i = 0; i < s->n_steps; i++) {
        plan_step *ps = &s->steps[i];
        const exec_backend *be = &ex->be[ps->backend];
        berth_backend_msg_reset(err);
        berth_status st = be->mod.be->plan(be->dev, be->w, &ps->desc, &ps->plan, err);
        st = berth_backend_result(st, be->mod.be->name, "plan", err, err);
        if (st != BERTH_OK) {
            ps->plan = NULL;
            berth_step_error(s, i, err);
            return st;
        }
    }
    return BERTH_OK;
}

void berth_step_error(const plan_slot *s, uint32_t i, berth_error *err) {
    if (s->n_steps < 2) return; /* the whole graph: nothing to say */
    const plan_step *ps = &s->steps[i];
    char msg[BERTH_ERROR_CAP];
    snprintf(msg, sizeof msg, "%s", err->msg);
    berth_errorf(err, "subgraph %u of %u (%u nodes, '%s' to '%s'): %s", i + 1, s->n_steps, ps->desc.n_nodes,
                 ps->desc.n_nodes ? ps->desc.nodes[0].name : "",
                 ps->desc.n_nodes ? ps->desc.nodes[ps->desc.n_nodes - 1].name : "", msg);
}

/* The slot's bucket-sized buffers: an input with a dyn dim gets one to
 * be padded into, every output one the plan writes. */
static berth_status io_buffers(const lane *ln, plan_slot *s, berth_error *err) {
    const berth_graph_desc *d = &s->spec->desc;
    for (uint32_t i = 0; i < ln->g->n_inputs + ln->g->n_outputs; i++) {
        int input = i < ln->g->n_inputs;
        uint32_t j = input ? i : i - ln->g->n_inputs;
        const berth_operand *o = &d->operands[input ? d->inputs[j] : d->outputs[j]];
        berth_tensor *t = input ? &s->in_pad[j] : &s->out_full[j];
        int ok = 1, dynamic = !input;
        size_t bytes = tensor_bytes(o, &ok);
        if (!ok) {
            berth_errorf(err, "%s: a tensor of the bucket is too large to address", ln->g->path);
            return BERTH_ERR_INVALID;
        }
        berth_tensor_describe(t, o, bytes);
        for (uint32_t k = 0; input && k < ln->in_rank[j]; k++) dynamic |= ln->in_sym[j * BERTH_MAX_RANK + k] >= 0;
        if (!dynamic) continue;
        t->data = malloc(bytes ? bytes : 1);
        if (!t->data) {
            berth_errorf(err, "out of memory preparing a plan of %s", ln->g->path);
            return BERTH_ERR_NOMEM;
        }
        t->capacity = bytes;
        s->host_bytes += bytes;
    }
    return BERTH_OK;
}

/* Shape inference once at the bucket's own values: it sizes the arena a
 * padded run infers its dims in (smaller sizes need no more in any graph
 * berth has met, so those runs allocate nothing), and it must agree with
 * the specialization. A bucket with every dyn dim at 1 pads nothing and
 * needs none of it. */
static berth_status trim_shapes(const lane *ln, plan_slot *s, uint32_t b, berth_error *err) {
    const berth_graph *g = ln->g;
    uint32_t ns = g->n_syms;
    const int64_t *bv = ln->bucket_vals + (size_t)b * ns;
    int can_pad = 0;
    for (uint32_t k = 0; k < ns; k++) can_pad |= bv[k] > 1;
    if (!can_pad) return BERTH_OK;
    if (berth_specialize_shapes(g, bv, s->trim_arena, s->trim_rank, s->trim_dims, err)) return BERTH_ERR_INTERNAL;
    for (uint32_t i = 0; i < g->n_outputs; i++)
        if (s->trim_rank[i] != s->out_full[i].rank ||
            memcmp(&s->trim_dims[(size_t)i * BERTH_MAX_RANK], s->out_full[i].dims, sizeof(int64_t) * s->trim_rank[i])) {
            berth_errorf(err, "%s: output '%s': shape inference alone disagrees with the bucket's plan", g->path,
                         g->values[g->outputs[i]].name);
            return BERTH_ERR_INTERNAL;
        }
    memcpy(s->trim_asked, bv, sizeof *bv * ns);
    berth_arena_reset(s->trim_arena); /* into one block now, not on a run */
    s->host_bytes += berth_arena_bytes(s->trim_arena);
    return BERTH_OK;
}

berth_status berth_slot_build(berth_executor *ex, lane *ln, plan_slot *s, uint32_t b, berth_error *err) {
    const berth_graph *g = ln->g;
    if (s->n_steps) return BERTH_OK;
    berth_status st = BERTH_ERR_NOMEM;
    uint32_t ni = g->n_inputs, no = g->n_outputs;
    berth_partition part;
    memset(&part, 0, sizeof part);
    /* The memory limit is checked there, before any buffer of the plan
     * exists. */
    s->spec = specialize_checked(ex, ln, b, &part, 1, &st, err);
    if (!s->spec) return st;

    s->in_pad = calloc(ni ? ni : 1, sizeof *s->in_pad);
    s->in_view = calloc(ni ? ni : 1, sizeof *s->in_view);
    s->out_full = calloc(no ? no : 1, sizeof *s->out_full);
    uint32_t ns = g->n_syms;
    s->trim_want = calloc(ns + 1, sizeof *s->trim_want);
    s->trim_asked = calloc(ns + 1, sizeof *s->trim_asked);
    s->trim_rank = calloc(no + 1, sizeof *s->trim_rank);
    s->trim_dims = calloc((size_t)(no + 1) * BERTH_MAX_RANK, sizeof *s->trim_dims);
    s->pad_warned = calloc(no + 1, sizeof *s->pad_warned);
    s->trim_arena = berth_arena_new();
    if (!s->in_pad || !s->in_view || !s->out_full || !s->trim_want || !s->trim_asked || !s->trim_rank ||
        !s->trim_dims || !s->pad_warned || !s->trim_arena)
        goto nomem;

    if ((st = io_buffers(ln, s, err)) != BERTH_OK || (st = trim_shapes(ln, s, b, err)) != BERTH_OK) goto fail;
    if ((st = find_index_checks(ln, s, err)) != BERTH_OK) goto fail;

    uint32_t n_steps = ex->split ? part.n_subgraphs : 1;
    s->steps = calloc(n_steps, sizeof *s->steps);
    if (!s->steps) goto nomem;
    s->n_steps = n_steps;
    st = ex->split ? berth_split_cut(ex, s, &part, err) : one_step(s);
    if (st == BERTH_ERR_NOMEM && !ex->split) goto nomem;
    if (st == BERTH_OK) {
        berth_cache_programs_in(ex, ln, b, s);
        st = plan_steps(ex, s, err);
        if (st == BERTH_OK) berth_cache_programs_out(ex, ln, b, s);
    }
    /* The plans are built before the crossing tensors get buffers: a
     * tensor its writer's plan exports needs none. */
    if (st == BERTH_OK && ex->split) st = berth_split_buffers(ex, s, &part, err);
    if (st != BERTH_OK) goto fail;
    berth_partition_free(&part);
    /* The backends may hold more than the estimate (packed weights,
     * scratch): what they report now must fit too. */
    if ((st = berth_limit_check_built(ex, ln, b, err)) != BERTH_OK) goto fail;
    return BERTH_OK;
nomem:
    berth_errorf(err, "out of memory preparing a plan of %s", g->path);
    st = BERTH_ERR_NOMEM; /* st held the last check's BERTH_OK */
fail:
    berth_partition_free(&part);
    berth_slot_free(ex, s, ni, no);
    return st;
}

void berth_slot_free(berth_executor *ex, plan_slot *s, uint32_t n_inputs, uint32_t n_outputs) {
    for (uint32_t i = 0; s->steps && i < s->n_steps; i++) {
        plan_step *ps = &s->steps[i];
        if (ps->plan) ex->be[ps->backend].mod.be->free_plan(ps->plan);
        if (!s->cut) { /* one step: its name arrays are its own, the tensors the slot's */
            free(ps->in_names);
            free(ps->out_names);
            free(ps->in_crosses);
            free(ps->out_crosses);
        }
    }
    free(s->steps);
    if (s->in_pad)
        for (uint32_t i = 0; i < n_inputs; i++) free(s->in_pad[i].data);
    if (s->out_full)
        for (uint32_t i = 0; i < n_outputs; i++) free(s->out_full[i].data);
    free(s->cross);
    if (s->cut) berth_arena_free(s->cut);
    free(s->out_src);
    free(s->in_pad);
    free(s->in_view);
    free(s->out_full);
    free(s->trim_want);
    free(s->trim_asked);
    free(s->trim_rank);
    free(s->trim_dims);
    free(s->pad_warned);
    if (s->trim_arena) berth_arena_free(s->trim_arena);
    free(s->index_checks);
    if (s->spec) berth_spec_free(s->spec);
    memset(s, 0, sizeof *s);
}
