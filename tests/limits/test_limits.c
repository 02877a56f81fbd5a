/* The memory limit end to end on the cpu backend: [limits] max_memory_mb
 * and berth_open_options max_memory_bytes; a plan, a padded input, an
 * output, a backend's own extra bytes and weights over the limit, each
 * refused with BERTH_ERR_NOMEM and a message naming what, its size and the
 * limit; the executor usable after a refusal, the bucket cold. The large
 * cases would take gigabytes if the limit were not enforced, so each is
 * first tried with prepare (which only plans) and run only once refused,
 * and the peak RSS of the process is checked to stay small. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "archive.h"
#include "berth/berth.h"
#include "check.h"

static char dir[64];
static char log_text[8192];

static void capture(void *ctx, berth_log_level level, const char *msg) {
    (void)ctx;
    (void)level;
    size_t n = strlen(log_text);
    snprintf(log_text + n, sizeof log_text - n, "%s\n", msg);
}

static const char *write_file(const char *name, const char *text) {
    static char path[4][256];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f) return NULL;
    fputs(text, f);
    fclose(f);
    return p;
}

/* A config over GRAPH (absolute, or in the temp dir) and the first
 * graph's weights, with one stage and optional extra sections. */
static const char *config(const char *name, const char *graph, const char *weights,
                          const char *stage, const char *extra) {
    char text[2048];
    snprintf(text, sizeof text,
             "[model]\ngraph = %s\nweights = %s\n[backend]\nuse = cpu\n[buckets]\nrows = %s\n%s",
             graph, weights, stage, extra);
    return write_file(name, text);
}

static berth_executor *open_with(const char *path, uint64_t limit_bytes, berth_status *st,
                                 berth_error *err) {
    berth_open_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.log = capture;
    o.log_level = BERTH_LOG_INFO;
    o.max_memory_bytes = limit_bytes;
    log_text[0] = 0;
    berth_executor *ex = (berth_executor *)1; /* open must set it, also on failure */
    *st = berth_executor_open(path, &o, &ex, err);
    if (*st != BERTH_OK) {
        CHECK(ex == NULL);
        return NULL;
    }
    return ex;
}

static long peak_rss_kib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss; /* KiB on Linux */
}

/* x: f32[rows, 1, 4] of small values, run in lane 0. */
static berth_status run_wide(berth_executor *ex, int rows, berth_tensor *out, uint32_t *bucket,
                             berth_error *err) {
    float x[256 * 4];
    for (int i = 0; i < rows * 4; i++) x[i] = (float)(i % 5) * 0.25f;
    berth_tensor in = {BERTH_DTYPE_F32, 3, {rows, 1, 4}, x, sizeof(float) * (size_t)rows * 4, 0};
    return berth_executor_run(ex, 0, &in, 1, out, 1, bucket, err);
}

static const char WIDE_REFUSED[] =
    "bucket batch=256: the plan needs 8.0 GiB (weights 268 B + plans already built "
    "0 B + this plan's buffers 8.0 GiB), more than [limits] max_memory_mb = 1024; its largest "
    "tensor is 'e', f32[256, 1048576, 4], 4.0 GiB";

/* The graph that expands to [268435456, 4] at its large bucket: refused
 * before anything is allocated, quickly, and the small bucket still runs. */
