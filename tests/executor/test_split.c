/* split = on through the executor's API: the partial fixture (the cpu
 * backend running only conv2d, matmul and add) ahead of cpu.
 *  - the first vertical slice's model runs as partial | cpu | partial
 *    with the same outputs as cpu alone, bit for bit (the same kernels
 *    run each node), at two buckets;
 *  - the subgraphs, the tensors crossing and their bytes are reported;
 *  - each backend holds only the weights its subgraphs read: a weight
 *    read on both is uploaded to both, one read on one only to it;
 *  - a node no backend of use runs names every backend's reason;
 *  - a graph a backend runs only fused (an int4 dequantizeLinear it
 *    takes only inside berth.matmulQuantized) opens and runs on it,
 *    alone and split; one it runs in neither form is still refused;
 *  - split = on's cost model: partial is the cpu backend less most ops,
 *    so its runs are worth less than their crossings and all of the
 *    model goes to cpu, with its weights; berth_executor_partition says
 *    what node by node would have been. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/berth.h"
#include "check.h"
#include "slice_fixture.h"

static berth_executor *open_ini(slice_model *m, const char *name, const char *ini, berth_status want,
                                berth_error *err) {
    char path[256];
    berth_executor *ex = NULL;
    berth_status st = berth_executor_open(slice_write_file(m, name, ini, path, sizeof path), NULL, &ex, err);
    CHECK(st == want);
    if (st != want) fprintf(stderr, "%s: %s\n", name, st == BERTH_OK ? "opened" : err->msg);
    return ex;
}

static float run_rows(berth_executor *ex, int rows, float *y, uint32_t *bucket) {
    float x[16 * SLICE_IN];
    for (int i = 0; i < rows * SLICE_IN; i++) x[i] = (float)((i * 7) % 13) / 6.0f - 1.0f;
    berth_tensor in = {BERTH_DTYPE_F32, 2, {rows, SLICE_IN}, x, sizeof(float) * (size_t)rows * SLICE_IN, 0};
    berth_tensor out;
    memset(&out, 0, sizeof out);
    berth_error err;
    berth_status st = berth_executor_run(ex, 0, &in, 1, &out, 1, bucket, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) fprintf(stderr, "run: %s\n", err.msg);
    CHECK(out.bytes == sizeof(float) * (size_t)rows * SLICE_OUT);
    if (st == BERTH_OK && out.bytes == sizeof(float) * (size_t)rows * SLICE_OUT) memcpy(y, out.data, out.bytes);
    berth_tensor_release(&out);
    return x[0];
}

typedef struct seen {
    uint32_t n;
    uint32_t backend[8], nodes[8], n_in[8], n_out[8];
    uint64_t bytes_in[8], bytes_out[8];
    char first[8][32], in0[8][32];
    uint32_t in0_crosses[8];
} seen;

static void collect(void *ctx, const berth_subgraph_info *s) {
    seen *c = ctx;
    if (c->n == 8) return;
    c->backend[c->n] = s->backend;
    c->nodes[c->n] = s->n_nodes;
    c->n_in[c->n] = s->n_in;
    c->n_out[c->n] = s->n_out;
    c->bytes_in[c->n] = s->bytes_in;
    c->bytes_out[c->n] = s->bytes_out;
    snprintf(c->first[c->n], sizeof c->first[0], "%s", s->first_node);
    snprintf(c->in0[c->n], sizeof c->in0[0], "%s", s->n_in ? s->in_names[0] : "");
    c->in0_crosses[c->n] = s->n_in ? s->in_crosses[0] : 0;
    c->n++;
}

static void test_slice_model(slice_model *m) {
    berth_error err;
    berth_executor *cpu = open_ini(m, "cpu.ini",
                                   "[model]\ngraph = model.webnn\nweights = model.safetensors\n"
                                   "[backend]\nuse = cpu\n[buckets]\nrows = batch=4|batch=16\n",
                                   BERTH_OK, &err);
    berth_executor *ex = open_ini(m, "split.ini",
                                  "[model]\ngraph = model.webnn\nweights = model.safetensors\n"
                                  "[backend]\nuse = " PARTIAL_MODULE ", cpu\nsplit = first\n"
                                  "[buckets]\nrows = batch=4|batch=16\n",
                                  BERTH_OK, &err);
    if (!cpu || !ex) goto done;
    CHECK(berth_executor_backend_count(ex) == 2);
    CHECK(berth_executor_backend_count(cpu) == 1);
    const char *device = NULL;
    CHECK(!strcmp(berth_executor_backend_at(ex, 0, &device), "partial") && device && device[0]);
    CHECK(!strcmp(berth_executor_backend_at(ex, 1, NULL), "cpu"));
    CHECK(berth_executor_backend_at(ex, 2, NULL) == NULL);

    /* Every weight of this model is read by a matmul or an add only:
     * partial holds all four, cpu none. */
    berth_memory mp, mc, all;
    CHECK(berth_executor_backend_memory(ex, 0, &mp) == BERTH_OK);
    CHECK(berth_executor_backend_memory(ex, 1, &mc) == BERTH_OK);
    CHECK(berth_executor_backend_memory(ex, 2, &mc) == BERTH_ERR_INVALID);
    CHECK(berth_executor_backend_memory(ex, 1, &mc) == BERTH_OK);
    /* prepare_weights ran on partial (cpu's, copied) for what it holds,
     * and on cpu for nothing; no cache: no files */
    berth_prepared_info pi = {.struct_size = sizeof pi};
    CHECK(berth_executor_prepared_weights(ex, 1, &pi) == BERTH_OK && pi.weights == 0 && pi.bytes == 0);
    CHECK(berth_executor_prepared_weights(ex, 0, &pi) == BERTH_OK && !pi.from_cache);
    CHECK(pi.cache_loads == 0 && pi.cache_refused == 0 && pi.cache_saves == 0);
    CHECK(berth_executor_prepared_weights(ex, 2, &pi) == BERTH_ERR_INVALID);
    pi.struct_size = 8;
    CHECK(berth_executor_prepared_weights(ex, 0, &pi) == BERTH_ERR_INVALID);
    uint64_t model_bytes = sizeof(float) * (SLICE_IN * SLICE_HID + SLICE_HID + SLICE_HID * SLICE_OUT + SLICE_OUT);
    CHECK(mp.weights_bytes == model_bytes);
    CHECK(mc.weights_bytes == 0);

    for (int rows = 1; rows <= 16; rows += 5) {
        float a[16 * SLICE_OUT], b[16 * SLICE_OUT];
        uint32_t ba = 99, bb = 98;
        run_rows(ex, rows, a, &ba);
        run_rows(cpu, rows, b, &bb);
        CHECK(ba == bb);
        CHECK(memcmp(a, b, sizeof(float) * (size_t)rows * SLICE_OUT) == 0);
        /* and against the double-precision reference */
        float x[16 * SLICE_IN];
        for (int i = 0; i < rows * SLICE_IN; i++) x[i] = (float)((i * 7) % 13) / 6.0f - 1.0f;
        double ref[16 * SLICE_OUT];
        slice_reference(m, x, rows, ref);
        double worst = 0;
        for (int i = 0; i < rows * SLICE_OUT; i++) {
            double d = a[i] - ref[i];
            if (d < 0) d = -d;
            if (d > worst) worst = d;
        }
        CHECK(worst < 1e-4);
    }

    /* Bucket batch=16: h0 = matmul and h1 = add on partial, relu on cpu,
     * y0 and y on partial; h1 and h cross, 16 x 8 floats each. */
    seen s;
    memset(&s, 0, sizeof s);
    CHECK(berth_executor_subgraphs(ex, 0, 1, collect, &s, &err) == BERTH_OK);
    CHECK(s.n == 3);
    CHECK(s.backend[0] == 0 && s.backend[1] == 1 && s.backend[2] == 0);
    CHECK(s.nodes[0] == 2 && s.nodes[1] == 1 && s.nodes[2] == 2);
    CHECK(!strcmp(s.first[0], "h0") && !strcmp(s.first[1], "h") && !strcmp(s.first[2], "y0"));
    CHECK(!strcmp(s.in0[0], "x") && s.in0_crosses[0] == 0);
    CHECK(!strcmp(s.in0[1], "h1") && s.in0_crosses[1] == 1);
    CHECK(!strcmp(s.in0[2], "h") && s.in0_crosses[2] == 1);
    uint64_t crossing = sizeof(float) * 16 * SLICE_HID;
    CHECK(s.bytes_in[0] == 0 && s.bytes_out[0] == crossing);
    CHECK(s.bytes_in[1] == crossing && s.bytes_out[1] == crossing);
    CHECK(s.bytes_in[2] == crossing && s.bytes_out[2] == 0);

    /* cpu alone: one subgraph (fused: fewer nodes), nothing crosses */
    memset(&s, 0, sizeof s);
    CHECK(berth_executor_subgraphs(cpu, 0, 1, collect, &s, &err) == BERTH_OK);
    CHECK(s.n == 1 && s.backend[0] == 0 && s.bytes_in[0] == 0 && s.bytes_out[0] == 0);
    CHECK(berth_executor_subgraphs(ex, 0, 7, collect, &s, &err) == BERTH_ERR_INVALID);

    berth_executor_memory(ex, &all);
    CHECK(berth_executor_backend_memory(ex, 0, &mp) == BERTH_OK);
    CHECK(berth_executor_backend_memory(ex, 1, &mc) == BERTH_OK);
    CHECK(all.plans == 2 && mp.plans == 2 && mc.plans == 2);
    CHECK(all.plans_bytes == mp.plans_bytes + mc.plans_bytes);
    CHECK(all.weights_bytes == mp.weights_bytes + mc.weights_bytes);
    /* crossing buffers are the engine's: at least h1 and h of both buckets */
    CHECK(all.host_bytes >= 2 * sizeof(float) * (4 + 16) * SLICE_HID);
