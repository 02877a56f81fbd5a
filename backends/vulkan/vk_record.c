/* Recording a plan's one command buffer, and run(). The command buffer
 * copies the inputs from the host-visible io buffer into the arena (where
 * they do not live in it already: unified memory), runs
 * every dispatch with a barrier wherever a dispatch touches memory that an
 * earlier, unfenced one wrote (or reads what it is about to overwrite),
 * and copies the outputs back; run() only fills io, submits and waits. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static berth_status make_sets(berth_plan *p, VkDescriptorSet *sets, berth_error *err) {
    berth_device *d = p->dev;
    uint32_t n = p->n_disp ? p->n_disp : 1;
    VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = n * GPU_MAX_BIND};
    VkDescriptorPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = n,
                                      .poolSizeCount = 1, .pPoolSizes = &size};
    VkResult r = vkCreateDescriptorPool(d->dev, &pci, NULL, &p->rec->dpool);
    for (uint32_t i = 0; i < p->n_disp && r == VK_SUCCESS; i++) {
        VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                          .descriptorPool = p->rec->dpool, .descriptorSetCount = 1,
                                          .pSetLayouts = &d->dsl};
        r = vkAllocateDescriptorSets(d->dev, &ai, &sets[i]);
        if (r != VK_SUCCESS) break;
        VkDescriptorBufferInfo bi[GPU_MAX_BIND];
        VkWriteDescriptorSet wr[GPU_MAX_BIND];
        for (uint32_t b = 0; b < GPU_MAX_BIND; b++) {
            bi[b] = (VkDescriptorBufferInfo){.buffer = d->dummy.buf, .offset = 0, .range = d->dummy.size};
            if (b < p->disp[i].n_bind && p->disp[i].bind[b] != GPU_NONE) {
                const gpu_opnd *o = &p->ops[p->disp[i].bind[b]];
                if (o->buf && o->bytes) bi[b] = (VkDescriptorBufferInfo){.buffer = o->buf->buf, .offset = o->off,
                                                                          .range = (o->bytes + 3) & ~(size_t)3};
            }
            wr[b] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = sets[i],
                                           .dstBinding = b, .descriptorCount = 1,
                                           .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .pBufferInfo = &bi[b]};
        }
        vkUpdateDescriptorSets(d->dev, GPU_MAX_BIND, wr, 0, NULL);
    }
    if (r != VK_SUCCESS) {
        bk_errf(err, "vulkan: allocating %u descriptor sets failed: %s", n, vk_result_str(r));
        return BERTH_ERR_DEVICE;
    }
    return BERTH_OK;
}

static void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags sa, VkPipelineStageFlags dst,
                    VkAccessFlags da) {
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = sa, .dstAccessMask = da};
    vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* Two timestamps per node: one before its first dispatch, one after its
 * last. A node with no dispatch (a view) gets both at once, so every query
 * is written and reading the results back never waits on one that is not. */
static void stamp(berth_plan *p, uint32_t query) {
    if (p->rec->timer) vkCmdWriteTimestamp(p->rec->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->rec->timer, query);
}

static void stamp_empty(berth_plan *p, uint32_t from, uint32_t to) {
    for (uint32_t k = from; k < to; k++) {
        stamp(p, 2 * k);
        stamp(p, 2 * k + 1);
    }
}

static void record_dispatches(berth_plan *p, const VkDescriptorSet *sets, const VkPipeline *pipes) {
    VkCommandBuffer cmd = p->rec->cmd;
    VkPipeline bound = VK_NULL_HANDLE;
    uint32_t next = 0; /* the first node not yet stamped */
    for (uint32_t i = 0; i < p->n_disp; i++) {
        const gpu_dispatch *d = &p->disp[i];
        if (i == 0 || p->disp[i - 1].node != d->node) {
            stamp_empty(p, next, d->node);
            stamp(p, 2 * d->node);
            next = d->node + 1;
        }
        if (d->barrier)
            barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        if (pipes[i] != bound) {
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipes[i]);
            bound = pipes[i];
        }
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->dev->layout, 0, 1, &sets[i], 0, NULL);
        vkCmdPushConstants(cmd, p->dev->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, GPU_PC_WORDS * 4, d->pc);
        vkCmdDispatch(cmd, d->groups[0], d->groups[1], d->groups[2]);
        if (i + 1 == p->n_disp || p->disp[i + 1].node != d->node) stamp(p, 2 * d->node + 1);
    }
    stamp_empty(p, next, p->n_nodes);
}

