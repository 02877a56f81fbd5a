/* `berth serve`: load every model, listen, answer until SIGTERM or
 * SIGINT, then stop accepting, finish what is in flight and exit 0. */
#include <dirent.h>
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "config.h"
#include "serve.h"
#include "util.h"

static const char *usage =
    "usage: berth serve [options] CONFIG|DIR...\n"
    "\n"
    "Serves each config (each *.ini of a DIR) as a model named after its file\n"
    "(a config with [model.NAME] sections: one model per section, FILE.NAME)\n"
    "over the Open Inference Protocol's REST API, with dynamic batching\n"
    "([serve] of each config: max_batch, max_delay_us, max_queue, timeout_ms,\n"
    "workers). Every model is loaded and every bucket planned before it\n"
    "listens.\n"
    "\n"
    "  --host H          address to listen on (default 127.0.0.1; 0.0.0.0: all)\n"
    "  --port P          port (default 8080; 0: any free port, printed)\n"
    "  --max-body-mb N   largest request body accepted (default 64)\n"
    "  --quiet           print only errors\n"
    "\n"
    "Server-wide settings, each also a [serve] key of the configs (those\n"
    "that give it must agree; a flag wins):\n"
    "  --max-inflight-mb N         request bytes (bodies, then parsed inputs)\n"
    "                              held at once; past it 503 (default 256)\n"
    "  --drain-s N                 SIGTERM: the longest wait for requests in\n"
    "                              progress (default 30)\n"
    "  --max-connections N         open connections in all (default 4096)\n"
    "  --max-connections-per-ip N  open connections from one address\n"
    "                              (default 512)\n"
    "  --header-timeout-s N        a new connection's request headers\n"
    "                              complete within (default 10)\n"
    "  --idle-timeout-s N          a kept-alive connection's next headers,\n"
    "                              and any silence (default 30)\n"
    "  --min-body-kbps N           KiB/s a body must average once it has\n"
    "                              had header_timeout_s (default 16)\n"
    "  --http-threads N            threads polling connections (default 4)\n"
    "\n"
    "Routes: GET /v2, /v2/health/live, /v2/health/ready, /v2/models/NAME,\n"
    "/v2/models/NAME/ready, /metrics; POST /v2/models/NAME/infer (JSON, or\n"
    "JSON and binary tensor data).\n"
    "\n"
    "SIGTERM or SIGINT: readiness turns false, new infer requests get 503,\n"
    "requests already begun are read and answered, then exit 0 (within\n"
    "drain_s; what is still running then is cut).\n"
    "Exit status: 0 after a signal, 1 error, 2 usage.\n";

typedef struct model_ref {
    char path[4096];
    char name[256];
    char model[128]; /* [model.NAME], or empty for [model] */
} model_ref;

static int add_ref(model_ref **refs, uint32_t *n, const char *path, const char *name, const char *model) {
    model_ref *r = realloc(*refs, sizeof *r * (*n + 1));
    if (!r) return -1;
    *refs = r;
    snprintf(r[*n].path, sizeof r[*n].path, "%s", path);
    snprintf(r[*n].name, sizeof r[*n].name, "%s", name);
    snprintf(r[*n].model, sizeof r[*n].model, "%s", model ? model : "");
    (*n)++;
    return 0;
}

/* What the command line and the configs name: the models, and the
 * server-wide [serve] keys with the file each came from. */
typedef struct collected {
    model_ref *refs;
    uint32_t n;
    uint64_t key[BERTH_SERVE_N_SERVER];
    char key_from[BERTH_SERVE_N_SERVER][512];
} collected;

