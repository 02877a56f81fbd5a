/* Opening a device: the options of [backend.vulkan], the instance, the
 * choice of physical device and compute queue, the one descriptor-set and
 * pipeline layout every shader shares, and the pipelines, created on
 * first use from the SPIR-V embedded at build time. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"
#include "vk_spirv.h"

#define VK_HOST_MIN_SIZE BERTH_HOST_SERVICES_V1_MIN_SIZE
#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

typedef struct vk_options {
    const char *device; /* NULL: choose by type */
    size_t staging_bytes, block_bytes;
    int validation;
    const char *io;
} vk_options;

const berth_option_decl vk_options_decl[VK_OPTION_COUNT] = {
    [VK_OPT_DEVICE] = {"device", BERTH_OPTION_STRING, NULL, NULL, 0, 0,
                       "the device: an index, or a piece of its name (default: a discrete gpu first)"},
    [VK_OPT_STAGING_MB] = {"staging_mb", BERTH_OPTION_INT, "64", NULL, 1, 4096,
                           "size of the host-visible staging buffer, in MiB"},
    [VK_OPT_BLOCK_MB] = {"block_mb", BERTH_OPTION_INT, "256", NULL, 1, 4096,
                         "weights share device allocations of at most this many MiB (a larger tensor gets its own)"},
    [VK_OPT_VALIDATION] = {"validation", BERTH_OPTION_BOOL, "false", NULL, 0, 0,
                           "enable the Khronos validation layer"},
    [VK_OPT_IO] = {"io", BERTH_OPTION_STRING, "auto", "auto|staged|direct", 0, 0,
                   "how a run's inputs and outputs reach the device: staged (copied through a host-visible "
                   "buffer), direct (bound where the host wrote them), auto (direct on unified memory)"},
};

static berth_status parse_options(const berth_host_services *host, vk_options *o, berth_error *err) {
    bk_option_value v[VK_OPTION_COUNT];
    berth_status st = bk_options_read(host, "vulkan", vk_options_decl, VK_OPTION_COUNT, v, err);
    if (st) return st;
    if (v[VK_OPT_DEVICE].set && !*v[VK_OPT_DEVICE].s) {
        bk_errf(err, "option 'device' in [backend.vulkan]: expected an index or a name, found ''");
        return BERTH_ERR_INVALID;
    }
    o->device = v[VK_OPT_DEVICE].set ? v[VK_OPT_DEVICE].s : NULL;
    o->staging_bytes = (size_t)v[VK_OPT_STAGING_MB].i << 20;
    o->block_bytes = (size_t)v[VK_OPT_BLOCK_MB].i << 20;
    o->validation = v[VK_OPT_VALIDATION].b;
    o->io = v[VK_OPT_IO].set ? v[VK_OPT_IO].s : "auto";
    return BERTH_OK;
}

static int has_layer(const char *name) {
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkLayerProperties *p = calloc(n, sizeof *p);
    int found = 0;
    if (p && vkEnumerateInstanceLayerProperties(&n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++)
            if (strcmp(p[i].layerName, name) == 0) found = 1;
    free(p);
    return found;
}

static berth_status make_instance(berth_device *d, const vk_options *o, berth_error *err) {
    if (o->validation && !has_layer(VALIDATION_LAYER)) {
        bk_errf(err, "option 'validation' in [backend.vulkan]: layer %s is not installed", VALIDATION_LAYER);
        return BERTH_ERR_INVALID;
    }
    const char *layers[] = {VALIDATION_LAYER};
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "berth",
                             .pEngineName = "berth", .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app,
                               .enabledLayerCount = o->validation ? 1u : 0u, .ppEnabledLayerNames = layers};
    VkResult r = vkCreateInstance(&ci, NULL, &d->inst);
    if (r != VK_SUCCESS) {
        d->inst = VK_NULL_HANDLE;
        bk_errf(err, "vulkan: no usable Vulkan driver (vkCreateInstance: %s)", vk_result_str(r));
        return BERTH_ERR_DEVICE;
    }
    return BERTH_OK;
}

static int type_rank(VkPhysicalDeviceType t) {
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
    }
}

static uint32_t timestamp_bits(VkPhysicalDevice pd, uint32_t family) {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties q[32];
    if (n > 32) n = 32;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    return family < n ? q[family].timestampValidBits : 0;
}

static uint32_t compute_family(VkPhysicalDevice pd) {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties q[32];
    if (n > 32) n = 32;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    for (uint32_t i = 0; i < n; i++)
        if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && q[i].queueCount > 0) return i;
    return GPU_NONE;
}

static int contains_nocase(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return n == 0;
}

