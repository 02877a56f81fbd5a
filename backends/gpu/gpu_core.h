/* The GPU core: the device-independent half of berth's GPU backends,
 * compiled into each GPU module (vulkan, metal) with its device layer;
 * it links nothing from libberth.
 *
 * The shape of a plan: each op validates its node at plan time and emits
 * one or more dispatches (a kernel, up to GPU_MAX_BIND operand bindings,
 * 32 words of push constants, specialization constants and a group
 * count). Views emit nothing and alias their input's storage. Runs of
 * elementwise dispatches are fused into one. After every node is prepared
 * the planner places every intermediate and scratch buffer in one arena
 * by liveness (the kit's bk_place, as on cpu; what no dispatch touches
 * gets no storage), binds constants, weights and the host I/O buffer, and
 * hands the dispatch list to the device layer to record; run() is the
 * layer's.
 *
 * The device layer supplies what is below under "device interface":
 * buffers, kernel ids, weights' storage, recording and freeing a plan's
 * recording. Its module defines GPU_BACKEND_NAME (e.g. "vulkan"), which
 * starts the core's messages. */
#ifndef BERTH_GPU_CORE_H
#define BERTH_GPU_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"
#include "bk.h"

#ifndef GPU_BACKEND_NAME
#error "a GPU module defines GPU_BACKEND_NAME"
#endif

#define GPU_NONE BK_NONE
#define GPU_PC_WORDS 32 /* 128 bytes: the push-constant size every device offers */
#define GPU_MAX_BIND 8
#define GPU_MAX_SPEC 12 /* specialization constants a dispatch may set */
#define GPU_MAX_GROUPS 65535u /* the group count every device offers per axis */

static inline uint32_t gpu_f2u(float f) {
    union { float f; uint32_t u; } v = {.f = f};
    return v.u;
}
/* Workgroups for n items at `local` items per group, capped: kernels
 * walk the rest with grid-stride loops. */
uint32_t gpu_groups(uint64_t n, uint32_t local);

/* ---- device interface (the device layer implements these) ---- */
typedef struct gpu_buffer gpu_buffer; /* a device buffer */
typedef struct gpu_record gpu_record; /* a plan's recorded dispatch list */
/* The kernel (shader) with this name, GPU_NONE if the module has none. */
uint32_t gpu_kernel_index(const char *name);
/* Offset alignment of a binding, and the largest range one may cover. */
uint64_t gpu_device_align(const berth_device *d);
uint64_t gpu_device_max_range(const berth_device *d);
/* 1 where the device's memory is the host's (integrated GPUs, Apple,
 * lavapipe) and a host-visible buffer serves dispatches as well as a
 * device-local one: plans then place inputs and outputs in the io buffer
 * and bind them there instead of copying them in and out. */
int gpu_device_unified(const berth_device *d);
/* A buffer of `size` bytes: host_visible (mapped, for the host's I/O) or
 * device-local where the device has it. `what` names it in messages. */
berth_status gpu_buffer_new(berth_device *d, uint64_t size, int host_visible, gpu_buffer **out, const char *what,
                            berth_error *err);
void gpu_buffer_free(berth_device *d, gpu_buffer *b);
uint64_t gpu_buffer_size(const gpu_buffer *b);
/* A host-visible buffer's memory. */
void *gpu_buffer_map(const gpu_buffer *b);
/* Copies host bytes into dst at off. */
berth_status gpu_buffer_write(berth_device *d, gpu_buffer *dst, uint64_t off, const void *src, size_t bytes,
                              berth_error *err);
/* Where uploaded weight `id` lies, and the upload's bookkeeping. */
void gpu_weight_at(const berth_weights *w, uint32_t id, gpu_buffer **buf, uint64_t *off);
const bk_upload *gpu_weights_upload(const berth_weights *w);
/* Records the placed plan's dispatch list into p->rec (and may set
 * p->node_ns for per-node times); frees it. */
