/* Internal interfaces of the cpu backend: the device, weights and plan
 * objects, the worker pool, and the contract between the planner and
 * the op files (each op validates its node and fills a cpu_node at plan
 * time; its exec function later runs with no allocation). */
#ifndef BERTH_CPU_INTERNAL_H
#define BERTH_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"
#include "bk.h"
#include "cpu_gemm.h"

#define CPU_ALIGN 64
#define CPU_NONE BK_NONE

/* A hot loop built three times on x86-64: for AVX-512 (x86-64-v4), for
 * AVX2 with FMA (x86-64-v3) and for the baseline; the loader's ifunc
 * resolver picks one from CPUID before the first call, so the module
 * still runs on any x86-64. The AVX-512 build ran GELU 2.3 times and exp
 * 2.5 times faster than the AVX2 one. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CPU_CLONES
#endif


/* ---- worker pool ---- */
typedef struct cpu_pool cpu_pool;
/* Runs fn over [begin, end) chunks of [0, n); the caller's thread takes
 * part. Chunks are at least `grain` items. */
typedef void (*cpu_task_fn)(void *ctx, size_t begin, size_t end);
/* spin_us: how long an idle worker polls for the next job, outside a
 * run, before it sleeps. */
berth_status cpu_pool_create(int threads, int spin_us, cpu_pool **out, berth_error *err);
void cpu_pool_destroy(cpu_pool *pool);
void cpu_pool_for(cpu_pool *pool, size_t n, size_t grain, cpu_task_fn fn, void *ctx);
int cpu_pool_threads(const cpu_pool *pool);
/* Around a run: its start wakes the workers and they stay awake (spinning)
 * between the run's jobs until its end. */
void cpu_pool_begin(cpu_pool *pool);
void cpu_pool_end(cpu_pool *pool);
/* A scratch slot in [0, threads) no other running task holds, for a task
 * that needs per-thread scratch: claim at its start, release at its end. */
int cpu_pool_slot_claim(cpu_pool *pool);
void cpu_pool_slot_release(cpu_pool *pool, int slot);
/* One tiny product through OpenBLAS on the calling thread, so its
 * per-thread buffers exist before any run(). */
void cpu_blas_thread_init(void);

/* ---- objects ---- */
struct berth_device {
    const berth_host_services *host;
    int threads;
    cpu_pool *pool;
    const cpu_gemm_isa *gemm; /* the matrix-product kernel, from CPUID or the isa option */
    cpu_dot_fn qdot;          /* quantized_activations = int8: its integer tile; NULL: float */
    char name[256];
};

typedef struct cpu_weight {
    void *data; /* NULL until uploaded */
    size_t bytes;
    int given; /* released with host->free, else with free() */
} cpu_weight;

/* A quantized weight packed for the fused int8 tile, with what it was
 * packed as (cpu_weight_q8). */
typedef struct cpu_q8_pack {
    int8_t *data;
    size_t k, n, rows;
    int kind;
} cpu_q8_pack;

struct berth_weights {
    berth_device *dev;
    bk_upload up;
    uint32_t n;
    cpu_weight *t;
    uint64_t total; /* bytes held: each weight as uploaded, packed, or both */
    /* B panels packed for dev->gemm, made by the first plan that needs
     * them and shared by every later plan: [2 * id + transposed], with
     * the k and n each was packed for. */
    float **packed;
    size_t *pack_k, *pack_n;
    cpu_q8_pack *q8; /* [id]: 8-bit weights packed for the fused int8 tile */
    /* Per weight: the live plans that read it as uploaded. A packed
     * weight no plan reads that way is kept only packed (one copy); a
     * later plan that needs it as uploaded unpacks it again. */
    uint32_t *raw_users;
};

/* Bytes of weight w's packed panel of a k x n right-hand side. */
static inline size_t cpu_panel_bytes(const berth_weights *w, size_t k, size_t n) {
    return sizeof(float) * cpu_gemm_packed_floats(w->dev->gemm, k, n);
}
/* The tables of packed forms (panels, or the int8 tile's), made on first
 * need; 0 when out of memory. */
