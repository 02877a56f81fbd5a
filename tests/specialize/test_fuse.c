/* Fusion passes: each applies where the backend supports the fused op,
 * stays away when it does not or when an intermediate has another user,
 * and the fused graph computes what the unfused one does (reference
 * interpreter, random data). The transformer's passes (attention, layer
 * normalization, a whole block) are in test_fuse_transformer.c. */
#include "fuse_check.h"

/* ---- (a) matmul epilogue ---- */

static const char *epilogue_text(const char *outputs, const char *bias_first) {
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "webnn_graph \"e\" v2 {\n"
             "  inputs { x: f32[2, 3, 4]; r: f32[2, 3, 5]; }\n"
             "  consts { W: f32[4, 5]; b: f32[%s]; }\n"
             "  nodes {\n"
             "    m = matmul(x, W);\n"
             "    h = %s;\n"
             "    g = gelu(h);\n"
             "    y = add(g, r);\n"
             "  }\n"
             "  outputs { %s }\n"
             "}\n",
             bias_first ? "1, 5" : "5", bias_first ? "add(b, m)" : "add(m, b)", outputs);
    return buf;
}

static void epilogue(void) {
    spec_case plain, fused;
    const char *t = epilogue_text("y;", NULL);
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (!plain.s || !fused.s) return;
    CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
    check_well_formed(fused.s);
    CHECK(fused.s->desc.n_nodes == 1);
    const berth_node *n = find_node(fused.s, "berth.matmulEpilogue");
    CHECK(n != NULL);
    if (n) {
        const berth_attr *b = find_attr(n, "bias"), *a = find_attr(n, "activation"), *r = find_attr(n, "residual");
        CHECK(n->n_inputs == 2 && !strcmp(operand_name(fused.s, n->inputs[0]), "x") &&
              !strcmp(operand_name(fused.s, n->inputs[1]), "W"));
        CHECK(b && b->type == BERTH_ATTR_OPERAND && !strcmp(operand_name(fused.s, b->i), "b"));
        CHECK(a && a->type == BERTH_ATTR_STRING && !strcmp(a->s, "gelu"));
        CHECK(r && r->type == BERTH_ATTR_OPERAND && !strcmp(operand_name(fused.s, r->i), "r"));
        CHECK(!strcmp(operand_name(fused.s, n->outputs[0]), "y"));
    }
    /* the fused-away intermediates are no longer operands */
    CHECK(!strcmp(spec_shape(&fused, "m"), "dropped") && !strcmp(spec_shape(&fused, "g"), "dropped"));
    CHECK(!strcmp(spec_shape(&fused, "y"), "f32[2, 3, 5]"));
    double diff = fused_vs_unfused(&plain, &fused);
    CHECK(diff < 1e-5);
    spec_close(&plain);
    spec_close(&fused);

    /* bias written first, [1, 5]: still a bias along the last dim */
    t = epilogue_text("y;", "yes");
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-5);
    }
    spec_close(&plain);
    spec_close(&fused);

    /* not supported: nothing changes */
    t = epilogue_text("y;", NULL);
    CHECK(spec_open(&fused, t, NULL) == 0);
    if (fused.s) {
        CHECK(berth_fuse(fused.s, supports_none, NULL) == 0);
        CHECK(berth_fuse(fused.s, supports_one, (void *)"berth.attention") == 0);
        CHECK(fused.s->desc.n_nodes == 4 && spec_count_op(fused.s, "berth.matmulEpilogue") == 0);
    }
    spec_close(&fused);

    /* m is read by a graph output too: no epilogue (the add, gelu and add
     * after it still make one elementwise program) */
    t = epilogue_text("y; m;", NULL);
    CHECK(spec_open(&fused, t, NULL) == 0);
    if (fused.s) {
        CHECK(berth_fuse(fused.s, supports_but_elementwise, NULL) == 0);
        CHECK(spec_count_op(fused.s, "matmul") == 1 && fused.s->desc.n_nodes == 4);
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
        CHECK(spec_count_op(fused.s, "matmul") == 1 && spec_count_op(fused.s, "berth.elementwise") == 1 &&
              fused.s->desc.n_nodes == 2);
    }
    spec_close(&fused);

    /* h has another user: only matmul + bias fuse, gelu and add stay
     * (and, where the backend runs it, become one elementwise program) */
    t = epilogue_text("y; h;", NULL);
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(berth_fuse(fused.s, supports_but_elementwise, NULL) == 1);
        const berth_node *e = find_node(fused.s, "berth.matmulEpilogue");
        CHECK(e && !find_attr(e, "activation") && !find_attr(e, "residual"));
        CHECK(spec_count_op(fused.s, "gelu") == 1 && spec_count_op(fused.s, "add") == 1);
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-5);
    }
    spec_close(&fused);
    CHECK(spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 2);
        CHECK(spec_count_op(fused.s, "berth.matmulEpilogue") == 1 && spec_count_op(fused.s, "berth.elementwise") == 1);
        CHECK(spec_count_op(fused.s, "gelu") == 0 && spec_count_op(fused.s, "add") == 0);
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-5);
    }
    spec_close(&plain);
    spec_close(&fused);
}

