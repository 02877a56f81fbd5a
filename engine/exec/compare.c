/* Holding one result to a reference's: see compare.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "dtype.h"

/* Element i of t as a double; 4-bit types take their nibble. */
static double element(const berth_tensor *t, size_t i) {
    const void *p = t->data;
    switch (t->dtype) {
    case BERTH_DTYPE_F32: return ((const float *)p)[i];
    case BERTH_DTYPE_F16: return berth_f16_to_f32(((const uint16_t *)p)[i]);
    case BERTH_DTYPE_I32: return ((const int32_t *)p)[i];
    case BERTH_DTYPE_U32: return ((const uint32_t *)p)[i];
    case BERTH_DTYPE_I64: return (double)((const int64_t *)p)[i];
    case BERTH_DTYPE_U64: return (double)((const uint64_t *)p)[i];
    case BERTH_DTYPE_I8: return ((const int8_t *)p)[i];
    case BERTH_DTYPE_U8: return ((const uint8_t *)p)[i];
    case BERTH_DTYPE_I4:
    case BERTH_DTYPE_U4: {
        unsigned v = (((const uint8_t *)p)[i / 2] >> (i % 2 * 4)) & 15u;
        return t->dtype == BERTH_DTYPE_I4 && v > 7 ? (double)v - 16 : (double)v;
    }
    default: return NAN;
    }
}

/* 64-bit integers beyond 2^53 do not survive a double: compare the bits. */
static int exact_equal(const berth_tensor *a, const berth_tensor *b, size_t i) {
    if (a->dtype == BERTH_DTYPE_I64 || a->dtype == BERTH_DTYPE_U64)
        return ((const uint64_t *)a->data)[i] == ((const uint64_t *)b->data)[i];
    return element(a, i) == element(b, i);
}

/* The tolerance of element w is atol + rtol * max(|w|, floor). */
static int compare(const berth_tensor *got, const berth_tensor *want, double atol, double rtol, double floor,
                   berth_diff *d) {
    memset(d, 0, sizeof *d);
    int ok = 1;
    size_t n = berth_dtype_bits(want->dtype) ? want->bytes * 8 / berth_dtype_bits(want->dtype) : 0;
    if (got->dtype != want->dtype || got->bytes != want->bytes || (n && (!got->data || !want->data))) return 0;
    int floating = want->dtype == BERTH_DTYPE_F32 || want->dtype == BERTH_DTYPE_F16;
    d->count = n;
    d->first_bad = n;
    for (size_t i = 0; i < n; i++) {
        double g = element(got, i), w = element(want, i), diff = fabs(g - w);
        int good;
        if (!floating) {
            good = exact_equal(got, want, i);
        } else if (isfinite(w)) {
            good = isfinite(g) && diff <= atol + rtol * (fabs(w) > floor ? fabs(w) : floor);
            if (!isfinite(g)) d->nonfinite++;
        } else {
            good = isnan(w) ? isnan(g) : g == w;
        }
        if (isfinite(g) && isfinite(w)) {
            if (diff > d->max_abs) d->max_abs = diff, d->max_abs_at = i;
            if (w != 0 && diff / fabs(w) > d->max_rel) d->max_rel = diff / fabs(w);
        }
        if (!good) {
            if (!d->bad) d->first_bad = i, d->got_first = g, d->want_first = w;
            d->bad++;
            ok = 0;
        }
    }
    return ok;
}

int berth_compare(const berth_tensor *got, const berth_tensor *want, double atol, double rtol, berth_diff *d) {
    return compare(got, want, atol, rtol, 0, d);
}

int berth_compare_scaled(const berth_tensor *got, const berth_tensor *want, double atol, double rtol, berth_diff *d) {
    size_t n = berth_dtype_bits(want->dtype) ? want->bytes * 8 / berth_dtype_bits(want->dtype) : 0, finite = 0;
    double sum = 0;
    for (size_t i = 0; want->data && i < n; i++) {
        double w = element(want, i);
        if (isfinite(w)) sum += w * w, finite++;
    }
    return compare(got, want, atol, rtol, finite ? sqrt(sum / (double)finite) : 0, d);
}

void berth_diff_describe(const berth_diff *d, const berth_tensor *want, char *buf, size_t cap) {
    int o = snprintf(buf, cap, "max abs %.3g, max rel %.3g, %zu NaN/inf", d->max_abs, d->max_rel, d->nonfinite);
    if (!d->bad || o < 0 || (size_t)o >= cap) return;
    char at[160] = "";
    size_t rest = d->first_bad, k = 0;
    int64_t idx[BERTH_MAX_RANK];
    for (uint32_t r = want->rank; r-- > 0;) {
        int64_t dim = want->dims[r] > 0 ? want->dims[r] : 1;
        idx[r] = (int64_t)(rest % (size_t)dim);
        rest /= (size_t)dim;
    }
    for (uint32_t r = 0; r < want->rank && k < sizeof at; r++)
        k += (size_t)snprintf(at + k, sizeof at - k, "%s%lld", r ? ", " : "", (long long)idx[r]);
    char g[32], w[32];
    snprintf(g, sizeof g, isnan(d->got_first) ? "NaN" : "%.7g", d->got_first);
    snprintf(w, sizeof w, isnan(d->want_first) ? "NaN" : "%.7g", d->want_first);
    snprintf(buf + o, cap - (size_t)o, "; %zu of %zu outside, first at [%s]: %s, reference %s", d->bad, d->count, at,
             g, w);
}
