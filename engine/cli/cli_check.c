/* berth check MODULE: a backend module's test driver, for vendors. The
 * ABI contract (engine/check/check_abi.c), then berth's op cases on the
 * module and on a reference backend, then, where the tools and the ONNX
 * test data are installed, the ONNX node cases; a per-op table, a
 * summary line, and exit status 0 only when nothing failed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_abi.h"
#include "cli.h"
#include "cli_zoo.h"
#include "loader.h"
#include "op_cases.h"

static const char *check_usage =
    "usage: berth check MODULE [--reference NAME|PATH|none] [--option KEY=VALUE]...\n"
    "                   [--markdown FILE] [--no-onnx] [--models DIR [--strict]]\n"
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
    "results as a Markdown report. Exit status: 0 when nothing failed, 1\n"
    "when something did, 2 on bad usage.\n";

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
} report;

static void md(report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void md(report *r, const char *fmt, ...) {
    if (!r->md) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->md, fmt, ap);
    va_end(ap);
}

/* A table cell: no '|' or newline. */
static void cell(char *s) {
    for (; *s; s++)
        if (*s == '|' || *s == '\n') *s = '/';
}

static void contract_item(void *ctx, int ok, const char *item, const char *message) {
    report *r = ctx;
    printf("  %-4s %s: %s\n", ok ? "ok" : "FAIL", item, message);
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
    if (n[OC_FAILED]) snprintf(buf, cap, "FAIL %d/%d: %s", n[OC_FAILED], row->cases, row->first[who]);
    else if (n[OC_UNSUPPORTED] == row->cases) snprintf(buf, cap, "unsupported: %s", row->first[who]);
    else if (n[OC_UNSUPPORTED]) snprintf(buf, cap, "pass %d, unsupported %d: %s", n[OC_PASSED], n[OC_UNSUPPORTED], row->first[who]);
    else snprintf(buf, cap, "pass");
}

static int load(mh_module *m, const char *path, mh_host *host, const char *what) {
    berth_error err;
    if (mh_load(m, path, host, &err) == BERTH_OK && mh_open(m, &err) == BERTH_OK) return 1;
    fprintf(stderr, "berth check: the %s %s: %s\n", what, path, err.msg);
    mh_unload(m);
    return 0;
}

/* The op cases on the module (and the reference): the per-op table.
 * Returns the number of failed cases of the module, or -1 when it does
 * not open. */
