/*
 * berth backend ABI 1.4 (abi_version 5), a superset of ABI 1.3 (abi_version 4),
 * ABI 1.2 (abi_version 3), ABI 1.1 (abi_version 2) and ABI 1.0 (abi_version 1).
 *
 * This header is the whole contract between the berth engine (the "host")
 * and a hardware backend (a shared object the host loads at run time). A
 * backend includes this header and nothing else from berth, links nothing
 * from libberth, and exports exactly one symbol:
 *
 *     const berth_backend *berth_backend_entry(uint32_t host_abi_version,
 *                                              const berth_host_services *host,
 *                                              berth_error *why);
 *
 * Reading order for a vendor: status and errors, dtypes, the graph a plan
 * receives, host services, then the function table and its verbs.
 *
 * Compatibility rules (the reasons this ABI survives releases):
 *  - Negotiation. The host passes the newest ABI version it speaks. The
 *    backend answers with a table for a version both speak (the largest
 *    version <= host_abi_version it implements), or NULL with a reason in
 *    *why. The host refuses a table whose abi_version is above what it asked.
 *    Version numbers only grow: 1 is ABI 1.0, 2 is ABI 1.1, 3 is ABI 1.2,
 *    4 is ABI 1.3, 5 is ABI 1.4. A table of a
 *    higher number is a superset of every lower one.
 *  - Append-only, with sizes everywhere. Every struct that crosses the
 *    boundary either starts with abi_version/struct_size or struct_size, or
 *    travels in an array whose element size is given beside it (a
 *    *_size field of the struct that holds the array). New fields and slots
 *    are only ever appended. A reader never touches a field that lies past
 *    the size the writer declared, and indexes arrays by the declared
 *    element size, never by its own sizeof. Each struct has a
 *    BERTH_*_V1_MIN_SIZE: the least size a writer of ABI 1.0 declared; the
 *    host and the backend kit refuse anything smaller.
 *  - A 1.0 module keeps loading. The host lays out every array a 1.0
 *    module receives with the 1.0 element sizes, never calls a slot past
 *    the table's struct_size, and asks supports_op where a 1.1 module is
 *    asked supports_node.
 *  - Errors are values. Every fallible call returns berth_status and, on
 *    failure, writes a NUL-terminated message into the caller-owned
 *    berth_error. A backend never prints to stdout, never exits, never
 *    aborts on bad input; it logs through host->log.
 *  - Memory crosses the boundary only as documented per call below.
 */
#ifndef BERTH_BACKEND_H
#define BERTH_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI versions: 1 is ABI 1.0, 2 is ABI 1.1, 3 is ABI 1.2, 4 is ABI 1.3,
 * 5 is ABI 1.4. */
#define BERTH_BACKEND_ABI_V1_0 1u
#define BERTH_BACKEND_ABI_V1_1 2u
#define BERTH_BACKEND_ABI_V1_2 3u
#define BERTH_BACKEND_ABI_V1_3 4u
#define BERTH_BACKEND_ABI_V1_4 5u
/* The newest ABI version this header describes. */
#define BERTH_BACKEND_ABI_VERSION BERTH_BACKEND_ABI_V1_4

/* Name of the one symbol a backend module exports. */
#define BERTH_BACKEND_ENTRY_SYMBOL "berth_backend_entry"

#if defined(_WIN32)
#define BERTH_BACKEND_EXPORT __declspec(dllexport)
#else
#define BERTH_BACKEND_EXPORT __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------ */
/* Status and errors                                                   */
/* ------------------------------------------------------------------ */

/* What open() returns also decides what the host does next with
 * `use = a, b`: BERTH_ERR_DEVICE and BERTH_ERR_UNSUPPORTED make it try
 * the next backend (as does a module that cannot be found, loaded or
 * negotiated with); BERTH_ERR_INVALID, BERTH_ERR_NOMEM, BERTH_ERR_IO and
 * BERTH_ERR_INTERNAL stop with the backend's error, so a mistyped option
 * is not hidden behind a fallback to another device. */
typedef enum berth_status {
    BERTH_OK = 0,
    BERTH_ERR_INVALID = 1,     /* bad argument, bad graph, bad option    */
    BERTH_ERR_UNSUPPORTED = 2, /* valid, but this backend cannot do it    */
    BERTH_ERR_NOMEM = 3,       /* host or device memory exhausted         */
    BERTH_ERR_DEVICE = 4,      /* the device failed or is absent          */
    BERTH_ERR_IO = 5,          /* reading a file failed (host side)       */
    BERTH_ERR_INTERNAL = 6     /* a bug: an invariant did not hold        */
} berth_status;

