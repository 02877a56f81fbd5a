/* Elementwise fusion: connected groups of elementwise nodes as one
 * berth.elementwise program (naming the activations exporters spell as
 * primitives), a lone activation program joining a matmul epilogue, and
 * a program joining the convolution before it (berth.conv2dEpilogue). */
#include <math.h>
#include <string.h>

#include "arena.h"
#include "bk.h"
#include "fuse_internal.h"
#include "infer.h"

/* ---- (d) connected elementwise groups --------------------------------------------- */

/* An f32 node a program step can be: one output, its op's operands. */
static berth_op_id ew_op(const fuser *f, uint32_t n) {
    const berth_node *nd = &f->nodes[n];
    if (f->removed[n] || nd->n_outputs != 1 || !is_f32(f, nd->outputs[0])) return BERTH_OP_UNKNOWN;
    berth_op_id id = berth_op_find(nd->op);
    if (id == BERTH_OP_UNKNOWN || (int)nd->n_inputs != bk_ew_arity(id)) return BERTH_OP_UNKNOWN;
    for (uint32_t k = 0; k < nd->n_inputs; k++)
        if (!is_f32(f, nd->inputs[k])) return BERTH_OP_UNKNOWN;
    for (uint32_t k = 0; k < nd->n_attrs; k++)
        if (nd->attrs[k].type == BERTH_ATTR_OPERAND || nd->attrs[k].type == BERTH_ATTR_OPERANDS) return BERTH_OP_UNKNOWN;
    return id;
}

/* The broadcast berth.elementwise allows: x has y's shape, one element,
 * or its non-1 dims (ranks right-aligned) are one run equal to y's. */
static int ew_broadcasts(const berth_operand *x, const berth_operand *y) {
    if (x->rank > y->rank) return 0;
    uint32_t off = y->rank - x->rank;
    int last = -1;
    for (uint32_t d = 0; d < x->rank; d++) {
        if (x->dims[d] == 1) continue;
        if (x->dims[d] != y->dims[off + d] || (last >= 0 && (uint32_t)last != off + d - 1)) return 0;
        last = (int)(off + d);
    }
    return 1;
}

/* An option of a step's op, or its default (ops.def's). */
static double ew_option(const berth_node *nd, const char *key, double def) {
    const berth_attr *a = node_attr(nd, key);
    return !a ? def : a->type == BERTH_ATTR_FLOAT ? a->f : a->type == BERTH_ATTR_INT ? (double)a->i : def;
}

typedef struct ew_build {
    uint32_t nodes[BK_EW_MAX_STEPS], n;
    uint32_t in[BK_EW_MAX_INPUTS], n_in;
    int64_t refs[2 * BK_EW_MAX_STEPS];
    double constants[BK_EW_MAX_CONSTANTS];
    uint32_t n_constants;
} ew_build;

static int in_group(const ew_build *b, int32_t n) {
    for (uint32_t i = 0; i < b->n; i++)
        if ((int32_t)b->nodes[i] == n) return 1;
    return 0;
}

/* How many group nodes read operand o. */
static int32_t group_readers(const fuser *f, const ew_build *b, uint32_t o) {
    int32_t r = 0;
    for (uint32_t i = 0; i < b->n; i++) {
        const berth_node *nd = &f->nodes[b->nodes[i]];
        int reads = 0;
        for (uint32_t k = 0; k < nd->n_inputs; k++) reads |= nd->inputs[k] == o;
        r += reads;
    }
    return r;
}

static int64_t ew_constant(ew_build *b, double v) {
    for (uint32_t j = 0; j < b->n_constants; j++)
        if (b->constants[j] == v && !signbit(b->constants[j]) == !signbit(v)) return -(int64_t)j - 1;
    if (b->n_constants == BK_EW_MAX_CONSTANTS) return 0;
    b->constants[b->n_constants++] = v;
    return -(int64_t)b->n_constants;
}

/* The reference step i makes to operand o: an earlier step, a constant
 * scalar, or an input of the fused node; 0 when the program is full. */
