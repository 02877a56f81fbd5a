#include "diff.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "graph.h"
#include "graph_gen.h"
#include "host.h"
#include "loader.h"
#include "ref_eval.h"
#include "specialize.h"

/* Absolute error granted to an approximated function (exp, tanh, ...)
 * next to its relative one, as a magnitude: DIFF_RTOL times this. */
#define DIFF_FLOOR 1e-3
/* Past this bound an element is not compared. */
#define DIFF_HUGE 1e30

static diff_stats totals;
const diff_stats *diff_totals(void) { return &totals; }

/* ---- failing loudly ---- */

static const gen_graph *current;

static void print_inputs(const gen_graph *g) {
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        size_t n = gen_numel(&g->input_shape[i]);
        fprintf(stderr, "  %s:", g->input_name[i]);
        for (size_t k = 0; k < n; k++) fprintf(stderr, " %g", (double)g->input_data[i][k]);
        fprintf(stderr, "\n");
    }
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "fuzz_graph_diff: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    if (current) {
        fprintf(stderr, "--- the graph:\n%s--- its inputs:\n", current->text);
        print_inputs(current);
    }
    abort();
}

static void print_nodes(const char *what, const berth_graph_desc *d) {
    fprintf(stderr, "  %s ran:", what);
    for (uint32_t i = 0; i < d->n_nodes; i++) fprintf(stderr, " %s=%s", d->nodes[i].name, d->nodes[i].op);
    fprintf(stderr, "\n");
}

/* ---- the cpu module ---- */

static berth_host host;
static berth_module module;
static berth_device *dev;

static void open_cpu(void) {
    if (dev) return;
    static char key[] = "threads", val[] = "2", name[] = "cpu";
    static bc_kv kv = {key, val, 1};
    static bc_backend_opts opts = {name, 1, &kv, 1};
    const char *path = getenv("BERTH_CPU_MODULE");
    if (!path || !*path) path = BERTH_CPU_MODULE;
    berth_logger log = {NULL, NULL, BERTH_LOG_ERROR};
    berth_error err;
    berth_host_init(&host, &log);
    host.opts = &opts;
    snprintf(host.backend_name, sizeof host.backend_name, "cpu");
    if (berth_module_load(path, NULL, 0, &host.services, &module, &err) != BERTH_OK)
        die("cannot load the cpu module: %s", err.msg);
    if (module.be->open(&host.services, &dev, &err) != BERTH_OK) die("cannot open the cpu device: %s", err.msg);
}

static int cpu_supports(void *ctx, const char *op, berth_dtype t) {
    berth_error err;
    (void)ctx;
    return module.be->supports_op(dev, op, t, &err) == BERTH_OK;
}

static size_t numel(const berth_operand *o) {
    size_t n = 1;
    for (uint32_t i = 0; i < o->rank; i++) n *= (size_t)o->dims[i];
    return n;
}

static berth_tensor tensor(const berth_operand *o, void *data) {
    berth_tensor t = {.dtype = o->dtype, .rank = o->rank, .data = data, .bytes = numel(o) * sizeof(float)};
    memcpy(t.dims, o->dims, sizeof t.dims);
    t.capacity = t.bytes;
    return t;
}

/* The generator's data for each of the desc's inputs, by name. */
static void bind_inputs(const gen_graph *g, const berth_graph_desc *d, const float **in) {
    for (uint32_t i = 0; i < d->n_inputs; i++) {
        const berth_operand *o = &d->operands[d->inputs[i]];
        uint32_t k = 0;
        while (k < g->n_inputs && strcmp(g->input_name[k], o->name)) k++;
        if (k == g->n_inputs) die("the desc has an input '%s' the generator did not make", o->name);
        if (numel(o) != gen_numel(&g->input_shape[k]) || o->dtype != BERTH_DTYPE_F32)
            die("input '%s' has another shape or dtype in the desc", o->name);
        in[i] = g->input_data[k];
    }
}

/* Plans d, runs it twice (the results must not change, nor the inputs),
 * returns one malloc'd buffer per graph output. */
