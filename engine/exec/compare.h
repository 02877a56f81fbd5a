/* One comparison of a result with a reference, for every place berth
 * holds a backend to another's answers (`berth run --verify`, `berth
 * check --models`): element by element within
 *     |got - want| <= atol + rtol * |want|,
 * where a NaN matches only a NaN, an infinity only the same infinity,
 * and a NaN or infinity where the reference is finite is counted apart:
 * it is never a number that happens to be close. Integers (and
 * booleans) compare exactly: the op contract gives them one answer. */
#ifndef BERTH_COMPARE_H
#define BERTH_COMPARE_H

#include <stddef.h>

#include "berth/backend.h"

typedef struct berth_diff {
    size_t count;       /* elements compared */
    size_t bad;         /* outside the tolerance, non-finite mismatches included */
    size_t nonfinite;   /* NaN or infinity where the reference is finite */
    size_t first_bad;   /* index of the first bad element (count when none) */
    double got_first, want_first; /* the values there */
    double max_abs;     /* largest |got - want| over elements finite in both */
    double max_rel;     /* largest |got - want| / |want| there (want != 0) */
    size_t max_abs_at;
} berth_diff;

/* Compares got with want, which must have the same dtype and element
 * count (else 0, with d->count 0). Returns 1 when every element is within
 * the tolerance, 0 otherwise; d gets the details either way. */
int berth_compare(const berth_tensor *got, const berth_tensor *want, double atol, double rtol, berth_diff *d);

/* The same with each element's tolerance atol + rtol * max(|want|, the
 * root mean square of want's finite elements): an intermediate whose
 * values cancel to near zero (a convolution over large inputs) keeps the
 * rounding error of its large terms, which is not a divergence. For
 * finding the node where two backends part, not for outputs. */
int berth_compare_scaled(const berth_tensor *got, const berth_tensor *want, double atol, double rtol, berth_diff *d);

/* Formats d as "max abs 1.2e-05, max rel 0.034, 0 NaN/inf; 2 of 96
 * outside, first at [0, 3, 17]: 0.25, reference 0.5", the index in
 * want's dims (NaN/inf counts those where the reference is finite). */
void berth_diff_describe(const berth_diff *d, const berth_tensor *want, char *buf, size_t cap);

#endif
