/* A served model: one executor (one copy of the weights), a run context
 * per worker thread, and a queue. A worker takes the oldest request,
 * waits up to max_delay_us for others whose shape it can merge (the same
 * dims but the batch), concatenates them along the batch dim, runs them
 * in the smallest bucket that holds them, and splits the outputs back. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "dtype.h"
#include "serve.h"
#include "util.h"

static void set_error(serve_req *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_error(serve_req *r, int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    r->err.status = status;
    vsnprintf(r->err.msg, sizeof r->err.msg, fmt, ap);
    va_end(ap);
}

/* Two requests merge when every input agrees on every dim but the batch. */
static int mergeable(const serve_model *m, const serve_req *a, const serve_req *b) {
    if (!m->sig.batch) return 0;
    for (uint32_t i = 0; i < m->sig.n_in; i++)
        for (uint32_t d = 1; d < a->in.in[i].rank; d++)
            if (a->in.in[i].dims[d] != b->in.in[i].dims[d]) return 0;
    return 1;
}

/* Rows waiting that could join the oldest request's run. */
static int64_t rows_ready(const serve_model *m) {
    int64_t rows = 0;
    for (const serve_req *r = m->head; r; r = r->next)
        if (r == m->head || mergeable(m, m->head, r)) rows += r->in.rows;
    return rows;
}

/* Unlink the oldest request and those that fit beside it, in arrival
 * order, up to max_batch rows; the caller holds m->mu. */
static uint32_t take_batch(serve_model *m, serve_req **batch) {
    serve_req *head = m->head;
    uint32_t n = 0;
    int64_t rows = 0;
    serve_req **link = &m->head;
    while (*link && rows < m->max_batch) {
        serve_req *r = *link;
        if (r == head || (mergeable(m, head, r) && rows + r->in.rows <= m->max_batch)) {
            batch[n++] = r;
            rows += r->in.rows;
            *link = r->next;
            r->next = NULL;
        } else {
            link = &r->next;
        }
    }
    m->tail = NULL; /* at most max_queue requests to walk */
    for (serve_req *t = m->head; t; t = t->next) m->tail = t;
    m->depth -= n;
    return n;
}

static int status_of(berth_status st) {
    return st == BERTH_ERR_INVALID || st == BERTH_ERR_UNSUPPORTED ? 400 : st == BERTH_ERR_NOMEM ? 503 : 500;
}

/* Give each request its rows of the outputs it asked for. */
static int split_outputs(serve_model *m, serve_req **batch, uint32_t n, const berth_tensor *out) {
    for (uint32_t k = 0, at = 0; k < n; at += (uint32_t)batch[k]->in.rows, k++) {
        serve_req *r = batch[k];
        r->out = calloc(m->sig.n_out ? m->sig.n_out : 1, sizeof *r->out);
        if (!r->out) return -1;
        for (uint32_t o = 0; o < m->sig.n_out; o++) {
            if (!r->in.want[o]) continue;
            const berth_tensor *full = &out[o];
            berth_tensor *t = &r->out[o];
            *t = *full;
            size_t row = full->rank && full->dims[0] ? full->bytes / (size_t)full->dims[0] : full->bytes;
            size_t skip = 0;
            if (n > 1) { /* merged: dim 0 is the batch */
                t->dims[0] = r->in.rows;
                t->bytes = row * (size_t)r->in.rows;
                skip = row * at;
            }
            t->data = malloc(t->bytes ? t->bytes : 1);
            if (!t->data) return -1;
            t->capacity = t->bytes;
            memcpy(t->data, (const char *)full->data + skip, t->bytes);
        }
    }
    return 0;
}

typedef struct worker_state {
    serve_model *m;
    berth_context *ctx;
    berth_tensor *merged; /* n_in: the batch's inputs, grown as needed */
    berth_tensor *out;    /* n_out: grown by the executor */
    serve_req **batch;    /* max_batch */
} worker_state;

