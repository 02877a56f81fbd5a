/* Indices a gather reads, on every backend the same:
 *  - from a graph input, an index outside [-n, n) is refused before any
 *    backend runs, with one message naming the input, the element, its
 *    value, the valid range, the op as the graph wrote it and the node:
 *    for gather, gatherElements and a gather of a dequantized table
 *    (which the engine fuses into berth.gatherQuantized: the check reads
 *    the indices whatever the node became);
 *  - computed indices (here an input plus a constant) are clamped into
 *    range after a negative one counts from the end once, and every
 *    backend gives the values the reference below does.
 * Run on cpu, on vulkan (given as VULKAN_MODULE where it is built; skipped
 * with a note where no device opens) and split between the partial
 * fixture (add) and cpu (the rest). */
#include <stdio.h>
#include <string.h>

#include "archive.h"
#include "berth/berth.h"
#include "check.h"
#include "slice_fixture.h"

#define V 5  /* rows of the float table */
#define QV 6 /* rows of the quantized one */
#define QD 4

static const char float_graph[] =
    "webnn_graph \"gathers\" v2 {\n"
    "  inputs { ids: i32[4]; pick: i32[3, 2]; }\n"
    "  consts {\n"
    "    table: f32[5, 2] @weights(\"table\");\n"
    "    bias: f32[2] @scalar(0.5);\n"
    "    three: i32[1] @scalar(3);\n"
    "  }\n"
    "  nodes {\n"
    "    g = gather(table, ids, axis=0);\n"
    "    y = add(g, bias);\n"
    "    e = gatherElements(table, pick, axis=0);\n"
    "    shifted = add(ids, three);\n"
    "    c = gather(table, shifted, axis=0);\n"
    "    moved = add(pick, three);\n"
    "    ce = gatherElements(table, moved, axis=0);\n"
    "  }\n"
    "  outputs { y; e; c; ce; }\n"
    "}\n";

/* dequantizeLinear -> gather on axis 0: fused into berth.gatherQuantized
 * (one node left) on every backend here. */
static const char quant_graph[] =
    "webnn_graph \"qgather\" v2 {\n"
    "  inputs { ids: i64[3]; }\n"
    "  consts {\n"
    "    q: i8[6, 4] @weights(\"q\");\n"
    "    s: f32[6, 2] @scalar(0.5);\n"
    "    z: i8[6, 2] @scalar(1);\n"
    "  }\n"
    "  nodes {\n"
    "    w = dequantizeLinear(q, s, z);\n"
    "    r = gather(w, ids, axis=0);\n"
    "  }\n"
    "  outputs { r; }\n"
    "}\n";

/* The same gather of computed indices: ids + 4. */
static const char quant_computed_graph[] =
    "webnn_graph \"qgather_computed\" v2 {\n"
    "  inputs { ids: i32[3]; }\n"
    "  consts {\n"
    "    q: i8[6, 4] @weights(\"q\");\n"
    "    s: f32[6, 2] @scalar(0.5);\n"
    "    z: i8[6, 2] @scalar(1);\n"
    "    four: i32[1] @scalar(4);\n"
    "  }\n"
    "  nodes {\n"
    "    w = dequantizeLinear(q, s, z);\n"
    "    moved = add(ids, four);\n"
    "    r = gather(w, moved, axis=0);\n"
    "  }\n"
    "  outputs { r; }\n"
    "}\n";

static float table[V][2];
static int8_t q[QV][QD];

/* The rule for a computed index: negative counts from the end once,
 * then clamp into [0, n). */
