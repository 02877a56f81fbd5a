/* The fuzz seed corpus doubles as a suite: every valid_*.webnn loads into
 * a consistent graph, every invalid_*.webnn is refused with a located
 * message. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "graph.h"

static int consistent(const berth_graph *g) {
    for (uint32_t n = 0; n < g->n_nodes; n++) {
        const bg_node *node = &g->nodes[n];
        if (!berth_graph_op_known(node->op) || node->n_outputs == 0) return 0;
        for (uint32_t k = 0; k < node->n_inputs; k++) {
            int32_t v = node->inputs[k];
            if (v < 0 || (uint32_t)v >= g->n_values) return 0;
            if (g->values[v].kind == BG_NODE_OUTPUT && g->values[v].node >= (int32_t)n) return 0;
        }
        for (uint32_t k = 0; k < node->n_outputs; k++)
            if (g->values[node->outputs[k]].node != (int32_t)n) return 0;
    }
    for (uint32_t k = 0; k < g->n_outputs; k++)
        if (g->outputs[k] < 0 || (uint32_t)g->outputs[k] >= g->n_values) return 0;
    return g->n_outputs > 0;
}

int main(void) {
    DIR *d = opendir(GRAPH_CORPUS_DIR);
    CHECK(d != NULL);
    if (!d) return check_exit();
    int valid = 0, invalid = 0;
    for (struct dirent *e; (e = readdir(d));) {
        int is_valid = !strncmp(e->d_name, "valid_", 6), is_invalid = !strncmp(e->d_name, "invalid_", 8);
        if (!is_valid && !is_invalid) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", GRAPH_CORPUS_DIR, e->d_name);
        berth_error err;
        memset(&err, 0, sizeof err);
        berth_graph *g = berth_graph_load(path, &err);
        if (is_valid) {
            valid++;
            if (!g) fprintf(stderr, "%s\n", err.msg);
            CHECK(g != NULL);
            if (g) CHECK(consistent(g));
        } else {
            invalid++;
            CHECK(g == NULL);
            char located[1100];
            snprintf(located, sizeof located, "%s:", path);
            CHECK(!strncmp(err.msg, located, strlen(located)));
        }
        berth_graph_free(g);
    }
    closedir(d);
    CHECK(valid >= 4);
    CHECK(invalid >= 5);
    return check_exit();
}
