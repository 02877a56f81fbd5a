/* The executor: a deployment opened from its config. Opening loads the
 * backend (with fallback: the first of `use` that opens and runs every
 * node of the first bucket), parses the lanes' graphs, checks the first
 * bucket before any byte of weights moves, then streams the weights. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "backend_call.h"
#include "dtype.h"
#include "cost.h"
#include "cache.h"
#include "executor_internal.h"
#include "specialize.h"
#include "util.h"

/* Split "vulkan, cpu" into trimmed items, in place: items point into
 * use, whose separators become NULs. Items are paths of any length. */
static uint32_t split_use(char *use, const char **items, uint32_t cap) {
    uint32_t n = 0;
    while (*use && n < cap) {
        while (*use == ' ' || *use == '\t' || *use == ',') use++;
        if (!*use) break;
        size_t len = strcspn(use, ",");
        char *next = use + len + (use[len] == ',');
        size_t end = len;
        while (end && (use[end - 1] == ' ' || use[end - 1] == '\t')) end--;
        use[end] = '\0';
        items[n++] = use;
        use = next;
    }
    return n;
}

/* Parse every lane's graph. Done once, when the first backend opens:
 * a config whose backends cannot open is refused for that before its
 * graphs are read. */
static berth_status init_lanes(berth_executor *ex, berth_error *err) {
    ex->lanes = calloc(ex->cfg->n_lanes, sizeof *ex->lanes);
    if (!ex->lanes) {
        berth_errorf(err, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < ex->cfg->n_lanes; i++) {
        const bc_lane *cl = &ex->cfg->lanes[i];
        ex->n_lanes = i + 1;
        berth_status st = berth_lane_init(ex, &ex->lanes[i], cl->name, cl->graph, cl->stage, i == 0, err);
        if (st != BERTH_OK) return st;
    }
    return BERTH_OK;
}

/* Ask the backend about every node of lane 0 at its first bucket, so a
 * graph the device cannot run is refused before any upload. Unfused
 * first (fusion happens per bucket at plan time; the specialization is
 * kept for the bucket's first plan); a node refused there may still run
 * fused, as a 4-bit dequantizeLinear does inside berth.matmulQuantized
 * on a backend that unpacks 4-bit values only there, so then the fused
 * graph is asked too and the unfused refusal stands only if it fails. */
static berth_status check_graph(berth_executor *ex, berth_error *err) {
    lane *ln = &ex->lanes[0];
    if (!ln->first_spec && !(ln->first_spec = berth_lane_specialize(ln, 0, err)))
        return BERTH_ERR_INVALID;
    const berth_spec *s = ln->first_spec;
    /* A first bucket over the memory limit, or holding a tensor past what
     * a 32-bit machine can address, is refused when it is prepared, by
     * the limit, which names its size and largest tensor; a backend asked
     * about its nodes now could only call such a shape invalid, and the
     * deployment's other buckets would not open either. */
    berth_error limit_err;
    if (berth_limit_check_plan(ex, ln, 0, s, &limit_err) != BERTH_OK) return BERTH_OK;
    berth_status st = BERTH_OK;
    for (uint32_t i = 0; i < s->desc.n_nodes && st == BERTH_OK; i++)
        st = berth_node_check(ex, 0, ln->g->path, &s->desc, i, err);
    if (st != BERTH_ERR_UNSUPPORTED) return st;
    berth_error fused_err;
    return berth_check_fused(ex, ln, &fused_err) == BERTH_OK ? BERTH_OK : st;
}

/* Load, negotiate with and open backend `item` into slot b. BERTH_OK with
 * b->mod and b->dev set; otherwise nothing is left loaded, e says why and
 * *loaded says whether the module loaded (its open() failed) or not. */
static berth_status open_one(berth_executor *ex, exec_backend *b, const char *item, int *loaded,
                             berth_error *e) {
    const berth_config *c = ex->cfg;
    berth_host_init(&b->host, &ex->log);
    *loaded = 0;
    b->item = strdup(item);
    if (!b->item) {
        berth_errorf(e, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    berth_status st = berth_module_load(item, (const char *const *)c->path_dirs, c->n_path,
                                        &b->host.services, &b->mod, e);
    *loaded = st == BERTH_OK;
    if (st != BERTH_OK) {
        free(b->item);
        b->item = NULL;
        return st;
    }
    /* Options come from [backend.NAME], NAME being the name the config
     * used, or the module's own name when a path was used. */
    const char *name = strchr(item, '/') ? b->mod.be->name : item;
    b->host.opts = berth_config_backend(c, name);
    snprintf(b->host.backend_name, sizeof b->host.backend_name, "%s", b->mod.be->name);
    /* A 1.1 module's declared options are checked here, before open();
     * a bad one stops like open() returning INVALID. */
    st = berth_host_check_options(b->mod.be, b->host.opts, c->path, e);
    if (st == BERTH_OK) {
        berth_backend_msg_reset(e);
        st = b->mod.be->open(&b->host.services, &b->dev, e);
        st = berth_backend_result(st, b->mod.be->name, "open", e, e);
    }
    if (st == BERTH_OK) {
        berth_caps caps;
        memset(&caps, 0, sizeof caps);
        caps.struct_size = sizeof caps;
        berth_error ce;
        berth_backend_msg_reset(&ce);
        berth_status cs = b->mod.be->caps(b->dev, &caps, &ce);
        /* Caps only name the device here: a failure is worth a warning,
         * not refusing a device that opened. */
        b->device_name[0] = 0;
        if (berth_backend_result(cs, b->mod.be->name, "caps", &ce, &ce) != BERTH_OK)
            berth_logf(&ex->log, BERTH_LOG_WARN, "device name unknown: %s", ce.msg);
        else if (caps.device_name)
            snprintf(b->device_name, sizeof b->device_name, "%s", caps.device_name);
        /* Caps are 1.0's struct: the fields 1.3 appended are read from a
         * 1.3 table only, and only as sane positive numbers. */
        int v13 = b->mod.be->abi_version >= BERTH_BACKEND_ABI_V1_3 && cs == BERTH_OK;
        b->region_ns = v13 && caps.region_ns > 0 && caps.region_ns < 1e12 ? caps.region_ns : BERTH_COST_REGION_NS;
        b->crossing_ns_per_byte = v13 && caps.crossing_ns_per_byte > 0 && caps.crossing_ns_per_byte < 1e6
                                      ? caps.crossing_ns_per_byte
                                      : BERTH_COST_CROSSING_NS_PER_BYTE;
        return BERTH_OK;
    }
    b->dev = NULL;
    berth_module_unload(&b->mod);
    free(b->item);
    memset(b, 0, sizeof *b);
    return st;
}

static void close_one(exec_backend *b) {
    if (b->w) b->mod.be->free_weights(b->w);
    if (b->dev) b->mod.be->close(b->dev);
    if (b->mod.handle) berth_module_unload(&b->mod);
    free(b->weight_id);
    free(b->item);
    memset(b, 0, sizeof *b);
}

/* The backends `use` (or the caller's override, split in *copy, which
 * the caller frees) lists: items point into the config or *copy. */
static uint32_t use_items(const berth_executor *ex, const char *use_override, const char **items,
                          char **copy) {
    const berth_config *c = ex->cfg;
    *copy = NULL;
    if (use_override) {
        *copy = strdup(use_override);
        return *copy ? split_use(*copy, items, BERTH_MAX_USE) : 0;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n_use && i < BERTH_MAX_USE; i++) items[n++] = c->use[i];
    return n;
}

/* Whether a backend that failed to open is skipped (no usable device, no
 * module) rather than stopping the open: any other failure is the
 * user's to fix (a mistyped option) or a fault worth seeing, which
 * falling back would hide. */
static int skippable(berth_status st, int loaded) {
    return !loaded || st == BERTH_ERR_DEVICE || st == BERTH_ERR_UNSUPPORTED;
}

/* split = off: try each backend of `use` in order; the graph goes to the
 * first that opens and runs every node of it (supports_node, or
 * supports_op for a 1.0 module, at lane 0's first bucket). Log why each
 * skipped one was skipped, and if none serves, say why for all of them.
 * A backend is skipped when its module cannot be found, loaded or
 * negotiated with, when open() says BERTH_ERR_DEVICE (no usable device)
 * or BERTH_ERR_UNSUPPORTED (this device cannot serve), or when it
 * refuses a node with BERTH_ERR_UNSUPPORTED. */
static berth_status open_first(berth_executor *ex, const char **items, uint32_t n,
                               const char *use_name, berth_error *err) {
    char reasons[BERTH_ERROR_CAP];
    size_t off = 0;
    reasons[0] = 0;
    uint32_t refused = 0; /* backends that opened and refused a node */
    exec_backend *b = &ex->be[0];
    for (uint32_t i = 0; i < n; i++) {
        berth_error e;
        int loaded;
        berth_status st = open_one(ex, b, items[i], &loaded, &e);
        if (st == BERTH_OK) {
            ex->n_be = 1;
            if (!ex->lanes) {
                st = init_lanes(ex, err);
                if (st != BERTH_OK) return st;
            }
            st = check_graph(ex, &e);
            if (st == BERTH_OK) {
                berth_logf(&ex->log, BERTH_LOG_INFO, "backend '%s' chosen (%s, device: %s)",
                           items[i], b->mod.path, b->device_name);
                return BERTH_OK;
            }
            if (st != BERTH_ERR_UNSUPPORTED || !ex->lanes[0].first_spec) {
                /* Not a refusal: the graph itself is wrong, or the
                 * backend failed while asked. */
                berth_errorf(err, "%s", e.msg);
                return st;
            }
            close_one(b);
            ex->n_be = 0;
            refused++;
        } else if (!skippable(st, loaded)) {
            berth_errorf(err, "%s", e.msg);
            return st;
        }
        berth_logf(&ex->log, BERTH_LOG_WARN, "backend '%s' skipped: %s", items[i], e.msg);
        if (off < sizeof reasons)
            off += (size_t)snprintf(reasons + off, sizeof reasons - off, "%s%s", i ? "; " : "",
                                    e.msg);
    }
    if (n == 1) berth_errorf(err, "%s", reasons);
    else berth_errorf(err, "no backend of '%s' could %s: %s", use_name,
                      refused ? "run the graph" : "be opened", reasons);
    return refused == n ? BERTH_ERR_UNSUPPORTED : BERTH_ERR_DEVICE;
}

/* split = on: open every backend of `use` that can be (skipping, with a
 * warning, those skipped above for want of a device or module); the
 * graphs are partitioned among them per bucket. */
static berth_status open_all(berth_executor *ex, const char **items, uint32_t n,
                             const char *use_name, berth_error *err) {
    char reasons[BERTH_ERROR_CAP];
    size_t off = 0;
    reasons[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        berth_error e;
        int loaded;
        berth_status st = open_one(ex, &ex->be[ex->n_be], items[i], &loaded, &e);
        if (st == BERTH_OK) {
            berth_logf(&ex->log, BERTH_LOG_INFO, "backend '%s' opened for split execution (%s, device: %s)",
                       items[i], ex->be[ex->n_be].mod.path, ex->be[ex->n_be].device_name);
            ex->n_be++;
            continue;
        }
        if (!skippable(st, loaded)) {
            berth_errorf(err, "%s", e.msg);
            return st;
        }
        berth_logf(&ex->log, BERTH_LOG_WARN, "backend '%s' skipped: %s", items[i], e.msg);
        if (off < sizeof reasons)
            off += (size_t)snprintf(reasons + off, sizeof reasons - off, "%s%s", off ? "; " : "", e.msg);
    }
    if (!ex->n_be) {
        if (n == 1) berth_errorf(err, "%s", reasons);
        else berth_errorf(err, "no backend of '%s' could be opened: %s", use_name, reasons);
        return BERTH_ERR_DEVICE;
    }
    return init_lanes(ex, err);
}

static berth_status open_backends(berth_executor *ex, const char *use_override, berth_error *err) {
    const char *items[BERTH_MAX_USE];
    char *copy;
    uint32_t n = use_items(ex, use_override, items, &copy);
    if (use_override && !copy) {
        berth_errorf(err, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    if (n == 0) {
        free(copy);
        berth_errorf(err, "%s: [backend] use lists no backend", ex->cfg->path);
        return BERTH_ERR_INVALID;
    }
    const char *use_name = use_override ? use_override : "use";
    ex->split = ex->cfg->split;
    berth_status st = ex->split ? open_all(ex, items, n, use_name, err)
                                : open_first(ex, items, n, use_name, err);
    free(copy);
    return st;
}

/* split = on: which backend needs which weight. Every lane's first
 * bucket is partitioned as planned (fused as it will be, and unfused as
 * a backend first sees it): each backend is given the weights its
 * subgraphs read in either. A later bucket whose partition puts a
 * weight's reader on a backend that was not given it refuses that
 * backend for the node and tries the next. */
static berth_status assign_split_weights(berth_executor *ex, berth_error *err) {
    uint8_t *need = calloc((size_t)ex->n_be * (ex->n_weights ? ex->n_weights : 1), 1);
    if (!need) {
        berth_errorf(err, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    berth_status st = BERTH_OK;
    for (uint32_t l = 0; l < ex->n_lanes && st == BERTH_OK; l++) st = berth_split_weights(ex, &ex->lanes[l], need, err);
    for (uint32_t k = 0; k < ex->n_be && st == BERTH_OK; k++) {
        exec_backend *b = &ex->be[k];
        b->weight_id = malloc(sizeof *b->weight_id * (ex->n_weights ? ex->n_weights : 1));
        if (!b->weight_id) {
            berth_errorf(err, "out of memory");
            st = BERTH_ERR_NOMEM;
            break;
        }
        for (uint32_t w = 0; w < ex->n_weights; w++)
            b->weight_id[w] = need[(size_t)k * ex->n_weights + w] ? b->n_weights++ : UINT32_MAX;
    }
    free(need);
    return st;
}

/* The weights each backend holds, streamed from the archive in one pass. */
static berth_status upload(berth_executor *ex, berth_error *err) {
    berth_stream_target t[BERTH_MAX_USE];
    berth_weight_request *req = calloc((size_t)ex->n_be * (ex->n_weights ? ex->n_weights : 1), sizeof *req);
    if (!req) {
        berth_errorf(err, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    const berth_graph *g = ex->lanes[0].g;
    for (uint32_t k = 0; k < ex->n_be; k++) {
        exec_backend *b = &ex->be[k];
        t[k] = (berth_stream_target){b->mod.be, b->dev, &b->host.services,
                                     req + (size_t)k * ex->n_weights, b->n_weights, NULL};
    }
    for (uint32_t v = 0; v < g->n_values; v++) {
        uint32_t id = ex->lanes[0].weight_ids[v];
        if (id == UINT32_MAX) continue;
        const bg_value *val = &g->values[v];
        for (uint32_t k = 0; k < ex->n_be; k++) {
            uint32_t local = ex->be[k].weight_id[id];
            if (local == UINT32_MAX) continue; /* none of k's subgraphs reads it */
            berth_weight_request *r = req + (size_t)k * ex->n_weights + local;
            if (r->ref) continue; /* two consts of one weight */
            r->ref = val->ref;
            r->value = val->name;
            r->dtype = val->dtype;
            r->rank = val->rank;
            memcpy(r->dims, ex->weights[id].dims, sizeof r->dims);
            r->id = local;
        }
    }
    berth_status st = berth_archive_stream_to(ex->archive, t, ex->n_be, NULL, err);
    free(req);
    if (st == BERTH_OK)
        for (uint32_t k = 0; k < ex->n_be; k++) ex->be[k].w = t[k].w;
    return st;
}

/* split = off: the one backend holds every weight by its own id. */
static berth_status assign_all_weights(berth_executor *ex, berth_error *err) {
    exec_backend *b = &ex->be[0];
    b->weight_id = malloc(sizeof *b->weight_id * (ex->n_weights ? ex->n_weights : 1));
    if (!b->weight_id) {
        berth_errorf(err, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    for (uint32_t w = 0; w < ex->n_weights; w++) b->weight_id[w] = w;
    b->n_weights = ex->n_weights;
    return BERTH_OK;
}

/* The bytes the weights will take once uploaded in the dtype and shape
 * lane 0 declares, on every backend that holds them: what
 * berth_archive_stream_to announces to the backends. */
static uint64_t declared_weights_bytes(const berth_executor *ex) {
    uint64_t total = 0;
    for (uint32_t i = 0; i < ex->n_weights; i++) {
        const weight_info *w = &ex->weights[i];
        int ok = 1;
        int64_t n = 1;
        for (uint32_t d = 0; d < w->rank; d++) n = berth_mul_checked(n, w->dims[d], &ok);
        /* Counted in 64 bits, not size_t: on a 32-bit build a weight of
         * 4 GiB or more would wrap and under-count the total; the stream
         * refuses such a weight by name later. */
        uint64_t bytes = berth_dtype_bytes64(w->dtype, (uint64_t)n, &ok);
        for (uint32_t k = 0; k < ex->n_be; k++) {
            if (ex->be[k].weight_id[i] == UINT32_MAX) continue;
            if (!ok || total > UINT64_MAX - bytes) return UINT64_MAX;
            total += bytes;
        }
    }
    return total;
}

static uint64_t held_weights_bytes(const berth_executor *ex) {
    uint64_t total = 0;
    for (uint32_t k = 0; k < ex->n_be; k++)
        if (ex->be[k].w) total += ex->be[k].mod.be->weights_bytes(ex->be[k].w);
    return total;
}

berth_status berth_executor_open_as(const char *config_path, const berth_open_options *opts, int verify,
                                    berth_executor **out, berth_error *err) {
    *out = NULL;
    berth_executor *ex = calloc(1, sizeof *ex);
    if (!ex) {
        berth_errorf(err, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    pthread_mutex_init(&ex->lock, NULL);
    ex->log.level = BERTH_LOG_WARN;
    if (OPTION_GIVEN(opts, log_level)) {
        ex->log.fn = opts->log;
        ex->log.ctx = opts->log_ctx;
        ex->log.level = opts->log_level;
    }
    berth_status st = BERTH_ERR_INVALID;
    const char *model = OPTION_GIVEN(opts, model) ? opts->model : NULL;
    const char *text = OPTION_GIVEN(opts, config_text) ? opts->config_text : NULL;
    ex->cfg = text ? berth_config_parse_model(config_path, text, model, err)
                   : berth_config_load_model(config_path, model, err);
    if (!ex->cfg) goto fail;
    berth_limit_init(ex, OPTION_GIVEN(opts, max_memory_bytes) ? opts->max_memory_bytes : 0);
    ex->archive = berth_archive_open(ex->cfg->weights, ex->cfg->manifest, err);
    if (!ex->archive) goto fail;
    /* Opens the backend(s), reads the lanes' graphs and checks lane 0. */
    st = open_backends(ex, OPTION_GIVEN(opts, use) ? opts->use : NULL, err);
    if (st == BERTH_OK) st = ex->split ? assign_split_weights(ex, err) : assign_all_weights(ex, err);
    if (st != BERTH_OK) goto fail;
    /* Weights over the limit are refused before a byte is streamed, and
     * again as the backends hold them (they may align or convert). */
    st = berth_limit_check_weights(ex, declared_weights_bytes(ex), "the graphs read take", err);
    if (st != BERTH_OK) goto fail;
    uint64_t t0 = berth_now_ns();
    st = upload(ex, err);
    if (st != BERTH_OK) goto fail;
    for (uint32_t k = 0; k < ex->n_be; k++)
        berth_logf(&ex->log, BERTH_LOG_INFO, "%u weights (%llu bytes) uploaded to '%s'", ex->be[k].n_weights,
                   (unsigned long long)ex->be[k].mod.be->weights_bytes(ex->be[k].w), ex->be[k].item);
    berth_logf(&ex->log, BERTH_LOG_INFO, "weights streamed in %.1f ms", (double)(berth_now_ns() - t0) / 1e6);
    /* the limit sees each weight once, in the form the backend keeps */
    if ((st = berth_prepare_weights(ex, err)) != BERTH_OK) goto fail;
    st = berth_limit_check_weights(ex, held_weights_bytes(ex), "take on the device", err);
    if (st != BERTH_OK) goto fail;
    const char *reference = OPTION_GIVEN(opts, verify) && opts->verify ? opts->verify : ex->cfg->verify;
    if (verify && reference && (st = berth_verify_open(ex, config_path, opts, reference, err)) != BERTH_OK)
        goto fail;
    berth_context *own;
    if ((st = berth_context_open(ex, &own, err)) != BERTH_OK) goto fail;
    *out = ex;
    return BERTH_OK;
fail:
    berth_executor_close(ex);
    return st;
}

berth_status berth_executor_open(const char *config_path, const berth_open_options *opts,
                                 berth_executor **out, berth_error *err) {
    return berth_executor_open_as(config_path, opts, 1, out, err);
}

void berth_executor_close(berth_executor *ex) {
    if (!ex) return;
    while (ex->ctx) {
        berth_context *next = ex->ctx->next;
        berth_context_free(ex->ctx);
        ex->ctx = next;
    }
    for (uint32_t i = 0; i < ex->n_lanes; i++) berth_lane_free(ex, &ex->lanes[i]);
    free(ex->lanes);
    for (uint32_t k = 0; k < ex->n_be; k++) close_one(&ex->be[k]);
    berth_executor_close(ex->ref); /* after our contexts, which closed theirs */
    berth_archive_close(ex->archive);
    berth_config_free(ex->cfg);
    free(ex->weights);
    pthread_mutex_destroy(&ex->lock);
    free(ex);
}

static berth_status add_graph(berth_executor *ex, const char *name, const char *webnn_path,
                              const char *stage, uint32_t *lane_out, berth_error *err) {
    if (ex->n_contexts > 1) {
        berth_errorf(err, "%u run contexts are open; add graphs before opening them",
                     ex->n_contexts - 1);
        return BERTH_ERR_INVALID;
    }
    if (berth_executor_find_lane(ex, name) >= 0) {
        berth_errorf(err, "a lane named '%s' exists already", name);
        return BERTH_ERR_INVALID;
    }
    lane *nl = realloc(ex->lanes, sizeof *nl * (ex->n_lanes + 1));
    if (!nl) {
        berth_errorf(err, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    ex->lanes = nl;
    lane *ln = &ex->lanes[ex->n_lanes];
    berth_status st = berth_lane_init(ex, ln, name, webnn_path, stage, 0, err);
    /* The reference gets the same lane, so lane numbers agree. */
    if (st == BERTH_OK && ex->ref) st = berth_executor_add_graph(ex->ref, name, webnn_path, stage, NULL, err);
    if (st == BERTH_OK) st = berth_context_add_lane(ex->ctx, ex->n_lanes, err);
    if (st != BERTH_OK) {
        berth_lane_free(ex, ln);
        return st;
    }
    if (lane_out) *lane_out = ex->n_lanes;
    ex->n_lanes++;
    return BERTH_OK;
}

berth_status berth_executor_add_graph(berth_executor *ex, const char *name, const char *webnn_path,
                                      const char *stage, uint32_t *lane_out, berth_error *err) {
    berth_status st = berth_executor_enter(ex, "berth_executor_add_graph", err);
    if (st != BERTH_OK) return st;
    pthread_mutex_lock(&ex->lock);
    st = add_graph(ex, name, webnn_path, stage, lane_out, err);
    pthread_mutex_unlock(&ex->lock);
    berth_executor_leave(ex);
    return st;
}

const char *berth_executor_backend(const berth_executor *ex) { return ex->be[0].mod.be->name; }
const char *berth_executor_backend_path(const berth_executor *ex) { return ex->be[0].mod.path; }
void *berth_executor_backend_proc(berth_executor *ex, const char *name) {
    return ex ? berth_backend_proc(ex->be[0].mod.be, name) : NULL;
}
const char *berth_executor_device(const berth_executor *ex) { return ex->be[0].device_name; }
uint32_t berth_executor_backend_count(const berth_executor *ex) { return ex->n_be; }

const char *berth_executor_backend_at(const berth_executor *ex, uint32_t k, const char **device) {
    if (k >= ex->n_be) return NULL;
    if (device) *device = ex->be[k].device_name;
    return ex->be[k].mod.be->name;
}
uint32_t berth_executor_lane_count(const berth_executor *ex) { return ex->n_lanes; }

const char *berth_executor_lane_name(const berth_executor *ex, uint32_t lane_i) {
    return lane_i < ex->n_lanes ? ex->lanes[lane_i].name : NULL;
}

int32_t berth_executor_find_lane(const berth_executor *ex, const char *name) {
    for (uint32_t i = 0; i < ex->n_lanes; i++)
        if (!strcmp(ex->lanes[i].name, name)) return (int32_t)i;
    return -1;
}

uint32_t berth_executor_input_count(const berth_executor *ex, uint32_t l) {
    return l < ex->n_lanes ? ex->lanes[l].g->n_inputs : 0;
}

uint32_t berth_executor_output_count(const berth_executor *ex, uint32_t l) {
    return l < ex->n_lanes ? ex->lanes[l].g->n_outputs : 0;
}

berth_status berth_executor_input_info(const berth_executor *ex, uint32_t l, uint32_t i,
                                       berth_io_info *info) {
    if (l >= ex->n_lanes || i >= ex->lanes[l].g->n_inputs) return BERTH_ERR_INVALID;
    const berth_graph *g = ex->lanes[l].g;
    const bg_value *v = &g->values[g->inputs[i]];
    memset(info, 0, sizeof *info);
    info->name = v->name;
    info->dtype = v->dtype;
    info->rank = v->rank;
    for (uint32_t d = 0; d < v->rank; d++) {
        info->dims[d] = v->dims[d].value;
        info->dyn[d] = v->dims[d].sym >= 0 ? g->syms[v->dims[d].sym].name : NULL;
    }
    return BERTH_OK;
}

/* The specializer marks an output dim as following dyn dim k when it
 * changes with k one smaller; a strided window (a conv with stride 160
 * over 16384 samples gives as many frames for 16383) does not, so each dim
 * is also probed at half the bucket's value, by the shape rules alone.
 * A half the graph refuses (too short for a kernel) says nothing. */
static int halved_deps(const berth_graph *g, const int64_t *vals, uint32_t o, uint64_t dep[BERTH_MAX_RANK]) {
    memset(dep, 0, sizeof(uint64_t) * BERTH_MAX_RANK);
    if (g->n_syms == 0) return 0;
    berth_arena *a = berth_arena_new();
    int64_t *probe = malloc(sizeof *probe * g->n_syms);
    uint32_t *rank = malloc(sizeof *rank * g->n_outputs);
    int64_t *dims = malloc(sizeof *dims * g->n_outputs * BERTH_MAX_RANK);
    int ok = a && probe && rank && dims;
    uint32_t base_rank = 0;
    int64_t base[BERTH_MAX_RANK];
    berth_error err;
    if (ok) {
        memcpy(probe, vals, sizeof *probe * g->n_syms);
        berth_arena_reset(a);
        if (berth_specialize_shapes(g, probe, a, rank, dims, &err) != 0) goto done;
        base_rank = rank[o];
        memcpy(base, dims + (size_t)o * BERTH_MAX_RANK, sizeof base);
    }
    for (uint32_t k = 0; ok && k < g->n_syms && k < 64; k++) {
        if (vals[k] < 2) continue;
        memcpy(probe, vals, sizeof *probe * g->n_syms);
        probe[k] = vals[k] / 2;
        berth_arena_reset(a);
        if (berth_specialize_shapes(g, probe, a, rank, dims, &err) != 0 || rank[o] != base_rank) continue;
        for (uint32_t d = 0; d < base_rank && d < BERTH_MAX_RANK; d++)
            if (dims[(size_t)o * BERTH_MAX_RANK + d] != base[d]) dep[d] |= UINT64_C(1) << k;
    }
done:
    free(dims);
    free(rank);
    free(probe);
    if (a) berth_arena_free(a);
    return ok ? 0 : -1;
}

berth_status berth_executor_output_info(const berth_executor *ex, uint32_t l, uint32_t i,
                                        berth_io_info *info) {
    if (l >= ex->n_lanes || i >= ex->lanes[l].g->n_outputs) return BERTH_ERR_INVALID;
    const lane *ln = &ex->lanes[l];
    const berth_graph *g = ln->g;
    memset(info, 0, sizeof *info);
    info->name = g->values[g->outputs[i]].name;
    /* dims as the lane's last bucket gives them; dyn from every bucket:
     * what the specializer found each dim follows (a run trims those),
     * and any dim that differs from the last bucket's, named by a dyn
     * dim the two buckets differ in. */
    if (g->n_syms > 64) return BERTH_ERR_INVALID; /* out_dep holds 64 */
    for (uint32_t b = ln->n_buckets; b-- > 0;) {
        berth_error err;
        berth_spec *s = berth_lane_specialize(ln, b, &err);
        if (!s) return BERTH_ERR_INVALID;
        const berth_operand *o = &s->desc.operands[s->desc.outputs[i]];
        if (b == ln->n_buckets - 1) {
            info->dtype = o->dtype;
            info->rank = o->rank;
            for (uint32_t d = 0; d < o->rank && d < BERTH_MAX_RANK; d++) info->dims[d] = o->dims[d];
        }
        const int64_t *vals = ln->bucket_vals + (size_t)b * g->n_syms,
                      *last = ln->bucket_vals + (size_t)(ln->n_buckets - 1) * g->n_syms;
        uint64_t halved[BERTH_MAX_RANK];
        if (halved_deps(g, vals, i, halved) != 0) {
            berth_spec_free(s);
            return BERTH_ERR_NOMEM;
        }
        for (uint32_t d = 0; d < info->rank && d < BERTH_MAX_RANK; d++) {
            uint64_t dep = s->out_dep[(size_t)i * BERTH_MAX_RANK + d] | halved[d];
            if (d < o->rank && o->dims[d] != info->dims[d])
                for (uint32_t k = 0; k < g->n_syms; k++)
                    if (vals[k] != last[k]) dep |= UINT64_C(1) << k;
            for (uint32_t k = 0; k < g->n_syms && !info->dyn[d]; k++)
                if (dep & (UINT64_C(1) << k)) info->dyn[d] = g->syms[k].name;
        }
        berth_spec_free(s);
    }
    return BERTH_OK;
}

uint32_t berth_executor_bucket_count(const berth_executor *ex, uint32_t l) {
    return l < ex->n_lanes ? ex->lanes[l].n_buckets : 0;
}

void berth_executor_bucket_describe(const berth_executor *ex, uint32_t l, uint32_t b, char *buf,
                                    size_t cap) {
    if (!cap) return;
    buf[0] = 0;
    if (l >= ex->n_lanes || b >= ex->lanes[l].n_buckets) return;
    const lane *ln = &ex->lanes[l];
    if (ln->g->n_syms == 0) {
        snprintf(buf, cap, "static");
        return;
    }
    size_t o = 0;
    for (uint32_t s = 0; s < ln->g->n_syms && o < cap; s++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s=%lld", s ? " " : "", ln->g->syms[s].name,
                              (long long)ln->bucket_vals[(size_t)b * ln->g->n_syms + s]);
}

berth_status berth_executor_bucket_graph(berth_executor *ex, uint32_t l, uint32_t b,
                                         void (*visit)(void *ctx, const berth_graph_desc *graph),
                                         void *ctx, berth_error *err) {
    if (l >= ex->n_lanes || b >= ex->lanes[l].n_buckets) {
        berth_errorf(err, "no bucket %u in lane %u", b, l);
        return BERTH_ERR_INVALID;
    }
    berth_status st = berth_executor_enter(ex, "berth_executor_bucket_graph", err);
    if (st != BERTH_OK) return st;
    berth_spec *s = berth_lane_specialize(&ex->lanes[l], b, err);
    if (s) {
        visit(ctx, &s->desc);
        berth_spec_free(s);
    } else {
        st = BERTH_ERR_INVALID;
    }
    berth_executor_leave(ex);
    return st;
}

berth_status berth_executor_prepare(berth_executor *ex, uint32_t l, uint32_t b, berth_error *err) {
    return berth_context_prepare(ex->ctx, l, b, err);
}

int berth_executor_is_warm(const berth_executor *ex, uint32_t l, uint32_t b) {
    return berth_context_is_warm(ex->ctx, l, b);
}
