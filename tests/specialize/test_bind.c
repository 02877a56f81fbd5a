/* Binding dyn dims to a bucket: values flow into every shape; values out
 * of 1..max are refused naming the dim, its max and the value. */
#include "check.h"
#include "util.h"

static const char *text =
    "webnn_graph \"b\" v2 {\n"
    "  inputs { x: f32[dyn(\"batch\", 8), dyn(\"seq\", 16), 4]; }\n"
    "  consts { W: f32[4, 3]; }\n"
    "  nodes {\n"
    "    y = matmul(x, W);\n"
    "  }\n"
    "  outputs { y; }\n"
    "}\n";

static void binds_values(void) {
    spec_case c;
    int64_t syms[2] = {3, 5};
    CHECK(spec_open(&c, text, syms) == 0);
    CHECK(!strcmp(spec_shape(&c, "x"), "f32[3, 5, 4]"));
    CHECK(!strcmp(spec_shape(&c, "y"), "f32[3, 5, 3]"));
    const berth_operand *x = spec_operand(&c, "x"), *w = spec_operand(&c, "W");
    CHECK(x && x->kind == BERTH_OPERAND_INPUT);
    CHECK(w && w->kind == BERTH_OPERAND_WEIGHT && w->weight == 0);
    CHECK(c.s && c.s->desc.n_inputs == 1 && c.s->desc.n_outputs == 1 && c.s->desc.n_nodes == 1);
    CHECK(c.s && c.s->desc.struct_size == sizeof(berth_graph_desc));
    spec_close(&c);

    int64_t max[2] = {8, 16};
    CHECK(spec_open(&c, text, max) == 0);
    CHECK(!strcmp(spec_shape(&c, "y"), "f32[8, 16, 3]"));
    spec_close(&c);
}

static void refuses_out_of_range(void) {
    spec_case c;
    int64_t big[2] = {9, 5};
    CHECK(spec_open(&c, text, big) != 0);
    CHECK_CONTAINS(c.err.msg, "m.webnn");
    CHECK_CONTAINS(c.err.msg, "dim 'batch'");
    CHECK_CONTAINS(c.err.msg, "1..8");
    CHECK_CONTAINS(c.err.msg, "found 9");
    spec_close(&c);

    int64_t zero[2] = {2, 0};
    CHECK(spec_open(&c, text, zero) != 0);
    CHECK_CONTAINS(c.err.msg, "dim 'seq' expected 1..16, found 0");
    spec_close(&c);
}

static void missing_weight_is_an_error(void) {
    berth_error err;
    berth_graph *g = berth_graph_parse("m.webnn", text, strlen(text), &err);
    CHECK(g != NULL);
    if (!g) return;
    uint32_t ids[8];
    for (uint32_t i = 0; i < 8; i++) ids[i] = UINT32_MAX;
    int64_t syms[2] = {1, 1};
    berth_spec *s = berth_specialize(g, syms, ids, &err);
    CHECK(s == NULL);
    CHECK_CONTAINS(err.msg, "const 'W' has no uploaded weight");
    berth_graph_free(g);
}

/* The spec owns everything it hands out: it outlives its graph. */
static void outlives_graph(void) {
    berth_error err;
    berth_graph *g = berth_graph_parse("m.webnn", text, strlen(text), &err);
    CHECK(g != NULL);
    if (!g) return;
    uint32_t ids[8] = {UINT32_MAX, 0, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
    int64_t syms[2] = {2, 2};
    berth_spec *s = berth_specialize(g, syms, ids, &err);
    berth_graph_free(g);
    CHECK(s != NULL);
    if (!s) return;
    CHECK(s->desc.n_nodes == 1 && !strcmp(s->desc.nodes[0].op, "matmul") && !strcmp(s->desc.nodes[0].name, "y"));
    CHECK(!strcmp(s->desc.operands[s->desc.inputs[0]].name, "x"));
    CHECK(!strcmp(s->desc.operands[s->desc.outputs[0]].name, "y"));
    berth_spec_free(s);
}

/* A reshape, squeeze or unsqueeze of an uploaded weight (and a view of
 * such a view) is the weight under the new shape: a weight operand with
 * the source's id, and no node. A view that is a graph output, and a
 * reshape of a value, stay nodes. */
static void weight_views(void) {
    static const char *views =
        "webnn_graph \"v\" v2 {\n"
        "  inputs { x: f32[2, 64]; }\n"
        "  consts { A: f32[8, 64]; B: f32[64, 3]; }\n"
        "  nodes {\n"
        "    a1 = unsqueeze(A, axes=[1]);\n"
        "    a2 = unsqueeze(a1, axes=[2]);\n"
        "    b1 = reshape(B, newShape=[1, 64, 3]);\n"
        "    xr = reshape(x, newShape=[2, 1, 1, 64]);\n"
        "    y = conv2d(xr, a2);\n"
        "    z = matmul(x, b1);\n"
        "    bo = squeeze(b1, axes=[0]);\n"
        "  }\n"
        "  outputs { y; z; bo; }\n"
        "}\n";
    spec_case c;
    CHECK(spec_open(&c, views, NULL) == 0);
    const berth_operand *a2 = spec_operand(&c, "a2"), *b1 = spec_operand(&c, "b1"), *bo = spec_operand(&c, "bo");
    CHECK(a2 && a2->kind == BERTH_OPERAND_WEIGHT && a2->weight == 0);
    CHECK(!strcmp(spec_shape(&c, "a2"), "f32[8, 1, 1, 64]"));
    CHECK(b1 && b1->kind == BERTH_OPERAND_WEIGHT && b1->weight == 1);
    CHECK(!strcmp(spec_shape(&c, "b1"), "f32[1, 64, 3]"));
    CHECK(!strcmp(spec_shape(&c, "a1"), "dropped"));
    CHECK(bo && bo->kind == BERTH_OPERAND_VALUE);
    CHECK(spec_count_op(c.s, "unsqueeze") == 0);
    CHECK(spec_count_op(c.s, "reshape") == 1); /* xr */
    CHECK(spec_count_op(c.s, "squeeze") == 1); /* bo, an output */
    spec_close(&c);
}

int main(void) {
    outlives_graph();
    binds_values();
    refuses_out_of_range();
    missing_weight_is_an_error();
    weight_views();
    return check_exit();
}
