/* Every way a .webnn file can be malformed: each case must be refused with
 * a message that carries the line and column and says what was expected. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "graph.h"

#define H "webnn_graph \"e\" v2 {\n"
#define IN "  inputs { x: f32[1]; }\n"

static const struct {
    const char *text;
    const char *want;
} cases[] = {
    {"", "e.webnn:1:1: expected 'webnn_graph' at the start of the file, found end of file"},
    {"graph \"x\" v1 {}", "e.webnn:1:1: expected 'webnn_graph' at the start of the file, found 'graph'"},
    {"webnn_graph x v1 {}", "e.webnn:1:13: expected the graph name string after 'webnn_graph', found 'x'"},
    {"webnn_graph \"x\" v3 {}", "e.webnn:1:17: expected version 'v1' or 'v2' after the graph name, found 'v3'"},
    {"webnn_graph \"x\" v2 @fast {}", "e.webnn:1:21: expected graph annotation 'quantized' after '@', found 'fast'"},
    {"webnn_graph \"x\" v2 inputs", "e.webnn:1:20: expected '{' to open the graph, found 'inputs'"},
    {H "  weights { }\n}", "e.webnn:2:3: expected a block (inputs, consts, nodes, outputs) or '}', found 'weights'"},
    {H "  inputs { }\n  inputs { }\n}", "e.webnn:3:3: 'inputs' block given twice (first at line 2)"},
    {H "  inputs {\n    x: f32[1]\n    W: f32[2];\n  }\n",
     "e.webnn:4:5: expected ';' after input declaration, found 'W'"},
    {H "  inputs { x f32[1]; }\n", "e.webnn:2:14: expected ':' after the input name, found 'f32'"},
    {H "  inputs { x: f33[1]; }\n",
     "e.webnn:2:15: expected a dtype (f32, f16, i32, u32, i64, u64, i8, u8, i4, u4), found 'f33'"},
    {H "  inputs { x: f32[1, -2]; }\n", "e.webnn:2:22: expected a dim (0 to 2^40) or dyn(...), found '-2'"},
    {H "  inputs { x: f32[1.5]; }\n", "e.webnn:2:19: expected a dim (0 to 2^40) or dyn(...), found '1.5'"},
    {H "  inputs { x: f32[1,1,1,1,1,1,1,1,1]; }\n", "e.webnn:2:35: shape of 'x' has more than 8 dims"},
    {H "  inputs { x: f32[1099511627777]; }\n",
     "e.webnn:2:19: expected a dim (0 to 2^40) or dyn(...), found '1099511627777'"},
    {H "  inputs { x: f32[1099511627776, 1099511627776]; }\n",
     "e.webnn:2:19: shape of 'x' has more elements than fit in 64 bits"},
    {H "  inputs { x: f32[1 2]; }\n", "e.webnn:2:21: expected ',' between dims, found '2'"},
    {"webnn_graph \"e\" v1 {\n  inputs { x: f32[dyn(\"b\", 4)]; }\n",
     "e.webnn:2:19: dyn dims need a v2 graph, found dyn in a v1 graph"},
    {H "  inputs { x: f32[dyn(\"b\", 0)]; }\n", "e.webnn:2:28: expected a dyn max between 1 and 2^40, found '0'"},
    {H "  inputs { x: f32[dyn(b, 4)]; }\n", "e.webnn:2:23: expected a dim name string after 'dyn(', found 'b'"},
    {H "  inputs { x: f32[dyn(\"b\", 4)];\n    y: f32[dyn(\"b\", 8)]; }\n",
     "e.webnn:3:12: dyn \"b\" has max 8 here but 4 at line 2"},
    {H "  consts { w: f32[dyn(\"b\", 4)]; }\n",
     "e.webnn:2:19: dyn dims are allowed only in inputs, found one in const 'w'"},
    {H "  consts { k: i64[2] @bytes([1, 2, 3]); }\n",
     "e.webnn:2:28: @bytes of 'k' has 3 bytes, expected 16 for i64 with 2 elements"},
    {H "  consts { k: u8[1] @bytes([256]); }\n", "e.webnn:2:29: expected a byte value 0..255, found '256'"},
    {H "  consts { k: u8[1] @bytes([-1]); }\n", "e.webnn:2:29: expected a byte value 0..255, found '-1'"},
    {H "  consts { w: f32[1] @zeros; }\n",
     "e.webnn:2:23: expected a const annotation (weights, scalar or bytes) after '@', found 'zeros'"},
    {H "  consts { s: f32[] @scalar(\"a\"); }\n", "e.webnn:2:29: expected a number in @scalar(...), found '\"a\"'"},
    {H "  consts { s: f32[] @scalar(inf); }\n", "e.webnn:2:29: expected a number in @scalar(...), found 'inf'"},
    {H "  consts { s: f32[] @scalar(nan); }\n", "e.webnn:2:29: expected a number in @scalar(...), found 'nan'"},
    {H "  consts { s: f32[] @scalar(-inf); }\n", "e.webnn:2:29: unexpected character '-'"},
    {H "  consts { s: f32[] @scalar(+1); }\n", "e.webnn:2:29: unexpected character '+'"},
    {H "  consts { s: f32[] @scalar(1.e5); }\n", "e.webnn:2:29: malformed number '1.e5'"},
    {H "  consts { s: f32[] @scalar(12ab); }\n", "e.webnn:2:29: malformed number '12ab'"},
    {H "  consts { s: f32[] @scalar(1e999); }\n", "e.webnn:2:29: number '1e999' is out of range"},
    {H "  consts { w: f32[1] @weights(w); }\n", "e.webnn:2:31: expected a weights reference string, found 'w'"},
    {H IN "  nodes { y = relu(x) }\n", "e.webnn:3:23: expected ';' after node, found '}'"},
    {H IN "  nodes {\n    y = relu(x);\n    z = matmull(y, y);\n  }\n  outputs { z }\n}",
     "e.webnn:5:9: unknown op 'matmull'"},
    {H IN "  consts { x: f32[1]; }\n  outputs { x }\n}",
     "e.webnn:3:12: 'x' is defined twice: first at line 2, again at line 3"},
    {H IN "  nodes {\n    y = relu(x);\n    [p, y] = split(x, 2);\n  }\n  outputs { p }\n}",
     "e.webnn:5:9: 'y' is defined twice: first at line 4, again at line 5"},
    {H IN "  nodes { y = add(x, q); }\n  outputs { y }\n}", "e.webnn:3:22: 'q' used by node 'y' (add) is undefined"},
    {H IN "  nodes { y = conv2d(x, x, bias=zz); }\n  outputs { y }\n}",
     "e.webnn:3:33: 'zz' used by node 'y' (conv2d) is undefined"},
    {H IN "  nodes { y = concat([x, w], 0); }\n  outputs { y }\n}",
     "e.webnn:3:26: 'w' used by node 'y' (concat) is undefined"},
    {H IN "  nodes { y = relu(y); }\n  outputs { y }\n}", "e.webnn:3:20: 'y' is used before it is defined"},
    {H IN "  nodes {\n    y = relu(z);\n    z = relu(x);\n  }\n  outputs { y }\n}",
     "e.webnn:4:14: 'z' is used before it is defined: node 'y' (relu) uses it, line 5 defines it"},
    {H IN "  nodes { a = b; b = a; }\n  outputs { a }\n}", "e.webnn:3:15: 'b' is used before it is defined"},
    {H IN "  outputs { x; nope }\n}", "e.webnn:3:16: output 'nope' is undefined"},
    {H IN "  outputs { }\n}", "e.webnn:3:13: outputs block is empty"},
    {H IN "}", "e.webnn:3:1: graph has no outputs block"},
    {H "  outputs { x }\n" IN "}\nextra",
     "e.webnn:5:1: expected end of file after the graph's closing '}', found 'extra'"},
    {"webnn_graph \"abc\n", "e.webnn:1:13: unterminated string"},
    {"webnn_graph \"a\\n\" v1 {}", "e.webnn:1:13: unknown escape '\\n' in string"},
    {"webnn_graph \"a\tb\" v1 {}", "e.webnn:1:13: control byte 0x09 inside a string"},
    {H "  inputs { x: f32[1]; } $\n", "e.webnn:2:25: unexpected character '$'"},
    {"webnn_graph\x01", "e.webnn:1:12: unexpected byte 0x01"},
    {H IN "  nodes { y = split(x, axis=1, axis=2); }\n", "e.webnn:3:32: option 'axis' given twice to 'split'"},
    {H IN "  nodes { y = add(x x); }\n", "e.webnn:3:21: expected ',' or ')' in the arguments of 'add', found 'x'"},
    {H IN "  nodes { y = 5; }\n", "e.webnn:3:15: expected an op call or a value name after '=', found '5'"},
    {H IN "  nodes { [p q] = split(x); }\n", "e.webnn:3:14: expected ',' or ']' between node outputs, found 'q'"},
    {H IN "  nodes { y = f(x, o={a: 1, a: 2}); }\n", "e.webnn:3:29: key 'a' appears twice in one object"},
    {H IN "  nodes { y = f(x, o={1: 2}); }\n", "e.webnn:3:23: expected an object key, found '1'"},
    {H IN "  nodes { y = f(x, [1, 2); }\n", "e.webnn:3:25: expected ',' or ']' in an array, found ')'"},
    {H IN "  nodes { y = f(x, =); }\n", "e.webnn:3:20: expected a value (number, string, name, array or object), found '='"},
    {H "  inputs { true: f32[1]; }\n", "e.webnn:2:12: expected an input name or '}', found 'true'"},
    {H "  inputs { x: f32[1];", "e.webnn:2:22: expected an input name or '}', found end of file"},
};

static void test_cases(void) {
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        berth_error err;
        memset(&err, 0, sizeof err);
        berth_graph *g = berth_graph_parse("e.webnn", cases[k].text, strlen(cases[k].text), &err);
        CHECK(g == NULL);
        berth_graph_free(g);
        CHECK_CONTAINS(err.msg, cases[k].want);
        CHECK(strchr(err.msg, '\n') == NULL);
    }
}

/* A file is not a C string: the parser reads exactly `len` bytes. */
static void test_length_bound(void) {
    const char *text = "webnn_graph \"x\" v1 { inputs { x: f32[1]; } outputs { x } }";
    berth_error err;
    memset(&err, 0, sizeof err);
    berth_graph *g = berth_graph_parse("e.webnn", text, strlen(text) - 2, &err);
    CHECK(g == NULL);
    CHECK_CONTAINS(err.msg, "e.webnn:1:57: expected a block (inputs, consts, nodes, outputs) or '}', found end of file");
    char with_nul[] = "webnn_graph \"x\" v1 { inputs { x: f32[1]; } outputs { x } }\0";
    g = berth_graph_parse("e.webnn", with_nul, sizeof with_nul - 1, &err);
    CHECK(g == NULL);
    CHECK_CONTAINS(err.msg, "e.webnn:1:59: unexpected byte 0x00");
    g = berth_graph_parse("e.webnn", NULL, 0, &err);
    CHECK(g == NULL);
    CHECK_CONTAINS(err.msg, "e.webnn");
}