static int64_t ew_ref(const fuser *f, ew_build *b, uint32_t i, uint32_t o, int *ok) {
    for (uint32_t j = 0; j < i; j++)
        if (f->nodes[b->nodes[j]].outputs[0] == o) return BK_EW_MAX_INPUTS + (int64_t)j;
    double v;
    if (fz_const_scalar(f, o, &v)) {
        int64_t r = ew_constant(b, v);
        *ok &= r != 0;
        return r;
    }
    for (uint32_t k = 0; k < b->n_in; k++)
        if (b->in[k] == o) return k;
    if (b->n_in == BK_EW_MAX_INPUTS) return *ok = 0;
    b->in[b->n_in] = o;
    return b->n_in++;
}

/* The nchw f32 conv2d whose result only node n reads, at n's input
 * position k (returned), or -1: n's program can join its epilogue. */
static int after_conv(const fuser *f, uint32_t n) {
    const berth_node *nd = &f->nodes[n];
    for (uint32_t k = 0; k < nd->n_inputs; k++) {
        uint32_t o = nd->inputs[k];
        int32_t p = f->producer[o];
        if (p < 0 || f->users[o] != 1 || strcmp(f->nodes[p].op, "conv2d") || !is_f32(f, o) ||
            !same_shape(opnd(f, o), opnd(f, nd->outputs[0])))
            continue;
        const berth_attr *layout = node_attr(&f->nodes[p], "inputLayout");
        if (!layout || (layout->type == BERTH_ATTR_STRING && !strcmp(layout->s, "nchw"))) return (int)k;
    }
    return -1;
}

/* Node n can be a step of a program whose output is y: a step op of y's
 * shape whose operands are constant scalars or broadcast to y as a
 * program input may. */
static int ew_fits(const fuser *f, uint32_t n, const berth_operand *y) {
    if (ew_op(f, n) == BERTH_OP_UNKNOWN || !same_shape(opnd(f, f->nodes[n].outputs[0]), y)) return 0;
    const berth_node *nd = &f->nodes[n];
    for (uint32_t k = 0; k < nd->n_inputs; k++) {
        double v;
        if (!fz_const_scalar(f, nd->inputs[k], &v) && !ew_broadcasts(opnd(f, nd->inputs[k]), y)) return 0;
    }
    return 1;
}

/* ---- named activations in a program ----
 * Exporters spell hardswish and GELU as primitives; a program step of
 * the named op computes the same in one pass over its block. The step
 * list is SSA: step i is reference n_in + i. */

/* The constant a reference names, if it is one. */
static int ew_is_const(const ew_build *b, int64_t r, double want) {
    return r < 0 && fabs(b->constants[-r - 1] - want) <= 1e-6 * fabs(want);
}

/* How many later steps read step j's result. */
static int ew_uses(const ew_build *b, const berth_op_id *sop, uint32_t n, uint32_t j) {
    int64_t ref = (int64_t)b->n_in + j;
    int u = 0;
    for (uint32_t i = 0; i < n; i++) {
        u += b->refs[2 * i] == ref;
        u += bk_ew_arity(sop[i]) == 2 && b->refs[2 * i + 1] == ref;
    }
    return u;
}

/* The step j whose result reference r is, or -1. */
static int ew_step_of(const ew_build *b, int64_t r) {
    return r >= (int64_t)b->n_in ? (int)(r - (int64_t)b->n_in) : -1;
}

/* The other operand of binary step i, given one of them; INT64_MIN when
 * neither is `one`. */
static int64_t ew_other(const ew_build *b, uint32_t i, int64_t one) {
    return b->refs[2 * i] == one ? b->refs[2 * i + 1] : b->refs[2 * i + 1] == one ? b->refs[2 * i] : INT64_MIN;
}

