/* Verify ([backend] verify, berth_open_options.verify): a backend that
 * gives wrong numbers with status OK (the skew fixture: the cpu backend
 * planning sub as add and exp as log) is caught on the run, with the
 * output, the errors and the first node that diverges named; a NaN where
 * the reference is finite is an error; an agreeing run passes, also from
 * a run context and a lane added later; and outputs that shape folding
 * made constant are written by the host, whatever the backend left. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/berth.h"
#include "check.h"
#include "slice_fixture.h"

static slice_model model;

/* h = x W1 - b1 (sub: skewed to add), y = relu(h) W2 + b2; e = exp(x)
 * (skewed to log: NaN for negative x) times 2; s = shape(x) (folded). */
static const char *graph_text =
    "webnn_graph \"verify\" v2 {\n"
    "  inputs { x: f32[dyn(\"batch\", 16), 4]; }\n"
    "  consts {\n"
    "    w1: f32[4, 8] @weights(\"layer1.weight\");\n"
    "    b1: f32[8] @weights(\"layer1.bias\");\n"
    "    w2: f32[8, 3] @weights(\"layer2.weight\");\n"
    "    b2: f32[3] @weights(\"layer2.bias\");\n"
    "    two: f32[] @scalar(2.0);\n"
    "  }\n"
    "  nodes {\n"
    "    h0 = matmul(x, w1);\n"
    "    h1 = sub(h0, b1);\n"
    "    h = relu(h1);\n"
    "    y0 = matmul(h, w2);\n"
    "    y = add(y0, b2);\n"
    "    e0 = exp(x);\n"
    "    e = mul(e0, two);\n"
    "  }\n"
    "  outputs { %s; }\n"
    "}\n";

static const char *write_graph(const char *name, const char *outputs) {
    static char path[4][256];
    static int k;
    char text[2048];
    snprintf(text, sizeof text, graph_text, outputs);
    return slice_write_file(&model, name, text, path[k++ % 4], sizeof path[0]);
}

static const char *config(const char *name, const char *graph, const char *backend_lines) {
    static char path[256];
    char text[1024];
    snprintf(text, sizeof text,
             "[model]\ngraph = %s\nweights = model.safetensors\nstage = rows\n\n[backend]\n%s\n\n"
             "[buckets]\nrows = batch=1 | batch=4\n",
             graph, backend_lines);
    return slice_write_file(&model, name, text, path, sizeof path);
}

static berth_status open_with(const char *cfg, const char *verify, berth_executor **ex, berth_error *err) {
    berth_open_options o = {.struct_size = sizeof o, .log_level = BERTH_LOG_ERROR, .verify = verify};
    return berth_executor_open(cfg, &o, ex, err);
}

static float x_pos[2 * SLICE_IN] = {0.5f, 1.0f, 2.0f, 0.25f, 0.1f, 0.2f, 0.3f, 0.4f};
static float x_neg[2 * SLICE_IN] = {-0.5f, 1.0f, 2.0f, 0.25f, 0.1f, -0.2f, 0.3f, 0.4f};

static berth_status run2(berth_executor *ex, const float *x, berth_tensor *out, uint32_t n_out, berth_error *err) {
    berth_tensor in = {BERTH_DTYPE_F32, 2, {2, SLICE_IN}, (void *)x, 8 * sizeof(float), 0};
    return berth_executor_run(ex, 0, &in, 1, out, n_out, NULL, err);
}

