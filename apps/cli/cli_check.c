/* berth check MODULE: a backend module's test driver, for vendors. The
 * ABI contract (apps/check/check_abi.c), then berth's op cases on the
 * module and on a reference backend, then, where the tools and the ONNX
 * test data are installed, the ONNX node cases; a per-op table, a
 * summary line, and exit status 0 only when nothing failed.
 *
 * Each part that calls the module (the contract, the op cases on the
 * module, those on the reference, the model zoo) runs in a child process
 * with a time limit (isolate.h): the child sends its findings back and
 * this process prints the report, so a module that crashes, hangs or
 * calls exit() fails its part, named with the case it was running,
 * instead of ending the check. The ONNX node cases run in a process of
 * their own already (berth-conformance). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_abi.h"
#include "cli.h"
#include "cli_zoo.h"
#include "isolate.h"
#include "loader.h"
#include "op_cases.h"

static const char *check_usage =
    "usage: berth check MODULE [--reference NAME|PATH|none] [--option KEY=VALUE]...\n"
    "                   [--markdown FILE] [--no-onnx] [--models DIR [--strict]]\n"
    "                   [--timeout-s N] [--quiet]\n"
    "\n"
    "Tests a backend module (a name found like `use` finds it, or a path):\n"
    "  the ABI contract: negotiation and table sizes, caps within the size\n"
    "    the host gives, refusals that carry a terminated message, who frees\n"
    "    a weight buffer (also after an upload abandoned half-way);\n"
    "  berth's op cases, on MODULE and on the reference (default cpu): each\n"
    "    output must be fully written, finite where a finite value is\n"
    "    expected, within the conformance tolerance and the same on a\n"
    "    second run; an op the module refuses is unsupported, not failed;\n"
    "  the ONNX node cases (berth-conformance, with libonnx-testdata\n"
    "    installed), unless --no-onnx.\n"
    "--models DIR runs the real-model zoo instead of the cases: every model\n"
    "  of DIR/manifest.ini (tests/models/zoo_prepare.py --out DIR makes it)\n"
    "  on MODULE, each output held to onnxruntime's within the model's\n"
    "  tolerance; a model MODULE refuses is unsupported (with --strict,\n"
    "  failed), one the converter refuses is listed with its message.\n"
    "--option passes [backend.NAME] options to MODULE. --markdown writes the\n"
    "results as a Markdown report. --quiet prints only what failed and the\n"
    "summary line (the Markdown report still holds everything).\n"
    "Each part that calls MODULE (the contract, the op cases on MODULE, those\n"
    "  on the reference, the zoo) runs in a child process limited to\n"
    "  --timeout-s seconds (default 300, each model for the zoo; 0: no\n"
    "  limit). A part whose module crashes, hangs past the limit (it is\n"
    "  killed) or calls exit() fails, reported with the signal, the timeout\n"
    "  or the exit status and the case it was running; the rest of the\n"
    "  report still follows.\n"
    "Exit status: 0 when nothing failed, 1 when something did, 2 on bad usage.\n";

#define MAX_OPTIONS 8
#define MAX_OPS 256

typedef struct op_row {
    const char *op;
    int cases;
    int n[2][3];         /* [module, reference][OC_*] */
    char first[2][320];  /* the first failure (or refusal) of each, "case: why" */
} op_row;

typedef struct report {
    FILE *md;
    size_t contract_failed, contract_ok;
    int timeout_s;
    int quiet;              /* --quiet: print what failed and the summary */
    int parts_failed;       /* parts that did not finish */
    char first_part[512];   /* how the first of them ended */
} report;

static void md(report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void md(report *r, const char *fmt, ...) {
    if (!r->md) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->md, fmt, ap);
    va_end(ap);
}

/* A part that did not finish: counted, and said in the text and the
 * Markdown report. */
static void part_failed(report *r, const iso_result *res, int print) {
    if (!r->parts_failed++) snprintf(r->first_part, sizeof r->first_part, "%s", res->message);
    if (!print) return;
    printf("  FAIL %s\n", res->message);
    md(r, "\n**FAIL**: %s\n", res->message);
}

/* A table cell: no '|' or newline. */
static void cell(char *s) {
    for (; *s; s++)
        if (*s == '|' || *s == '\n') *s = '/';
}

