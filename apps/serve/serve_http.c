/* The HTTP side of `berth serve`: libmicrohttpd polling with epoll on a
 * few threads (http_threads), the Open Inference Protocol's REST routes,
 * and /metrics. No thread waits on a client or on a run: an infer
 * request, once its body is read and parsed, is queued on its model and
 * its connection suspended; the worker that answers it resumes the
 * connection, and a polling thread writes the answer. So an idle or slow
 * connection costs a socket and a few kilobytes, not a thread, and the
 * guards (serve_guard.c) bound what each may hold and for how long. */
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"
#include "serve_guard.h"
#include "util.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0"
#endif

/* One request, from its headers to its end (libmicrohttpd's per-request
 * state). Once queued on a model it has two owners, the connection and
 * the worker; whichever lets go last frees it (refs, under s->mu). */
typedef struct request {
    serve_server *s;
    struct MHD_Connection *c;
    serve_conn *conn;
    char *body;
    size_t len, cap;
    size_t reserved;    /* bytes of the in-flight budget held */
    int counted;        /* in s->open_requests */
    int answered;       /* a response is queued */
    int chunked;        /* no Content-Length: the budget grows as the body arrives */
    serve_model *m;
    serve_req *r;       /* parsed and queued */
    int done;           /* the worker has answered r */
    int refs;
    struct request *prev, *next; /* s->queued, while a worker holds it */
    uint64_t t0;
} request;

static void request_free(request *q) {
    serve_server *s = q->s;
    if (q->r) {
        serve_model_free_result(q->m, q->r);
        free(q->r);
    }
    free(q->body);
    if (q->reserved) serve_guard_release(s, q->reserved);
    free(q);
}

/* Drop one owner's hold; the caller holds s->mu. */
static int request_unref(request *q) {
    if (--q->refs) return 0;
    request_free(q);
    return 1;
}

/* Queue b (taken: freed by libmicrohttpd) as the response. close: the
 * connection ends after it (a refusal before the body was read, or the
 * server draining). */
