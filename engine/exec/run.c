/* Running a batch: check the inputs, pick the bucket, pad, run, trim.
 * Once the bucket's plan exists and the caller's outputs have grown, this
 * path allocates nothing: every buffer it touches lives in the plan slot. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "bucket.h"
#include "dtype.h"
#include "executor_internal.h"
#include "util.h"

/* The backend ABI promises a backend that every tensor's data is aligned
 * to its element size (a static input is handed over as given), so a
 * caller's buffer that is not is refused, naming it and its address's
 * alignment. Packed 4-bit types need only byte alignment. */
static int aligned(const berth_tensor *t, berth_error *err, const char *what, const char *name) {
    size_t esz = berth_dtype_bits(t->dtype) / 8;
    if (!t->data || esz <= 1 || (uintptr_t)t->data % esz == 0) return 1;
    uintptr_t a = (uintptr_t)t->data;
    size_t align = 1;
    while (!(a & align)) align <<= 1;
    berth_errorf(err, "%s '%s': data at %p is aligned to %zu byte%s; %s elements need %zu", what,
                 name, t->data, align, align == 1 ? "" : "s", berth_dtype_name(t->dtype), esz);
    return 0;
}

/* Inputs are checked here, before the backend sees them, with messages
 * that name the input and the dim. */
static berth_status check_inputs(const lane *ln, int64_t *asked, const berth_tensor *in, uint32_t n,
                                 berth_error *err) {
    const berth_graph *g = ln->g;
    if (n != g->n_inputs) {
        berth_errorf(err, "%s takes %u inputs, %u given", g->path, g->n_inputs, n);
        return BERTH_ERR_INVALID;
    }
    for (uint32_t s = 0; s < g->n_syms; s++) asked[s] = 0;
    for (uint32_t i = 0; i < n; i++) {
        const bg_value *v = &g->values[g->inputs[i]];
        const berth_tensor *t = &in[i];
        if (t->dtype != v->dtype || t->rank != v->rank) {
            berth_errorf(err, "input '%s': expected %s of rank %u, found %s of rank %u", v->name,
                         berth_dtype_name(v->dtype), v->rank, berth_dtype_name(t->dtype), t->rank);
            return BERTH_ERR_INVALID;
        }
        int64_t elems = 1;
        int ok = 1;
        for (uint32_t d = 0; d < v->rank; d++) {
            int64_t got = t->dims[d];
            const bg_dim *want = &v->dims[d];
            if (want->sym < 0 && got != want->value) {
                berth_errorf(err, "input '%s' dim %u: expected %lld, found %lld", v->name, d,
                             (long long)want->value, (long long)got);
                return BERTH_ERR_INVALID;
            }
            if (want->sym >= 0) {
                const bg_sym *sym = &g->syms[want->sym];
                if (got < 1 || got > sym->max) {
                    berth_errorf(err, "input '%s' dim %u (%s): expected 1 to %lld, found %lld",
                                 v->name, d, sym->name, (long long)sym->max, (long long)got);
                    return BERTH_ERR_INVALID;
                }
                int64_t *a = &asked[want->sym];
                if (*a && *a != got) {
                    berth_errorf(err, "input '%s' dim %u gives %s=%lld, but an earlier input gave %lld",
                                 v->name, d, sym->name, (long long)got, (long long)*a);
                    return BERTH_ERR_INVALID;
                }
                *a = got;
            }
            elems = berth_mul_checked(elems, got, &ok);
        }
        size_t need = berth_dtype_bytes(t->dtype, (uint64_t)elems, &ok);
        if (!ok || t->bytes != need || (need && !t->data)) {
            berth_errorf(err, "input '%s': %zu bytes given, its shape needs %zu", v->name, t->bytes,
                         need);
            return BERTH_ERR_INVALID;
        }
        if (!aligned(t, err, "input", v->name)) return BERTH_ERR_INVALID;
    }
    return BERTH_OK;
}

static berth_status check_indices(const berth_tensor *t, const struct index_check *c,
                                  const berth_graph *g, berth_error *err) {
    size_t n = t->bytes / (berth_dtype_bits(t->dtype) / 8);
    for (size_t i = 0; i < n; i++) {
        int64_t v;
        switch (t->dtype) {
        case BERTH_DTYPE_I32: v = ((const int32_t *)t->data)[i]; break;
        case BERTH_DTYPE_U32: v = ((const uint32_t *)t->data)[i]; break;
        case BERTH_DTYPE_I64: v = ((const int64_t *)t->data)[i]; break;
        default: return BERTH_OK; /* inference admits only these index types */
        }
        if (v < -c->bound || v >= c->bound) {
            berth_errorf(err, "input '%s' element %zu is %lld, outside [%lld, %lld) for the %s at node '%s'",
                         g->values[g->inputs[c->input]].name, i, (long long)v, (long long)-c->bound,
                         (long long)c->bound, c->op, c->node);
            return BERTH_ERR_INVALID;
        }
    }
    return BERTH_OK;
}

