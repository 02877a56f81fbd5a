/* A lane: one graph on the executor's weights, with its stage of buckets.
 * Lane 0 decides which weights are uploaded; every later lane may read
 * only those, in the same dtype and shape. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "executor_internal.h"
#include "util.h"

static int same_shape(const weight_info *w, const bg_value *v) {
    if (w->dtype != v->dtype || w->rank != v->rank) return 0;
    for (uint32_t d = 0; d < v->rank; d++)
        if (w->dims[d] != v->dims[d].value) return 0;
    return 1;
}

/* Give every @weights const of the lane its upload id. */
static berth_status assign_weights(berth_executor *ex, lane *ln, int first, berth_error *err) {
    const berth_graph *g = ln->g;
    ln->weight_ids = malloc(sizeof(uint32_t) * (g->n_values ? g->n_values : 1));
    if (!ln->weight_ids) goto nomem;
    for (uint32_t v = 0; v < g->n_values; v++) ln->weight_ids[v] = UINT32_MAX;
    for (uint32_t v = 0; v < g->n_values; v++) {
        const bg_value *val = &g->values[v];
        if (val->kind != BG_CONST || val->init != BG_INIT_WEIGHTS) continue;
        berth_error lerr;
        int32_t entry = berth_archive_lookup(ex->archive, val->ref, &lerr);
        if (entry < 0) {
            berth_errorf(err, "%s:%u: const '%s': %s", g->path, val->line, val->name, lerr.msg);
            return BERTH_ERR_INVALID;
        }
        uint32_t id = UINT32_MAX;
        for (uint32_t i = 0; i < ex->n_weights; i++)
            if (ex->weights[i].entry == entry) id = i;
        if (id != UINT32_MAX && !same_shape(&ex->weights[id], val)) {
            char a[128], b[128];
            int64_t dims[BERTH_MAX_RANK];
            for (uint32_t d = 0; d < val->rank; d++) dims[d] = val->dims[d].value;
            berth_shape_text(a, sizeof a, val->dtype, val->rank, dims);
            berth_shape_text(b, sizeof b, ex->weights[id].dtype, ex->weights[id].rank, ex->weights[id].dims);
            berth_errorf(err, "%s:%u: const '%s' reads weight '%s' as %s, but it was uploaded as %s",
                         g->path, val->line, val->name, val->ref, a, b);
            return BERTH_ERR_INVALID;
        }
        if (id == UINT32_MAX) {
            if (!first) {
                berth_errorf(err,
                             "%s:%u: const '%s' reads weight '%s', which the model's first "
                             "graph does not read, so it was never uploaded",
                             g->path, val->line, val->name, val->ref);
                return BERTH_ERR_INVALID;
            }
            weight_info *nw = realloc(ex->weights, sizeof *nw * (ex->n_weights + 1));
            if (!nw) goto nomem;
            ex->weights = nw;
            id = ex->n_weights++;
            nw[id].entry = entry;
            nw[id].dtype = val->dtype;
            nw[id].rank = val->rank;
            for (uint32_t d = 0; d < val->rank; d++) nw[id].dims[d] = val->dims[d].value;
        }
        ln->weight_ids[v] = id;
    }
    return BERTH_OK;
nomem:
    berth_errorf(err, "out of memory assigning weights of %s", g->path);
    return BERTH_ERR_NOMEM;
}