/* Caller-owned message buffer. On failure the callee writes a one-line,
 * NUL-terminated message (no trailing newline) naming what was expected
 * and what was found. On success its content is unspecified.
 *
 * The host shows a backend's message as
 *     backend 'NAME' VERB(): BERTH_ERR_X: MESSAGE
 * so a backend need not repeat its name or the status. A message left
 * empty is shown as "backend 'NAME' VERB() returned BERTH_ERR_X with no
 * message"; one that fills all BERTH_ERROR_CAP bytes without a NUL is
 * cut to its first 200 bytes with a note saying so. */
#define BERTH_ERROR_CAP 512
typedef struct berth_error {
    char msg[BERTH_ERROR_CAP];
} berth_error;

/* ------------------------------------------------------------------ */
/* Element types (WebNN MLOperandDataType)                              */
/* ------------------------------------------------------------------ */

typedef enum berth_dtype {
    BERTH_DTYPE_INVALID = 0,
    BERTH_DTYPE_F32 = 1,
    BERTH_DTYPE_F16 = 2,
    BERTH_DTYPE_I32 = 3,
    BERTH_DTYPE_U32 = 4,
    BERTH_DTYPE_I64 = 5,
    BERTH_DTYPE_U64 = 6,
    BERTH_DTYPE_I8 = 7,
    BERTH_DTYPE_U8 = 8, /* also WebNN's boolean results: 0 or 1 */
    BERTH_DTYPE_I4 = 9, /* packed two per byte, low nibble first */
    BERTH_DTYPE_U4 = 10
} berth_dtype;

/* Highest rank an operand may have. */
#define BERTH_MAX_RANK 8

/* ------------------------------------------------------------------ */
/* The graph a plan receives: every dim known                          */
/* ------------------------------------------------------------------ */

typedef enum berth_operand_kind {
    BERTH_OPERAND_INPUT = 1,    /* bound by run() from berth_tensor inputs   */
    BERTH_OPERAND_WEIGHT = 2,   /* uploaded earlier; `weight` is its id      */
    BERTH_OPERAND_CONSTANT = 3, /* small constant; `data`/`bytes` hold it    */
    BERTH_OPERAND_VALUE = 4     /* produced by a node                        */
} berth_operand_kind;

/* Arrays of berth_operand, berth_node, berth_attr and berth_tensor are
 * indexed by the element sizes in berth_graph_desc (operand_size,
 * node_size, attr_size, tensor_size); berth_weight_desc by
 * berth_upload_info.weight_desc_size. The *_V1_SIZE macros below are the
 * element sizes of ABI 1.0, which a 1.0 module assumes. */
typedef struct berth_operand {
    const char *name;
    berth_operand_kind kind;
    berth_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK]; /* all >= 0; rank 0 is a scalar        */
    uint32_t weight;              /* WEIGHT: the id given at upload; the dims may be
                                     another shape of the same bytes (a model's
                                     reshape or unsqueeze of the weight) */
    const void *data;             /* CONSTANT: little-endian elements,    */
    size_t bytes;                 /*   owned by the host, valid during plan() only: copy what you keep */
} berth_operand;
#define BERTH_OPERAND_V1_SIZE (offsetof(berth_operand, bytes) + sizeof(size_t))

typedef enum berth_attr_type {
    BERTH_ATTR_NULL = 0,
    BERTH_ATTR_INT = 1,      /* i                                     */
    BERTH_ATTR_FLOAT = 2,    /* f                                     */
    BERTH_ATTR_BOOL = 3,     /* i (0 or 1)                            */
    BERTH_ATTR_STRING = 4,   /* s                                     */
    BERTH_ATTR_INTS = 5,     /* ints[0..count)                        */
    BERTH_ATTR_FLOATS = 6,   /* floats[0..count)                      */
    BERTH_ATTR_OPERAND = 7,  /* i: index into berth_graph_desc.operands */
    BERTH_ATTR_OPERANDS = 8  /* ints[0..count): operand indices       */
} berth_attr_type;

/* A node option, e.g. `axis=1`, `strides=[2, 2]`, `bias=b`. Keys and
 * spellings are WebNN's (camelCase), as written in the .webnn file. */