static void contract_item(void *ctx, int ok, const char *item, const char *message) {
    report *r = ctx;
    if (!ok || !r->quiet) printf("  %-4s %s: %s\n", ok ? "ok" : "FAIL", item, message);
    char m[BERTH_ERROR_CAP + 512];
    snprintf(m, sizeof m, "%s", message);
    cell(m);
    md(r, "| %s | %s | %s |\n", item, ok ? "ok" : "**FAIL**", m);
    ok ? r->contract_ok++ : r->contract_failed++;
}

/* One column of a row: "pass", "unsupported: why" or "FAIL: case: why",
 * with counts when the op's cases differ. */
static void column(const op_row *row, int who, char *buf, size_t cap) {
    const int *n = row->n[who];
    int run = n[OC_PASSED] + n[OC_UNSUPPORTED] + n[OC_FAILED];
    if (!run) snprintf(buf, cap, "not run");
    else if (n[OC_FAILED]) snprintf(buf, cap, "FAIL %d/%d: %s", n[OC_FAILED], row->cases, row->first[who]);
    else if (n[OC_UNSUPPORTED] == run) snprintf(buf, cap, "unsupported: %s", row->first[who]);
    else if (n[OC_UNSUPPORTED]) snprintf(buf, cap, "pass %d, unsupported %d: %s", n[OC_PASSED], n[OC_UNSUPPORTED], row->first[who]);
    else snprintf(buf, cap, "pass");
    if (run && run < row->cases) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, " (%d not run)", row->cases - run);
    }
}

static int load(mh_module *m, const char *path, mh_host *host, const char *what) {
    berth_error err;
    if (mh_load(m, path, host, &err) == BERTH_OK && mh_open(m, &err) == BERTH_OK) return 1;
    fprintf(stderr, "berth check: the %s %s: %s\n", what, path, err.msg);
    mh_unload(m);
    return 0;
}

/* ---- the contract, in a child ---- */

typedef struct contract_part {
    const char *path;
    mh_host *host;
} contract_part;

static void contract_begin_child(void *ctx, const char *check) { iso_case(ctx, check); }

static void contract_item_child(void *ctx, int ok, const char *item, const char *message) {
    iso_sendf(ctx, "%d\t%s\t%s", ok, item, message);
}

static void contract_child(iso_chan *c, void *ctx) {
    contract_part *p = ctx;
    ck_contract(p->path, p->host, contract_begin_child, contract_item_child, c);
}

