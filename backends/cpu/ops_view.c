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
    berth_status st = cpu_check_counts(c, 1, 1, 1);
    if (st) return st;
    const cpu_opnd *x = cpu_in(c, 0), *y = cpu_out(c, 0);
    if (x->dtype != y->dtype)
        return cpu_fail(c, "output: expected dtype %s, found %s", cpu_dtype_name(x->dtype), cpu_dtype_name(y->dtype));
    if (x->numel != y->numel) {
        char a[128], b[128];
        cpu_dims_str(x->dims, x->rank, a, sizeof a);
        cpu_dims_str(y->dims, y->rank, b, sizeof b);
        return cpu_fail(c, "cannot view %s (%zu elements) as %s (%zu elements)", a, x->numel, b, y->numel);
    }
    if (strcmp(c->node->op, "reshape") == 0) {
        int64_t shape[BERTH_MAX_RANK];
        int n;
        st = cpu_attr_ints(c, "newShape", shape, BERTH_MAX_RANK, &n);
        if (st) return st;
        if (n >= 0) { /* when given, it must agree with the output */
            if ((uint32_t)n != y->rank) return cpu_check_out_dims(c, 0, (uint32_t)n, shape);
            for (int i = 0; i < n; i++)
                if (shape[i] >= 0 && shape[i] != y->dims[i]) return cpu_check_out_dims(c, 0, (uint32_t)n, shape);
        }
    }
    c->cn->exec = view_exec;
    c->cn->is_view = 1;
    return BERTH_OK;
}
