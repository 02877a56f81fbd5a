/* split's partitioner on its own: the first graph of the README with
 * a backend that runs only matmul and add ahead of one that runs all;
 * branches grouped by backend; a lone node joining its neighbours; a
 * subgraph cut out as a graph of its own; runs of nodes moved by the
 * cost model, or kept where it says they pay. */
#include <string.h>

#include "arena.h"
#include "check.h"
#include "partition.h"

enum { X, W1, B1, W2, B2, H0, H1, H, Y0, Y, N_OPERANDS };

static berth_operand operands[N_OPERANDS];
static const uint32_t in_h0[] = {X, W1}, in_h1[] = {H0, B1}, in_h[] = {H1}, in_y0[] = {H, W2},
                      in_y[] = {Y0, B2};
static const uint32_t out_h0[] = {H0}, out_h1[] = {H1}, out_h[] = {H}, out_y0[] = {Y0}, out_y[] = {Y};
static const berth_node nodes[] = {
    {"matmul", "h0", 2, in_h0, 1, out_h0, 0, NULL}, {"add", "h1", 2, in_h1, 1, out_h1, 0, NULL},
    {"relu", "h", 1, in_h, 1, out_h, 0, NULL},      {"matmul", "y0", 2, in_y0, 1, out_y0, 0, NULL},
    {"add", "y", 2, in_y, 1, out_y, 0, NULL},
};
static const uint32_t graph_in[] = {X}, graph_out[] = {Y};

static void set(int k, const char *name, berth_operand_kind kind, uint32_t rank, int64_t d0, int64_t d1) {
    operands[k].name = name;
    operands[k].kind = kind;
    operands[k].dtype = BERTH_DTYPE_F32;
    operands[k].rank = rank;
    operands[k].dims[0] = d0;
    operands[k].dims[1] = d1;
    operands[k].weight = (uint32_t)k; /* weights are known by their operand index here */
}

static berth_graph_desc first_graph(void) {
    set(X, "x", BERTH_OPERAND_INPUT, 2, 1, 4);
    set(W1, "w1", BERTH_OPERAND_WEIGHT, 2, 4, 8);
    set(B1, "b1", BERTH_OPERAND_WEIGHT, 1, 8, 0);
    set(W2, "w2", BERTH_OPERAND_WEIGHT, 2, 8, 3);
    set(B2, "b2", BERTH_OPERAND_WEIGHT, 1, 3, 0);
    set(H0, "h0", BERTH_OPERAND_VALUE, 2, 1, 8);
    set(H1, "h1", BERTH_OPERAND_VALUE, 2, 1, 8);
    set(H, "h", BERTH_OPERAND_VALUE, 2, 1, 8);
    set(Y0, "y0", BERTH_OPERAND_VALUE, 2, 1, 3);
    set(Y, "y", BERTH_OPERAND_VALUE, 2, 1, 3);
    berth_graph_desc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.n_operands = N_OPERANDS;
    d.operands = operands;
    d.n_nodes = 5;
    d.nodes = nodes;
    d.n_inputs = 1;
    d.inputs = graph_in;
    d.n_outputs = 1;
    d.outputs = graph_out;
    return d;
}

/* Backend 0 runs matmul and add, backend 1 everything, backend 2 nothing. */
static int supports(void *ctx, uint32_t b, const berth_graph_desc *d, uint32_t i) {
    (void)ctx;
    const char *op = d->nodes[i].op;
    if (b == 0) return !strcmp(op, "matmul") || !strcmp(op, "add");
    return b == 1;
}

static int all(void *ctx, uint32_t b, const berth_graph_desc *d, uint32_t i) {
    (void)ctx, (void)b, (void)d, (void)i;
    return 1;
}

static int none_but_first(void *ctx, uint32_t b, const berth_graph_desc *d, uint32_t i) {
    (void)ctx;
    return b == 0 && supports(ctx, 0, d, i);
}

