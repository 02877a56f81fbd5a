/* Which output dims follow which dyn dim, as specialization tracks it
 * (berth_spec.out_dep), against expectations written here and against
 * the brute-force oracle: specialize the whole graph again with one dyn
 * dim one smaller and see which output dims move.
 *
 *   spec_deps_test [--expect-deps] [GRAPH.webnn SYMS...]
 * With a graph file (the OCR recognizer in tests/ocr), the oracle check
 * runs on it at the given dyn dim values instead; --expect-deps also
 * requires some output dim to follow some dyn dim (where a smaller dim
 * would not specialize, none does, and the oracle agrees). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util.h"

#define B(k) (UINT64_C(1) << (k))

/* The oracle: dims of output o that differ when dyn dim k is one smaller. */
static void probe(const berth_graph *g, const int64_t *syms, const uint32_t *weight_ids,
                  const berth_spec *s, uint64_t *dep) {
    memset(dep, 0, sizeof *dep * g->n_outputs * BERTH_MAX_RANK);
    int64_t alt[64];
    for (uint32_t k = 0; k < g->n_syms && k < 64; k++) {
        if (syms[k] <= 1) continue;
        memcpy(alt, syms, sizeof *alt * g->n_syms);
        alt[k]--;
        berth_error e;
        berth_spec *a = berth_specialize(g, alt, weight_ids, &e);
        if (!a) continue;
        for (uint32_t o = 0; o < g->n_outputs; o++) {
            const berth_operand *x = &s->desc.operands[s->desc.outputs[o]];
            const berth_operand *y = &a->desc.operands[a->desc.outputs[o]];
            for (uint32_t d = 0; d < x->rank && d < y->rank; d++)
                if (x->dims[d] != y->dims[d]) dep[o * BERTH_MAX_RANK + d] |= B(k);
        }
        berth_spec_free(a);
    }
}

static int same_as_oracle(const spec_case *c, const int64_t *syms) {
    uint32_t n = c->g->n_outputs * BERTH_MAX_RANK;
    uint64_t *want = calloc(n + 1, sizeof *want);
    probe(c->g, syms, c->weight_ids, c->s, want);
    int same = memcmp(want, c->s->out_dep, sizeof *want * n) == 0;
    for (uint32_t i = 0; i < n && !same; i++)
        if (want[i] != c->s->out_dep[i])
            fprintf(stderr, "output %u dim %u: oracle %llx, tracked %llx\n", i / BERTH_MAX_RANK, i % BERTH_MAX_RANK,
                    (unsigned long long)want[i], (unsigned long long)c->s->out_dep[i]);
    free(want);
    return same;
}

/* Expected deps of output o, dims 0..rank-1. */
static void expect(const char *what, const spec_case *c, uint32_t o, uint32_t rank, const uint64_t *want) {
    int ok = c->s != NULL;
    for (uint32_t d = 0; ok && d < rank; d++) ok = c->s->out_dep[o * BERTH_MAX_RANK + d] == want[d];
    CHECK(ok);
    if (!ok) fprintf(stderr, "%s: output %u: %s\n", what, o, c->s ? "deps differ" : c->err.msg);
}

static const char transposed[] =
    "webnn_graph \"t\" v2 {\n"
    "  inputs { x: f32[dyn(\"b\", 8), 3, dyn(\"w\", 64)]; }\n"
    "  nodes {\n"
    "    y = reduceSum(x, axes=[1]);\n"
    "    z = transpose(y, permutation=[1, 0]);\n"
    "  }\n"
    "  outputs { z; y; }\n"
    "}\n";

/* ONNX's flatten spelled with shape arithmetic the host folds: the
 * reshape's target [b, -1] is computed from x's shape at run time. */
static const char flattened[] =
    "webnn_graph \"f\" v2 {\n"
    "  inputs { x: f32[dyn(\"b\", 8), 3, dyn(\"w\", 64)]; }\n"
    "  consts {\n"
    "    i0: i64[1] @bytes([0, 0, 0, 0, 0, 0, 0, 0]);\n"
    "    m1: i64[1] @bytes([255, 255, 255, 255, 255, 255, 255, 255]);\n"
    "  }\n"
    "  nodes {\n"
    "    s = shape(x);\n"
    "    b0 = gather(s, i0);\n"
    "    t = concat([b0, m1], 0);\n"
    "    y = reshape(x, t);\n"
    "  }\n"
    "  outputs { y; }\n"
    "}\n";