static int all_digits(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return 0;
    return 1;
}

/* "0: name, 1: name" for messages. */
static void list_names(const VkPhysicalDeviceProperties *p, uint32_t n, char *buf, size_t cap) {
    size_t at = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < n && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%u: %s", i ? ", " : "", i, p[i].deviceName);
}

static berth_status choose_device(berth_device *d, const vk_options *o, berth_error *err) {
    uint32_t n = 0;
    VkResult r = vkEnumeratePhysicalDevices(d->inst, &n, NULL);
    if (r != VK_SUCCESS || n == 0) {
        bk_errf(err, "vulkan: no Vulkan device found");
        return BERTH_ERR_DEVICE;
    }
    if (n > 16) n = 16;
    VkPhysicalDevice pd[16];
    VkPhysicalDeviceProperties props[16];
    r = vkEnumeratePhysicalDevices(d->inst, &n, pd);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        bk_errf(err, "vulkan: listing devices failed: %s", vk_result_str(r));
        return BERTH_ERR_DEVICE;
    }
    for (uint32_t i = 0; i < n; i++) vkGetPhysicalDeviceProperties(pd[i], &props[i]);
    char names[256];
    list_names(props, n, names, sizeof names);
    uint32_t pick = GPU_NONE;
    if (o->device && all_digits(o->device)) {
        unsigned long idx = strtoul(o->device, NULL, 10);
        if (idx >= n) {
            bk_errf(err, "option 'device' in [backend.vulkan]: index %s is out of range, %u device%s (%s)",
                    o->device, n, n == 1 ? "" : "s", names);
            return BERTH_ERR_DEVICE;
        }
        pick = (uint32_t)idx;
    } else if (o->device) {
        for (uint32_t i = 0; i < n && pick == GPU_NONE; i++)
            if (contains_nocase(props[i].deviceName, o->device)) pick = i;
        if (pick == GPU_NONE) {
            bk_errf(err, "option 'device' in [backend.vulkan]: no device name contains '%s' (%s)", o->device,
                    names);
            return BERTH_ERR_DEVICE;
        }
    } else {
        for (uint32_t i = 0; i < n; i++)
            if (compute_family(pd[i]) != GPU_NONE &&
                (pick == GPU_NONE || type_rank(props[i].deviceType) > type_rank(props[pick].deviceType)))
                pick = i;
        if (pick == GPU_NONE) {
            bk_errf(err, "vulkan: no device has a compute queue (%s)", names);
            return BERTH_ERR_DEVICE;
        }
    }
    d->qfam = compute_family(pd[pick]);
    if (d->qfam == GPU_NONE) {
        bk_errf(err, "vulkan: device %u (%s) has no compute queue", pick, props[pick].deviceName);
        return BERTH_ERR_DEVICE;
    }
    d->phys = pd[pick];
    d->props = props[pick];
    d->timestamp_bits = props[pick].limits.timestampPeriod > 0 ? timestamp_bits(pd[pick], d->qfam) : 0;
    return BERTH_OK;
}

static void describe(berth_device *d) {
    vkGetPhysicalDeviceMemoryProperties(d->phys, &d->memprops);
    d->memory_bytes = 0;
    for (uint32_t i = 0; i < d->memprops.memoryHeapCount; i++)
        if (d->memprops.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
            d->memory_bytes += d->memprops.memoryHeaps[i].size;
    d->unified = d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                 d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    VkDeviceSize a = d->props.limits.minStorageBufferOffsetAlignment;
    d->align = a > 256 ? a : 256;
    d->max_range = d->props.limits.maxStorageBufferRange;
    snprintf(d->name, sizeof d->name, "%s (Vulkan %u.%u)", d->props.deviceName,
             VK_API_VERSION_MAJOR(d->props.apiVersion), VK_API_VERSION_MINOR(d->props.apiVersion));
}

static berth_status make_device(berth_device *d, berth_error *err) {
    float prio = 1.0f;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = d->qfam,
                                 .queueCount = 1, .pQueuePriorities = &prio};
    VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &q};
    VkResult r = vkCreateDevice(d->phys, &ci, NULL, &d->dev);
    if (r != VK_SUCCESS) {
        d->dev = VK_NULL_HANDLE;
        bk_errf(err, "vulkan: creating a device on %s failed: %s", d->props.deviceName, vk_result_str(r));
        return BERTH_ERR_DEVICE;
    }
    vkGetDeviceQueue(d->dev, d->qfam, 0, &d->queue);

    VkDescriptorSetLayoutBinding b[GPU_MAX_BIND];
    for (uint32_t i = 0; i < GPU_MAX_BIND; i++)
        b[i] = (VkDescriptorSetLayoutBinding){.binding = i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                           .bindingCount = GPU_MAX_BIND, .pBindings = b};
    VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = GPU_PC_WORDS * 4};
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = d->qfam};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = vkCreateDescriptorSetLayout(d->dev, &dci, NULL, &d->dsl)) != VK_SUCCESS) goto fail;
    VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                      .pSetLayouts = &d->dsl, .pushConstantRangeCount = 1,
                                      .pPushConstantRanges = &pcr};
    if ((r = vkCreatePipelineLayout(d->dev, &lci, NULL, &d->layout)) != VK_SUCCESS) goto fail;
    VkPipelineCacheCreateInfo cci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    if ((r = vkCreatePipelineCache(d->dev, &cci, NULL, &d->cache)) != VK_SUCCESS) goto fail;
    if ((r = vkCreateCommandPool(d->dev, &pci, NULL, &d->pool)) != VK_SUCCESS) goto fail;
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = d->pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    if ((r = vkAllocateCommandBuffers(d->dev, &ai, &d->xfer)) != VK_SUCCESS) goto fail;
    if ((r = vkCreateFence(d->dev, &fci, NULL, &d->xfer_fence)) != VK_SUCCESS) goto fail;
    return vk_buffer_create(d, 256, 0, &d->dummy, "the placeholder binding", err);
