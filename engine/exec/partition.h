/* split = on: which backend of `use` runs each node of one specialized
 * graph, the subgraphs that makes, and the tensors that cross between
 * them; then each subgraph as a graph of its own, the desc its backend
 * plans. Pure: the caller says what each backend supports. */
#ifndef BERTH_PARTITION_H
#define BERTH_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"

/* 1 when backend `b` (an index into use) runs node i of d. */
typedef int (*berth_part_supports_fn)(void *ctx, uint32_t b, const berth_graph_desc *d, uint32_t i);

/* split = on's cost model (docs/partition.md): the estimated time of
 * node i of d on backend b, asked only where b runs it, and per backend
 * what a subgraph costs beyond its nodes: starting it, and each byte of
 * a tensor crossing into or out of it. */
typedef double (*berth_part_cost_fn)(void *ctx, uint32_t b, const berth_graph_desc *d, uint32_t i);
typedef struct berth_part_costs {
    berth_part_cost_fn node_ns;
    void *ctx;
    const double *region_ns;            /* per backend */
    const double *crossing_ns_per_byte; /* per backend */
} berth_part_costs;

typedef struct berth_subgraph {
    uint32_t backend;  /* index into use */
    uint32_t n_nodes;
    uint32_t *nodes;   /* node indices of d, in an order that runs */
    /* Its graph inputs (graph inputs it reads, tensors other subgraphs
     * wrote) and outputs (what a later subgraph reads, graph outputs),
     * as operand indices of d. A graph output no node writes (an input,
     * weight or constant passed through) is an output of the last
     * subgraph, which copies it as the ABI says a backend does. */
    uint32_t n_in, n_out;
    uint32_t *in, *out;
    /* The cost model's estimate (0 without one): its nodes' time, and
     * its start plus the bytes crossing into and out of it. */
    double node_ns, overhead_ns;
} berth_subgraph;

typedef struct berth_partition {
    uint32_t n_subgraphs; /* run in this order */
    berth_subgraph *subgraphs;
    uint32_t n_operands, n_backends;
    /* n_backends x n_operands: 1 when a subgraph of backend b reads
     * weight operand k, which b must then hold. */
    uint8_t *reads_weight;
    /* Per operand: 1 when one subgraph writes it and another reads it. */
    uint8_t *crosses;
    uint32_t n_crossing;
    uint64_t crossing_bytes; /* their bytes, each counted once */
    /* With a cost model: what giving every node to the first backend
     * that runs it made (subgraphs, estimated time), how many of its runs
     * of nodes then moved to a neighbour's backend (and their nodes), and
     * the estimate of the result. */
    uint32_t first_subgraphs, moved_runs, moved_nodes;
    double first_ns, est_ns;
} berth_partition;

/* Give every node of d to the first of n_backends that runs it, order
 * the nodes so that each backend's run together (a topological order
 * that stays on one backend while it can), and move a node that would
 * form a subgraph alone between two subgraphs of one backend onto that
 * backend when it runs the node too: one node rarely pays for two
 * crossings. With `costs` (NULL: none), then move each run of nodes to
 * the backend of a neighbouring run when that backend runs all of it and
 * the estimate says the crossings and subgraph starts saved outweigh the
 * work moved, until no move pays. A node no backend runs is
 * BERTH_ERR_UNSUPPORTED, with *failed_node set to it. */
berth_status berth_partition_build(const berth_graph_desc *d, uint32_t n_backends,
                                   berth_part_supports_fn supports, void *ctx, const berth_part_costs *costs,
                                   berth_partition *p, uint32_t *failed_node, berth_error *err);
void berth_partition_free(berth_partition *p);

/* The bytes of operand k of d (its dtype and dims); UINT64_MAX when they
 * overflow. */
uint64_t berth_operand_bytes(const berth_graph_desc *d, uint32_t k);

/* Subgraph sg of d as a graph of its own: only the operands it touches,
 * renumbered; sg->in become its INPUTs, sg->out its outputs, in that
 * order; weight ids pass through weight_id (d's id -> the id the
 * backend holds it by). Everything lives in `arena` (berth_arena). */
struct berth_arena;
berth_status berth_subgraph_desc(const berth_graph_desc *d, const berth_subgraph *sg,
                                 const uint32_t *weight_id, struct berth_arena *arena,
                                 berth_graph_desc *out, berth_error *err);

#endif