static enum MHD_Result reply_ex(struct MHD_Connection *c, int status, serve_buf *b, const char *type,
                                size_t header_len, int close) {
    if (b->failed) {
        serve_buf_free(b);
        serve_json_error(b, "out of memory writing the response");
        status = 500;
        type = "application/json";
        header_len = SIZE_MAX;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(b->len, b->p, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        serve_buf_free(b);
        return MHD_NO;
    }
    b->p = NULL; /* the response owns it now */
    MHD_add_response_header(r, "Content-Type", type);
    if (close) MHD_add_response_header(r, "Connection", "close");
    if (status == 503) MHD_add_response_header(r, "Retry-After", "1");
    if (header_len != SIZE_MAX) {
        char n[32];
        snprintf(n, sizeof n, "%zu", header_len);
        MHD_add_response_header(r, "Inference-Header-Content-Length", n);
    }
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    serve_buf_free(b);
    return ret;
}

/* Draining, every answer ends its connection. */
static enum MHD_Result reply(serve_server *s, struct MHD_Connection *c, int status, serve_buf *b, const char *type,
                             size_t header_len) {
    return reply_ex(c, status, b, type, header_len, atomic_load(&s->draining));
}

static enum MHD_Result reply_json(serve_server *s, struct MHD_Connection *c, int status, serve_buf *b) {
    return reply(s, c, status, b, "application/json", SIZE_MAX);
}

static enum MHD_Result reply_error(serve_server *s, struct MHD_Connection *c, int status, const char *msg) {
    serve_buf b = {0};
    serve_json_error(&b, msg);
    return reply_json(s, c, status, &b);
}

/* A refusal that ends the connection: its body, if any, is not read. */
static enum MHD_Result refuse(request *q, int status, const char *msg) {
    serve_buf b = {0};
    serve_json_error(&b, msg);
    q->answered = 1;
    if (q->m) serve_metrics_request(&q->m->metrics, status, (double)(berth_now_ns() - q->t0) / 1e9);
    return reply_ex(q->c, status, &b, "application/json", SIZE_MAX, 1);
}

static serve_model *find_model(serve_server *s, const char *name, size_t len) {
    for (uint32_t i = 0; i < s->n_models; i++)
        if (strlen(s->models[i].name) == len && !strncmp(s->models[i].name, name, len)) return &s->models[i];
    return NULL;
}

/* "/v2/models/NAME[/versions/1]REST": NAME, and REST ("" for the model
 * itself; versions/1 is the only version of a model). 0 when url is not
 * under /v2/models/. */
static int model_path(const char *url, const char **name, size_t *name_len, const char **rest) {
    const char *prefix = "/v2/models/";
    if (strncmp(url, prefix, strlen(prefix))) return 0;
    *name = url + strlen(prefix);
    const char *slash = strchr(*name, '/');
    *name_len = slash ? (size_t)(slash - *name) : strlen(*name);
    *rest = slash ? slash : "";
    if (!strncmp(*rest, "/versions/1", 11) && ((*rest)[11] == 0 || (*rest)[11] == '/')) *rest += 11;
    return 1;
}

static void io_list(serve_buf *b, const berth_io_info *io, uint32_t n) {
    serve_buf_put(b, "[", 1);
    for (uint32_t i = 0; i < n; i++) {
        serve_buf_printf(b, "%s{\"name\":", i ? "," : "");
        serve_buf_json_str(b, io[i].name);
        serve_buf_printf(b, ",\"datatype\":\"%s\",\"shape\":", serve_dtype_name(io[i].dtype));
        serve_json_shape(b, &io[i]);
        serve_buf_put(b, "}", 1);
    }
    serve_buf_put(b, "]", 1);
}

static enum MHD_Result model_metadata(serve_server *s, struct MHD_Connection *c, serve_model *m) {
    serve_buf b = {0};
    serve_buf_put(&b, "{\"name\":", 8);
    serve_buf_json_str(&b, m->name);
    serve_buf_printf(&b, ",\"versions\":[\"1\"],\"platform\":\"berth_%s\",\"inputs\":",
                     berth_executor_backend(m->ex));
    io_list(&b, m->sig.in, m->sig.n_in);
    serve_buf_put(&b, ",\"outputs\":", 11);
    io_list(&b, m->sig.out, m->sig.n_out);
    serve_buf_put(&b, "}", 1);
    return reply_json(s, c, 200, &b);
}

/* The inference response: JSON, then the binary outputs' bytes in
 * output order when any were asked for as binary data. */
static enum MHD_Result infer_response(serve_server *s, struct MHD_Connection *c, serve_model *m, serve_req *r) {
    serve_buf b = {0};
    serve_buf_put(&b, "{\"model_name\":", 14);
    serve_buf_json_str(&b, m->name);
    serve_buf_put(&b, ",\"model_version\":\"1\"", 20);
    if (r->in.id[0]) {
        serve_buf_put(&b, ",\"id\":", 6);
        serve_buf_json_str(&b, r->in.id);
    }
    serve_buf_put(&b, ",\"outputs\":[", 12);
    int any_binary = 0, first = 1;
    for (uint32_t o = 0; o < m->sig.n_out; o++) {
        if (!r->in.want[o]) continue;
        const berth_tensor *t = &r->out[o];
        serve_buf_printf(&b, "%s{\"name\":", first ? "" : ",");
        first = 0;
        serve_buf_json_str(&b, m->sig.out[o].name);
        serve_buf_printf(&b, ",\"datatype\":\"%s\",\"shape\":[", serve_dtype_name(t->dtype));
        size_t count = 1;
        for (uint32_t d = 0; d < t->rank; d++) {
            serve_buf_printf(&b, "%s%lld", d ? "," : "", (long long)t->dims[d]);
            count *= (size_t)t->dims[d];
        }
        serve_buf_put(&b, "]", 1);
        if (r->in.binary[o]) {
            any_binary = 1;
            serve_buf_printf(&b, ",\"parameters\":{\"binary_data_size\":%zu}}", t->bytes);
        } else {
            serve_buf_put(&b, ",\"data\":", 8);
            serve_buf_json_data(&b, t->dtype, t->data, count);
            serve_buf_put(&b, "}", 1);
        }
    }
    serve_buf_put(&b, "]}", 2);
    if (!any_binary) return reply_json(s, c, 200, &b);
    size_t header_len = b.len;
    for (uint32_t o = 0; o < m->sig.n_out; o++)
        if (r->in.want[o] && r->in.binary[o]) serve_buf_put(&b, r->out[o].data, r->out[o].bytes);
    return reply(s, c, 200, &b, "application/octet-stream", header_len);
}

/* The worker's answer: resume the connection, whose polling thread then
 * writes it; or, when the connection is gone, let go of the request. */
static void on_done(serve_req *r, void *arg) {
    (void)r;
    request *q = arg;
    serve_server *s = q->s;
    pthread_mutex_lock(&s->mu);
    q->done = 1;
    if (q->prev) q->prev->next = q->next;
    else s->queued = q->next;
    if (q->next) q->next->prev = q->prev;
    q->prev = q->next = NULL;
    struct MHD_Connection *c = q->c;
    /* libmicrohttpd is not called under s->mu, which its callbacks take;
     * `resuming` keeps serve_http_stop from freeing c meanwhile. */
    int resume = !request_unref(q) && !s->stopped;
    s->resuming += resume;
    pthread_mutex_unlock(&s->mu);
    if (!resume) return;
    MHD_resume_connection(c);
    pthread_mutex_lock(&s->mu);
    s->resuming--;
    pthread_mutex_unlock(&s->mu);
}

/* The body is whole: read it, queue it and suspend the connection until
 * a worker answers; the answer is written on the call after resuming. */
static enum MHD_Result infer(serve_server *s, struct MHD_Connection *c, serve_model *m, request *q) {
    if (q->r) {
        if (!q->done) return MHD_NO; /* resumed by the server stopping */
        serve_req *r = q->r;
        enum MHD_Result ret = r->err.status ? reply_error(s, c, r->err.status, r->err.msg) : infer_response(s, c, m, r);
        serve_metrics_request(&m->metrics, r->err.status ? r->err.status : 200, (double)(berth_now_ns() - q->t0) / 1e9);
        q->answered = 1;
        return ret;
    }
    serve_req *r = calloc(1, sizeof *r);
    if (!r) return refuse(q, 500, "out of memory");
    q->r = r;
    size_t header_len = SIZE_MAX;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Inference-Header-Content-Length");
    if (h) {
        char *end;
        unsigned long long v = strtoull(h, &end, 10);
        if (!*h || *end || *h == '-') {
            char shown[100];
            serve_printable(shown, sizeof shown, h, strlen(h), 64);
            r->err.status = 400;
            snprintf(r->err.msg, sizeof r->err.msg,
                     "Inference-Header-Content-Length: expected a whole number of bytes, found '%s'", shown);
        }
        header_len = (size_t)v;
    }
    if (!r->err.status)
        serve_infer_parse(&m->sig, q->body ? q->body : "", q->len, header_len, &r->in, &r->err);
    /* The parsed inputs take the body's place in the budget. */
    free(q->body);
    q->body = NULL;
    q->len = q->cap = 0;
    if (r->err.status) {
        q->done = 1;
        return infer(s, c, m, q);
    }
    r->on_done = on_done;
    r->done_arg = q;
    pthread_mutex_lock(&s->mu);
    q->refs++;
    q->next = s->queued;
    if (q->next) q->next->prev = q;
    s->queued = q;
    pthread_mutex_unlock(&s->mu);
    MHD_suspend_connection(c); /* before the worker can resume it */
    serve_model_submit(m, r);
    return MHD_YES;
}

static enum MHD_Result route(serve_server *s, struct MHD_Connection *c, const char *url, const char *method,
                             request *q) {
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
    if (!strcmp(url, "/metrics")) {
        if (!get) return reply_error(s, c, 405, "/metrics: expected GET");
        serve_buf b = {0};
        serve_metrics_text(s, &b);
        return reply(s, c, 200, &b, "text/plain; version=0.0.4", SIZE_MAX);
    }
    if (!strcmp(url, "/v2") || !strcmp(url, "/v2/")) {
        if (!get) return reply_error(s, c, 405, "/v2: expected GET");
        serve_buf b = {0};
        serve_buf_printf(&b, "{\"name\":\"berth\",\"version\":\"%s\",\"extensions\":[\"binary_tensor_data\"]}",
                         BERTH_VERSION);
        return reply_json(s, c, 200, &b);
    }
    if (!strcmp(url, "/v2/health/live")) {
        if (!get) return reply_error(s, c, 405, "/v2/health/live: expected GET");
        serve_buf b = {0};
        serve_buf_printf(&b, "{\"live\":true}");
        return reply_json(s, c, 200, &b);
    }
    if (!strcmp(url, "/v2/health/ready")) {
        if (!get) return reply_error(s, c, 405, "/v2/health/ready: expected GET");
        int ready = !atomic_load(&s->draining);
        serve_buf b = {0};
        serve_buf_printf(&b, "{\"ready\":%s}", ready ? "true" : "false");
        return reply_json(s, c, ready ? 200 : 503, &b);
    }
    char shown[400], msg[600];
    const char *name, *rest;
    size_t name_len;
    if (!model_path(url, &name, &name_len, &rest)) {
        serve_printable(shown, sizeof shown, url, strlen(url), 200);
        snprintf(msg, sizeof msg, "no such path: %s", shown);
        return reply_error(s, c, 404, msg);
    }
    serve_model *m = find_model(s, name, name_len);
    if (!m) {
        serve_printable(shown, sizeof shown, name, name_len, 200);
        snprintf(msg, sizeof msg, "no model named '%s'", shown);
        return reply_error(s, c, 404, msg);
    }
    if (!*rest) {
        if (!get) return reply_error(s, c, 405, "model metadata: expected GET");
        return model_metadata(s, c, m);
    }
    if (!strcmp(rest, "/ready")) {
        if (!get) return reply_error(s, c, 405, "model ready: expected GET");
        int ready = !atomic_load(&s->draining);
        serve_buf b = {0};
        serve_buf_put(&b, "{\"name\":", 8);
        serve_buf_json_str(&b, m->name);
        serve_buf_printf(&b, ",\"ready\":%s}", ready ? "true" : "false");
        return reply_json(s, c, ready ? 200 : 503, &b);
    }
    if (!strcmp(rest, "/infer")) {
        if (!post) return reply_error(s, c, 405, "infer: expected POST");
        return infer(s, c, m, q);
    }
    serve_printable(shown, sizeof shown, url, strlen(url), 200);
    snprintf(msg, sizeof msg, "no such path: %s", shown);
    return reply_error(s, c, 404, msg);
}

/* The model an infer URL names, or NULL when url is no infer route of a
 * served model. */
static serve_model *infer_model(serve_server *s, const char *url) {
    const char *name, *rest;
    size_t len;
    return model_path(url, &name, &len, &rest) && !strcmp(rest, "/infer") ? find_model(s, name, len) : NULL;
}

/* The headers are whole: refuse what must not be read on (ambiguous
 * framing, a body over the cap or the budget, a server draining) before
 * a byte of the body is taken. */
static enum MHD_Result on_headers(serve_server *s, request *q, const char *url, const char *method) {
    struct MHD_Connection *c = q->c;
    serve_guard_phase(s->guard, q->conn, SERVE_CONN_BODY);
    char msg[400];
    if (serve_guard_framing(c, msg, sizeof msg)) return refuse(q, 400, msg);
    if (strcmp(method, "POST")) return MHD_YES;
    q->m = infer_model(s, url);
    if (!q->m) return MHD_YES;
    q->counted = 1;
    atomic_fetch_add(&s->open_requests, 1);
    if (atomic_load(&s->draining)) return refuse(q, 503, "the server is shutting down");
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    unsigned long long declared = cl ? strtoull(cl, NULL, 10) : 0; /* digits: libmicrohttpd checked */
    q->chunked = !cl;
    if (declared > s->lim.max_body) {
        snprintf(msg, sizeof msg,
                 "the request body is %llu bytes, larger than the server's limit of %zu bytes (--max-body-mb)",
                 declared, s->lim.max_body);
        return refuse(q, 413, msg);
    }
    if (serve_guard_reserve(s, (size_t)declared)) {
        atomic_fetch_add(&s->refused_budget, 1);
        snprintf(msg, sizeof msg,
                 "the server holds %zu bytes of requests in flight; %llu more would pass its budget of %zu "
                 "([serve] max_inflight_mb): try again shortly",
                 atomic_load(&s->inflight), declared, s->lim.max_inflight);
        return refuse(q, 503, msg);
    }
    q->reserved = (size_t)declared;
    return MHD_YES;
}

/* A piece of the body. */
static enum MHD_Result on_upload(serve_server *s, request *q, const char *data, size_t n) {
    serve_guard_body(s->guard, q->conn, n);
    if (q->answered) return MHD_YES; /* refused: the rest is dropped */
    if (q->len + n > s->lim.max_body) {
        char msg[200];
        snprintf(msg, sizeof msg, "the request body is larger than the server's limit of %zu bytes (--max-body-mb)",
                 s->lim.max_body);
        return refuse(q, 413, msg);
    }
    if (q->len + n > q->reserved) { /* chunked, or more than declared */
        size_t more = q->len + n - q->reserved;
        if (serve_guard_reserve(s, more)) {
            atomic_fetch_add(&s->refused_budget, 1);
            return refuse(q, 503, "the server's budget of request bytes in flight ([serve] max_inflight_mb) is "
                                  "spent: try again shortly");
        }
        q->reserved += more;
    }
    if (q->len + n + 1 > q->cap) {
        size_t cap = q->cap ? q->cap : 4096;
        if (!q->chunked && q->reserved + 1 > cap) cap = q->reserved + 1; /* the declared size, at once */
        while (cap < q->len + n + 1) cap *= 2;
        char *p = realloc(q->body, cap);
        if (!p) return refuse(q, 503, "out of memory reading the request body");
        q->body = p;
        q->cap = cap;
    }
    memcpy(q->body + q->len, data, n);
    q->len += n;
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **state) {
    (void)version;
    serve_server *s = cls;
    request *q = *state;
    if (!q) {
        q = calloc(1, sizeof *q);
        if (!q) return MHD_NO;
        q->s = s;
        q->c = c;
        q->refs = 1;
        q->t0 = berth_now_ns();
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        q->conn = ci ? ci->socket_context : NULL;
        *state = q;
        return on_headers(s, q, url, method);
    }
    if (*upload_size) {
        enum MHD_Result ret = on_upload(s, q, upload, *upload_size);
        *upload_size = 0;
        return ret;
    }
    if (q->answered) return MHD_YES;
    serve_guard_phase(s->guard, q->conn, SERVE_CONN_BUSY);
    return route(s, c, url, method, q);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode code) {
    (void)c;
    (void)code;
    serve_server *s = cls;
    request *q = *state;
    if (!q) return;
    *state = NULL;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (ci && ci->socket_context) serve_guard_phase(s->guard, ci->socket_context, SERVE_CONN_HEADERS);
    if (q->counted) atomic_fetch_sub(&s->open_requests, 1);
    pthread_mutex_lock(&s->mu);
    request_unref(q);
    pthread_mutex_unlock(&s->mu);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
    serve_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = ci ? serve_guard_open(s->guard, ci->connect_fd) : NULL;
    } else {
        serve_guard_close(s->guard, *socket_context);
        *socket_context = NULL;
    }
}