/* "OK\tITEM\tMESSAGE" */
static void contract_record(void *ctx, const char *record) {
    char item[256];
    const char *tab1 = strchr(record, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
    if (!tab2) return;
    snprintf(item, sizeof item, "%.*s", (int)(tab2 - tab1 - 1), tab1 + 1);
    contract_item(ctx, record[0] == '1', item, tab2 + 1);
}

static void contract(const char *path, mh_host *host, report *r) {
    contract_part p = {path, host};
    iso_result res;
    if (iso_run("the ABI contract checks", contract_child, &p, contract_record, r, r->timeout_s, 0, &res) == 0) return;
    contract_item(r, 0, res.last_case[0] ? res.last_case : "contract", res.message);
    part_failed(r, &res, 0);
}

/* ---- the op cases on one module, in a child ---- */

typedef struct cases_part {
    const char *path, *what; /* "module" or "reference" */
    mh_host *host;
} cases_part;

/* Records: "N NAME" (the module opened), then "O I RESULT WHY" per case. */
static void cases_child(iso_chan *c, void *ctx) {
    cases_part *p = ctx;
    mh_module m = {0};
    if (!load(&m, p->path, p->host, p->what)) return;
    iso_sendf(c, "N %s", m.be->name);
    for (size_t i = 0; i < oc_count; i++) {
        iso_case(c, oc_table[i].name);
        oc_outcome o;
        oc_run_case(&m, i, &o);
        iso_sendf(c, "O %zu %d %s", i, (int)o.result, o.why);
    }
    mh_unload(&m);
}

typedef struct cases_state {
    op_row *rows;
    const size_t *row_of; /* case -> row */
    int who;
    char name[128];       /* the backend's name, once it opened */
    int opened;
    size_t next;          /* the case after the last one reported */
    size_t *counts, edge[3];
    long failed;
} cases_state;

static void case_outcome(cases_state *s, size_t i, oc_result result, const char *why) {
    op_row *row = &s->rows[s->row_of[i]];
    int who = s->who;
    row->n[who][result]++;
    if (who == 0) {
        s->counts[result]++;
        if (!strncmp(oc_table[i].name, "edge ", 5)) s->edge[result]++;
        if (result == OC_FAILED) s->failed++;
    }
    int worse = result == OC_FAILED && row->n[who][OC_FAILED] == 1;
    if (result != OC_PASSED && (!row->first[who][0] || worse))
        snprintf(row->first[who], sizeof row->first[who], "%.60s: %.250s", oc_table[i].name, why);
    s->next = i + 1;
}

static void cases_record(void *ctx, const char *record) {
    cases_state *s = ctx;
    size_t i;
    int result, at = 0;
    if (record[0] == 'N') {
        snprintf(s->name, sizeof s->name, "%s", record + 2);
        s->opened = 1;
    } else if (record[0] == 'O' && sscanf(record, "O %zu %d %n", &i, &result, &at) == 2 && at && i < oc_count &&
               result >= OC_PASSED && result <= OC_FAILED) {
        case_outcome(s, i, (oc_result)result, record + at);
    }
}

/* Runs the part; a part that did not finish fails the case it was
 * running and is counted in r. Returns 0 when it finished. */
static int cases_run(cases_state *s, const char *path, mh_host *host, report *r, iso_result *res) {
    char part[300];
    cases_part p = {path, s->who ? "reference" : "module", host};
    snprintf(part, sizeof part, "the op cases on the %s", p.what);
    if (iso_run(part, cases_child, &p, cases_record, s, r->timeout_s, 0, res) == 0) return 0;
    if (s->opened && s->next < oc_count) case_outcome(s, s->next, OC_FAILED, res->message);
    return -1;
}

/* The op cases on the module (and the reference): the per-op table.
 * Returns the number of failed cases of the module, or -1 when it does
 * not open. */
static long op_cases(const char *module, const char *path, mh_host *host, const char *ref_path, mh_host *ref_host,
                     report *r, size_t *counts) {
    op_row *rows = calloc(MAX_OPS, sizeof *rows);
    size_t *row_of = calloc(oc_count ? oc_count : 1, sizeof *row_of);
    if (!rows || !row_of) {
        free(rows), free(row_of);
        fprintf(stderr, "berth check: out of memory\n");
        return -1;
    }
    size_t n_rows = 0;
    for (size_t i = 0; i < oc_count; i++) {
        const char *op = oc_case_op(i);
        size_t k = 0;
        while (k < n_rows && strcmp(rows[k].op, op)) k++;
        if (k == n_rows && n_rows < MAX_OPS) rows[n_rows++].op = op;
        if (k == MAX_OPS) k = MAX_OPS - 1; /* more ops than rows: the last row takes the rest */
        rows[k].cases++;
        row_of[i] = k;
    }
    cases_state mod = {.rows = rows, .row_of = row_of, .who = 0, .counts = counts};
    cases_state ref = {.rows = rows, .row_of = row_of, .who = 1, .counts = counts};
    snprintf(mod.name, sizeof mod.name, "%s", module);
    iso_result mod_res, ref_res;
    int mod_ok = cases_run(&mod, path, host, r, &mod_res) == 0;
    if (mod_ok && !mod.opened) {
        free(rows), free(row_of);
        return -1;
    }
    int have_ref = 0, ref_ok = 1;
    if (ref_path) {
        ref_ok = cases_run(&ref, ref_path, ref_host, r, &ref_res) == 0;
        have_ref = ref.opened;
    }
    if (!r->quiet)
        printf("\nop cases (%zu cases of %zu ops; module: %s%s%s)\n", oc_count, n_rows, mod.name,
               have_ref ? ", reference: " : "", have_ref ? ref.name : "");
    size_t *edge = mod.edge;
    md(r, "\n## Op cases\n\n%zu cases of %zu ops, %zu of them generated edge values (+-0, +-inf, NaN, subnormals, "
          "huge, negative and integral values, empty axes: %zu passed, %zu unsupported, %zu failed); each output "
          "filled with all-ones bytes before the run (an element never written shows), checked within the tolerance "
          "the op contract states for the op (docs/backend-ops.md; NaN only for NaN, an infinity only for itself), "
          "and run twice (the runs must agree bit for bit).\n\n| op | cases | %s |%s%s%s\n|---|---|---|%s\n",
       oc_count, n_rows, edge[0] + edge[1] + edge[2], edge[OC_PASSED], edge[OC_UNSUPPORTED], edge[OC_FAILED], mod.name, have_ref ? " " : "", have_ref ? ref.name : "", have_ref ? " |" : "",
       have_ref ? "---|" : "");
    for (size_t k = 0; k < n_rows; k++) {
        char a[400], b[400] = "";
        column(&rows[k], 0, a, sizeof a);
        if (have_ref) column(&rows[k], 1, b, sizeof b);
        if (!r->quiet || rows[k].n[0][OC_FAILED] || rows[k].n[1][OC_FAILED])
            printf("  %-28s %2d  %s\n", rows[k].op, rows[k].cases, a);
        cell(a), cell(b);
        md(r, "| %s | %d | %s |%s%s%s\n", rows[k].op, rows[k].cases, a, have_ref ? " " : "", b, have_ref ? " |" : "");
    }
    if (!r->quiet || edge[OC_FAILED])
        printf("  edge values (+-0, +-inf, NaN, subnormals, huge, empty axes): %zu cases: %zu passed, %zu unsupported, "
               "%zu failed\n",
               edge[0] + edge[1] + edge[2], edge[OC_PASSED], edge[OC_UNSUPPORTED], edge[OC_FAILED]);
    if (!mod_ok) part_failed(r, &mod_res, 1);
    if (!ref_ok) part_failed(r, &ref_res, 1);
    free(rows), free(row_of);
    return mod.failed;
}

/* ---- the model zoo, in a child ---- */

typedef struct zoo_part {
    const char *path, *models;
    int strict, quiet;
    FILE *md;
} zoo_part;

/* The child prints the zoo's table itself; what it printed before each
 * model is flushed first, so a crash loses nothing already printed. */
static void zoo_begin_child(void *ctx, const char *model) {
    fflush(NULL);
    iso_case(ctx, model);
}

static void zoo_child(iso_chan *c, void *ctx) {
    zoo_part *p = ctx;
    size_t zoo[ZOO_RESULTS] = {0};
    int failed = berth_cli_zoo(p->path, p->models, p->strict, p->quiet, p->md, zoo, zoo_begin_child, c);
    iso_sendf(c, "%d %zu %zu %zu %zu", failed, zoo[ZOO_PASSED], zoo[ZOO_FAILED], zoo[ZOO_UNSUPPORTED], zoo[ZOO_REFUSED]);
}

typedef struct zoo_state {
    int failed;
    size_t *counts;
} zoo_state;

static void zoo_record(void *ctx, const char *record) {
    zoo_state *z = ctx;
    size_t *n = z->counts;
    sscanf(record, "%d %zu %zu %zu %zu", &z->failed, &n[ZOO_PASSED], &n[ZOO_FAILED], &n[ZOO_UNSUPPORTED], &n[ZOO_REFUSED]);
}

/* The berth-conformance installed beside this program, or NULL. */
static char *conformance_tool(void) {
    char *self = realpath("/proc/self/exe", NULL);
    if (!self) return NULL;
    char *slash = strrchr(self, '/');
    size_t len = (size_t)(slash - self);
    char *tool = malloc(len + 32);
    if (tool) snprintf(tool, len + 32, "%.*s/berth-conformance", (int)len, self);
    free(self);
    if (tool && access(tool, X_OK) != 0) free(tool), tool = NULL;
    return tool;
}

/* Runs the ONNX node cases on the module; counts[3] = passed, failed,
 * skipped. Returns 0 when they ran, else -1 with the reason in why. */
static int onnx_cases(const char *tool, const char *path, const char *table, long *counts, char *why, size_t cap) {
    char log[] = "/tmp/berth-check-XXXXXX";
    int fd = mkstemp(log);
    if (fd < 0) return snprintf(why, cap, "no temporary file"), -1;
    char *self = realpath("/proc/self/exe", NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 1), dup2(fd, 2);
        execl(tool, tool, "--backend", path, "--berth", self ? self : "berth", "--ops-table", table, (char *)NULL);
        _exit(127);
    }
    free(self);
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    close(fd);
    FILE *f = fopen(log, "r");
    char line[1024], last[1024] = "";
    while (f && fgets(line, sizeof line, f))
        if (line[0] != '\n') snprintf(last, sizeof last, "%s", line);
    if (f) fclose(f);
    unlink(log);
    last[strcspn(last, "\n")] = 0;
    if (pid < 0 || !WIFEXITED(status) || sscanf(last, "%ld passed, %ld failed, %ld skipped", &counts[0], &counts[1], &counts[2]) != 3)
        return snprintf(why, cap, "berth-conformance did not finish (%s)", last[0] ? last : "no output"), -1;
    return 0;
}

