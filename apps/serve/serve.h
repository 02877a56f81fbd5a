/* `berth serve`: configs served over the Open Inference Protocol (KServe
 * v2 REST), with dynamic batching. What the files of apps/serve/ share:
 *   serve_request.c   an infer request's JSON (and binary tensor data)
 *                     read and checked against the model's inputs
 *   serve_json.c      responses written as JSON
 *   serve_model.c     a served model: its executor, run contexts, queue
 *                     and the workers that merge requests into batches
 *   serve_metrics.c   counters, histograms and the Prometheus text
 *   serve_http.c      the HTTP server (libmicrohttpd) and its routes
 *   serve_guard.c     what holds against hostile or broken clients:
 *                     framing checks, the in-flight body budget, the
 *                     header deadline and body rate floor
 *   serve_main.c      the command: load models, listen, drain on SIGTERM */
#ifndef BERTH_SERVE_H
#define BERTH_SERVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "berth/berth.h"

/* ---- what a model takes and gives (serve_request.c) ---- */

typedef struct serve_sig {
    uint32_t n_in, n_out;
    berth_io_info *in, *out; /* out dims: at every dyn dim's max; dyn: which it follows */
    /* The dyn dim that is dim 0 of every input and every output (a
     * batch, merged across requests), or NULL: requests run one by one. */
    const char *batch;
} serve_sig;

/* An infer request as read: every input in the model's order, its data
 * in its own buffer (aligned, owned by the request). */
#define SERVE_MAX_ID 255

typedef struct serve_infer {
    char id[SERVE_MAX_ID + 1]; /* "id", or empty; a longer one is refused */
    berth_tensor *in;      /* n_in */
    uint8_t *want;         /* per output: 1 when returned */
    uint8_t *binary;       /* per output: 1 when returned as binary data */
    int64_t rows;          /* dim 0 of the inputs when the model batches */
    int64_t timeout_us;    /* parameters.timeout (microseconds), 0: none */
} serve_infer;

/* The HTTP status of a refusal and its message, for {"error": ...}. */
typedef struct serve_error {
    int status;
    char msg[512];
} serve_error;

/* Read `len` bytes of body. header_len: the Inference-Header-Content-Length
 * header's value (the JSON's length, binary tensor data after it), or
 * SIZE_MAX when the request has none (all of it is JSON). 0 with *out
 * filled, or -1 with e (status 400) naming the field, what was expected
 * and what was found. */
int serve_infer_parse(const serve_sig *sig, const char *body, size_t len, size_t header_len,
                      serve_infer *out, serve_error *e);
void serve_infer_free(const serve_sig *sig, serve_infer *r);
/* OIP datatype names ("FP32"), and back; NULL / BERTH_DTYPE_INVALID when none. */
const char *serve_dtype_name(berth_dtype t);
berth_dtype serve_dtype_parse(const char *name);

/* ---- JSON out (serve_json.c) ---- */

typedef struct serve_buf {
    char *p;
    size_t len, cap;
    int failed; /* out of memory: the response becomes a 500 */
} serve_buf;

