/* The vulkan backend's core path through the ABI: weights streamed in
 * (in place through upload_dest), the first graph (matmul, add, relu),
 * matrix products of awkward sizes and broadcast batches, broadcasting
 * adds, a plan run twice, and clean refusals. Every result is checked
 * against plain reference loops and, where built, the cpu backend. */
#include "vk_harness.h"

/* Uploads tensors through `m`; in place wherever upload_dest offers memory. */
static berth_weights *upload(mh_module *m, uint32_t n, float *const *data, const size_t *count) {
    uint64_t total = 0, largest = 0;
    for (uint32_t i = 0; i < n; i++) {
        total += count[i] * 4;
        if (count[i] * 4 > largest) largest = count[i] * 4;
    }
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = n, .total_bytes = total,
                              .largest_bytes = largest};
    berth_weights *w = NULL;
    berth_error err;
    if (m->be->upload_begin(m->dev, &info, &w, &err)) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        berth_weight_desc d = {.name = "t", .id = i, .dtype = BERTH_DTYPE_F32, .rank = 1,
                               .dims = {(int64_t)count[i]}, .bytes = count[i] * 4};
        void *dest = NULL;
        if (m->be->upload_dest && m->be->upload_dest(w, &d, &dest, &err)) goto fail;
        int taken = 0;
        berth_status st;
        if (dest) {
            memcpy(dest, data[i], d.bytes);
            st = m->be->upload_tensor(w, &d, dest, BERTH_UPLOAD_IN_PLACE, &taken, &err);
        } else {
            st = m->be->upload_tensor(w, &d, data[i], 0, &taken, &err);
        }
        if (st) goto fail;
    }
    if (m->be->upload_end(w, &err)) goto fail;
    return w;
fail:
    fprintf(stderr, "upload: %s\n", err.msg);
    m->be->free_weights(w);
    return NULL;
}

static void ref_matmul(const float *a, const float *b, double *y, int64_t m, int64_t n, int64_t k) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t t = 0; t < k; t++) s += (double)a[i * k + t] * b[t * n + j];
            y[i * n + j] = s;
        }
}

/* y = relu(x W1 + b1) W2 + b2, as examples/first/first.webnn spells it. */
static void test_first_graph(void) {
    const int64_t B = 8;
    float *w1 = h_randf(32), *b1 = h_randf(8), *w2 = h_randf(24), *b2 = h_randf(3), *x = h_randf(B * 4);
    float *const data[4] = {w1, b1, w2, b2};
    const size_t count[4] = {32, 8, 24, 3};
    berth_weights *vw = upload(&vk, 4, data, count);
    CHECK(vw != NULL);
    if (!vw) return;
    CHECK(vk.be->weights_bytes(vw) >= 67 * 4);

    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(B, 4));
    uint32_t W1 = tg_weight(&g, "w1", 0, 2, DIMS(4, 8)), B1 = tg_weight(&g, "b1", 1, 1, DIMS(8));
    uint32_t W2 = tg_weight(&g, "w2", 2, 2, DIMS(8, 3)), B2 = tg_weight(&g, "b2", 3, 1, DIMS(3));
    uint32_t h0 = tg_value(&g, "h0", BERTH_DTYPE_F32, 2, DIMS(B, 8)), h1 = tg_value(&g, "h1", BERTH_DTYPE_F32, 2, DIMS(B, 8));
    uint32_t h = tg_value(&g, "h", BERTH_DTYPE_F32, 2, DIMS(B, 8)), y0 = tg_value(&g, "y0", BERTH_DTYPE_F32, 2, DIMS(B, 3));
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(B, 3));
    tg_node(&g, "matmul", 2, IDX(xi, W1), 1, IDX(h0), 0, NULL);
    tg_node(&g, "add", 2, IDX(h0, B1), 1, IDX(h1), 0, NULL);
    tg_node(&g, "relu", 1, IDX(h1), 1, IDX(h), 0, NULL);
    tg_node(&g, "matmul", 2, IDX(h, W2), 1, IDX(y0), 0, NULL);
    tg_node(&g, "add", 2, IDX(y0, B2), 1, IDX(y), 0, NULL);
    tg_output(&g, y);

    float got[B * 3];
    berth_error err = {{0}};
    berth_status st = mh_run(&vk, &g, vw, (void *const[]){x}, (void *const[]){got}, &err);
    CHECK(st == BERTH_OK);
    if (st) fprintf(stderr, "  first graph: %s\n", err.msg);
    double hid[B * 8], ref[B * 3];
    ref_matmul(x, w1, hid, B, 8, 4);
    float hf[B * 8];
    for (int i = 0; i < B * 8; i++) {
        double v = hid[i] + b1[i % 8];
        hf[i] = (float)(v > 0 ? v : 0);
    }
    ref_matmul(hf, w2, ref, B, 3, 8);
    for (int i = 0; i < B * 3; i++) ref[i] += b2[i % 3];
    h_close("first graph", got, ref, B * 3);
