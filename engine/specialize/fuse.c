/* Fusion passes over a specialized graph.
 *
 * Each pass finds a chain of nodes whose intermediate values nothing else
 * reads (no other node, not a graph output), and replaces the chain by one
 * node the backend said it runs. The fused node takes the place of the
 * chain's last node, so topological order holds: every operand it reads
 * was defined before some node of the chain. Operands left unreferenced
 * are then removed and operand indices renumbered. */
#include <math.h>
#include <string.h>

#include "arena.h"
#include "fuse_internal.h"
#include "infer.h"

/* The k-th operand a node reads: its inputs, then its OPERAND options; -1
 * for an option of another type. */
static int64_t ref_at(const berth_node *nd, uint32_t k) {
    if (k < nd->n_inputs) return nd->inputs[k];
    const berth_attr *a = &nd->attrs[k - nd->n_inputs];
    return a->type == BERTH_ATTR_OPERAND ? a->i : -1;
}

static void count_uses(fuser *f) {
    memset(f->users, 0, sizeof(int32_t) * f->n_ops);
    for (uint32_t i = 0; i < f->n_ops; i++) f->reader[i] = f->producer[i] = -1;
    for (uint32_t i = 0; i < f->s->desc.n_outputs; i++) f->users[f->s->desc.outputs[i]]++;
    for (uint32_t n = 0; n < f->n_nodes; n++) {
        if (f->removed[n]) continue;
        const berth_node *nd = &f->nodes[n];
        for (uint32_t k = 0; k < nd->n_outputs; k++) f->producer[nd->outputs[k]] = (int32_t)n;
        /* count each operand once per reading node */
        uint32_t nr = nd->n_inputs + nd->n_attrs;
        for (uint32_t k = 0; k < nr; k++) {
            int64_t r = ref_at(nd, k);
            int dup = r < 0;
            for (uint32_t j = 0; j < k && !dup; j++) dup = ref_at(nd, j) == r;
            if (dup) continue;
            f->users[r]++;
            f->reader[r] = (int32_t)n;
        }
        for (uint32_t k = 0; k < nd->n_attrs; k++)
            if (nd->attrs[k].type == BERTH_ATTR_OPERANDS)
                for (size_t j = 0; j < nd->attrs[k].count; j++) f->users[nd->attrs[k].ints[j]] += 2;
    }
}

/* The only node reading operand o, if `op` and nothing else reads it. */
static int sole_reader(const fuser *f, uint32_t o, const char *op) {
    if (f->users[o] != 1 || f->reader[o] < 0) return -1;
    const berth_node *n = &f->nodes[f->reader[o]];
    return !strcmp(n->op, op) ? f->reader[o] : -1;
}

/* The other input of a binary node whose one input is `o`, or -1. */
static int64_t other_input(const berth_node *n, uint32_t o) {
    if (n->n_inputs != 2) return -1;
    if (n->inputs[0] == o) return n->inputs[1];
    if (n->inputs[1] == o) return n->inputs[0];
    return -1;
}

/* A CONSTANT operand holding one f32 value (all elements equal). */
int fz_const_scalar(const fuser *f, uint32_t o, double *out) {
    const berth_operand *c = opnd(f, o);
    if (c->kind != BERTH_OPERAND_CONSTANT || c->dtype != BERTH_DTYPE_F32 || !c->data) return 0;
    int64_t n = sp_numel(c->rank, c->dims);
    if (n < 1 || (size_t)n * 4 > c->bytes) return 0;
    float first;
    memcpy(&first, c->data, 4);
    for (int64_t i = 1; i < n; i++) {
        float v;
        memcpy(&v, (const char *)c->data + 4 * i, 4);
        if (v != first) return 0;
    }
    *out = first;
    return 1;
}

/* Replaces nodes chain[0..n) by `fused`, put where the last one was. */
int fz_replace(fuser *f, const int32_t *chain, int n, berth_node fused) {
    for (int i = 0; i < n; i++) f->removed[chain[i]] = 1;
    f->removed[chain[n - 1]] = 0;
    f->nodes[chain[n - 1]] = fused;
    count_uses(f);
    return 1;
}

berth_node fz_make_node(fuser *f, const char *op, const berth_node *last, uint32_t n_in, const uint32_t *in,
                        uint32_t n_attrs, const berth_attr *attrs) {
    berth_node n = {0};
    uint32_t *ins = berth_arena_array(f->a, n_in, sizeof(uint32_t));
    berth_attr *at = berth_arena_array(f->a, n_attrs + 1, sizeof(berth_attr));
    if (!ins || !at) return n;
    memcpy(ins, in, sizeof(uint32_t) * n_in);
    if (n_attrs) memcpy(at, attrs, sizeof(berth_attr) * n_attrs);
    n.op = op;
    n.name = last->name;
    n.n_inputs = n_in;
    n.inputs = ins;
    n.n_outputs = 1;
    n.outputs = last->outputs;
    n.n_attrs = n_attrs;
    n.attrs = at;
    return n;
}