static void test_plan_refused(void) {
    berth_error err;
    berth_status st;
    const char *cfg = config("wide.ini", BERTH_LIMITS_DIR "/wide.webnn", BERTH_FIRST_WEIGHTS,
                             "batch=1 | batch=256", "[limits]\nmax_memory_mb = 1024\n");
    berth_executor *ex = open_with(cfg, 0, &st, &err);
    CHECK(ex != NULL);
    if (!ex) {
        fprintf(stderr, "open: %s\n", err.msg);
        return;
    }
    const char *what = NULL;
    CHECK(berth_executor_memory_limit(ex, &what) == (uint64_t)1024 << 20);
    CHECK(what && !strcmp(what, "[limits] max_memory_mb = 1024"));

    long rss_before = peak_rss_kib();
    st = berth_executor_prepare(ex, 0, 1, &err);
    CHECK(st == BERTH_ERR_NOMEM);
    if (st == BERTH_OK) {
        berth_executor_close(ex); /* running it would take 8 GiB */
        return;
    }
    if (strcmp(err.msg, WIDE_REFUSED)) fprintf(stderr, "got: %s\n", err.msg);
    CHECK(!strcmp(err.msg, WIDE_REFUSED));
    CHECK(!berth_executor_is_warm(ex, 0, 1));

    /* A run that lands in that bucket is refused the same way, and the
     * caller's output is not grown. */
    berth_tensor out;
    memset(&out, 0, sizeof out);
    uint32_t bucket = 99;
    st = run_wide(ex, 200, &out, &bucket, &err);
    CHECK(st == BERTH_ERR_NOMEM);
    CHECK(!strcmp(err.msg, WIDE_REFUSED));
    CHECK(out.data == NULL && out.capacity == 0);
    CHECK(bucket == 99);
    CHECK(!berth_executor_is_warm(ex, 0, 1));
    berth_memory m;
    berth_executor_memory(ex, &m);
    CHECK(m.plans == 0 && m.plans_bytes == 0 && m.host_bytes == 0);
    /* Nothing of the 8 GiB was touched: the process grew by far less than
     * one of its tensors. */
    long grew = peak_rss_kib() - rss_before;
    if (grew >= 64 * 1024) fprintf(stderr, "peak RSS grew by %ld KiB\n", grew);
    CHECK(grew < 64 * 1024);

    /* The executor is still usable: batch=1 plans and runs (16 MiB). */
    st = run_wide(ex, 1, &out, &bucket, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) fprintf(stderr, "run: %s\n", err.msg);
    if (st == BERTH_OK) {
        CHECK(bucket == 0);
        CHECK(out.rank == 2 && out.dims[0] == 1 && out.dims[1] == 3);
        CHECK(berth_executor_is_warm(ex, 0, 0));
    }
    /* With that plan warm, the refusal counts it among what is held. */
    st = berth_executor_prepare(ex, 0, 1, &err);
    CHECK(st == BERTH_ERR_NOMEM);
    CHECK_CONTAINS(err.msg, "bucket batch=256: the plan needs 8.0 GiB (weights 268 B "
                            "+ plans already built 16.0 MiB + this plan's buffers 8.0 GiB)");
    berth_tensor_release(&out);
    berth_executor_close(ex);
}

/* One graph input: x: f32[batch, 4] with batch up to 268435456, summed
 * over the batch. A run of 2 rows lands in the large bucket, whose padded
 * copy of x would be 4 GiB: refused before the copy. */
