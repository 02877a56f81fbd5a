/* The executor's state, shared by executor.c (open, upload, lanes) and
 * run.c (buckets, plans, run). */
#ifndef BERTH_EXECUTOR_INTERNAL_H
#define BERTH_EXECUTOR_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "archive.h"
#include "berth/berth.h"
#include "config.h"
#include "graph.h"
#include "host.h"
#include "loader.h"
#include "specialize.h"

/* One backend's part of a plan: with split = off the whole graph, with
 * split = on one subgraph, run in order. */
typedef struct plan_step {
    uint32_t backend;        /* index into the executor's backends */
    berth_plan *plan;
    berth_graph_desc desc;   /* what was planned: the spec's, or a subgraph cut from it */
    uint32_t n_in, n_out;
    berth_tensor *in, *out;  /* what run() hands the backend */
    /* Per input: the graph input whose view it is (refreshed each run),
     * or -1 for a buffer between subgraphs, fixed at plan time. */
    int32_t *in_from;
    const char **in_names, **out_names;
    uint8_t *in_crosses, *out_crosses; /* 1: from or to another subgraph */
    uint64_t bytes_in, bytes_out; /* crossing from or to other subgraphs, per run */
    uint64_t last_ns;        /* the last run's time */
    double est_node_ns, est_overhead_ns; /* split = on's cost model */
    /* Of bytes_out, what stays where this plan leaves it (exported); of
     * bytes_in, what this plan reads from another's export (imported). */
    uint64_t out_exported_bytes, in_imported_bytes;
} plan_step;

/* One plan for one (lane, bucket), with the host buffers a run needs so
 * that a warm run allocates nothing. */
typedef struct plan_slot {
    uint32_t n_steps;      /* 0: cold */
    plan_step *steps;
    uint32_t programs_loaded; /* bit k: backend k took compiled programs from [cache] dir */
    berth_spec *spec;      /* the specialized graph, kept for profiling names */
    void *cut;             /* berth_arena of the subgraphs' descs (split = on) */
    void *cross;           /* the tensors crossing between subgraphs, placed by liveness */
    /* split = on: how the partition was chosen (berth_partition_info) */
    uint32_t first_subgraphs, moved_runs, moved_nodes;
    double first_ns, est_ns;
    /* Per output: the output whose buffer the last step wrote when the
     * graph names one operand twice (copied after the run), else itself. */
    uint32_t *out_src;
    berth_tensor *in_pad;  /* per input: bucket-sized buffer (data NULL when static) */
    berth_tensor *in_view; /* per input: what run() hands the backend */
    berth_tensor *out_full;/* per output: bucket-sized result */
    /* Trimming a padded run (run.c): the dims are what shape inference
     * gives at the asked dyn values, worked out in trim_arena (sized when
     * the slot is built) and kept for the last asked values, so runs that
     * repeat them infer nothing and allocate nothing. */
    int64_t *trim_want;    /* per dyn dim: this run's asked value (scratch) */
    int64_t *trim_asked;   /* per dyn dim: the values trim_dims is for; all 0: none */
    uint32_t *trim_rank;   /* per output */
    int64_t *trim_dims;    /* per output: BERTH_MAX_RANK dims */
    void *trim_arena;      /* berth_arena */
    /* Per output: bit k set once a run padded along dyn dim k and the
     * warning that this output's values may differ was given. */
    uint64_t *pad_warned;
    uint64_t host_bytes;
    /* Inputs a gather (gatherElements, or the berth.gatherQuantized a
     * gather became) reads as indices: each value must lie in
     * [-bound, bound), checked before the backend sees it. */
    uint32_t n_index_checks;
    struct index_check {
        uint32_t input;
        int64_t bound;
        const char *node;
        const char *op; /* as the graph wrote it */
    } *index_checks;
} plan_slot;

typedef struct lane {
    char *name;
    berth_graph *g;
    char *stage;          /* NULL: the graph is static, one implicit bucket */
    uint32_t n_buckets;
    int64_t *bucket_vals; /* n_buckets x g->n_syms */
    uint32_t *weight_ids; /* per graph value: upload id, or UINT32_MAX */
    /* Bucket 0 as open() specialized it to ask the backend about every
     * node before the upload, kept (unfused) for that bucket's first plan
     * so it is not specialized twice; NULL once taken. */
    berth_spec *first_spec;
    double *pad;          /* per input: the pad value from [inputs.NAME] */
    /* The inputs' declared shapes, for choosing a bucket */
    uint32_t *in_rank;
    int64_t *in_dims;     /* n_inputs x BERTH_MAX_RANK */
    int32_t *in_sym;      /* n_inputs x BERTH_MAX_RANK */
} lane;

/* Backends of `use` the executor may hold. */
#define BERTH_MAX_USE 16

/* One backend the executor holds open: with split = off the one that
 * runs every graph, with split = on each backend of `use` that opened. */
