#include "graph_gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading the bytes ---- */

typedef struct reader {
    const uint8_t *p;
    size_t front, back; /* structure reads p[front++], values p[--back] */
    uint64_t rng;       /* past either end */
} reader;

static unsigned from_rng(reader *r) {
    r->rng ^= r->rng << 13;
    r->rng ^= r->rng >> 7;
    r->rng ^= r->rng << 17;
    return (unsigned)(r->rng >> 56);
}

static unsigned byte(reader *r) { return r->front < r->back ? r->p[r->front++] : from_rng(r); }
static unsigned value_byte(reader *r) { return r->back > r->front ? r->p[--r->back] : from_rng(r); }
/* 0 .. n-1 */
static unsigned pick(reader *r, unsigned n) { return n ? byte(r) % n : 0; }

/* ---- the graph being written ---- */

typedef struct value {
    char name[16];
    gen_shape s;
    int from_node; /* produced by a node (may become an output) */
    int used;      /* read by a later node */
} value;

typedef struct gen {
    gen_graph *g;
    reader r;
    value vals[GEN_MAX_VALUES];
    uint32_t n_vals;
    char consts[2048], nodes[16384];
    size_t n_consts, n_nodes_text;
    uint32_t n_consts_made, n_nodes_made;
    int full; /* a buffer or a table ran out: stop adding */
} gen;

static void put(gen *G, char *buf, size_t cap, size_t *len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= cap - *len) {
        G->full = 1;
        buf[*len] = 0;
        return;
    }
    *len += (size_t)k;
}
#define NODE(...) put(G, G->nodes, sizeof G->nodes, &G->n_nodes_text, __VA_ARGS__)

size_t gen_numel(const gen_shape *s) {
    size_t n = 1;
    for (uint32_t i = 0; i < s->rank; i++) n *= (size_t)s->dims[i];
    return n;
}

