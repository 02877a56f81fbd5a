/* Error formatting, dtype facts and the attribute readers every op uses.
 * Attribute readers check the attribute's type so a graph that spells
 * `axis=1.5` fails with the key and both types named. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_internal.h"

void cpu_errf(berth_error *err, const char *fmt, ...) {
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

size_t cpu_dtype_size(berth_dtype t) {
    switch (t) {
    case BERTH_DTYPE_F32: case BERTH_DTYPE_I32: case BERTH_DTYPE_U32: return 4;
    case BERTH_DTYPE_F16: return 2;
    case BERTH_DTYPE_I64: case BERTH_DTYPE_U64: return 8;
    case BERTH_DTYPE_I8: case BERTH_DTYPE_U8: return 1;
    default: return 0;
    }
}

const char *cpu_dtype_name(berth_dtype t) {
    static const char *const names[] = {"invalid", "float32", "float16", "int32", "uint32", "int64",
                                        "uint64",  "int8",    "uint8",   "int4",  "uint4"};
    if ((unsigned)t < sizeof names / sizeof names[0]) return names[t];
    return "invalid";
}

uint64_t cpu_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

berth_status cpu_fail(cpu_prep *c, const char *fmt, ...) {
    char tail[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tail, sizeof tail, fmt, ap);
    va_end(ap);
    cpu_errf(c->err, "node '%s' (%s): %s", c->node->name ? c->node->name : "?", c->node->op, tail);
    return BERTH_ERR_INVALID;
}

berth_status cpu_check_counts(cpu_prep *c, uint32_t in_min, uint32_t in_max, uint32_t n_out) {
    const berth_node *n = c->node;
    if (n->n_inputs < in_min || n->n_inputs > in_max) {
        if (in_min == in_max)
            return cpu_fail(c, "expected %u inputs, found %u", in_min, n->n_inputs);
        return cpu_fail(c, "expected %u to %u inputs, found %u", in_min, in_max, n->n_inputs);
    }
    if (n_out != CPU_NONE && n->n_outputs != n_out)
        return cpu_fail(c, "expected %u outputs, found %u", n_out, n->n_outputs);
    return BERTH_OK;
}

void *cpu_params(cpu_prep *c, size_t bytes) {
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        cpu_fail(c, "out of memory for %zu bytes of parameters", bytes);
        return NULL;
    }
    c->cn->params = p;
    c->cn->params_bytes = bytes;
    return p;
}

const berth_attr *cpu_attr(const cpu_prep *c, const char *key) {
    for (uint32_t i = 0; i < c->node->n_attrs; i++)
        if (c->node->attrs[i].key && strcmp(c->node->attrs[i].key, key) == 0) return &c->node->attrs[i];
    return NULL;
}

static const char *attr_type_name(berth_attr_type t) {
    static const char *const names[] = {"null", "int", "float", "bool", "string", "ints", "floats",
                                        "operand", "operands"};
    return (unsigned)t < 9 ? names[t] : "unknown";
}

static berth_status wrong_type(cpu_prep *c, const berth_attr *a, const char *want) {
    return cpu_fail(c, "attribute '%s': expected %s, found %s", a->key, want, attr_type_name(a->type));
}

berth_status cpu_attr_int(cpu_prep *c, const char *key, int64_t def, int64_t *out) {
    const berth_attr *a = cpu_attr(c, key);
    *out = def;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type == BERTH_ATTR_INT) { *out = a->i; return BERTH_OK; }
    if (a->type == BERTH_ATTR_FLOAT && a->f == (double)(int64_t)a->f) { *out = (int64_t)a->f; return BERTH_OK; }
    return wrong_type(c, a, "int");
}

berth_status cpu_attr_float(cpu_prep *c, const char *key, double def, double *out) {
    const berth_attr *a = cpu_attr(c, key);
    *out = def;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type == BERTH_ATTR_FLOAT) { *out = a->f; return BERTH_OK; }
    if (a->type == BERTH_ATTR_INT) { *out = (double)a->i; return BERTH_OK; }
    return wrong_type(c, a, "float");
}

berth_status cpu_attr_bool(cpu_prep *c, const char *key, int def, int *out) {
    const berth_attr *a = cpu_attr(c, key);
    *out = def;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type == BERTH_ATTR_BOOL || a->type == BERTH_ATTR_INT) { *out = a->i != 0; return BERTH_OK; }
    return wrong_type(c, a, "bool");
}

berth_status cpu_attr_string(cpu_prep *c, const char *key, const char *def, const char **out) {
    const berth_attr *a = cpu_attr(c, key);
    *out = def;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type == BERTH_ATTR_STRING && a->s) { *out = a->s; return BERTH_OK; }
    return wrong_type(c, a, "string");
}

berth_status cpu_attr_ints(cpu_prep *c, const char *key, int64_t *vals, int cap, int *n) {
    const berth_attr *a = cpu_attr(c, key);
    *n = -1;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type == BERTH_ATTR_INT) { /* a lone integer reads as a one-element list */
        vals[0] = a->i;
        *n = 1;
        return BERTH_OK;
    }
    if (a->type != BERTH_ATTR_INTS) return wrong_type(c, a, "ints");
    if (a->count > (size_t)cap)
        return cpu_fail(c, "attribute '%s': expected at most %d values, found %zu", key, cap, a->count);
    for (size_t i = 0; i < a->count; i++) vals[i] = a->ints[i];
    *n = (int)a->count;
    return BERTH_OK;
}

