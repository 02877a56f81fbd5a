/* The prepare step (ABI 1.4): after the upload and before any plan, each
 * backend that can is handed the graphs its plans will read the weights
 * through, and puts them into its own layout once. Memory is counted
 * after it, so the limit and the reports see each weight once, in the
 * form the backend keeps. Where [cache] dir holds that form from an
 * earlier start, the backend takes it back instead. */
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "cache.h"
#include "loader.h"
#include "util.h"

typedef struct prep_ctx {
    berth_executor *ex;
    uint32_t skip; /* bit k: backend k took its weights from the cache */
} prep_ctx;

static berth_status prepare_step(void *ctx, uint32_t k, const berth_graph_desc *d, berth_error *err) {
    prep_ctx *pc = ctx;
    exec_backend *b = &pc->ex->be[k];
    if (!berth_backend_has_prepare(b->mod.be) || (pc->skip & (1u << k))) return BERTH_OK;
    berth_prepare_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    berth_backend_msg_reset(err);
    berth_status st = b->mod.be->prepare_weights(b->w, d, &info, err);
    st = berth_backend_result(st, b->mod.be->name, "prepare_weights", err, err);
    if (st == BERTH_OK) b->prepared = info; /* the account after the last graph */
    return st;
}

berth_status berth_prepare_weights(berth_executor *ex, berth_error *err) {
    prep_ctx pc = {ex, 0};
    uint32_t any = 0;
    uint64_t key[BERTH_MAX_USE];
    for (uint32_t k = 0; k < ex->n_be; k++) {
        if (!berth_backend_has_prepare(ex->be[k].mod.be)) continue;
        any |= 1u << k;
        key[k] = berth_cache_key(ex, k, BERTH_STATE_WEIGHTS, NULL, 0);
        if (berth_cache_load(ex, k, BERTH_STATE_WEIGHTS, key[k])) {
            pc.skip |= 1u << k;
            ex->be[k].weights_cached = 1;
        }
    }
    if (!(any & ~pc.skip)) return BERTH_OK;
    uint64_t t0 = berth_now_ns();
    for (uint32_t l = 0; l < ex->n_lanes; l++) {
        berth_status st = berth_lane_first_steps(ex, &ex->lanes[l], prepare_step, &pc, err);
        if (st != BERTH_OK) return st;
    }
    for (uint32_t k = 0; k < ex->n_be; k++) {
        const exec_backend *b = &ex->be[k];
        if (!(any & ~pc.skip & (1u << k)) || !b->prepared.n_prepared) continue;
        berth_logf(&ex->log, BERTH_LOG_INFO,
                   "'%s' prepared %u weights into its own layout (%llu bytes), %llu uploaded bytes let go",
                   b->item, b->prepared.n_prepared, (unsigned long long)b->prepared.bytes_prepared,
                   (unsigned long long)b->prepared.bytes_released);
        berth_cache_save(ex, k, BERTH_STATE_WEIGHTS, key[k]);
    }
    berth_logf(&ex->log, BERTH_LOG_INFO, "weights prepared in %.1f ms", (double)(berth_now_ns() - t0) / 1e6);
    return BERTH_OK;
}

/* The backends a slot's steps run on, as bits. */
static uint32_t slot_backends(const plan_slot *s) {
    uint32_t bits = 0;
    for (uint32_t i = 0; i < s->n_steps; i++) bits |= 1u << s->steps[i].backend;
    return bits;
}

void berth_cache_programs_in(berth_executor *ex, const lane *ln, uint32_t b, plan_slot *s) {
    s->programs_loaded = 0;
    if (!ex->cfg->cache_dir) return;
    uint32_t bits = slot_backends(s);
    for (uint32_t k = 0; k < ex->n_be; k++)
        if ((bits & (1u << k)) &&
            berth_cache_load(ex, k, BERTH_STATE_PROGRAMS, berth_cache_key(ex, k, BERTH_STATE_PROGRAMS, ln, b)))
            s->programs_loaded |= 1u << k;
}

void berth_cache_programs_out(berth_executor *ex, const lane *ln, uint32_t b, const plan_slot *s) {
    if (!ex->cfg->cache_dir) return;
    uint32_t bits = slot_backends(s) & ~s->programs_loaded;
    for (uint32_t k = 0; k < ex->n_be; k++)
        if (bits & (1u << k))
            berth_cache_save(ex, k, BERTH_STATE_PROGRAMS, berth_cache_key(ex, k, BERTH_STATE_PROGRAMS, ln, b));
}