/* A rank-1 b ([K], read as [K, 1]) leaves the product without its column
 * dim: the last dim is a row dim, so an add along it is no bias for the
 * fused op and nothing fuses. A rank-1 a ([K] as [1, K]) keeps the column
 * dim last, and fuses. */
static void epilogue_rank1(void) {
    spec_case plain, fused;
    const char *t = spec_graph("x: f32[2, 3]; v: f32[3]; c: f32[2];", "", "    m = matmul(x, v);\n    y = add(m, c);",
                               "y;");
    CHECK(spec_open(&fused, t, NULL) == 0);
    if (fused.s) {
        CHECK(!strcmp(spec_shape(&fused, "m"), "f32[2]"));
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 0);
        CHECK(spec_count_op(fused.s, "berth.matmulEpilogue") == 0 && fused.s->desc.n_nodes == 2);
    }
    spec_close(&fused);

    t = spec_graph("v: f32[3]; w: f32[3, 4]; b: f32[4];", "", "    m = matmul(v, w);\n    y = add(m, b);", "y;");
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(!strcmp(spec_shape(&fused, "m"), "f32[4]"));
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
        CHECK(spec_count_op(fused.s, "berth.matmulEpilogue") == 1);
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-5);
    }
    spec_close(&plain);
    spec_close(&fused);
}

/* A per-channel scale, hardswish spelled as primitives and a residual
 * add: one berth.elementwise over x, the scale and r. */
static const char *hardswish_text(const char *outputs, const char *scale_dims) {
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "webnn_graph \"hs\" v2 {\n"
             "  inputs { x: f32[2, 4, 3, 5]; r: f32[2, 4, 3, 5]; }\n"
             "  consts { s: f32[%s]; three: f32[] @scalar(3); six: f32[] @scalar(6); }\n"
             "  nodes {\n"
             "    a = mul(x, s);\n"
             "    b = add(a, three);\n"
             "    c = clamp(b, minValue=0, maxValue=6);\n"
             "    d = mul(a, c);\n"
             "    e = div(d, six);\n"
             "    y = add(e, r);\n"
             "  }\n"
             "  outputs { %s }\n"
             "}\n",
             scale_dims, outputs);
    return buf;
}

