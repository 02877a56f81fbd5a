/* berth.elementwise and berth.conv2dEpilogue: the program decoded and
 * checked, and each of its inputs' broadcast reduced to (inner, count),
 * as docs/backend-ops.md states it. */
#include <math.h>
#include <string.h>

#include "bk.h"

/* Program input k, operand x, as (inner, count) against the output. */
static berth_status broadcast(const bk_node_ctx *c, uint32_t k, const berth_operand *x, bk_ew_program *p) {
    const berth_operand *y = bk_out(c, 0);
    if (x->dtype != BERTH_DTYPE_F32) return bk_fail(c, "input %u: expected float32, found %s", k, bk_dtype_name(x->dtype));
    if (x->rank > y->rank) return bk_fail(c, "input %u: rank %u is above the output's %u", k, x->rank, y->rank);
    uint32_t off = y->rank - x->rank;
    int first = -1, last = -1;
    for (uint32_t d = 0; d < x->rank; d++) {
        if (x->dims[d] == 1) { /* broadcast, or a unit dim of both that the run may span */
            if (y->dims[off + d] == 1 && last >= 0 && (uint32_t)last == off + d - 1) last = (int)(off + d);
            continue;
        }
        if (x->dims[d] != y->dims[off + d] || (last >= 0 && (uint32_t)last != off + d - 1))
            goto pattern;
        if (first < 0) first = (int)(off + d);
        last = (int)(off + d);
    }
    size_t inner = 1, count = 1;
    if (first >= 0) {
        for (uint32_t d = (uint32_t)last + 1; d < y->rank; d++) inner *= (size_t)y->dims[d];
        for (int d = first; d <= last; d++) count *= (size_t)y->dims[d];
    }
    p->inner[k] = inner;
    p->count[k] = count;
    return BERTH_OK;
pattern:;
    char xs[96], ys[96];
    bk_dims_str(x->dims, x->rank, xs, sizeof xs);
    bk_dims_str(y->dims, y->rank, ys, sizeof ys);
    return bk_fail(c, "input %u: %s does not broadcast to the output %s as one run of its dims", k, xs, ys);
}

/* The program over inputs in[0..n_in) (operands of the node's graph;
 * BK_NONE: the output itself, a convolution's result). */
