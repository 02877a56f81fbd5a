/* An infer request read and checked against the model before it is
 * queued, so a worker only ever merges requests it can run: the Open
 * Inference Protocol's inference request JSON object, with tensor data
 * either in "data" (flat or nested, row-major) or, per the binary tensor
 * data extension, as raw little-endian bytes after the JSON.
 *
 * The JSON goes through the engine's own reader (engine/archive/json.c):
 * bounded depth, value count and string length, exact integers, already
 * fuzzed for the archive's headers; here it gets limits sized to the body
 * and a fuzz target of its own. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "json.h"
#include "serve.h"
#include "util.h"

static const struct {
    berth_dtype t;
    const char *name;
} dtypes[] = {
    {BERTH_DTYPE_F32, "FP32"}, {BERTH_DTYPE_F16, "FP16"}, {BERTH_DTYPE_I32, "INT32"},
    {BERTH_DTYPE_U32, "UINT32"}, {BERTH_DTYPE_I64, "INT64"}, {BERTH_DTYPE_U64, "UINT64"},
    {BERTH_DTYPE_I8, "INT8"}, {BERTH_DTYPE_U8, "UINT8"},
};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

const char *serve_dtype_name(berth_dtype t) {
    for (size_t i = 0; i < N_DTYPES; i++)
        if (dtypes[i].t == t) return dtypes[i].name;
    return NULL;
}

berth_dtype serve_dtype_parse(const char *name) {
    for (size_t i = 0; i < N_DTYPES; i++)
        if (!strcmp(dtypes[i].name, name)) return dtypes[i].t;
    return BERTH_DTYPE_INVALID;
}

static int fail(serve_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(serve_error *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->status = 400;
    return -1;
}

/* One JSON number into element i of t's buffer; 0, or -1 naming why. */
static int put_number(const bj_value *v, berth_dtype t, void *buf, size_t i, const char *where,
                      serve_error *e) {
    if (v->type == BJ_BOOL) {
        if (t != BERTH_DTYPE_U8)
            return fail(e, "%s: expected a number, found %s", where, v->boolean ? "true" : "false");
        ((uint8_t *)buf)[i] = (uint8_t)v->boolean;
        return 0;
    }
    if (v->type != BJ_NUMBER)
        return fail(e, "%s: expected a number, found %s", where, bj_type_name(v->type));
    if (t == BERTH_DTYPE_F32 || t == BERTH_DTYPE_F16) {
        errno = 0;
        double d = strtod(v->str, NULL);
        float f = (float)d;
        uint16_t h = t == BERTH_DTYPE_F16 ? berth_f16_from_f32(f) : 0;
        /* Overflow of the double, or a finite double past the dtype's
         * largest value (3.5e38 in FP32, 70000 in FP16), would become an
         * infinity; underflow to 0 or a subnormal is fine. */
        if ((errno == ERANGE && fabs(d) > 1.0) || isinf(f) || (t == BERTH_DTYPE_F16 && (h & 0x7C00) == 0x7C00))
            return fail(e, "%s: %s is outside %s's range", where, v->str, serve_dtype_name(t));
        if (t == BERTH_DTYPE_F32) ((float *)buf)[i] = f;
        else ((uint16_t *)buf)[i] = h;
        return 0;
    }
    int64_t lo;
    uint64_t hi;
    switch (t) {
    case BERTH_DTYPE_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case BERTH_DTYPE_U8: lo = 0, hi = UINT8_MAX; break;
    case BERTH_DTYPE_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case BERTH_DTYPE_U32: lo = 0, hi = UINT32_MAX; break;
    case BERTH_DTYPE_I64: lo = INT64_MIN, hi = INT64_MAX; break;
    default: lo = 0, hi = UINT64_MAX; break; /* U64 */
    }
    uint64_t u = 0;
    int64_t s = 0;
    int negative = v->str[0] == '-';
    if (strpbrk(v->str, ".eE"))
        return fail(e, "%s: expected a whole number for %s, found %s", where, serve_dtype_name(t), v->str);
    if (negative) {
        errno = 0;
        s = strtoll(v->str, NULL, 10);
        if (errno == ERANGE || s < lo)
            return fail(e, "%s: %s is outside %s's range", where, v->str, serve_dtype_name(t));
    } else {
        if (!v->is_uint || v->u > hi)
            return fail(e, "%s: %s is outside %s's range", where, v->str, serve_dtype_name(t));
        u = v->u;
    }
    switch (t) {
    case BERTH_DTYPE_I8: ((int8_t *)buf)[i] = (int8_t)(negative ? s : (int64_t)u); break;
    case BERTH_DTYPE_U8: ((uint8_t *)buf)[i] = (uint8_t)u; break;
    case BERTH_DTYPE_I32: ((int32_t *)buf)[i] = (int32_t)(negative ? s : (int64_t)u); break;
    case BERTH_DTYPE_U32: ((uint32_t *)buf)[i] = (uint32_t)u; break;
    case BERTH_DTYPE_I64: ((int64_t *)buf)[i] = negative ? s : (int64_t)u; break;
    default: ((uint64_t *)buf)[i] = u; break;
    }
    return 0;
}