/* The models of one config file: [model], or each [model.NAME]. */
static int add_config(collected *col, const char *path) {
    model_ref **refs = &col->refs;
    uint32_t *n = &col->n;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char name[256];
    snprintf(name, sizeof name, "%s", base);
    size_t len = strlen(name);
    if (len > 4 && !strcmp(name + len - 4, ".ini")) name[len - 4] = 0;
    berth_error err, named;
    berth_config *cfg = berth_config_load(path, &err);
    int plain = cfg != NULL;
    if (!cfg) /* a file of [model.NAME] sections only? */
        cfg = berth_config_load_model(path, "", &named);
    if (!cfg) {
        /* the first error, unless it was only that there is no [model] */
        int only_named = strstr(err.msg, "([model.NAME] sections) and no [model]") != NULL;
        fprintf(stderr, "berth serve: %s\n", only_named ? named.msg : err.msg);
        return -1;
    }
    int rc = plain ? add_ref(refs, n, path, name, NULL) : 0;
    for (int k = 0; k < BERTH_SERVE_N_SERVER && !rc; k++) {
        uint64_t v = cfg->serve_server[k];
        if (!v) continue;
        if (col->key[k] && col->key[k] != v) {
            fprintf(stderr,
                    "berth serve: [serve] %s is %llu in %s and %llu in %s; a server-wide key must agree across "
                    "configs (or be given once, or as --%s)\n",
                    berth_serve_server_keys[k], (unsigned long long)col->key[k], col->key_from[k],
                    (unsigned long long)v, path, berth_serve_server_keys[k]);
            rc = -1;
        }
        col->key[k] = v;
        snprintf(col->key_from[k], sizeof col->key_from[k], "%s", path);
    }
    for (uint32_t i = 0; i < cfg->n_models && !rc; i++) {
        char full[512];
        snprintf(full, sizeof full, "%s.%s", name, cfg->models[i]);
        rc = add_ref(refs, n, path, full, cfg->models[i]);
    }
    berth_config_free(cfg);
    return rc;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int add_dir(collected *col, const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "berth serve: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t count = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 4 || strcmp(e->d_name + len - 4, ".ini") || e->d_name[0] == '.') continue;
        char **g = realloc(names, sizeof *g * (count + 1));
        if (!g || !(g[count] = strdup(e->d_name))) {
            if (g) names = g;
            rc = -1;
            break;
        }
        names = g;
        count++;
    }
    closedir(d);
    qsort(names, count, sizeof *names, by_name);
    for (size_t i = 0; i < count && !rc; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = add_config(col, path);
    }
    if (!rc && !count) {
        fprintf(stderr, "berth serve: %s: no *.ini configs in it\n", dir);
        rc = -1;
    }
    for (size_t i = 0; i < count; i++) free(names[i]);
    free(names);
    return rc;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || errno || *s == '-' || v > max) return -1;
    *out = v;
    return 0;
}

/* The flag of a server-wide key: max_inflight_mb is --max-inflight-mb. */
static int server_flag(const char *arg) {
    if (strncmp(arg, "--", 2)) return -1;
    for (int k = 0; k < BERTH_SERVE_N_SERVER; k++) {
        const char *key = berth_serve_server_keys[k], *a = arg + 2;
        while (*key && (*a == *key || (*a == '-' && *key == '_'))) a++, key++;
        if (!*key && !*a) return k;
    }
    return -1;
}

/* The settings: a flag, else a config's [serve] key, else the default;
 * connections within the open-file limit, which is raised to its hard
 * limit first. -1 with a message when they cannot work together. */
