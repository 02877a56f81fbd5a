/* The backend kit: what every berth backend module needs besides its
 * kernels. Compiled into each module (kit/kit.cmake), so a
 * module still links nothing from libberth. Pieces, by file:
 *   bk_dtype.c   dtype names and sizes
 *   bk_attr.c    attribute readers (also compiled into the engine)
 *   bk_node.c    messages about a node, arity/dtype/shape checks
 *   bk_ops.c     per-backend op tables indexed by berth_op_id; supports_op
 *                and supports_node answered from them
 *   bk_graph.c   graph desc size checks, native-layout view, topological order
 *   bk_place.c   liveness-based placement of buffers in one arena
 *   bk_upload.c  weight upload bookkeeping
 *   bk_option_parse.c  one declared option's value parsed (also in the engine)
 *   bk_options.c declared options read into typed values
 *   bk_entry.c   the exported entry, ABI negotiation, caps */
#ifndef BERTH_BK_H
#define BERTH_BK_H

#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"
#include "berth/ops.h"
#include "bk_attr.h"

#define BK_NONE UINT32_MAX
#define BK_BIT(t) (1u << (unsigned)(t))

/* ---- dtypes ---- */
size_t bk_dtype_size(berth_dtype t); /* bytes per element; 0 for 4-bit and invalid */
const char *bk_dtype_name(berth_dtype t);
/* Bytes of n elements (4-bit dtypes packed two per byte); 0 with *ok = 0
 * for an invalid dtype. */
size_t bk_dtype_bytes(berth_dtype t, size_t n, int *ok);

