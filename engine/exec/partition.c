/* split = on: assign nodes to backends, order them into subgraphs, find
 * the tensors crossing between subgraphs, and cut each subgraph out as a
 * graph its backend can plan. */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "dtype.h"
#include "partition.h"
#include "util.h"

uint64_t berth_operand_bytes(const berth_graph_desc *d, uint32_t k) {
    const berth_operand *o = &d->operands[k];
    int ok = 1;
    int64_t n = 1;
    for (uint32_t r = 0; r < o->rank; r++) n = berth_mul_checked(n, o->dims[r], &ok);
    size_t bytes = berth_dtype_bytes(o->dtype, (uint64_t)n, &ok);
    return ok ? bytes : UINT64_MAX;
}

/* Call fn(ctx, k) for every operand node nd reads: its inputs and the
 * operands given as options. */
static void each_read(const berth_node *nd, void (*fn)(void *ctx, uint32_t k), void *ctx) {
    for (uint32_t j = 0; j < nd->n_inputs; j++) fn(ctx, nd->inputs[j]);
    for (uint32_t a = 0; a < nd->n_attrs; a++) {
        const berth_attr *at = &nd->attrs[a];
        if (at->type == BERTH_ATTR_OPERAND) fn(ctx, (uint32_t)at->i);
        else if (at->type == BERTH_ATTR_OPERANDS)
            for (size_t j = 0; j < at->count; j++) fn(ctx, (uint32_t)at->ints[j]);
    }
}

typedef struct builder {
    const berth_graph_desc *d;
    berth_partition *p;
    int32_t *writer;     /* per operand: the node writing it, or -1 */
    uint32_t *group_of;  /* per node: its subgraph */
    uint32_t *backend;   /* per node */
    /* successors: readers of node i are succ[succ_at[i] .. succ_at[i+1]) */
    uint32_t *succ_at, *succ, *indeg;
    uint32_t cur;        /* the node whose reads are being visited */
    uint32_t *list;      /* scratch list of operands */
    uint8_t *mark;       /* per operand: already in list */
    uint32_t n_list;
    /* With a cost model: n_backends x nodes, each node's estimate on each
     * backend that runs it, asked once and read by the merges and by
     * each subgraph's share. */
    double *node_ns;
} builder;

static void count_edge(void *ctx, uint32_t k) {
    builder *b = ctx;
    int32_t w = b->writer[k];
    if (w >= 0) b->succ_at[w + 1]++, b->indeg[b->cur]++;
}

static void add_edge(void *ctx, uint32_t k) {
    builder *b = ctx;
    int32_t w = b->writer[k];
    if (w >= 0) b->succ[b->succ_at[w]++] = b->cur;
}

/* A topological order that stays on one backend while a node of it is
 * ready, taking the lowest-numbered such node (graph order breaks ties,
 * so the order is deterministic). O(nodes^2) in the worst case: graphs
 * have thousands of nodes, and this runs once per bucket. */
static void schedule(builder *b, uint32_t *order) {
    uint32_t nn = b->d->n_nodes, done = 0;
    uint8_t *ready = (uint8_t *)b->mark; /* borrowed: nn <= scratch size */
    memset(ready, 0, nn);
    for (uint32_t i = 0; i < nn; i++) ready[i] = b->indeg[i] == 0;
    uint32_t cur = UINT32_MAX;
    while (done < nn) {
        uint32_t pick = UINT32_MAX, first = UINT32_MAX;
        for (uint32_t i = 0; i < nn && pick == UINT32_MAX; i++) {
            if (ready[i] != 1) continue;
            if (first == UINT32_MAX) first = i;
            if (b->backend[i] == cur) pick = i;
        }
        if (pick == UINT32_MAX) pick = first; /* nothing ready here: switch */
        cur = b->backend[pick];
        ready[pick] = 2;
        order[done++] = pick;
        /* succ_at was advanced past each node's list while filling it:
         * node i's successors now end at succ_at[i]. */
        uint32_t begin = pick ? b->succ_at[pick - 1] : 0;
        for (uint32_t s = begin; s < b->succ_at[pick]; s++)
            if (--b->indeg[b->succ[s]] == 0) ready[b->succ[s]] = 1;
    }
    memset(ready, 0, nn);
}

