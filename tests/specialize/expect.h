/* Table-friendly expectations shared by the op-family tests. Included
 * after check.h so CHECK counts into each test's own counters. */
#ifndef SPEC_TEST_EXPECT_H
#define SPEC_TEST_EXPECT_H

#include "check.h"
#include "util.h"

/* The graph's value `out` specializes to `want` ("f32[2, 3]"). */
static void expect_shape(const char *inputs, const char *consts, const char *nodes, const char *out,
                         const char *want) {
    spec_case c;
    int rc = spec_open(&c, spec_graph(inputs, consts, nodes, out), NULL);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  %s\n  error: %s\n", nodes, c.err.msg);
    const char *got = spec_shape(&c, out);
    if (strcmp(got, want)) fprintf(stderr, "  %s: got %s, want %s\n", nodes, got, want);
    CHECK(!strcmp(got, want));
    spec_close(&c);
}

/* Specialization fails with a message containing every part. */
static void expect_error(const char *inputs, const char *consts, const char *nodes, const char *out,
                         const char *const *parts) {
    spec_case c;
    int rc = spec_open(&c, spec_graph(inputs, consts, nodes, out), NULL);
    CHECK(rc != 0);
    if (rc == 0) fprintf(stderr, "  %s: unexpectedly specialized\n", nodes);
    for (int i = 0; parts[i]; i++) CHECK_CONTAINS(c.err.msg, parts[i]);
    spec_close(&c);
}

#define ERR(...) ((const char *const[]){__VA_ARGS__, NULL})

#endif
