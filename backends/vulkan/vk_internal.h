/* Internal interfaces of the vulkan backend: the device, buffers, weights
 * and plan objects, and the contract between the planner and the op files.
 *
 * The shape of a plan: each op validates its node at plan time and emits
 * one or more dispatches (a shader, up to VK_MAX_BIND operand bindings,
 * 32 words of push constants and a group count). Views emit nothing and
 * alias their input's storage. After every node is prepared the planner
 * places every intermediate in one arena by liveness, writes the
 * descriptor sets and records one command buffer for the whole graph;
 * run() only copies inputs in, submits, waits and copies outputs out. */
#ifndef BERTH_VK_INTERNAL_H
#define BERTH_VK_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#include "berth/backend.h"
#include "bk.h"

#define VK_NONE BK_NONE
#define VK_PC_WORDS 32 /* 128 bytes: the push-constant size every device offers */
#define VK_MAX_BIND 8
#define VK_MAX_SPEC 12 /* specialization constants a dispatch may set */
#define VK_MAX_GROUPS 65535u /* the group count every device offers per axis */

/* ---- errors and small helpers ---- */
const char *vk_result_str(VkResult r);
static inline uint32_t vk_f2u(float f) {
    union { float f; uint32_t u; } v = {.f = f};
    return v.u;
}
/* Workgroups for n items at `local` items per group, capped: shaders
 * walk the rest with grid-stride loops. */
uint32_t vk_groups(uint64_t n, uint32_t local);

/* ---- buffers ---- */
typedef struct vk_buffer {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    void *map; /* host-visible buffers stay mapped */
} vk_buffer;

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
    uint32_t v[VK_MAX_SPEC];
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
    size_t staging_bytes;      /* option staging_mb */
    VkDeviceSize align;        /* offset alignment for storage bindings */
    VkDeviceSize max_range;    /* maxStorageBufferRange */
    VkDescriptorSetLayout dsl; /* VK_MAX_BIND storage buffers, for every shader */
    VkPipelineLayout layout;
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
enum { VK_OPT_DEVICE, VK_OPT_STAGING_MB, VK_OPT_VALIDATION, VK_OPTION_COUNT };
extern const berth_option_decl vk_options_decl[VK_OPTION_COUNT];
berth_status vk_device_open(const berth_host_services *host, berth_device **out, berth_error *err);
void vk_device_close(berth_device *d);
/* Index into the embedded shader table, VK_NONE if absent. */
uint32_t vk_shader_index(const char *name);
/* The pipeline of `shader` with n_spec specialization constants (ids
 * 0..n_spec-1; 0: none), built on first use and kept until close. */
berth_status vk_pipeline(berth_device *d, uint32_t shader, uint32_t n_spec, const uint32_t *spec, VkPipeline *out,
                         berth_error *err);
/* Submits one command buffer and waits for `fence`, then resets it. */
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
    uint64_t total;
    int offered; /* upload_dest handed out the staging memory */
};

/* ---- plans ---- */
typedef struct vk_opnd {
    const char *name; /* the host's string: valid during plan() only */
    berth_operand_kind kind;
    berth_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    size_t numel, bytes;
    uint32_t alias;      /* VK_NONE, or the operand whose storage this views */
    int64_t first, last; /* dispatch-node range that touches the storage */
    VkBuffer buf;
    VkDeviceSize off;
} vk_opnd;

typedef struct vk_dispatch {
    uint32_t node;
    uint32_t shader;
    uint32_t n_bind;
    uint32_t bind[VK_MAX_BIND]; /* operand indices */
    uint32_t groups[3];
    uint32_t pc[VK_PC_WORDS];
    uint32_t n_spec; /* specialization constants (fused chains), 0: none */
    uint32_t spec[VK_MAX_SPEC];
} vk_dispatch;

typedef struct berth_plan {
    berth_device *dev;
    uint32_t n_ops, cap_ops;
    vk_opnd *ops;
    uint32_t n_nodes;
    vk_dispatch *disp;
    uint32_t n_disp, cap_disp;
    uint32_t n_inputs, n_outputs;
    uint32_t *inputs, *outputs;
    VkDeviceSize *io_off; /* inputs then outputs, in the io buffer */
    vk_buffer arena, consts, io;
    VkDescriptorPool dpool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkQueryPool timer;  /* two timestamps per node, where the queue has them */
    uint64_t *stamps;   /* 2 * n_nodes results, read back after each run */
    uint64_t *node_ns;  /* n_nodes, the last run's time per node */
    uint64_t bytes;
    size_t tensor_size; /* element size of run()'s tensor arrays */
} berth_plan;

