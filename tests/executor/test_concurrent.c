/* An executor is one thread's at a time. A second thread that calls while
 * another is inside is refused with BERTH_ERR_INVALID and a message saying
 * so, never handed another thread's output, never left to corrupt the
 * shared scratch or deadlock the backend's pool.
 *
 * First with a gate (the cpu backend with run() held open by the test),
 * so the overlap is certain; then two threads running as fast as they can,
 * where every call must either be refused or return its own right answer. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/berth.h"
#include "check.h"
#include "slice_fixture.h"

static slice_model model;
static const char *busy_msg = "the executor is busy in another call; an executor is one thread's at a time";

static void fill_rows(float *x, int rows, uint32_t seed) {
    for (int i = 0; i < rows * SLICE_IN; i++) x[i] = (float)((int)((i * 5 + seed * 11) % 17) - 8) / 4.0f;
}

/* 1 when out holds exactly `rows` rows of the reference answer. */
static int output_right(const berth_tensor *out, const float *x, int rows) {
    if (out->rank != 2 || out->dims[0] != rows || out->dims[1] != SLICE_OUT || !out->data) return 0;
    double want[16 * SLICE_OUT];
    slice_reference(&model, x, rows, want);
    for (int i = 0; i < rows * SLICE_OUT; i++)
        if (fabs(((const float *)out->data)[i] - want[i]) > 1e-4 + 1e-4 * fabs(want[i])) return 0;
    return 1;
}

typedef struct worker {
    berth_executor *ex;
    int rows, iterations; /* iterations: right answers to collect */
    float x[16 * SLICE_IN];
    /* results, read by the main thread after join */
    berth_status first;
    int ok, refused, wrong, other;
    char other_msg[BERTH_ERROR_CAP];
} worker;

static void *run_once(void *arg) {
    worker *w = arg;
    berth_tensor in = {BERTH_DTYPE_F32, 2, {w->rows, SLICE_IN}, w->x, sizeof(float) * (size_t)w->rows * SLICE_IN, 0};
    berth_tensor out;
    memset(&out, 0, sizeof out);
    berth_error err;
    w->first = berth_executor_run(w->ex, 0, &in, 1, &out, 1, NULL, &err);
    w->ok = w->first == BERTH_OK && output_right(&out, w->x, w->rows);
    if (w->first != BERTH_OK) snprintf(w->other_msg, sizeof w->other_msg, "%s", err.msg);
    berth_tensor_release(&out);
    return NULL;
}

static void *run_many(void *arg) {
    worker *w = arg;
    berth_tensor in = {BERTH_DTYPE_F32, 2, {w->rows, SLICE_IN}, w->x, sizeof(float) * (size_t)w->rows * SLICE_IN, 0};
    berth_tensor out;
    memset(&out, 0, sizeof out);
    /* Until this thread has its own right answers: once the other thread
     * is done, nothing stands in the way, so this ends whatever the
     * scheduler does. The cap only turns a stuck claim into a failure. */
    for (int i = 0; w->ok < w->iterations && i < 100 * 1000 * 1000; i++) {
        berth_error err;
        berth_status st = berth_executor_run(w->ex, 0, &in, 1, &out, 1, NULL, &err);
        if (st == BERTH_OK) {
            if (output_right(&out, w->x, w->rows)) w->ok++;
            else w->wrong++;
        } else if (st == BERTH_ERR_INVALID && strstr(err.msg, busy_msg)) {
            w->refused++;
        } else {
            w->other++;
            snprintf(w->other_msg, sizeof w->other_msg, "%s", err.msg);
        }
    }
    berth_tensor_release(&out);
    return NULL;
}

static berth_executor *open_with(const char *use) {
    char text[1024], path[256];
    snprintf(text, sizeof text,
             "[model]\ngraph = model.webnn\nweights = model.safetensors\n"
             "[backend]\nuse = %s\n"
             "[buckets]\nrows = batch=1 | batch=3 | batch=8\n",
             use);
    berth_error err;
    berth_executor *ex = NULL;
    if (berth_executor_open(slice_write_file(&model, "concurrent.ini", text, path, sizeof path), NULL,
                            &ex, &err) != BERTH_OK)
        fprintf(stderr, "open with %s: %s\n", use, err.msg);
    return ex;
}