static int64_t clamped(int64_t i, int64_t n) {
    if (i < 0) i += n;
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

static float dq(int64_t r, int d) { return (float)(q[r][d] - 1) * 0.5f; }

static berth_executor *open_ini(slice_model *m, const char *name, const char *graph, const char *use,
                                int split) {
    char ini[512], path[256];
    snprintf(ini, sizeof ini, "[model]\ngraph = %s\nweights = w.safetensors\n[backend]\nuse = %s\n%s", graph, use,
             split ? "split = first\n" : "");
    berth_executor *ex = NULL;
    berth_error err;
    if (berth_executor_open(slice_write_file(m, name, ini, path, sizeof path), NULL, &ex, &err) != BERTH_OK) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return NULL;
    }
    return ex;
}

static void count_nodes(void *ctx, const berth_subgraph_info *s) { *(uint32_t *)ctx += s->n_nodes; }

static void run_float(berth_executor *ex, const char *what) {
    int32_t ids[4] = {0, 4, -1, 2}, pick[3][2] = {{1, 0}, {-5, 4}, {2, 3}};
    berth_tensor in[2] = {{BERTH_DTYPE_I32, 1, {4}, ids, sizeof ids, 0},
                          {BERTH_DTYPE_I32, 2, {3, 2}, pick, sizeof pick, 0}};
    berth_tensor out[4];
    memset(out, 0, sizeof out);
    berth_error err;
    berth_status st = berth_executor_run(ex, 0, in, 2, out, 4, NULL, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) fprintf(stderr, "%s: %s\n", what, err.msg);
    int ok = st == BERTH_OK && out[0].bytes == sizeof(float) * 8 && out[1].bytes == sizeof(float) * 6 &&
             out[2].bytes == sizeof(float) * 8 && out[3].bytes == sizeof(float) * 6;
    CHECK(ok);
    for (int j = 0; ok && j < 4; j++)
        for (int k = 0; k < 2; k++) {
            const float *y = out[0].data, *c = out[2].data;
            CHECK(y[j * 2 + k] == table[clamped(ids[j], V)][k] + 0.5f);
            CHECK(c[j * 2 + k] == table[clamped(ids[j] + 3, V)][k]); /* 3, 7, 2, 5: 3, 4, 2, 4 */
        }
    for (int r = 0; ok && r < 3; r++)
        for (int k = 0; k < 2; k++) {
            const float *e = out[1].data, *ce = out[3].data;
            CHECK(e[r * 2 + k] == table[clamped(pick[r][k], V)][k]);
            CHECK(ce[r * 2 + k] == table[clamped(pick[r][k] + 3, V)][k]); /* -2 counts from the end */
        }
    /* from the inputs: refused, whatever the backend */
    ids[1] = 5;
    CHECK(berth_executor_run(ex, 0, in, 2, out, 4, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "input 'ids' element 1 is 5, outside [-5, 5) for the gather at node 'g'");
    ids[1] = -6;
    CHECK(berth_executor_run(ex, 0, in, 2, out, 4, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "input 'ids' element 1 is -6, outside [-5, 5) for the gather at node 'g'");
    ids[1] = -5;
    pick[2][1] = 7;
    CHECK(berth_executor_run(ex, 0, in, 2, out, 4, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "input 'pick' element 5 is 7, outside [-5, 5) for the gatherElements at node 'e'");
    for (int i = 0; i < 4; i++) berth_tensor_release(&out[i]);
}

static void run_quant(berth_executor *ex, const char *what) {
    uint32_t nodes = 0;
    int64_t ids[3] = {5, -6, 2};
    berth_tensor in = {BERTH_DTYPE_I64, 1, {3}, ids, sizeof ids, 0}, out;
    memset(&out, 0, sizeof out);
    berth_error err;
    berth_status st = berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) fprintf(stderr, "%s: %s\n", what, err.msg);
    /* fused: dequantizeLinear and gather are one berth.gatherQuantized */
    CHECK(berth_executor_subgraphs(ex, 0, 0, count_nodes, &nodes, &err) == BERTH_OK && nodes == 1);
    CHECK(st == BERTH_OK && out.bytes == sizeof(float) * 3 * QD);
    for (int i = 0; st == BERTH_OK && out.bytes == sizeof(float) * 3 * QD && i < 3; i++)
        for (int d = 0; d < QD; d++) CHECK(((const float *)out.data)[i * QD + d] == dq(clamped(ids[i], QV), d));
    ids[2] = 6;
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "input 'ids' element 2 is 6, outside [-6, 6) for the gather at node 'r'");
    ids[2] = -7;
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "input 'ids' element 2 is -7, outside [-6, 6) for the gather at node 'r'");
    berth_tensor_release(&out);
}

