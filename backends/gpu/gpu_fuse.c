/* Elementwise fusion at plan time. The recognizer spells hardSwish and a
 * learned affine as chains of eight mul/add/clamp/div nodes over one
 * tensor with single-value operands; on lavapipe each of those pays a
 * dispatch wake-up and a pass over memory. After every node has been
 * validated and has emitted its dispatch, runs of consecutive vec4
 * elementwise dispatches (unary4, binary4) over one element count become
 * one `fused` dispatch, provided every result but the last is read only
 * inside the run (and is not a graph output), at most 8 ops and 7 distinct
 * operands. The fused-away results are never stored; the chain's program
 * becomes the dispatch's specialization constants (see fused.comp). */
#include <stdlib.h>
#include <string.h>

#include "gpu_core.h"

#define FUSE_OPS 8
#define FUSE_BINDS 7

/* How many times each operand is read: node inputs, operand attributes
 * and graph outputs. */
static uint32_t *count_uses(const berth_graph_desc *g) {
    uint32_t *uses = calloc(g->n_operands + 1u, sizeof *uses);
    if (!uses) return NULL;
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        const berth_node *n = &g->nodes[k];
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] < g->n_operands) uses[n->inputs[i]]++;
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const berth_attr *at = &n->attrs[a];
            if (at->type == BERTH_ATTR_OPERAND && at->i >= 0 && at->i < (int64_t)g->n_operands) uses[at->i]++;
            for (size_t j = 0; at->type == BERTH_ATTR_OPERANDS && at->ints && j < at->count; j++)
                if (at->ints[j] >= 0 && at->ints[j] < (int64_t)g->n_operands) uses[at->ints[j]]++;
        }
    }
    for (uint32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] < g->n_operands) uses[g->outputs[i]] += 1u << 16; /* never internal */
    return uses;
}

typedef struct fuse_ctx {
    berth_plan *p;
    const uint32_t *uses;
    uint32_t unary4, binary4;
} fuse_ctx;

/* The operands dispatch d reads, as (operand, single value?) pairs. */
static uint32_t reads_of(const fuse_ctx *f, const gpu_dispatch *d, uint32_t *op, int *single) {
    if (d->shader == f->unary4) {
        op[0] = d->bind[0], single[0] = 0;
        return 1;
    }
    uint32_t n = 0;
    for (uint32_t s = 0; s < 2; s++) {
        if (d->bind[s] != GPU_NONE) op[n] = d->bind[s], single[n++] = 0;
        else op[n] = d->bind[2 + s], single[n++] = 1;
    }
    return n;
}

static uint32_t output_of(const fuse_ctx *f, const gpu_dispatch *d) {
    return d->bind[d->shader == f->unary4 ? 1 : 4];
}

/* Dispatch i is an elementwise vec4 dispatch and its node's only one. */
static int eligible(const fuse_ctx *f, uint32_t i) {
    const berth_plan *p = f->p;
    const gpu_dispatch *d = &p->disp[i];
    if (d->shader != f->unary4 && d->shader != f->binary4) return 0;
    if (i > 0 && p->disp[i - 1].node == d->node) return 0;
    if (i + 1 < p->n_disp && p->disp[i + 1].node == d->node) return 0;
    return 1;
}

