/*
 * berth public API: open a deployment from its INI file, run batches.
 *
 *   berth_error err;
 *   berth_executor *ex;
 *   if (berth_executor_open("config/cpu.ini", NULL, &ex, &err) != BERTH_OK) {
 *       fprintf(stderr, "%s\n", err.msg);
 *       return 1;
 *   }
 *   berth_tensor in = {BERTH_DTYPE_F32, 2, {3, 4}, data, sizeof data};
 *   berth_tensor out = {0};             // grown by berth, kept across runs
 *   uint32_t bucket;
 *   berth_executor_run(ex, 0, &in, 1, &out, 1, &bucket, &err);
 *   ...
 *   berth_tensor_release(&out);
 *   berth_executor_close(ex);
 *
 * Threading. An executor's calls that run or plan (run, prepare,
 * add_graph, bucket_graph, profile) are one thread's at a time: one made
 * while another thread is inside one of them is refused with
 * BERTH_ERR_INVALID ("the executor is busy in another call"), never run
 * against the other call's buffers. For several threads on one copy of
 * the weights, open a run context per thread (berth_context_open below):
 * each holds its own plans and buffers, contexts run at the same time,
 * and the weights stay uploaded once. Calls that only read what open()
 * fixed (lane, input and bucket queries, memory) are safe from any
 * thread at any time.
 */
#ifndef BERTH_H
#define BERTH_H

#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct berth_executor berth_executor;

/* Optional settings for berth_executor_open; NULL means defaults. */
typedef struct berth_open_options {
    uint32_t struct_size; /* sizeof(berth_open_options) */
    /* Receives every log line (backend choice, fallbacks, loading). NULL:
     * lines at or below `log_level` go to stderr. */
    void (*log)(void *ctx, berth_log_level level, const char *msg);
    void *log_ctx;
    berth_log_level log_level; /* default BERTH_LOG_WARN */
    /* Overrides [backend] use (comma-separated), NULL: keep the config's. */
    const char *use;
    /* Overrides [limits] max_memory_mb, in bytes; 0: keep the config's
     * (or, without one, the default: the machine's physical memory). Read
     * only when struct_size covers it, so callers built against an older
     * berth.h keep working. */
    uint64_t max_memory_bytes;
    /* Which model of a config with [model.NAME] sections to open (a
     * pipeline's detector, classifier, recognizer...); NULL: [model].
     * Read only when struct_size covers it. */
    const char *model;
    /* A reference backend (name or path) every run is held to, as
     * [backend] verify sets it; NULL: keep the config's. Read only when
     * struct_size covers it. See "Verify" below. */
    const char *verify;
    /* The config's text, for a deployment composed in memory (the Python
     * package's Session(graph, weights, ...) writes one): config_path is
     * then not read, only named in messages, and relative paths in the
     * text resolve against its folder. NULL: read config_path. Read only
     * when struct_size covers it. */
    const char *config_text;
} berth_open_options;

/* Verify. With a reference ([backend] verify = cpu, or the option
 * above), open() also opens the same model on the reference backend (its
 * own copy of the weights), and every run, of the executor or of a
 * context, runs on it too: each output must match the reference's within
 * |x - ref| <= verify_atol + verify_rtol |ref| ([backend] keys, default
 * 1e-3 each), and a NaN or infinity where the reference is finite never
 * passes. A run that does not match returns BERTH_ERR_INTERNAL with a
 * message naming the output, its errors and first element outside, and
 * the first node of the graph that diverges (its name, op, errors and
 * index; found by running the bucket's graph unfused on both backends
 * with every intermediate kept, once, on that run; with split only
 * the output is named). The outputs hold what the backend gave. A run
 * that matches costs one reference run and one pass over the outputs;
 * the reference's copy of the weights and its plans count in
 * berth_executor_memory. */

/* Open the deployment a config describes: load the backend (trying each
 * of `use` in order), parse the graph, validate the weights archive and
 * stream it into the backend. On failure nothing is left allocated.
 *
 * Memory limit: the weights, every warm plan on the device and the
 * engine's host buffers for them together stay within the limit
 * (max_memory_bytes, [limits] max_memory_mb, or the machine's physical
 * memory). Weights over it fail the open; a plan that would take berth
 * over it fails prepare or run before anything of it is allocated, and
 * the bucket stays cold. Both return BERTH_ERR_NOMEM with a message
 * naming what, its size and the limit. */
berth_status berth_executor_open(const char *config_path, const berth_open_options *opts,
                                 berth_executor **out, berth_error *err);
void berth_executor_close(berth_executor *ex);

/* The backend in use (with split on or first, the first of those held): its
 * short name, module path and device name. */