static void elementwise_groups(void) {
    spec_case plain, fused;
    const char *t = hardswish_text("y;", "4, 1, 1");
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
        CHECK(fused.s->desc.n_nodes == 1);
        const berth_node *e = find_node(fused.s, "berth.elementwise");
        CHECK(e && e->n_inputs == 3);
        const berth_attr *ops = e ? find_attr(e, "ops") : NULL, *steps = e ? find_attr(e, "steps") : NULL;
        /* hardswish spelled as add, clamp, mul, div is one step */
        CHECK_MSG(ops ? ops->s : "", "mul hardSwish add");
        CHECK(steps && steps->count == 6);
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-6);
        check_well_formed(fused.s);
    }
    spec_close(&plain);
    spec_close(&fused);

    /* a is an output too: it stays a node of its own, the rest fuse */
    t = hardswish_text("y; a;", "4, 1, 1");
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
        CHECK(fused.s->desc.n_nodes == 2 && spec_count_op(fused.s, "mul") == 1);
        const berth_node *e = find_node(fused.s, "berth.elementwise");
        CHECK(e && e->n_inputs == 2);
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-6);
    }
    spec_close(&plain);
    spec_close(&fused);

    /* a scale [4, 1, 5] broadcasts along two runs of dims, which a
     * program input may not: its mul stays a node, the rest fuse */
    t = hardswish_text("y;", "4, 1, 5");
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
        CHECK(fused.s->desc.n_nodes == 2 && spec_count_op(fused.s, "mul") == 1);
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-6);
    }
    spec_close(&plain);
    spec_close(&fused);

    /* not supported: nothing changes */
    t = hardswish_text("y;", "4, 1, 1");
    CHECK(spec_open(&fused, t, NULL) == 0);
    if (fused.s) {
        CHECK(berth_fuse(fused.s, supports_but_elementwise, NULL) == 0);
        CHECK(fused.s->desc.n_nodes == 6);
    }
    spec_close(&fused);
}

/* GELU as ONNX exporters write it is one gelu step; with another
 * constant it is not GELU and stays five steps. */
static void named_activations(void) {
    static const char *const forms[2] = {"1.4142135623730951", "1.5"};
    for (int k = 0; k < 2; k++) {
        char t[1024];
        snprintf(t, sizeof t,
                 "webnn_graph \"g\" v2 {\n"
                 "  inputs { x: f32[3, 7]; }\n"
                 "  consts { r2: f32[] @scalar(%s); one: f32[] @scalar(1); half: f32[] @scalar(0.5); }\n"
                 "  nodes { a = div(x, r2); b = erf(a); c = add(b, one); d = mul(x, c); y = mul(d, half); }\n"
                 "  outputs { y; }\n"
                 "}\n",
                 forms[k]);
        spec_case plain, fused;
        CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
        if (plain.s && fused.s) {
            CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
            const berth_node *e = find_node(fused.s, "berth.elementwise");
            const berth_attr *ops = e ? find_attr(e, "ops") : NULL;
            CHECK_MSG(ops ? ops->s : "", k == 0 ? "gelu" : "div erf add mul mul");
            CHECK(fused_vs_unfused(&plain, &fused) < 1e-5);
        }
        spec_close(&plain);
        spec_close(&fused);
    }
}

/* matmul, bias, then GELU in either order exporters write it: one
 * epilogue whose activation is gelu. */
static void epilogue_gelu(void) {
    static const char *const forms[2] = {
        "a = div(h, r2); e = erf(a); c = add(e, one); d = mul(h, c); y = mul(d, half);",
        "a = mul(h, is2); e = erf(a); hh = mul(h, half); c = add(e, one); y = mul(hh, c);"};
    for (int k = 0; k < 2; k++) {
        char t[1024];
        snprintf(t, sizeof t,
                 "webnn_graph \"mg\" v2 {\n"
                 "  inputs { x: f32[4, 6]; }\n"
                 "  consts { w: f32[6, 5]; b: f32[5]; r2: f32[] @scalar(1.4142135623730951); one: f32[] @scalar(1);"
                 " half: f32[] @scalar(0.5); is2: f32[] @scalar(0.7071067811865476); }\n"
                 "  nodes { m = matmul(x, w); h = add(m, b); %s }\n"
                 "  outputs { y; }\n"
                 "}\n",
                 forms[k]);
        spec_case plain, fused;
        CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
        if (plain.s && fused.s) {
            CHECK(berth_fuse(fused.s, supports_all, NULL) >= 1);
            CHECK(fused.s->desc.n_nodes == 1);
            const berth_node *e = find_node(fused.s, "berth.matmulEpilogue");
            const berth_attr *act = e ? find_attr(e, "activation") : NULL;
            CHECK(act && !strcmp(act->s, "gelu"));
            CHECK(fused_vs_unfused(&plain, &fused) < 1e-5);
        }
        spec_close(&plain);
        spec_close(&fused);
    }
}