static void run_quant_computed(berth_executor *ex, const char *what) {
    uint32_t nodes = 0;
    int32_t ids[3] = {3, -1, -9}; /* + 4: 7, 3, -5, clamped to 5, 3, 1 */
    berth_tensor in = {BERTH_DTYPE_I32, 1, {3}, ids, sizeof ids, 0}, out;
    memset(&out, 0, sizeof out);
    berth_error err;
    berth_status st = berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) fprintf(stderr, "%s: %s\n", what, err.msg);
    CHECK(berth_executor_subgraphs(ex, 0, 0, count_nodes, &nodes, &err) == BERTH_OK && nodes == 2);
    CHECK(st == BERTH_OK && out.bytes == sizeof(float) * 3 * QD);
    for (int i = 0; st == BERTH_OK && out.bytes == sizeof(float) * 3 * QD && i < 3; i++)
        for (int d = 0; d < QD; d++)
            CHECK(((const float *)out.data)[i * QD + d] == dq(clamped(ids[i] + 4, QV), d));
    berth_tensor_release(&out);
}

int main(void) {
    slice_model m; /* only for its temp dir and file helpers */
    if (slice_model_write(&m, 1)) return 1;
    for (int i = 0; i < V; i++) {
        table[i][0] = (float)i;
        table[i][1] = (float)(100 + i);
    }
    for (int r = 0; r < QV; r++)
        for (int d = 0; d < QD; d++) q[r][d] = (int8_t)(r * 7 + d * 3 - 20);
    berth_st_tensor t[2] = {{"table", BA_F32, 2, {V, 2}, table, sizeof table},
                            {"q", BA_I8, 2, {QV, QD}, q, sizeof q}};
    char path[256];
    berth_error err;
    snprintf(path, sizeof path, "%s/w.safetensors", m.dir);
    CHECK(berth_st_write(path, t, 2, NULL, &err) == 0);
    slice_write_file(&m, "float.webnn", float_graph, path, sizeof path);
    slice_write_file(&m, "quant.webnn", quant_graph, path, sizeof path);
    slice_write_file(&m, "quantc.webnn", quant_computed_graph, path, sizeof path);

    static const struct {
        const char *name, *use;
        int split;
    } backends[] = {
        {"cpu", "cpu", 0},
#ifdef VULKAN_MODULE
        {"vulkan", VULKAN_MODULE, 0},
#endif
        {"split", PARTIAL_MODULE ", cpu", 1},
    };
    for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++) {
        static const char *const graphs[3] = {"float.webnn", "quant.webnn", "quantc.webnn"};
        for (int gi = 0; gi < 3; gi++) {
            char name[64], what[64];
            snprintf(name, sizeof name, "%s-%d.ini", backends[b].name, gi);
            snprintf(what, sizeof what, "%s on %s", graphs[gi], backends[b].name);
            berth_executor *ex = open_ini(&m, name, graphs[gi], backends[b].use, backends[b].split);
            if (!ex && !strcmp(backends[b].name, "vulkan")) {
                fprintf(stderr, "vulkan did not open: its cases skipped\n");
                break;
            }
            CHECK(ex != NULL);
            if (!ex) continue;
            fprintf(stderr, "%s\n", what);
            if (gi == 0) run_float(ex, what);
            else if (gi == 1) run_quant(ex, what);
            else run_quant_computed(ex, what);
            berth_executor_close(ex);
        }
    }
    slice_model_remove(&m);
    return check_exit();
}
