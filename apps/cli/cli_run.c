/* berth run CONFIG: open the deployment, run every lane once cold and
 * again warm, and show what happened: backend (and why others were
 * skipped), bucket, times, and each output's shape, first values and a
 * checksum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "berth/berth.h"
#include "cli.h"
#include "dtype.h"
#include "npy.h"
#include "util.h"

static const char *run_usage =
    "usage: berth run CONFIG [options]\n"
    "\n"
    "Opens the deployment CONFIG describes and runs each lane of it.\n"
    "\n"
    "  --input NAME=FILE.npy   an input (repeatable); inputs not given are\n"
    "                          generated: deterministic values at the first\n"
    "                          bucket's sizes\n"
    "  --output FILE           write lane 0's outputs as .safetensors\n"
    "  --lane NAME             run only this lane\n"
    "  --model NAME            open [model.NAME] of a config describing several\n"
    "                          models (default: [model])\n"
    "  --use LIST              override [backend] use, e.g. --use cpu\n"
    "  --repeat N              warm runs after the first (default 3); prints\n"
    "                          their min, median and p90\n"
    "  --verify NAME           run every run on backend NAME too (e.g. cpu) and\n"
    "                          compare the outputs; a difference beyond\n"
    "                          [backend] verify_atol + verify_rtol |x| (1e-3\n"
    "                          each by default), or a NaN or inf where NAME's\n"
    "                          is finite, is an error naming the output and\n"
    "                          the first node that diverges\n"
    "  --stats                 after the memory line, the plans' bytes by kind:\n"
    "                          intermediates, scratch, io (inputs and outputs,\n"
    "                          or staging), constants, records (command\n"
    "                          buffers, descriptors; marked when estimated);\n"
    "                          with split, each warm bucket's crossing bytes\n"
    "                          per run and how many passed through host buffers;\n"
    "                          per backend, the weights it prepared into its\n"
    "                          own layout and the [cache] files read, refused\n"
    "                          (stale or corrupt) and written\n"
    "  --profile               print each node's mean time over the warm runs,\n"
    "                          largest first, with its share, and each\n"
    "                          subgraph's time in the last run\n"
    "  --explain               print, for every bucket of each lane run, the\n"
    "                          subgraphs and backends that run it and the\n"
    "                          tensors crossing between them\n"
    "  --quiet                 print only errors and outputs\n"
    "\n"
    "Exit status: 0 success, 1 error, 2 usage, 3 unsupported: the deployment\n"
    "is valid but the backend cannot run it (an op, a dtype, a size), so\n"
    "another backend might.\n";

/* berth run's exit statuses; 3 lets a script (tools/conformance) tell
 * "this backend cannot" from "this is broken" without reading messages. */
enum { RUN_OK = 0, RUN_ERROR = 1, RUN_USAGE = 2, RUN_UNSUPPORTED = 3 };

static int exit_for(berth_status st) {
    return st == BERTH_OK ? RUN_OK : st == BERTH_ERR_UNSUPPORTED ? RUN_UNSUPPORTED : RUN_ERROR;
}

#define MAX_INPUTS 64

typedef struct run_args {
    const char *config;
    const char *in_name[MAX_INPUTS];
    const char *in_file[MAX_INPUTS];
    int n_in;
    const char *output;
    const char *lane;
    const char *model;
    const char *use;
    const char *verify;
    int repeat;
    int stats;
    int profile;
    int explain;
    int quiet;
} run_args;

/* Errors and warnings go to stderr, information to stdout; --quiet keeps
 * only errors, so a script reading stdout sees outputs alone. stdout is
 * flushed first so that the two streams merged read in order. */
static void cli_log(void *ctx, berth_log_level level, const char *msg) {
    const run_args *a = ctx;
    if (level > BERTH_LOG_INFO || (a->quiet && level != BERTH_LOG_ERROR)) return;
    if (level == BERTH_LOG_INFO) {
        printf("%s\n", msg);
        return;
    }
    fflush(stdout);
    fprintf(stderr, "%s%s\n", level == BERTH_LOG_WARN ? "warning: " : "error: ", msg);
}