/* What the command line asked for. */
typedef struct check_args {
    const char *module, *reference, *md_path, *models;
    char *options[MAX_OPTIONS];
    int n_options, onnx, strict, timeout_s, quiet;
} check_args;

/* Returns -1 when the check should run, else the exit status. */
static int parse_args(int argc, char **argv, check_args *a) {
    *a = (check_args){.reference = "cpu", .onnx = 1, .timeout_s = 300};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(check_usage, stdout);
            return 0;
        } else if ((!strcmp(s, "--reference") || !strcmp(s, "--markdown") || !strcmp(s, "--option") ||
                    !strcmp(s, "--models") || !strcmp(s, "--timeout-s")) && i + 1 >= argc) {
            fprintf(stderr, "berth check: %s needs a value\n%s", s, check_usage);
            return 2;
        } else if (!strcmp(s, "--reference")) {
            a->reference = argv[++i];
        } else if (!strcmp(s, "--markdown")) {
            a->md_path = argv[++i];
        } else if (!strcmp(s, "--models")) {
            a->models = argv[++i];
        } else if (!strcmp(s, "--timeout-s")) {
            char *end;
            long t = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || t < 0 || t > 86400 * 365) {
                fprintf(stderr, "berth check: --timeout-s expects a number of seconds, found '%s'\n", argv[i]);
                return 2;
            }
            a->timeout_s = (int)t;
        } else if (!strcmp(s, "--strict")) {
            a->strict = 1;
        } else if (!strcmp(s, "--option")) {
            if (!strchr(argv[i + 1], '=') || a->n_options == MAX_OPTIONS) {
                fprintf(stderr, "berth check: --option expects KEY=VALUE (at most %d), found '%s'\n", MAX_OPTIONS,
                        argv[i + 1]);
                return 2;
            }
            a->options[a->n_options++] = argv[++i];
        } else if (!strcmp(s, "--no-onnx")) {
            a->onnx = 0;
        } else if (!strcmp(s, "--quiet")) {
            a->quiet = 1;
        } else if (s[0] == '-' || a->module) {
            fprintf(stderr, "berth check: unexpected argument '%s'\n%s", s, check_usage);
            return 2;
        } else {
            a->module = s;
        }
    }
    if (!a->module || (a->strict && !a->models)) {
        if (a->strict && !a->models) fprintf(stderr, "berth check: --strict goes with --models\n");
        fputs(check_usage, stderr);
        return 2;
    }
    return -1;
}