done:
    berth_executor_close(ex);
    berth_executor_close(cpu);
}

/* b1 is read by sub (cpu) and add (partial), b2 by sub (cpu) only, w1
 * and w2 by matmuls (partial) only. */
static const char shared_graph[] =
    "webnn_graph \"shared\" v2 {\n"
    "  inputs { x: f32[2, 4]; }\n"
    "  consts {\n"
    "    w1: f32[4, 8] @weights(\"layer1.weight\");\n"
    "    b1: f32[8] @weights(\"layer1.bias\");\n"
    "    w2: f32[8, 3] @weights(\"layer2.weight\");\n"
    "    b2: f32[3] @weights(\"layer2.bias\");\n"
    "  }\n"
    "  nodes {\n"
    "    a = matmul(x, w1);\n"
    "    r = relu(a);\n"
    "    s = sub(r, b1);\n"
    "    t = add(s, b1);\n"
    "    y = matmul(t, w2);\n"
    "    z = sub(y, b2);\n"
    "  }\n"
    "  outputs { z; t; }\n"
    "}\n";

static void test_shared_weight(slice_model *m) {
    char path[256];
    slice_write_file(m, "shared.webnn", shared_graph, path, sizeof path);
    berth_error err;
    berth_executor *ex = open_ini(m, "shared.ini",
                                  "[model]\ngraph = shared.webnn\nweights = model.safetensors\n"
                                  "[backend]\nuse = " PARTIAL_MODULE ", cpu\nsplit = first\n",
                                  BERTH_OK, &err);
    berth_executor *cpu = open_ini(m, "shared-cpu.ini",
                                   "[model]\ngraph = shared.webnn\nweights = model.safetensors\n"
                                   "[backend]\nuse = cpu\n",
                                   BERTH_OK, &err);
    if (!ex || !cpu) goto done;
    berth_memory mp, mc;
    CHECK(berth_executor_backend_memory(ex, 0, &mp) == BERTH_OK);
    CHECK(berth_executor_backend_memory(ex, 1, &mc) == BERTH_OK);
    CHECK(mp.weights_bytes == sizeof(float) * (SLICE_IN * SLICE_HID + SLICE_HID + SLICE_HID * SLICE_OUT));
    CHECK(mc.weights_bytes == sizeof(float) * (SLICE_HID + SLICE_OUT));

    float x[2 * SLICE_IN];
    for (int i = 0; i < 2 * SLICE_IN; i++) x[i] = (float)i / 4.0f - 1.0f;
    berth_tensor in = {BERTH_DTYPE_F32, 2, {2, SLICE_IN}, x, sizeof x, 0};
    berth_tensor a[2], b[2];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    CHECK(berth_executor_run(ex, 0, &in, 1, a, 2, NULL, &err) == BERTH_OK);
    CHECK(berth_executor_run(cpu, 0, &in, 1, b, 2, NULL, &err) == BERTH_OK);
    for (int o = 0; o < 2; o++) {
        CHECK(a[o].bytes == b[o].bytes && a[o].bytes > 0);
        if (a[o].bytes == b[o].bytes) CHECK(memcmp(a[o].data, b[o].data, a[o].bytes) == 0);
        berth_tensor_release(&a[o]);
        berth_tensor_release(&b[o]);
    }
    /* a | r s | t y | z: t is an output and crosses to y's subgraph too */
    seen s;
    memset(&s, 0, sizeof s);
    CHECK(berth_executor_subgraphs(ex, 0, 0, collect, &s, &err) == BERTH_OK);
    CHECK(s.n == 4);
    CHECK(s.backend[0] == 0 && s.backend[1] == 1 && s.backend[2] == 0 && s.backend[3] == 1);
    CHECK(s.nodes[0] == 1 && s.nodes[1] == 2 && s.nodes[2] == 2 && s.nodes[3] == 1);
done:
    berth_executor_close(ex);
    berth_executor_close(cpu);
}