static void list_add(builder *b, uint32_t k) {
    if (b->mark[k]) return;
    b->mark[k] = 1;
    b->list[b->n_list++] = k;
}

static void note_read(void *ctx, uint32_t k) {
    builder *b = ctx;
    const berth_operand *o = &b->d->operands[k];
    uint32_t g = b->group_of[b->cur];
    if (o->kind == BERTH_OPERAND_WEIGHT) b->p->reads_weight[(size_t)b->p->subgraphs[g].backend * b->d->n_operands + k] = 1;
    int32_t w = b->writer[k];
    if (o->kind == BERTH_OPERAND_INPUT || (w >= 0 && b->group_of[w] != g)) list_add(b, k);
    if (w >= 0 && b->group_of[w] != g) b->p->crosses[k] = 1;
}

static berth_status take_list(builder *b, uint32_t **out, uint32_t *n) {
    *n = b->n_list;
    *out = malloc(sizeof **out * (b->n_list ? b->n_list : 1));
    for (uint32_t j = 0; j < b->n_list; j++) b->mark[b->list[j]] = 0;
    if (*out) memcpy(*out, b->list, sizeof **out * b->n_list);
    b->n_list = 0;
    return *out ? BERTH_OK : BERTH_ERR_NOMEM;
}

/* Subgraph g's inputs and outputs, and its backend's weights. */
static berth_status edges(builder *b, uint32_t g, const uint8_t *is_output) {
    const berth_graph_desc *d = b->d;
    berth_subgraph *sg = &b->p->subgraphs[g];
    for (uint32_t j = 0; j < sg->n_nodes; j++) {
        b->cur = sg->nodes[j];
        each_read(&d->nodes[b->cur], note_read, b);
    }
    int last = g + 1 == b->p->n_subgraphs;
    if (last) /* graph outputs passed through: an input of the last subgraph */
        for (uint32_t j = 0; j < d->n_outputs; j++) {
            uint32_t k = d->outputs[j];
            if (b->writer[k] >= 0) continue;
            if (d->operands[k].kind == BERTH_OPERAND_INPUT) list_add(b, k);
            if (d->operands[k].kind == BERTH_OPERAND_WEIGHT)
                b->p->reads_weight[(size_t)sg->backend * d->n_operands + k] = 1;
        }
    if (take_list(b, &sg->in, &sg->n_in) != BERTH_OK) return BERTH_ERR_NOMEM;
    for (uint32_t j = 0; j < sg->n_nodes; j++) {
        const berth_node *nd = &d->nodes[sg->nodes[j]];
        for (uint32_t o = 0; o < nd->n_outputs; o++)
            if (b->p->crosses[nd->outputs[o]] || is_output[nd->outputs[o]]) list_add(b, nd->outputs[o]);
    }
    if (last)
        for (uint32_t j = 0; j < d->n_outputs; j++)
            if (b->writer[d->outputs[j]] < 0) list_add(b, d->outputs[j]);
    return take_list(b, &sg->out, &sg->n_out);
}

/* split = on's cost model over one schedule: the runs of one backend in
 * `order`, and what moving one of them to a neighbour's backend would
 * change in the estimate. */
typedef struct coster {
    builder *b;
    const berth_part_costs *c;
    const uint8_t *sup;      /* n_backends x nn */
    const uint32_t *order;
    uint32_t *rd_at, *rd;    /* readers of each operand (CSR) */
    uint32_t *run_of;        /* per node: its run in order */
    uint32_t *run_start;     /* per run, and one past the last */
    uint32_t n_runs;
    uint8_t *tmark;
    /* The move being weighed: run `r` to backend `t`, joining the run
     * before it and/or after it when they are on t. */
    int moving, join_prev, join_next;
    uint32_t r, t;
} coster;

static uint32_t run_backend(const coster *co, uint32_t run) {
    return co->b->backend[co->order[co->run_start[run]]];
}

