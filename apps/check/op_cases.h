/* One table of small op cases, run against every backend module the
 * build produces (tests/<module>/test_module_cases_<module>.c) and by
 * `berth check` on any module. Each
 * case is a graph with its inputs and the outputs it must give, derived
 * by hand or by a plain reference loop in op_cases.c, never by a
 * backend.
 *
 * An f32 output matches within the tolerance the op contract states for
 * the op of the case's last node (berth_op_tol: EXACT, ROUNDED or
 * APPROX); NaN matches NaN only, an infinity the same infinity.
 *
 * A case is unsupported when the module refuses one of its nodes with
 * BERTH_ERR_UNSUPPORTED (supports_node for an ABI 1.1 table, supports_op
 * for a 1.0 one); any other refusal, a failed plan or run, or a wrong
 * value fails it. */
#ifndef BERTH_TEST_OP_CASES_H
#define BERTH_TEST_OP_CASES_H

#include "harness.h"

typedef struct oc_case {
    tgraph g;
    const void *in[TG_MAX_IO];        /* by graph input                     */
    const double *want_f[TG_MAX_IO];  /* by graph output: an f32 output     */
    const int64_t *want_i[TG_MAX_IO]; /*   or an integer one, exactly       */
    /* f32 outputs: a second accepted value per element (NULL: none), the
     * answer with the case's subnormal inputs read as zeros of their
     * sign, which the op contract allows a backend (GPUs flush them). */
    const double *want_alt[TG_MAX_IO];
} oc_case;

typedef struct oc_entry {
    const char *name;
    void (*build)(oc_case *c, const char *arg);
    const char *arg; /* the op, for builders shared by a family */
} oc_entry;

extern const oc_entry oc_table[];
extern const size_t oc_count;

typedef enum oc_result { OC_PASSED, OC_UNSUPPORTED, OC_FAILED } oc_result;

/* What one case gave on a module. Outputs are filled with all-ones bytes
 * (a NaN, or -1) before each run, so an element the module never wrote
 * shows; the plan runs twice and both runs must agree bit for bit. */
typedef struct oc_outcome {
    oc_result result;
    char why[BERTH_ERROR_CAP + 256]; /* unsupported or failed: why, in one line */
    /* a failure in the values of one output: */
    double worst;        /* largest |found - expected| (infinite for a non-finite value) */
    size_t worst_index;  /* where */
} oc_outcome;

/* The op a case is about: its last node's (a multi-node case exercises
 * the op of the node giving its output). */
const char *oc_case_op(size_t i);
/* Runs case i of the table on m (loaded and opened). */
void oc_run_case(const mh_module *m, size_t i, oc_outcome *out);

/* Runs every case on m (loaded and opened) into results[oc_count];
 * prints each case not passed with the reason and one summary line,
 * "module NAME: P passed, U unsupported, F failed of N cases". Returns
 * the number failed. */
size_t oc_run_all(const mh_module *m, oc_result *results);

/* The cases of `minimum` (names; one entry "*" means every case) that
 * did not pass, each printed; an unknown name counts as missing too. */
size_t oc_missing(const oc_result *results, const char *const *minimum, size_t n_minimum);
/* The whole table on an opened module, then the minimum; unloads the
 * module. Returns the test's exit status: 0, or 1 on a failure. */
int oc_test_module(mh_module *m, const char *const *minimum, size_t n_minimum);

#endif