fail:
    bk_errf(err, "vulkan: setting up %s failed: %s", d->props.deviceName, vk_result_str(r));
    return r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? BERTH_ERR_NOMEM
                                                                                  : BERTH_ERR_DEVICE;
}

berth_status vk_device_open(const berth_host_services *host, berth_device **out, berth_error *err) {
    *out = NULL;
    if (!host || host->struct_size < VK_HOST_MIN_SIZE) {
        bk_errf(err, "vulkan: host services table is %u bytes, expected at least %zu", host ? host->struct_size : 0u,
                (size_t)VK_HOST_MIN_SIZE);
        return BERTH_ERR_INVALID;
    }
    vk_options o;
    berth_status st = parse_options(host, &o, err);
    if (st) return st;
    berth_device *d = calloc(1, sizeof *d);
    VkPipeline *pipes = calloc(VK_SPIRV_COUNT, sizeof *pipes);
    if (!d || !pipes || pthread_mutex_init(&d->lock, NULL) != 0) {
        free(d);
        free(pipes);
        bk_errf(err, "vulkan: out of memory opening the device");
        return BERTH_ERR_NOMEM;
    }
    d->host = host;
    d->pipes = pipes;
    d->staging_bytes = o.staging_bytes;
    d->block_max = o.block_bytes;
    st = make_instance(d, &o, err);
    if (!st) st = choose_device(d, &o, err);
    if (!st) {
        describe(d);
        d->io_direct = strcmp(o.io, "auto") ? strcmp(o.io, "direct") == 0 : d->unified;
        st = make_device(d, err);
    }
    if (st) {
        vk_device_close(d);
        return st;
    }
    *out = d;
    return BERTH_OK;
}

void vk_device_close(berth_device *d) {
    if (!d) return;
    if (d->dev) {
        vkDeviceWaitIdle(d->dev);
        for (size_t i = 0; i < VK_SPIRV_COUNT; i++)
            if (d->pipes[i]) vkDestroyPipeline(d->dev, d->pipes[i], NULL);
        for (uint32_t i = 0; i < d->n_specs; i++) vkDestroyPipeline(d->dev, d->specs[i].pipe, NULL);
        vk_buffer_destroy(d, &d->staging);
        vk_buffer_destroy(d, &d->dummy);
        if (d->xfer_fence) vkDestroyFence(d->dev, d->xfer_fence, NULL);
        if (d->pool) vkDestroyCommandPool(d->dev, d->pool, NULL);
        if (d->layout) vkDestroyPipelineLayout(d->dev, d->layout, NULL);
        if (d->cache) vkDestroyPipelineCache(d->dev, d->cache, NULL);
        if (d->dsl) vkDestroyDescriptorSetLayout(d->dev, d->dsl, NULL);
        vkDestroyDevice(d->dev, NULL);
    }
    if (d->inst) vkDestroyInstance(d->inst, NULL);
    pthread_mutex_destroy(&d->lock);
    free(d->pipes);
    free(d->specs);
    free(d);
}

uint32_t gpu_kernel_index(const char *name) {
    for (size_t i = 0; i < VK_SPIRV_COUNT; i++)
        if (strcmp(vk_spirv_table[i].name, name) == 0) return (uint32_t)i;
    return GPU_NONE;
}

