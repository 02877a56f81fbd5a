/* Verify: every run also runs on a reference backend ([backend] verify,
 * `berth run --verify cpu`) and the outputs are compared (compare.h).
 *
 * The reference is a second executor on the same config and model with
 * `use` set to the reference: its own upload of the weights, its own
 * plans, one run context paired with each of ours. A run that agrees
 * costs one reference run and one pass over the outputs, so it can stay
 * on in a test environment. A run that does not is an error, never
 * numbers: BERTH_ERR_INTERNAL, naming the output, the errors and the
 * first element outside, and then the first node that diverges. To find
 * it, both backends plan the bucket's graph unfused with every
 * intermediate made an output, run it on the same padded inputs, and the
 * intermediates are compared in graph order. That costs a plan and every
 * intermediate's bytes, once, on the failing run only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "compare.h"
#include "dtype.h"
#include "executor_internal.h"
#include "util.h"

berth_status berth_verify_open(berth_executor *ex, const char *config_path, const berth_open_options *opts,
                               const char *reference, berth_error *err) {
    berth_open_options ro = {.struct_size = sizeof ro, .log = ex->log.fn, .log_ctx = ex->log.ctx,
                             .log_level = ex->log.level, .use = reference, .model = ex->cfg->model};
    if (OPTION_GIVEN(opts, max_memory_bytes)) ro.max_memory_bytes = opts->max_memory_bytes;
    if (OPTION_GIVEN(opts, config_text)) ro.config_text = opts->config_text;
    berth_status st = berth_executor_open_as(config_path, &ro, 0, &ex->ref, err);
    if (st != BERTH_OK) {
        char msg[BERTH_ERROR_CAP];
        snprintf(msg, sizeof msg, "%s", err->msg);
        berth_errorf(err, "verify: the reference backend '%s' did not open: %s", reference, msg);
        return st;
    }
    snprintf(ex->ref_name, sizeof ex->ref_name, "%s", berth_executor_backend(ex->ref));
    ex->verify_atol = ex->cfg->verify_atol;
    ex->verify_rtol = ex->cfg->verify_rtol;
    berth_logf(&ex->log, BERTH_LOG_INFO, "verify: every run is held to '%s' within %g + %g |x|", ex->ref_name,
               ex->verify_atol, ex->verify_rtol);
    return BERTH_OK;
}

/* ---- the first node that diverges ---- */

typedef struct probe {
    berth_spec *spec;
    berth_graph_desc desc; /* the spec's, every VALUE operand a node writes made an output */
    uint32_t *outs;
    berth_tensor *vals;    /* per output of desc */
} probe;

static void probe_free(probe *p) {
    if (p->vals)
        for (uint32_t i = 0; i < p->desc.n_outputs; i++) free(p->vals[i].data);
    free(p->vals);
    free(p->outs);
    berth_spec_free(p->spec);
    memset(p, 0, sizeof *p);
}

/* Plans lane ln's bucket b unfused on e's backend, every intermediate an
 * output, and runs it on `in` (the padded inputs of the failing run). */
static berth_status probe_run(berth_executor *e, const lane *ln, uint32_t b, const berth_tensor *in, probe *p,
                              berth_error *err) {
    memset(p, 0, sizeof *p);
    if (!(p->spec = berth_lane_specialize(ln, b, err))) return BERTH_ERR_INVALID;
    const berth_graph_desc *d = &p->spec->desc;
    p->desc = *d;
    uint32_t n = 0;
    for (uint32_t k = 0; k < d->n_nodes; k++) n += d->nodes[k].n_outputs;
    p->outs = calloc(n + 1, sizeof *p->outs);
    p->vals = calloc(n + 1, sizeof *p->vals);
    if (!p->outs || !p->vals) goto nomem;
    n = 0;
    for (uint32_t k = 0; k < d->n_nodes; k++)
        for (uint32_t j = 0; j < d->nodes[k].n_outputs; j++) {
            uint32_t o = d->nodes[k].outputs[j];
            const berth_operand *op = &d->operands[o];
            if (op->kind != BERTH_OPERAND_VALUE) continue;
            int ok = 1;
            int64_t elems = 1;
            for (uint32_t r = 0; r < op->rank; r++) elems = berth_mul_checked(elems, op->dims[r], &ok);
            berth_tensor *t = &p->vals[n];
            t->dtype = op->dtype;
            t->rank = op->rank;
            memcpy(t->dims, op->dims, sizeof t->dims);
            t->bytes = berth_dtype_bytes(op->dtype, (uint64_t)elems, &ok);
            if (!ok || !(t->data = malloc(t->bytes ? t->bytes : 1))) goto nomem;
            t->capacity = t->bytes;
            p->outs[n++] = o;
        }
    p->desc.outputs = p->outs;
    p->desc.n_outputs = n;
    const exec_backend *be = &e->be[0];
    berth_plan *plan = NULL;
    pthread_mutex_lock(&e->lock);
    berth_backend_msg_reset(err);
    berth_status st = be->mod.be->plan(be->dev, be->w, &p->desc, &plan, err);
    st = berth_backend_result(st, be->mod.be->name, "plan", err, err);
    if (st == BERTH_OK) {
        berth_backend_msg_reset(err);
        st = be->mod.be->run(plan, in, d->n_inputs, p->vals, n, err);
        st = berth_backend_result(st, be->mod.be->name, "run", err, err);
        be->mod.be->free_plan(plan);
    }
    pthread_mutex_unlock(&e->lock);
    return st;
nomem:
    berth_errorf(err, "out of memory holding every intermediate of the bucket");
    return BERTH_ERR_NOMEM;
}

