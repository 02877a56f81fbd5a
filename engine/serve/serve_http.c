/* The HTTP side of `berth serve`: libmicrohttpd with a thread per
 * connection (an infer request blocks its connection's thread until a
 * worker answers it, which is what a queue with dynamic batching needs),
 * the Open Inference Protocol's REST routes, and /metrics. */
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve.h"
#include "util.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0"
#endif

typedef struct conn {
    char *body;
    size_t len, cap;
    int too_large;
} conn;

/* Queue b (taken: freed by libmicrohttpd) as the response. */
static enum MHD_Result reply(struct MHD_Connection *c, int status, serve_buf *b, const char *type,
                             size_t header_len) {
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

static enum MHD_Result reply_json(struct MHD_Connection *c, int status, serve_buf *b) {
    return reply(c, status, b, "application/json", SIZE_MAX);
}

static enum MHD_Result reply_error(struct MHD_Connection *c, int status, const char *msg) {
    serve_buf b = {0};
    serve_json_error(&b, msg);
    return reply_json(c, status, &b);
}

static serve_model *find_model(serve_server *s, const char *name, size_t len) {
    for (uint32_t i = 0; i < s->n_models; i++)
        if (strlen(s->models[i].name) == len && !strncmp(s->models[i].name, name, len)) return &s->models[i];
    return NULL;
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

static enum MHD_Result model_metadata(struct MHD_Connection *c, serve_model *m) {
    serve_buf b = {0};
    serve_buf_put(&b, "{\"name\":", 8);
    serve_buf_json_str(&b, m->name);
    serve_buf_printf(&b, ",\"versions\":[\"1\"],\"platform\":\"berth_%s\",\"inputs\":",
                     berth_executor_backend(m->ex));
    io_list(&b, m->sig.in, m->sig.n_in);
    serve_buf_put(&b, ",\"outputs\":", 11);
    io_list(&b, m->sig.out, m->sig.n_out);
    serve_buf_put(&b, "}", 1);
    return reply_json(c, 200, &b);
}

/* The inference response: JSON, then the binary outputs' bytes in
 * output order when any were asked for as binary data. */
static enum MHD_Result infer_response(struct MHD_Connection *c, serve_model *m, serve_req *r) {
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
    if (!any_binary) return reply_json(c, 200, &b);
    size_t header_len = b.len;
    for (uint32_t o = 0; o < m->sig.n_out; o++)
        if (r->in.want[o] && r->in.binary[o]) serve_buf_put(&b, r->out[o].data, r->out[o].bytes);
    return reply(c, 200, &b, "application/octet-stream", header_len);
}

static enum MHD_Result infer(serve_server *s, struct MHD_Connection *c, serve_model *m, conn *cs) {
    uint64_t t0 = berth_now_ns();
    serve_req *r = calloc(1, sizeof *r);
    if (!r) return reply_error(c, 500, "out of memory");
    atomic_fetch_add(&s->in_flight, 1);
    enum MHD_Result ret;
    size_t header_len = SIZE_MAX;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Inference-Header-Content-Length");
    if (h) {
        char *end;
        unsigned long long v = strtoull(h, &end, 10);
        if (!*h || *end || *h == '-') {
            r->err.status = 400;
            snprintf(r->err.msg, sizeof r->err.msg,
                     "Inference-Header-Content-Length: expected a whole number of bytes, found '%.64s'", h);
        }
        header_len = (size_t)v;
    }
    if (atomic_load(&s->draining)) {
        r->err.status = 503;
        snprintf(r->err.msg, sizeof r->err.msg, "the server is shutting down");
    }
    if (!r->err.status && serve_infer_parse(&m->sig, cs->body ? cs->body : "", cs->len, header_len, &r->in, &r->err) == 0)
        serve_model_infer(m, r);
    if (r->err.status) ret = reply_error(c, r->err.status, r->err.msg);
    else ret = infer_response(c, m, r);
    serve_metrics_request(&m->metrics, r->err.status ? r->err.status : 200, (double)(berth_now_ns() - t0) / 1e9);
    serve_model_free_result(m, r);
    free(r);
    atomic_fetch_sub(&s->in_flight, 1);
    return ret;
}

static enum MHD_Result route(serve_server *s, struct MHD_Connection *c, const char *url, const char *method,
                             conn *cs) {
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
    if (!strcmp(url, "/metrics")) {
        if (!get) return reply_error(c, 405, "/metrics: expected GET");
        serve_buf b = {0};
        serve_metrics_text(s, &b);
        return reply(c, 200, &b, "text/plain; version=0.0.4", SIZE_MAX);
    }
    if (!strcmp(url, "/v2") || !strcmp(url, "/v2/")) {
        if (!get) return reply_error(c, 405, "/v2: expected GET");
        serve_buf b = {0};
        serve_buf_printf(&b, "{\"name\":\"berth\",\"version\":\"%s\",\"extensions\":[\"binary_tensor_data\"]}",
                         BERTH_VERSION);
        return reply_json(c, 200, &b);
    }
    if (!strcmp(url, "/v2/health/live")) {
        if (!get) return reply_error(c, 405, "/v2/health/live: expected GET");
        serve_buf b = {0};
        serve_buf_printf(&b, "{\"live\":true}");
        return reply_json(c, 200, &b);
    }
    if (!strcmp(url, "/v2/health/ready")) {
        if (!get) return reply_error(c, 405, "/v2/health/ready: expected GET");
        int ready = !atomic_load(&s->draining);
        serve_buf b = {0};
        serve_buf_printf(&b, "{\"ready\":%s}", ready ? "true" : "false");
        return reply_json(c, ready ? 200 : 503, &b);
    }
    const char *prefix = "/v2/models/";
    if (strncmp(url, prefix, strlen(prefix)) != 0) {
        char msg[600];
        snprintf(msg, sizeof msg, "no such path: %.300s", url);
        return reply_error(c, 404, msg);
    }
    const char *name = url + strlen(prefix), *slash = strchr(name, '/');
    size_t name_len = slash ? (size_t)(slash - name) : strlen(name);
    const char *rest = slash ? slash : "";
    /* versions/1 is the only version of a model */
    if (!strncmp(rest, "/versions/1", 11) && (rest[11] == 0 || rest[11] == '/')) rest += 11;
    serve_model *m = find_model(s, name, name_len);
    if (!m) {
        char msg[600];
        snprintf(msg, sizeof msg, "no model named '%.*s'", (int)(name_len > 200 ? 200 : name_len), name);
        return reply_error(c, 404, msg);
    }
    if (!*rest) {
        if (!get) return reply_error(c, 405, "model metadata: expected GET");
        return model_metadata(c, m);
    }
    if (!strcmp(rest, "/ready")) {
        if (!get) return reply_error(c, 405, "model ready: expected GET");
        int ready = !atomic_load(&s->draining);
        serve_buf b = {0};
        serve_buf_put(&b, "{\"name\":", 8);
        serve_buf_json_str(&b, m->name);
        serve_buf_printf(&b, ",\"ready\":%s}", ready ? "true" : "false");
        return reply_json(c, ready ? 200 : 503, &b);
    }
    if (!strcmp(rest, "/infer")) {
        if (!post) return reply_error(c, 405, "infer: expected POST");
        if (cs->too_large) {
            char msg[200];
            snprintf(msg, sizeof msg, "the request body is larger than the server's limit of %zu bytes (--max-body-mb)",
                     s->max_body);
            serve_metrics_request(&m->metrics, 413, 0);
            return reply_error(c, 413, msg);
        }
        return infer(s, c, m, cs);
    }
    char msg[600];
    snprintf(msg, sizeof msg, "no such path: %.300s", url);
    return reply_error(c, 404, msg);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **state) {
    (void)version;
    serve_server *s = cls;
    conn *cs = *state;
    if (!cs) { /* headers only, so far */
        cs = calloc(1, sizeof *cs);
        if (!cs) return MHD_NO;
        *state = cs;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > s->max_body) cs->too_large = 1;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!cs->too_large && cs->len + *upload_size > s->max_body) {
            cs->too_large = 1;
            free(cs->body);
            cs->body = NULL;
            cs->len = cs->cap = 0;
        }
        if (!cs->too_large) {
            if (cs->len + *upload_size + 1 > cs->cap) {
                size_t cap = cs->cap ? cs->cap : 4096;
                while (cap < cs->len + *upload_size + 1) cap *= 2;
                char *p = realloc(cs->body, cap);
                if (!p) return MHD_NO;
                cs->body = p;
                cs->cap = cap;
            }
            memcpy(cs->body + cs->len, upload, *upload_size);
            cs->len += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    return route(s, c, url, method, cs);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode code) {
    (void)cls;
    (void)c;
    (void)code;
    conn *cs = *state;
    if (!cs) return;
    free(cs->body);
    free(cs);
    *state = NULL;
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
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ITC |
                     (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    struct MHD_Daemon *d = MHD_start_daemon(flags, port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
                                            ai->ai_addr, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
                                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)1024, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!d) {
        snprintf(msg, cap, "cannot listen on %s:%u (in use, or not an address of this machine)", host, port);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    *port_out = info ? info->port : port;
    s->daemon = d;
    return 0;
}

void serve_http_quiesce(serve_server *s) {
    if (!s->daemon) return;
    MHD_socket fd = MHD_quiesce_daemon(s->daemon);
    if (fd != MHD_INVALID_SOCKET) close(fd);
}

void serve_http_stop(serve_server *s) {
    if (s->daemon) MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
}
