/* split = on's cost model on the host's side: what a node's work is,
 * counted from its op and shapes, and the estimates the host uses for a
 * backend that gives none (docs/partition.md). */
#ifndef BERTH_COST_H
#define BERTH_COST_H

#include "berth/backend.h"

/* The host's estimates for a backend that does not give its own: a
 * device of 8 GFLOP/s and 8 GB/s, a subgraph start of 20 us, and 4 GB/s
 * for a tensor crossing in or out. Deliberately plain: they only break
 * ties between backends that say nothing, in favour of fewer crossings. */
#define BERTH_COST_NS_PER_FLOP 0.125
#define BERTH_COST_NS_PER_BYTE 0.125
#define BERTH_COST_REGION_NS 20000.0
#define BERTH_COST_CROSSING_NS_PER_BYTE 0.25

/* Node i of d: its arithmetic (a multiply and an add count 2) and the
 * bytes of every operand it reads and writes. */
void berth_node_work(const berth_graph_desc *d, uint32_t i, double *flops, double *bytes);

#endif
