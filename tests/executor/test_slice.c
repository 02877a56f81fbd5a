/* The first vertical slice end to end: a config, a .webnn graph and a
 * .safetensors file written here; the engine loads the cpu backend module,
 * streams the weights, plans per bucket and runs; outputs are compared
 * with a forward pass this test computes itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "berth/berth.h"
#include "check.h"
#include "slice_fixture.h"

static slice_model model;
static char log_text[8192];

static void capture(void *ctx, berth_log_level level, const char *msg) {
    (void)ctx;
    (void)level;
    size_t n = strlen(log_text);
    snprintf(log_text + n, sizeof log_text - n, "%s\n", msg);
}

static const char *config(const char *name, const char *backend_section) {
    static char path[256];
    char text[1024];
    snprintf(text, sizeof text,
             "[model]\ngraph = model.webnn\nweights = model.safetensors\n\n"
             "%s\n"
             "[buckets]\nrows = batch=1 | batch=8 | batch=4 | batch=16\n\n"
             "[inputs.x]\npad = 5.5\n",
             backend_section);
    return slice_write_file(&model, name, text, path, sizeof path);
}

static berth_executor *open_config(const char *path, berth_error *err) {
    berth_open_options o = {sizeof o, capture, NULL, BERTH_LOG_DEBUG, NULL, 0, NULL, NULL, NULL};
    log_text[0] = 0;
    berth_executor *ex = NULL;
    if (berth_executor_open(path, &o, &ex, err) != BERTH_OK) return NULL;
    return ex;
}

static void fill_rows(float *x, int rows, uint32_t seed) {
    for (int i = 0; i < rows * SLICE_IN; i++) x[i] = (float)((int)((i * 7 + seed * 13) % 19) - 9) / 4.0f;
}

static void check_batch(berth_executor *ex, int rows, uint32_t want_bucket) {
    float x[16 * SLICE_IN];
    double ref[16 * SLICE_OUT];
    fill_rows(x, rows, (uint32_t)rows);
    slice_reference(&model, x, rows, ref);
    berth_tensor in = {BERTH_DTYPE_F32, 2, {rows, SLICE_IN}, x, sizeof(float) * (size_t)rows * SLICE_IN, 0};
    berth_tensor out;
    memset(&out, 0, sizeof out);
    uint32_t bucket = 99;
    berth_error err;
    berth_status st = berth_executor_run(ex, 0, &in, 1, &out, 1, &bucket, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) {
        fprintf(stderr, "run: %s\n", err.msg);
        return;
    }
    CHECK(bucket == want_bucket);
    /* trimmed back to the batch, not the bucket */
    CHECK(out.dtype == BERTH_DTYPE_F32 && out.rank == 2);
    CHECK(out.dims[0] == rows && out.dims[1] == SLICE_OUT);
    CHECK(out.bytes == sizeof(float) * (size_t)rows * SLICE_OUT);
    for (int i = 0; i < rows * SLICE_OUT; i++) CHECK_NEAR(((float *)out.data)[i], ref[i], 1e-4);
    berth_tensor_release(&out);
}

static void test_slice_runs(void) {
    berth_error err;
    berth_executor *ex = open_config(config("cpu.ini", "[backend]\nuse = cpu\n"), &err);
    CHECK(ex != NULL);
    if (!ex) {
        fprintf(stderr, "open: %s\n", err.msg);
        return;
    }
    CHECK(!strcmp(berth_executor_backend(ex), "cpu"));
    CHECK_CONTAINS(log_text, "backend 'cpu' chosen");
    CHECK(berth_executor_bucket_count(ex, 0) == 4);
    CHECK(!berth_executor_is_warm(ex, 0, 1));
    /* buckets are listed 1, 8, 4, 16: the smallest that holds wins */
    check_batch(ex, 3, 2);
    check_batch(ex, 1, 0);
    check_batch(ex, 8, 1);
    check_batch(ex, 5, 1);
    check_batch(ex, 16, 3);
    CHECK(berth_executor_is_warm(ex, 0, 2) && berth_executor_is_warm(ex, 0, 1));
    char desc[64];
    berth_executor_bucket_describe(ex, 0, 3, desc, sizeof desc);
    CHECK(!strcmp(desc, "batch=16"));

    berth_memory m;
    berth_executor_memory(ex, &m);
    CHECK(m.weights_bytes >= sizeof model.w1 + sizeof model.b1 + sizeof model.w2 + sizeof model.b2);
    CHECK(m.plans == 4);

    /* a batch above the dim's max, a wrong rank, a wrong static dim */
    float x[17 * SLICE_IN] = {0};
    berth_tensor in = {BERTH_DTYPE_F32, 2, {17, SLICE_IN}, x, sizeof x, 0};
    berth_tensor out;
    memset(&out, 0, sizeof out);
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "input 'x' dim 0 (batch): expected 1 to 16, found 17");
    in.dims[0] = 2;
    in.dims[1] = 5;
    in.bytes = sizeof(float) * 10;
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "input 'x' dim 1: expected 4, found 5");
    in.dtype = BERTH_DTYPE_I32;
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "input 'x': expected f32 of rank 2, found i32 of rank 2");
    berth_tensor_release(&out);
    berth_executor_close(ex);
}

