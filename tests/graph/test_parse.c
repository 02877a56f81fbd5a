/* A full v2 graph using every construct of the format, checked field by
 * field; the expected indices follow declaration order in the text. */
#include <string.h>

#include "check.h"
#include "graph.h"

static const char *full =
    "# every construct of webnn-graph v2\n"                                     /* 1 */
    "webnn_graph \"full\" v2 @quantized {\n"                                    /* 2 */
    "  inputs {\n"                                                              /* 3 */
    "    x: f32[dyn(\"batch\", 8), 4];\n"                                       /* 4 */
    "    ids: i64[1, 128];  # a comment after a declaration\n"                  /* 5 */
    "    img: f32[dyn(\"batch\", 8), 3, dyn(\"h\", 64), 64];\n"                 /* 6 */
    "  }\n"                                                                     /* 7 */
    "  consts {\n"                                                              /* 8 */
    "    W: f32[4, 3] @weights(\"layer0.weight\");\n"                           /* 9 */
    "    b: f32[3];\n"                                                          /* 10 */
    "    s: f32[] @scalar(0.5);\n"                                              /* 11 */
    "    k: i64[2] @bytes([1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);\n" /* 12 */
    "    f: f32[2, 3, 3, 3] @weights(\"conv.w\");\n"                            /* 13 */
    "    cb: f32[2];\n"                                                         /* 14 */
    "  }\n"                                                                     /* 15 */
    "  nodes {\n"                                                               /* 16 */
    "    h = matmul(x, W);\n"                                                   /* 17 */
    "    y = add(h, b);\n"                                                      /* 18 */
    "    [p, q] = split(y, [1, 2], axis=1);\n"                                  /* 19 */
    "    z = concat([p, q], 1);\n"                                              /* 20 */
    "    r = reshape(z, [1, -1]);\n"                                            /* 21 */
    "    c = conv2d(img, f, padding=[1,1,1,1], strides=[1,1], groups=1, bias=cb, inputLayout=\"nchw\",\n" /* 22 */
    "               opts={mode: \"linear\", scale: 0.5, \"quoted key\": [1, 2.5]}, flag=true, n=null);\n" /* 23 */
    "    a = r;\n"                                                              /* 24 */
    "    t = mul(s, y, label=\"say \\\"hi\\\" \\\\ ok\", eps=1e-5, neg=-2, off=false);\n" /* 25 */
    "  }\n"                                                                     /* 26 */
    "  outputs { y; z, r; c; a t }\n"                                           /* 27 */
    "}\n"                                                                       /* 28 */
    "# trailing comment\n";

enum { X, IDS, IMG, W, B, S, K, F, CB, H, Y, P, Q, Z, R, C, A, T, N_VALUES };

static void check_dim(const bg_value *v, uint32_t d, int64_t value, int32_t sym) {
    CHECK(v->dims[d].value == value);
    CHECK(v->dims[d].sym == sym);
}

