/* What the fusion tests share: backends that support all, some or no
 * fused ops, random data, the fused graph run against the unfused one on
 * the reference interpreter, and lookups in a specialized graph. Static
 * inline, so each test's CHECKs count in its own file. */
#ifndef BERTH_TEST_FUSE_CHECK_H
#define BERTH_TEST_FUSE_CHECK_H

#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "ref_eval.h"
#include "util.h"

static inline int supports_all(void *ctx, const char *op, berth_dtype t) {
    (void)ctx;
    return t == BERTH_DTYPE_F32 && op != NULL;
}

/* Everything but berth.elementwise: for the other passes' own behaviour. */
static inline int supports_but_elementwise(void *ctx, const char *op, berth_dtype t) {
    return supports_all(ctx, op, t) && strcmp(op, "berth.elementwise") != 0;
}

static inline int supports_but_conv_epilogue(void *ctx, const char *op, berth_dtype t) {
    return supports_all(ctx, op, t) && strcmp(op, "berth.conv2dEpilogue") != 0;
}

static inline int supports_none(void *ctx, const char *op, berth_dtype t) {
    (void)ctx, (void)op, (void)t;
    return 0;
}

/* Only the op named by ctx. */
static inline int supports_one(void *ctx, const char *op, berth_dtype t) {
    return t == BERTH_DTYPE_F32 && !strcmp(op, (const char *)ctx);
}

static inline float *random_floats(size_t n, unsigned seed) {
    float *p = malloc((n ? n : 1) * sizeof(float));
    uint32_t s = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = (float)((s >> 8) & 0xffff) / 65536.0f * 2.0f - 1.0f;
    }
    return p;
}

static inline size_t op_numel(const berth_operand *o) {
    size_t n = 1;
    for (uint32_t i = 0; i < o->rank; i++) n *= (size_t)o->dims[i];
    return n;
}

/* Runs both specs on the same random inputs and weights; compares every
 * graph output. Returns the largest absolute difference. */
static inline double fused_vs_unfused(const spec_case *plain, const spec_case *fused) {
    const berth_graph_desc *a = &plain->s->desc, *b = &fused->s->desc;
    float *in[32] = {0}, *w[32] = {0};
    for (uint32_t i = 0; i < a->n_inputs && i < 32; i++)
        in[i] = random_floats(op_numel(&a->operands[a->inputs[i]]), 100 + i);
    for (uint32_t i = 0; i < a->n_operands; i++)
        if (a->operands[i].kind == BERTH_OPERAND_WEIGHT && a->operands[i].weight < 32)
            w[a->operands[i].weight] = random_floats(op_numel(&a->operands[i]), 200 + a->operands[i].weight);
    /* keep weights of b in step: same ids, same data */
    float **ra = ref_run(a, (const float *const *)in, (const float *const *)w);
    float **rb = ref_run(b, (const float *const *)in, (const float *const *)w);
    double worst = ra && rb ? 0 : INFINITY, magnitude = 0;
    for (uint32_t o = 0; ra && rb && o < a->n_outputs; o++) {
        const berth_operand *oa = &a->operands[a->outputs[o]];
        size_t n = op_numel(oa);
        CHECK(n == op_numel(&b->operands[b->outputs[o]]));
        for (size_t i = 0; i < n; i++) {
            double diff = fabs((double)ra[a->outputs[o]][i] - rb[b->outputs[o]][i]);
            if (!(diff <= worst)) worst = diff;
            if (fabs(ra[a->outputs[o]][i]) > magnitude) magnitude = fabs(ra[a->outputs[o]][i]);
        }
    }
    CHECK(magnitude > 1e-2); /* the comparison saw real numbers, not zeros */
    ref_free(ra, a->n_operands);
    ref_free(rb, b->n_operands);
    for (int i = 0; i < 32; i++) free(in[i]), free(w[i]);
    return worst;
}

static inline const berth_attr *find_attr(const berth_node *n, const char *key) {
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].key, key)) return &n->attrs[i];
    return NULL;
}

static inline const berth_node *find_node(const berth_spec *s, const char *op) {
    for (uint32_t i = 0; i < s->desc.n_nodes; i++)
        if (!strcmp(s->desc.nodes[i].op, op)) return &s->desc.nodes[i];
    return NULL;
}

static inline const char *operand_name(const berth_spec *s, int64_t i) {
    return i >= 0 && (uint32_t)i < s->desc.n_operands ? s->desc.operands[i].name : "?";
}

/* Every operand index a node mentions lies inside the desc. */
static inline void check_well_formed(const berth_spec *s) {
    const berth_graph_desc *d = &s->desc;
    for (uint32_t i = 0; i < d->n_nodes; i++) {
        for (uint32_t k = 0; k < d->nodes[i].n_inputs; k++) CHECK(d->nodes[i].inputs[k] < d->n_operands);
        for (uint32_t k = 0; k < d->nodes[i].n_outputs; k++) CHECK(d->nodes[i].outputs[k] < d->n_operands);
    }
    for (uint32_t i = 0; i < d->n_outputs; i++) CHECK(d->outputs[i] < d->n_operands);
}

#endif