static void test_first_graph_split(void) {
    berth_graph_desc d = first_graph();
    berth_partition p;
    berth_error err;
    CHECK(berth_partition_build(&d, 2, supports, NULL, NULL, &p, NULL, &err) == BERTH_OK);
    CHECK(p.n_subgraphs == 3);
    if (p.n_subgraphs != 3) return;
    const berth_subgraph *s = p.subgraphs;
    CHECK(s[0].backend == 0 && s[0].n_nodes == 2 && s[0].nodes[0] == 0 && s[0].nodes[1] == 1);
    CHECK(s[1].backend == 1 && s[1].n_nodes == 1 && s[1].nodes[0] == 2);
    CHECK(s[2].backend == 0 && s[2].n_nodes == 2 && s[2].nodes[0] == 3 && s[2].nodes[1] == 4);
    CHECK(s[0].n_in == 1 && s[0].in[0] == X && s[0].n_out == 1 && s[0].out[0] == H1);
    CHECK(s[1].n_in == 1 && s[1].in[0] == H1 && s[1].n_out == 1 && s[1].out[0] == H);
    CHECK(s[2].n_in == 1 && s[2].in[0] == H && s[2].n_out == 1 && s[2].out[0] == Y);
    /* the matmul/add backend reads every weight, the other none */
    for (int k = W1; k <= B2; k++) {
        CHECK(p.reads_weight[k] == 1);
        CHECK(p.reads_weight[N_OPERANDS + k] == 0);
    }
    CHECK(p.n_crossing == 2 && p.crosses[H1] && p.crosses[H] && !p.crosses[Y] && !p.crosses[X]);
    CHECK(p.crossing_bytes == 64); /* h1 and h, f32[1, 8] each */

    /* The middle subgraph cut out: h1 becomes its input, h its output,
     * two operands in all, renumbered from 0. */
    berth_arena *a = berth_arena_new();
    uint32_t ids[N_OPERANDS];
    for (int k = 0; k < N_OPERANDS; k++) ids[k] = 100 + (uint32_t)k;
    berth_graph_desc cut;
    CHECK(a && berth_subgraph_desc(&d, &s[1], ids, a, &cut, &err) == BERTH_OK);
    CHECK(cut.n_operands == 2 && cut.n_nodes == 1 && cut.n_inputs == 1 && cut.n_outputs == 1);
    CHECK(cut.operands[cut.inputs[0]].kind == BERTH_OPERAND_INPUT && !strcmp(cut.operands[cut.inputs[0]].name, "h1"));
    CHECK(cut.nodes[0].inputs[0] == cut.inputs[0] && cut.nodes[0].outputs[0] == cut.outputs[0]);
    /* the last: weights keep their kind with the backend's ids */
    CHECK(berth_subgraph_desc(&d, &s[2], ids, a, &cut, &err) == BERTH_OK);
    CHECK(cut.n_operands == 5 && cut.n_nodes == 2);
    const berth_operand *w2 = &cut.operands[cut.nodes[0].inputs[1]];
    CHECK(w2->kind == BERTH_OPERAND_WEIGHT && !strcmp(w2->name, "w2") && w2->weight == 100 + W2);
    berth_arena_free(a);
    berth_partition_free(&p);

    /* A backend that runs all, listed first: one subgraph, nothing
     * crossing, the graph's input and output its edges. */
    CHECK(berth_partition_build(&d, 1, all, NULL, NULL, &p, NULL, &err) == BERTH_OK);
    CHECK(p.n_subgraphs == 1 && p.subgraphs[0].n_nodes == 5);
    CHECK(p.subgraphs[0].n_in == 1 && p.subgraphs[0].n_out == 1 && p.subgraphs[0].out[0] == Y);
    CHECK(p.n_crossing == 0 && p.crossing_bytes == 0);
    berth_partition_free(&p);
}