static int parse_args(int argc, char **argv, run_args *a) {
    memset(a, 0, sizeof *a);
    a->repeat = 3;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(run_usage, stdout);
            return 0;
        } else if (!strcmp(s, "--profile")) {
            a->profile = 1;
        } else if (!strcmp(s, "--explain")) {
            a->explain = 1;
        } else if (!strcmp(s, "--stats")) {
            a->stats = 1;
        } else if (!strcmp(s, "--quiet")) {
            a->quiet = 1;
        } else if (!strcmp(s, "--input") || !strcmp(s, "--output") || !strcmp(s, "--lane") ||
                   !strcmp(s, "--model") || !strcmp(s, "--use") || !strcmp(s, "--repeat") ||
                   !strcmp(s, "--verify")) {
            if (!next) {
                fprintf(stderr, "berth run: %s needs a value\n", s);
                return 2;
            }
            i++;
            if (!strcmp(s, "--input")) {
                const char *eq = strchr(next, '=');
                if (!eq || eq == next || !eq[1] || a->n_in == MAX_INPUTS) {
                    fprintf(stderr, "berth run: --input expects NAME=FILE.npy, found '%s'\n", next);
                    return 2;
                }
                a->in_name[a->n_in] = next;
                a->in_file[a->n_in++] = eq + 1;
            } else if (!strcmp(s, "--output")) {
                a->output = next;
            } else if (!strcmp(s, "--lane")) {
                a->lane = next;
            } else if (!strcmp(s, "--model")) {
                a->model = next;
            } else if (!strcmp(s, "--use")) {
                a->use = next;
            } else if (!strcmp(s, "--verify")) {
                a->verify = next;
            } else {
                char *end;
                long r = strtol(next, &end, 10);
                if (*end || r < 0 || r > 1000000) {
                    fprintf(stderr, "berth run: --repeat expects 0 to 1000000, found '%s'\n", next);
                    return 2;
                }
                a->repeat = (int)r;
            }
        } else if (s[0] == '-') {
            fprintf(stderr, "berth run: unknown option '%s' (try berth run --help)\n", s);
            return 2;
        } else if (!a->config) {
            a->config = s;
        } else {
            fprintf(stderr, "berth run: unexpected argument '%s'\n", s);
            return 2;
        }
    }
    if (!a->config) {
        fputs(run_usage, stderr);
        return 2;
    }
    return -1;
}

/* Deterministic inputs: floats in [-1, 1) from a fixed LCG, integers
 * 0..9, so two runs (and two backends) see the same data. */
static void generate(berth_tensor *t, uint32_t seed) {
    uint64_t x = 0x9e3779b97f4a7c15ull ^ seed;
    size_t n = 1;
    for (uint32_t d = 0; d < t->rank; d++) n *= (size_t)t->dims[d];
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(x >> 40);
        switch (t->dtype) {
        case BERTH_DTYPE_F32: ((float *)t->data)[i] = (float)r / 8388608.0f - 1.0f; break;
        case BERTH_DTYPE_I32: ((int32_t *)t->data)[i] = (int32_t)(r % 10); break;
        case BERTH_DTYPE_I64: ((int64_t *)t->data)[i] = (int64_t)(r % 10); break;
        case BERTH_DTYPE_U8: ((uint8_t *)t->data)[i] = (uint8_t)(r % 2); break;
        default: ((uint8_t *)t->data)[i % t->bytes] = 0; break;
        }
    }
}

/* 1 when --input number k names input `name`. */
static int input_named(const run_args *a, int k, const char *name) {
    size_t len = strlen(name);
    return !strncmp(a->in_name[k], name, len) && a->in_name[k][len] == '=';
}

/* Every --input must name an input of a lane that runs, once: a typo
 * would otherwise be ignored and the run use generated data. */