static char *nested(int levels) {
    const char *head = H IN "  nodes { y = relu(x, a=";
    const char *tail = "); }\n  outputs { y }\n}\n";
    size_t n = strlen(head) + 2 * (size_t)levels + 1 + strlen(tail) + 1;
    char *s = malloc(n), *p = s;
    if (!s) return NULL;
    p += sprintf(p, "%s", head);
    for (int k = 0; k < levels; k++) *p++ = '[';
    *p++ = '7';
    for (int k = 0; k < levels; k++) *p++ = ']';
    sprintf(p, "%s", tail);
    return s;
}

static void test_nesting(void) {
    berth_error err;
    memset(&err, 0, sizeof err);
    char *ok = nested(64);
    CHECK(ok != NULL);
    if (!ok) return;
    berth_graph *g = berth_graph_parse("e.webnn", ok, strlen(ok), &err);
    CHECK(g != NULL);
    if (g) {
        const bg_attr *a = berth_graph_attr(&g->nodes[0], "a");
        int depth = 0;
        while (a && a->kind == BG_ATTR_ARRAY && a->count == 1) {
            depth++;
            a = &a->items[0];
        }
        CHECK(depth == 64);
        CHECK(a && a->kind == BG_ATTR_NUMBER && a->i == 7);
    }
    berth_graph_free(g);
    free(ok);

    /* the 65th '[' is at column 25 + 64 of line 3 */
    char *deep = nested(65);
    g = berth_graph_parse("e.webnn", deep, strlen(deep), &err);
    CHECK(g == NULL);
    CHECK_CONTAINS(err.msg, "e.webnn:3:89: arrays and objects nested deeper than 64 levels");
    free(deep);

    /* far deeper than any stack would survive without the bound */
    char *abyss = nested(1000000);
    g = berth_graph_parse("e.webnn", abyss, strlen(abyss), &err);
    CHECK(g == NULL);
    CHECK_CONTAINS(err.msg, "nested deeper than 64 levels");
    free(abyss);

    /* objects count toward the same depth */
    const char *obj = H IN "  nodes { y = relu(x, a={b: {c: [1]}}); }\n  outputs { y }\n}";
    g = berth_graph_parse("e.webnn", obj, strlen(obj), &err);
    CHECK(g != NULL);
    berth_graph_free(g);
}

