/* pow with a constant exponent as multiplications.
 *
 * An f32 pow whose exponent is one constant value (a scalar, or a tensor
 * of equal elements) that is a small integer runs as powf per element
 * unless rewritten; the rewrite is a handful of mul (and a reciprocal for
 * a negative exponent), which every backend runs as its plainest
 * elementwise loop and an elementwise program absorbs as steps:
 *    1: identity(x)           -1: reciprocal(x)
 *    2: x * x                 -2: r * r,        r = reciprocal(x)
 *    3: (x * x) * x           -3: (r * r) * r
 *    4: (x * x) * (x * x)     -4: (r * r) * (r * r)
 * Edge values are pow's (ops.def): the sign of -0 and of -inf follows
 * the parity of the exponent (-0 * -0 = +0, (-0 * -0) * -0 = -0), NaN
 * stays NaN, pow(+-0, -k) = 1 / (+-0)^k is the infinity of the right
 * sign, and an overflowing square overflows the power too. The reciprocal
 * comes first for a negative exponent so that no subnormal intermediate
 * decides a finite result: 1/x is subnormal only where |x| > 2^126, and
 * there x^-k underflows anyway; 1/(x^k) would go through x^k subnormal
 * for |x| near 2^-64, where x^-2 is still finite.
 *
 * 1, 2, -1 are exact (one rounding, as a correctly rounded pow gives);
 * 3, 4 and -2..-4 round two or three times, within 2-3 ulp of the true
 * power, far inside pow's APPROX tolerance (rtol 1e-3, ops.def). Larger
 * exponents would add a rounding per multiplication and are left to pow.
 *
 * Left alone on purpose: 0.5 and -0.5, because sqrt disagrees with pow at
 * edges (pow(-0, 0.5) = +0 but sqrt(-0) = -0; pow(-inf, 0.5) = +inf but
 * sqrt(-inf) = NaN), which no single WebNN op mends; and 0, which is not
 * a multiplication: fold.c folds pow(x, 0) to ones where the result is
 * small enough to hold on the host. */
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "fuse_internal.h"

/* Pow nodes in the desc: each may become up to three nodes. */
uint32_t fz_pow_room(const berth_graph_desc *d) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < d->n_nodes; i++) n += !strcmp(d->nodes[i].op, "pow");
    return 2 * n;
}

/* Node nd, made by fz_make_node to write y, writing a new f32 value of
 * y's shape instead (an intermediate; it and its node are named after
 * y): the new operand's index, or -1 when out of memory. */
static int64_t to_new_value(fuser *f, berth_node *nd, uint32_t y, const char *suffix) {
    const berth_operand *yo = opnd(f, y);
    const char *base = yo->name ? yo->name : "pow";
    size_t len = strlen(base) + strlen(suffix) + 1;
    char *name = berth_arena_alloc(f->a, len);
    uint32_t *outs = berth_arena_array(f->a, 1, sizeof(uint32_t));
    if (!nd->op || !name || !outs) return -1;
    snprintf(name, len, "%s%s", base, suffix);
    uint32_t o = f->n_ops++;
    f->ops[o] = (berth_operand){.name = name, .kind = BERTH_OPERAND_VALUE, .dtype = yo->dtype, .rank = yo->rank};
    memcpy(f->ops[o].dims, yo->dims, sizeof(int64_t) * yo->rank);
    *outs = o;
    nd->outputs = outs;
    nd->name = name;
    return o;
}

/* Node i, a pow to rewrite, as out[0..n) (returned; 0 when it is not
 * one to rewrite, -1 when out of memory). */
static int expand(fuser *f, uint32_t i, berth_node *out) {
    const berth_node *p = &f->nodes[i];
    double c;
    if (strcmp(p->op, "pow") || p->n_inputs != 2 || p->n_outputs != 1) return 0;
    uint32_t x = p->inputs[0], y = p->outputs[0];
    /* the exponent must not broadcast x to a larger shape */
    if (!is_f32(f, x) || !is_f32(f, y) || !same_shape(opnd(f, x), opnd(f, y)) ||
        !fz_const_scalar(f, p->inputs[1], &c))
        return 0;
    int k = c == 1 || c == 2 || c == 3 || c == 4 ? (int)c : c == -1 || c == -2 || c == -3 || c == -4 ? (int)-c : 0;
    if (!k) return 0;
    int neg = c < 0;
    if ((neg && !f->supports(f->ctx, "reciprocal", BERTH_DTYPE_F32)) ||
        (k > 1 && !f->supports(f->ctx, "mul", BERTH_DTYPE_F32)) ||
        (c == 1 && !f->supports(f->ctx, "identity", BERTH_DTYPE_F32)))
        return 0;
    /* every node but the last writes a new value; the last writes y */
    int n = 0;
    uint32_t base = x;
    if (neg) {
        out[n] = fz_make_node(f, "reciprocal", p, 1, &x, 0, NULL);
        int64_t r = k > 1 ? to_new_value(f, &out[n], y, ".recip") : out[n].op ? (int64_t)y : -1;
        if (r < 0) return -1;
        base = (uint32_t)r;
        n++;
    } else if (k == 1) {
        out[n] = fz_make_node(f, "identity", p, 1, &x, 0, NULL);
        if (!out[n++].op) return -1;
    }
    if (k > 1) {
        uint32_t sq_in[2] = {base, base};
        out[n] = fz_make_node(f, "mul", p, 2, sq_in, 0, NULL);
        int64_t sq = k > 2 ? to_new_value(f, &out[n], y, ".sq") : out[n].op ? (int64_t)y : -1;
        if (sq < 0) return -1;
        n++;
        if (k > 2) {
            uint32_t last_in[2] = {(uint32_t)sq, k == 3 ? base : (uint32_t)sq};
            out[n] = fz_make_node(f, "mul", p, 2, last_in, 0, NULL);
            if (!out[n++].op) return -1;
        }
    }
    return n;
}

int fz_rewrite_pow(fuser *f) {
    int total = 0;
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        berth_node rep[3];
        int n = expand(f, i, rep);
        if (n < 0) return -1;
        if (!n) continue;
        uint32_t grow = (uint32_t)n - 1; /* within fz_pow_room's two per pow */
        /* the new nodes take the pow's place, in order: what they read was
         * defined before it, and what reads y comes after */
        memmove(&f->nodes[i + 1 + grow], &f->nodes[i + 1], sizeof(berth_node) * (f->n_nodes - i - 1));
        memcpy(&f->nodes[i], rep, sizeof(berth_node) * (size_t)n);
        f->n_nodes += grow;
        i += grow;
        total++;
    }
    return total;
}