static void test_node_no_backend_runs(void) {
    berth_graph_desc d = first_graph();
    berth_partition p;
    berth_error err;
    uint32_t failed = 99;
    CHECK(berth_partition_build(&d, 2, none_but_first, NULL, NULL, &p, &failed, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "node 'h' (op relu): no backend of use runs it");
    CHECK(failed == 2);
    CHECK(p.subgraphs == NULL);
}

/* Two branches written interleaved, a = matmul(x, w1), b = relu(x),
 * c = matmul(a, w1'), d = relu(b), e = add(c, d): in graph order they
 * alternate backends five times; scheduled, each backend's nodes run
 * together: [a c] [b d] [e]. */
enum { BX, BW, BA, BB, BC, BD, BE, B_OPERANDS };
static berth_operand bops[B_OPERANDS];
static const uint32_t ba_in[] = {BX, BW}, bb_in[] = {BX}, bc_in[] = {BA, BW}, bd_in[] = {BB}, be_in[] = {BC, BD};
static const uint32_t ba_out[] = {BA}, bb_out[] = {BB}, bc_out[] = {BC}, bd_out[] = {BD}, be_out[] = {BE};
static const berth_node bnodes[] = {
    {"matmul", "a", 2, ba_in, 1, ba_out, 0, NULL}, {"relu", "b", 1, bb_in, 1, bb_out, 0, NULL},
    {"matmul", "c", 2, bc_in, 1, bc_out, 0, NULL}, {"relu", "d", 1, bd_in, 1, bd_out, 0, NULL},
    {"add", "e", 2, be_in, 1, be_out, 0, NULL},
};
static const uint32_t b_in[] = {BX}, b_out[] = {BE};

static berth_graph_desc branches(void) {
    const char *names[] = {"x", "w", "a", "b", "c", "d", "e"};
    for (int k = 0; k < B_OPERANDS; k++) {
        bops[k].name = names[k];
        bops[k].kind = k == BX ? BERTH_OPERAND_INPUT : k == BW ? BERTH_OPERAND_WEIGHT : BERTH_OPERAND_VALUE;
        bops[k].dtype = BERTH_DTYPE_F32;
        bops[k].rank = 2;
        bops[k].dims[0] = 4;
        bops[k].dims[1] = 4;
    }
    berth_graph_desc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.n_operands = B_OPERANDS;
    d.operands = bops;
    d.n_nodes = 5;
    d.nodes = bnodes;
    d.n_inputs = 1;
    d.inputs = b_in;
    d.n_outputs = 1;
    d.outputs = b_out;
    return d;
}

static void test_branches_grouped(void) {
    berth_graph_desc d = branches();
    berth_partition p;
    berth_error err;
    CHECK(berth_partition_build(&d, 2, supports, NULL, NULL, &p, NULL, &err) == BERTH_OK);
    CHECK(p.n_subgraphs == 3);
    if (p.n_subgraphs != 3) return;
    const berth_subgraph *s = p.subgraphs;
    CHECK(s[0].backend == 0 && s[0].n_nodes == 2 && s[0].nodes[0] == 0 && s[0].nodes[1] == 2);
    CHECK(s[1].backend == 1 && s[1].n_nodes == 2 && s[1].nodes[0] == 1 && s[1].nodes[1] == 3);
    CHECK(s[2].backend == 0 && s[2].n_nodes == 1 && s[2].nodes[0] == 4);
    CHECK(s[2].n_in == 2 && s[2].in[0] == BC && s[2].in[1] == BD);
    CHECK(p.n_crossing == 2 && p.crossing_bytes == 128);
    berth_partition_free(&p);
}

/* relu, add, relu in a chain: the add alone on backend 0 between two
 * runs of backend 1, which runs it too, joins them: one subgraph. With
 * a backend 1 that cannot run add, three. */
static int no_add_on_1(void *ctx, uint32_t b, const berth_graph_desc *d, uint32_t i) {
    (void)ctx;
    const char *op = d->nodes[i].op;
    return b == 0 ? !strcmp(op, "add") : strcmp(op, "add") != 0;
}

static void test_lone_node_joins_neighbours(void) {
    static const uint32_t r1_in[] = {BX}, ad_in[] = {BA, BA}, r2_in[] = {BB};
    static const uint32_t r1_out[] = {BA}, ad_out[] = {BB}, r2_out[] = {BC};
    static const berth_node chain[] = {
        {"relu", "a", 1, r1_in, 1, r1_out, 0, NULL},
        {"add", "b", 2, ad_in, 1, ad_out, 0, NULL},
        {"relu", "c", 1, r2_in, 1, r2_out, 0, NULL},
    };
    static const uint32_t c_out[] = {BC};
    berth_graph_desc d = branches();
    d.n_nodes = 3;
    d.nodes = chain;
    d.outputs = c_out;
    berth_partition p;
    berth_error err;
    CHECK(berth_partition_build(&d, 2, supports, NULL, NULL, &p, NULL, &err) == BERTH_OK);
    CHECK(p.n_subgraphs == 1 && p.subgraphs[0].backend == 1 && p.subgraphs[0].n_nodes == 3);
    CHECK(p.n_crossing == 0);
    berth_partition_free(&p);
    CHECK(berth_partition_build(&d, 2, no_add_on_1, NULL, NULL, &p, NULL, &err) == BERTH_OK);
    CHECK(p.n_subgraphs == 3 && p.n_crossing == 2);
    berth_partition_free(&p);
}


/* The cost model. Every node costs `node` ns on either backend except
 * where `slow_on_1` makes backend 1's matmul far slower; a subgraph start
 * costs 20 us and a crossing byte 0.25 ns on both. */
typedef struct costs_ctx {
    double node, slow_on_1;
    uint32_t asked_unsupported; /* a node's cost asked of a backend that does not run it */
} costs_ctx;

static double node_ns(void *ctx, uint32_t b, const berth_graph_desc *d, uint32_t i) {
    costs_ctx *c = ctx;
    if (!supports(NULL, b, d, i)) c->asked_unsupported++;
    return b == 1 && !strcmp(d->nodes[i].op, "matmul") ? c->node * c->slow_on_1 : c->node;
}

static const double region2[] = {20000, 20000}, xpb2[] = {0.25, 0.25};

static void test_cost_merges_islands(void) {
    berth_graph_desc d = first_graph();
    berth_partition p;
    berth_error err;
    /* Equal node costs: the two runs on backend 0 gain nothing by staying
     * there and cost two crossings and two starts: all of it moves to
     * backend 1, which runs every node. */
    costs_ctx c = {1000, 1, 0};
    berth_part_costs costs = {node_ns, &c, region2, xpb2};
    CHECK(berth_partition_build(&d, 2, supports, NULL, &costs, &p, NULL, &err) == BERTH_OK);
    CHECK(p.n_subgraphs == 1 && p.subgraphs[0].backend == 1 && p.subgraphs[0].n_nodes == 5);
    CHECK(p.first_subgraphs == 3 && p.moved_runs == 2 && p.moved_nodes == 4);
    CHECK(p.n_crossing == 0);
    /* 3 starts and h1, h crossing (32 B each, out and in) before; 1 after */
    CHECK(p.first_ns == 5 * 1000 + 3 * 20000 + 4 * 32 * 0.25);
    CHECK(p.est_ns == 5 * 1000 + 20000);
    CHECK(p.subgraphs[0].node_ns == 5000 && p.subgraphs[0].overhead_ns == 20000);
    CHECK(c.asked_unsupported == 0);
    /* every backend that runs all of it would do: weights follow the nodes */
    for (int k = W1; k <= B2; k++) CHECK(p.reads_weight[k] == 0 && p.reads_weight[N_OPERANDS + k] == 1);
    berth_partition_free(&p);

    /* Backend 1's matmul 1000 times slower: moving a matmul there costs
     * 1 ms against 40 us of starts saved, so the split stays. */
    c.slow_on_1 = 1000;
    CHECK(berth_partition_build(&d, 2, supports, NULL, &costs, &p, NULL, &err) == BERTH_OK);
    CHECK(p.n_subgraphs == 3 && p.first_subgraphs == 3 && p.moved_runs == 0 && p.moved_nodes == 0);
    CHECK(p.est_ns == p.first_ns);
    berth_partition_free(&p);

    /* No cost model: each node on the first backend that runs it. */
    CHECK(berth_partition_build(&d, 2, supports, NULL, NULL, &p, NULL, &err) == BERTH_OK);
    CHECK(p.n_subgraphs == 3 && p.first_subgraphs == 0 && p.est_ns == 0);
    berth_partition_free(&p);
}

/* A block repeated 50 times on a backend that lacks one of its ops: a
 * matmul and an add (backend 0), then a div (backend 1 only), each
 * reading the last. Node by node that is 100 subgraphs; by cost, one. */
enum { N_BLOCKS = 50, CHAIN = 3 * N_BLOCKS };
static berth_operand chain_ops[CHAIN + 1];
static berth_node chain_nodes[CHAIN];
static uint32_t chain_io[2 * CHAIN];

static int lacks_div(void *ctx, uint32_t b, const berth_graph_desc *d, uint32_t i) {
    (void)ctx;
    return b == 1 || strcmp(d->nodes[i].op, "div") != 0;
}

static void test_cost_repeated_block(void) {
    for (uint32_t k = 0; k <= CHAIN; k++) {
        chain_ops[k].name = k ? "v" : "x";
        chain_ops[k].kind = k ? BERTH_OPERAND_VALUE : BERTH_OPERAND_INPUT;
        chain_ops[k].dtype = BERTH_DTYPE_F32;
        chain_ops[k].rank = 2;
        chain_ops[k].dims[0] = 64;
        chain_ops[k].dims[1] = 64;
    }
    for (uint32_t i = 0; i < CHAIN; i++) {
        chain_io[2 * i] = i;
        chain_io[2 * i + 1] = i + 1;
        chain_nodes[i] = (berth_node){i % 3 == 2 ? "div" : i % 3 ? "add" : "matmul", "v", 1, &chain_io[2 * i], 1, &chain_io[2 * i + 1], 0, NULL};
    }
    static const uint32_t in[] = {0}, out[] = {CHAIN};
    berth_graph_desc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.n_operands = CHAIN + 1;
    d.operands = chain_ops;
    d.n_nodes = CHAIN;
    d.nodes = chain_nodes;
    d.n_inputs = 1;
    d.inputs = in;
    d.n_outputs = 1;
    d.outputs = out;
    berth_partition p;
    berth_error err;
    CHECK(berth_partition_build(&d, 2, lacks_div, NULL, NULL, &p, NULL, &err) == BERTH_OK);
    CHECK(p.n_subgraphs == 2 * N_BLOCKS && p.n_crossing == 2 * N_BLOCKS - 1);
    berth_partition_free(&p);
    costs_ctx c = {1000, 1, 0};
    berth_part_costs costs = {node_ns, &c, region2, xpb2};
    CHECK(berth_partition_build(&d, 2, lacks_div, NULL, &costs, &p, NULL, &err) == BERTH_OK);
    CHECK(p.n_subgraphs == 1 && p.subgraphs[0].backend == 1 && p.n_crossing == 0);
    CHECK(p.first_subgraphs == 2 * N_BLOCKS && p.moved_runs == N_BLOCKS && p.moved_nodes == 2 * N_BLOCKS);
    CHECK(p.est_ns < p.first_ns);
    berth_partition_free(&p);
    /* A backend 0 whose matmul is worth more than two crossings and two
     * starts keeps every block's matmul: the split stays as it was. */
    c.slow_on_1 = 100;
    CHECK(berth_partition_build(&d, 2, lacks_div, NULL, &costs, &p, NULL, &err) == BERTH_OK);
    CHECK(p.n_subgraphs == 2 * N_BLOCKS && p.moved_runs == 0);
    berth_partition_free(&p);
}

int main(void) {
    test_cost_merges_islands();
    test_cost_repeated_block();
    test_first_graph_split();
    test_node_no_backend_runs();
    test_branches_grouped();
    test_lone_node_joins_neighbours();
    return check_exit();
}