typedef struct berth_attr {
    const char *key;
    berth_attr_type type;
    size_t count;
    int64_t i;
    double f;
    const char *s;
    const int64_t *ints;
    const double *floats;
} berth_attr;
#define BERTH_ATTR_V1_SIZE (offsetof(berth_attr, floats) + sizeof(void *))

typedef struct berth_node {
    const char *op;           /* WebNN op name: "matmul", "conv2d", ...  */
    const char *name;         /* the first output's name, for messages   */
    uint32_t n_inputs;
    const uint32_t *inputs;   /* positional operands, operand indices    */
    uint32_t n_outputs;
    const uint32_t *outputs;  /* operand indices                         */
    uint32_t n_attrs;
    const berth_attr *attrs;
} berth_node;
#define BERTH_NODE_V1_SIZE (offsetof(berth_node, attrs) + sizeof(void *))

/* A whole graph for one bucket: nodes in topological order, every operand
 * shape concrete. All memory is owned by the host and valid only during
 * the plan() or supports_node() call that receives it; a backend copies
 * what it keeps.
 *
 * What the host guarantees of every graph it hands over (so a backend's
 * op code holds kernels, not re-validation):
 *  - every op is one of include/berth/ops.def, with an operand count, an
 *    output count and option types that table allows, and every shape and
 *    dtype checked by the op's rule (docs/backend-ops.md): a backend need
 *    not check what that page states;
 *  - operand indices are in range; nodes are in topological order (every
 *    operand a node reads is an input, weight or constant, or written by
 *    an earlier node); each VALUE is written by exactly one node;
 *  - an INPUT, WEIGHT or CONSTANT of any dtype may also be a graph output:
 *    run() copies it through to that output;
 *  - an operand with a zero dim has no elements; its data pointer may be
 *    NULL. */
typedef struct berth_graph_desc {
    uint32_t struct_size;
    uint32_t n_operands;
    const berth_operand *operands;
    uint32_t n_nodes;
    const berth_node *nodes;
    uint32_t n_inputs;
    const uint32_t *inputs;   /* operand indices, in run()'s input order  */
    uint32_t n_outputs;
    const uint32_t *outputs;  /* operand indices, in run()'s output order */
    /* ABI 1.1: element sizes of the arrays above, of every node's attrs,
     * and of the berth_tensor arrays run() will receive for this plan.
     * Absent (struct_size too small) means the ABI 1.0 sizes. */
    uint32_t operand_size;
    uint32_t node_size;
    uint32_t attr_size;
    uint32_t tensor_size;
} berth_graph_desc;
#define BERTH_GRAPH_DESC_V1_MIN_SIZE (offsetof(berth_graph_desc, outputs) + sizeof(void *))

/* A dense, row-major tensor in host memory, passed to run(). */
typedef struct berth_tensor {
    berth_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    void *data;
    size_t bytes;    /* bytes of the tensor's elements */
    size_t capacity; /* bytes allocated at data, where the engine grows
                        an output buffer for the caller; backends ignore it */
} berth_tensor;
#define BERTH_TENSOR_V1_SIZE (offsetof(berth_tensor, capacity) + sizeof(size_t))

/* ------------------------------------------------------------------ */
/* Host services: everything a backend may ask of the engine            */
/* ------------------------------------------------------------------ */

typedef enum berth_log_level {
    BERTH_LOG_ERROR = 0,
    BERTH_LOG_WARN = 1,
    BERTH_LOG_INFO = 2,
    BERTH_LOG_DEBUG = 3
} berth_log_level;

/* The host owns this table and keeps it valid until the backend's module
 * is unloaded. Every function is safe to call from any thread. */
typedef struct berth_host_services {
    uint32_t abi_version;
    uint32_t struct_size;
    void *ctx; /* pass back as the first argument of every service */

    /* A one-line message; the host adds the backend name and a newline. */
    void (*log)(void *ctx, berth_log_level level, const char *msg);

    /* The key/value pairs of the INI section [backend.NAME], in file
     * order. option_at writes the pair at `index` and returns BERTH_OK,
     * or returns BERTH_ERR_INVALID past the end, like every other call
     * across this boundary. Strings stay valid until the device is
     * closed. A backend validates them itself and fails open() with
     * BERTH_ERR_INVALID naming any key it does not know.
     *
     * Changed in this release, with the ABI version left at 1: option_at
     * used to return nonzero for an option that exists and 0 past the
     * end. Its answer 0 now means BERTH_OK. A backend that tested
     * `!option_at(...)` reads every option as missing until it is
     * rebuilt against this header and compares with BERTH_OK. */
    uint32_t (*option_count)(void *ctx);
    berth_status (*option_at)(void *ctx, uint32_t index, const char **key, const char **value);

    /* Memory that may change hands: a buffer the host allocates with
     * alloc and gives away (see upload_tensor) is released by the
     * backend with free, never with its own allocator. */
    void *(*alloc)(void *ctx, size_t bytes, size_t alignment);
    void (*free)(void *ctx, void *ptr);
} berth_host_services;
#define BERTH_HOST_SERVICES_V1_MIN_SIZE (offsetof(berth_host_services, free) + sizeof(void *))