/* ---- (a) matmul + bias + activation + residual, on float or quantized b ----- */

static int is_quant_int(berth_dtype t) {
    return t == BERTH_DTYPE_I8 || t == BERTH_DTYPE_U8 || t == BERTH_DTYPE_I4 || t == BERTH_DTYPE_U4;
}

static int is_stored(const berth_operand *o) {
    return o->kind == BERTH_OPERAND_WEIGHT || o->kind == BERTH_OPERAND_CONSTANT;
}

/* The dequantizeLinear node that makes operand o, when nothing else reads
 * o and its weights are laid out as the quantized fused ops take them:
 * a stored 2-D integer tensor with f32 scales and zero points of one 2-D
 * shape, blocks along the rows (by_rows: [G, N] over [K, N], the
 * matmul's reduction axis) or within each row ([V, G] over [V, D], an
 * embedding table's); -1 else. */
static int quant_source(const fuser *f, uint32_t o, int by_rows) {
    int32_t di = f->producer[o];
    if (di < 0 || f->users[o] != 1 || strcmp(f->nodes[di].op, "dequantizeLinear") || !is_f32(f, o)) return -1;
    const berth_node *d = &f->nodes[di];
    if (d->n_inputs != 3) return -1;
    const berth_operand *q = opnd(f, d->inputs[0]), *s = opnd(f, d->inputs[1]), *z = opnd(f, d->inputs[2]);
    if (!is_quant_int(q->dtype) || !is_stored(q) || !is_stored(s) || !is_stored(z) || q->rank != 2 ||
        s->rank != 2 || s->dtype != BERTH_DTYPE_F32 || z->dtype != q->dtype || !same_shape(s, z))
        return -1;
    int keep = by_rows ? 1 : 0, cut = 1 - keep; /* the dim equal to q's, the dim cut in blocks */
    if (s->dims[keep] != q->dims[keep] || s->dims[cut] < 1 || q->dims[cut] % s->dims[cut]) return -1;
    return di;
}

/* The count of inputs of a quantized fused op whose zero point is operand
 * z: 3 when z is a constant of all zeros (a symmetric quantization's), so
 * the op leaves it out and no plan copies it; else 4. */
static uint32_t quant_inputs(const fuser *f, uint32_t z) {
    const berth_operand *o = opnd(f, z);
    if (o->kind != BERTH_OPERAND_CONSTANT || (o->bytes && !o->data)) return 4;
    for (size_t i = 0; i < o->bytes; i++)
        if (((const uint8_t *)o->data)[i]) return 4;
    return 3;
}

/* A matmul, with the bias, activation and residual after it, into
 * berth.matmulEpilogue (which needs the bias) or, when b is a quantized
 * weight dequantized for this matmul alone, berth.matmulQuantized. */
