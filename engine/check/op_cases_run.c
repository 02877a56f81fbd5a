/* Running the op cases of op_cases.h on a module. Tolerance for f32
 * outputs is the conformance run's: |found - expected| <= 1e-4 + 1e-3 *
 * |expected|; integer and boolean outputs must be exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_cases.h"

#define OC_RTOL 1e-3
#define OC_ATOL 1e-4

static oc_result run_case(const mh_module *m, const oc_entry *e, char *why, size_t why_cap) {
    oc_case *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, why_cap, "out of memory");
        return OC_FAILED;
    }
    tg_init(&c->g);
    e->build(c, e->arg);
    oc_result r = OC_PASSED;
    berth_graph_desc d = tg_desc(&c->g);
    berth_error err = {{0}};
    for (uint32_t i = 0; i < d.n_nodes && r == OC_PASSED; i++) {
        berth_status st = mh_supports(m, &d, i, &err);
        if (st == BERTH_ERR_UNSUPPORTED) {
            snprintf(why, why_cap, "%s: %s", d.nodes[i].op, err.msg);
            r = OC_UNSUPPORTED;
        } else if (st != BERTH_OK) {
            snprintf(why, why_cap, "%s answered status %d: %s",
                     mh_has_supports_node(m->be) ? "supports_node" : "supports_op", (int)st, err.msg);
            r = OC_FAILED;
        }
    }
    void *outs[TG_MAX_IO] = {0};
    if (r == OC_PASSED) {
        for (uint32_t i = 0; i < c->g.n_outs; i++) {
            const berth_operand *o = &c->g.ops[c->g.outs[i]];
            outs[i] = malloc(h_bytes(o) + 8);
            memset(outs[i], 0xff, h_bytes(o) + 8); /* NaN or -1: an output never written shows */
        }
        berth_status st = mh_run(m, &c->g, NULL, (void *const *)c->in, outs, &err);
        if (st != BERTH_OK) {
            snprintf(why, why_cap, "plan or run: status %d: %s", (int)st, err.msg);
            r = OC_FAILED;
        }
    }
    for (uint32_t i = 0; i < c->g.n_outs && r == OC_PASSED; i++) {
        const berth_operand *o = &c->g.ops[c->g.outs[i]];
        size_t bad = c->want_f[i] ? mh_compare_f32(e->name, o->name, outs[i], c->want_f[i], h_numel(o), OC_RTOL, OC_ATOL)
                                  : mh_compare_int(e->name, o->name, o->dtype, outs[i], c->want_i[i], h_numel(o));
        if (bad) {
            snprintf(why, why_cap, "output '%s': %zu wrong values (first shown above)", o->name, bad);
            r = OC_FAILED;
        }
    }
    for (uint32_t i = 0; i < c->g.n_outs; i++) free(outs[i]);
    free(c);
    return r;
}

size_t oc_run_all(const mh_module *m, oc_result *results) {
    size_t n[3] = {0, 0, 0};
    for (size_t i = 0; i < oc_count; i++) {
        char why[BERTH_ERROR_CAP + 64] = "";
        results[i] = run_case(m, &oc_table[i], why, sizeof why);
        n[results[i]]++;
        if (results[i] == OC_UNSUPPORTED) fprintf(stderr, "unsupported: %s (%s)\n", oc_table[i].name, why);
        if (results[i] == OC_FAILED) fprintf(stderr, "FAILED: %s: %s\n", oc_table[i].name, why);
    }
    fprintf(stderr, "module %s: %zu passed, %zu unsupported, %zu failed of %zu cases\n", m->be->name, n[OC_PASSED],
           n[OC_UNSUPPORTED], n[OC_FAILED], oc_count);
    return n[OC_FAILED];
}

size_t oc_missing(const oc_result *results, const char *const *minimum, size_t n_minimum) {
    size_t missing = 0;
    int all = n_minimum == 1 && !strcmp(minimum[0], "*");
    for (size_t i = 0; all && i < oc_count; i++)
        if (results[i] != OC_PASSED) {
            fprintf(stderr, "below the minimum: '%s' must pass on this module\n", oc_table[i].name);
            missing++;
        }
    for (size_t k = 0; !all && k < n_minimum; k++) {
        size_t i = 0;
        while (i < oc_count && strcmp(oc_table[i].name, minimum[k])) i++;
        if (i == oc_count) {
            fprintf(stderr, "below the minimum: '%s' is no case of the table\n", minimum[k]);
            missing++;
        } else if (results[i] != OC_PASSED) {
            fprintf(stderr, "below the minimum: '%s' must pass on this module\n", minimum[k]);
            missing++;
        }
    }
    return missing;
}

int oc_test_module(mh_module *m, const char *const *minimum, size_t n_minimum) {
    oc_result *results = calloc(oc_count, sizeof *results);
    if (!results) {
        fprintf(stderr, "out of memory\n");
        mh_unload(m);
        return 1;
    }
    size_t failed = oc_run_all(m, results);
    size_t missing = oc_missing(results, minimum, n_minimum);
    free(results);
    mh_unload(m);
    return failed || missing ? 1 : 0;
}
