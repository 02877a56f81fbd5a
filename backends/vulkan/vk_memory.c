/* Buffers and the bounded staging path. Device-local memory is used where
 * the device has it; the host reaches it only through one staging buffer
 * of `staging_mb`, copied in chunks, so host memory stays bounded however
 * large a tensor is. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static uint32_t memory_type(const berth_device *d, uint32_t bits, VkMemoryPropertyFlags want,
                            VkMemoryPropertyFlags prefer) {
    uint32_t fallback = GPU_NONE;
    for (uint32_t i = 0; i < d->memprops.memoryTypeCount; i++) {
        if (!(bits & (1u << i))) continue;
        VkMemoryPropertyFlags f = d->memprops.memoryTypes[i].propertyFlags;
        if ((f & want) != want) continue;
        if ((f & prefer) == prefer) return i;
        if (fallback == GPU_NONE) fallback = i;
    }
    return fallback;
}

berth_status vk_buffer_create(berth_device *d, VkDeviceSize size, int host_visible, vk_buffer *out,
                              const char *what, berth_error *err) {
    memset(out, 0, sizeof *out);
    if (size == 0) size = 4;
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = vkCreateBuffer(d->dev, &bi, NULL, &out->buf);
    if (r != VK_SUCCESS) {
        out->buf = VK_NULL_HANDLE;
        bk_errf(err, "vulkan: creating a %llu-byte buffer for %s failed: %s", (unsigned long long)size, what,
                vk_result_str(r));
        return r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? BERTH_ERR_NOMEM
                                                                                      : BERTH_ERR_DEVICE;
    }
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(d->dev, out->buf, &req);
    /* On unified memory dispatches bind host-visible buffers too
     * (gpu_device_unified): prefer a type that is device-local as well. */
    uint32_t type = host_visible
                        ? memory_type(d, req.memoryTypeBits,
                                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                      d->unified ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : 0)
                        : memory_type(d, req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type == GPU_NONE) {
        vk_buffer_destroy(d, out);
        bk_errf(err, "vulkan: no %s memory type for %s", host_visible ? "host-visible coherent" : "usable", what);
        return BERTH_ERR_DEVICE;
    }
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                               .memoryTypeIndex = type};
    r = vkAllocateMemory(d->dev, &ai, NULL, &out->mem);
    if (r == VK_SUCCESS) r = vkBindBufferMemory(d->dev, out->buf, out->mem, 0);
    if (r == VK_SUCCESS && host_visible) r = vkMapMemory(d->dev, out->mem, 0, VK_WHOLE_SIZE, 0, &out->map);
    if (r != VK_SUCCESS) {
        vk_buffer_destroy(d, out);
        bk_errf(err, "vulkan: allocating %llu bytes of %s memory for %s failed: %s",
                (unsigned long long)req.size, host_visible ? "host-visible" : "device", what, vk_result_str(r));
        return r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? BERTH_ERR_NOMEM
                                                                                      : BERTH_ERR_DEVICE;
    }
    out->size = size;
    out->cached = host_visible && (d->memprops.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    return BERTH_OK;
}

void vk_buffer_destroy(berth_device *d, vk_buffer *b) {
    if (b->map) vkUnmapMemory(d->dev, b->mem);
    if (b->buf) vkDestroyBuffer(d->dev, b->buf, NULL);
    if (b->mem) vkFreeMemory(d->dev, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

berth_status vk_staging_ensure(berth_device *d, berth_error *err) {
    pthread_mutex_lock(&d->lock);
    berth_status st = d->staging.buf ? BERTH_OK
                                     : vk_buffer_create(d, d->staging_bytes, 1, &d->staging, "the staging buffer", err);
    pthread_mutex_unlock(&d->lock);
    return st;
}

/* Copies staging[0, bytes) to dst at off and waits. Caller holds d->lock. */
static berth_status copy_locked(berth_device *d, vk_buffer *dst, VkDeviceSize off, size_t bytes, berth_error *err) {
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult r = vkResetCommandBuffer(d->xfer, 0);
    if (r == VK_SUCCESS) r = vkBeginCommandBuffer(d->xfer, &bi);
    if (r == VK_SUCCESS) {
        VkBufferCopy region = {.srcOffset = 0, .dstOffset = off, .size = bytes};
        vkCmdCopyBuffer(d->xfer, d->staging.buf, dst->buf, 1, &region);
        /* Later command buffers read this memory from shaders and copies. */
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT};
        vkCmdPipelineBarrier(d->xfer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                             NULL, 0, NULL);
        r = vkEndCommandBuffer(d->xfer);
    }
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &d->xfer};
    if (r == VK_SUCCESS) r = vkQueueSubmit(d->queue, 1, &si, d->xfer_fence);
    if (r == VK_SUCCESS) r = vkWaitForFences(d->dev, 1, &d->xfer_fence, VK_TRUE, UINT64_MAX);
    if (r == VK_SUCCESS) r = vkResetFences(d->dev, 1, &d->xfer_fence);
    if (r != VK_SUCCESS) {
        bk_errf(err, "vulkan: copying %zu bytes to the device failed: %s", bytes, vk_result_str(r));
        return BERTH_ERR_DEVICE;
    }
    return BERTH_OK;
}