static int try_epilogue(fuser *f, uint32_t mi, int want_epi, int want_quant) {
    const berth_node *mm = &f->nodes[mi];
    if (mm->n_inputs != 2 || !is_f32(f, mm->outputs[0])) return 0;
    /* A rank-1 b ([K], read as [K, 1]) drops the product's column dim:
     * the output's last dim is then a row dim, and an add along it is not
     * the per-column bias the fused op means. */
    if (opnd(f, mm->inputs[1])->rank < 2) return 0;
    int di = want_quant && opnd(f, mm->inputs[0])->rank >= 2 ? quant_source(f, mm->inputs[1], 1) : -1;
    if (di < 0 && !want_epi) return 0;
    uint32_t cur = mm->outputs[0];
    const berth_operand *m = opnd(f, cur);
    if (m->rank < 1) return 0;
    int32_t chain[5];
    int n = 0;
    if (di >= 0) chain[n++] = di;
    chain[n++] = (int32_t)mi;
    int64_t bias = -1;
    int ai = sole_reader(f, cur, "add");
    if (ai >= 0) {
        int64_t bv = other_input(&f->nodes[ai], cur);
        const berth_operand *b = bv >= 0 ? opnd(f, (uint32_t)bv) : NULL;
        int ok = b && (uint32_t)bv != cur && is_f32(f, (uint32_t)bv) && b->rank >= 1 && b->rank <= m->rank &&
                 b->dims[b->rank - 1] == m->dims[m->rank - 1];
        for (uint32_t i = 0; ok && i + 1 < b->rank; i++) ok = b->dims[i] == 1;
        if (ok) {
            bias = bv;
            chain[n++] = ai;
            cur = f->nodes[ai].outputs[0];
        }
    }
    if (bias < 0 && di < 0) return 0;
    const char *act = NULL;
    static const char *const acts[] = {"relu", "gelu", "sigmoid", "tanh", NULL};
    for (int k = 0; acts[k] && !act; k++) {
        int xi = sole_reader(f, cur, acts[k]);
        if (xi >= 0 && f->nodes[xi].n_inputs == 1) {
            act = acts[k];
            chain[n++] = xi;
            cur = f->nodes[xi].outputs[0];
        }
    }
    int64_t residual = -1;
    int ri = sole_reader(f, cur, "add");
    if (ri >= 0) {
        int64_t r = other_input(&f->nodes[ri], cur);
        if (r >= 0 && (uint32_t)r != cur && is_f32(f, (uint32_t)r) &&
            same_shape(opnd(f, (uint32_t)r), opnd(f, cur))) {
            residual = r;
            chain[n++] = ri;
        }
    }
    berth_attr at[3] = {{0}};
    uint32_t na = 0;
    if (bias >= 0) at[na++] = (berth_attr){.key = "bias", .type = BERTH_ATTR_OPERAND, .i = bias};
    if (act) at[na++] = (berth_attr){.key = "activation", .type = BERTH_ATTR_STRING, .s = act};
    if (residual >= 0) at[na++] = (berth_attr){.key = "residual", .type = BERTH_ATTR_OPERAND, .i = residual};
    berth_node fused;
    if (di >= 0) {
        const berth_node *d = &f->nodes[di];
        uint32_t ins[4] = {mm->inputs[0], d->inputs[0], d->inputs[1], d->inputs[2]};
        fused = fz_make_node(f, "berth.matmulQuantized", &f->nodes[chain[n - 1]], quant_inputs(f, d->inputs[2]),
                             ins, na, at);
    } else {
        fused = fz_make_node(f, "berth.matmulEpilogue", &f->nodes[chain[n - 1]], 2, mm->inputs, na, at);
    }
    if (!fused.op) return -1;
    return fz_replace(f, chain, n, fused);
}

/* A gather on axis 0 of an embedding table dequantized for it alone, into
 * berth.gatherQuantized. */
static int try_gather_quantized(fuser *f, uint32_t gi) {
    const berth_node *g = &f->nodes[gi];
    const berth_attr *ax = node_attr(g, "axis");
    if (g->n_inputs != 2 || (ax && (ax->type != BERTH_ATTR_INT || (ax->i != 0 && ax->i != -2)))) return 0;
    int di = quant_source(f, g->inputs[0], 0);
    if (di < 0) return 0;
    const berth_node *d = &f->nodes[di];
    if (!f->supports(f->ctx, "berth.gatherQuantized", opnd(f, d->inputs[0])->dtype)) return 0;
    uint32_t ins[4] = {d->inputs[0], g->inputs[1], d->inputs[1], d->inputs[2]};
    int32_t chain[2] = {di, (int32_t)gi};
    berth_node fused = fz_make_node(f, "berth.gatherQuantized", g, quant_inputs(f, d->inputs[2]), ins, 0, NULL);
    if (!fused.op) return -1;
    return fz_replace(f, chain, 2, fused);
}

/* ---- (b) attention ------------------------------------------------------------ */

static int swaps_last_two(const berth_node *t, uint32_t rank) {
    const berth_attr *p = node_attr(t, "permutation");
    if (rank < 2) return 0;
    if (!p) return rank == 2; /* default reverses, which swaps only for rank 2 */
    if (p->type != BERTH_ATTR_INTS || p->count != rank) return 0;
    for (uint32_t i = 0; i < rank; i++) {
        int64_t want = i + 2 < rank ? i : i + 2 == rank ? rank - 1 : rank - 2;
        if (p->ints[i] != want) return 0;
    }
    return 1;
}

static int softmax_last(const berth_node *n, uint32_t rank) {
    const berth_attr *a = node_attr(n, "axis");
    if (!a) return 1;
    return a->type == BERTH_ATTR_INT && (a->i == -1 || a->i == (int64_t)rank - 1);
}

/* k, in [.., d, s] layout, made by a transpose that nothing else reads
 * (as exported models write k's [0, 2, 3, 1]): that transpose becomes
 * one that gives k in [.., s, d] layout ([0, 2, 1, 3]), where a second
 * transpose would have been added after it. 1 when done, 0 when k is
 * not so made, -1 when out of memory. */
