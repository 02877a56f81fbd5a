/* plan(): validate a concrete graph, let each op emit its dispatches, then
 * give every operand its storage. Intermediates share one device-local
 * arena placed by liveness (a buffer is reused once every dispatch that
 * touches its previous tenant has run); constants go to one device buffer;
 * weights stay where upload put them; views share their input's storage.
 * Recording the dispatch list is the device layer's job (gpu_record_plan). */
#include <stdlib.h>
#include <string.h>

#include "gpu_core.h"

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

uint32_t gpu_groups(uint64_t n, uint32_t local) {
    uint64_t g = (n + local - 1) / local;
    if (g < 1) g = 1;
    return g > GPU_MAX_GROUPS ? GPU_MAX_GROUPS : (uint32_t)g;
}

static berth_status grow_ops(berth_plan *p, uint32_t want, berth_error *err) {
    if (want <= p->cap_ops) return BERTH_OK;
    uint32_t cap = p->cap_ops ? p->cap_ops * 2 : 16;
    while (cap < want) cap *= 2;
    gpu_opnd *o = realloc(p->ops, sizeof *o * cap);
    if (!o) {
        bk_errf(err, GPU_BACKEND_NAME ": out of memory for %u operands", cap);
        return BERTH_ERR_NOMEM;
    }
    memset(o + p->cap_ops, 0, sizeof *o * (cap - p->cap_ops));
    p->ops = o;
    p->cap_ops = cap;
    return BERTH_OK;
}

gpu_dispatch *gpu_emit(gpu_prep *c, const char *shader) {
    berth_plan *p = c->plan;
    uint32_t s = gpu_kernel_index(shader);
    if (s == GPU_NONE) {
        bk_errf(c->err, "node '%s' (%s): shader '%s' is not built into the module", c->node->name ? c->node->name : "?",
                c->node->op, shader);
        return NULL;
    }
    if (p->n_disp == p->cap_disp) {
        uint32_t cap = p->cap_disp ? p->cap_disp * 2 : 16;
        gpu_dispatch *d = realloc(p->disp, sizeof *d * cap);
        if (!d) {
            bk_errf(c->err, GPU_BACKEND_NAME ": out of memory for %u dispatches", cap);
            return NULL;
        }
        p->disp = d;
        p->cap_disp = cap;
    }
    gpu_dispatch *d = &p->disp[p->n_disp++];
    memset(d, 0, sizeof *d);
    d->node = c->k;
    d->shader = s;
    d->groups[0] = d->groups[1] = d->groups[2] = 1;
    return d;
}

uint32_t gpu_scratch(gpu_prep *c, size_t bytes) {
    berth_plan *p = c->plan;
    if (grow_ops(p, p->n_ops + 1, c->err)) return GPU_NONE;
    gpu_opnd *o = &p->ops[p->n_ops];
    memset(o, 0, sizeof *o);
    o->name = "scratch";
    o->kind = BERTH_OPERAND_VALUE;
    o->dtype = BERTH_DTYPE_F32;
    o->rank = 1;
    o->dims[0] = (int64_t)(bytes / 4);
    o->numel = bytes / 4;
    o->bytes = bytes;
    o->alias = GPU_NONE;
    return p->n_ops++;
}

void gpu_alias(gpu_prep *c, uint32_t out, uint32_t in) { c->plan->ops[out].alias = in; }

static uint32_t root_of(const berth_plan *p, uint32_t o) {
    while (p->ops[o].alias != GPU_NONE) o = p->ops[o].alias;
    return o;
}

/* The graph view has checked rank, dims and dtype already. 4-bit
 * operands are stored packed as uploaded, two values to a byte (ceil(n /
 * 2) bytes); only the ops that take them apart by index (the quantized
 * fused ops) read them (check_packed). */
