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
        vk_errf(err, "vulkan: out of memory for %u operands", cap);
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
        vk_errf(c->err, "node '%s' (%s): shader '%s' is not built into the module", c->node->name ? c->node->name : "?",
                c->node->op, shader);
        return NULL;
    }
    if (p->n_disp == p->cap_disp) {
        uint32_t cap = p->cap_disp ? p->cap_disp * 2 : 16;
        vk_dispatch *d = realloc(p->disp, sizeof *d * cap);
        if (!d) {
            vk_errf(c->err, "vulkan: out of memory for %u dispatches", cap);
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

static berth_status describe_operand(const berth_operand *o, uint32_t idx, vk_opnd *d, berth_error *err) {
    const char *name = o->name ? o->name : "?";
    if (o->rank > BERTH_MAX_RANK) {
        vk_errf(err, "vulkan: operand %u '%s': rank %u exceeds %d", idx, name, o->rank, BERTH_MAX_RANK);
        return BERTH_ERR_INVALID;
    }
    size_t n = 1;
    for (uint32_t i = 0; i < o->rank; i++) {
        if (o->dims[i] < 0 || (o->dims[i] && n > (SIZE_MAX >> 8) / (size_t)o->dims[i])) {
            vk_errf(err, "vulkan: operand %u '%s': dim %u is %lld, expected a size >= 0 that does not overflow", idx,
                    name, i, (long long)o->dims[i]);
            return BERTH_ERR_INVALID;
        }
        n *= (size_t)o->dims[i];
    }
    size_t es = vk_dtype_size(o->dtype);
    if (!es) {
        vk_errf(err, "vulkan: operand %u '%s': dtype %s is not stored by the vulkan backend", idx, name,
                vk_dtype_name(o->dtype));
        return BERTH_ERR_UNSUPPORTED;
    }
    memset(d, 0, sizeof *d);
    d->name = name;
    d->kind = o->kind;
    d->dtype = o->dtype;
    d->rank = o->rank;
    memcpy(d->dims, o->dims, sizeof d->dims);
    d->numel = n;
    d->bytes = n * es;
    d->alias = VK_NONE;
    d->first = INT64_MAX;
    d->last = -2;
    return BERTH_OK;
}

/* Every operand a node reads (inputs and operand attributes) exists and,
 * if a value, was produced by an earlier node. */
static int unready(const berth_graph_desc *g, const uint8_t *made, int64_t o) {
    return o < 0 || o >= (int64_t)g->n_operands || (g->operands[o].kind == BERTH_OPERAND_VALUE && !made[o]);
}

static berth_status check_reads(const berth_graph_desc *g, const berth_node *n, const uint8_t *made, berth_error *err) {
    const char *nm = n->name ? n->name : "?", *op = n->op ? n->op : "(null)";
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (unready(g, made, n->inputs[i])) {
            vk_errf(err, "node '%s' (%s): input %u is out of range or read before any node produces it", nm, op, i);
            return BERTH_ERR_INVALID;
        }
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        const berth_attr *at = &n->attrs[a];
        int bad = at->type == BERTH_ATTR_OPERAND && unready(g, made, at->i);
        for (size_t j = 0; at->type == BERTH_ATTR_OPERANDS && j < at->count && !bad; j++)
            bad = !at->ints || unready(g, made, at->ints[j]);
        if (bad) {
            vk_errf(err, "node '%s' (%s): attribute '%s' names an operand out of range or not yet produced", nm, op,
                    at->key ? at->key : "?");
            return BERTH_ERR_INVALID;
        }
    }
    return BERTH_OK;
}

static berth_status prepare_nodes(berth_plan *p, const berth_graph_desc *g, berth_error *err) {
    uint8_t *made = calloc(g->n_operands + 1u, 1);
    if (!made) {
        vk_errf(err, "vulkan: out of memory planning");
        return BERTH_ERR_NOMEM;
    }
    berth_status st = BERTH_OK;
    for (uint32_t k = 0; k < g->n_nodes && !st; k++) {
        const berth_node *n = &g->nodes[k];
        const char *nm = n->name ? n->name : "?", *op = n->op ? n->op : "(null)";
        st = BERTH_ERR_INVALID;
        if ((n->n_inputs && !n->inputs) || (n->n_outputs && !n->outputs) || (n->n_attrs && !n->attrs)) {
            vk_errf(err, "node '%s' (%s): operand or attribute list missing", nm, op);
            break;
        }
        uint32_t bad = VK_NONE;
        if ((st = check_reads(g, n, made, err))) break;
        st = BERTH_ERR_INVALID;
        for (uint32_t j = 0; j < n->n_outputs && bad == VK_NONE; j++) {
            uint32_t o = n->outputs[j];
            if (o >= g->n_operands || g->operands[o].kind != BERTH_OPERAND_VALUE || made[o]) bad = j;
            else made[o] = 1;
        }
        if (bad != VK_NONE || n->n_outputs == 0) {
            vk_errf(err, "node '%s' (%s): output %u must be a value operand produced once", nm, op,
                    bad == VK_NONE ? 0 : bad);
            break;
        }
        const vk_op_info *info = n->op ? vk_find_op(n->op) : NULL;
        if (!info) {
            vk_errf(err, "node '%s': op '%s' is not supported by the vulkan backend", nm, op);
            st = BERTH_ERR_UNSUPPORTED;
            break;
        }
        vk_prep c = {.g = g, .node = n, .k = k, .plan = p, .err = err};
        st = info->prep(&c);
    }
    for (uint32_t i = 0; i < g->n_outputs && !st; i++)
        /* Constants and weights may be outputs too (the engine folds shape
         * arithmetic into constants): run() copies them out like values. */
        if (g->outputs[i] >= g->n_operands ||
            (g->operands[g->outputs[i]].kind == BERTH_OPERAND_VALUE && !made[g->outputs[i]])) {
            vk_errf(err, "vulkan: graph output %u is out of range or a value no node produces", i);
            st = BERTH_ERR_INVALID;
        }
    free(made);
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

typedef struct slot {
    VkDeviceSize size, off;
    int64_t first, last;
    uint32_t op;
} slot;

static int by_size_desc(const void *a, const void *b) {
    const slot *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Greedy by size: each tenant goes at the lowest aligned offset clear of
 * every placed tenant whose lifetime overlaps its own. */
static berth_status place_arena(berth_plan *p, berth_error *err) {
    berth_device *dv = p->dev;
    slot *s = calloc(p->n_ops + 1u, sizeof *s);
    if (!s) {
        vk_errf(err, "vulkan: out of memory laying out the arena");
        return BERTH_ERR_NOMEM;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const vk_opnd *o = &p->ops[i];
        if (o->alias != VK_NONE || (o->kind != BERTH_OPERAND_INPUT && o->kind != BERTH_OPERAND_VALUE)) continue;
        s[n++] = (slot){.size = align_up(o->bytes ? o->bytes : 4, dv->align), .first = o->first, .last = o->last,
                        .op = i};
    }
    qsort(s, n, sizeof *s, by_size_desc);
    VkDeviceSize top = 0;
    for (uint32_t i = 0; i < n; i++) {
        VkDeviceSize off = 0;
        for (int moved = 1; moved;) {
            moved = 0;
            for (uint32_t j = 0; j < i; j++) {
                if (s[j].last < s[i].first || s[i].last < s[j].first) continue;
                if (off < s[j].off + s[j].size && s[j].off < off + s[i].size) {
                    off = s[j].off + s[j].size;
                    moved = 1;
                }
            }
        }
        s[i].off = off;
        if (off + s[i].size > top) top = off + s[i].size;
    }
    berth_status st = vk_buffer_create(dv, top ? top : dv->align, 0, &p->arena, "the plan's intermediates", err);
    for (uint32_t i = 0; i < n && !st; i++) {
        p->ops[s[i].op].buf = p->arena.buf;
        p->ops[s[i].op].off = s[i].off;
    }
    free(s);
    return st;
}

static berth_status bind_data(berth_plan *p, berth_weights *w, const berth_graph_desc *g, berth_error *err) {
    berth_device *dv = p->dev;
    VkDeviceSize total = 0;
    for (uint32_t i = 0; i < g->n_operands; i++) {
        const berth_operand *o = &g->operands[i];
        vk_opnd *d = &p->ops[i];
        if (o->kind == BERTH_OPERAND_CONSTANT) {
            if (o->bytes != d->bytes || (!o->data && o->bytes)) {
                vk_errf(err, "vulkan: constant '%s': expected %zu bytes of data, found %zu", d->name, d->bytes,
                        o->data ? o->bytes : 0);
                return BERTH_ERR_INVALID;
            }
            d->off = total;
            total += align_up(d->bytes ? d->bytes : 4, dv->align);
        } else if (o->kind == BERTH_OPERAND_WEIGHT) {
            if (!w || o->weight >= w->n || !w->t[o->weight].present) {
                vk_errf(err, "vulkan: weight operand '%s': id %u was not uploaded (%u weights)", d->name, o->weight,
                        w ? w->n : 0u);
                return BERTH_ERR_INVALID;
            }
            const vk_weight *t = &w->t[o->weight];
            if (t->bytes != d->bytes) {
                vk_errf(err, "vulkan: weight operand '%s': shape needs %zu bytes, uploaded tensor %u has %llu", d->name,
                        d->bytes, o->weight, (unsigned long long)t->bytes);
                return BERTH_ERR_INVALID;
            }
            d->buf = w->blocks[t->block].buf;
            d->off = t->off;
        } else if (o->kind != BERTH_OPERAND_INPUT && o->kind != BERTH_OPERAND_VALUE) {
            vk_errf(err, "vulkan: operand %u '%s': unknown kind %d", i, d->name, (int)o->kind);
            return BERTH_ERR_INVALID;
        }
    }
    if (total == 0) return BERTH_OK;
    berth_status st = vk_buffer_create(dv, total, 0, &p->consts, "the plan's constants", err);
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
                vk_errf(err, "vulkan: tensor '%s' is %zu bytes, above the device's maxStorageBufferRange of %llu",
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

berth_status vk_plan_create(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                            berth_error *err) {
    *out = NULL;
    if (!g || g->struct_size < offsetof(berth_graph_desc, outputs) + sizeof(void *)) {
        vk_errf(err, "vulkan: plan: graph description missing or smaller than ABI v1's");
        return BERTH_ERR_INVALID;
    }
    if ((g->n_operands && !g->operands) || (g->n_nodes && !g->nodes) || (g->n_inputs && !g->inputs) ||
        (g->n_outputs && !g->outputs)) {
        vk_errf(err, "vulkan: plan: graph description has a count without its array");
        return BERTH_ERR_INVALID;
    }
    berth_plan *p = calloc(1, sizeof *p);
    if (!p) {
        vk_errf(err, "vulkan: out of memory creating a plan");
        return BERTH_ERR_NOMEM;
    }
    p->dev = dev;
    p->n_nodes = g->n_nodes;
    p->n_inputs = g->n_inputs;
    p->n_outputs = g->n_outputs;
    berth_status st = grow_ops(p, g->n_operands + 1, err);
    p->inputs = calloc((size_t)g->n_inputs + g->n_outputs + 1, sizeof *p->inputs);
    p->io_off = calloc((size_t)g->n_inputs + g->n_outputs + 1, sizeof *p->io_off);
    if (!st && (!p->inputs || !p->io_off)) {
        vk_errf(err, "vulkan: out of memory creating a plan");
        st = BERTH_ERR_NOMEM;
    }
    if (st) goto fail;
    p->outputs = p->inputs + g->n_inputs;
    p->n_ops = g->n_operands;
    for (uint32_t i = 0; i < g->n_operands && !st; i++) st = describe_operand(&g->operands[i], i, &p->ops[i], err);
    for (uint32_t i = 0; i < g->n_inputs && !st; i++) {
        if (g->inputs[i] >= g->n_operands || g->operands[g->inputs[i]].kind != BERTH_OPERAND_INPUT) {
            vk_errf(err, "vulkan: graph input %u must name an input operand", i);
            st = BERTH_ERR_INVALID;
        }
        p->inputs[i] = g->inputs[i];
    }
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