static void test_input_too_large(void) {
    const char *graph = write_file("sum.webnn",
                                   "webnn_graph \"sum\" v2 {\n"
                                   "  inputs { x: f32[dyn(\"batch\", 268435456), 4]; }\n"
                                   "  nodes { y = reduceSum(x, axes=[0], keepDimensions=true); }\n"
                                   "  outputs { y; }\n"
                                   "}\n");
    const char *cfg = config("sum.ini", graph, BERTH_FIRST_WEIGHTS, "batch=1 | batch=268435456",
                             "[limits]\nmax_memory_mb = 1024\n");
    berth_error err;
    berth_status st;
    berth_executor *ex = open_with(cfg, 0, &st, &err);
    CHECK(ex != NULL);
    if (!ex) {
        fprintf(stderr, "open: %s\n", err.msg);
        return;
    }
    static const char want[] =
        "bucket batch=268435456: input 'x' padded to the bucket takes 4.0 GiB "
        "(f32[268435456, 4]), more than [limits] max_memory_mb = 1024";
    st = berth_executor_prepare(ex, 0, 1, &err);
    CHECK(st == BERTH_ERR_NOMEM);
    if (st == BERTH_OK) {
        berth_executor_close(ex);
        return;
    }
    CHECK(!strcmp(err.msg, want));
    float x[2 * 4] = {1, 2, 3, 4, 5, 6, 7, 8};
    berth_tensor in = {BERTH_DTYPE_F32, 2, {2, 4}, x, sizeof x, 0};
    berth_tensor out;
    memset(&out, 0, sizeof out);
    st = berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err);
    CHECK(st == BERTH_ERR_NOMEM);
    if (strcmp(err.msg, want)) fprintf(stderr, "got: %s\n", err.msg);
    CHECK(!strcmp(err.msg, want));
    CHECK(!berth_executor_is_warm(ex, 0, 1) && out.data == NULL);
    /* one row fits the small bucket */
    in.dims[0] = 1;
    in.bytes = sizeof(float) * 4;
    st = berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err);
    CHECK(st == BERTH_OK);
    if (st == BERTH_OK) CHECK(out.dims[0] == 1 && ((float *)out.data)[3] == 4.0f);
    berth_tensor_release(&out);
    berth_executor_close(ex);
}

/* The wide graph with the reshaped tensor as its output: at batch=256 the
 * output alone is 4 GiB, refused before the engine's buffer or the
 * caller's is grown. */
static void test_output_too_large(void) {
    FILE *f = fopen(BERTH_LIMITS_DIR "/wide.webnn", "r");
    CHECK(f != NULL);
    if (!f) return;
    static char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    /* same graph, the 4 GiB reshape as its output */
    char *outs = strstr(text, "outputs { y; }");
    CHECK(outs != NULL);
    if (!outs) return;
    memcpy(outs, "outputs { r; }", 14);
    const char *cfg = config("wide_out.ini", write_file("wide_out.webnn", text), BERTH_FIRST_WEIGHTS,
                             "batch=1 | batch=256", "[limits]\nmax_memory_mb = 1024\n");
    berth_error err;
    berth_status st;
    berth_executor *ex = open_with(cfg, 0, &st, &err);
    CHECK(ex != NULL);
    if (!ex) {
        fprintf(stderr, "open: %s\n", err.msg);
        return;
    }
    static const char want[] =
        "bucket batch=256: output 'r' at the bucket's size takes 4.0 GiB "
        "(f32[268435456, 4]), more than [limits] max_memory_mb = 1024";
    st = berth_executor_prepare(ex, 0, 1, &err);
    CHECK(st == BERTH_ERR_NOMEM);
    if (st == BERTH_OK) {
        berth_executor_close(ex);
        return;
    }
    CHECK(!strcmp(err.msg, want));
    berth_tensor out;
    memset(&out, 0, sizeof out);
    st = run_wide(ex, 256, &out, NULL, &err);
    CHECK(st == BERTH_ERR_NOMEM);
    if (strcmp(err.msg, want)) fprintf(stderr, "got: %s\n", err.msg);
    CHECK(!strcmp(err.msg, want));
    CHECK(out.data == NULL && out.capacity == 0);
    CHECK(!berth_executor_is_warm(ex, 0, 1));
    berth_executor_close(ex);
}

/* A 2 MiB weight: over max_memory_mb = 1, the open fails before any byte
 * is streamed and leaves nothing; the options may raise the limit. */
