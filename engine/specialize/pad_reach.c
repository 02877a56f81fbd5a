/* Whether padding can reach a graph output's kept values.
 *
 * A run pads each input along a dyn dim k up to the bucket, runs the
 * bucket's plan and keeps the leading box of each output, of the dims
 * shape inference gives at the asked sizes. That box holds what an
 * unpadded run gives only if every kept element is computed from kept
 * elements. This pass decides it per dyn dim k, conservatively, over the
 * graph as written (before fusion, so every op is a WebNN op and every
 * node has its line).
 *
 * The axes that matter are the "k axes": the inputs' axes bound to k,
 * carried op by op to the axes they become (a conv's frames, a
 * transpose's moved axis), plus any axis whose size follows k (where the
 * value as inferred with k one smaller, alt[k], differs from the
 * bucket's: an expand to a computed shape). Padding sits at the end of the k axes of the inputs; a
 * value is "stable" when each of its elements inside the box of the
 * asked sizes equals the unpadded run's. Inputs and consts are stable. A
 * node's outputs are stable when its data operands are, and the op maps
 * positions along every k axis so that a kept output position reads only
 * kept input positions:
 *
 *   - elementwise ops (broadcasting included), casts, transposes,
 *     squeeze/unsqueeze, expand, triangular, batch normalization, and
 *     ops that only work across other axes, keep positions;
 *   - slice keeps positions unless its starts follow k (a start computed
 *     from the dim, such as "the last ten frames"): then it reads the
 *     padding; a fixed start is a fixed offset, and shape inference at
 *     the asked size refuses a window that runs past the asked end;
 *   - conv2d and the pools along a k axis: output j reads input
 *     positions [j*s - pb, j*s - pb + (w-1)*d]. At asked length L the
 *     last output is floor((L + pb + pe - W) / s), W = (w-1)*d + 1, so it
 *     reads up to L + pe - 1: inside the real input exactly when the end
 *     padding pe is 0. So: stable when pe is 0, the window is fixed (a
 *     filter whose size does not follow k; a pool's windowDimensions
 *     given, not the input's whole axis) and the size rounds down (no
 *     roundingType ceil, no outputSizes). With pe > 0 the unpadded run's
 *     last windows see zeros where the bucket's see the padding;
 *   - a forward cumulativeSum is causal (position j sums 0..j); reversed
 *     it is not;
 *   - reshape keeps a k axis when it survives whole: the same size, with
 *     the same product of dims before it, so each (outer, j, inner)
 *     element keeps its place; any merge or split of a k axis mixes;
 *   - concat along a k axis keeps positions only when the k-sized input
 *     is the last: an earlier one would move everything after it.
 *
 * Everything else that involves a k axis mixes positions: reductions,
 * argMin/argMax, softmax, layer and instance normalization over it,
 * matmul and gemm contracting it, conv's channels when they follow k,
 * convTranspose2d and resample2d along it, gather, gatherElements and
 * scatterElements along it, split along it, tile repeating it, pad at
 * its end or by edge or reflection, shape() of a value with a k axis
 * (its numbers are the bucket's), and any node whose offsets follow k.
 * An op this pass does not know mixes whenever a k axis touches it. A
 * mixed value makes everything computed from it mixed; the first node
 * that mixed is what the warning names. */
#include <stdlib.h>
#include <string.h>

#include "infer.h"

typedef struct reach {
    const berth_graph *g;
    const sp_node *nodes;
    const sp_val *vals;
    sp_val **alt; /* alt[k] of the dim being followed */
    unsigned *mask;    /* per value: its k axes */
    int32_t *mixed_at; /* per value: the node that mixed it, or -1 (stable) */
    const char **why;  /* per node that mixed: the reason */
} reach;

/* Bit a set when axis a of value v would have another size were the dim
 * one smaller (all axes when its rank would change: nothing can be said
 * per axis). A strided window can hide a k axis from this (16384 and
 * 16383 samples make as many frames), so k axes are also carried from
 * the inputs op by op (carry()). */