/* Run n requests as one batch; on success each gets its outputs. */
static berth_status run_batch(worker_state *w, serve_req **batch, uint32_t n, int64_t rows,
                              berth_error *err) {
    serve_model *m = w->m;
    const berth_tensor *in = batch[0]->in.in;
    if (n > 1) {
        for (uint32_t i = 0; i < m->sig.n_in; i++) {
            berth_tensor *t = &w->merged[i];
            const berth_tensor *first = &batch[0]->in.in[i];
            size_t row = first->bytes / (size_t)first->dims[0], need = row * (size_t)rows;
            if (t->capacity < need) {
                void *p = realloc(t->data, need);
                if (!p) {
                    snprintf(err->msg, sizeof err->msg, "out of memory merging a batch of %lld rows", (long long)rows);
                    return BERTH_ERR_NOMEM;
                }
                t->data = p;
                t->capacity = need;
            }
            t->dtype = first->dtype;
            t->rank = first->rank;
            memcpy(t->dims, first->dims, sizeof t->dims);
            t->dims[0] = rows;
            t->bytes = need;
            size_t at = 0;
            for (uint32_t k = 0; k < n; k++) {
                memcpy((char *)t->data + at, batch[k]->in.in[i].data, batch[k]->in.in[i].bytes);
                at += batch[k]->in.in[i].bytes;
            }
        }
        in = w->merged;
    }
    uint32_t bucket = 0;
    berth_status st = berth_context_run(w->ctx, 0, in, m->sig.n_in, w->out, m->sig.n_out, &bucket, err);
    if (st != BERTH_OK) return st;
    serve_metrics_batch(&m->metrics, n, rows, bucket);
    for (uint32_t k = 0; k < n; k++) batch[k]->bucket = bucket;
    if (split_outputs(m, batch, n, w->out)) {
        snprintf(err->msg, sizeof err->msg, "out of memory splitting the outputs");
        return BERTH_ERR_NOMEM;
    }
    return BERTH_OK;
}

static void serve_batch(worker_state *w, serve_req **batch, uint32_t n) {
    uint64_t now = berth_now_ns();
    /* Requests whose deadline passed while they waited are answered
     * 504 without running: the live ones are swapped to the front, so
     * batch[0..n) still holds every request once. */
    uint32_t live = 0;
    int64_t live_rows = 0;
    for (uint32_t k = 0; k < n; k++) {
        serve_req *r = batch[k];
        if (now > r->deadline_ns) {
            set_error(r, 504, "the request's deadline passed after %llu ms in the queue",
                      (unsigned long long)((now - r->arrived_ns) / 1000000));
        } else {
            batch[k] = batch[live];
            batch[live++] = r;
            live_rows += r->in.rows;
        }
    }
    berth_error err;
    berth_status st = live ? run_batch(w, batch, live, live_rows, &err) : BERTH_OK;
    if (st != BERTH_OK && live > 1) {
        /* One request's bad values (an index out of range) fail the
         * merged run: run each alone, so only that one is refused. */
        for (uint32_t k = 0; k < live; k++) {
            st = run_batch(w, &batch[k], 1, batch[k]->in.rows, &err);
            if (st != BERTH_OK) set_error(batch[k], status_of(st), "%s", err.msg);
        }
    } else if (st != BERTH_OK) {
        set_error(batch[0], status_of(st), "%s", err.msg);
    }
    /* Each request's answer goes back through its own callback (the
     * HTTP side resumes that connection); the request is not touched
     * after it. */
    for (uint32_t k = 0; k < n; k++) batch[k]->on_done(batch[k], batch[k]->done_arg);
}

