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

int main(void) {
    outlives_graph();
    binds_values();
    refuses_out_of_range();
    missing_weight_is_an_error();
    return check_exit();
}
