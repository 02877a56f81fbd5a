/* The guards of `berth serve` (serve_guard.c): framing checks, the
 * in-flight body budget, and the deadlines of each connection. */
#ifndef BERTH_SERVE_GUARD_H
#define BERTH_SERVE_GUARD_H

#include "serve.h"

struct MHD_Connection;

/* Where a connection is: what its deadline means. */
enum {
    SERVE_CONN_HEADERS, /* waiting for a request's headers: cut at the deadline */
    SERVE_CONN_BODY,    /* reading a body: cut when slower than min_body_rate after the grace */
    SERVE_CONN_BUSY     /* the request is whole: the server's turn */
};

typedef struct serve_conn serve_conn;

/* Start and stop the thread that cuts late connections. */
serve_guard *serve_guard_start(serve_server *s);
void serve_guard_stop(serve_guard *g);
/* A connection opened (its socket) and closed; NULL when out of memory,
 * which leaves that connection unguarded but working. */
serve_conn *serve_guard_open(serve_guard *g, int fd);
void serve_guard_close(serve_guard *g, serve_conn *c);
void serve_guard_phase(serve_guard *g, serve_conn *c, int phase);
void serve_guard_body(serve_guard *g, serve_conn *c, size_t n);
/* Take bytes of the in-flight budget: 0, or -1 when they do not fit. */
int serve_guard_reserve(serve_server *s, size_t bytes);
void serve_guard_release(serve_server *s, size_t bytes);
/* 0 when the request's length reads one way only; else -1 with msg. */
int serve_guard_framing(struct MHD_Connection *c, char *msg, size_t cap);

#endif