/* A convolution and the hardswish after it: one berth.conv2dEpilogue. */
static void conv_epilogue(void) {
    const char *t =
        "webnn_graph \"ce\" v2 {\n"
        "  inputs { x: f32[1, 3, 6, 5]; }\n"
        "  consts { w: f32[8, 3, 3, 3]; b: f32[8]; s: f32[8, 1, 1]; three: f32[] @scalar(3); six: f32[] @scalar(6); }\n"
        "  nodes {\n"
        "    c = conv2d(x, w, padding=[1, 1, 1, 1], bias=b);\n"
        "    a = mul(c, s);\n"
        "    p = add(a, three);\n"
        "    q = clamp(p, minValue=0, maxValue=6);\n"
        "    r = mul(a, q);\n"
        "    y = div(r, six);\n"
        "  }\n"
        "  outputs { y; }\n"
        "}\n";
    spec_case plain, fused;
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 1);
        CHECK(fused.s->desc.n_nodes == 1);
        const berth_node *e = find_node(fused.s, "berth.conv2dEpilogue");
        CHECK(e && e->n_inputs == 2 && find_attr(e, "bias") && find_attr(e, "padding"));
        const berth_attr *ins = e ? find_attr(e, "epilogueInputs") : NULL;
        CHECK(ins && ins->count == 1 && !strcmp(operand_name(fused.s, ins->ints[0]), "s"));
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-5);
        check_well_formed(fused.s);
    }
    spec_close(&fused);
    /* without the fused convolution, the program stays a node of its own */
    CHECK(spec_open(&fused, t, NULL) == 0);
    if (fused.s) {
        CHECK(berth_fuse(fused.s, supports_but_conv_epilogue, NULL) == 1);
        CHECK(fused.s->desc.n_nodes == 2 && find_node(fused.s, "berth.elementwise") && find_node(fused.s, "conv2d"));
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-5);
    }
    spec_close(&plain);
    spec_close(&fused);
}

/* ---- (a') quantized weights ---- */

/* A backend running the quantized fused ops (their tables' dtypes: f32 a,
 * the table's integer type) and everything else on f32. */
static int supports_quant(void *ctx, const char *op, berth_dtype t) {
    (void)ctx;
    if (!strcmp(op, "berth.gatherQuantized")) return t == BERTH_DTYPE_I8 || t == BERTH_DTYPE_I4;
    return t == BERTH_DTYPE_F32;
}

static int supports_but_quant(void *ctx, const char *op, berth_dtype t) {
    return supports_all(ctx, op, t) && strcmp(op, "berth.matmulQuantized") && strcmp(op, "berth.gatherQuantized");
}

/* zero: how the zero points are declared ("" weights, or a constant) */
static const char *quant_text(const char *outputs, const char *zero) {
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "webnn_graph \"q\" v2 {\n"
             "  inputs { x: f32[2, 3, 8]; ids: i64[2, 3]; }\n"
             "  consts { Wq: i4[8, 5]; Ws: f32[2, 5]; Wz: i4[2, 5]%s; b: f32[5];\n"
             "           Eq: i8[10, 8]; Es: f32[10, 4]; Ez: i8[10, 4]%s; }\n"
             "  nodes {\n"
             "    w = dequantizeLinear(Wq, Ws, Wz);\n"
             "    m = matmul(x, w);\n"
             "    h = add(m, b);\n"
             "    g = relu(h);\n"
             "    e = dequantizeLinear(Eq, Es, Ez);\n"
             "    t = gather(e, ids);\n"
             "  }\n"
             "  outputs { %s }\n"
             "}\n",
             zero, zero, outputs);
    return buf;
}

