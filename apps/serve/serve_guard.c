/* What holds `berth serve` against clients that are slow, greedy or
 * ambiguous, beside what libmicrohttpd does itself (a total and a per-IP
 * connection limit, an inactivity timeout):
 *  - framing: a request whose length could be read two ways (two
 *    Content-Length headers, Content-Length with Transfer-Encoding, a
 *    Transfer-Encoding other than a single "chunked", a header line
 *    folded onto the next) is refused before its body is read: behind a proxy that reads
 *    it the other way, it would smuggle a second request;
 *  - the in-flight budget: every request's body, and then its parsed
 *    inputs, hold bytes of max_inflight_mb from its headers to its end;
 *  - deadlines libmicrohttpd does not have: the request headers complete
 *    within header_timeout_s of a connection's start (idle_timeout_s of a
 *    kept-alive connection's previous answer), however slowly they
 *    trickle, and a body averages min_body_kbps after that long. A
 *    thread looks every 100 ms and shuts the socket of a connection past
 *    its deadline; libmicrohttpd then sees the end of the stream and
 *    closes it as it would any other. */
#include <microhttpd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "serve_guard.h"
#include "util.h"

struct serve_conn {
    int fd;
    int phase;
    uint64_t since_ns, deadline_ns;
    size_t body_bytes;
    int cut;
    serve_conn *prev, *next;
};

struct serve_guard {
    serve_server *s;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    serve_conn *head;
    int stopping;
    pthread_t reaper;
};

static void sleep_until(serve_guard *g, uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    pthread_cond_timedwait(&g->wake, &g->mu, &ts);
}