void serve_buf_printf(serve_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void serve_buf_put(serve_buf *b, const void *data, size_t n);
/* A JSON string, quoted and escaped; bytes that are not UTF-8 become
 * U+FFFD, so a response is valid JSON whatever a client sent. */
void serve_buf_json_str(serve_buf *b, const char *s);
/* A Prometheus label value, quoted: backslash, double quote and newline
 * escaped as the text format asks. */
void serve_buf_label(serve_buf *b, const char *s);
/* At most max bytes of s, for a message: printable ASCII as is, every
 * other byte as \xNN, "..." when cut. */
void serve_printable(char *dst, size_t cap, const char *s, size_t len, size_t max);
/* n elements of t's dtype as a JSON array of numbers (floats to the
 * digits that read back exactly; NaN and infinities, which JSON cannot
 * hold, as null). */
void serve_buf_json_data(serve_buf *b, berth_dtype t, const void *data, size_t n);
void serve_buf_free(serve_buf *b);
/* {"error": msg} */
void serve_json_error(serve_buf *b, const char *msg);
/* "[-1, 4]": a dim that follows a dyn dim is -1. */
void serve_json_shape(serve_buf *b, const berth_io_info *io);

/* ---- metrics (serve_metrics.c) ---- */

#define SERVE_LATENCY_BUCKETS 14
#define SERVE_BATCH_BUCKETS 8

typedef struct serve_metrics {
    pthread_mutex_t mu;
    uint64_t requests, failures[6];   /* failures by class: 400 404 413 503 504 500 */
    uint64_t latency[SERVE_LATENCY_BUCKETS + 1];
    double latency_sum;
    uint64_t batches, batch_rows[SERVE_BATCH_BUCKETS + 1], batch_requests[SERVE_BATCH_BUCKETS + 1];
    uint64_t batch_request_sum, batch_row_sum;
    uint32_t n_buckets;
    uint64_t *bucket_runs;            /* per bucket of lane 0 */
} serve_metrics;

int serve_metrics_init(serve_metrics *m, uint32_t n_buckets);
void serve_metrics_free(serve_metrics *m);
void serve_metrics_request(serve_metrics *m, int status, double seconds);
void serve_metrics_batch(serve_metrics *m, uint32_t requests, int64_t rows, uint32_t bucket);

/* A condition variable whose timed waits take CLOCK_MONOTONIC deadlines
 * (berth_now_ns), so a change of the wall clock moves none. */
static inline void serve_cond_init(pthread_cond_t *c) {
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(c, &ca);
    pthread_condattr_destroy(&ca);
}

/* ---- a served model (serve_model.c) ---- */

typedef struct serve_req serve_req;

typedef struct serve_model {
    char name[256];
    char path[4096];
    berth_executor *ex;
    serve_sig sig;
    /* [serve] */
    int64_t max_batch, max_delay_us, max_queue, timeout_ms;
    uint32_t workers;
    /* the queue */
    pthread_mutex_t mu;
    pthread_cond_t work;   /* a request arrived, or stopping */
    serve_req *head, *tail;
    uint32_t depth;
    int stopping;
    int abandon;           /* stopping at a deadline: what is queued is refused, not run */
    pthread_t *threads;
    berth_context **ctx;
    uint32_t n_started;
    void *state;           /* the workers' own buffers */
    serve_metrics metrics;
} serve_model;

/* One request on its way through a model: queued by the HTTP thread,
 * merged and run by a worker, answered by the HTTP thread again. */
struct serve_req {
    serve_infer in;
    uint64_t arrived_ns, deadline_ns;
    berth_tensor *out;     /* sig.n_out, this request's rows; owned */
    /* Called once when the request is answered (err set, or out filled),
     * from a worker or from serve_model_submit itself; the request is
     * the callee's from then on. */
    void (*on_done)(serve_req *r, void *arg);
    void *done_arg;
    serve_error err;       /* status 0: success */
    uint32_t bucket;
    serve_req *next;
};

/* Open the model `model` (NULL: [model]) of config `path`, named `name`:
 * executor, signature, [serve] settings, every bucket planned in every
 * worker's context, workers started. 0, or -1 with msg. */
int serve_model_open(serve_model *m, const char *path, const char *model, const char *name,
                     char *msg, size_t cap);
/* Queue r; r->on_done is called once a worker has answered it
 * (r->err.status 0 on success). Refusals (queue full, shutting down)
 * call it at once, from here. Never blocks on a run. */
void serve_model_submit(serve_model *m, serve_req *r);
void serve_model_free_result(serve_model *m, serve_req *r);
/* Stop the workers once the queue is empty (abandon: refuse what is
 * still queued with 503 rather than run it), and free. */
void serve_model_close(serve_model *m, int abandon);
uint32_t serve_model_depth(serve_model *m);

/* ---- the server (serve_http.c) ---- */

/* The server-wide settings: flags, or [serve] of the configs. */
typedef struct serve_limits {
    size_t max_body;            /* one request's body, bytes (--max-body-mb) */
    size_t max_inflight;        /* every request's body and inputs at once, bytes */
    unsigned max_connections, max_per_ip;
    unsigned header_timeout_s;  /* a new connection's request headers complete within */
    unsigned idle_timeout_s;    /* a kept-alive connection's next headers, and any silence */
    size_t min_body_rate;       /* bytes per second a body must average, after header_timeout_s */
    unsigned drain_s;           /* SIGTERM: the longest wait for requests in progress */
    unsigned http_threads;      /* threads that poll connections (none waits on a run) */
} serve_limits;

typedef struct serve_guard serve_guard;

typedef struct serve_server {
    serve_model *models;
    uint32_t n_models;
    serve_limits lim;
    atomic_int draining;        /* SIGTERM: new work is refused, in-flight finishes */
    atomic_int open_requests;   /* infer requests from their headers to their end */
    atomic_size_t inflight;     /* bytes of the budget held by requests */
    atomic_ullong refused_budget, cut_header, cut_body; /* for /metrics */
    serve_guard *guard;
    pthread_mutex_t mu;         /* a queued request's hand-over between worker and HTTP side */
    int stopped;                /* the HTTP side is gone: answers are dropped */
    int resuming;               /* workers between deciding to resume a connection and doing it */
    void *queued;               /* requests a worker holds (serve_http.c's list) */
    void *daemon;               /* struct MHD_Daemon */
} serve_server;

/* Listen on host:port (0: any free port); *port_out gets the port. */
int serve_http_start(serve_server *s, const char *host, uint16_t port, uint16_t *port_out, char *msg,
                     size_t cap);
/* Close every connection and stop; no request is answered after. */
void serve_http_stop(serve_server *s);
/* The Prometheus text of every model. */
void serve_metrics_text(serve_server *s, serve_buf *b);

/* The `berth serve` command. */
int berth_cli_serve(int argc, char **argv);

#endif