static void find_runs(coster *co) {
    uint32_t nn = co->b->d->n_nodes;
    co->n_runs = 0;
    for (uint32_t j = 0; j < nn; j++) {
        if (!j || co->b->backend[co->order[j]] != co->b->backend[co->order[j - 1]])
            co->run_start[co->n_runs++] = j;
        co->run_of[co->order[j]] = co->n_runs - 1;
    }
    co->run_start[co->n_runs] = nn;
}

/* The run node i is in, and that run's backend, with the move applied. */
static uint32_t canon_run(const coster *co, uint32_t i, uint32_t *backend) {
    uint32_t run = co->run_of[i];
    if (co->moving && (run == co->r || (co->join_prev && run + 1 == co->r) || (co->join_next && run == co->r + 1))) {
        *backend = co->t;
        return co->r;
    }
    *backend = run_backend(co, run);
    return run;
}

/* What tensor k costs crossing: copied out of its writer's subgraph
 * once, and into each other subgraph that reads it. */
static double tensor_ns(const coster *co, uint32_t k) {
    int32_t w = co->b->writer[k];
    if (w < 0) return 0; /* an input, weight or constant: no subgraph writes it */
    uint32_t seen[32], n_seen = 0, wb, rb;
    uint32_t wr = canon_run(co, (uint32_t)w, &wb);
    double bytes = (double)berth_operand_bytes(co->b->d, k), ns = 0;
    for (uint32_t j = co->rd_at[k]; j < co->rd_at[k + 1]; j++) {
        uint32_t rr = canon_run(co, co->rd[j], &rb), s = 0;
        if (rr == wr) continue;
        while (s < n_seen && seen[s] != rr) s++;
        if (s < n_seen) continue;
        if (n_seen < 32) seen[n_seen++] = rr; /* past 32 readers a subgraph may be counted twice */
        ns += bytes * co->c->crossing_ns_per_byte[rb];
    }
    return ns ? ns + bytes * co->c->crossing_ns_per_byte[wb] : 0;
}

/* The estimate of the whole schedule: nodes, subgraph starts, crossings. */
static double schedule_ns(coster *co) {
    const berth_graph_desc *d = co->b->d;
    double ns = 0;
    co->moving = 0;
    for (uint32_t i = 0; i < d->n_nodes; i++) ns += co->b->node_ns[(size_t)co->b->backend[i] * d->n_nodes + i];
    for (uint32_t r = 0; r < co->n_runs; r++) ns += co->c->region_ns[run_backend(co, r)];
    for (uint32_t k = 0; k < d->n_operands; k++) ns += tensor_ns(co, k);
    return ns;
}

static void touch(void *ctx, uint32_t k) {
    coster *co = ctx;
    if (co->tmark[k]) return;
    co->tmark[k] = 1;
    co->b->list[co->b->n_list++] = k;
}

/* How the estimate changes when run r moves to backend t (t runs all
 * of it and is the backend of a run beside it). */
static double move_ns(coster *co, uint32_t r, uint32_t t) {
    const berth_graph_desc *d = co->b->d;
    uint32_t nn = d->n_nodes, cur = run_backend(co, r);
    double delta = 0;
    for (uint32_t j = co->run_start[r]; j < co->run_start[r + 1]; j++) {
        uint32_t i = co->order[j];
        delta += co->b->node_ns[(size_t)t * nn + i] - co->b->node_ns[(size_t)cur * nn + i];
    }
    int prev = r > 0 && run_backend(co, r - 1) == t, next = r + 1 < co->n_runs && run_backend(co, r + 1) == t;
    delta += co->c->region_ns[t] * (1 - prev - next) - co->c->region_ns[cur];
    /* Only tensors the joined runs write or read can change. */
    uint32_t lo = prev ? r - 1 : r, hi = next ? r + 1 : r;
    co->b->n_list = 0;
    for (uint32_t j = co->run_start[lo]; j < co->run_start[hi + 1]; j++) {
        const berth_node *nd = &d->nodes[co->order[j]];
        each_read(nd, touch, co);
        for (uint32_t o = 0; o < nd->n_outputs; o++) touch(co, nd->outputs[o]);
    }
    for (uint32_t n = 0; n < co->b->n_list; n++) {
        uint32_t k = co->b->list[n];
        co->moving = 0;
        double before = tensor_ns(co, k);
        co->moving = 1, co->r = r, co->t = t, co->join_prev = prev, co->join_next = next;
        delta += tensor_ns(co, k) - before;
        co->tmark[k] = 0;
    }
    co->moving = 0;
    co->b->n_list = 0;
    return delta;
}

