/* plan(): validate a concrete graph, let each op emit its dispatches, then
 * give every operand its storage. Intermediates share one device-local
 * arena placed by liveness (a buffer is reused once every dispatch that
 * touches its previous tenant has run); constants go to one device buffer;
 * weights stay where upload put them; views share their input's storage.
 * Recording the command buffer is vk_record.c's job. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static VkDeviceSize align_up(VkDeviceSize x, VkDeviceSize a) { return (x + a - 1) / a * a; }

static berth_status grow_ops(berth_plan *p, uint32_t want, berth_error *err) {
    if (want <= p->cap_ops) return BERTH_OK;
    uint32_t cap = p->cap_ops ? p->cap_ops * 2 : 16;
    while (cap < want) cap *= 2;
    vk_opnd *o = realloc(p->ops, sizeof *o * cap);
    if (!o) {
        bk_errf(err, "vulkan: out of memory for %u operands", cap);
        return BERTH_ERR_NOMEM;
    }
    memset(o + p->cap_ops, 0, sizeof *o * (cap - p->cap_ops));
    p->ops = o;
    p->cap_ops = cap;
    return BERTH_OK;
}

vk_dispatch *vk_emit(vk_prep *c, const char *shader) {
    berth_plan *p = c->plan;
    uint32_t s = vk_shader_index(shader);
    if (s == VK_NONE) {
        bk_errf(c->err, "node '%s' (%s): shader '%s' is not built into the module", c->node->name ? c->node->name : "?",
                c->node->op, shader);
        return NULL;
    }
    if (p->n_disp == p->cap_disp) {
        uint32_t cap = p->cap_disp ? p->cap_disp * 2 : 16;
        vk_dispatch *d = realloc(p->disp, sizeof *d * cap);
        if (!d) {
            bk_errf(c->err, "vulkan: out of memory for %u dispatches", cap);
            return NULL;
        }
        p->disp = d;
        p->cap_disp = cap;
    }
    vk_dispatch *d = &p->disp[p->n_disp++];
    memset(d, 0, sizeof *d);
    d->node = c->k;
    d->shader = s;
    d->groups[0] = d->groups[1] = d->groups[2] = 1;
    return d;
}

uint32_t vk_scratch(vk_prep *c, size_t bytes) {
    berth_plan *p = c->plan;
    if (grow_ops(p, p->n_ops + 1, c->err)) return VK_NONE;
    vk_opnd *o = &p->ops[p->n_ops];
    memset(o, 0, sizeof *o);
    o->name = "scratch";
    o->kind = BERTH_OPERAND_VALUE;
    o->dtype = BERTH_DTYPE_F32;
    o->rank = 1;
    o->dims[0] = (int64_t)(bytes / 4);
    o->numel = bytes / 4;
    o->bytes = bytes;
    o->alias = VK_NONE;
    return p->n_ops++;
}

void vk_alias(vk_prep *c, uint32_t out, uint32_t in) { c->plan->ops[out].alias = in; }

static uint32_t root_of(const berth_plan *p, uint32_t o) {
    while (p->ops[o].alias != VK_NONE) o = p->ops[o].alias;
    return o;
}

/* The graph view has checked rank, dims and dtype already. */
static berth_status describe_operand(const berth_operand *o, uint32_t idx, vk_opnd *d, berth_error *err) {
    size_t es = bk_dtype_size(o->dtype);
    if (!es) {
        bk_errf(err, "vulkan: operand %u '%s': dtype %s is not stored by the vulkan backend", idx,
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
    d->bytes = d->numel * es;
    d->alias = VK_NONE;
    d->first = INT64_MAX;
    d->last = -2;
    return BERTH_OK;
}

static berth_status prepare_nodes(berth_plan *p, const berth_graph_desc *g, berth_error *err) {
    berth_status st = bk_graph_check_order(g, err);
    for (uint32_t k = 0; k < g->n_nodes && !st; k++) {
        vk_prep c = {.bk = {.g = g, .node = &g->nodes[k], .err = err}, .k = k, .plan = p};
        berth_op_id id;
        st = bk_node_op(&vk_op_set, &c.bk, &id);
        if (!st) st = vk_op_at(id)->prep(&c);
    }
    return st;
}

/* Liveness of every root storage, from the dispatches that touch it. */
static void liveness(berth_plan *p) {
    for (uint32_t i = 0; i < p->n_disp; i++) {
        const vk_dispatch *d = &p->disp[i];
        for (uint32_t b = 0; b < d->n_bind; b++) {
            if (d->bind[b] == VK_NONE) continue;
            vk_opnd *r = &p->ops[root_of(p, d->bind[b])];
            if ((int64_t)d->node < r->first) r->first = d->node;
            if ((int64_t)d->node > r->last) r->last = d->node;
        }
    }
    for (uint32_t i = 0; i < p->n_inputs; i++) p->ops[p->inputs[i]].first = -1;
    for (uint32_t i = 0; i < p->n_outputs; i++) p->ops[root_of(p, p->outputs[i])].last = p->n_nodes;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        vk_opnd *o = &p->ops[i];
        if (o->first == INT64_MAX) o->first = o->last < 0 ? 0 : o->last;
        if (o->last < o->first) o->last = o->first;
    }
}

/* Every root storage that lives in the arena, placed by liveness. */
static berth_status place_arena(berth_plan *p, berth_error *err) {
    berth_device *dv = p->dev;
    bk_span *s = calloc(p->n_ops + 1u, sizeof *s);
    if (!s) {
        bk_errf(err, "vulkan: out of memory laying out the arena");
        return BERTH_ERR_NOMEM;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const vk_opnd *o = &p->ops[i];
        if (o->alias != VK_NONE || (o->kind != BERTH_OPERAND_INPUT && o->kind != BERTH_OPERAND_VALUE)) continue;
        s[n++] = (bk_span){.size = o->bytes ? o->bytes : 4, .first = o->first, .last = o->last, .id = i};
    }
    VkDeviceSize top = bk_place(s, n, (size_t)dv->align);
    berth_status st = vk_buffer_create(dv, top ? top : dv->align, 0, &p->arena, "the plan's intermediates", err);
    for (uint32_t i = 0; i < n && !st; i++) {
        p->ops[s[i].id].buf = p->arena.buf;
        p->ops[s[i].id].off = s[i].off;
    }
    free(s);
    return st;
}

static berth_status bind_data(berth_plan *p, berth_weights *w, const berth_graph_desc *g, berth_error *err) {
    berth_status st = bk_bind_check(w ? &w->up : NULL, g, "vulkan", err);
    if (st) return st;
    berth_device *dv = p->dev;
    VkDeviceSize total = 0;
    for (uint32_t i = 0; i < g->n_operands; i++) {
        const berth_operand *o = &g->operands[i];
        vk_opnd *d = &p->ops[i];
        if (o->kind == BERTH_OPERAND_CONSTANT) {
            d->off = total;
            total += align_up(d->bytes ? d->bytes : 4, dv->align);
        } else if (o->kind == BERTH_OPERAND_WEIGHT) {
            const vk_weight *t = &w->t[o->weight];
            d->buf = w->blocks[t->block].buf;
            d->off = t->off;
        }
    }
    if (total == 0) return BERTH_OK;
    st = vk_buffer_create(dv, total, 0, &p->consts, "the plan's constants", err);
    for (uint32_t i = 0; i < g->n_operands && !st; i++) {
        if (g->operands[i].kind != BERTH_OPERAND_CONSTANT) continue;
        p->ops[i].buf = p->consts.buf;
        st = vk_write_buffer(dv, &p->consts, p->ops[i].off, g->operands[i].data, p->ops[i].bytes, err);
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
            if (p->disp[i].bind[b] == VK_NONE) continue;
            const vk_opnd *o = &p->ops[p->disp[i].bind[b]];
            if (o->bytes > p->dev->max_range) {
                bk_errf(err, "vulkan: tensor '%s' is %zu bytes, above the device's maxStorageBufferRange of %llu",
                        o->name, o->bytes, (unsigned long long)p->dev->max_range);
                return BERTH_ERR_UNSUPPORTED;
            }
        }
    return BERTH_OK;
}

static berth_status make_io(berth_plan *p, berth_error *err) {
    VkDeviceSize at = 0;
    for (uint32_t i = 0; i < p->n_inputs + p->n_outputs; i++) {
        uint32_t o = i < p->n_inputs ? p->inputs[i] : p->outputs[i - p->n_inputs];
        p->io_off[i] = at;
        at += align_up(p->ops[o].bytes ? p->ops[o].bytes : 4, 16);
    }
    return vk_buffer_create(p->dev, at ? at : 16, 1, &p->io, "the plan's inputs and outputs", err);
}

berth_status vk_plan_graph(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                               berth_error *err) {
    berth_plan *p = calloc(1, sizeof *p);
    if (!p) {
        bk_errf(err, "vulkan: out of memory creating a plan");
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
        bk_errf(err, "vulkan: out of memory creating a plan");
        st = BERTH_ERR_NOMEM;
    }
    if (st) goto fail;
    p->outputs = p->inputs + g->n_inputs;
    p->n_ops = g->n_operands;
    for (uint32_t i = 0; i < g->n_operands && !st; i++) st = describe_operand(&g->operands[i], i, &p->ops[i], err);
    memcpy(p->inputs, g->inputs, sizeof(uint32_t) * g->n_inputs);
    if (!st) st = prepare_nodes(p, g, err);
    if (!st) st = vk_fuse_elementwise(p, g, err);
    if (st) goto fail;
    memcpy(p->outputs, g->outputs, sizeof(uint32_t) * g->n_outputs);
    liveness(p);
    st = bind_data(p, w, g, err);
    if (!st) st = place_arena(p, err);
    if (!st) st = finish_bindings(p, err);
    if (!st) st = make_io(p, err);
    if (!st) st = vk_record(p, err);
    if (st) goto fail;
    for (uint32_t i = 0; i < p->n_ops; i++) p->ops[i].name = NULL; /* the host's strings die with the call */
    p->bytes = p->arena.size + p->consts.size + p->io.size;
    *out = p;
    return BERTH_OK;
fail:
    vk_plan_free(p);
    return st;
}

void vk_plan_free(berth_plan *p) {
    if (!p) return;
    berth_device *d = p->dev;
    if (p->fence) vkDestroyFence(d->dev, p->fence, NULL);
    if (p->cmd) {
        pthread_mutex_lock(&d->lock); /* the command pool is the device's */
        vkFreeCommandBuffers(d->dev, d->pool, 1, &p->cmd);
        pthread_mutex_unlock(&d->lock);
    }
    if (p->dpool) vkDestroyDescriptorPool(d->dev, p->dpool, NULL);
    if (p->timer) vkDestroyQueryPool(d->dev, p->timer, NULL);
    free(p->stamps);
    vk_buffer_destroy(d, &p->arena);
    vk_buffer_destroy(d, &p->consts);
    vk_buffer_destroy(d, &p->io);
    free(p->ops);
    free(p->disp);
    free(p->inputs);
    free(p->io_off);
    free(p);
}
