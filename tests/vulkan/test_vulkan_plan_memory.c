/* A vulkan plan's memory against cpu's for the same graph: intermediates
 * and scratch are placed by liveness as on cpu, and what fusion removed
 * or no dispatch touches gets no bytes. The one thing a GPU plan holds
 * that cpu's does not is the io buffer the host's inputs and outputs meet
 * the device in (cpu binds the caller's buffers), so a vulkan plan may
 * hold cpu's bytes plus those and a small constant, no more. Plan bytes
 * are deterministic: no timing is asserted. Each graph also runs, and its
 * results are compared with cpu's, so a placement that aliases two live
 * buffers fails here too. Both ways a run's inputs and outputs reach the
 * device are checked: bound in host-visible memory (io = direct, what
 * lavapipe and integrated GPUs get) and copied through staging (io =
 * staged, what discrete GPUs get), where the arena holds them too and
 * staging is the larger of the two transfers. */
#include "vk_harness.h"

#define N (1 << 20) /* 4 MiB of f32 */
#define SLACK (64u << 10)

static int staged; /* the device was opened with io = staged */

static berth_plan_memory kinds; /* the last plan's, from plan_memory */

/* Plans g on m: its bytes, and its kinds into `kinds`, which must add up
 * to them. */
static uint64_t plan_bytes(const mh_module *m, const tgraph *g) {
    berth_graph_desc d = tg_desc(g);
    berth_plan *p = NULL;
    berth_error err = {{0}};
    berth_status st = m->be->plan(m->dev, NULL, &d, &p, &err);
    CHECK(st == BERTH_OK);
    if (st) {
        fprintf(stderr, "  plan on %s: %s\n", m->be->name, err.msg);
        return UINT64_MAX;
    }
    uint64_t b = m->be->plan_bytes(p);
    memset(&kinds, 0, sizeof kinds);
    kinds.struct_size = sizeof kinds;
    CHECK(m->be->abi_version >= BERTH_BACKEND_ABI_V1_2 && m->be->plan_memory);
    if (m->be->plan_memory) CHECK(m->be->plan_memory(p, &kinds, &err) == BERTH_OK);
    CHECK(kinds.intermediates + kinds.scratch + kinds.io + kinds.constants + kinds.records + kinds.other == b);
    m->be->free_plan(p);
    return b;
}

/* Plans g on both modules and holds vulkan's bytes to cpu's + io + slack;
 * then runs it on vulkan and compares with cpu. Returns vulkan's bytes. */
static uint64_t check_plan(const char *what, tgraph *g, uint64_t io_bytes, const float *x) {
    if (staged) io_bytes += io_bytes / 2; /* inputs and outputs in the arena, and the larger in staging */
    uint64_t v = plan_bytes(&vk, g);
    berth_plan_memory vk_kinds = kinds;
#ifdef BERTH_CPU_MODULE
    uint64_t c = plan_bytes(&cpu, g);
    fprintf(stderr, "%s: vulkan plans %llu bytes, cpu %llu, io %llu\n", what, (unsigned long long)v,
            (unsigned long long)c, (unsigned long long)io_bytes);
    CHECK(v <= c + io_bytes + SLACK);
    kinds = vk_kinds;
#else
    fprintf(stderr, "%s: vulkan plans %llu bytes, io %llu\n", what, (unsigned long long)v, (unsigned long long)io_bytes);
    CHECK(v <= io_bytes + SLACK);
#endif
    float *y = calloc(N, sizeof *y);
    if (h_ok(g, (void *const[]){(void *)x}, (void *const[]){y}))
        h_same_as_cpu(what, g, NULL, (void *const[]){(void *)x}, (void *const[]){y});
    free(y);
    return v;
}

/* relu on a 4 MiB input: the plan is the io buffer and nothing else. */
static uint64_t test_relu(const float *x) {
    tgraph g;
    tg_init(&g);
    uint32_t in = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(N));
    uint32_t out = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(N));
    tg_node(&g, "relu", 1, IDX(in), 1, IDX(out), 0, NULL);
    tg_output(&g, out);
    return check_plan("relu", &g, 2ull * N * 4, x);
}

/* Six mul/add with scalar constants and a relu: fused into one dispatch,
 * so the six intermediates are never stored and the plan holds no more
 * than relu alone does, plus the constants. */
static void test_fused_chain(const float *x, uint64_t relu_bytes) {
    static const float k[6] = {0.5f, 0.25f, -2.0f, 1.0f, 3.0f, -0.125f};
    tgraph g;
    tg_init(&g);
    uint32_t cur = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(N));
    static const char *names[6] = {"t0", "t1", "t2", "t3", "t4", "t5"}, *cnames[6] = {"c0", "c1", "c2", "c3", "c4", "c5"};
    for (int i = 0; i < 6; i++) {
        uint32_t c = tg_const(&g, cnames[i], BERTH_DTYPE_F32, 0, NULL, &k[i], sizeof k[i]);
        uint32_t t = tg_value(&g, names[i], BERTH_DTYPE_F32, 1, DIMS(N));
        tg_node(&g, i % 2 ? "add" : "mul", 2, IDX(cur, c), 1, IDX(t), 0, NULL);
        cur = t;
    }
    uint32_t out = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(N));
    tg_node(&g, "relu", 1, IDX(cur), 1, IDX(out), 0, NULL);
    tg_output(&g, out);
    uint64_t v = check_plan("fused chain", &g, 2ull * N * 4, x);
    /* Six constants, each at most one binding alignment of the device. */
    CHECK(v <= relu_bytes + 6 * 4096u);
    /* Bound in place, the input and output are io, and nothing else is
     * stored: no intermediate, no scratch. */
    if (!staged) CHECK(kinds.intermediates == 0 && kinds.scratch == 0 && kinds.io == 2ull * N * 4);
}

/* ABI 1.3's partition costs: the caps' start and crossing costs, and a
 * node estimate that grows with its work. */
static void test_costs(void) {
    berth_error err;
    berth_caps caps = {.struct_size = sizeof caps};
    CHECK(vk.be->abi_version >= BERTH_BACKEND_ABI_V1_3 && vk.be->node_cost);
    CHECK(vk.be->caps(vk.dev, &caps, &err) == BERTH_OK);
    CHECK(caps.region_ns > 0 && caps.crossing_ns_per_byte > 0);
    if (!vk.be->node_cost) return;
    berth_node_cost big = {.struct_size = sizeof big, .flops = 2e9, .bytes = 4e6};
    berth_node_cost small = {.struct_size = sizeof small, .flops = 1e6, .bytes = 4e6};
    CHECK(vk.be->node_cost(vk.dev, NULL, 0, &big, &err) == BERTH_OK && big.node_ns > 0);
    CHECK(vk.be->node_cost(vk.dev, NULL, 0, &small, &err) == BERTH_OK && small.node_ns < big.node_ns);
}

int main(void) {
    h_start();
    test_costs();
    float *x = h_randf(N);
    uint64_t relu = test_relu(x);
    test_fused_chain(x, relu);
    mh_close(&vk);
    mh_host_option(&vk_host, "io", "staged");
    berth_error err;
    CHECK(mh_open(&vk, &err) == BERTH_OK);
    staged = 1;
    relu = test_relu(x);
    test_fused_chain(x, relu);
    free(x);
    h_stop();
    return check_exit();
}