static void no_bucket_error(const lane *ln, const int64_t *asked_dims, berth_error *err) {
    const berth_graph *g = ln->g;
    char asked[256];
    size_t o = 0;
    for (uint32_t s = 0; s < g->n_syms && o < sizeof asked; s++)
        o += (size_t)snprintf(asked + o, sizeof asked - o, "%s%s=%lld", s ? " " : "", g->syms[s].name,
                              (long long)asked_dims[s]);
    berth_errorf(err, "no bucket of stage '%s' holds %s", ln->stage ? ln->stage : "(none)", asked);
}

/* Grow a caller's output buffer; only the first run of a bucket (or a
 * larger batch) reaches realloc. */
static berth_status ensure_capacity(berth_tensor *t, size_t bytes, berth_error *err) {
    if (t->capacity >= bytes && t->data) return BERTH_OK;
    void *p = realloc(t->data, bytes ? bytes : 1);
    if (!p) {
        berth_errorf(err, "out of memory growing an output to %zu bytes", bytes);
        return BERTH_ERR_NOMEM;
    }
    t->data = p;
    t->capacity = bytes;
    return BERTH_OK;
}

/* Each backend's part in order; between them, crossing tensors wait in
 * the slot's host buffers. The caller holds ex->lock. */
static berth_status run_steps(berth_executor *ex, plan_slot *s, berth_error *err) {
    for (uint32_t i = 0; i < s->n_steps; i++) {
        plan_step *ps = &s->steps[i];
        const berth_backend *be = ex->be[ps->backend].mod.be;
        if (ps->in_from)
            for (uint32_t j = 0; j < ps->n_in; j++)
                if (ps->in_from[j] >= 0) ps->in[j] = s->in_view[ps->in_from[j]];
        uint64_t t0 = berth_now_ns();
        berth_backend_msg_reset(err);
        berth_status st = be->run(ps->plan, ps->in, ps->n_in, ps->out, ps->n_out, err);
        st = berth_backend_result(st, be->name, "run", err, err);
        ps->last_ns = berth_now_ns() - t0;
        if (st != BERTH_OK) {
            berth_step_error(s, i, err);
            return st;
        }
    }
    /* Outputs that shape folding made constant are the host's to write:
     * a backend need not touch them, and whatever it left is replaced. */
    const berth_graph_desc *d = &s->spec->desc;
    for (uint32_t o = 0; o < d->n_outputs; o++) {
        const berth_operand *op = &d->operands[d->outputs[o]];
        if (op->kind == BERTH_OPERAND_CONSTANT && op->data && op->bytes == s->out_full[o].bytes)
            memcpy(s->out_full[o].data, op->data, op->bytes);
    }
    /* A graph output named twice was written once, to the first. */
    if (s->out_src)
        for (uint32_t o = 0; o < s->spec->desc.n_outputs; o++)
            if (s->out_src[o] != o)
                memcpy(s->out_full[o].data, s->out_full[s->out_src[o]].data, s->out_full[o].bytes);
    return BERTH_OK;
}

/* The first input dim bound to dyn dim k, for messages. */
static void padded_input(const lane *ln, uint32_t k, uint32_t *input, uint32_t *dim) {
    for (uint32_t i = 0; i < ln->g->n_inputs; i++)
        for (uint32_t d = 0; d < ln->in_rank[i]; d++)
            if (ln->in_sym[i * BERTH_MAX_RANK + d] == (int32_t)k) {
                *input = i;
                *dim = d;
                return;
            }
    *input = *dim = 0;
}

/* The dims a run returns. When no dyn dim was padded, the bucket's.
 * Otherwise what the graph's own shape inference gives at the asked
 * values, which is what an unpadded run returns: a strided window gives
 * floor((n - k) / s) + 1 frames, never the bucket's count scaled. The
 * result is kept for the last asked values, so a run that repeats them
 * only compares; new values infer again in the slot's arena, which
 * allocates only if they need more than the bucket's own inference did
 * (berth_slot_build sizes it). Each output is then the leading box of
 * the bucket's output. */
