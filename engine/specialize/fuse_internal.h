/* Internals of the fusion passes shared by fuse.c (the matmul epilogue,
 * attention, layer normalization, compaction and berth_fuse),
 * fuse_pow.c (pow with a constant exponent as multiplications) and
 * fuse_program.c (elementwise programs and the fused ops built on them). */
#ifndef BERTH_FUSE_INTERNAL_H
#define BERTH_FUSE_INTERNAL_H

#include <string.h>

#include "berth/backend.h"
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

static inline const berth_operand *opnd(const fuser *f, uint32_t i) { return &f->ops[i]; }
static inline int is_f32(const fuser *f, uint32_t o) { return opnd(f, o)->dtype == BERTH_DTYPE_F32; }
static inline int same_shape(const berth_operand *a, const berth_operand *b) {
    return a->rank == b->rank && !memcmp(a->dims, b->dims, sizeof(int64_t) * a->rank);
}
static inline const berth_attr *node_attr(const berth_node *n, const char *key) {
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].key, key) && n->attrs[i].type != BERTH_ATTR_NULL) return &n->attrs[i];
    return NULL;
}

/* A CONSTANT operand holding one f32 value (all elements equal). */
int fz_const_scalar(const fuser *f, uint32_t o, double *out);
/* Replaces nodes chain[0..n) by `fused`, put where the last one was. */
int fz_replace(fuser *f, const int32_t *chain, int n, berth_node fused);
/* A node of op with the given inputs and options, taking the output and
 * name of `last`; op NULL when out of memory. */
berth_node fz_make_node(fuser *f, const char *op, const berth_node *last, uint32_t n_in, const uint32_t *in,
                        uint32_t n_attrs, const berth_attr *attrs);

/* fuse_pow.c. How many nodes the pow rewrite may add to desc d (the
 * fuser's node and operand arrays need that much room); then pow with a
 * small integer constant exponent rewritten as mul / reciprocal /
 * identity in place, before the fusion passes: the count rewritten, or
 * -1 when out of memory. */
uint32_t fz_pow_room(const berth_graph_desc *d);
int fz_rewrite_pow(fuser *f);

/* fuse_program.c. Each returns 1 when it fused, 0 when not, -1 when out
 * of memory. */
/* The connected elementwise group ending at node `sink`, as one
 * berth.elementwise program. */
int fz_try_elementwise(fuser *f, uint32_t sink);
/* A one-step activation program after a matmul epilogue, into it. */
int fz_try_epilogue_activation(fuser *f, uint32_t e);
/* A program after an nchw conv2d, into berth.conv2dEpilogue. */
int fz_try_conv_epilogue(fuser *f, uint32_t e);

#endif