static int runs_all(const coster *co, uint32_t r, uint32_t t) {
    uint32_t nn = co->b->d->n_nodes;
    for (uint32_t j = co->run_start[r]; j < co->run_start[r + 1]; j++)
        if (!co->sup[(size_t)t * nn + co->order[j]]) return 0;
    return 1;
}

/* One pass over the runs: each moves to the neighbour's backend that
 * lowers the estimate most, if one does. Returns the moves made. */
static uint32_t merge_pass(coster *co, berth_partition *p) {
    uint32_t moves = 0;
    for (uint32_t r = 0; r < co->n_runs; r++) {
        uint32_t cur = run_backend(co, r), best_t = cur;
        double best = -1.0; /* a move must save at least a nanosecond: ties stay */
        for (int side = 0; side < 2; side++) {
            if ((side == 0 && r == 0) || (side == 1 && r + 1 >= co->n_runs)) continue;
            uint32_t t = run_backend(co, side ? r + 1 : r - 1);
            if (t == cur || !runs_all(co, r, t)) continue;
            double delta = move_ns(co, r, t);
            if (delta < best) best = delta, best_t = t;
        }
        if (best_t == cur) continue;
        p->moved_runs++;
        p->moved_nodes += co->run_start[r + 1] - co->run_start[r];
        for (uint32_t j = co->run_start[r]; j < co->run_start[r + 1]; j++) co->b->backend[co->order[j]] = best_t;
        int prev = r > 0 && run_backend(co, r - 1) == best_t;
        find_runs(co);
        r = prev ? r - 1 : r; /* the joined run is weighed again, against its new neighbours */
        r--;                  /* (the loop's r++ comes first) */
        moves++;
    }
    return moves;
}

static void count_indeg(void *ctx, uint32_t k) {
    builder *b = ctx;
    if (b->writer[k] >= 0) b->indeg[b->cur]++;
}

static void add_reader(void *ctx, uint32_t k) {
    coster *co = ctx;
    co->rd[co->rd_at[k]++] = co->b->cur;
}

static void count_reader(void *ctx, uint32_t k) {
    coster *co = ctx;
    co->rd_at[k + 1]++;
}

/* Moves runs by the cost model until a pass makes none (each move
 * lowers the estimate, so this ends), scheduling again after each pass
 * since moved nodes may now run together with others of their backend. */