#ifdef BERTH_CPU_MODULE
    berth_weights *cw = upload(&cpu, 4, data, count);
    CHECK(cw != NULL);
    if (cw) h_same_as_cpu("first graph vs cpu", &g, cw, (void *const[]){x}, (void *const[]){got});
    if (cw) cpu.be->free_weights(cw);
#endif
    /* Constants and weights as graph outputs, beside a computed one: the
     * engine folds shape arithmetic into constants a graph may return. */
    tgraph g5 = {0};
    const int32_t shape[3] = {7, -2, 40000};
    uint32_t x5 = tg_input(&g5, "x", BERTH_DTYPE_F32, 2, DIMS(B, 4));
    uint32_t c5 = tg_const(&g5, "shape", BERTH_DTYPE_I32, 1, DIMS(3), shape, sizeof shape);
    uint32_t w5 = tg_weight(&g5, "b1", 1, 1, DIMS(8)), r5 = tg_value(&g5, "r", BERTH_DTYPE_F32, 2, DIMS(B, 4));
    tg_node(&g5, "relu", 1, IDX(x5), 1, IDX(r5), 0, NULL);
    tg_output(&g5, c5);
    tg_output(&g5, r5);
    tg_output(&g5, w5);
    int32_t got_shape[3] = {0};
    float got_r[B * 4], got_w[8];
    st = mh_run(&vk, &g5, vw, (void *const[]){x}, (void *const[]){got_shape, got_r, got_w}, &err);
    CHECK(st == BERTH_OK);
    if (st) fprintf(stderr, "  constant outputs: %s\n", err.msg);
    CHECK(memcmp(got_shape, shape, sizeof shape) == 0);
    CHECK(memcmp(got_w, b1, sizeof got_w) == 0);
    int relu_ok = 1;
    for (int i = 0; i < B * 4; i++) relu_ok &= got_r[i] == (x[i] > 0 ? x[i] : 0.0f);
    CHECK(relu_ok);
    vk.be->free_weights(vw);
    free(w1), free(b1), free(w2), free(b2), free(x);
}

/* a [.., m, k] @ b [.., k, n] with numpy batch broadcasting. */
static void check_matmul(uint32_t ar, const int64_t *ad, uint32_t br, const int64_t *bd, uint32_t yr,
                         const int64_t *yd) {
    tgraph g = {0};
    uint32_t a = tg_input(&g, "a", BERTH_DTYPE_F32, ar, ad), b = tg_input(&g, "b", BERTH_DTYPE_F32, br, bd);
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, yr, yd);
    tg_node(&g, "matmul", 2, IDX(a, b), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    size_t na = h_numel(&g.ops[a]), nb = h_numel(&g.ops[b]), ny = h_numel(&g.ops[y]);
    float *av = h_randf(na), *bv = h_randf(nb), *got = calloc(ny, 4);
    double *ref = h_zeros(ny);
    /* Reference over 2-D-or-more operands: batch dims are all but the last two. */
    int64_t m = ad[ar - 2], k = ad[ar - 1], n = bd[br - 1];
    int64_t oidx[BERTH_MAX_RANK];
    for (size_t i = 0; i < ny; i++) {
        h_unravel(i, yr, yd, oidx);
        int64_t row = oidx[yr - 2], col = oidx[yr - 1];
        size_t abase = h_bcast_off(oidx, yr - 2, ar - 2, ad) * (size_t)(m * k);
        size_t bbase = h_bcast_off(oidx, yr - 2, br - 2, bd) * (size_t)(k * n);
        double s = 0;
        for (int64_t t = 0; t < k; t++) s += (double)av[abase + row * k + t] * bv[bbase + t * n + col];
        ref[i] = s;
    }
    if (h_ok(&g, (void *const[]){av, bv}, (void *const[]){got})) {
        h_close("matmul", got, ref, ny);
        h_same_as_cpu("matmul vs cpu", &g, NULL, (void *const[]){av, bv}, (void *const[]){got});
    }
    free(av), free(bv), free(got), free(ref);
}

