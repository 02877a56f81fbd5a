/* run(): bind the caller's inputs and outputs, execute the nodes in
 * order and time each one. Nothing on this path allocates. */
#include <string.h>

#include "cpu_internal.h"

berth_status cpu_run(berth_plan *p, const berth_tensor *in, uint32_t n_in, berth_tensor *out,
                     uint32_t n_out, berth_error *err) {
    if (n_in != p->n_inputs || n_out != p->n_outputs) {
        bk_errf(err, "cpu: run: expected %u inputs and %u outputs, found %u and %u", p->n_inputs,
                 p->n_outputs, n_in, n_out);
        return BERTH_ERR_INVALID;
    }
    for (uint32_t i = 0; i < n_in; i++) p->ops[p->inputs[i]].ptr = bk_tensor_at(in, i, p->tensor_size)->data;
    for (uint32_t i = 0; i < n_out; i++)
        if (p->out_direct[i]) p->ops[p->outputs[i]].ptr = bk_tensor_at(out, i, p->tensor_size)->data;
    for (uint32_t i = 0; i < p->n_alias; i++) p->ops[p->alias[2 * i]].ptr = p->ops[p->alias[2 * i + 1]].ptr;
    cpu_pool_begin(p->dev->pool);
    for (uint32_t k = 0; k < p->n_nodes; k++) {
        if (p->nodes[k].empty) { /* kernels may assume data; zero-size buffers may be NULL */
            p->ns[k] = 0;
            continue;
        }
        uint64_t t0 = cpu_now_ns();
        p->nodes[k].exec(&p->nodes[k], p);
        p->ns[k] = cpu_now_ns() - t0;
    }
    cpu_pool_end(p->dev->pool);
    for (uint32_t i = 0; i < n_out; i++) {
        if (p->out_direct[i]) continue;
        const cpu_opnd *o = &p->ops[p->outputs[i]];
        void *dst = bk_tensor_at(out, i, p->tensor_size)->data;
        if (o->bytes && dst != o->ptr) memcpy(dst, o->ptr, o->bytes);
    }
    return BERTH_OK;
}

berth_status cpu_plan_profile(const berth_plan *p, uint64_t *ns, uint32_t n, berth_error *err) {
    if (n > p->n_nodes) {
        bk_errf(err, "cpu: plan_profile: asked for %u nodes, the plan has %u", n, p->n_nodes);
        return BERTH_ERR_INVALID;
    }
    memcpy(ns, p->ns, sizeof *ns * n);
    return BERTH_OK;
}
