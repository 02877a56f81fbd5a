/* What an open executor holds and how its warm plans run: memory by
 * backend and by kind, per-node and per-subgraph times, and how a split
 * plan was partitioned. Read-only queries over the executor's state. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "executor_internal.h"
#include "util.h"

/* Adds plan p's bytes by kind to *sum; a module older than ABI 1.2, or
 * one without the slot, or one whose slot fails, counts as `other`. */
static void add_kinds(const berth_backend *be, const berth_plan *p, berth_plan_memory *sum) {
    berth_plan_memory k = {.struct_size = sizeof k};
    berth_error err;
    if (be->abi_version < BERTH_BACKEND_ABI_V1_2 || be->struct_size < BERTH_BACKEND_V1_2_MIN_SIZE || !be->plan_memory ||
        be->plan_memory(p, &k, &err) != BERTH_OK) {
        memset(&k, 0, sizeof k);
        k.other = be->plan_bytes(p);
    }
    sum->estimated |= k.estimated;
    sum->intermediates += k.intermediates;
    sum->scratch += k.scratch;
    sum->io += k.io;
    sum->constants += k.constants;
    sum->records += k.records;
    sum->other += k.other;
}

/* What every context holds, backend k's share; kinds (may be NULL)
 * receives the plans' bytes by kind. */
static void held(const berth_executor *ex, uint32_t k, berth_memory *m, berth_plan_memory *kinds) {
    memset(m, 0, sizeof *m);
    for (uint32_t j = 0; j < ex->n_be; j++)
        if ((k == UINT32_MAX || k == j) && ex->be[j].w)
            m->weights_bytes += ex->be[j].mod.be->weights_bytes(ex->be[j].w);
    for (const berth_context *c = ex->ctx; c; c = c->next)
        for (uint32_t l = 0; l < c->n_lanes; l++)
            for (uint32_t b = 0; b < ex->lanes[l].n_buckets; b++) {
                const plan_slot *s = &c->slots[l][b];
                int mine = 0;
                for (uint32_t i = 0; i < s->n_steps; i++) {
                    const plan_step *st = &s->steps[i];
                    if (k != UINT32_MAX && st->backend != k) continue;
                    mine = 1;
                    m->plans_bytes += ex->be[st->backend].mod.be->plan_bytes(st->plan);
                    if (kinds) add_kinds(ex->be[st->backend].mod.be, st->plan, kinds);
                }
                if (!mine) continue;
                m->plans++;
                /* The engine's buffers are the slot's, not any backend's. */
                if (k == UINT32_MAX) m->host_bytes += s->host_bytes;
            }
}

void berth_memory_held(const berth_executor *ex, uint32_t k, berth_memory *m) { held(ex, k, m, NULL); }

/* Counting reads every context's slots: under the lock that builds them.
 * The executor is const to callers, not to its lock. */
static void memory_of(const berth_executor *ex, uint32_t k, berth_memory *m) {
    berth_executor *self = (berth_executor *)ex;
    pthread_mutex_lock(&self->lock);
    berth_memory_held(ex, k, m);
    pthread_mutex_unlock(&self->lock);
}

void berth_executor_memory(const berth_executor *ex, berth_memory *m) {
    memory_of(ex, UINT32_MAX, m);
    if (ex->ref) { /* verify's reference holds its own weights and plans */
        berth_memory r;
        berth_executor_memory(ex->ref, &r);
        m->weights_bytes += r.weights_bytes;
        m->plans_bytes += r.plans_bytes;
        m->host_bytes += r.host_bytes;
    }
}

berth_status berth_executor_plan_memory(const berth_executor *ex, uint32_t k, berth_plan_memory *m) {
    if (!m || m->struct_size < BERTH_PLAN_MEMORY_V1_MIN_SIZE) return BERTH_ERR_INVALID;
    berth_plan_memory sum = {.struct_size = sizeof sum};
    if (k != UINT32_MAX && k >= ex->n_be) {
        memcpy(m, &sum, BERTH_PLAN_MEMORY_V1_MIN_SIZE);
        return BERTH_ERR_INVALID;
    }
    berth_memory ignored;
    berth_executor *self = (berth_executor *)ex;
    pthread_mutex_lock(&self->lock);
    held(ex, k, &ignored, &sum);
    pthread_mutex_unlock(&self->lock);
    uint32_t size = m->struct_size < sizeof sum ? m->struct_size : (uint32_t)sizeof sum;
    memcpy(m, &sum, size);
    m->struct_size = size;
    return BERTH_OK;
}

berth_status berth_executor_backend_memory(const berth_executor *ex, uint32_t k, berth_memory *m) {
    if (k >= ex->n_be) {
        memset(m, 0, sizeof *m);
        return BERTH_ERR_INVALID;
    }
    memory_of(ex, k, m);
    return BERTH_OK;
}

berth_status berth_executor_prepared_weights(const berth_executor *ex, uint32_t k, berth_prepared_info *info) {
    if (!info || info->struct_size < offsetof(berth_prepared_info, cache_saves) + sizeof info->cache_saves ||
        k >= ex->n_be)
        return BERTH_ERR_INVALID;
    const exec_backend *b = &ex->be[k];
    info->weights = b->prepared.n_prepared;
    info->bytes = b->prepared.bytes_prepared;
    info->released_bytes = b->prepared.bytes_released;
    info->from_cache = b->weights_cached;
    info->cache_loads = b->cache_loads;
    info->cache_refused = b->cache_refused;
    info->cache_saves = b->cache_saves;
    return BERTH_OK;
}

