/* The vulkan backend's entry point and the verbs that are not about
 * graphs: negotiation, open/close, caps, supports_op and the weight
 * upload. Weights go to device-local blocks one tensor at a time through
 * the staging buffer; upload_dest hands the host the mapped staging
 * memory so file bytes land there with no intermediate copy. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static berth_status vk_open(const berth_host_services *host, berth_device **out, berth_error *err) {
    return vk_device_open(host, out, err);
}

static void vk_close(berth_device *dev) { vk_device_close(dev); }

static berth_status vk_caps(berth_device *dev, berth_caps *caps, berth_error *err) {
    uint32_t mask = BK_BIT(BERTH_DTYPE_F32) | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32) |
                    BK_BIT(BERTH_DTYPE_I64) | BK_BIT(BERTH_DTYPE_U64) | BK_BIT(BERTH_DTYPE_U8);
    berth_status st = bk_caps_fill(caps, dev->name, dev->memory_bytes, dev->unified, mask, err);
    /* A subgraph is a submit and a wait on its fence; a crossing goes
     * through host-visible staging (device-local memory over the bus on
     * a discrete card). */
    if (st == BERTH_OK)
        bk_caps_costs(caps, dev->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 50000.0 : 30000.0,
                      dev->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ? 0.15 : 0.1);
    return st;
}

/* The partitioner's estimate, by the kind of device alone (GFLOP/s and
 * GB/s the GPU core's shaders reach on such a device, roughly): a
 * discrete card, an integrated or virtual GPU, or a device that is the
 * cpu in software. Rough on purpose: it is weighed against crossings
 * and against the cpu backend's own estimate. */
static berth_status vk_node_cost(berth_device *dev, const berth_graph_desc *graph, uint32_t node_index,
                                 berth_node_cost *cost, berth_error *err) {
    (void)graph, (void)node_index, (void)err;
    if (cost->struct_size < BERTH_NODE_COST_V1_MIN_SIZE) return BERTH_ERR_UNSUPPORTED;
    double flops_per_ns = 300, bytes_per_ns = 30;
    if (dev->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) flops_per_ns = 2000, bytes_per_ns = 200;
    if (dev->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) flops_per_ns = 5, bytes_per_ns = 2;
    cost->node_ns = cost->flops / flops_per_ns + cost->bytes / bytes_per_ns;
    if (!(cost->node_ns > 0)) cost->node_ns = 1;
    return BERTH_OK;
}

BK_SUPPORTS_VERBS(vk, gpu_op_set)
BK_PLAN_VERB(vk_plan_create, gpu_plan_graph)

/* ---- weights ---- */

static void vk_free_weights(berth_weights *w) {
    if (!w) return;
    for (uint32_t i = 0; i < w->n_blocks; i++) vk_buffer_destroy(w->dev, &w->blocks[i]);
    free(w->blocks);
    free(w->t);
    bk_upload_free(&w->up);
    free(w);
}

static berth_status vk_upload_begin(berth_device *dev, const berth_upload_info *info, berth_weights **out,
                                    berth_error *err) {
    *out = NULL;
    berth_weights *w = calloc(1, sizeof *w);
    berth_status st = w ? bk_upload_begin(&w->up, info, "vulkan", err) : BERTH_ERR_NOMEM;
    if (st) {
        free(w);
        if (st == BERTH_ERR_NOMEM) bk_errf(err, "vulkan: out of memory starting an upload");
        return st;
    }
    w->t = calloc(info->n_tensors ? info->n_tensors : 1, sizeof *w->t);
    w->blocks = calloc(info->n_tensors ? info->n_tensors : 1, sizeof *w->blocks);
    if (!w->t || !w->blocks) {
        vk_free_weights(w);
        bk_errf(err, "vulkan: out of memory for a table of %u weights", info->n_tensors);
        return BERTH_ERR_NOMEM;
    }
    w->dev = dev;
    w->n = info->n_tensors;
    VkDeviceSize want = info->total_bytes + (VkDeviceSize)info->n_tensors * dev->align;
    /* blocks of at most block_mb: a model with thousands of tensors
     * needs only a few device allocations */
    w->block_size = want < dev->block_max ? want : dev->block_max;
    w->announced = info->total_bytes;
    *out = w;
    return BERTH_OK;
}

static berth_status check_desc(berth_weights *w, const berth_weight_desc *desc, const void *data, berth_error *err) {
    berth_status st = bk_upload_check(&w->up, desc, data, "vulkan", err);
    if (st) return st;
    if (desc->bytes > w->dev->max_range) {
        bk_errf(err, "vulkan: weight '%s' is %zu bytes, above the device's maxStorageBufferRange of %llu bytes",
                desc->name ? desc->name : "?", desc->bytes, (unsigned long long)w->dev->max_range);
        return BERTH_ERR_UNSUPPORTED;
    }
    return BERTH_OK;
}

static berth_status vk_upload_dest(berth_weights *w, const berth_weight_desc *desc, void **dest, berth_error *err) {
    *dest = NULL;
    w->offered = 0;
    berth_status st = check_desc(w, desc, desc, err);
    if (st) return st;
    st = vk_staging_ensure(w->dev, err);
    if (st) return st;
    if (desc->bytes == 0 || desc->bytes > w->dev->staging.size) return BERTH_OK; /* the host's scratch, in chunks */
    *dest = w->dev->staging.map;
    w->offered = 1;
    return BERTH_OK;
}

/* A place for `bytes` in the current block, or a new block: as large as
 * the upload's block size, but no larger than what the announced total
 * still needs (this tensor and the rest, each aligned), so the last
 * block is not mostly empty. */
