/* Internals of specialization shared by specialize.c, the per-family
 * shape rules (infer_*.c) and the host evaluator (fold.c).
 *
 * While a graph is specialized every graph value gets an sp_val: its
 * concrete dtype and dims and, when the host can know it (consts given
 * inline, input shapes, arithmetic over those), its data. Each node gets
 * an sp_node: its options normalized to WebNN names as berth_attrs. An
 * OPERAND attr holds a graph value index here; specialize.c renumbers it
 * to an operand index when it builds the desc. */
#ifndef BERTH_INFER_H
#define BERTH_INFER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "berth/backend.h"
#include "berth/ops.h"
#include "graph.h"
#include "specialize.h"

/* Host data is kept for values up to this many elements; larger values
 * are never folded (shape math is small; a large fold would only move
 * device work onto the host). */
#define SP_HOST_CAP 65536

typedef struct sp_val {
    berth_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    void *data; /* host-known contents, little-endian, or NULL */
    int ready;  /* shape inferred */
} sp_val;

typedef struct sp_node {
    const bg_node *src;
    const char *op;
    berth_op_id id;   /* op's row in berth/ops.def */
    const char *name; /* first output's name */
    uint32_t n_inputs; /* positional operands left after normalization */
    const int32_t *inputs;
    uint32_t n_attrs;
    berth_attr *attrs;
    int folded; /* evaluated on the host, or SP_WEIGHT_VIEW; absent from the desc */
} sp_node;

/* sp_node.folded of a reshape of an uploaded weight: its output is that
 * weight's operand under the new shape. */
#define SP_WEIGHT_VIEW 2

typedef struct sp_ctx {
    const berth_graph *g;
    berth_arena *arena;
    sp_val *vals;
    berth_error *err;
    const sp_node *n; /* the node being inferred */
} sp_ctx;

typedef int (*sp_infer_fn)(sp_ctx *c);
typedef struct sp_rule {
    berth_op_id op;
    sp_infer_fn infer;
} sp_rule;

/* Rule tables of the op families, keyed by op id, each ending with
 * {BERTH_OP_UNKNOWN, NULL}. Every WEBNN op of berth/ops.def has exactly
 * one rule; fused ops have none (they are made after specialization). */
extern const sp_rule sp_rules_elementwise[];
extern const sp_rule sp_rules_linalg[];
extern const sp_rule sp_rules_conv[];
extern const sp_rule sp_rules_norm[];
extern const sp_rule sp_rules_shape[];

/* The shape rule of op `id`, or NULL (fused or unknown ops). */
sp_infer_fn sp_find_rule(berth_op_id id);

/* Writes "PATH:LINE: node 'NAME' (op): " + the message; returns -1. */
int sp_fail(sp_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "f32[3, 2]" into buf. */
const char *sp_shape_str(char *buf, size_t cap, const sp_val *v);
/* "[3, 2]" into buf. */
const char *sp_dims_str(char *buf, size_t cap, uint32_t rank, const int64_t *dims);

sp_val *sp_in(sp_ctx *c, uint32_t i);
const char *sp_in_name(sp_ctx *c, uint32_t i);
/* Checks the node's operand and output counts against op `id`'s row of
 * the op table; done once for every node before its rule runs. */
int sp_check_counts(sp_ctx *c, berth_op_id id);
/* Sets output i; fails on a negative dim or too high a rank. */
int sp_set_out(sp_ctx *c, uint32_t i, berth_dtype t, uint32_t rank, const int64_t *dims);
/* Output i has the shape and dtype of `v`. */
int sp_set_like(sp_ctx *c, uint32_t i, const sp_val *v, berth_dtype t);

const berth_attr *sp_attr(const sp_node *n, const char *key);
/* Typed option readers: the default applies when the option is absent or
 * null; a present option of the wrong type is an error naming the key. */
int sp_opt_int(sp_ctx *c, const char *key, int64_t def, int64_t *out);
int sp_opt_float(sp_ctx *c, const char *key, double def, double *out);
int sp_opt_bool(sp_ctx *c, const char *key, int def, int *out);
int sp_opt_str(sp_ctx *c, const char *key, const char *def, const char **out);
/* INTS into out[0..cap); *count = number read, or -1 if absent. */
int sp_opt_ints(sp_ctx *c, const char *key, int64_t *out, size_t cap, int *count);
int sp_opt_floats(sp_ctx *c, const char *key, double *out, size_t cap, int *count);
/* An OPERAND option: *v = its sp_val, *name its value name; NULL if absent. */
int sp_opt_operand(sp_ctx *c, const char *key, sp_val **v, const char **name);

/* Normalizes an axis in [-rank, rank) to [0, rank). */
int sp_axis(sp_ctx *c, const char *what, int64_t axis, uint32_t rank, uint32_t *out);
/* Numpy broadcast of a and b into out; 0 if incompatible. */
int sp_broadcast(uint32_t ra, const int64_t *a, uint32_t rb, const int64_t *b, uint32_t *rout,
                 int64_t *out);
int sp_is_float(berth_dtype t);
int sp_is_int(berth_dtype t);
/* Product of dims; -1 on overflow past INT64_MAX. */
int64_t sp_numel(uint32_t rank, const int64_t *dims);

/* Host evaluation: if the current node can be evaluated from host-known
 * inputs, fills its outputs' data and returns 1; 0 if not foldable; -1 on
 * error. */
int sp_fold(sp_ctx *c);
/* Element i of host data as integer / double. */
int64_t sp_load_i(const void *data, berth_dtype t, size_t i);
double sp_load_f(const void *data, berth_dtype t, size_t i);
void sp_store_i(void *data, berth_dtype t, size_t i, int64_t v);
void sp_store_f(void *data, berth_dtype t, size_t i, double v);
/* Fills a tensor of `count` elements with `x` (for @scalar consts). */
void sp_fill(void *data, berth_dtype t, size_t count, double x);

/* pad_reach.c: for every graph output and dyn dim k, whether padding
 * along k can reach the output's kept values (berth_pad_reach), from the
 * graph as inferred at the bucket (vals, nodes) and as it would be with
 * each dim one smaller (alt[k][v], NULL where the same; alt[k] NULL where
 * dim k could not move alone, tied_at[k] naming the node that tied it).
 * moved[i] bit k: node i's offsets (slice starts, padding, window sizes)
 * follow dim k. out has g->n_outputs * g->n_syms entries; 0 or -1 (out of
 * memory). */
int sp_pad_reach(const berth_graph *g, const sp_node *nodes, const sp_val *vals, sp_val ***alt,
                 const uint64_t *moved, const int32_t *tied_at, const int64_t *syms,
                 berth_pad_reach *out);

#endif