static void check_values(const berth_graph *g) {
    const char *names[N_VALUES] = {"x", "ids", "img", "W", "b", "s", "k", "f", "cb",
                                   "h", "y", "p", "q", "z", "r", "c", "a", "t"};
    CHECK(g->n_values == N_VALUES);
    if (g->n_values != N_VALUES) return;
    for (int k = 0; k < N_VALUES; k++) {
        CHECK(!strcmp(g->values[k].name, names[k]));
        CHECK(berth_graph_find(g, names[k]) == k);
        CHECK(g->values[k].kind == (k <= IMG ? BG_INPUT : k <= CB ? BG_CONST : BG_NODE_OUTPUT));
    }
    const bg_value *v = &g->values[X];
    CHECK(v->dtype == BERTH_DTYPE_F32 && v->rank == 2 && v->line == 4 && v->col == 5 && v->node == -1);
    check_dim(v, 0, 8, 0);
    check_dim(v, 1, 4, -1);
    v = &g->values[IDS];
    CHECK(v->dtype == BERTH_DTYPE_I64 && v->rank == 2 && v->line == 5);
    check_dim(v, 0, 1, -1);
    check_dim(v, 1, 128, -1);
    v = &g->values[IMG];
    CHECK(v->rank == 4);
    check_dim(v, 0, 8, 0);
    check_dim(v, 1, 3, -1);
    check_dim(v, 2, 64, 1);
    check_dim(v, 3, 64, -1);

    v = &g->values[W];
    CHECK(v->init == BG_INIT_WEIGHTS && !strcmp(v->ref, "layer0.weight") && v->rank == 2);
    check_dim(v, 0, 4, -1);
    check_dim(v, 1, 3, -1);
    v = &g->values[B];
    CHECK(v->init == BG_INIT_WEIGHTS && !strcmp(v->ref, "b") && v->rank == 1 && v->dims[0].value == 3);
    v = &g->values[S];
    CHECK(v->init == BG_INIT_SCALAR && v->rank == 0 && v->dtype == BERTH_DTYPE_F32);
    CHECK_NEAR(v->scalar, 0.5, 0);
    v = &g->values[K];
    CHECK(v->init == BG_INIT_BYTES && v->n_bytes == 16 && v->dtype == BERTH_DTYPE_I64);
    if (v->n_bytes == 16) {
        for (int k = 0; k < 16; k++) CHECK(v->bytes[k] == (k == 0 ? 1 : k == 8 ? 2 : 0));
    }
    CHECK(g->values[F].rank == 4 && !strcmp(g->values[F].ref, "conv.w"));

    int producers[N_VALUES] = {[H] = 0, [Y] = 1, [P] = 2, [Q] = 2, [Z] = 3, [R] = 4, [C] = 5, [A] = 6, [T] = 7};
    for (int k = H; k < N_VALUES; k++) {
        CHECK(g->values[k].node == producers[k]);
        CHECK(g->values[k].dtype == BERTH_DTYPE_INVALID);
    }
    CHECK(g->values[P].line == 19 && g->values[P].col == 6);
    CHECK(g->values[Q].line == 19 && g->values[Q].col == 9);
}

static void check_inputs(const bg_node *n, uint32_t count, const int32_t *want) {
    CHECK(n->n_inputs == count);
    for (uint32_t k = 0; k < count && k < n->n_inputs; k++) CHECK(n->inputs[k] == want[k]);
}

static void check_int_array(const bg_attr *a, uint32_t count, const int64_t *want) {
    CHECK(a && a->kind == BG_ATTR_ARRAY && a->count == count);
    if (!a || a->count != count) return;
    for (uint32_t k = 0; k < count; k++) {
        CHECK(a->items[k].kind == BG_ATTR_NUMBER && a->items[k].is_int && a->items[k].i == want[k]);
        CHECK(a->items[k].key == NULL);
    }
}

