/* Running the op cases of op_cases.h on a module. Tolerance for f32
 * outputs is the op contract's for the case's op (berth_op_tol in
 * berth/ops.h): |found - expected| <= atol + rtol * |expected|, NaN only
 * for NaN and an infinity only for itself; integer and boolean outputs
 * must be exact. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/ops.h"
#include "op_cases.h"

/* Whether g is the expected value w within the tolerance. */
static int f32_matches(float g, double w, double atol, double rtol) {
    if (isnan(w) || isnan(g)) return isnan(w) && isnan(g);
    if (isinf(w) || isinf(g)) return (double)g == w;
    return fabs((double)g - w) <= atol + rtol * fabs(w);
}

const char *oc_case_op(size_t i) {
    oc_case *c = calloc(1, sizeof *c);
    if (!c) return "?";
    tg_init(&c->g);
    oc_table[i].build(c, oc_table[i].arg);
    /* op names are static strings of the table's builders */
    const char *op = c->g.n_nodes ? c->g.nodes[c->g.n_nodes - 1].op : "?";
    free(c);
    return op;
}

#define POISON 0xff

/* Output o of run 1 (got) against the expected values: elements never
 * written (still the poison), non-finite where a finite value is
 * expected, and wrong ones; the first of each and the largest error. */
static int check_output(const oc_case *c, uint32_t k, const void *got, oc_outcome *out) {
    const berth_operand *o = &c->g.ops[c->g.outs[k]];
    size_t n = h_numel(o), unwritten = 0, nonfinite = 0, wrong = 0, fu = 0, fn = 0, fw = 0;
    double worst = 0.0, atol, rtol;
    size_t at = 0;
    char detail[160] = "";
    berth_op_tol(berth_op_find(c->g.nodes[c->g.n_nodes - 1].op), &atol, &rtol);
    for (size_t i = 0; i < n; i++) {
        double want, diff;
        if (c->want_f[k]) {
            float g = ((const float *)got)[i];
            uint32_t bits;
            memcpy(&bits, &g, sizeof bits);
            want = c->want_f[k][i];
            if (bits == 0xffffffffu && !isnan(want)) {
                if (unwritten++ == 0) fu = i;
                diff = INFINITY;
            } else if (f32_matches(g, want, atol, rtol) ||
                       (c->want_alt[k] && f32_matches(g, c->want_alt[k][i], atol, rtol))) {
                continue;
            } else if (!isfinite(g) && isfinite(want)) {
                if (nonfinite++ == 0) fn = i;
                diff = INFINITY;
            } else {
                diff = isnan(want) || isnan(g) || isinf(want) ? INFINITY : fabs((double)g - want);
                if (wrong++ == 0) fw = i;
            }
            if (!(diff <= worst)) {
                worst = diff, at = i;
                snprintf(detail, sizeof detail, "found %.9g, expected %.9g", (double)g, want);
            }
        } else {
            int64_t g = mh_int_at(o->dtype, got, i), w = c->want_i[k][i];
            if (g == w) continue;
            if (wrong++ == 0) fw = i;
            diff = fabs((double)g - (double)w);
            if (diff > worst) {
                worst = diff, at = i;
                snprintf(detail, sizeof detail, "found %lld, expected %lld", (long long)g, (long long)w);
            }
        }
    }
    if (!unwritten && !nonfinite && !wrong) return 1;
    int len = snprintf(out->why, sizeof out->why, "output '%s' (%zu elements):", o->name, n);
    if (unwritten)
        len += snprintf(out->why + len, sizeof out->why - (size_t)len, " %zu never written (first [%zu]);", unwritten, fu);
    if (nonfinite)
        len += snprintf(out->why + len, sizeof out->why - (size_t)len, " %zu not finite where finite expected (first [%zu]);",
                        nonfinite, fn);
    if (wrong)
        len += snprintf(out->why + len, sizeof out->why - (size_t)len, " %zu wrong (first [%zu]);", wrong, fw);
    snprintf(out->why + len, sizeof out->why - (size_t)len, " largest error %.3g at [%zu] (%s)", worst, at, detail);
    out->worst = worst;
    out->worst_index = at;
    return 0;
}