static berth_status describe_operand(const berth_operand *o, uint32_t idx, gpu_opnd *d, berth_error *err) {
    int known;
    size_t bytes = bk_dtype_bytes(o->dtype, bk_numel(o), &known);
    if (!known) {
        bk_errf(err, GPU_BACKEND_NAME ": operand %u '%s': dtype %s is not stored by the " GPU_BACKEND_NAME " backend", idx,
                o->name ? o->name : "?", bk_dtype_name(o->dtype));
        return BERTH_ERR_UNSUPPORTED;
    }
    memset(d, 0, sizeof *d);
    d->name = o->name ? o->name : "?";
    d->kind = o->kind;
    d->dtype = o->dtype;
    d->rank = o->rank;
    memcpy(d->dims, o->dims, sizeof d->dims);
    d->numel = bk_numel(o);
    d->bytes = bytes;
    d->alias = GPU_NONE;
    d->first = INT64_MAX;
    d->last = -2;
    return BERTH_OK;
}

/* 4-bit operands are read only by the ops that take them apart by index
 * (the quantized fused ops and dequantizeLinear); this keeps any other
 * from a kernel that reads words as floats, or writing them. */
static berth_status check_packed(const gpu_prep *c, berth_op_id id) {
    if (id == BERTH_OP_MATMUL_QUANTIZED || id == BERTH_OP_GATHER_QUANTIZED || id == BERTH_OP_DEQUANTIZE_LINEAR)
        return BERTH_OK;
    const berth_node *n = c->node;
    for (uint32_t j = 0; j < n->n_inputs + n->n_outputs; j++) {
        berth_dtype t = j < n->n_inputs ? bk_in(&c->bk, j)->dtype : bk_out(&c->bk, j - n->n_inputs)->dtype;
        if (t == BERTH_DTYPE_I4 || t == BERTH_DTYPE_U4)
            return bk_refuse(&c->bk, "%s operands are read only by dequantizeLinear and the quantized fused ops",
                             bk_dtype_name(t));
    }
    return BERTH_OK;
}

static berth_status prepare_nodes(berth_plan *p, const berth_graph_desc *g, berth_error *err) {
    berth_status st = bk_graph_check_order(g, err);
    for (uint32_t k = 0; k < g->n_nodes && !st; k++) {
        gpu_prep c = {.bk = {.g = g, .node = &g->nodes[k], .err = err}, .k = k, .plan = p};
        berth_op_id id;
        st = bk_node_op(&gpu_op_set, &c.bk, &id);
        if (!st) st = check_packed(&c, id);
        if (!st) st = gpu_op_at(id)->prep(&c);
    }
    return st;
}

/* Liveness of every root storage in dispatch steps, not nodes: a node's
 * scratch lives during its own dispatches only, and an operand no
 * dispatch touches (fused away, or never read) keeps first > last and
 * gets no storage. Step -1 is the input copies before the first
 * dispatch, step n_disp the output copies after the last. */
static void liveness(berth_plan *p) {
    for (uint32_t i = 0; i < p->n_ops; i++) {
        p->ops[i].first = INT64_MAX;
        p->ops[i].last = -2;
    }
    for (uint32_t i = 0; i < p->n_disp; i++) {
        const gpu_dispatch *d = &p->disp[i];
        for (uint32_t b = 0; b < d->n_bind; b++) {
            if (d->bind[b] == GPU_NONE) continue;
            gpu_opnd *r = &p->ops[root_of(p, d->bind[b])];
            if ((int64_t)i < r->first) r->first = i;
            if ((int64_t)i > r->last) r->last = i;
        }
    }
    for (uint32_t i = 0; i < p->n_inputs; i++) {
        gpu_opnd *o = &p->ops[p->inputs[i]];
        o->first = -1;
        if (o->last < -1) o->last = -1;
    }
    for (uint32_t i = 0; i < p->n_outputs; i++) {
        gpu_opnd *o = &p->ops[root_of(p, p->outputs[i])];
        o->last = p->n_disp;
        if (o->first > o->last) o->first = p->n_disp;
    }
}

/* Whether a root operand gets storage from the plan: an input or an
 * intermediate (scratch included) that some step touches. */
static int placed(const gpu_opnd *o) {
    return o->alias == GPU_NONE && (o->kind == BERTH_OPERAND_INPUT || o->kind == BERTH_OPERAND_VALUE) &&
           o->first <= o->last;
}