static int compose_swap(fuser *f, uint32_t k, uint32_t r, const int64_t *kd) {
    int32_t ti = f->producer[k];
    if (ti < 0 || strcmp(f->nodes[ti].op, "transpose") || f->users[k] != 1) return 0;
    const berth_node *t = &f->nodes[ti];
    const berth_attr *p = node_attr(t, "permutation");
    if (!p || p->type != BERTH_ATTR_INTS || p->count != r || r < 2) return 0;
    int64_t *perm = berth_arena_array(f->a, r, sizeof(int64_t));
    if (!perm) return -1;
    memcpy(perm, p->ints, sizeof(int64_t) * r);
    perm[r - 2] = p->ints[r - 1];
    perm[r - 1] = p->ints[r - 2];
    berth_attr pa = {.key = "permutation", .type = BERTH_ATTR_INTS, .count = r, .ints = perm};
    berth_node nt = fz_make_node(f, "transpose", t, 1, t->inputs, 1, &pa);
    if (!nt.op) return -1;
    f->nodes[ti] = nt;
    memcpy(f->ops[k].dims, kd, sizeof(int64_t) * r);
    return 1;
}

/* The optional scaling of the scores: a mul by, or a div of the scores
 * by, a constant scalar that nothing else reads after them. Joins it to
 * the chain and moves *cur past it; returns the scale, 1 when none. */
static double attention_scale(const fuser *f, uint32_t *cur, int32_t *chain, int *n) {
    double scale = 1.0, c;
    int si = sole_reader(f, *cur, "mul");
    if (si < 0) si = sole_reader(f, *cur, "div");
    if (si >= 0) {
        int64_t other = other_input(&f->nodes[si], *cur);
        int is_div = !strcmp(f->nodes[si].op, "div");
        if (other >= 0 && (!is_div || f->nodes[si].inputs[0] == *cur) &&
            fz_const_scalar(f, (uint32_t)other, &c) && opnd(f, (uint32_t)other)->rank <= 1 &&
            (!is_div || c != 0)) {
            scale = is_div ? 1.0 / c : c;
            chain[(*n)++] = si;
            *cur = f->nodes[si].outputs[0];
        }
    }
    return scale;
}

/* The optional mask added to the scores: an f32 operand that broadcasts
 * to the scores' shape. Joins the add to the chain, moves *cur past it
 * and sets *mask; 0 when an add follows but cannot be the fused op's
 * mask (no attention then), 1 else. */
static int attention_mask(const fuser *f, uint32_t *cur, int32_t *chain, int *n, int64_t *mask) {
    int ai = sole_reader(f, *cur, "add");
    if (ai >= 0) {
        int64_t mk = other_input(&f->nodes[ai], *cur);
        const berth_operand *s = opnd(f, *cur);
        uint32_t rb;
        int64_t d[BERTH_MAX_RANK * 2];
        if (mk < 0 || (uint32_t)mk == *cur || !is_f32(f, (uint32_t)mk)) return 0;
        const berth_operand *mo = opnd(f, (uint32_t)mk);
        if (!sp_broadcast(s->rank, s->dims, mo->rank, mo->dims, &rb, d) || rb != s->rank ||
            memcmp(d, s->dims, sizeof(int64_t) * rb))
            return 0;
        *mask = mk;
        chain[(*n)++] = ai;
        *cur = f->nodes[ai].outputs[0];
    }
    return 1;
}

/* A new value for k in [.., s, d] layout (dims kd), named after k with
 * ".T", and the transpose that makes it, put where the first matmul (node
 * mi) was, for a k that came in [.., d, s] layout with no transpose berth
 * could turn around. *k becomes the new value; -1 when out of memory. */
static int add_key_transpose(fuser *f, uint32_t mi, uint32_t *k, uint32_t r, const int64_t *kd) {
    const berth_operand *ko = opnd(f, *k);
    int64_t *perm = berth_arena_array(f->a, r, sizeof(int64_t));
    char *name = berth_arena_alloc(f->a, strlen(ko->name ? ko->name : "k") + 3);
    if (!perm || !name) return -1;
    for (uint32_t i = 0; i < r; i++) perm[i] = i;
    perm[r - 2] = r - 1;
    perm[r - 1] = r - 2;
    strcpy(name, ko->name ? ko->name : "k");
    strcat(name, ".T");
    uint32_t kt = f->n_ops;
    berth_operand *o = &f->ops[kt];
    *o = (berth_operand){.name = name, .kind = BERTH_OPERAND_VALUE, .dtype = ko->dtype, .rank = r};
    memcpy(o->dims, kd, sizeof(int64_t) * r);
    uint32_t *out = berth_arena_alloc(f->a, sizeof(uint32_t));
    berth_attr pa = {.key = "permutation", .type = BERTH_ATTR_INTS, .count = r, .ints = perm};
    if (!out) return -1;
    *out = kt;
    berth_node t = fz_make_node(f, "transpose", &f->nodes[mi], 1, k, 1, &pa);
    if (!t.op) return -1;
    t.name = name;
    t.outputs = out;
    f->n_ops++;
    f->nodes[mi] = t; /* m1 is replaced by the transpose; the rest go */
    *k = kt;
    return 0;
}

