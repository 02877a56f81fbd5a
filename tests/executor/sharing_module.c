/* A backend module that is the cpu backend sharing its plans' outputs
 * (ABI 1.3's export_output and import_input), for the tests of crossings
 * kept where their writer left them:
 *  - every plan keeps each output in memory of its own, a memfd mapped
 *    once, and exports it: SHARE_KIND BERTH_SHARED_HOST as its address,
 *    BERTH_SHARED_FD as the descriptor;
 *  - it imports a buffer of its SHARE_KIND, mapping a descriptor;
 *  - RUNS_ALL 0 runs only conv2d, matmul and add (as the partial
 *    fixture), 1 every op of cpu, so a graph crosses between two of them;
 *  - BAD_EXPORT 1 describes each export 4 bytes longer than the output,
 *    which the host must refuse (and copy the tensor as before).
 * A run hands the cpu backend the output's own memory and copies it on
 * only where the host asked for another place: what the host must do
 * with exported outputs (hand back the address, or NULL) is what the
 * test watches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "berth/backend.h"
#include "cpu_wrap.h"

static berth_backend table;
static const berth_backend *cpu;

struct berth_plan {
    berth_plan *inner;
    uint32_t n_in, n_out;
    size_t tensor_size;
    int *fd;          /* per output */
    void **mem;       /* per output: its memory, mapped */
    size_t *bytes;    /* per output */
    void **imported;  /* per input: the mapped import, or NULL */
    size_t *imp_len;  /* per input: what was mapped (a descriptor's), or 0 */
    berth_tensor *in, *out; /* what the cpu backend is handed */
};

static int runs(const char *op) {
    return RUNS_ALL || !strcmp(op, "conv2d") || !strcmp(op, "matmul") || !strcmp(op, "add");
}

static berth_status refuse(const char *op, berth_error *err) {
    snprintf(err->msg, sizeof err->msg, "sharing runs only conv2d, matmul and add, not %s", op);
    return BERTH_ERR_UNSUPPORTED;
}

static berth_status sh_supports_op(berth_device *dev, const char *op, berth_dtype dtype, berth_error *err) {
    return runs(op) ? cpu->supports_op(dev, op, dtype, err) : refuse(op, err);
}

static berth_status sh_supports_node(berth_device *dev, const berth_graph_desc *g, uint32_t i, berth_error *err) {
    const berth_node *n = (const berth_node *)((const char *)g->nodes + (size_t)i * g->node_size);
    return runs(n->op) ? cpu->supports_node(dev, g, i, err) : refuse(n->op, err);
}

static void sh_free_plan(berth_plan *p) {
    if (!p) return;
    if (p->inner) cpu->free_plan(p->inner);
    for (uint32_t o = 0; o < p->n_out; o++) {
        if (p->mem[o]) munmap(p->mem[o], p->bytes[o] ? p->bytes[o] : 1);
        if (p->fd[o] >= 0) close(p->fd[o]);
    }
    for (uint32_t i = 0; i < p->n_in; i++)
        if (p->imp_len[i]) munmap(p->imported[i], p->imp_len[i]);
    free(p->fd), free(p->mem), free(p->bytes), free(p->imported), free(p->imp_len), free(p->in), free(p->out);
    free(p);
}

static size_t operand_bytes(const berth_graph_desc *g, uint32_t k) {
    const berth_operand *o = (const berth_operand *)((const char *)g->operands + (size_t)k * g->operand_size);
    size_t n = 4; /* the first graph and its kin: float32 */
    for (uint32_t r = 0; r < o->rank; r++) n *= (size_t)o->dims[r];
    return n;
}

static berth_status sh_plan(berth_device *dev, berth_weights *w, const berth_graph_desc *g, berth_plan **out,
                            berth_error *err) {
    berth_plan *p = calloc(1, sizeof *p);
    if (!p) goto nomem;
    p->n_in = g->n_inputs;
    p->n_out = g->n_outputs;
    p->tensor_size = g->tensor_size ? g->tensor_size : sizeof(berth_tensor);
    p->fd = malloc(sizeof *p->fd * (p->n_out + 1));
    p->mem = calloc(p->n_out + 1, sizeof *p->mem);
    p->bytes = calloc(p->n_out + 1, sizeof *p->bytes);
    p->imported = calloc(p->n_in + 1, sizeof *p->imported);
    p->imp_len = calloc(p->n_in + 1, sizeof *p->imp_len);
    p->in = calloc(p->n_in + 1, p->tensor_size);
    p->out = calloc(p->n_out + 1, p->tensor_size);
    if (!p->fd || !p->mem || !p->bytes || !p->imported || !p->imp_len || !p->in || !p->out) goto nomem;
    for (uint32_t o = 0; o < p->n_out; o++) p->fd[o] = -1;
    for (uint32_t o = 0; o < p->n_out; o++) {
        p->bytes[o] = operand_bytes(g, g->outputs[o]);
        size_t len = p->bytes[o] ? p->bytes[o] : 1;
        p->fd[o] = memfd_create("berth-sharing", 0);
        if (p->fd[o] < 0 || ftruncate(p->fd[o], (off_t)len)) goto nomem;
        p->mem[o] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd[o], 0);
        if (p->mem[o] == MAP_FAILED) {
            p->mem[o] = NULL;
            goto nomem;
        }
    }
    berth_status st = cpu->plan(dev, w, g, &p->inner, err);
    if (st != BERTH_OK) {
        sh_free_plan(p);
        return st;
    }
    *out = p;
    return BERTH_OK;
