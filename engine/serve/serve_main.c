/* `berth serve`: load every model, listen, answer until SIGTERM or
 * SIGINT, then stop accepting, finish what is in flight and exit 0. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    "Routes: GET /v2, /v2/health/live, /v2/health/ready, /v2/models/NAME,\n"
    "/v2/models/NAME/ready, /metrics; POST /v2/models/NAME/infer (JSON, or\n"
    "JSON and binary tensor data).\n"
    "\n"
    "SIGTERM or SIGINT: stop accepting, answer what is in flight, exit 0.\n"
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

/* The models of one config file: [model], or each [model.NAME]. */
static int add_config(model_ref **refs, uint32_t *n, const char *path) {
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
    for (uint32_t i = 0; i < cfg->n_models && !rc; i++) {
        char full[512];
        snprintf(full, sizeof full, "%s.%s", name, cfg->models[i]);
        rc = add_ref(refs, n, path, full, cfg->models[i]);
    }
    berth_config_free(cfg);
    return rc;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int add_dir(model_ref **refs, uint32_t *n, const char *dir) {
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
        rc = add_config(refs, n, path);
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

int berth_cli_serve(int argc, char **argv) {
    const char *host = "127.0.0.1";
    unsigned long port = 8080, body_mb = 64;
    int quiet = 0;
    model_ref *refs = NULL;
    uint32_t n_refs = 0;
    int rc = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            free(refs);
            return 0;
        }
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--host") && has_value) {
            host = argv[++i];
        } else if (!strcmp(a, "--port") && has_value) {
            if (parse_uint(argv[++i], 65535, &port)) {
                fprintf(stderr, "berth serve: --port: expected 0 to 65535, found '%s'\n", argv[i]);
                free(refs);
                return 2;
            }
        } else if (!strcmp(a, "--max-body-mb") && has_value) {
            if (parse_uint(argv[++i], 65536, &body_mb) || !body_mb) {
                fprintf(stderr, "berth serve: --max-body-mb: expected 1 to 65536, found '%s'\n", argv[i]);
                free(refs);
                return 2;
            }
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "berth serve: unknown option '%s'%s (try berth serve --help)\n", a,
                    !strcmp(a, "--host") || !strcmp(a, "--port") || !strcmp(a, "--max-body-mb") ? " without a value" : "");
            free(refs);
            return 2;
        } else {
            struct stat st;
            int r = stat(a, &st) == 0 && S_ISDIR(st.st_mode) ? add_dir(&refs, &n_refs, a) : add_config(&refs, &n_refs, a);
            if (r) {
                free(refs);
                return 1;
            }
        }
    }
    if (!n_refs) {
        fputs(usage, stderr);
        return 2;
    }
    for (uint32_t i = 0; i < n_refs; i++)
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(refs[i].name, refs[j].name)) {
                fprintf(stderr, "berth serve: two models named '%s' (%s and %s); model names come from file names\n",
                        refs[i].name, refs[j].path, refs[i].path);
                free(refs);
                return 2;
            }

    /* Signals are taken by sigwait below, so no other thread (workers,
     * connections) may receive them: blocked before any starts. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    serve_server s;
    memset(&s, 0, sizeof s);
    s.max_body = (size_t)body_mb << 20;
    s.models = calloc(n_refs, sizeof *s.models);
    if (!s.models) goto done;
    for (uint32_t i = 0; i < n_refs; i++) {
        uint64_t t0 = berth_now_ns();
        char msg[1024];
        s.n_models = i + 1;
        if (serve_model_open(&s.models[i], refs[i].path, refs[i].model[0] ? refs[i].model : NULL, refs[i].name, msg,
                             sizeof msg)) {
            fprintf(stderr, "berth serve: model '%s' (%s): %s\n", refs[i].name, refs[i].path, msg);
            goto done;
        }
        double load_ms = (double)(berth_now_ns() - t0) / 1e6;
        /* The signals are blocked, so one sent while loading waits here:
         * stop before the next model rather than after all of them. */
        sigset_t pending;
        if (sigpending(&pending) == 0 && (sigismember(&pending, SIGTERM) || sigismember(&pending, SIGINT))) {
            printf("berth serve: %s while loading models\n", sigismember(&pending, SIGTERM) ? "SIGTERM" : "SIGINT");
            rc = 0; /* asked to stop: not an error */
            goto done;
        }
        serve_model *m = &s.models[i];
        if (!quiet) {
            berth_memory mem;
            berth_executor_memory(m->ex, &mem);
            printf("berth serve: model '%s' on %s: %u buckets planned in %u context%s in %.0f ms, weights %llu "
                   "bytes, plans %llu bytes; %s, max_delay_us %lld, max_queue %lld\n",
                   m->name, berth_executor_backend(m->ex), berth_executor_bucket_count(m->ex, 0), m->workers,
                   m->workers == 1 ? "" : "s",
                   load_ms,
                   (unsigned long long)mem.weights_bytes, (unsigned long long)mem.plans_bytes,
                   m->sig.batch ? "batches" : "one request a run", (long long)m->max_delay_us,
                   (long long)m->max_queue);
            if (m->sig.batch) printf("berth serve: model '%s' merges up to %lld rows of '%s'\n", m->name,
                                     (long long)m->max_batch, m->sig.batch);
        }
    }
    char msg[1024];
    uint16_t bound;
    if (serve_http_start(&s, host, (uint16_t)port, &bound, msg, sizeof msg)) {
        fprintf(stderr, "berth serve: %s\n", msg);
        goto done;
    }
    printf("berth serve: listening on http://%s:%u\n", host, bound);
    fflush(stdout);

    int sig = 0;
    sigwait(&stop, &sig);
    if (!quiet) printf("berth serve: %s: no new requests; finishing those in flight\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    fflush(stdout);
    atomic_store(&s.draining, 1);
    serve_http_quiesce(&s);
    /* In-flight requests are answered by the workers, which still run. */
    while (atomic_load(&s.in_flight) > 0) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    serve_http_stop(&s);
    rc = 0;
done:
    for (uint32_t i = 0; s.models && i < s.n_models; i++) serve_model_close(&s.models[i]);
    if (rc == 0 && !quiet) printf("berth serve: stopped\n");
    free(s.models);
    free(refs);
    return rc;
}