const char *berth_executor_backend(const berth_executor *ex);
const char *berth_executor_backend_path(const berth_executor *ex);
const char *berth_executor_device(const berth_executor *ex);
/* A vendor-specific entry point of the backend in use, looked up by name
 * through its get_proc (ABI 1.1), e.g. "acme_set_clock"; NULL when the
 * backend is an ABI 1.0 module, leaves get_proc NULL, or does not know
 * the name. The caller converts the pointer to the function type the
 * backend documents. It stays valid until berth_executor_close; berth
 * never calls it, and whatever it does to the device is between the
 * caller and the backend (call it only while no other call on this
 * executor runs). */
void *berth_executor_backend_proc(berth_executor *ex, const char *name);

/* ---- the backends installed ---- */

/* One module found along the search path. Strings and `backend` are
 * valid only during the callback. */
typedef struct berth_backend_found {
    const char *path;        /* the module file */
    const char *name;        /* the backend's name; NULL when it did not load */
    const char *version;     /* the module's version string, or NULL */
    uint32_t abi_version;    /* the ABI it speaks with this berth; 0 when it did not load */
    const char *device;      /* the device it opened; NULL when none */
    const char *error;       /* NULL: usable; else why it did not load or open a device */
    const berth_backend *backend; /* the loaded table (its options), or NULL */
} berth_backend_found;

/* Every backend module (libberth-NAME.so) in `dirs`, then where
 * berth_executor_open looks ($BERTH_BACKEND_PATH, berth/ beside
 * libberth.so or ../lib/berth beside the program, a build tree's
 * backends/), in that order: each is loaded, its device opened and
 * closed, and fn called once. Returns how many modules were found.
 * `dir` (optional) is called once per folder looked in, with
 * readable = 0 when it is absent or cannot be read. */
uint32_t berth_backends_list(const char *const *dirs, uint32_t n_dirs,
                             void (*dir)(void *ctx, const char *folder, int readable),
                             void (*fn)(void *ctx, const berth_backend_found *found), void *ctx);

/* ---- lanes: graphs on the uploaded weights (lane 0 is [model]) ---- */

uint32_t berth_executor_lane_count(const berth_executor *ex);
const char *berth_executor_lane_name(const berth_executor *ex, uint32_t lane);
/* Lane index by name, or -1. */
int32_t berth_executor_find_lane(const berth_executor *ex, const char *name);
/* Add a graph that reads only weights lane 0 reads, with the same dtype
 * and shape. `stage` names a stage of the config (NULL: the first). */
berth_status berth_executor_add_graph(berth_executor *ex, const char *name, const char *webnn_path,
                                      const char *stage, uint32_t *lane, berth_error *err);

/* ---- the lane's inputs and outputs ---- */

typedef struct berth_io_info {
    const char *name;
    berth_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK]; /* for a dynamic dim: its max */
    const char *dyn[BERTH_MAX_RANK]; /* dynamic dim's name, or NULL */
} berth_io_info;

uint32_t berth_executor_input_count(const berth_executor *ex, uint32_t lane);
uint32_t berth_executor_output_count(const berth_executor *ex, uint32_t lane);
/* Outputs: dtype, rank, dims as the lane's last bucket gives them, and
 * dyn[d] names a dyn dim output dim d follows, NULL for a dim the same
 * in every bucket. Each call specializes every bucket of the lane: ask
 * once, not per run. */
berth_status berth_executor_input_info(const berth_executor *ex, uint32_t lane, uint32_t i,
                                       berth_io_info *info);
berth_status berth_executor_output_info(const berth_executor *ex, uint32_t lane, uint32_t i,
                                        berth_io_info *info);

/* ---- buckets and plans ---- */

/* Buckets of the lane's stage, in config order. describe writes e.g.
 * "batch=8 width=320". */
uint32_t berth_executor_bucket_count(const berth_executor *ex, uint32_t lane);
void berth_executor_bucket_describe(const berth_executor *ex, uint32_t lane, uint32_t bucket,
                                    char *buf, size_t cap);
/* The graph of (lane, bucket) as the backend would first be shown it:
 * every dyn dim bound to the bucket's value, shape math folded, every
 * operand's shape inferred, nothing fused yet. visit(ctx, graph) is
 * called once; the graph is valid only during that call. For tools that
 * study a model's shapes (the benchmark lists its matrix products); no
 * plan is built and the backend is not asked. BERTH_ERR_INVALID for a
 * bucket that does not exist or does not specialize. */
berth_status berth_executor_bucket_graph(berth_executor *ex, uint32_t lane, uint32_t bucket,
                                         void (*visit)(void *ctx, const berth_graph_desc *graph),
                                         void *ctx, berth_error *err);
/* Build the plan for (lane, bucket) now instead of on first use. */
berth_status berth_executor_prepare(berth_executor *ex, uint32_t lane, uint32_t bucket,
                                    berth_error *err);
