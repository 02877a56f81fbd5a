/* The transformer's fusion passes: attention, layer normalization
 * written as primitives, and a whole encoder block with every pass
 * composed; each fused graph computes what the unfused one does
 * (reference interpreter, random data). */
#include "fuse_check.h"

/* ---- (b) attention ---- */

static const char *attention_text(const char *scale_node, const char *mask_node, const char *outputs) {
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "webnn_graph \"a\" v2 {\n"
             "  inputs { q: f32[1, 2, 3, 4]; k: f32[1, 2, 5, 4]; v: f32[1, 2, 5, 6]; mask: f32[1, 1, 1, 5]; }\n"
             "  consts { half: f32[] @scalar(0.5); two: f32[1] @scalar(2); }\n"
             "  nodes {\n"
             "    kt = transpose(k, permutation=[0, 1, 3, 2]);\n"
             "    s = matmul(q, kt);\n"
             "    ss = %s;\n"
             "    sm = %s;\n"
             "    p = softmax(sm, -1);\n"
             "    y = matmul(p, v);\n"
             "  }\n"
             "  outputs { %s }\n"
             "}\n",
             scale_node, mask_node, outputs);
    return buf;
}

static void attention(void) {
    spec_case plain, fused;
    const char *t = attention_text("mul(s, half)", "add(ss, mask)", "y;");
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (!plain.s || !fused.s) return;
    CHECK(berth_fuse(fused.s, supports_one, (void *)"berth.attention") == 1);
    check_well_formed(fused.s);
    CHECK(fused.s->desc.n_nodes == 1);
    const berth_node *n = find_node(fused.s, "berth.attention");
    CHECK(n != NULL);
    if (n) {
        CHECK(n->n_inputs == 3 && !strcmp(operand_name(fused.s, n->inputs[0]), "q") &&
              !strcmp(operand_name(fused.s, n->inputs[1]), "k") &&
              !strcmp(operand_name(fused.s, n->inputs[2]), "v"));
        const berth_attr *s = find_attr(n, "scale"), *m = find_attr(n, "mask");
        CHECK(s && s->type == BERTH_ATTR_FLOAT);
        if (s) CHECK_NEAR(s->f, 0.5, 1e-12);
        CHECK(m && m->type == BERTH_ATTR_OPERAND && !strcmp(operand_name(fused.s, m->i), "mask"));
    }
    CHECK(!strcmp(spec_shape(&fused, "y"), "f32[1, 2, 3, 6]"));
    CHECK(fused_vs_unfused(&plain, &fused) < 1e-5);
    spec_close(&plain);
    spec_close(&fused);

    /* divided by a constant, no mask */
    t = "webnn_graph \"a\" v2 {\n"
        "  inputs { q: f32[2, 3, 4]; k: f32[2, 5, 4]; v: f32[2, 5, 6]; }\n"
        "  consts { two: f32[1] @scalar(2); }\n"
        "  nodes {\n"
        "    kt = transpose(k, permutation=[0, 2, 1]);\n"
        "    s = matmul(q, kt);\n"
        "    ss = div(s, two);\n"
        "    p = softmax(ss, axis=2);\n"
        "    y = matmul(p, v);\n"
        "  }\n"
        "  outputs { y; }\n"
        "}\n";
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
        const berth_node *a = find_node(fused.s, "berth.attention");
        CHECK(a && !find_attr(a, "mask"));
        if (a && find_attr(a, "scale")) CHECK_NEAR(find_attr(a, "scale")->f, 0.5, 1e-12);
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-5);
    }
    spec_close(&plain);
    spec_close(&fused);

    /* k arrives already transposed: a transpose is added for the fused op */
    t = "webnn_graph \"a\" v2 {\n"
        "  inputs { q: f32[2, 3, 4]; kt: f32[2, 4, 5]; v: f32[2, 5, 6]; }\n"
        "  consts { c: f32[] @scalar(0.25); }\n"
        "  nodes {\n"
        "    s = matmul(q, kt);\n"
        "    ss = mul(c, s);\n"
        "    p = softmax(ss, -1);\n"
        "    y = matmul(p, v);\n"
        "  }\n"
        "  outputs { y; }\n"
        "}\n";
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(berth_fuse(fused.s, supports_one, (void *)"berth.attention") == 0);
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
        check_well_formed(fused.s);
        CHECK(fused.s->desc.n_nodes == 2);
        const berth_node *tr = &fused.s->desc.nodes[0], *a = find_node(fused.s, "berth.attention");
        CHECK(!strcmp(tr->op, "transpose") && !strcmp(operand_name(fused.s, tr->inputs[0]), "kt"));
        const berth_operand *k = &fused.s->desc.operands[tr->outputs[0]];
        CHECK(k->kind == BERTH_OPERAND_VALUE && k->rank == 3 && k->dims[0] == 2 && k->dims[1] == 5 && k->dims[2] == 4);
        CHECK(a && a->inputs[1] == tr->outputs[0]);
        if (a && find_attr(a, "scale")) CHECK_NEAR(find_attr(a, "scale")->f, 0.25, 1e-12);
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-5);
    }
    spec_close(&plain);
    spec_close(&fused);

    /* k transposed to [.., d, s] straight from [b, s, h, d], as exported
     * encoders write it: that one transpose becomes [0, 2, 1, 3], with
     * none added */
    t = "webnn_graph \"a\" v2 {\n"
        "  inputs { q: f32[1, 2, 3, 4]; kx: f32[1, 5, 2, 4]; v: f32[1, 2, 5, 6]; }\n"
        "  consts { c: f32[] @scalar(0.5); }\n"
        "  nodes {\n"
        "    kt = transpose(kx, permutation=[0, 2, 3, 1]);\n"
        "    s = matmul(q, kt);\n"
        "    ss = mul(s, c);\n"
        "    p = softmax(ss, -1);\n"
        "    y = matmul(p, v);\n"
        "  }\n"
        "  outputs { y; }\n"
        "}\n";
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
        check_well_formed(fused.s);
        CHECK(fused.s->desc.n_nodes == 2 && spec_count_op(fused.s, "transpose") == 1);
        const berth_node *tr = &fused.s->desc.nodes[0], *a = find_node(fused.s, "berth.attention");
        const berth_attr *pm = find_attr(tr, "permutation");
        CHECK(!strcmp(tr->op, "transpose") && !strcmp(operand_name(fused.s, tr->inputs[0]), "kx"));
        CHECK(pm && pm->count == 4 && pm->ints[0] == 0 && pm->ints[1] == 2 && pm->ints[2] == 1 && pm->ints[3] == 3);
        const berth_operand *k = &fused.s->desc.operands[tr->outputs[0]];
        CHECK(k->rank == 4 && k->dims[1] == 2 && k->dims[2] == 5 && k->dims[3] == 4);
        CHECK(a && a->inputs[1] == tr->outputs[0]);
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-5);
    }
    spec_close(&plain);
    spec_close(&fused);

    /* not supported */
    t = attention_text("mul(s, half)", "add(ss, mask)", "y;");
    CHECK(spec_open(&fused, t, NULL) == 0);
    if (fused.s) {
        CHECK(berth_fuse(fused.s, supports_one, (void *)"layerNormalization") == 0);
        CHECK(fused.s->desc.n_nodes == 6);
    }
    spec_close(&fused);

    /* the probabilities are also a graph output */
    t = attention_text("mul(s, half)", "add(ss, mask)", "y; p;");
    CHECK(spec_open(&fused, t, NULL) == 0);
    if (fused.s) {
        CHECK(berth_fuse(fused.s, supports_one, (void *)"berth.attention") == 0);
        CHECK(spec_count_op(fused.s, "berth.attention") == 0 && fused.s->desc.n_nodes == 6);
    }
    spec_close(&fused);
}