static int check_input_names(berth_executor *ex, const run_args *a, int32_t only_lane) {
    for (int k = 0; k < a->n_in; k++) {
        int found = 0;
        for (uint32_t l = 0; l < berth_executor_lane_count(ex); l++) {
            if (only_lane >= 0 && l != (uint32_t)only_lane) continue;
            for (uint32_t i = 0; i < berth_executor_input_count(ex, l); i++) {
                berth_io_info info;
                berth_executor_input_info(ex, l, i, &info);
                found |= input_named(a, k, info.name);
            }
        }
        for (int j = 0; j < k; j++) {
            size_t len = (size_t)(a->in_file[k] - a->in_name[k]);
            if ((size_t)(a->in_file[j] - a->in_name[j]) == len && !strncmp(a->in_name[j], a->in_name[k], len)) {
                fprintf(stderr, "berth run: --input '%.*s' is given twice\n", (int)len - 1, a->in_name[k]);
                return 1;
            }
        }
        if (found) continue;
        fprintf(stderr, "berth run: --input '%.*s': no such input (",
                (int)(a->in_file[k] - a->in_name[k]) - 1, a->in_name[k]);
        const char *sep = "";
        for (uint32_t l = 0; l < berth_executor_lane_count(ex); l++) {
            if (only_lane >= 0 && l != (uint32_t)only_lane) continue;
            fprintf(stderr, "%slane '%s' takes", sep, berth_executor_lane_name(ex, l));
            sep = "; ";
            for (uint32_t i = 0; i < berth_executor_input_count(ex, l); i++) {
                berth_io_info info;
                berth_executor_input_info(ex, l, i, &info);
                fprintf(stderr, "%s '%s'", i ? "," : "", info.name);
            }
        }
        fprintf(stderr, ")\n");
        return 1;
    }
    return 0;
}

static int make_inputs(berth_executor *ex, uint32_t lane, const run_args *a, berth_tensor *in,
                       uint32_t n) {
    char bucket[256];
    berth_executor_bucket_describe(ex, lane, 0, bucket, sizeof bucket);
    for (uint32_t i = 0; i < n; i++) {
        berth_io_info info;
        berth_executor_input_info(ex, lane, i, &info);
        const char *file = NULL;
        for (int k = 0; k < a->n_in; k++)
            if (input_named(a, k, info.name)) file = a->in_file[k];
        if (file) {
            berth_error err;
            if (berth_npy_read(file, &in[i], &err) != BERTH_OK) {
                fprintf(stderr, "berth run: input '%s': %s\n", info.name, err.msg);
                return 1;
            }
            continue;
        }
        /* Size dyn dims at the first bucket's value, so the run lands in it. */
        in[i].dtype = info.dtype;
        in[i].rank = info.rank;
        for (uint32_t d = 0; d < info.rank; d++) {
            in[i].dims[d] = info.dims[d];
            if (info.dyn[d]) {
                const char *p = strstr(bucket, info.dyn[d]);
                size_t len = strlen(info.dyn[d]);
                while (p && !((p == bucket || p[-1] == ' ') && p[len] == '=')) p = strstr(p + 1, info.dyn[d]);
                if (p) in[i].dims[d] = atoll(p + len + 1);
            }
        }
        int ok = 1;
        int64_t el = 1;
        for (uint32_t d = 0; d < in[i].rank; d++) el = berth_mul_checked(el, in[i].dims[d], &ok);
        in[i].bytes = berth_dtype_bytes(info.dtype, (uint64_t)el, &ok);
        in[i].data = malloc(in[i].bytes ? in[i].bytes : 1);
        if (!ok || !in[i].data) {
            fprintf(stderr, "berth run: cannot allocate input '%s'\n", info.name);
            return 1;
        }
        in[i].capacity = in[i].bytes;
        generate(&in[i], i);
    }
    return 0;
}

/* FNV-1a over the bytes: a checksum two backends can be compared by
 * only when they agree bit for bit; the sum is the tolerant figure. */