/* ---- plan-time contract for ops ---- */
/* The kit's node context (graph, node, error) is the first member, so op
 * code reads c->g, c->node, c->err and hands &c->bk to the kit. */
typedef struct vk_prep {
    BK_NODE_CTX_HEAD;
    uint32_t k; /* node index */
    berth_plan *plan;
} vk_prep;

typedef berth_status (*vk_prep_fn)(vk_prep *c);
/* An entry of the op table (vk_ops.c), indexed by berth_op_id. */
typedef struct vk_op {
    vk_prep_fn prep;
    bk_op_caps caps;
} vk_op;
extern const bk_op_set vk_op_set;
/* Check hook part: every input and output fits `limit` 32-bit words
 * (nodes with empty outputs always do: nothing runs). */
berth_status vk_check_fits(const bk_node_ctx *c, uint64_t limit);
const vk_op *vk_op_at(berth_op_id id);

static inline const vk_opnd *vk_in(const vk_prep *c, uint32_t i) { return &c->plan->ops[c->node->inputs[i]]; }
static inline const vk_opnd *vk_out(const vk_prep *c, uint32_t i) { return &c->plan->ops[c->node->outputs[i]]; }

/* A zeroed dispatch of `shader` for the current node, or NULL (err set).
 * The pointer is valid until the next vk_emit. */
vk_dispatch *vk_emit(vk_prep *c, const char *shader);
/* A plan-owned scratch buffer that lives during this node only; returns
 * its operand index, VK_NONE on failure (err set). */
uint32_t vk_scratch(vk_prep *c, size_t bytes);
/* Output `out` shares the storage of operand `in` (a view). */
void vk_alias(vk_prep *c, uint32_t out, uint32_t in);


/* A batched product on the matmul shaders: y[z] = a[z] b[z] (+ bias)
 * with up to 4 batch dims (per-dim element strides into a and b), element
 * strides for a's rows and k and b's k and columns; y is contiguous
 * [batch, m, n]. bias (VK_NONE: none) is indexed by column, or by row when
 * bias_rows is set. NULL on failure (err set). */
typedef struct vk_gemm {
    uint32_t a, b, y, bias;
    int bias_rows;
    int64_t m, n, k;
    uint64_t batch;
    uint32_t brank;
    int64_t bdims[4], astr[4], bstr[4];
    uint32_t sam, sak, sbk, sbn;
} vk_gemm;
vk_dispatch *vk_emit_gemm(vk_prep *c, const vk_gemm *g);
/* The same with one batch dim: mnk_batch = {m, n, k, batch}, batch
 * strides {a, b}, strides {a row, a k, b k, b column}. */
vk_dispatch *vk_emit_matmul(vk_prep *c, uint32_t a, uint32_t b, uint32_t y, const uint32_t mnk_batch[4],
                            const uint32_t batch_strides[2], const uint32_t strides[4]);

/* ---- per-op prepare functions ---- */
#define VK_OPS(X)                                                                                 \
    X(matmul) X(gemm) X(matmul_epilogue) X(binary) X(compare) X(logical) X(unary) X(view) X(where)   \
    X(logical_not) X(cast) X(softmax) X(reduce) X(transpose) X(slice) X(expand) X(tile) X(concat)    \
    X(split) X(gather) X(gather_elements) X(triangular) X(arg) X(cumsum) X(pad) X(conv2d)            \
    X(conv_transpose2d) X(pool2d) X(batch_norm) X(layer_norm) X(instance_norm) X(resample2d)         \
    X(attention) X(scatter_elements) X(quantize) X(dequantize)
#define VK_DECL_PREP(name) berth_status vk_prep_##name(vk_prep *c);
VK_OPS(VK_DECL_PREP)
#undef VK_DECL_PREP

/* ---- verbs implemented outside vk_backend.c ---- */
/* plan() on a native graph (the verb wraps it with BK_PLAN_VERB). */
berth_status vk_plan_graph(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                            berth_error *err);
/* Merges runs of vec4 elementwise dispatches into one (vk_fuse.c). */
berth_status vk_fuse_elementwise(berth_plan *p, const berth_graph_desc *g, berth_error *err);
berth_status vk_record(berth_plan *p, berth_error *err);
berth_status vk_run(berth_plan *p, const berth_tensor *in, uint32_t n_in, berth_tensor *out, uint32_t n_out,
                    berth_error *err);
void vk_plan_free(berth_plan *p);
berth_status vk_plan_profile(const berth_plan *p, uint64_t *ns, uint32_t n, berth_error *err);

#endif