berth_status cpu_attr_floats(cpu_prep *c, const char *key, double *vals, int cap, int *n) {
    const berth_attr *a = cpu_attr(c, key);
    *n = -1;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type == BERTH_ATTR_INTS) {
        if (a->count > (size_t)cap)
            return cpu_fail(c, "attribute '%s': expected at most %d values, found %zu", key, cap, a->count);
        for (size_t i = 0; i < a->count; i++) vals[i] = (double)a->ints[i];
        *n = (int)a->count;
        return BERTH_OK;
    }
    if (a->type != BERTH_ATTR_FLOATS) return wrong_type(c, a, "floats");
    if (a->count > (size_t)cap)
        return cpu_fail(c, "attribute '%s': expected at most %d values, found %zu", key, cap, a->count);
    for (size_t i = 0; i < a->count; i++) vals[i] = a->floats[i];
    *n = (int)a->count;
    return BERTH_OK;
}

berth_status cpu_attr_operand(cpu_prep *c, const char *key, uint32_t *idx) {
    const berth_attr *a = cpu_attr(c, key);
    *idx = CPU_NONE;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type != BERTH_ATTR_OPERAND) return wrong_type(c, a, "operand");
    if (a->i < 0 || a->i >= (int64_t)c->g->n_operands)
        return cpu_fail(c, "attribute '%s': operand index %lld out of range (%u operands)", key,
                        (long long)a->i, c->g->n_operands);
    *idx = (uint32_t)a->i;
    return BERTH_OK;
}

berth_status cpu_check_same_dtype(cpu_prep *c, uint32_t n_same, uint32_t mask) {
    berth_dtype t = cpu_out(c, 0)->dtype;
    if (!(mask & CPU_BIT(t)))
        return cpu_fail(c, "output dtype %s is not supported", cpu_dtype_name(t));
    for (uint32_t i = 0; i < n_same && i < c->node->n_inputs; i++)
        if (cpu_in(c, i)->dtype != t)
            return cpu_fail(c, "input %u: expected dtype %s, found %s", i, cpu_dtype_name(t),
                            cpu_dtype_name(cpu_in(c, i)->dtype));
    return BERTH_OK;
}

void cpu_dims_str(const int64_t *dims, uint32_t rank, char *buf, size_t cap) {
    size_t at = 0;
    at += (size_t)snprintf(buf, cap, "[");
    for (uint32_t i = 0; i < rank && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, i ? ", %lld" : "%lld", (long long)dims[i]);
    if (at < cap) snprintf(buf + at, cap - at, "]");
}

berth_status cpu_check_out_dims(cpu_prep *c, uint32_t out, uint32_t rank, const int64_t *dims) {
    const cpu_opnd *o = cpu_out(c, out);
    int same = o->rank == rank;
    for (uint32_t i = 0; same && i < rank; i++) same = o->dims[i] == dims[i];
    if (same) return BERTH_OK;
    char want[128], got[128];
    cpu_dims_str(dims, rank, want, sizeof want);
    cpu_dims_str(o->dims, o->rank, got, sizeof got);
    return cpu_fail(c, "output %u: expected shape %s, found %s", out, want, got);
}

berth_status cpu_axis(cpu_prep *c, int64_t a, uint32_t rank, const char *what, uint32_t *axis) {
    if (a < -(int64_t)rank || a >= (int64_t)rank)
        return cpu_fail(c, "%s %lld out of range for rank %u", what, (long long)a, rank);
    *axis = (uint32_t)(a < 0 ? a + (int64_t)rank : a);
    return BERTH_OK;
}