/* Wrong numbers at h1: the run fails, naming output y and node h1 (sub). */
static void wrong_numbers(void) {
    const char *cfg = config("wrong.ini", write_graph("wrong.webnn", "y"), "use = " SKEW_MODULE "\nverify = cpu");
    berth_executor *ex;
    berth_error err;
    CHECK(open_with(cfg, NULL, &ex, &err) == BERTH_OK);
    berth_tensor out = {0};
    berth_status st = run2(ex, x_pos, &out, 1, &err);
    CHECK(st == BERTH_ERR_INTERNAL);
    CHECK_CONTAINS(err.msg, "verify: output 'y' on 'skew' differs from the reference 'cpu' beyond 0.001 + 0.001 |x|");
    CHECK_CONTAINS(err.msg, "outside, first at [");
    CHECK_CONTAINS(err.msg, "the first node to diverge is 'h1' (sub), output 'h1': max abs ");
    /* the outputs still hold what the backend gave: a wrong but finite y */
    CHECK(out.rank == 2 && out.dims[0] == 2 && out.dims[1] == SLICE_OUT);
    berth_tensor_release(&out);
    berth_executor_close(ex);

    /* without verify the same module answers with status OK: the bug the
     * option exists for */
    CHECK(berth_executor_open(cfg, &(berth_open_options){.struct_size = sizeof(berth_open_options),
                                                         .log_level = BERTH_LOG_ERROR, .use = SKEW_MODULE},
                              &ex, &err) == BERTH_OK);
    /* the config's verify still applies: the option only names another */
    CHECK(run2(ex, x_pos, &out, 1, &err) == BERTH_ERR_INTERNAL);
    berth_tensor_release(&out);
    berth_executor_close(ex);
    cfg = config("plain.ini", write_graph("wrong.webnn", "y"), "use = " SKEW_MODULE);
    CHECK(open_with(cfg, NULL, &ex, &err) == BERTH_OK);
    CHECK(run2(ex, x_pos, &out, 1, &err) == BERTH_OK);
    berth_tensor_release(&out);
    berth_executor_close(ex);
}

/* NaN where cpu is finite: an error even though every other element
 * would pass, and exp is named. */
static void nan_where_finite(void) {
    const char *cfg = config("nan.ini", write_graph("nan.webnn", "e"), "use = " SKEW_MODULE);
    berth_executor *ex;
    berth_error err;
    CHECK(open_with(cfg, "cpu", &ex, &err) == BERTH_OK);
    berth_tensor out = {0};
    CHECK(run2(ex, x_neg, &out, 1, &err) == BERTH_ERR_INTERNAL);
    CHECK_CONTAINS(err.msg, "verify: output 'e' on 'skew' differs from the reference 'cpu'");
    CHECK_CONTAINS(err.msg, "2 NaN/inf; ");
    CHECK_CONTAINS(err.msg, "first at [0, 0]: NaN, reference");
    CHECK_CONTAINS(err.msg, "the first node to diverge is 'e0' (exp)");
    CHECK(isnan(((float *)out.data)[0]));
    berth_tensor_release(&out);
    berth_executor_close(ex);
}

/* cpu against cpu agrees, from the executor, from a context, in both
 * buckets, and on a lane added after open (the reference gets it too). */
static void agreeing(void) {
    const char *cfg = config("agree.ini", "model.webnn", "use = cpu\nverify = cpu\nverify_atol = 0\nverify_rtol = 0");
    berth_executor *ex;
    berth_error err;
    CHECK(open_with(cfg, NULL, &ex, &err) == BERTH_OK);
    berth_tensor out = {0};
    CHECK(run2(ex, x_pos, &out, 1, &err) == BERTH_OK);
    float x8[5 * SLICE_IN];
    for (int i = 0; i < 5 * SLICE_IN; i++) x8[i] = (float)i / 7.0f - 1.0f;
    berth_tensor in = {BERTH_DTYPE_F32, 2, {3, SLICE_IN}, x8, 12 * sizeof(float), 0};
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_OK);
    uint32_t lane = 0;
    CHECK(berth_executor_add_graph(ex, "first", write_graph("lane.webnn", "y0"), NULL, &lane, &err) == BERTH_OK);
    CHECK(lane == 1 && berth_executor_run(ex, 1, &in, 1, &out, 1, NULL, &err) == BERTH_OK);
    berth_context *ctx;
    CHECK(berth_context_open(ex, &ctx, &err) == BERTH_OK);
    CHECK(berth_context_run(ctx, 0, &in, 1, &out, 1, NULL, &err) == BERTH_OK);
    CHECK(berth_context_run(ctx, 1, &in, 1, &out, 1, NULL, &err) == BERTH_OK);
    berth_context_close(ctx);
    /* the reference's copy of the weights and its plans are counted: it
     * ran what the executor ran, on the same backend, so it holds as much */
    berth_memory all, own;
    berth_executor_memory(ex, &all);
    CHECK(berth_executor_backend_memory(ex, 0, &own) == BERTH_OK);
    CHECK(own.weights_bytes > 0 && all.weights_bytes == 2 * own.weights_bytes);
    CHECK(own.plans_bytes > 0 && all.plans_bytes == 2 * own.plans_bytes);
    berth_tensor_release(&out);
    berth_executor_close(ex);
}

