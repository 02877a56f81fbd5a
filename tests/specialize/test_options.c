/* Options become berth_attrs with WebNN names: positional literals get
 * their parameter names, host-known tensors passed positionally
 * (ONNX-style) become INTS/INT, identifiers become operand indices. */
#include "check.h"
#include "util.h"

static const berth_attr *attr_of(const berth_spec *s, const char *op, const char *key) {
    for (uint32_t i = 0; s && i < s->desc.n_nodes; i++) {
        const berth_node *n = &s->desc.nodes[i];
        if (strcmp(n->op, op)) continue;
        for (uint32_t k = 0; k < n->n_attrs; k++)
            if (!strcmp(n->attrs[k].key, key)) return &n->attrs[k];
    }
    return NULL;
}

static void typed_options(void) {
    const char *t =
        "webnn_graph \"o\" v2 {\n"
        "  inputs { x: f32[1, 2, 8, 8]; }\n"
        "  consts { w: f32[4, 2, 3, 3]; b: f32[4]; }\n"
        "  nodes {\n"
        "    c = conv2d(x, w, strides=[2, 2], bias=b, inputLayout=\"nchw\", groups=null);\n"
        "    r = resample2d(c, scales=[2.0, 0.5]);\n"
        "    m = reduceMean(r, axes=[1], keepDimensions=true);\n"
        "    e = elu(m, alpha=1.5);\n"
        "  }\n"
        "  outputs { e; }\n"
        "}\n";
    spec_case c;
    CHECK(spec_open(&c, t, NULL) == 0);
    if (!c.s) {
        fprintf(stderr, "%s\n", c.err.msg);
        return;
    }
    const berth_attr *a = attr_of(c.s, "conv2d", "strides");
    CHECK(a && a->type == BERTH_ATTR_INTS && a->count == 2 && a->ints[0] == 2 && a->ints[1] == 2);
    a = attr_of(c.s, "conv2d", "bias");
    CHECK(a && a->type == BERTH_ATTR_OPERAND && a->i >= 0 && (uint32_t)a->i < c.s->desc.n_operands);
    if (a && a->type == BERTH_ATTR_OPERAND) {
        const berth_operand *o = &c.s->desc.operands[a->i];
        CHECK(!strcmp(o->name, "b") && o->kind == BERTH_OPERAND_WEIGHT && o->weight == 1);
    }
    a = attr_of(c.s, "conv2d", "inputLayout");
    CHECK(a && a->type == BERTH_ATTR_STRING && !strcmp(a->s, "nchw"));
    a = attr_of(c.s, "conv2d", "groups");
    CHECK(a && a->type == BERTH_ATTR_NULL);
    a = attr_of(c.s, "resample2d", "scales");
    CHECK(a && a->type == BERTH_ATTR_FLOATS && a->count == 2);
    if (a && a->type == BERTH_ATTR_FLOATS) CHECK(a->floats[0] == 2.0 && a->floats[1] == 0.5);
    a = attr_of(c.s, "reduceMean", "keepDimensions");
    CHECK(a && a->type == BERTH_ATTR_BOOL && a->i == 1);
    a = attr_of(c.s, "elu", "alpha");
    CHECK(a && a->type == BERTH_ATTR_FLOAT && a->f == 1.5);
    /* (8 - 3) / 2 + 1 = 3, resampled to 6 x 1 */
    CHECK(!strcmp(spec_shape(&c, "e"), "f32[1, 1, 6, 1]"));
    spec_close(&c);
}