/* ---- messages ---- */
void bk_errf(berth_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bk_dims_str(const int64_t *dims, uint32_t rank, char *buf, size_t cap);

/* ---- one node of a graph ---- */
typedef struct bk_node_ctx {
    const berth_graph_desc *g; /* in native layout (bk_graph_view) */
    const berth_node *node;
    berth_error *err;
} bk_node_ctx;
/* The first member of a module's plan-time context: the kit's node
 * context, also reachable as c->g, c->node and c->err. */
#define BK_NODE_CTX_HEAD                       \
    union {                                    \
        bk_node_ctx bk;                        \
        struct {                               \
            const berth_graph_desc *g;         \
            const berth_node *node;            \
            berth_error *err;                  \
        };                                     \
    }

static inline const berth_operand *bk_in(const bk_node_ctx *c, uint32_t i) {
    return &c->g->operands[c->node->inputs[i]];
}
static inline const berth_operand *bk_out(const bk_node_ctx *c, uint32_t i) {
    return &c->g->operands[c->node->outputs[i]];
}
/* "node 'NAME' (OP): ..."; bk_fail returns BERTH_ERR_INVALID, bk_refuse
 * BERTH_ERR_UNSUPPORTED (valid, but this backend cannot run it). */
berth_status bk_fail(const bk_node_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
berth_status bk_refuse(const bk_node_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
berth_status bk_check_counts(const bk_node_ctx *c, uint32_t in_min, uint32_t in_max, uint32_t n_out);
/* Every input in [0, n_same) and output 0 share one dtype, which is in
 * mask (else BERTH_ERR_UNSUPPORTED). */
berth_status bk_check_same_dtype(const bk_node_ctx *c, uint32_t n_same, uint32_t mask);
berth_status bk_check_out_dims(const bk_node_ctx *c, uint32_t out, uint32_t rank, const int64_t *dims);
/* axis in [-rank, rank) into [0, rank). */
berth_status bk_axis(const bk_node_ctx *c, int64_t a, uint32_t rank, const char *what, uint32_t *axis);
/* Elements of an operand (SIZE_MAX on overflow). */
size_t bk_numel(const berth_operand *o);

/* The node's options, read with the backends' (lenient) rules. */
berth_status bk_opt_int(const bk_node_ctx *c, const char *key, int64_t def, int64_t *out);
berth_status bk_opt_float(const bk_node_ctx *c, const char *key, double def, double *out);
berth_status bk_opt_bool(const bk_node_ctx *c, const char *key, int def, int *out);
berth_status bk_opt_string(const bk_node_ctx *c, const char *key, const char *def, const char **out);
berth_status bk_opt_ints(const bk_node_ctx *c, const char *key, int64_t *vals, int cap, int *n);
berth_status bk_opt_floats(const bk_node_ctx *c, const char *key, double *vals, int cap, int *n);
berth_status bk_opt_operand(const bk_node_ctx *c, const char *key, uint32_t *idx); /* BK_NONE: absent */
const berth_attr *bk_opt_find(const bk_node_ctx *c, const char *key);

/* ---- node parameters both modules decode (bk_params.c) ----
 * Shapes, dtypes and option types are the host's to check (see
 * berth_graph_desc); these read what a kernel needs and fail only on what
 * no rule of the host covers. */
/* Input 0 split around option "axis" (default def): [outer, extent, inner]. */
typedef struct bk_axis_geom {
    uint32_t axis;
    uint64_t outer, extent, inner;
} bk_axis_geom;
berth_status bk_param_axis(const bk_node_ctx *c, int64_t def, bk_axis_geom *g);
/* gather, gatherElements, scatterElements: the axis geometry of input 0,
 * failing when indices (input 1) would index an empty axis. */
berth_status bk_param_index_axis(const bk_node_ctx *c, bk_axis_geom *g);
/* Check hook part: indices (input 1) are int32 or int64. */
berth_status bk_check_indices(const bk_node_ctx *c);
/* Numpy broadcasting of inputs [0, n) into output 0, collapsed: size-1
 * dims dropped and neighbours contiguous for every input merged, with
 * per-input element strides (0 where an input repeats); rank >= 1. */
typedef struct bk_bcast {
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    int64_t strides[3][BERTH_MAX_RANK];
} bk_bcast;
void bk_bcast_of(const bk_node_ctx *c, uint32_t n, bk_bcast *b);
/* resample2d: mode, the two resampled axes (increasing, else refused)
 * and the scales, given or from the shapes. */
typedef struct bk_resample {
    int linear;
    uint32_t a0, a1;
    double sh, sw;
    uint64_t outer, mid, inner;
} bk_resample;
berth_status bk_param_resample(const bk_node_ctx *c, bk_resample *r);
/* quantizeLinear / dequantizeLinear: scale and zeroPoint right-aligned
 * against input 0; element i of dim d reads block i / block[d], the
 * blocks of dim d stepping by sstride[d] in the scale (0: one block). */
typedef struct bk_quant {
    berth_dtype qtype; /* the integer side */
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK], block[BERTH_MAX_RANK], sstride[BERTH_MAX_RANK];
} bk_quant;
void bk_param_quant(const bk_node_ctx *c, int quantize, bk_quant *q);
/* Check hook part: the integer side's dtype is in mask. */
berth_status bk_check_quant_int(const bk_node_ctx *c, int quantize, uint32_t mask);
/* Option "axes" of input 0 in the given order, into [0, rank); absent:
 * every axis from `from` on. mask: their bits. */
berth_status bk_param_axes(const bk_node_ctx *c, uint32_t from, uint32_t *axes, int *n, uint32_t *mask);
/* slice: starts and strides (default 1) per dim of input 0. */
berth_status bk_param_slice(const bk_node_ctx *c, int64_t *starts, int64_t *steps);
/* berth.attention: q [..., Sq, D], k [..., Sk, D], v [..., Sk, Dv];
 * batch is the product of the leading dims; mask (BK_NONE: none) with
 * its element strides over [..., Sq, Sk], 0 where it broadcasts. */
typedef struct bk_attention {
    uint32_t rank;
    uint64_t batch;
    int64_t sq, d, sk, dv;
    double scale;
    uint32_t mask;
    int64_t mstride[BERTH_MAX_RANK];
} bk_attention;
berth_status bk_param_attention(const bk_node_ctx *c, bk_attention *a);
/* berth.elementwise, decoded and checked against its notes in
 * docs/backend-ops.md: each step's op (an id of ops.def, inside this
 * build only), its references (>= 0: input, then earlier steps' results;
 * < 0: a constant, -r - 1), its options for clamp, leakyRelu, elu and
 * hardSigmoid (p0, p1, with WebNN's meaning), and per input the
 * broadcast: element (i / inner) % count of it feeds output element i. */
#define BK_EW_MAX_STEPS 64
#define BK_EW_MAX_INPUTS 16
#define BK_EW_MAX_CONSTANTS 256
typedef struct bk_ew_step {
    berth_op_id op;
    int32_t a, b;
    float p0, p1;
} bk_ew_step;
typedef struct bk_ew_program {
    uint32_t n_steps, n_in, n_constants;
    bk_ew_step steps[BK_EW_MAX_STEPS];
    size_t inner[BK_EW_MAX_INPUTS], count[BK_EW_MAX_INPUTS];
    float constants[BK_EW_MAX_CONSTANTS];
    size_t numel; /* the output's */
} bk_ew_program;
berth_status bk_param_elementwise(const bk_node_ctx *c, bk_ew_program *p);
/* berth.conv2dEpilogue's program: input 0 is the convolution's result
 * (the output's shape, read in place), then its epilogueInputs. The
 * convolution itself is read with bk_param_conv like conv2d's. */
berth_status bk_param_conv_epilogue(const bk_node_ctx *c, bk_ew_program *p);
/* 1 for the unary ops a step may apply, 2 for the binary ones, 0 else
 * (the engine's fusion pass asks it too). */
static inline int bk_ew_arity(berth_op_id op) {
    switch (op) {
    case BERTH_OP_ADD: case BERTH_OP_SUB: case BERTH_OP_MUL: case BERTH_OP_DIV:
    case BERTH_OP_MAX: case BERTH_OP_MIN: case BERTH_OP_POW:
        return 2;
    case BERTH_OP_RELU: case BERTH_OP_SIGMOID: case BERTH_OP_TANH: case BERTH_OP_EXP: case BERTH_OP_LOG:
    case BERTH_OP_SQRT: case BERTH_OP_ABS: case BERTH_OP_NEG: case BERTH_OP_ERF: case BERTH_OP_GELU:
    case BERTH_OP_RECIPROCAL: case BERTH_OP_FLOOR: case BERTH_OP_CEIL: case BERTH_OP_SIN: case BERTH_OP_COS:
    case BERTH_OP_SIGN: case BERTH_OP_SOFTSIGN: case BERTH_OP_SOFTPLUS: case BERTH_OP_HARD_SWISH:
    case BERTH_OP_IDENTITY: case BERTH_OP_CLAMP: case BERTH_OP_LEAKY_RELU: case BERTH_OP_ELU:
    case BERTH_OP_HARD_SIGMOID:
        return 1;
    default:
        return 0;
    }
}
/* How many options a step of op reads from its constant reference:
 * clamp and hardSigmoid 2, leakyRelu and elu 1, others 0. */
static inline int bk_ew_options(berth_op_id op) {
    return op == BERTH_OP_CLAMP || op == BERTH_OP_HARD_SIGMOID ? 2
         : op == BERTH_OP_LEAKY_RELU || op == BERTH_OP_ELU ? 1 : 0;
}

/* berth.matmulEpilogue's activation: 0 none, 1 relu, 2 gelu, 3 sigmoid,
 * 4 tanh. */
berth_status bk_param_activation(const bk_node_ctx *c, int *code);
/* conv2d / convTranspose2d: padding (top, bottom, left, right), strides,
 * dilations, groups, the bias operand (BK_NONE: none), inputLayout. */
typedef struct bk_conv_attrs {
    int64_t pad[4], stride[2], dil[2], groups;
    uint32_t bias;
    int nhwc;
    /* bk_conv_geom: batch, channels, height, width of input 0; outputs
     * (o), per group (og, cg); the window (kh, kw) */
    int64_t n, c, h, w, o, og, cg, kh, kw;
} bk_conv_attrs;
berth_status bk_param_conv(const bk_node_ctx *c, bk_conv_attrs *a);
/* The geometry above from input 0 and the filter's dims fd in canonical
 * order (oihw; iohw when transposed). */
berth_status bk_conv_geom(const bk_node_ctx *c, const int64_t *fd, int transposed, bk_conv_attrs *a);
/* Option key, `want` ints, or `def` in each when absent. */
berth_status bk_param_ints_n(const bk_node_ctx *c, const char *key, int want, int64_t def, int64_t *out);
/* Option key, "nchw" (default) or "nhwc". */
berth_status bk_param_layout(const bk_node_ctx *c, const char *key, int *nhwc);

/* ---- op tables ---- */
/* What a backend says of one op: the dtypes of input 0 it takes (0: not
 * registered) and an optional hook that refuses, with
 * BERTH_ERR_UNSUPPORTED and the reason, a node its kernels cannot run. */
typedef berth_status (*bk_check_fn)(const bk_node_ctx *c);
typedef struct bk_op_caps {
    uint32_t dtypes;
    bk_check_fn check;
} bk_op_caps;

/* A backend's op table: an array of its own entry type, [BERTH_OP_COUNT]
 * long, filled with designated initializers ([BERTH_OP_ADD] = {...}), each
 * entry holding a bk_op_caps member named `caps`. */
typedef struct bk_op_set {
    const char *backend;
    const void *table;
    size_t stride, caps_off;
} bk_op_set;
/* Table rows for the four view ops (identity, reshape, squeeze,
 * unsqueeze), which share one prep and mask in every module. */
#define BK_VIEW_OPS(prep, mask)                                                       \
    [BERTH_OP_IDENTITY] = {prep, {mask, NULL}}, [BERTH_OP_RESHAPE] = {prep, {mask, NULL}}, \
    [BERTH_OP_SQUEEZE] = {prep, {mask, NULL}}, [BERTH_OP_UNSQUEEZE] = {prep, {mask, NULL}}
/* The unary math ops, one kernel family in every backend: one row each. */
#define BK_UNARY_OPS(prep, mask, check) \
    [BERTH_OP_RELU] = {prep, {mask, check}}, [BERTH_OP_SIGMOID] = {prep, {mask, check}}, \
    [BERTH_OP_TANH] = {prep, {mask, check}}, [BERTH_OP_EXP] = {prep, {mask, check}}, \
    [BERTH_OP_LOG] = {prep, {mask, check}}, [BERTH_OP_SQRT] = {prep, {mask, check}}, \
    [BERTH_OP_ABS] = {prep, {mask, check}}, [BERTH_OP_NEG] = {prep, {mask, check}}, \
    [BERTH_OP_ERF] = {prep, {mask, check}}, [BERTH_OP_GELU] = {prep, {mask, check}}, \
    [BERTH_OP_HARD_SIGMOID] = {prep, {mask, check}}, [BERTH_OP_HARD_SWISH] = {prep, {mask, check}}, \
    [BERTH_OP_CLAMP] = {prep, {mask, check}}, [BERTH_OP_LEAKY_RELU] = {prep, {mask, check}}, \
    [BERTH_OP_ELU] = {prep, {mask, check}}, [BERTH_OP_SOFTPLUS] = {prep, {mask, check}}, \
    [BERTH_OP_RECIPROCAL] = {prep, {mask, check}}, [BERTH_OP_FLOOR] = {prep, {mask, check}}, \
    [BERTH_OP_CEIL] = {prep, {mask, check}}, [BERTH_OP_SIN] = {prep, {mask, check}}, \
    [BERTH_OP_COS] = {prep, {mask, check}}, [BERTH_OP_SIGN] = {prep, {mask, check}}, \
    [BERTH_OP_SOFTSIGN] = {prep, {mask, check}}
/* The data-movement ops, by the backend's prep-function prefix:
 * PREFIX_transpose, PREFIX_slice, ... */
#define BK_COPY_OPS(prefix, mask, check)                                                        \
    [BERTH_OP_TRANSPOSE] = {prefix##_transpose, {mask, check}},                                 \
    [BERTH_OP_SLICE] = {prefix##_slice, {mask, check}}, [BERTH_OP_EXPAND] = {prefix##_expand, {mask, check}}, \
    [BERTH_OP_TILE] = {prefix##_tile, {mask, check}}, [BERTH_OP_CONCAT] = {prefix##_concat, {mask, check}},   \
    [BERTH_OP_SPLIT] = {prefix##_split, {mask, check}}
/* Gathers and arg reductions, by prep-function prefix likewise. */
#define BK_GATHER_OPS(prefix, mask, check)                      \
    [BERTH_OP_GATHER] = {prefix##_gather, {mask, check}},       \
    [BERTH_OP_GATHER_ELEMENTS] = {prefix##_gather_elements, {mask, check}}
#define BK_ARG_OPS(prefix, mask, check) \
    [BERTH_OP_ARG_MAX] = {prefix##_arg, {mask, check}}, [BERTH_OP_ARG_MIN] = {prefix##_arg, {mask, check}}
#define BK_OP_SET(name, table, type) {name, table, sizeof(type), offsetof(type, caps)}

/* The caps of op `id`, NULL when the backend does not register it. */
const bk_op_caps *bk_op_caps_of(const bk_op_set *s, berth_op_id id);
berth_status bk_supports_op(const bk_op_set *s, const char *op, berth_dtype dtype, berth_error *err);
/* supports_node for any graph the host hands over (host strides). */
berth_status bk_supports_node(const bk_op_set *s, const berth_graph_desc *g, uint32_t k, berth_error *err);
/* A module's supports_op and supports_node verbs (static functions
 * PREFIX_supports_op and PREFIX_supports_node), answered from its set. */
#define BK_SUPPORTS_VERBS(prefix, set)                                                                        \
    static berth_status prefix##_supports_op(berth_device *dev, const char *op, berth_dtype dtype,            \
                                             berth_error *err) {                                            \
        (void)dev;                                                                                           \
        return bk_supports_op(&(set), op, dtype, err);                                                       \
    }                                                                                                        \
    static berth_status prefix##_supports_node(berth_device *dev, const berth_graph_desc *g, uint32_t k,      \
                                               berth_error *err) {                                          \
        (void)dev;                                                                                           \
        return bk_supports_node(&(set), g, k, err);                                                          \
    }
/* At plan time, on a native graph: the node's op id after the same
 * checks (op registered, dtype, arity and output dtype per ops.def, the
 * check hook). */
berth_status bk_node_op(const bk_op_set *s, const bk_node_ctx *c, berth_op_id *id);
/* Arity and output dtype of a node against the op table (a guard: the
 * host checks this before a backend sees a node). */
berth_status bk_check_op_rules(const bk_node_ctx *c, berth_op_id id);

/* ---- graph descs ---- */
/* A graph desc in this build's layout: element sizes equal to sizeof.
 * When the host's sizes already are, `g` points at its arrays; otherwise
 * the kit copies the elements it knows. */
typedef struct bk_graph {
    berth_graph_desc g;
    void *owned;
} bk_graph;
/* Checks struct_size >= BERTH_GRAPH_DESC_V1_MIN_SIZE, element sizes >=
 * the V1 sizes, counts with arrays, every operand index in range and
 * every operand's rank, dims and dtype; then makes the native view. */
berth_status bk_graph_view(const berth_graph_desc *in, bk_graph *out, berth_error *err);
void bk_graph_release(bk_graph *g);
/* A module's plan verb: fn runs on the native view of g, which is
 * released afterwards. */
typedef berth_status (*bk_plan_fn)(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                                   berth_error *err);
berth_status bk_plan_native(bk_plan_fn fn, berth_device *dev, berth_weights *w, const berth_graph_desc *g,
                            berth_plan **out, berth_error *err);
/* Defines the static plan verb `name` over bk_plan_native(fn). */
#define BK_PLAN_VERB(name, fn)                                                                                \
    static berth_status name(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out, \
                             berth_error *err) {                                                             \
        return bk_plan_native(fn, dev, w, g, out, err);                                                       \
    }
/* Calls fn for every operand node reads: inputs and operand options. */
typedef void (*bk_use_fn)(void *ctx, uint32_t operand);
void bk_node_reads(const berth_node *node, bk_use_fn fn, void *ctx);
/* Topological order: each node reads only inputs, weights, constants and
 * values written by an earlier node; each VALUE is written once; graph
 * inputs are INPUTs and every graph output is available. */
berth_status bk_graph_check_order(const berth_graph_desc *g, berth_error *err);

/* Tensor i of a run() array laid out with the plan's tensor_size. */
static inline berth_tensor *bk_tensor_at(const berth_tensor *base, uint32_t i, size_t size) {
    return (berth_tensor *)(uintptr_t)((const char *)base + (size_t)i * size);
}

/* ---- arena placement ---- */
typedef struct bk_span {
    size_t size;         /* bytes */
    int64_t first, last; /* steps during which it is live, inclusive */
    size_t off;          /* out: offset in the arena */
    uint32_t id;         /* the caller's */
} bk_span;
/* Gives every span an offset (a multiple of align, a power of two) such
 * that spans live at the same step never overlap; reorders s. Returns
 * the arena's size. */
size_t bk_place(bk_span *s, size_t n, size_t align);
/* The arena bk_place would give the spans whose id is below `below`
 * alone: what a plan's intermediates need without its scratch (the
 * spans from `below` on), so a plan reports how much scratch adds.
 * Reorders s and overwrites its offsets: call it before bk_place. */
size_t bk_place_below(bk_span *s, size_t n, size_t align, uint32_t below);

/* ---- weights ---- */
typedef struct bk_upload {
    uint32_t n, count;
    uint8_t *present;
    size_t *sizes; /* bytes of each uploaded id */
    uint64_t bytes;
} bk_upload;
/* Checks the info's struct_size and weight_desc_size, then allocates. */
berth_status bk_upload_begin(bk_upload *u, const berth_upload_info *info, const char *backend, berth_error *err);
/* The desc's id is in range and not uploaded yet, its bytes match its
 * dtype and dims, and data is there. */
berth_status bk_upload_check(const bk_upload *u, const berth_weight_desc *d, const void *data, const char *backend,
                             berth_error *err);
void bk_upload_mark(bk_upload *u, const berth_weight_desc *d);
berth_status bk_upload_end(const bk_upload *u, const char *backend, berth_error *err);
void bk_upload_free(bk_upload *u);
/* At plan time, for every operand of g: a CONSTANT carries data of its
 * shape's size; a WEIGHT names an uploaded id of that size. */
berth_status bk_bind_check(const bk_upload *u, const berth_graph_desc *g, const char *backend, berth_error *err);

/* ---- declared options ---- */
typedef struct bk_option_value {
    int set; /* given in the INI section, or a default */
    int b;
    int64_t i;
    double f;
    const char *s;
} bk_option_value;
/* Reads [backend.NAME] through host->option_at into vals[0..n) by the
 * declarations (defaults first). Unknown keys and values that do not
 * parse fail with BERTH_ERR_INVALID naming key, expected and found. */
/* Parses v as declaration d says into *out; 0 if it does not fit. The
 * host checks [backend.NAME] with the same function before open(). */
int bk_option_parse(const berth_option_decl *d, const char *v, bk_option_value *out);
/* What a value of d must be, in words: "an integer in [1, 64]". */
void bk_option_expected(const berth_option_decl *d, char *buf, size_t cap);
berth_status bk_options_read(const berth_host_services *host, const char *backend, const berth_option_decl *decls,
                             uint32_t n, bk_option_value *vals, berth_error *err);

/* ---- entry and table ---- */
/* Negotiation. This kit serves the newest ABI this header describes to a
 * host offering it or more, and each older version to a host offering
 * that one: the same verbs, the table marked with the version served.
 * That is safe because every graph an older host sends is read through
 * bk_graph_view with the element sizes it declares, and an older host
 * never reads the slots its version lacks. Version 0, or host services
 * smaller than 1.0's, get NULL and the reason. tables[v - 1] is the
 * table of version v. */
const berth_backend *bk_entry(const berth_backend *tables, uint32_t host_abi_version,
                              const berth_host_services *host, berth_error *why);
/* Defines a table per ABI version and the exported entry from one list of
 * designated initializers (.name = ..., .open = ..., ...). */
#define BK_BACKEND(...)                                                                                         \
    static const berth_backend bk_tables[BERTH_BACKEND_ABI_VERSION] = {                                     \
        {.abi_version = BERTH_BACKEND_ABI_V1_0, .struct_size = sizeof(berth_backend), __VA_ARGS__},          \
        {.abi_version = BERTH_BACKEND_ABI_V1_1, .struct_size = sizeof(berth_backend), __VA_ARGS__},          \
        {.abi_version = BERTH_BACKEND_ABI_V1_2, .struct_size = sizeof(berth_backend), __VA_ARGS__},          \
        {.abi_version = BERTH_BACKEND_ABI_V1_3, .struct_size = sizeof(berth_backend), __VA_ARGS__},          \
        {.abi_version = BERTH_BACKEND_ABI_V1_4, .struct_size = sizeof(berth_backend), __VA_ARGS__}};         \
    BERTH_BACKEND_EXPORT const berth_backend *berth_backend_entry(uint32_t host_abi_version,                  \
                                                                  const berth_host_services *host,            \
                                                                  berth_error *why) {                        \
        return bk_entry(bk_tables, host_abi_version, host, why);                                              \
    }
/* plan_memory: writes the kinds that fit the host's struct_size;
 * `estimated` is a set of BERTH_PLAN_MEM_* bits. */
void bk_plan_memory_fill(berth_plan_memory *m, uint64_t intermediates, uint64_t scratch, uint64_t io,
                         uint64_t constants, uint64_t records, uint32_t estimated);
/* caps: writes the fields that fit the host's struct_size. */
berth_status bk_caps_fill(berth_caps *caps, const char *device_name, uint64_t memory_bytes, int unified,
                          uint32_t dtype_mask, berth_error *err);
/* caps, ABI 1.3: the partitioner's region and crossing costs, where they
 * fit the host's struct_size. */
void bk_caps_costs(berth_caps *caps, double region_ns, double crossing_ns_per_byte);

#endif