/* ------------------------------------------------------------------ */
/* Opaque backend objects                                              */
/* ------------------------------------------------------------------ */

typedef struct berth_device berth_device;   /* an opened device context */
typedef struct berth_weights berth_weights; /* one model's weights on it */
typedef struct berth_plan berth_plan;       /* one graph for one bucket  */

typedef struct berth_caps {
    uint32_t struct_size;    /* set by the host before the call          */
    const char *device_name; /* static or device-owned, lives until close */
    uint64_t memory_bytes;   /* memory available to the backend, 0 = unknown */
    int unified_memory;      /* 1: device memory is host memory          */
    uint32_t dtype_mask;     /* bit (1u << berth_dtype) for each dtype stored */
    /* ABI 1.3: what the partitioner (split = on) charges for a subgraph
     * on this device beyond its nodes' own time; 0 leaves the host's
     * default (docs/partition.md). */
    double region_ns;        /* starting and finishing one subgraph: a submit, a wait */
    double crossing_ns_per_byte; /* a tensor crossing into or out of a subgraph here */
} berth_caps;
#define BERTH_CAPS_V1_MIN_SIZE (offsetof(berth_caps, dtype_mask) + sizeof(uint32_t))

/* What the host knows before streaming starts. */
typedef struct berth_upload_info {
    uint32_t struct_size;
    uint32_t n_tensors;     /* exact number of upload_tensor calls to come */
    uint64_t total_bytes;   /* sum of their sizes after conversion         */
    uint64_t largest_bytes; /* largest single tensor after conversion      */
    /* ABI 1.1: sizeof the berth_weight_desc the host passes to upload_dest
     * and upload_tensor; absent means BERTH_WEIGHT_DESC_V1_SIZE. */
    uint32_t weight_desc_size;
} berth_upload_info;
#define BERTH_UPLOAD_INFO_V1_MIN_SIZE (offsetof(berth_upload_info, largest_bytes) + sizeof(uint64_t))

/* One tensor of the weights, in the dtype the graph declares. */
typedef struct berth_weight_desc {
    const char *name;
    uint32_t id;  /* dense, 0..n_tensors-1, referenced by BERTH_OPERAND_WEIGHT */
    berth_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    size_t bytes;
} berth_weight_desc;
#define BERTH_WEIGHT_DESC_V1_SIZE (offsetof(berth_weight_desc, bytes) + sizeof(size_t))

/* Flags for upload_tensor's `data` argument. */
#define BERTH_UPLOAD_IN_PLACE 1u /* data is the pointer upload_dest offered   */
#define BERTH_UPLOAD_GIVEN 2u    /* the backend may keep data (set *taken=1)  */

/* ------------------------------------------------------------------ */
/* Declared options (ABI 1.1)                                          */
/* ------------------------------------------------------------------ */

/* The type of a declared option's value, as written in the INI file. */
typedef enum berth_option_type {
    BERTH_OPTION_BOOL = 1,   /* true/false, yes/no, on/off, 1/0          */
    BERTH_OPTION_INT = 2,    /* a decimal integer within [min, max]       */
    BERTH_OPTION_FLOAT = 3,  /* a decimal number within [min, max]        */
    BERTH_OPTION_STRING = 4, /* any text; with `choices`, one of them     */
    BERTH_OPTION_PATH = 5    /* a file path                               */
} berth_option_type;

/* One option of [backend.NAME]. The host refuses, before open(), a key
 * the backend does not declare and a value that does not parse as its
 * type (or is outside [min, max], or not one of `choices`), naming the
 * file, line, key, what was expected and what was found. `berth
 * backends` prints every declared option. Declared options still reach
 * the backend through host->option_count/option_at, as text. */