int serve_http_start(serve_server *s, const char *host, uint16_t port, uint16_t *port_out, char *msg, size_t cap) {
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char service[8];
    snprintf(service, sizeof service, "%u", port);
    int rc = getaddrinfo(host, service, &hints, &ai);
    if (rc || !ai) {
        snprintf(msg, cap, "--host %s: %s", host, rc ? gai_strerror(rc) : "no address");
        return -1;
    }
    pthread_mutex_init(&s->mu, NULL);
    s->guard = serve_guard_start(s);
    if (!s->guard) {
        freeaddrinfo(ai);
        snprintf(msg, cap, "cannot start the connection guard thread");
        return -1;
    }
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
                     (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_THREAD_POOL_SIZE,
        s->lim.http_threads, MHD_OPTION_CONNECTION_TIMEOUT, s->lim.idle_timeout_s, MHD_OPTION_CONNECTION_LIMIT,
        s->lim.max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->lim.max_per_ip, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!d) {
        serve_guard_stop(s->guard);
        s->guard = NULL;
        snprintf(msg, cap, "cannot listen on %s:%u (in use, or not an address of this machine)", host, port);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    *port_out = info ? info->port : port;
    s->daemon = d;
    return 0;
}

void serve_http_stop(serve_server *s) {
    if (!s->daemon) return;
    pthread_mutex_lock(&s->mu);
    s->stopped = 1;
    while (s->resuming) {
        pthread_mutex_unlock(&s->mu);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
    /* Requests a worker still holds whose connection libmicrohttpd
     * closed without a word: the connection's hold ends here. */
    pthread_mutex_lock(&s->mu);
    for (request *q = s->queued; q; q = q->next)
        if (q->refs == 2) q->refs--;
    pthread_mutex_unlock(&s->mu);
    serve_guard_stop(s->guard);
    s->guard = NULL;
}
