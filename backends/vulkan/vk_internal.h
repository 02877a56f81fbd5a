/* The vulkan backend's device layer: the Vulkan device, buffers, weights,
 * pipelines and the recording of a plan's dispatch list, under the GPU
 * core (backends/gpu/gpu_core.h), which prepares, fuses and places. */
#ifndef BERTH_VK_INTERNAL_H
#define BERTH_VK_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#include "gpu_core.h"

/* ---- errors ---- */
const char *vk_result_str(VkResult r);

/* ---- buffers ---- */
/* The core's gpu_buffer. */
struct gpu_buffer {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    void *map; /* host-visible buffers stay mapped */
    int cached; /* host-visible memory the cpu reads through its caches */
};
typedef struct gpu_buffer vk_buffer;

typedef struct berth_device berth_device;
/* host_visible: host-visible, coherent memory (staging, run I/O);
 * otherwise device-local where the device has it. */
berth_status vk_buffer_create(berth_device *d, VkDeviceSize size, int host_visible, vk_buffer *out,
                              const char *what, berth_error *err);
void vk_buffer_destroy(berth_device *d, vk_buffer *b);
/* Copies bytes from host memory into dst at off through the staging
 * buffer, one bounded chunk at a time. */
berth_status vk_write_buffer(berth_device *d, vk_buffer *dst, VkDeviceSize off, const void *src, size_t bytes,
                             berth_error *err);
/* Copies `bytes` already written at the start of the staging buffer into
 * dst at off. */
berth_status vk_flush_staging(berth_device *d, vk_buffer *dst, VkDeviceSize off, size_t bytes, berth_error *err);
berth_status vk_staging_ensure(berth_device *d, berth_error *err);

/* ---- device ---- */
typedef struct vk_spec_pipe {
    uint32_t shader, n;
    uint32_t v[GPU_MAX_SPEC];
    VkPipeline pipe;
} vk_spec_pipe;

struct berth_device {
    const berth_host_services *host;
    VkInstance inst;
    VkPhysicalDevice phys;
    VkDevice dev;
    VkQueue queue;
    uint32_t qfam;
    uint32_t timestamp_bits; /* 0: the queue cannot time nodes */
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties memprops;
    char name[300];
    uint64_t memory_bytes;
    int unified;
    int io_direct;             /* option io: plans bind inputs and outputs in host-visible memory */
    size_t staging_bytes;      /* option staging_mb */
    VkDeviceSize block_max;    /* option block_mb: the largest weights block */
    VkDeviceSize align;        /* offset alignment for storage bindings */
    VkDeviceSize max_range;    /* maxStorageBufferRange */
    VkDescriptorSetLayout dsl; /* GPU_MAX_BIND storage buffers, for every shader */
    VkPipelineLayout layout;
    VkPipelineCache cache; /* every pipeline is built through it; saved as BERTH_STATE_PROGRAMS */
    VkPipeline *pipes; /* one per embedded shader, created on first use */
    vk_spec_pipe *specs; /* specialized pipelines, created on first use */
    uint32_t n_specs, cap_specs;
    VkCommandPool pool;
    VkCommandBuffer xfer; /* staging copies */
    VkFence xfer_fence;
    vk_buffer staging;
    vk_buffer dummy; /* bound to unused slots */
    pthread_mutex_t lock; /* the queue, the staging buffer and pipe creation */
};

/* Options and device choice (vk_device.c). */
enum { VK_OPT_DEVICE, VK_OPT_STAGING_MB, VK_OPT_BLOCK_MB, VK_OPT_VALIDATION, VK_OPT_IO, VK_OPTION_COUNT };
extern const berth_option_decl vk_options_decl[VK_OPTION_COUNT];
berth_status vk_device_open(const berth_host_services *host, berth_device **out, berth_error *err);
void vk_device_close(berth_device *d);
/* The pipeline of `shader` with n_spec specialization constants (ids
 * 0..n_spec-1; 0: none), built on first use and kept until close. */
berth_status vk_pipeline(berth_device *d, uint32_t shader, uint32_t n_spec, const uint32_t *spec, VkPipeline *out,
                         berth_error *err);
/* Submits one command buffer and waits for `fence`, then resets it. */
/* BERTH_STATE_PROGRAMS: the pipeline cache saved and merged back (vk_programs.c). */
berth_status vk_save_state(berth_device *d, berth_weights *w, uint32_t kind, void *buf, size_t *bytes,
                           berth_error *err);
berth_status vk_load_state(berth_device *d, berth_weights *w, uint32_t kind, const void *buf, size_t bytes,
                           berth_error *err);
berth_status vk_submit_wait(berth_device *d, VkCommandBuffer cmd, VkFence fence, berth_error *err);

/* ---- weights ---- */
typedef struct vk_weight {
    uint32_t block;
    VkDeviceSize off, bytes;
} vk_weight;

struct berth_weights {
    berth_device *dev;
    bk_upload up;
    uint32_t n;
    vk_weight *t;
    vk_buffer *blocks;
    uint32_t n_blocks;
    VkDeviceSize block_size, block_used; /* of the last block */
    uint64_t announced; /* upload_begin's total bytes */
    uint32_t n_up;      /* tensors uploaded */
    uint64_t total;
    int offered; /* upload_dest handed out the staging memory */
};

/* ---- plans ---- */
/* The core's gpu_record: one command buffer for the whole plan. */
struct gpu_record {
    VkDescriptorPool dpool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkQueryPool timer; /* two timestamps per node, where the queue has them */
    uint64_t *stamps;  /* 2 * n_nodes results, then the n_nodes times */
};
berth_status vk_run(berth_plan *p, const berth_tensor *in, uint32_t n_in, berth_tensor *out, uint32_t n_out,
                    berth_error *err);

#endif
