/* libFuzzer target for the .webnn parser and checker: any input must be
 * either refused with a located one-line message or yield a graph whose
 * every index is in range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

static void require(int cond) {
    if (!cond) abort();
}

static void check_attr(const berth_graph *g, const bg_attr *a, int depth) {
    require(depth <= 70);
    if (a->kind == BG_ATTR_IDENT) require(a->value >= 0 && (uint32_t)a->value < g->n_values);
    if (a->kind == BG_ATTR_ARRAY || a->kind == BG_ATTR_OBJECT)
        for (uint32_t k = 0; k < a->count; k++) check_attr(g, &a->items[k], depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    berth_error err;
    memset(&err, 0, sizeof err);
    berth_graph *g = berth_graph_parse("fuzz.webnn", (const char *)data, size, &err);
    if (!g) {
        require(!strncmp(err.msg, "fuzz.webnn:", 11));
        require(strchr(err.msg, '\n') == NULL);
        return 0;
    }
    require(g->n_outputs > 0);
    for (uint32_t k = 0; k < g->n_outputs; k++) require((uint32_t)g->outputs[k] < g->n_values);
    for (uint32_t k = 0; k < g->n_inputs; k++) require(g->values[g->inputs[k]].kind == BG_INPUT);
    for (uint32_t n = 0; n < g->n_nodes; n++) {
        const bg_node *node = &g->nodes[n];
        require(berth_graph_op_known(node->op));
        for (uint32_t k = 0; k < node->n_inputs; k++) {
            int32_t v = node->inputs[k];
            require(v >= 0 && (uint32_t)v < g->n_values);
            if (g->values[v].kind == BG_NODE_OUTPUT) require(g->values[v].node < (int32_t)n);
        }
        for (uint32_t k = 0; k < node->n_attrs; k++) check_attr(g, &node->attrs[k], 0);
    }
    for (uint32_t k = 0; k < g->n_values; k++) {
        const bg_value *v = &g->values[k];
        require(v->rank <= BERTH_MAX_RANK);
        require(berth_graph_find(g, v->name) == (int32_t)k);
        for (uint32_t d = 0; d < v->rank; d++)
            require(v->dims[d].sym < (int32_t)g->n_syms && v->dims[d].value >= 0);
    }
    berth_graph_free(g);
    return 0;
}