/* Builds shader's pipeline with n specialization constants (ids 0..n-1). */
static VkResult build_pipeline(berth_device *d, uint32_t shader, uint32_t n, const uint32_t *vals, VkPipeline *out) {
    const vk_spirv_blob *b = &vk_spirv_table[shader];
    VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = b->bytes,
                                    .pCode = b->code};
    VkShaderModule mod;
    VkResult r = vkCreateShaderModule(d->dev, &mci, NULL, &mod);
    if (r != VK_SUCCESS) return r;
    VkSpecializationMapEntry map[GPU_MAX_SPEC];
    for (uint32_t i = 0; i < n; i++) map[i] = (VkSpecializationMapEntry){.constantID = i, .offset = 4 * i, .size = 4};
    VkSpecializationInfo si = {.mapEntryCount = n, .pMapEntries = map, .dataSize = 4 * (size_t)n, .pData = vals};
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = mod, .pName = "main", .pSpecializationInfo = n ? &si : NULL},
        .layout = d->layout};
    r = vkCreateComputePipelines(d->dev, d->cache, 1, &ci, NULL, out);
    vkDestroyShaderModule(d->dev, mod, NULL);
    if (r != VK_SUCCESS) *out = VK_NULL_HANDLE;
    return r;
}

/* The device keeps every pipeline it builds until close: one per shader,
 * plus one per distinct set of specialization constants (fused chains). */
berth_status vk_pipeline(berth_device *d, uint32_t shader, uint32_t n_spec, const uint32_t *spec, VkPipeline *out,
                         berth_error *err) {
    if (shader >= VK_SPIRV_COUNT || n_spec > GPU_MAX_SPEC) {
        bk_errf(err, "vulkan: shader %u with %u constants does not exist", shader, n_spec);
        return BERTH_ERR_INTERNAL;
    }
    pthread_mutex_lock(&d->lock);
    berth_status st = BERTH_OK;
    VkResult r = VK_SUCCESS;
    if (n_spec == 0) {
        if (!d->pipes[shader]) r = build_pipeline(d, shader, 0, NULL, &d->pipes[shader]);
        *out = d->pipes[shader];
    } else {
        vk_spec_pipe *sp = NULL;
        for (uint32_t i = 0; i < d->n_specs && !sp; i++)
            if (d->specs[i].shader == shader && d->specs[i].n == n_spec &&
                memcmp(d->specs[i].v, spec, 4 * (size_t)n_spec) == 0)
                sp = &d->specs[i];
        if (!sp && d->n_specs == d->cap_specs) {
            uint32_t cap = d->cap_specs ? 2 * d->cap_specs : 16;
            vk_spec_pipe *grown = realloc(d->specs, sizeof *grown * cap);
            if (!grown) {
                pthread_mutex_unlock(&d->lock);
                bk_errf(err, "vulkan: out of memory for %u specialized pipelines", cap);
                return BERTH_ERR_NOMEM;
            }
            d->specs = grown;
            d->cap_specs = cap;
        }
        if (!sp) {
            VkPipeline pipe;
            r = build_pipeline(d, shader, n_spec, spec, &pipe);
            if (r == VK_SUCCESS) {
                sp = &d->specs[d->n_specs++];
                memset(sp, 0, sizeof *sp);
                sp->shader = shader;
                sp->n = n_spec;
                memcpy(sp->v, spec, 4 * (size_t)n_spec);
                sp->pipe = pipe;
            }
        }
        *out = sp ? sp->pipe : VK_NULL_HANDLE;
    }
    if (r != VK_SUCCESS) {
        bk_errf(err, "vulkan: building the '%s' pipeline failed: %s", vk_spirv_table[shader].name, vk_result_str(r));
        st = BERTH_ERR_DEVICE;
    }
    pthread_mutex_unlock(&d->lock);
    return st;
}

berth_status vk_submit_wait(berth_device *d, VkCommandBuffer cmd, VkFence fence, berth_error *err) {
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
    pthread_mutex_lock(&d->lock);
    VkResult r = vkQueueSubmit(d->queue, 1, &si, fence);
    pthread_mutex_unlock(&d->lock);
    if (r == VK_SUCCESS) r = vkWaitForFences(d->dev, 1, &fence, VK_TRUE, UINT64_MAX);
    if (r == VK_SUCCESS) r = vkResetFences(d->dev, 1, &fence);
    if (r != VK_SUCCESS) {
        bk_errf(err, "vulkan: running a command buffer failed: %s", vk_result_str(r));
        return BERTH_ERR_DEVICE;
    }
    return BERTH_OK;
}