/* A timestamp query pool where the queue supports it; timing is optional,
 * so a device without it only makes plan_profile answer unsupported. */
static berth_status make_timer(berth_plan *p, berth_error *err) {
    berth_device *d = p->dev;
    if (!d->timestamp_bits || p->n_nodes == 0) return BERTH_OK;
    gpu_record *r = p->rec;
    r->stamps = calloc((size_t)p->n_nodes * 3, sizeof *r->stamps);
    if (!r->stamps) {
        bk_errf(err, "vulkan: out of memory for %u node timers", p->n_nodes);
        return BERTH_ERR_NOMEM;
    }
    p->node_ns = r->stamps + 2 * (size_t)p->n_nodes;
    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = 2 * p->n_nodes};
    if (vkCreateQueryPool(d->dev, &qi, NULL, &r->timer) != VK_SUCCESS) {
        r->timer = VK_NULL_HANDLE;
        p->node_ns = NULL; /* untimed: plan_profile answers unsupported */
    }
    return BERTH_OK;
}

/* Reads the last run's timestamps into node_ns; no allocation. */
static void read_timer(berth_plan *p) {
    gpu_record *rec = p->rec;
    if (!rec->timer) return;
    uint32_t n = 2 * p->n_nodes;
    VkResult r = vkGetQueryPoolResults(p->dev->dev, rec->timer, 0, n, sizeof(uint64_t) * n, rec->stamps,
                                       sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    uint64_t mask = p->dev->timestamp_bits >= 64 ? UINT64_MAX : (1ull << p->dev->timestamp_bits) - 1;
    double period = p->dev->props.limits.timestampPeriod;
    for (uint32_t k = 0; k < p->n_nodes; k++) {
        uint64_t t0 = rec->stamps[2 * k] & mask, t1 = rec->stamps[2 * k + 1] & mask;
        p->node_ns[k] = r == VK_SUCCESS ? (uint64_t)((double)((t1 - t0) & mask) * period) : 0;
    }
}

static void record_copies(berth_plan *p, int outputs) {
    uint32_t first = outputs ? p->n_inputs : 0, n = outputs ? p->n_outputs : p->n_inputs;
    for (uint32_t i = 0; i < n; i++) {
        const gpu_opnd *o = &p->ops[outputs ? p->outputs[i] : p->inputs[i]];
        if (!gpu_io_copied(p, first + i)) continue;
        VkBufferCopy c = {.size = o->bytes};
        if (outputs) {
            c.srcOffset = o->off;
            c.dstOffset = p->io_off[first + i];
            vkCmdCopyBuffer(p->rec->cmd, o->buf->buf, p->io->buf, 1, &c);
        } else {
            c.srcOffset = p->io_off[first + i];
            c.dstOffset = o->off;
            vkCmdCopyBuffer(p->rec->cmd, p->io->buf, o->buf->buf, 1, &c);
        }
    }
}

berth_status gpu_record_plan(berth_plan *p, berth_error *err) {
    berth_device *d = p->dev;
    uint32_t n = p->n_disp ? p->n_disp : 1;
    VkDescriptorSet *sets = calloc(n, sizeof *sets);
    VkPipeline *pipes = calloc(n, sizeof *pipes);
    berth_status st = BERTH_OK;
    if (!(p->rec = calloc(1, sizeof *p->rec)) || !sets || !pipes) {
        bk_errf(err, "vulkan: out of memory recording a plan");
        st = BERTH_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < p->n_disp && !st; i++)
        st = vk_pipeline(d, p->disp[i].shader, p->disp[i].n_spec, p->disp[i].spec, &pipes[i], err);
    if (!st) st = make_sets(p, sets, err);
    if (!st) st = make_timer(p, err);
    VkResult r = VK_SUCCESS;
    if (!st) {
        VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                          .commandPool = d->pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                          .commandBufferCount = 1};
        VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        pthread_mutex_lock(&d->lock); /* the command pool is the device's */
        gpu_record *rec = p->rec;
        r = vkAllocateCommandBuffers(d->dev, &ai, &rec->cmd);
        if (r != VK_SUCCESS) rec->cmd = VK_NULL_HANDLE;
        if (r == VK_SUCCESS) r = vkCreateFence(d->dev, &fci, NULL, &rec->fence);
        if (r == VK_SUCCESS) r = vkBeginCommandBuffer(rec->cmd, &bi);
        if (r == VK_SUCCESS) {
            /* Nodes without dispatches keep a zero pair: results only
             * come back for queries written, so reset them all here. */
            if (rec->timer) vkCmdResetQueryPool(rec->cmd, rec->timer, 0, 2 * p->n_nodes);
            record_copies(p, 0);
            barrier(rec->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT);
            record_dispatches(p, sets, pipes);
            barrier(rec->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                    VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
            record_copies(p, 1);
            /* Outputs a dispatch wrote straight into the io buffer (unified
             * memory) are read by the host too, not only copied ones. */
            barrier(rec->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                    VK_ACCESS_HOST_READ_BIT);
            r = vkEndCommandBuffer(rec->cmd);
        }
        pthread_mutex_unlock(&d->lock);
        if (r != VK_SUCCESS) {
            bk_errf(err, "vulkan: recording the plan's command buffer failed: %s", vk_result_str(r));
            st = BERTH_ERR_DEVICE;
        }
    }
    free(sets);
    free(pipes);
    return st;
}

/* What the driver's reports would be, were there any: a descriptor set of
 * GPU_MAX_BIND storage buffers per dispatch (64 bytes a descriptor is
 * more than the common drivers use), about 256 bytes of command stream
 * per dispatch (pipeline and set binds, 128 bytes of push constants, the
 * dispatch and its barrier), and the timer's queries and results. */
uint64_t gpu_record_bytes(const berth_plan *p) {
    return (uint64_t)p->n_disp * (GPU_MAX_BIND * 64 + 256) + (uint64_t)p->n_nodes * 2 * (8 + 8) +
           (p->rec && p->rec->stamps ? (uint64_t)p->n_nodes * 3 * sizeof *p->rec->stamps : 0);
}

void gpu_record_free(berth_plan *p) {
    gpu_record *rec = p->rec;
    if (!rec) return;
    berth_device *d = p->dev;
    if (rec->fence) vkDestroyFence(d->dev, rec->fence, NULL);
    if (rec->cmd) {
        pthread_mutex_lock(&d->lock); /* the command pool is the device's */
        vkFreeCommandBuffers(d->dev, d->pool, 1, &rec->cmd);
        pthread_mutex_unlock(&d->lock);
    }
    if (rec->dpool) vkDestroyDescriptorPool(d->dev, rec->dpool, NULL);
    if (rec->timer) vkDestroyQueryPool(d->dev, rec->timer, NULL);
    free(rec->stamps);
    free(rec);
    p->rec = NULL;
    p->node_ns = NULL;
}

berth_status vk_run(berth_plan *p, const berth_tensor *in, uint32_t n_in, berth_tensor *out, uint32_t n_out,
                    berth_error *err) {
    berth_status st = gpu_run_begin(p, in, n_in, out, n_out, err);
    if (st) return st;
    if ((st = vk_submit_wait(p->dev, p->rec->cmd, p->rec->fence, err))) return st;
    read_timer(p);
    gpu_run_end(p, out);
    return BERTH_OK;
}