berth_status gpu_record_plan(berth_plan *p, berth_error *err);
void gpu_record_free(berth_plan *p);
/* An estimate of the host and driver memory a plan's recording holds
 * (descriptor sets, command buffers, timers): the APIs report none. */
uint64_t gpu_record_bytes(const berth_plan *p);

/* ---- plans ---- */
typedef struct gpu_opnd {
    const char *name; /* the host's string: valid during plan() only */
    berth_operand_kind kind;
    berth_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    size_t numel, bytes;
    uint32_t alias;      /* GPU_NONE, or the operand whose storage this views */
    int64_t first, last; /* dispatch steps that touch the storage (-1: input copies, n_disp: output
                            copies); first > last: nothing does, no storage */
    gpu_buffer *buf; /* where its bytes are, once placed */
    uint64_t off;
} gpu_opnd;

typedef struct gpu_dispatch {
    uint32_t node;
    uint32_t shader;
    uint32_t n_bind;
    uint32_t bind[GPU_MAX_BIND]; /* operand indices */
    uint32_t groups[3];
    uint32_t pc[GPU_PC_WORDS];
    uint32_t n_spec; /* specialization constants (fused chains), 0: none */
    uint32_t spec[GPU_MAX_SPEC];
    int barrier;     /* set by the planner: it must wait for earlier dispatches' writes */
} gpu_dispatch;

struct berth_plan {
    berth_device *dev;
    uint32_t n_ops, cap_ops;
    gpu_opnd *ops;       /* the graph's operands, then scratch from gpu_scratch */
    uint32_t n_graph_ops;
    uint32_t n_nodes;
    gpu_dispatch *disp;
    uint32_t n_disp, cap_disp;
    uint32_t n_inputs, n_outputs;
    uint32_t *inputs, *outputs;
    uint64_t *io_off;   /* inputs then outputs: each one's slot in the io buffer */
    gpu_buffer *arena, *consts, *io;
    gpu_record *rec;    /* the device layer's */
    uint64_t *node_ns;  /* n_nodes, the last run's time per node; NULL: not timed */
    uint64_t bytes;       /* the sum of the kinds gpu_plan_memory reports */
    uint64_t scratch_add; /* of the arena: what scratch adds to the intermediates */
    uint64_t records;     /* the plan's tables and the layer's recording (estimated) */
    size_t tensor_size;   /* element size of run()'s tensor arrays */
};

/* ---- plan-time contract for ops ---- */
/* The kit's node context (graph, node, error) is the first member, so op
 * code reads c->g, c->node, c->err and hands &c->bk to the kit. */
typedef struct gpu_prep {
    BK_NODE_CTX_HEAD;
    uint32_t k; /* node index */
    berth_plan *plan;
} gpu_prep;

typedef berth_status (*gpu_prep_fn)(gpu_prep *c);
/* An entry of the op table (vk_ops.c), indexed by berth_op_id. */
typedef struct gpu_op {
    gpu_prep_fn prep;
    bk_op_caps caps;
} gpu_op;
extern const bk_op_set gpu_op_set;
/* Check hook part: every input and output fits `limit` 32-bit words
 * (nodes with empty outputs always do: nothing runs). */
berth_status gpu_check_fits(const bk_node_ctx *c, uint64_t limit);
const gpu_op *gpu_op_at(berth_op_id id);

static inline const gpu_opnd *gpu_in(const gpu_prep *c, uint32_t i) { return &c->plan->ops[c->node->inputs[i]]; }
static inline const gpu_opnd *gpu_out(const gpu_prep *c, uint32_t i) { return &c->plan->ops[c->node->outputs[i]]; }

/* A zeroed dispatch of `shader` for the current node, or NULL (err set).
 * The pointer is valid until the next gpu_emit. */
gpu_dispatch *gpu_emit(gpu_prep *c, const char *shader);
/* A plan-owned scratch buffer that lives during this node only; returns
 * its operand index, GPU_NONE on failure (err set). */