/* Map the stage's buckets onto the graph's dyn dims. */
static berth_status bind_stage(berth_executor *ex, lane *ln, const char *stage, berth_error *err) {
    const berth_graph *g = ln->g;
    const berth_config *c = ex->cfg;
    if (g->n_syms == 0 && !stage) {
        ln->n_buckets = 1;
        ln->bucket_vals = calloc(1, sizeof(int64_t));
        if (!ln->bucket_vals) goto nomem;
        return BERTH_OK;
    }
    const bc_stage *st = NULL;
    if (stage) {
        st = berth_config_stage(c, stage);
        if (!st) {
            berth_errorf(err, "%s: lane '%s' asks for stage '%s', which [buckets] does not define",
                         c->path, ln->name, stage);
            return BERTH_ERR_INVALID;
        }
    } else if (c->n_stages) {
        st = &c->stages[0];
    } else {
        berth_errorf(err,
                     "%s: graph %s has dynamic dim '%s' but the config has no [buckets] stage "
                     "to give it a value",
                     c->path, g->path, g->syms[0].name);
        return BERTH_ERR_INVALID;
    }
    ln->stage = strdup(st->name);
    ln->n_buckets = st->n;
    ln->bucket_vals = calloc((size_t)st->n * (g->n_syms ? g->n_syms : 1), sizeof(int64_t));
    if (!ln->stage || !ln->bucket_vals) goto nomem;
    for (uint32_t b = 0; b < st->n; b++) {
        const bc_bucket *bk = &st->buckets[b];
        for (uint32_t k = 0; k < bk->n; k++) {
            uint32_t s = 0;
            while (s < g->n_syms && strcmp(g->syms[s].name, bk->binds[k].dim)) s++;
            if (s == g->n_syms) {
                berth_errorf(err, "%s:%u: stage '%s' binds '%s', which graph %s has no dyn dim of",
                             c->path, st->line, st->name, bk->binds[k].dim, g->path);
                return BERTH_ERR_INVALID;
            }
            if (bk->binds[k].value > g->syms[s].max) {
                berth_errorf(err, "%s:%u: stage '%s' sets %s=%lld, above its max %lld in %s",
                             c->path, st->line, st->name, bk->binds[k].dim,
                             (long long)bk->binds[k].value, (long long)g->syms[s].max, g->path);
                return BERTH_ERR_INVALID;
            }
            ln->bucket_vals[(size_t)b * g->n_syms + s] = bk->binds[k].value;
        }
        for (uint32_t s = 0; s < g->n_syms; s++)
            if (ln->bucket_vals[(size_t)b * g->n_syms + s] == 0) {
                berth_errorf(err, "%s:%u: stage '%s' gives no value to dyn dim '%s' of %s",
                             c->path, st->line, st->name, g->syms[s].name, g->path);
                return BERTH_ERR_INVALID;
            }
    }
    return BERTH_OK;
nomem:
    berth_errorf(err, "out of memory binding stage of %s", g->path);
    return BERTH_ERR_NOMEM;
}

berth_status berth_lane_init(berth_executor *ex, lane *ln, const char *name, const char *graph_path,
                             const char *stage, int first, berth_error *err) {
    memset(ln, 0, sizeof *ln);
    ln->name = strdup(name);
    if (!ln->name) {
        berth_errorf(err, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    ln->g = berth_graph_load(graph_path, err);
    if (!ln->g) return BERTH_ERR_INVALID;
    berth_status st = assign_weights(ex, ln, first, err);
    if (st == BERTH_OK) st = bind_stage(ex, ln, stage, err);
    if (st != BERTH_OK) return st;

    const berth_graph *g = ln->g;
    uint32_t ni = g->n_inputs ? g->n_inputs : 1;
    ln->pad = calloc(ni, sizeof *ln->pad);
    ln->in_rank = calloc(ni, sizeof *ln->in_rank);
    ln->in_dims = calloc((size_t)ni * BERTH_MAX_RANK, sizeof *ln->in_dims);
    ln->in_sym = calloc((size_t)ni * BERTH_MAX_RANK, sizeof *ln->in_sym);
    if (!ln->pad || !ln->in_rank || !ln->in_dims || !ln->in_sym) {
        berth_errorf(err, "out of memory creating lane '%s'", name);
        return BERTH_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        const bg_value *v = &g->values[g->inputs[i]];
        if (berth_dtype_bits(v->dtype) == 4) {
            berth_errorf(err, "%s:%u: input '%s' is %s; inputs of packed 4-bit types are not supported",
                         g->path, v->line, v->name, berth_dtype_name(v->dtype));
            return BERTH_ERR_UNSUPPORTED;
        }
        ln->pad[i] = berth_config_pad(ex->cfg, v->name);
        ln->in_rank[i] = v->rank;
        for (uint32_t d = 0; d < v->rank; d++) {
            ln->in_dims[i * BERTH_MAX_RANK + d] = v->dims[d].value;
            ln->in_sym[i * BERTH_MAX_RANK + d] = v->dims[d].sym;
        }
    }
    return BERTH_OK;
}

void berth_lane_free(berth_executor *ex, lane *ln) {
    if (ln->first_spec) berth_spec_free(ln->first_spec);
    berth_graph_free(ln->g);
    free(ln->name);
    free(ln->stage);
    free(ln->bucket_vals);
    free(ln->weight_ids);
    free(ln->pad);
    free(ln->in_rank);
    free(ln->in_dims);
    free(ln->in_sym);
    memset(ln, 0, sizeof *ln);
}

berth_spec *berth_lane_specialize(const lane *ln, uint32_t b, berth_error *err) {
    return berth_specialize(ln->g, ln->bucket_vals + (size_t)b * ln->g->n_syms, ln->weight_ids,
                            err);
}