/* matmul(q, k^T), optionally scaled and masked, then a softmax on the last
 * axis and a matmul by v, into one berth.attention(q, k, v), when nothing
 * else reads the values between them. */
static int try_attention(fuser *f, uint32_t mi) {
    const berth_node *m1 = &f->nodes[mi];
    if (m1->n_inputs != 2) return 0;
    /* k arrives transposed by a transpose node (fused away), or as an
     * operand already in [.., d, s] layout (a transpose is added for it) */
    int32_t ti = f->producer[m1->inputs[1]];
    int has_t = ti >= 0 && !strcmp(f->nodes[ti].op, "transpose") && f->users[m1->inputs[1]] == 1 &&
                swaps_last_two(&f->nodes[ti], opnd(f, m1->inputs[1])->rank);
    if (!has_t && !f->can_transpose) return 0;
    uint32_t q = m1->inputs[0], k = has_t ? f->nodes[ti].inputs[0] : m1->inputs[1];
    const berth_operand *qo = opnd(f, q), *ko = opnd(f, k);
    if (!is_f32(f, q) || !is_f32(f, k) || qo->rank < 2 || ko->rank != qo->rank) return 0;
    uint32_t r = qo->rank;
    int64_t kd[BERTH_MAX_RANK]; /* k's dims in [.., s, d] layout */
    memcpy(kd, ko->dims, sizeof(int64_t) * r);
    if (!has_t) {
        kd[r - 2] = ko->dims[r - 1];
        kd[r - 1] = ko->dims[r - 2];
    }
    if (memcmp(qo->dims, kd, sizeof(int64_t) * (r - 2)) || qo->dims[r - 1] != kd[r - 1]) return 0;
    int32_t chain[7];
    int n = 0;
    if (has_t) chain[n++] = ti;
    chain[n++] = (int32_t)mi;
    uint32_t cur = m1->outputs[0];
    double scale = attention_scale(f, &cur, chain, &n);
    int64_t mask = -1;
    if (!attention_mask(f, &cur, chain, &n, &mask)) return 0;
    int xi = sole_reader(f, cur, "softmax");
    if (xi < 0 || !softmax_last(&f->nodes[xi], opnd(f, cur)->rank)) return 0;
    chain[n++] = xi;
    cur = f->nodes[xi].outputs[0];
    int m2 = sole_reader(f, cur, "matmul");
    if (m2 < 0 || f->nodes[m2].inputs[0] != cur) return 0;
    uint32_t v = f->nodes[m2].inputs[1];
    const berth_operand *vo = opnd(f, v);
    if (v == cur || !is_f32(f, v) || vo->rank != r || memcmp(vo->dims, qo->dims, sizeof(int64_t) * (r - 2)) ||
        vo->dims[r - 2] != kd[r - 2])
        return 0;
    chain[n++] = m2;
    berth_attr at[2] = {{0}};
    uint32_t na = 0;
    at[na++] = (berth_attr){.key = "scale", .type = BERTH_ATTR_FLOAT, .f = scale};
    if (mask >= 0) at[na++] = (berth_attr){.key = "mask", .type = BERTH_ATTR_OPERAND, .i = mask};
    int composed = has_t ? 0 : compose_swap(f, k, r, kd);
    if (composed < 0) return -1;
    int kept = 0; /* the leading chain nodes that stay: the first matmul, when it became k's transpose */
    if (!has_t && !composed) { /* a new value: k in [.., s, d], made where the first matmul was */
        if (add_key_transpose(f, mi, &k, r, kd)) return -1;
        kept = 1;
    }
    uint32_t ins[3] = {q, k, v};
    berth_node fused = fz_make_node(f, "berth.attention", &f->nodes[m2], 3, ins, na, at);
    if (!fused.op) return -1;
    return fz_replace(f, chain + kept, n - kept, fused);
}

/* ---- (c) layer normalization spelled as primitives ------------------------------ */

/* Sorted, normalized reduceMean axes with keepDimensions, into a mask. */
static int mean_axes(const berth_node *n, uint32_t rank, unsigned *mask) {
    const berth_attr *k = node_attr(n, "keepDimensions");
    if (!k || k->type != BERTH_ATTR_BOOL || !k->i) return 0;
    const berth_attr *a = node_attr(n, "axes");
    *mask = 0;
    if (!a) {
        *mask = (1u << rank) - 1;
        return rank > 0;
    }
    if (a->type != BERTH_ATTR_INTS || a->count == 0) return 0;
    for (size_t i = 0; i < a->count; i++) {
        int64_t ax = a->ints[i] < 0 ? a->ints[i] + rank : a->ints[i];
        if (ax < 0 || ax >= (int64_t)rank) return 0;
        *mask |= 1u << ax;
    }
    return 1;
}

