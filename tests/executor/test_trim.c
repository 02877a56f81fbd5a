/* Trimming a padded run: the dims returned are what the graph's shape
 * rules give at the asked sizes (a strided window's frame count, not the
 * bucket's scaled), the values are the leading box of the bucket's
 * output, and where padding can reach kept values a warning says so,
 * once per plan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "berth/berth.h"
#include "check.h"
#include "slice_fixture.h"

#define KERNEL 5
#define STRIDE 3
#define MAX_LEN 128

static slice_model dir; /* a temp dir and its file helpers */
static float filter[2 * KERNEL];

/* The warnings an executor logged, kept whole. */
typedef struct warnings {
    int n;
    char last[1024];
} warnings;

static void on_log(void *ctx, berth_log_level level, const char *msg) {
    warnings *w = ctx;
    if (level != BERTH_LOG_WARN) return;
    w->n++;
    snprintf(w->last, sizeof w->last, "%s", msg);
}

/* Opens GRAPH with the one stage "s = BUCKETS", warnings into w. */
static berth_executor *open_with(const char *graph, const char *buckets, warnings *w) {
    char ini[512], path[256];
    snprintf(ini, sizeof ini,
             "[model]\ngraph = %s\nweights = trim.safetensors\n[backend]\nuse = cpu\n[buckets]\ns = %s\n",
             graph, buckets);
    slice_write_file(&dir, "trim.ini", ini, path, sizeof path);
    berth_open_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.log = on_log;
    o.log_ctx = w;
    o.log_level = BERTH_LOG_WARN;
    berth_executor *ex = NULL;
    berth_error err;
    if (berth_executor_open(path, &o, &ex, &err) != BERTH_OK) {
        fprintf(stderr, "open %s with %s: %s\n", graph, buckets, err.msg);
        CHECK(0);
        return NULL;
    }
    return ex;
}

/* Runs lane 0 on x, f32 of `rank` dims; out is the caller's. */
static berth_status run_x(berth_executor *ex, const float *x, uint32_t rank, const int64_t *dims,
                          berth_tensor *out, uint32_t n_out, berth_error *err) {
    berth_tensor in = {BERTH_DTYPE_F32, rank, {0}, (void *)x, 0, 0};
    size_t n = 1;
    for (uint32_t d = 0; d < rank; d++) {
        in.dims[d] = dims[d];
        n *= (size_t)dims[d];
    }
    in.bytes = n * sizeof(float);
    return berth_executor_run(ex, 0, &in, 1, out, n_out, NULL, err);
}

/* (a) conv1d, kernel 5 stride 3, no padding, over a dyn length: frames
 * are floor((n - 5) / 3) + 1 in any bucket, the values those of a run
 * in a bucket of exactly n, and no warning (no window of a kept frame
 * reaches the padding). */
static const char *conv_graph =
    "webnn_graph \"conv1d\" v2 {\n"
    "  inputs { x: f32[1, 1, 1, dyn(\"len\", 128)]; }\n"
    "  consts { w: f32[2, 1, 1, 5] @weights(\"w\"); }\n"
    "  nodes { y = conv2d(x, w, strides=[1, 3]); }\n"
    "  outputs { y; }\n"
    "}\n";