static unsigned alt_axes(const reach *r, int32_t v) {
    const sp_val *a = r->alt[v], *b = &r->vals[v];
    if (!a) return 0;
    if (a->rank != b->rank) return (1u << b->rank) - 1;
    unsigned m = 0;
    for (uint32_t d = 0; d < b->rank; d++)
        if (a->dims[d] != b->dims[d]) m |= 1u << d;
    return m;
}

/* Value v's k axes: carried from the inputs, or resized. */
static unsigned k_axes(const reach *r, int32_t v) { return r->mask[v]; }

static int64_t opt_int(const sp_node *n, const char *key, int64_t def) {
    const berth_attr *a = sp_attr(n, key);
    return a && (a->type == BERTH_ATTR_INT || a->type == BERTH_ATTR_BOOL) ? a->i : def;
}

static const char *opt_str(const sp_node *n, const char *key, const char *def) {
    const berth_attr *a = sp_attr(n, key);
    return a && a->type == BERTH_ATTR_STRING ? a->s : def;
}

/* Item i of an INTS option, or def when absent or short. */
static int64_t opt_item(const sp_node *n, const char *key, size_t i, int64_t def) {
    const berth_attr *a = sp_attr(n, key);
    if (a && a->type == BERTH_ATTR_INTS && i < a->count) return a->ints[i];
    if (a && a->type == BERTH_ATTR_INT && i == 0) return a->i;
    return def;
}

static unsigned axis_bit(int64_t axis, uint32_t rank) {
    if (axis < 0) axis += rank;
    return axis >= 0 && axis < (int64_t)rank ? 1u << axis : 0;
}

/* The axes an `axes` option names; `all` when it is absent. */
static unsigned axes_bits(const sp_node *n, uint32_t rank, unsigned all) {
    const berth_attr *a = sp_attr(n, "axes");
    if (!a) return all;
    if (a->type == BERTH_ATTR_INT) return axis_bit(a->i, rank);
    unsigned m = 0;
    for (size_t i = 0; a->type == BERTH_ATTR_INTS && i < a->count; i++) m |= axis_bit(a->ints[i], rank);
    return m;
}

/* conv2d and the pools: each spatial k axis must see no end padding and
 * a fixed window rounded down. */
static const char *windows(const reach *r, const sp_node *n, int pool) {
    int32_t x = n->inputs[0];
    const sp_val *xv = &r->vals[x];
    unsigned kx = k_axes(r, x);
    if (xv->rank != 4) return kx ? "works on the padded axis in a way berth does not follow" : NULL;
    int nhwc = !strcmp(opt_str(n, pool ? "layout" : "inputLayout", "nchw"), "nhwc");
    unsigned channel = 1u << (nhwc ? 3 : 1);
    if (!pool && (kx & channel)) return "contracts the padded axis (its channels)";
    if (!pool && n->n_inputs > 1 && k_axes(r, n->inputs[1])) return "has a filter whose size follows the padded dim";
    for (int i = 0; i < 2; i++) {
        unsigned ax = 1u << (nhwc ? 1 + i : 2 + i);
        if (!(kx & ax)) continue;
        if (opt_item(n, "padding", (size_t)(2 * i + 1), 0) > 0)
            return "pads the end of the padded axis, so its last kept windows reach the padding";
        if (pool && !sp_attr(n, "windowDimensions")) return "pools over the whole padded axis";
        if (pool && (sp_attr(n, "outputSizes") || !strcmp(opt_str(n, "roundingType", "floor"), "ceil")))
            return "rounds its output size up, so its last kept window reaches the padding";
    }
    return NULL;
}

/* reshape: each k axis of the input must survive whole (same size, same
 * product of dims before it), and the output may have no other k axis. */
