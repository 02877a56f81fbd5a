/* A backend module that is the cpu backend running every other op of
 * include/berth/ops.def (those with an even id): no graph of more than a
 * few kinds of op runs on it alone, so `conformance --split-with cpu`
 * splits most multi-node cases between it and cpu. */
#include <stdio.h>
#include <string.h>

#include "berth/backend.h"
#include "berth/ops.h"
#include "cpu_wrap.h"

static berth_backend table;
static const berth_backend *cpu;

static berth_status refuse(const char *op, berth_error *err) {
    berth_op_id id = berth_op_find(op);
    if (id != BERTH_OP_UNKNOWN && id % 2 == 0) return BERTH_OK;
    snprintf(err->msg, sizeof err->msg, "alternate runs only ops of even id, not %s", op);
    return BERTH_ERR_UNSUPPORTED;
}

static berth_status alternate_supports_op(berth_device *dev, const char *op, berth_dtype dtype,
                                          berth_error *err) {
    berth_status st = refuse(op, err);
    return st != BERTH_OK ? st : cpu->supports_op(dev, op, dtype, err);
}

static berth_status alternate_supports_node(berth_device *dev, const berth_graph_desc *graph,
                                            uint32_t node_index, berth_error *err) {
    berth_status st = refuse(graph->nodes[node_index].op, err);
    return st != BERTH_OK ? st : cpu->supports_node(dev, graph, node_index, err);
}

__attribute__((visibility("default"))) const berth_backend *
berth_backend_entry(uint32_t host_abi_version, const berth_host_services *host, berth_error *why) {
    if (!(cpu = cpu_wrap("alternate", host_abi_version, host, why, &table))) return NULL;
    table.supports_op = alternate_supports_op;
    table.supports_node = alternate_supports_node;
    return &table;
}