/* 1 if the plan for (lane, bucket) exists. */
int berth_executor_is_warm(const berth_executor *ex, uint32_t lane, uint32_t bucket);

/* Run a batch. inputs[i] is the lane's input i (host memory, row-major;
 * dynamic dims at most their max). The executor picks the smallest bucket
 * of the lane's stage that holds the batch, pads, runs and trims: each
 * output's dims are what the graph gives at the batch's own sizes, and a
 * plan whose padding may reach an output's values warns once (README.md,
 * "Buckets"). A size the graph cannot take is BERTH_ERR_INVALID naming
 * the input and dim. outputs[i]: data is grown with realloc when too small (start from a
 * zeroed berth_tensor; free with berth_tensor_release); dtype, rank and
 * dims are written. `bucket` (optional) receives the bucket used. */
berth_status berth_executor_run(berth_executor *ex, uint32_t lane, const berth_tensor *inputs,
                                uint32_t n_inputs, berth_tensor *outputs, uint32_t n_outputs,
                                uint32_t *bucket, berth_error *err);
void berth_tensor_release(berth_tensor *t);

/* ---- run contexts: several threads on one copy of the weights ---- */

/* A run context holds, for every lane, its own plans (one per bucket,
 * built on first use or by berth_context_prepare) and its own input and
 * output buffers, over the executor's uploaded weights. A context is one
 * thread's at a time (a second caller is refused, as for the executor);
 * different contexts may run at the same time from different threads,
 * and with the executor's own calls. Backend calls take turns: the
 * backend ABI gives a device one call at a time, so two contexts' runs
 * on one device are serialized inside the backend (each run still uses
 * the backend's own threads), while checking, padding, trimming and
 * copying the caller's tensors run in parallel. Each context's plans
 * count against the executor's memory limit and in
 * berth_executor_memory. Results do not depend on the context.
 *
 * Open contexts after every berth_executor_add_graph: while contexts
 * are open, add_graph is refused. Close each context before the
 * executor; berth_executor_close closes any still open (a context
 * pointer is not valid after that). */
typedef struct berth_context berth_context;

berth_status berth_context_open(berth_executor *ex, berth_context **out, berth_error *err);
void berth_context_close(berth_context *ctx);
/* As berth_executor_prepare, is_warm and run, on the context's plans. */
berth_status berth_context_prepare(berth_context *ctx, uint32_t lane, uint32_t bucket,
                                   berth_error *err);
int berth_context_is_warm(const berth_context *ctx, uint32_t lane, uint32_t bucket);
berth_status berth_context_run(berth_context *ctx, uint32_t lane, const berth_tensor *inputs,
                               uint32_t n_inputs, berth_tensor *outputs, uint32_t n_outputs,
                               uint32_t *bucket, berth_error *err);

/* ---- memory and profiling ---- */

typedef struct berth_memory {
    uint64_t weights_bytes; /* on the device, once for all lanes and contexts */
    uint64_t plans_bytes;   /* all plans of every context, on the device */
    uint64_t host_bytes;    /* the engine's own per-plan buffers (padding) */
    uint32_t plans;         /* how many plans are warm */
} berth_memory;

/* With verify, the reference's weights, plans and host buffers are
 * counted too (its plans not in `plans`); each executor holds to the
 * memory limit on its own. */
void berth_executor_memory(const berth_executor *ex, berth_memory *m);
/* The memory limit in bytes; *what (optional) receives where it came
 * from, e.g. "[limits] max_memory_mb = 1024". UINT64_MAX: no limit. */
uint64_t berth_executor_memory_limit(const berth_executor *ex, const char **what);

/* The backends the executor holds: one with [backend] split = off; with
 * split = on or first every backend of `use` that opened, in `use` order. _at
 * gives backend k's module name and (optional) its device's; NULL past
 * the last. */
uint32_t berth_executor_backend_count(const berth_executor *ex);
const char *berth_executor_backend_at(const berth_executor *ex, uint32_t k, const char **device);
/* Backend k's weights and plans (host_bytes is the engine's, counted
 * only by berth_executor_memory); `plans` counts the warm plans that have
 * a part on it. A weight read by two backends is held, and counted, by
 * both. BERTH_ERR_INVALID past the last backend. */
berth_status berth_executor_backend_memory(const berth_executor *ex, uint32_t k, berth_memory *m);
/* What backend k made of its weights at open, and what [cache] dir gave
 * and took: a backend of ABI 1.4 may put weights into its own layout
 * once (prepare_weights) and keep that, and its compiled programs,
 * between processes. The caller sets struct_size; fields past it are
 * not written. BERTH_ERR_INVALID past the last backend or for a
 * struct_size short of cache_saves. */