static int settle_limits(serve_limits *lim, const uint64_t *flag, const uint64_t *cfg, size_t max_body, int quiet) {
    static const uint64_t defaults[BERTH_SERVE_N_SERVER] = {256, 30, 4096, 512, 10, 30, 16, 4};
    static const uint64_t most[BERTH_SERVE_N_SERVER] = {1u << 20, 86400, 1u << 20, 1u << 20, 3600, 86400, 1u << 20, 64};
    uint64_t v[BERTH_SERVE_N_SERVER];
    for (int k = 0; k < BERTH_SERVE_N_SERVER; k++) {
        v[k] = flag[k] ? flag[k] : cfg[k] ? cfg[k] : defaults[k];
        if (v[k] > most[k]) {
            fprintf(stderr, "berth serve: %s: expected at most %llu, found %llu\n", berth_serve_server_keys[k],
                    (unsigned long long)most[k], (unsigned long long)v[k]);
            return -1;
        }
    }
    lim->max_body = max_body;
    lim->max_inflight = (size_t)v[BERTH_SERVE_MAX_INFLIGHT_MB] << 20;
    if (lim->max_inflight < max_body) {
        fprintf(stderr,
                "berth serve: max_inflight_mb (%llu) is less than --max-body-mb (%zu): a request the size of the "
                "cap could never be taken\n",
                (unsigned long long)v[BERTH_SERVE_MAX_INFLIGHT_MB], max_body >> 20);
        return -1;
    }
    lim->drain_s = (unsigned)v[BERTH_SERVE_DRAIN_S];
    lim->max_connections = (unsigned)v[BERTH_SERVE_MAX_CONNECTIONS];
    lim->max_per_ip = (unsigned)v[BERTH_SERVE_MAX_CONNECTIONS_PER_IP];
    lim->header_timeout_s = (unsigned)v[BERTH_SERVE_HEADER_TIMEOUT_S];
    lim->idle_timeout_s = (unsigned)v[BERTH_SERVE_IDLE_TIMEOUT_S];
    lim->min_body_rate = (size_t)v[BERTH_SERVE_MIN_BODY_KBPS] << 10;
    lim->http_threads = (unsigned)v[BERTH_SERVE_HTTP_THREADS];
    /* A connection is a file descriptor; models, logs and the listening
     * sockets take some 64 more. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
            getrlimit(RLIMIT_NOFILE, &rl);
        }
        if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)lim->max_connections + 64) {
            unsigned fit = rl.rlim_cur > 128 ? (unsigned)(rl.rlim_cur - 64) : 64;
            if (!quiet)
                printf("berth serve: max_connections %u lowered to %u: the open-file limit is %llu\n",
                       lim->max_connections, fit, (unsigned long long)rl.rlim_cur);
            lim->max_connections = fit;
        }
    }
    if (lim->max_per_ip > lim->max_connections) lim->max_per_ip = lim->max_connections;
    return 0;
}

/* What the command line asked for. */
typedef struct serve_args {
    const char *host;
    unsigned long port, body_mb;
    int quiet;
    collected col; /* the models: configs and folders of them */
    uint64_t flag[BERTH_SERVE_N_SERVER];
} serve_args;

/* Returns -1 when the server should start, else the exit status (the
 * models collected are freed then). */
static int parse_args(int argc, char **argv, serve_args *a) {
    memset(a, 0, sizeof *a);
    a->host = "127.0.0.1", a->port = 8080, a->body_mb = 64;
    int rc = -1;
    for (int i = 1; i < argc && rc < 0; i++) {
        const char *s = argv[i];
        int has_value = i + 1 < argc, key = server_flag(s);
        unsigned long v;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(usage, stdout);
            rc = 0;
        } else if (!strcmp(s, "--host") && has_value) {
            a->host = argv[++i];
        } else if (!strcmp(s, "--port") && has_value) {
            if (parse_uint(argv[++i], 65535, &a->port)) {
                fprintf(stderr, "berth serve: --port: expected 0 to 65535, found '%s'\n", argv[i]);
                rc = 2;
            }
        } else if (!strcmp(s, "--max-body-mb") && has_value) {
            if (parse_uint(argv[++i], 65536, &a->body_mb) || !a->body_mb) {
                fprintf(stderr, "berth serve: --max-body-mb: expected 1 to 65536, found '%s'\n", argv[i]);
                rc = 2;
            }
        } else if (key >= 0 && has_value) {
            if (parse_uint(argv[++i], 1ul << 30, &v) || !v) {
                fprintf(stderr, "berth serve: %s: expected a positive whole number, found '%s'\n", s, argv[i]);
                rc = 2;
            }
            a->flag[key] = v;
        } else if (!strcmp(s, "--quiet")) {
            a->quiet = 1;
        } else if (s[0] == '-') {
            int valued = !strcmp(s, "--host") || !strcmp(s, "--port") || !strcmp(s, "--max-body-mb") || key >= 0;
            fprintf(stderr, "berth serve: unknown option '%s'%s (try berth serve --help)\n", s,
                    valued ? " without a value" : "");
            rc = 2;
        } else {
            struct stat st;
            if (stat(s, &st) == 0 && S_ISDIR(st.st_mode) ? add_dir(&a->col, s) : add_config(&a->col, s)) rc = 1;
        }
    }
    if (rc < 0 && !a->col.n) {
        fputs(usage, stderr);
        rc = 2;
    }
    for (uint32_t i = 0; rc < 0 && i < a->col.n; i++)
        for (uint32_t j = 0; rc < 0 && j < i; j++)
            if (!strcmp(a->col.refs[i].name, a->col.refs[j].name)) {
                fprintf(stderr, "berth serve: two models named '%s' (%s and %s); model names come from file names\n",
                        a->col.refs[i].name, a->col.refs[j].path, a->col.refs[i].path);
                rc = 2;
            }
    if (rc >= 0) free(a->col.refs);
    return rc;
}

/* Opens every model into s->models. Returns 0 when all opened, 1 on an
 * error (said), 2 when SIGTERM or SIGINT came while loading. */