static void *reaper_main(void *arg) {
    serve_guard *g = arg;
    const serve_limits *lim = &g->s->lim;
    pthread_mutex_lock(&g->mu);
    while (!g->stopping) {
        uint64_t now = berth_now_ns();
        for (serve_conn *c = g->head; c; c = c->next) {
            if (c->cut) continue;
            int late = 0;
            if (c->phase == SERVE_CONN_HEADERS && now > c->deadline_ns) {
                late = 1;
                atomic_fetch_add(&g->s->cut_header, 1);
            } else if (c->phase == SERVE_CONN_BODY && now > c->deadline_ns) {
                double seconds = (double)(now - c->since_ns) / 1e9;
                if ((double)c->body_bytes < (double)lim->min_body_rate * seconds) {
                    late = 1;
                    atomic_fetch_add(&g->s->cut_body, 1);
                }
            }
            /* The connection is in the list, so libmicrohttpd has not
             * closed its socket yet (it says CLOSED, which takes this
             * lock, before it closes): fd is still this connection's. */
            if (late) {
                shutdown(c->fd, SHUT_RDWR);
                c->cut = 1;
            }
        }
        sleep_until(g, now + 100000000u);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

serve_guard *serve_guard_start(serve_server *s) {
    serve_guard *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->s = s;
    pthread_mutex_init(&g->mu, NULL);
    serve_cond_init(&g->wake);
    if (pthread_create(&g->reaper, NULL, reaper_main, g)) {
        pthread_cond_destroy(&g->wake);
        pthread_mutex_destroy(&g->mu);
        free(g);
        return NULL;
    }
    return g;
}

void serve_guard_stop(serve_guard *g) {
    if (!g) return;
    pthread_mutex_lock(&g->mu);
    g->stopping = 1;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->reaper, NULL);
    while (g->head) { /* connections libmicrohttpd did not report closed */
        serve_conn *c = g->head;
        g->head = c->next;
        free(c);
    }
    pthread_cond_destroy(&g->wake);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

static void set_phase(serve_conn *c, int phase, unsigned timeout_s) {
    c->phase = phase;
    c->since_ns = berth_now_ns();
    c->deadline_ns = c->since_ns + (uint64_t)timeout_s * 1000000000u;
    c->body_bytes = 0;
}

serve_conn *serve_guard_open(serve_guard *g, int fd) {
    serve_conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->fd = fd;
    set_phase(c, SERVE_CONN_HEADERS, g->s->lim.header_timeout_s);
    pthread_mutex_lock(&g->mu);
    c->next = g->head;
    if (g->head) g->head->prev = c;
    g->head = c;
    pthread_mutex_unlock(&g->mu);
    return c;
}

void serve_guard_close(serve_guard *g, serve_conn *c) {
    if (!c) return;
    pthread_mutex_lock(&g->mu);
    if (c->prev) c->prev->next = c->next;
    else g->head = c->next;
    if (c->next) c->next->prev = c->prev;
    pthread_mutex_unlock(&g->mu);
    free(c);
}

void serve_guard_phase(serve_guard *g, serve_conn *c, int phase) {
    if (!c) return;
    const serve_limits *lim = &g->s->lim;
    pthread_mutex_lock(&g->mu);
    /* A body gets header_timeout_s before its rate is judged; the next
     * request on a kept-alive connection gets idle_timeout_s, and a
     * second more, so one that stays silent is closed by libmicrohttpd's
     * inactivity timeout (the same length) rather than counted as cut. */
    set_phase(c, phase, phase == SERVE_CONN_HEADERS ? lim->idle_timeout_s + 1 : lim->header_timeout_s);
    pthread_mutex_unlock(&g->mu);
}

void serve_guard_body(serve_guard *g, serve_conn *c, size_t n) {
    if (!c) return;
    pthread_mutex_lock(&g->mu);
    c->body_bytes += n;
    pthread_mutex_unlock(&g->mu);
}

int serve_guard_reserve(serve_server *s, size_t bytes) {
    size_t cur = atomic_load(&s->inflight);
    do {
        if (bytes > s->lim.max_inflight || cur > s->lim.max_inflight - bytes) return -1;
    } while (!atomic_compare_exchange_weak(&s->inflight, &cur, cur + bytes));
    return 0;
}

void serve_guard_release(serve_server *s, size_t bytes) { atomic_fetch_sub(&s->inflight, bytes); }

/* ---- framing ---- */

typedef struct framing {
    unsigned content_length, transfer_encoding;
    const char *te;
    char bad[240];
} framing;

/* RFC 9110's token characters, which a field name is made of. */
static int is_tchar(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Whether libmicrohttpd read this field from one line. It keeps a
 * field's name and value where they were read, "name\0 value" (the colon
 * overwritten), but when a line is folded onto the next (obsolete line
 * folding) it joins the next line onto the *name* ("X-A: 1\r\n b"
 * becomes a field "X-Ab" with the value "1"), in a copy made elsewhere.
 * So a name that does not sit just before its value, or that is no
 * token, is the trace of a fold; the serve tests send folds to hold
 * this to the packaged library. */
static int one_line(const char *key, const char *value) {
    size_t len = strlen(key);
    uintptr_t k = (uintptr_t)key, v = (uintptr_t)value;
    if (!len || !value || v < k + len + 1 || v - k > len + 1 + 4096) return 0;
    for (const char *c = key + len + 1; c < value; c++)
        if (*c != ' ' && *c != '\t') return 0;
    for (const unsigned char *c = (const unsigned char *)key; *c; c++)
        if (!is_tchar(*c)) return 0;
    return 1;
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    framing *f = cls;
    if (!f->bad[0] && !one_line(key, value)) {
        char shown[80];
        serve_printable(shown, sizeof shown, key, strlen(key), 40);
        snprintf(f->bad, sizeof f->bad,
                 "header field '%s': a header line folded onto the next (obsolete line folding) is refused", shown);
    }
    if (!strcasecmp(key, "Content-Length")) f->content_length++;
    else if (!strcasecmp(key, "Transfer-Encoding")) f->transfer_encoding++, f->te = value;
    return MHD_YES;
}

int serve_guard_framing(struct MHD_Connection *c, char *msg, size_t cap) {
    framing f;
    memset(&f, 0, sizeof f);
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &f);
    if (f.bad[0])
        snprintf(msg, cap, "%s", f.bad);
    else if (f.content_length > 1)
        snprintf(msg, cap, "Content-Length: given %u times; a request's length must be stated once", f.content_length);
    else if (f.content_length && f.transfer_encoding)
        snprintf(msg, cap, "Content-Length and Transfer-Encoding both given; a request's length must be stated once");
    else if (f.transfer_encoding > 1)
        snprintf(msg, cap, "Transfer-Encoding: given %u times; expected once, as 'chunked'", f.transfer_encoding);
    else if (f.transfer_encoding && strcasecmp(f.te, "chunked")) {
        char shown[80];
        serve_printable(shown, sizeof shown, f.te, strlen(f.te), 40);
        snprintf(msg, cap, "Transfer-Encoding: expected 'chunked', found '%s'", shown);
    } else {
        return 0;
    }
    return -1;
}