/* Step i rewritten as op(x); the steps in dead[] are dropped. */
static void ew_become(ew_build *b, berth_op_id *sop, uint32_t i, berth_op_id op, int64_t x, uint8_t *dead,
                      const int *drop, int n_drop) {
    sop[i] = op;
    b->refs[2 * i] = x;
    b->refs[2 * i + 1] = 0;
    for (int k = 0; k < n_drop; k++) dead[drop[k]] = 1;
}

/* x * clamp(x + 3, 0, 6) / 6 -> hardSwish(x), for step d ending in a div
 * by 6 or a mul by 1/6, when the steps it drops feed nothing else. 1 when
 * step d was rewritten. */
static int ew_match_hardswish(ew_build *b, berth_op_id *sop, uint32_t n, uint32_t d, uint8_t *dead) {
    int c = -1;
    if (sop[d] == BERTH_OP_DIV && ew_is_const(b, b->refs[2 * d + 1], 6.0)) c = ew_step_of(b, b->refs[2 * d]);
    if (sop[d] == BERTH_OP_MUL && ew_is_const(b, b->refs[2 * d + 1], 1.0 / 6)) c = ew_step_of(b, b->refs[2 * d]);
    if (sop[d] == BERTH_OP_MUL && ew_is_const(b, b->refs[2 * d], 1.0 / 6)) c = ew_step_of(b, b->refs[2 * d + 1]);
    if (c < 0 || sop[c] != BERTH_OP_MUL || ew_uses(b, sop, n, (uint32_t)c) != 1) return 0;
    for (int side = 0; side < 2; side++) {
        int cl = ew_step_of(b, b->refs[2 * c + side]);
        int64_t x = b->refs[2 * c + 1 - side];
        if (cl < 0 || sop[cl] != BERTH_OP_CLAMP || ew_uses(b, sop, n, (uint32_t)cl) != 1) continue;
        int64_t opt = b->refs[2 * cl + 1];
        if (!ew_is_const(b, opt, 0.0) && !(opt < 0 && b->constants[-opt - 1] == 0.0)) continue;
        if (!(opt < 0 && -opt < (int64_t)b->n_constants && b->constants[-opt] == 6.0)) continue;
        int a = ew_step_of(b, b->refs[2 * cl]);
        if (a < 0 || sop[a] != BERTH_OP_ADD || ew_uses(b, sop, n, (uint32_t)a) != 1) continue;
        int64_t three = ew_other(b, (uint32_t)a, x);
        if (three == INT64_MIN || !ew_is_const(b, three, 3.0)) continue;
        int drop[3] = {a, cl, c};
        ew_become(b, sop, d, BERTH_OP_HARD_SWISH, x, dead, drop, 3);
        break;
    }
    return sop[d] == BERTH_OP_HARD_SWISH;
}

/* gelu written as mul(mul(x, 0.5), add(erf(mul(x, 1/sqrt2)), 1)), the
 * half taken first, ending at mul step d: rewrites d as gelu(x). */
static void ew_match_gelu_half_first(ew_build *b, berth_op_id *sop, uint32_t n, uint32_t d, uint8_t *dead) {
    for (int side = 0; side < 2 && sop[d] == BERTH_OP_MUL; side++) {
        int h = ew_step_of(b, b->refs[2 * d + side]), c2 = ew_step_of(b, b->refs[2 * d + 1 - side]);
        if (h < 0 || c2 < 0 || sop[h] != BERTH_OP_MUL || sop[c2] != BERTH_OP_ADD) continue;
        if (ew_uses(b, sop, n, (uint32_t)h) != 1 || ew_uses(b, sop, n, (uint32_t)c2) != 1) continue;
        int64_t x = ew_is_const(b, b->refs[2 * h + 1], 0.5) ? b->refs[2 * h]
                  : ew_is_const(b, b->refs[2 * h], 0.5) ? b->refs[2 * h + 1] : INT64_MIN;
        int e2 = ew_is_const(b, b->refs[2 * c2 + 1], 1.0) ? ew_step_of(b, b->refs[2 * c2])
               : ew_is_const(b, b->refs[2 * c2], 1.0) ? ew_step_of(b, b->refs[2 * c2 + 1]) : -1;
        if (x == INT64_MIN || e2 < 0 || sop[e2] != BERTH_OP_ERF || ew_uses(b, sop, n, (uint32_t)e2) != 1) continue;
        int q = ew_step_of(b, b->refs[2 * e2]);
        if (q < 0 || ew_uses(b, sop, n, (uint32_t)q) != 1) continue;
        int scaled = (sop[q] == BERTH_OP_DIV && b->refs[2 * q] == x &&
                      ew_is_const(b, b->refs[2 * q + 1], 1.4142135623730951)) ||
                     (sop[q] == BERTH_OP_MUL && ew_other(b, (uint32_t)q, x) != INT64_MIN &&
                      ew_is_const(b, ew_other(b, (uint32_t)q, x), 0.7071067811865476));
        if (!scaled) continue;
        int drop[4] = {h, c2, e2, q};
        ew_become(b, sop, d, BERTH_OP_GELU, x, dead, drop, 4);
    }
}

