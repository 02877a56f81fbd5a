/* The module harness (apps/check/harness.h) for tests: its comparisons
 * as CHECKs. The wrappers are static so their CHECKs count in the test
 * that includes this header. */
#ifndef BERTH_TEST_MODULE_HARNESS_H
#define BERTH_TEST_MODULE_HARNESS_H

#include "check.h"
#include "harness.h"

static inline int h_close_tol(const char *what, const float *got, const double *ref, size_t n, double rtol,
                              double atol) {
    size_t bad = mh_compare_f32(what, NULL, got, ref, n, rtol, atol);
    CHECK(bad == 0);
    return bad == 0;
}
static inline int h_close(const char *what, const float *got, const double *ref, size_t n) {
    return h_close_tol(what, got, ref, n, 1e-4, 1e-4);
}

#endif