/* Writes into `why` which node diverges first, or why that is not known. */
static void locate(berth_context *c, uint32_t l, uint32_t b, char *why, size_t cap) {
    berth_executor *ex = c->ex;
    if (ex->split || ex->ref->split) {
        snprintf(why, cap, "(the first diverging node is found with [backend] split = off only)");
        return;
    }
    const plan_slot *s = &c->slots[l][b];
    probe mine, ref;
    berth_error err;
    berth_status st = probe_run(ex, &ex->lanes[l], b, s->in_view, &mine, &err);
    if (st == BERTH_OK) st = probe_run(ex->ref, &ex->ref->lanes[l], b, s->in_view, &ref, &err);
    else memset(&ref, 0, sizeof ref);
    if (st != BERTH_OK) {
        snprintf(why, cap, "(the graph run unfused with every intermediate kept failed: %s)", err.msg);
    } else {
        snprintf(why, cap, "; run unfused, every node agrees, so the difference is in a kernel the plan fuses");
        const berth_graph_desc *d = &mine.spec->desc;
        for (uint32_t i = 0; i < mine.desc.n_outputs; i++) {
            berth_diff df;
            if (berth_compare_scaled(&mine.vals[i], &ref.vals[i], ex->verify_atol, ex->verify_rtol, &df)) continue;
            const berth_node *nd = NULL;
            for (uint32_t k = 0; k < d->n_nodes && !nd; k++)
                for (uint32_t j = 0; j < d->nodes[k].n_outputs; j++)
                    if (d->nodes[k].outputs[j] == mine.outs[i]) nd = &d->nodes[k];
            char text[512];
            berth_diff_describe(&df, &ref.vals[i], text, sizeof text);
            snprintf(why, cap, "; the first node to diverge is '%s' (%s), output '%s': %s", nd ? nd->name : "?",
                     nd ? nd->op : "?", d->operands[mine.outs[i]].name, text);
            break;
        }
    }
    probe_free(&mine);
    probe_free(&ref);
}

berth_status berth_verify_run(berth_context *c, uint32_t l, uint32_t b, const berth_tensor *in, uint32_t n_in,
                              const berth_tensor *out, uint32_t n_out, berth_error *err) {
    berth_executor *ex = c->ex;
    const berth_graph *g = ex->lanes[l].g;
    berth_tensor *want = c->ref_out[l];
    berth_status st = berth_context_run(c->ref, l, in, n_in, want, n_out, NULL, err);
    if (st != BERTH_OK) {
        char msg[BERTH_ERROR_CAP];
        snprintf(msg, sizeof msg, "%s", err->msg);
        berth_errorf(err, "verify: the reference backend '%s' failed: %s", ex->ref_name, msg);
        return st;
    }
    for (uint32_t o = 0; o < n_out; o++) {
        const char *name = g->values[g->outputs[o]].name;
        int same = out[o].dtype == want[o].dtype && out[o].rank == want[o].rank &&
                   !memcmp(out[o].dims, want[o].dims, sizeof(int64_t) * out[o].rank);
        berth_diff d;
        if (same && berth_compare(&out[o], &want[o], ex->verify_atol, ex->verify_rtol, &d)) continue;
        char text[512], where[1024];
        if (same) {
            berth_diff_describe(&d, &want[o], text, sizeof text);
        } else {
            char a[160], r[160];
            berth_shape_text(a, sizeof a, out[o].dtype, out[o].rank, out[o].dims);
            berth_shape_text(r, sizeof r, want[o].dtype, want[o].rank, want[o].dims);
            snprintf(text, sizeof text, "it is %s, the reference's %s", a, r);
        }
        locate(c, l, b, where, sizeof where);
        berth_errorf(err, "verify: output '%s' on '%s' differs from the reference '%s' beyond %g + %g |x|: %s%s",
                     name, ex->be[0].mod.be->name, ex->ref_name, ex->verify_atol, ex->verify_rtol, text, where);
        return BERTH_ERR_INTERNAL;
    }
    return BERTH_OK;
}
