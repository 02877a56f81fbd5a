/* split: a plan step per subgraph, and the tensors crossing between
 * them. A crossing tensor either stays where its writer's plan leaves it,
 * when the writer exports it and every reader can read it there (ABI
 * 1.3), or waits in one host block placed by liveness. Either way a warm
 * run allocates nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "backend_call.h"
#include "bk.h"
#include "dtype.h"
#include "executor_internal.h"
#include "loader.h"
#include "partition.h"
#include "util.h"

/* Step g's arrays, names, crossing marks and estimates, cut from the
 * spec; the tensors' data is set once the plans are built. */
static berth_status cut_step(berth_executor *ex, plan_slot *s, const berth_partition *p, uint32_t g,
                             berth_error *err) {
    const berth_graph_desc *d = &s->spec->desc;
    const berth_subgraph *sg = &p->subgraphs[g];
    plan_step *ps = &s->steps[g];
    ps->backend = sg->backend;
    ps->est_node_ns = sg->node_ns;
    ps->est_overhead_ns = sg->overhead_ns;
    berth_status st = berth_subgraph_desc(d, sg, ex->be[sg->backend].weight_id, s->cut, &ps->desc, err);
    if (st != BERTH_OK) return st;
    ps->n_in = sg->n_in;
    ps->n_out = sg->n_out;
    ps->in = berth_arena_array(s->cut, sg->n_in + 1, sizeof *ps->in);
    ps->out = berth_arena_array(s->cut, sg->n_out + 1, sizeof *ps->out);
    ps->in_from = berth_arena_array(s->cut, sg->n_in + 1, sizeof *ps->in_from);
    ps->in_names = berth_arena_array(s->cut, sg->n_in + 1, sizeof *ps->in_names);
    ps->out_names = berth_arena_array(s->cut, sg->n_out + 1, sizeof *ps->out_names);
    ps->in_crosses = berth_arena_array(s->cut, sg->n_in + 1, 1);
    ps->out_crosses = berth_arena_array(s->cut, sg->n_out + 1, 1);
    if (!ps->in || !ps->out || !ps->in_from || !ps->in_names || !ps->out_names || !ps->in_crosses ||
        !ps->out_crosses) {
        berth_errorf(err, "out of memory preparing the subgraphs of a split plan");
        return BERTH_ERR_NOMEM;
    }
    for (uint32_t j = 0; j < sg->n_in; j++) {
        uint32_t k = sg->in[j];
        ps->in_names[j] = d->operands[k].name;
        ps->in_from[j] = -1;
        if (d->operands[k].kind == BERTH_OPERAND_INPUT) {
            for (uint32_t i = 0; i < d->n_inputs; i++)
                if (d->inputs[i] == k) ps->in_from[j] = (int32_t)i;
        } else {
            ps->in_crosses[j] = 1; /* an earlier subgraph wrote it */
            ps->bytes_in += berth_operand_bytes(d, k);
        }
    }
    for (uint32_t j = 0; j < sg->n_out; j++) {
        uint32_t k = sg->out[j];
        ps->out_names[j] = d->operands[k].name;
        ps->out_crosses[j] = p->crosses[k];
        if (p->crosses[k]) ps->bytes_out += berth_operand_bytes(d, k);
    }
    return BERTH_OK;
}

berth_status berth_split_cut(berth_executor *ex, plan_slot *s, const berth_partition *p, berth_error *err) {
    s->cut = berth_arena_new();
    if (!s->cut) {
        berth_errorf(err, "out of memory preparing the subgraphs of a split plan");
        return BERTH_ERR_NOMEM;
    }
    s->first_subgraphs = p->first_subgraphs;
    s->moved_runs = p->moved_runs;
    s->moved_nodes = p->moved_nodes;
    s->first_ns = p->first_ns;
    s->est_ns = p->est_ns;
    for (uint32_t g = 0; g < p->n_subgraphs; g++) {
        berth_status st = cut_step(ex, s, p, g, err);
        if (st != BERTH_OK) return st;
    }
    return BERTH_OK;
}

/* Where crossing tensor k is written (step, output) and read. */
typedef struct crossing_ends {
    uint32_t w_step, w_out;
    uint32_t n_readers;
    uint32_t *r_step, *r_in; /* n_readers each */
    uint8_t *r_imported;     /* n_readers: 1 once that reader imported it */
} crossing_ends;

static void find_ends(const berth_partition *p, uint32_t k, crossing_ends *e) {
    e->n_readers = 0;
    for (uint32_t g = 0; g < p->n_subgraphs; g++) {
        const berth_subgraph *sg = &p->subgraphs[g];
        for (uint32_t j = 0; j < sg->n_out; j++)
            if (sg->out[j] == k) e->w_step = g, e->w_out = j;
        for (uint32_t j = 0; j < sg->n_in; j++)
            if (sg->in[j] == k) {
                e->r_step[e->n_readers] = g;
                e->r_in[e->n_readers++] = j;
            }
    }
}

