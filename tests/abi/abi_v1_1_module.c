/* An ABI 1.1 backend for the host-side tests of ABI 1.1. It declares
 * options, refuses one node shape in supports_node (a matmul with K or M
 * above 64, and every fused matmul epilogue), offers a function through
 * get_proc, and records open() and plan() calls. Its run() writes zeros:
 * the tests here are about what the host does before and around the
 * verbs. ABI11_VARIANT builds a table broken in one way for the loader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi11_fixture.h"
#include "berth/backend.h"

#define V_GOOD 0
#define V_NO_SUPPORTS_NODE 1 /* abi_version 2, supports_node NULL            */
#define V_TOO_SMALL 2        /* abi_version 2, a table of the 1.0 size         */
#define V_AS_V1 3            /* abi_version 1, 1.1 slots filled with traps     */
#define V_BAD_DECL 4         /* options with an option_decl_size too small     */

#ifndef ABI11_VARIANT
#define ABI11_VARIANT V_GOOD
#endif

struct berth_device {
    int unused;
};
struct berth_weights {
    int unused;
};
struct berth_plan {
    int unused;
};

static int n_plans, n_fused_refused;
static char last_ops[256];

#define SAY(e, ...) snprintf((e)->msg, sizeof (e)->msg, __VA_ARGS__)