/* ---- (c) layer normalization ---- */

static const char *layer_norm_text(const char *square, const char *tail, const char *outputs) {
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "webnn_graph \"l\" v2 {\n"
             "  inputs { x: f32[2, 3, 8]; }\n"
             "  consts { two: f32[] @scalar(2); eps: f32[] @scalar(0.00001); g: f32[8]; b: f32[8]; }\n"
             "  nodes {\n"
             "    mu = reduceMean(x, axes=[-1], keepDimensions=true);\n"
             "    d = sub(x, mu);\n"
             "    sq = %s;\n"
             "    var = reduceMean(sq, axes=[2], keepDimensions=true);\n"
             "    ve = add(var, eps);\n"
             "    sd = sqrt(ve);\n"
             "    n = div(d, sd);\n"
             "%s"
             "  }\n"
             "  outputs { %s }\n"
             "}\n",
             square, tail, outputs);
    return buf;
}

static void layer_norm(void) {
    spec_case plain, fused;
    const char *t = layer_norm_text("pow(d, two)", "    sc = mul(n, g);\n    y = add(sc, b);\n", "y;");
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (!plain.s || !fused.s) return;
    CHECK(berth_fuse(fused.s, supports_one, (void *)"layerNormalization") == 1);
    check_well_formed(fused.s);
    CHECK(fused.s->desc.n_nodes == 1);
    const berth_node *n = find_node(fused.s, "layerNormalization");
    CHECK(n != NULL);
    if (n) {
        const berth_attr *ax = find_attr(n, "axes"), *e = find_attr(n, "epsilon");
        const berth_attr *s = find_attr(n, "scale"), *b = find_attr(n, "bias");
        CHECK(n->n_inputs == 1 && !strcmp(operand_name(fused.s, n->inputs[0]), "x"));
        CHECK(ax && ax->type == BERTH_ATTR_INTS && ax->count == 1 && ax->ints[0] == 2);
        CHECK(e && e->type == BERTH_ATTR_FLOAT);
        if (e) CHECK_NEAR(e->f, 1e-5, 1e-9);
        CHECK(s && !strcmp(operand_name(fused.s, s->i), "g"));
        CHECK(b && !strcmp(operand_name(fused.s, b->i), "b"));
    }
    CHECK(fused_vs_unfused(&plain, &fused) < 1e-4);
    spec_close(&plain);
    spec_close(&fused);

    /* mul(d, d), no scale or bias */
    t = layer_norm_text("mul(d, d)", "", "n;");
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
        const berth_node *l = find_node(fused.s, "layerNormalization");
        CHECK(l && !find_attr(l, "scale") && !find_attr(l, "bias"));
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-4);
    }
    spec_close(&plain);
    spec_close(&fused);

    /* not supported */
    t = layer_norm_text("pow(d, two)", "    sc = mul(n, g);\n    y = add(sc, b);\n", "y;");
    CHECK(spec_open(&fused, t, NULL) == 0);
    if (fused.s) {
        CHECK(berth_fuse(fused.s, supports_one, (void *)"berth.matmulEpilogue") == 0);
        CHECK(fused.s->desc.n_nodes == 9);
    }
    spec_close(&fused);

    /* d is also a graph output: only the pow is rewritten (as mul) */
    t = layer_norm_text("pow(d, two)", "    sc = mul(n, g);\n    y = add(sc, b);\n", "y; d;");
    CHECK(spec_open(&fused, t, NULL) == 0);
    if (fused.s) {
        CHECK(berth_fuse(fused.s, supports_but_elementwise, NULL) == 1);
        CHECK(spec_count_op(fused.s, "layerNormalization") == 0 && fused.s->desc.n_nodes == 9);
        CHECK(spec_count_op(fused.s, "pow") == 0);
    }
    spec_close(&fused);
}

