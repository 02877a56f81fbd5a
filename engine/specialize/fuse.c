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
#include "bk.h"
#include "infer.h"
#include "specialize.h"

typedef struct fuser {
    berth_spec *s;
    berth_arena *a;
    berth_supports_fn supports;
    void *ctx;
    berth_node *nodes; /* mutable copy of the desc's nodes */
    berth_operand *ops; /* mutable copy of the operands, room for one more per node */
    char *removed;     /* per node */
    uint32_t n_nodes, n_ops;
    int can_transpose; /* the backend runs transpose: attention may add one */
    int want_conv_epi; /* the backend runs berth.conv2dEpilogue */
    int32_t *users;    /* per operand: nodes that read it (+1 if a graph output) */
    int32_t *reader;   /* per operand: the last node reading it */
    int32_t *producer; /* per operand: the node writing it, or -1 */
} fuser;

static const berth_operand *opnd(const fuser *f, uint32_t i) { return &f->ops[i]; }

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

static int is_f32(const fuser *f, uint32_t o) { return opnd(f, o)->dtype == BERTH_DTYPE_F32; }

static int same_shape(const berth_operand *a, const berth_operand *b) {
    return a->rank == b->rank && !memcmp(a->dims, b->dims, sizeof(int64_t) * a->rank);
}

/* The other input of a binary node whose one input is `o`, or -1. */
static int64_t other_input(const berth_node *n, uint32_t o) {
    if (n->n_inputs != 2) return -1;
    if (n->inputs[0] == o) return n->inputs[1];
    if (n->inputs[1] == o) return n->inputs[0];
    return -1;
}

/* A CONSTANT operand holding one f32 value (all elements equal). */
static int const_scalar(const fuser *f, uint32_t o, double *out) {
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

static const berth_attr *node_attr(const berth_node *n, const char *key) {
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].key, key) && n->attrs[i].type != BERTH_ATTR_NULL) return &n->attrs[i];
    return NULL;
}

/* Replaces nodes chain[0..n) by `fused`, put where the last one was. */
static int replace(fuser *f, const int32_t *chain, int n, berth_node fused) {
    for (int i = 0; i < n; i++) f->removed[chain[i]] = 1;
    f->removed[chain[n - 1]] = 0;
    f->nodes[chain[n - 1]] = fused;
    count_uses(f);
    return 1;
}