typedef struct exec_backend {
    berth_host host;       /* at a fixed address: the services' ctx points at it */
    berth_module mod;
    berth_device *dev;
    berth_weights *w;
    char *item;            /* as `use` names it (owned): a path may be of any length */
    char device_name[256];
    /* split = on's cost model: what a subgraph start and a crossing byte
     * cost here (the caps' ABI 1.3 fields, or the host's defaults). */
    double region_ns, crossing_ns_per_byte;
    /* Per executor weight: the id this backend holds it by, or
     * UINT32_MAX when none of its subgraphs reads it. */
    uint32_t *weight_id;
    uint32_t n_weights;
    /* ABI 1.4: what prepare_weights made of the weights, or 1 in
     * weights_cached when they were taken from [cache] dir instead; and
     * the cache files read, refused (stale or corrupt) and written. */
    berth_prepare_info prepared;
    int weights_cached;
    uint32_t cache_loads, cache_refused, cache_saves;
} exec_backend;

/* One uploaded tensor as lane 0 declared it. */
typedef struct weight_info {
    int32_t entry; /* archive entry index */
    berth_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
} weight_info;

struct berth_executor {
    berth_config *cfg;
    berth_logger log;
    int split;             /* [backend] split: a BERTH_SPLIT_* */
    uint32_t n_be;
    exec_backend be[BERTH_MAX_USE];
    berth_archive *archive;
    uint32_t n_weights;
    weight_info *weights;
    uint32_t n_lanes;
    lane *lanes;
    /* The run contexts, the executor's own first (the berth_executor_*
     * calls use it). */
    berth_context *ctx;
    uint32_t n_contexts;
    /* Held around every backend call after open (plan, run, free_plan),
     * while a plan slot is built, and while the contexts or the plans
     * they hold are listed or counted: the backend ABI lets the host make
     * one call on a device at a time, and the memory limit counts every
     * context's plans, so building one is one thread's at a time. */
    pthread_mutex_t lock;
    /* The memory limit (limits.c): bytes, UINT64_MAX for none, and where
     * it came from, as messages quote it. */
    uint64_t mem_limit;
    char mem_limit_what[128];
    /* verify.c: the reference executor every run is held to ([backend]
     * verify), its backend's name and the tolerance; ref NULL: none. */
    berth_executor *ref;
    char ref_name[256];
    double verify_atol, verify_rtol;
};

/* A run context: the plans and run scratch of every lane, over the
 * executor's weights. One thread's at a time; contexts run in parallel
 * with one another, taking turns only inside the backend. */
struct berth_context {
    berth_executor *ex;
    /* Set while a call on this context runs: a second caller is refused
     * rather than allowed to corrupt its slots and scratch. */
    atomic_int busy;
    uint32_t n_lanes;
    plan_slot **slots;   /* per lane: one per bucket */
    int64_t **asked;     /* per lane: each dyn dim as a run's inputs give it */
    berth_context *next;
    /* With verify: the reference executor's context paired with this one
     * and, per lane, the reference's outputs (kept across runs). */
    berth_context *ref;
    berth_tensor **ref_out;
};

/* Claim a context for `verb`; BERTH_ERR_INVALID with a message naming
 * the verb when another thread holds it. Pair with berth_context_leave. */
berth_status berth_context_enter(berth_context *c, const char *verb, berth_error *err);
void berth_context_leave(berth_context *c);
/* The executor's own context, claimed as above. */
berth_status berth_executor_enter(berth_executor *ex, const char *verb, berth_error *err);
void berth_executor_leave(berth_executor *ex);
/* context.c: give context c slots and scratch for lane l (a lane added
 * after it opened), and free them all. Called with ex->lock held. */
berth_status berth_context_add_lane(berth_context *c, uint32_t l, berth_error *err);
void berth_context_free(berth_context *c);
/* Build (l, b)'s plan in c if it is cold; the caller holds c's claim. */
berth_status berth_context_build(berth_context *c, uint32_t l, uint32_t b, berth_error *err);
/* What every context holds, backend k's share (UINT32_MAX: all); called
 * with ex->lock held (berth_executor_memory takes it). */
void berth_memory_held(const berth_executor *ex, uint32_t k, berth_memory *m);

/* Fields appended to berth_open_options since its first release: a
 * caller built against an older berth.h passes a smaller struct_size and
 * only the fields it covers are read. */
#define OPTION_GIVEN(o, field) \
    ((o) && (o)->struct_size >= offsetof(berth_open_options, field) + sizeof((o)->field))

/* executor.c: berth_executor_open, with a reference opened for verify
 * when `verify` is set and the options or the config name one. */
berth_status berth_executor_open_as(const char *config_path, const berth_open_options *opts, int verify,
                                    berth_executor **out, berth_error *err);