/* Builds the fused dispatch for disp[i..j] into *out; 0 if it does not fit. */
static int build(const fuse_ctx *f, uint32_t i, uint32_t j, gpu_dispatch *out) {
    const berth_plan *p = f->p;
    uint32_t res[FUSE_OPS], binds[FUSE_BINDS], nb = 0, mask = 0;
    memset(out, 0, sizeof *out);
    for (uint32_t k = i; k <= j; k++) {
        const gpu_dispatch *d = &p->disp[k];
        uint32_t op[2], src[2] = {0, 0};
        int single[2];
        uint32_t n = reads_of(f, d, op, single);
        for (uint32_t r = 0; r < n; r++) {
            uint32_t s = GPU_NONE;
            for (uint32_t m = 0; m < k - i && s == GPU_NONE; m++)
                if (res[m] == op[r]) s = m;
            for (uint32_t b = 0; b < nb && s == GPU_NONE; b++)
                if (binds[b] == op[r] && ((mask >> b) & 1u) == (uint32_t)single[r]) s = 8 + b;
            if (s == GPU_NONE) {
                if (nb == FUSE_BINDS) return 0;
                binds[nb] = op[r];
                if (single[r]) mask |= 1u << nb;
                s = 8 + nb++;
            }
            src[r] = s;
        }
        res[k - i] = output_of(f, d);
        uint32_t unary = d->shader == f->unary4;
        out->pc[2 + (k - i)] = (d->pc[1] & 31u) | (unary << 5) | (src[0] << 8) | (src[1] << 12);
        if (unary) {
            out->pc[10 + 2 * (k - i)] = d->pc[2];
            out->pc[11 + 2 * (k - i)] = d->pc[3];
        }
    }
    /* Every result but the last is read only by later ops of the run. */
    for (uint32_t k = i; k < j; k++) {
        uint32_t o = res[k - i], inside = 0;
        for (uint32_t m = k + 1; m <= j; m++) {
            uint32_t op[2];
            int single[2];
            uint32_t n = reads_of(f, &p->disp[m], op, single);
            for (uint32_t r = 0; r < n; r++) inside += op[r] == o;
        }
        if (f->uses[o] != inside || p->ops[o].alias != GPU_NONE) return 0;
        for (uint32_t b = 0; b < nb; b++)
            if (binds[b] == o) return 0;
    }
    out->node = p->disp[i].node;
    out->n_bind = 8;
    for (uint32_t b = 0; b < 7; b++) out->bind[b] = b < nb ? binds[b] : GPU_NONE;
    out->bind[7] = res[j - i];
    out->pc[0] = p->disp[i].pc[0];
    /* The program itself goes into specialization constants. */
    out->n_spec = 10;
    out->spec[0] = j - i + 1;
    for (uint32_t k = 0; k < FUSE_OPS; k++) out->spec[1 + k] = k <= j - i ? out->pc[2 + k] : 0;
    out->spec[9] = mask;
    memset(out->pc + 1, 0, sizeof(uint32_t) * 9);
    out->groups[0] = p->disp[i].groups[0];
    out->groups[1] = out->groups[2] = 1;
    return 1;
}

berth_status gpu_fuse_elementwise(berth_plan *p, const berth_graph_desc *g, berth_error *err) {
    fuse_ctx f = {.p = p, .unary4 = gpu_kernel_index("unary4"), .binary4 = gpu_kernel_index("binary4")};
    uint32_t fused = gpu_kernel_index("fused");
    if (f.unary4 == GPU_NONE || f.binary4 == GPU_NONE || fused == GPU_NONE || p->n_disp < 2) return BERTH_OK;
    uint32_t *uses = count_uses(g);
    if (!uses) {
        bk_errf(err, GPU_BACKEND_NAME ": out of memory fusing elementwise ops");
        return BERTH_ERR_NOMEM;
    }
    f.uses = uses;
    uint32_t w = 0;
    for (uint32_t i = 0; i < p->n_disp;) {
        uint32_t e = i;
        while (e < p->n_disp && e - i < FUSE_OPS && eligible(&f, e) && p->disp[e].pc[0] == p->disp[i].pc[0]) e++;
        gpu_dispatch d;
        uint32_t j = e;
        while (j > i + 1 && !build(&f, i, j - 1, &d)) j--;
        if (j > i + 1) {
            d.shader = fused;
            p->disp[w++] = d;
            i = j;
        } else {
            p->disp[w++] = p->disp[i++];
        }
    }
    p->n_disp = w;
    free(uses);
    return BERTH_OK;
}
