/* Numbers survive the trip from text to IR: integers exactly (is_int and
 * i), everything else as the double C itself reads from the same digits. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "graph.h"

#define N_NUMS 22

static const char *text =
    "webnn_graph \"n\" v2 {\n"
    "  inputs { x: f32[0, 1099511627776]; }\n"
    "  consts { s: f32[] @scalar(-1.5e-2); t: i64[] @scalar(-3); }\n"
    "  nodes { y = relu(x, n=[0, -0, 42, -7, 9223372036854775807, -9223372036854775808,\n"
    "    9223372036854775808, 1.5, -0.25, 1e3, 2.5E-3, 1e+2, -3.75e1, 0.1, 123456789012.5,\n"
    "    1e-320, 007, 1.0, 1E308, -0.0, 18446744073709551616, 6.02214076e23]); }\n"
    "  outputs { y }\n"
    "}\n";

static void test_round_trip(void) {
    const struct {
        int is_int;
        int64_t i;
        double num;
    } want[N_NUMS] = {
        {1, 0, 0.0},
        {1, 0, 0.0},
        {1, 42, 42.0},
        {1, -7, -7.0},
        {1, INT64_MAX, 9223372036854775807.0},
        {1, INT64_MIN, -9223372036854775808.0},
        {0, 0, 9223372036854775808.0},
        {0, 0, 1.5},
        {0, 0, -0.25},
        {0, 0, 1000.0},
        {0, 0, 0.0025},
        {0, 0, 100.0},
        {0, 0, -37.5},
        {0, 0, 0.1},
        {0, 0, 123456789012.5},
        {0, 0, 1e-320},
        {1, 7, 7.0},
        {0, 0, 1.0},
        {0, 0, 1e308},
        {0, 0, -0.0},
        {0, 0, 18446744073709551616.0},
        {0, 0, 6.02214076e23},
    };
    berth_error err;
    memset(&err, 0, sizeof err);
    berth_graph *g = berth_graph_parse("n.webnn", text, strlen(text), &err);
    CHECK(g != NULL);
    if (!g) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    const bg_attr *a = berth_graph_attr(&g->nodes[0], "n");
    CHECK(a && a->kind == BG_ATTR_ARRAY && a->count == N_NUMS);
    for (int k = 0; a && k < N_NUMS && k < (int)a->count; k++) {
        const bg_attr *it = &a->items[k];
        CHECK(it->kind == BG_ATTR_NUMBER);
        if (it->is_int != want[k].is_int || it->num != want[k].num || (want[k].is_int && it->i != want[k].i))
            fprintf(stderr, "item %d: is_int %d i %lld num %.17g\n", k, it->is_int, (long long)it->i, it->num);
        CHECK(it->is_int == want[k].is_int);
        CHECK(it->num == want[k].num);
        if (want[k].is_int) CHECK(it->i == want[k].i);
    }
    if (a && a->count == N_NUMS) CHECK(signbit(a->items[19].num)); /* -0.0 written as a float keeps its sign */

    CHECK(g->values[0].dims[1].value == (int64_t)1 << 40);
    CHECK(g->values[1].scalar == -0.015);
    CHECK(g->values[2].scalar == -3.0);
    berth_graph_free(g);
}

/* Out-of-range literals are refused rather than turned into inf or 0. */
static void test_out_of_range(void) {
    const char *bad[] = {"1e309", "-1e309", "1e-400", "-2.5e-999"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char buf[256];
        snprintf(buf, sizeof buf,
                 "webnn_graph \"n\" v1 {\n  consts { s: f32[] @scalar(%s); }\n  outputs { s }\n}\n", bad[k]);
        berth_error err;
        memset(&err, 0, sizeof err);
        berth_graph *g = berth_graph_parse("n.webnn", buf, strlen(buf), &err);
        CHECK(g == NULL);
        char want[128];
        snprintf(want, sizeof want, "n.webnn:2:29: number '%s' is out of range", bad[k]);
        CHECK_CONTAINS(err.msg, want);
    }
}

int main(void) {
    test_round_trip();
    test_out_of_range();
    return check_exit();
}
