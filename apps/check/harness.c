/* See module_harness.h. */
#include "harness.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- host services ---- */

static pthread_mutex_t mh_mu = PTHREAD_MUTEX_INITIALIZER;

static uint32_t mh_option_count(void *ctx) { return ((mh_host *)ctx)->n_options; }

static berth_status mh_option_at(void *ctx, uint32_t i, const char **key, const char **value) {
    mh_host *h = ctx;
    if (i >= h->n_options) return BERTH_ERR_INVALID;
    *key = h->keys[i];
    *value = h->values[i];
    return BERTH_OK;
}

static void mh_log(void *ctx, berth_log_level level, const char *msg) {
    static const char *const names[] = {"error", "warn", "info", "debug"};
    mh_host *h = ctx;
    pthread_mutex_lock(&mh_mu);
    if (h->log_len < sizeof h->log - 1) {
        int n = snprintf(h->log + h->log_len, sizeof h->log - h->log_len, "%s: %s\n",
                         (unsigned)level < 4 ? names[level] : "?", msg ? msg : "(null)");
        if (n > 0) h->log_len += (size_t)n < sizeof h->log - h->log_len ? (size_t)n : sizeof h->log - 1 - h->log_len;
    }
    h->log_lines++;
    pthread_mutex_unlock(&mh_mu);
}

static void *mh_alloc(void *ctx, size_t bytes, size_t align) {
    mh_host *h = ctx;
    void *p = NULL;
    if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, bytes ? bytes : 1)) return NULL;
    pthread_mutex_lock(&mh_mu);
    h->allocs++;
    pthread_mutex_unlock(&mh_mu);
    return p;
}

static void mh_free(void *ctx, void *p) {
    mh_host *h = ctx;
    if (p) {
        pthread_mutex_lock(&mh_mu);
        h->frees++;
        pthread_mutex_unlock(&mh_mu);
    }
    free(p);
}

void mh_host_init(mh_host *h) {
    memset(h, 0, sizeof *h);
    h->services = (berth_host_services){
        .abi_version = BERTH_BACKEND_ABI_VERSION, .struct_size = sizeof(berth_host_services), .ctx = h,
        .log = mh_log, .option_count = mh_option_count, .option_at = mh_option_at, .alloc = mh_alloc,
        .free = mh_free,
    };
}

void mh_host_option(mh_host *h, const char *key, const char *value) {
    if (h->n_options == MH_MAX_OPTIONS) {
        fprintf(stderr, "module_harness: more than %d options\n", MH_MAX_OPTIONS);
        abort();
    }
    h->keys[h->n_options] = key;
    h->values[h->n_options] = value;
    h->n_options++;
}

void mh_host_clear_options(mh_host *h) { h->n_options = 0; }

void mh_host_clear_log(mh_host *h) {
    pthread_mutex_lock(&mh_mu);
    h->log[0] = 0;
    h->log_len = 0;
    h->log_lines = 0;
    pthread_mutex_unlock(&mh_mu);
}

void *mh_host_alloc(mh_host *h, size_t bytes, size_t alignment) { return mh_alloc(h, bytes, alignment); }
void mh_host_free(mh_host *h, void *p) { mh_free(h, p); }

/* ---- modules ---- */

static berth_status mh_fail(mh_module *m, berth_error *err, berth_status st, const char *fmt, const char *a,
                            unsigned long x, unsigned long y) {
    char what[BERTH_ERROR_CAP - 64];
    snprintf(what, sizeof what, fmt, a, x, y);
    snprintf(err->msg, sizeof err->msg, "%s: %s", m->path ? m->path : "(no path)", what);
    if (m->so) dlclose(m->so);
    memset(m, 0, sizeof *m);
    return st;
}

