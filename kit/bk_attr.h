/* The attribute readers shared by the backends (through the kit) and the
 * engine's shape rules: one place that says how a node option of each
 * type is read. Header plus bk_attr.c, which needs nothing but
 * berth/backend.h, so the engine compiles the same source.
 *
 * A reader finds the option by key (arrays indexed by the declared
 * element size), checks its type and writes a message naming the key,
 * the type expected and the type found; it never casts an out-of-range
 * or NaN double to an integer. The message carries no node prefix: the
 * caller adds its own context. */
#ifndef BERTH_BK_ATTR_H
#define BERTH_BK_ATTR_H

#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"

/* Reader policy bits. */
#define BK_ATTR_EXACT 1u /* the type must match exactly (the engine's parser rules);
                            otherwise an integral float reads as an int, an int as a
                            bool, an int as a one-item int list and ints as floats */
#define BK_ATTR_PROSE 2u /* words of the engine's messages: "option 'k' expected an
                            integer, found a number"; otherwise "attribute 'k':
                            expected int, found float" */

typedef struct bk_attrs {
    const berth_attr *at; /* the node's attribute array */
    uint32_t n;
    size_t size; /* element size of the array */
    unsigned flags;
} bk_attrs;

/* The attributes of a node of a graph whose attr_size is `attr_size`. */
static inline bk_attrs bk_node_attrs(const berth_node *node, size_t attr_size, unsigned flags) {
    bk_attrs a = {node->attrs, node->n_attrs, attr_size ? attr_size : sizeof(berth_attr), flags};
    return a;
}

/* The attribute `key`, NULL when absent or of type NULL. */
const berth_attr *bk_attr_find(bk_attrs a, const char *key);
const char *bk_attr_type_name(berth_attr_type t, unsigned flags);

/* Each reader writes `def` (or "absent": -1 counts, UINT32_MAX operand)
 * when the option is missing and returns BERTH_OK; BERTH_ERR_INVALID with
 * the message in *err when it has the wrong type or too many items. */
berth_status bk_attr_int(bk_attrs a, const char *key, int64_t def, int64_t *out, berth_error *err);
berth_status bk_attr_float(bk_attrs a, const char *key, double def, double *out, berth_error *err);
berth_status bk_attr_bool(bk_attrs a, const char *key, int def, int *out, berth_error *err);
berth_status bk_attr_string(bk_attrs a, const char *key, const char *def, const char **out, berth_error *err);
berth_status bk_attr_ints(bk_attrs a, const char *key, int64_t *vals, size_t cap, int *count, berth_error *err);
berth_status bk_attr_floats(bk_attrs a, const char *key, double *vals, size_t cap, int *count, berth_error *err);
/* An operand index below n_operands; *idx UINT32_MAX when absent. */
berth_status bk_attr_operand(bk_attrs a, const char *key, uint32_t n_operands, uint32_t *idx, berth_error *err);

/* A double that is integral and inside int64's range, into *out; 0 for
 * NaN, infinities, fractions and anything past +-2^63. */
int bk_double_to_int64(double d, int64_t *out);

#endif