static float **cpu_run(const gen_graph *g, const berth_graph_desc *d, const char *what) {
    const berth_backend *be = module.be;
    const float *in[GEN_MAX_INPUTS];
    berth_tensor ti[GEN_MAX_INPUTS], to[GEN_MAX_OUTPUTS];
    float *keep[GEN_MAX_INPUTS], **out = calloc(GEN_MAX_OUTPUTS, sizeof(float *)), *first[GEN_MAX_OUTPUTS];
    berth_plan *plan = NULL;
    berth_error err;
    if (!out || d->n_inputs > GEN_MAX_INPUTS || d->n_outputs > GEN_MAX_OUTPUTS) die("%s: too many operands", what);
    bind_inputs(g, d, in);
    if (be->plan(dev, NULL, d, &plan, &err) != BERTH_OK) {
        print_nodes(what, d);
        die("%s: the cpu backend refused the graph: %s", what, err.msg);
    }
    for (uint32_t i = 0; i < d->n_inputs; i++) {
        size_t n = numel(&d->operands[d->inputs[i]]);
        keep[i] = malloc(n * sizeof(float) + 1);
        memcpy(keep[i], in[i], n * sizeof(float));
        ti[i] = tensor(&d->operands[d->inputs[i]], keep[i]);
    }
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t o = 0; o < d->n_outputs; o++) {
            size_t n = numel(&d->operands[d->outputs[o]]);
            float *buf = malloc(n * sizeof(float) + 1);
            for (size_t k = 0; k < n; k++) buf[k] = -7777.0f; /* what a missed element shows */
            to[o] = tensor(&d->operands[d->outputs[o]], buf);
            if (pass == 0) out[o] = buf;
            else first[o] = buf;
        }
        if (be->run(plan, ti, d->n_inputs, to, d->n_outputs, &err) != BERTH_OK) {
            print_nodes(what, d);
            die("%s: run %d failed: %s", what, pass + 1, err.msg);
        }
    }
    for (uint32_t o = 0; o < d->n_outputs; o++) {
        if (memcmp(out[o], first[o], numel(&d->operands[d->outputs[o]]) * sizeof(float))) {
            print_nodes(what, d);
            die("%s: output '%s' changed between two runs on the same inputs", what,
                d->operands[d->outputs[o]].name);
        }
        free(first[o]);
    }
    for (uint32_t i = 0; i < d->n_inputs; i++) {
        if (memcmp(keep[i], in[i], numel(&d->operands[d->inputs[i]]) * sizeof(float))) {
            print_nodes(what, d);
            die("%s: a run wrote into input '%s'", what, d->operands[d->inputs[i]].name);
        }
        free(keep[i]);
    }
    be->free_plan(plan);
    return out;
}

/* ---- error bounds ---- */

/* Flat index into x of output element o, numpy broadcasting. */
static size_t bcast(const berth_operand *y, const berth_operand *x, size_t o) {
    size_t idx = 0, stride = 1;
    for (uint32_t k = y->rank; k-- > 0;) {
        size_t c = o % (size_t)y->dims[k];
        o /= (size_t)y->dims[k];
        if (k + x->rank >= y->rank) {
            uint32_t kx = k + x->rank - y->rank;
            if (x->dims[kx] != 1) idx += c * stride;
            stride *= (size_t)x->dims[kx];
        }
    }
    return idx;
}

/* Runs one node of d as `op` on the given buffers through the reference
 * interpreter; returns its first output (malloc'd). */
static float *ref_node(const berth_graph_desc *d, const berth_node *n, const char *op, float **bufs) {
    berth_operand *ops = malloc(sizeof *ops * d->n_operands);
    const float *in[16];
    if (!ops || n->n_inputs > 16) die("out of memory");
    memcpy(ops, d->operands, sizeof *ops * d->n_operands);
    for (uint32_t i = 0; i < d->n_operands; i++)
        if (ops[i].kind != BERTH_OPERAND_INPUT) ops[i].kind = BERTH_OPERAND_VALUE;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        ops[n->inputs[k]].kind = BERTH_OPERAND_INPUT;
        in[k] = bufs[n->inputs[k]];
    }
    berth_node one = *n;
    one.op = op;
    berth_graph_desc md = {.struct_size = sizeof md, .n_operands = d->n_operands, .operands = ops, .n_nodes = 1,
                           .nodes = &one, .n_inputs = n->n_inputs, .inputs = n->inputs,
                           .n_outputs = n->n_outputs, .outputs = n->outputs};
    float **b = ref_run(&md, in, NULL);
    if (!b) die("the reference cannot run '%s' for error bounds", op);
    float *y = b[n->outputs[0]];
    b[n->outputs[0]] = NULL;
    ref_free(b, d->n_operands);
    free(ops);
    return y;
}

