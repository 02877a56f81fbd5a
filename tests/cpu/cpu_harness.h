/* Shared helpers for the cpu backend tests: load the module through the
 * ABI only, a small host-services table, a builder for hand-made graph
 * descriptions, a seeded random source and array comparison. */
#ifndef BERTH_TEST_CPU_HARNESS_H
#define BERTH_TEST_CPU_HARNESS_H

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/backend.h"
#include "check.h"

/* Each suite uses a different subset of these helpers. */
#pragma GCC diagnostic ignored "-Wunused-function"

/* ---- host services ---- */

static const char *h_opt_keys[8], *h_opt_vals[8];
static uint32_t h_opt_n;
static int h_host_allocs, h_host_frees;

static uint32_t h_option_count(void *ctx) { (void)ctx; return h_opt_n; }
static berth_status h_option_at(void *ctx, uint32_t i, const char **k, const char **v) {
    (void)ctx;
    if (i >= h_opt_n) return BERTH_ERR_INVALID;
    *k = h_opt_keys[i];
    *v = h_opt_vals[i];
    return BERTH_OK;
}
static void h_log(void *ctx, berth_log_level l, const char *m) { (void)ctx; (void)l; (void)m; }
static void *h_alloc(void *ctx, size_t bytes, size_t align) {
    (void)ctx;
    void *p = NULL;
    if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, bytes ? bytes : 1)) return NULL;
    h_host_allocs++;
    return p;
}
static void h_free(void *ctx, void *p) {
    (void)ctx;
    if (p) h_host_frees++;
    free(p);
}

static berth_host_services h_host = {
    .abi_version = 1, .struct_size = sizeof(berth_host_services), .ctx = NULL, .log = h_log,
    .option_count = h_option_count, .option_at = h_option_at, .alloc = h_alloc, .free = h_free,
};

static void *h_module;
static const berth_backend *be;
static berth_device *dev;

static const berth_backend *h_load(void) {
    h_module = dlopen(BERTH_CPU_MODULE, RTLD_NOW | RTLD_LOCAL);
    if (!h_module) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return NULL;
    }
    berth_backend_entry_fn entry = (berth_backend_entry_fn)dlsym(h_module, BERTH_BACKEND_ENTRY_SYMBOL);
    if (!entry) return NULL;
    berth_error why;
    return entry(1, &h_host, &why);
}

/* Loads the module and opens a device with `threads` (0: default). */
static int h_open(int threads) {
    static char buf[16];
    be = h_load();
    if (!be) return 0;
    h_opt_n = 0;
    if (threads > 0) {
        snprintf(buf, sizeof buf, "%d", threads);
        h_opt_keys[0] = "threads";
        h_opt_vals[0] = buf;
        h_opt_n = 1;
    }
    berth_error err;
    if (be->open(&h_host, &dev, &err) != BERTH_OK) {
        fprintf(stderr, "open: %s\n", err.msg);
        return 0;
    }
    return 1;
}

static void h_shutdown(void) {
    if (be && dev) be->close(dev);
    dev = NULL;
    if (h_module) dlclose(h_module);
    h_module = NULL;
}

/* ---- graph builder ---- */

typedef struct tgraph {
    berth_operand ops[256];
    uint32_t n_ops;
    berth_node nodes[256];
    uint32_t n_nodes;
    uint32_t ins[16], n_ins, outs[16], n_outs;
    uint32_t idx[2048];
    uint32_t n_idx;
    berth_attr attrs[512];
    uint32_t n_attrs;
} tgraph;