static void quantized(void) {
    spec_case q;
    CHECK(spec_open(&q, quant_text("g; t;", ""), NULL) == 0);
    if (q.s) {
        CHECK(berth_fuse(q.s, supports_quant, NULL) == 2);
        check_well_formed(q.s);
        CHECK(q.s->desc.n_nodes == 2 && spec_count_op(q.s, "dequantizeLinear") == 0);
        const berth_node *n = find_node(q.s, "berth.matmulQuantized");
        CHECK(n != NULL);
        if (n) {
            static const char *const want[4] = {"x", "Wq", "Ws", "Wz"};
            CHECK(n->n_inputs == 4);
            for (uint32_t i = 0; i < 4 && i < n->n_inputs; i++) CHECK(!strcmp(operand_name(q.s, n->inputs[i]), want[i]));
            const berth_attr *b = find_attr(n, "bias"), *a = find_attr(n, "activation");
            CHECK(b && !strcmp(operand_name(q.s, b->i), "b") && a && !strcmp(a->s, "relu") && !find_attr(n, "residual"));
            CHECK(!strcmp(operand_name(q.s, n->outputs[0]), "g"));
        }
        n = find_node(q.s, "berth.gatherQuantized");
        CHECK(n != NULL);
        if (n) {
            static const char *const want[4] = {"Eq", "ids", "Es", "Ez"};
            CHECK(n->n_inputs == 4 && n->n_attrs == 0);
            for (uint32_t i = 0; i < 4 && i < n->n_inputs; i++) CHECK(!strcmp(operand_name(q.s, n->inputs[i]), want[i]));
        }
        /* the dequantized weights are gone: no float copy is planned */
        CHECK(!strcmp(spec_shape(&q, "w"), "dropped") && !strcmp(spec_shape(&q, "e"), "dropped"));
    }
    spec_close(&q);

    /* zero points that are constant zeros (symmetric quantization) are
     * left out of the fused ops, so no plan holds them; non-zero ones
     * stay */
    const char *zeros[2] = {" @scalar(0)", " @scalar(1)"};
    for (int z = 0; z < 2; z++) {
        CHECK(spec_open(&q, quant_text("g; t;", zeros[z]), NULL) == 0);
        if (!q.s) continue;
        CHECK(berth_fuse(q.s, supports_quant, NULL) == 2);
        check_well_formed(q.s);
        const berth_node *m = find_node(q.s, "berth.matmulQuantized"), *g = find_node(q.s, "berth.gatherQuantized");
        CHECK(m && m->n_inputs == (z ? 4u : 3u) && g && g->n_inputs == (z ? 4u : 3u));
        CHECK(!strcmp(spec_shape(&q, "Wz"), z ? "i4[2, 5]" : "dropped"));
        spec_close(&q);
    }

    /* the dequantized matrix is also an output: it must exist, so the
     * product reads it as a float matrix (bias and relu still fuse) */
    CHECK(spec_open(&q, quant_text("g; t; w;", ""), NULL) == 0);
    if (q.s) {
        CHECK(berth_fuse(q.s, supports_quant, NULL) == 2);
        CHECK(spec_count_op(q.s, "berth.matmulQuantized") == 0 && spec_count_op(q.s, "berth.matmulEpilogue") == 1);
        CHECK(spec_count_op(q.s, "dequantizeLinear") == 1 && spec_count_op(q.s, "berth.gatherQuantized") == 1);
    }
    spec_close(&q);

    /* a backend without the quantized ops: only the float epilogue */
    CHECK(spec_open(&q, quant_text("g; t;", ""), NULL) == 0);
    if (q.s) {
        CHECK(berth_fuse(q.s, supports_but_quant, NULL) == 1);
        CHECK(spec_count_op(q.s, "berth.matmulQuantized") == 0 && spec_count_op(q.s, "berth.gatherQuantized") == 0);
        CHECK(spec_count_op(q.s, "dequantizeLinear") == 2);
    }
    spec_close(&q);
}

/* ---- pow with a constant exponent ---- */

static const char *pow_text(const char *exponent, const char *x_dims, const char *e_dims) {
    static char buf[512];
    snprintf(buf, sizeof buf,
             "webnn_graph \"p\" v2 {\n"
             "  inputs { x: f32[%s]; }\n"
             "  consts { e: f32[%s] @scalar(%s); two: f32[] @scalar(2.0); }\n"
             "  nodes { b = add(x, two); y = pow(b, e); }\n"
             "  outputs { y; }\n}\n",
             x_dims, e_dims, exponent);
    return buf;
}