static double num_attr(const berth_node *n, const char *key, double def) {
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].key, key))
            return n->attrs[i].type == BERTH_ATTR_FLOAT ? n->attrs[i].f : (double)n->attrs[i].i;
    return def;
}

/* A bound on |f'| over [x - t, x + t] for unary op n; INFINITY where f
 * may be undefined there. *approx: computed by an approximation. */
static double slope(const berth_node *n, double x, double t, int *approx) {
    const char *op = n->op;
    *approx = 1;
    if (!strcmp(op, "sigmoid")) return 0.25;
    if (!strcmp(op, "tanh")) return 1.0;
    if (!strcmp(op, "erf")) return 1.13;  /* 2/sqrt(pi) */
    if (!strcmp(op, "gelu")) return 1.2;  /* its slope peaks near 1.13 */
    if (!strcmp(op, "exp")) return exp(x + t);
    if (!strcmp(op, "log")) return x - t > 0 ? 1.0 / (x - t) : INFINITY;
    if (!strcmp(op, "sqrt")) return x - t > 0 ? 0.5 / sqrt(x - t) : INFINITY;
    if (!strcmp(op, "elu")) return fmax(1.0, fabs(num_attr(n, "alpha", 1.0)));
    *approx = 0;
    if (!strcmp(op, "leakyRelu")) return fmax(1.0, fabs(num_attr(n, "alpha", 0.01)));
    if (!strcmp(op, "relu") || !strcmp(op, "abs") || !strcmp(op, "neg") || !strcmp(op, "clamp")) return 1.0;
    return NAN;
}

static int is_op(const char *op, const char *const *list) {
    for (; *list; list++)
        if (!strcmp(op, *list)) return 1;
    return 0;
}

/* For every operand, a bound on the magnitude of the terms its elements
 * were made of (see diff.h). ref holds the reference's values. */