nomem:
    sh_free_plan(p);
    snprintf(err->msg, sizeof err->msg, "sharing: out of memory or descriptors for a plan");
    return BERTH_ERR_NOMEM;
}

static berth_status sh_export(berth_plan *p, uint32_t index, uint32_t kinds, berth_shared_buffer *buf,
                              berth_error *err) {
    if (index >= p->n_out || !(kinds & SHARE_KIND)) {
        snprintf(err->msg, sizeof err->msg, "sharing exports output %u of %u only as kind %u", index, p->n_out,
                 SHARE_KIND);
        return index >= p->n_out ? BERTH_ERR_INVALID : BERTH_ERR_UNSUPPORTED;
    }
    buf->kind = SHARE_KIND;
    buf->host = SHARE_KIND == BERTH_SHARED_HOST ? p->mem[index] : NULL;
    buf->fd = SHARE_KIND == BERTH_SHARED_FD ? p->fd[index] : -1;
    buf->offset = 0;
    buf->bytes = p->bytes[index] + (BAD_EXPORT ? 4 : 0);
    return BERTH_OK;
}

static berth_status sh_import(berth_plan *p, uint32_t index, const berth_shared_buffer *buf, berth_error *err) {
    if (index >= p->n_in || buf->kind != SHARE_KIND) {
        snprintf(err->msg, sizeof err->msg, "sharing imports input %u of %u only as kind %u", index, p->n_in,
                 SHARE_KIND);
        return index >= p->n_in ? BERTH_ERR_INVALID : BERTH_ERR_UNSUPPORTED;
    }
    if (buf->kind == BERTH_SHARED_HOST) {
        p->imported[index] = buf->host;
        return BERTH_OK;
    }
    size_t len = (size_t)(buf->offset + buf->bytes);
    void *m = mmap(NULL, len ? len : 1, PROT_READ, MAP_SHARED, buf->fd, 0);
    if (m == MAP_FAILED) {
        snprintf(err->msg, sizeof err->msg, "sharing: mapping descriptor %d failed", buf->fd);
        return BERTH_ERR_UNSUPPORTED;
    }
    p->imported[index] = (char *)m + buf->offset;
    p->imp_len[index] = len ? len : 1;
    return BERTH_OK;
}

/* NULL (a descriptor) or the imported address: read the import. An
 * output handed NULL or its own memory stays there; any other place gets
 * a copy. */
static berth_status sh_run(berth_plan *p, const berth_tensor *in, uint32_t n_in, berth_tensor *out, uint32_t n_out,
                           berth_error *err) {
    if (n_in != p->n_in || n_out != p->n_out) {
        snprintf(err->msg, sizeof err->msg, "sharing: run: %u inputs and %u outputs, expected %u and %u", n_in, n_out,
                 p->n_in, p->n_out);
        return BERTH_ERR_INVALID;
    }
    memcpy(p->in, in, p->tensor_size * n_in);
    memcpy(p->out, out, p->tensor_size * n_out);
    for (uint32_t i = 0; i < n_in; i++) {
        berth_tensor *t = (berth_tensor *)((char *)p->in + i * p->tensor_size);
        if (!t->data && t->bytes) {
            if (!p->imported[i]) {
                snprintf(err->msg, sizeof err->msg, "sharing: input %u handed as NULL but nothing imported", i);
                return BERTH_ERR_INVALID;
            }
            t->data = p->imported[i];
        }
    }
    for (uint32_t o = 0; o < n_out; o++) ((berth_tensor *)((char *)p->out + o * p->tensor_size))->data = p->mem[o];
    berth_status st = cpu->run(p->inner, p->in, n_in, p->out, n_out, err);
    for (uint32_t o = 0; st == BERTH_OK && o < n_out; o++) {
        berth_tensor *t = (berth_tensor *)((char *)out + o * p->tensor_size);
        if (t->data && t->data != p->mem[o] && t->bytes) memcpy(t->data, p->mem[o], t->bytes);
    }
    return st;
}

static uint64_t sh_plan_bytes(const berth_plan *p) { return cpu->plan_bytes(p->inner); }

static berth_status sh_plan_profile(const berth_plan *p, uint64_t *ns, uint32_t n, berth_error *err) {
    return cpu->plan_profile(p->inner, ns, n, err);
}

static berth_status sh_plan_memory(const berth_plan *p, berth_plan_memory *m, berth_error *err) {
    return cpu->plan_memory(p->inner, m, err);
}

__attribute__((visibility("default"))) const berth_backend *
berth_backend_entry(uint32_t host_abi_version, const berth_host_services *host, berth_error *why) {
    if (!(cpu = cpu_wrap(MODULE_NAME, host_abi_version, host, why, &table))) return NULL;
    table.supports_op = sh_supports_op;
    table.supports_node = sh_supports_node;
    table.plan = sh_plan;
    table.run = sh_run;
    table.free_plan = sh_free_plan;
    table.plan_bytes = sh_plan_bytes;
    if (table.plan_profile) table.plan_profile = sh_plan_profile;
    if (table.abi_version >= BERTH_BACKEND_ABI_V1_2) table.plan_memory = sh_plan_memory;
    if (table.abi_version >= BERTH_BACKEND_ABI_V1_3) {
        table.export_output = sh_export;
        table.import_input = sh_import;
    }
    return &table;
}