/* partial alone cannot run relu, and with split = on no backend can:
 * the error names the node and partial's reason. */
static void test_no_backend(slice_model *m) {
    berth_error err;
    berth_executor *ex = open_ini(m, "alone.ini",
                                  "[model]\ngraph = model.webnn\nweights = model.safetensors\n"
                                  "[backend]\nuse = " PARTIAL_MODULE "\nsplit = on\n"
                                  "[buckets]\nrows = batch=4\n",
                                  BERTH_ERR_UNSUPPORTED, &err);
    CHECK(ex == NULL);
    CHECK_CONTAINS(err.msg, "no backend of use runs it");
    CHECK_CONTAINS(err.msg, "node 'h' (op relu");
    CHECK_CONTAINS(err.msg, "partial runs only conv2d, matmul and add, not relu");
    berth_executor_close(ex);
}

/* y = matmul(x, dequantizeLinear(q, s, z)) + b: q int4 [4, 3] of 3s, scale
 * 0.5 and zero point 1 per column in two blocks of rows, so every weight
 * is 1 and y[r, j] = sum of row r + 0.25. The partial fixture refuses the
 * dequantizeLinear node, and runs the fused berth.matmulQuantized. */
static const char quant_graph[] =
    "webnn_graph \"quant\" v2 {\n"
    "  inputs { x: f32[2, 4]; }\n"
    "  consts {\n"
    "    q: i4[4, 3] @scalar(3);\n"
    "    s: f32[2, 3] @scalar(0.5);\n"
    "    z: i4[2, 3] @scalar(1);\n"
    "    b: f32[3] @scalar(0.25);\n"
    "  }\n"
    "  nodes {\n"
    "    w = dequantizeLinear(q, s, z);\n"
    "    m = matmul(x, w);\n"
    "    y = add(m, b);\n"
    "  }\n"
    "  outputs { y; }\n"
    "}\n";

