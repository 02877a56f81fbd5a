/* berth and the peer, run by run, for every bucket of a config's stage.
 *
 * Each timed pair is one berth run and one peer run back to back, in
 * alternating order, so whatever else the shared machine does during a
 * pair slows both; bench.py reports the ratio of each pair. The first
 * berth run of a bucket builds its plan and is reported apart (plan
 * cost), and host allocations are counted around every timed berth run
 * (the hot path must make none). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc_count.h"
#include "bench.h"

#define MAX_IO 8
#define MAX_OPS 48

/* berth's time in the last timed run, summed per op (berth_executor_profile). */
typedef struct op_time {
    char op[48];
    uint64_t ns;
} op_time;

typedef struct bucket_result {
    char describe[256];
    uint64_t cold_ns, peer_cold_ns;
    uint64_t plan_bytes;
    size_t allocs;
    int runs;
    uint64_t *berth_ns, *peer_ns;
    double max_abs_diff, max_abs_ref;
    double mean_abs_diff, cosine; /* of berth's output against the peer's, as vectors */
    int compared;
    op_time ops[MAX_OPS];
    int n_ops;
} bucket_result;

/* A pause between the two runs of a pair: onnxruntime's idle workers
 * spin for up to a few hundred milliseconds after each run (and berth's
 * briefly), and a run started meanwhile shares the cores with them. A
 * fixed 20 ms pause left berth's 2-thread batch-1 runs of the recognizer
 * at 12 to 29 ms where they take 11 ms alone. */
static void settle(const bench_peer *peer) {
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    bench_peer_wait_idle(peer, 2000);
}

static void add_op_time(void *ctx, const char *node, const char *op, uint64_t ns) {
    bucket_result *r = ctx;
    (void)node;
    int k = 0;
    while (k < r->n_ops && strcmp(r->ops[k].op, op)) k++;
    if (k == r->n_ops) {
        if (r->n_ops == MAX_OPS) return;
        snprintf(r->ops[r->n_ops++].op, sizeof r->ops[0].op, "%s", op);
    }
    r->ops[k].ns += ns;
}

static uint64_t parse_u64_after(const char *reply, const char *word) {
    const char *p = strstr(reply, word);
    return p ? strtoull(p + strlen(word), NULL, 10) : 0;
}

static berth_status run_berth(berth_executor *ex, berth_tensor *ins, uint32_t n_ins,
                              berth_tensor *outs, uint32_t n_outs, uint64_t *ns, berth_error *err) {
    uint64_t t0 = bench_now_ns();
    berth_status st = berth_executor_run(ex, 0, ins, n_ins, outs, n_outs, NULL, err);
    *ns = bench_now_ns() - t0;
    return st;
}

static berth_status run_peer(bench_peer *peer, uint64_t *ns, berth_error *err) {
    char reply[256];
    berth_status st = bench_peer_ask(peer, "run", reply, sizeof reply, err);
    if (st == BERTH_OK) *ns = parse_u64_after(reply, "t ");
    return st;
}

/* The peer writes its first output as raw float32; compare with berth's. */
static berth_status compare(bench_peer *peer, const berth_tensor *out, const char *dump,
                            uint32_t bucket, bucket_result *r, berth_error *err) {
    if (out->dtype != BERTH_DTYPE_F32) return BERTH_OK;
    char path[1024], request[1100], reply[256];
    snprintf(path, sizeof path, "%s/peer-out-%u.f32", dump, bucket);
    snprintf(request, sizeof request, "dump %s", path);
    berth_status st = bench_peer_ask(peer, request, reply, sizeof reply, err);
    if (st != BERTH_OK) return st;
    FILE *f = fopen(path, "rb");
    if (!f) {
        bench_errf(err, "%s: the peer said it wrote it, but it cannot be opened", path);
        return BERTH_ERR_IO;
    }
    size_t n = out->bytes / sizeof(float), total = 0;
    const float *mine = out->data;
    float buf[4096];
    size_t got;
    double worst = 0, ref = 0, sum = 0, dot = 0, nm = 0, np = 0;
    while ((got = fread(buf, sizeof(float), sizeof buf / sizeof buf[0], f)) > 0) {
        for (size_t j = 0; j < got && total + j < n; j++) {
            double d = fabs((double)buf[j] - (double)mine[total + j]);
            if (isnan(d) || (!isnan(worst) && d > worst)) worst = d; /* a NaN stays */
            if (fabs((double)buf[j]) > ref) ref = fabs((double)buf[j]);
            sum += d;
            dot += (double)buf[j] * mine[total + j];
            np += (double)buf[j] * buf[j];
            nm += (double)mine[total + j] * mine[total + j];
        }
        total += got;
    }
    fclose(f);
    remove(path);
    if (total != n) {
        bench_errf(err, "%s: peer output has %zu floats, berth's has %zu (bucket %s)", path, total, n,
                   r->describe);
        return BERTH_ERR_INVALID;
    }
    r->max_abs_diff = worst;
    r->max_abs_ref = ref;
    r->mean_abs_diff = n ? sum / (double)n : 0;
    r->cosine = np > 0 && nm > 0 ? dot / sqrt(np * nm) : 1.0;
    r->compared = 1;
    return BERTH_OK;
}