static void print_output(const berth_executor *ex, uint32_t lane, uint32_t o, const berth_tensor *t) {
    berth_io_info info;
    berth_executor_output_info(ex, lane, o, &info);
    printf("  output %s: %s[", info.name, berth_dtype_name(t->dtype));
    size_t n = 1;
    for (uint32_t d = 0; d < t->rank; d++) {
        printf("%s%lld", d ? ", " : "", (long long)t->dims[d]);
        n *= (size_t)t->dims[d];
    }
    printf("]");
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < t->bytes; i++) h = (h ^ ((const uint8_t *)t->data)[i]) * 0x100000001b3ull;
    double sum = 0;
    printf(" first:");
    for (size_t i = 0; i < n; i++) {
        double v = 0;
        switch (t->dtype) {
        case BERTH_DTYPE_F32: v = ((const float *)t->data)[i]; break;
        case BERTH_DTYPE_I32: v = ((const int32_t *)t->data)[i]; break;
        case BERTH_DTYPE_I64: v = (double)((const int64_t *)t->data)[i]; break;
        case BERTH_DTYPE_U8: v = ((const uint8_t *)t->data)[i]; break;
        default: break;
        }
        sum += v;
        if (i < 6) printf(" %.6g", v);
    }
    printf("%s sum: %.6g fnv1a: %016llx\n", n > 6 ? " ..." : "", sum, (unsigned long long)h);
}

/* Time per node summed over the runs profiled, in graph order; printed
 * by share, largest first. */
typedef struct node_time {
    char *node, *op;
    uint64_t ns;
} node_time;

typedef struct profile_acc {
    node_time *t;
    uint32_t n, cap, at; /* at: the node the next callback reports */
    int failed;
} profile_acc;

static void add_profile(void *ctx, const char *node, const char *op, uint64_t ns) {
    profile_acc *p = ctx;
    if (p->failed) return;
    if (p->at == p->n) { /* the first run profiled names the nodes */
        if (p->n == p->cap) {
            uint32_t cap = p->cap ? 2 * p->cap : 64;
            node_time *t = realloc(p->t, cap * sizeof *t);
            if (!t) {
                p->failed = 1;
                return;
            }
            p->t = t, p->cap = cap;
        }
        node_time *e = &p->t[p->n++];
        e->node = strdup(node), e->op = strdup(op), e->ns = 0;
        if (!e->node || !e->op) p->failed = 1;
    }
    p->t[p->at++].ns += ns;
}

static int by_time(const void *x, const void *y) {
    const node_time *a = x, *b = y;
    return a->ns < b->ns ? 1 : a->ns > b->ns ? -1 : 0;
}

static void print_profile(profile_acc *p, int runs) {
    uint64_t total = 0;
    for (uint32_t i = 0; i < p->n; i++) total += p->t[i].ns;
    qsort(p->t, p->n, sizeof *p->t, by_time);
    printf("  profile, mean of %d run%s, nodes by time (%.3f ms in nodes per run):\n", runs, runs == 1 ? "" : "s",
           (double)total / 1e6 / runs);
    for (uint32_t i = 0; i < p->n; i++)
        printf("    %-32s %-24s %10.3f ms %5.1f%%\n", p->t[i].node, p->t[i].op, (double)p->t[i].ns / 1e6 / runs,
               total ? 100.0 * (double)p->t[i].ns / (double)total : 0.0);
}