/* gelu written as mul(mul(x, add(erf(div(x, sqrt2)), 1)), 0.5), the half
 * taken last, ending at mul step d: rewrites d as gelu(x). */
static void ew_match_gelu_half_last(ew_build *b, berth_op_id *sop, uint32_t n, uint32_t d, uint8_t *dead) {
    int half_side = ew_is_const(b, b->refs[2 * d + 1], 0.5) ? 1 : ew_is_const(b, b->refs[2 * d], 0.5) ? 0 : -1;
    if (half_side < 0) return;
    int m = ew_step_of(b, b->refs[2 * d + 1 - half_side]);
    if (m < 0 || sop[m] != BERTH_OP_MUL || ew_uses(b, sop, n, (uint32_t)m) != 1) return;
    for (int side = 0; side < 2; side++) {
        int p = ew_step_of(b, b->refs[2 * m + side]);
        int64_t x = b->refs[2 * m + 1 - side];
        if (p < 0 || sop[p] != BERTH_OP_ADD || ew_uses(b, sop, n, (uint32_t)p) != 1) continue;
        int e = -1;
        if (ew_is_const(b, b->refs[2 * p + 1], 1.0)) e = ew_step_of(b, b->refs[2 * p]);
        else if (ew_is_const(b, b->refs[2 * p], 1.0)) e = ew_step_of(b, b->refs[2 * p + 1]);
        if (e < 0 || sop[e] != BERTH_OP_ERF || ew_uses(b, sop, n, (uint32_t)e) != 1) continue;
        int q = ew_step_of(b, b->refs[2 * e]);
        if (q < 0 || ew_uses(b, sop, n, (uint32_t)q) != 1 || b->refs[2 * q] != x) continue;
        if (!(sop[q] == BERTH_OP_DIV && ew_is_const(b, b->refs[2 * q + 1], 1.4142135623730951)) &&
            !(sop[q] == BERTH_OP_MUL && ew_is_const(b, b->refs[2 * q + 1], 0.7071067811865476)))
            continue;
        int drop[4] = {q, e, p, m};
        ew_become(b, sop, d, BERTH_OP_GELU, x, dead, drop, 4);
        break;
    }
}

/* Drops the dead steps of the n, renumbering references to the live ones
 * so the program stays SSA; returns the count left. */
static uint32_t ew_drop_dead(ew_build *b, berth_op_id *sop, uint32_t n, const uint8_t *dead) {
    int64_t map[BK_EW_MAX_STEPS];
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) map[i] = dead[i] ? -1 : (int64_t)b->n_in + k++;
    k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (dead[i]) continue;
        for (int r = 0; r < 2; r++) {
            int64_t ref = b->refs[2 * i + r];
            b->refs[2 * k + r] = ref >= (int64_t)b->n_in && !(r == 1 && bk_ew_arity(sop[i]) == 1 && !bk_ew_options(sop[i]))
                                     ? map[ref - b->n_in] : ref;
        }
        sop[k++] = sop[i];
    }
    return k;
}