static int open_models(serve_server *s, const model_ref *refs, uint32_t n_refs, int quiet) {
    s->models = calloc(n_refs, sizeof *s->models);
    if (!s->models) return 1;
    for (uint32_t i = 0; i < n_refs; i++) {
        uint64_t t0 = berth_now_ns();
        char msg[1024];
        s->n_models = i + 1;
        if (serve_model_open(&s->models[i], refs[i].path, refs[i].model[0] ? refs[i].model : NULL, refs[i].name, msg,
                             sizeof msg)) {
            fprintf(stderr, "berth serve: model '%s' (%s): %s\n", refs[i].name, refs[i].path, msg);
            return 1;
        }
        double load_ms = (double)(berth_now_ns() - t0) / 1e6;
        /* The signals are blocked, so one sent while loading waits here:
         * stop before the next model rather than after all of them. */
        sigset_t pending;
        if (sigpending(&pending) == 0 && (sigismember(&pending, SIGTERM) || sigismember(&pending, SIGINT))) {
            printf("berth serve: %s while loading models\n", sigismember(&pending, SIGTERM) ? "SIGTERM" : "SIGINT");
            return 2;
        }
        serve_model *m = &s->models[i];
        if (quiet) continue;
        berth_memory mem;
        berth_executor_memory(m->ex, &mem);
        printf("berth serve: model '%s' on %s: %u buckets planned in %u context%s in %.0f ms, weights %llu "
               "bytes, plans %llu bytes; %s, max_delay_us %lld, max_queue %lld\n",
               m->name, berth_executor_backend(m->ex), berth_executor_bucket_count(m->ex, 0), m->workers,
               m->workers == 1 ? "" : "s", load_ms, (unsigned long long)mem.weights_bytes,
               (unsigned long long)mem.plans_bytes, m->sig.batch ? "batches" : "one request a run",
               (long long)m->max_delay_us, (long long)m->max_queue);
        if (m->sig.batch)
            printf("berth serve: model '%s' merges up to %lld rows of '%s'\n", m->name, (long long)m->max_batch,
                   m->sig.batch);
    }
    return 0;
}

/* After SIGTERM or SIGINT: readiness is false and new infer requests get
 * 503 (the listener stays open to say so); requests already begun are
 * read and answered, each answer closing its connection, for up to
 * drain_s. Then the server and the models close. */
static void drain(serve_server *s, int sig, int quiet) {
    atomic_store(&s->draining, 1);
    uint64_t t0 = berth_now_ns(), until = t0 + (uint64_t)s->lim.drain_s * 1000000000u;
    if (!quiet)
        printf("berth serve: %s: draining: %d requests in progress, up to %u s\n", sig == SIGTERM ? "SIGTERM" : "SIGINT",
               atomic_load(&s->open_requests), s->lim.drain_s);
    fflush(stdout);
    while (atomic_load(&s->open_requests) > 0 && berth_now_ns() < until) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    int left = atomic_load(&s->open_requests);
    if (left > 0)
        printf("berth serve: drain_s (%u s) passed with %d requests in progress; they are cut\n", s->lim.drain_s, left);
    else if (!quiet)
        printf("berth serve: drained in %.0f ms\n", (double)(berth_now_ns() - t0) / 1e6);
    serve_http_stop(s);
    for (uint32_t i = 0; i < s->n_models; i++) serve_model_close(&s->models[i], left > 0);
    s->n_models = 0;
}

int berth_cli_serve(int argc, char **argv) {
    serve_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    model_ref *refs = a.col.refs;

    /* Signals are taken by sigwait below, so no other thread (workers,
     * connections) may receive them: blocked before any starts. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

#ifdef __GLIBC__
    /* Every request allocates and frees its body, inputs and outputs,
     * often a few hundred kilobytes each. With glibc's defaults those
     * come from fresh mmaps or a heap trimmed after each free, so every
     * request pays page faults on memory the last one just gave back:
     * a third of the time of the thread reading requests in, under load.
     * Up to 4 MiB is served from the heap, which keeps up to 64 MiB free
     * for the next request (within the in-flight budget in any case). */
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
    serve_server s;
    memset(&s, 0, sizeof s);
    if (settle_limits(&s.lim, a.flag, a.col.key, (size_t)a.body_mb << 20, a.quiet)) {
        free(refs);
        return 2;
    }
    rc = 1;
    int opened = open_models(&s, refs, a.col.n, a.quiet);
    if (opened == 2) rc = 0; /* asked to stop: not an error */
    if (opened) goto done;
    char msg[1024];
    uint16_t bound;
    if (serve_http_start(&s, a.host, (uint16_t)a.port, &bound, msg, sizeof msg)) {
        fprintf(stderr, "berth serve: %s\n", msg);
        goto done;
    }
    printf("berth serve: listening on http://%s:%u\n", a.host, bound);
    fflush(stdout);
    int sig = 0;
    sigwait(&stop, &sig);
    drain(&s, sig, a.quiet);
    rc = 0;
done:
    serve_http_stop(&s);
    for (uint32_t i = 0; s.models && i < s.n_models; i++) serve_model_close(&s.models[i], 0);
    if (rc == 0 && !a.quiet) printf("berth serve: stopped\n");
    free(s.models);
    free(refs);
    return rc;
}