static void test_matmul(void) {
    check_matmul(2, DIMS(1, 1), 2, DIMS(1, 1), 2, DIMS(1, 1));
    check_matmul(2, DIMS(37, 29), 2, DIMS(29, 45), 2, DIMS(37, 45));
    check_matmul(2, DIMS(64, 96), 2, DIMS(96, 33), 2, DIMS(64, 33));
    check_matmul(4, DIMS(2, 1, 5, 7), 3, DIMS(3, 7, 6), 4, DIMS(2, 3, 5, 6));
    check_matmul(3, DIMS(4, 3, 17), 2, DIMS(17, 2), 3, DIMS(4, 3, 2));
}

/* 1-D operands: a vector on the left drops m, on the right drops n. */
static void test_matmul_vectors(void) {
    tgraph g = {0};
    uint32_t a = tg_input(&g, "a", BERTH_DTYPE_F32, 1, DIMS(5)), b = tg_input(&g, "b", BERTH_DTYPE_F32, 2, DIMS(5, 3));
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(3));
    tg_node(&g, "matmul", 2, IDX(a, b), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    float *av = h_randf(5), *bv = h_randf(15), got[3];
    double ref[3];
    ref_matmul(av, bv, ref, 1, 3, 5);
    if (h_ok(&g, (void *const[]){av, bv}, (void *const[]){got})) h_close("vector matmul", got, ref, 3);
    free(av), free(bv);
}

static void check_add(uint32_t ar, const int64_t *ad, uint32_t br, const int64_t *bd, uint32_t yr,
                      const int64_t *yd) {
    tgraph g = {0};
    uint32_t a = tg_input(&g, "a", BERTH_DTYPE_F32, ar, ad), b = tg_input(&g, "b", BERTH_DTYPE_F32, br, bd);
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, yr, yd);
    tg_node(&g, "add", 2, IDX(a, b), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    size_t ny = h_numel(&g.ops[y]);
    float *av = h_randf(h_numel(&g.ops[a])), *bv = h_randf(h_numel(&g.ops[b])), *got = calloc(ny, 4);
    double *ref = h_zeros(ny);
    int64_t idx[BERTH_MAX_RANK];
    for (size_t i = 0; i < ny; i++) {
        h_unravel(i, yr, yd, idx);
        ref[i] = (double)av[h_bcast_off(idx, yr, ar, ad)] + bv[h_bcast_off(idx, yr, br, bd)];
    }
    if (h_ok(&g, (void *const[]){av, bv}, (void *const[]){got})) h_close("add", got, ref, ny);
    free(av), free(bv), free(got), free(ref);
}

static void test_add_broadcast(void) {
    check_add(3, DIMS(2, 3, 4), 1, DIMS(4), 3, DIMS(2, 3, 4));
    check_add(3, DIMS(2, 1, 4), 2, DIMS(3, 1), 3, DIMS(2, 3, 4));
    check_add(0, DIMS(0), 2, DIMS(5, 7), 2, DIMS(5, 7));
    check_add(4, DIMS(1, 3, 1, 5), 4, DIMS(2, 1, 4, 1), 4, DIMS(2, 3, 4, 5));
    check_add(1, DIMS(70000), 1, DIMS(70000), 1, DIMS(70000));
}