typedef struct berth_option_decl {
    const char *key;
    berth_option_type type;
    const char *default_value; /* as text, as the INI would say it; NULL: none */
    const char *choices;       /* STRING: "a|b|c", or NULL for any text       */
    double min, max;           /* INT and FLOAT: bounds (both 0: unbounded)   */
    const char *help;          /* one line                                    */
} berth_option_decl;
#define BERTH_OPTION_DECL_V1_SIZE (offsetof(berth_option_decl, help) + sizeof(void *))

/* ------------------------------------------------------------------ */
/* A plan's bytes by kind (ABI 1.2)                                     */
/* ------------------------------------------------------------------ */

/* What a plan holds, by kind; the kinds add up to plan_bytes(). The host
 * sets struct_size and zeroes the rest before the call; the backend
 * writes only fields that fit struct_size. */
typedef struct berth_plan_memory {
    uint32_t struct_size;
    uint32_t estimated;     /* BERTH_PLAN_MEM_* bits: kinds that are estimates, not counts */
    uint64_t intermediates; /* values passed between nodes, placed by liveness */
    uint64_t scratch;       /* what kernels' temporary buffers add to that placement */
    uint64_t io;            /* where run()'s inputs and outputs meet the device: staging,
                               or the host-visible memory they are bound in */
    uint64_t constants;     /* graph constants and what kernels precompute from them */
    uint64_t records;       /* the plan's bookkeeping: operand and node tables, dispatch
                               lists, descriptor sets, command buffers */
    uint64_t other;         /* bytes in none of the kinds above; the host counts here the
                               whole plan of a backend that does not report kinds */
} berth_plan_memory;
#define BERTH_PLAN_MEMORY_V1_MIN_SIZE (offsetof(berth_plan_memory, other) + sizeof(uint64_t))
#define BERTH_PLAN_MEM_INTERMEDIATES 1u
#define BERTH_PLAN_MEM_SCRATCH 2u
#define BERTH_PLAN_MEM_IO 4u
#define BERTH_PLAN_MEM_CONSTANTS 8u
#define BERTH_PLAN_MEM_RECORDS 16u

/* ------------------------------------------------------------------ */
/* What a node costs (ABI 1.3)                                          */
/* ------------------------------------------------------------------ */

/* node_cost's question and answer. The host fills struct_size and its
 * own count of the node's work; the backend writes node_ns when its
 * struct_size holds it. The partitioner weighs these times against what
 * crossing between subgraphs costs (berth_caps.region_ns and
 * crossing_ns_per_byte) to decide whether a run of nodes is worth moving
 * to the backend its neighbours run on. Only ratios between backends
 * matter: an estimate need not be a measurement. */
typedef struct berth_node_cost {
    uint32_t struct_size;
    uint32_t reserved;
    double flops;   /* in: multiply and add each count 1 (a matmul of M x K by K x N is 2MNK) */
    double bytes;   /* in: bytes of every operand the node reads and writes */
    double node_ns; /* out: this device's estimate of the node's time, > 0 */
} berth_node_cost;
#define BERTH_NODE_COST_V1_MIN_SIZE (offsetof(berth_node_cost, node_ns) + sizeof(double))

/* ------------------------------------------------------------------ */
/* Buffers shared between plans (ABI 1.3)                               */
/* ------------------------------------------------------------------ */

/* Where one plan's output lies after its run, described so that another
 * plan (of this backend or another) reads it there, without the host
 * copying it in between. This is how a tensor crossing between two
 * subgraphs of a split graph stays where it is. */
#define BERTH_SHARED_HOST 1u /* `host`: memory the host and every backend may read */
#define BERTH_SHARED_FD 2u   /* `fd` at `offset`: a descriptor another device may map (a dma-buf) */
typedef struct berth_shared_buffer {
    uint32_t struct_size;
    uint32_t kind;   /* one BERTH_SHARED_* */
    void *host;      /* HOST: the tensor's first byte */
    int fd;          /* FD: the exporter's, open until its free_plan; an importer dups what it keeps */
    uint64_t offset; /* FD: where the tensor starts */
    uint64_t bytes;  /* the tensor's size */
} berth_shared_buffer;
#define BERTH_SHARED_BUFFER_V1_MIN_SIZE (offsetof(berth_shared_buffer, bytes) + sizeof(uint64_t))