static void pow_rewrite(void) {
    /* exponent, then the ops it becomes: mul, reciprocal, identity */
    static const struct { const char *e; int mul, recip, ident; } cases[] = {
        {"1.0", 0, 0, 1}, {"2.0", 1, 0, 0}, {"3.0", 2, 0, 0}, {"4.0", 2, 0, 0},
        {"-1.0", 0, 1, 0}, {"-2.0", 1, 1, 0}, {"-3.0", 2, 1, 0}, {"-4.0", 2, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        spec_case plain, fused;
        const char *t = pow_text(cases[i].e, "2, 3", "");
        CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
        if (plain.s && fused.s) {
            CHECK(berth_fuse(fused.s, supports_but_elementwise, NULL) == 1);
            check_well_formed(fused.s);
            CHECK(spec_count_op(fused.s, "pow") == 0);
            CHECK(spec_count_op(fused.s, "mul") == cases[i].mul);
            CHECK(spec_count_op(fused.s, "reciprocal") == cases[i].recip);
            CHECK(spec_count_op(fused.s, "identity") == cases[i].ident);
            /* bases in [1, 3]: powers up to 81, a few float ulps apart */
            CHECK(fused_vs_unfused(&plain, &fused) < 1e-4);
        }
        spec_close(&plain);
        spec_close(&fused);
    }
    /* left to pow: no exact or close-enough product (0.5: sqrt differs
     * at -0 and -inf; 5: more roundings than allowed; 2.5) */
    static const char *const kept[] = {"0.5", "-0.5", "5.0", "2.5"};
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        spec_case c;
        CHECK(spec_open(&c, pow_text(kept[i], "2, 3", ""), NULL) == 0);
        if (c.s) {
            CHECK(berth_fuse(c.s, supports_but_elementwise, NULL) == 0);
            CHECK(spec_count_op(c.s, "pow") == 1);
        }
        spec_close(&c);
    }
    /* an exponent that broadcasts x to a larger shape, and a backend
     * without mul: pow stays */
    spec_case c;
    CHECK(spec_open(&c, pow_text("2.0", "3", "2, 3"), NULL) == 0);
    if (c.s) {
        CHECK(berth_fuse(c.s, supports_but_elementwise, NULL) == 0);
        CHECK(spec_count_op(c.s, "pow") == 1);
    }
    spec_close(&c);
    CHECK(spec_open(&c, pow_text("2.0", "2, 3", ""), NULL) == 0);
    if (c.s) {
        CHECK(berth_fuse(c.s, supports_one, (void *)"pow") == 0);
        CHECK(spec_count_op(c.s, "pow") == 1);
    }
    spec_close(&c);

    /* the sum of squares the melspectrogram front end computes: one
     * elementwise program of mul, mul, add, no pow step */
    spec_case plain, fused;
    const char *t = spec_graph("a: f32[2, 8]; b: f32[2, 8];", "two: f32[] @scalar(2.0);",
                               "pa = pow(a, two);\n    pb = pow(b, two);\n    y = add(pa, pb);", "y;");
    CHECK(spec_open(&plain, t, NULL) == 0 && spec_open(&fused, t, NULL) == 0);
    if (plain.s && fused.s) {
        CHECK(berth_fuse(fused.s, supports_all, NULL) == 3);
        CHECK(fused.s->desc.n_nodes == 1);
        const berth_node *e = find_node(fused.s, "berth.elementwise");
        const berth_attr *ops = e ? find_attr(e, "ops") : NULL;
        CHECK_MSG(ops ? ops->s : "", "mul mul add");
        CHECK(fused_vs_unfused(&plain, &fused) < 1e-6);
    }
    spec_close(&plain);
    spec_close(&fused);
}

int main(void) {
    pow_rewrite();
    elementwise_groups();
    named_activations();
    epilogue_gelu();
    conv_epilogue();
    epilogue();
    epilogue_rank1();
    quantized();
    return check_exit();
}