static void test_fused_only(slice_model *m) {
    char path[256];
    slice_write_file(m, "quant.webnn", quant_graph, path, sizeof path);
    slice_write_file(m, "neg.webnn", "webnn_graph \"r\" v2 {\n  inputs { x: f32[2, 4]; }\n"
                     "  consts {\n    q: i4[4, 3] @scalar(3);\n    s: f32[2, 3] @scalar(0.5);\n"
                     "    z: i4[2, 3] @scalar(1);\n  }\n  nodes {\n    w = dequantizeLinear(q, s, z);\n"
                     "    m = matmul(x, w);\n    y = neg(m);\n  }\n  outputs { y; }\n}\n", path, sizeof path);
    static const char *const inis[][2] = {
        {"quant-alone.ini", "[model]\ngraph = quant.webnn\nweights = model.safetensors\n"
                            "[backend]\nuse = " PARTIAL_MODULE "\n"},
        {"quant-split.ini", "[model]\ngraph = quant.webnn\nweights = model.safetensors\n"
                            "[backend]\nuse = " PARTIAL_MODULE "\nsplit = on\n"},
    };
    float x[8] = {1, 2, 3, 4, -1, 0.5f, 0, 2};
    for (int i = 0; i < 2; i++) {
        berth_error err;
        berth_executor *ex = open_ini(m, inis[i][0], inis[i][1], BERTH_OK, &err);
        if (!ex) continue;
        CHECK(!strcmp(berth_executor_backend_at(ex, 0, NULL), "partial"));
        berth_tensor in = {BERTH_DTYPE_F32, 2, {2, 4}, x, sizeof x, 0}, out;
        memset(&out, 0, sizeof out);
        berth_status st = berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err);
        CHECK(st == BERTH_OK);
        if (st != BERTH_OK) fprintf(stderr, "%s: run: %s\n", inis[i][0], err.msg);
        CHECK(out.bytes == sizeof(float) * 6);
        if (st == BERTH_OK && out.bytes == sizeof(float) * 6)
            for (int j = 0; j < 6; j++) {
                const float want = j < 3 ? 10.25f : 1.75f;
                CHECK(((const float *)out.data)[j] == want);
            }
        berth_tensor_release(&out);
        berth_executor_close(ex);
    }
    /* neg runs on partial in neither form: the unfused refusal is given */
    berth_error err;
    berth_executor *ex = open_ini(m, "neg.ini", "[model]\ngraph = neg.webnn\nweights = model.safetensors\n"
                                  "[backend]\nuse = " PARTIAL_MODULE "\n", BERTH_ERR_UNSUPPORTED, &err);
    if (!ex) CHECK_CONTAINS(err.msg, "node 'w' (op dequantizeLinear");
    berth_executor_close(ex);
}