uint32_t gpu_scratch(gpu_prep *c, size_t bytes);
/* Output `out` shares the storage of operand `in` (a view). */
void gpu_alias(gpu_prep *c, uint32_t out, uint32_t in);


/* A batched product on the matmul shaders: y[z] = a[z] b[z] (+ bias)
 * with up to 4 batch dims (per-dim element strides into a and b), element
 * strides for a's rows and k and b's k and columns; y is contiguous
 * [batch, m, n]. bias (GPU_NONE: none) is indexed by column, or by row when
 * bias_rows is set. NULL on failure (err set). */
typedef struct gpu_gemm {
    uint32_t a, b, y, bias;
    int bias_rows;
    int64_t m, n, k;
    uint64_t batch;
    uint32_t brank;
    int64_t bdims[4], astr[4], bstr[4];
    uint32_t sam, sak, sbk, sbn;
} gpu_gemm;
gpu_dispatch *gpu_emit_gemm(gpu_prep *c, const gpu_gemm *g);
/* The same with one batch dim: mnk_batch = {m, n, k, batch}, batch
 * strides {a, b}, strides {a row, a k, b k, b column}. */
gpu_dispatch *gpu_emit_matmul(gpu_prep *c, uint32_t a, uint32_t b, uint32_t y, const uint32_t mnk_batch[4],
                            const uint32_t batch_strides[2], const uint32_t strides[4]);

/* ---- per-op prepare functions ---- */
#define GPU_OPS(X)                                                                                 \
    X(matmul) X(gemm) X(matmul_epilogue) X(binary) X(compare) X(logical) X(unary) X(view) X(where)   \
    X(logical_not) X(cast) X(softmax) X(reduce) X(transpose) X(slice) X(expand) X(tile) X(concat)    \
    X(split) X(gather) X(gather_elements) X(triangular) X(arg) X(cumsum) X(pad) X(conv2d)            \
    X(conv_transpose2d) X(pool2d) X(batch_norm) X(layer_norm) X(instance_norm) X(resample2d)         \
    X(attention) X(scatter_elements) X(quantize) X(dequantize) X(matmul_quantized) X(gather_quantized)
#define GPU_DECL_PREP(name) berth_status gpu_prep_##name(gpu_prep *c);
GPU_OPS(GPU_DECL_PREP)
#undef GPU_DECL_PREP

/* ---- the core's verbs ---- */
/* plan() on a native graph (the module wraps it with BK_PLAN_VERB):
 * prepares every node, fuses, places, then has the layer record. */
berth_status gpu_plan_graph(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                            berth_error *err);
/* Merges runs of vec4 elementwise dispatches into one (gpu_fuse.c). */
berth_status gpu_fuse_elementwise(berth_plan *p, const berth_graph_desc *g, berth_error *err);
void gpu_plan_free(berth_plan *p);
/* The last run's time per node, where the layer timed it. */
berth_status gpu_plan_profile(const berth_plan *p, uint64_t *ns, uint32_t n, berth_error *err);
uint64_t gpu_plan_bytes(const berth_plan *p);
berth_status gpu_plan_memory(const berth_plan *p, berth_plan_memory *m, berth_error *err);
/* A device layer's run(): gpu_run_begin checks the caller's tensors
 * against the plan and copies the inputs into the io buffer; after the
 * device ran the recording, gpu_run_end copies the outputs out of it. */
berth_status gpu_run_begin(berth_plan *p, const berth_tensor *in, uint32_t n_in, const berth_tensor *out,
                           uint32_t n_out, berth_error *err);
void gpu_run_end(berth_plan *p, berth_tensor *out);
/* Whether run must copy input i (i < n_inputs) or output i - n_inputs
 * between its io slot and its storage: not where the operand lives in
 * its io slot already (unified memory), nor when it has no bytes. */
int gpu_io_copied(const berth_plan *p, uint32_t i);

#endif