static void check_nodes(const berth_graph *g) {
    CHECK(g->n_nodes == 8);
    if (g->n_nodes != 8) return;
    const char *ops[8] = {"matmul", "add", "split", "concat", "reshape", "conv2d", "identity", "mul"};
    for (int k = 0; k < 8; k++) CHECK(!strcmp(g->nodes[k].op, ops[k]));

    const bg_node *n = &g->nodes[0];
    check_inputs(n, 2, (int32_t[]){X, W});
    CHECK(n->n_outputs == 1 && n->outputs[0] == H && n->n_attrs == 0);
    CHECK(n->line == 17 && n->col == 9);
    check_inputs(&g->nodes[1], 2, (int32_t[]){H, B});

    n = &g->nodes[2];
    check_inputs(n, 1, (int32_t[]){Y});
    CHECK(n->n_outputs == 2 && n->outputs[0] == P && n->outputs[1] == Q);
    CHECK(n->n_attrs == 2);
    check_int_array(berth_graph_attr(n, "@1"), 2, (int64_t[]){1, 2});
    const bg_attr *a = berth_graph_attr(n, "axis");
    CHECK(a && a->kind == BG_ATTR_NUMBER && a->is_int && a->i == 1);

    n = &g->nodes[3];
    check_inputs(n, 2, (int32_t[]){P, Q});
    a = berth_graph_attr(n, "@1");
    CHECK(n->n_attrs == 1 && a && a->kind == BG_ATTR_NUMBER && a->i == 1);

    n = &g->nodes[4];
    check_inputs(n, 1, (int32_t[]){Z});
    check_int_array(berth_graph_attr(n, "@1"), 2, (int64_t[]){1, -1});

    n = &g->nodes[5];
    check_inputs(n, 2, (int32_t[]){IMG, F});
    CHECK(n->n_attrs == 8 && n->line == 22);
    check_int_array(berth_graph_attr(n, "padding"), 4, (int64_t[]){1, 1, 1, 1});
    check_int_array(berth_graph_attr(n, "strides"), 2, (int64_t[]){1, 1});
    a = berth_graph_attr(n, "groups");
    CHECK(a && a->kind == BG_ATTR_NUMBER && a->i == 1);
    a = berth_graph_attr(n, "bias");
    CHECK(a && a->kind == BG_ATTR_IDENT && a->value == CB && !strcmp(a->str, "cb"));
    CHECK(a && a->count == 0 && a->i == 0);
    a = berth_graph_attr(n, "inputLayout");
    CHECK(a && a->kind == BG_ATTR_STRING && !strcmp(a->str, "nchw"));
    a = berth_graph_attr(n, "opts");
    CHECK(a && a->kind == BG_ATTR_OBJECT && a->count == 3);
    if (a && a->count == 3) {
        CHECK(!strcmp(a->items[0].key, "mode") && a->items[0].kind == BG_ATTR_STRING);
        CHECK(!strcmp(a->items[0].str, "linear"));
        CHECK(!strcmp(a->items[1].key, "scale") && a->items[1].kind == BG_ATTR_NUMBER && !a->items[1].is_int);
        CHECK_NEAR(a->items[1].num, 0.5, 0);
        const bg_attr *qk = &a->items[2];
        CHECK(!strcmp(qk->key, "quoted key") && qk->kind == BG_ATTR_ARRAY && qk->count == 2);
        if (qk->count == 2) {
            CHECK(qk->items[0].is_int && qk->items[0].i == 1);
            CHECK(!qk->items[1].is_int);
            CHECK_NEAR(qk->items[1].num, 2.5, 0);
        }
    }
    a = berth_graph_attr(n, "flag");
    CHECK(a && a->kind == BG_ATTR_BOOL && a->i == 1);
    a = berth_graph_attr(n, "n");
    CHECK(a && a->kind == BG_ATTR_NULL);
    CHECK(berth_graph_attr(n, "missing") == NULL);
    CHECK(berth_graph_attr(n, "@0") == NULL);

    n = &g->nodes[6];
    check_inputs(n, 1, (int32_t[]){R});
    CHECK(n->n_outputs == 1 && n->outputs[0] == A && n->n_attrs == 0);

    n = &g->nodes[7];
    check_inputs(n, 2, (int32_t[]){S, Y});
    a = berth_graph_attr(n, "label");
    CHECK(a && a->kind == BG_ATTR_STRING && !strcmp(a->str, "say \"hi\" \\ ok"));
    a = berth_graph_attr(n, "eps");
    CHECK(a && a->kind == BG_ATTR_NUMBER && !a->is_int);
    if (a) CHECK_NEAR(a->num, 0.00001, 1e-20);
    a = berth_graph_attr(n, "neg");
    CHECK(a && a->is_int && a->i == -2);
    if (a) CHECK_NEAR(a->num, -2.0, 0);
    a = berth_graph_attr(n, "off");
    CHECK(a && a->kind == BG_ATTR_BOOL && a->i == 0);
}

