/* reshape, squeeze, unsqueeze and identity: the bytes do not change. The
 * planner lets the output alias its input (the copy below then sees the
 * same pointer and does nothing) unless the output is a graph output,
 * which must land in the caller's buffer. */
#include <string.h>

#include "cpu_internal.h"

static void view_exec(const cpu_node *n, berth_plan *p) {
    const cpu_opnd *o = &p->ops[n->out[0]];
    const void *x = cpu_ptr(p, n->in[0]);
    void *y = o->ptr;
    if (o->bytes && x != y) memcpy(y, x, o->bytes);
}

berth_status cpu_prep_view(cpu_prep *c) {
    berth_status st = bk_check_counts(&c->bk, 1, 1, 1);
    if (st) return st;
    const cpu_opnd *x = cpu_in(c, 0), *y = cpu_out(c, 0);
    if (x->dtype != y->dtype)
        return bk_fail(&c->bk, "output: expected dtype %s, found %s", bk_dtype_name(x->dtype), bk_dtype_name(y->dtype));
    if (x->numel != y->numel) {
        char a[128], b[128];
        bk_dims_str(x->dims, x->rank, a, sizeof a);
        bk_dims_str(y->dims, y->rank, b, sizeof b);
        return bk_fail(&c->bk, "cannot view %s (%zu elements) as %s (%zu elements)", a, x->numel, b, y->numel);
    }
    if (strcmp(c->node->op, "reshape") == 0) {
        int64_t shape[BERTH_MAX_RANK];
        int n;
        st = bk_opt_ints(&c->bk, "newShape", shape, BERTH_MAX_RANK, &n);
        if (st) return st;
        if (n >= 0) { /* when given, it must agree with the output */
            if ((uint32_t)n != y->rank) return bk_check_out_dims(&c->bk, 0, (uint32_t)n, shape);
            for (int i = 0; i < n; i++)
                if (shape[i] >= 0 && shape[i] != y->dims[i]) return bk_check_out_dims(&c->bk, 0, (uint32_t)n, shape);
        }
    }
    c->cn->exec = view_exec;
    c->cn->is_view = 1;
    return BERTH_OK;
}
