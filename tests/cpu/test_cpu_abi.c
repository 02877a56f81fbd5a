/* The verbs around the graph: negotiation, options, caps, supports_op,
 * weight upload (given and copied), plan errors naming the node, the
 * liveness arena's size, outputs that are not node results, profiling. */
#include <sched.h>

#include "cpu_harness.h"

static void test_negotiation(void) {
    void *mod = dlopen(BERTH_CPU_MODULE, RTLD_NOW | RTLD_LOCAL);
    CHECK(mod != NULL);
    if (!mod) return;
    berth_backend_entry_fn entry = (berth_backend_entry_fn)dlsym(mod, BERTH_BACKEND_ENTRY_SYMBOL);
    CHECK(entry != NULL);
    berth_error why = {{0}};
    CHECK(entry(0, &host.services, &why) == NULL);
    CHECK_CONTAINS(why.msg, "version 1");
    CHECK_CONTAINS(why.msg, "version 0");
    berth_host_services small = host.services;
    small.struct_size = 16;
    CHECK(entry(1, &small, &why) == NULL);
    CHECK_CONTAINS(why.msg, "16");
    const berth_backend *t = entry(7, &host.services, &why); /* a newer host gets ABI 1.4 */
    CHECK(t && t->abi_version == BERTH_BACKEND_ABI_V1_4 && t->struct_size >= BERTH_BACKEND_V1_4_MIN_SIZE);
    CHECK(t && strcmp(t->name, "cpu") == 0 && t->supports_node && t->n_options == 4 && t->plan_memory);
    CHECK(t && t->node_cost && t->prepare_weights && t->save_state && t->load_state);
    t = entry(BERTH_BACKEND_ABI_V1_3, &host.services, &why); /* a 1.3 host gets a 1.3 table */
    CHECK(t && t->abi_version == BERTH_BACKEND_ABI_V1_3 && t->struct_size >= BERTH_BACKEND_V1_3_MIN_SIZE);
    t = entry(BERTH_BACKEND_ABI_V1_2, &host.services, &why); /* a 1.2 host gets a 1.2 table */
    CHECK(t && t->abi_version == BERTH_BACKEND_ABI_V1_2 && t->struct_size >= BERTH_BACKEND_V1_2_MIN_SIZE);
    t = entry(BERTH_BACKEND_ABI_V1_1, &host.services, &why); /* a 1.1 host gets a 1.1 table */
    CHECK(t && t->abi_version == BERTH_BACKEND_ABI_V1_1 && t->struct_size >= BERTH_BACKEND_V1_1_MIN_SIZE);
    t = entry(BERTH_BACKEND_ABI_V1_0, &host.services, &why); /* a 1.0 host gets a 1.0 table */
    CHECK(t && t->abi_version == BERTH_BACKEND_ABI_V1_0 && t->struct_size >= BERTH_BACKEND_V1_MIN_SIZE);
    dlclose(mod);
}