/* Does operand o have exactly x's dims at the (trailing) axes? */
static int per_axes(const fuser *f, uint32_t o, const berth_operand *x, unsigned mask, uint32_t n_axes) {
    const berth_operand *p = opnd(f, o);
    if (p->dtype != BERTH_DTYPE_F32 || p->rank != n_axes) return 0;
    if (mask != ((1u << x->rank) - 1) - ((1u << (x->rank - n_axes)) - 1)) return 0;
    return !memcmp(p->dims, x->dims + (x->rank - n_axes), sizeof(int64_t) * n_axes);
}

static int try_layer_norm(fuser *f, uint32_t r1) {
    const berth_node *mean = &f->nodes[r1];
    if (mean->n_inputs != 1) return 0;
    uint32_t x = mean->inputs[0];
    const berth_operand *xo = opnd(f, x);
    unsigned mask, mask2;
    if (!is_f32(f, x) || !mean_axes(mean, xo->rank, &mask)) return 0;
    int32_t chain[10] = {(int32_t)r1};
    int n = 1;
    int si = sole_reader(f, mean->outputs[0], "sub");
    if (si < 0 || f->nodes[si].inputs[0] != x || f->nodes[si].inputs[1] != mean->outputs[0]) return 0;
    chain[n++] = si;
    uint32_t d = f->nodes[si].outputs[0];
    if (f->users[d] != 2) return 0;
    /* d's two readers: the square and the division */
    int sq = -1, dv = -1;
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        if (f->removed[i]) continue;
        const berth_node *nd = &f->nodes[i];
        double c;
        if (!strcmp(nd->op, "pow") && nd->n_inputs == 2 && nd->inputs[0] == d &&
            fz_const_scalar(f, nd->inputs[1], &c) && c == 2.0)
            sq = (int)i;
        else if (!strcmp(nd->op, "mul") && nd->n_inputs == 2 && nd->inputs[0] == d && nd->inputs[1] == d)
            sq = (int)i;
        else if (!strcmp(nd->op, "div") && nd->n_inputs == 2 && nd->inputs[0] == d && nd->inputs[1] != d)
            dv = (int)i;
    }
    if (sq < 0 || dv < 0) return 0;
    chain[n++] = sq;
    int r2 = sole_reader(f, f->nodes[sq].outputs[0], "reduceMean");
    if (r2 < 0 || !mean_axes(&f->nodes[r2], xo->rank, &mask2) || mask2 != mask) return 0;
    chain[n++] = r2;
    int ei = sole_reader(f, f->nodes[r2].outputs[0], "add");
    double eps;
    if (ei < 0) return 0;
    int64_t e = other_input(&f->nodes[ei], f->nodes[r2].outputs[0]);
    if (e < 0 || !fz_const_scalar(f, (uint32_t)e, &eps) || opnd(f, (uint32_t)e)->rank > 1) return 0;
    chain[n++] = ei;
    int qi = sole_reader(f, f->nodes[ei].outputs[0], "sqrt");
    if (qi < 0 || f->nodes[dv].inputs[1] != f->nodes[qi].outputs[0] ||
        sole_reader(f, f->nodes[qi].outputs[0], "div") != dv)
        return 0;
    chain[n++] = qi;
    chain[n++] = dv;
    uint32_t cur = f->nodes[dv].outputs[0], n_axes = 0;
    for (uint32_t i = 0; i < xo->rank; i++) n_axes += (mask >> i) & 1;
    int64_t scale = -1, bias = -1;
    int mi = sole_reader(f, cur, "mul");
    if (mi >= 0) {
        int64_t s = other_input(&f->nodes[mi], cur);
        if (s >= 0 && (uint32_t)s != cur && per_axes(f, (uint32_t)s, xo, mask, n_axes)) {
            scale = s;
            chain[n++] = mi;
            cur = f->nodes[mi].outputs[0];
        }
    }
    int bi = sole_reader(f, cur, "add");
    if (bi >= 0) {
        int64_t b = other_input(&f->nodes[bi], cur);
        if (b >= 0 && (uint32_t)b != cur && per_axes(f, (uint32_t)b, xo, mask, n_axes)) {
            bias = b;
            chain[n++] = bi;
        }
    }
    int64_t *axes = berth_arena_array(f->a, n_axes + 1, sizeof(int64_t));
    if (!axes) return -1;
    for (uint32_t i = 0, k = 0; i < xo->rank; i++)
        if ((mask >> i) & 1) axes[k++] = i;
    berth_attr at[4] = {{0}};
    uint32_t na = 0;
    at[na++] = (berth_attr){.key = "axes", .type = BERTH_ATTR_INTS, .count = n_axes, .ints = axes};
    at[na++] = (berth_attr){.key = "epsilon", .type = BERTH_ATTR_FLOAT, .f = eps};
    if (scale >= 0) at[na++] = (berth_attr){.key = "scale", .type = BERTH_ATTR_OPERAND, .i = scale};
    if (bias >= 0) at[na++] = (berth_attr){.key = "bias", .type = BERTH_ATTR_OPERAND, .i = bias};
    berth_node fused = fz_make_node(f, "layerNormalization", &f->nodes[chain[n - 1]], 1, &x, na, at);
    if (!fused.op) return -1;
    return fz_replace(f, chain, n, fused);
}

