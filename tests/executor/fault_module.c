/* A backend that takes `berth check` down with it unless the check runs
 * it in a child process (tests/cli/check_isolated.sh): the cpu backend,
 * except that a graph whose last node is sigmoid
 *   FAULT_SEGV: segfaults in run;
 *   FAULT_HANG: sleeps forever in plan (writing its pid first to the file
 *               named by BERTH_FX_PIDFILE, when set, so the test can see
 *               the process is gone afterwards);
 *   FAULT_EXIT: calls exit(3) in run.
 * Build it with -DFAULT=FAULT_SEGV, FAULT_HANG or FAULT_EXIT. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "berth/backend.h"
#include "cpu_wrap.h"

#define FAULT_SEGV 1
#define FAULT_HANG 2
#define FAULT_EXIT 3

static berth_backend table;
static const berth_backend *cpu;

static int ends_in_sigmoid(const berth_graph_desc *g) {
    size_t node_size = g->struct_size > offsetof(berth_graph_desc, node_size) && g->node_size ? g->node_size
                                                                                                : sizeof(berth_node);
    const berth_node *last = (const berth_node *)(const void *)((const char *)g->nodes +
                                                                 (size_t)(g->n_nodes - 1) * node_size);
    return g->n_nodes && !strcmp(last->op, "sigmoid");
}

typedef struct fault_plan {
    berth_plan *inner;
    int fault;
} fault_plan;

static berth_status fault_plan_fn(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                                  berth_error *err) {
    int fault = ends_in_sigmoid(g);
#if FAULT == FAULT_HANG
    if (fault) {
        const char *pidfile = getenv("BERTH_FX_PIDFILE");
        FILE *f = pidfile ? fopen(pidfile, "w") : NULL;
        if (f) fprintf(f, "%ld\n", (long)getpid()), fclose(f);
        for (;;) pause();
    }
#endif
    fault_plan *p = calloc(1, sizeof *p);
    if (!p) return BERTH_ERR_NOMEM;
    berth_status st = cpu->plan(dev, w, g, &p->inner, err);
    if (st) {
        free(p);
        return st;
    }
    p->fault = fault;
    *out = (berth_plan *)p;
    return BERTH_OK;
}

static berth_status fault_run(berth_plan *bp, const berth_tensor *in, uint32_t n_in, berth_tensor *out,
                              uint32_t n_out, berth_error *err) {
    fault_plan *p = (fault_plan *)bp;
#if FAULT == FAULT_SEGV
    if (p->fault) {
        /* A crash as a module's own bug makes it: under ASan or UBSan the
         * sanitizer's handler would turn a stray store into exit(1), so
         * the default action is restored and the signal raised. */
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
    }
#elif FAULT == FAULT_EXIT
    if (p->fault) exit(3);
#endif
    return cpu->run(p->inner, in, n_in, out, n_out, err);
}

static void fault_free_plan(berth_plan *bp) {
    fault_plan *p = (fault_plan *)bp;
    if (!p) return;
    cpu->free_plan(p->inner);
    free(p);
}

static uint64_t fault_plan_bytes(const berth_plan *bp) { return cpu->plan_bytes(((const fault_plan *)bp)->inner); }

__attribute__((visibility("default"))) const berth_backend *
berth_backend_entry(uint32_t host_abi_version, const berth_host_services *host, berth_error *why) {
    if (!(cpu = cpu_wrap("fault", host_abi_version, host, why, &table))) return NULL;
    table.plan = fault_plan_fn;
    table.run = fault_run;
    table.free_plan = fault_free_plan;
    table.plan_bytes = fault_plan_bytes;
    table.plan_profile = NULL;
    table.plan_memory = NULL;
    table.get_proc = NULL;
    return &table;
}