int cpu_panels_table(berth_weights *w);
int cpu_q8_table(berth_weights *w);
/* The packed copy of weight `id` as a k x n right-hand side (stored n x k
 * when tb), made on first use; NULL and err set when out of memory. */
const float *cpu_weight_packed(berth_weights *w, uint32_t id, int tb, size_t k, size_t n, berth_error *err);
/* Quantized weight `id` (k x n, q's kind and block rows) packed for the
 * fused int8 tile, made on first use. *out stays NULL where it cannot be
 * (cpu_gemm_q8_packable says no, or another node packed it with other
 * blocks): the product then reads it as uploaded. */
berth_status cpu_weight_q8(berth_weights *w, uint32_t id, cpu_dot_fn f, const cpu_gemm_qb *q, size_t k, size_t n,
                           const int8_t **out, berth_error *err);
/* Plan-time bookkeeping of weights read as uploaded (cpu_backend.c):
 * hold makes sure each of ids[0..n) exists as uploaded (unpacking it if
 * it was dropped) and counts the plan as its reader; release uncounts;
 * trim drops the uploaded form of every packed weight no plan reads. */
berth_status cpu_weights_hold(berth_weights *w, const uint32_t *ids, uint32_t n, berth_error *err);
void cpu_weights_release(berth_weights *w, const uint32_t *ids, uint32_t n);
void cpu_weights_trim(berth_weights *w);

typedef struct cpu_opnd {
    berth_operand_kind kind;
    berth_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    size_t numel;
    size_t bytes;
    void *ptr;
    /* rank 4 [d0, d1, d2, d3] stored as [d0, d2, d1, d3]: the heads of an
     * encoder's attention, read and written in the token-major layout of
     * the products around it (cpu_attention_layout); no other op sees it */
    int heads_swapped;
} cpu_opnd;

typedef struct cpu_node cpu_node;
typedef struct berth_plan berth_plan;
typedef void (*cpu_exec_fn)(const cpu_node *n, berth_plan *p);

struct cpu_node {
    cpu_exec_fn exec;
    uint32_t n_in, n_out;
    uint32_t *in, *out; /* operand indices (positional) */
    void *params;       /* op-owned, freed with the plan */
    size_t params_bytes;
    size_t scratch_bytes; /* per-node scratch placed in the arena */
    size_t scratch_off;
    uint32_t scratch_of;  /* 0, or 1 + an earlier node whose scratch this one reads: kept live until it */
    int is_view; /* output may share the input's bytes (reshape and kin) */
    uint32_t packed_in; /* bit k: input k, a weight, is read only through its packed copy */
    int empty;   /* every output has zero elements: nothing to run */
};

struct berth_plan {
    berth_device *dev;
    berth_weights *w; /* outlives the plan; holds the shared packed panels */
    uint32_t n_ops;
    cpu_opnd *ops;
    uint32_t n_nodes;
    cpu_node *nodes;
    uint32_t n_inputs, n_outputs;
    uint32_t *inputs, *outputs;
    uint8_t *out_direct; /* output i is written in place into the caller's buffer */
    uint32_t n_alias;
    uint32_t *alias; /* pairs (view output, its input): the output borrows the input's pointer */
    uint8_t *arena;
    size_t arena_bytes;
    void *consts; /* one block holding every CONSTANT operand */
    size_t packed_bytes; /* constants, params and the plan's tables */
    size_t const_bytes;  /* of packed_bytes: constants and params */
    size_t scratch_add;  /* of arena_bytes: what nodes' scratch adds to the intermediates */
    uint64_t *ns;
    size_t tensor_size; /* element size of run()'s tensor arrays */
    uint32_t n_raw;
    uint32_t *raw_ids; /* weights this plan reads as uploaded (cpu_weights_hold) */
};