static void test_weights_over_limit(void) {
    static float w[512 * 1024];
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)(i % 7);
    char weights[256];
    snprintf(weights, sizeof weights, "%s/big.safetensors", dir);
    berth_st_tensor t = {"w", BA_F32, 2, {1024, 512}, w, sizeof w};
    berth_error err;
    CHECK(berth_st_write(weights, &t, 1, NULL, &err) == 0);
    const char *graph = write_file("big.webnn",
                                   "webnn_graph \"big\" v2 {\n"
                                   "  inputs { x: f32[dyn(\"batch\", 4), 1024]; i: i32[1]; }\n"
                                   "  consts { w: f32[1024, 512]; }\n"
                                   "  nodes { y = matmul(x, w); g = gather(w, i); }\n"
                                   "  outputs { y; g; }\n"
                                   "}\n");
    const char *cfg = config("big.ini", graph, weights, "batch=1 | batch=4",
                             "[limits]\nmax_memory_mb = 1\n");
    berth_status st;
    CHECK(open_with(cfg, 0, &st, &err) == NULL);
    CHECK(st == BERTH_ERR_NOMEM);
    char want[512];
    snprintf(want, sizeof want,
             "%s: the weights the graphs read take 2.0 MiB, more than [limits] max_memory_mb = 1", cfg);
    if (strcmp(err.msg, want)) fprintf(stderr, "got: %s\n", err.msg);
    CHECK(!strcmp(err.msg, want));
    /* refused before streaming: no upload was logged */
    CHECK_CONTAINS(log_text, "backend 'cpu' chosen");
    CHECK(strstr(log_text, "uploaded") == NULL);

    /* berth_open_options raises it above the config's */
    berth_executor *ex = open_with(cfg, (uint64_t)8 << 20, &st, &err);
    CHECK(ex != NULL);
    if (!ex) {
        fprintf(stderr, "open: %s\n", err.msg);
        return;
    }
    const char *what = NULL;
    CHECK(berth_executor_memory_limit(ex, &what) == (uint64_t)8 << 20);
    CHECK(what && !strcmp(what, "berth_open_options max_memory_bytes = 8388608"));
    CHECK(berth_executor_prepare(ex, 0, 0, &err) == BERTH_OK);
    berth_executor_close(ex);

    /* The cpu backend packs a weight for its matrix kernels when it plans
     * a matmul. The packed copy replaces the weight, unless a plan still
     * reads it unpacked: the gather does, so once planned both copies
     * are held, on top of the estimate. A limit between the estimate and
     * what the backend then holds refuses the plan after the fact, frees
     * it and leaves the bucket cold. */
    ex = open_with(cfg, (uint64_t)2 << 20 | 64 << 10, &st, &err);
    CHECK(ex != NULL);
    if (!ex) {
        fprintf(stderr, "open: %s\n", err.msg);
        return;
    }
    st = berth_executor_prepare(ex, 0, 0, &err);
    CHECK(st == BERTH_ERR_NOMEM);
    CHECK_CONTAINS(err.msg, "bucket batch=1: once backend 'cpu' planned it, berth held ");
    CHECK_CONTAINS(err.msg, "(weights 4.");
    CHECK_CONTAINS(err.msg, "this one included), more than berth_open_options max_memory_bytes = "
                            "2162688; the plan was freed");
    CHECK(!berth_executor_is_warm(ex, 0, 0));
    berth_memory m;
    berth_executor_memory(ex, &m);
    CHECK(m.plans == 0);
    berth_executor_close(ex);
}

/* berth_open_options max_memory_bytes below and above the config's, and
 * a caller built against the older, smaller struct. */
