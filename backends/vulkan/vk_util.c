/* Error formatting, dtype facts, and the attribute readers every op uses.
 * The readers check each attribute's type, so `axis=1.5` fails naming the
 * key and both types instead of being read as something else. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vk_internal.h"

void vk_errf(berth_error *err, const char *fmt, ...) {
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

const char *vk_result_str(VkResult r) {
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VkResult error";
    }
}

size_t vk_dtype_size(berth_dtype t) {
    switch (t) {
    case BERTH_DTYPE_F32: case BERTH_DTYPE_I32: case BERTH_DTYPE_U32: return 4;
    case BERTH_DTYPE_F16: return 2;
    case BERTH_DTYPE_I64: case BERTH_DTYPE_U64: return 8;
    case BERTH_DTYPE_I8: case BERTH_DTYPE_U8: return 1;
    default: return 0;
    }
}

const char *vk_dtype_name(berth_dtype t) {
    static const char *const names[] = {"invalid", "float32", "float16", "int32", "uint32", "int64",
                                        "uint64",  "int8",    "uint8",   "int4",  "uint4"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "invalid";
}

void vk_dims_str(const int64_t *dims, uint32_t rank, char *buf, size_t cap) {
    size_t at = (size_t)snprintf(buf, cap, "[");
    for (uint32_t i = 0; i < rank && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, i ? ", %lld" : "%lld", (long long)dims[i]);
    if (at < cap) snprintf(buf + at, cap - at, "]");
}

uint32_t vk_groups(uint64_t n, uint32_t local) {
    uint64_t g = (n + local - 1) / local;
    if (g < 1) g = 1;
    return g > VK_MAX_GROUPS ? VK_MAX_GROUPS : (uint32_t)g;
}

static berth_status node_msg(vk_prep *c, berth_status st, const char *fmt, va_list ap) {
    char tail[400];
    vsnprintf(tail, sizeof tail, fmt, ap);
    vk_errf(c->err, "node '%s' (%s): %s", c->node->name ? c->node->name : "?", c->node->op, tail);
    return st;
}

berth_status vk_fail(vk_prep *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    berth_status st = node_msg(c, BERTH_ERR_INVALID, fmt, ap);
    va_end(ap);
    return st;
}

berth_status vk_unsupported(vk_prep *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    berth_status st = node_msg(c, BERTH_ERR_UNSUPPORTED, fmt, ap);
    va_end(ap);
    return st;
}

berth_status vk_check_counts(vk_prep *c, uint32_t in_min, uint32_t in_max, uint32_t n_out) {
    const berth_node *n = c->node;
    if (n->n_inputs < in_min || n->n_inputs > in_max) {
        if (in_min == in_max) return vk_fail(c, "expected %u inputs, found %u", in_min, n->n_inputs);
        return vk_fail(c, "expected %u to %u inputs, found %u", in_min, in_max, n->n_inputs);
    }
    if (n_out != VK_NONE && n->n_outputs != n_out)
        return vk_fail(c, "expected %u outputs, found %u", n_out, n->n_outputs);
    return BERTH_OK;
}

const berth_attr *vk_attr(const vk_prep *c, const char *key) {
    for (uint32_t i = 0; i < c->node->n_attrs; i++)
        if (c->node->attrs[i].key && strcmp(c->node->attrs[i].key, key) == 0) return &c->node->attrs[i];
    return NULL;
}

static berth_status wrong_type(vk_prep *c, const berth_attr *a, const char *want) {
    static const char *const names[] = {"null", "int", "float", "bool", "string", "ints", "floats",
                                        "operand", "operands"};
    return vk_fail(c, "attribute '%s': expected %s, found %s", a->key, want,
                   (unsigned)a->type < 9 ? names[a->type] : "unknown");
}

berth_status vk_attr_int(vk_prep *c, const char *key, int64_t def, int64_t *out) {
    const berth_attr *a = vk_attr(c, key);
    *out = def;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type == BERTH_ATTR_INT) {
        *out = a->i;
        return BERTH_OK;
    }
    if (a->type == BERTH_ATTR_FLOAT && a->f >= -9e18 && a->f <= 9e18 && a->f == (double)(int64_t)a->f) {
        *out = (int64_t)a->f;
        return BERTH_OK;
    }
    return wrong_type(c, a, "int");
}

berth_status vk_attr_float(vk_prep *c, const char *key, double def, double *out) {
    const berth_attr *a = vk_attr(c, key);
    *out = def;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type == BERTH_ATTR_FLOAT) *out = a->f;
    else if (a->type == BERTH_ATTR_INT) *out = (double)a->i;
    else return wrong_type(c, a, "float");
    return BERTH_OK;
}

berth_status vk_attr_bool(vk_prep *c, const char *key, int def, int *out) {
    const berth_attr *a = vk_attr(c, key);
    *out = def;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type != BERTH_ATTR_BOOL && a->type != BERTH_ATTR_INT) return wrong_type(c, a, "bool");
    *out = a->i != 0;
    return BERTH_OK;
}

berth_status vk_attr_string(vk_prep *c, const char *key, const char *def, const char **out) {
    const berth_attr *a = vk_attr(c, key);
    *out = def;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type != BERTH_ATTR_STRING || !a->s) return wrong_type(c, a, "string");
    *out = a->s;
    return BERTH_OK;
}

berth_status vk_attr_ints(vk_prep *c, const char *key, int64_t *vals, int cap, int *n) {
    const berth_attr *a = vk_attr(c, key);
    *n = -1;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type == BERTH_ATTR_INT) { /* a lone integer reads as a one-element list */
        vals[0] = a->i;
        *n = 1;
        return BERTH_OK;
    }
    if (a->type != BERTH_ATTR_INTS) return wrong_type(c, a, "ints");
    if (a->count > (size_t)cap)
        return vk_fail(c, "attribute '%s': expected at most %d values, found %zu", key, cap, a->count);
    if (a->count && !a->ints) return vk_fail(c, "attribute '%s': %zu values but no array", key, a->count);
    for (size_t i = 0; i < a->count; i++) vals[i] = a->ints[i];
    *n = (int)a->count;
    return BERTH_OK;
}