static void test_options(void) {
    berth_error err;
    berth_device *d = NULL;
    const char *cases[][3] = {
        {"foo", "1", "unknown option 'foo' in [backend.cpu] (known: threads, isa, spin_us, quantized_activations)"},
        {"isa", "sse9", "expected one of auto|avx512|avx2|neon|generic, found 'sse9'"},
        {"isa", "", "found ''"},
        {"threads", "abc", "'abc'"},
        {"threads", "0", "an integer in [1, 1024]"},
        {"threads", "2000", "'2000'"},
        {"threads", "4x", "'4x'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mh_host_clear_options(&host);
        mh_host_option(&host, cases[i][0], cases[i][1]);
        CHECK(cpu.be->open(&host.services, &d, &err) == BERTH_ERR_INVALID);
        CHECK(d == NULL);
        CHECK_CONTAINS(err.msg, cases[i][2]);
        CHECK_CONTAINS(err.msg, cases[i][0]);
    }
    mh_host_clear_options(&host);
    mh_host_option(&host, "threads", "3");
    CHECK(cpu.be->open(&host.services, &d, &err) == BERTH_OK);
    if (!d) return;
    berth_caps caps = {.struct_size = sizeof caps};
    CHECK(cpu.be->caps(d, &caps, &err) == BERTH_OK);
    /* three where the process may use three cpus; else as many as it may,
     * and the name says so */
    cpu_set_t set;
    int usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 3;
    char want[96] = "cpu (3 threads, ";
    if (usable < 3)
        snprintf(want, sizeof want, "cpu (%d threads of 3 asked: %d usable cpu%s, ", usable, usable,
                 usable == 1 ? "" : "s");
    CHECK_CONTAINS(caps.device_name, want);
    CHECK(caps.unified_memory == 1);
    CHECK(caps.memory_bytes > 0);
    CHECK(caps.dtype_mask & (1u << BERTH_DTYPE_F32));
    CHECK(caps.dtype_mask & (1u << BERTH_DTYPE_I64));
    CHECK(caps.dtype_mask & (1u << BERTH_DTYPE_U8));
    /* a host with an older, smaller caps struct gets only what fits */
    berth_caps old = {.struct_size = (uint32_t)offsetof(berth_caps, memory_bytes), .memory_bytes = 77};
    CHECK(cpu.be->caps(d, &old, &err) == BERTH_OK);
    CHECK(old.memory_bytes == 77 && old.device_name != NULL);
    /* ABI 1.3's partition costs: given, and only where they fit */
    CHECK(caps.region_ns > 0 && caps.crossing_ns_per_byte > 0);
    berth_caps v12 = {.struct_size = (uint32_t)BERTH_CAPS_V1_MIN_SIZE, .region_ns = -1};
    CHECK(cpu.be->caps(d, &v12, &err) == BERTH_OK && v12.region_ns == -1);
    /* a node's estimate grows with its work, and a product of 2 GFLOP
     * outweighs an elementwise pass over the same bytes */
    berth_node_cost prod = {.struct_size = sizeof prod, .flops = 2e9, .bytes = 4e6};
    berth_node_cost pass = {.struct_size = sizeof pass, .flops = 1e6, .bytes = 4e6};
    CHECK(cpu.be->node_cost(d, NULL, 0, &prod, &err) == BERTH_OK && prod.node_ns > 0);
    CHECK(cpu.be->node_cost(d, NULL, 0, &pass, &err) == BERTH_OK && pass.node_ns > 0);
    CHECK(pass.node_ns < prod.node_ns);
    cpu.be->close(d);
}

static void test_supports(void) {
    berth_error err;
    CHECK(cpu.be->supports_op(cpu.dev, "matmul", BERTH_DTYPE_F32, &err) == BERTH_OK);
    CHECK(cpu.be->supports_op(cpu.dev, "add", BERTH_DTYPE_I64, &err) == BERTH_OK);
    CHECK(cpu.be->supports_op(cpu.dev, "matmul", BERTH_DTYPE_I32, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "int32");
    CHECK(cpu.be->supports_op(cpu.dev, "frobnicate", BERTH_DTYPE_F32, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "frobnicate");
}

static void test_upload(void) {
    berth_error err;
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 2, .total_bytes = 32, .largest_bytes = 16};
    berth_weights *w = NULL;
    CHECK(cpu.be->upload_begin(cpu.dev, &info, &w, &err) == BERTH_OK);
    if (!w) return;
    berth_weight_desc d0 = {.name = "w0", .id = 0, .dtype = BERTH_DTYPE_F32, .rank = 1, .dims = {4}, .bytes = 16};
    berth_weight_desc d1 = {.name = "w1", .id = 1, .dtype = BERTH_DTYPE_F32, .rank = 1, .dims = {4}, .bytes = 16};
    void *dest = (void *)1;
    CHECK(cpu.be->upload_dest(w, &d0, &dest, &err) == BERTH_OK && dest == NULL);
    int frees0 = host.frees;
    float *given = mh_host_alloc(&host, 16, 64);
    for (int i = 0; i < 4; i++) given[i] = (float)(i + 1);
    int taken = 0;
    CHECK(cpu.be->upload_tensor(w, &d0, given, BERTH_UPLOAD_GIVEN, &taken, &err) == BERTH_OK);
    CHECK(taken == 1);
    float scratch[4] = {10, 20, 30, 40};
    taken = 7;
    CHECK(cpu.be->upload_tensor(w, &d1, scratch, 0, &taken, &err) == BERTH_OK);
    CHECK(taken == 0);
    scratch[0] = -999; /* the backend copied it */
    CHECK(cpu.be->upload_tensor(w, &d1, scratch, 0, &taken, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "w1");
    CHECK(cpu.be->upload_end(w, &err) == BERTH_OK);
    CHECK(cpu.be->weights_bytes(w) == 32);

    tgraph g = {0};
    uint32_t a = tg_operand(&g, "w0", BERTH_OPERAND_WEIGHT, BERTH_DTYPE_F32, 1, DIMS(4));
    uint32_t b = tg_operand(&g, "w1", BERTH_OPERAND_WEIGHT, BERTH_DTYPE_F32, 1, DIMS(4));
    g.ops[b].weight = 1;
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(4));
    tg_node(&g, "add", 2, IDX(a, b), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    float got[4];
    CHECK(h_run_w(&g, w, NULL, (void *[]){got}, &err) == BERTH_OK);
    CHECK(got[0] == 11 && got[1] == 22 && got[2] == 33 && got[3] == 44);
    /* a weight operand whose shape disagrees with the upload */
    g.ops[b].dims[0] = 8;
    g.ops[y].dims[0] = 8;
    CHECK(h_run_w(&g, w, NULL, (void *[]){got}, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "w1");
    cpu.be->free_weights(w);
    CHECK(host.frees == frees0 + 1);

    /* half-filled: one given, one never uploaded; upload_end refuses */
    info.n_tensors = 3;
    CHECK(cpu.be->upload_begin(cpu.dev, &info, &w, &err) == BERTH_OK);
    given = mh_host_alloc(&host, 16, 64);
    CHECK(cpu.be->upload_tensor(w, &d0, given, BERTH_UPLOAD_GIVEN, &taken, &err) == BERTH_OK);
    CHECK(cpu.be->upload_end(w, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "id 1");
    berth_weight_desc lying = d1; /* bytes that disagree with the dims */
    lying.id = 2;
    lying.bytes = 12;
    CHECK(cpu.be->upload_tensor(w, &lying, scratch, 0, &taken, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "needs 16 bytes, found 12");
    berth_weight_desc bad = d1;
    bad.id = 9;
    CHECK(cpu.be->upload_tensor(w, &bad, scratch, 0, &taken, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "9");
    cpu.be->free_weights(w);
    CHECK(host.frees == frees0 + 2);
}

static void test_plan_errors(void) {
    berth_error err;
    float buf[16] = {0};
    tgraph g = {0};
    uint32_t x = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(4));
    uint32_t y = tg_value(&g, "bad_add", BERTH_DTYPE_F32, 1, DIMS(4));
    tg_node(&g, "add", 1, IDX(x), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    CHECK(h_run(&g, (void *[]){buf}, (void *[]){buf}, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "node 'bad_add' (add)");
    CHECK_CONTAINS(err.msg, "expected 2 inputs, found 1");

    g.nodes[0].op = "frobnicate";
    CHECK(h_run(&g, (void *[]){buf}, (void *[]){buf}, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "frobnicate");
    CHECK_CONTAINS(err.msg, "bad_add");

    /* dtype mismatch between inputs */
    tgraph h = {0};
    x = tg_input(&h, "x", BERTH_DTYPE_F32, 1, DIMS(4));
    uint32_t z = tg_input(&h, "z", BERTH_DTYPE_I32, 1, DIMS(4));
    y = tg_value(&h, "mixed", BERTH_DTYPE_F32, 1, DIMS(4));
    tg_node(&h, "mul", 2, IDX(x, z), 1, IDX(y), 0, NULL);
    tg_output(&h, y);
    CHECK(h_run(&h, (void *[]){buf, buf}, (void *[]){buf}, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "mixed");
    CHECK_CONTAINS(err.msg, "int32");


    /* a node that reads a value no node produced */
    tgraph m = {0};
    x = tg_input(&m, "x", BERTH_DTYPE_F32, 1, DIMS(4));
    uint32_t ghost = tg_value(&m, "ghost", BERTH_DTYPE_F32, 1, DIMS(4));
    y = tg_value(&m, "reader", BERTH_DTYPE_F32, 1, DIMS(4));
    tg_node(&m, "add", 2, IDX(x, ghost), 1, IDX(y), 0, NULL);
    tg_output(&m, y);
    CHECK(h_run(&m, (void *[]){buf}, (void *[]){buf}, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "ghost");

    /* an attribute of the wrong type names the key */
    tgraph q = {0};
    x = tg_input(&q, "x", BERTH_DTYPE_F32, 1, DIMS(4));
    y = tg_value(&q, "lr", BERTH_DTYPE_F32, 1, DIMS(4));
    tg_node(&q, "leakyRelu", 1, IDX(x), 1, IDX(y), 1, (berth_attr[]){A_STR("alpha", "big")});
    tg_output(&q, y);
    CHECK(h_run(&q, (void *[]){buf}, (void *[]){buf}, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "'alpha'");
    CHECK_CONTAINS(err.msg, "expected float, found string");
}

/* A chain of N equal-size nodes needs about two live buffers, not N. */
static void test_arena_and_profile(void) {
    enum { N = 40, E = 65536 };
    tgraph g = {0};
    static char names[N][16];
    uint32_t prev = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(E));
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "v%d", i);
        uint32_t v = tg_value(&g, names[i], BERTH_DTYPE_F32, 1, DIMS(E));
        tg_node(&g, i % 2 ? "neg" : "abs", 1, IDX(prev), 1, IDX(v), 0, NULL);
        prev = v;
    }
    tg_output(&g, prev);
    berth_graph_desc d = tg_desc(&g);
    berth_plan *p = NULL;
    berth_error err;
    CHECK(cpu.be->plan(cpu.dev, NULL, &d, &p, &err) == BERTH_OK);
    if (!p) return;
    uint64_t bytes = cpu.be->plan_bytes(p);
    CHECK(bytes >= 2u * E * sizeof(float));
    CHECK(bytes <= 3u * E * sizeof(float));
    if (bytes > 3u * E * sizeof(float)) fprintf(stderr, "  plan_bytes %llu\n", (unsigned long long)bytes);
    float *x = h_randf(E), *y = calloc(E, sizeof(float));
    berth_tensor ti = h_tensor(&g.ops[g.ins[0]], x), to = h_tensor(&g.ops[prev], y);
    CHECK(cpu.be->run(p, &ti, 1, &to, 1, &err) == BERTH_OK);
    /* abs, neg, abs, ... ending with neg: -|x| */
    double *ref = h_zeros(E);
    for (int i = 0; i < E; i++) ref[i] = -fabs((double)x[i]);
    h_close("chain", y, ref, E);
    uint64_t ns[N];
    CHECK(cpu.be->plan_profile(p, ns, N, &err) == BERTH_OK);
    int positive = 1;
    for (int i = 0; i < N; i++) positive &= ns[i] > 0;
    CHECK(positive);
    uint64_t more[N + 1];
    CHECK(cpu.be->plan_profile(p, more, N + 1, &err) == BERTH_ERR_INVALID);
    cpu.be->free_plan(p);
    free(x), free(y), free(ref);
}

/* Views borrow their input's bytes: a view of a graph input, of a graph
 * output, and of an arena value read later; a view that is itself an
 * output still lands in the caller's buffer. Results and arena size
 * show both. */
static void test_views(void) {
    enum { E = 65536 };
    tgraph g = {0};
    uint32_t x = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(E));
    uint32_t vx = tg_value(&g, "vx", BERTH_DTYPE_F32, 2, DIMS(256, 256));    /* view of an input */
    uint32_t a = tg_value(&g, "a", BERTH_DTYPE_F32, 2, DIMS(256, 256));      /* graph output */
    uint32_t va = tg_value(&g, "va", BERTH_DTYPE_F32, 1, DIMS(E));           /* view of an output */
    uint32_t b = tg_value(&g, "b", BERTH_DTYPE_F32, 1, DIMS(E));             /* arena */
    uint32_t vb = tg_value(&g, "vb", BERTH_DTYPE_F32, 3, DIMS(4, 128, 128)); /* view of arena */
    uint32_t vvb = tg_value(&g, "vvb", BERTH_DTYPE_F32, 1, DIMS(E));         /* view of a view */
    uint32_t c = tg_value(&g, "c", BERTH_DTYPE_F32, 1, DIMS(E));
    uint32_t d = tg_value(&g, "d", BERTH_DTYPE_F32, 1, DIMS(E));
    uint32_t vd = tg_value(&g, "vd", BERTH_DTYPE_F32, 2, DIMS(E, 1));        /* a view that is an output */
    tg_node(&g, "reshape", 1, IDX(x), 1, IDX(vx), 0, NULL);
    tg_node(&g, "abs", 1, IDX(vx), 1, IDX(a), 0, NULL);
    tg_node(&g, "reshape", 1, IDX(a), 1, IDX(va), 0, NULL);
    tg_node(&g, "neg", 1, IDX(va), 1, IDX(b), 0, NULL);
    tg_node(&g, "reshape", 1, IDX(b), 1, IDX(vb), 0, NULL);
    tg_node(&g, "squeeze", 1, IDX(vb), 1, IDX(vvb), 0, NULL);
    tg_node(&g, "relu", 1, IDX(x), 1, IDX(c), 0, NULL); /* b's bytes must survive this */
    tg_node(&g, "sub", 2, IDX(vvb, c), 1, IDX(d), 0, NULL);
    tg_node(&g, "unsqueeze", 1, IDX(d), 1, IDX(vd), 0, NULL);
    tg_output(&g, a);
    tg_output(&g, vd);
    float *xv = h_randf(E), *ya = calloc(E, sizeof(float)), *yd = calloc(E, sizeof(float));
    double *ra = h_zeros(E), *rd = h_zeros(E);
    for (int i = 0; i < E; i++) {
        ra[i] = fabs((double)xv[i]);
        rd[i] = -ra[i] - (xv[i] > 0 ? xv[i] : 0);
    }
    berth_graph_desc desc = tg_desc(&g);
    berth_plan *p = NULL;
    berth_error err;
    CHECK(cpu.be->plan(cpu.dev, NULL, &desc, &p, &err) == BERTH_OK);
    if (!p) return;
    /* live at once: b (through its views) and c, plus d, never the views */
    CHECK(cpu.be->plan_bytes(p) <= 3u * E * sizeof(float) + 16384);
    berth_tensor ti = h_tensor(&g.ops[x], xv), to[2] = {h_tensor(&g.ops[a], ya), h_tensor(&g.ops[vd], yd)};
    for (int r = 0; r < 2; r++) { /* twice: aliases are rebound on every run */
        CHECK(cpu.be->run(p, &ti, 1, to, 2, &err) == BERTH_OK);
        h_close("view of output", ya, ra, E);
        h_close("views", yd, rd, E);
    }
    cpu.be->free_plan(p);
    free(xv), free(ya), free(yd), free(ra), free(rd);

    /* relu -> reshape -> reshape -> neg: with aliasing one buffer, copies would need two */
    tgraph h = {0};
    x = tg_input(&h, "x", BERTH_DTYPE_F32, 1, DIMS(E));
    a = tg_value(&h, "a", BERTH_DTYPE_F32, 1, DIMS(E));
    uint32_t v1 = tg_value(&h, "v1", BERTH_DTYPE_F32, 2, DIMS(2, E / 2)), v2 = tg_value(&h, "v2", BERTH_DTYPE_F32, 1, DIMS(E));
    uint32_t y = tg_value(&h, "y", BERTH_DTYPE_F32, 1, DIMS(E));
    tg_node(&h, "relu", 1, IDX(x), 1, IDX(a), 0, NULL);
    tg_node(&h, "reshape", 1, IDX(a), 1, IDX(v1), 0, NULL);
    tg_node(&h, "reshape", 1, IDX(v1), 1, IDX(v2), 0, NULL);
    tg_node(&h, "neg", 1, IDX(v2), 1, IDX(y), 0, NULL);
    tg_output(&h, y);
    desc = tg_desc(&h);
    CHECK(cpu.be->plan(cpu.dev, NULL, &desc, &p, &err) == BERTH_OK);
    if (!p) return;
    CHECK(cpu.be->plan_bytes(p) < 2u * E * sizeof(float));
    cpu.be->free_plan(p);
}

/* A batch of zero rows plans and runs with NULL buffers. */
static void test_empty(void) {
    tgraph g = {0};
    uint32_t x = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(0, 4));
    uint32_t w = tg_input(&g, "w", BERTH_DTYPE_F32, 2, DIMS(4, 3));
    uint32_t m = tg_value(&g, "m", BERTH_DTYPE_F32, 2, DIMS(0, 3));
    uint32_t c = tg_value(&g, "c", BERTH_DTYPE_I32, 2, DIMS(0, 3));
    uint32_t s = tg_value(&g, "s", BERTH_DTYPE_F32, 1, DIMS(3));
    tg_node(&g, "matmul", 2, IDX(x, w), 1, IDX(m), 0, NULL);
    tg_node(&g, "cast", 1, IDX(m), 1, IDX(c), 0, NULL);
    tg_node(&g, "reduceSum", 1, IDX(m), 1, IDX(s), 1, (berth_attr[]){A_INTS("axes", 1, 0)});
    tg_output(&g, c);
    tg_output(&g, s);
    float wv[12] = {0}, sv[3] = {1, 1, 1};
    if (h_ok(&g, (void *[]){NULL, wv}, (void *[]){NULL, sv})) CHECK(sv[0] == 0 && sv[1] == 0 && sv[2] == 0);
}

/* Outputs that are graph inputs, or listed twice, are copied out. */
static void test_odd_outputs(void) {
    tgraph g = {0};
    uint32_t x = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(3));
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(3));
    tg_node(&g, "neg", 1, IDX(x), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    tg_output(&g, x);
    tg_output(&g, y);
    float xv[3] = {1, -2, 3}, o0[3], o1[3], o2[3];
    if (h_ok(&g, (void *[]){xv}, (void *[]){o0, o1, o2})) {
        CHECK(o0[0] == -1 && o0[1] == 2 && o0[2] == -3);
        CHECK(o1[0] == 1 && o1[1] == -2 && o1[2] == 3);
        CHECK(o2[0] == -1 && o2[1] == 2 && o2[2] == -3);
    }
}

int main(void) {
    if (!h_open(2)) {
        CHECK(0);
        return check_exit();
    }
    test_negotiation();
    test_options();
    test_supports();
    test_upload();
    test_plan_errors();
    test_arena_and_profile();
    test_odd_outputs();
    test_views();
    test_empty();
    h_shutdown();
    return check_exit();
}
