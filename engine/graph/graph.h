/* The graph as parsed from a .webnn file: symbolic, owned by one arena.
 *
 * Values are every named thing in the file: inputs, consts and node
 * outputs. Input dims may be dynamic (`dyn("batch", 8)`); nothing else
 * carries a shape until the graph is specialized for a bucket (specialize/). */
#ifndef BERTH_GRAPH_H
#define BERTH_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"

typedef enum bg_value_kind {
    BG_INPUT = 1,
    BG_CONST = 2,
    BG_NODE_OUTPUT = 3
} bg_value_kind;

typedef enum bg_const_init {
    BG_INIT_WEIGHTS = 1, /* @weights("ref"), or no annotation: ref = name */
    BG_INIT_SCALAR = 2,  /* @scalar(x): every element is `scalar`         */
    BG_INIT_BYTES = 3    /* @bytes([...]): little-endian element bytes     */
} bg_const_init;

/* A dim of an input: static (sym < 0) or dynamic: value is its max. */
typedef struct bg_dim {
    int64_t value;
    int32_t sym; /* index into berth_graph.syms, or -1 */
} bg_dim;

typedef struct bg_sym {
    const char *name; /* "batch" */
    int64_t max;
} bg_sym;

typedef struct bg_value {
    const char *name;
    bg_value_kind kind;
    berth_dtype dtype;  /* inputs and consts; node outputs: INVALID */
    uint32_t rank;      /* inputs and consts */
    bg_dim dims[BERTH_MAX_RANK];
    /* consts */
    bg_const_init init;
    const char *ref;        /* BG_INIT_WEIGHTS */
    double scalar;          /* BG_INIT_SCALAR */
    const uint8_t *bytes;   /* BG_INIT_BYTES */
    size_t n_bytes;
    /* node outputs: the producing node */
    int32_t node;
    uint32_t line, col;     /* where it is declared */
} bg_value;

typedef enum bg_attr_kind {
    BG_ATTR_NULL = 0,
    BG_ATTR_NUMBER = 1, /* num; is_int and i when it is an exact integer:
                         * written with no fraction or exponent, fits int64 */
    BG_ATTR_STRING = 2, /* str */
    BG_ATTR_BOOL = 3,   /* i */
    BG_ATTR_ARRAY = 4,  /* items[0..count) */
    BG_ATTR_OBJECT = 5, /* items[0..count), each with a key */
    BG_ATTR_IDENT = 6   /* str: a value's name; value: its index */
} bg_attr_kind;

typedef struct bg_attr bg_attr;
struct bg_attr {
    const char *key; /* option name; NULL for array items */
    bg_attr_kind kind;
    double num;
    int64_t i;
    int is_int;
    const char *str;
    int32_t value;   /* BG_ATTR_IDENT: index into berth_graph.values */
    uint32_t count;
    bg_attr *items;
};

/* Arguments of `x = op(a, [b, c], [1, 2], axis=1, bias=d)`:
 *  - a positional identifier is an operand: `inputs` gets its value index;
 *  - a positional array of identifiers (concat's list) is flattened into
 *    `inputs` in order;
 *  - any other positional argument (a number, string, array of numbers)
 *    becomes an attr keyed "@N", N its 0-based position among all
 *    arguments; specialization gives it its WebNN name (reshape's
 *    newShape, slice's starts and sizes, ...);
 *  - key=value options become attrs; an identifier value is BG_ATTR_IDENT
 *    (at any depth inside an array or object too).
 * An alias `x = y;` is read as the node `x = identity(y)`. */
typedef struct bg_node {
    const char *op;
    uint32_t n_inputs;
    int32_t *inputs;   /* value indices, positional operands */
    uint32_t n_outputs;
    int32_t *outputs;  /* value indices */
    uint32_t n_attrs;
    bg_attr *attrs;    /* options and positional literals, in argument order */
    uint32_t line, col; /* where the op name (or the aliased name) is */
} bg_node;

typedef struct berth_graph {
    const char *path; /* file it came from, for messages */
    const char *name;
    int version;      /* 1 or 2 */
    int quantized;
    uint32_t n_values;
    bg_value *values;
    uint32_t n_nodes;
    bg_node *nodes;   /* topological order (checked) */
    uint32_t n_inputs;
    int32_t *inputs;  /* value indices in declaration order */
    uint32_t n_outputs;
    int32_t *outputs; /* value indices in declaration order */
    uint32_t n_syms;
    bg_sym *syms;
    void *arena;      /* owns every pointer above */
    uint64_t digest;  /* berth_digest of the text: the cache's key */
} berth_graph;

/* Parse `text` (len bytes, not NUL-terminated) read from `path`, then check
 * it: each name defined once, every operand defined by an earlier node, an
 * input or a const, every output defined, every op known. On failure
 * returns NULL and writes "PATH:LINE:COL: what was expected, what was
 * found" to err. */
berth_graph *berth_graph_parse(const char *path, const char *text, size_t len, berth_error *err);
/* Read (at most 256 MiB) and parse a file. */
berth_graph *berth_graph_load(const char *path, berth_error *err);
void berth_graph_free(berth_graph *g);

/* Index of the value named `name`, or -1. */
int32_t berth_graph_find(const berth_graph *g, const char *name);
/* The option `key` of node n, or NULL. */
const bg_attr *berth_graph_attr(const bg_node *n, const char *key);
/* 1 if `op` is a WebNN op of the op table (include/berth/ops.def): the ops
 * a .webnn file may use; the table's fused ops are the engine's own. */
int berth_graph_op_known(const char *op);

#endif