static const char *reshape(reach *r, const sp_node *n, int32_t y) {
    int32_t x = n->inputs[0];
    const sp_val *xv = &r->vals[x], *yv = &r->vals[y];
    unsigned kx = k_axes(r, x), ky = alt_axes(r, y), matched = 0;
    for (uint32_t a = 0; a < xv->rank; a++) {
        if (!(kx & (1u << a))) continue;
        int64_t before = 1;
        for (uint32_t d = 0; d < a; d++) before *= xv->dims[d];
        int64_t p = 1;
        int found = 0;
        for (uint32_t b = 0; b < yv->rank && !found; b++) {
            if (p == before && yv->dims[b] == xv->dims[a] && (ky & (1u << b)) && !(matched & (1u << b))) {
                matched |= 1u << b;
                found = 1;
            }
            p *= yv->dims[b];
        }
        if (!found) return "merges or splits the padded axis";
    }
    if (ky & ~matched) return "merges or splits the padded axis";
    r->mask[y] = matched;
    return NULL;
}

static const char *concat(const reach *r, const sp_node *n, int32_t y) {
    const sp_val *yv = &r->vals[y];
    unsigned along = axis_bit(opt_int(n, "axis", 0), yv->rank);
    unsigned joined = alt_axes(r, y);
    for (uint32_t i = 0; i < n->n_inputs; i++) joined |= k_axes(r, n->inputs[i]);
    if (!(joined & along)) return NULL;
    for (uint32_t i = 0; i + 1 < n->n_inputs; i++)
        if (k_axes(r, n->inputs[i]) & along)
            return "joins along the padded axis after a part that follows it, which moves what comes next";
    return NULL;
}

/* Why node n mixes positions along the dim, or NULL when it keeps them;
 * its data operands are all stable here. */
/* matmul, gemm and convTranspose2d: a padded axis they contract (or, for
 * the transposed convolution, spread over several outputs) mixes padding
 * into real positions. */
static const char *product(reach *r, const sp_node *n, unsigned kx, uint32_t rank) {
    if (n->id == BERTH_OP_CONV_TRANSPOSE2D) {
        int nhwc = !strcmp(opt_str(n, "inputLayout", "nchw"), "nhwc");
        unsigned spatial = nhwc ? 6u : 12u;
        if (rank == 4 && (kx & spatial)) return "spreads each padded position over several outputs";
        if (kx & ~spatial) return "contracts the padded axis (its channels)";
        return NULL;
    }
    if (n->n_inputs < 2) return NULL;
    if (n->id == BERTH_OP_GEMM) {
        unsigned ka = opt_int(n, "aTranspose", 0) ? 1u : 2u, kb = opt_int(n, "bTranspose", 0) ? 2u : 1u;
        return (kx & ka) || (k_axes(r, n->inputs[1]) & kb) ? "contracts the padded axis" : NULL;
    }
    int32_t b = n->inputs[1];
    uint32_t rb = r->vals[b].rank;
    if ((rank && (kx & (1u << (rank - 1)))) || (rb && (k_axes(r, b) & (1u << (rb >= 2 ? rb - 2 : 0)))))
        return "contracts the padded axis";
    return NULL;
}

/* pad and tile: what they add after the padded axis's end lands among
 * real positions, unless it is constant padding at the start. */
static const char *extend(const sp_node *n, unsigned kx, uint32_t rank) {
    for (uint32_t a = 0; a < rank; a++) {
        if (!(kx & (1u << a))) continue;
        if (n->id == BERTH_OP_TILE) {
            if (opt_item(n, "repetitions", a, 1) > 1) return "repeats the padded axis";
            continue;
        }
        if (strcmp(opt_str(n, "mode", "constant"), "constant")) return "pads the padded axis by edge or reflection";
        if (opt_item(n, "endingPadding", a, 0) > 0) return "pads the end of the padded axis";
    }
    return NULL;
}