/* The warm plan of (lane l, bucket b), or NULL with err saying so. */
static const plan_slot *warm_slot(const berth_executor *ex, uint32_t l, uint32_t b, berth_error *err) {
    if (berth_executor_is_warm(ex, l, b)) return &ex->ctx->slots[l][b];
    berth_errorf(err, "bucket %u of lane %u has no plan yet", b, l);
    return NULL;
}

berth_status berth_executor_profile(const berth_executor *ex, uint32_t l, uint32_t b,
                                    berth_profile_fn fn, void *ctx, berth_error *err) {
    const plan_slot *s = warm_slot(ex, l, b, err);
    if (!s) return BERTH_ERR_INVALID;
    for (uint32_t i = 0; i < s->n_steps; i++) {
        const berth_backend *be = ex->be[s->steps[i].backend].mod.be;
        if (!be->plan_profile) {
            berth_errorf(err, "backend '%s' does not time nodes", be->name);
            return BERTH_ERR_UNSUPPORTED;
        }
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n_steps; i++) n += s->steps[i].desc.n_nodes;
    uint64_t *ns = calloc(n ? n : 1, sizeof *ns);
    if (!ns) {
        berth_errorf(err, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    /* The plans' timings are written by run(): read them under the same
     * claim. The executor is const to callers, not to its own state. */
    berth_executor *self = (berth_executor *)ex;
    berth_status st = berth_executor_enter(self, "berth_executor_profile", err);
    if (st != BERTH_OK) {
        free(ns);
        return st;
    }
    /* Each step's nodes, in the order they ran. The backend is asked
     * under the device lock, as other contexts' runs take it; fn is
     * called after, so it may call back into berth. */
    uint32_t total = 0;
    pthread_mutex_lock(&self->lock);
    for (uint32_t i = 0; i < s->n_steps && st == BERTH_OK; i++) {
        const plan_step *ps = &s->steps[i];
        const berth_backend *be = ex->be[ps->backend].mod.be;
        berth_backend_msg_reset(err);
        st = be->plan_profile(ps->plan, ns + total, ps->desc.n_nodes, err);
        st = berth_backend_result(st, be->name, "plan_profile", err, err);
        total += ps->desc.n_nodes;
    }
    pthread_mutex_unlock(&self->lock);
    total = 0;
    for (uint32_t i = 0; i < s->n_steps && st == BERTH_OK; i++) {
        const plan_step *ps = &s->steps[i];
        for (uint32_t j = 0; j < ps->desc.n_nodes; j++)
            fn(ctx, ps->desc.nodes[j].name, ps->desc.nodes[j].op, ns[total + j]);
        total += ps->desc.n_nodes;
    }
    berth_executor_leave(self);
    free(ns);
    return st;
}

berth_status berth_executor_subgraphs(const berth_executor *ex, uint32_t l, uint32_t b,
                                      berth_subgraph_fn fn, void *ctx, berth_error *err) {
    const plan_slot *s = warm_slot(ex, l, b, err);
    if (!s) return BERTH_ERR_INVALID;
    for (uint32_t i = 0; i < s->n_steps; i++) {
        const plan_step *ps = &s->steps[i];
        berth_subgraph_info info;
        memset(&info, 0, sizeof info);
        info.backend = ps->backend;
        info.n_nodes = ps->desc.n_nodes;
        info.first_node = ps->desc.n_nodes ? ps->desc.nodes[0].name : "";
        info.last_node = ps->desc.n_nodes ? ps->desc.nodes[ps->desc.n_nodes - 1].name : "";
        info.n_in = ps->n_in;
        info.n_out = ps->n_out;
        info.in_names = ps->in_names;
        info.out_names = ps->out_names;
        info.in_crosses = ps->in_crosses;
        info.out_crosses = ps->out_crosses;
        info.bytes_in = ps->bytes_in;
        info.bytes_out = ps->bytes_out;
        info.last_run_ns = ps->last_ns;
        info.est_node_ns = ps->est_node_ns;
        info.est_overhead_ns = ps->est_overhead_ns;
        info.bytes_out_kept = ps->out_exported_bytes;
        info.bytes_in_imported = ps->in_imported_bytes;
        fn(ctx, &info);
    }
    return BERTH_OK;
}

berth_status berth_executor_partition(const berth_executor *ex, uint32_t l, uint32_t b, berth_partition_info *info,
                                      berth_error *err) {
    const plan_slot *s = warm_slot(ex, l, b, err);
    if (!s) return BERTH_ERR_INVALID;
    if (!info || info->struct_size < BERTH_PARTITION_INFO_V1_MIN_SIZE) {
        berth_errorf(err, "berth_executor_partition: struct_size %u, at least %zu expected",
                     info ? info->struct_size : 0u, (size_t)BERTH_PARTITION_INFO_V1_MIN_SIZE);
        return BERTH_ERR_INVALID;
    }
    berth_partition_info all;
    memset(&all, 0, sizeof all);
    if (ex->split == BERTH_SPLIT_ON) {
        all.subgraphs = s->n_steps;
        all.first_subgraphs = s->first_subgraphs;
        all.moved_runs = s->moved_runs;
        all.moved_nodes = s->moved_nodes;
        all.est_ns = s->est_ns;
        all.first_est_ns = s->first_ns;
    }
    uint32_t size = info->struct_size < sizeof all ? info->struct_size : (uint32_t)sizeof all;
    memcpy((char *)info + sizeof info->struct_size, (char *)&all + sizeof all.struct_size,
           size - sizeof info->struct_size);
    return BERTH_OK;
}