static berth_status trim_dims(const lane *ln, plan_slot *s, uint32_t b, const int64_t *asked, int *padded,
                              berth_error *err) {
    const berth_graph *g = ln->g;
    const int64_t *bv = ln->bucket_vals + (size_t)b * g->n_syms;
    int same = 1;
    *padded = 0;
    for (uint32_t k = 0; k < g->n_syms; k++) {
        /* a dyn dim no input carries is not padded */
        s->trim_want[k] = asked[k] ? asked[k] : bv[k];
        *padded |= s->trim_want[k] != bv[k];
        same &= s->trim_want[k] == s->trim_asked[k];
    }
    if (!*padded || same) return BERTH_OK;
    berth_error e;
    if (berth_specialize_shapes(g, s->trim_want, s->trim_arena, s->trim_rank, s->trim_dims, &e)) {
        memset(s->trim_asked, 0, sizeof *s->trim_asked * g->n_syms);
        uint32_t k = 0, input, dim;
        while (k + 1 < g->n_syms && s->trim_want[k] == bv[k]) k++;
        padded_input(ln, k, &input, &dim);
        berth_errorf(err, "input '%s' dim %u (%s): %lld padded to the bucket's %lld, but the graph has no shape at %lld: %s",
                     g->values[g->inputs[input]].name, dim, g->syms[k].name, (long long)s->trim_want[k],
                     (long long)bv[k], (long long)s->trim_want[k], e.msg);
        return BERTH_ERR_INVALID;
    }
    for (uint32_t o = 0; o < g->n_outputs; o++) {
        const berth_tensor *full = &s->out_full[o];
        const int64_t *dims = &s->trim_dims[(size_t)o * BERTH_MAX_RANK];
        uint32_t d = 0;
        while (s->trim_rank[o] == full->rank && d < full->rank && dims[d] <= full->dims[d]) d++;
        if (s->trim_rank[o] == full->rank && d == full->rank) continue;
        /* a shape rule that grows as its input shrinks: a bug, and an
         * error here rather than a copy past the bucket's buffer */
        memset(s->trim_asked, 0, sizeof *s->trim_asked * g->n_syms);
        if (s->trim_rank[o] != full->rank)
            berth_errorf(err, "output '%s': shape inference at the asked sizes gives rank %u, the bucket's plan rank %u",
                         g->values[g->outputs[o]].name, s->trim_rank[o], full->rank);
        else
            berth_errorf(err, "output '%s' dim %u: shape inference at the asked sizes gives %lld, more than the bucket's %lld",
                         g->values[g->outputs[o]].name, d, (long long)dims[d], (long long)full->dims[d]);
        return BERTH_ERR_INTERNAL;
    }
    memcpy(s->trim_asked, s->trim_want, sizeof *s->trim_asked * g->n_syms);
    return BERTH_OK;
}

/* A padded run whose padding can reach an output's kept values (the
 * specialization's pad_reach) says so once per plan, output and dyn dim,
 * naming the output, the padded input and dim, and the first node that
 * mixes padded positions in. The dims returned are exact either way. */
static void warn_padding(berth_executor *ex, const lane *ln, plan_slot *s, uint32_t b) {
    const berth_graph *g = ln->g;
    const berth_spec *sp = s->spec;
    if (!sp->pad_reach || sp->n_syms != g->n_syms) return;
    const int64_t *bv = ln->bucket_vals + (size_t)b * g->n_syms;
    for (uint32_t o = 0; o < g->n_outputs; o++)
        for (uint32_t k = 0; k < g->n_syms && k < 64; k++) {
            const berth_pad_reach *pr = &sp->pad_reach[(size_t)o * g->n_syms + k];
            uint64_t bit = UINT64_C(1) << k;
            if (s->trim_want[k] == bv[k] || !pr->node || (s->pad_warned[o] & bit)) continue;
            s->pad_warned[o] |= bit;
            uint32_t input, dim;
            padded_input(ln, k, &input, &dim);
            berth_logf(&ex->log, BERTH_LOG_WARN,
                       "output '%s' may differ from an unpadded run: input '%s' dim %u (%s) was padded "
                       "from %lld to the bucket's %lld, and node '%s' (%s, %s:%u) %s; its dims are exact",
                       g->values[g->outputs[o]].name, g->values[g->inputs[input]].name, dim, g->syms[k].name,
                       (long long)s->trim_want[k], (long long)bv[k], pr->node, pr->op,
                       g->path ? g->path : "graph", pr->line, pr->why);
        }
}