/* --models: the contract, then the zoo instead of the cases. */
static int check_zoo(const check_args *a, const char *path, report *r) {
    size_t zoo[ZOO_RESULTS] = {0};
    zoo_part zp = {path, a->models, a->strict, a->quiet, r->md};
    zoo_state zs = {0, zoo};
    iso_result res;
    if (iso_run("the model zoo", zoo_child, &zp, zoo_record, &zs, r->timeout_s, 1, &res) != 0) {
        part_failed(r, &res, 1);
        zoo[ZOO_FAILED]++;
    }
    int failed = zs.failed;
    int bad = r->contract_failed || failed != 0 || r->parts_failed;
    char line[1200];
    snprintf(line, sizeof line, "berth check %s: %s; contract %zu ok, %zu failed; models %zu passed, %zu failed, "
             "%zu unsupported, %zu refused by the converter%s%s%s", a->module, bad ? "FAILED" : "passed",
             r->contract_ok, r->contract_failed, zoo[ZOO_PASSED], zoo[ZOO_FAILED], zoo[ZOO_UNSUPPORTED],
             zoo[ZOO_REFUSED], failed < 0 ? " (the manifest could not be read)" : "",
             r->parts_failed ? "; did not finish: " : "", r->first_part);
    printf("%s%s\n", a->quiet ? "" : "\n", line);
    md(r, "\n## Summary\n\n%s\n", line);
    return bad;
}

/* The ONNX node cases through berth-conformance: 0 when they ran, with
 * counts[3] = passed, failed, skipped; else -1 and why. The report
 * gets their table. */