/* ------------------------------------------------------------------ */
/* The function table                                                  */
/* ------------------------------------------------------------------ */
/* Prepared weights and saved state (ABI 1.4)                          */
/* ------------------------------------------------------------------ */

/* What prepare_weights made of the weights. The host sets struct_size
 * and zeroes the rest; the backend writes the fields that fit. */
typedef struct berth_prepare_info {
    uint32_t struct_size;
    uint32_t n_prepared;     /* weights now held in the backend's own layout */
    uint64_t bytes_prepared; /* the bytes of those layouts                   */
    uint64_t bytes_released; /* uploaded bytes let go: only the prepared form is read */
} berth_prepare_info;
#define BERTH_PREPARE_INFO_V1_MIN_SIZE (offsetof(berth_prepare_info, bytes_released) + sizeof(uint64_t))

/* What save_state and load_state carry. */
#define BERTH_STATE_WEIGHTS 1u  /* the weights as prepare_weights left them  */
#define BERTH_STATE_PROGRAMS 2u /* compiled device programs (a pipeline cache) */

/* ------------------------------------------------------------------ */

/* Concurrency. The host never makes two calls on one device, or on
 * objects made from it (weights, plans), at the same time. Different
 * devices (each open() makes one) may be used from different threads at
 * once, so a backend's module-wide state must be safe for that.
 *
 * Data pointers. A tensor's data given to run() is aligned to at least
 * its element size (the host refuses a caller's buffer that is not);
 * memory from host->alloc has the alignment asked for. Nothing larger is
 * promised: a backend that wants 64-byte alignment copies or checks. */