/* A graph input, or the root of a graph output. */
static int is_io(const berth_plan *p, uint32_t o) {
    for (uint32_t i = 0; i < p->n_inputs; i++)
        if (p->inputs[i] == o) return 1;
    for (uint32_t i = 0; i < p->n_outputs; i++)
        if (root_of(p, p->outputs[i]) == o) return 1;
    return 0;
}

/* Places the spans s[0..n) by liveness into one new buffer (none when
 * nothing is placed). Span ids below n_ops are operands; an id n_ops + k
 * is output k's own slot in the io buffer (see place_storage). */
static berth_status place(berth_plan *p, bk_span *s, uint32_t n, int host_visible, gpu_buffer **buf, const char *what,
                          berth_error *err) {
    uint64_t top = bk_place(s, n, (size_t)gpu_device_align(p->dev));
    if (top == 0) return BERTH_OK;
    berth_status st = gpu_buffer_new(p->dev, top, host_visible, buf, what, err);
    for (uint32_t i = 0; i < n && !st; i++) {
        if (s[i].id < p->n_ops) {
            p->ops[s[i].id].buf = *buf;
            p->ops[s[i].id].off = s[i].off;
        } else {
            p->io_off[p->n_inputs + (s[i].id - p->n_ops)] = s[i].off;
        }
    }
    return st;
}

/* Every placed root storage, by liveness (bk_place, as on cpu). Where the
 * device's own memory is host-visible (unified), the graph's inputs and
 * outputs are placed in the host-visible io buffer itself and dispatches
 * bind them there, so nothing is copied twice (an output that is a
 * weight or constant gets a slot there, copied into after the last
 * dispatch); elsewhere they join the intermediates in the device-local
 * arena and make_io stages them. */
static berth_status place_storage(berth_plan *p, int unified, berth_error *err) {
    bk_span *s = calloc((size_t)p->n_ops + p->n_outputs + 1, sizeof *s);
    if (!s) {
        bk_errf(err, GPU_BACKEND_NAME ": out of memory laying out the arena");
        return BERTH_ERR_NOMEM;
    }
    uint32_t n = 0, nio = 0;
    for (int pass = 0; pass < 2; pass++) /* the arena's spans, then the io buffer's */
        for (uint32_t i = 0; i < p->n_ops; i++) {
            const gpu_opnd *o = &p->ops[i];
            if (!placed(o) || (unified && is_io(p, i)) != pass) continue;
            s[n++] = (bk_span){.size = o->bytes ? o->bytes : 4, .first = o->first, .last = o->last, .id = i};
            nio += (uint32_t)pass;
        }
    for (uint32_t k = 0; unified && k < p->n_outputs; k++) {
        const gpu_opnd *o = &p->ops[root_of(p, p->outputs[k])];
        if (placed(o)) continue;
        s[n++] = (bk_span){.size = o->bytes ? o->bytes : 4, .first = p->n_disp, .last = p->n_disp, .id = p->n_ops + k};
        nio++;
    }
    uint64_t values = bk_place_below(s, n - nio, (size_t)gpu_device_align(p->dev), p->n_graph_ops);
    berth_status st = place(p, s, n - nio, 0, &p->arena, "the plan's intermediates", err);
    if (!st && p->arena) p->scratch_add = gpu_buffer_size(p->arena) - values;
    if (!st) st = place(p, s + (n - nio), nio, 1, &p->io, "the plan's inputs and outputs", err);
    free(s);
    return st;
}