static berth_status merge_by_cost(builder *b, const berth_part_costs *c, const uint8_t *sup, uint32_t *order,
                                  uint32_t n_backends) {
    const berth_graph_desc *d = b->d;
    uint32_t nn = d->n_nodes, no = d->n_operands;
    coster co = {b, c, sup, order, NULL, NULL, NULL, NULL, 0, NULL, 0, 0, 0, 0, 0};
    b->node_ns = calloc((size_t)n_backends * nn + 1, sizeof *b->node_ns);
    co.rd_at = calloc(no + 2, sizeof *co.rd_at);
    co.run_of = malloc(sizeof *co.run_of * (nn + 1));
    co.run_start = malloc(sizeof *co.run_start * (nn + 2));
    co.tmark = calloc(no + 1, 1);
    berth_status st = BERTH_ERR_NOMEM;
    if (!b->node_ns || !co.rd_at || !co.run_of || !co.run_start || !co.tmark) goto done;
    for (uint32_t k = 0; k < n_backends; k++)
        for (uint32_t i = 0; i < nn; i++)
            if (sup[(size_t)k * nn + i]) b->node_ns[(size_t)k * nn + i] = c->node_ns(c->ctx, k, d, i);
    for (b->cur = 0; b->cur < nn; b->cur++) each_read(&d->nodes[b->cur], count_reader, &co);
    for (uint32_t k = 0; k < no; k++) co.rd_at[k + 1] += co.rd_at[k];
    co.rd = malloc(sizeof *co.rd * (co.rd_at[no] + 1));
    if (!co.rd) goto done;
    for (b->cur = 0; b->cur < nn; b->cur++) each_read(&d->nodes[b->cur], add_reader, &co);
    for (uint32_t k = no; k > 0; k--) co.rd_at[k] = co.rd_at[k - 1]; /* filling advanced each start */
    co.rd_at[0] = 0;

    find_runs(&co);
    b->p->first_subgraphs = nn ? co.n_runs : 1;
    b->p->first_ns = schedule_ns(&co);
    for (int pass = 0; pass < 16 && merge_pass(&co, b->p); pass++) {
        memset(b->indeg, 0, sizeof *b->indeg * nn);
        for (b->cur = 0; b->cur < nn; b->cur++) each_read(&d->nodes[b->cur], count_indeg, b);
        schedule(b, order);
        find_runs(&co);
    }
    st = BERTH_OK;
done:
    free(co.rd_at);
    free(co.rd);
    free(co.run_of);
    free(co.run_start);
    free(co.tmark);
    return st;
}

/* Each subgraph's share of the estimate, and their sum (its nodes'
 * estimates are those merge_by_cost asked for). */
static void subgraph_costs(builder *b, const berth_part_costs *c) {
    berth_partition *p = b->p;
    const berth_graph_desc *d = b->d;
    p->est_ns = 0;
    for (uint32_t g = 0; g < p->n_subgraphs; g++) {
        berth_subgraph *sg = &p->subgraphs[g];
        double xpb = c->crossing_ns_per_byte[sg->backend];
        sg->node_ns = 0;
        for (uint32_t j = 0; j < sg->n_nodes; j++)
            sg->node_ns += b->node_ns[(size_t)sg->backend * d->n_nodes + sg->nodes[j]];
        sg->overhead_ns = c->region_ns[sg->backend];
        for (uint32_t j = 0; j < sg->n_in; j++)
            if (p->crosses[sg->in[j]]) sg->overhead_ns += xpb * (double)berth_operand_bytes(d, sg->in[j]);
        for (uint32_t j = 0; j < sg->n_out; j++)
            if (p->crosses[sg->out[j]]) sg->overhead_ns += xpb * (double)berth_operand_bytes(d, sg->out[j]);
        p->est_ns += sg->node_ns + sg->overhead_ns;
    }
}

/* Who runs what: every backend is asked about every node (the smoothing
 * and the cost model need to know who else could take one), and each
 * node goes to the first that runs it. */
static berth_status assign_first(builder *b, uint32_t n_backends, berth_part_supports_fn supports, void *ctx,
                                 uint8_t *sup, uint32_t *failed_node, berth_error *err) {
    const berth_graph_desc *d = b->d;
    uint32_t nn = d->n_nodes;
    for (uint32_t i = 0; i < nn; i++) {
        b->backend[i] = UINT32_MAX;
        for (uint32_t k = 0; k < n_backends; k++) {
            sup[(size_t)k * nn + i] = supports(ctx, k, d, i) != 0;
            if (sup[(size_t)k * nn + i] && b->backend[i] == UINT32_MAX) b->backend[i] = k;
        }
        if (b->backend[i] == UINT32_MAX) {
            if (failed_node) *failed_node = i;
            berth_errorf(err, "node '%s' (op %s): no backend of use runs it", d->nodes[i].name, d->nodes[i].op);
            return BERTH_ERR_UNSUPPORTED;
        }
    }
    return BERTH_OK;
}

/* Each operand's writer, and each node's successors (counted, then
 * filled: CSR). */