/* The gate holds one run inside the executor; every entry point that
 * touches lanes or plans is refused meanwhile, and works again after. */
static void test_second_caller_refused(void) {
    berth_executor *ex = open_with(GATE_MODULE);
    CHECK(ex != NULL);
    void *gate = dlopen(GATE_MODULE, RTLD_NOW | RTLD_NOLOAD);
    CHECK(gate != NULL);
    if (!ex || !gate) return;
    union {
        void *obj;
        void (*fn)(void);
    } arm, wait_inside, release;
    arm.obj = dlsym(gate, "gate_arm");
    wait_inside.obj = dlsym(gate, "gate_wait_inside");
    release.obj = dlsym(gate, "gate_release");
    CHECK(arm.obj && wait_inside.obj && release.obj);
    if (!arm.obj || !wait_inside.obj || !release.obj) return;

    worker a;
    memset(&a, 0, sizeof a);
    a.ex = ex;
    a.rows = 3;
    fill_rows(a.x, a.rows, 1);
    arm.fn();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, run_once, &a) == 0);
    wait_inside.fn();

    /* Thread a is inside berth_executor_run now. */
    float x[SLICE_IN] = {1, 2, 3, 4};
    berth_tensor in = {BERTH_DTYPE_F32, 2, {1, SLICE_IN}, x, sizeof x, 0};
    berth_tensor out;
    memset(&out, 0, sizeof out);
    berth_error err;
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "berth_executor_run: the executor is busy in another call; an executor "
                            "is one thread's at a time (open a run context per thread: berth_context_open)");
    CHECK(out.data == NULL);
    CHECK(berth_executor_prepare(ex, 0, 2, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "berth_executor_prepare: the executor is busy");
    CHECK(!berth_executor_is_warm(ex, 0, 2));
    uint32_t lane = 99;
    CHECK(berth_executor_add_graph(ex, "again", model.dir, NULL, &lane, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "berth_executor_add_graph: the executor is busy");
    CHECK(lane == 99 && berth_executor_lane_count(ex) == 1);

    release.fn();
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(a.first == BERTH_OK);
    if (a.first != BERTH_OK) fprintf(stderr, "gated run: %s\n", a.other_msg);
    CHECK(a.ok);

    /* The claim is gone with the call: the same calls now work. */
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_OK);
    CHECK(output_right(&out, x, 1));
    CHECK(berth_executor_prepare(ex, 0, 2, &err) == BERTH_OK);
    CHECK(berth_executor_is_warm(ex, 0, 2));
    berth_tensor_release(&out);
    berth_executor_close(ex);
}

/* Two threads on one executor, no gate: each call is refused or right. */
static void test_two_threads(void) {
    berth_executor *ex = open_with("cpu");
    CHECK(ex != NULL);
    if (!ex) return;
    worker w[2];
    memset(w, 0, sizeof w);
    for (int k = 0; k < 2; k++) {
        w[k].ex = ex;
        w[k].rows = k ? 3 : 8; /* different buckets, different output shapes */
        w[k].iterations = 500;
        fill_rows(w[k].x, w[k].rows, (uint32_t)k + 2);
    }
    pthread_t t[2];
    for (int k = 0; k < 2; k++) CHECK(pthread_create(&t[k], NULL, run_many, &w[k]) == 0);
    for (int k = 0; k < 2; k++) CHECK(pthread_join(t[k], NULL) == 0);
    for (int k = 0; k < 2; k++) {
        fprintf(stderr, "thread %d (batch %d): %d right, %d refused, %d wrong, %d other\n", k, w[k].rows,
                w[k].ok, w[k].refused, w[k].wrong, w[k].other);
        if (w[k].other) fprintf(stderr, "  other error: %s\n", w[k].other_msg);
        CHECK(w[k].wrong == 0);
        CHECK(w[k].other == 0);
        CHECK(w[k].ok == w[k].iterations);
    }
    berth_executor_close(ex);
}

int main(void) {
    if (slice_model_write(&model, 5)) return 1;
    test_second_caller_refused();
    test_two_threads();
    slice_model_remove(&model);
    return check_exit();
}
