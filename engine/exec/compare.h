/* One comparison of a result with a reference, for every place berth
 * holds a backend to another's answers (`berth run --verify`, `berth
 * check --models`): element by element within
 *     |got - want| <= atol + rtol * |want|,
 * where a NaN matches only a NaN, an infinity only the same infinity,
 * and a NaN or infinity where the reference is finite is counted apart:
 * it is never a number that happens to be close. Integers compare exactly
 * when atol and rtol are 0, as doubles otherwise. */
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

/* Formats d as "max abs 1.2e-05, max rel 3.4e-04, 0 NaN/inf, first
 * outside at [0, 3, 17]: 0.25 (want 0.5)" with the index in want's dims. */
void berth_diff_describe(const berth_diff *d, const berth_tensor *want, char *buf, size_t cap);

#endif