static berth_status link_nodes(builder *b) {
    const berth_graph_desc *d = b->d;
    uint32_t nn = d->n_nodes;
    for (uint32_t k = 0; k < d->n_operands; k++) b->writer[k] = -1;
    for (uint32_t i = 0; i < nn; i++)
        for (uint32_t j = 0; j < d->nodes[i].n_outputs; j++) b->writer[d->nodes[i].outputs[j]] = (int32_t)i;
    for (b->cur = 0; b->cur < nn; b->cur++) each_read(&d->nodes[b->cur], count_edge, b);
    for (uint32_t i = 0; i < nn; i++) b->succ_at[i + 1] += b->succ_at[i];
    b->succ = malloc(sizeof *b->succ * (b->succ_at[nn] + 1));
    if (!b->succ) return BERTH_ERR_NOMEM;
    for (b->cur = 0; b->cur < nn; b->cur++) each_read(&d->nodes[b->cur], add_edge, b);
    return BERTH_OK;
}

/* A run of one node between two runs of a backend that also takes it
 * joins them: one node rarely pays for two crossings. */
static void smooth_lone_nodes(builder *b, const uint32_t *order, const uint8_t *sup) {
    uint32_t nn = b->d->n_nodes;
    uint32_t *run_start = b->list, n_runs = 0; /* borrowed scratch */
    for (uint32_t j = 0; j < nn; j++)
        if (!j || b->backend[order[j]] != b->backend[order[j - 1]]) run_start[n_runs++] = j;
    for (uint32_t r = 1; r + 1 < n_runs; r++) {
        uint32_t node = order[run_start[r]];
        uint32_t prev = b->backend[order[run_start[r - 1]]], next = b->backend[order[run_start[r + 1]]];
        if (run_start[r + 1] - run_start[r] == 1 && prev == next && sup[(size_t)prev * nn + node])
            b->backend[node] = prev;
    }
}

/* Runs of one backend in `order` are the subgraphs, each with its own
 * copy of its node list. */
static berth_status cut_runs(builder *b, uint32_t *order) {
    berth_partition *p = b->p;
    uint32_t nn = b->d->n_nodes;
    for (uint32_t j = 0; j < nn; j++) {
        uint32_t i = order[j];
        if (!p->n_subgraphs || p->subgraphs[p->n_subgraphs - 1].backend != b->backend[i]) {
            berth_subgraph *sg = &p->subgraphs[p->n_subgraphs++];
            sg->backend = b->backend[i];
            sg->nodes = order + j; /* a view until copied below */
        }
        p->subgraphs[p->n_subgraphs - 1].n_nodes++;
        b->group_of[i] = p->n_subgraphs - 1;
    }
    if (!nn) p->n_subgraphs = 1; /* a graph of no node: its outputs pass through */
    for (uint32_t g = 0; g < p->n_subgraphs; g++) {
        berth_subgraph *sg = &p->subgraphs[g];
        uint32_t *own = malloc(sizeof *own * (sg->n_nodes + 1));
        if (!own) {
            for (uint32_t h = g; h < p->n_subgraphs; h++) p->subgraphs[h].nodes = NULL;
            return BERTH_ERR_NOMEM;
        }
        if (sg->n_nodes) memcpy(own, sg->nodes, sizeof *own * sg->n_nodes);
        sg->nodes = own;
    }
    return BERTH_OK;
}

/* The tensors crossing between subgraphs (complete only once every
 * subgraph's reads are seen), then each subgraph's edges, and the sum. */
static berth_status find_crossings(builder *b, const uint8_t *is_output, size_t scratch) {
    berth_partition *p = b->p;
    const berth_graph_desc *d = b->d;
    memset(b->mark, 0, scratch);
    for (uint32_t g = 0; g < p->n_subgraphs; g++)
        for (uint32_t j = 0; j < p->subgraphs[g].n_nodes; j++) {
            b->cur = p->subgraphs[g].nodes[j];
            each_read(&d->nodes[b->cur], note_read, b);
            for (uint32_t k = 0; k < b->n_list; k++) b->mark[b->list[k]] = 0;
            b->n_list = 0;
        }
    for (uint32_t g = 0; g < p->n_subgraphs; g++)
        if (edges(b, g, is_output) != BERTH_OK) return BERTH_ERR_NOMEM;
    for (uint32_t k = 0; k < d->n_operands; k++) {
        if (!p->crosses[k]) continue;
        uint64_t bytes = berth_operand_bytes(d, k);
        p->n_crossing++;
        p->crossing_bytes = bytes > UINT64_MAX - p->crossing_bytes ? UINT64_MAX : p->crossing_bytes + bytes;
    }
    return BERTH_OK;
}

