/* Run contexts: four threads on one executor, each with its own context,
 * give exactly the answers one thread gives, and the weights stay
 * uploaded once. Also what contexts refuse: a second caller on one
 * context, add_graph while contexts are open; and that the gated run of
 * one context does not corrupt another's. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/berth.h"
#include "check.h"
#include "slice_fixture.h"

#define THREADS 4
#define ITERATIONS 300
#define MAX_ROWS 16

static slice_model model;
/* One thread's answers for every batch size 1..MAX_ROWS: the truth the
 * threads are held to, bit for bit. */
static float truth[MAX_ROWS + 1][MAX_ROWS * SLICE_OUT];
static float inputs[MAX_ROWS + 1][MAX_ROWS * SLICE_IN];

static berth_executor *open_with(const char *use) {
    char text[1024], path[256];
    snprintf(text, sizeof text,
             "[model]\ngraph = model.webnn\nweights = model.safetensors\n"
             "[backend]\nuse = %s\n[backend.cpu]\nthreads = 2\n"
             "[buckets]\nrows = batch=1 | batch=4 | batch=8 | batch=16\n",
             use);
    berth_error err;
    berth_executor *ex = NULL;
    if (berth_executor_open(slice_write_file(&model, "contexts.ini", text, path, sizeof path), NULL,
                            &ex, &err) != BERTH_OK)
        fprintf(stderr, "open with %s: %s\n", use, err.msg);
    return ex;
}

static berth_status run_rows(berth_context *c, int rows, berth_tensor *out, berth_error *err) {
    berth_tensor in = {BERTH_DTYPE_F32, 2, {rows, SLICE_IN}, inputs[rows],
                       sizeof(float) * (size_t)rows * SLICE_IN, 0};
    return berth_context_run(c, 0, &in, 1, out, 1, NULL, err);
}

typedef struct worker {
    berth_context *ctx;
    int seed;
    int right, wrong, failed;
    char msg[BERTH_ERROR_CAP];
} worker;

static void *work(void *arg) {
    worker *w = arg;
    berth_tensor out;
    memset(&out, 0, sizeof out);
    berth_error err;
    for (int i = 0; i < ITERATIONS; i++) {
        int rows = 1 + (i * 7 + w->seed * 5) % MAX_ROWS; /* every bucket, in a different order per thread */
        if (run_rows(w->ctx, rows, &out, &err) != BERTH_OK) {
            w->failed++;
            snprintf(w->msg, sizeof w->msg, "%s", err.msg);
            continue;
        }
        int same = out.rank == 2 && out.dims[0] == rows && out.dims[1] == SLICE_OUT &&
                   memcmp(out.data, truth[rows], sizeof(float) * (size_t)rows * SLICE_OUT) == 0;
        if (same) w->right++;
        else w->wrong++;
    }
    berth_tensor_release(&out);
    return NULL;
}

static void test_four_threads(void) {
    berth_executor *ex = open_with("cpu");
    CHECK(ex != NULL);
    if (!ex) return;
    berth_error err;
    berth_tensor out;
    memset(&out, 0, sizeof out);
    for (int rows = 1; rows <= MAX_ROWS; rows++) {
        for (int i = 0; i < rows * SLICE_IN; i++)
            inputs[rows][i] = (float)((i * 13 + rows * 7) % 23 - 11) / 8.0f;
        berth_tensor in = {BERTH_DTYPE_F32, 2, {rows, SLICE_IN}, inputs[rows],
                           sizeof(float) * (size_t)rows * SLICE_IN, 0};
        CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_OK);
        memcpy(truth[rows], out.data, sizeof(float) * (size_t)rows * SLICE_OUT);
    }
    /* The single thread's answers are right, not only repeatable. */
    double want[MAX_ROWS * SLICE_OUT];
    slice_reference(&model, inputs[MAX_ROWS], MAX_ROWS, want);
    int close = 1;
    for (int i = 0; i < MAX_ROWS * SLICE_OUT; i++)
        close &= (truth[MAX_ROWS][i] - want[i]) < 1e-4 && (want[i] - truth[MAX_ROWS][i]) < 1e-4;
    CHECK(close);
    berth_tensor_release(&out);

    berth_memory before, after;
    berth_executor_memory(ex, &before);
    CHECK(before.weights_bytes > 0 && before.plans == 4);

    worker w[THREADS];
    memset(w, 0, sizeof w);
    for (int k = 0; k < THREADS; k++) {
        w[k].seed = k;
        CHECK(berth_context_open(ex, &w[k].ctx, &err) == BERTH_OK);
    }
    /* Contexts are fixed to the lanes they were opened with. */
    uint32_t lane = 99;
    CHECK(berth_executor_add_graph(ex, "later", "model.webnn", NULL, &lane, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "4 run contexts are open; add graphs before opening them");
    CHECK(lane == 99);

    pthread_t t[THREADS];
    for (int k = 0; k < THREADS; k++) CHECK(pthread_create(&t[k], NULL, work, &w[k]) == 0);
    /* The executor's own context runs alongside them. */
    worker own = {NULL, 9, 0, 0, 0, {0}};
    for (int i = 0; i < 50; i++) {
        int rows = 1 + i % MAX_ROWS;
        berth_tensor in = {BERTH_DTYPE_F32, 2, {rows, SLICE_IN}, inputs[rows],
                           sizeof(float) * (size_t)rows * SLICE_IN, 0};
        if (berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) != BERTH_OK) own.failed++;
        else if (memcmp(out.data, truth[rows], sizeof(float) * (size_t)rows * SLICE_OUT)) own.wrong++;
        else own.right++;
    }
    berth_tensor_release(&out);
    for (int k = 0; k < THREADS; k++) CHECK(pthread_join(t[k], NULL) == 0);
    CHECK(own.right == 50);
    for (int k = 0; k < THREADS; k++) {
        if (w[k].failed) fprintf(stderr, "thread %d: %s\n", k, w[k].msg);
        CHECK(w[k].right == ITERATIONS);
        CHECK(w[k].wrong == 0 && w[k].failed == 0);
        /* each context built its own plans: all four buckets */
        for (uint32_t b = 0; b < 4; b++) CHECK(berth_context_is_warm(w[k].ctx, 0, b));
    }
    berth_executor_memory(ex, &after);
    CHECK(after.weights_bytes == before.weights_bytes);
    CHECK(after.plans == before.plans * (THREADS + 1));
    CHECK(after.plans_bytes == before.plans_bytes * (THREADS + 1));
    for (int k = 0; k < THREADS; k++) berth_context_close(w[k].ctx);
    berth_executor_memory(ex, &after);
    CHECK(after.plans == before.plans && after.plans_bytes == before.plans_bytes);
    /* With the contexts gone, graphs may be added again. */
    char graph[256];
    snprintf(graph, sizeof graph, "%s/model.webnn", model.dir);
    CHECK(berth_executor_add_graph(ex, "later", graph, NULL, &lane, &err) == BERTH_OK);
    CHECK(lane == 1);
    berth_executor_close(ex);
}

