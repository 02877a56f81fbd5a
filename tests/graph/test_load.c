/* berth_graph_load: reading a file, and the messages when it cannot. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "graph.h"

static int write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t n = strlen(text);
    int rc = fwrite(text, 1, n, f) == n ? 0 : -1;
    return fclose(f) || rc ? -1 : 0;
}

static void test_good_file(void) {
    const char *path = GRAPH_TMP_DIR "/load_good.webnn";
    CHECK(write_file(path, "webnn_graph \"g\" v1 {\n  inputs { x: f32[2]; }\n"
                           "  nodes { y = relu(x); }\n  outputs { y }\n}\n") == 0);
    berth_error err;
    memset(&err, 0, sizeof err);
    berth_graph *g = berth_graph_load(path, &err);
    CHECK(g != NULL);
    if (!g) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    CHECK(!strcmp(g->path, path));
    CHECK(!strcmp(g->name, "g") && g->n_nodes == 1 && !strcmp(g->nodes[0].op, "relu"));
    CHECK(g->n_outputs == 1 && g->outputs[0] == berth_graph_find(g, "y"));
    berth_graph_free(g);
}

static void test_bad_file(void) {
    const char *path = GRAPH_TMP_DIR "/load_bad.webnn";
    CHECK(write_file(path, "webnn_graph \"g\" v1 {\n  inputs { x: f32[2]; }\n"
                           "  nodes { y = relu(x) }\n  outputs { y }\n}\n") == 0);
    berth_error err;
    memset(&err, 0, sizeof err);
    CHECK(berth_graph_load(path, &err) == NULL);
    char want[512];
    snprintf(want, sizeof want, "%s:3:23: expected ';' after node, found '}'", path);
    CHECK_CONTAINS(err.msg, want);

    path = GRAPH_TMP_DIR "/load_empty.webnn";
    CHECK(write_file(path, "") == 0);
    CHECK(berth_graph_load(path, &err) == NULL);
    snprintf(want, sizeof want, "%s:1:1: expected 'webnn_graph'", path);
    CHECK_CONTAINS(err.msg, want);
}

static void test_unreadable(void) {
    berth_error err;
    memset(&err, 0, sizeof err);
    const char *missing = GRAPH_TMP_DIR "/no_such_graph.webnn";
    CHECK(berth_graph_load(missing, &err) == NULL);
    CHECK_CONTAINS(err.msg, missing);
    CHECK_CONTAINS(err.msg, strerror(ENOENT));

    CHECK(berth_graph_load(GRAPH_TMP_DIR, &err) == NULL);
    CHECK_CONTAINS(err.msg, GRAPH_TMP_DIR ": the graph is a directory, expected a regular file");
}

int main(void) {
    test_good_file();
    test_bad_file();
    test_unreadable();
    return check_exit();
}