berth_status mh_load_version(mh_module *m, const char *path, mh_host *host, uint32_t abi_version,
                             berth_error *err) {
    memset(m, 0, sizeof *m);
    m->path = path;
    m->host = host;
    m->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!m->so) return mh_fail(m, err, BERTH_ERR_IO, "dlopen: %s", dlerror(), 0, 0);
    union {
        void *obj;
        berth_backend_entry_fn fn;
    } entry;
    entry.obj = dlsym(m->so, BERTH_BACKEND_ENTRY_SYMBOL);
    if (!entry.obj) return mh_fail(m, err, BERTH_ERR_INVALID, "no %s symbol", BERTH_BACKEND_ENTRY_SYMBOL, 0, 0);
    berth_error why = {{0}};
    const berth_backend *be = entry.fn(abi_version, &host->services, &why);
    if (!be) return mh_fail(m, err, BERTH_ERR_UNSUPPORTED, "the entry refused: %s", why.msg, 0, 0);
    if (be->abi_version < BERTH_BACKEND_ABI_V1_0 || be->abi_version > abi_version)
        return mh_fail(m, err, BERTH_ERR_UNSUPPORTED, "%sasked for ABI version %lu, the table says %lu", "",
                       abi_version, be->abi_version);
    size_t least = BERTH_BACKEND_MIN_SIZE(be->abi_version);
    if (be->struct_size < least)
        return mh_fail(m, err, BERTH_ERR_INVALID, "%sthe table is %lu bytes, its version needs at least %lu", "",
                       be->struct_size, least);
    if (!be->name || !be->name[0]) return mh_fail(m, err, BERTH_ERR_INVALID, "%sthe table has no name", "", 0, 0);
    m->be = be;
    return BERTH_OK;
}

berth_status mh_load(mh_module *m, const char *path, mh_host *host, berth_error *err) {
    return mh_load_version(m, path, host, BERTH_BACKEND_ABI_VERSION, err);
}

berth_status mh_open(mh_module *m, berth_error *err) {
    m->dev = NULL;
    return m->be->open(&m->host->services, &m->dev, err);
}

void mh_close(mh_module *m) {
    if (m->be && m->dev) m->be->close(m->dev);
    m->dev = NULL;
}

void mh_unload(mh_module *m) {
    mh_close(m);
    if (m->so) dlclose(m->so);
    memset(m, 0, sizeof *m);
}

int mh_has_supports_node(const berth_backend *be) {
    return be->abi_version >= BERTH_BACKEND_ABI_V1_1 && be->struct_size >= BERTH_BACKEND_V1_1_MIN_SIZE &&
           be->supports_node != NULL;
}

berth_status mh_supports(const mh_module *m, const berth_graph_desc *g, uint32_t node, berth_error *err) {
    if (mh_has_supports_node(m->be)) return m->be->supports_node(m->dev, g, node, err);
    const berth_node *n = &g->nodes[node];
    uint32_t o = n->n_inputs ? n->inputs[0] : n->outputs[0];
    return m->be->supports_op(m->dev, n->op, g->operands[o].dtype, err);
}

/* ---- graph builder ---- */

static void tg_full(const char *what) {
    fprintf(stderr, "module_harness: the graph builder has no room for another %s\n", what);
    abort();
}

void tg_init(tgraph *g) { memset(g, 0, sizeof *g); }

uint32_t tg_operand(tgraph *g, const char *name, berth_operand_kind kind, berth_dtype t, uint32_t rank,
                    const int64_t *dims) {
    if (g->n_ops == TG_MAX_OPERANDS) tg_full("operand");
    berth_operand *o = &g->ops[g->n_ops];
    memset(o, 0, sizeof *o);
    o->name = name;
    o->kind = kind;
    o->dtype = t;
    o->rank = rank;
    for (uint32_t i = 0; i < rank; i++) o->dims[i] = dims[i];
    return g->n_ops++;
}

uint32_t tg_input(tgraph *g, const char *name, berth_dtype t, uint32_t rank, const int64_t *dims) {
    if (g->n_ins == TG_MAX_IO) tg_full("input");
    uint32_t i = tg_operand(g, name, BERTH_OPERAND_INPUT, t, rank, dims);
    g->ins[g->n_ins++] = i;
    return i;
}

uint32_t tg_value(tgraph *g, const char *name, berth_dtype t, uint32_t rank, const int64_t *dims) {
    return tg_operand(g, name, BERTH_OPERAND_VALUE, t, rank, dims);
}

uint32_t tg_const(tgraph *g, const char *name, berth_dtype t, uint32_t rank, const int64_t *dims,
                  const void *data, size_t bytes) {
    uint32_t i = tg_operand(g, name, BERTH_OPERAND_CONSTANT, t, rank, dims);
    g->ops[i].data = data;
    g->ops[i].bytes = bytes;
    return i;
}

uint32_t tg_weight(tgraph *g, const char *name, uint32_t id, uint32_t rank, const int64_t *dims) {
    uint32_t i = tg_operand(g, name, BERTH_OPERAND_WEIGHT, BERTH_DTYPE_F32, rank, dims);
    g->ops[i].weight = id;
    return i;
}