static berth_status program(const bk_node_ctx *c, uint32_t n_in, const uint32_t *in, bk_ew_program *p) {
    memset(p, 0, sizeof *p);
    const berth_operand *y = bk_out(c, 0);
    if (y->dtype != BERTH_DTYPE_F32) return bk_fail(c, "output: expected float32, found %s", bk_dtype_name(y->dtype));
    p->numel = 1;
    for (uint32_t d = 0; d < y->rank; d++) p->numel *= (size_t)y->dims[d];
    p->n_in = n_in;
    if (p->n_in > BK_EW_MAX_INPUTS) return bk_fail(c, "expected at most %d inputs, found %u", BK_EW_MAX_INPUTS, p->n_in);
    for (uint32_t k = 0; k < p->n_in; k++) {
        berth_status st = broadcast(c, k, in[k] == BK_NONE ? y : &c->g->operands[in[k]], p);
        if (st) return st;
    }
    double cs[BK_EW_MAX_CONSTANTS];
    int n_c = 0;
    berth_status st = bk_opt_floats(c, "constants", cs, BK_EW_MAX_CONSTANTS, &n_c);
    if (st) return st;
    p->n_constants = n_c < 0 ? 0 : (uint32_t)n_c;
    for (uint32_t j = 0; j < p->n_constants; j++) p->constants[j] = (float)cs[j];
    const char *ops;
    if ((st = bk_opt_string(c, "ops", "", &ops))) return st;
    int64_t refs[2 * BK_EW_MAX_STEPS + 1];
    int n_refs = 0;
    if ((st = bk_opt_ints(c, "steps", refs, 2 * BK_EW_MAX_STEPS + 1, &n_refs))) return st;
    /* the op words, one per step */
    const char *at = ops;
    while (*at) {
        while (*at == ' ') at++;
        if (!*at) break;
        size_t len = strcspn(at, " ");
        if (p->n_steps == BK_EW_MAX_STEPS) return bk_fail(c, "ops: expected at most %d steps", BK_EW_MAX_STEPS);
        char word[32];
        if (len >= sizeof word) return bk_fail(c, "ops: '%.*s' is no op", (int)len, at);
        memcpy(word, at, len);
        word[len] = 0;
        berth_op_id id = berth_op_find(word);
        if (id == BERTH_OP_UNKNOWN || !bk_ew_arity(id)) return bk_fail(c, "ops: step %u: '%s' is not an elementwise op a step may apply", p->n_steps, word);
        p->steps[p->n_steps++].op = id;
        at += len;
    }
    if (!p->n_steps) return bk_fail(c, "ops: expected at least one step");
    if (n_refs != 2 * (int)p->n_steps)
        return bk_fail(c, "steps: expected %u references (two per op), found %d", 2 * p->n_steps, n_refs < 0 ? 0 : n_refs);
    for (uint32_t i = 0; i < p->n_steps; i++) {
        bk_ew_step *s = &p->steps[i];
        int arity = bk_ew_arity(s->op);
        for (int r = 0; r < 2; r++) {
            int64_t ref = refs[2 * i + r];
            if (r == 1 && arity == 1 && !bk_ew_options(s->op)) {
                s->b = 0;
                continue;
            }
            int options = r == 1 && arity == 1;
            if (ref < 0 ? (uint64_t)(-ref - 1) + (options ? (uint64_t)bk_ew_options(s->op) : 1) > p->n_constants
                        : options || ref >= (int64_t)p->n_in + i)
                return bk_fail(c, "steps: step %u (%s): reference %lld is %s", i, berth_op_table()[s->op].name,
                               (long long)ref, options ? "not a constant with its options" : "not an input, earlier step or constant");
            if (r == 0) s->a = (int32_t)ref;
            else s->b = (int32_t)ref;
        }
        if (bk_ew_options(s->op)) {
            s->p0 = p->constants[-s->b - 1];
            if (bk_ew_options(s->op) > 1) s->p1 = p->constants[-s->b];
            if (s->op == BERTH_OP_CLAMP && !(s->p0 <= s->p1))
                return bk_fail(c, "steps: step %u (clamp): minValue %g is greater than maxValue %g", i, s->p0, s->p1);
        }
    }
    return BERTH_OK;
}

berth_status bk_param_elementwise(const bk_node_ctx *c, bk_ew_program *p) {
    return program(c, c->node->n_inputs, c->node->inputs, p);
}

berth_status bk_param_conv_epilogue(const bk_node_ctx *c, bk_ew_program *p) {
    uint32_t in[BK_EW_MAX_INPUTS] = {BK_NONE};
    const berth_attr *a = bk_opt_find(c, "epilogueInputs");
    size_t n = a && a->type == BERTH_ATTR_OPERANDS ? a->count : 0;
    if (a && a->type != BERTH_ATTR_OPERANDS && a->type != BERTH_ATTR_NULL)
        return bk_fail(c, "epilogueInputs: expected a list of operands");
    if (n + 1 > BK_EW_MAX_INPUTS) return bk_fail(c, "epilogueInputs: expected at most %d, found %zu", BK_EW_MAX_INPUTS - 1, n);
    for (size_t k = 0; k < n; k++) {
        if (a->ints[k] < 0 || (uint64_t)a->ints[k] >= c->g->n_operands)
            return bk_fail(c, "epilogueInputs: operand %lld is out of range", (long long)a->ints[k]);
        in[k + 1] = (uint32_t)a->ints[k];
    }
    return program(c, (uint32_t)n + 1, in, p);
}