static berth_status one_bucket(berth_executor *ex, uint32_t b, bench_peer *peer,
                               const bench_pairs_opts *o, bucket_result *r, berth_error *err) {
    berth_tensor ins[MAX_IO], outs[MAX_IO];
    uint32_t n_ins = 0, n_outs = berth_executor_output_count(ex, 0);
    if (n_outs > MAX_IO) {
        bench_errf(err, "%s: %u outputs, the harness takes at most %d", o->config, n_outs, MAX_IO);
        return BERTH_ERR_UNSUPPORTED;
    }
    memset(outs, 0, sizeof outs);
    berth_executor_bucket_describe(ex, 0, b, r->describe, sizeof r->describe);
    berth_status st = bench_inputs_make(ex, 0, b, ins, &n_ins, MAX_IO, err);
    if (st != BERTH_OK) return st;
    r->runs = o->runs;
    r->berth_ns = calloc((size_t)o->runs, sizeof *r->berth_ns);
    r->peer_ns = calloc((size_t)o->runs, sizeof *r->peer_ns);
    if (!r->berth_ns || !r->peer_ns) {
        bench_errf(err, "cannot allocate %d timings", o->runs);
        st = BERTH_ERR_NOMEM;
        goto done;
    }
    berth_memory before, after;
    berth_executor_memory(ex, &before);
    if ((st = run_berth(ex, ins, n_ins, outs, n_outs, &r->cold_ns, err)) != BERTH_OK) goto done;
    berth_executor_memory(ex, &after);
    r->plan_bytes = after.plans_bytes - before.plans_bytes;

    char request[300], reply[256];
    snprintf(request, sizeof request, "bucket %s", r->describe);
    if ((st = bench_peer_ask(peer, request, reply, sizeof reply, err)) != BERTH_OK) goto done;
    r->peer_cold_ns = parse_u64_after(reply, "ok ");

    uint64_t ns;
    for (int i = 0; i < o->warmup; i++) {
        if ((st = run_berth(ex, ins, n_ins, outs, n_outs, &ns, err)) != BERTH_OK) goto done;
        if ((st = run_peer(peer, &ns, err)) != BERTH_OK) goto done;
    }
    for (int i = 0; i < o->runs; i++) {
        int peer_first = i & 1;
        if (peer_first && (st = run_peer(peer, &r->peer_ns[i], err)) != BERTH_OK) goto done;
        if (peer_first) settle(peer);
        alloc_count_start();
        st = run_berth(ex, ins, n_ins, outs, n_outs, &r->berth_ns[i], err);
        r->allocs += alloc_count_stop();
        if (st != BERTH_OK) goto done;
        if (!peer_first) settle(peer);
        if (!peer_first && (st = run_peer(peer, &r->peer_ns[i], err)) != BERTH_OK) goto done;
    }
    /* where the last run's time went; a backend that does not time
     * nodes leaves the table empty */
    berth_error perr;
    berth_executor_profile(ex, 0, b, add_op_time, r, &perr);
    if (o->dump && n_outs > 0) st = compare(peer, &outs[0], o->dump, b, r, err);
done:
    bench_inputs_free(ins, n_ins);
    for (uint32_t i = 0; i < n_outs; i++) berth_tensor_release(&outs[i]);
    return st;
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
    fputc('"', f);
}

static void json_times(FILE *f, const uint64_t *ns, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++) fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)ns[i]);
    fputc(']', f);
}