static const char *rule(reach *r, const sp_node *n) {
    int32_t x = n->n_inputs ? n->inputs[0] : -1, y = n->src->outputs[0];
    unsigned kx = x >= 0 ? k_axes(r, x) : 0;
    uint32_t rank = x >= 0 ? r->vals[x].rank : 0;
    unsigned all = rank ? (1u << rank) - 1 : 0;
    switch (n->id) {
    case BERTH_OP_ADD: case BERTH_OP_SUB: case BERTH_OP_MUL: case BERTH_OP_DIV: case BERTH_OP_POW:
    case BERTH_OP_MAX: case BERTH_OP_MIN: case BERTH_OP_PRELU: case BERTH_OP_EQUAL:
    case BERTH_OP_NOT_EQUAL: case BERTH_OP_GREATER: case BERTH_OP_GREATER_OR_EQUAL:
    case BERTH_OP_LESSER: case BERTH_OP_LESSER_OR_EQUAL: case BERTH_OP_LOGICAL_AND:
    case BERTH_OP_LOGICAL_OR: case BERTH_OP_LOGICAL_NOT: case BERTH_OP_WHERE: case BERTH_OP_IDENTITY:
    case BERTH_OP_RELU: case BERTH_OP_ABS: case BERTH_OP_NEG: case BERTH_OP_SIGN: case BERTH_OP_CLAMP:
    case BERTH_OP_LEAKY_RELU: case BERTH_OP_ELU: case BERTH_OP_SIGMOID: case BERTH_OP_HARD_SIGMOID:
    case BERTH_OP_HARD_SWISH: case BERTH_OP_SOFTPLUS: case BERTH_OP_SOFTSIGN: case BERTH_OP_TANH:
    case BERTH_OP_GELU: case BERTH_OP_ERF: case BERTH_OP_SQRT: case BERTH_OP_EXP: case BERTH_OP_LOG:
    case BERTH_OP_CEIL: case BERTH_OP_FLOOR: case BERTH_OP_RECIPROCAL: case BERTH_OP_SIN: case BERTH_OP_COS:
    case BERTH_OP_CAST: case BERTH_OP_QUANTIZE_LINEAR: case BERTH_OP_DEQUANTIZE_LINEAR:
    case BERTH_OP_BATCH_NORMALIZATION: case BERTH_OP_TRANSPOSE: case BERTH_OP_SQUEEZE:
    case BERTH_OP_UNSQUEEZE: case BERTH_OP_EXPAND: case BERTH_OP_TRIANGULAR: case BERTH_OP_SLICE:
        return NULL; /* slice's starts were checked with the offsets */
    case BERTH_OP_MATMUL: case BERTH_OP_GEMM: case BERTH_OP_CONV_TRANSPOSE2D: return product(r, n, kx, rank);
    case BERTH_OP_CONV2D: return windows(r, n, 0);
    case BERTH_OP_AVERAGE_POOL2D: case BERTH_OP_MAX_POOL2D: case BERTH_OP_L2_POOL2D: return windows(r, n, 1);
    case BERTH_OP_RESAMPLE2D:
        return kx & axes_bits(n, rank, 12u) ? "resamples along the padded axis" : NULL;
    case BERTH_OP_REDUCE_MEAN: case BERTH_OP_REDUCE_SUM: case BERTH_OP_REDUCE_MAX: case BERTH_OP_REDUCE_MIN:
    case BERTH_OP_REDUCE_PRODUCT: case BERTH_OP_REDUCE_L1: case BERTH_OP_REDUCE_L2:
    case BERTH_OP_REDUCE_LOG_SUM: case BERTH_OP_REDUCE_LOG_SUM_EXP: case BERTH_OP_REDUCE_SUM_SQUARE:
        return kx & axes_bits(n, rank, all) ? "reduces over the padded axis" : NULL;
    case BERTH_OP_LAYER_NORMALIZATION:
        return kx & axes_bits(n, rank, all & ~1u) ? "normalizes over the padded axis" : NULL;
    case BERTH_OP_INSTANCE_NORMALIZATION: {
        unsigned spatial = !strcmp(opt_str(n, "layout", "nchw"), "nhwc") ? 6u : 12u;
        return kx & spatial ? "normalizes over the padded axis" : NULL;
    }
    case BERTH_OP_ARG_MAX: case BERTH_OP_ARG_MIN:
        return kx & axis_bit(opt_int(n, "axis", 0), rank) ? "searches along the padded axis" : NULL;
    case BERTH_OP_SOFTMAX:
        return kx & axis_bit(opt_int(n, "axis", (int64_t)rank - 1), rank) ? "normalizes along the padded axis" : NULL;
    case BERTH_OP_CUMULATIVE_SUM:
        if (!(kx & axis_bit(opt_int(n, "axis", 0), rank))) return NULL;
        return opt_int(n, "reversed", 0) ? "sums from the end of the padded axis" : NULL;
    case BERTH_OP_RESHAPE: return reshape(r, n, y);
    case BERTH_OP_CONCAT: return concat(r, n, y);
    case BERTH_OP_SPLIT:
        return kx & axis_bit(opt_int(n, "axis", 0), rank) ? "splits the padded axis" : NULL;
    case BERTH_OP_GATHER: case BERTH_OP_GATHER_ELEMENTS:
        return kx & axis_bit(opt_int(n, "axis", 0), rank) ? "indexes along the padded axis" : NULL;
    case BERTH_OP_SCATTER_ELEMENTS:
        return kx || (n->n_inputs > 1 && k_axes(r, n->inputs[1])) ? "scatters along the padded axis" : NULL;
    case BERTH_OP_PAD: case BERTH_OP_TILE: return extend(n, kx, rank);
    case BERTH_OP_SHAPE: return kx ? "reads the padded size as numbers" : NULL;
    default: break;
    }
    unsigned any = kx;
    for (uint32_t i = 1; i < n->n_inputs; i++) any |= k_axes(r, n->inputs[i]);
    for (uint32_t o = 0; o < n->src->n_outputs; o++) any |= alt_axes(r, n->src->outputs[o]);
    return any ? "is an op whose positions berth does not follow" : NULL;
}