static void conv_case(float *x) {
    char path[256];
    slice_write_file(&dir, "conv.webnn", conv_graph, path, sizeof path);
    warnings w = {0}, wx = {0};
    berth_executor *padded = open_with("conv.webnn", "len=64 | len=128", &w);
    berth_executor *exact = open_with("conv.webnn", "len=49 | len=50", &wx);
    if (!padded || !exact) goto done;
    /* 50 in 64 (20 frames in the bucket) and 49 in 64: proportional
     * trimming gave 16 and 16 (49 must give 15); 50 in 128 (42 frames)
     * gave 17. */
    const int64_t lens[] = {50, 49, 50};
    const int64_t buckets[] = {64, 64, 128};
    for (int c = 0; c < 3; c++) {
        int64_t n = lens[c], frames = (n - KERNEL) / STRIDE + 1;
        int64_t dims[4] = {1, 1, 1, n};
        berth_tensor got, want;
        memset(&got, 0, sizeof got);
        memset(&want, 0, sizeof want);
        berth_error err;
        berth_executor *ex = padded;
        if (buckets[c] == 128) { /* only 128 holds a run over 64 */
            berth_executor_close(padded);
            padded = ex = open_with("conv.webnn", "len=128", &w);
            if (!ex) break;
        }
        berth_status st = run_x(ex, x, 4, dims, &got, 1, &err);
        CHECK(st == BERTH_OK);
        if (st != BERTH_OK) fprintf(stderr, "run %lld in %lld: %s\n", (long long)n, (long long)buckets[c], err.msg);
        st = run_x(exact, x, 4, dims, &want, 1, &err);
        CHECK(st == BERTH_OK);
        if (got.rank != 4 || got.dims[3] != frames) {
            fprintf(stderr, "length %lld in bucket %lld: %lld frames, want %lld\n", (long long)n,
                    (long long)buckets[c], (long long)(got.rank == 4 ? got.dims[3] : -1), (long long)frames);
            CHECK(0);
        } else {
            CHECK(got.dims[0] == 1 && got.dims[1] == 2 && got.dims[2] == 1);
            CHECK(want.rank == 4 && want.dims[3] == frames && want.bytes == got.bytes);
            const float *g = got.data, *e = want.data;
            double worst = 0, worst_ref = 0;
            for (int64_t o = 0; o < 2; o++)
                for (int64_t f = 0; f < frames; f++) {
                    double ref = 0;
                    for (int k = 0; k < KERNEL; k++) ref += (double)filter[o * KERNEL + k] * x[f * STRIDE + k];
                    double v = g[o * frames + f];
                    worst = fmax(worst, fabs(v - e[o * frames + f]));
                    worst_ref = fmax(worst_ref, fabs(v - ref));
                }
            CHECK(worst <= 1e-6);
            CHECK(worst_ref <= 1e-5);
        }
        berth_tensor_release(&got);
        berth_tensor_release(&want);
    }
    CHECK(w.n == 0); /* the conv's kept windows never reach the padding */
    if (w.n) fprintf(stderr, "unexpected warning: %s\n", w.last);

    /* Too short for one window: an error naming the input and dim, not
     * a shape; the bucket of 64 ran it and had 20 frames. */
    {
        berth_executor_close(padded);
        padded = open_with("conv.webnn", "len=64", &w);
        /* Its frames follow len, though 63 samples give as many as 64:
         * the output's description names the dyn dim. */
        berth_io_info info;
        CHECK(padded && berth_executor_output_info(padded, 0, 0, &info) == BERTH_OK);
        CHECK(padded && info.rank == 4 && info.dims[3] == 20 && info.dyn[3] && strcmp(info.dyn[3], "len") == 0);
        CHECK(padded && !info.dyn[1]);
        berth_tensor out;
        memset(&out, 0, sizeof out);
        berth_error err;
        int64_t dims[4] = {1, 1, 1, 3};
        CHECK(padded && run_x(padded, x, 4, dims, &out, 1, &err) == BERTH_ERR_INVALID);
        CHECK_CONTAINS(err.msg, "input 'x' dim 3 (len): 3 padded to the bucket's 64");
        CHECK_CONTAINS(err.msg, "node 'y'");
        /* and the next run, of a length that fits, is right again */
        dims[3] = 20;
        CHECK(padded && run_x(padded, x, 4, dims, &out, 1, &err) == BERTH_OK);
        CHECK(out.rank == 4 && out.dims[3] == (20 - KERNEL) / STRIDE + 1);
        berth_tensor_release(&out);
    }
done:
    if (padded) berth_executor_close(padded);
    if (exact) berth_executor_close(exact);
}

/* (b) a mean over the padded axis: the dims are exact, and the values
 * may differ (the pad value, 0, is averaged in), which one warning says,
 * once over two runs of the plan. */
static const char *mean_graph =
    "webnn_graph \"mean\" v2 {\n"
    "  inputs { x: f32[1, dyn(\"len\", 64)]; }\n"
    "  nodes {\n"
    "    r = relu(x);\n"
    "    m = reduceMean(r, axes=[1], keepDimensions=true);\n"
    "  }\n"
    "  outputs { m; }\n"
    "}\n";