static uint32_t tg_operand(tgraph *g, const char *name, berth_operand_kind kind, berth_dtype t, uint32_t rank,
                           const int64_t *dims) {
    berth_operand *o = &g->ops[g->n_ops];
    memset(o, 0, sizeof *o);
    o->name = name;
    o->kind = kind;
    o->dtype = t;
    o->rank = rank;
    for (uint32_t i = 0; i < rank; i++) o->dims[i] = dims[i];
    return g->n_ops++;
}
static uint32_t tg_input(tgraph *g, const char *name, berth_dtype t, uint32_t rank, const int64_t *dims) {
    uint32_t i = tg_operand(g, name, BERTH_OPERAND_INPUT, t, rank, dims);
    g->ins[g->n_ins++] = i;
    return i;
}
static uint32_t tg_value(tgraph *g, const char *name, berth_dtype t, uint32_t rank, const int64_t *dims) {
    return tg_operand(g, name, BERTH_OPERAND_VALUE, t, rank, dims);
}
static uint32_t tg_const(tgraph *g, const char *name, berth_dtype t, uint32_t rank, const int64_t *dims,
                         const void *data, size_t bytes) {
    uint32_t i = tg_operand(g, name, BERTH_OPERAND_CONSTANT, t, rank, dims);
    g->ops[i].data = data;
    g->ops[i].bytes = bytes;
    return i;
}
static void tg_output(tgraph *g, uint32_t o) { g->outs[g->n_outs++] = o; }

static void tg_node(tgraph *g, const char *op, uint32_t n_in, const uint32_t *in, uint32_t n_out,
                    const uint32_t *out, uint32_t n_attrs, const berth_attr *attrs) {
    berth_node *n = &g->nodes[g->n_nodes++];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->name = g->ops[out[0]].name;
    n->n_inputs = n_in;
    n->inputs = g->idx + g->n_idx;
    memcpy(g->idx + g->n_idx, in, sizeof(uint32_t) * n_in);
    g->n_idx += n_in;
    n->n_outputs = n_out;
    n->outputs = g->idx + g->n_idx;
    memcpy(g->idx + g->n_idx, out, sizeof(uint32_t) * n_out);
    g->n_idx += n_out;
    n->n_attrs = n_attrs;
    n->attrs = g->attrs + g->n_attrs;
    if (n_attrs) memcpy(g->attrs + g->n_attrs, attrs, sizeof(berth_attr) * n_attrs);
    g->n_attrs += n_attrs;
}

static berth_graph_desc tg_desc(const tgraph *g) {
    berth_graph_desc d = {.struct_size = sizeof(berth_graph_desc), .n_operands = g->n_ops, .operands = g->ops,
                          .n_nodes = g->n_nodes, .nodes = g->nodes, .n_inputs = g->n_ins, .inputs = g->ins,
                          .n_outputs = g->n_outs, .outputs = g->outs};
    return d;
}

#define IDX(...) ((const uint32_t[]){__VA_ARGS__})
#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define A_INT(k, v) ((berth_attr){.key = (k), .type = BERTH_ATTR_INT, .i = (v)})
#define A_BOOL(k, v) ((berth_attr){.key = (k), .type = BERTH_ATTR_BOOL, .i = (v)})
#define A_FLOAT(k, v) ((berth_attr){.key = (k), .type = BERTH_ATTR_FLOAT, .f = (v)})
#define A_STR(k, v) ((berth_attr){.key = (k), .type = BERTH_ATTR_STRING, .s = (v)})
#define A_OPND(k, v) ((berth_attr){.key = (k), .type = BERTH_ATTR_OPERAND, .i = (v)})
#define A_INTS(k, n, ...) ((berth_attr){.key = (k), .type = BERTH_ATTR_INTS, .count = (n), .ints = (const int64_t[]){__VA_ARGS__}})
#define A_FLOATS(k, n, ...) ((berth_attr){.key = (k), .type = BERTH_ATTR_FLOATS, .count = (n), .floats = (const double[]){__VA_ARGS__}})

static size_t h_numel(const berth_operand *o) {
    size_t n = 1;
    for (uint32_t i = 0; i < o->rank; i++) n *= (size_t)o->dims[i];
    return n;
}
static size_t h_esize(berth_dtype t) {
    return t == BERTH_DTYPE_I64 || t == BERTH_DTYPE_U64 ? 8 : t == BERTH_DTYPE_U8 || t == BERTH_DTYPE_I8 ? 1
         : t == BERTH_DTYPE_F16 ? 2 : 4;
}
static berth_tensor h_tensor(const berth_operand *o, void *data) {
    berth_tensor t = {.dtype = o->dtype, .rank = o->rank, .data = data};
    memcpy(t.dims, o->dims, sizeof t.dims);
    int packed = o->dtype == BERTH_DTYPE_I4 || o->dtype == BERTH_DTYPE_U4;
    t.bytes = packed ? (h_numel(o) + 1) / 2 : h_numel(o) * h_esize(o->dtype);
    return t;
}