/* x * clamp(x + 3, 0, 6) / 6 -> hardSwish(x);
 * x * 0.5 * (1 + erf(x / sqrt(2))), in the order ONNX exporters write it
 * (div, erf, add 1, mul x, mul 0.5) -> gelu(x). Returns the new count. */
static uint32_t ew_recognize(ew_build *b, berth_op_id *sop) {
    uint32_t n = b->n;
    uint8_t dead[BK_EW_MAX_STEPS] = {0};
    for (uint32_t d = 0; d < n; d++) {
        if (dead[d]) continue;
        if (ew_match_hardswish(b, sop, n, d, dead)) continue;
        if (sop[d] != BERTH_OP_MUL) continue;
        ew_match_gelu_half_first(b, sop, n, d, dead);
        if (sop[d] != BERTH_OP_MUL) continue;
        ew_match_gelu_half_last(b, sop, n, d, dead);
    }
    return ew_drop_dead(b, sop, n, dead);
}

/* Grows the group from its sink through producers whose result only the
 * group reads and that fit a program of output y, up to the most steps a
 * program holds. */
static void ew_grow(const fuser *f, ew_build *b, const berth_operand *y) {
    for (int grown = 1; grown && b->n < BK_EW_MAX_STEPS;) {
        grown = 0;
        for (uint32_t i = 0; i < b->n && b->n < BK_EW_MAX_STEPS; i++) {
            const berth_node *nd = &f->nodes[b->nodes[i]];
            for (uint32_t k = 0; k < nd->n_inputs && b->n < BK_EW_MAX_STEPS; k++) {
                uint32_t o = nd->inputs[k];
                int32_t p = f->producer[o];
                if (p < 0 || in_group(b, p) || !ew_fits(f, (uint32_t)p, y) ||
                    f->users[o] != group_readers(f, b, o))
                    continue;
                b->nodes[b->n++] = (uint32_t)p;
                grown = 1;
            }
        }
    }
}

/* Puts the group's steps in graph order, which is topological; the sink
 * comes last. */
static void ew_sort_steps(ew_build *b) {
    for (uint32_t i = 1; i < b->n; i++)
        for (uint32_t j = i; j > 0 && b->nodes[j - 1] > b->nodes[j]; j--) {
            uint32_t t = b->nodes[j];
            b->nodes[j] = b->nodes[j - 1];
            b->nodes[j - 1] = t;
        }
}

/* Each step's operand references, and its options as constants; 0 when
 * the program has no room left for them (no fusion then), 1 else. */
static int ew_write_refs(const fuser *f, ew_build *b) {
    int ok = 1;
    for (uint32_t i = 0; i < b->n && ok; i++) {
        const berth_node *nd = &f->nodes[b->nodes[i]];
        berth_op_id id = berth_op_find(nd->op);
        b->refs[2 * i] = ew_ref(f, b, i, nd->inputs[0], &ok);
        b->refs[2 * i + 1] = 0;
        if (nd->n_inputs == 2) {
            b->refs[2 * i + 1] = ew_ref(f, b, i, nd->inputs[1], &ok);
        } else if (bk_ew_options(id)) {
            /* the options, consecutive constants (never shared: order matters) */
            double p0, p1 = 0;
            if (id == BERTH_OP_CLAMP) p0 = ew_option(nd, "minValue", -INFINITY), p1 = ew_option(nd, "maxValue", INFINITY);
            else if (id == BERTH_OP_HARD_SIGMOID) p0 = ew_option(nd, "alpha", 0.2), p1 = ew_option(nd, "beta", 0.5);
            else p0 = ew_option(nd, "alpha", id == BERTH_OP_ELU ? 1.0 : 0.01);
            int n_opt = bk_ew_options(id);
            if (b->n_constants + (uint32_t)n_opt > BK_EW_MAX_CONSTANTS) ok = 0;
            if (ok) {
                b->refs[2 * i + 1] = -(int64_t)b->n_constants - 1;
                b->constants[b->n_constants++] = p0;
                if (n_opt > 1) b->constants[b->n_constants++] = p1;
            }
        }
    }
    return ok;
}