static long op_cases(const char *path, mh_host *host, const char *ref_path, mh_host *ref_host, report *r, size_t *counts) {
    mh_module mod = {0}, ref = {0};
    if (!load(&mod, path, host, "module")) return -1;
    int have_ref = ref_path && load(&ref, ref_path, ref_host, "reference");
    op_row *rows = calloc(MAX_OPS, sizeof *rows);
    if (!rows) {
        mh_unload(&mod), mh_unload(&ref);
        fprintf(stderr, "berth check: out of memory\n");
        return -1;
    }
    size_t n_rows = 0, edge[3] = {0, 0, 0};
    long failed = 0;
    for (size_t i = 0; i < oc_count; i++) {
        const char *op = oc_case_op(i);
        size_t k = 0;
        while (k < n_rows && strcmp(rows[k].op, op)) k++;
        if (k == n_rows && n_rows < MAX_OPS) rows[n_rows++].op = op;
        if (k == MAX_OPS) continue;
        op_row *row = &rows[k];
        row->cases++;
        for (int who = 0; who < 1 + have_ref; who++) {
            oc_outcome o;
            oc_run_case(who ? &ref : &mod, i, &o);
            row->n[who][o.result]++;
            if (who == 0) counts[o.result]++;
            if (who == 0 && !strncmp(oc_table[i].name, "edge ", 5)) edge[o.result]++;
            if (who == 0 && o.result == OC_FAILED) failed++;
            int worse = o.result == OC_FAILED && row->n[who][OC_FAILED] == 1;
            if (o.result != OC_PASSED && (!row->first[who][0] || worse))
                snprintf(row->first[who], sizeof row->first[who], "%.60s: %.250s", oc_table[i].name, o.why);
        }
    }
    printf("\nop cases (%zu cases of %zu ops; module: %s%s%s)\n", oc_count, n_rows, mod.be->name,
           have_ref ? ", reference: " : "", have_ref ? ref.be->name : "");
    md(r, "\n## Op cases\n\n%zu cases of %zu ops, %zu of them generated edge values (+-0, +-inf, NaN, subnormals, "
          "huge, negative and integral values, empty axes: %zu passed, %zu unsupported, %zu failed); each output "
          "filled with all-ones bytes before the run (an element never written shows), checked within the tolerance "
          "the op contract states for the op (docs/backend-ops.md; NaN only for NaN, an infinity only for itself), "
          "and run twice (the runs must agree bit for bit).\n\n| op | cases | %s |%s%s%s\n|---|---|---|%s\n",
       oc_count, n_rows, edge[0] + edge[1] + edge[2], edge[OC_PASSED], edge[OC_UNSUPPORTED], edge[OC_FAILED], mod.be->name, have_ref ? " " : "", have_ref ? ref.be->name : "", have_ref ? " |" : "",
       have_ref ? "---|" : "");
    for (size_t k = 0; k < n_rows; k++) {
        char a[400], b[400] = "";
        column(&rows[k], 0, a, sizeof a);
        if (have_ref) column(&rows[k], 1, b, sizeof b);
        printf("  %-28s %2d  %s\n", rows[k].op, rows[k].cases, a);
        cell(a), cell(b);
        md(r, "| %s | %d | %s |%s%s%s\n", rows[k].op, rows[k].cases, a, have_ref ? " " : "", b, have_ref ? " |" : "");
    }
    printf("  edge values (+-0, +-inf, NaN, subnormals, huge, empty axes): %zu cases: %zu passed, %zu unsupported, "
           "%zu failed\n",
           edge[0] + edge[1] + edge[2], edge[OC_PASSED], edge[OC_UNSUPPORTED], edge[OC_FAILED]);
    free(rows);
    mh_unload(&mod);
    mh_unload(&ref);
    return failed;
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

int berth_cli_check(int argc, char **argv) {
    const char *module = NULL, *reference = "cpu", *md_path = NULL, *models = NULL;
    char *options[MAX_OPTIONS];
    int n_options = 0, onnx = 1, strict = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(check_usage, stdout);
            return 0;
        } else if ((!strcmp(a, "--reference") || !strcmp(a, "--markdown") || !strcmp(a, "--option") ||
                    !strcmp(a, "--models")) && i + 1 >= argc) {
            fprintf(stderr, "berth check: %s needs a value\n%s", a, check_usage);
            return 2;
        } else if (!strcmp(a, "--reference")) {
            reference = argv[++i];
        } else if (!strcmp(a, "--markdown")) {
            md_path = argv[++i];
        } else if (!strcmp(a, "--models")) {
            models = argv[++i];
        } else if (!strcmp(a, "--strict")) {
            strict = 1;
        } else if (!strcmp(a, "--option")) {
            if (!strchr(argv[i + 1], '=') || n_options == MAX_OPTIONS) {
                fprintf(stderr, "berth check: --option expects KEY=VALUE (at most %d), found '%s'\n", MAX_OPTIONS, argv[i + 1]);
                return 2;
            }
            options[n_options++] = argv[++i];
        } else if (!strcmp(a, "--no-onnx")) {
            onnx = 0;
        } else if (a[0] == '-' || module) {
            fprintf(stderr, "berth check: unexpected argument '%s'\n%s", a, check_usage);
            return 2;
        } else {
            module = a;
        }
    }
    if (!module || (strict && !models)) {
        if (strict && !models) fprintf(stderr, "berth check: --strict goes with --models\n");
        fputs(check_usage, stderr);
        return 2;
    }
    berth_error err;
    char *path = berth_loader_find(module, NULL, 0, &err);
    if (!path) {
        fprintf(stderr, "berth check: %s\n", err.msg);
        return 1;
    }
    char *ref_path = NULL;
    if (strcmp(reference, "none") && !(ref_path = berth_loader_find(reference, NULL, 0, &err))) {
        fprintf(stderr, "berth check: the reference: %s\n", err.msg);
        free(path);
        return 1;
    }
    static mh_host host, ref_host;
    mh_host_init(&host);
    mh_host_init(&ref_host);
    for (int i = 0; i < n_options; i++) {
        char *eq = strchr(options[i], '=');
        *eq = 0;
        mh_host_option(&host, options[i], eq + 1);
    }
    report r = {0};
    if (md_path && !(r.md = fopen(md_path, "w"))) {
        fprintf(stderr, "berth check: cannot write %s\n", md_path);
        free(path), free(ref_path);
        return 1;
    }
    printf("berth check %s\n\nABI contract\n", path);
    md(&r, "# berth check: %s\n\n## ABI contract\n\n| check | result | found |\n|---|---|---|\n", module);
    ck_contract(path, &host, contract_item, &r);
    if (models) {
        size_t zoo[ZOO_RESULTS] = {0};
        int failed = berth_cli_zoo(path, models, strict, r.md, zoo);
        int bad = r.contract_failed || failed != 0;
        char line[512];
        snprintf(line, sizeof line, "berth check %s: %s; contract %zu ok, %zu failed; models %zu passed, %zu failed, "
                 "%zu unsupported, %zu refused by the converter%s", module, bad ? "FAILED" : "passed", r.contract_ok,
                 r.contract_failed, zoo[ZOO_PASSED], zoo[ZOO_FAILED], zoo[ZOO_UNSUPPORTED], zoo[ZOO_REFUSED],
                 failed < 0 ? " (the manifest could not be read)" : "");
        printf("\n%s\n", line);
        md(&r, "\n## Summary\n\n%s\n", line);
        if (r.md) fclose(r.md);
        free(path), free(ref_path);
        return bad ? 1 : 0;
    }

    size_t counts[3] = {0, 0, 0};
    long failed = op_cases(path, &host, ref_path, &ref_host, &r, counts);

    long onnx_counts[3] = {0, 0, 0};
    char onnx_why[512] = "--no-onnx";
    int onnx_ran = -1;
    char table[] = "/tmp/berth-check-ops-XXXXXX";
    if (onnx) {
        char *tool = conformance_tool();
        int tfd = mkstemp(table);
        if (!tool) snprintf(onnx_why, sizeof onnx_why, "berth-conformance is not installed beside berth");
        else if (tfd < 0) snprintf(onnx_why, sizeof onnx_why, "no temporary file");
        else onnx_ran = onnx_cases(tool, path, table, onnx_counts, onnx_why, sizeof onnx_why);
        if (tfd >= 0) close(tfd);
        free(tool);
    }
    if (onnx_ran == 0) printf("\nONNX node cases: %ld passed, %ld failed, %ld skipped\n", onnx_counts[0], onnx_counts[1], onnx_counts[2]);
    else printf("\nONNX node cases: not run (%s)\n", onnx_why);
    md(&r, "\n## ONNX node cases\n\n");
    if (onnx_ran == 0) {
        md(&r, "%ld passed, %ld failed, %ld skipped (berth-conformance).\n\n", onnx_counts[0], onnx_counts[1], onnx_counts[2]);
        FILE *t = fopen(table, "r");
        char line[2048];
        while (t && fgets(line, sizeof line, t)) md(&r, "%s", line);
        if (t) fclose(t);
    } else {
        md(&r, "Not run: %s.\n", onnx_why);
    }
    if (onnx) unlink(table);

    int bad = r.contract_failed || failed != 0 || (onnx_ran == 0 && onnx_counts[1]);
    char line[512];
    snprintf(line, sizeof line,
             "berth check %s: %s; contract %zu ok, %zu failed; op cases %zu passed, %zu unsupported, %zu failed%s",
             module, bad ? "FAILED" : "passed", r.contract_ok, r.contract_failed, counts[OC_PASSED],
             counts[OC_UNSUPPORTED], failed < 0 ? (size_t)0 : counts[OC_FAILED], failed < 0 ? " (the module did not open)" : "");
    printf("\n%s", line);
    if (onnx_ran == 0) printf("; ONNX node cases %ld passed, %ld failed, %ld skipped", onnx_counts[0], onnx_counts[1], onnx_counts[2]);
    printf("\n");
    md(&r, "\n## Summary\n\n%s\n", line);
    if (r.md) fclose(r.md);
    free(path), free(ref_path);
    return bad ? 1 : 0;
}
