/* berth-bench: the C side of `make bench`. It times
 * berth in process and onnxruntime in a long-lived peer process driven
 * over pipes, alternating the two so drift on a shared machine hits both
 * alike; bench.py turns its JSON into the report. */
#ifndef BERTH_BENCH_H
#define BERTH_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "berth/berth.h"

uint64_t bench_now_ns(void);
/* Peak resident set of this process image so far, in KiB (VmHWM). */
long bench_peak_rss_kb(void);
/* Current resident set in KiB (/proc/self/statm), or -1. */
long bench_rss_kb(void);
void bench_errf(berth_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- inputs: the same deterministic values ort_peer.js writes ---- */

/* Fill rule, shared with bench/ort_peer.js (keep the two in step):
 *  - integer inputs named *mask*: 1 for the first L - (row % 4) * (L / 8)
 *    positions of each row of the last dim (length L), 0 after, so
 *    masking is exercised and rows differ;
 *  - other integer inputs: (i * 7919 + 13) % 1000, i the flat index;
 *  - float inputs: ((i * 37) % 255) / 127.5 - 1. */
berth_status bench_inputs_make(const berth_executor *ex, uint32_t lane, uint32_t bucket,
                               berth_tensor *ins, uint32_t *n_ins, uint32_t cap, berth_error *err);
void bench_inputs_free(berth_tensor *ins, uint32_t n);
/* The value of dim `name` in a bucket description "batch=8 seq=128", or -1. */
int64_t bench_bucket_dim(const char *describe, const char *name);

/* ---- the peer: one line per request, one line per answer ---- */

typedef struct bench_peer {
    pid_t pid;
    FILE *to;
    FILE *from;
} bench_peer;

berth_status bench_peer_start(bench_peer *p, char *const argv[], berth_error *err);
/* Sends `request` (one line, no newline) and reads one answer line into
 * reply. An answer starting "error" becomes a failure carrying it. */
berth_status bench_peer_ask(bench_peer *p, const char *request, char *reply, size_t cap,
                            berth_error *err);
/* Asks the peer to quit and reaps it; safe on a peer never started. */
void bench_peer_stop(bench_peer *p);
/* Returns once the peer used no cpu for 20 ms, or after max_ms: with
 * spinning allowed, onnxruntime's idle workers keep both cores of a
 * 2-core machine busy for a few hundred milliseconds after a run. */
void bench_peer_wait_idle(const bench_peer *p, int max_ms);

/* ---- subcommands ---- */

typedef struct bench_pairs_opts {
    const char *config;
    const char *out;  /* JSON written here */
    const char *dump; /* folder for output comparison files, or NULL */
    int runs;
    int warmup;
    char *const *peer_argv; /* NULL-terminated */
} bench_pairs_opts;

int bench_pairs(const bench_pairs_opts *o);
int bench_load(const char *config);
int bench_sgemm(const char *shapes_path, int threads);
/* The float32 FMA rate of `threads` threads, as JSON on stdout. */
int bench_peak(int threads);
/* Writes DIR/shapes-B.txt for each bucket B; prints "B DESCRIBE" lines. */
int bench_shapes(const char *config, const char *dir);

#endif
