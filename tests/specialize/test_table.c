/* The op table (berth/ops.def) drives specialization: every WebNN op has
 * a shape rule and no fused op has one; every parameter and option row
 * names a real op, once; an option the table does not list is refused
 * (fixtures/unknown_option.webnn and its expected message); option types
 * are checked against the table, with the readers' leniencies kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/ops.h"
#include "check.h"
#include "infer.h"
#include "util.h"

static void rules_match_table(void) {
    const berth_op_desc *t = berth_op_table();
    for (int i = 0; i < BERTH_OP_COUNT; i++) {
        int has = sp_find_rule((berth_op_id)i) != NULL;
        int want = t[i].kind == BERTH_OP_KIND_WEBNN;
        if (has != want) fprintf(stderr, "  %s: rule %s\n", t[i].name, has ? "present" : "missing");
        CHECK(has == want);
        CHECK(t[i].min_inputs >= 1 && t[i].min_inputs <= t[i].max_inputs && t[i].n_outputs >= 1);
        CHECK(t[i].meaning && t[i].meaning[0] && t[i].operands && t[i].operands[0]);
    }
    CHECK(sp_find_rule(BERTH_OP_UNKNOWN) == NULL && sp_find_rule(BERTH_OP_COUNT) == NULL);
    uint32_t na, np, nn;
    const berth_op_attr_desc *a = berth_op_attrs(&na);
    const berth_op_param_desc *p = berth_op_params(&np);
    const berth_op_note_desc *n = berth_op_notes(&nn);
    for (uint32_t i = 0; i < na; i++) {
        CHECK(a[i].op >= 0 && a[i].op < BERTH_OP_COUNT);
        CHECK(a[i].type >= BERTH_ATTR_INT && a[i].type <= BERTH_ATTR_OPERANDS);
        CHECK(a[i].meaning && a[i].meaning[0] && a[i].default_value);
        CHECK(berth_op_attr(a[i].op, a[i].key) == &a[i]); /* listed once per op */
    }
    for (uint32_t i = 0; i < np; i++) {
        CHECK(p[i].op >= 0 && p[i].op < BERTH_OP_COUNT);
        const berth_op_attr_desc *d = berth_op_attr(p[i].op, p[i].key);
        if (!d) fprintf(stderr, "  param %s of %s is not an option\n", p[i].key, t[p[i].op].name);
        CHECK(d != NULL);
    }
    for (uint32_t i = 0; i < nn; i++) CHECK(n[i].op >= 0 && n[i].op < BERTH_OP_COUNT && n[i].text[0]);
    /* the fused ops' options, as the fusion passes write them */
    const berth_op_attr_desc *d = berth_op_attr(BERTH_OP_MATMUL_EPILOGUE, "bias");
    CHECK(d && d->type == BERTH_ATTR_OPERAND);
    d = berth_op_attr(BERTH_OP_MATMUL_EPILOGUE, "activation");
    CHECK(d && d->type == BERTH_ATTR_STRING);
    d = berth_op_attr(BERTH_OP_MATMUL_EPILOGUE, "residual");
    CHECK(d && d->type == BERTH_ATTR_OPERAND);
    d = berth_op_attr(BERTH_OP_ATTENTION, "scale");
    CHECK(d && d->type == BERTH_ATTR_FLOAT);
    d = berth_op_attr(BERTH_OP_ATTENTION, "mask");
    CHECK(d && d->type == BERTH_ATTR_OPERAND);
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 8192);
    size_t n = buf ? fread(buf, 1, 8191, f) : 0;
    (void)n;
    fclose(f);
    return buf;
}

static void unknown_option_fixture(void) {
    berth_error err;
    memset(&err, 0, sizeof err);
    berth_graph *g = berth_graph_load(SPEC_FIXTURES_DIR "/unknown_option.webnn", &err);
    CHECK(g != NULL);
    char *want = slurp(SPEC_FIXTURES_DIR "/unknown_option.expected");
    CHECK(want != NULL);
    if (g && want) {
        berth_spec *s = berth_specialize(g, NULL, NULL, &err);
        CHECK(s == NULL);
        /* the message names the file as it was given */
        char full[1024];
        snprintf(full, sizeof full, "%s/%s", SPEC_FIXTURES_DIR, want);
        if (strcmp(err.msg, full)) fprintf(stderr, "  got:  %s\n  want: %s\n", err.msg, full);
        CHECK(!strcmp(err.msg, full));
        berth_spec_free(s);
    }
    free(want);
    berth_graph_free(g);
}

static void refused(const char *nodes, const char *want) {
    spec_case c;
    CHECK(spec_open(&c, spec_graph("x: f32[2, 3];", "w: f32[3];", nodes, "y"), NULL) != 0);
    if (!strstr(c.err.msg, want)) fprintf(stderr, "  %s\n  got:  %s\n  want: %s\n", nodes, c.err.msg, want);
    CHECK(strstr(c.err.msg, want) != NULL);
    spec_close(&c);
}

static void accepted(const char *nodes, const char *shape) {
    spec_case c;
    int rc = spec_open(&c, spec_graph("x: f32[2, 3];", "w: f32[3];", nodes, "y"), NULL);
    if (rc) fprintf(stderr, "  %s\n  error: %s\n", nodes, c.err.msg);
    CHECK(rc == 0);
    CHECK(!strcmp(spec_shape(&c, "y"), shape));
    spec_close(&c);
}

static void option_checks(void) {
    refused("y = relu(x, alpha=1);", "node 'y' (relu): unknown option 'alpha'; relu takes no options");
    refused("y = softmax(x, axes=1);", "node 'y' (softmax): unknown option 'axes'; softmax takes: axis");
    refused("y = split(x, 3, axis=1, bogus=null);", "unknown option 'bogus'; split takes: splits, axis");
    refused("y = softmax(x, axis=\"1\");", "node 'y' (softmax): option 'axis' expected an integer, found a string");
    refused("y = softmax(x, axis=1.5);", "option 'axis' expected an integer, found a number");
    refused("y = reduceSum(x, keepDimensions=1);", "option 'keepDimensions' expected a boolean, found an integer");
    refused("y = transpose(x, permutation=\"ab\");", "option 'permutation' expected an integer array, found a string");
    refused("y = clamp(x, minValue=[0]);", "option 'minValue' expected a number, found an integer array");
    refused("y = layerNormalization(x, axes=[1], scale=[1, 2, 3]);",
            "option 'scale' expected an operand, found an integer array");
    refused("y = layerNormalization(x, axes=[1], scale=w, epsilon=w);",
            "option 'epsilon' expected a number, found an operand");
    refused("y = reshape(x, newShape=[6], newshape=[6]);", "unknown option 'newshape'; reshape takes: newShape");
    /* what the readers accept: a lone integer for a list, an integer for
     * a number, integers for numbers, and null as absent */
    accepted("y = reduceSum(x, axes=1);", "f32[2]");
    accepted("y = clamp(x, minValue=0, maxValue=1);", "f32[2, 3]");
    accepted("y = softmax(x, axis=null);", "f32[2, 3]");
    accepted("y = layerNormalization(x, axes=[1], scale=w, epsilon=1);", "f32[2, 3]");
    accepted("y = unsqueeze(x, 0);", "f32[1, 2, 3]");
}

int main(void) {
    rules_match_table();
    unknown_option_fixture();
    option_checks();
    return check_exit();
}