static void log_call(const char *what) {
    const char *path = getenv(ABI11_LOG_ENV);
    if (!path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%s\n", what);
    fclose(f);
}

static berth_status fx_open(const berth_host_services *host, berth_device **out, berth_error *err) {
    (void)host;
    log_call("open");
    *out = calloc(1, sizeof **out);
    if (!*out) {
        SAY(err, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    return BERTH_OK;
}

static void fx_close(berth_device *d) { free(d); }

static berth_status fx_caps(berth_device *d, berth_caps *c, berth_error *e) {
    (void)d, (void)e;
    if (c->struct_size >= BERTH_CAPS_V1_MIN_SIZE) {
        c->device_name = "abi 1.1 fixture";
        c->memory_bytes = 0;
        c->unified_memory = 1;
        c->dtype_mask = 1u << BERTH_DTYPE_F32;
    }
    return BERTH_OK;
}

/* The cheap pre-filter: any op on f32, fused ones included, so the host
 * fuses and supports_node gets to refuse the fused node. */
static berth_status fx_supports(berth_device *d, const char *op, berth_dtype t, berth_error *e) {
    (void)d;
    if (t == BERTH_DTYPE_F32) return BERTH_OK;
    SAY(e, "op '%s' on dtype %d: f32 only", op, (int)t);
    return BERTH_ERR_UNSUPPORTED;
}

/* Arrays are indexed by the element sizes the host declares. */
static const berth_node *node_at(const berth_graph_desc *g, uint32_t i) {
    size_t sz = g->struct_size >= offsetof(berth_graph_desc, node_size) + sizeof(uint32_t) ? g->node_size
                                                                                          : BERTH_NODE_V1_SIZE;
    return (const berth_node *)(const void *)((const char *)g->nodes + (size_t)i * sz);
}

static const berth_operand *operand_at(const berth_graph_desc *g, uint32_t i) {
    size_t sz = g->struct_size >= offsetof(berth_graph_desc, operand_size) + sizeof(uint32_t)
                    ? g->operand_size
                    : BERTH_OPERAND_V1_SIZE;
    return (const berth_operand *)(const void *)((const char *)g->operands + (size_t)i * sz);
}

static berth_status fx_supports_node(berth_device *d, const berth_graph_desc *g, uint32_t i, berth_error *e) {
    (void)d;
#if ABI11_VARIANT == V_AS_V1
    (void)g, (void)i, (void)e, (void)node_at, (void)operand_at;
    log_call("supports_node");
    return BERTH_ERR_INTERNAL;
#else
    const berth_node *n = node_at(g, i);
    if (!strcmp(n->op, "berth.matmulEpilogue") || !strcmp(n->op, "berth.elementwise")) {
        n_fused_refused++;
        SAY(e, "this device runs the matmul, its epilogue and each elementwise op as separate nodes");
        return BERTH_ERR_UNSUPPORTED;
    }
    if (!strcmp(n->op, "matmul") && n->n_inputs == 2) {
        const berth_operand *a = operand_at(g, n->inputs[0]);
        if (a->rank >= 2 && a->dims[a->rank - 1] > 64) {
            SAY(e, "matmul with K = %lld: the matmul unit holds K up to 64", (long long)a->dims[a->rank - 1]);
            return BERTH_ERR_UNSUPPORTED;
        }
        if (a->rank >= 2 && a->dims[a->rank - 2] > 64) {
            SAY(e, "matmul with %lld rows: the matmul unit holds up to 64 rows", (long long)a->dims[a->rank - 2]);
            return BERTH_ERR_UNSUPPORTED;
        }
    }
    return BERTH_OK;
#endif
}

static berth_status fx_begin(berth_device *d, const berth_upload_info *info, berth_weights **out,
                             berth_error *e) {
    (void)d, (void)e;
    /* The host states the weight desc size of ABI 1.0. */
    if (info->struct_size < BERTH_UPLOAD_INFO_V1_MIN_SIZE + sizeof(uint32_t) ||
        info->weight_desc_size != BERTH_WEIGHT_DESC_V1_SIZE) {
        SAY(e, "upload info without the weight desc size of ABI 1.0 (%zu)", (size_t)BERTH_WEIGHT_DESC_V1_SIZE);
        return BERTH_ERR_INVALID;
    }
    static berth_weights w;
    *out = &w;
    return BERTH_OK;
}

static berth_status fx_tensor(berth_weights *w, const berth_weight_desc *d, void *data, uint32_t flags,
                              int *taken, berth_error *e) {
    (void)w, (void)d, (void)data, (void)flags, (void)taken, (void)e;
    return BERTH_OK;
}

static berth_status fx_end(berth_weights *w, berth_error *e) {
    (void)w, (void)e;
    return BERTH_OK;
}

static berth_status fx_plan(berth_device *d, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                            berth_error *e) {
    (void)d, (void)w;
    log_call("plan");
    if (g->operand_size != BERTH_OPERAND_V1_SIZE || g->node_size != BERTH_NODE_V1_SIZE ||
        g->attr_size != BERTH_ATTR_V1_SIZE || g->tensor_size != BERTH_TENSOR_V1_SIZE) {
        SAY(e, "graph desc without the element sizes of ABI 1.0 (operand_size %u)", g->operand_size);
        return BERTH_ERR_INVALID;
    }
    n_plans++;
    size_t off = 0;
    last_ops[0] = 0;
    for (uint32_t i = 0; i < g->n_nodes && off < sizeof last_ops; i++)
        off += (size_t)snprintf(last_ops + off, sizeof last_ops - off, "%s%s", i ? "," : "",
                                node_at(g, i)->op);
    static berth_plan p;
    *out = &p;
    return BERTH_OK;
}

static berth_status fx_run(berth_plan *p, const berth_tensor *in, uint32_t ni, berth_tensor *out,
                           uint32_t no, berth_error *e) {
    (void)p, (void)in, (void)ni, (void)e;
    for (uint32_t o = 0; o < no; o++) memset(out[o].data, 0, out[o].bytes);
    return BERTH_OK;
}

static void fx_free_plan(berth_plan *p) { (void)p; }
static void fx_free_weights(berth_weights *w) { (void)w; }
static uint64_t fx_wbytes(const berth_weights *w) { (void)w; return 0; }
static uint64_t fx_pbytes(const berth_plan *p) { (void)p; return 0; }

static int fx_stat(const char *what, char *buf, size_t cap) {
    if (!strcmp(what, "plans")) {
        if (cap) snprintf(buf, cap, "%s", last_ops);
        return n_plans;
    }
    if (!strcmp(what, "fused_refused")) return n_fused_refused;
    return -1;
}

static void *fx_get_proc(const char *name) {
    union {
        abi11_stat_fn fn;
        void *obj;
    } u;
    if (strcmp(name, ABI11_STAT_PROC)) return NULL;
    u.fn = fx_stat;
    return u.obj;
}

static const berth_option_decl options[] = {
    {"threads", BERTH_OPTION_INT, "4", NULL, 1, 64, "worker threads"},
    {"mode", BERTH_OPTION_STRING, "fast", "fast|exact", 0, 0, "rounding of the matmul unit"},
    {"trace", BERTH_OPTION_BOOL, "false", NULL, 0, 0, "log every verb"},
    {"scale", BERTH_OPTION_FLOAT, NULL, NULL, 0, 0, "a number with no bounds"},
};

static berth_backend table = {
    .abi_version = BERTH_BACKEND_ABI_V1_1,
    .struct_size = sizeof(berth_backend),
    .name = "abi11",
    .version = "1.1-fixture",
    .open = fx_open,
    .close = fx_close,
    .caps = fx_caps,
    .supports_op = fx_supports,
    .upload_begin = fx_begin,
    .upload_tensor = fx_tensor,
    .upload_end = fx_end,
    .plan = fx_plan,
    .run = fx_run,
    .free_plan = fx_free_plan,
    .free_weights = fx_free_weights,
    .weights_bytes = fx_wbytes,
    .plan_bytes = fx_pbytes,
    .supports_node = fx_supports_node,
    .get_proc = fx_get_proc,
    .options = options,
    .n_options = sizeof options / sizeof options[0],
    .option_decl_size = sizeof(berth_option_decl),
};

BERTH_BACKEND_EXPORT const berth_backend *berth_backend_entry(uint32_t host_abi_version,
                                                              const berth_host_services *host,
                                                              berth_error *why) {
    (void)host;
    if (host_abi_version < BERTH_BACKEND_ABI_V1_1) {
        SAY(why, "abi11 needs a host of ABI 1.1, this one speaks version %u", host_abi_version);
        return NULL;
    }
#if ABI11_VARIANT == V_NO_SUPPORTS_NODE
    table.supports_node = NULL;
#elif ABI11_VARIANT == V_TOO_SMALL
    table.struct_size = (uint32_t)BERTH_BACKEND_V1_MIN_SIZE;
#elif ABI11_VARIANT == V_AS_V1
    /* What a 1.0 module built against the 1.1 header looks like: version
     * 1, the larger struct_size, and 1.1 slots the host must not read. */
    table.abi_version = BERTH_BACKEND_ABI_V1_0;
    table.name = "abi11_as_v1";
    table.options = NULL;
    table.n_options = 7;
    table.option_decl_size = 1;
#elif ABI11_VARIANT == V_BAD_DECL
    table.option_decl_size = 8;
#endif
    return &table;
}