static void test_long_tokens(void) {
    size_t n = 2000;
    char *s = malloc(n + 64);
    if (!s) return;
    strcpy(s, "webnn_graph ");
    memset(s + 12, 'a', 1100);
    s[12 + 1100] = 0;
    berth_error err;
    memset(&err, 0, sizeof err);
    berth_graph *g = berth_graph_parse("e.webnn", s, strlen(s), &err);
    CHECK(g == NULL);
    CHECK_CONTAINS(err.msg, "e.webnn:1:13: identifier longer than 1024 characters");
    free(s);

    size_t big = 70000;
    s = malloc(big + 32);
    if (!s) return;
    strcpy(s, "webnn_graph \"");
    memset(s + 13, 's', big);
    strcpy(s + 13 + big, "\" v1 {}");
    g = berth_graph_parse("e.webnn", s, strlen(s), &err);
    CHECK(g == NULL);
    CHECK_CONTAINS(err.msg, "e.webnn:1:13: string longer than 65536 bytes");
    free(s);
}

/* Text with `count` repetitions of `item` (with %d for its index) between
 * `head` and `tail`, parsed. */
static berth_graph *parse_repeated(const char *head, const char *item, int count, const char *tail,
                                   berth_error *err) {
    size_t cap = strlen(head) + strlen(tail) + (size_t)count * (strlen(item) + 12) + 1;
    char *s = malloc(cap), *p = s;
    if (!s) return NULL;
    p += sprintf(p, "%s", head);
    for (int k = 0; k < count; k++) p += sprintf(p, item, k, k);
    sprintf(p, "%s", tail);
    berth_graph *g = berth_graph_parse("e.webnn", s, strlen(s), err);
    free(s);
    return g;
}

