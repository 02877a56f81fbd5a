/*
 * The berth backend ABI 1.0 header (abi_version 1), frozen as it was
 * released, for the compatibility test in tests/abi: the module
 * abi_v1_module.c is built against this file alone, so it has the 1.0
 * layout a vendor's 1.0 module has, and the host must keep loading and
 * running it. Never edit this copy to follow include/berth/backend.h.
 * Only its include guard differs from the release, so that it cannot be
 * mistaken for the current header.
 *
 * berth backend ABI, version 1.
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
 *  - Append-only. Every struct that crosses the boundary starts with
 *    abi_version/struct_size or struct_size. New fields and slots are only
 *    ever appended. A reader never touches a field that lies past the
 *    struct_size the writer declared; the host checks a backend's table is
 *    at least as large as its version requires before calling anything.
 *  - Errors are values. Every fallible call returns berth_status and, on
 *    failure, writes a NUL-terminated message into the caller-owned
 *    berth_error. A backend never prints to stdout, never exits, never
 *    aborts on bad input; it logs through host->log.
 *  - Memory crosses the boundary only as documented per call below.
 */
#ifndef BERTH_BACKEND_V1_0_FROZEN_H
#define BERTH_BACKEND_V1_0_FROZEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The newest ABI version this header describes. */
#define BERTH_BACKEND_ABI_VERSION 1u

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

typedef struct berth_operand {
    const char *name;
    berth_operand_kind kind;
    berth_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK]; /* all >= 0; rank 0 is a scalar        */
    uint32_t weight;              /* WEIGHT: the id given at upload       */
    const void *data;             /* CONSTANT: little-endian elements,    */
    size_t bytes;                 /*   owned by the host, valid during plan() only: copy what you keep */
} berth_operand;

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

/* A whole graph for one bucket: nodes in topological order, every operand
 * shape concrete. All memory is owned by the host and valid only during
 * the plan() call that receives it; a backend copies what it keeps. */
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
} berth_graph_desc;

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
} berth_caps;

/* What the host knows before streaming starts. */
typedef struct berth_upload_info {
    uint32_t struct_size;
    uint32_t n_tensors;     /* exact number of upload_tensor calls to come */
    uint64_t total_bytes;   /* sum of their sizes after conversion         */
    uint64_t largest_bytes; /* largest single tensor after conversion      */
} berth_upload_info;

/* One tensor of the weights, in the dtype the graph declares. */
typedef struct berth_weight_desc {
    const char *name;
    uint32_t id;  /* dense, 0..n_tensors-1, referenced by BERTH_OPERAND_WEIGHT */
    berth_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    size_t bytes;
} berth_weight_desc;

/* Flags for upload_tensor's `data` argument. */
#define BERTH_UPLOAD_IN_PLACE 1u /* data is the pointer upload_dest offered   */
#define BERTH_UPLOAD_GIVEN 2u    /* the backend may keep data (set *taken=1)  */

/* ------------------------------------------------------------------ */
/* The function table                                                  */
/* ------------------------------------------------------------------ */

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
} berth_backend;

/* The least table size a backend of each version must declare. */
#define BERTH_BACKEND_V1_MIN_SIZE \
    (offsetof(berth_backend, plan_profile) + sizeof(void *))

/* The entry a backend exports. Returns its table (static storage, valid
 * until the module is unloaded) or NULL with the reason in *why. */
typedef const berth_backend *(*berth_backend_entry_fn)(uint32_t host_abi_version,
                                                       const berth_host_services *host,
                                                       berth_error *why);

#ifdef __cplusplus
}
#endif

#endif /* BERTH_BACKEND_V1_0_FROZEN_H */
