/*
 * The op table (berth/ops.def) as C: an id per op, what each op takes and
 * gives, and its options. Header-only, so a backend module uses it with
 * nothing to link. Ids are for code inside one build; nodes cross the
 * ABI by name (berth_node.op), which berth_op_find maps to an id.
 */
#ifndef BERTH_OPS_H
#define BERTH_OPS_H

#include <stdint.h>
#include <string.h>

#include "berth/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MIN_IN/MAX_IN/N_OUT meaning "any number". */
#define BERTH_OPS_MANY UINT32_MAX

typedef enum berth_op_id {
#define BERTH_OP(ID, NAME, KIND, OPERANDS, MIN_IN, MAX_IN, N_OUT, OUT_DTYPE, MEANING) BERTH_OP_##ID,
#include "berth/ops.def"
    BERTH_OP_COUNT,
    BERTH_OP_UNKNOWN = -1
} berth_op_id;

typedef enum berth_op_kind { BERTH_OP_KIND_WEBNN = 1, BERTH_OP_KIND_FUSED = 2 } berth_op_kind;

/* Where an op's output dtype comes from. */
typedef enum berth_op_out_dtype {
    BERTH_OUT_IN0 = 1,   /* input 0's dtype                      */
    BERTH_OUT_IN1 = 2,   /* input 1's                            */
    BERTH_OUT_IN2 = 3,   /* input 2's                            */
    BERTH_OUT_U8 = 4,    /* u8, WebNN's boolean                  */
    BERTH_OUT_I64 = 5,   /* i64                                  */
    BERTH_OUT_OPTION = 6 /* the op's dtype option (`type`, `outputDataType`) */
} berth_op_out_dtype;

typedef struct berth_op_desc {
    const char *name;
    berth_op_kind kind;
    const char *operands; /* documentation: "a, b" */
    uint32_t min_inputs, max_inputs, n_outputs;
    berth_op_out_dtype out_dtype;
    const char *meaning;
} berth_op_desc;

typedef struct berth_op_attr_desc {
    berth_op_id op;
    const char *key;
    berth_attr_type type;
    const char *default_value; /* "" when required or without default */
    const char *meaning;
} berth_op_attr_desc;

typedef struct berth_op_param_desc {
    berth_op_id op;
    const char *key; /* the option a positional argument after the operands names */
} berth_op_param_desc;

typedef struct berth_op_note_desc {
    berth_op_id op;
    const char *text;
} berth_op_note_desc;

/* How close a backend's float32 answer must come to the op contract's
 * (BERTH_EDGE in ops.def; integer and boolean outputs are always exact).
 * Under every tolerance NaN must answer NaN and +-inf the same infinity;
 * a finite answer may differ from the expected value e by at most
 * atol + rtol * |e|. A backend may flush subnormal results to zero, so
 * atol is never below 2^-126 (FLT_MIN), and it may read a subnormal
 * input as zero of its sign: the answer for that zero is accepted too. */
typedef enum berth_op_tolerance {
    BERTH_TOL_APPROX = 0,  /* transcendental or accumulating: atol 1e-4, rtol 1e-3 */
    BERTH_TOL_ROUNDED = 1, /* a few correctly rounded steps: atol 2^-126, rtol 1e-6 */
    BERTH_TOL_EXACT = 2    /* the value itself (one of the inputs, or exact): atol 2^-126, rtol 0 */
} berth_op_tolerance;

typedef struct berth_op_edge_desc {
    berth_op_id op;
    berth_op_tolerance tolerance;
    const char *text;
} berth_op_edge_desc;

/* Every op's edge-value statement, in table order; *count gets how many. */
static inline const berth_op_edge_desc *berth_op_edges(uint32_t *count) {
    static const berth_op_edge_desc edges[] = {
#define BERTH_EDGE(ID, TOLERANCE, TEXT) {BERTH_OP_##ID, BERTH_TOL_##TOLERANCE, TEXT},
#include "berth/ops.def"
        {BERTH_OP_UNKNOWN, BERTH_TOL_APPROX, NULL}};
    *count = (uint32_t)(sizeof edges / sizeof edges[0]) - 1;
    return edges;
}