/* verify.c */
/* Opens ex->ref: the same config and model on the backend `reference`. */
berth_status berth_verify_open(berth_executor *ex, const char *config_path, const berth_open_options *opts,
                               const char *reference, berth_error *err);
/* After context c ran lane l in bucket b: runs the reference on the same
 * inputs and compares every output; BERTH_ERR_INTERNAL naming the output,
 * the error and the first diverging node when they differ. */
berth_status berth_verify_run(berth_context *c, uint32_t l, uint32_t b, const berth_tensor *in, uint32_t n_in,
                              const berth_tensor *out, uint32_t n_out, berth_error *err);

/* lane.c */
berth_status berth_lane_init(berth_executor *ex, lane *ln, const char *name, const char *graph_path,
                             const char *stage, int first, berth_error *err);
void berth_lane_free(berth_executor *ex, lane *ln);
/* Specialize lane `ln` at bucket b (for checks before upload: weight ids
 * may be provisional). */
berth_spec *berth_lane_specialize(const lane *ln, uint32_t b, berth_error *err);

/* limits.c: the memory limit. Each check returns BERTH_ERR_NOMEM with a
 * message naming what, its size and the limit. */
void berth_limit_init(berth_executor *ex, uint64_t option_bytes);
/* Weights of `bytes`; `what` says how they were measured ("the graphs
 * read take"). */
berth_status berth_limit_check_weights(const berth_executor *ex, uint64_t bytes, const char *what,
                                       berth_error *err);
/* Before anything of (ln, b)'s plan is allocated: each padded input and
 * each output alone, then the plan's estimate on top of what is held. */
berth_status berth_limit_check_plan(const berth_executor *ex, const lane *ln, uint32_t b,
                                    const berth_spec *s, berth_error *err);
/* Once (ln, b)'s plan is warm: everything held, as the backend reports it. */
berth_status berth_limit_check_built(const berth_executor *ex, const lane *ln, uint32_t b,
                                     berth_error *err);

/* plan_slot.c */
/* Ask backend k whether it runs node i of d: supports_node for a 1.1
 * module, supports_op(op, first input's dtype) for a 1.0 one. A refusal
 * comes back with the backend's status and a message naming the graph
 * file, the node, its op, the backend's reason, and what was asked: for
 * a 1.1 module every operand's name, dtype and shape, for a 1.0 module
 * the dtype supports_op was asked about. */
berth_status berth_node_check(berth_executor *ex, uint32_t k, const char *graph_path,
                              const berth_graph_desc *d, uint32_t i, berth_error *err);
/* split = on: whether backend k runs node i of d; with `held`, also that
 * it holds every weight the node reads. */
int berth_node_runs_on(berth_executor *ex, uint32_t k, const berth_graph_desc *d, uint32_t i,
                       int held);
/* split = on, at open: mark in need (n_be x n_weights) the weights each
 * backend's subgraphs read in lane ln's first bucket, fused and not. */
berth_status berth_split_weights(berth_executor *ex, lane *ln, uint8_t *need, berth_error *err);
/* Whether lane ln's first bucket, fused, runs on the one backend (split
 * = off): BERTH_OK, or why not. ln->first_spec is left as it was. */
berth_status berth_check_fused(berth_executor *ex, lane *ln, berth_error *err);
/* Lane ln's first bucket specialized, fused and cut as its plan will
 * be, each step handed to fn with its backend; nothing is planned and
 * ln->first_spec is left as it was. */
typedef berth_status (*berth_step_fn)(void *ctx, uint32_t backend, const berth_graph_desc *d, berth_error *err);
berth_status berth_lane_first_steps(berth_executor *ex, lane *ln, berth_step_fn fn, void *ctx, berth_error *err);
/* Prefix err's message with which subgraph of a split plan it is about
 * (its number, node count, first and last node); nothing for a plan of
 * one step. */
void berth_step_error(const plan_slot *s, uint32_t i, berth_error *err);
/* t's dtype, rank and dims from o, and its size. */
void berth_tensor_describe(berth_tensor *t, const berth_operand *o, size_t bytes);
/* split: a step per subgraph of p, cut from s's spec (before the plans
 * are built), then the buffers of the tensors crossing between them
 * (after): each kept where its writer's plan leaves it when the writer
 * exports it and its readers can read it there, else in one host block
 * placed by liveness. */
struct berth_partition;
berth_status berth_split_cut(berth_executor *ex, plan_slot *s, const struct berth_partition *p, berth_error *err);
berth_status berth_split_buffers(berth_executor *ex, plan_slot *s, const struct berth_partition *p,
                                 berth_error *err);
/* Build slot s, lane ln's bucket b in some context; ex->lock held. */
berth_status berth_slot_build(berth_executor *ex, lane *ln, plan_slot *s, uint32_t b, berth_error *err);
void berth_slot_free(berth_executor *ex, plan_slot *s, uint32_t n_inputs, uint32_t n_outputs);

#endif