/* All three passes over one transformer block, with a dyn batch: the
 * rewrites compose and the block still computes the same thing. */
static void transformer_block(void) {
    const char *t =
        "webnn_graph \"block\" v2 {\n"
        "  inputs { x: f32[dyn(\"batch\", 4), 5, 8]; }\n"
        "  consts {\n"
        "    two: f32[] @scalar(2); eps: f32[] @scalar(0.00001); c: f32[] @scalar(0.35);\n"
        "    g: f32[8]; b: f32[8]; Wq: f32[8, 8]; Wk: f32[8, 8]; Wv: f32[8, 8]; Wo: f32[8, 8]; bo: f32[8];\n"
        "    W1: f32[8, 16]; b1: f32[16];\n"
        "  }\n"
        "  nodes {\n"
        "    mu = reduceMean(x, axes=[2], keepDimensions=true);\n"
        "    d = sub(x, mu);\n"
        "    sq = pow(d, two);\n"
        "    var = reduceMean(sq, axes=[2], keepDimensions=true);\n"
        "    ve = add(var, eps);\n"
        "    sd = sqrt(ve);\n"
        "    n = div(d, sd);\n"
        "    ns = mul(n, g);\n"
        "    h = add(ns, b);\n"
        "    q = matmul(h, Wq);\n"
        "    k = matmul(h, Wk);\n"
        "    v = matmul(h, Wv);\n"
        "    kt = transpose(k, permutation=[0, 2, 1]);\n"
        "    s = matmul(q, kt);\n"
        "    ss = mul(s, c);\n"
        "    p = softmax(ss, -1);\n"
        "    o = matmul(p, v);\n"
        "    y1 = matmul(o, Wo);\n"
        "    y2 = add(y1, bo);\n"
        "    y3 = add(y2, x);\n"
        "    f1 = matmul(y3, W1);\n"
        "    f2 = add(b1, f1);\n"
        "    y = relu(f2);\n"
        "  }\n"
        "  outputs { y; y3; }\n"
        "}\n";
    spec_case plain, fused;
    int64_t batch = 3;
    CHECK(spec_open(&plain, t, &batch) == 0 && spec_open(&fused, t, &batch) == 0);
    if (!plain.s || !fused.s) {
        fprintf(stderr, "%s\n", plain.err.msg);
        return;
    }
    /* pow(d, 2) as mul(d, d), then the four fusions */
    CHECK(berth_fuse(fused.s, supports_all, NULL) == 5);
    check_well_formed(fused.s);
    CHECK(spec_count_op(fused.s, "layerNormalization") == 1);
    CHECK(spec_count_op(fused.s, "berth.attention") == 1);
    CHECK(spec_count_op(fused.s, "berth.matmulEpilogue") == 2);
    CHECK(spec_count_op(fused.s, "matmul") == 3); /* the q, k and v projections */
    CHECK(fused.s->desc.n_nodes == 7);
    /* y3 is a graph output: the first epilogue ends there, with x as residual */
    const berth_operand *y3 = spec_operand(&fused, "y3");
    CHECK(y3 && y3->kind == BERTH_OPERAND_VALUE);
    CHECK(!strcmp(spec_shape(&fused, "y"), "f32[3, 5, 16]"));
    CHECK(fused_vs_unfused(&plain, &fused) < 1e-4);
    spec_close(&plain);
    spec_close(&fused);
}

int main(void) {
    transformer_block();
    attention();
    layer_norm();
    return check_exit();
}
