/* What /metrics reports, per model, in Prometheus's text format: requests
 * and failures, a latency histogram, batch sizes, bucket use, queue
 * depth, and the memory the model holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

/* Upper bounds of the latency histogram, in seconds. */
static const double latency_le[SERVE_LATENCY_BUCKETS] = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                                         0.1,    0.2,   0.5,   1,     2,    5,    10};
/* Upper bounds of the batch histograms (rows, requests). */
static const int64_t batch_le[SERVE_BATCH_BUCKETS] = {1, 2, 4, 8, 16, 32, 64, 128};
static const int failure_status[6] = {400, 404, 413, 503, 504, 500};

int serve_metrics_init(serve_metrics *m, uint32_t n_buckets) {
    memset(m, 0, sizeof *m);
    m->n_buckets = n_buckets;
    m->bucket_runs = calloc(n_buckets ? n_buckets : 1, sizeof *m->bucket_runs);
    if (!m->bucket_runs) return -1;
    pthread_mutex_init(&m->mu, NULL);
    return 0;
}

void serve_metrics_free(serve_metrics *m) {
    if (!m->bucket_runs) return;
    free(m->bucket_runs);
    pthread_mutex_destroy(&m->mu);
    m->bucket_runs = NULL;
}

void serve_metrics_request(serve_metrics *m, int status, double seconds) {
    pthread_mutex_lock(&m->mu);
    m->requests++;
    if (status != 200) {
        unsigned k = 0;
        while (k < 5 && failure_status[k] != (status == 405 ? 400 : status)) k++;
        m->failures[k]++; /* anything else counts as 500 */
    }
    unsigned i = 0;
    while (i < SERVE_LATENCY_BUCKETS && seconds > latency_le[i]) i++;
    m->latency[i]++;
    m->latency_sum += seconds;
    pthread_mutex_unlock(&m->mu);
}

static unsigned batch_slot(int64_t v) {
    unsigned i = 0;
    while (i < SERVE_BATCH_BUCKETS && v > batch_le[i]) i++;
    return i;
}

void serve_metrics_batch(serve_metrics *m, uint32_t requests, int64_t rows, uint32_t bucket) {
    pthread_mutex_lock(&m->mu);
    m->batches++;
    m->batch_rows[batch_slot(rows)]++;
    m->batch_requests[batch_slot(requests)]++;
    m->batch_request_sum += requests;
    m->batch_row_sum += (uint64_t)rows;
    if (bucket < m->n_buckets) m->bucket_runs[bucket]++;
    pthread_mutex_unlock(&m->mu);
}

/* The start of a sample: metric{model="...",key="value"} with the label
 * values escaped; key NULL: the model label only. */
static void series(serve_buf *b, const char *metric, const char *suffix, const char *model, const char *key,
                   const char *value) {
    serve_buf_printf(b, "%s%s{model=", metric, suffix);
    serve_buf_label(b, model);
    if (key) {
        serve_buf_printf(b, ",%s=", key);
        serve_buf_label(b, value);
    }
    serve_buf_put(b, "} ", 2);
}

/* A histogram's lines: cumulative buckets, +Inf, sum, count. */
static void histogram(serve_buf *b, const char *metric, const char *model, const uint64_t *counts,
                      unsigned n, const double *le_d, const int64_t *le_i, double sum) {
    uint64_t acc = 0;
    char le[32];
    for (unsigned i = 0; i <= n; i++) {
        acc += counts[i];
        if (i == n) snprintf(le, sizeof le, "+Inf");
        else if (le_d) snprintf(le, sizeof le, "%g", le_d[i]);
        else snprintf(le, sizeof le, "%lld", (long long)le_i[i]);
        series(b, metric, "_bucket", model, "le", le);
        serve_buf_printf(b, "%llu\n", (unsigned long long)acc);
    }
    series(b, metric, "_sum", model, NULL, NULL);
    serve_buf_printf(b, "%.9g\n", sum);
    series(b, metric, "_count", model, NULL, NULL);
    serve_buf_printf(b, "%llu\n", (unsigned long long)acc);
}

