/* One harness for everything that drives a backend module through the
 * ABI only (dlopen, nothing linked from berth): `berth check` and every
 * test of a module (tests/common/module_harness.h adds the tests' CHECK
 * wrappers):
 *
 *  - mh_host: a host-services table with settable options, a captured
 *    log and counted alloc/free;
 *  - mh_module: load a module by path and negotiate its ABI version,
 *    open and close a device on it, ask whether it supports a node
 *    (supports_node for ABI 1.1 tables, supports_op for 1.0 ones);
 *  - tgraph: a small builder for hand-made berth_graph_desc;
 *  - mh_run: plan a graph, run it once, free the plan;
 *  - comparison of float and integer results with a message naming the
 *    case, the output, the index, what was expected and what was found;
 *  - a seeded random source and row-major index helpers for references.
 *
 * It holds no CHECK: it returns what it found. */
#ifndef BERTH_CHECK_HARNESS_H
#define BERTH_CHECK_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"

/* ---- host services ---- */

#define MH_MAX_OPTIONS 8
#define MH_LOG_CAP 8192

typedef struct mh_host {
    berth_host_services services; /* what a module is given; ctx is this mh_host */
    const char *keys[MH_MAX_OPTIONS], *values[MH_MAX_OPTIONS];
    uint32_t n_options;
    /* Every log line, "LEVEL: message\n", cut at MH_LOG_CAP bytes. */
    char log[MH_LOG_CAP];
    size_t log_len;
    int log_lines;
    /* Blocks handed out by alloc and released by free. */
    int allocs, frees;
} mh_host;

void mh_host_init(mh_host *h);
/* Appends key = value to the options; the strings must outlive the use. */
void mh_host_option(mh_host *h, const char *key, const char *value);
void mh_host_clear_options(mh_host *h);
void mh_host_clear_log(mh_host *h);
/* The host's alloc and free, for a test that gives a buffer away. */
void *mh_host_alloc(mh_host *h, size_t bytes, size_t alignment);
void mh_host_free(mh_host *h, void *p);

/* ---- modules ---- */

typedef struct mh_module {
    const char *path;
    void *so;
    const berth_backend *be;
    berth_device *dev;
    mh_host *host;
} mh_module;

/* dlopens `path`, finds the entry symbol and asks for `abi_version`
 * (mh_load: the newest this header speaks), then checks the answer as
 * the engine does: a table of a version in 1..asked, at least the
 * minimum size of that version, with a name. On failure nothing stays
 * loaded and err says what was found. */
berth_status mh_load_version(mh_module *m, const char *path, mh_host *host, uint32_t abi_version,
                             berth_error *err);
berth_status mh_load(mh_module *m, const char *path, mh_host *host, berth_error *err);
/* Opens a device with the host's current options into m->dev. */
berth_status mh_open(mh_module *m, berth_error *err);
/* Closes the device, if open. */
void mh_close(mh_module *m);
/* Closes the device and unloads the module; m is zeroed. */
void mh_unload(mh_module *m);

/* Whether the table has supports_node: ABI 1.1 and large enough. */
int mh_has_supports_node(const berth_backend *be);
/* Asks whether node `node` of `g` runs on the open device: supports_node
 * where the table has it, else supports_op with the dtype of the node's
 * first input (or output, for a node without inputs), as the engine asks. */
berth_status mh_supports(const mh_module *m, const berth_graph_desc *g, uint32_t node, berth_error *err);

/* ---- graph builder ---- */

#define TG_MAX_OPERANDS 256
#define TG_MAX_NODES 256
#define TG_MAX_IO 16

typedef struct tgraph {
    berth_operand ops[TG_MAX_OPERANDS];
    uint32_t n_ops;
    berth_node nodes[TG_MAX_NODES];
    uint32_t n_nodes;
    uint32_t ins[TG_MAX_IO], n_ins, outs[TG_MAX_IO], n_outs;
    uint32_t idx[2048];
    uint32_t n_idx;
    berth_attr attrs[512];
    uint32_t n_attrs;
    int64_t ints[2048]; /* attrs' INTS/OPERANDS and FLOATS, copied: the */
    double floats[512]; /* caller's compound literals die with its block */
    uint32_t n_ints, n_floats;
} tgraph;

void tg_init(tgraph *g);
uint32_t tg_operand(tgraph *g, const char *name, berth_operand_kind kind, berth_dtype t, uint32_t rank,
                    const int64_t *dims);