/* The tolerance of op `id` (APPROX where ops.def gives none), as bounds. */
static inline berth_op_tolerance berth_op_tol(berth_op_id id, double *atol, double *rtol) {
    uint32_t n;
    const berth_op_edge_desc *e = berth_op_edges(&n);
    berth_op_tolerance t = BERTH_TOL_APPROX;
    for (uint32_t i = 0; i < n; i++)
        if (e[i].op == id) t = e[i].tolerance;
    *atol = t == BERTH_TOL_APPROX ? 1e-4 : 0x1p-126;
    *rtol = t == BERTH_TOL_APPROX ? 1e-3 : t == BERTH_TOL_ROUNDED ? 1e-6 : 0.0;
    return t;
}

/* Every op, indexed by berth_op_id. */
static inline const berth_op_desc *berth_op_table(void) {
    static const berth_op_desc table[BERTH_OP_COUNT] = {
#define BERTH_OP(ID, NAME, KIND, OPERANDS, MIN_IN, MAX_IN, N_OUT, OUT_DTYPE, MEANING) \
    {NAME, BERTH_OP_KIND_##KIND, OPERANDS, MIN_IN, MAX_IN, N_OUT, BERTH_OUT_##OUT_DTYPE, MEANING},
#include "berth/ops.def"
    };
    return table;
}

/* Every option of every op, in table order; *count gets how many. */
static inline const berth_op_attr_desc *berth_op_attrs(uint32_t *count) {
    static const berth_op_attr_desc attrs[] = {
#define BERTH_ATTR(ID, KEY, TYPE, DEFAULT, MEANING) {BERTH_OP_##ID, KEY, BERTH_ATTR_##TYPE, DEFAULT, MEANING},
#include "berth/ops.def"
        {BERTH_OP_UNKNOWN, NULL, BERTH_ATTR_NULL, NULL, NULL}};
    *count = (uint32_t)(sizeof attrs / sizeof attrs[0]) - 1;
    return attrs;
}

/* Every positional parameter, in table order; *count gets how many. */
static inline const berth_op_param_desc *berth_op_params(uint32_t *count) {
    static const berth_op_param_desc params[] = {
#define BERTH_PARAM(ID, KEY) {BERTH_OP_##ID, KEY},
#include "berth/ops.def"
        {BERTH_OP_UNKNOWN, NULL}};
    *count = (uint32_t)(sizeof params / sizeof params[0]) - 1;
    return params;
}

/* Every note on an op's semantics, in table order; *count gets how many. */
static inline const berth_op_note_desc *berth_op_notes(uint32_t *count) {
    static const berth_op_note_desc notes[] = {
#define BERTH_NOTE(ID, TEXT) {BERTH_OP_##ID, TEXT},
#include "berth/ops.def"
        {BERTH_OP_UNKNOWN, NULL}};
    *count = (uint32_t)(sizeof notes / sizeof notes[0]) - 1;
    return notes;
}

/* The id of an op name, or BERTH_OP_UNKNOWN. */
static inline berth_op_id berth_op_find(const char *name) {
    const berth_op_desc *t = berth_op_table();
    if (!name) return BERTH_OP_UNKNOWN;
    for (int i = 0; i < BERTH_OP_COUNT; i++)
        if (!strcmp(t[i].name, name)) return (berth_op_id)i;
    return BERTH_OP_UNKNOWN;
}

/* The option `key` of op `id`, or NULL if the table does not list it. */
static inline const berth_op_attr_desc *berth_op_attr(berth_op_id id, const char *key) {
    uint32_t n;
    const berth_op_attr_desc *a = berth_op_attrs(&n);
    for (uint32_t i = 0; i < n; i++)
        if (a[i].op == id && !strcmp(a[i].key, key)) return &a[i];
    return NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* BERTH_OPS_H */