/* One plan, two runs on different inputs: run() reuses every buffer. */
static void test_plan_reuse(void) {
    tgraph g = {0};
    uint32_t x = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(300));
    uint32_t r = tg_value(&g, "r", BERTH_DTYPE_F32, 1, DIMS(300)), y = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(300));
    tg_node(&g, "relu", 1, IDX(x), 1, IDX(r), 0, NULL);
    tg_node(&g, "add", 2, IDX(r, x), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    tg_output(&g, r);
    berth_graph_desc d = tg_desc(&g);
    berth_plan *p = NULL;
    berth_error err;
    CHECK(vk.be->plan(vk.dev, NULL, &d, &p, &err) == BERTH_OK);
    if (!p) return;
    CHECK(vk.be->plan_bytes(p) > 0);
    for (int rep = 0; rep < 2; rep++) {
        float *xv = h_randf(300), yv[300], rv[300];
        berth_tensor ti = h_tensor(&g.ops[x], xv), to[2] = {h_tensor(&g.ops[y], yv), h_tensor(&g.ops[r], rv)};
        CHECK(vk.be->run(p, &ti, 1, to, 2, &err) == BERTH_OK);
        double ry[300], rr[300];
        for (int i = 0; i < 300; i++) {
            rr[i] = xv[i] > 0 ? xv[i] : 0;
            ry[i] = rr[i] + xv[i];
        }
        h_close("reuse y", yv, ry, 300);
        h_close("reuse r", rv, rr, 300);
        free(xv);
    }
    /* Per-node times of the last run, where the queue has timestamps. */
    uint64_t ns[2] = {0, 0};
    berth_status pst = vk.be->plan_profile(p, ns, 2, &err);
    CHECK(pst == BERTH_OK || pst == BERTH_ERR_UNSUPPORTED);
    if (pst == BERTH_OK) {
        CHECK(ns[0] + ns[1] > 0);
        CHECK(ns[0] < 10000000000ull && ns[1] < 10000000000ull);
    } else {
        CHECK_CONTAINS(err.msg, "timestamps");
    }
    /* A wrongly sized output is refused, naming what was expected. */
    float small[10];
    float *xv = h_randf(300);
    berth_tensor ti = h_tensor(&g.ops[x], xv), to[2] = {h_tensor(&g.ops[y], small), h_tensor(&g.ops[r], small)};
    to[0].bytes = sizeof small;
    CHECK(vk.be->run(p, &ti, 1, to, 2, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "expected 1200 bytes");
    free(xv);
    vk.be->free_plan(p);
}

static void test_refusals(void) {
    berth_error err;
    CHECK(vk.be->supports_op(vk.dev, "conv3d", BERTH_DTYPE_F32, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "conv3d");
    CHECK(vk.be->supports_op(vk.dev, "matmul", BERTH_DTYPE_F32, &err) == BERTH_OK);
    CHECK(vk.be->supports_op(vk.dev, "matmul", BERTH_DTYPE_I32, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "int32");

    tgraph g = {0};
    uint32_t x = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(4));
    uint32_t y = tg_value(&g, "mystery_out", BERTH_DTYPE_F32, 1, DIMS(4));
    tg_node(&g, "conv3d", 1, IDX(x), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    float in[4] = {0}, out[4];
    CHECK(mh_run(&vk, &g, NULL, (void *const[]){in}, (void *const[]){out}, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "mystery_out");

    tgraph g2 = {0};
    uint32_t a = tg_input(&g2, "a", BERTH_DTYPE_F32, 2, DIMS(2, 3)), b = tg_input(&g2, "b", BERTH_DTYPE_F32, 2, DIMS(4, 5));
    uint32_t p = tg_value(&g2, "prod", BERTH_DTYPE_F32, 2, DIMS(2, 5));
    tg_node(&g2, "matmul", 2, IDX(a, b), 1, IDX(p), 0, NULL);
    tg_output(&g2, p);
    float av[6] = {0}, bv[20] = {0}, pv[10];
    CHECK(mh_run(&vk, &g2, NULL, (void *const[]){av, bv}, (void *const[]){pv}, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "prod");
    CHECK_CONTAINS(err.msg, "inner dims");

    /* A node that reads a value no earlier node produced. */
    tgraph g4 = {0};
    uint32_t x4 = tg_input(&g4, "x", BERTH_DTYPE_F32, 1, DIMS(4));
    uint32_t later = tg_value(&g4, "later", BERTH_DTYPE_F32, 1, DIMS(4)), early = tg_value(&g4, "early", BERTH_DTYPE_F32, 1, DIMS(4));
    tg_node(&g4, "relu", 1, IDX(later), 1, IDX(early), 0, NULL);
    tg_node(&g4, "relu", 1, IDX(x4), 1, IDX(later), 0, NULL);
    tg_output(&g4, early);
    CHECK(mh_run(&vk, &g4, NULL, (void *const[]){in}, (void *const[]){out}, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "node 'early' (relu): input 0");

    /* A weight id that was never uploaded. */
    tgraph g3 = {0};
    uint32_t xi = tg_input(&g3, "x", BERTH_DTYPE_F32, 1, DIMS(4)), wi = tg_weight(&g3, "w_missing", 7, 1, DIMS(4));
    uint32_t s = tg_value(&g3, "s", BERTH_DTYPE_F32, 1, DIMS(4));
    tg_node(&g3, "add", 2, IDX(xi, wi), 1, IDX(s), 0, NULL);
    tg_output(&g3, s);
    CHECK(mh_run(&vk, &g3, NULL, (void *const[]){in}, (void *const[]){out}, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "w_missing");
}

int main(void) {
    h_start();
    berth_caps caps = {.struct_size = sizeof caps};
    berth_error err;
    CHECK(vk.be->caps(vk.dev, &caps, &err) == BERTH_OK);
    CHECK(caps.device_name && strlen(caps.device_name) > 0);
    CHECK(caps.dtype_mask & (1u << BERTH_DTYPE_F32));
    test_first_graph();
    test_matmul();
    test_matmul_vectors();
    test_add_broadcast();
    test_plan_reuse();
    test_refusals();
    h_stop();
    return check_exit();
}