/* The program's n_steps steps sop[] as one berth.elementwise node in the
 * group's place (at the sink): its op names, step references and
 * constants copied into the arena. -1 when out of memory. */
static int ew_emit(fuser *f, const ew_build *b, const berth_op_id *sop, uint32_t n_steps, uint32_t sink) {
    size_t ops_len = 0;
    for (uint32_t i = 0; i < n_steps; i++) ops_len += strlen(berth_op_table()[sop[i]].name) + 1;
    char *words = berth_arena_alloc(f->a, ops_len + 1);
    int64_t *refs = berth_arena_array(f->a, 2 * n_steps, sizeof(int64_t));
    double *consts = berth_arena_array(f->a, b->n_constants + 1, sizeof(double));
    if (!words || !refs || !consts) return -1;
    size_t w = 0;
    for (uint32_t i = 0; i < n_steps; i++) {
        const char *op = berth_op_table()[sop[i]].name;
        if (i) words[w++] = ' ';
        memcpy(words + w, op, strlen(op));
        w += strlen(op);
    }
    words[w] = 0;
    memcpy(refs, b->refs, sizeof(int64_t) * 2 * n_steps);
    memcpy(consts, b->constants, sizeof(double) * b->n_constants);
    berth_attr at[3];
    uint32_t na = 0;
    at[na++] = (berth_attr){.key = "ops", .type = BERTH_ATTR_STRING, .s = words};
    at[na++] = (berth_attr){.key = "steps", .type = BERTH_ATTR_INTS, .count = 2 * n_steps, .ints = refs};
    if (b->n_constants)
        at[na++] = (berth_attr){
            .key = "constants", .type = BERTH_ATTR_FLOATS, .count = b->n_constants, .floats = consts};
    int32_t chain[BK_EW_MAX_STEPS];
    for (uint32_t i = 0; i < b->n; i++) chain[i] = (int32_t)b->nodes[i];
    berth_node fused = fz_make_node(f, "berth.elementwise", &f->nodes[sink], b->n_in, b->in, na, at);
    if (!fused.op) return -1;
    return fz_replace(f, chain, (int)b->n, fused);
}

/* The group ending at `sink`: grown through producers whose result only
 * the group reads and that fit, then written as one berth.elementwise
 * program. */
int fz_try_elementwise(fuser *f, uint32_t sink) {
    const berth_operand *y = opnd(f, f->nodes[sink].outputs[0]);
    if (!ew_fits(f, sink, y)) return 0;
    ew_build b;
    b.n = 1;
    b.nodes[0] = sink;
    b.n_in = b.n_constants = 0;
    ew_grow(f, &b, y);
    if (b.n < 2 && !(f->want_conv_epi && after_conv(f, sink) >= 0)) return 0;
    ew_sort_steps(&b);
    if (!ew_write_refs(f, &b)) return 0;
    /* step references were written against BK_EW_MAX_INPUTS inputs; now
     * the count is known, steps start right after the inputs */
    for (uint32_t i = 0; i < 2 * b.n; i++)
        if (b.refs[i] >= BK_EW_MAX_INPUTS) b.refs[i] -= BK_EW_MAX_INPUTS - (int64_t)b.n_in;
    berth_op_id sop[BK_EW_MAX_STEPS];
    for (uint32_t i = 0; i < b.n; i++) sop[i] = berth_op_find(f->nodes[b.nodes[i]].op);
    uint32_t n_steps = ew_recognize(&b, sop);
    return ew_emit(f, &b, sop, n_steps, sink);
}

/* ---- (e) a named activation after a matmul's epilogue ------------------------------ */

/* A berth.elementwise of one relu, gelu, sigmoid or tanh step (a GELU
 * spelled as primitives, recognized) that alone reads a matmul epilogue
 * without activation or residual becomes that epilogue's activation. */