berth_status vk_flush_staging(berth_device *d, vk_buffer *dst, VkDeviceSize off, size_t bytes, berth_error *err) {
    if (bytes == 0) return BERTH_OK;
    if (bytes > d->staging.size || off + bytes > dst->size) {
        bk_errf(err, "vulkan: a %zu-byte staging copy does not fit (staging %llu, destination %llu at %llu)", bytes,
                (unsigned long long)d->staging.size, (unsigned long long)dst->size, (unsigned long long)off);
        return BERTH_ERR_INTERNAL;
    }
    pthread_mutex_lock(&d->lock);
    berth_status st = copy_locked(d, dst, off, bytes, err);
    pthread_mutex_unlock(&d->lock);
    return st;
}

berth_status vk_write_buffer(berth_device *d, vk_buffer *dst, VkDeviceSize off, const void *src, size_t bytes,
                             berth_error *err) {
    if (bytes == 0) return BERTH_OK;
    if (off + bytes > dst->size) {
        bk_errf(err, "vulkan: writing %zu bytes at %llu overruns a %llu-byte buffer", bytes, (unsigned long long)off,
                (unsigned long long)dst->size);
        return BERTH_ERR_INTERNAL;
    }
    pthread_mutex_lock(&d->lock);
    berth_status st = d->staging.buf ? BERTH_OK : vk_buffer_create(d, d->staging_bytes, 1, &d->staging,
                                                                   "the staging buffer", err);
    for (size_t done = 0; done < bytes && !st;) {
        size_t chunk = bytes - done < d->staging.size ? bytes - done : (size_t)d->staging.size;
        memcpy(d->staging.map, (const uint8_t *)src + done, chunk);
        st = copy_locked(d, dst, off + done, chunk, err);
        done += chunk;
    }
    pthread_mutex_unlock(&d->lock);
    return st;
}

/* ---- the core's device interface ---- */

uint64_t gpu_device_align(const berth_device *d) { return d->align; }
uint64_t gpu_device_max_range(const berth_device *d) { return d->max_range; }
int gpu_device_unified(const berth_device *d) { return d->io_direct; }

berth_status gpu_buffer_new(berth_device *d, uint64_t size, int host_visible, gpu_buffer **out, const char *what,
                            berth_error *err) {
    *out = calloc(1, sizeof **out);
    if (!*out) {
        bk_errf(err, "vulkan: out of memory for %s", what);
        return BERTH_ERR_NOMEM;
    }
    berth_status st = vk_buffer_create(d, size, host_visible, *out, what, err);
    if (st) {
        free(*out);
        *out = NULL;
    }
    return st;
}

void gpu_buffer_free(berth_device *d, gpu_buffer *b) {
    if (!b) return;
    vk_buffer_destroy(d, b);
    free(b);
}

uint64_t gpu_buffer_size(const gpu_buffer *b) { return b->size; }

berth_status gpu_buffer_write(berth_device *d, gpu_buffer *dst, uint64_t off, const void *src, size_t bytes,
                              berth_error *err) {
    return vk_write_buffer(d, dst, off, src, bytes, err);
}

void *gpu_buffer_map(const gpu_buffer *b) { return b->map; }