/* ---- compaction ------------------------------------------------------------------ */

static int compact(fuser *f) {
    berth_spec *s = f->s;
    int32_t *map = berth_arena_array(f->a, f->n_ops + 1, sizeof(int32_t));
    char *keep = berth_arena_alloc(f->a, f->n_ops + 1);
    if (!map || !keep) return -1;
    for (uint32_t i = 0; i < s->desc.n_inputs; i++) keep[s->desc.inputs[i]] = 1;
    for (uint32_t i = 0; i < s->desc.n_outputs; i++) keep[s->desc.outputs[i]] = 1;
    uint32_t nn = 0;
    for (uint32_t n = 0; n < f->n_nodes; n++) {
        if (f->removed[n]) continue;
        const berth_node *nd = &f->nodes[n];
        nn++;
        for (uint32_t k = 0; k < nd->n_inputs; k++) keep[nd->inputs[k]] = 1;
        for (uint32_t k = 0; k < nd->n_outputs; k++) keep[nd->outputs[k]] = 1;
        for (uint32_t k = 0; k < nd->n_attrs; k++) {
            if (nd->attrs[k].type == BERTH_ATTR_OPERAND) keep[nd->attrs[k].i] = 1;
            if (nd->attrs[k].type == BERTH_ATTR_OPERANDS)
                for (size_t j = 0; j < nd->attrs[k].count; j++) keep[nd->attrs[k].ints[j]] = 1;
        }
    }
    berth_operand *ops = berth_arena_array(f->a, f->n_ops + 1, sizeof(berth_operand));
    berth_node *nodes = berth_arena_array(f->a, nn + 1, sizeof(berth_node));
    if (!ops || !nodes) return -1;
    uint32_t k = 0;
    for (uint32_t i = 0; i < f->n_ops; i++) {
        map[i] = keep[i] ? (int32_t)k : -1;
        if (keep[i]) ops[k++] = f->ops[i];
    }
    uint32_t j = 0;
    for (uint32_t n = 0; n < f->n_nodes; n++) {
        if (f->removed[n]) continue;
        berth_node nd = f->nodes[n];
        uint32_t *in = berth_arena_array(f->a, nd.n_inputs + 1, sizeof(uint32_t));
        uint32_t *out = berth_arena_array(f->a, nd.n_outputs + 1, sizeof(uint32_t));
        berth_attr *at = berth_arena_array(f->a, nd.n_attrs + 1, sizeof(berth_attr));
        if (!in || !out || !at) return -1;
        for (uint32_t q = 0; q < nd.n_inputs; q++) in[q] = (uint32_t)map[nd.inputs[q]];
        for (uint32_t q = 0; q < nd.n_outputs; q++) out[q] = (uint32_t)map[nd.outputs[q]];
        for (uint32_t q = 0; q < nd.n_attrs; q++) {
            at[q] = nd.attrs[q];
            if (at[q].type == BERTH_ATTR_OPERAND) at[q].i = map[at[q].i];
            if (at[q].type == BERTH_ATTR_OPERANDS) {
                int64_t *v = berth_arena_array(f->a, at[q].count + 1, sizeof(int64_t));
                if (!v) return -1;
                for (size_t w = 0; w < at[q].count; w++) v[w] = map[at[q].ints[w]];
                at[q].ints = v;
            }
        }
        nd.inputs = in;
        nd.outputs = out;
        nd.attrs = at;
        nodes[j++] = nd;
    }
    uint32_t *ins = berth_arena_array(f->a, s->desc.n_inputs + 1, sizeof(uint32_t));
    uint32_t *outs = berth_arena_array(f->a, s->desc.n_outputs + 1, sizeof(uint32_t));
    if (!ins || !outs) return -1;
    for (uint32_t i = 0; i < s->desc.n_inputs; i++) ins[i] = (uint32_t)map[s->desc.inputs[i]];
    for (uint32_t i = 0; i < s->desc.n_outputs; i++) outs[i] = (uint32_t)map[s->desc.outputs[i]];
    for (uint32_t v = 0; v < s->n_values; v++)
        if (s->operand_of[v] >= 0) s->operand_of[v] = map[s->operand_of[v]];
    s->desc.operands = ops;
    s->desc.n_operands = k;
    s->desc.nodes = nodes;
    s->desc.n_nodes = j;
    s->desc.inputs = ins;
    s->desc.outputs = outs;
    return 0;
}

