/* Numpy broadcasting for binary, comparison, logical and where ops. */
#include "check.h"
#include "util.h"

static void shape_is(const char *inputs, const char *nodes, const char *out, const char *want) {
    spec_case c;
    int rc = spec_open(&c, spec_graph(inputs, "", nodes, out), NULL);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  error: %s\n", c.err.msg);
    const char *got = spec_shape(&c, out);
    if (strcmp(got, want)) fprintf(stderr, "  %s: got %s, want %s\n", nodes, got, want);
    CHECK(!strcmp(got, want));
    spec_close(&c);
}

static void fails_with(const char *inputs, const char *nodes, const char *out, const char *const *parts) {
    spec_case c;
    CHECK(spec_open(&c, spec_graph(inputs, "", nodes, out), NULL) != 0);
    for (int i = 0; parts[i]; i++) CHECK_CONTAINS(c.err.msg, parts[i]);
    spec_close(&c);
}

int main(void) {
    shape_is("a: f32[2, 1, 4]; b: f32[3, 1];", "y = add(a, b);", "y", "f32[2, 3, 4]");
    shape_is("a: f32[]; b: f32[5];", "y = mul(a, b);", "y", "f32[5]");
    shape_is("a: f32[5, 1]; b: f32[1, 6];", "y = sub(b, a);", "y", "f32[5, 6]");
    shape_is("a: i64[7, 1, 1]; b: i64[1, 2, 3];", "y = max(a, b);", "y", "i64[7, 2, 3]");
    shape_is("a: f32[4, 1]; b: f32[3];", "y = greater(a, b);", "y", "u8[4, 3]");
    shape_is("a: i32[2]; b: i32[2];", "y = equal(a, b);", "y", "u8[2]");
    shape_is("a: u8[2, 1]; b: u8[1, 3];", "y = logicalAnd(a, b);", "y", "u8[2, 3]");
    shape_is("c: u8[3, 1, 1]; t: f32[1, 4, 1]; f: f32[5];", "y = where(c, t, f);", "y", "f32[3, 4, 5]");
    shape_is("a: f32[0, 3]; b: f32[1, 3];", "y = add(a, b);", "y", "f32[0, 3]");

    const char *p1[] = {"m.webnn:5:", "node 'y' (add)", "operand 1 'b'", "[4, 3]", "found f32[3, 2]", NULL};
    fails_with("a: f32[4, 3]; b: f32[3, 2];", "y = add(a, b);", "y", p1);
    const char *p2[] = {"node 'y' (mul)", "operand 1 'b' expected f32", "found i32[3]", NULL};
    fails_with("a: f32[3]; b: i32[3];", "y = mul(a, b);", "y", p2);
    const char *p3[] = {"node 'y' (where)", "operand 0 'c' expected u8", "found f32[3]", NULL};
    fails_with("c: f32[3]; t: f32[3]; f: f32[3];", "y = where(c, t, f);", "y", p3);
    const char *p4[] = {"node 'y' (where)", "operand 2 'f'", "[3, 4]", "found f32[5]", NULL};
    fails_with("c: u8[3, 1]; t: f32[1, 4]; f: f32[5];", "y = where(c, t, f);", "y", p4);
    const char *p5[] = {"node 'y' (logicalOr)", "operand 1 'b' expected u8", "found i32[2]", NULL};
    fails_with("a: u8[2]; b: i32[2];", "y = logicalOr(a, b);", "y", p5);
    const char *p6[] = {"node 'y' (add)", "expected 2 operands, found 1", NULL};
    fails_with("a: f32[2];", "y = add(a);", "y", p6);
    return check_exit();
}