/* Input v's k axes as seen from an output of rank `rank` that it
 * broadcasts into (numpy: aligned at the last axis). */
static unsigned aligned(const reach *r, int32_t v, uint32_t rank) {
    uint32_t rv = r->vals[v].rank;
    return rv <= rank ? k_axes(r, v) << (rank - rv) : 0;
}

/* Bits of m with the axes in `drop` taken out (reductions, squeeze). */
static unsigned remove_axes(unsigned m, unsigned drop, uint32_t rank) {
    unsigned out = 0;
    for (uint32_t a = 0, b = 0; a < rank; a++) {
        if (drop & (1u << a)) continue;
        if (m & (1u << a)) out |= 1u << b;
        b++;
    }
    return out;
}

/* Bits of m (of an input) placed around the axes `added` of the output
 * (unsqueeze). */
static unsigned insert_axes(unsigned m, unsigned added, uint32_t out_rank) {
    unsigned out = 0;
    for (uint32_t b = 0, a = 0; b < out_rank; b++) {
        if (added & (1u << b)) continue;
        if (m & (1u << a)) out |= 1u << b;
        a++;
    }
    return out;
}

/* A stable node's outputs get the k axes their inputs carry to them. */
static void carry(reach *r, const sp_node *n) {
    int32_t x = n->n_inputs ? n->inputs[0] : -1, y = n->src->outputs[0];
    uint32_t ry = r->vals[y].rank, rx = x >= 0 ? r->vals[x].rank : 0;
    unsigned kx = x >= 0 ? k_axes(r, x) : 0, m = 0;
    switch (n->id) {
    case BERTH_OP_RESHAPE: return; /* reshape() placed them */
    case BERTH_OP_TRANSPOSE:
        for (uint32_t i = 0; i < ry; i++) {
            int64_t p = opt_item(n, "permutation", i, (int64_t)ry - 1 - i);
            if (p >= 0 && p < (int64_t)rx && (kx & (1u << p))) m |= 1u << i;
        }
        break;
    case BERTH_OP_SQUEEZE: {
        unsigned all1 = 0;
        for (uint32_t a = 0; a < rx; a++) all1 |= r->vals[x].dims[a] == 1 ? 1u << a : 0;
        m = remove_axes(kx, axes_bits(n, rx, all1), rx);
        break;
    }
    case BERTH_OP_UNSQUEEZE: m = insert_axes(kx, axes_bits(n, ry, 0), ry); break;
    case BERTH_OP_REDUCE_MEAN: case BERTH_OP_REDUCE_SUM: case BERTH_OP_REDUCE_MAX: case BERTH_OP_REDUCE_MIN:
    case BERTH_OP_REDUCE_PRODUCT: case BERTH_OP_REDUCE_L1: case BERTH_OP_REDUCE_L2:
    case BERTH_OP_REDUCE_LOG_SUM: case BERTH_OP_REDUCE_LOG_SUM_EXP: case BERTH_OP_REDUCE_SUM_SQUARE:
        m = opt_int(n, "keepDimensions", 0) ? kx : remove_axes(kx, axes_bits(n, rx, (1u << rx) - 1), rx);
        break;
    case BERTH_OP_ARG_MAX: case BERTH_OP_ARG_MIN:
        m = opt_int(n, "keepDimensions", 0) ? kx : remove_axes(kx, axis_bit(opt_int(n, "axis", 0), rx), rx);
        break;
    case BERTH_OP_MATMUL: {
        if (n->n_inputs < 2 || rx < 2 || r->vals[n->inputs[1]].rank < 2 || ry < 2) break;
        int32_t b = n->inputs[1];
        uint32_t rb = r->vals[b].rank;
        unsigned batch = (1u << (ry - 2)) - 1;
        m = (aligned(r, x, ry) | aligned(r, b, ry)) & batch;
        if (kx & (1u << (rx - 2))) m |= 1u << (ry - 2);
        if (k_axes(r, b) & (1u << (rb - 1))) m |= 1u << (ry - 1);
        break;
    }
    case BERTH_OP_GEMM:
        if (n->n_inputs < 2) break;
        if (kx & (opt_int(n, "aTranspose", 0) ? 2u : 1u)) m |= 1u;
        if (k_axes(r, n->inputs[1]) & (opt_int(n, "bTranspose", 0) ? 1u : 2u)) m |= 2u;
        break;
    case BERTH_OP_CONV2D: case BERTH_OP_CONV_TRANSPOSE2D: {
        int nhwc = !strcmp(opt_str(n, "inputLayout", "nchw"), "nhwc");
        m = kx & ~(1u << (nhwc ? 3 : 1)); /* output channels come from the filter */
        break;
    }
    case BERTH_OP_GATHER: {
        unsigned axis = axis_bit(opt_int(n, "axis", 0), rx);
        uint32_t ax = 0, ri = n->n_inputs > 1 ? r->vals[n->inputs[1]].rank : 0;
        while (axis && !(axis & (1u << ax))) ax++;
        unsigned ki = n->n_inputs > 1 ? k_axes(r, n->inputs[1]) : 0;
        for (uint32_t a = 0; a < rx; a++)
            if ((kx & (1u << a)) && a != ax) m |= 1u << (a < ax ? a : a - 1 + ri);
        m |= ki << ax;
        break;
    }
    case BERTH_OP_SHAPE: break;
    case BERTH_OP_BATCH_NORMALIZATION: m = kx; break; /* mean and variance are per channel, not broadcast */
    default: /* the output has the input's axes, or broadcasts its inputs */
        for (uint32_t i = 0; i < n->n_inputs; i++) m |= aligned(r, n->inputs[i], ry);
        break;
    }
    for (uint32_t o = 0; o < n->src->n_outputs; o++) r->mask[n->src->outputs[o]] = m;
}