static berth_status bind_data(berth_plan *p, berth_weights *w, const berth_graph_desc *g, berth_error *err) {
    berth_status st = bk_bind_check(w ? gpu_weights_upload(w) : NULL, g, GPU_BACKEND_NAME, err);
    if (st) return st;
    berth_device *dv = p->dev;
    uint64_t total = 0;
    for (uint32_t i = 0; i < g->n_operands; i++) {
        const berth_operand *o = &g->operands[i];
        gpu_opnd *d = &p->ops[i];
        if (o->kind == BERTH_OPERAND_CONSTANT) {
            d->off = total;
            total += align_up(d->bytes ? d->bytes : 4, gpu_device_align(dv));
        } else if (o->kind == BERTH_OPERAND_WEIGHT) {
            gpu_weight_at(w, o->weight, &d->buf, &d->off);
        }
    }
    if (total == 0) return BERTH_OK;
    st = gpu_buffer_new(dv, total, 0, &p->consts, "the plan's constants", err);
    for (uint32_t i = 0; i < g->n_operands && !st; i++) {
        if (g->operands[i].kind != BERTH_OPERAND_CONSTANT) continue;
        p->ops[i].buf = p->consts;
        st = gpu_buffer_write(dv, p->consts, p->ops[i].off, g->operands[i].data, p->ops[i].bytes, err);
    }
    return st;
}

/* Views take their root's storage; every binding must fit one range. */
static berth_status finish_bindings(berth_plan *p, berth_error *err) {
    for (uint32_t i = 0; i < p->n_ops; i++) {
        uint32_t r = root_of(p, i);
        p->ops[i].buf = p->ops[r].buf;
        p->ops[i].off = p->ops[r].off;
    }
    for (uint32_t i = 0; i < p->n_disp; i++)
        for (uint32_t b = 0; b < p->disp[i].n_bind; b++) {
            if (p->disp[i].bind[b] == GPU_NONE) continue;
            const gpu_opnd *o = &p->ops[p->disp[i].bind[b]];
            if (o->bytes > gpu_device_max_range(p->dev)) {
                bk_errf(err, GPU_BACKEND_NAME ": tensor '%s' is %zu bytes, above the %llu the device binds at once",
                        o->name, o->bytes, (unsigned long long)gpu_device_max_range(p->dev));
                return BERTH_ERR_UNSUPPORTED;
            }
        }
    return BERTH_OK;
}

/* Byte ranges touched since the last barrier, for hazard checks. */
typedef struct span {
    const gpu_buffer *buf;
    uint64_t lo, hi;
} span;

static int overlaps(const span *list, uint32_t n, const span *s) {
    for (uint32_t i = 0; i < n; i++)
        if (list[i].buf == s->buf && list[i].lo < s->hi && s->lo < list[i].hi) return 1;
    return 0;
}

/* A dispatch waits for earlier ones where it touches memory one of them
 * wrote since the last barrier, or overwrites what one read: the last
 * binding of a dispatch is the one it writes (op files keep outputs
 * last), the others are read. Where these barriers go is the same for
 * every device layer. */
static berth_status mark_barriers(berth_plan *p, berth_error *err) {
    span *wr = calloc((size_t)p->n_disp * GPU_MAX_BIND * 2 + 1, sizeof *wr), *rd = wr + (size_t)p->n_disp * GPU_MAX_BIND;
    if (!wr) {
        bk_errf(err, GPU_BACKEND_NAME ": out of memory ordering %u dispatches", p->n_disp);
        return BERTH_ERR_NOMEM;
    }
    uint32_t nw = 0, nr = 0;
    for (uint32_t i = 0; i < p->n_disp; i++) {
        gpu_dispatch *d = &p->disp[i];
        d->barrier = 0;
        for (uint32_t b = 0; b < d->n_bind && !d->barrier; b++) {
            if (d->bind[b] == GPU_NONE) continue;
            const gpu_opnd *o = &p->ops[d->bind[b]];
            span s = {o->buf, o->off, o->off + (o->bytes ? o->bytes : 4)};
            d->barrier = overlaps(wr, nw, &s) || (b + 1 == d->n_bind && overlaps(rd, nr, &s));
        }
        if (d->barrier) nw = nr = 0;
        for (uint32_t b = 0; b < d->n_bind; b++) {
            if (d->bind[b] == GPU_NONE) continue;
            const gpu_opnd *o = &p->ops[d->bind[b]];
            span s = {o->buf, o->off, o->off + (o->bytes ? o->bytes : 4)};
            if (b + 1 == d->n_bind) wr[nw++] = s;
            else rd[nr++] = s;
        }
    }
    free(wr);
    return BERTH_OK;
}