typedef struct berth_backend {
    uint32_t abi_version; /* the version this table implements          */
    uint32_t struct_size; /* sizeof the table the backend was built with */
    const char *name;     /* short name, e.g. "cpu"; static storage       */
    const char *version;  /* the backend's own release, free-form        */

    /* open: make a device context from the options (host services).
     * On failure nothing is left allocated. The status picks what the
     * host does next with `use = a, b`:
     *   BERTH_ERR_DEVICE       no usable device: the next backend is tried
     *   BERTH_ERR_UNSUPPORTED  the device cannot serve: the next is tried
     *   BERTH_ERR_INVALID      a bad or unknown option: the host stops
     *                          with this error, no fallback
     *   BERTH_ERR_NOMEM, BERTH_ERR_IO, BERTH_ERR_INTERNAL: it stops too. */
    berth_status (*open)(const berth_host_services *host, berth_device **out, berth_error *err);
    /* close: frees the device. All weights and plans are freed first by
     * the host; a backend may still free leftovers here. */
    void (*close)(berth_device *dev);

    /* caps: fill *caps (the host set struct_size; write only fields that
     * fit). */
    berth_status (*caps)(berth_device *dev, berth_caps *caps, berth_error *err);
    /* supports_op: BERTH_OK if the device runs `op` (a WebNN op name, or
     * a berth fused op) with operands of `dtype`; BERTH_ERR_UNSUPPORTED
     * with the reason otherwise. Asked before any upload so the host can
     * refuse a graph with a precise message; also asked by fusion passes. */
    berth_status (*supports_op)(berth_device *dev, const char *op, berth_dtype dtype,
                                berth_error *err);

    /* Weights arrive one tensor at a time:
     *   upload_begin once; then for each tensor upload_dest (optional)
     *   and upload_tensor; then upload_end. On any failure the host calls
     *   free_weights, which must accept a half-filled object. */
    berth_status (*upload_begin)(berth_device *dev, const berth_upload_info *info,
                                 berth_weights **out, berth_error *err);
    /* upload_dest: offer memory for the next tensor so the host reads the
     * file straight into place. Set *dest to at least desc->bytes of
     * host-writable memory, or to NULL to let the host use its scratch.
     * The pointer stays valid until the matching upload_tensor. May be
     * NULL in the table: the host then always uses scratch. */
    berth_status (*upload_dest)(berth_weights *w, const berth_weight_desc *desc, void **dest,
                                berth_error *err);
    /* upload_tensor: the tensor's bytes are complete at `data`.
     * flags & BERTH_UPLOAD_IN_PLACE: data is what upload_dest offered.
     * flags & BERTH_UPLOAD_GIVEN: data was allocated with host->alloc and
     *   the backend may keep it: it sets *taken = 1 and later releases it
     *   with host->free. Otherwise data is valid only during the call. */
    berth_status (*upload_tensor)(berth_weights *w, const berth_weight_desc *desc, void *data,
                                  uint32_t flags, int *taken, berth_error *err);
    berth_status (*upload_end)(berth_weights *w, berth_error *err);

    /* plan: validate a graph whose dims are all known, choose kernels,
     * allocate every buffer it will need. The graph desc is valid only
     * during the call. `w` outlives the plan. */
    berth_status (*plan)(berth_device *dev, berth_weights *w, const berth_graph_desc *graph,
                         berth_plan **out, berth_error *err);
    /* run: inputs[i] matches graph->inputs[i] (dtype and dims, checked by
     * the host); outputs[i] is host memory the caller owns, sized exactly.
     * Must not allocate. Calls on one plan are not concurrent. */
    berth_status (*run)(berth_plan *plan, const berth_tensor *inputs, uint32_t n_inputs,
                        berth_tensor *outputs, uint32_t n_outputs, berth_error *err);

    void (*free_plan)(berth_plan *plan);
    void (*free_weights)(berth_weights *w);
    /* bytes held on the device (for unified memory: in host memory). */
    uint64_t (*weights_bytes)(const berth_weights *w);
    uint64_t (*plan_bytes)(const berth_plan *plan);

    /* plan_profile: nanoseconds spent in each node (graph order) during
     * the last run, into ns[0..n). BERTH_ERR_UNSUPPORTED if the backend
     * does not time nodes. May be NULL in the table. */
    berth_status (*plan_profile)(const berth_plan *plan, uint64_t *ns, uint32_t n, berth_error *err);

    /* ---- ABI 1.1 ---- */

    /* supports_node: BERTH_OK if the device runs node `node_index` of
     * `graph` exactly as given (its op, every operand's dtype and shape,
     * its attributes); BERTH_ERR_UNSUPPORTED with the reason otherwise.
     * The host asks it for every node of every bucket before that
     * bucket's plan is built (and for candidate fused nodes), so plan()
     * is not the first place a node is refused. The graph is valid only
     * during the call. A 1.0 module is asked supports_op instead. */
    berth_status (*supports_node)(berth_device *dev, const berth_graph_desc *graph, uint32_t node_index,
                                  berth_error *err);

    /* get_proc: a vendor-specific entry point by name, or NULL. The host
     * never calls it; it is for applications that know the backend
     * (berth_executor_backend_proc). Names should carry the backend's
     * prefix, e.g. "acme_set_clock". May be NULL in the table. */
    void *(*get_proc)(const char *name);

    /* The options [backend.NAME] may hold. n_options 0 with options NULL
     * declares none: every key is refused before open(). */
    const berth_option_decl *options;
    uint32_t n_options;
    uint32_t option_decl_size; /* sizeof(berth_option_decl) the backend used */

    /* ---- ABI 1.2 ---- */

    /* plan_memory: the plan's bytes by kind into *mem (see
     * berth_plan_memory), adding up to plan_bytes(plan). May be NULL: the
     * host then counts the whole plan as `other`. */
    berth_status (*plan_memory)(const berth_plan *plan, berth_plan_memory *mem, berth_error *err);

    /* ---- ABI 1.3 ---- */

    /* node_cost: the estimated time of node `node_index` of `graph` on
     * this device into cost->node_ns (see berth_node_cost). Asked only
     * about nodes supports_node accepted. BERTH_ERR_UNSUPPORTED, or NULL
     * in the table, leaves the host's estimate from flops and bytes. */
    berth_status (*node_cost)(berth_device *dev, const berth_graph_desc *graph, uint32_t node_index,
                              berth_node_cost *cost, berth_error *err);

    /* export_output: describe in *buf (the host set struct_size) where
     * output `index` of the plan lies after run(), as one of the kinds
     * in `kinds` (BERTH_SHARED_* bits). The place must hold the output
     * from the end of each run() until the next run() or free_plan. The
     * host may then hand run() that output with data == buf->host (HOST)
     * or NULL (FD), which means: leave it where it lies, copy it nowhere.
     * Any other pointer is written as before, so exporting commits to
     * nothing. BERTH_ERR_UNSUPPORTED, or NULL in the table: the host
     * copies the output out as before. */
    berth_status (*export_output)(berth_plan *plan, uint32_t index, uint32_t kinds, berth_shared_buffer *buf,
                                  berth_error *err);
    /* import_input: input `index` of the plan may come in `buf` (another
     * plan's export, valid while this plan lives): whenever run() is
     * handed that input with data == buf->host (HOST) or NULL (FD), the
     * backend reads it from buf in its own way (maps it, binds it)
     * instead of copying it in from host memory. Any other pointer is
     * read as before. BERTH_ERR_UNSUPPORTED, or NULL in the table: the
     * host hands the input in host memory (a HOST buffer as it is). */
    berth_status (*import_input)(berth_plan *plan, uint32_t index, const berth_shared_buffer *buf,
                                 berth_error *err);

    /* ---- ABI 1.4 ---- */

    /* prepare_weights: after upload_end and before any plan, once for
     * each graph plans will read these weights through: each lane's
     * first bucket as it will be planned (with split, this backend's
     * subgraphs of it). The backend may put the weights those nodes read
     * into its own layout now (a product's operand packed, a filter
     * reordered) and let the uploaded form go where no plan reads it;
     * weights_bytes then counts each weight once, in the forms kept. A
     * later plan that reads a weight another way prepares or rebuilds
     * that form itself. Writes what it did into *info (the host set
     * struct_size). NULL in the table: plans prepare what they need. */
    berth_status (*prepare_weights)(berth_weights *w, const berth_graph_desc *graph, berth_prepare_info *info,
                                    berth_error *err);
    /* save_state: the state of `kind` (BERTH_STATE_*) the device or the
     * weights hold, as bytes into buf[0..*bytes); buf NULL asks the size
     * into *bytes. The bytes need make sense only to load_state of the
     * same backend, version, device and options: the host keys its cache
     * ([cache] dir) by those, the graph and the weights, and checks a
     * digest of the bytes before handing them back. WEIGHTS is asked
     * after prepare_weights, PROGRAMS after a plan was built.
     * BERTH_ERR_UNSUPPORTED: nothing of this kind to keep. */
    berth_status (*save_state)(berth_device *dev, berth_weights *w, uint32_t kind, void *buf, size_t *bytes,
                               berth_error *err);
    /* load_state: take saved bytes back: WEIGHTS after upload_end in
     * place of prepare_weights, PROGRAMS before plans are built. The
     * backend checks what it reads (a file of another build may reach
     * it) and refuses with BERTH_ERR_INVALID anything it cannot use
     * whole, its state left as it was; the host then prepares anew and
     * rewrites the cache. */
    berth_status (*load_state)(berth_device *dev, berth_weights *w, uint32_t kind, const void *buf, size_t bytes,
                               berth_error *err);
} berth_backend;