/* The values a node computes from: positional operands and operand
 * options (bias, scale, gemm's c). Host tensors read as options (a
 * reshape's shape) are not data; the offsets check covers those. */
static int32_t first_mixed_input(const reach *r, const sp_node *n) {
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (r->mixed_at[n->inputs[i]] >= 0) return r->mixed_at[n->inputs[i]];
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        const berth_attr *at = &n->attrs[a];
        if (at->type == BERTH_ATTR_OPERAND && r->mixed_at[at->i] >= 0) return r->mixed_at[at->i];
        for (size_t j = 0; at->type == BERTH_ATTR_OPERANDS && j < at->count; j++)
            if (r->mixed_at[at->ints[j]] >= 0) return r->mixed_at[at->ints[j]];
    }
    return -1;
}

/* Whether node n reads, as data or option, a value marked in `on`. */
static int reads_any(const sp_node *n, const char *on) {
    for (uint32_t i = 0; i < n->src->n_inputs; i++)
        if (on[n->src->inputs[i]]) return 1;
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        const berth_attr *at = &n->attrs[a];
        if (at->type == BERTH_ATTR_OPERAND && on[at->i]) return 1;
        for (size_t j = 0; at->type == BERTH_ATTR_OPERANDS && j < at->count; j++)
            if (on[at->ints[j]]) return 1;
    }
    return 0;
}

