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

static void h_shutdown(void) { mh_unload(&cpu); }

static berth_status h_run_w(tgraph *g, berth_weights *w, void *const *in, void *const *out, berth_error *err) {
    return mh_run(&cpu, g, w, in, out, err);
}
static berth_status h_run(tgraph *g, void *const *in, void *const *out, berth_error *err) {
    return mh_run(&cpu, g, NULL, in, out, err);
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