static inline void *cpu_ptr(const berth_plan *p, uint32_t idx) { return p->ops[idx].ptr; }
static inline uint8_t *cpu_scratch(const berth_plan *p, const cpu_node *n) {
    return p->arena + n->scratch_off;
}

/* ---- plan-time contract for ops ----
 * The kit's node context (graph, node, error) is the first member, so op
 * code reads c->g, c->node, c->err and hands &c->bk to the kit. */
typedef struct cpu_prep {
    BK_NODE_CTX_HEAD;
    berth_plan *plan;
    cpu_node *cn;
} cpu_prep;

/* berth.attention without the transposes around it (ops_attention.c):
 * whether perm is [0, 2, 1, 3], which moves heads past tokens; whether
 * every reader of operand o is a berth.attention reading it as q, k or v
 * (so a transpose making o may leave it in its input's bytes, heads
 * swapped); and whether o's only reader is such a transpose (so the
 * attention making o may write it heads swapped, and the transpose
 * becomes a view). Never for a graph output. */
int cpu_perm_swaps_heads(const int64_t *perm, int n);
int cpu_read_by_attention_only(const berth_graph_desc *g, uint32_t o);
int cpu_read_by_heads_transpose_only(const berth_graph_desc *g, uint32_t o);

typedef berth_status (*cpu_prep_fn)(cpu_prep *c);
/* An entry of the op table (cpu_ops.c), indexed by berth_op_id. */
typedef struct cpu_op {
    cpu_prep_fn prep;
    bk_op_caps caps;
} cpu_op;
extern const bk_op_set cpu_op_set;
const cpu_op *cpu_op_at(berth_op_id id);

/* Allocates zeroed params owned by the node; NULL (and err set) on failure. */
void *cpu_params(cpu_prep *c, size_t bytes);
/* Float32 weights and constants are stored with each subnormal value
 * replaced by a zero of its sign. */
void cpu_flush_subnormals(float *v, size_t n);

/* cpu_dtype.c: one element of any numeric dtype. An integer is held as
 * its bits widened to 64 (sign-extended for signed types), with its value
 * as a double beside it; a float as the double. */
#define CPU_NUMERIC                                                                                     \
    (BK_BIT(BERTH_DTYPE_F32) | BK_BIT(BERTH_DTYPE_F16) | BK_BIT(BERTH_DTYPE_I8) | BK_BIT(BERTH_DTYPE_U8) | \
     BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32) | BK_BIT(BERTH_DTYPE_I64) | BK_BIT(BERTH_DTYPE_U64))
typedef struct cpu_elem {
    double f;
    uint64_t i;
    int is_float;
} cpu_elem;
cpu_elem cpu_elem_get(const void *x, berth_dtype t, size_t i);
void cpu_elem_put(void *y, berth_dtype t, size_t i, cpu_elem e);
float cpu_half_to_float(uint16_t h);
uint16_t cpu_float_to_half(float v);
static inline const cpu_opnd *cpu_in(const cpu_prep *c, uint32_t i) {
    return &c->plan->ops[c->node->inputs[i]];
}
static inline const cpu_opnd *cpu_out(const cpu_prep *c, uint32_t i) {
    return &c->plan->ops[c->node->outputs[i]];
}

/* ---- per-op prepare functions ---- */
#define CPU_OPS(X)                                                                              \
    X(matmul) X(binary) X(unary) X(view) X(cast) X(softmax) X(transpose) X(concat) X(split)      \
    X(slice) X(gather) X(expand) X(where) X(logical_not) X(reduce) X(pad)             \
    X(layer_norm) X(batch_norm) X(gemm) X(conv2d) X(pool2d) X(conv_transpose2d) X(resample2d)  \
    X(matmul_epilogue) X(attention) X(arg) X(cumsum) X(instance_norm) X(tile) X(triangular)              \
    X(gather_elements) X(scatter_elements) X(quantize) X(dequantize) X(elementwise_program) X(conv2d_epilogue) \
    X(matmul_quantized) X(gather_quantized)