static int write_json(const bench_pairs_opts *o, berth_executor *ex, const char *peer_hello,
                      bucket_result *res, uint32_t n) {
    FILE *f = fopen(o->out, "w");
    if (!f) {
        fprintf(stderr, "berth-bench: cannot write %s\n", o->out);
        return 1;
    }
    berth_memory m;
    berth_executor_memory(ex, &m);
    fprintf(f, "{\"config\": ");
    json_string(f, o->config);
    fprintf(f, ", \"device\": ");
    json_string(f, berth_executor_device(ex));
    fprintf(f, ", \"peer\": ");
    json_string(f, peer_hello);
    fprintf(f, ", \"weights_bytes\": %llu, \"plans_bytes\": %llu, \"host_bytes\": %llu,\n \"buckets\": [",
            (unsigned long long)m.weights_bytes, (unsigned long long)m.plans_bytes,
            (unsigned long long)m.host_bytes);
    for (uint32_t b = 0; b < n; b++) {
        bucket_result *r = &res[b];
        fprintf(f, "%s\n  {\"bucket\": ", b ? "," : "");
        json_string(f, r->describe);
        fprintf(f, ", \"cold_ns\": %llu, \"peer_cold_ns\": %llu, \"plan_bytes\": %llu, "
                   "\"allocs\": %zu, \"runs\": %d,\n   \"berth_ns\": ",
                (unsigned long long)r->cold_ns,
                (unsigned long long)r->peer_cold_ns, (unsigned long long)r->plan_bytes, r->allocs,
                r->runs);
        json_times(f, r->berth_ns, r->runs);
        fprintf(f, ",\n   \"peer_ns\": ");
        json_times(f, r->peer_ns, r->runs);
        /* NaN as Python's json module spells it, so a broken output shows */
        if (r->compared && isnan(r->max_abs_diff))
            fprintf(f, ",\n   \"max_abs_diff\": NaN, \"max_abs_ref\": %.9g", r->max_abs_ref);
        else if (r->compared)
            fprintf(f, ",\n   \"max_abs_diff\": %.9g, \"max_abs_ref\": %.9g, \"mean_abs_diff\": %.9g, "
                       "\"cosine\": %.12g",
                    r->max_abs_diff, r->max_abs_ref, r->mean_abs_diff, r->cosine);
        fprintf(f, ",\n   \"op_ns\": {");
        for (int k = 0; k < r->n_ops; k++) {
            fprintf(f, "%s", k ? ", " : "");
            json_string(f, r->ops[k].op);
            fprintf(f, ": %llu", (unsigned long long)r->ops[k].ns);
        }
        fprintf(f, "}}");
    }
    fprintf(f, "]}\n");
    return fclose(f) == 0 ? 0 : 1;
}

int bench_pairs(const bench_pairs_opts *o) {
    berth_error err;
    berth_executor *ex = NULL;
    bench_peer peer = {-1, NULL, NULL};
    bucket_result *res = NULL;
    uint32_t n = 0;
    int rc = 1;
    char hello[256] = "";
    if (berth_executor_open(o->config, NULL, &ex, &err) != BERTH_OK) goto fail;
    if (bench_peer_start(&peer, o->peer_argv, &err) != BERTH_OK) goto fail;
    /* the peer announces itself once its model is loaded */
    if (bench_peer_ask(&peer, NULL, hello, sizeof hello, &err) != BERTH_OK) goto fail;
    n = berth_executor_bucket_count(ex, 0);
    res = calloc(n ? n : 1, sizeof *res);
    if (!res) {
        bench_errf(&err, "cannot allocate results for %u buckets", n);
        goto fail;
    }
    for (uint32_t b = 0; b < n; b++) {
        if (one_bucket(ex, b, &peer, o, &res[b], &err) != BERTH_OK) goto fail;
        fprintf(stderr, "berth-bench: %s: %s done\n", o->config, res[b].describe);
    }
    rc = write_json(o, ex, hello, res, n);
    goto out;
fail:
    fprintf(stderr, "berth-bench: %s: %s\n", o->config, err.msg);
out:
    bench_peer_stop(&peer);
    for (uint32_t b = 0; res && b < n; b++) {
        free(res[b].berth_ns);
        free(res[b].peer_ns);
    }
    free(res);
    berth_executor_close(ex);
    return rc;
}
