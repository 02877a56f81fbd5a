/* The memory limit: the most memory berth may hold for a deployment.
 *
 * What counts is what berth can see and answer for: the weights on the
 * device, every warm plan (the backend's bytes for it) and the engine's
 * own host buffers for each plan (padded inputs, bucket-sized outputs).
 * The caller's tensors are the caller's.
 *
 * A plan is checked twice. Before anything of it is allocated, against an
 * estimate from the specialized graph: the bytes of every value a node
 * produces and every constant the backend may copy, summed with no reuse
 * (an upper bound of any liveness-based arena), plus the host buffers the
 * engine will allocate. Backends may hold more than that (the cpu backend
 * packs weights for its matrix kernels), so once the backend has planned,
 * the total it reports is checked again and a plan over the limit is
 * freed. Either refusal leaves the bucket cold and the executor usable.
 *
 * Refusals are BERTH_ERR_NOMEM: the request is well formed and would run
 * with more memory, exactly as when a backend's own allocation fails, so
 * a caller handles one status for "does not fit" (try a smaller batch).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dtype.h"
#include "executor_internal.h"
#include "util.h"

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* Bytes of a tensor of this dtype and shape, in 64 bits: on a 32-bit
 * machine a message names a 4 GiB tensor's true size. UINT64_MAX when
 * even that overflows. */
static uint64_t shape_bytes(berth_dtype t, uint32_t rank, const int64_t *dims) {
    int ok = 1;
    int64_t n = 1;
    for (uint32_t d = 0; d < rank; d++) n = berth_mul_checked(n, dims[d] < 0 ? 0 : dims[d], &ok);
    uint64_t bytes = berth_dtype_bytes64(t, (uint64_t)n, &ok);
    return ok ? bytes : UINT64_MAX;
}

/* A tensor this machine cannot address (past a 32-bit size_t) is refused
 * whatever the limit; NULL when it can be. */
static const char *unaddressable(uint64_t bytes) {
    return bytes > (uint64_t)SIZE_MAX ? "what this machine can address" : NULL;
}

void berth_limit_init(berth_executor *ex, uint64_t option_bytes) {
    const berth_config *c = ex->cfg;
    if (option_bytes) {
        ex->mem_limit = option_bytes;
        snprintf(ex->mem_limit_what, sizeof ex->mem_limit_what,
                 "berth_open_options max_memory_bytes = %llu", (unsigned long long)option_bytes);
        return;
    }
    if (c->max_memory_mb) {
        ex->mem_limit = c->max_memory_mb << 20; /* at most 2^60: the parser caps it */
        snprintf(ex->mem_limit_what, sizeof ex->mem_limit_what, "[limits] max_memory_mb = %llu",
                 (unsigned long long)c->max_memory_mb);
        return;
    }
    /* The default: without a limit a bucket too large for the machine is
     * planned anyway and the process swaps or is killed. Physical memory
     * is the most any deployment here could use, so it refuses only what
     * could never have run well. */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) {
        ex->mem_limit = UINT64_MAX;
        snprintf(ex->mem_limit_what, sizeof ex->mem_limit_what,
                 "no limit (the machine's memory size is unknown; set [limits] max_memory_mb)");
        return;
    }
    ex->mem_limit = (uint64_t)pages * (uint64_t)page;
    char size[32];
    berth_format_bytes(size, sizeof size, ex->mem_limit);
    snprintf(ex->mem_limit_what, sizeof ex->mem_limit_what,
             "the default limit, the machine's physical memory of %s", size);
}

uint64_t berth_executor_memory_limit(const berth_executor *ex, const char **what) {
    if (what) *what = ex->mem_limit_what;
    return ex->mem_limit;
}

berth_status berth_limit_check_weights(const berth_executor *ex, uint64_t bytes, const char *what,
                                       berth_error *err) {
    if (bytes <= ex->mem_limit) return BERTH_OK;
    char size[32];
    berth_format_bytes(size, sizeof size, bytes);
    berth_errorf(err, "%s: the weights %s %s, more than %s", ex->cfg->path, what, size,
                 ex->mem_limit_what);
    return BERTH_ERR_NOMEM;
}

/* Everything warm now: weights, plans on the device, host buffers. */
static uint64_t held_bytes(const berth_executor *ex, uint64_t *weights, uint64_t *plans) {
    berth_memory m;
    berth_memory_held(ex, UINT32_MAX, &m);
    *weights = m.weights_bytes;
    *plans = sat_add(m.plans_bytes, m.host_bytes);
    return sat_add(*weights, *plans);
}

/* "bucket batch=8": the caller named the lane, as every run error assumes. */
static void where(const berth_executor *ex, const lane *ln, uint32_t b, char *buf, size_t cap) {
    char desc[200];
    berth_executor_bucket_describe(ex, (uint32_t)(ln - ex->lanes), b, desc, sizeof desc);
    snprintf(buf, cap, "bucket %s", desc);
}

/* One tensor the engine allocates for a plan ("input 'x' padded to the
 * bucket"): refused alone over the limit, else added to *host. */
