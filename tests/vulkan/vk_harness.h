/* The vulkan backend tests on the common module harness: the vulkan
 * module under test (and the cpu module, when built, to compare with),
 * starting them with the rule for a machine without a Vulkan device,
 * running a graph on vulkan with a failure shown as a failed check, and
 * comparing vulkan's results with the cpu module's. */
#ifndef BERTH_TEST_VK_HARNESS_H
#define BERTH_TEST_VK_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module_harness.h"

#pragma GCC diagnostic ignored "-Wunused-function"

/* vk_host carries the options a test sets; the cpu module gets none. */
static mh_host vk_host, cpu_host;
static mh_module vk, cpu;

/* Loads and opens the vulkan module with vk_host's options. Exits 77
 * (skipped) only when the machine has no Vulkan device at all. */
static void h_start(void) {
    berth_error err;
    if (!vk_host.services.log) mh_host_init(&vk_host);
    mh_host_init(&cpu_host);
    if (mh_load(&vk, BERTH_VULKAN_MODULE, &vk_host, &err) != BERTH_OK) {
        fprintf(stderr, "the vulkan module did not load: %s\n", err.msg);
        exit(1);
    }
    berth_status st = mh_open(&vk, &err);
    if (st == BERTH_ERR_DEVICE &&
        (strstr(err.msg, "no Vulkan device") || strstr(err.msg, "no usable Vulkan driver"))) {
        fprintf(stderr, "SKIP: this machine has no Vulkan device (%s)\n", err.msg);
        exit(77);
    }
    if (st) {
        fprintf(stderr, "open: %s\n", err.msg);
        exit(1);
    }
#ifdef BERTH_CPU_MODULE
    if (mh_load(&cpu, BERTH_CPU_MODULE, &cpu_host, &err) != BERTH_OK || mh_open(&cpu, &err) != BERTH_OK) {
        fprintf(stderr, "the cpu module did not open: %s\n", err.msg);
        exit(1);
    }
#endif
}

static void h_stop(void) {
    mh_unload(&vk);
    mh_unload(&cpu);
}

/* Runs on vulkan; a failure is a failed check with the message shown. */
static int h_ok(tgraph *g, void *const *in, void *const *out) {
    berth_error err = {{0}};
    berth_status st = mh_run(&vk, g, NULL, in, out, &err);
    CHECK(st == BERTH_OK);
    if (st) fprintf(stderr, "  status %d: %s\n", (int)st, err.msg);
    return st == BERTH_OK;
}

/* Runs g on the cpu module too (when built) and compares every output
 * with the vulkan results in vk_out: f32 within tolerance, others
 * byte for byte. */
static void h_same_as_cpu(const char *what, tgraph *g, berth_weights *cw, void *const *in, void *const *vk_out) {
#ifdef BERTH_CPU_MODULE
    void *co[TG_MAX_IO];
    for (uint32_t i = 0; i < g->n_outs; i++) co[i] = calloc(h_numel(&g->ops[g->outs[i]]) + 1, 8);
    berth_error err = {{0}};
    berth_status st = mh_run(&cpu, g, cw, in, co, &err);
    CHECK(st == BERTH_OK);
    if (st) fprintf(stderr, "  cpu %s: %s\n", what, err.msg);
    for (uint32_t i = 0; i < g->n_outs && !st; i++) {
        const berth_operand *o = &g->ops[g->outs[i]];
        size_t n = h_numel(o);
        if (o->dtype == BERTH_DTYPE_F32) {
            double *ref = h_zeros(n);
            for (size_t j = 0; j < n; j++) ref[j] = ((const float *)co[i])[j];
            h_close_tol(what, vk_out[i], ref, n, 1e-4, 1e-4);
            free(ref);
        } else {
            CHECK(memcmp(co[i], vk_out[i], h_bytes(o)) == 0);
        }
    }
    for (uint32_t i = 0; i < g->n_outs; i++) free(co[i]);
#else
    (void)what, (void)g, (void)cw, (void)in, (void)vk_out;
#endif
}

#endif