static float **bounds(const berth_graph_desc *d, float **ref) {
    static const char *const unary[] = {"relu", "abs",  "neg",  "sigmoid", "tanh",      "exp", "log",
                                        "sqrt", "erf",  "gelu", "clamp",   "leakyRelu", "elu", NULL};
    static const char *const moves[] = {"transpose", "reshape", "expand",  "slice",     "concat",
                                        "identity",  "squeeze", "unsqueeze", "reduceSum", "reduceMean",
                                        "matmul",    NULL};
    float **m = calloc(d->n_operands + 1, sizeof(float *));
    if (!m) die("out of memory");
    for (uint32_t i = 0; i < d->n_operands; i++) {
        const berth_operand *o = &d->operands[i];
        if (o->kind == BERTH_OPERAND_VALUE) continue;
        size_t n = numel(o);
        m[i] = malloc((n ? n : 1) * sizeof(float));
        for (size_t k = 0; k < n; k++) m[i][k] = fabsf(ref[i][k]);
    }
    for (uint32_t ni = 0; ni < d->n_nodes; ni++) {
        const berth_node *n = &d->nodes[ni];
        const char *op = n->op;
        uint32_t yi = n->outputs[0];
        const berth_operand *y = &d->operands[yi];
        size_t ny = numel(y);
        float *my;
        if (is_op(op, moves)) { /* the same op on the bounds is a bound */
            my = ref_node(d, n, op, m);
        } else if (!strcmp(op, "reduceMax") || !strcmp(op, "reduceMin")) {
            my = ref_node(d, n, "reduceMax", m);
        } else if (is_op(op, unary)) {
            const float *x = ref[n->inputs[0]], *mx = m[n->inputs[0]];
            my = malloc((ny ? ny : 1) * sizeof(float));
            for (size_t i = 0; i < ny; i++) {
                int approx;
                double t = DIFF_RTOL * mx[i] + DIFF_ATOL, s = slope(n, x[i], t, &approx);
                my[i] = (float)(fabs(ref[yi][i]) + (approx ? DIFF_FLOOR : 0) + s * mx[i]);
            }
        } else if (!strcmp(op, "softmax")) {
            /* dy_i = y_i (dx_i - sum_j y_j dx_j): each output moves by at
             * most y_i times twice the largest error along its row */
            const float *mx = m[n->inputs[0]];
            int64_t axis = (int64_t)num_attr(n, "axis", (double)y->rank - 1);
            uint32_t ax = (uint32_t)(axis < 0 ? axis + (int64_t)y->rank : axis);
            size_t ext = (size_t)y->dims[ax], inner = 1;
            for (uint32_t k = ax + 1; k < y->rank; k++) inner *= (size_t)y->dims[k];
            my = malloc((ny ? ny : 1) * sizeof(float));
            for (size_t row = 0; row < ny / (ext ? ext : 1); row++) {
                size_t base = row / inner * ext * inner + row % inner;
                double worst = 0;
                for (size_t k = 0; k < ext; k++) {
                    double v = mx[base + k * inner];
                    if (isnan(v) || v > worst) worst = isnan(v) ? INFINITY : v; /* a NaN stays in */
                }
                for (size_t k = 0; k < ext; k++) {
                    size_t i = base + k * inner;
                    my[i] = (float)(fabs(ref[yi][i]) * (1 + 2 * worst) + DIFF_FLOOR);
                }
            }
        } else if (n->n_inputs == 2 && is_op(op, (const char *const[]){"add", "sub", "mul", "div", "max", "min", NULL})) {
            const berth_operand *a = &d->operands[n->inputs[0]], *b = &d->operands[n->inputs[1]];
            const float *vb = ref[n->inputs[1]];
            const float *ma = m[n->inputs[0]], *mb = m[n->inputs[1]];
            my = malloc((ny ? ny : 1) * sizeof(float));
            for (size_t i = 0; i < ny; i++) {
                size_t ia = bcast(y, a, i), ib = bcast(y, b, i);
                double r;
                if (op[0] == 'a' || op[0] == 's') r = (double)ma[ia] + mb[ib];
                else if (!strcmp(op, "mul")) r = (double)ma[ia] * mb[ib];
                else if (!strcmp(op, "div")) { /* d(a/b) = da/b - a db/b^2, b as far from 0 as its error allows */
                    double low = fabs(vb[ib]) - (DIFF_RTOL * mb[ib] + DIFF_ATOL);
                    r = low > 0 ? ((double)ma[ia] + fabs(ref[yi][i]) * mb[ib]) / low : INFINITY;
                }
                else /* max, min: a NaN on either side leaves the element undetermined (fmax would drop it) */
                    r = isnan(ma[ia]) || isnan(mb[ib]) ? NAN : fmax(ma[ia], mb[ib]);
                my[i] = (float)r;
            }
        } else {
            die("no error bound for op '%s'", op);
        }
        m[yi] = my;
    }
    return m;
}

/* ---- comparing ---- */