#define CPU_DECL_PREP(name) berth_status cpu_prep_##name(cpu_prep *c);
CPU_OPS(CPU_DECL_PREP)
#undef CPU_DECL_PREP

/* ---- elementwise programs (ops_program.c) ----
 * A decoded berth.elementwise program made ready to run: registers
 * assigned, broadcast inputs given buffers. in[] and out are set by the
 * caller before each run; in_place says out is also input 0 (a
 * convolution's result the program rewrites). */
#define CPU_PROGRAM_BLOCK 512
#define CPU_PROGRAM_REGS 12
typedef struct cpu_program_step {
    berth_op_id op;
    int unary; /* cpu_unary_code, for unary steps other than identity */
    uint8_t kind[2];
    uint32_t idx[2]; /* register, input or constant index */
    uint32_t dst;    /* register */
    float p0, p1;
} cpu_program_step;
typedef struct cpu_program {
    bk_ew_program prog;
    cpu_program_step steps[BK_EW_MAX_STEPS];
    uint32_t n_regs, n_bcast;
    uint32_t bcast_slot[BK_EW_MAX_INPUTS]; /* per input: its buffer, or UINT32_MAX when read in place */
    int in_place;
    /* set: the steps are one chain from input chain_in, each step reading
     * the one before and at most a scalar besides, over ops with an
     * element function: run in place, one pass per step (ops_program.c) */
    int chain;
    uint32_t chain_in;
    const float *in[BK_EW_MAX_INPUTS];
    float *out;
} cpu_program;
/* After bk_param_* filled pp->prog. */
berth_status cpu_program_prep(cpu_prep *c, cpu_program *pp);
/* Output elements [at, at + n), on the calling thread. */
void cpu_program_range(const cpu_program *pp, size_t at, size_t n);
/* A chain's steps (pp->chain set) over n floats of src into y, which may
 * be src: for a kernel's tile, before it is stored. Scalar inputs are
 * read through pp->in. */
void cpu_chain_apply(const cpu_program *pp, const float *src, float *y, size_t n);
/* The whole output, spread over the pool. */
void cpu_program_run(cpu_pool *pool, const cpu_program *pp);

/* ---- shared kernels ---- */
/* The unary kernels of ops_unary.c by code: cpu_unary_code(WebNN name)
 * (-1: none), then y = op(x) over n floats (alpha, beta: the op's
 * options, as clamp's minValue and maxValue); x may be y. */
int cpu_unary_code(const char *op);
berth_status cpu_check_unary(const bk_node_ctx *c);
void cpu_unary_f32(int code, float alpha, float beta, const float *x, float *y, size_t n);
/* Broadcasting: the kit's collapsed iteration shape and per-input
 * strides, and the number of rows (product of all dims but the last). */
typedef struct cpu_bcast {
    bk_bcast k;
    size_t rows;
} cpu_bcast;
void cpu_bcast_init(cpu_prep *c, uint32_t n, cpu_bcast *b);
/* Offsets of the row's first element for each input. */
void cpu_bcast_row(const cpu_bcast *b, size_t row, uint32_t n, size_t *off);

void cpu_matmul_f32(berth_plan *p, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                    int64_t ldc);
uint64_t cpu_now_ns(void);
/* The vector math (cpu_vmath.c; on arm64 cpu_vmath_neon.c). x and y may
 * be the same array; a NaN stays NaN.
 * x[i] = e^x[i] within 2.5e-7 relative, for softmax: the portable loop
 * gives 0 below e^-87 and clamps above e^88; arm64's is cpu_vexp_full. */
void cpu_vexp(float *x, size_t n);
/* y = erf(x) within 2e-7 relative (1e-7 absolute past 1); and
 * y = x/2 (1 + erf(x / sqrt 2)). */
void cpu_verf(const float *x, float *y, size_t n);
void cpu_vgelu(const float *x, float *y, size_t n);
/* The exp, tanh and sigmoid ops (and gemm's epilogue): y = e^x, tanh x,
 * 1 / (1 + e^-x) over the whole float range, infinities and subnormal
 * results included. On arm64 NEON polynomials within 3e-7 relative of
 * the exact value; elsewhere libm's expf and tanhf per element. */
