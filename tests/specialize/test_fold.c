/* Folding shape arithmetic on the host, dead-code elimination, and how
 * constants reach the desc. */
#include <stdint.h>

#include "check.h"
#include "util.h"

#define NEG1 "255, 255, 255, 255, 255, 255, 255, 255"
#define ZERO8 "0, 0, 0, 0, 0, 0, 0, 0"

static const char *onnx_chain =
    "webnn_graph \"f\" v2 {\n"
    "  inputs { x: f32[dyn(\"batch\", 8), 3, 4]; }\n"
    "  consts {\n"
    "    i0: i64[] @bytes([" ZERO8 "]);\n"
    "    m1: i64[1] @bytes([" NEG1 "]);\n"
    "  }\n"
    "  nodes {\n"
    "    s = shape(x);\n"
    "    b = gather(s, i0);\n"
    "    bu = unsqueeze(b, axes=[0]);\n"
    "    ns = concat([bu, m1], 0);\n"
    "    y = reshape(x, ns);\n"
    "    z = relu(y);\n"
    "  }\n"
    "  outputs { z; ns; }\n"
    "}\n";

static void folds_onnx_reshape_chain(void) {
    spec_case c;
    int64_t batch = 5;
    CHECK(spec_open(&c, onnx_chain, &batch) == 0);
    if (!c.s) {
        fprintf(stderr, "%s\n", c.err.msg);
        return;
    }
    const berth_graph_desc *d = &c.s->desc;
    CHECK(d->n_nodes == 2);
    CHECK(spec_count_op(c.s, "reshape") == 1 && spec_count_op(c.s, "relu") == 1);
    CHECK(spec_count_op(c.s, "shape") == 0 && spec_count_op(c.s, "gather") == 0 &&
          spec_count_op(c.s, "concat") == 0 && spec_count_op(c.s, "unsqueeze") == 0);
    const berth_node *r = &d->nodes[0];
    CHECK(!strcmp(r->op, "reshape") && r->n_inputs == 1 && r->n_attrs == 1);
    if (r->n_attrs == 1) {
        const berth_attr *a = &r->attrs[0];
        CHECK(!strcmp(a->key, "newShape") && a->type == BERTH_ATTR_INTS && a->count == 2);
        if (a->count == 2) CHECK(a->ints[0] == 5 && a->ints[1] == -1);
    }
    CHECK(!strcmp(spec_shape(&c, "y"), "f32[5, 12]"));
    CHECK(!strcmp(spec_shape(&c, "z"), "f32[5, 12]"));
    /* the intermediate shape values are gone */
    CHECK(!strcmp(spec_shape(&c, "s"), "dropped"));
    CHECK(!strcmp(spec_shape(&c, "b"), "dropped"));
    CHECK(!strcmp(spec_shape(&c, "bu"), "dropped"));
    CHECK(!strcmp(spec_shape(&c, "i0"), "dropped"));
    CHECK(c.s->operand_of[berth_graph_find(c.g, "s")] == -1);
    /* a folded graph output stays: a CONSTANT listed among the outputs */
    const berth_operand *ns = spec_operand(&c, "ns");
    CHECK(ns && ns->kind == BERTH_OPERAND_CONSTANT && ns->bytes == 16);
    CHECK(d->n_outputs == 2);
    if (ns && ns->data && d->n_outputs == 2) {
        int64_t v[2];
        memcpy(v, ns->data, 16);
        CHECK(v[0] == 5 && v[1] == -1);
        CHECK(&d->operands[d->outputs[1]] == ns);
    }
    spec_close(&c);

    batch = 8; /* another bucket folds to another constant */
    CHECK(spec_open(&c, onnx_chain, &batch) == 0);
    CHECK(!strcmp(spec_shape(&c, "z"), "f32[8, 12]"));
    spec_close(&c);
}

