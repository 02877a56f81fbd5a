/* The cpu backend tests on the common module harness: the module under
 * test, its host, opening it with a thread count, and running a graph on
 * it with a failure shown as a failed check. */
#ifndef BERTH_TEST_CPU_HARNESS_H
#define BERTH_TEST_CPU_HARNESS_H

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module_harness.h"

/* Each suite uses a different subset of these helpers. */
#pragma GCC diagnostic ignored "-Wunused-function"

static mh_host host;
static mh_module cpu;

/* Loads the module (ABI negotiated by the harness); 0 with the reason shown. */
static int h_load(void) {
    berth_error err;
    if (!host.services.log) mh_host_init(&host);
    if (mh_load(&cpu, BERTH_CPU_MODULE, &host, &err) != BERTH_OK) {
        fprintf(stderr, "load: %s\n", err.msg);
        return 0;
    }
    return 1;
}

/* Loads the module and opens a device with `threads` (0: default). */
static int h_open(int threads) {
    static char buf[16];
    if (!h_load()) return 0;
    mh_host_clear_options(&host);
    if (threads > 0) {
        snprintf(buf, sizeof buf, "%d", threads);
        mh_host_option(&host, "threads", buf);
    }
    berth_error err;
    if (mh_open(&cpu, &err) != BERTH_OK) {
        fprintf(stderr, "open: %s\n", err.msg);
        return 0;
    }
    return 1;
}

/* Closes the device and opens it again with one more option (key =
 * value), e.g. isa = generic to run the same cases on other kernels. */
static int h_reopen(const char *key, const char *value) {
    mh_close(&cpu);
    mh_host_option(&host, key, value);
    berth_error err;
    if (mh_open(&cpu, &err) != BERTH_OK) {
        fprintf(stderr, "open with %s = %s: %s\n", key, value, err.msg);
        return 0;
    }
    return 1;
}

static void h_shutdown(void) { mh_unload(&cpu); }

static berth_status h_run_w(tgraph *g, berth_weights *w, void *const *in, void *const *out, berth_error *err) {
    return mh_run(&cpu, g, w, in, out, err);
}
static berth_status h_run(tgraph *g, void *const *in, void *const *out, berth_error *err) {
    return mh_run(&cpu, g, NULL, in, out, err);
}

/* A quantized weight's three tensors uploaded as ids 0, 1, 2: q [k, n] of
 * type t (bb bytes as stored), its float scale and its zero point (zb
 * bytes) of [g, n]. */
static berth_weights *h_upload_quantized(berth_dtype t, int64_t k, int64_t n, int64_t g, const void *bd, size_t bb,
                                         const float *sc, const void *zd, size_t zb) {
    size_t gn = (size_t)(g * n);
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 3, .total_bytes = bb + zb + 4 * gn,
                              .largest_bytes = bb > 4 * gn ? bb : 4 * gn};
    berth_weights *w = NULL;
    berth_error err = {{0}};
    int taken = 0;
    CHECK(cpu.be->upload_begin(cpu.dev, &info, &w, &err) == BERTH_OK);
    berth_weight_desc d0 = {.name = "q", .id = 0, .dtype = t, .rank = 2, .dims = {k, n}, .bytes = bb};
    berth_weight_desc d1 = {.name = "s", .id = 1, .dtype = BERTH_DTYPE_F32, .rank = 2, .dims = {g, n}, .bytes = 4 * gn};
    berth_weight_desc d2 = {.name = "z", .id = 2, .dtype = t, .rank = 2, .dims = {g, n}, .bytes = zb};
    CHECK(cpu.be->upload_tensor(w, &d0, (void *)bd, 0, &taken, &err) == BERTH_OK);
    CHECK(cpu.be->upload_tensor(w, &d1, (void *)sc, 0, &taken, &err) == BERTH_OK);
    CHECK(cpu.be->upload_tensor(w, &d2, (void *)zd, 0, &taken, &err) == BERTH_OK);
    CHECK(cpu.be->upload_end(w, &err) == BERTH_OK);
    return w;
}

/* Plans and runs; a failure is a failed check with the message shown. */
static int h_ok(tgraph *g, void *const *in, void *const *out) {
    berth_error err = {{0}};
    berth_status st = h_run(g, in, out, &err);
    CHECK(st == BERTH_OK);
    if (st) fprintf(stderr, "  status %d: %s\n", (int)st, err.msg);
    return st == BERTH_OK;
}

#endif
