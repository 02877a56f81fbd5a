/* Specialization: a symbolic graph bound to one bucket.
 *
 * Every dyn dim gets its bucket value, shape arithmetic over values known
 * on the host (input shapes, @scalar and @bytes consts) is folded into
 * constants, every operand's shape and dtype is inferred with WebNN
 * semantics, and the result is a berth_graph_desc a backend can plan. */
#ifndef BERTH_SPECIALIZE_H
#define BERTH_SPECIALIZE_H

#include "berth/backend.h"
#include "graph.h"

/* Whether a graph output's kept values can depend on the padding along
 * one dyn dim (pad_reach.c says by which rules). node NULL: they cannot,
 * a padded run's trimmed output is what an unpadded run gives. Else the
 * first node, in graph order, that mixes padded positions into positions
 * that are kept, and why. */
typedef struct berth_pad_reach {
    const char *node; /* its first output's name */
    const char *op;
    uint32_t line;    /* in the graph file */
    const char *why;  /* "reduces over the padded axis" */
} berth_pad_reach;

typedef struct berth_spec {
    berth_graph_desc desc;  /* the ABI view handed to backend.plan */
    int32_t *operand_of;    /* per graph value: its operand index, or -1 (folded away / dead) */
    void *arena;            /* owns everything */
    uint32_t n_values;      /* length of operand_of: the graph's value count */
    /* Per output o and dim d, out_dep[o * BERTH_MAX_RANK + d]: bit k set
     * when that dim follows dyn dim k (would change were k one smaller),
     * found during inference. */
    uint64_t *out_dep;
    /* pad_reach[o * n_syms + k]: whether padding along dyn dim k can reach
     * output o's kept values; computed once per specialization. */
    berth_pad_reach *pad_reach;
    uint32_t n_syms;
} berth_spec;

/* sym_values[i] binds g->syms[i]; each must be 1..max.
 * weight_ids[v] is the upload id of const value v read from the archive
 * (UINT32_MAX for other values). Errors name the node (its first output
 * and line), the operand, what was expected and what was found. */
berth_spec *berth_specialize(const berth_graph *g, const int64_t *sym_values,
                             const uint32_t *weight_ids, berth_error *err);
void berth_spec_free(berth_spec *s);

/* The dims of every graph output with the dyn dims at sym_values, by the
 * same shape rules as berth_specialize but with no desc built: what an
 * unpadded run at those sizes returns. Works in `arena` (reset first and
 * kept by the caller), so once the arena has held a run as large, another
 * allocates nothing. out_rank[o]; out_dims[o * BERTH_MAX_RANK + d].
 * 0, or -1 with err naming the node whose rule refused these sizes. */
int berth_specialize_shapes(const berth_graph *g, const int64_t *sym_values, void *arena,
                            uint32_t *out_rank, int64_t *out_dims, berth_error *err);

/* The inferred operand (dtype, dims, kind, constant data) of graph value
 * `value`, or NULL when it was dropped (dead, or fused away). */
const berth_operand *berth_spec_value(const berth_spec *s, int32_t value);


/* Fusion passes over a specialized graph. Each rewrites a pattern into
 * one berth fused op only where `supports(ctx, op, dtype)` says yes:
 *   "berth.matmulEpilogue" matmul + bias add + activation
 *   "berth.attention"      matmul / scale / mask add / softmax / matmul
 *   "layerNormalization"   layer normalization spelled as primitives (a WebNN op)
 * First, an f32 pow whose exponent is a constant 1..4 or -1..-4 becomes
 * identity, mul and reciprocal nodes (fuse_pow.c says why those), where
 * `supports` takes them.
 * Returns the number of rewrites. */
typedef int (*berth_supports_fn)(void *ctx, const char *op, berth_dtype dtype);
int berth_fuse(berth_spec *s, berth_supports_fn supports, void *ctx);

#endif
