/* A backend module that is the cpu backend lacking one op, div (and the
 * fused berth.elementwise, which would take a div into its chain): a
 * device whose hardswish, written x * clamp(x + 3, 0, 6) / 6, has every
 * op but the last. In a network of such blocks, giving each node to the first
 * backend that runs it crosses to cpu and back once per block; the tests
 * of split = on's cost model run it ahead of cpu to see those crossings
 * merged away (tests/cli/check_split_cost.sh). It inherits the cpu
 * backend's node_cost: the same device, less one op. */
#include <stdio.h>
#include <string.h>

#include "berth/backend.h"
#include "cpu_wrap.h"

static berth_backend table;
static const berth_backend *cpu;

static int lacks(const char *op) { return !strcmp(op, "div") || !strcmp(op, "berth.elementwise"); }

static berth_status lacking_supports_op(berth_device *dev, const char *op, berth_dtype dtype, berth_error *err) {
    if (lacks(op)) {
        snprintf(err->msg, sizeof err->msg, "lacking runs every op of cpu but div and berth.elementwise");
        return BERTH_ERR_UNSUPPORTED;
    }
    return cpu->supports_op(dev, op, dtype, err);
}

static berth_status lacking_supports_node(berth_device *dev, const berth_graph_desc *graph, uint32_t node_index,
                                          berth_error *err) {
    if (lacks(graph->nodes[node_index].op)) {
        snprintf(err->msg, sizeof err->msg, "lacking runs every op of cpu but div and berth.elementwise");
        return BERTH_ERR_UNSUPPORTED;
    }
    return cpu->supports_node(dev, graph, node_index, err);
}

__attribute__((visibility("default"))) const berth_backend *
berth_backend_entry(uint32_t host_abi_version, const berth_host_services *host, berth_error *why) {
    if (!(cpu = cpu_wrap("lacking", host_abi_version, host, why, &table))) return NULL;
    table.supports_op = lacking_supports_op;
    table.supports_node = lacking_supports_node;
    return &table;
}
