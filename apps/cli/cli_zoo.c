/* berth check MODULE --models DIR: the real-model zoo on a module.
 *
 * DIR is what tests/models/zoo_prepare.py (or tools/conformance
 * --export) makes: each model converted, its config, its inputs and the
 * expected outputs, listed in DIR/manifest.ini (zoo_manifest.h).
 *
 * Each model is opened on MODULE (the config's `use` replaced), run on
 * its inputs, and every output held to onnxruntime's with compare.h; a
 * table row per model gives the result, the errors, the non-finite count
 * and the warm run time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/berth.h"
#include "cli_zoo.h"
#include "compare.h"
#include "dtype.h"
#include "npy.h"
#include "util.h"
#include "zoo_manifest.h"

#define ZOO_MAX_IO 8
/* Warm runs for the time column: up to 3, fewer once 2 s are spent. */
#define ZOO_WARM_RUNS 3
#define ZOO_TIME_BUDGET_NS 2000000000ull
/* Lists up to this long print every row; longer ones only those not passed. */
#define ZOO_LIST_ALL 40

/* Splits a space-separated list of file names in dir into paths. */
static int split_files(const char *dir, const char *list, char paths[][1024], int max) {
    int n = 0;
    for (const char *p = list; *p;) {
        while (*p == ' ') p++;
        size_t len = strcspn(p, " ");
        if (!len) break;
        if (n == max) return -1;
        snprintf(paths[n++], 1024, "%s/%.*s", dir, (int)len, p);
        p += len;
    }
    return n;
}

typedef struct zoo_row {
    const char *result; /* "pass", "FAIL", "unsupported", "refused" */
    char detail[BERTH_ERROR_CAP + 256];
    double max_abs, max_rel, ms;
    size_t nonfinite;
    int ran;
} zoo_row;