static berth_status add_host_tensor(const berth_executor *ex, const lane *ln, uint32_t b,
                                    const berth_operand *o, const char *kind, const char *how,
                                    uint64_t *host,
                                    berth_error *err) {
    uint64_t bytes = shape_bytes(o->dtype, o->rank, o->dims);
    if (bytes > ex->mem_limit || unaddressable(bytes)) {
        char at[256], size[32], shape[160];
        where(ex, ln, b, at, sizeof at);
        berth_format_bytes(size, sizeof size, bytes);
        berth_shape_text(shape, sizeof shape, o->dtype, o->rank, o->dims);
        berth_errorf(err, "%s: %s '%s' %s takes %s (%s), more than %s", at, kind, o->name, how,
                     size, shape, bytes > ex->mem_limit ? ex->mem_limit_what : unaddressable(bytes));
        return BERTH_ERR_NOMEM;
    }
    *host = sat_add(*host, bytes);
    return BERTH_OK;
}

berth_status berth_limit_check_plan(const berth_executor *ex, const lane *ln, uint32_t b,
                                    const berth_spec *s, berth_error *err) {
    const berth_graph_desc *d = &s->desc;
    char at[256], size[32], shape[160];
    uint64_t host = 0, values = 0;
    /* Each tensor the engine allocates for this plan, alone: the padded
     * copy of a dynamic input (made on every run before the backend sees
     * it) and the bucket-sized result of each output (which the caller's
     * buffer grows towards). */
    for (uint32_t i = 0; i < d->n_inputs; i++) {
        int dynamic = 0;
        for (uint32_t k = 0; k < ln->in_rank[i]; k++) dynamic |= ln->in_sym[i * BERTH_MAX_RANK + k] >= 0;
        if (!dynamic) continue; /* handed to the backend as the caller gave it */
        berth_status st = add_host_tensor(ex, ln, b, &d->operands[d->inputs[i]],
                                          "input", "padded to the bucket", &host, err);
        if (st != BERTH_OK) return st;
    }
    for (uint32_t i = 0; i < d->n_outputs; i++) {
        berth_status st = add_host_tensor(ex, ln, b, &d->operands[d->outputs[i]],
                                          "output", "at the bucket's size", &host, err);
        if (st != BERTH_OK) return st;
    }
    /* The plan as a whole, on top of what is already held. */
    const berth_operand *largest = NULL;
    uint64_t largest_bytes = 0;
    for (uint32_t i = 0; i < d->n_operands; i++) {
        const berth_operand *o = &d->operands[i];
        if (o->kind != BERTH_OPERAND_VALUE && o->kind != BERTH_OPERAND_CONSTANT) continue;
        uint64_t bytes = shape_bytes(o->dtype, o->rank, o->dims);
        values = sat_add(values, bytes);
        if (!largest || bytes > largest_bytes) {
            largest = o;
            largest_bytes = bytes;
        }
    }
    uint64_t weights, plans;
    uint64_t held = held_bytes(ex, &weights, &plans);
    uint64_t mine = sat_add(values, host);
    uint64_t total = sat_add(held, mine);
    if (total <= ex->mem_limit && !unaddressable(largest_bytes)) return BERTH_OK;
    char a[32], w[32], p[32], big[32];
    where(ex, ln, b, at, sizeof at);
    berth_format_bytes(a, sizeof a, total);
    berth_format_bytes(w, sizeof w, weights);
    berth_format_bytes(p, sizeof p, plans);
    berth_format_bytes(size, sizeof size, mine);
    if (largest) {
        berth_format_bytes(big, sizeof big, largest_bytes);
        berth_shape_text(shape, sizeof shape, largest->dtype, largest->rank, largest->dims);
    }
    berth_errorf(err,
                 "%s: the plan needs %s (weights %s + plans already built %s + this plan's buffers "
                 "%s), more than %s%s%s%s%s%s%s",
                 at, a, w, p, size, total > ex->mem_limit ? ex->mem_limit_what : unaddressable(largest_bytes),
                 largest ? "; its largest tensor is '" : "",
                 largest ? largest->name : "", largest ? "', " : "", largest ? shape : "",
                 largest ? ", " : "", largest ? big : "");
    return BERTH_ERR_NOMEM;
}

berth_status berth_limit_check_built(const berth_executor *ex, const lane *ln, uint32_t b,
                                     berth_error *err) {
    uint64_t weights, plans;
    uint64_t held = held_bytes(ex, &weights, &plans);
    if (held <= ex->mem_limit) return BERTH_OK;
    char at[256], a[32], w[32], p[32];
    where(ex, ln, b, at, sizeof at);
    berth_format_bytes(a, sizeof a, held);
    berth_format_bytes(w, sizeof w, weights);
    berth_format_bytes(p, sizeof p, plans);
    berth_errorf(err,
                 "%s: once backend%s '%s'%s planned it, berth held %s (weights %s + plans %s, this "
                 "one included), more than %s; the plan was freed",
                 at, ex->n_be > 1 ? "s" : "", ex->be[0].mod.be->name, ex->n_be > 1 ? " and the rest of use" : "",
                 a, w, p, ex->mem_limit_what);
    return BERTH_ERR_NOMEM;
}
