/* Compiled programs kept between processes (ABI 1.4 BERTH_STATE_PROGRAMS):
 * the device's pipeline cache, whose bytes the driver fills as pipelines
 * are built. Before the bytes reach the driver their header is checked
 * against this device (vendor, device, the driver's cache UUID): a file
 * from another GPU or driver release is refused here, as the Vulkan
 * specification asks of the application, not left to each driver. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

/* VkPipelineCacheHeaderVersionOne, read field by field: the bytes may be
 * of any alignment. */
static int header_fits(const berth_device *d, const uint8_t *p, size_t bytes, berth_error *err) {
    uint32_t size, version, vendor, device;
    if (bytes < 16 + VK_UUID_SIZE) {
        bk_errf(err, "vulkan: saved programs: %zu bytes, shorter than a pipeline cache header", bytes);
        return 0;
    }
    memcpy(&size, p, 4);
    memcpy(&version, p + 4, 4);
    memcpy(&vendor, p + 8, 4);
    memcpy(&device, p + 12, 4);
    if (size < 16 + VK_UUID_SIZE || size > bytes || version != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) {
        bk_errf(err, "vulkan: saved programs: not a pipeline cache (header %u bytes, version %u)", size, version);
        return 0;
    }
    if (vendor != d->props.vendorID || device != d->props.deviceID ||
        memcmp(p + 16, d->props.pipelineCacheUUID, VK_UUID_SIZE)) {
        bk_errf(err, "vulkan: saved programs: made for device %04x:%04x or another driver release, this is "
                "%04x:%04x (%s)", vendor, device, d->props.vendorID, d->props.deviceID, d->props.deviceName);
        return 0;
    }
    return 1;
}

berth_status vk_save_state(berth_device *d, berth_weights *w, uint32_t kind, void *buf, size_t *bytes,
                           berth_error *err) {
    (void)w;
    if (kind != BERTH_STATE_PROGRAMS) {
        bk_errf(err, "vulkan: keeps no state of kind %u between processes", kind);
        return BERTH_ERR_UNSUPPORTED;
    }
    pthread_mutex_lock(&d->lock);
    size_t n = buf ? *bytes : 0;
    VkResult r = vkGetPipelineCacheData(d->dev, d->cache, &n, buf);
    pthread_mutex_unlock(&d->lock);
    if (r != VK_SUCCESS) {
        /* VK_INCOMPLETE: the cache grew between the size and the copy */
        bk_errf(err, "vulkan: reading the pipeline cache failed: %s", vk_result_str(r));
        return r == VK_INCOMPLETE ? BERTH_ERR_INVALID : BERTH_ERR_INTERNAL;
    }
    *bytes = n;
    return BERTH_OK;
}

berth_status vk_load_state(berth_device *d, berth_weights *w, uint32_t kind, const void *buf, size_t bytes,
                           berth_error *err) {
    (void)w;
    if (kind != BERTH_STATE_PROGRAMS) {
        bk_errf(err, "vulkan: keeps no state of kind %u between processes", kind);
        return BERTH_ERR_UNSUPPORTED;
    }
    if (!buf || !header_fits(d, buf, bytes, err)) return BERTH_ERR_INVALID;
    VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                    .initialDataSize = bytes, .pInitialData = buf};
    VkPipelineCache saved;
    VkResult r = vkCreatePipelineCache(d->dev, &ci, NULL, &saved);
    if (r == VK_SUCCESS) {
        pthread_mutex_lock(&d->lock);
        r = vkMergePipelineCaches(d->dev, d->cache, 1, &saved);
        pthread_mutex_unlock(&d->lock);
        vkDestroyPipelineCache(d->dev, saved, NULL);
    }
    if (r != VK_SUCCESS) {
        bk_errf(err, "vulkan: taking saved programs back failed: %s", vk_result_str(r));
        return r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? BERTH_ERR_NOMEM
                                                                                        : BERTH_ERR_INVALID;
    }
    return BERTH_OK;
}