static void positional_names(void) {
    const char *t =
        "webnn_graph \"o\" v2 {\n"
        "  inputs { x: f32[2, 3]; y: f32[2, 3]; }\n"
        "  consts {\n"
        "    shp: i64[3] @bytes([4, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]);\n"
        "    ax: i32[] @bytes([255, 255, 255, 255]);\n"
        "    st: i64[2] @scalar(1);\n"
        "  }\n"
        "  nodes {\n"
        "    e = expand(x, shp);\n"
        "    s = softmax(e, ax);\n"
        "    k = concat([x, y], 0);\n"
        "    l = slice(k, st, [2, 2]);\n"
        "    [p, q] = split(k, 2);\n"
        "  }\n"
        "  outputs { s; l; q; }\n"
        "}\n";
    spec_case c;
    CHECK(spec_open(&c, t, NULL) == 0);
    if (!c.s) {
        fprintf(stderr, "%s\n", c.err.msg);
        return;
    }
    const berth_attr *a = attr_of(c.s, "expand", "newShape");
    CHECK(a && a->type == BERTH_ATTR_INTS && a->count == 3);
    if (a && a->count == 3) CHECK(a->ints[0] == 4 && a->ints[1] == 2 && a->ints[2] == 3);
    a = attr_of(c.s, "softmax", "axis");
    CHECK(a && a->type == BERTH_ATTR_INT && a->i == -1);
    a = attr_of(c.s, "concat", "axis");
    CHECK(a && a->type == BERTH_ATTR_INT && a->i == 0);
    a = attr_of(c.s, "slice", "starts");
    CHECK(a && a->type == BERTH_ATTR_INTS && a->count == 2 && a->ints[0] == 1 && a->ints[1] == 1);
    a = attr_of(c.s, "slice", "sizes");
    CHECK(a && a->type == BERTH_ATTR_INTS && a->count == 2);
    a = attr_of(c.s, "split", "splits");
    CHECK(a && a->type == BERTH_ATTR_INT && a->i == 2);
    /* the shape tensors left the operand lists */
    for (uint32_t i = 0; i < c.s->desc.n_nodes; i++) {
        const berth_node *n = &c.s->desc.nodes[i];
        if (!strcmp(n->op, "expand") || !strcmp(n->op, "softmax") || !strcmp(n->op, "slice"))
            CHECK(n->n_inputs == 1);
        if (!strcmp(n->op, "concat")) CHECK(n->n_inputs == 2);
    }
    CHECK(!strcmp(spec_shape(&c, "shp"), "dropped") && !strcmp(spec_shape(&c, "ax"), "dropped"));
    CHECK(!strcmp(spec_shape(&c, "s"), "f32[4, 2, 3]"));
    CHECK(!strcmp(spec_shape(&c, "l"), "f32[2, 2]"));
    CHECK(!strcmp(spec_shape(&c, "q"), "f32[2, 3]"));
    spec_close(&c);
}

static void positional_errors(void) {
    spec_case c;
    CHECK(spec_open(&c, spec_graph("x: f32[2];", "", "y = relu(x, 3);", "y"), NULL) != 0);
    CHECK_CONTAINS(c.err.msg, "m.webnn:5: node 'y' (relu)");
    CHECK_CONTAINS(c.err.msg, "found a literal at position 1");
    spec_close(&c);
    CHECK(spec_open(&c, spec_graph("x: f32[2, 3];", "", "y = reshape(x, [6], newShape=[6]);", "y"), NULL) != 0);
    CHECK_CONTAINS(c.err.msg, "node 'y' (reshape): option 'newShape' expected once, found twice");
    spec_close(&c);
    CHECK(spec_open(&c, spec_graph("x: f32[2, 3]; t: f32[2];", "", "y = reshape(x, t);", "y"), NULL) != 0);
    CHECK_CONTAINS(c.err.msg, "node 'y' (reshape): operand 1 't' for 'newShape' expected a value known on the host");
    spec_close(&c);
    CHECK(spec_open(&c, spec_graph("x: f32[2, 3];", "ax: i64[2] @scalar(1);", "y = softmax(x, ax);", "y"), NULL) != 0);
    CHECK_CONTAINS(c.err.msg, "operand 1 'ax' for 'axis' expected one integer, found i64[2]");
    spec_close(&c);
    CHECK(spec_open(&c, spec_graph("x: f32[2, 3];", "", "y = elu(x, alpha=[1, \"a\"]);", "y"), NULL) != 0);
    CHECK_CONTAINS(c.err.msg, "node 'y' (elu): option 'alpha' expected an array of numbers or operands, found a mixed array");
    spec_close(&c);
}

int main(void) {
    typed_options();
    positional_names();
    positional_errors();
    return check_exit();
}