static void record(const sp_node *nodes, int32_t node, const char *why, berth_pad_reach *out) {
    const sp_node *n = &nodes[node];
    out->node = n->name ? n->name : "?";
    out->op = n->op;
    out->line = n->src->line;
    out->why = why;
}

/* A dim that could not move alone (another dim must equal it somewhere):
 * every output computed from an input with it may see the padding, and
 * the node that tied it is named. */
static void tied(const berth_graph *g, const sp_node *nodes, uint32_t k, int32_t at, char *on,
                 berth_pad_reach *out) {
    memset(on, 0, g->n_values);
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        const bg_value *v = &g->values[g->inputs[i]];
        for (uint32_t d = 0; d < v->rank; d++) on[g->inputs[i]] |= v->dims[d].sym == (int32_t)k;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (reads_any(&nodes[i], on))
            for (uint32_t o = 0; o < nodes[i].src->n_outputs; o++) on[nodes[i].src->outputs[o]] = 1;
    for (uint32_t o = 0; o < g->n_outputs; o++)
        if (on[g->outputs[o]])
            record(nodes, at, "ties the padded dim to another, which berth does not follow",
                   &out[(size_t)o * g->n_syms + k]);
}

int sp_pad_reach(const berth_graph *g, const sp_node *nodes, const sp_val *vals, sp_val ***alt,
                 const uint64_t *moved, const int32_t *tied_at, const int64_t *syms,
                 berth_pad_reach *out) {
    reach r = {g, nodes, vals, NULL, NULL, NULL, NULL};
    r.mask = malloc(sizeof *r.mask * (g->n_values + 1));
    r.mixed_at = malloc(sizeof *r.mixed_at * (g->n_values + 1));
    r.why = malloc(sizeof *r.why * (g->n_nodes + 1));
    char *on = malloc(g->n_values + 1);
    if (!r.mask || !r.mixed_at || !r.why || !on) {
        free(r.mask);
        free(r.mixed_at);
        free(r.why);
        free(on);
        return -1;
    }
    for (uint32_t k = 0; k < g->n_syms && k < 64; k++) {
        if (syms[k] <= 1) continue; /* nothing to pad */
        if (!alt[k]) {
            if (tied_at[k] >= 0) tied(g, nodes, k, tied_at[k], on, out);
            continue;
        }
        r.alt = alt[k];
        for (uint32_t v = 0; v < g->n_values; v++) {
            r.mixed_at[v] = -1;
            r.mask[v] = alt_axes(&r, (int32_t)v);
        }
        for (uint32_t i = 0; i < g->n_inputs; i++) {
            const bg_value *v = &g->values[g->inputs[i]];
            for (uint32_t d = 0; d < v->rank; d++)
                if (v->dims[d].sym == (int32_t)k) r.mask[g->inputs[i]] |= 1u << d;
        }
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const sp_node *n = &nodes[i];
            int32_t at = first_mixed_input(&r, n);
            if (at < 0) {
                const char *why = moved[i] & (UINT64_C(1) << k) ? "has offsets that follow the padded dim"
                                                                : rule(&r, n);
                if (why) {
                    at = (int32_t)i;
                    r.why[i] = why;
                } else {
                    carry(&r, n);
                }
            }
            for (uint32_t o = 0; o < n->src->n_outputs; o++) {
                r.mixed_at[n->src->outputs[o]] = at;
                r.mask[n->src->outputs[o]] |= alt_axes(&r, n->src->outputs[o]);
            }
        }
        for (uint32_t o = 0; o < g->n_outputs; o++) {
            int32_t at = r.mixed_at[g->outputs[o]];
            if (at >= 0) record(nodes, at, r.why[at], &out[(size_t)o * g->n_syms + k]);
        }
    }
    free(r.mask);
    free(r.mixed_at);
    free(r.why);
    free(on);
    return 0;
}