static void profile_free(profile_acc *p) {
    for (uint32_t i = 0; i < p->n; i++) free(p->t[i].node), free(p->t[i].op);
    free(p->t);
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The value below which a fraction q of the sorted v lies (nearest rank). */
static double rank_of(const double *v, int n, double q) {
    int i = (int)(q * n + 0.999999) - 1;
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* The names of a subgraph's tensors, crossing ones with their bytes,
 * cut after a few: a CNN split often crosses dozens. */
static void print_tensors(const char *what, uint32_t n, const char *const *names, const uint8_t *crosses) {
    if (!n) return;
    printf("      %s:", what);
    uint32_t shown = n < 6 ? n : 5;
    for (uint32_t j = 0; j < shown; j++) printf(" %s%s", names[j], crosses[j] ? "*" : "");
    if (shown < n) printf(" and %u more", n - shown);
    printf("\n");
}

typedef struct explain_ctx {
    const berth_executor *ex;
    uint32_t index;
    int timed; /* print each subgraph's last run time (--profile) */
} explain_ctx;

static void print_subgraph(void *ctx, const berth_subgraph_info *s) {
    explain_ctx *c = ctx;
    char in[32], out[32];
    berth_format_bytes(in, sizeof in, s->bytes_in);
    berth_format_bytes(out, sizeof out, s->bytes_out);
    printf("    #%-3u %-10s %5u node%s  %s%s%s", ++c->index, berth_executor_backend_at(c->ex, s->backend, NULL),
           s->n_nodes, s->n_nodes == 1 ? " " : "s", s->first_node, s->n_nodes > 1 ? " .. " : "",
           s->n_nodes > 1 ? s->last_node : "");
    if (c->timed) {
        printf("  %.3f ms\n", (double)s->last_run_ns / 1e6);
        return;
    }
    printf("  crossing in %s, out %s", in, out);
    if (s->est_node_ns > 0) /* split = on: the cost model's view of it */
        printf("  est %.3f ms + %.3f ms", s->est_node_ns / 1e6, s->est_overhead_ns / 1e6);
    printf("\n");
    print_tensors("reads", s->n_in, s->in_names, s->in_crosses);
    print_tensors("writes", s->n_out, s->out_names, s->out_crosses);
}

typedef struct crossing_sum {
    uint32_t n, tensors;
    uint64_t bytes, kept, imported;
    uint32_t subgraphs[16], nodes[16]; /* per backend */
} crossing_sum;

static void sum_subgraph(void *ctx, const berth_subgraph_info *s) {
    crossing_sum *c = ctx;
    c->n++;
    if (s->backend < 16) {
        c->subgraphs[s->backend]++;
        c->nodes[s->backend] += s->n_nodes;
    }
    for (uint32_t j = 0; j < s->n_out; j++) c->tensors += s->out_crosses[j];
    c->bytes += s->bytes_out;
    c->kept += s->bytes_out_kept;
    c->imported += s->bytes_in_imported;
}

/* --stats with split: per warm bucket, the bytes crossing between
 * subgraphs per run, and how many of them went through host buffers
 * rather than read where their writer left them. */
static void print_crossings(berth_executor *ex) {
    for (uint32_t l = 0; l < berth_executor_lane_count(ex); l++)
        for (uint32_t b = 0; b < berth_executor_bucket_count(ex, l); b++) {
            crossing_sum sum;
            memset(&sum, 0, sizeof sum);
            berth_error err;
            char desc[256], all[32], copied[32], kept[32], imported[32];
            if (berth_executor_subgraphs(ex, l, b, sum_subgraph, &sum, &err) != BERTH_OK || !sum.tensors) continue;
            berth_executor_bucket_describe(ex, l, b, desc, sizeof desc);
            berth_format_bytes(all, sizeof all, sum.bytes);
            berth_format_bytes(copied, sizeof copied, sum.bytes - sum.kept);
            berth_format_bytes(kept, sizeof kept, sum.kept);
            berth_format_bytes(imported, sizeof imported, sum.imported);
            printf("crossings: lane %s bucket %s: %u tensor%s, %s per run: %s through host buffers, %s read where "
                   "written (%s of it imported)\n",
                   berth_executor_lane_name(ex, l), desc, sum.tensors, sum.tensors == 1 ? "" : "s", all, copied, kept,
                   imported);
        }
}

/* --stats: per backend, what it made of its weights at open and what
 * the cache gave and took. */
static void print_prepared(berth_executor *ex) {
    for (uint32_t k = 0; k < berth_executor_backend_count(ex); k++) {
        berth_prepared_info p;
        memset(&p, 0, sizeof p);
        p.struct_size = sizeof p;
        if (berth_executor_prepared_weights(ex, k, &p) != BERTH_OK) continue;
        char bytes[32], released[32];
        berth_format_bytes(bytes, sizeof bytes, p.bytes);
        berth_format_bytes(released, sizeof released, p.released_bytes);
        if (p.from_cache)
            printf("prepared: on %s: weights taken from the cache", berth_executor_backend_at(ex, k, NULL));
        else if (p.weights)
            printf("prepared: on %s: %u weights in its own layout (%s), %s as uploaded let go",
                   berth_executor_backend_at(ex, k, NULL), p.weights, bytes, released);
        else if (!p.cache_loads && !p.cache_refused && !p.cache_saves)
            continue;
        else
            printf("prepared: on %s: nothing", berth_executor_backend_at(ex, k, NULL));
        printf("; cache files: %u read, %u refused, %u written\n", p.cache_loads, p.cache_refused, p.cache_saves);
    }
}

/* --explain: every bucket of the lane, planned if it was not yet. */
static int explain_lane(berth_executor *ex, uint32_t lane) {
    for (uint32_t b = 0; b < berth_executor_bucket_count(ex, lane); b++) {
        berth_error err;
        char desc[256], bytes[32];
        berth_executor_bucket_describe(ex, lane, b, desc, sizeof desc);
        berth_status st = berth_executor_prepare(ex, lane, b, &err);
        if (st != BERTH_OK) {
            fprintf(stderr, "berth run: lane '%s': bucket %s: %s\n", berth_executor_lane_name(ex, lane), desc,
                    err.msg);
            return exit_for(st);
        }
        crossing_sum sum;
        memset(&sum, 0, sizeof sum);
        berth_executor_subgraphs(ex, lane, b, sum_subgraph, &sum, &err);
        berth_format_bytes(bytes, sizeof bytes, sum.bytes);
        printf("  explain bucket %s: %u subgraph%s, %u tensor%s crossing (%s per run; * marks them)\n", desc,
               sum.n, sum.n == 1 ? "" : "s", sum.tensors, sum.tensors == 1 ? "" : "s", bytes);
        for (uint32_t k = 0; k < berth_executor_backend_count(ex) && k < 16; k++)
            printf("    on %-10s %u node%s in %u subgraph%s\n", berth_executor_backend_at(ex, k, NULL), sum.nodes[k],
                   sum.nodes[k] == 1 ? "" : "s", sum.subgraphs[k], sum.subgraphs[k] == 1 ? "" : "s");
        berth_partition_info pi = {.struct_size = sizeof pi};
        if (berth_executor_partition(ex, lane, b, &pi, &err) == BERTH_OK && pi.first_subgraphs)
            printf("    by cost: estimated %.3f ms a run (est: nodes + starts and crossings); each node on the "
                   "first backend that runs it would be %u subgraph%s, estimated %.3f ms: %u run%s of %u node%s "
                   "moved\n",
                   pi.est_ns / 1e6, pi.first_subgraphs, pi.first_subgraphs == 1 ? "" : "s", pi.first_est_ns / 1e6,
                   pi.moved_runs, pi.moved_runs == 1 ? "" : "s", pi.moved_nodes, pi.moved_nodes == 1 ? "" : "s");
        explain_ctx c = {ex, 0, 0};
        berth_executor_subgraphs(ex, lane, b, print_subgraph, &c, &err);
    }
    return 0;
}

static int write_outputs(const char *path, berth_executor *ex, const berth_tensor *out, uint32_t n) {
    static const struct {
        berth_dtype t;
        ba_dtype a;
    } map[] = {{BERTH_DTYPE_F32, BA_F32}, {BERTH_DTYPE_F16, BA_F16}, {BERTH_DTYPE_I32, BA_I32},
               {BERTH_DTYPE_U32, BA_U32}, {BERTH_DTYPE_I64, BA_I64}, {BERTH_DTYPE_U64, BA_U64},
               {BERTH_DTYPE_I8, BA_I8},   {BERTH_DTYPE_U8, BA_U8}};
    berth_st_tensor st[64];
    if (n > 64) n = 64;
    for (uint32_t i = 0; i < n; i++) {
        berth_io_info info;
        berth_executor_output_info(ex, 0, i, &info);
        memset(&st[i], 0, sizeof st[i]);
        st[i].name = info.name;
        for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
            if (map[k].t == out[i].dtype) st[i].dtype = map[k].a;
        st[i].rank = out[i].rank;
        memcpy(st[i].dims, out[i].dims, sizeof st[i].dims);
        st[i].data = out[i].data;
        st[i].bytes = out[i].bytes;
    }
    berth_error err;
    if (berth_st_write(path, st, n, NULL, &err) != 0) {
        fprintf(stderr, "berth run: --output: %s\n", err.msg);
        return 1;
    }
    printf("outputs written to %s\n", path);
    return 0;
}

static int run_lane(berth_executor *ex, uint32_t lane, const run_args *a) {
    uint32_t ni = berth_executor_input_count(ex, lane), no = berth_executor_output_count(ex, lane);
    berth_tensor *in = calloc(ni ? ni : 1, sizeof *in);
    berth_tensor *out = calloc(no ? no : 1, sizeof *out);
    int rc = 1;
    if (!in || !out) {
        fprintf(stderr, "berth run: out of memory\n");
        goto done;
    }
    if (make_inputs(ex, lane, a, in, ni)) goto done;
    berth_error err;
    uint32_t bucket = 0;
    uint64_t t0 = berth_now_ns();
    berth_status st = berth_executor_run(ex, lane, in, ni, out, no, &bucket, &err);
    if (st != BERTH_OK) {
        fprintf(stderr, "berth run: lane '%s': %s\n", berth_executor_lane_name(ex, lane), err.msg);
        rc = exit_for(st);
        goto done;
    }
    double first = (double)(berth_now_ns() - t0) / 1e6;
    double *ms = calloc(a->repeat ? (size_t)a->repeat : 1, sizeof *ms);
    profile_acc prof = {0};
    if (!ms) {
        fprintf(stderr, "berth run: out of memory\n");
        goto done;
    }
    /* --profile: the nodes' times of every later run (of the first when
     * there is none), read after each run, outside its timing */
    if (a->profile && !a->repeat) berth_executor_profile(ex, lane, bucket, add_profile, &prof, &err);
    for (int r = 0; r < a->repeat; r++) {
        uint64_t t = berth_now_ns();
        st = berth_executor_run(ex, lane, in, ni, out, no, &bucket, &err);
        if (st != BERTH_OK) {
            fprintf(stderr, "berth run: lane '%s': %s\n", berth_executor_lane_name(ex, lane), err.msg);
            rc = exit_for(st);
            free(ms);
            profile_free(&prof);
            goto done;
        }
        ms[r] = (double)(berth_now_ns() - t) / 1e6;
        prof.at = 0;
        if (a->profile) berth_executor_profile(ex, lane, bucket, add_profile, &prof, &err);
    }
    char desc[256];
    berth_executor_bucket_describe(ex, lane, bucket, desc, sizeof desc);
    printf("lane %s: bucket %s\n", berth_executor_lane_name(ex, lane), desc);
    printf("  first run %.3f ms (plans the bucket)", first);
    if (a->repeat) {
        double total = 0;
        for (int r = 0; r < a->repeat; r++) total += ms[r];
        qsort(ms, (size_t)a->repeat, sizeof *ms, cmp_double);
        printf(", later runs %.3f ms mean, %.3f ms best of %d\n", total / a->repeat, ms[0], a->repeat);
        printf("  later runs: min %.4f ms, median %.4f ms, p90 %.4f ms\n", ms[0], rank_of(ms, a->repeat, 0.5),
               rank_of(ms, a->repeat, 0.9));
    } else {
        printf("\n");
    }
    free(ms);
    for (uint32_t o = 0; o < no; o++) print_output(ex, lane, o, &out[o]);
    if (a->profile) {
        if (prof.failed)
            printf("  profile: out of memory\n");
        else if (!prof.n)
            printf("  profile: not available: %s\n", err.msg);
        else
            print_profile(&prof, a->repeat ? a->repeat : 1);
        profile_free(&prof);
        explain_ctx c = {ex, 0, 1};
        printf("  subgraphs of the last run:\n");
        berth_executor_subgraphs(ex, lane, bucket, print_subgraph, &c, &err);
    }
    rc = (lane == 0 && a->output) ? write_outputs(a->output, ex, out, no) : 0;
    if (rc == 0 && a->explain) rc = explain_lane(ex, lane);
done:
    for (uint32_t i = 0; in && i < ni; i++) berth_tensor_release(&in[i]);
    for (uint32_t o = 0; out && o < no; o++) berth_tensor_release(&out[o]);
    free(in);
    free(out);
    return rc;
}

/* The plans' bytes by kind, under the memory line; a kind some backend
 * only estimated is marked so. */
static void print_plan_memory(const berth_executor *ex) {
    berth_plan_memory k = {.struct_size = sizeof k};
    if (berth_executor_plan_memory(ex, UINT32_MAX, &k) != BERTH_OK) return;
    const struct {
        const char *name;
        uint64_t bytes;
        uint32_t bit;
    } kinds[] = {{"intermediates", k.intermediates, BERTH_PLAN_MEM_INTERMEDIATES},
                 {"scratch", k.scratch, BERTH_PLAN_MEM_SCRATCH},
                 {"io", k.io, BERTH_PLAN_MEM_IO},
                 {"constants", k.constants, BERTH_PLAN_MEM_CONSTANTS},
                 {"records", k.records, BERTH_PLAN_MEM_RECORDS},
                 {"other", k.other, 0}};
    printf("  plans by kind:");
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        printf("%s %s %llu%s", i ? "," : "", kinds[i].name, (unsigned long long)kinds[i].bytes,
               k.estimated & kinds[i].bit ? " (estimated)" : "");
    printf("\n");
}

int berth_cli_run(int argc, char **argv) {
    run_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    berth_open_options opts = {sizeof opts, cli_log, &a, BERTH_LOG_INFO, a.use, 0, a.model, a.verify, NULL};
    berth_executor *ex;
    berth_error err;
    uint64_t t0 = berth_now_ns();
    berth_status st = berth_executor_open(a.config, &opts, &ex, &err);
    if (st != BERTH_OK) {
        fprintf(stderr, "berth run: %s\n", err.msg);
        return exit_for(st);
    }
    if (!a.quiet) {
        printf("opened %s in %.1f ms: backend", a.config, (double)(berth_now_ns() - t0) / 1e6);
        uint32_t nb = berth_executor_backend_count(ex);
        for (uint32_t k = 0; k < nb; k++) {
            const char *device;
            const char *name = berth_executor_backend_at(ex, k, &device);
            printf("%s %s (%s)", k ? "," : nb > 1 ? "s" : "", name, device);
        }
        printf("%s\n", nb > 1 ? ", graphs split among them" : "");
    }
    int32_t only = a.lane ? berth_executor_find_lane(ex, a.lane) : -1;
    if (a.lane && only < 0) {
        fprintf(stderr, "berth run: no lane named '%s' in %s\n", a.lane, a.config);
        rc = 1;
    } else {
        rc = check_input_names(ex, &a, only);
    }
    for (uint32_t l = 0; l < berth_executor_lane_count(ex) && rc == 0; l++)
        if (only < 0 || l == (uint32_t)only) rc = run_lane(ex, l, &a);
    berth_memory m;
    berth_executor_memory(ex, &m);
    const char *limit_what;
    uint64_t limit = berth_executor_memory_limit(ex, &limit_what);
    if (rc == 0 && !a.quiet)
        printf("memory: weights %llu bytes (all lanes), plans %llu bytes (%u warm), host buffers %llu bytes, "
               "limit %llu bytes (%s)\n",
               (unsigned long long)m.weights_bytes, (unsigned long long)m.plans_bytes, m.plans,
               (unsigned long long)m.host_bytes, (unsigned long long)limit, limit_what);
    if (rc == 0 && !a.quiet && a.stats) print_plan_memory(ex), print_prepared(ex);
    if (rc == 0 && !a.quiet && a.stats && berth_executor_backend_count(ex) > 1) print_crossings(ex);
    for (uint32_t k = 0; rc == 0 && !a.quiet && berth_executor_backend_count(ex) > 1 &&
                         k < berth_executor_backend_count(ex);
         k++) {
        berth_executor_backend_memory(ex, k, &m);
        printf("  on %s: weights %llu bytes, plans %llu bytes (%u warm)\n", berth_executor_backend_at(ex, k, NULL),
               (unsigned long long)m.weights_bytes, (unsigned long long)m.plans_bytes, m.plans);
    }
    berth_executor_close(ex);
    return rc;
}