static berth_status run(berth_context *c, uint32_t l, const berth_tensor *inputs,
                        uint32_t n_inputs, berth_tensor *outputs, uint32_t n_outputs,
                        uint32_t *bucket, berth_error *err) {
    berth_executor *ex = c->ex;
    if (l >= ex->n_lanes) {
        berth_errorf(err, "no lane %u (the executor has %u)", l, ex->n_lanes);
        return BERTH_ERR_INVALID;
    }
    lane *ln = &ex->lanes[l];
    const berth_graph *g = ln->g;
    if (n_outputs != g->n_outputs) {
        berth_errorf(err, "%s has %u outputs, %u given", g->path, g->n_outputs, n_outputs);
        return BERTH_ERR_INVALID;
    }
    int64_t *asked = c->asked[l];
    berth_status st = check_inputs(ln, asked, inputs, n_inputs, err);
    if (st != BERTH_OK) return st;
    /* An output buffer the caller brings (the engine grows it with
     * realloc, which keeps any alignment) must be aligned as an input is. */
    for (uint32_t o = 0; o < n_outputs; o++)
        if (!aligned(&outputs[o], err, "output", g->values[g->outputs[o]].name)) return BERTH_ERR_INVALID;
    int32_t b = berth_bucket_choose(ln->bucket_vals, ln->n_buckets, g->n_syms, asked, g->n_inputs,
                                    ln->in_rank, ln->in_dims, ln->in_sym);
    if (b < 0) {
        no_bucket_error(ln, asked, err);
        return BERTH_ERR_INVALID;
    }
    plan_slot *s = &c->slots[l][b];
    if ((st = berth_context_build(c, l, (uint32_t)b, err)) != BERTH_OK) return st;
    for (uint32_t k = 0; k < s->n_index_checks; k++) {
        st = check_indices(&inputs[s->index_checks[k].input], &s->index_checks[k], g, err);
        if (st != BERTH_OK) return st;
    }
    /* Before the backend runs: sizes the graph cannot take stop here. */
    int padded = 0;
    if ((st = trim_dims(ln, s, (uint32_t)b, asked, &padded, err)) != BERTH_OK) return st;
    for (uint32_t i = 0; i < n_inputs; i++) {
        berth_tensor *pad = &s->in_pad[i];
        if (!pad->data) {
            s->in_view[i] = inputs[i]; /* static shape: no copy */
            continue;
        }
        /* Inputs of packed 4-bit types are refused by the graph checker,
         * so every padded dtype has whole-byte elements. */
        size_t esz = berth_dtype_bits(pad->dtype) / 8;
        if (memcmp(pad->dims, inputs[i].dims, sizeof(int64_t) * pad->rank) != 0)
            berth_fill(pad->data, pad->dtype, pad->bytes / esz, ln->pad[i]);
        berth_pad_copy(pad->data, pad->dims, inputs[i].data, inputs[i].dims, pad->rank, esz);
        s->in_view[i] = *pad;
    }
    pthread_mutex_lock(&ex->lock);
    st = run_steps(ex, s, err);
    pthread_mutex_unlock(&ex->lock);
    if (st != BERTH_OK) return st;

    if (padded) warn_padding(ex, ln, s, (uint32_t)b);
    for (uint32_t o = 0; o < n_outputs; o++) {
        const berth_tensor *full = &s->out_full[o];
        berth_tensor *t = &outputs[o];
        t->dtype = full->dtype;
        t->rank = full->rank;
        const int64_t *dims = padded ? &s->trim_dims[(size_t)o * BERTH_MAX_RANK] : full->dims;
        size_t elems = 1;
        for (uint32_t d = 0; d < full->rank; d++) {
            t->dims[d] = dims[d];
            elems *= (size_t)dims[d];
        }
        int ok = 1;
        size_t bytes = berth_dtype_bytes(full->dtype, elems, &ok);
        st = ensure_capacity(t, bytes, err);
        if (st != BERTH_OK) return st;
        t->bytes = bytes;
        size_t esz = berth_dtype_bits(full->dtype) / 8;
        if (bytes == full->bytes) memcpy(t->data, full->data, bytes);
        else berth_trim_copy(t->data, t->dims, full->data, full->dims, full->rank, esz ? esz : 1);
    }
    if (bucket) *bucket = (uint32_t)b;
    return c->ref ? berth_verify_run(c, l, (uint32_t)b, inputs, n_inputs, outputs, n_outputs, err) : BERTH_OK;
}

berth_status berth_executor_run(berth_executor *ex, uint32_t l, const berth_tensor *inputs,
                                uint32_t n_inputs, berth_tensor *outputs, uint32_t n_outputs,
                                uint32_t *bucket, berth_error *err) {
    berth_status st = berth_executor_enter(ex, "berth_executor_run", err);
    if (st != BERTH_OK) return st;
    st = run(ex->ctx, l, inputs, n_inputs, outputs, n_outputs, bucket, err);
    berth_executor_leave(ex);
    return st;
}

berth_status berth_context_run(berth_context *c, uint32_t l, const berth_tensor *inputs,
                               uint32_t n_inputs, berth_tensor *outputs, uint32_t n_outputs,
                               uint32_t *bucket, berth_error *err) {
    berth_status st = berth_context_enter(c, "berth_context_run", err);
    if (st != BERTH_OK) return st;
    st = run(c, l, inputs, n_inputs, outputs, n_outputs, bucket, err);
    berth_context_leave(c);
    return st;
}

void berth_tensor_release(berth_tensor *t) {
    free(t->data);
    memset(t, 0, sizeof *t);
}