static const char *shape_text(const gen_shape *s, char *buf, size_t cap) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (uint32_t i = 0; i < s->rank && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", (long long)s->dims[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

static value *add_value(gen *G, const char *name, const gen_shape *s, int from_node) {
    if (G->n_vals == GEN_MAX_VALUES) {
        G->full = 1;
        return NULL;
    }
    value *v = &G->vals[G->n_vals++];
    snprintf(v->name, sizeof v->name, "%s", name);
    v->s = *s;
    v->from_node = from_node;
    return v;
}

/* A new graph input of shape s. */
static const char *new_input(gen *G, const gen_shape *s) {
    gen_graph *g = G->g;
    if (g->n_inputs == GEN_MAX_INPUTS) {
        G->full = 1;
        return NULL;
    }
    uint32_t i = g->n_inputs++;
    snprintf(g->input_name[i], sizeof g->input_name[i], "x%u", i);
    g->input_shape[i] = *s;
    value *v = add_value(G, g->input_name[i], s, 0);
    return v ? v->name : NULL;
}

/* A @scalar const (every element the same) of shape s. */
static const char *new_const(gen *G, const gen_shape *s, double v) {
    static char names[64][16];
    uint32_t i = G->n_consts_made++ % 64;
    char sb[64];
    snprintf(names[i], sizeof names[i], "c%u", G->n_consts_made - 1);
    put(G, G->consts, sizeof G->consts, &G->n_consts, "    %s: f32%s @scalar(%.9g);\n", names[i],
        shape_text(s, sb, sizeof sb), v);
    return names[i];
}

/* The name of the next node's output; `part` names a macro's steps. */
static const char *next_name(gen *G, char *buf, size_t cap, int part) {
    if (part < 0) snprintf(buf, cap, "v%u", G->n_nodes_made);
    else snprintf(buf, cap, "v%u_%d", G->n_nodes_made, part);
    return buf;
}

static value *produced(gen *G, const char *name, const gen_shape *s) { return add_value(G, name, s, 1); }

/* ---- shapes ---- */

static void random_shape(gen *G, gen_shape *s, uint32_t min_rank) {
    reader *r = &G->r;
    s->rank = min_rank + pick(r, GEN_MAX_RANK + 1 - min_rank);
    if (pick(r, 6)) s->rank = s->rank ? s->rank : 1; /* rank 0 now and then */
    if (s->rank < min_rank) s->rank = min_rank;
    for (uint32_t i = 0; i < s->rank; i++) s->dims[i] = 1 + pick(r, 5);
    while (gen_numel(s) > GEN_MAX_NUMEL / 4)
        for (uint32_t i = 0; i < s->rank; i++)
            if (s->dims[i] > 1) s->dims[i]--;
}

/* numpy broadcasting of a and b; 0 if they do not broadcast. */
static int broadcast(const gen_shape *a, const gen_shape *b, gen_shape *out) {
    uint32_t r = a->rank > b->rank ? a->rank : b->rank;
    if (r > GEN_MAX_RANK) return 0;
    for (uint32_t i = 0; i < r; i++) {
        int64_t da = i + a->rank < r ? 1 : a->dims[i + a->rank - r];
        int64_t db = i + b->rank < r ? 1 : b->dims[i + b->rank - r];
        if (da != db && da != 1 && db != 1) return 0;
        out->dims[i] = da == 1 ? db : da;
    }
    out->rank = r;
    return 1;
}

/* A shape that broadcasts with a: some of a's dims made 1, some leading
 * ones dropped, or a leading one added. */
static void partner_shape(gen *G, const gen_shape *a, gen_shape *b) {
    reader *r = &G->r;
    unsigned how = pick(r, 4);
    uint32_t drop = how == 0 && a->rank ? pick(r, a->rank + 1) : 0;
    b->rank = 0;
    if (how == 1 && a->rank < GEN_MAX_RANK) b->dims[b->rank++] = 1 + pick(r, 3);
    for (uint32_t i = drop; i < a->rank; i++) b->dims[b->rank++] = pick(r, 3) == 0 ? 1 : a->dims[i];
}

/* ---- ops ---- */

static value *pick_value(gen *G, uint32_t min_rank) {
    uint32_t n = 0, idx[GEN_MAX_VALUES];
    for (uint32_t i = 0; i < G->n_vals; i++)
        if (G->vals[i].s.rank >= min_rank) idx[n++] = i;
    if (!n) return NULL;
    /* lean towards recent values, so the graph grows deep as well as wide */
    unsigned k = pick(&G->r, 4) ? n - 1 - pick(&G->r, n < 3 ? n : 3) : pick(&G->r, n);
    G->vals[idx[k]].used = 1;
    return &G->vals[idx[k]];
}

static const char *const UNARY[] = {"relu", "abs",  "neg",  "sigmoid", "tanh",      "exp", "log",
                                    "sqrt", "erf",  "gelu", "clamp",   "leakyRelu", "elu"};
static const char *const BINARY[] = {"add", "sub", "mul", "div", "max", "min"};

static void op_unary(gen *G, value *a) {
    reader *r = &G->r;
    const char *op = UNARY[pick(r, sizeof UNARY / sizeof UNARY[0])];
    char name[16], opts[96] = "";
    if (!strcmp(op, "clamp")) {
        double lo = ((int)pick(r, 9) - 6) / 2.0, hi = lo + pick(r, 9) / 2.0;
        unsigned which = pick(r, 3); /* both bounds, only the lower, only the upper */
        if (which == 0) snprintf(opts, sizeof opts, ", minValue=%g, maxValue=%g", lo, hi);
        else if (which == 1) snprintf(opts, sizeof opts, ", minValue=%g", lo);
        else snprintf(opts, sizeof opts, ", maxValue=%g", hi);
    } else if (!strcmp(op, "leakyRelu") || !strcmp(op, "elu")) {
        if (pick(r, 2)) snprintf(opts, sizeof opts, ", alpha=%g", pick(r, 8) / 4.0);
    }
    next_name(G, name, sizeof name, -1);
    NODE("    %s = %s(%s%s);\n", name, op, a->name, opts);
    produced(G, name, &a->s);
}

static void op_binary(gen *G, value *a) {
    reader *r = &G->r;
    const char *op = BINARY[pick(r, sizeof BINARY / sizeof BINARY[0])];
    const char *bn = NULL;
    gen_shape bs, out;
    unsigned src = pick(r, 4);
    if (src == 0) { /* another value, if one broadcasts */
        value *b = pick_value(G, 0);
        if (b && broadcast(&a->s, &b->s, &out)) bn = b->name, bs = b->s;
    } else if (src == 1) { /* a constant */
        bs.rank = pick(r, 2);
        if (bs.rank == 1) bs.dims[0] = a->s.rank && pick(r, 2) ? a->s.dims[a->s.rank - 1] : 1;
        bn = new_const(G, &bs, ((int)pick(r, 17) - 8) / 4.0);
    }
    if (!bn) {
        partner_shape(G, &a->s, &bs);
        if (!(bn = new_input(G, &bs))) return;
    }
    if (!broadcast(&a->s, &bs, &out) || gen_numel(&out) > GEN_MAX_NUMEL) return;
    char name[16];
    next_name(G, name, sizeof name, -1);
    if (pick(r, 2)) NODE("    %s = %s(%s, %s);\n", name, op, a->name, bn);
    else NODE("    %s = %s(%s, %s);\n", name, op, bn, a->name);
    produced(G, name, &out);
}

/* matmul with a on the left (or, now and then, the right); the other
 * side is a new input. Batch dims broadcast; rank-1 operands are read
 * ONNX's way ([K] as [1, K] on the left, [K, 1] on the right). */
static void op_matmul(gen *G, value *a) {
    reader *r = &G->r;
    gen_shape o, out;
    char name[16];
    int right = a->s.rank >= 2 && pick(r, 3) == 0;
    if (!right) {
        int64_t k = a->s.dims[a->s.rank - 1];
        if (pick(r, 5) == 0) { /* b: [K] */
            o.rank = 1;
            o.dims[0] = k;
        } else {
            gen_shape batch = {a->s.rank >= 2 ? a->s.rank - 2 : 0, {0}};
            memcpy(batch.dims, a->s.dims, sizeof(int64_t) * batch.rank);
            partner_shape(G, &batch, &o);
            if (o.rank + 2 > GEN_MAX_RANK) o.rank = GEN_MAX_RANK - 2;
            o.dims[o.rank++] = k;
            o.dims[o.rank++] = 1 + pick(r, 6);
        }
    } else {
        gen_shape batch = {a->s.rank - 2, {0}};
        memcpy(batch.dims, a->s.dims, sizeof(int64_t) * batch.rank);
        partner_shape(G, &batch, &o);
        if (o.rank + 2 > GEN_MAX_RANK) o.rank = GEN_MAX_RANK - 2;
        o.dims[o.rank++] = 1 + pick(r, 6);
        o.dims[o.rank++] = a->s.dims[a->s.rank - 2];
    }
    const gen_shape *L = right ? &o : &a->s, *R = right ? &a->s : &o;
    /* the result's shape, by WebNN's rule with ONNX's rank-1 reading */
    gen_shape lb = {L->rank > 2 ? L->rank - 2 : 0, {0}}, rb = {R->rank > 2 ? R->rank - 2 : 0, {0}};
    memcpy(lb.dims, L->dims, sizeof(int64_t) * lb.rank);
    memcpy(rb.dims, R->dims, sizeof(int64_t) * rb.rank);
    if (!broadcast(&lb, &rb, &out)) return;
    if (L->rank > 1) out.dims[out.rank++] = L->dims[L->rank - 2];
    if (R->rank > 1) out.dims[out.rank++] = R->dims[R->rank - 1];
    if (out.rank > GEN_MAX_RANK || gen_numel(&out) > GEN_MAX_NUMEL || gen_numel(&o) > GEN_MAX_NUMEL) return;
    const char *on = new_input(G, &o);
    if (!on) return;
    next_name(G, name, sizeof name, -1);
    NODE("    %s = matmul(%s, %s);\n", name, right ? on : a->name, right ? a->name : on);
    produced(G, name, &out);
}

static const char *const REDUCE[] = {"reduceSum", "reduceMean", "reduceMax", "reduceMin"};

static void op_reduce(gen *G, value *a) {
    reader *r = &G->r;
    const char *op = REDUCE[pick(r, 4)];
    unsigned mask = pick(r, 256) & ((1u << a->s.rank) - 1);
    int keep = (int)pick(r, 2), all_default = pick(r, 5) == 0;
    char axes[64] = "", name[16];
    gen_shape out = {0, {0}};
    if (all_default) mask = (1u << a->s.rank) - 1;
    size_t k = 0;
    for (uint32_t i = 0; i < a->s.rank; i++) {
        if ((mask >> i) & 1) {
            k += (size_t)snprintf(axes + k, sizeof axes - k, "%s%u", k ? ", " : "", i);
            if (keep) out.dims[out.rank++] = 1;
        } else {
            out.dims[out.rank++] = a->s.dims[i];
        }
    }
    next_name(G, name, sizeof name, -1);
    NODE("    %s = %s(%s", name, op, a->name);
    if (!all_default) NODE(", axes=[%s]", axes);
    if (keep || pick(r, 2)) NODE(", keepDimensions=%s", keep ? "true" : "false");
    NODE(");\n");
    produced(G, name, &out);
}

static void op_transpose(gen *G, value *a) {
    reader *r = &G->r;
    uint32_t n = a->s.rank, perm[GEN_MAX_RANK];
    gen_shape out = {n, {0}};
    char name[16];
    next_name(G, name, sizeof name, -1);
    if (pick(r, 4) == 0) { /* no permutation: the axes reversed */
        for (uint32_t i = 0; i < n; i++) out.dims[i] = a->s.dims[n - 1 - i];
        NODE("    %s = transpose(%s);\n", name, a->name);
    } else {
        for (uint32_t i = 0; i < n; i++) perm[i] = i;
        for (uint32_t i = n; i > 1; i--) {
            uint32_t j = pick(r, i), t = perm[i - 1];
            perm[i - 1] = perm[j];
            perm[j] = t;
        }
        NODE("    %s = transpose(%s, permutation=[", name, a->name);
        for (uint32_t i = 0; i < n; i++) {
            NODE("%s%u", i ? ", " : "", perm[i]);
            out.dims[i] = a->s.dims[perm[i]];
        }
        NODE("]);\n");
    }
    produced(G, name, &out);
}

/* The same elements in a new shape: the element count split into up to
 * four factors, one of them written as -1 now and then. */
static void op_reshape(gen *G, value *a) {
    reader *r = &G->r;
    size_t left = gen_numel(&a->s);
    gen_shape out = {0, {0}};
    uint32_t want = 1 + pick(r, GEN_MAX_RANK);
    while (out.rank + 1 < want) {
        size_t divs[64], nd = 0;
        for (size_t d = 1; d <= left && nd < 64; d++)
            if (left % d == 0) divs[nd++] = d;
        size_t d = divs[pick(r, (unsigned)nd)];
        out.dims[out.rank++] = (int64_t)d;
        left /= d;
    }
    out.dims[out.rank++] = (int64_t)left;
    int infer = pick(r, 3) == 0 ? (int)pick(r, out.rank) : -1;
    char name[16];
    next_name(G, name, sizeof name, -1);
    NODE("    %s = reshape(%s, newShape=[", name, a->name);
    for (uint32_t i = 0; i < out.rank; i++) NODE("%s%lld", i ? ", " : "", (int)i == infer ? -1LL : (long long)out.dims[i]);
    NODE("]);\n");
    produced(G, name, &out);
}

static void op_softmax(gen *G, value *a) {
    reader *r = &G->r;
    int axis = (int)pick(r, a->s.rank);
    if (pick(r, 4) == 0) axis -= (int)a->s.rank; /* counted from the end */
    char name[16];
    next_name(G, name, sizeof name, -1);
    NODE("    %s = softmax(%s, axis=%d);\n", name, a->name, axis);
    produced(G, name, &a->s);
}

static void op_concat(gen *G, value *a) {
    reader *r = &G->r;
    uint32_t axis = pick(r, a->s.rank), n = 2 + pick(r, 2);
    const char *names[3] = {a->name};
    gen_shape out = a->s;
    for (uint32_t i = 1; i < n; i++) {
        if (pick(r, 3) == 0) {
            names[i] = a->name; /* the same operand twice */
            out.dims[axis] += a->s.dims[axis];
        } else {
            gen_shape s = a->s;
            s.dims[axis] = 1 + pick(r, 3);
            if (!(names[i] = new_input(G, &s))) return;
            out.dims[axis] += s.dims[axis];
        }
    }
    if (gen_numel(&out) > GEN_MAX_NUMEL) return;
    char name[16];
    next_name(G, name, sizeof name, -1);
    uint32_t first = pick(r, n); /* a need not come first */
    NODE("    %s = concat([", name);
    for (uint32_t i = 0; i < n; i++) NODE("%s%s", i ? ", " : "", names[(first + i) % n]);
    NODE("], axis=%u);\n", axis);
    produced(G, name, &out);
}

static void op_slice(gen *G, value *a) {
    reader *r = &G->r;
    int64_t st[GEN_MAX_RANK], sz[GEN_MAX_RANK], sd[GEN_MAX_RANK];
    int strided = pick(r, 3) == 0;
    gen_shape out = a->s;
    for (uint32_t i = 0; i < a->s.rank; i++) {
        st[i] = pick(r, (unsigned)a->s.dims[i]);
        sz[i] = 1 + pick(r, (unsigned)(a->s.dims[i] - st[i]));
        sd[i] = strided ? 1 + pick(r, 3) : 1;
        out.dims[i] = (sz[i] + sd[i] - 1) / sd[i];
    }
    char name[16];
    next_name(G, name, sizeof name, -1);
    NODE("    %s = slice(%s, starts=[", name, a->name);
    for (uint32_t i = 0; i < a->s.rank; i++) NODE("%s%lld", i ? ", " : "", (long long)st[i]);
    NODE("], sizes=[");
    for (uint32_t i = 0; i < a->s.rank; i++) NODE("%s%lld", i ? ", " : "", (long long)sz[i]);
    if (strided) {
        NODE("], strides=[");
        for (uint32_t i = 0; i < a->s.rank; i++) NODE("%s%lld", i ? ", " : "", (long long)sd[i]);
    }
    NODE("]);\n");
    produced(G, name, &out);
}

/* Dims of 1 grown, and now and then a leading dim added. */
static void op_expand(gen *G, value *a) {
    reader *r = &G->r;
    gen_shape out = {0, {0}};
    if (a->s.rank < GEN_MAX_RANK && pick(r, 3) == 0) out.dims[out.rank++] = 1 + pick(r, 3);
    for (uint32_t i = 0; i < a->s.rank; i++)
        out.dims[out.rank++] = a->s.dims[i] == 1 ? 1 + pick(r, 4) : a->s.dims[i];
    if (gen_numel(&out) > GEN_MAX_NUMEL) return;
    char name[16];
    next_name(G, name, sizeof name, -1);
    NODE("    %s = expand(%s, newShape=[", name, a->name);
    for (uint32_t i = 0; i < out.rank; i++) NODE("%s%lld", i ? ", " : "", (long long)out.dims[i]);
    NODE("]);\n");
    produced(G, name, &out);
}

/* ---- patterns the engine fuses when the backend runs the fused op ---- */

/* matmul + bias add, an activation, a residual add: berth.matmulEpilogue */
static void pat_linear(gen *G, value *a) {
    reader *r = &G->r;
    static const char *const acts[] = {"relu", "gelu", "sigmoid", "tanh", NULL};
    int64_t k = a->s.dims[a->s.rank - 1], n = 1 + pick(r, 6);
    gen_shape ws = {2, {k, n}}, bs = {pick(r, 2) + 1, {1, n}}, out = a->s;
    if (bs.rank == 1) bs.dims[0] = n;
    if (a->s.rank == 1) { /* [K] x [K, N] is [N] */
        out.rank = 1;
        out.dims[0] = n;
        bs.rank = 1;
        bs.dims[0] = n;
    } else if (pick(r, 4) == 0) { /* [.., M, K] x [K] is [.., M]: the add is along rows, no bias */
        ws.rank = 1;
        out.rank--;
        bs.rank = 1;
        bs.dims[0] = out.dims[out.rank - 1];
    } else {
        out.dims[out.rank - 1] = n;
    }
    if (gen_numel(&out) > GEN_MAX_NUMEL) return;
    const char *w = new_input(G, &ws), *b = w ? new_input(G, &bs) : NULL;
    if (!b) return;
    char m[16], h[16], y[16], z[16];
    next_name(G, m, sizeof m, 0);
    next_name(G, h, sizeof h, 1);
    NODE("    %s = matmul(%s, %s);\n", m, a->name, w);
    if (pick(r, 2)) NODE("    %s = add(%s, %s);\n", h, m, b);
    else NODE("    %s = add(%s, %s);\n", h, b, m);
    const char *act = acts[pick(r, 5)], *last = h;
    if (act) {
        next_name(G, y, sizeof y, 2);
        NODE("    %s = %s(%s);\n", y, act, h);
        last = y;
    }
    if (pick(r, 2)) {
        const char *res = new_input(G, &out);
        if (!res) return;
        next_name(G, z, sizeof z, 3);
        NODE("    %s = add(%s, %s);\n", z, last, res);
        last = z;
    }
    produced(G, last, &out);
}

/* softmax(q k^T * scale + mask) v: berth.attention */
static void pat_attention(gen *G, value *q) {
    reader *r = &G->r;
    uint32_t rank = q->s.rank;
    int64_t t = 1 + pick(r, 5), d = q->s.dims[rank - 1], e = 1 + pick(r, 5);
    gen_shape ks = q->s, vs = q->s, ss = q->s, out = q->s;
    ks.dims[rank - 2] = t;
    vs.dims[rank - 2] = t;
    vs.dims[rank - 1] = e;
    ss.dims[rank - 1] = t;
    out.dims[rank - 1] = e;
    if (gen_numel(&ss) > GEN_MAX_NUMEL || gen_numel(&out) > GEN_MAX_NUMEL || gen_numel(&ks) > GEN_MAX_NUMEL ||
        gen_numel(&vs) > GEN_MAX_NUMEL)
        return;
    int given_t = pick(r, 3) == 0; /* k arrives as [.., d, t] already */
    gen_shape kts = ks;
    kts.dims[rank - 2] = d;
    kts.dims[rank - 1] = t;
    const char *k = new_input(G, given_t ? &kts : &ks), *v = k ? new_input(G, &vs) : NULL;
    if (!v) return;
    char kt[16], s[16], sc[16], mk[16], p[16], o[16];
    const char *kk = k, *cur;
    if (!given_t) {
        next_name(G, kt, sizeof kt, 0);
        NODE("    %s = transpose(%s, permutation=[", kt, k);
        for (uint32_t i = 0; i < rank; i++) NODE("%s%u", i ? ", " : "", i + 2 < rank ? i : i + 2 == rank ? rank - 1 : rank - 2);
        NODE("]);\n");
        kk = kt;
    }
    next_name(G, s, sizeof s, 1);
    NODE("    %s = matmul(%s, %s);\n", s, q->name, kk);
    cur = s;
    unsigned how = pick(r, 3); /* times a scale, divided by one, or neither */
    if (how < 2) {
        gen_shape cs = {pick(r, 2), {1}};
        const char *c = new_const(G, &cs, how == 0 ? 0.125 * (1 + pick(r, 8)) : 0.5 * (1 + pick(r, 6)));
        next_name(G, sc, sizeof sc, 2);
        NODE("    %s = %s(%s, %s);\n", sc, how == 0 ? "mul" : "div", cur, c);
        cur = sc;
    }
    if (pick(r, 2)) {
        gen_shape ms;
        partner_shape(G, &ss, &ms);
        gen_shape chk;
        if (broadcast(&ss, &ms, &chk) && chk.rank == ss.rank && !memcmp(chk.dims, ss.dims, sizeof(int64_t) * ss.rank)) {
            const char *m = new_input(G, &ms);
            if (!m) return;
            next_name(G, mk, sizeof mk, 3);
            NODE("    %s = add(%s, %s);\n", mk, cur, m);
            cur = mk;
        }
    }
    next_name(G, p, sizeof p, 4);
    NODE("    %s = softmax(%s, axis=%d);\n", p, cur, pick(r, 2) ? -1 : (int)rank - 1);
    next_name(G, o, sizeof o, 5);
    NODE("    %s = matmul(%s, %s);\n", o, p, v);
    produced(G, o, &out);
}

/* (x - mean) / sqrt(var + eps) [* scale] [+ bias]: layerNormalization */
static void pat_layer_norm(gen *G, value *x) {
    reader *r = &G->r;
    uint32_t rank = x->s.rank, n_axes = 1 + pick(r, rank);
    char axes[64] = "", nm[8][16];
    size_t k = 0;
    for (uint32_t i = rank - n_axes; i < rank; i++) k += (size_t)snprintf(axes + k, sizeof axes - k, "%s%u", k ? ", " : "", i);
    gen_shape per = {n_axes, {0}}, eps_shape = {pick(r, 2), {1}};
    memcpy(per.dims, x->s.dims + rank - n_axes, sizeof(int64_t) * n_axes);
    const char *eps = new_const(G, &eps_shape, pick(r, 2) ? 1e-5 : 1e-3);
    for (int i = 0; i < 8; i++) next_name(G, nm[i], sizeof nm[i], i);
    NODE("    %s = reduceMean(%s, axes=[%s], keepDimensions=true);\n", nm[0], x->name, axes);
    NODE("    %s = sub(%s, %s);\n", nm[1], x->name, nm[0]);
    NODE("    %s = mul(%s, %s);\n", nm[2], nm[1], nm[1]);
    NODE("    %s = reduceMean(%s, axes=[%s], keepDimensions=true);\n", nm[3], nm[2], axes);
    NODE("    %s = add(%s, %s);\n", nm[4], nm[3], eps);
    NODE("    %s = sqrt(%s);\n", nm[5], nm[4]);
    NODE("    %s = div(%s, %s);\n", nm[6], nm[1], nm[5]);
    const char *last = nm[6];
    if (pick(r, 2)) {
        const char *s = new_input(G, &per);
        if (!s) return;
        NODE("    %s = mul(%s, %s);\n", nm[7], last, s);
        last = nm[7];
    }
    if (pick(r, 2)) {
        const char *b = new_input(G, &per);
        char nb[16];
        if (!b) return;
        next_name(G, nb, sizeof nb, 8);
        NODE("    %s = add(%s, %s);\n", nb, last, b);
        produced(G, nb, &x->s);
        return;
    }
    produced(G, last, &x->s);
}

/* ---- the whole graph ---- */

int gen_graph_make(gen_graph *g, const uint8_t *data, size_t size) {
    memset(g, 0, sizeof *g);
    gen *G = calloc(1, sizeof *G);
    if (!G) return -1;
    G->g = g;
    G->r.p = data;
    G->r.back = size;
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the bytes seeds what comes after them */
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 0x100000001b3ull;
    G->r.rng = h | 1;

    gen_shape s0;
    random_shape(G, &s0, 0);
    new_input(G, &s0);
    uint32_t steps = 1 + pick(&G->r, 8);
    for (uint32_t i = 0; i < steps && !G->full; i++) {
        unsigned kind = pick(&G->r, 14);
        uint32_t need = kind >= 5 && kind <= 10 ? 1 : kind == 3 || kind == 12 ? 2 : 0;
        if (kind == 2 || kind == 11 || kind == 13) need = 1;
        value *a = pick_value(G, need);
        if (!a) a = pick_value(G, 0), kind = 0;
        size_t before = G->n_nodes_text, consts_before = G->n_consts;
        uint32_t vals_before = G->n_vals, inputs_before = g->n_inputs;
        char used[GEN_MAX_VALUES];
        for (uint32_t k = 0; k < G->n_vals; k++) used[k] = (char)G->vals[k].used;
        switch (kind) {
        case 0: op_unary(G, a); break;
        case 1: op_binary(G, a); break;
        case 2: op_matmul(G, a); break;
        case 3: op_transpose(G, a); break;
        case 4: op_reshape(G, a); break;
        case 5: op_softmax(G, a); break;
        case 6: op_reduce(G, a); break;
        case 7: op_concat(G, a); break;
        case 8: op_slice(G, a); break;
        case 9: op_expand(G, a); break;
        case 10: op_binary(G, a); break;
        case 11: pat_linear(G, a); break;
        case 12: pat_attention(G, a); break;
        default: pat_layer_norm(G, a); break;
        }
        if (G->full) { /* a table or buffer ran out inside the step: take all of it back */
            G->n_nodes_text = before;
            G->nodes[before] = 0;
            G->n_consts = consts_before;
            G->consts[consts_before] = 0;
            G->n_vals = vals_before;
            g->n_inputs = inputs_before;
            for (uint32_t k = 0; k < G->n_vals; k++) G->vals[k].used = used[k];
        } else if (G->n_nodes_text > before) {
            G->n_nodes_made++; /* its names are taken, used or not */
        } else { /* nothing written: what it picked is not read after all */
            for (uint32_t k = 0; k < G->n_vals && k < GEN_MAX_VALUES; k++) G->vals[k].used = used[k];
        }
    }
    /* Outputs: every value no node reads (so no node is dead), and now
     * and then one that is read (which keeps it from being fused away).
     * A graph of no node gets one, even when the steps stopped because
     * the input table filled up (its node text is empty, so it fits). */
    if (G->n_nodes_made == 0) {
        NODE("    v0 = relu(%s);\n", G->vals[0].name);
        produced(G, "v0", &G->vals[0].s);
    }
    for (uint32_t i = G->n_vals; i-- > 0 && g->n_outputs < GEN_MAX_OUTPUTS;) {
        const value *v = &G->vals[i];
        if (!v->from_node) continue;
        if (!v->used || g->n_outputs == 0 || pick(&G->r, 4) == 0) {
            int dup = 0;
            for (uint32_t k = 0; k < g->n_outputs; k++) dup |= !strcmp(g->output_name[k], v->name);
            if (dup) continue;
            snprintf(g->output_name[g->n_outputs], sizeof g->output_name[0], "%s", v->name);
            g->output_shape[g->n_outputs++] = v->s;
        }
    }

    /* The text, then the values from the back of the bytes. */
    size_t len = 0;
    char sb[64];
    put(G, g->text, sizeof g->text, &len, "webnn_graph \"diff\" v2 {\n  inputs {\n");
    for (uint32_t i = 0; i < g->n_inputs; i++)
        put(G, g->text, sizeof g->text, &len, "    %s: f32%s;\n", g->input_name[i],
            shape_text(&g->input_shape[i], sb, sizeof sb));
    put(G, g->text, sizeof g->text, &len, "  }\n  consts {\n%s  }\n  nodes {\n%s  }\n  outputs {", G->consts,
        G->nodes);
    for (uint32_t i = 0; i < g->n_outputs; i++) put(G, g->text, sizeof g->text, &len, " %s;", g->output_name[i]);
    put(G, g->text, sizeof g->text, &len, " }\n}\n");
    int rc = 0;
    for (uint32_t i = 0; i < g->n_inputs && !rc; i++) {
        size_t n = gen_numel(&g->input_shape[i]);
        g->input_data[i] = malloc(n * sizeof(float));
        if (!g->input_data[i]) rc = -1;
        for (size_t k = 0; !rc && k < n; k++) g->input_data[i][k] = ((int)value_byte(&G->r) - 128) / 32.0f;
    }
    free(G);
    return rc;
}

void gen_graph_free(gen_graph *g) {
    for (uint32_t i = 0; i < g->n_inputs; i++) free(g->input_data[i]);
    memset(g, 0, sizeof *g);
}