/* Where each input and output meets the host: its slot in the io buffer.
 * On unified memory place_storage made every slot already. Elsewhere the
 * io buffer is staging: inputs end to end from 0, and outputs end to end
 * from 0 too, since the input copies finish before the first dispatch and
 * the output copies start after the last; staging is as large as the
 * larger of the two transfers, not their sum. */
static berth_status make_io(berth_plan *p, int unified, berth_error *err) {
    uint64_t at[2] = {0, 0}, align = gpu_device_align(p->dev);
    for (uint32_t i = 0; i < p->n_inputs + p->n_outputs; i++) {
        int out = i >= p->n_inputs;
        const gpu_opnd *o = &p->ops[out ? p->outputs[i - p->n_inputs] : p->inputs[i]];
        if (unified) {
            if (o->buf == p->io && p->io) p->io_off[i] = o->off;
            continue;
        }
        p->io_off[i] = at[out];
        at[out] += align_up(o->bytes ? o->bytes : 4, align);
    }
    if (unified) return p->io ? BERTH_OK : gpu_buffer_new(p->dev, 16, 1, &p->io, "the plan's inputs and outputs", err);
    uint64_t stage = at[0] > at[1] ? at[0] : at[1];
    return gpu_buffer_new(p->dev, stage ? stage : 16, 1, &p->io, "the plan's input and output staging", err);
}

int gpu_io_copied(const berth_plan *p, uint32_t i) {
    const gpu_opnd *o = &p->ops[i < p->n_inputs ? p->inputs[i] : p->outputs[i - p->n_inputs]];
    return o->bytes && !(o->buf == p->io && o->off == p->io_off[i]);
}

berth_status gpu_plan_graph(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                               berth_error *err) {
    berth_plan *p = calloc(1, sizeof *p);
    if (!p) {
        bk_errf(err, GPU_BACKEND_NAME ": out of memory creating a plan");
        return BERTH_ERR_NOMEM;
    }
    p->dev = dev;
    p->tensor_size = g->tensor_size;
    p->n_nodes = g->n_nodes;
    p->n_inputs = g->n_inputs;
    p->n_outputs = g->n_outputs;
    berth_status st = grow_ops(p, g->n_operands + 1, err);
    p->inputs = calloc((size_t)g->n_inputs + g->n_outputs + 1, sizeof *p->inputs);
    p->io_off = calloc((size_t)g->n_inputs + g->n_outputs + 1, sizeof *p->io_off);
    if (!st && (!p->inputs || !p->io_off)) {
        bk_errf(err, GPU_BACKEND_NAME ": out of memory creating a plan");
        st = BERTH_ERR_NOMEM;
    }
    if (st) goto fail;
    p->outputs = p->inputs + g->n_inputs;
    p->n_ops = p->n_graph_ops = g->n_operands;
    for (uint32_t i = 0; i < g->n_operands && !st; i++) st = describe_operand(&g->operands[i], i, &p->ops[i], err);
    memcpy(p->inputs, g->inputs, sizeof(uint32_t) * g->n_inputs);
    if (!st) st = prepare_nodes(p, g, err);
    if (!st) st = gpu_fuse_elementwise(p, g, err);
    if (st) goto fail;
    memcpy(p->outputs, g->outputs, sizeof(uint32_t) * g->n_outputs);
    liveness(p);
    st = bind_data(p, w, g, err);
    int unified = gpu_device_unified(dev);
    if (!st) st = place_storage(p, unified, err);
    if (!st) st = finish_bindings(p, err);
    if (!st) st = make_io(p, unified, err);
    if (!st) st = mark_barriers(p, err);
    if (!st) st = gpu_record_plan(p, err);
    if (st) goto fail;
    for (uint32_t i = 0; i < p->n_ops; i++) p->ops[i].name = NULL; /* the host's strings die with the call */
    p->records = sizeof *p->ops * p->n_ops + sizeof *p->disp * p->n_disp +
                 (sizeof *p->inputs + sizeof *p->io_off) * (p->n_inputs + p->n_outputs) + gpu_record_bytes(p);
    p->bytes = (p->arena ? gpu_buffer_size(p->arena) : 0) + (p->consts ? gpu_buffer_size(p->consts) : 0) +
               (p->io ? gpu_buffer_size(p->io) : 0) + p->records;
    *out = p;
    return BERTH_OK;
fail:
    gpu_plan_free(p);
    return st;
}

