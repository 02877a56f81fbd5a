/* Run contexts: each holds its own plans and run scratch over the
 * executor's one copy of the weights, so several threads can run a
 * deployment at once. The executor's own calls use the first context. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor_internal.h"
#include "util.h"

berth_status berth_context_enter(berth_context *c, const char *verb, berth_error *err) {
    int idle = 0;
    if (atomic_compare_exchange_strong(&c->busy, &idle, 1)) return BERTH_OK;
    if (c == c->ex->ctx)
        berth_errorf(err, "%s: the executor is busy in another call; an executor is one thread's at "
                     "a time (open a run context per thread: berth_context_open)", verb);
    else
        berth_errorf(err, "%s: the run context is busy in another call; a run context is one "
                     "thread's at a time (open one per thread)", verb);
    return BERTH_ERR_INVALID;
}

void berth_context_leave(berth_context *c) { atomic_store(&c->busy, 0); }

berth_status berth_executor_enter(berth_executor *ex, const char *verb, berth_error *err) {
    return berth_context_enter(ex->ctx, verb, err);
}

void berth_executor_leave(berth_executor *ex) { berth_context_leave(ex->ctx); }

berth_status berth_context_add_lane(berth_context *c, uint32_t l, berth_error *err) {
    const lane *ln = &c->ex->lanes[l];
    plan_slot **slots = realloc(c->slots, sizeof *slots * (l + 1));
    if (slots) c->slots = slots;
    int64_t **asked = slots ? realloc(c->asked, sizeof *asked * (l + 1)) : NULL;
    if (asked) c->asked = asked;
    berth_tensor **ref_out = asked ? realloc(c->ref_out, sizeof *ref_out * (l + 1)) : NULL;
    if (ref_out) c->ref_out = ref_out;
    if (!slots || !asked || !ref_out) goto nomem;
    c->slots[l] = calloc(ln->n_buckets ? ln->n_buckets : 1, sizeof **c->slots);
    c->asked[l] = calloc(ln->g->n_syms ? ln->g->n_syms : 1, sizeof **c->asked);
    c->ref_out[l] = calloc(ln->g->n_outputs ? ln->g->n_outputs : 1, sizeof **c->ref_out);
    if (!c->slots[l] || !c->asked[l] || !c->ref_out[l]) {
        free(c->slots[l]);
        free(c->asked[l]);
        free(c->ref_out[l]);
        goto nomem;
    }
    c->n_lanes = l + 1;
    return BERTH_OK;
nomem:
    berth_errorf(err, "out of memory making a run context for lane '%s'", ln->name);
    return BERTH_ERR_NOMEM;
}

void berth_context_free(berth_context *c) {
    if (!c) return;
    berth_executor *ex = c->ex;
    for (uint32_t l = 0; l < c->n_lanes; l++) {
        const lane *ln = &ex->lanes[l];
        for (uint32_t b = 0; b < ln->n_buckets; b++)
            berth_slot_free(ex, &c->slots[l][b], ln->g->n_inputs, ln->g->n_outputs);
        free(c->slots[l]);
        free(c->asked[l]);
        for (uint32_t o = 0; o < ln->g->n_outputs; o++) berth_tensor_release(&c->ref_out[l][o]);
        free(c->ref_out[l]);
    }
    free(c->slots);
    free(c->asked);
    free(c->ref_out);
    /* The reference executor's own context is closed with it. */
    if (c->ref && c->ref != ex->ref->ctx) berth_context_close(c->ref);
    free(c);
}

berth_status berth_context_open(berth_executor *ex, berth_context **out, berth_error *err) {
    *out = NULL;
    berth_context *c = calloc(1, sizeof *c);
    if (!c) {
        berth_errorf(err, "out of memory making a run context");
        return BERTH_ERR_NOMEM;
    }
    c->ex = ex;
    atomic_init(&c->busy, 0);
    berth_status st = BERTH_OK;
    /* With verify, a context of the reference runs beside this one; the
     * executor's own (the first) pairs with the reference's own. */
    if (ex->ref) {
        if (!ex->ctx) c->ref = ex->ref->ctx;
        else if ((st = berth_context_open(ex->ref, &c->ref, err)) != BERTH_OK) {
            free(c);
            return st;
        }
    }
    pthread_mutex_lock(&ex->lock);
    for (uint32_t l = 0; l < ex->n_lanes && st == BERTH_OK; l++) st = berth_context_add_lane(c, l, err);
    if (st == BERTH_OK) {
        /* after the executor's own, which stays first */
        berth_context **at = &ex->ctx;
        while (*at) at = &(*at)->next;
        *at = c;
        ex->n_contexts++;
    } else {
        berth_context_free(c);
        c = NULL;
    }
    pthread_mutex_unlock(&ex->lock);
    *out = c;
    return st;
}

void berth_context_close(berth_context *c) {
    if (!c) return;
    berth_executor *ex = c->ex;
    pthread_mutex_lock(&ex->lock);
    for (berth_context **at = &ex->ctx; *at; at = &(*at)->next)
        if (*at == c) {
            *at = c->next;
            ex->n_contexts--;
            break;
        }
    berth_context_free(c); /* frees its plans: backend calls, under the lock */
    pthread_mutex_unlock(&ex->lock);
}

/* Build (l, b)'s plan in c if it is cold; the claim on c is the caller's. */
berth_status berth_context_build(berth_context *c, uint32_t l, uint32_t b, berth_error *err) {
    plan_slot *s = &c->slots[l][b];
    if (s->n_steps) return BERTH_OK;
    berth_executor *ex = c->ex;
    pthread_mutex_lock(&ex->lock);
    berth_status st = berth_slot_build(ex, &ex->lanes[l], s, b, err);
    pthread_mutex_unlock(&ex->lock);
    return st;
}

berth_status berth_context_prepare(berth_context *c, uint32_t l, uint32_t b, berth_error *err) {
    const berth_executor *ex = c->ex;
    if (l >= ex->n_lanes || b >= ex->lanes[l].n_buckets) {
        berth_errorf(err, "no bucket %u in lane %u", b, l);
        return BERTH_ERR_INVALID;
    }
    const char *verb = c == ex->ctx ? "berth_executor_prepare" : "berth_context_prepare";
    berth_status st = berth_context_enter(c, verb, err);
    if (st != BERTH_OK) return st;
    st = berth_context_build(c, l, b, err);
    berth_context_leave(c);
    return st;
}

int berth_context_is_warm(const berth_context *c, uint32_t l, uint32_t b) {
    return l < c->n_lanes && b < c->ex->lanes[l].n_buckets && c->slots[l][b].n_steps != 0;
}