static berth_node make_node(fuser *f, const char *op, const berth_node *last, uint32_t n_in,
                            const uint32_t *in, uint32_t n_attrs, const berth_attr *attrs) {
    berth_node n = {0};
    uint32_t *ins = berth_arena_array(f->a, n_in, sizeof(uint32_t));
    berth_attr *at = berth_arena_array(f->a, n_attrs + 1, sizeof(berth_attr));
    if (!ins || !at) return n;
    memcpy(ins, in, sizeof(uint32_t) * n_in);
    memcpy(at, attrs, sizeof(berth_attr) * n_attrs);
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

/* ---- (a) matmul + bias + activation + residual ----------------------------- */

static int try_epilogue(fuser *f, uint32_t mi) {
    const berth_node *mm = &f->nodes[mi];
    if (mm->n_inputs != 2 || !is_f32(f, mm->outputs[0])) return 0;
    /* A rank-1 b ([K], read as [K, 1]) drops the product's column dim:
     * the output's last dim is then a row dim, and an add along it is not
     * the per-column bias the fused op means. */
    if (opnd(f, mm->inputs[1])->rank < 2) return 0;
    uint32_t cur = mm->outputs[0];
    const berth_operand *m = opnd(f, cur);
    if (m->rank < 1) return 0;
    int32_t chain[4] = {(int32_t)mi};
    int n = 1;
    int ai = sole_reader(f, cur, "add");
    if (ai < 0) return 0;
    int64_t bias = other_input(&f->nodes[ai], cur);
    if (bias < 0 || (uint32_t)bias == cur || !is_f32(f, (uint32_t)bias)) return 0;
    const berth_operand *b = opnd(f, (uint32_t)bias);
    if (b->rank < 1 || b->rank > m->rank || b->dims[b->rank - 1] != m->dims[m->rank - 1]) return 0;
    for (uint32_t i = 0; i + 1 < b->rank; i++)
        if (b->dims[i] != 1) return 0;
    chain[n++] = ai;
    cur = f->nodes[ai].outputs[0];
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
    at[na++] = (berth_attr){.key = "bias", .type = BERTH_ATTR_OPERAND, .i = bias};
    if (act) at[na++] = (berth_attr){.key = "activation", .type = BERTH_ATTR_STRING, .s = act};
    if (residual >= 0) at[na++] = (berth_attr){.key = "residual", .type = BERTH_ATTR_OPERAND, .i = residual};
    berth_node fused = make_node(f, "berth.matmulEpilogue", &f->nodes[chain[n - 1]], 2, mm->inputs, na, at);
    if (!fused.op) return -1;
    return replace(f, chain, n, fused);
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
    double scale = 1.0, c;
    int si = sole_reader(f, cur, "mul");
    if (si < 0) si = sole_reader(f, cur, "div");
    if (si >= 0) {
        int64_t other = other_input(&f->nodes[si], cur);
        int is_div = !strcmp(f->nodes[si].op, "div");
        if (other >= 0 && (!is_div || f->nodes[si].inputs[0] == cur) &&
            const_scalar(f, (uint32_t)other, &c) && opnd(f, (uint32_t)other)->rank <= 1 &&
            (!is_div || c != 0)) {
            scale = is_div ? 1.0 / c : c;
            chain[n++] = si;
            cur = f->nodes[si].outputs[0];
        }
    }
    int64_t mask = -1;
    int ai = sole_reader(f, cur, "add");
    if (ai >= 0) {
        int64_t mk = other_input(&f->nodes[ai], cur);
        const berth_operand *s = opnd(f, cur);
        uint32_t rb;
        int64_t d[BERTH_MAX_RANK * 2];
        if (mk < 0 || (uint32_t)mk == cur || !is_f32(f, (uint32_t)mk)) return 0;
        const berth_operand *mo = opnd(f, (uint32_t)mk);
        if (!sp_broadcast(s->rank, s->dims, mo->rank, mo->dims, &rb, d) || rb != s->rank ||
            memcmp(d, s->dims, sizeof(int64_t) * rb))
            return 0;
        mask = mk;
        chain[n++] = ai;
        cur = f->nodes[ai].outputs[0];
    }
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
    if (!has_t) { /* a new value: k in [.., s, d], made where the first matmul was */
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
        berth_node t = make_node(f, "transpose", &f->nodes[mi], 1, &k, 1, &pa);
        if (!t.op) return -1;
        t.name = name;
        t.outputs = out;
        f->n_ops++;
        f->nodes[mi] = t; /* m1 is replaced by the transpose; the rest go */
        k = kt;
        uint32_t ins[3] = {q, k, v};
        berth_node fused = make_node(f, "berth.attention", &f->nodes[m2], 3, ins, na, at);
        if (!fused.op) return -1;
        return replace(f, chain + 1, n - 1, fused);
    }
    uint32_t ins[3] = {q, k, v};
    berth_node fused = make_node(f, "berth.attention", &f->nodes[m2], 3, ins, na, at);
    if (!fused.op) return -1;
    return replace(f, chain, n, fused);
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
            const_scalar(f, nd->inputs[1], &c) && c == 2.0)
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
    if (e < 0 || !const_scalar(f, (uint32_t)e, &eps) || opnd(f, (uint32_t)e)->rank > 1) return 0;
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
    berth_node fused = make_node(f, "layerNormalization", &f->nodes[chain[n - 1]], 1, &x, na, at);
    if (!fused.op) return -1;
    return replace(f, chain, n, fused);
}

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
    if (const_scalar(f, o, &v)) {
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
        if (!const_scalar(f, nd->inputs[k], &v) && !ew_broadcasts(opnd(f, nd->inputs[k]), y)) return 0;
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

/* x * clamp(x + 3, 0, 6) / 6 -> hardSwish(x);
 * x * 0.5 * (1 + erf(x / sqrt(2))), in the order ONNX exporters write it
 * (div, erf, add 1, mul x, mul 0.5) -> gelu(x). Returns the new count. */
static uint32_t ew_recognize(ew_build *b, berth_op_id *sop) {
    uint32_t n = b->n;
    uint8_t dead[BK_EW_MAX_STEPS] = {0};
    for (uint32_t d = 0; d < n; d++) {
        if (dead[d]) continue;
        /* hardswish, ending in a div by 6 or a mul by 1/6 */
        int c = -1;
        if (sop[d] == BERTH_OP_DIV && ew_is_const(b, b->refs[2 * d + 1], 6.0)) c = ew_step_of(b, b->refs[2 * d]);
        if (sop[d] == BERTH_OP_MUL && ew_is_const(b, b->refs[2 * d + 1], 1.0 / 6)) c = ew_step_of(b, b->refs[2 * d]);
        if (sop[d] == BERTH_OP_MUL && ew_is_const(b, b->refs[2 * d], 1.0 / 6)) c = ew_step_of(b, b->refs[2 * d + 1]);
        if (c >= 0 && sop[c] == BERTH_OP_MUL && ew_uses(b, sop, n, (uint32_t)c) == 1) {
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
            if (sop[d] == BERTH_OP_HARD_SWISH) continue;
        }
        if (sop[d] != BERTH_OP_MUL) continue;
        /* gelu written as mul(mul(x, 0.5), add(erf(mul(x, 1/sqrt2)), 1)) */
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
            int scaled = (sop[q] == BERTH_OP_DIV && b->refs[2 * q] == x && ew_is_const(b, b->refs[2 * q + 1], 1.4142135623730951)) ||
                         (sop[q] == BERTH_OP_MUL && ew_other(b, (uint32_t)q, x) != INT64_MIN &&
                          ew_is_const(b, ew_other(b, (uint32_t)q, x), 0.7071067811865476));
            if (!scaled) continue;
            int drop[4] = {h, c2, e2, q};
            ew_become(b, sop, d, BERTH_OP_GELU, x, dead, drop, 4);
        }
        if (sop[d] != BERTH_OP_MUL) continue;
        /* gelu: mul(mul(x, add(erf(div(x, sqrt2)), 1)), 0.5) */
        int half_side = ew_is_const(b, b->refs[2 * d + 1], 0.5) ? 1 : ew_is_const(b, b->refs[2 * d], 0.5) ? 0 : -1;
        if (half_side < 0) continue;
        int m = ew_step_of(b, b->refs[2 * d + 1 - half_side]);
        if (m < 0 || sop[m] != BERTH_OP_MUL || ew_uses(b, sop, n, (uint32_t)m) != 1) continue;
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
    /* drop the dead steps, renumbering references to the live ones */
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

/* The group ending at `sink`: grown through producers whose result only
 * the group reads and that fit, then written as one berth.elementwise
 * program. */
static int try_elementwise(fuser *f, uint32_t sink) {
    const berth_operand *y = opnd(f, f->nodes[sink].outputs[0]);
    if (!ew_fits(f, sink, y)) return 0;
    ew_build b;
    b.n = 1;
    b.nodes[0] = sink;
    b.n_in = b.n_constants = 0;
    for (int grown = 1; grown && b.n < BK_EW_MAX_STEPS;) {
        grown = 0;
        for (uint32_t i = 0; i < b.n && b.n < BK_EW_MAX_STEPS; i++) {
            const berth_node *nd = &f->nodes[b.nodes[i]];
            for (uint32_t k = 0; k < nd->n_inputs && b.n < BK_EW_MAX_STEPS; k++) {
                uint32_t o = nd->inputs[k];
                int32_t p = f->producer[o];
                if (p < 0 || in_group(&b, p) || !ew_fits(f, (uint32_t)p, y) ||
                    f->users[o] != group_readers(f, &b, o))
                    continue;
                b.nodes[b.n++] = (uint32_t)p;
                grown = 1;
            }
        }
    }
    if (b.n < 2 && !(f->want_conv_epi && after_conv(f, sink) >= 0)) return 0;
    /* steps in graph order, which is topological; the sink comes last */
    for (uint32_t i = 1; i < b.n; i++)
        for (uint32_t j = i; j > 0 && b.nodes[j - 1] > b.nodes[j]; j--) {
            uint32_t t = b.nodes[j];
            b.nodes[j] = b.nodes[j - 1];
            b.nodes[j - 1] = t;
        }
    int ok = 1;
    for (uint32_t i = 0; i < b.n && ok; i++) {
        const berth_node *nd = &f->nodes[b.nodes[i]];
        berth_op_id id = berth_op_find(nd->op);
        b.refs[2 * i] = ew_ref(f, &b, i, nd->inputs[0], &ok);
        b.refs[2 * i + 1] = 0;
        if (nd->n_inputs == 2) {
            b.refs[2 * i + 1] = ew_ref(f, &b, i, nd->inputs[1], &ok);
        } else if (bk_ew_options(id)) {
            /* the options, consecutive constants (never shared: order matters) */
            double p0, p1 = 0;
            if (id == BERTH_OP_CLAMP) p0 = ew_option(nd, "minValue", -INFINITY), p1 = ew_option(nd, "maxValue", INFINITY);
            else if (id == BERTH_OP_HARD_SIGMOID) p0 = ew_option(nd, "alpha", 0.2), p1 = ew_option(nd, "beta", 0.5);
            else p0 = ew_option(nd, "alpha", id == BERTH_OP_ELU ? 1.0 : 0.01);
            int n_opt = bk_ew_options(id);
            if (b.n_constants + (uint32_t)n_opt > BK_EW_MAX_CONSTANTS) ok = 0;
            if (ok) {
                b.refs[2 * i + 1] = -(int64_t)b.n_constants - 1;
                b.constants[b.n_constants++] = p0;
                if (n_opt > 1) b.constants[b.n_constants++] = p1;
            }
        }
    }
    if (!ok) return 0;
    /* step references were written against BK_EW_MAX_INPUTS inputs; now
     * the count is known, steps start right after the inputs */
    for (uint32_t i = 0; i < 2 * b.n; i++)
        if (b.refs[i] >= BK_EW_MAX_INPUTS) b.refs[i] -= BK_EW_MAX_INPUTS - (int64_t)b.n_in;
    berth_op_id sop[BK_EW_MAX_STEPS];
    for (uint32_t i = 0; i < b.n; i++) sop[i] = berth_op_find(f->nodes[b.nodes[i]].op);
    uint32_t n_steps = ew_recognize(&b, sop);
    size_t ops_len = 0;
    for (uint32_t i = 0; i < n_steps; i++) ops_len += strlen(berth_op_table()[sop[i]].name) + 1;
    char *words = berth_arena_alloc(f->a, ops_len + 1);
    int64_t *refs = berth_arena_array(f->a, 2 * n_steps, sizeof(int64_t));
    double *consts = berth_arena_array(f->a, b.n_constants + 1, sizeof(double));
    if (!words || !refs || !consts) return -1;
    size_t w = 0;
    for (uint32_t i = 0; i < n_steps; i++) {
        const char *op = berth_op_table()[sop[i]].name;
        if (i) words[w++] = ' ';
        memcpy(words + w, op, strlen(op));
        w += strlen(op);
    }
    words[w] = 0;
    memcpy(refs, b.refs, sizeof(int64_t) * 2 * n_steps);
    memcpy(consts, b.constants, sizeof(double) * b.n_constants);
    berth_attr at[3];
    uint32_t na = 0;
    at[na++] = (berth_attr){.key = "ops", .type = BERTH_ATTR_STRING, .s = words};
    at[na++] = (berth_attr){.key = "steps", .type = BERTH_ATTR_INTS, .count = 2 * n_steps, .ints = refs};
    if (b.n_constants) at[na++] = (berth_attr){.key = "constants", .type = BERTH_ATTR_FLOATS, .count = b.n_constants, .floats = consts};
    int32_t chain[BK_EW_MAX_STEPS];
    for (uint32_t i = 0; i < b.n; i++) chain[i] = (int32_t)b.nodes[i];
    berth_node fused = make_node(f, "berth.elementwise", &f->nodes[sink], b.n_in, b.in, na, at);
    if (!fused.op) return -1;
    return replace(f, chain, (int)b.n, fused);
}

/* ---- (e) a named activation after a matmul's epilogue ------------------------------ */

/* A berth.elementwise of one relu, gelu, sigmoid or tanh step (a GELU
 * spelled as primitives, recognized) that alone reads a matmul epilogue
 * without activation or residual becomes that epilogue's activation. */
static int try_epilogue_activation(fuser *f, uint32_t e) {
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
    berth_node fused = make_node(f, "berth.matmulEpilogue", en, mn->n_inputs, mn->inputs, mn->n_attrs + 1, at);
    if (!fused.op) return -1;
    return replace(f, chain, 2, fused);
}

/* ---- (f) a convolution and the program after it ---------------------------------- */

/* berth.elementwise node e reading, alone, a conv2d's result: one
 * berth.conv2dEpilogue with the conv's operands and options and e's
 * program, whose input 0 becomes the convolution's result. */
static int try_conv_epilogue(fuser *f, uint32_t e) {
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
    berth_node fused = make_node(f, "berth.conv2dEpilogue", en, cn->n_inputs, cn->inputs, na, at);
    if (!fused.op) return -1;
    return replace(f, chain, 2, fused);
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
    f.nodes = berth_arena_array(f.a, f.n_nodes, sizeof(berth_node));
    f.removed = berth_arena_alloc(f.a, f.n_nodes);
    size_t cap = (size_t)f.n_ops + f.n_nodes + 1;
    f.ops = berth_arena_array(f.a, cap, sizeof(berth_operand));
    f.users = berth_arena_array(f.a, cap, sizeof(int32_t));
    f.reader = berth_arena_array(f.a, cap, sizeof(int32_t));
    f.producer = berth_arena_array(f.a, cap, sizeof(int32_t));
    if (!f.nodes || !f.removed || !f.ops || !f.users || !f.reader || !f.producer) return 0;
    memcpy(f.nodes, s->desc.nodes, sizeof(berth_node) * f.n_nodes);
    memcpy(f.ops, s->desc.operands, sizeof(berth_operand) * f.n_ops);
    count_uses(&f);
    int want_attn = supports(ctx, "berth.attention", BERTH_DTYPE_F32);
    f.can_transpose = supports(ctx, "transpose", BERTH_DTYPE_F32);
    int want_epi = supports(ctx, "berth.matmulEpilogue", BERTH_DTYPE_F32);
    int want_ln = supports(ctx, "layerNormalization", BERTH_DTYPE_F32);
    int want_ew = supports(ctx, "berth.elementwise", BERTH_DTYPE_F32);
    f.want_conv_epi = want_ew && supports(ctx, "berth.conv2dEpilogue", BERTH_DTYPE_F32);
    int total = 0;
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
    for (uint32_t i = 0; i < f.n_nodes && want_epi; i++) {
        if (f.removed[i] || strcmp(f.nodes[i].op, "matmul")) continue;
        int r = try_epilogue(&f, i);
        if (r < 0) return 0;
        total += r;
    }
    /* last: the passes above take their chains' elementwise nodes first;
     * from the end, so each group is grown from the node that ends it */
    for (uint32_t i = f.n_nodes; i-- > 0 && want_ew;) {
        int r = try_elementwise(&f, i);
        if (r < 0) return 0;
        total += r;
    }
    /* a lone activation after a matmul's epilogue joins it */
    for (uint32_t i = 0; i < f.n_nodes && want_ew && want_epi; i++)
        if (try_epilogue_activation(&f, i) < 0) return 0;
    /* then each program right after a convolution joins it; the fused
     * pair counts once (one program made, then moved) */
    for (uint32_t i = 0; i < f.n_nodes && f.want_conv_epi; i++)
        if (try_conv_epilogue(&f, i) < 0) return 0;
    if (total && compact(&f)) return 0;
    return total;
}
