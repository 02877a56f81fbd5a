/* The metal backend's device layer, under the GPU core
 * (backends/gpu/gpu_core.h), which prepares, fuses, places and says where
 * barriers go. Metal objects live in these C structs as retained
 * references (CFBridgingRetain), released with CFBridgingRelease, so the
 * core's plain C code can hold them. Buffers are in shared storage: on
 * unified memory the weights the archive reads through upload_dest land
 * in memory the GPU uses, with no staging and no second copy. */
#ifndef BERTH_MTL_INTERNAL_H
#define BERTH_MTL_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "gpu_core.h"

struct gpu_buffer {
    void *buf; /* id<MTLBuffer>, retained */
    uint64_t size;
    void *map; /* its contents: shared storage is always host-visible */
};

/* One pipeline per (kernel, specialization constants), built on first use. */
typedef struct mtl_pipe {
    uint32_t kernel, n;
    uint32_t v[GPU_MAX_SPEC];
    void *state; /* id<MTLComputePipelineState>, retained */
} mtl_pipe;

struct berth_device {
    const berth_host_services *host;
    void *dev;     /* id<MTLDevice> */
    void *queue;   /* id<MTLCommandQueue> */
    void *metallib; /* id<MTLLibrary> of every kernel, compiled ahead (BERTH_METALLIB), or NULL */
    void **libs;    /* else id<MTLLibrary> per kernel, compiled from its MSL on first use */
    mtl_pipe *pipes;
    uint32_t n_pipes, cap_pipes;
    char name[256];
    uint64_t memory_bytes;
    int unified;
    pthread_mutex_t lock; /* the pipeline cache */
};

/* The weights: one shared buffer per tensor. */
struct berth_weights {
    berth_device *dev;
    bk_upload up;
    uint32_t n;
    gpu_buffer *t; /* by id */
    uint64_t total;
    void *offered; /* the contents upload_dest handed out, until upload_tensor */
};

/* The core's gpu_record: what run() encodes into one command buffer: the
 * pipeline of each dispatch (Metal records nothing ahead of time; a
 * command buffer is used once). */
struct gpu_record {
    void **states; /* id<MTLComputePipelineState> per dispatch, owned by the device's cache */
};

berth_status mtl_device_open(const berth_host_services *host, berth_device **out, berth_error *err);
void mtl_device_close(berth_device *d);
/* The pipeline of `kernel` with its specialization constants. */
berth_status mtl_pipeline(berth_device *d, uint32_t kernel, uint32_t n_spec, const uint32_t *spec, void **state,
                          berth_error *err);
berth_status mtl_run(berth_plan *p, const berth_tensor *in, uint32_t n_in, berth_tensor *out, uint32_t n_out,
                     berth_error *err);

#endif