typedef struct berth_prepared_info {
    uint32_t struct_size;
    uint32_t weights;        /* weights in the backend's own layout */
    uint64_t bytes;          /* their bytes in that layout */
    uint64_t released_bytes; /* uploaded bytes let go: only the prepared form is read */
    int from_cache;          /* 1: the prepared weights were taken from the cache */
    uint32_t cache_loads;    /* cache files the backend took */
    uint32_t cache_refused;  /* found stale or corrupt, and rebuilt */
    uint32_t cache_saves;    /* written */
} berth_prepared_info;
berth_status berth_executor_prepared_weights(const berth_executor *ex, uint32_t k, berth_prepared_info *info);
/* The bytes of every warm plan (berth_memory's plans_bytes) by kind:
 * intermediates, scratch, io, constants, records, other (see
 * berth_plan_memory in backend.h). k: backend k's share, UINT32_MAX: all.
 * The caller sets m->struct_size (at least BERTH_PLAN_MEMORY_V1_MIN_SIZE);
 * fields past it are not written. A backend that does not report kinds
 * (ABI before 1.2) has its plans counted as `other`; `estimated` says
 * which kinds some backend only estimated. BERTH_ERR_INVALID for a bad
 * struct_size or past the last backend. */
berth_status berth_executor_plan_memory(const berth_executor *ex, uint32_t k, berth_plan_memory *m);

/* How the warm plan of (lane, bucket) runs: one subgraph per backend
 * run, in order (a single one with split = off). Inputs are graph inputs
 * and tensors an earlier subgraph wrote; outputs are graph outputs and
 * tensors a later one reads; those passing between subgraphs cross
 * through host buffers planned with the rest. */
typedef struct berth_subgraph_info {
    uint32_t backend;                 /* see berth_executor_backend_at */
    uint32_t n_nodes;
    const char *first_node, *last_node;
    uint32_t n_in, n_out;
    const char *const *in_names, *const *out_names;
    const uint8_t *in_crosses, *out_crosses; /* per tensor: 1 from or to another subgraph */
    uint64_t bytes_in, bytes_out;     /* bytes crossing from and to other subgraphs per run */
    uint64_t last_run_ns;             /* the subgraph's time in the last run; 0 before one */
    /* split = on's cost model (0 otherwise): its nodes' estimated time,
     * and what its start and crossings add. */
    double est_node_ns, est_overhead_ns;
    /* Of bytes_out, what stays where this subgraph's plan leaves it, read
     * there by the subgraphs after it instead of copied to a host buffer
     * (the backend exports it); of bytes_in, what its plan reads from
     * another's export in its own way (it imports it). */
    uint64_t bytes_out_kept, bytes_in_imported;
} berth_subgraph_info;
typedef void (*berth_subgraph_fn)(void *ctx, const berth_subgraph_info *info);
/* Calls fn once per subgraph. BERTH_ERR_INVALID when the plan is not warm. */
berth_status berth_executor_subgraphs(const berth_executor *ex, uint32_t lane, uint32_t bucket,
                                      berth_subgraph_fn fn, void *ctx, berth_error *err);

/* How split = on chose the warm plan of (lane, bucket): what giving each
 * node to the first backend of use that runs it made (split = first's
 * partition), how many runs of nodes the cost model then moved to a
 * neighbour's backend, and both estimates. All zero with split = off or
 * first. The caller sets struct_size; fields past it are not written.
 * BERTH_ERR_INVALID when the plan is not warm or struct_size is short. */
typedef struct berth_partition_info {
    uint32_t struct_size;
    uint32_t subgraphs;       /* what the plan runs */
    uint32_t first_subgraphs; /* each node on the first backend that runs it */
    uint32_t moved_runs, moved_nodes;
    double est_ns, first_est_ns; /* the cost model's estimates of a run */
} berth_partition_info;
#define BERTH_PARTITION_INFO_V1_MIN_SIZE (offsetof(berth_partition_info, first_est_ns) + sizeof(double))
berth_status berth_executor_partition(const berth_executor *ex, uint32_t lane, uint32_t bucket,
                                      berth_partition_info *info, berth_error *err);

/* Per-node times of the last run of (lane, bucket), in graph order:
 * calls fn once per node. BERTH_ERR_UNSUPPORTED when the backend does not
 * time nodes; BERTH_ERR_INVALID when the plan is not warm. */
typedef void (*berth_profile_fn)(void *ctx, const char *node, const char *op, uint64_t ns);
berth_status berth_executor_profile(const berth_executor *ex, uint32_t lane, uint32_t bucket,
                                    berth_profile_fn fn, void *ctx, berth_error *err);

#ifdef __cplusplus
}
#endif

#endif /* BERTH_H */