static void test_limits(void) {
    berth_error err;
    memset(&err, 0, sizeof err);
    const char *head = H IN "  nodes { y = relu(x";
    const char *tail = "); }\n  outputs { y }\n}\n";
    berth_graph *g = parse_repeated(head, ", o%d=1", 64, tail, &err);
    CHECK(g != NULL && g->nodes[0].n_attrs == 64);
    berth_graph_free(g);
    g = parse_repeated(head, ", o%d=1", 65, tail, &err);
    CHECK(g == NULL);
    CHECK_CONTAINS(err.msg, "more than 64 options given to 'relu'");

    head = H IN "  nodes { y = relu(x, o={k: 0";
    tail = "}); }\n  outputs { y }\n}\n";
    g = parse_repeated(head, ", k%d: 1", 63, tail, &err);
    CHECK(g != NULL && g->nodes[0].attrs[0].count == 64);
    berth_graph_free(g);
    g = parse_repeated(head, ", k%d: 1", 64, tail, &err);
    CHECK(g == NULL);
    CHECK_CONTAINS(err.msg, "object has more than 64 keys");

    head = H "  inputs {\n";
    tail = "  }\n  outputs { x0 }\n}\n";
    g = parse_repeated(head, "    x%d: f32[dyn(\"d%d\", 2)];\n", 64, tail, &err);
    CHECK(g != NULL && g->n_syms == 64);
    berth_graph_free(g);
    g = parse_repeated(head, "    x%d: f32[dyn(\"d%d\", 2)];\n", 65, tail, &err);
    CHECK(g == NULL);
    CHECK_CONTAINS(err.msg, "e.webnn:67:14: more than 64 dyn dims");
}

int main(void) {
    test_cases();
    test_limits();
    test_length_bound();
    test_nesting();
    test_long_tokens();
    return check_exit();
}