void tg_output(tgraph *g, uint32_t o) {
    if (g->n_outs == TG_MAX_IO) tg_full("output");
    g->outs[g->n_outs++] = o;
}

void tg_node(tgraph *g, const char *op, uint32_t n_in, const uint32_t *in, uint32_t n_out, const uint32_t *out,
             uint32_t n_attrs, const berth_attr *attrs) {
    if (g->n_nodes == TG_MAX_NODES) tg_full("node");
    if (g->n_idx + n_in + n_out > sizeof g->idx / sizeof g->idx[0]) tg_full("operand index");
    if (g->n_attrs + n_attrs > sizeof g->attrs / sizeof g->attrs[0]) tg_full("attribute");
    berth_node *n = &g->nodes[g->n_nodes++];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->name = g->ops[out[0]].name;
    n->n_inputs = n_in;
    n->inputs = g->idx + g->n_idx;
    if (n_in) memcpy(g->idx + g->n_idx, in, sizeof(uint32_t) * n_in);
    g->n_idx += n_in;
    n->n_outputs = n_out;
    n->outputs = g->idx + g->n_idx;
    memcpy(g->idx + g->n_idx, out, sizeof(uint32_t) * n_out);
    g->n_idx += n_out;
    n->n_attrs = n_attrs;
    n->attrs = g->attrs + g->n_attrs;
    if (n_attrs) memcpy(g->attrs + g->n_attrs, attrs, sizeof(berth_attr) * n_attrs);
    for (uint32_t k = 0; k < n_attrs; k++) {
        berth_attr *a = &g->attrs[g->n_attrs + k];
        if (a->ints && a->count) {
            if (g->n_ints + a->count > sizeof g->ints / sizeof g->ints[0]) tg_full("integer attribute value");
            memcpy(g->ints + g->n_ints, a->ints, sizeof(int64_t) * a->count);
            a->ints = g->ints + g->n_ints;
            g->n_ints += (uint32_t)a->count;
        }
        if (a->floats && a->count) {
            if (g->n_floats + a->count > sizeof g->floats / sizeof g->floats[0]) tg_full("float attribute value");
            memcpy(g->floats + g->n_floats, a->floats, sizeof(double) * a->count);
            a->floats = g->floats + g->n_floats;
            g->n_floats += (uint32_t)a->count;
        }
    }
    g->n_attrs += n_attrs;
}

berth_graph_desc tg_desc(const tgraph *g) {
    berth_graph_desc d = {
        .struct_size = sizeof(berth_graph_desc), .n_operands = g->n_ops, .operands = g->ops,
        .n_nodes = g->n_nodes, .nodes = g->nodes, .n_inputs = g->n_ins, .inputs = g->ins,
        .n_outputs = g->n_outs, .outputs = g->outs, .operand_size = sizeof(berth_operand),
        .node_size = sizeof(berth_node), .attr_size = sizeof(berth_attr), .tensor_size = sizeof(berth_tensor),
    };
    return d;
}

/* ---- tensors and running ---- */

size_t h_numel(const berth_operand *o) {
    size_t n = 1;
    for (uint32_t i = 0; i < o->rank; i++) n *= (size_t)o->dims[i];
    return n;
}

size_t h_esize(berth_dtype t) {
    switch (t) {
    case BERTH_DTYPE_I64:
    case BERTH_DTYPE_U64: return 8;
    case BERTH_DTYPE_F32:
    case BERTH_DTYPE_I32:
    case BERTH_DTYPE_U32: return 4;
    case BERTH_DTYPE_F16: return 2;
    default: return 1;
    }
}

size_t h_bytes(const berth_operand *o) {
    int packed = o->dtype == BERTH_DTYPE_I4 || o->dtype == BERTH_DTYPE_U4;
    return packed ? (h_numel(o) + 1) / 2 : h_numel(o) * h_esize(o->dtype);
}

berth_tensor h_tensor(const berth_operand *o, void *data) {
    berth_tensor t = {.dtype = o->dtype, .rank = o->rank, .data = data};
    memcpy(t.dims, o->dims, sizeof t.dims);
    t.bytes = h_bytes(o);
    return t;
}