/* Concat along two dyn dims; a pool that halves one. */
static const char joined[] =
    "webnn_graph \"j\" v2 {\n"
    "  inputs { x: f32[dyn(\"a\", 8), 4]; y: f32[dyn(\"c\", 8), 4]; p: f32[1, 2, 8, dyn(\"w\", 64)]; }\n"
    "  nodes {\n"
    "    z = concat([x, y], 0);\n"
    "    q = averagePool2d(p, windowDimensions=[2, 2], strides=[2, 2]);\n"
    "  }\n"
    "  outputs { z; q; }\n"
    "}\n";

/* x and y must agree to be added: neither dim can move alone, so no
 * output follows either (the batch is never trimmed). */
static const char tied[] =
    "webnn_graph \"tied\" v2 {\n"
    "  inputs { x: f32[dyn(\"a\", 8), 4]; y: f32[dyn(\"c\", 8), 4]; }\n"
    "  nodes { z = add(x, y); }\n"
    "  outputs { z; }\n"
    "}\n";

static void test_written(void) {
    spec_case c;
    int64_t bw[] = {4, 32};
    CHECK(spec_open(&c, transposed, bw) == 0);
    expect("transposed z", &c, 0, 2, (const uint64_t[]){B(1), B(0)});
    expect("transposed y", &c, 1, 2, (const uint64_t[]){B(0), B(1)});
    CHECK(same_as_oracle(&c, bw));
    spec_close(&c);

    /* b at 1 cannot be one smaller: nothing follows it */
    int64_t one[] = {1, 32};
    CHECK(spec_open(&c, transposed, one) == 0);
    expect("b=1 z", &c, 0, 2, (const uint64_t[]){B(1), 0});
    spec_close(&c);

    CHECK(spec_open(&c, flattened, bw) == 0);
    expect("flattened y", &c, 0, 2, (const uint64_t[]){B(0), B(1)});
    CHECK(same_as_oracle(&c, bw));
    spec_close(&c);

    int64_t acw[] = {4, 5, 32};
    CHECK(spec_open(&c, joined, acw) == 0);
    expect("joined z", &c, 0, 2, (const uint64_t[]){B(0) | B(1), 0});
    expect("joined q", &c, 1, 4, (const uint64_t[]){0, 0, 0, B(2)});
    CHECK(same_as_oracle(&c, acw));
    spec_close(&c);

    int64_t ac[] = {4, 4};
    CHECK(spec_open(&c, tied, ac) == 0);
    expect("tied z", &c, 0, 2, (const uint64_t[]){0, 0});
    CHECK(same_as_oracle(&c, ac));
    spec_close(&c);
}

static int test_file(const char *path, int n, char **vals, int expect_deps) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        return 1;
    }
    static char text[1 << 22];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    int64_t syms[64];
    for (int i = 0; i < n && i < 64; i++) syms[i] = strtoll(vals[i], NULL, 10);
    spec_case c;
    CHECK(spec_open(&c, text, syms) == 0);
    if (c.s) {
        CHECK(same_as_oracle(&c, syms));
        int any = 0;
        for (uint32_t i = 0; i < c.g->n_outputs * BERTH_MAX_RANK; i++) any |= c.s->out_dep[i] != 0;
        if (expect_deps) CHECK(any);
        printf("%s: %u outputs, %u dyn dims, deps as the oracle finds them\n", path, c.g->n_outputs, c.g->n_syms);
    } else {
        fprintf(stderr, "%s\n", c.err.msg);
    }
    spec_close(&c);
    return 0;
}

int main(int argc, char **argv) {
    int expect_deps = argc > 1 && !strcmp(argv[1], "--expect-deps");
    argc -= expect_deps;
    argv += expect_deps;
    if (argc > 2) {
        if (test_file(argv[1], argc - 2, argv + 2, expect_deps)) return 1;
    } else {
        test_written();
    }
    return check_exit();
}
