/* What /metrics reports, per model, in Prometheus's text format: requests
 * and failures, a latency histogram, batch sizes, bucket use, queue
 * depth, and the memory the model holds. */
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

/* A histogram's lines: cumulative buckets, +Inf, sum, count. */
static void histogram(serve_buf *b, const char *metric, const char *model, const uint64_t *counts,
                      unsigned n, const double *le_d, const int64_t *le_i, double sum) {
    uint64_t acc = 0;
    for (unsigned i = 0; i < n; i++) {
        acc += counts[i];
        serve_buf_printf(b, "%s_bucket{model=\"%s\",le=\"", metric, model);
        if (le_d) serve_buf_printf(b, "%g", le_d[i]);
        else serve_buf_printf(b, "%lld", (long long)le_i[i]);
        serve_buf_printf(b, "\"} %llu\n", (unsigned long long)acc);
    }
    acc += counts[n];
    serve_buf_printf(b, "%s_bucket{model=\"%s\",le=\"+Inf\"} %llu\n", metric, model, (unsigned long long)acc);
    serve_buf_printf(b, "%s_sum{model=\"%s\"} %.9g\n", metric, model, sum);
    serve_buf_printf(b, "%s_count{model=\"%s\"} %llu\n", metric, model, (unsigned long long)acc);
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
        serve_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", help[h][0], help[h][2], help[h][0], help[h][1]);
        for (uint32_t i = 0; i < s->n_models; i++) {
            serve_model *md = &s->models[i];
            serve_metrics *m = &md->metrics;
            const char *n = md->name;
            const berth_memory *mm = &mem[i];
            pthread_mutex_lock(&m->mu);
            switch (h) {
            case 0: serve_buf_printf(b, "%s{model=\"%s\"} %llu\n", help[h][0], n, (unsigned long long)m->requests); break;
            case 1:
                for (unsigned k = 0; k < 6; k++)
                    serve_buf_printf(b, "%s{model=\"%s\",code=\"%d\"} %llu\n", help[h][0], n, failure_status[k],
                                     (unsigned long long)m->failures[k]);
                break;
            case 2: histogram(b, help[h][0], n, m->latency, SERVE_LATENCY_BUCKETS, latency_le, NULL, m->latency_sum); break;
            case 3:
                histogram(b, help[h][0], n, m->batch_rows, SERVE_BATCH_BUCKETS, NULL, batch_le,
                          (double)m->batch_row_sum);
                break;
            case 4:
                histogram(b, help[h][0], n, m->batch_requests, SERVE_BATCH_BUCKETS, NULL, batch_le,
                          (double)m->batch_request_sum);
                break;
            case 5:
                for (uint32_t k = 0; k < m->n_buckets; k++) {
                    char desc[200];
                    berth_executor_bucket_describe(md->ex, 0, k, desc, sizeof desc);
                    serve_buf_printf(b, "%s{model=\"%s\",bucket=\"%s\"} %llu\n", help[h][0], n, desc,
                                     (unsigned long long)m->bucket_runs[k]);
                }
                break;
            case 6: break; /* read below, outside the metrics lock */
            case 7: serve_buf_printf(b, "%s{model=\"%s\"} %llu\n", help[h][0], n, (unsigned long long)mm->weights_bytes); break;
            case 8: serve_buf_printf(b, "%s{model=\"%s\"} %llu\n", help[h][0], n, (unsigned long long)mm->plans_bytes); break;
            default: serve_buf_printf(b, "%s{model=\"%s\"} %llu\n", help[h][0], n, (unsigned long long)mm->host_bytes); break;
            }
            pthread_mutex_unlock(&m->mu);
            if (h == 6) serve_buf_printf(b, "%s{model=\"%s\"} %u\n", help[h][0], n, serve_model_depth(md));
        }
    }
    free(mem);
}
