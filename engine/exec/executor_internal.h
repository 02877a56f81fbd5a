/* The executor's state, shared by executor.c (open, upload, lanes) and
 * run.c (buckets, plans, run). */
#ifndef BERTH_EXECUTOR_INTERNAL_H
#define BERTH_EXECUTOR_INTERNAL_H

#include <stdatomic.h>

#include "archive.h"
#include "berth/berth.h"
#include "config.h"
#include "graph.h"
#include "host.h"
#include "loader.h"
#include "specialize.h"

/* One plan for one (lane, bucket), with the host buffers a run needs so
 * that a warm run allocates nothing. */
typedef struct plan_slot {
    berth_plan *plan;      /* NULL: cold */
    berth_spec *spec;      /* the specialized graph, kept for profiling names */
    berth_tensor *in_pad;  /* per input: bucket-sized buffer (data NULL when static) */
    berth_tensor *in_view; /* per input: what run() hands the backend */
    berth_tensor *out_full;/* per output: bucket-sized result */
    uint64_t *out_dep;     /* per output and dim: bit s set when it scales with sym s (at most 64) */
    uint64_t host_bytes;
    /* Inputs a gather reads as indices: each value must lie in
     * [-bound, bound), checked before the backend sees it. */
    uint32_t n_index_checks;
    struct index_check {
        uint32_t input;
        int64_t bound;
        const char *node;
    } *index_checks;
} plan_slot;

typedef struct lane {
    char *name;
    berth_graph *g;
    char *stage;          /* NULL: the graph is static, one implicit bucket */
    uint32_t n_buckets;
    int64_t *bucket_vals; /* n_buckets x g->n_syms */
    uint32_t *weight_ids; /* per graph value: upload id, or UINT32_MAX */
    plan_slot *slots;     /* n_buckets */
    /* Bucket 0 as open() specialized it to ask the backend about every
     * node before the upload, kept (unfused) for that bucket's first plan
     * so it is not specialized twice; NULL once taken. */
    berth_spec *first_spec;
    double *pad;          /* per input: the pad value from [inputs.NAME] */
    /* run() scratch, sized at lane creation */
    int64_t *asked;       /* n_syms */
    uint32_t *in_rank;
    int64_t *in_dims;     /* n_inputs x BERTH_MAX_RANK */
    int32_t *in_sym;      /* n_inputs x BERTH_MAX_RANK */
} lane;

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
    berth_host host;
    berth_module mod;
    berth_device *dev;
    berth_weights *w;
    berth_archive *archive;
    char device_name[256];
    uint32_t n_weights;
    weight_info *weights;
    uint32_t n_lanes;
    lane *lanes;
    /* Set while a call that touches lanes or plans runs. An executor's
     * scratch (per-lane buffers, plan slots, the backend's plans) is one
     * thread's at a time; a second caller is refused rather than allowed
     * to corrupt it. */
    atomic_int busy;
    /* The memory limit (limits.c): bytes, UINT64_MAX for none, and where
     * it came from, as messages quote it. */
    uint64_t mem_limit;
    char mem_limit_what[128];
};

/* Claim the executor for `verb`; BERTH_ERR_INVALID with a message naming
 * the verb when another thread holds it. Pair with berth_executor_leave. */
berth_status berth_executor_enter(berth_executor *ex, const char *verb, berth_error *err);
void berth_executor_leave(berth_executor *ex);

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
/* Ask the backend whether it runs node i of d: supports_node for a 1.1
 * module, supports_op(op, first input's dtype) for a 1.0 one. A refusal
 * comes back with the backend's status and a message naming the graph
 * file, the node, its op, the backend's reason, and what was asked: for
 * a 1.1 module every operand's name, dtype and shape, for a 1.0 module
 * the dtype supports_op was asked about. */
berth_status berth_node_check(berth_executor *ex, const char *graph_path, const berth_graph_desc *d,
                              uint32_t i, berth_error *err);
berth_status berth_slot_build(berth_executor *ex, lane *ln, uint32_t b, berth_error *err);
void berth_slot_free(berth_executor *ex, plan_slot *s, uint32_t n_inputs, uint32_t n_outputs);

#endif