static void compare(const berth_graph_desc *ref_d, float **ref, float **m, const berth_graph_desc *ran, float **got,
                    const char *what) {
    for (uint32_t o = 0; o < ref_d->n_outputs; o++) {
        uint32_t idx = ref_d->outputs[o];
        size_t n = numel(&ref_d->operands[idx]), bad = 0, first = 0;
        for (size_t i = 0; i < n; i++) {
            double bound = m[idx][i], want = ref[idx][i], have = got[o][i];
            if (!(bound <= DIFF_HUGE)) {
                totals.skipped++;
                continue;
            }
            totals.compared++;
            if (!(fabs(have - want) <= DIFF_RTOL * bound + DIFF_ATOL) && bad++ == 0) first = i;
        }
        if (bad) {
            print_nodes(what, ran);
            print_nodes("the reference", ref_d);
            fprintf(stderr, "  output '%s':", ref_d->operands[idx].name);
            for (size_t i = 0; i < n && i < 64; i++) fprintf(stderr, " %g", (double)got[o][i]);
            fprintf(stderr, "\n  the reference:");
            for (size_t i = 0; i < n && i < 64; i++) fprintf(stderr, " %g", (double)ref[idx][i]);
            fprintf(stderr, "\n");
            die("%s: output '%s' differs from the reference at %zu of %zu elements; first [%zu]: cpu %.9g, "
                "reference %.9g, allowed %.3g",
                what, ref_d->operands[idx].name, bad, n, first, (double)got[o][first], (double)ref[idx][first],
                DIFF_RTOL * m[idx][first] + DIFF_ATOL);
        }
    }
}

/* ---- one graph ---- */

static berth_spec *specialize(berth_graph *gr, const uint32_t *ids) {
    berth_error err;
    berth_spec *s = berth_specialize(gr, NULL, ids, &err);
    if (!s) die("the engine refused the generated graph: %s", err.msg);
    return s;
}

void diff_check(const uint8_t *data, size_t size) {
    static gen_graph g;
    berth_error err;
    open_cpu();
    if (gen_graph_make(&g, data, size)) die("out of memory");
    current = &g;
    if (getenv("BERTH_DIFF_SHOW")) fprintf(stderr, "%s", g.text); /* to see what the bytes make */
    berth_graph *gr = berth_graph_parse("diff.webnn", g.text, strlen(g.text), &err);
    if (!gr) die("the generated graph does not parse: %s", err.msg);
    uint32_t *ids = malloc(sizeof(uint32_t) * (gr->n_values + 1));
    for (uint32_t v = 0; v < gr->n_values; v++) ids[v] = UINT32_MAX; /* no weights */
    berth_spec *plain = specialize(gr, ids);
    const berth_graph_desc *d = &plain->desc;

    /* The engine's shapes against the generator's. */
    if (d->n_outputs != g.n_outputs) die("%u outputs in the desc, %u generated", d->n_outputs, g.n_outputs);
    for (uint32_t o = 0; o < g.n_outputs; o++) {
        const berth_operand *op = &d->operands[d->outputs[o]];
        const gen_shape *want = &g.output_shape[o];
        int same = op->rank == want->rank && !strcmp(op->name, g.output_name[o]);
        for (uint32_t k = 0; same && k < op->rank; k++) same = op->dims[k] == want->dims[k];
        if (!same) die("output %u '%s': the engine inferred rank %u, the generator expected rank %u or another shape",
                       o, op->name, op->rank, want->rank);
    }

    const float *in[GEN_MAX_INPUTS];
    bind_inputs(&g, d, in);
    float **ref = ref_run(d, in, NULL);
    if (!ref) die("the reference cannot run the graph");
    float **m = bounds(d, ref);

    float **got = cpu_run(&g, d, "the cpu backend");
    compare(d, ref, m, d, got, "the cpu backend");
    for (uint32_t o = 0; o < d->n_outputs; o++) free(got[o]);
    free(got);

    /* Fused as the engine fuses for this backend. */
    berth_spec *fused = specialize(gr, ids);
    int rewrites = berth_fuse(fused, cpu_supports, NULL);
    if (rewrites < 0) die("fusion failed");
    if (rewrites > 0) {
        if (fused->desc.n_outputs != d->n_outputs) die("fusion changed the number of outputs");
        got = cpu_run(&g, &fused->desc, "the cpu backend, fused");
        compare(d, ref, m, &fused->desc, got, "the cpu backend, fused");
        for (uint32_t o = 0; o < d->n_outputs; o++) free(got[o]);
        free(got);
        totals.fused_runs++;
    }
    totals.graphs++;
    totals.nodes += d->n_nodes;

    ref_free(m, d->n_operands);
    ref_free(ref, d->n_operands);
    berth_spec_free(fused);
    berth_spec_free(plain);
    free(ids);
    berth_graph_free(gr);
    current = NULL;
    gen_graph_free(&g);
}