/* The least table size a backend of each version must declare. */
#define BERTH_BACKEND_V1_MIN_SIZE \
    (offsetof(berth_backend, plan_profile) + sizeof(void *))
#define BERTH_BACKEND_V1_1_MIN_SIZE \
    (offsetof(berth_backend, option_decl_size) + sizeof(uint32_t))
#define BERTH_BACKEND_V1_2_MIN_SIZE \
    (offsetof(berth_backend, plan_memory) + sizeof(void *))
#define BERTH_BACKEND_V1_3_MIN_SIZE \
    (offsetof(berth_backend, import_input) + sizeof(void *))
#define BERTH_BACKEND_V1_4_MIN_SIZE \
    (offsetof(berth_backend, load_state) + sizeof(void *))
/* The least table size for a table of abi_version v (1 or more). */
#define BERTH_BACKEND_MIN_SIZE(v)                                        \
    ((v) >= BERTH_BACKEND_ABI_V1_4   ? BERTH_BACKEND_V1_4_MIN_SIZE       \
     : (v) >= BERTH_BACKEND_ABI_V1_3 ? BERTH_BACKEND_V1_3_MIN_SIZE       \
     : (v) >= BERTH_BACKEND_ABI_V1_2 ? BERTH_BACKEND_V1_2_MIN_SIZE       \
     : (v) >= BERTH_BACKEND_ABI_V1_1 ? BERTH_BACKEND_V1_1_MIN_SIZE       \
                                     : BERTH_BACKEND_V1_MIN_SIZE)

/* The entry a backend exports. Returns its table (static storage, valid
 * until the module is unloaded) or NULL with the reason in *why. */
typedef const berth_backend *(*berth_backend_entry_fn)(uint32_t host_abi_version,
                                                       const berth_host_services *host,
                                                       berth_error *why);

#ifdef __cplusplus
}
#endif

#endif /* BERTH_BACKEND_H */
