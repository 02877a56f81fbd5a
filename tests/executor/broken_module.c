/* A backend with planted faults, each of which `berth check` must
 * report (tests/cli/check_broken.sh): the cpu backend, except that
 *   - a host offering ABI version 0 gets a table instead of NULL;
 *   - supports_op refuses an unknown op with an empty message;
 *   - a weight it is given is freed only when the upload completed, so
 *     an upload abandoned half-way leaks it;
 *   - relu never writes the last element of its output;
 *   - sigmoid writes NaN at element 0;
 *   - tanh's element 0 moves by one ulp on every run after the first. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "berth/backend.h"
#include "cpu_wrap.h"

static berth_backend table;
static const berth_backend *cpu;
static const berth_host_services *host_services;

enum { FAULT_NONE, FAULT_UNWRITTEN, FAULT_NAN, FAULT_DRIFT };

typedef struct wrapped_plan {
    berth_plan *inner;
    int fault, runs;
} wrapped_plan;

#define MAX_GIVEN 64
typedef struct wrapped_weights {
    berth_weights *inner;
    uint32_t announced, arrived, n_given;
    void *given[MAX_GIVEN];
} wrapped_weights;

static berth_status broken_supports_op(berth_device *dev, const char *op, berth_dtype dtype, berth_error *err) {
    berth_status st = cpu->supports_op(dev, op, dtype, err);
    if (st == BERTH_ERR_UNSUPPORTED) err->msg[0] = 0;
    return st;
}

static berth_status broken_upload_begin(berth_device *dev, const berth_upload_info *info, berth_weights **out,
                                        berth_error *err) {
    wrapped_weights *w = calloc(1, sizeof *w);
    if (!w) return BERTH_ERR_NOMEM;
    berth_status st = cpu->upload_begin(dev, info, &w->inner, err);
    if (st) {
        free(w);
        return st;
    }
    w->announced = info->n_tensors;
    *out = (berth_weights *)w;
    return BERTH_OK;
}

/* A given buffer is kept on a list (and copied by cpu), to be freed in
 * free_weights: but only after a complete upload. */
static berth_status broken_upload_tensor(berth_weights *bw, const berth_weight_desc *d, void *data, uint32_t flags,
                                         int *taken, berth_error *err) {
    wrapped_weights *w = (wrapped_weights *)bw;
    int inner_taken = 0;
    berth_status st = cpu->upload_tensor(w->inner, d, data, flags & ~BERTH_UPLOAD_GIVEN, &inner_taken, err);
    if (st) return st;
    w->arrived++;
    if ((flags & BERTH_UPLOAD_GIVEN) && taken && w->n_given < MAX_GIVEN) {
        w->given[w->n_given++] = data;
        *taken = 1;
    } else if (taken) {
        *taken = 0;
    }
    return BERTH_OK;
}

static berth_status broken_upload_end(berth_weights *bw, berth_error *err) {
    return cpu->upload_end(((wrapped_weights *)bw)->inner, err);
}

/* The buffers an abandoned upload "leaks" to the host: released with
 * free() when the module unloads, so the leak berth check must see is
 * in the host's count only, not one LeakSanitizer reports. */
static void *stash[MAX_GIVEN];
static uint32_t n_stash;

__attribute__((destructor)) static void release_stash(void) {
    for (uint32_t i = 0; i < n_stash; i++) free(stash[i]);
}

static void broken_free_weights(berth_weights *bw) {
    wrapped_weights *w = (wrapped_weights *)bw;
    if (!w) return;
    for (uint32_t i = 0; i < w->n_given; i++) {
        if (w->arrived == w->announced) host_services->free(host_services->ctx, w->given[i]);
        else if (n_stash < MAX_GIVEN) stash[n_stash++] = w->given[i];
    }
    cpu->free_weights(w->inner);
    free(w);
}

static uint64_t broken_weights_bytes(const berth_weights *bw) {
    return cpu->weights_bytes(((const wrapped_weights *)bw)->inner);
}

static berth_status broken_plan(berth_device *dev, berth_weights *bw, const berth_graph_desc *g, berth_plan **out,
                                berth_error *err) {
    wrapped_plan *p = calloc(1, sizeof *p);
    if (!p) return BERTH_ERR_NOMEM;
    berth_status st = cpu->plan(dev, bw ? ((wrapped_weights *)bw)->inner : NULL, g, &p->inner, err);
    if (st) {
        free(p);
        return st;
    }
    size_t node_size = g->struct_size > offsetof(berth_graph_desc, node_size) && g->node_size ? g->node_size
                                                                                                : sizeof(berth_node);
    const berth_node *last = (const berth_node *)(const void *)((const char *)g->nodes +
                                                                 (size_t)(g->n_nodes - 1) * node_size);
    p->fault = !strcmp(last->op, "relu") ? FAULT_UNWRITTEN : !strcmp(last->op, "sigmoid") ? FAULT_NAN
             : !strcmp(last->op, "tanh") ? FAULT_DRIFT : FAULT_NONE;
    *out = (berth_plan *)p;
    return BERTH_OK;
}

static berth_status broken_run(berth_plan *bp, const berth_tensor *in, uint32_t n_in, berth_tensor *out,
                               uint32_t n_out, berth_error *err) {
    wrapped_plan *p = (wrapped_plan *)bp;
    berth_tensor *y = n_out ? out : NULL; /* the first output sits at the array's start */
    float *v = y && y->dtype == BERTH_DTYPE_F32 && y->bytes >= sizeof(float) ? y->data : NULL;
    size_t n = v ? y->bytes / sizeof(float) : 0;
    float kept = v ? v[n - 1] : 0.0f;
    berth_status st = cpu->run(p->inner, in, n_in, out, n_out, err);
    if (st || !v) return st;
    if (p->fault == FAULT_UNWRITTEN) v[n - 1] = kept;
    if (p->fault == FAULT_NAN) v[0] = NAN;
    if (p->fault == FAULT_DRIFT && p->runs > 0) v[0] = nextafterf(v[0], INFINITY);
    p->runs++;
    return BERTH_OK;
}

static void broken_free_plan(berth_plan *bp) {
    wrapped_plan *p = (wrapped_plan *)bp;
    if (!p) return;
    cpu->free_plan(p->inner);
    free(p);
}

static uint64_t broken_plan_bytes(const berth_plan *bp) { return cpu->plan_bytes(((const wrapped_plan *)bp)->inner); }

__attribute__((visibility("default"))) const berth_backend *
berth_backend_entry(uint32_t host_abi_version, const berth_host_services *host, berth_error *why) {
    if (!(cpu = cpu_wrap("broken", host_abi_version ? host_abi_version : BERTH_BACKEND_ABI_VERSION, host, why, &table)))
        return NULL;
    host_services = host;
    table.supports_op = broken_supports_op;
    table.upload_begin = broken_upload_begin;
    table.upload_tensor = broken_upload_tensor;
    table.upload_end = broken_upload_end;
    table.upload_dest = NULL;
    table.free_weights = broken_free_weights;
    table.weights_bytes = broken_weights_bytes;
    table.plan = broken_plan;
    table.run = broken_run;
    table.free_plan = broken_free_plan;
    table.plan_bytes = broken_plan_bytes;
    table.plan_profile = NULL;
    return &table;
}