static int same_shape(const berth_tensor *a, const berth_tensor *b) {
    if (a->rank != b->rank) return 0;
    for (uint32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return 0;
    return 1;
}

/* Reads a model's inputs and onnxruntime's outputs from their .npy
 * files, inputs first. Returns nonzero with err set when one cannot be
 * read; what was read is the caller's to free either way. */
static berth_status read_tensors(char in_paths[][1024], int n_in, char want_paths[][1024], int n_out,
                                 berth_tensor *in, berth_tensor *want, berth_error *err) {
    berth_status st;
    for (int i = 0; i < n_in; i++)
        if ((st = berth_npy_read(in_paths[i], &in[i], err))) return st;
    for (int i = 0; i < n_out; i++)
        if ((st = berth_npy_read(want_paths[i], &want[i], err))) return st;
    return BERTH_OK;
}

/* Runs the model warm up to ZOO_WARM_RUNS times (fewer once the time
 * budget is spent) and gives the row the median time, so one slow run
 * does not skew berth's time column. The last run's outputs stay in
 * out. Returns 1 with err set when a run fails. */
static int time_warm_runs(berth_executor *ex, berth_tensor *in, int n_in, berth_tensor *out, int n_out,
                          zoo_row *row, berth_error *err) {
    double ms[ZOO_WARM_RUNS];
    int runs = 0;
    for (uint64_t start = berth_now_ns(); runs < ZOO_WARM_RUNS && (runs == 0 ||
         berth_now_ns() - start < ZOO_TIME_BUDGET_NS); runs++) {
        uint64_t t0 = berth_now_ns();
        if (berth_executor_run(ex, 0, in, (uint32_t)n_in, out, (uint32_t)n_out, NULL, err)) return 1;
        ms[runs] = (double)(berth_now_ns() - t0) / 1e6;
        for (int k = runs; k > 0 && ms[k] < ms[k - 1]; k--) {
            double t = ms[k];
            ms[k] = ms[k - 1], ms[k - 1] = t;
        }
    }
    row->ms = ms[runs / 2];
    row->ran = 1;
    return 0;
}

/* Holds every output to onnxruntime's within the model's tolerance and
 * marks the row passed when all are within it. The row's error columns
 * take the worst of all outputs compared; its detail names the first
 * output that is off, so users see where berth first goes wrong. */
static void compare_outputs(const zoo_model *m, const berth_tensor *out, const berth_tensor *want, int n_out,
                            zoo_row *row) {
    int ok = 1;
    for (int o = 0; o < n_out; o++) {
        char a[128], b[128];
        if (!same_shape(&out[o], &want[o]) || out[o].dtype != want[o].dtype) {
            berth_shape_text(a, sizeof a, out[o].dtype, out[o].rank, out[o].dims);
            berth_shape_text(b, sizeof b, want[o].dtype, want[o].rank, want[o].dims);
            snprintf(row->detail, sizeof row->detail, "output %d: berth gives %s, the reference %s", o, a, b);
            ok = 0;
            break;
        }
        berth_diff d;
        int good = berth_compare(&out[o], &want[o], m->atol, m->rtol, &d);
        if (d.max_abs > row->max_abs) row->max_abs = d.max_abs;
        if (d.max_rel > row->max_rel) row->max_rel = d.max_rel;
        row->nonfinite += d.nonfinite;
        if (!good && ok) {
            char text[512];
            berth_diff_describe(&d, &want[o], text, sizeof text);
            snprintf(row->detail, sizeof row->detail, "output %d: %s", o, text);
            ok = 0;
        }
    }
    if (ok) row->result = "pass";
}

/* Opens one model of the zoo on the module, runs it on its inputs and
 * fills its table row; every tensor and the executor are freed on each
 * path out. */
static void run_model(const char *module, const char *dir, const zoo_model *m, zoo_row *row) {
    char in_paths[ZOO_MAX_IO][1024], want_paths[ZOO_MAX_IO][1024], config[1024];
    berth_tensor in[ZOO_MAX_IO], want[ZOO_MAX_IO], out[ZOO_MAX_IO];
    memset(in, 0, sizeof in), memset(want, 0, sizeof want), memset(out, 0, sizeof out);
    int n_in = split_files(dir, m->inputs, in_paths, ZOO_MAX_IO);
    int n_out = split_files(dir, m->wants, want_paths, ZOO_MAX_IO);
    berth_executor *ex = NULL;
    berth_error err;
    row->result = "FAIL";
    if (n_in < 0 || n_out < 1) {
        snprintf(row->detail, sizeof row->detail, "the manifest lists %s inputs or outputs (1 to %d each)",
                 n_out < 1 ? "no" : "too many", ZOO_MAX_IO);
        return;
    }
    if (read_tensors(in_paths, n_in, want_paths, n_out, in, want, &err)) goto fail;
    snprintf(config, sizeof config, "%s/%s", dir, m->config);
    berth_open_options opts = {.struct_size = sizeof opts, .use = module, .log_level = BERTH_LOG_ERROR};
    berth_status st = berth_executor_open(config, &opts, &ex, &err);
    if (st == BERTH_ERR_UNSUPPORTED) {
        row->result = "unsupported";
        snprintf(row->detail, sizeof row->detail, "%s", err.msg);
        goto done;
    }
    if (st) goto fail;
    if (berth_executor_output_count(ex, 0) != (uint32_t)n_out) {
        snprintf(row->detail, sizeof row->detail, "the graph has %u outputs, onnxruntime gave %d",
                 berth_executor_output_count(ex, 0), n_out);
        goto done;
    }
    st = berth_executor_run(ex, 0, in, (uint32_t)n_in, out, (uint32_t)n_out, NULL, &err);
    if (st == BERTH_ERR_UNSUPPORTED) {
        row->result = "unsupported";
        snprintf(row->detail, sizeof row->detail, "%s", err.msg);
        goto done;
    }
    if (st) goto fail;
    if (time_warm_runs(ex, in, n_in, out, n_out, row, &err)) goto fail;
    compare_outputs(m, out, want, n_out, row);
    goto done;
fail:
    snprintf(row->detail, sizeof row->detail, "%s", err.msg);
done:
    berth_executor_close(ex);
    for (int i = 0; i < ZOO_MAX_IO; i++) {
        free(in[i].data), free(want[i].data);
        berth_tensor_release(&out[i]);
    }
}

int berth_cli_zoo(const char *module, const char *dir, int strict, int quiet, FILE *md, size_t counts[ZOO_RESULTS],
                  void (*begin)(void *ctx, const char *model), void *ctx) {
    char path[1024], why[2048];
    snprintf(path, sizeof path, "%s/manifest.ini", dir);
    zoo_model *ms = NULL;
    int n = berth_zoo_manifest_read(path, &ms, why, sizeof why);
    if (n < 0) {
        fprintf(stderr, "berth check: --models: %s\n", why);
        return -1;
    }
    if (!quiet) {
        printf("\nreal-model zoo (%s, %d models; outputs against onnxruntime's)\n", dir, n);
        printf("  %-18s %-11s %10s %10s %8s %10s  %s\n", "model", "result", "max abs", "max rel", "NaN/inf", "ms",
               "tolerance");
    }
    if (md)
        fprintf(md, "\n## Real-model zoo\n\n%d public models, each run on its inputs and held to onnxruntime's outputs "
                    "within |berth - onnxruntime| <= atol + rtol |onnxruntime| (NaN or inf where onnxruntime is "
                    "finite fails).\n\n| model | result | max abs err | max rel err | NaN/inf | ms | tolerance | "
                    "what | detail |\n|---|---|---|---|---|---|---|---|---|\n", n);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        zoo_row row = {0};
        if (begin) begin(ctx, ms[i].name);
        if (ms[i].refused) {
            row.result = "refused";
            snprintf(row.detail, sizeof row.detail, "the converter: %s", ms[i].refused);
        } else {
            run_model(module, dir, &ms[i], &row);
        }
        int r = !strcmp(row.result, "pass") ? ZOO_PASSED : !strcmp(row.result, "refused") ? ZOO_REFUSED
              : !strcmp(row.result, "unsupported") ? ZOO_UNSUPPORTED : ZOO_FAILED;
        counts[r]++;
        if (r == ZOO_FAILED || (strict && r == ZOO_UNSUPPORTED)) failed++;
        char tol[64];
        snprintf(tol, sizeof tol, ms[i].refused ? "-" : "%g + %g|x|", ms[i].atol, ms[i].rtol);
        /* A long list (the ONNX node cases), or a quiet run, shows what did not pass. */
        int shown = (n <= ZOO_LIST_ALL && !quiet) || r != ZOO_PASSED;
        if (!shown)
            ;
        else if (row.ran)
            printf("  %-18s %-11s %10.3g %10.3g %8zu %10.2f  %s\n", ms[i].name, row.result, row.max_abs, row.max_rel,
                   row.nonfinite, row.ms, tol);
        else
            printf("  %-18s %-11s %10s %10s %8s %10s  %s\n", ms[i].name, row.result, "-", "-", "-", "-", tol);
        if (shown && row.detail[0]) printf("      %s\n", row.detail);
        if (md) {
            for (char *c = row.detail; *c; c++)
                if (*c == '|' || *c == '\n') *c = '/';
            if (row.ran)
                fprintf(md, "| %s | %s | %.3g | %.3g | %zu | %.2f | %s | %s | %s |\n", ms[i].name, row.result,
                        row.max_abs, row.max_rel, row.nonfinite, row.ms, tol, ms[i].what ? ms[i].what : "",
                        row.detail);
            else
                fprintf(md, "| %s | %s | - | - | - | - | %s | %s | %s |\n", ms[i].name, row.result, tol,
                        ms[i].what ? ms[i].what : "", row.detail);
        }
    }
    berth_zoo_manifest_free(ms, n);
    return failed;
}