/* Plans g, runs it once on in[] (graph input order), writes out[]
 * (graph output order), frees the plan. err receives any failure. */
static berth_status h_run_w(tgraph *g, berth_weights *w, void *const *in, void *const *out, berth_error *err) {
    berth_graph_desc d = tg_desc(g);
    berth_plan *p = NULL;
    berth_status st = be->plan(dev, w, &d, &p, err);
    if (st) return st;
    berth_tensor ti[16], to[16];
    for (uint32_t i = 0; i < g->n_ins; i++) ti[i] = h_tensor(&g->ops[g->ins[i]], in[i]);
    for (uint32_t i = 0; i < g->n_outs; i++) to[i] = h_tensor(&g->ops[g->outs[i]], out[i]);
    st = be->run(p, ti, g->n_ins, to, g->n_outs, err);
    be->free_plan(p);
    return st;
}
static berth_status h_run(tgraph *g, void *const *in, void *const *out, berth_error *err) {
    return h_run_w(g, NULL, in, out, err);
}

/* Plans and runs; a failure is a failed check with the message shown. */
static int h_ok(tgraph *g, void *const *in, void *const *out) {
    berth_error err = {{0}};
    berth_status st = h_run(g, in, out, &err);
    CHECK(st == BERTH_OK);
    if (st) fprintf(stderr, "  status %d: %s\n", (int)st, err.msg);
    return st == BERTH_OK;
}

/* ---- data ---- */

static uint64_t h_rng = 0x9e3779b97f4a7c15ull;
static double h_rand(void) { /* uniform in [-1, 1) */
    h_rng ^= h_rng << 13;
    h_rng ^= h_rng >> 7;
    h_rng ^= h_rng << 17;
    return (double)(h_rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}
static float *h_randf(size_t n) {
    float *p = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = (float)h_rand();
    return p;
}
static double *h_zeros(size_t n) { return calloc(n ? n : 1, sizeof(double)); }

/* got vs reference, |got - ref| <= atol + rtol*|ref|; one CHECK per array. */
static int h_close_tol(const char *what, const float *got, const double *ref, size_t n, double rtol, double atol) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - ref[i]);
        int ok = d <= atol + rtol * fabs(ref[i]) || (isnan(ref[i]) && isnan(got[i])) ||
                 (isinf(ref[i]) && (double)got[i] == ref[i]);
        if (!ok && bad++ == 0) first = i;
    }
    CHECK(bad == 0);
    if (bad)
        fprintf(stderr, "  %s: %zu of %zu differ; first [%zu] got %.9g want %.9g\n", what, bad, n, first,
                (double)got[first], ref[first]);
    return bad == 0;
}
static int h_close(const char *what, const float *got, const double *ref, size_t n) {
    return h_close_tol(what, got, ref, n, 1e-4, 1e-4);
}

/* Row-major index helpers for references. */
static void h_unravel(size_t i, uint32_t rank, const int64_t *dims, int64_t *idx) {
    for (int d = (int)rank - 1; d >= 0; d--) {
        idx[d] = (int64_t)(i % (size_t)dims[d]);
        i /= (size_t)dims[d];
    }
}
/* Offset into a tensor of `rank`/`dims` that broadcasts against an output
 * index of rank `orank` (numpy rules: right-aligned, size-1 dims repeat). */
static size_t h_bcast_off(const int64_t *oidx, uint32_t orank, uint32_t rank, const int64_t *dims) {
    size_t off = 0;
    for (uint32_t d = 0; d < rank; d++) {
        int64_t i = oidx[orank - rank + d];
        off = off * (size_t)dims[d] + (size_t)(dims[d] == 1 ? 0 : i);
    }
    return off;
}

#endif