int berth_fuse(berth_spec *s, berth_supports_fn supports, void *ctx) {
    if (!s || !supports || s->desc.n_nodes == 0) return 0;
    fuser f = {0};
    f.s = s;
    f.a = s->arena;
    f.supports = supports;
    f.ctx = ctx;
    f.n_nodes = s->desc.n_nodes;
    f.n_ops = s->desc.n_operands;
    uint32_t room = fz_pow_room(&s->desc);
    f.nodes = berth_arena_array(f.a, (size_t)f.n_nodes + room, sizeof(berth_node));
    f.removed = berth_arena_alloc(f.a, (size_t)f.n_nodes + room);
    size_t cap = (size_t)f.n_ops + f.n_nodes + 2 * (size_t)room + 1;
    f.ops = berth_arena_array(f.a, cap, sizeof(berth_operand));
    f.users = berth_arena_array(f.a, cap, sizeof(int32_t));
    f.reader = berth_arena_array(f.a, cap, sizeof(int32_t));
    f.producer = berth_arena_array(f.a, cap, sizeof(int32_t));
    if (!f.nodes || !f.removed || !f.ops || !f.users || !f.reader || !f.producer) return 0;
    memcpy(f.nodes, s->desc.nodes, sizeof(berth_node) * f.n_nodes);
    memcpy(f.ops, s->desc.operands, sizeof(berth_operand) * f.n_ops);
    /* first, so the passes below see pow(x, 2) as mul(x, x): layer
     * normalization takes either, an elementwise program takes the mul */
    int total = fz_rewrite_pow(&f);
    if (total < 0) return 0;
    count_uses(&f);
    int want_attn = supports(ctx, "berth.attention", BERTH_DTYPE_F32);
    f.can_transpose = supports(ctx, "transpose", BERTH_DTYPE_F32);
    int want_epi = supports(ctx, "berth.matmulEpilogue", BERTH_DTYPE_F32);
    int want_quant = supports(ctx, "berth.matmulQuantized", BERTH_DTYPE_F32);
    int want_ln = supports(ctx, "layerNormalization", BERTH_DTYPE_F32);
    int want_ew = supports(ctx, "berth.elementwise", BERTH_DTYPE_F32);
    f.want_conv_epi = want_ew && supports(ctx, "berth.conv2dEpilogue", BERTH_DTYPE_F32);
    /* attention first: its matmuls must not be taken by the epilogue pass */
    for (uint32_t i = 0; i < f.n_nodes; i++) {
        if (f.removed[i]) continue;
        const char *op = f.nodes[i].op;
        int r = 0;
        if (want_attn && !strcmp(op, "matmul")) r = try_attention(&f, i);
        if (r == 0 && want_ln && !strcmp(op, "reduceMean")) r = try_layer_norm(&f, i);
        if (r < 0) return 0; /* out of memory: the desc is still the unfused one */
        total += r;
    }
    for (uint32_t i = 0; i < f.n_nodes; i++) {
        if (f.removed[i]) continue;
        int r = 0;
        if ((want_epi || want_quant) && !strcmp(f.nodes[i].op, "matmul")) r = try_epilogue(&f, i, want_epi, want_quant);
        if (!strcmp(f.nodes[i].op, "gather")) r = try_gather_quantized(&f, i);
        if (r < 0) return 0;
        total += r;
    }
    /* last: the passes above take their chains' elementwise nodes first;
     * from the end, so each group is grown from the node that ends it */
    for (uint32_t i = f.n_nodes; i-- > 0 && want_ew;) {
        int r = fz_try_elementwise(&f, i);
        if (r < 0) return 0;
        total += r;
    }
    /* a lone activation after a matmul's epilogue joins it */
    for (uint32_t i = 0; i < f.n_nodes && want_ew && want_epi; i++)
        if (fz_try_epilogue_activation(&f, i) < 0) return 0;
    /* then each program right after a convolution joins it; the fused
     * pair counts once (one program made, then moved) */
    for (uint32_t i = 0; i < f.n_nodes && f.want_conv_epi; i++)
        if (fz_try_conv_epilogue(&f, i) < 0) return 0;
    if (total && compact(&f)) return 0;
    return total;
}