berth_status berth_partition_build(const berth_graph_desc *d, uint32_t n_backends,
                                   berth_part_supports_fn supports, void *ctx, const berth_part_costs *costs,
                                   berth_partition *p, uint32_t *failed_node, berth_error *err) {
    memset(p, 0, sizeof *p);
    uint32_t nn = d->n_nodes, no = d->n_operands;
    size_t scratch = (size_t)(nn > no ? nn : no) + 1;
    builder b = {d, p, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL};
    p->n_operands = no;
    p->n_backends = n_backends;
    p->reads_weight = calloc((size_t)n_backends * no + 1, 1);
    p->crosses = calloc(no + 1, 1);
    p->subgraphs = calloc(nn + 1, sizeof *p->subgraphs);
    b.writer = malloc(sizeof *b.writer * (no + 1));
    b.group_of = calloc(nn + 1, sizeof *b.group_of);
    b.backend = calloc(nn + 1, sizeof *b.backend);
    b.succ_at = calloc(nn + 2, sizeof *b.succ_at);
    b.indeg = calloc(nn + 1, sizeof *b.indeg);
    b.list = malloc(sizeof *b.list * scratch);
    b.mark = calloc(scratch, 1);
    uint32_t *order = malloc(sizeof *order * (nn + 1));
    uint8_t *sup = calloc((size_t)n_backends * nn + 1, 1);
    uint8_t *is_output = calloc(no + 1, 1);
    berth_status st = BERTH_ERR_NOMEM;
    if (!p->reads_weight || !p->crosses || !p->subgraphs || !b.writer || !b.group_of || !b.backend ||
        !b.succ_at || !b.indeg || !b.list || !b.mark || !order || !sup || !is_output)
        goto fail;
    for (uint32_t j = 0; j < d->n_outputs; j++) is_output[d->outputs[j]] = 1;
    if ((st = assign_first(&b, n_backends, supports, ctx, sup, failed_node, err)) != BERTH_OK) goto fail;
    st = BERTH_ERR_NOMEM;
    if (link_nodes(&b) != BERTH_OK) goto fail;
    schedule(&b, order);
    smooth_lone_nodes(&b, order, sup);
    if (costs && merge_by_cost(&b, costs, sup, order, n_backends) != BERTH_OK) goto fail;
    if (cut_runs(&b, order) != BERTH_OK || find_crossings(&b, is_output, scratch) != BERTH_OK) goto fail;
    if (costs) subgraph_costs(&b, costs);
    st = BERTH_OK;
fail:
    if (st == BERTH_ERR_NOMEM) berth_errorf(err, "out of memory partitioning a graph of %u nodes", nn);
    if (st != BERTH_OK) berth_partition_free(p);
    free(b.writer);
    free(b.group_of);
    free(b.backend);
    free(b.succ_at);
    free(b.succ);
    free(b.indeg);
    free(b.list);
    free(b.mark);
    free(b.node_ns);
    free(order);
    free(sup);
    free(is_output);
    return st;
}

void berth_partition_free(berth_partition *p) {
    if (p->subgraphs)
        for (uint32_t s = 0; s < p->n_subgraphs; s++) {
            free(p->subgraphs[s].nodes);
            free(p->subgraphs[s].in);
            free(p->subgraphs[s].out);
        }
    free(p->subgraphs);
    free(p->reads_weight);
    free(p->crosses);
    memset(p, 0, sizeof *p);
}

/* Operand k of d, renumbered into the subgraph's own list on first use. */
typedef struct cutter {
    const berth_graph_desc *d;
    const uint32_t *weight_id;
    uint32_t *map; /* per operand of d: index in the subgraph, or UINT32_MAX */
    berth_operand *ops;
    uint32_t n_ops;
} cutter;