/* A context is one thread's at a time, like the executor: the gate holds
 * one run inside context a; a second call on a is refused, naming the
 * context; context b's run waits its turn at the device and then gives
 * its own right answer. */
static worker gated;
static void *run_gated(void *arg) {
    (void)arg;
    berth_tensor out;
    memset(&out, 0, sizeof out);
    berth_error err;
    if (run_rows(gated.ctx, 3, &out, &err) == BERTH_OK &&
        !memcmp(out.data, truth[3], sizeof(float) * 3 * SLICE_OUT))
        gated.right++;
    else
        gated.failed++;
    berth_tensor_release(&out);
    return NULL;
}

static worker second;
static void *run_second(void *arg) {
    (void)arg;
    berth_tensor out;
    memset(&out, 0, sizeof out);
    berth_error err;
    if (run_rows(second.ctx, 5, &out, &err) == BERTH_OK &&
        !memcmp(out.data, truth[5], sizeof(float) * 5 * SLICE_OUT))
        second.right++;
    else
        second.failed++;
    berth_tensor_release(&out);
    return NULL;
}

static void test_gated(void) {
    berth_executor *ex = open_with(GATE_MODULE);
    void *gate = dlopen(GATE_MODULE, RTLD_NOW | RTLD_NOLOAD);
    CHECK(ex != NULL && gate != NULL);
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
    berth_error err;
    memset(&gated, 0, sizeof gated);
    memset(&second, 0, sizeof second);
    CHECK(berth_context_open(ex, &gated.ctx, &err) == BERTH_OK);
    CHECK(berth_context_open(ex, &second.ctx, &err) == BERTH_OK);
    /* plans first, so the gate holds a run rather than a plan */
    for (uint32_t b = 0; b < 4; b++) {
        CHECK(berth_context_prepare(gated.ctx, 0, b, &err) == BERTH_OK);
        CHECK(berth_context_prepare(second.ctx, 0, b, &err) == BERTH_OK);
    }
    arm.fn();
    pthread_t t, t2;
    CHECK(pthread_create(&t, NULL, run_gated, NULL) == 0);
    wait_inside.fn();
    berth_tensor out;
    memset(&out, 0, sizeof out);
    CHECK(run_rows(gated.ctx, 1, &out, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "berth_context_run: the run context is busy in another call; a run context is "
                       "one thread's at a time (open one per thread)");
    CHECK(out.data == NULL);
    CHECK(pthread_create(&t2, NULL, run_second, NULL) == 0);
    release.fn();
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(pthread_join(t2, NULL) == 0);
    CHECK(gated.right == 1 && gated.failed == 0);
    CHECK(second.right == 1 && second.failed == 0);
    /* closing the executor closes the contexts still open */
    berth_context_close(second.ctx);
    berth_executor_close(ex);
}

int main(void) {
    if (slice_model_write(&model, 11)) return 1;
    test_four_threads();
    test_gated();
    slice_model_remove(&model);
    return check_exit();
}