static void test_full(void) {
    berth_error err = {{0}};
    berth_graph *g = berth_graph_parse("full.webnn", full, strlen(full), &err);
    CHECK(g != NULL);
    if (!g) {
        fprintf(stderr, "parse failed: %s\n", err.msg);
        return;
    }
    CHECK(!strcmp(g->path, "full.webnn") && !strcmp(g->name, "full"));
    CHECK(g->version == 2 && g->quantized == 1);
    CHECK(g->n_syms == 2);
    if (g->n_syms == 2) {
        CHECK(!strcmp(g->syms[0].name, "batch") && g->syms[0].max == 8);
        CHECK(!strcmp(g->syms[1].name, "h") && g->syms[1].max == 64);
    }
    CHECK(g->n_inputs == 3 && g->inputs[0] == X && g->inputs[1] == IDS && g->inputs[2] == IMG);
    int32_t outs[] = {Y, Z, R, C, A, T};
    CHECK(g->n_outputs == 6);
    for (uint32_t k = 0; k < 6 && k < g->n_outputs; k++) CHECK(g->outputs[k] == outs[k]);
    check_values(g);
    check_nodes(g);
    CHECK(berth_graph_find(g, "nope") == -1);
    CHECK(berth_graph_find(NULL, "x") == -1);
    CHECK(g->arena != NULL);
    berth_graph_free(g);
}

/* Blocks in any order: nodes may name consts declared after them. */
static void test_block_order(void) {
    const char *text = "webnn_graph \"o\" v1 {\n"
                       "  outputs { y }\n"
                       "  nodes { y = relu(t); t = add(x, w); }\n"
                       "  consts { w: f16[2] @weights(\"w\"); }\n"
                       "  inputs { x: f16[2]; }\n"
                       "}";
    berth_error err = {{0}};
    berth_graph *g = berth_graph_parse("o.webnn", text, strlen(text), &err);
    /* y = relu(t) precedes t's definition: refused even though t exists. */
    CHECK(g == NULL);
    CHECK_CONTAINS(err.msg, "o.webnn:3:20: 't' is used before it is defined");

    text = "webnn_graph \"o\" v1 {\n"
           "  outputs { y }\n"
           "  nodes { t = add(x, w); y = relu(t); }\n"
           "  consts { w: f16[2] @weights(\"w\"); }\n"
           "  inputs { x: f16[2]; }\n"
           "}";
    g = berth_graph_parse("o.webnn", text, strlen(text), &err);
    CHECK(g != NULL);
    if (!g) return;
    CHECK(g->version == 1 && g->quantized == 0 && g->n_syms == 0);
    /* values in file order: t, y, w, x */
    CHECK(berth_graph_find(g, "t") == 0 && berth_graph_find(g, "x") == 3);
    CHECK(g->n_nodes == 2 && g->nodes[0].inputs[0] == 3 && g->nodes[0].inputs[1] == 2);
    CHECK(g->nodes[1].inputs[0] == 0);
    CHECK(g->n_outputs == 1 && g->outputs[0] == 1);
    CHECK(g->n_inputs == 1 && g->inputs[0] == 3);
    CHECK(g->values[2].dtype == BERTH_DTYPE_F16);
    berth_graph_free(g);
}

/* An empty nodes block, an output that is an input, an empty const. */
static void test_minimal(void) {
    const char *text = "webnn_graph \"m\" v2{inputs{x:u8[0];}consts{e:i4[0]@bytes([]);}nodes{}outputs{x;}}";
    berth_error err = {{0}};
    berth_graph *g = berth_graph_parse("m.webnn", text, strlen(text), &err);
    CHECK(g != NULL);
    if (!g) return;
    CHECK(g->n_nodes == 0 && g->n_values == 2 && g->outputs[0] == 0);
    CHECK(g->values[1].init == BG_INIT_BYTES && g->values[1].n_bytes == 0);
    berth_graph_free(g);
    berth_graph_free(NULL);
}

static void test_op_table(void) {
    const char *ops[] = {"conv2d", "convTranspose2d", "gemm", "hardSwish", "reduceLogSumExp", "argMin",
                         "scatterElements", "lesserOrEqual", "logicalOr", "resample2d", "triangular",
                         "cumulativeSum", "shape", "quantizeLinear", "dequantizeLinear", "identity"};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) CHECK(berth_graph_op_known(ops[k]));
    CHECK(!berth_graph_op_known("matmull"));
    CHECK(!berth_graph_op_known("Conv2d"));
    CHECK(!berth_graph_op_known(""));
    CHECK(!berth_graph_op_known(NULL));
}

int main(void) {
    test_full();
    test_block_order();
    test_minimal();
    test_op_table();
    return check_exit();
}
