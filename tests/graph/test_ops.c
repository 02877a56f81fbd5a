/* The parser knows exactly the WebNN ops of berth/ops.def: each is
 * accepted, berth's fused ops are refused with a message saying the
 * engine makes them, and other names are unknown. */
#include <stdio.h>
#include <string.h>

#include "berth/ops.h"
#include "check.h"
#include "graph.h"

static void refused(const char *op, const char *want) {
    char text[512];
    snprintf(text, sizeof text,
             "webnn_graph \"o\" v2 {\n"
             "  inputs { a: f32[2, 3]; b: f32[3, 4]; c: f32[4]; }\n"
             "  nodes { y = %s(a, b, bias=c); }\n"
             "  outputs { y; }\n"
             "}\n",
             op);
    berth_error err;
    memset(&err, 0, sizeof err);
    berth_graph *g = berth_graph_parse("o.webnn", text, strlen(text), &err);
    CHECK(g == NULL);
    if (strcmp(err.msg, want)) fprintf(stderr, "  got:  %s\n  want: %s\n", err.msg, want);
    CHECK(!strcmp(err.msg, want));
    berth_graph_free(g);
}

/* The contract says what a backend cannot guess: every reduction what
 * an empty set gives, every pool whether padding counts. */
static void contract_states_edges(const berth_op_desc *t) {
    uint32_t n;
    const berth_op_edge_desc *e = berth_op_edges(&n);
    for (int i = 0; i < BERTH_OP_COUNT; i++) {
        size_t len = strlen(t[i].name);
        int reduce = !strncmp(t[i].name, "reduce", 6), pool = len > 6 && !strcmp(t[i].name + len - 6, "Pool2d");
        if (!reduce && !pool) continue;
        const char *text = NULL;
        for (uint32_t k = 0; k < n; k++)
            if (e[k].op == (berth_op_id)i) text = e[k].text;
        CHECK(text != NULL);
        if (!text) {
            fprintf(stderr, "ops.def states no edge values for %s\n", t[i].name);
            continue;
        }
        CHECK(!reduce || strstr(text, "mpty")); /* "An empty set gives ..." */
        CHECK(!pool || strstr(text, "adding"));
    }
}

int main(void) {
    const berth_op_desc *t = berth_op_table();
    contract_states_edges(t);
    int webnn = 0, fused = 0;
    for (int i = 0; i < BERTH_OP_COUNT; i++) {
        CHECK(berth_op_find(t[i].name) == (berth_op_id)i);
        if (t[i].kind == BERTH_OP_KIND_WEBNN) {
            webnn++;
            CHECK(berth_graph_op_known(t[i].name));
        } else {
            fused++;
            CHECK(t[i].kind == BERTH_OP_KIND_FUSED);
            CHECK(!berth_graph_op_known(t[i].name));
        }
    }
    CHECK(webnn == 85 && fused == 6);
    CHECK(!berth_graph_op_known("matmull") && !berth_graph_op_known("") && !berth_graph_op_known(NULL));
    refused("berth.matmulEpilogue",
            "o.webnn:3:15: op 'berth.matmulEpilogue' is made by the engine's fusion passes and cannot be written in a graph file");
    refused("berth.attention",
            "o.webnn:3:15: op 'berth.attention' is made by the engine's fusion passes and cannot be written in a graph file");
    refused("berth.matmulQuantized",
            "o.webnn:3:15: op 'berth.matmulQuantized' is made by the engine's fusion passes and cannot be written in a graph file");
    refused("matmulEpilogue", "o.webnn:3:15: unknown op 'matmulEpilogue'");
    return check_exit();
}