/* A reference that does not open fails the open, naming it. */
static void bad_reference(void) {
    const char *cfg = config("badref.ini", "model.webnn", "use = cpu\nverify = nosuchbackend");
    berth_executor *ex = NULL;
    berth_error err;
    CHECK(open_with(cfg, NULL, &ex, &err) != BERTH_OK && ex == NULL);
    CHECK_CONTAINS(err.msg, "verify: the reference backend 'nosuchbackend' did not open: ");
}

/* shape(x) is folded to a constant: the skew module fills constant
 * outputs with 0x5a bytes, and the host must overwrite them. */
static void constant_outputs(void) {
    char text[1024];
    snprintf(text, sizeof text,
             "webnn_graph \"shape\" v2 {\n  inputs { x: f32[dyn(\"batch\", 16), 4]; }\n"
             "  consts { w1: f32[4, 8] @weights(\"layer1.weight\"); }\n"
             "  nodes {\n    s = shape(x);\n    h = matmul(x, w1);\n  }\n  outputs { s; h; }\n}\n");
    char path[256];
    slice_write_file(&model, "shape.webnn", text, path, sizeof path);
    const char *cfg = config("shape.ini", "shape.webnn", "use = " SKEW_MODULE);
    berth_executor *ex;
    berth_error err;
    CHECK(open_with(cfg, NULL, &ex, &err) == BERTH_OK);
    berth_tensor out[2];
    memset(out, 0, sizeof out);
    CHECK(run2(ex, x_pos, out, 2, &err) == BERTH_OK);
    CHECK(out[0].dtype == BERTH_DTYPE_I64 && out[0].rank == 1 && out[0].dims[0] == 2);
    const int64_t *s = out[0].data;
    /* bucket batch=4 ran; the host wrote the bucket's shape, not 0x5a5a... */
    CHECK(s[0] == 4 && s[1] == SLICE_IN);
    if (s[0] != 4) fprintf(stderr, "shape(x) gave %lld, %lld\n", (long long)s[0], (long long)s[1]);
    berth_tensor_release(&out[0]);
    berth_tensor_release(&out[1]);
    berth_executor_close(ex);
}

/* A config given as text (berth_open_options.config_text): the path is
 * only its name and the folder relative paths resolve against; the
 * reference opens from the same text; an error names the given path and
 * line, and the file is never read. */
static void config_text(void) {
    char name[160], text[1024];
    snprintf(name, sizeof name, "%s/composed.ini", model.dir); /* no such file */
    snprintf(text, sizeof text,
             "[model]\ngraph = %s\nweights = model.safetensors\nstage = rows\n\n[backend]\nuse = " SKEW_MODULE
             "\nverify = cpu\n\n[buckets]\nrows = batch=1 | batch=4\n",
             write_graph("text.webnn", "y"));
    berth_open_options o = {.struct_size = sizeof o, .log_level = BERTH_LOG_ERROR, .config_text = text};
    berth_executor *ex;
    berth_error err;
    CHECK(berth_executor_open(name, &o, &ex, &err) == BERTH_OK);
    berth_tensor out = {0};
    CHECK(run2(ex, x_pos, &out, 1, &err) == BERTH_ERR_INTERNAL); /* the reference came from the text too */
    CHECK_CONTAINS(err.msg, "the first node to diverge is 'h1' (sub)");
    berth_tensor_release(&out);
    berth_executor_close(ex);
    snprintf(text, sizeof text, "[model]\ngraph = model.webnn\nweights = model.safetensors\nbogus = 1\n");
    CHECK(berth_executor_open(name, &o, &ex, &err) != BERTH_OK);
    CHECK_CONTAINS(err.msg, "composed.ini:4");
    CHECK_CONTAINS(err.msg, "bogus");
}

int main(void) {
    if (slice_model_write(&model, 11) != 0) {
        fprintf(stderr, "cannot write the model\n");
        return 1;
    }
    wrong_numbers();
    nan_where_finite();
    agreeing();
    bad_reference();
    constant_outputs();
    config_text();
    slice_model_remove(&model);
    return check_exit();
}