static uint32_t cut_operand(cutter *c, uint32_t k, int as_input) {
    if (c->map[k] != UINT32_MAX) return c->map[k];
    berth_operand *o = &c->ops[c->n_ops];
    *o = c->d->operands[k];
    if (as_input) {
        o->kind = BERTH_OPERAND_INPUT;
        o->data = NULL;
        o->bytes = 0;
    } else if (o->kind == BERTH_OPERAND_WEIGHT) {
        o->weight = c->weight_id[o->weight];
    }
    return c->map[k] = c->n_ops++;
}

berth_status berth_subgraph_desc(const berth_graph_desc *d, const berth_subgraph *sg,
                                 const uint32_t *weight_id, berth_arena *arena,
                                 berth_graph_desc *out, berth_error *err) {
    cutter c = {d, weight_id, berth_arena_array(arena, d->n_operands + 1, sizeof(uint32_t)),
                berth_arena_array(arena, d->n_operands + 1, sizeof(berth_operand)), 0};
    berth_node *nodes = berth_arena_array(arena, sg->n_nodes + 1, sizeof *nodes);
    uint32_t *ins = berth_arena_array(arena, sg->n_in + 1, sizeof *ins);
    uint32_t *outs = berth_arena_array(arena, sg->n_out + 1, sizeof *outs);
    if (!c.map || !c.ops || !nodes || !ins || !outs) goto nomem;
    for (uint32_t k = 0; k < d->n_operands; k++) c.map[k] = UINT32_MAX;
    /* A tensor another subgraph (or the caller) provides is an input
     * here, whatever it was in the whole graph. */
    for (uint32_t j = 0; j < sg->n_in; j++) ins[j] = cut_operand(&c, sg->in[j], 1);
    for (uint32_t j = 0; j < sg->n_nodes; j++) {
        const berth_node *src = &d->nodes[sg->nodes[j]];
        berth_node *nd = &nodes[j];
        *nd = *src;
        uint32_t *in = berth_arena_array(arena, src->n_inputs + 1, sizeof *in);
        uint32_t *o = berth_arena_array(arena, src->n_outputs + 1, sizeof *o);
        berth_attr *at = berth_arena_array(arena, src->n_attrs + 1, sizeof *at);
        if (!in || !o || !at) goto nomem;
        for (uint32_t k = 0; k < src->n_inputs; k++) in[k] = cut_operand(&c, src->inputs[k], 0);
        for (uint32_t a = 0; a < src->n_attrs; a++) {
            at[a] = src->attrs[a];
            if (at[a].type == BERTH_ATTR_OPERAND) {
                at[a].i = cut_operand(&c, (uint32_t)at[a].i, 0);
            } else if (at[a].type == BERTH_ATTR_OPERANDS) {
                int64_t *ix = berth_arena_array(arena, at[a].count + 1, sizeof *ix);
                if (!ix) goto nomem;
                for (size_t k = 0; k < at[a].count; k++) ix[k] = cut_operand(&c, (uint32_t)at[a].ints[k], 0);
                at[a].ints = ix;
            }
        }
        for (uint32_t k = 0; k < src->n_outputs; k++) o[k] = cut_operand(&c, src->outputs[k], 0);
        nd->inputs = in;
        nd->outputs = o;
        nd->attrs = at;
    }
    for (uint32_t j = 0; j < sg->n_out; j++) outs[j] = cut_operand(&c, sg->out[j], 0);
    *out = *d;
    out->n_operands = c.n_ops;
    out->operands = c.ops;
    out->n_nodes = sg->n_nodes;
    out->nodes = nodes;
    out->n_inputs = sg->n_in;
    out->inputs = ins;
    out->n_outputs = sg->n_out;
    out->outputs = outs;
    return BERTH_OK;
nomem:
    berth_errorf(err, "out of memory cutting a subgraph of %u nodes", sg->n_nodes);
    return BERTH_ERR_NOMEM;
}