static void test_options_override(void) {
    berth_error err;
    berth_status st;
    /* below: the 16 MiB bucket no longer fits 1 MiB */
    const char *cfg = config("wide1.ini", BERTH_LIMITS_DIR "/wide.webnn", BERTH_FIRST_WEIGHTS,
                             "batch=1", "[limits]\nmax_memory_mb = 1024\n");
    berth_executor *ex = open_with(cfg, 1 << 20, &st, &err);
    CHECK(ex != NULL);
    if (ex) {
        berth_tensor out;
        memset(&out, 0, sizeof out);
        st = run_wide(ex, 1, &out, NULL, &err);
        CHECK(st == BERTH_ERR_NOMEM);
        CHECK_CONTAINS(err.msg, "bucket batch=1: the plan needs 32.0 MiB (weights 268 B + "
                                "plans already built 0 B + this plan's buffers 32.0 MiB), more than "
                                "berth_open_options max_memory_bytes = 1048576; its largest tensor is ");
        CHECK(!berth_executor_is_warm(ex, 0, 0));
        berth_tensor_release(&out);
        berth_executor_close(ex);
    }
    /* above: the config's 1 MiB refuses the bucket, 64 MiB from the
     * options admits it */
    cfg = config("wide2.ini", BERTH_LIMITS_DIR "/wide.webnn", BERTH_FIRST_WEIGHTS, "batch=1",
                 "[limits]\nmax_memory_mb = 1\n");
    ex = open_with(cfg, 0, &st, &err);
    CHECK(ex != NULL);
    if (ex) {
        CHECK(berth_executor_prepare(ex, 0, 0, &err) == BERTH_ERR_NOMEM);
        CHECK_CONTAINS(err.msg, "more than [limits] max_memory_mb = 1; ");
        berth_executor_close(ex);
    }
    ex = open_with(cfg, (uint64_t)64 << 20, &st, &err);
    CHECK(ex != NULL);
    if (ex) {
        berth_tensor out;
        memset(&out, 0, sizeof out);
        st = run_wide(ex, 1, &out, NULL, &err);
        CHECK(st == BERTH_OK);
        if (st != BERTH_OK) fprintf(stderr, "run: %s\n", err.msg);
        berth_memory m;
        berth_executor_memory(ex, &m);
        CHECK(m.weights_bytes + m.plans_bytes + m.host_bytes <= (uint64_t)64 << 20);
        berth_tensor_release(&out);
        berth_executor_close(ex);
    }
    /* The struct as it was before max_memory_bytes: its fields are read
     * (the log arrives), the field past its size is not (the config's
     * 1 MiB holds, not the 64 MiB lying beyond). */
    berth_open_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = offsetof(berth_open_options, max_memory_bytes);
    o.log = capture;
    o.log_level = BERTH_LOG_INFO;
    o.use = "cpu";
    o.max_memory_bytes = (uint64_t)64 << 20;
    log_text[0] = 0;
    ex = NULL;
    CHECK(berth_executor_open(cfg, &o, &ex, &err) == BERTH_OK);
    if (ex) {
        CHECK_CONTAINS(log_text, "backend 'cpu' chosen");
        CHECK(berth_executor_memory_limit(ex, NULL) == (uint64_t)1 << 20);
        CHECK(berth_executor_prepare(ex, 0, 0, &err) == BERTH_ERR_NOMEM);
        berth_executor_close(ex);
    }
}

/* Without [limits] the limit is the machine's physical memory. */
static void test_default(void) {
    const char *cfg = config("default.ini", BERTH_LIMITS_DIR "/wide.webnn", BERTH_FIRST_WEIGHTS,
                             "batch=1", "");
    berth_error err;
    berth_status st;
    berth_executor *ex = open_with(cfg, 0, &st, &err);
    CHECK(ex != NULL);
    if (!ex) return;
    uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    const char *what = NULL;
    CHECK(berth_executor_memory_limit(ex, &what) == phys);
    CHECK_CONTAINS(what, "the default limit, the machine's physical memory of ");
    berth_executor_close(ex);
}

static void remove_dir(void) {
    static const char *const names[] = {"wide.ini",  "sum.webnn", "sum.ini",        "wide_out.webnn",
                                        "wide_out.ini", "big.safetensors", "big.webnn", "big.ini",
                                        "wide1.ini", "wide2.ini", "default.ini"};
    char path[256];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/berth-limits-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_plan_refused();
    test_input_too_large();
    test_output_too_large();
    test_weights_over_limit();
    test_options_override();
    test_default();
    remove_dir();
    return check_exit();
}