static void folds_arithmetic(void) {
    /* [batch * 3, 4] computed with mul over i64, then an f32 scalar chain */
    const char *text =
        "webnn_graph \"f\" v2 {\n"
        "  inputs { x: f32[dyn(\"batch\", 8), 3, 4]; }\n"
        "  consts { three: i64[1] @scalar(3); two: f32[2] @scalar(2); }\n"
        "  nodes {\n"
        "    s = shape(x);\n"
        "    hw = slice(s, [0], [2]);\n"
        "    m = mul(hw, three);\n"
        "    t = cast(two, \"int64\");\n"
        "    q = div(m, t);\n"
        "    y = expand(x, [2, 1, 1, 1]);\n"
        "    k = sub(m, q);\n"
        "  }\n"
        "  outputs { k; y; }\n"
        "}\n";
    spec_case c;
    int64_t batch = 4;
    CHECK(spec_open(&c, text, &batch) == 0);
    if (!c.s) {
        fprintf(stderr, "%s\n", c.err.msg);
        return;
    }
    /* hw = [4, 3]; m = [12, 9]; q = [6, 4]; k = [6, 5] */
    const berth_operand *k = spec_operand(&c, "k");
    CHECK(k && k->kind == BERTH_OPERAND_CONSTANT && k->dtype == BERTH_DTYPE_I64 && k->bytes == 16);
    if (k && k->data) {
        int64_t v[2];
        memcpy(v, k->data, 16);
        CHECK(v[0] == 6 && v[1] == 5);
    }
    CHECK(c.s->desc.n_nodes == 1 && spec_count_op(c.s, "expand") == 1);
    CHECK(!strcmp(spec_shape(&c, "y"), "f32[2, 4, 3, 4]"));
    spec_close(&c);
}

static void dead_code_and_constants(void) {
    const char *text =
        "webnn_graph \"d\" v2 {\n"
        "  inputs { x: f32[2, 3]; unused: f32[4]; }\n"
        "  consts { c: f32[2, 3] @scalar(1.5); W: f32[3, 3]; dead: f32[9]; }\n"
        "  nodes {\n"
        "    a = add(x, c);\n"
        "    z = relu(x);\n"
        "    w = matmul(z, W);\n"
        "    y = sigmoid(a);\n"
        "  }\n"
        "  outputs { y; }\n"
        "}\n";
    spec_case c;
    CHECK(spec_open(&c, text, NULL) == 0);
    if (!c.s) {
        fprintf(stderr, "%s\n", c.err.msg);
        return;
    }
    const berth_graph_desc *d = &c.s->desc;
    CHECK(d->n_nodes == 2 && spec_count_op(c.s, "relu") == 0 && spec_count_op(c.s, "matmul") == 0);
    CHECK(!strcmp(spec_shape(&c, "z"), "dropped") && !strcmp(spec_shape(&c, "w"), "dropped"));
    CHECK(!strcmp(spec_shape(&c, "W"), "dropped") && !strcmp(spec_shape(&c, "dead"), "dropped"));
    /* every graph input stays, in order, even an unused one */
    CHECK(d->n_inputs == 2 && d->n_operands == 5);
    if (d->n_inputs == 2) {
        CHECK(!strcmp(d->operands[d->inputs[0]].name, "x"));
        CHECK(!strcmp(d->operands[d->inputs[1]].name, "unused"));
        CHECK(d->operands[d->inputs[1]].kind == BERTH_OPERAND_INPUT);
    }
    const berth_operand *k = spec_operand(&c, "c");
    CHECK(k && k->kind == BERTH_OPERAND_CONSTANT && k->bytes == 24);
    if (k && k->data) {
        float v[6];
        memcpy(v, k->data, 24);
        for (int i = 0; i < 6; i++) CHECK(v[i] == 1.5f);
    }
    const berth_operand *a = spec_operand(&c, "a");
    CHECK(a && a->kind == BERTH_OPERAND_VALUE);
    spec_close(&c);
}

static void dynamic_reshape_needs_host_data(void) {
    const char *text =
        "webnn_graph \"e\" v2 {\n"
        "  inputs { x: f32[2, 3]; t: i64[2]; }\n"
        "  consts { }\n"
        "  nodes {\n"
        "    u = abs(t);\n"
        "    y = reshape(x, u);\n"
        "  }\n"
        "  outputs { y; }\n"
        "}\n";
    spec_case c;
    CHECK(spec_open(&c, text, NULL) != 0);
    CHECK_CONTAINS(c.err.msg, "m.webnn:6: node 'y' (reshape)");
    CHECK_CONTAINS(c.err.msg, "operand 1 'u' for 'newShape' expected a value known on the host");
    spec_close(&c);

    const char *bad_index =
        "webnn_graph \"e\" v2 {\n"
        "  inputs { x: f32[2, 3]; }\n"
        "  consts { i: i64[] @bytes([7, 0, 0, 0, 0, 0, 0, 0]); }\n"
        "  nodes {\n"
        "    s = shape(x);\n"
        "    g = gather(s, i);\n"
        "  }\n"
        "  outputs { g; }\n"
        "}\n";
    CHECK(spec_open(&c, bad_index, NULL) != 0);
    CHECK_CONTAINS(c.err.msg, "node 'g' (gather)");
    CHECK_CONTAINS(c.err.msg, "operand 1 'i' expected indices in [-2, 2), found 7");
    spec_close(&c);

    spec_close(&c);
}

