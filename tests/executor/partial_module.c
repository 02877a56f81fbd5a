/* A backend module that is the cpu backend running only conv2d, matmul
 * and add (a vendor's first module, say):
 * supports_node and supports_op refuse every other op with
 * BERTH_ERR_UNSUPPORTED. It stands for a device with a partial op set,
 * for the tests of which backend of `use` a graph goes to and of graphs
 * split between it and cpu. Built with NO_COST it gives no node_cost, as
 * a vendor's module need not: the partitioner then uses the host's own
 * estimate for its nodes. */
#include <stdio.h>
#include <string.h>

#include "berth/backend.h"
#include "cpu_wrap.h"

static berth_backend table;
static const berth_backend *cpu;

/* berth.matmulQuantized counts as a matmul, one of quantized weights:
 * dequantizeLinear alone it refuses, as a device that unpacks 4-bit
 * weights only inside its matrix product would. */
static int runs(const char *op) {
    return !strcmp(op, "conv2d") || !strcmp(op, "matmul") || !strcmp(op, "add") || !strcmp(op, "berth.matmulQuantized");
}

static berth_status partial_supports_op(berth_device *dev, const char *op, berth_dtype dtype,
                                        berth_error *err) {
    if (!runs(op)) {
        snprintf(err->msg, sizeof err->msg, "partial runs only conv2d, matmul and add, not %s", op);
        return BERTH_ERR_UNSUPPORTED;
    }
    return cpu->supports_op(dev, op, dtype, err);
}

static berth_status partial_supports_node(berth_device *dev, const berth_graph_desc *graph,
                                          uint32_t node_index, berth_error *err) {
    const char *op = graph->nodes[node_index].op;
    if (!runs(op)) {
        snprintf(err->msg, sizeof err->msg, "partial runs only conv2d, matmul and add, not %s", op);
        return BERTH_ERR_UNSUPPORTED;
    }
    return cpu->supports_node(dev, graph, node_index, err);
}

__attribute__((visibility("default"))) const berth_backend *
berth_backend_entry(uint32_t host_abi_version, const berth_host_services *host, berth_error *why) {
    if (!(cpu = cpu_wrap("partial", host_abi_version, host, why, &table))) return NULL;
    table.supports_op = partial_supports_op;
    table.supports_node = partial_supports_node;
#ifdef NO_COST
    table.node_cost = NULL;
#endif
    return &table;
}