void oc_run_case(const mh_module *m, size_t idx, oc_outcome *out) {
    memset(out, 0, sizeof *out);
    const oc_entry *e = &oc_table[idx];
    oc_case *c = calloc(1, sizeof *c);
    void *outs[2][TG_MAX_IO] = {{0}};
    berth_plan *p = NULL;
    if (!c) {
        out->result = OC_FAILED;
        snprintf(out->why, sizeof out->why, "out of memory");
        return;
    }
    tg_init(&c->g);
    e->build(c, e->arg);
    berth_graph_desc d = tg_desc(&c->g);
    berth_error err = {{0}};
    out->result = OC_PASSED;
    for (uint32_t i = 0; i < d.n_nodes && out->result == OC_PASSED; i++) {
        berth_status st = mh_supports(m, &d, i, &err);
        if (st == BERTH_ERR_UNSUPPORTED) {
            snprintf(out->why, sizeof out->why, "%s: %s", d.nodes[i].op, err.msg);
            out->result = OC_UNSUPPORTED;
        } else if (st != BERTH_OK) {
            snprintf(out->why, sizeof out->why, "%s answered status %d: %s",
                     mh_has_supports_node(m->be) ? "supports_node" : "supports_op", (int)st, err.msg);
            out->result = OC_FAILED;
        }
    }
    if (out->result != OC_PASSED) goto done;
    berth_status st = m->be->plan(m->dev, NULL, &d, &p, &err);
    if (st != BERTH_OK) {
        snprintf(out->why, sizeof out->why, "plan: status %d: %s", (int)st, err.msg);
        out->result = OC_FAILED;
        goto done;
    }
    berth_tensor ti[TG_MAX_IO], to[TG_MAX_IO];
    for (uint32_t i = 0; i < c->g.n_ins; i++) ti[i] = h_tensor(&c->g.ops[c->g.ins[i]], (void *)c->in[i]);
    for (int r = 0; r < 2; r++) {
        for (uint32_t i = 0; i < c->g.n_outs; i++) {
            size_t bytes = h_bytes(&c->g.ops[c->g.outs[i]]);
            if (!(outs[r][i] = malloc(bytes + 8))) {
                snprintf(out->why, sizeof out->why, "out of memory");
                out->result = OC_FAILED;
                goto done;
            }
            memset(outs[r][i], POISON, bytes + 8);
            to[i] = h_tensor(&c->g.ops[c->g.outs[i]], outs[r][i]);
        }
        if ((st = m->be->run(p, ti, c->g.n_ins, to, c->g.n_outs, &err)) != BERTH_OK) {
            snprintf(out->why, sizeof out->why, "run %d: status %d: %s", r + 1, (int)st, err.msg);
            out->result = OC_FAILED;
            goto done;
        }
    }
    for (uint32_t i = 0; i < c->g.n_outs && out->result == OC_PASSED; i++)
        if (!check_output(c, i, outs[0][i], out)) out->result = OC_FAILED;
    for (uint32_t i = 0; i < c->g.n_outs && out->result == OC_PASSED; i++) {
        const berth_operand *o = &c->g.ops[c->g.outs[i]];
        size_t bytes = h_bytes(o);
        if (memcmp(outs[0][i], outs[1][i], bytes) == 0) continue;
        size_t b = 0;
        while (((const uint8_t *)outs[0][i])[b] == ((const uint8_t *)outs[1][i])[b]) b++;
        size_t es = h_esize(o->dtype) ? h_esize(o->dtype) : 1;
        snprintf(out->why, sizeof out->why, "output '%s': the second run differs from the first (first at element [%zu])",
                 o->name, b / es);
        out->result = OC_FAILED;
    }
done:
    if (p) m->be->free_plan(p);
    for (int r = 0; r < 2; r++)
        for (uint32_t i = 0; i < TG_MAX_IO; i++) free(outs[r][i]);
    free(c);
}

size_t oc_run_all(const mh_module *m, oc_result *results) {
    size_t n[3] = {0, 0, 0};
    for (size_t i = 0; i < oc_count; i++) {
        oc_outcome o;
        oc_run_case(m, i, &o);
        results[i] = o.result;
        n[results[i]]++;
        if (results[i] == OC_UNSUPPORTED) fprintf(stderr, "unsupported: %s (%s)\n", oc_table[i].name, o.why);
        if (results[i] == OC_FAILED) fprintf(stderr, "FAILED: %s: %s\n", oc_table[i].name, o.why);
    }
    fprintf(stderr, "module %s: %zu passed, %zu unsupported, %zu failed of %zu cases\n", m->be->name, n[OC_PASSED],
           n[OC_UNSUPPORTED], n[OC_FAILED], oc_count);
    size_t e[3] = {0, 0, 0};
    for (size_t i = 0; i < oc_count; i++)
        if (!strncmp(oc_table[i].name, "edge ", 5)) e[results[i]]++;
    fprintf(stderr, "module %s: edge values: %zu passed, %zu unsupported, %zu failed of %zu cases\n", m->be->name,
            e[OC_PASSED], e[OC_UNSUPPORTED], e[OC_FAILED], e[0] + e[1] + e[2]);
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