berth_status mh_run(const mh_module *m, const tgraph *g, berth_weights *w, void *const *in, void *const *out,
                    berth_error *err) {
    berth_graph_desc d = tg_desc(g);
    berth_plan *p = NULL;
    berth_status st = m->be->plan(m->dev, w, &d, &p, err);
    if (st) return st;
    berth_tensor ti[TG_MAX_IO], to[TG_MAX_IO];
    for (uint32_t i = 0; i < g->n_ins; i++) ti[i] = h_tensor(&g->ops[g->ins[i]], in[i]);
    for (uint32_t i = 0; i < g->n_outs; i++) to[i] = h_tensor(&g->ops[g->outs[i]], out[i]);
    st = m->be->run(p, ti, g->n_ins, to, g->n_outs, err);
    m->be->free_plan(p);
    return st;
}

/* ---- data ---- */

static uint64_t h_rng = 0x9e3779b97f4a7c15ull;

double h_rand(void) {
    h_rng ^= h_rng << 13;
    h_rng ^= h_rng >> 7;
    h_rng ^= h_rng << 17;
    return (double)(h_rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

float *h_randf(size_t n) {
    float *p = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = (float)h_rand();
    return p;
}

double *h_zeros(size_t n) { return calloc(n ? n : 1, sizeof(double)); }

void h_unravel(size_t i, uint32_t rank, const int64_t *dims, int64_t *idx) {
    for (int d = (int)rank - 1; d >= 0; d--) {
        idx[d] = (int64_t)(i % (size_t)dims[d]);
        i /= (size_t)dims[d];
    }
}

size_t h_bcast_off(const int64_t *oidx, uint32_t orank, uint32_t rank, const int64_t *dims) {
    size_t off = 0;
    for (uint32_t d = 0; d < rank; d++) {
        int64_t i = oidx[orank - rank + d];
        off = off * (size_t)dims[d] + (size_t)(dims[d] == 1 ? 0 : i);
    }
    return off;
}

/* ---- comparison ---- */

static void mh_report(const char *what, const char *output, size_t bad, size_t n, size_t first, const char *want,
                      const char *got) {
    fprintf(stderr, "  %s%s%s: %zu of %zu differ; first [%zu] expected %s, found %s\n", what ? what : "(case)",
            output ? ": output " : "", output ? output : "", bad, n, first, want, got);
}

size_t mh_compare_f32(const char *what, const char *output, const float *got, const double *want, size_t n,
                      double rtol, double atol) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        int ok = d <= atol + rtol * fabs(want[i]) || (isnan(want[i]) && isnan(got[i])) ||
                 (isinf(want[i]) && (double)got[i] == want[i]);
        if (!ok && bad++ == 0) first = i;
    }
    if (bad) {
        char w[48], g[48];
        snprintf(w, sizeof w, "%.9g", want[first]);
        snprintf(g, sizeof g, "%.9g", (double)got[first]);
        mh_report(what, output, bad, n, first, w, g);
    }
    return bad;
}

int64_t mh_int_at(berth_dtype t, const void *p, size_t i) {
    switch (t) {
    case BERTH_DTYPE_I64: return ((const int64_t *)p)[i];
    case BERTH_DTYPE_U64: return (int64_t)((const uint64_t *)p)[i];
    case BERTH_DTYPE_I32: return ((const int32_t *)p)[i];
    case BERTH_DTYPE_U32: return ((const uint32_t *)p)[i];
    case BERTH_DTYPE_F16: return ((const uint16_t *)p)[i];
    case BERTH_DTYPE_I8: return ((const int8_t *)p)[i];
    case BERTH_DTYPE_U8: return ((const uint8_t *)p)[i];
    case BERTH_DTYPE_I4: {
        int v = (((const uint8_t *)p)[i / 2] >> (i % 2 ? 4 : 0)) & 15;
        return v >= 8 ? v - 16 : v;
    }
    case BERTH_DTYPE_U4: return (((const uint8_t *)p)[i / 2] >> (i % 2 ? 4 : 0)) & 15;
    default: return 0;
    }
}

size_t mh_compare_int(const char *what, const char *output, berth_dtype t, const void *got, const int64_t *want,
                      size_t n) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (mh_int_at(t, got, i) != want[i] && bad++ == 0) first = i;
    if (bad) {
        char w[32], g[32];
        snprintf(w, sizeof w, "%lld", (long long)want[first]);
        snprintf(g, sizeof g, "%lld", (long long)mh_int_at(t, got, first));
        mh_report(what, output, bad, n, first, w, g);
    }
    return bad;
}