/* The server's own lines: connections and what guarded them. */
static void server_text(serve_server *s, serve_buf *b) {
    serve_buf_printf(b,
                     "# HELP berth_inflight_bytes Request bytes held (bodies and inputs), of the max_inflight_mb "
                     "budget.\n# TYPE berth_inflight_bytes gauge\nberth_inflight_bytes %zu\n",
                     atomic_load(&s->inflight));
    serve_buf_printf(b,
                     "# HELP berth_refused_total Requests refused before their body was read.\n"
                     "# TYPE berth_refused_total counter\nberth_refused_total{reason=\"inflight_budget\"} %llu\n",
                     (unsigned long long)atomic_load(&s->refused_budget));
    serve_buf_printf(b,
                     "# HELP berth_connections_cut_total Connections closed for a client too slow.\n"
                     "# TYPE berth_connections_cut_total counter\n"
                     "berth_connections_cut_total{reason=\"header_timeout\"} %llu\n"
                     "berth_connections_cut_total{reason=\"body_rate\"} %llu\n",
                     (unsigned long long)atomic_load(&s->cut_header), (unsigned long long)atomic_load(&s->cut_body));
}

void serve_metrics_text(serve_server *s, serve_buf *b) {
    static const char *const help[][3] = {
        {"berth_requests_total", "counter", "Infer requests answered."},
        {"berth_request_failures_total", "counter", "Infer requests answered with an error, by HTTP status."},
        {"berth_request_duration_seconds", "histogram", "Time from a request's arrival to its answer."},
        {"berth_batch_rows", "histogram", "Rows (batch entries) of each run."},
        {"berth_batch_requests", "histogram", "Requests merged into each run."},
        {"berth_bucket_runs_total", "counter", "Runs per bucket."},
        {"berth_queue_depth", "gauge", "Requests waiting for a worker."},
        {"berth_weights_bytes", "gauge", "Weights held on the device, once per model."},
        {"berth_plans_bytes", "gauge", "Plans held on the device, every run context's."},
        {"berth_host_bytes", "gauge", "The engine's own per-plan host buffers."},
    };
    /* Each model's memory once per scrape: counting takes the device
     * lock, which waits for a run in progress. */
    berth_memory *mem = calloc(s->n_models ? s->n_models : 1, sizeof *mem);
    if (!mem) {
        b->failed = 1;
        return;
    }
    for (uint32_t i = 0; i < s->n_models; i++) berth_executor_memory(s->models[i].ex, &mem[i]);
    for (unsigned h = 0; h < sizeof help / sizeof help[0]; h++) {
        const char *metric = help[h][0];
        serve_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", metric, help[h][2], metric, help[h][1]);
        for (uint32_t i = 0; i < s->n_models; i++) {
            serve_model *md = &s->models[i];
            serve_metrics *m = &md->metrics;
            const char *n = md->name;
            const berth_memory *mm = &mem[i];
            unsigned long long one = 0; /* a single-sample metric's value */
            pthread_mutex_lock(&m->mu);
            switch (h) {
            case 0: one = m->requests; break;
            case 1:
                for (unsigned k = 0; k < 6; k++) {
                    char code[16];
                    snprintf(code, sizeof code, "%d", failure_status[k]);
                    series(b, metric, "", n, "code", code);
                    serve_buf_printf(b, "%llu\n", (unsigned long long)m->failures[k]);
                }
                break;
            case 2: histogram(b, metric, n, m->latency, SERVE_LATENCY_BUCKETS, latency_le, NULL, m->latency_sum); break;
            case 3:
                histogram(b, metric, n, m->batch_rows, SERVE_BATCH_BUCKETS, NULL, batch_le, (double)m->batch_row_sum);
                break;
            case 4:
                histogram(b, metric, n, m->batch_requests, SERVE_BATCH_BUCKETS, NULL, batch_le,
                          (double)m->batch_request_sum);
                break;
            case 5:
                for (uint32_t k = 0; k < m->n_buckets; k++) {
                    char desc[200];
                    berth_executor_bucket_describe(md->ex, 0, k, desc, sizeof desc);
                    series(b, metric, "", n, "bucket", desc);
                    serve_buf_printf(b, "%llu\n", (unsigned long long)m->bucket_runs[k]);
                }
                break;
            case 6: break; /* read below, outside the metrics lock */
            case 7: one = mm->weights_bytes; break;
            case 8: one = mm->plans_bytes; break;
            default: one = mm->host_bytes; break;
            }
            pthread_mutex_unlock(&m->mu);
            if (h == 6) one = serve_model_depth(md);
            if (h == 0 || h >= 6) {
                series(b, metric, "", n, NULL, NULL);
                serve_buf_printf(b, "%llu\n", one);
            }
        }
    }
    free(mem);
    server_text(s, b);
}
