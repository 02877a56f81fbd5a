/* Helpers for the specialization tests: parse .webnn text, specialize it
 * for given dyn values, and describe operands with a formatter of the
 * test's own (so expectations never come from the code under test). */
#ifndef SPEC_TEST_UTIL_H
#define SPEC_TEST_UTIL_H

#include <stdint.h>

#include "graph.h"
#include "specialize.h"

/* A parsed graph and its specialization (NULL spec on failure: err says why). */
typedef struct spec_case {
    berth_graph *g;
    berth_spec *s;
    uint32_t *weight_ids; /* consts read from weights: 0, 1, ... in order */
    berth_error err;
} spec_case;

/* Parses `text` (a parse failure is a test failure) and specializes it. */
int spec_open(spec_case *c, const char *text, const int64_t *syms);
void spec_close(spec_case *c);

/* "f32[2, 3]" for the operand of value `name`, "dropped" if it has none,
 * "missing" if the graph has no such value. */
const char *spec_shape(const spec_case *c, const char *name);
/* The operand of value `name`, or NULL. */
const berth_operand *spec_operand(const spec_case *c, const char *name);
/* Number of desc nodes whose op is `op`. */
int spec_count_op(const berth_spec *s, const char *op);

/* Wraps node lines in a v2 graph with the given inputs/consts/outputs
 * blocks; returns a static buffer. */
const char *spec_graph(const char *inputs, const char *consts, const char *nodes, const char *outputs);

#endif
