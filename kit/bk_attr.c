/* The attribute readers (see bk_attr.h). */
#include "bk_attr.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static berth_status attr_err(berth_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static berth_status attr_err(berth_error *err, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return BERTH_ERR_INVALID;
}

const berth_attr *bk_attr_find(bk_attrs a, const char *key) {
    const char *base = (const char *)a.at;
    for (uint32_t i = 0; base && i < a.n; i++) {
        const berth_attr *at = (const berth_attr *)(const void *)(base + (size_t)i * a.size);
        if (at->key && strcmp(at->key, key) == 0) return at->type == BERTH_ATTR_NULL ? NULL : at;
    }
    return NULL;
}

const char *bk_attr_type_name(berth_attr_type t, unsigned flags) {
    static const char *const terse[] = {"null", "int", "float", "bool", "string",
                                        "ints", "floats", "operand", "operands"};
    static const char *const prose[] = {"null", "an integer", "a number", "a boolean", "a string",
                                        "an integer array", "a number array", "an operand", "operands"};
    if ((unsigned)t >= sizeof terse / sizeof terse[0]) return "unknown";
    return (flags & BK_ATTR_PROSE) ? prose[t] : terse[t];
}

static berth_status wrong_type(bk_attrs a, const char *key, berth_attr_type want, const berth_attr *at,
                               berth_error *err) {
    const char *w = bk_attr_type_name(want, a.flags), *f = bk_attr_type_name(at->type, a.flags);
    if (want == BERTH_ATTR_INT && at->type == BERTH_ATTR_FLOAT) {
        if (a.flags & BK_ATTR_PROSE)
            return attr_err(err, "option '%s' expected %s, found %s (%g)", key, w, f, at->f);
        return attr_err(err, "attribute '%s': expected %s, found %s %g", key, w, f, at->f);
    }
    if (a.flags & BK_ATTR_PROSE) return attr_err(err, "option '%s' expected %s, found %s", key, w, f);
    return attr_err(err, "attribute '%s': expected %s, found %s", key, w, f);
}

static berth_status too_many(bk_attrs a, const char *key, size_t cap, size_t count, berth_error *err) {
    if (a.flags & BK_ATTR_PROSE)
        return attr_err(err, "option '%s' expected at most %zu items, found %zu", key, cap, count);
    return attr_err(err, "attribute '%s': expected at most %zu values, found %zu", key, cap, count);
}

int bk_double_to_int64(double d, int64_t *out) {
    /* NaN fails both comparisons; 2^63 itself is not an int64. */
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return 0;
    int64_t v = (int64_t)d;
    if ((double)v != d) return 0;
    *out = v;
    return 1;
}

berth_status bk_attr_int(bk_attrs a, const char *key, int64_t def, int64_t *out, berth_error *err) {
    const berth_attr *at = bk_attr_find(a, key);
    *out = def;
    if (!at) return BERTH_OK;
    if (at->type == BERTH_ATTR_INT) {
        *out = at->i;
        return BERTH_OK;
    }
    if (!(a.flags & BK_ATTR_EXACT) && at->type == BERTH_ATTR_FLOAT && bk_double_to_int64(at->f, out))
        return BERTH_OK;
    *out = def;
    return wrong_type(a, key, BERTH_ATTR_INT, at, err);
}

berth_status bk_attr_float(bk_attrs a, const char *key, double def, double *out, berth_error *err) {
    const berth_attr *at = bk_attr_find(a, key);
    *out = def;
    if (!at) return BERTH_OK;
    if (at->type == BERTH_ATTR_FLOAT) *out = at->f;
    else if (at->type == BERTH_ATTR_INT) *out = (double)at->i;
    else return wrong_type(a, key, BERTH_ATTR_FLOAT, at, err);
    return BERTH_OK;
}

berth_status bk_attr_bool(bk_attrs a, const char *key, int def, int *out, berth_error *err) {
    const berth_attr *at = bk_attr_find(a, key);
    *out = def;
    if (!at) return BERTH_OK;
    if (at->type == BERTH_ATTR_BOOL || (!(a.flags & BK_ATTR_EXACT) && at->type == BERTH_ATTR_INT)) {
        *out = at->i != 0;
        return BERTH_OK;
    }
    return wrong_type(a, key, BERTH_ATTR_BOOL, at, err);
}

berth_status bk_attr_string(bk_attrs a, const char *key, const char *def, const char **out, berth_error *err) {
    const berth_attr *at = bk_attr_find(a, key);
    *out = def;
    if (!at) return BERTH_OK;
    if (at->type != BERTH_ATTR_STRING || !at->s) return wrong_type(a, key, BERTH_ATTR_STRING, at, err);
    *out = at->s;
    return BERTH_OK;
}

berth_status bk_attr_ints(bk_attrs a, const char *key, int64_t *vals, size_t cap, int *count, berth_error *err) {
    const berth_attr *at = bk_attr_find(a, key);
    *count = -1;
    if (!at) return BERTH_OK;
    if (at->type == BERTH_ATTR_INT) { /* a lone integer reads as a one-item list */
        if (cap < 1) return too_many(a, key, cap, 1, err);
        vals[0] = at->i;
        *count = 1;
        return BERTH_OK;
    }
    if (at->type != BERTH_ATTR_INTS) return wrong_type(a, key, BERTH_ATTR_INTS, at, err);
    if (at->count > cap) return too_many(a, key, cap, at->count, err);
    if (at->count && !at->ints) return attr_err(err, "attribute '%s': %zu values but no array", key, at->count);
    for (size_t i = 0; i < at->count; i++) vals[i] = at->ints[i];
    *count = (int)at->count;
    return BERTH_OK;
}

berth_status bk_attr_floats(bk_attrs a, const char *key, double *vals, size_t cap, int *count, berth_error *err) {
    const berth_attr *at = bk_attr_find(a, key);
    *count = -1;
    if (!at) return BERTH_OK;
    if (at->type != BERTH_ATTR_FLOATS && at->type != BERTH_ATTR_INTS)
        return wrong_type(a, key, BERTH_ATTR_FLOATS, at, err);
    if (at->count > cap) return too_many(a, key, cap, at->count, err);
    int ints = at->type == BERTH_ATTR_INTS;
    if (at->count && (ints ? !at->ints : !at->floats))
        return attr_err(err, "attribute '%s': %zu values but no array", key, at->count);
    for (size_t i = 0; i < at->count; i++) vals[i] = ints ? (double)at->ints[i] : at->floats[i];
    *count = (int)at->count;
    return BERTH_OK;
}

berth_status bk_attr_operand(bk_attrs a, const char *key, uint32_t n_operands, uint32_t *idx, berth_error *err) {
    const berth_attr *at = bk_attr_find(a, key);
    *idx = UINT32_MAX;
    if (!at) return BERTH_OK;
    if (at->type != BERTH_ATTR_OPERAND) return wrong_type(a, key, BERTH_ATTR_OPERAND, at, err);
    if (at->i < 0 || at->i >= (int64_t)n_operands)
        return attr_err(err, "attribute '%s': operand index %lld out of range (%u operands)", key, (long long)at->i,
                        n_operands);
    *idx = (uint32_t)at->i;
    return BERTH_OK;
}