static void mean_case(const float *x) {
    char path[256];
    slice_write_file(&dir, "mean.webnn", mean_graph, path, sizeof path);
    warnings w = {0};
    berth_executor *ex = open_with("mean.webnn", "len=64", &w);
    if (!ex) return;
    berth_tensor out;
    memset(&out, 0, sizeof out);
    berth_error err;
    int64_t dims[2] = {1, 64};
    CHECK(run_x(ex, x, 2, dims, &out, 1, &err) == BERTH_OK); /* unpadded: nothing to say */
    CHECK(w.n == 0);
    dims[1] = 40;
    for (int i = 0; i < 2; i++) {
        CHECK(run_x(ex, x, 2, dims, &out, 1, &err) == BERTH_OK);
        CHECK(out.rank == 2 && out.dims[0] == 1 && out.dims[1] == 1);
    }
    CHECK(w.n == 1);
    CHECK_CONTAINS(w.last, "output 'm' may differ from an unpadded run");
    CHECK_CONTAINS(w.last, "input 'x' dim 1 (len) was padded from 40 to the bucket's 64");
    CHECK_CONTAINS(w.last, "node 'm' (reduceMean, ");
    CHECK_CONTAINS(w.last, "mean.webnn:5) reduces over the padded axis");
    /* It does differ: the mean of 40 values, taken over 64. */
    double sum = 0;
    for (int i = 0; i < 40; i++) sum += x[i] > 0 ? x[i] : 0;
    CHECK(fabs(((const float *)out.data)[0] - sum / 64) < 1e-5);
    /* Another length pads again, but the plan has warned. */
    dims[1] = 30;
    CHECK(run_x(ex, x, 2, dims, &out, 1, &err) == BERTH_OK);
    CHECK(w.n == 1);
    berth_tensor_release(&out);
    berth_executor_close(ex);
}

/* (c) outputs whose dims follow the input's one for one, and twice over:
 * still trimmed to the asked length. An elementwise output is exact and
 * says nothing; a concat along the padded axis puts the second copy
 * after the bucket's padding, which the warning names. */
static const char *twice_graph =
    "webnn_graph \"twice\" v2 {\n"
    "  inputs { x: f32[1, dyn(\"len\", 64)]; }\n"
    "  consts { two: f32[] @scalar(2.0); }\n"
    "  nodes {\n"
    "    y = mul(x, two);\n"
    "    z = concat([y, x], 1);\n"
    "  }\n"
    "  outputs { y; z; }\n"
    "}\n";

static void twice_case(const float *x) {
    char path[256];
    slice_write_file(&dir, "twice.webnn", twice_graph, path, sizeof path);
    warnings w = {0};
    berth_executor *ex = open_with("twice.webnn", "len=16 | len=64", &w);
    if (!ex) return;
    berth_tensor out[2];
    memset(out, 0, sizeof out);
    berth_error err;
    int64_t dims[2] = {1, 37};
    CHECK(run_x(ex, x, 2, dims, out, 2, &err) == BERTH_OK);
    CHECK(out[0].rank == 2 && out[0].dims[1] == 37);
    CHECK(out[1].rank == 2 && out[1].dims[1] == 74);
    for (int i = 0; i < 37 && out[0].dims[1] == 37; i++) CHECK(((const float *)out[0].data)[i] == 2 * x[i]);
    CHECK(w.n == 1);
    CHECK_CONTAINS(w.last, "output 'z' may differ");
    CHECK_CONTAINS(w.last, "node 'z' (concat, ");
    /* the same asked length again: the same dims, no new warning */
    CHECK(run_x(ex, x, 2, dims, out, 2, &err) == BERTH_OK);
    CHECK(out[0].dims[1] == 37 && out[1].dims[1] == 74 && w.n == 1);
    for (int k = 0; k < 2; k++) berth_tensor_release(&out[k]);
    berth_executor_close(ex);
}

int main(void) {
    if (slice_model_write(&dir, 3)) return 1;
    for (int i = 0; i < 2 * KERNEL; i++) filter[i] = (float)((i * 7) % 11) / 8.0f - 0.6f;
    berth_st_tensor t = {"w", BA_F32, 4, {2, 1, 1, KERNEL}, filter, sizeof filter};
    char path[256];
    berth_error err;
    snprintf(path, sizeof path, "%s/trim.safetensors", dir.dir);
    if (berth_st_write(path, &t, 1, NULL, &err) != 0) {
        fprintf(stderr, "writing %s: %s\n", path, err.msg);
        return 1;
    }
    static float x[MAX_LEN];
    for (int i = 0; i < MAX_LEN; i++) x[i] = sinf((float)i * 0.37f) + (float)(i % 5) * 0.1f - 0.2f;
    conv_case(x);
    mean_case(x);
    twice_case(x);
    slice_model_remove(&dir);
    return check_exit();
}