static int check_onnx(const check_args *a, const char *path, report *r, long counts[3], char *why, size_t cap) {
    snprintf(why, cap, "--no-onnx");
    if (!a->onnx) return -1;
    int ran = -1;
    char table[] = "/tmp/berth-check-ops-XXXXXX";
    char *tool = conformance_tool();
    int tfd = mkstemp(table);
    if (!tool) snprintf(why, cap, "berth-conformance is not installed beside berth");
    else if (tfd < 0) snprintf(why, cap, "no temporary file");
    else ran = onnx_cases(tool, path, table, counts, why, cap);
    if (tfd >= 0) close(tfd);
    free(tool);
    md(r, "\n## ONNX node cases\n\n");
    if (ran == 0) {
        md(r, "%ld passed, %ld failed, %ld skipped (berth-conformance).\n\n", counts[0], counts[1], counts[2]);
        FILE *t = fopen(table, "r");
        char line[2048];
        while (t && fgets(line, sizeof line, t)) md(r, "%s", line);
        if (t) fclose(t);
    } else {
        md(r, "Not run: %s.\n", why);
    }
    if (tfd >= 0) unlink(table);
    return ran;
}

int berth_cli_check(int argc, char **argv) {
    check_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    berth_error err;
    char *path = berth_loader_find(a.module, NULL, 0, &err);
    if (!path) {
        fprintf(stderr, "berth check: %s\n", err.msg);
        return 1;
    }
    char *ref_path = NULL;
    if (strcmp(a.reference, "none") && !(ref_path = berth_loader_find(a.reference, NULL, 0, &err))) {
        fprintf(stderr, "berth check: the reference: %s\n", err.msg);
        free(path);
        return 1;
    }
    static mh_host host, ref_host;
    mh_host_init(&host);
    mh_host_init(&ref_host);
    for (int i = 0; i < a.n_options; i++) {
        char *eq = strchr(a.options[i], '=');
        *eq = 0;
        mh_host_option(&host, a.options[i], eq + 1);
    }
    report r = {.timeout_s = a.timeout_s, .quiet = a.quiet};
    if (a.md_path && !(r.md = fopen(a.md_path, "w"))) {
        fprintf(stderr, "berth check: cannot write %s\n", a.md_path);
        free(path), free(ref_path);
        return 1;
    }
    if (!a.quiet) printf("berth check %s\n\nABI contract\n", path);
    md(&r, "# berth check: %s\n\n## ABI contract\n\n| check | result | found |\n|---|---|---|\n", a.module);
    contract(path, &host, &r);
    int bad;
    if (a.models) {
        bad = check_zoo(&a, path, &r);
    } else {
        size_t counts[3] = {0, 0, 0};
        long failed = op_cases(a.module, path, &host, ref_path, &ref_host, &r, counts);
        long onnx_counts[3] = {0, 0, 0};
        char onnx_why[512];
        int onnx_ran = check_onnx(&a, path, &r, onnx_counts, onnx_why, sizeof onnx_why);
        if (a.quiet)
            ;
        else if (onnx_ran == 0)
            printf("\nONNX node cases: %ld passed, %ld failed, %ld skipped\n", onnx_counts[0], onnx_counts[1],
                   onnx_counts[2]);
        else
            printf("\nONNX node cases: not run (%s)\n", onnx_why);
        bad = r.contract_failed || failed != 0 || (onnx_ran == 0 && onnx_counts[1]) || r.parts_failed;
        char line[1200];
        snprintf(line, sizeof line,
                 "berth check %s: %s; contract %zu ok, %zu failed; op cases %zu passed, %zu unsupported, %zu failed%s%s%s",
                 a.module, bad ? "FAILED" : "passed", r.contract_ok, r.contract_failed, counts[OC_PASSED],
                 counts[OC_UNSUPPORTED], failed < 0 ? (size_t)0 : counts[OC_FAILED],
                 failed < 0 ? " (the module did not open)" : "", r.parts_failed ? "; did not finish: " : "",
                 r.first_part);
        printf("%s%s", a.quiet ? "" : "\n", line);
        if (onnx_ran == 0) printf("; ONNX node cases %ld passed, %ld failed, %ld skipped", onnx_counts[0], onnx_counts[1], onnx_counts[2]);
        printf("\n");
        md(&r, "\n## Summary\n\n%s\n", line);
    }
    if (r.md) fclose(r.md);
    free(path), free(ref_path);
    return bad ? 1 : 0;
}