static void test_no_bucket_holds(void) {
    berth_error err;
    char path[256], text[512];
    snprintf(text, sizeof text,
             "[model]\ngraph = model.webnn\nweights = model.safetensors\n"
             "[buckets]\nsmall = batch=2 | batch=4\n");
    berth_executor *ex = open_config(slice_write_file(&model, "small.ini", text, path, sizeof path), &err);
    CHECK(ex != NULL);
    if (!ex) return;
    float x[5 * SLICE_IN] = {0};
    berth_tensor in = {BERTH_DTYPE_F32, 2, {5, SLICE_IN}, x, sizeof x, 0};
    berth_tensor out;
    memset(&out, 0, sizeof out);
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "no bucket of stage 'small' holds batch=5");
    berth_executor_close(ex);
}

static void test_missing_backend_and_fallback(void) {
    berth_error err;
    CHECK(open_config(config("missing.ini", "[backend]\nuse = missing\n"), &err) == NULL);
    CHECK_CONTAINS(err.msg, "backend 'missing' not found: no libberth-missing.so in ");
    CHECK_CONTAINS(err.msg, BERTH_MODULE_BUILD_DIR_TEST);

    berth_executor *ex = open_config(config("fallback.ini", "[backend]\nuse = missing, cpu\n"), &err);
    CHECK(ex != NULL);
    if (ex) {
        CHECK(!strcmp(berth_executor_backend(ex), "cpu"));
        CHECK_CONTAINS(log_text, "backend 'missing' skipped: backend 'missing' not found");
        CHECK_CONTAINS(log_text, "backend 'cpu' chosen");
        berth_executor_close(ex);
    }
    /* a module that loads but has no device: open fails, cpu takes over */
    ex = open_config(config("nodevice.ini", "[backend]\nuse = " FIXTURE_NODEVICE ", cpu\n"), &err);
    CHECK(ex != NULL);
    if (ex) {
        CHECK_CONTAINS(log_text, "skipped: backend 'fixture' open(): BERTH_ERR_DEVICE: no fixture device present\n");
        berth_executor_close(ex);
    }
    CHECK(open_config(config("none.ini", "[backend]\nuse = " FIXTURE_NODEVICE ", missing\n"), &err) == NULL);
    CHECK_CONTAINS(err.msg, "no backend of 'use' could be opened: backend 'fixture' open(): BERTH_ERR_DEVICE: "
                            "no fixture device present; backend 'missing' not found");
}

static void test_unknown_backend_option(void) {
    berth_error err;
    CHECK(open_config(config("badopt.ini", "[backend]\nuse = cpu\n[backend.cpu]\nthreadz = 2\n"), &err) == NULL);
    CHECK_CONTAINS(err.msg, "badopt.ini:8: [backend.cpu] unknown key 'threadz': backend 'cpu' declares threads, isa");
}

static void test_bad_weights_refused_before_upload(void) {
    berth_error err;
    char path[256];
    /* the graph declares w1 as 4x8; the archive holds it as 4x8 but the
     * graph below reads it as 8x4 */
    slice_write_file(&model, "bad.webnn",
                     "webnn_graph \"bad\" v2 {\n"
                     "  inputs { x: f32[dyn(\"batch\", 4), 8]; }\n"
                     "  consts { w1: f32[8, 4] @weights(\"layer1.weight\"); }\n"
                     "  nodes { y = matmul(x, w1); }\n"
                     "  outputs { y; }\n}\n",
                     path, sizeof path);
    CHECK(open_config(slice_write_file(&model, "bad.ini",
                                       "[model]\ngraph = bad.webnn\nweights = model.safetensors\n"
                                       "[buckets]\nb = batch=4\n",
                                       path, sizeof path),
                      &err) == NULL);
    CHECK_CONTAINS(err.msg, "layer1.weight");
}