/* "data": flat or nested row-major arrays, every leaf written in order;
 * *n counts the leaves (up to `want`, beyond which it only counts). */
static int put_data(const bj_value *v, berth_dtype t, void *buf, size_t want, size_t *n,
                    const char *where, serve_error *e) {
    if (v->type != BJ_ARRAY) {
        if (*n < want && put_number(v, t, buf, *n, where, e)) return -1;
        (*n)++;
        return 0;
    }
    for (const bj_value *c = v->first; c; c = c->next)
        if (put_data(c, t, buf, want, n, where, e)) return -1;
    return 0;
}

static const bj_value *member_of(const bj_value *obj, const char *key, bj_type type, int required,
                                 const char *where, serve_error *e, int *bad) {
    const bj_value *v = bj_member(obj, key);
    if (!v) {
        if (required) *bad = fail(e, "%s: missing \"%s\"", where, key);
        return NULL;
    }
    if (v->type != type) {
        *bad = fail(e, "%s.%s: expected %s, found %s", where, key, bj_type_name(type), bj_type_name(v->type));
        return NULL;
    }
    return v;
}

static void shape_text(char *buf, size_t cap, const int64_t *dims, uint32_t rank) {
    size_t o = (size_t)snprintf(buf, cap, "[");
    for (uint32_t d = 0; d < rank && o < cap; d++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", d ? ", " : "", (long long)dims[d]);
    if (o < cap) snprintf(buf + o, cap - o, "]");
}

static void want_text(char *buf, size_t cap, const berth_io_info *io) {
    size_t o = (size_t)snprintf(buf, cap, "[");
    for (uint32_t d = 0; d < io->rank && o < cap; d++)
        o += io->dyn[d] ? (size_t)snprintf(buf + o, cap - o, "%s%s (1 to %lld)", d ? ", " : "", io->dyn[d],
                                           (long long)io->dims[d])
                        : (size_t)snprintf(buf + o, cap - o, "%s%lld", d ? ", " : "", (long long)io->dims[d]);
    if (o < cap) snprintf(buf + o, cap - o, "]");
}

/* The shape of input k, checked against the model's: rank, every static
 * dim, every dyn dim within its max. */
static int read_shape(const bj_value *shape, const berth_io_info *io, const char *where, berth_tensor *t,
                      serve_error *e) {
    char got[256], want[512];
    uint32_t rank = 0;
    for (const bj_value *d = shape->first; d; d = d->next, rank++) {
        if (d->type != BJ_NUMBER || !d->is_uint || d->u > (UINT64_C(1) << 40))
            return fail(e, "%s.shape[%u]: expected a whole number at least 0, found %s", where, rank,
                        d->type == BJ_NUMBER ? d->str : bj_type_name(d->type));
        if (rank < BERTH_MAX_RANK) t->dims[rank] = (int64_t)d->u;
    }
    want_text(want, sizeof want, io);
    if (rank != io->rank)
        return fail(e, "%s.shape: expected rank %u %s, found rank %u", where, io->rank, want, rank);
    t->rank = rank;
    shape_text(got, sizeof got, t->dims, rank);
    for (uint32_t d = 0; d < rank; d++) {
        int ok = io->dyn[d] ? t->dims[d] >= 1 && t->dims[d] <= io->dims[d] : t->dims[d] == io->dims[d];
        if (!ok) return fail(e, "%s.shape: expected %s, found %s (dim %u)", where, want, got, d);
    }
    return 0;
}

/* How many JSON values berth lets a request hold: at most one a byte, and
 * no more than the model's inputs can hold at their largest, so a body of a
 * million tiny numbers costs a refusal, not a tree a hundred times its
 * size. Strings are names. */
static size_t value_limit(const serve_sig *sig, size_t json_len) {
    size_t most = 1024;
    for (uint32_t i = 0; i < sig->n_in; i++) {
        size_t n = 1;
        for (uint32_t d = 0; d < sig->in[i].rank; d++)
            n = n > SIZE_MAX / 2 / (size_t)(sig->in[i].dims[d] ? sig->in[i].dims[d] : 1)
                    ? SIZE_MAX / 2 : n * (size_t)sig->in[i].dims[d];
        /* nested data adds at most one array per leaf */
        most = most > SIZE_MAX / 4 - n ? SIZE_MAX / 4 : most + 2 * n + 64;
    }
    return json_len + 1 < most ? json_len + 1 : most;
}

/* The request's JSON read into the arena and checked to be an object; NULL
 * with e telling the user why: too many values, not JSON at all, or binary
 * tensor data sent without saying where the JSON ends. */
static const bj_value *parse_root(berth_arena *arena, const serve_sig *sig, const char *body, size_t json_len,
                                  size_t header_len, serve_error *e) {
    bj_limits lim = {64, value_limit(sig, json_len), 4096};
    char msg[256];
    bj_value *root = bj_parse(arena, body, json_len, &lim, msg, sizeof msg);
    if (!root) {
        /* binary tensor data sent without saying where the JSON ends */
        int trailing = header_len == SIZE_MAX && strstr(msg, "after the end");
        if (strstr(msg, "values") && strstr(msg, "more than"))
            fail(e, "the request holds more JSON values than the model's inputs take at their largest (%s)", msg);
        else
            fail(e, "the request is not valid JSON: %s%s", msg,
                 trailing ? " (binary tensor data needs an Inference-Header-Content-Length header)" : "");
        return NULL;
    }
    if (root->type != BJ_OBJECT) {
        fail(e, "the request: expected a JSON object, found %s", bj_type_name(root->type));
        return NULL;
    }
    return root;
}

/* The request's own members: "id" copied into out, "parameters"
 * (binary_data_output, timeout) applied, and "inputs" and "outputs" handed
 * back for the readers below. All four are looked up before any refusal,
 * so the user hears of the last one that is wrong. */
static int read_request(const bj_value *root, serve_infer *out, const bj_value **inputs, const bj_value **outputs,
                        int *all_binary, serve_error *e) {
    int bad = 0;
    const bj_value *id = member_of(root, "id", BJ_STRING, 0, "the request", e, &bad);
    const bj_value *params = member_of(root, "parameters", BJ_OBJECT, 0, "the request", e, &bad);
    *inputs = member_of(root, "inputs", BJ_ARRAY, 1, "the request", e, &bad);
    *outputs = member_of(root, "outputs", BJ_ARRAY, 0, "the request", e, &bad);
    if (bad) return -1;
    if (id && id->len > SERVE_MAX_ID)
        return fail(e, "id: expected at most %d bytes, found %zu", SERVE_MAX_ID, id->len);
    if (id) snprintf(out->id, sizeof out->id, "%s", id->str);
    *all_binary = 0;
    if (params) {
        const bj_value *b = member_of(params, "binary_data_output", BJ_BOOL, 0, "parameters", e, &bad);
        const bj_value *t = bj_member(params, "timeout");
        if (bad) return -1;
        *all_binary = b && b->boolean;
        if (t && (t->type != BJ_NUMBER || !t->is_uint || t->u > (UINT64_C(1) << 40)))
            return fail(e, "parameters.timeout: expected a whole number of microseconds, found %s",
                        t->type == BJ_NUMBER ? t->str : bj_type_name(t->type));
        if (t) out->timeout_us = t->u ? (int64_t)t->u : 1;
    }
    return 0;
}

/* The body as the input readers walk it: binary tensor data is taken in
 * the order of "inputs", from `at`, which starts just past the JSON. */
typedef struct body_reader {
    const char *body;
    size_t len, header_len, at;
} body_reader;

/* Which of the model's inputs is called `name`, in *idx; -1 with e listing
 * the inputs the model does have, so the user can fix a misspelt one. */
static int find_input(const serve_sig *sig, const char *name, const char *where, uint32_t *idx, serve_error *e) {
    uint32_t i = 0;
    while (i < sig->n_in && strcmp(sig->in[i].name, name)) i++;
    if (i == sig->n_in) {
        char names[512];
        size_t o = 0;
        for (uint32_t j = 0; j < sig->n_in && o < sizeof names; j++)
            o += (size_t)snprintf(names + o, sizeof names - o, "%s'%s'", j ? ", " : "", sig->in[j].name);
        return fail(e, "%s: the model has no input '%s' (its inputs: %s)", where, name, names);
    }
    *idx = i;
    return 0;
}

/* Input t's buffer, sized from its (already checked) shape and owned by
 * the request from here on; refused when the request could not hold that
 * many values, a 500 when memory runs out. *values: its element count. */
static int alloc_input(berth_tensor *t, size_t len, const char *where, size_t *values, serve_error *e) {
    /* 64-bit: each dim is <= 2^40 (checked), which a 32-bit size_t
     * would wrap before berth_dtype_bytes could refuse it. */
    uint64_t count = 1;
    for (uint32_t d = 0; d < t->rank; d++) count *= (uint64_t)t->dims[d];
    int ok = 1;
    size_t bytes = berth_dtype_bytes(t->dtype, count, &ok);
    /* JSON can't hold more than a byte a value. The bound is 64-bit:
     * len * 8 wraps a 32-bit size_t once a body passes 512 MiB. */
    if (!ok || bytes > (uint64_t)len * 8 + 64)
        return fail(e, "%s.shape: %llu elements is more than the request could hold", where,
                    (unsigned long long)count);
    /* Every datatype of the protocol is whole bytes, so the element
     * count fits in size_t once its bytes do. */
    *values = bytes / (berth_dtype_bits(t->dtype) / 8);
    t->data = malloc(bytes ? bytes : 1);
    if (!t->data) {
        fail(e, "out of memory reading %s", where);
        e->status = 500;
        return -1;
    }
    t->bytes = t->capacity = bytes;
    return 0;
}

/* Input t's data as binary tensor data: parameters.binary_data_size bytes,
 * exactly what its shape needs, taken from the body where the input before
 * it (or the JSON) ended. */
static int read_binary_data(const bj_value *size, const bj_value *data, const char *dtype, berth_tensor *t,
                            body_reader *br, const char *where, serve_error *e) {
    if (size->type != BJ_NUMBER || !size->is_uint)
        return fail(e, "%s.parameters.binary_data_size: expected a whole number of bytes, found %s", where,
                    size->type == BJ_NUMBER ? size->str : bj_type_name(size->type));
    if (br->header_len == SIZE_MAX)
        return fail(e, "%s: binary_data_size is given, but the request has no Inference-Header-Content-Length "
                    "header", where);
    if (data) return fail(e, "%s: both \"data\" and binary_data_size are given", where);
    if (size->u != t->bytes)
        return fail(e, "%s.parameters.binary_data_size: its shape needs %zu bytes of %s, found %llu", where,
                    t->bytes, dtype, (unsigned long long)size->u);
    if (br->len - br->at < t->bytes)
        return fail(e, "%s: binary data of %zu bytes runs past the end of the body (%zu bytes left)", where,
                    t->bytes, br->len - br->at);
    memcpy(t->data, br->body + br->at, t->bytes);
    br->at += t->bytes;
    return 0;
}

/* Input t's data from "data" (flat or nested): exactly as many values as
 * its shape needs, each within its datatype's range. */
static int read_json_data(const bj_value *data, berth_tensor *t, size_t values, const char *where, serve_error *e) {
    if (!data) return fail(e, "%s: missing \"data\" (or parameters.binary_data_size)", where);
    size_t n = 0;
    if (put_data(data, t->dtype, t->data, values, &n, where, e)) return -1;
    if (n != values) {
        char got[256];
        shape_text(got, sizeof got, t->dims, t->rank);
        return fail(e, "%s.data: shape %s needs %zu values, found %zu", where, got, values, n);
    }
    return 0;
}

/* Entry k of "inputs": one of the model's inputs not given before, with
 * the model's datatype and a shape it takes, its data read into out (which
 * owns the buffer, freed with out on any refusal). */
static int read_input(const serve_sig *sig, const bj_value *in, uint32_t k, body_reader *br, serve_infer *out,
                      serve_error *e) {
    char where[320];
    snprintf(where, sizeof where, "inputs[%u]", k);
    if (in->type != BJ_OBJECT) return fail(e, "%s: expected an object, found %s", where, bj_type_name(in->type));
    int bad = 0;
    const bj_value *name = member_of(in, "name", BJ_STRING, 1, where, e, &bad);
    if (bad) return -1;
    uint32_t i = 0;
    if (find_input(sig, name->str, where, &i, e)) return -1;
    berth_tensor *t = &out->in[i];
    if (t->data) return fail(e, "%s: input '%s' is given twice", where, name->str);
    snprintf(where, sizeof where, "inputs[%u] ('%s')", k, name->str);
    const bj_value *dt = member_of(in, "datatype", BJ_STRING, 1, where, e, &bad);
    const bj_value *shape = member_of(in, "shape", BJ_ARRAY, 1, where, e, &bad);
    const bj_value *ip = member_of(in, "parameters", BJ_OBJECT, 0, where, e, &bad);
    if (bad) return -1;
    const berth_io_info *io = &sig->in[i];
    /* WebNN's booleans are uint8 0 and 1: a BOOL tensor feeds a UINT8 input. */
    int as_bool = io->dtype == BERTH_DTYPE_U8 && !strcmp(dt->str, "BOOL");
    if (serve_dtype_parse(dt->str) != io->dtype && !as_bool)
        return fail(e, "%s.datatype: expected %s, found %s", where, serve_dtype_name(io->dtype), dt->str);
    t->dtype = io->dtype;
    if (read_shape(shape, io, where, t, e)) return -1;
    size_t values = 0;
    if (alloc_input(t, br->len, where, &values, e)) return -1;
    const bj_value *size = ip ? bj_member(ip, "binary_data_size") : NULL;
    const bj_value *data = bj_member(in, "data");
    if (size) return read_binary_data(size, data, dt->str, t, br, where, e);
    return read_json_data(data, t, values, where, e);
}

/* "inputs": each of the model's exactly once, in any order, and no binary
 * data left in the body that no input claims. */
static int read_inputs(const serve_sig *sig, const bj_value *inputs, body_reader *br, serve_infer *out,
                       serve_error *e) {
    uint32_t k = 0;
    for (const bj_value *in = inputs->first; in; in = in->next, k++)
        if (read_input(sig, in, k, br, out, e)) return -1;
    if (br->at != br->len)
        return fail(e, "the body has %zu bytes of binary data after the JSON that no input claims",
                    br->len - br->at);
    for (uint32_t i = 0; i < sig->n_in; i++)
        if (!out->in[i].data) return fail(e, "inputs: missing input '%s'", sig->in[i].name);
    return 0;
}

/* One value per dyn dim across inputs, as the executor will bind it: two
 * inputs whose dims follow the same dyn dim must agree on its size. */
static int check_dyn_dims(const serve_sig *sig, const serve_infer *out, serve_error *e) {
    for (uint32_t i = 0; i < sig->n_in; i++)
        for (uint32_t d = 0; d < sig->in[i].rank; d++) {
            if (!sig->in[i].dyn[d]) continue;
            for (uint32_t j = 0; j <= i; j++)
                for (uint32_t d2 = 0; d2 < sig->in[j].rank; d2++)
                    if (sig->in[j].dyn[d2] && !strcmp(sig->in[j].dyn[d2], sig->in[i].dyn[d]) &&
                        out->in[j].dims[d2] != out->in[i].dims[d])
                        return fail(e, "input '%s' dim %u gives %s = %lld, but input '%s' dim %u gives %lld",
                                    sig->in[i].name, d, sig->in[i].dyn[d], (long long)out->in[i].dims[d],
                                    sig->in[j].name, d2, (long long)out->in[j].dims[d2]);
        }
    return 0;
}

/* Entry k of "outputs": one of the model's outputs, marked as wanted, as
 * binary data when its parameters ask; berth does not do the
 * classification extension, so a request for it is refused. */
static int read_output(const serve_sig *sig, const bj_value *o, uint32_t k, serve_infer *out, serve_error *e) {
    char where[320];
    snprintf(where, sizeof where, "outputs[%u]", k);
    if (o->type != BJ_OBJECT) return fail(e, "%s: expected an object, found %s", where, bj_type_name(o->type));
    int bad = 0;
    const bj_value *name = member_of(o, "name", BJ_STRING, 1, where, e, &bad);
    const bj_value *op = member_of(o, "parameters", BJ_OBJECT, 0, where, e, &bad);
    if (bad) return -1;
    uint32_t i = 0;
    while (i < sig->n_out && strcmp(sig->out[i].name, name->str)) i++;
    if (i == sig->n_out) return fail(e, "%s: the model has no output '%s'", where, name->str);
    out->want[i] = 1;
    const bj_value *bin = op ? bj_member(op, "binary_data") : NULL;
    if (bin && bin->type != BJ_BOOL)
        return fail(e, "%s.parameters.binary_data: expected true or false, found %s", where,
                    bj_type_name(bin->type));
    if (bin) out->binary[i] = (uint8_t)bin->boolean;
    if (op && bj_member(op, "classification"))
        return fail(e, "%s.parameters.classification: the classification extension is not supported", where);
    return 0;
}

/* "outputs": all when none are named, as JSON unless asked otherwise. */
static int read_outputs(const serve_sig *sig, const bj_value *outputs, int all_binary, serve_infer *out,
                        serve_error *e) {
    if (!outputs || !outputs->count) memset(out->want, 1, sig->n_out);
    if (all_binary) memset(out->binary, 1, sig->n_out);
    uint32_t k = 0;
    for (const bj_value *o = outputs ? outputs->first : NULL; o; o = o->next, k++)
        if (read_output(sig, o, k, out, e)) return -1;
    return 0;
}

int serve_infer_parse(const serve_sig *sig, const char *body, size_t len, size_t header_len,
                      serve_infer *out, serve_error *e) {
    memset(out, 0, sizeof *out);
    e->status = 0;
    e->msg[0] = 0;
    if (header_len != SIZE_MAX && header_len > len)
        return fail(e, "Inference-Header-Content-Length is %zu, but the body has %zu bytes", header_len, len);
    size_t json_len = header_len == SIZE_MAX ? len : header_len;
    out->in = calloc(sig->n_in ? sig->n_in : 1, sizeof *out->in);
    out->want = calloc(sig->n_out ? sig->n_out : 1, 1);
    out->binary = calloc(sig->n_out ? sig->n_out : 1, 1);
    berth_arena *arena = berth_arena_new();
    int rc = -1, all_binary = 0;
    const bj_value *root, *inputs = NULL, *outputs = NULL;
    body_reader br = {body, len, header_len, json_len};
    if (!out->in || !out->want || !out->binary || !arena) {
        fail(e, "out of memory reading the request");
        e->status = 500;
        goto done;
    }
    root = parse_root(arena, sig, body, json_len, header_len, e);
    if (!root || read_request(root, out, &inputs, &outputs, &all_binary, e)) goto done;
    if (read_inputs(sig, inputs, &br, out, e) || check_dyn_dims(sig, out, e)) goto done;
    /* The batch: the rows this request adds to a merged run. */
    out->rows = sig->batch && sig->n_in ? out->in[0].dims[0] : 1;
    if (read_outputs(sig, outputs, all_binary, out, e)) goto done;
    rc = 0;
done:
    berth_arena_free(arena);
    if (rc) serve_infer_free(sig, out);
    return rc;
}

void serve_infer_free(const serve_sig *sig, serve_infer *r) {
    if (r->in)
        for (uint32_t i = 0; i < sig->n_in; i++) free(r->in[i].data);
    free(r->in);
    free(r->want);
    free(r->binary);
    r->in = NULL;
    r->want = r->binary = NULL;
}