berth_status vk_attr_operand(vk_prep *c, const char *key, uint32_t *idx) {
    const berth_attr *a = vk_attr(c, key);
    *idx = VK_NONE;
    if (!a || a->type == BERTH_ATTR_NULL) return BERTH_OK;
    if (a->type != BERTH_ATTR_OPERAND) return wrong_type(c, a, "operand");
    if (a->i < 0 || a->i >= (int64_t)c->g->n_operands)
        return vk_fail(c, "attribute '%s': operand index %lld out of range (%u operands)", key, (long long)a->i,
                       c->g->n_operands);
    *idx = (uint32_t)a->i;
    return BERTH_OK;
}

berth_status vk_check_same_dtype(vk_prep *c, uint32_t n_same, uint32_t mask) {
    berth_dtype t = vk_out(c, 0)->dtype;
    if (!(mask & VK_BIT(t))) return vk_unsupported(c, "dtype %s is not supported by the vulkan backend", vk_dtype_name(t));
    for (uint32_t i = 0; i < n_same && i < c->node->n_inputs; i++)
        if (vk_in(c, i)->dtype != t)
            return vk_fail(c, "input %u: expected dtype %s, found %s", i, vk_dtype_name(t),
                           vk_dtype_name(vk_in(c, i)->dtype));
    return BERTH_OK;
}

berth_status vk_check_out_dims(vk_prep *c, uint32_t out, uint32_t rank, const int64_t *dims) {
    const vk_opnd *o = vk_out(c, out);
    int same = o->rank == rank;
    for (uint32_t i = 0; same && i < rank; i++) same = o->dims[i] == dims[i];
    if (same) return BERTH_OK;
    char want[128], got[128];
    vk_dims_str(dims, rank, want, sizeof want);
    vk_dims_str(o->dims, o->rank, got, sizeof got);
    return vk_fail(c, "output %u: expected shape %s, found %s", out, want, got);
}

berth_status vk_axis(vk_prep *c, int64_t a, uint32_t rank, const char *what, uint32_t *axis) {
    if (a < -(int64_t)rank || a >= (int64_t)rank)
        return vk_fail(c, "%s %lld out of range for rank %u", what, (long long)a, rank);
    *axis = (uint32_t)(a < 0 ? a + (int64_t)rank : a);
    return BERTH_OK;
}