/* @scalar consts expand to their declared shape in their own dtype; the
 * bit patterns below are IEEE binary16 and two's complement by hand. */
static void scalar_expansion(void) {
    const char *text =
        "webnn_graph \"s\" v2 {\n"
        "  inputs { x: f32[1]; }\n"
        "  consts { h: f16[2] @scalar(-2.0); m: f16[1] @scalar(65504); u: u4[3] @scalar(5); i: i8[2] @scalar(-3); l: i64[1] @scalar(7); }\n"
        "  nodes { y = relu(x); }\n"
        "  outputs { y; h; m; u; i; l; }\n"
        "}\n";
    spec_case c;
    CHECK(spec_open(&c, text, NULL) == 0);
    if (!c.s) {
        fprintf(stderr, "%s\n", c.err.msg);
        return;
    }
    const berth_operand *h = spec_operand(&c, "h"), *m = spec_operand(&c, "m");
    const berth_operand *u = spec_operand(&c, "u"), *i = spec_operand(&c, "i"), *l = spec_operand(&c, "l");
    CHECK(h && h->kind == BERTH_OPERAND_CONSTANT && h->bytes == 4);
    if (h && h->bytes == 4) {
        const uint8_t *p = h->data;
        CHECK(p[0] == 0x00 && p[1] == 0xC0 && p[2] == 0x00 && p[3] == 0xC0);
    }
    if (m && m->bytes == 2) {
        const uint8_t *p = m->data;
        CHECK(p[0] == 0xFF && p[1] == 0x7B);
    }
    CHECK(u && u->bytes == 2);
    if (u && u->bytes == 2) {
        const uint8_t *p = u->data;
        CHECK(p[0] == 0x55 && p[1] == 0x05);
    }
    CHECK(i && i->bytes == 2);
    if (i && i->bytes == 2) CHECK(((const uint8_t *)i->data)[0] == 0xFD && ((const uint8_t *)i->data)[1] == 0xFD);
    CHECK(l && l->bytes == 8);
    if (l && l->bytes == 8) {
        int64_t v;
        memcpy(&v, l->data, 8);
        CHECK(v == 7);
    }
    CHECK(c.s->desc.n_outputs == 6);
    spec_close(&c);
}

/* pow(x, 0) is 1 for any x (NaN and inf too): folded to ones without
 * x's data, and x's producer dropped with it; a nonzero exponent, or x
 * whose result is too large to hold, stays a node. */
static void pow_zero_folds(void) {
    const char *text =
        "webnn_graph \"p\" v2 {\n"
        "  inputs { x: f32[2, 3]; }\n"
        "  consts { zero: f32[] @scalar(0.0); nz: f32[1] @scalar(-0.0); three: f32[] @scalar(3.0); }\n"
        "  nodes {\n"
        "    r = relu(x);\n"
        "    y = pow(r, zero);\n"
        "    z = pow(x, nz);\n"
        "    w = pow(x, three);\n"
        "  }\n"
        "  outputs { y; z; w; }\n"
        "}\n";
    spec_case c;
    CHECK(spec_open(&c, text, NULL) == 0);
    if (!c.s) {
        fprintf(stderr, "%s\n", c.err.msg);
        return;
    }
    CHECK(spec_count_op(c.s, "relu") == 0 && spec_count_op(c.s, "pow") == 1);
    static const char *const ones[] = {"y", "z"};
    for (int k = 0; k < 2; k++) {
        const berth_operand *o = spec_operand(&c, ones[k]);
        CHECK(o && o->kind == BERTH_OPERAND_CONSTANT && o->bytes == 24);
        if (o && o->data && o->bytes == 24) {
            float v[6];
            memcpy(v, o->data, 24);
            for (int i = 0; i < 6; i++) CHECK(v[i] == 1.0f);
        }
    }
    spec_close(&c);
}

int main(void) {
    pow_zero_folds();
    scalar_expansion();
    folds_onnx_reshape_chain();
    folds_arithmetic();
    dead_code_and_constants();
    dynamic_reshape_needs_host_data();
    return check_exit();
}