void gpu_plan_free(berth_plan *p) {
    if (!p) return;
    gpu_record_free(p);
    gpu_buffer_free(p->dev, p->arena);
    gpu_buffer_free(p->dev, p->consts);
    gpu_buffer_free(p->dev, p->io);
    free(p->ops);
    free(p->disp);
    free(p->inputs);
    free(p->io_off);
    free(p);
}

berth_status gpu_plan_profile(const berth_plan *p, uint64_t *ns, uint32_t n, berth_error *err) {
    if (!p || !p->node_ns) {
        bk_errf(err, GPU_BACKEND_NAME ": this device's queue cannot time nodes");
        return BERTH_ERR_UNSUPPORTED;
    }
    for (uint32_t k = 0; k < n; k++) ns[k] = k < p->n_nodes ? p->node_ns[k] : 0;
    return BERTH_OK;
}

uint64_t gpu_plan_bytes(const berth_plan *p) { return p->bytes; }

/* Pipelines are not a plan's: the device layer builds each once and
 * shares it among plans until close. */
berth_status gpu_plan_memory(const berth_plan *p, berth_plan_memory *m, berth_error *err) {
    uint64_t arena = p->arena ? gpu_buffer_size(p->arena) : 0;
    bk_plan_memory_fill(m, arena - p->scratch_add, p->scratch_add, p->io ? gpu_buffer_size(p->io) : 0,
                        p->consts ? gpu_buffer_size(p->consts) : 0, p->records, BERTH_PLAN_MEM_RECORDS);
    (void)err;
    return BERTH_OK;
}

berth_status gpu_run_begin(berth_plan *p, const berth_tensor *in, uint32_t n_in, const berth_tensor *out,
                           uint32_t n_out, berth_error *err) {
    if (!p || n_in != p->n_inputs || n_out != p->n_outputs || (n_in && !in) || (n_out && !out)) {
        bk_errf(err, GPU_BACKEND_NAME ": run: expected %u inputs and %u outputs, found %u and %u", p ? p->n_inputs : 0,
                p ? p->n_outputs : 0, n_in, n_out);
        return BERTH_ERR_INVALID;
    }
    for (uint32_t i = 0; i < n_in + n_out; i++) {
        const berth_tensor *t = i < n_in ? bk_tensor_at(in, i, p->tensor_size) : bk_tensor_at(out, i - n_in, p->tensor_size);
        const gpu_opnd *o = &p->ops[i < n_in ? p->inputs[i] : p->outputs[i - n_in]];
        if (t->bytes != o->bytes || t->dtype != o->dtype || (o->bytes && !t->data)) {
            bk_errf(err, GPU_BACKEND_NAME ": run: %s %u: expected %zu bytes of %s, found %zu bytes of %s",
                    i < n_in ? "input" : "output", i < n_in ? i : i - n_in, o->bytes, bk_dtype_name(o->dtype),
                    t->bytes, bk_dtype_name(t->dtype));
            return BERTH_ERR_INVALID;
        }
    }
    uint8_t *io = gpu_buffer_map(p->io);
    for (uint32_t i = 0; i < n_in; i++) {
        const berth_tensor *t = bk_tensor_at(in, i, p->tensor_size);
        if (t->bytes) memcpy(io + p->io_off[i], t->data, t->bytes);
    }
    return BERTH_OK;
}

void gpu_run_end(berth_plan *p, berth_tensor *out) {
    const uint8_t *io = gpu_buffer_map(p->io);
    for (uint32_t i = 0; i < p->n_outputs; i++) {
        const berth_tensor *t = bk_tensor_at(out, i, p->tensor_size);
        const uint8_t *at = io + p->io_off[p->n_inputs + i];
        if (t->bytes && t->data != at) memcpy(t->data, at, t->bytes); /* an exported output stays */
    }
}
