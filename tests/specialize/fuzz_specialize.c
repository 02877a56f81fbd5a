/* Fuzz target: any .webnn text that parses must specialize (or fail with
 * a message) and fuse without a crash, a leak or a malformed desc. Each
 * graph is tried at the smallest and the largest value of every dyn dim. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "specialize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int yes(void *ctx, const char *op, berth_dtype t) {
    (void)ctx, (void)op;
    return t == BERTH_DTYPE_F32;
}

/* Every index a desc holds points inside it; traps otherwise. */
static void check_desc(const berth_spec *s) {
    const berth_graph_desc *d = &s->desc;
    for (uint32_t i = 0; i < d->n_inputs; i++)
        if (d->inputs[i] >= d->n_operands) abort();
    for (uint32_t i = 0; i < d->n_outputs; i++)
        if (d->outputs[i] >= d->n_operands) abort();
    for (uint32_t i = 0; i < d->n_nodes; i++) {
        const berth_node *n = &d->nodes[i];
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= d->n_operands) abort();
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= d->n_operands || d->operands[n->outputs[k]].kind != BERTH_OPERAND_VALUE) abort();
        for (uint32_t k = 0; k < n->n_attrs; k++)
            if (n->attrs[k].type == BERTH_ATTR_OPERAND && (n->attrs[k].i < 0 || n->attrs[k].i >= d->n_operands))
                abort();
    }
    for (uint32_t v = 0; v < s->n_values; v++)
        if (s->operand_of[v] >= (int32_t)d->n_operands) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    berth_error err;
    berth_graph *g = berth_graph_parse("fuzz.webnn", (const char *)data, size, &err);
    if (!g) return 0;
    int64_t *syms = calloc(g->n_syms + 1, sizeof(int64_t));
    uint32_t *ids = calloc(g->n_values + 1, sizeof(uint32_t));
    uint32_t next = 0;
    for (uint32_t v = 0; v < g->n_values; v++)
        ids[v] = g->values[v].kind == BG_CONST && g->values[v].init == BG_INIT_WEIGHTS ? next++ : UINT32_MAX;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < g->n_syms; i++) syms[i] = pass ? g->syms[i].max : 1;
        berth_spec *s = berth_specialize(g, syms, ids, &err);
        if (!s) {
            if (!memchr(err.msg, 0, sizeof err.msg) || !err.msg[0]) abort();
            continue;
        }
        check_desc(s);
        berth_fuse(s, yes, NULL);
        check_desc(s);
        berth_spec_free(s);
    }
    free(syms);
    free(ids);
    berth_graph_free(g);
    return 0;
}