static berth_status reserve(berth_weights *w, const char *name, VkDeviceSize bytes, vk_weight *t, berth_error *err) {
    VkDeviceSize need = (bytes + 3) & ~(VkDeviceSize)3;
    VkDeviceSize at = (w->block_used + w->dev->align - 1) & ~(w->dev->align - 1);
    if (w->n_blocks == 0 || at + need > w->blocks[w->n_blocks - 1].size) {
        VkDeviceSize rest = w->announced > w->total ? w->announced - w->total : 0;
        rest += (VkDeviceSize)(w->n > w->n_up ? w->n - w->n_up : 1) * (w->dev->align + 3);
        VkDeviceSize size = w->block_size < rest ? w->block_size : rest;
        if (size < need) size = need;
        berth_status st = vk_buffer_create(w->dev, size, 0, &w->blocks[w->n_blocks], name, err);
        if (st) return st;
        w->n_blocks++;
        at = 0;
    }
    t->block = w->n_blocks - 1;
    t->off = at;
    t->bytes = bytes;
    w->block_used = at + need;
    return BERTH_OK;
}

static berth_status vk_upload_tensor(berth_weights *w, const berth_weight_desc *desc, void *data, uint32_t flags,
                                     int *taken, berth_error *err) {
    if (taken) *taken = 0; /* copied to the device; the host keeps its buffer */
    int in_place = (flags & BERTH_UPLOAD_IN_PLACE) && w->offered;
    w->offered = 0;
    berth_status st = check_desc(w, desc, data, err);
    if (st) return st;
    if (in_place && data != w->dev->staging.map) {
        bk_errf(err, "vulkan: weight '%s': marked in place but not at the offered memory", desc->name ? desc->name : "?");
        return BERTH_ERR_INVALID;
    }
    vk_weight t;
    st = reserve(w, desc->name ? desc->name : "a weight", desc->bytes, &t, err);
    if (st) return st;
    vk_buffer *dst = &w->blocks[t.block];
    st = in_place ? vk_flush_staging(w->dev, dst, t.off, desc->bytes, err)
                  : vk_write_buffer(w->dev, dst, t.off, data, desc->bytes, err);
    if (st) return st;
    w->t[desc->id] = t;
    bk_upload_mark(&w->up, desc);
    w->total += desc->bytes;
    w->n_up++;
    return BERTH_OK;
}

static berth_status vk_upload_end(berth_weights *w, berth_error *err) { return bk_upload_end(&w->up, "vulkan", err); }

static uint64_t vk_weights_bytes(const berth_weights *w) {
    uint64_t n = 0;
    for (uint32_t i = 0; w && i < w->n_blocks; i++) n += w->blocks[i].size;
    return n;
}

/* The core's view of the weights. */
void gpu_weight_at(const berth_weights *w, uint32_t id, gpu_buffer **buf, uint64_t *off) {
    const vk_weight *t = &w->t[id];
    *buf = &w->blocks[t->block];
    *off = t->off;
}

const bk_upload *gpu_weights_upload(const berth_weights *w) { return &w->up; }

/* A crossing tensor this plan writes stays in its io slot, host-visible
 * memory that holds it from the end of the run to the next: the plan
 * reading it next takes it from there. Only where that memory is cached
 * for the cpu (unified devices, lavapipe, host-cached staging): a reader
 * walking uncached memory more than once would lose more than the copy
 * saves. */
static berth_status vk_export_output(berth_plan *p, uint32_t index, uint32_t kinds, berth_shared_buffer *buf,
                                     berth_error *err) {
    if (!(kinds & BERTH_SHARED_HOST) || !buf || buf->struct_size < BERTH_SHARED_BUFFER_V1_MIN_SIZE) {
        bk_errf(err, "vulkan exports outputs as host pointers only");
        return BERTH_ERR_UNSUPPORTED;
    }
    if (index >= p->n_outputs) {
        bk_errf(err, "export_output: output %u of a plan of %u", index, p->n_outputs);
        return BERTH_ERR_INVALID;
    }
    const gpu_opnd *o = &p->ops[p->outputs[index]];
    if (!o->bytes || !p->io || !p->io->cached) {
        bk_errf(err, "output %u's io memory is not cached for the cpu", index);
        return BERTH_ERR_UNSUPPORTED;
    }
    buf->kind = BERTH_SHARED_HOST;
    buf->host = (uint8_t *)gpu_buffer_map(p->io) + p->io_off[p->n_inputs + index];
    buf->bytes = o->bytes;
    return BERTH_OK;
}

BK_BACKEND(.name = "vulkan", .version = "0.2.0", .open = vk_open, .close = vk_close, .caps = vk_caps,
           .supports_op = vk_supports_op, .upload_begin = vk_upload_begin, .upload_dest = vk_upload_dest,
           .upload_tensor = vk_upload_tensor, .upload_end = vk_upload_end, .plan = vk_plan_create, .run = vk_run,
           .free_plan = gpu_plan_free, .free_weights = vk_free_weights, .weights_bytes = vk_weights_bytes,
           .plan_bytes = gpu_plan_bytes, .plan_profile = gpu_plan_profile, .supports_node = vk_supports_node,
           .plan_memory = gpu_plan_memory, .node_cost = vk_node_cost, .export_output = vk_export_output,
           .save_state = vk_save_state, .load_state = vk_load_state,
           .options = vk_options_decl, .n_options = VK_OPTION_COUNT, .option_decl_size = sizeof(berth_option_decl))