/* Ask crossing tensor k's writer to export it and its readers to import
 * it. 1 when it stays where the writer leaves it: the writer's output
 * and the readers' inputs then point there (NULL for a descriptor). A
 * host pointer any reader can read, importing or not; a descriptor only
 * when every reader imports it. */
static int share(berth_executor *ex, plan_slot *s, const berth_graph_desc *d, uint32_t k, const crossing_ends *e) {
    plan_step *w = &s->steps[e->w_step];
    const berth_backend *wb = ex->be[w->backend].mod.be;
    uint64_t bytes = berth_operand_bytes(d, k);
    int ok = 1;
    size_t elem = berth_dtype_bytes(d->operands[k].dtype, 1, &ok);
    if (!berth_backend_has_export(wb) || !bytes || bytes == UINT64_MAX) return 0;
    berth_shared_buffer buf;
    memset(&buf, 0, sizeof buf);
    buf.struct_size = sizeof buf;
    buf.fd = -1;
    berth_error e_msg;
    berth_backend_msg_reset(&e_msg);
    berth_status st = wb->export_output(w->plan, e->w_out, BERTH_SHARED_HOST | BERTH_SHARED_FD, &buf, &e_msg);
    if (berth_backend_result(st, wb->name, "export_output", &e_msg, &e_msg) != BERTH_OK) {
        if (st != BERTH_ERR_UNSUPPORTED)
            berth_logf(&ex->log, BERTH_LOG_WARN, "tensor '%s' passes through a host buffer: %s", d->operands[k].name,
                       e_msg.msg);
        return 0;
    }
    int host = buf.kind == BERTH_SHARED_HOST && buf.host && (!elem || (uintptr_t)buf.host % elem == 0);
    int fd = buf.kind == BERTH_SHARED_FD && buf.fd >= 0;
    if (buf.bytes != bytes || (!host && !fd)) {
        berth_logf(&ex->log, BERTH_LOG_WARN,
                   "tensor '%s' passes through a host buffer: backend '%s' export_output() described %llu bytes "
                   "of kind %u, expected %llu bytes of a host pointer aligned to %zu or a descriptor",
                   d->operands[k].name, wb->name, (unsigned long long)buf.bytes, buf.kind,
                   (unsigned long long)bytes, elem);
        return 0;
    }
    uint32_t imported = 0;
    for (uint32_t r = 0; r < e->n_readers; r++) {
        plan_step *rs = &s->steps[e->r_step[r]];
        const berth_backend *rb = ex->be[rs->backend].mod.be;
        berth_error ie;
        berth_backend_msg_reset(&ie);
        e->r_imported[r] =
            berth_backend_has_import(rb) && rb->import_input(rs->plan, e->r_in[r], &buf, &ie) == BERTH_OK;
        imported += e->r_imported[r];
    }
    /* A reader that cannot map a descriptor needs host memory: then the
     * tensor goes through a host buffer for all (an import commits to
     * nothing: those that imported are handed host memory too). */
    if (fd && imported < e->n_readers) return 0;
    for (uint32_t r = 0; r < e->n_readers; r++)
        if (e->r_imported[r]) s->steps[e->r_step[r]].in_imported_bytes += bytes;
    void *at = host ? buf.host : NULL;
    w->out[e->w_out].data = at;
    w->out[e->w_out].capacity = bytes;
    w->out_exported_bytes += bytes;
    for (uint32_t r = 0; r < e->n_readers; r++) {
        s->steps[e->r_step[r]].in[e->r_in[r]].data = at;
        s->steps[e->r_step[r]].in[e->r_in[r]].capacity = bytes;
    }
    return 1;
}

/* The crossing tensors not shared share one host block: each lives from
 * the subgraph writing it to the last reading it, and tensors whose lives
 * do not overlap reuse the same bytes (as a backend places its own). */