static void test_cost_model(slice_model *m) {
    berth_error err;
    berth_executor *cpu = open_ini(m, "cpu.ini",
                                   "[model]\ngraph = model.webnn\nweights = model.safetensors\n"
                                   "[backend]\nuse = cpu\n[buckets]\nrows = batch=4|batch=16\n",
                                   BERTH_OK, &err);
    berth_executor *on = open_ini(m, "on.ini",
                                  "[model]\ngraph = model.webnn\nweights = model.safetensors\n"
                                  "[backend]\nuse = " PARTIAL_MODULE ", cpu\nsplit = on\n"
                                  "[buckets]\nrows = batch=4|batch=16\n",
                                  BERTH_OK, &err);
    berth_executor *first = open_ini(m, "first.ini",
                                     "[model]\ngraph = model.webnn\nweights = model.safetensors\n"
                                     "[backend]\nuse = " PARTIAL_MODULE ", cpu\nsplit = first\n"
                                     "[buckets]\nrows = batch=4|batch=16\n",
                                     BERTH_OK, &err);
    if (!cpu || !on || !first) goto done;
    float a[16 * SLICE_OUT], b[16 * SLICE_OUT];
    uint32_t ba = 1, bb = 2;
    run_rows(on, 16, a, &ba);
    run_rows(cpu, 16, b, &bb);
    CHECK(ba == bb && memcmp(a, b, sizeof a) == 0);
    run_rows(first, 16, b, &bb);
    CHECK(memcmp(a, b, sizeof a) == 0);
    berth_memory mp, mc;
    CHECK(berth_executor_backend_memory(on, 0, &mp) == BERTH_OK && mp.weights_bytes == 0);
    CHECK(berth_executor_backend_memory(on, 1, &mc) == BERTH_OK && mc.weights_bytes > 0);
    berth_partition_info pi = {.struct_size = sizeof pi};
    CHECK(berth_executor_partition(on, 0, 1, &pi, &err) == BERTH_OK);
    CHECK(pi.subgraphs == 1 && pi.first_subgraphs == 3 && pi.moved_runs == 2 && pi.moved_nodes == 4);
    CHECK(pi.est_ns > 0 && pi.est_ns < pi.first_est_ns);
    seen s;
    memset(&s, 0, sizeof s);
    CHECK(berth_executor_subgraphs(on, 0, 1, collect, &s, &err) == BERTH_OK);
    CHECK(s.n == 1 && s.backend[0] == 1);
    /* split = first: no cost model, all zeros; a short struct refused */
    CHECK(berth_executor_partition(first, 0, 1, &pi, &err) == BERTH_OK);
    CHECK(pi.subgraphs == 0 && pi.first_subgraphs == 0 && pi.est_ns == 0);
    berth_partition_info small = {.struct_size = 8};
    CHECK(berth_executor_partition(on, 0, 1, &small, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "struct_size 8");
    CHECK(berth_executor_partition(on, 0, 7, &pi, &err) == BERTH_ERR_INVALID);
done:
    berth_executor_close(on);
    berth_executor_close(first);
    berth_executor_close(cpu);
}

int main(void) {
    slice_model m;
    if (slice_model_write(&m, 11)) return 1;
    test_slice_model(&m);
    test_shared_weight(&m);
    test_no_backend(&m);
    test_fused_only(&m);
    test_cost_model(&m);
    slice_model_remove(&m);
    return check_exit();
}