/* add_graph: a lane may read only weights lane 0 reads, as lane 0 reads them. */
static void test_lanes(void) {
    berth_error err;
    berth_executor *ex = open_config(config("lanes.ini", "[backend]\nuse = cpu\n"), &err);
    CHECK(ex != NULL);
    if (!ex) return;
    char path[256];
    uint32_t lane = 0;
    slice_write_file(&model, "hidden.webnn",
                     "webnn_graph \"hidden\" v2 {\n"
                     "  inputs { x: f32[dyn(\"batch\", 16), 4]; }\n"
                     "  consts { w1: f32[4, 8] @weights(\"layer1.weight\"); }\n"
                     "  nodes { h = matmul(x, w1); }\n"
                     "  outputs { h; }\n}\n",
                     path, sizeof path);
    CHECK(berth_executor_add_graph(ex, "hidden", path, NULL, &lane, &err) == BERTH_OK);
    CHECK(lane == 1 && berth_executor_lane_count(ex) == 2);
    CHECK(berth_executor_find_lane(ex, "hidden") == 1);
    float x[2 * SLICE_IN] = {1, 2, 3, 4, -1, 0, 0.5f, 2};
    berth_tensor in = {BERTH_DTYPE_F32, 2, {2, SLICE_IN}, x, sizeof x, 0};
    berth_tensor out;
    memset(&out, 0, sizeof out);
    CHECK(berth_executor_run(ex, 1, &in, 1, &out, 1, NULL, &err) == BERTH_OK);
    CHECK(out.dims[0] == 2 && out.dims[1] == SLICE_HID);
    for (int r = 0; r < 2 && out.data; r++)
        for (int j = 0; j < SLICE_HID; j++) {
            double acc = 0;
            for (int k = 0; k < SLICE_IN; k++) acc += (double)x[r * SLICE_IN + k] * model.w1[k * SLICE_HID + j];
            CHECK_NEAR(((float *)out.data)[r * SLICE_HID + j], acc, 1e-4);
        }
    berth_tensor_release(&out);
    CHECK(berth_executor_add_graph(ex, "hidden", path, NULL, &lane, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "a lane named 'hidden' exists already");

    /* same weight read with another shape */
    slice_write_file(&model, "reshaped.webnn",
                     "webnn_graph \"reshaped\" v2 {\n"
                     "  inputs { x: f32[2, 8]; }\n"
                     "  consts { w1: f32[8, 4] @weights(\"layer1.weight\"); }\n"
                     "  nodes { h = matmul(x, w1); }\n"
                     "  outputs { h; }\n}\n",
                     path, sizeof path);
    CHECK(berth_executor_add_graph(ex, "reshaped", path, NULL, &lane, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "reads weight 'layer1.weight' as f32[8, 4], but it was uploaded as f32[4, 8]");

    berth_executor_close(ex);

    /* a weight lane 0 does not read was never uploaded: refused */
    float extra[4] = {1, 2, 3, 4};
    berth_st_tensor t[5] = {
        {"layer1.weight", BA_F32, 2, {4, 8}, model.w1, sizeof model.w1},
        {"layer1.bias", BA_F32, 1, {8}, model.b1, sizeof model.b1},
        {"layer2.weight", BA_F32, 2, {8, 3}, model.w2, sizeof model.w2},
        {"layer2.bias", BA_F32, 1, {3}, model.b2, sizeof model.b2},
        {"extra", BA_F32, 1, {4}, extra, sizeof extra},
    };
    snprintf(path, sizeof path, "%s/extra.safetensors", model.dir);
    CHECK(berth_st_write(path, t, 5, NULL, &err) == 0);
    ex = open_config(slice_write_file(&model, "extra.ini",
                                      "[model]\ngraph = model.webnn\nweights = extra.safetensors\n"
                                      "[buckets]\nrows = batch=4\n",
                                      path, sizeof path),
                     &err);
    CHECK(ex != NULL);
    if (!ex) return;
    slice_write_file(&model, "extra.webnn",
                     "webnn_graph \"extra\" v2 {\n"
                     "  inputs { x: f32[4]; }\n"
                     "  consts { e: f32[4] @weights(\"extra\"); }\n"
                     "  nodes { y = add(x, e); }\n"
                     "  outputs { y; }\n}\n",
                     path, sizeof path);
    CHECK(berth_executor_add_graph(ex, "extra", path, NULL, &lane, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "reads weight 'extra', which the model's first graph does not read");
    CHECK(berth_executor_lane_count(ex) == 1);
    berth_executor_close(ex);
}

int main(void) {
    if (slice_model_write(&model, 42)) {
        fprintf(stderr, "could not write the model\n");
        return 1;
    }
    test_slice_runs();
    test_no_bucket_holds();
    test_missing_backend_and_fallback();
    test_unknown_backend_option();
    test_bad_weights_refused_before_upload();
    test_lanes();
    slice_model_remove(&model);
    return check_exit();
}