static berth_status place_host_block(plan_slot *s, const berth_partition *p, const berth_graph_desc *d,
                                     const uint8_t *shared, bk_span *spans, crossing_ends *ends,
                                     berth_tensor **buf_of, berth_error *err) {
    berth_tensor *cross_t = berth_arena_array(s->cut, p->n_crossing + 1, sizeof *cross_t);
    if (!cross_t) goto nomem;
    uint32_t n_spans = 0;
    for (uint32_t k = 0; k < d->n_operands; k++) {
        if (!p->crosses[k] || buf_of[k] || shared[k]) continue;
        uint64_t bytes = berth_operand_bytes(d, k);
        if (bytes == UINT64_MAX || bytes > SIZE_MAX) {
            berth_errorf(err, "tensor '%s' crossing between backends is too large to address", d->operands[k].name);
            return BERTH_ERR_INVALID;
        }
        bk_span *sp = &spans[n_spans++];
        sp->size = bytes ? (size_t)bytes : 1;
        sp->id = k;
        find_ends(p, k, ends);
        sp->first = ends->w_step;
        for (uint32_t r = 0; r < ends->n_readers; r++) sp->last = ends->r_step[r];
    }
    size_t block = bk_place(spans, n_spans, 64);
    s->cross = n_spans ? aligned_alloc(64, (block + 63) & ~(size_t)63) : NULL;
    if (n_spans && !s->cross) goto nomem;
    s->host_bytes += block;
    for (uint32_t j = 0; j < n_spans; j++) {
        berth_tensor *t = &cross_t[j];
        berth_tensor_describe(t, &d->operands[spans[j].id], (size_t)berth_operand_bytes(d, spans[j].id));
        t->data = (char *)s->cross + spans[j].off;
        t->capacity = t->bytes;
        buf_of[spans[j].id] = t;
    }
    return BERTH_OK;
nomem:
    berth_errorf(err, "out of memory preparing the subgraphs of a split plan");
    return BERTH_ERR_NOMEM;
}

berth_status berth_split_buffers(berth_executor *ex, plan_slot *s, const berth_partition *p, berth_error *err) {
    const berth_graph_desc *d = &s->spec->desc;
    berth_status st = BERTH_ERR_NOMEM;
    berth_tensor **buf_of = calloc(d->n_operands + 1, sizeof *buf_of);
    uint8_t *shared = calloc(d->n_operands + 1, 1);
    bk_span *spans = calloc(p->n_crossing + 1, sizeof *spans);
    crossing_ends ends = {0, 0, 0, malloc(sizeof(uint32_t) * (p->n_subgraphs + 1)),
                          malloc(sizeof(uint32_t) * (p->n_subgraphs + 1)), malloc(p->n_subgraphs + 1)};
    s->out_src = malloc(sizeof *s->out_src * (d->n_outputs + 1));
    if (!buf_of || !shared || !spans || !ends.r_step || !ends.r_in || !ends.r_imported || !s->out_src) goto nomem;
    /* A graph output crosses through its own output buffer. */
    for (uint32_t o = 0; o < d->n_outputs; o++) {
        uint32_t k = d->outputs[o];
        s->out_src[o] = o;
        if (buf_of[k]) s->out_src[o] = (uint32_t)(buf_of[k] - s->out_full);
        else buf_of[k] = &s->out_full[o];
    }
    /* Every step's tensors get their dtype and dims first: sharing sets
     * the data of those it keeps where the writer leaves them. */
    for (uint32_t g = 0; g < p->n_subgraphs; g++) {
        const berth_subgraph *sg = &p->subgraphs[g];
        for (uint32_t j = 0; j < sg->n_in; j++)
            berth_tensor_describe(&s->steps[g].in[j], &d->operands[sg->in[j]], berth_operand_bytes(d, sg->in[j]));
        for (uint32_t j = 0; j < sg->n_out; j++)
            berth_tensor_describe(&s->steps[g].out[j], &d->operands[sg->out[j]], berth_operand_bytes(d, sg->out[j]));
    }
    for (uint32_t k = 0; k < d->n_operands; k++)
        if (p->crosses[k] && !buf_of[k]) {
            find_ends(p, k, &ends);
            shared[k] = (uint8_t)share(ex, s, d, k, &ends);
        }
    if ((st = place_host_block(s, p, d, shared, spans, &ends, buf_of, err)) != BERTH_OK) goto done;
    /* Every tensor not kept where its writer leaves it: the host buffer
     * it waits in (graph inputs are refreshed per run, from in_from). */
    for (uint32_t g = 0; g < p->n_subgraphs; g++) {
        const berth_subgraph *sg = &p->subgraphs[g];
        plan_step *ps = &s->steps[g];
        for (uint32_t j = 0; j < sg->n_in; j++)
            if (ps->in_from[j] < 0 && !shared[sg->in[j]]) ps->in[j] = *buf_of[sg->in[j]];
        for (uint32_t j = 0; j < sg->n_out; j++)
            if (!shared[sg->out[j]]) ps->out[j] = *buf_of[sg->out[j]];
    }
    goto done;
nomem:
    berth_errorf(err, "out of memory preparing the subgraphs of a split plan");
done:
    free(buf_of);
    free(shared);
    free(spans);
    free(ends.r_step);
    free(ends.r_in);
    free(ends.r_imported);
    return st;
}