int fz_try_epilogue_activation(fuser *f, uint32_t e) {
    const berth_node *en = &f->nodes[e];
    if (f->removed[e] || strcmp(en->op, "berth.elementwise") || en->n_inputs != 1) return 0;
    const berth_attr *ops = node_attr(en, "ops"), *steps = node_attr(en, "steps");
    static const char *const acts[] = {"relu", "gelu", "sigmoid", "tanh"};
    const char *act = NULL;
    for (int k = 0; k < 4 && ops; k++)
        if (!strcmp(ops->s, acts[k])) act = acts[k];
    if (!act || !steps || steps->count != 2 || steps->ints[0] != 0) return 0;
    uint32_t o = en->inputs[0];
    int32_t m = f->producer[o];
    if (m < 0 || strcmp(f->nodes[m].op, "berth.matmulEpilogue") || f->users[o] != 1) return 0;
    const berth_node *mn = &f->nodes[m];
    if (node_attr(mn, "activation") || node_attr(mn, "residual")) return 0;
    berth_attr *at = berth_arena_array(f->a, mn->n_attrs + 1, sizeof(berth_attr));
    if (!at) return -1;
    memcpy(at, mn->attrs, sizeof(berth_attr) * mn->n_attrs);
    at[mn->n_attrs] = (berth_attr){.key = "activation", .type = BERTH_ATTR_STRING, .s = act};
    int32_t chain[2] = {m, (int32_t)e};
    berth_node fused = fz_make_node(f, "berth.matmulEpilogue", en, mn->n_inputs, mn->inputs, mn->n_attrs + 1, at);
    if (!fused.op) return -1;
    return fz_replace(f, chain, 2, fused);
}

/* ---- (f) a convolution and the program after it ---------------------------------- */

/* berth.elementwise node e reading, alone, a conv2d's result: one
 * berth.conv2dEpilogue with the conv's operands and options and e's
 * program, whose input 0 becomes the convolution's result. */
int fz_try_conv_epilogue(fuser *f, uint32_t e) {
    const berth_node *en = &f->nodes[e];
    if (f->removed[e] || strcmp(en->op, "berth.elementwise")) return 0;
    int k = after_conv(f, e);
    if (k < 0) return 0;
    uint32_t ci = (uint32_t)f->producer[en->inputs[k]];
    const berth_node *cn = &f->nodes[ci];
    const berth_attr *steps = node_attr(en, "steps");
    uint32_t n_in = en->n_inputs;
    int64_t *refs = berth_arena_array(f->a, steps->count + 1, sizeof(int64_t));
    int64_t *others = berth_arena_array(f->a, n_in + 1, sizeof(int64_t));
    berth_attr *at = berth_arena_array(f->a, cn->n_attrs + en->n_attrs + 2, sizeof(berth_attr));
    if (!refs || !others || !at) return -1;
    /* input k becomes input 0; the ones before it move up one */
    for (size_t i = 0; i < steps->count; i++) {
        int64_t r = steps->ints[i];
        refs[i] = r == k ? 0 : r >= 0 && r < k ? r + 1 : r;
    }
    uint32_t n_others = 0;
    for (uint32_t i = 0; i < n_in; i++)
        if ((int)i != k) others[n_others++] = en->inputs[i];
    uint32_t na = 0;
    for (uint32_t i = 0; i < cn->n_attrs; i++) at[na++] = cn->attrs[i];
    for (uint32_t i = 0; i < en->n_attrs; i++) {
        at[na] = en->attrs[i];
        if (!strcmp(at[na].key, "steps")) at[na].ints = refs;
        na++;
    }
    if (n_others) at[na++] = (berth_attr){.key = "epilogueInputs", .type = BERTH_ATTR_OPERANDS, .count = n_others, .ints = others};
    int32_t chain[2] = {(int32_t)ci, (int32_t)e};
    berth_node fused = fz_make_node(f, "berth.conv2dEpilogue", en, cn->n_inputs, cn->inputs, na, at);
    if (!fused.op) return -1;
    return fz_replace(f, chain, 2, fused);
}
