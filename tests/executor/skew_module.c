/* A backend module that is the cpu backend giving wrong answers with
 * status OK, the worst kind of bug, for the tests of verify:
 *  - every `sub` node is planned as `add` (wrong numbers at a known node);
 *  - every `exp` node is planned as `log` (NaN where the answer is finite,
 *    for negative inputs);
 *  - after each run, every output that is a constant (shape folding made
 *    it one) is filled with 0x5a bytes: a backend that leaves outputs it
 *    did not compute alone, whose garbage the host must overwrite.
 * It refuses berth's fused ops, so the nodes it skews reach plan() as
 * themselves. Everything else is the cpu backend's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/backend.h"
#include "cpu_wrap.h"

static berth_backend table;
static const berth_backend *cpu;

struct berth_plan {
    berth_plan *inner; /* the cpu backend's */
    uint32_t n_outputs;
    uint8_t *constant; /* per output: 1 when it is a CONSTANT operand */
};

static const char *skewed(const char *op) {
    if (!strcmp(op, "sub")) return "add";
    if (!strcmp(op, "exp")) return "log";
    return op;
}

static berth_status refuse_fused(const char *op, berth_error *err) {
    snprintf(err->msg, sizeof err->msg, "skew runs berth's fused ops as their parts, not %s", op);
    return BERTH_ERR_UNSUPPORTED;
}

static berth_status skew_supports_op(berth_device *dev, const char *op, berth_dtype dtype, berth_error *err) {
    return !strncmp(op, "berth.", 6) ? refuse_fused(op, err) : cpu->supports_op(dev, op, dtype, err);
}

static berth_status skew_supports_node(berth_device *dev, const berth_graph_desc *g, uint32_t i, berth_error *err) {
    const berth_node *n = (const berth_node *)((const char *)g->nodes + (size_t)i * g->node_size);
    return !strncmp(n->op, "berth.", 6) ? refuse_fused(n->op, err) : cpu->supports_node(dev, g, i, err);
}

static berth_status skew_plan(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                              berth_error *err) {
    berth_plan *p = calloc(1, sizeof *p);
    berth_node *nodes = calloc(g->n_nodes + 1u, g->node_size);
    if (p) p->constant = calloc(g->n_outputs + 1u, 1);
    if (!p || !nodes || !p->constant) {
        if (p) free(p->constant);
        free(p), free(nodes);
        snprintf(err->msg, sizeof err->msg, "skew: out of memory");
        return BERTH_ERR_NOMEM;
    }
    memcpy(nodes, g->nodes, (size_t)g->n_nodes * g->node_size);
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        berth_node *n = (berth_node *)((char *)nodes + (size_t)k * g->node_size);
        n->op = skewed(n->op);
    }
    berth_graph_desc d = *g;
    d.nodes = nodes;
    p->n_outputs = g->n_outputs;
    for (uint32_t o = 0; o < g->n_outputs; o++) {
        const berth_operand *op = (const berth_operand *)((const char *)g->operands + (size_t)g->outputs[o] * g->operand_size);
        p->constant[o] = op->kind == BERTH_OPERAND_CONSTANT;
    }
    berth_status st = cpu->plan(dev, w, &d, &p->inner, err);
    free(nodes);
    if (st != BERTH_OK) {
        free(p->constant);
        free(p);
        return st;
    }
    *out = p;
    return BERTH_OK;
}

static berth_status skew_run(berth_plan *p, const berth_tensor *in, uint32_t n_in, berth_tensor *out, uint32_t n_out,
                             berth_error *err) {
    berth_status st = cpu->run(p->inner, in, n_in, out, n_out, err);
    for (uint32_t o = 0; st == BERTH_OK && o < n_out && o < p->n_outputs; o++)
        if (p->constant[o]) memset(out[o].data, 0x5a, out[o].bytes);
    return st;
}

static void skew_free_plan(berth_plan *p) {
    if (!p) return;
    cpu->free_plan(p->inner);
    free(p->constant);
    free(p);
}

static uint64_t skew_plan_bytes(const berth_plan *p) { return cpu->plan_bytes(p->inner); }

static berth_status skew_plan_memory(const berth_plan *p, berth_plan_memory *m, berth_error *err) {
    return cpu->plan_memory(p->inner, m, err);
}

static berth_status skew_plan_profile(const berth_plan *p, uint64_t *ns, uint32_t n, berth_error *err) {
    return cpu->plan_profile(p->inner, ns, n, err);
}

__attribute__((visibility("default"))) const berth_backend *
berth_backend_entry(uint32_t host_abi_version, const berth_host_services *host, berth_error *why) {
    if (!(cpu = cpu_wrap("skew", host_abi_version, host, why, &table))) return NULL;
    table.supports_op = skew_supports_op;
    table.supports_node = skew_supports_node;
    table.plan = skew_plan;
    table.run = skew_run;
    table.free_plan = skew_free_plan;
    table.plan_bytes = skew_plan_bytes;
    if (table.plan_profile) table.plan_profile = skew_plan_profile;
    if (table.abi_version >= BERTH_BACKEND_ABI_V1_2) table.plan_memory = skew_plan_memory;
    return &table;
}