static void *worker_main(void *arg) {
    worker_state *w = arg;
    serve_model *m = w->m;
    pthread_mutex_lock(&m->mu);
    for (;;) {
        while (!m->head && !m->stopping) pthread_cond_wait(&m->work, &m->mu);
        if (!m->head) break; /* stopping, and nothing left to answer */
        /* Wait for company: until the batch is full, the oldest request
         * has waited max_delay_us, or the server stops. */
        uint64_t until = m->head->arrived_ns + (uint64_t)m->max_delay_us * 1000u;
        while (m->head && !m->stopping && m->max_batch > 1 && rows_ready(m) < m->max_batch && berth_now_ns() < until) {
            struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
            pthread_cond_timedwait(&m->work, &m->mu, &ts);
        }
        if (!m->head) continue; /* another worker took them */
        uint32_t n = take_batch(m, w->batch);
        int abandon = m->abandon;
        pthread_mutex_unlock(&m->mu);
        if (abandon) {
            for (uint32_t k = 0; k < n; k++) {
                set_error(w->batch[k], 503, "model '%s' stopped before this request ran (drain_s passed)", m->name);
                w->batch[k]->on_done(w->batch[k], w->batch[k]->done_arg);
            }
        } else {
            serve_batch(w, w->batch, n);
        }
        pthread_mutex_lock(&m->mu);
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

uint32_t serve_model_depth(serve_model *m) {
    pthread_mutex_lock(&m->mu);
    uint32_t d = m->depth;
    pthread_mutex_unlock(&m->mu);
    return d;
}

void serve_model_submit(serve_model *m, serve_req *r) {
    r->arrived_ns = berth_now_ns();
    int64_t timeout_us = m->timeout_ms * 1000;
    if (r->in.timeout_us && r->in.timeout_us < timeout_us) timeout_us = r->in.timeout_us;
    r->deadline_ns = r->arrived_ns + (uint64_t)timeout_us * 1000u;
    pthread_mutex_lock(&m->mu);
    int queued = 0;
    if (m->stopping) {
        set_error(r, 503, "model '%s' is shutting down", m->name);
    } else if (m->depth >= (uint64_t)m->max_queue) {
        set_error(r, 503, "model '%s': the queue is full (%u requests waiting; [serve] max_queue)", m->name,
                  m->depth);
    } else {
        if (m->tail) m->tail->next = r;
        else m->head = r;
        m->tail = r;
        m->depth++;
        queued = 1;
        pthread_cond_broadcast(&m->work);
    }
    pthread_mutex_unlock(&m->mu);
    if (!queued) r->on_done(r, r->done_arg);
}

void serve_model_free_result(serve_model *m, serve_req *r) {
    if (r->out)
        for (uint32_t o = 0; o < m->sig.n_out; o++) free(r->out[o].data);
    free(r->out);
    r->out = NULL;
    serve_infer_free(&m->sig, &r->in);
}

/* The largest value the batch dim takes in any bucket of lane 0. */
static int64_t largest_batch(const serve_model *m) {
    int64_t best = 1;
    size_t len = strlen(m->sig.batch);
    for (uint32_t b = 0; b < berth_executor_bucket_count(m->ex, 0); b++) {
        char desc[512];
        berth_executor_bucket_describe(m->ex, 0, b, desc, sizeof desc);
        for (const char *p = desc; (p = strstr(p, m->sig.batch)); p += len)
            if ((p == desc || p[-1] == ' ') && p[len] == '=') {
                long long v = atoll(p + len + 1);
                if (v > best) best = v;
            }
    }
    return best;
}

static int read_signature(serve_model *m, char *msg, size_t cap) {
    serve_sig *s = &m->sig;
    s->n_in = berth_executor_input_count(m->ex, 0);
    s->n_out = berth_executor_output_count(m->ex, 0);
    s->in = calloc(s->n_in ? s->n_in : 1, sizeof *s->in);
    s->out = calloc(s->n_out ? s->n_out : 1, sizeof *s->out);
    if (!s->in || !s->out) {
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < s->n_in; i++) {
        berth_executor_input_info(m->ex, 0, i, &s->in[i]);
        if (!serve_dtype_name(s->in[i].dtype)) {
            snprintf(msg, cap, "input '%s' is %s, which the protocol cannot carry", s->in[i].name,
                     berth_dtype_name(s->in[i].dtype));
            return -1;
        }
    }
    for (uint32_t i = 0; i < s->n_out; i++)
        if (berth_executor_output_info(m->ex, 0, i, &s->out[i]) != BERTH_OK || !serve_dtype_name(s->out[i].dtype)) {
            snprintf(msg, cap, "output '%s': its dtype cannot be carried by the protocol", s->out[i].name);
            return -1;
        }
    /* Batching needs dim 0 of every input and output to be one dyn dim. */
    const char *batch = s->n_in && s->in[0].rank ? s->in[0].dyn[0] : NULL;
    for (uint32_t i = 0; batch && i < s->n_in; i++)
        if (!s->in[i].rank || !s->in[i].dyn[0] || strcmp(s->in[i].dyn[0], batch)) batch = NULL;
    for (uint32_t i = 0; batch && i < s->n_out; i++)
        if (!s->out[i].rank || !s->out[i].dyn[0] || strcmp(s->out[i].dyn[0], batch)) batch = NULL;
    s->batch = batch;
    return 0;
}

int serve_model_open(serve_model *m, const char *path, const char *model, const char *name, char *msg,
                     size_t cap) {
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->path, sizeof m->path, "%s", path);
    pthread_mutex_init(&m->mu, NULL);
    serve_cond_init(&m->work);

    berth_error err;
    berth_config *cfg = berth_config_load_model(path, model, &err);
    if (!cfg) {
        snprintf(msg, cap, "%s", err.msg);
        return -1;
    }
    m->max_delay_us = cfg->serve_max_delay_us ? (int64_t)cfg->serve_max_delay_us : 1000;
    m->max_queue = cfg->serve_max_queue ? (int64_t)cfg->serve_max_queue : 256;
    m->timeout_ms = cfg->serve_timeout_ms ? (int64_t)cfg->serve_timeout_ms : 30000;
    m->workers = cfg->serve_workers ? (uint32_t)(cfg->serve_workers > 64 ? 64 : cfg->serve_workers) : 1;
    int64_t max_batch = (int64_t)cfg->serve_max_batch;
    berth_config_free(cfg);

    berth_open_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.log_level = BERTH_LOG_WARN;
    o.model = model;
    if (berth_executor_open(path, &o, &m->ex, &err) != BERTH_OK) {
        snprintf(msg, cap, "%s", err.msg);
        return -1;
    }
    if (read_signature(m, msg, cap)) return -1;
    m->max_batch = !m->sig.batch ? 1 : max_batch ? max_batch : largest_batch(m);
    if (serve_metrics_init(&m->metrics, berth_executor_bucket_count(m->ex, 0))) {
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    m->threads = calloc(m->workers, sizeof *m->threads);
    m->ctx = calloc(m->workers, sizeof *m->ctx);
    worker_state *ws = calloc(m->workers, sizeof *ws);
    if (!m->threads || !m->ctx || !ws) {
        free(ws);
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    /* Every bucket planned in every worker's context now, so no request
     * pays for a plan. */
    for (uint32_t k = 0; k < m->workers; k++) {
        if (berth_context_open(m->ex, &m->ctx[k], &err) != BERTH_OK) goto fail;
        for (uint32_t b = 0; b < berth_executor_bucket_count(m->ex, 0); b++)
            if (berth_context_prepare(m->ctx[k], 0, b, &err) != BERTH_OK) goto fail;
        ws[k].m = m;
        ws[k].ctx = m->ctx[k];
        ws[k].merged = calloc(m->sig.n_in ? m->sig.n_in : 1, sizeof *ws[k].merged);
        ws[k].out = calloc(m->sig.n_out ? m->sig.n_out : 1, sizeof *ws[k].out);
        ws[k].batch = calloc((size_t)m->max_batch, sizeof *ws[k].batch);
        if (!ws[k].merged || !ws[k].out || !ws[k].batch) {
            snprintf(err.msg, sizeof err.msg, "out of memory");
            goto fail;
        }
    }
    for (uint32_t k = 0; k < m->workers; k++) {
        if (pthread_create(&m->threads[k], NULL, worker_main, &ws[k])) {
            snprintf(err.msg, sizeof err.msg, "cannot start worker thread %u", k);
            goto fail;
        }
        m->n_started++;
    }
    m->state = ws;
    return 0;
fail:
    snprintf(msg, cap, "%s", err.msg);
    m->state = ws;
    return -1;
}

void serve_model_close(serve_model *m, int abandon) {
    pthread_mutex_lock(&m->mu);
    m->stopping = 1;
    m->abandon = abandon;
    pthread_cond_broadcast(&m->work);
    pthread_mutex_unlock(&m->mu);
    for (uint32_t k = 0; k < m->n_started; k++) pthread_join(m->threads[k], NULL);
    worker_state *ws = m->state;
    for (uint32_t k = 0; ws && k < m->workers; k++) {
        for (uint32_t i = 0; ws[k].merged && i < m->sig.n_in; i++) free(ws[k].merged[i].data);
        for (uint32_t i = 0; ws[k].out && i < m->sig.n_out; i++) berth_tensor_release(&ws[k].out[i]);
        free(ws[k].merged);
        free(ws[k].out);
        free(ws[k].batch);
    }
    free(ws);
    for (uint32_t k = 0; m->ctx && k < m->workers; k++) berth_context_close(m->ctx[k]);
    free(m->ctx);
    free(m->threads);
    serve_metrics_free(&m->metrics);
    berth_executor_close(m->ex);
    free(m->sig.in);
    free(m->sig.out);
    pthread_cond_destroy(&m->work);
    pthread_mutex_destroy(&m->mu);
    memset(m, 0, sizeof *m);
}