/* A graph input, in run()'s input order. */
uint32_t tg_input(tgraph *g, const char *name, berth_dtype t, uint32_t rank, const int64_t *dims);
uint32_t tg_value(tgraph *g, const char *name, berth_dtype t, uint32_t rank, const int64_t *dims);
/* A constant; data must outlive the plan() call. */
uint32_t tg_const(tgraph *g, const char *name, berth_dtype t, uint32_t rank, const int64_t *dims,
                  const void *data, size_t bytes);
/* An f32 weight with the id given at upload. */
uint32_t tg_weight(tgraph *g, const char *name, uint32_t id, uint32_t rank, const int64_t *dims);
/* A graph output, in run()'s output order. */
void tg_output(tgraph *g, uint32_t operand);
/* A node; its name is its first output's. Indices and attrs (with their
 * arrays) are copied. */
void tg_node(tgraph *g, const char *op, uint32_t n_in, const uint32_t *in, uint32_t n_out, const uint32_t *out,
             uint32_t n_attrs, const berth_attr *attrs);
/* The ABI view of g: struct_size and element sizes of this header. */
berth_graph_desc tg_desc(const tgraph *g);

#define IDX(...) ((const uint32_t[]){__VA_ARGS__})
#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define A_INT(k, v) ((berth_attr){.key = (k), .type = BERTH_ATTR_INT, .i = (v)})
#define A_BOOL(k, v) ((berth_attr){.key = (k), .type = BERTH_ATTR_BOOL, .i = (v)})
#define A_FLOAT(k, v) ((berth_attr){.key = (k), .type = BERTH_ATTR_FLOAT, .f = (v)})
#define A_STR(k, v) ((berth_attr){.key = (k), .type = BERTH_ATTR_STRING, .s = (v)})
#define A_OPND(k, v) ((berth_attr){.key = (k), .type = BERTH_ATTR_OPERAND, .i = (v)})
#define A_INTS(k, n, ...) \
    ((berth_attr){.key = (k), .type = BERTH_ATTR_INTS, .count = (n), .ints = (const int64_t[]){__VA_ARGS__}})
#define A_FLOATS(k, n, ...) \
    ((berth_attr){.key = (k), .type = BERTH_ATTR_FLOATS, .count = (n), .floats = (const double[]){__VA_ARGS__}})

/* ---- tensors and running ---- */

size_t h_numel(const berth_operand *o);
/* Bytes of one element (int4 and uint4: 1, see h_bytes). */
size_t h_esize(berth_dtype t);
/* Bytes of the operand's elements, int4 and uint4 packed two a byte. */
size_t h_bytes(const berth_operand *o);
berth_tensor h_tensor(const berth_operand *o, void *data);

/* Plans g on m with weights w (may be NULL), runs it once on in[] (graph
 * input order) into out[] (graph output order), frees the plan. */
berth_status mh_run(const mh_module *m, const tgraph *g, berth_weights *w, void *const *in, void *const *out,
                    berth_error *err);

/* ---- data ---- */

double h_rand(void); /* uniform in [-1, 1), one seeded sequence per process */
float *h_randf(size_t n);
double *h_zeros(size_t n);
void h_unravel(size_t i, uint32_t rank, const int64_t *dims, int64_t *idx);
/* Offset into a tensor of `rank`/`dims` that broadcasts against an output
 * index of rank `orank` (numpy rules: right-aligned, size-1 dims repeat). */
size_t h_bcast_off(const int64_t *oidx, uint32_t orank, uint32_t rank, const int64_t *dims);

/* ---- comparison ---- */

/* got vs want, |got - want| <= atol + rtol*|want| (NaN matches NaN,
 * infinities exactly). Returns how many differ; if any, prints
 * "CASE: OUTPUT: N of M differ; first [i] expected E, found F" (`output`
 * may be NULL). */
size_t mh_compare_f32(const char *what, const char *output, const float *got, const double *want, size_t n,
                      double rtol, double atol);
/* Elements of dtype t (any integer type, f16 bit patterns included) vs
 * want, exactly; same message and result. */
size_t mh_compare_int(const char *what, const char *output, berth_dtype t, const void *got, const int64_t *want,
                      size_t n);
/* Reads element i of an integer-typed buffer as int64 (u64 wraps). */
int64_t mh_int_at(berth_dtype t, const void *p, size_t i);

#endif