void cpu_vexp_full(const float *x, float *y, size_t n);
void cpu_vtanh(const float *x, float *y, size_t n);
void cpu_vsigmoid(const float *x, float *y, size_t n);
/* The op contract's max and min of floats: NaN if either is (IEEE
 * 754-2019 maximum, numpy's maximum); fmaxf and fminf would drop it.
 * Comparisons, not calls, so loops over them vectorize. */
static inline float cpu_fmax_nan(float x, float z) { return x != x || z != z ? x + z : (x > z ? x : z); }
static inline float cpu_fmin_nan(float x, float z) { return x != x || z != z ? x + z : (x < z ? x : z); }
/* x = softmax(x) in place; a row that is all -inf (or empty) becomes all
 * zeros and the result is 0, else 1. */
int cpu_vsoftmax(float *x, size_t n);
/* dst = src (4-D, dims sdims) with dst dim d taken from src dim perm[d]. */
void cpu_permute4(const float *src, const int64_t *sdims, const int *perm, float *dst);

/* The unary ops' codes (ops_unary.c) and the element functions of those
 * that elementwise programs also run in place (ops_program.c): one
 * expression each, so both give the same bits. Comparisons, not
 * fmaxf/fminf, which the compiler turns into a call per element; a NaN
 * passes through each. */
enum {
    U_RELU, U_SIGMOID, U_TANH, U_EXP, U_LOG, U_SQRT, U_ABS, U_NEG, U_ERF, U_GELU, U_HARDSIGMOID,
    U_HARDSWISH, U_CLAMP, U_LEAKYRELU, U_ELU, U_SOFTPLUS, U_RECIPROCAL, U_FLOOR, U_CEIL, U_SIN, U_COS,
    U_SIGN, U_SOFTSIGN, U_NOT
};
static inline float cpu_relu1(float v) { return v < 0.0f ? 0.0f : v; }
static inline float cpu_leaky1(float v, float al) { return v >= 0.0f ? v : al * v; }
static inline float cpu_clamp1(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }
static inline float cpu_hardsigmoid1(float v, float al, float be) { return cpu_clamp1(al * v + be, 0.0f, 1.0f); }
/* piecewise, so -inf gives 0 (the limit), not -inf * 0 */
static inline float cpu_hardswish1(float v) { return v <= -3.0f ? 0.0f : v >= 3.0f ? v : v * (v + 3.0f) / 6.0f; }

/* ---- verbs implemented outside cpu_backend.c ---- */
/* plan() on a native graph (the verb wraps it with BK_PLAN_VERB). */
berth_status cpu_plan_graph(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                            berth_error *err);
/* prepare_weights' work on a native graph: packs what its nodes read
 * packed, then lets go of uploaded forms no plan reads (*out stays NULL). */
berth_status cpu_prepare_graph(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                               berth_error *err);
/* prepare_weights' account, save_state and load_state (cpu_state.c). */
void cpu_weights_account(const berth_weights *w, berth_prepare_info *info);
berth_status cpu_save_state(berth_device *dev, berth_weights *w, uint32_t kind, void *buf, size_t *bytes,
                            berth_error *err);
berth_status cpu_load_state(berth_device *dev, berth_weights *w, uint32_t kind, const void *buf, size_t bytes,
                            berth_error *err);
berth_status cpu_run(berth_plan *p, const berth_tensor *in, uint32_t n_in, berth_tensor *out,
                     uint32_t n_out, berth_error *err);
void cpu_plan_free(berth_plan *p);
uint64_t cpu_plan_bytes(const berth_plan *p);
berth_status cpu_plan_memory(const berth_plan *p, berth_plan_memory *m, berth_error *err);
berth_status cpu_plan_profile(const berth_plan *p, uint64_t *ns, uint32_t n, berth_error *err);

#endif
