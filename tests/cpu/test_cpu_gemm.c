/* berth's packed matrix-product kernels against a plain double-precision
 * reference: odd sizes (M, N, K off every tile and k block), batched
 * products folded into rows, every epilogue combination, threads 1 and
 * 2, and each instruction-set path this machine has (forced with the
 * `isa` option); the quantized product against its unfused graph. Also:
 * the packed panels are made once per weight and shared by plans,
 * counted in weights_bytes, and the option is checked. */
#include "cpu_harness.h"

static const char *isa_name;
static char thr_buf[16];

/* Opens the device with the isa and thread count; 0 if the cpu lacks it. */
static int open_with(const char *isa, int threads) {
    if (!h_load()) return 0;
    snprintf(thr_buf, sizeof thr_buf, "%d", threads);
    mh_host_clear_options(&host);
    mh_host_option(&host, "threads", thr_buf);
    mh_host_option(&host, "isa", isa);
    berth_error err;
    berth_status st = cpu.be->open(&host.services, &cpu.dev, &err);
    if (st != BERTH_OK) {
        CHECK(st == BERTH_ERR_INVALID);
        CHECK_CONTAINS(err.msg, "does not support");
        CHECK_CONTAINS(err.msg, isa);
        h_shutdown();
        return 0;
    }
    return 1;
}

static berth_weights *upload(const float *data, size_t n, uint32_t k, uint32_t cols) {
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 1, .total_bytes = 4 * n, .largest_bytes = 4 * n};
    berth_weights *w = NULL;
    berth_error err;
    int taken = 0;
    CHECK(cpu.be->upload_begin(cpu.dev, &info, &w, &err) == BERTH_OK);
    berth_weight_desc d = {.name = "w", .id = 0, .dtype = BERTH_DTYPE_F32, .rank = 2, .dims = {k, cols},
                           .bytes = 4 * n};
    CHECK(cpu.be->upload_tensor(w, &d, (void *)data, 0, &taken, &err) == BERTH_OK);
    CHECK(cpu.be->upload_end(w, &err) == BERTH_OK);
    return w;
}

static double act_ref(int act, double v) {
    switch (act) {
    case 1: return v > 0 ? v : 0;
    case 2: return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    case 3: return 1.0 / (1.0 + exp(-v));
    case 4: return tanh(v);
    default: return v;
    }
}

/* y[batch, m, n] = act(x[batch, m, k] @ w[k, n] + bias) + res, through
 * matmul (when fused < 0) or berth.matmulEpilogue. */
static void check_product(int64_t batch, int64_t m, int64_t k, int64_t n, int fused, int bias_on, int act, int res_on) {
    static const char *const acts[] = {"none", "relu", "gelu", "sigmoid", "tanh"};
    size_t rows = (size_t)(batch * m);
    float *x = h_randf(rows * (size_t)k), *wt = h_randf((size_t)(k * n)), *b = h_randf((size_t)n);
    float *r = h_randf(rows * (size_t)n), *y = calloc(rows * (size_t)n, sizeof *y);
    double *ref = h_zeros(rows * (size_t)n);
    for (size_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) s += (double)x[i * (size_t)k + (size_t)p] * wt[p * n + j];
            if (fused && bias_on) s += b[j];
            if (fused) s = act_ref(act, s);
            if (fused && res_on) s += r[i * (size_t)n + (size_t)j];
            ref[i * (size_t)n + (size_t)j] = s;
        }
    berth_weights *w = upload(wt, (size_t)(k * n), (uint32_t)k, (uint32_t)n);
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 3, DIMS(batch, m, k));
    uint32_t wi = tg_operand(&g, "w", BERTH_OPERAND_WEIGHT, BERTH_DTYPE_F32, 2, DIMS(k, n));
    g.ops[wi].weight = 0;
    uint32_t bi = tg_const(&g, "b", BERTH_DTYPE_F32, 1, DIMS(n), b, sizeof(float) * (size_t)n);
    uint32_t ri = tg_input(&g, "r", BERTH_DTYPE_F32, 3, DIMS(batch, m, n));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 3, DIMS(batch, m, n));
    berth_attr at[3];
    uint32_t na = 0;
    at[na++] = A_STR("activation", acts[act]);
    if (bias_on) at[na++] = A_OPND("bias", bi);
    if (res_on) at[na++] = A_OPND("residual", ri);
    tg_node(&g, fused ? "berth.matmulEpilogue" : "matmul", 2, IDX(xi, wi), 1, IDX(yi), fused ? na : 0, at);
    tg_output(&g, yi);
    berth_error err = {{0}};
    berth_status st = h_run_w(&g, w, (void *[]){x, r}, (void *[]){y}, &err);
    CHECK(st == BERTH_OK);
    char what[160];
    snprintf(what, sizeof what, "%s %s batch %lld m %lld k %lld n %lld bias %d act %s res %d", isa_name,
             fused ? "epilogue" : "matmul", (long long)batch, (long long)m, (long long)k, (long long)n, bias_on,
             acts[act], res_on);
    if (st) fprintf(stderr, "  %s: %s\n", what, err.msg);
    else h_close_tol(what, y, ref, rows * (size_t)n, 1e-4, 1e-4 * sqrt((double)k));
    cpu.be->free_weights(w);
    free(x), free(wt), free(b), free(r), free(y), free(ref);
}

static void test_sizes(void) {
    /* tile edges on every side, k across the k block, rows across the
     * row block (16 tiles), batches folded into rows */
    static const int64_t sizes[][4] = {
        {1, 3, 1, 1},   {1, 5, 7, 3},    {1, 13, 129, 33}, {1, 37, 300, 65}, {1, 200, 257, 97},
        {1, 12, 128, 32}, {1, 6, 256, 16}, {3, 7, 19, 45},  {2, 64, 64, 130}, {1, 4, 600, 17},
        {1, 30, 800, 98}, /* k blocks of equal depth, a 2-wide last panel */
        {1, 30, 801, 40}, /* blocks of 201 and a last of 198 */
        /* last tiles of 8 and of 4 rows (avx512's part tile), summed
         * over k blocks */
        {1, 20, 800, 64}, {1, 28, 500, 70},
        /* fewer rows than a tile: one pass over B per row, over the pool
         * once the product is large enough */
        {1, 1, 1, 1},   {1, 1, 1536, 200}, {1, 2, 301, 33}, {2, 1, 67, 97}, {1, 3, 5, 40},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        check_product(sizes[i][0], sizes[i][1], sizes[i][2], sizes[i][3], 0, 0, 0, 0);
}

/* gemm with B a weight (packed once, bTranspose or not) and c as a bias
 * per column or per row or a whole matrix; and the shapes the packed
 * path leaves to the plain one (alpha, beta other than 1, a scalar c). */
enum { C_NONE, C_COLS, C_ROWS, C_FULL, C_SCALAR };
static void check_gemm(int64_t m, int64_t k, int64_t n, int tb, int ck, float alpha, float beta) {
    static const char *const cks[] = {"none", "cols", "rows", "full", "scalar"};
    float *a = h_randf((size_t)(m * k)), *wt = h_randf((size_t)(k * n)), *cv = h_randf((size_t)(m * n));
    float *y = calloc((size_t)(m * n), sizeof *y);
    double *ref = h_zeros((size_t)(m * n));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) s += (double)a[i * k + p] * (tb ? wt[j * k + p] : wt[p * n + j]);
            s *= alpha;
            if (ck == C_COLS) s += beta * cv[j];
            if (ck == C_ROWS) s += beta * cv[i];
            if (ck == C_FULL) s += beta * cv[i * n + j];
            if (ck == C_SCALAR) s += beta * cv[0];
            ref[i * n + j] = s;
        }
    berth_weights *w = upload(wt, (size_t)(k * n), (uint32_t)(tb ? n : k), (uint32_t)(tb ? k : n));
    tgraph g = {0};
    uint32_t ai = tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(m, k));
    uint32_t wi = tg_operand(&g, "w", BERTH_OPERAND_WEIGHT, BERTH_DTYPE_F32, 2, tb ? DIMS(n, k) : DIMS(k, n));
    g.ops[wi].weight = 0;
    uint32_t ci = ck == C_COLS ? tg_input(&g, "c", BERTH_DTYPE_F32, 1, DIMS(n))
                  : ck == C_ROWS ? tg_input(&g, "c", BERTH_DTYPE_F32, 2, DIMS(m, 1))
                  : ck == C_FULL ? tg_input(&g, "c", BERTH_DTYPE_F32, 2, DIMS(m, n))
                                 : tg_input(&g, "c", BERTH_DTYPE_F32, 1, DIMS(1));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(m, n));
    berth_attr at[4] = {A_BOOL("bTranspose", tb), A_FLOAT("alpha", alpha), A_FLOAT("beta", beta), A_OPND("c", ci)};
    tg_node(&g, "gemm", 2, IDX(ai, wi), 1, IDX(yi), ck == C_NONE ? 3 : 4, at);
    tg_output(&g, yi);
    berth_error err = {{0}};
    berth_status st = h_run_w(&g, w, (void *[]){a, cv}, (void *[]){y}, &err);
    CHECK(st == BERTH_OK);
    char what[160];
    snprintf(what, sizeof what, "%s gemm m %lld k %lld n %lld bTranspose %d c %s alpha %g beta %g", isa_name,
             (long long)m, (long long)k, (long long)n, tb, cks[ck], alpha, beta);
    if (st) fprintf(stderr, "  %s: %s\n", what, err.msg);
    else h_close_tol(what, y, ref, (size_t)(m * n), 1e-4, 1e-4 * sqrt((double)k));
    cpu.be->free_weights(w);
    free(a), free(wt), free(cv), free(y), free(ref);
}

static void test_gemm_weights(void) {
    static const int64_t sizes[][3] = {{1, 1536, 128}, {1, 96, 1}, {2, 64, 33}, {5, 70, 37}, {40, 130, 65}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int tb = 0; tb < 2; tb++)
            for (int ck = C_NONE; ck <= C_SCALAR; ck++) check_gemm(sizes[i][0], sizes[i][1], sizes[i][2], tb, ck, 1, 1);
    check_gemm(3, 50, 20, 1, C_COLS, 0.5f, 1);
    check_gemm(3, 50, 20, 1, C_FULL, 1, 2.0f);
    check_gemm(3, 50, 20, 0, C_COLS, 1, 0);
}

static void test_epilogues(void) {
    for (int bias_on = 0; bias_on < 2; bias_on++)
        for (int act = 0; act < 5; act++)
            for (int res_on = 0; res_on < 2; res_on++) check_product(2, 11, 70, 37, 1, bias_on, act, res_on);
    check_product(1, 130, 300, 70, 1, 1, 2, 1);
}

/* ---- quantized weights: berth.matmulQuantized against the unfused
 * dequantizeLinear -> matmul -> add -> gelu -> add on this module, and
 * both against a double reference; the weights stay at their packed size */

static uint32_t q_seed = 12345u;
static int q_next(int lo, int hi) {
    q_seed = q_seed * 1664525u + 1013904223u;
    return lo + (int)((q_seed >> 8) % (uint32_t)(hi - lo + 1));
}

/* n values of dtype t into vals, stored as uploaded (4-bit: two per byte). */
static uint8_t *q_store(berth_dtype t, size_t n, int *vals, size_t *bytes) {
    int lo = t == BERTH_DTYPE_I8 ? -128 : t == BERTH_DTYPE_I4 ? -8 : 0;
    int hi = t == BERTH_DTYPE_I8 ? 127 : t == BERTH_DTYPE_U8 ? 255 : t == BERTH_DTYPE_I4 ? 7 : 15;
    int packed = t == BERTH_DTYPE_I4 || t == BERTH_DTYPE_U4;
    *bytes = packed ? (n + 1) / 2 : n;
    uint8_t *p = calloc(*bytes ? *bytes : 1, 1);
    for (size_t i = 0; i < n; i++) {
        vals[i] = q_next(lo, hi);
        if (packed) p[i / 2] |= (uint8_t)((vals[i] & 15) << (4 * (i % 2)));
        else p[i] = (uint8_t)vals[i];
    }
    return p;
}

static void check_quantized(berth_dtype t, int64_t batch, int64_t m, int64_t k, int64_t n, int64_t g) {
    size_t rows = (size_t)(batch * m), kn = (size_t)(k * n), gn = (size_t)(g * n);
    int *bq = malloc(sizeof(int) * kn), *zq = malloc(sizeof(int) * gn);
    size_t bb, zb;
    uint8_t *bd = q_store(t, kn, bq, &bb), *zd = q_store(t, gn, zq, &zb);
    float *sc = malloc(sizeof(float) * gn), *x = h_randf(rows * (size_t)k), *bias = h_randf((size_t)n);
    float *r = h_randf(rows * (size_t)n), *y1 = calloc(rows * (size_t)n, 4), *y2 = calloc(rows * (size_t)n, 4);
    for (size_t i = 0; i < gn; i++) sc[i] = 0.002f + 0.0001f * (float)q_next(0, 100);
    double *ref = h_zeros(rows * (size_t)n);
    int64_t block = k / g;
    for (size_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) {
                size_t bi = (size_t)((p / block) * n + j);
                s += (double)x[i * (size_t)k + (size_t)p] * ((double)(bq[p * n + j] - zq[bi]) * sc[bi]);
            }
            s += bias[j];
            ref[i * (size_t)n + (size_t)j] = 0.5 * s * (1.0 + erf(s / sqrt(2.0))) + r[i * (size_t)n + (size_t)j];
        }
    berth_weights *w = h_upload_quantized(t, k, n, g, bd, bb, sc, zd, zb);
    berth_error err = {{0}};
    for (int fused = 0; fused < 2; fused++) {
        tgraph gr = {0};
        uint32_t xi = tg_input(&gr, "x", BERTH_DTYPE_F32, 3, DIMS(batch, m, k));
        uint32_t ri = tg_input(&gr, "r", BERTH_DTYPE_F32, 3, DIMS(batch, m, n));
        uint32_t qi = tg_operand(&gr, "q", BERTH_OPERAND_WEIGHT, t, 2, DIMS(k, n));
        uint32_t si = tg_operand(&gr, "s", BERTH_OPERAND_WEIGHT, BERTH_DTYPE_F32, 2, DIMS(g, n));
        uint32_t zi = tg_operand(&gr, "z", BERTH_OPERAND_WEIGHT, t, 2, DIMS(g, n));
        gr.ops[qi].weight = 0, gr.ops[si].weight = 1, gr.ops[zi].weight = 2;
        uint32_t bi = tg_const(&gr, "bias", BERTH_DTYPE_F32, 1, DIMS(n), bias, sizeof(float) * (size_t)n);
        uint32_t yi = tg_value(&gr, "y", BERTH_DTYPE_F32, 3, DIMS(batch, m, n));
        if (fused) {
            tg_node(&gr, "berth.matmulQuantized", 4, IDX(xi, qi, si, zi), 1, IDX(yi), 3,
                    (berth_attr[]){A_OPND("bias", bi), A_STR("activation", "gelu"), A_OPND("residual", ri)});
        } else {
            uint32_t wd = tg_value(&gr, "wd", BERTH_DTYPE_F32, 2, DIMS(k, n));
            uint32_t mm = tg_value(&gr, "mm", BERTH_DTYPE_F32, 3, DIMS(batch, m, n));
            uint32_t ad = tg_value(&gr, "ad", BERTH_DTYPE_F32, 3, DIMS(batch, m, n));
            uint32_t ge = tg_value(&gr, "ge", BERTH_DTYPE_F32, 3, DIMS(batch, m, n));
            tg_node(&gr, "dequantizeLinear", 3, IDX(qi, si, zi), 1, IDX(wd), 0, NULL);
            tg_node(&gr, "matmul", 2, IDX(xi, wd), 1, IDX(mm), 0, NULL);
            tg_node(&gr, "add", 2, IDX(mm, bi), 1, IDX(ad), 0, NULL);
            tg_node(&gr, "gelu", 1, IDX(ad), 1, IDX(ge), 0, NULL);
            tg_node(&gr, "add", 2, IDX(ge, ri), 1, IDX(yi), 0, NULL);
        }
        tg_output(&gr, yi);
        berth_status st = h_run_w(&gr, w, (void *[]){x, r}, (void *[]){fused ? y2 : y1}, &err);
        CHECK(st == BERTH_OK);
        if (st) fprintf(stderr, "  quantized %s: %s\n", fused ? "fused" : "unfused", err.msg);
    }
    char what[160];
    snprintf(what, sizeof what, "%s quantized %s batch %lld m %lld k %lld n %lld blocks %lld", isa_name,
             t == BERTH_DTYPE_I8 ? "int8" : t == BERTH_DTYPE_U8 ? "uint8" : t == BERTH_DTYPE_I4 ? "int4" : "uint4",
             (long long)batch, (long long)m, (long long)k, (long long)n, (long long)g);
    double tol = 1e-4 * sqrt((double)k);
    h_close_tol(what, y2, ref, rows * (size_t)n, 1e-4, tol);
    double *unfused = h_zeros(rows * (size_t)n);
    for (size_t i = 0; i < rows * (size_t)n; i++) unfused[i] = y1[i];
    h_close_tol(what, y2, unfused, rows * (size_t)n, 1e-4, tol);
    /* after both plans ran, the weights are held as uploaded: no float copy */
    CHECK(cpu.be->weights_bytes(w) == bb + zb + 4 * gn);
    cpu.be->free_weights(w);
    free(bq), free(zq), free(bd), free(zd), free(sc), free(x), free(bias), free(r), free(y1), free(y2), free(ref),
        free(unfused);
}

static void test_quantized(void) {
    /* {batch, m, k, n, blocks along k}: one row; tiles and k blocks cut
     * off on every side; an odd count of 4-bit values (45 x 11); a k of
     * 257 with one block; rows past the row block; an even n of whole
     * panels (every 4-bit row starts on a byte: the vector unpacking) */
    static const int64_t shapes[][5] = {{1, 1, 64, 33, 2},   {1, 3, 96, 37, 3},    {2, 5, 45, 11, 5},
                                        {1, 25, 160, 67, 5}, {1, 130, 300, 70, 10}, {3, 7, 19, 45, 1},
                                        {1, 200, 257, 97, 1}, {1, 9, 320, 96, 10}};
    static const berth_dtype types[] = {BERTH_DTYPE_I8, BERTH_DTYPE_U8, BERTH_DTYPE_I4, BERTH_DTYPE_U4};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (size_t t = 0; t < 4; t++)
            check_quantized(types[t], shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], shapes[i][4]);
}

/* Two plans on one weight share one packed copy, counted once. */
static void test_shared_packing(void) {
    enum { M = 9, K = 20, N = 24 };
    float *wt = h_randf(K * N), *x = h_randf(M * K), y[M * N];
    berth_weights *w = upload(wt, K * N, K, N);
    uint64_t before = cpu.be->weights_bytes(w);
    CHECK(before == sizeof(float) * K * N);
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(M, K));
    uint32_t wi = tg_operand(&g, "w", BERTH_OPERAND_WEIGHT, BERTH_DTYPE_F32, 2, DIMS(K, N));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(M, N));
    tg_node(&g, "matmul", 2, IDX(xi, wi), 1, IDX(yi), 0, NULL);
    tg_output(&g, yi);
    berth_graph_desc d = tg_desc(&g);
    berth_plan *p1 = NULL, *p2 = NULL;
    berth_error err;
    CHECK(cpu.be->plan(cpu.dev, w, &d, &p1, &err) == BERTH_OK);
    /* the packed panels (at least k x n floats) replace the weight: no
     * plan reads it unpacked */
    uint64_t after1 = cpu.be->weights_bytes(w);
    CHECK(after1 >= before && after1 < 2 * before);
    CHECK(cpu.be->plan(cpu.dev, w, &d, &p2, &err) == BERTH_OK);
    CHECK(cpu.be->weights_bytes(w) == after1);
    berth_tensor ti = h_tensor(&g.ops[xi], x), to = h_tensor(&g.ops[yi], y);
    if (p2) {
        CHECK(cpu.be->run(p2, &ti, 1, &to, 1, &err) == BERTH_OK);
        double ref[M * N];
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int p = 0; p < K; p++) s += (double)x[i * K + p] * wt[p * N + j];
                ref[i * N + j] = s;
            }
        h_close("shared packing", y, ref, M * N);
    }
    /* A plan that reads the weight unpacked (an add) gets it back, rebuilt
     * from the panels exactly, held beside them while that plan lives. */
    tgraph g2 = {0};
    uint32_t wa = tg_operand(&g2, "w", BERTH_OPERAND_WEIGHT, BERTH_DTYPE_F32, 2, DIMS(K, N));
    uint32_t za = tg_input(&g2, "z", BERTH_DTYPE_F32, 2, DIMS(K, N));
    uint32_t sa = tg_value(&g2, "s", BERTH_DTYPE_F32, 2, DIMS(K, N));
    tg_node(&g2, "add", 2, IDX(wa, za), 1, IDX(sa), 0, NULL);
    tg_output(&g2, sa);
    berth_graph_desc d2 = tg_desc(&g2);
    berth_plan *p3 = NULL;
    CHECK(cpu.be->plan(cpu.dev, w, &d2, &p3, &err) == BERTH_OK);
    CHECK(cpu.be->weights_bytes(w) == after1 + before);
    if (p3) {
        static float zero[K * N], back[K * N];
        berth_tensor tz = h_tensor(&g2.ops[za], zero), ts = h_tensor(&g2.ops[sa], back);
        CHECK(cpu.be->run(p3, &tz, 1, &ts, 1, &err) == BERTH_OK);
        CHECK(memcmp(back, wt, sizeof back) == 0);
    }
    cpu.be->free_plan(p3);
    CHECK(cpu.be->weights_bytes(w) == after1);
    cpu.be->free_plan(p1), cpu.be->free_plan(p2);
    cpu.be->free_weights(w);
    free(wt), free(x);
}

/* x [b, h, s, d] copied as [b, s, h, d]. */
static float *heads_swapped(const float *x, int b, int h, int s, int d) {
    float *y = malloc(sizeof(float) * (size_t)(b * h * s * d));
    for (int i = 0; i < b; i++)
        for (int j = 0; j < h; j++)
            for (int t = 0; t < s; t++) memcpy(y + ((i * s + t) * h + j) * d, x + ((i * h + j) * s + t) * d, sizeof(float) * d);
    return y;
}

/* transpose [0, 2, 1, 3] of q, k and v in [b, s, h, d], berth.attention,
 * the output transposed back, into y2; with `shared`, the attention's
 * output is also a graph output (y3), and q's transpose too, so neither
 * may stay in place. m: the plan's memory. */
static int attention_token_major(const float *q, const float *k, const float *v, const float *mask, double scale,
                                 int shared, float *y2, float *y3, berth_plan_memory *m) {
    enum { B = 2, H = 3, SQ = 13, SK = 37, D = 17, DV = 19 };
    tgraph g = {0};
    uint32_t qi = tg_input(&g, "q", BERTH_DTYPE_F32, 4, DIMS(B, SQ, H, D));
    uint32_t ki = tg_input(&g, "k", BERTH_DTYPE_F32, 4, DIMS(B, SK, H, D));
    uint32_t vi = tg_input(&g, "v", BERTH_DTYPE_F32, 4, DIMS(B, SK, H, DV));
    uint32_t mi = tg_input(&g, "m", BERTH_DTYPE_F32, 4, DIMS(B, 1, SQ, SK));
    uint32_t qh = tg_value(&g, "qh", BERTH_DTYPE_F32, 4, DIMS(B, H, SQ, D));
    uint32_t kh = tg_value(&g, "kh", BERTH_DTYPE_F32, 4, DIMS(B, H, SK, D));
    uint32_t vh = tg_value(&g, "vh", BERTH_DTYPE_F32, 4, DIMS(B, H, SK, DV));
    uint32_t yh = tg_value(&g, "yh", BERTH_DTYPE_F32, 4, DIMS(B, H, SQ, DV));
    uint32_t yt = tg_value(&g, "yt", BERTH_DTYPE_F32, 4, DIMS(B, SQ, H, DV));
    const berth_attr perm = A_INTS("permutation", 4, 0, 2, 1, 3);
    tg_node(&g, "transpose", 1, IDX(qi), 1, IDX(qh), 1, &perm);
    tg_node(&g, "transpose", 1, IDX(ki), 1, IDX(kh), 1, &perm);
    tg_node(&g, "transpose", 1, IDX(vi), 1, IDX(vh), 1, &perm);
    tg_node(&g, "berth.attention", 3, IDX(qh, kh, vh), 1, IDX(yh), 2,
            (berth_attr[]){A_FLOAT("scale", scale), A_OPND("mask", mi)});
    tg_node(&g, "transpose", 1, IDX(yh), 1, IDX(yt), 1, &perm);
    tg_output(&g, yt);
    if (shared) tg_output(&g, yh), tg_output(&g, qh);
    float *qcopy = malloc(sizeof(float) * B * H * SQ * D);
    berth_graph_desc d = tg_desc(&g);
    berth_plan *p = NULL;
    berth_error err = {{0}};
    berth_status st = cpu.be->plan(cpu.dev, NULL, &d, &p, &err);
    if (!st) st = cpu.be->plan_memory(p, m, &err);
    if (!st) {
        berth_tensor ti[4], to[3];
        const void *in[4] = {q, k, v, mask};
        void *out[3] = {y2, y3, qcopy};
        for (uint32_t i = 0; i < g.n_ins; i++) ti[i] = h_tensor(&g.ops[g.ins[i]], (void *)in[i]);
        for (uint32_t i = 0; i < g.n_outs; i++) to[i] = h_tensor(&g.ops[g.outs[i]], out[i]);
        st = cpu.be->run(p, ti, g.n_ins, to, g.n_outs, &err);
    }
    if (p) cpu.be->free_plan(p);
    CHECK(st == BERTH_OK);
    if (st) fprintf(stderr, "  status %d: %s\n", (int)st, err.msg);
    if (!st && shared) /* q's transpose as an output: a real copy, heads first */
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++)
                for (int t = 0; t < SQ; t++)
                    CHECK(!memcmp(qcopy + ((b * H + h) * SQ + t) * D, q + ((b * SQ + t) * H + h) * D, sizeof(float) * D));
    free(qcopy);
    return st == BERTH_OK;
}

/* berth.attention on sizes off every tile, with a broadcast mask that
 * blanks a whole row in one head, against a double reference. */
static void test_attention(void) {
    enum { B = 2, H = 3, SQ = 13, SK = 37, D = 17, DV = 19 };
    float *q = h_randf(B * H * SQ * D), *k = h_randf(B * H * SK * D), *v = h_randf(B * H * SK * DV);
    float *mask = h_randf(B * SQ * SK), *y = calloc(B * H * SQ * DV, sizeof *y);
    for (int i = 0; i < SK; i++) mask[(1 * SQ + 4) * SK + i] = -INFINITY; /* batch 1, row 4: all keys masked */
    double *ref = h_zeros(B * H * SQ * DV), sc[SK], scale = 0.3;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < SQ; i++) {
                const float *qr = q + ((b * H + h) * SQ + i) * D;
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j < SK; j++) {
                    const float *kr = k + ((b * H + h) * SK + j) * D;
                    double s = 0;
                    for (int p = 0; p < D; p++) s += (double)qr[p] * kr[p];
                    sc[j] = s * scale + mask[(b * SQ + i) * SK + j];
                    mx = fmax(mx, sc[j]);
                }
                for (int j = 0; j < SK; j++) sum += sc[j] = isinf(mx) ? 0.0 : exp(sc[j] - mx);
                for (int c = 0; c < DV; c++) {
                    double o = 0;
                    for (int j = 0; j < SK; j++) o += sc[j] / (sum > 0 ? sum : 1) * v[((b * H + h) * SK + j) * DV + c];
                    ref[((b * H + h) * SQ + i) * DV + c] = o;
                }
            }
    tgraph g = {0};
    uint32_t qi = tg_input(&g, "q", BERTH_DTYPE_F32, 4, DIMS(B, H, SQ, D));
    uint32_t ki = tg_input(&g, "k", BERTH_DTYPE_F32, 4, DIMS(B, H, SK, D));
    uint32_t vi = tg_input(&g, "v", BERTH_DTYPE_F32, 4, DIMS(B, H, SK, DV));
    uint32_t mi = tg_input(&g, "m", BERTH_DTYPE_F32, 4, DIMS(B, 1, SQ, SK));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 4, DIMS(B, H, SQ, DV));
    tg_node(&g, "berth.attention", 3, IDX(qi, ki, vi), 1, IDX(yi), 2,
            (berth_attr[]){A_FLOAT("scale", scale), A_OPND("mask", mi)});
    tg_output(&g, yi);
    char what[64];
    snprintf(what, sizeof what, "%s attention", isa_name);
    if (h_ok(&g, (void *[]){q, k, v, mask}, (void *[]){y})) h_close(what, y, ref, B * H * SQ * DV);
    /* the same in token-major layout: transposes of heads past tokens
     * around it, as an encoder has them */
    float *qt = heads_swapped(q, B, H, SQ, D), *kt = heads_swapped(k, B, H, SK, D), *vt = heads_swapped(v, B, H, SK, DV);
    double *rt = h_zeros(B * H * SQ * DV);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < SQ; i++)
                for (int c = 0; c < DV; c++) rt[((b * SQ + i) * H + h) * DV + c] = ref[((b * H + h) * SQ + i) * DV + c];
    for (int shared = 0; shared < 2; shared++) {
        float *y2 = calloc(B * H * SQ * DV, sizeof *y2), *y3 = calloc(B * H * SQ * DV, sizeof *y3);
        berth_plan_memory m = {.struct_size = sizeof m};
        int ok = attention_token_major(qt, kt, vt, mask, scale, shared, y2, y3, &m);
        snprintf(what, sizeof what, "%s attention, token-major%s", isa_name, shared ? ", y also an output" : "");
        if (ok) h_close(what, y2, rt, B * H * SQ * DV);
        if (ok && shared) h_close(what, y3, ref, B * H * SQ * DV);
        /* heads swapped in place: the transposes copy nothing, and the
         * arena holds the attention's output alone (and its scratch) */
        uint64_t yb = (uint64_t)B * H * SQ * DV * sizeof(float);
        if (ok && !shared) CHECK(m.intermediates >= yb && m.intermediates <= (yb + 63) / 64 * 64);
        free(y2), free(y3);
    }
    free(qt), free(kt), free(vt), free(rt);
    free(q), free(k), free(v), free(mask), free(y), free(ref);
}

/* layerNormalization over the trailing dims (the contiguous-row path) at
 * a length off the sixteen summing lanes, with scale and bias. */
static void test_layer_norm_rows(void) {
    enum { R = 5, N = 389 };
    float *x = h_randf(R * N), *sc = h_randf(N), *bs = h_randf(N), *y = calloc(R * N, sizeof *y);
    double *ref = h_zeros(R * N);
    for (int r = 0; r < R; r++) x[r * N + 7] += 3.0f * (float)r; /* a shifted mean per row */
    for (int r = 0; r < R; r++) {
        double m = 0, var = 0;
        for (int i = 0; i < N; i++) m += x[r * N + i];
        m /= N;
        for (int i = 0; i < N; i++) var += (x[r * N + i] - m) * (x[r * N + i] - m);
        var /= N;
        for (int i = 0; i < N; i++) ref[r * N + i] = (x[r * N + i] - m) / sqrt(var + 1e-5) * sc[i] + bs[i];
    }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(R, N));
    uint32_t si = tg_const(&g, "s", BERTH_DTYPE_F32, 1, DIMS(N), sc, sizeof(float) * N);
    uint32_t bi = tg_const(&g, "b", BERTH_DTYPE_F32, 1, DIMS(N), bs, sizeof(float) * N);
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(R, N));
    tg_node(&g, "layerNormalization", 1, IDX(xi), 1, IDX(yi), 3,
            (berth_attr[]){A_INTS("axes", 1, 1), A_OPND("scale", si), A_OPND("bias", bi)});
    tg_output(&g, yi);
    if (h_ok(&g, (void *[]){x}, (void *[]){y})) h_close("layerNorm rows", y, ref, R * N);
    free(x), free(sc), free(bs), free(y), free(ref);
}

/* conv2d (NCHW, OIHW) with bias against a direct reference: the direct
 * kernel (stride 1: groups, padding, dilation, filters of fewer rows
 * than a tile, a last tile of rows that overlaps the one above, images
 * of one to many tiles), the im2col product (stride 2), the 1x1 product
 * (as one product per image, or in column blocks over the batch and the
 * groups) and the depthwise loop (stride 2, uneven padding). */
static void check_conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t kh, int64_t kw, int64_t groups,
                       int64_t s, int64_t dil, const int64_t *pad) {
    int64_t cg = c / groups, og = o / groups;
    int64_t oh = (h + pad[0] + pad[1] - dil * (kh - 1) - 1) / s + 1, ow = (w + pad[2] + pad[3] - dil * (kw - 1) - 1) / s + 1;
    size_t nx = (size_t)(n * c * h * w), nf = (size_t)(o * cg * kh * kw), ny = (size_t)(n * o * oh * ow);
    float *x = h_randf(nx), *f = h_randf(nf), *b = h_randf((size_t)o), *y = calloc(ny, sizeof *y);
    double *ref = h_zeros(ny);
    for (int64_t in = 0; in < n; in++)
        for (int64_t oc = 0; oc < o; oc++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    double acc = b[oc];
                    int64_t g = oc / og;
                    for (int64_t ic = 0; ic < cg; ic++)
                        for (int64_t ki = 0; ki < kh; ki++)
                            for (int64_t kj = 0; kj < kw; kj++) {
                                int64_t iy = oy * s - pad[0] + ki * dil, ix = ox * s - pad[2] + kj * dil;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                acc += (double)x[((in * c + g * cg + ic) * h + iy) * w + ix] *
                                       f[((oc * cg + ic) * kh + ki) * kw + kj];
                            }
                    ref[((in * o + oc) * oh + oy) * ow + ox] = acc;
                }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 4, DIMS(n, c, h, w));
    uint32_t fi = tg_const(&g, "f", BERTH_DTYPE_F32, 4, DIMS(o, cg, kh, kw), f, sizeof(float) * nf);
    uint32_t bi = tg_const(&g, "b", BERTH_DTYPE_F32, 1, DIMS(o), b, sizeof(float) * (size_t)o);
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 4, DIMS(n, o, oh, ow));
    tg_node(&g, "conv2d", 2, IDX(xi, fi), 1, IDX(yi), 5,
            (berth_attr[]){A_INTS("padding", 4, pad[0], pad[1], pad[2], pad[3]), A_INTS("strides", 2, s, s),
                           A_INTS("dilations", 2, dil, dil), A_INT("groups", groups), A_OPND("bias", bi)});
    tg_output(&g, yi);
    char what[128];
    snprintf(what, sizeof what, "%s conv c %lld o %lld k %lldx%lld groups %lld stride %lld", isa_name, (long long)c,
             (long long)o, (long long)kh, (long long)kw, (long long)groups, (long long)s);
    if (h_ok(&g, (void *[]){x}, (void *[]){y})) h_close(what, y, ref, ny);
    free(x), free(f), free(b), free(y), free(ref);
}

static void test_conv(void) {
    check_conv(2, 6, 11, 13, 10, 3, 3, 2, 2, 1, DIMS(1, 2, 0, 1));  /* im2col, groups 2, og 5 */
    check_conv(1, 7, 9, 35, 17, 3, 2, 1, 1, 2, DIMS(2, 1, 1, 0));  /* direct, dilation 2, og 17 */
    check_conv(2, 6, 11, 13, 10, 3, 3, 2, 1, 1, DIMS(1, 2, 0, 1));  /* direct, groups 2, og 5 */
    check_conv(1, 16, 41, 45, 24, 3, 3, 1, 1, 1, DIMS(1, 1, 1, 1)); /* direct, many tiles, og 24 */
    check_conv(2, 9, 3, 2, 13, 1, 3, 1, 1, 1, DIMS(0, 0, 1, 1));    /* direct, 1x3 on a 3x2 image */
    check_conv(1, 8, 12, 30, 40, 5, 5, 4, 1, 1, DIMS(2, 2, 2, 2));  /* direct 5x5, groups 4, og 10 */
    check_conv(2, 13, 5, 7, 33, 1, 1, 1, 1, 1, DIMS(0, 0, 0, 0));  /* 1x1 product */
    check_conv(3, 8, 20, 30, 12, 1, 1, 2, 1, 1, DIMS(0, 0, 0, 0)); /* 1x1 in column blocks, batch 3, groups 2 */
    check_conv(4, 6, 30, 34, 8, 3, 3, 2, 2, 1, DIMS(1, 0, 1, 1));  /* im2col blocks: a block per image */
    check_conv(1, 5, 9, 10, 5, 3, 3, 5, 2, 1, DIMS(1, 1, 1, 2));   /* depthwise, stride 2 */
    check_conv(2, 3, 8, 37, 3, 5, 5, 3, 1, 1, DIMS(2, 2, 2, 2));   /* depthwise 5x5 */
    check_conv(1, 4, 7, 19, 4, 3, 3, 4, 1, 2, DIMS(2, 1, 3, 0));   /* depthwise 3x3, dilation 2 */
    check_conv(1, 2, 3, 4, 2, 5, 5, 2, 1, 1, DIMS(2, 2, 2, 2));    /* depthwise wider than the image */
    check_conv(1, 4, 6, 6, 3, 3, 3, 1, 1, 1, DIMS(1, 1, 1, 1));    /* 3 outputs: OpenBLAS */
}

/* erf and gelu (vectorized polynomials) against libm in double over
 * [-6, 6], tiny and special values. */
static void test_erf(void) {
    enum { N = 4801 + 6 };
    static float x[N], y[N], z[N];
    static double ref[N], refg[N];
    for (int i = 0; i < 4801; i++) x[i] = -6.0f + 0.0025f * (float)i;
    const float special[6] = {1e-6f, -3e-20f, 0.99999994f, 1.0000001f, INFINITY, -INFINITY};
    for (int i = 0; i < 6; i++) x[4801 + i] = special[i];
    for (int i = 0; i < N; i++) {
        ref[i] = erf((double)x[i]);
        refg[i] = isinf(x[i]) ? (x[i] > 0 ? INFINITY : 0.0) : 0.5 * x[i] * (1.0 + erf(x[i] / sqrt(2.0)));
    }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(N));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(N)), zi = tg_value(&g, "z", BERTH_DTYPE_F32, 1, DIMS(N));
    tg_node(&g, "erf", 1, IDX(xi), 1, IDX(yi), 0, NULL);
    tg_node(&g, "gelu", 1, IDX(xi), 1, IDX(zi), 0, NULL);
    tg_output(&g, yi);
    tg_output(&g, zi);
    if (h_ok(&g, (void *[]){x}, (void *[]){y, z})) {
        h_close_tol("erf", y, ref, N, 4e-7, 2e-7);
        h_close_tol("gelu", z, refg, N - 2, 4e-7, 4e-7);
        CHECK(z[N - 2] == INFINITY);
    }
    float nan_in = NAN, nan_out = 0;
    tgraph h = {0};
    xi = tg_input(&h, "x", BERTH_DTYPE_F32, 1, DIMS(1));
    yi = tg_value(&h, "y", BERTH_DTYPE_F32, 1, DIMS(1));
    tg_node(&h, "erf", 1, IDX(xi), 1, IDX(yi), 0, NULL);
    tg_output(&h, yi);
    if (h_ok(&h, (void *[]){&nan_in}, (void *[]){&nan_out})) CHECK(isnan(nan_out));
}

/* softmax over the last axis (the vectorized path) on rows off the
 * sixteen lanes, large logits, and a row of -inf (NaN, as e^(-inf+inf)). */
static void test_softmax_rows(void) {
    enum { R = 4, N = 1001 };
    float *x = h_randf(R * N), *y = calloc(R * N, sizeof *y);
    double *ref = h_zeros(R * N);
    for (int i = 0; i < N; i++) x[1 * N + i] *= 80.0f;
    for (int i = 0; i < N; i++) x[3 * N + i] = -INFINITY;
    for (int r = 0; r < 3; r++) {
        double mx = -INFINITY, sum = 0;
        for (int i = 0; i < N; i++) mx = fmax(mx, x[r * N + i]);
        for (int i = 0; i < N; i++) sum += exp(x[r * N + i] - mx);
        for (int i = 0; i < N; i++) ref[r * N + i] = exp(x[r * N + i] - mx) / sum;
    }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(R, N));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(R, N));
    tg_node(&g, "softmax", 1, IDX(xi), 1, IDX(yi), 1, (berth_attr[]){A_INT("axis", 1)});
    tg_output(&g, yi);
    if (h_ok(&g, (void *[]){x}, (void *[]){y})) {
        h_close_tol("softmax rows", y, ref, 3 * N, 1e-5, 1e-9);
        int nan_row = 1;
        for (int i = 0; i < N; i++) nan_row &= isnan(y[3 * N + i]);
        CHECK(nan_row);
    }
    free(x), free(y), free(ref);
}

/* Many small pool jobs back to back (a chain of 200 adds, each split in
 * two chunks), run 30 times: a worker that woke late for a finished job
 * must never run a piece of the next one. Float adds in the same order
 * as the reference give bit-identical results. */
static void test_pool_chain(void) {
    enum { R = 300, C = 70, LEN = 200 };
    float *x = h_randf(R * C), *k = h_randf(C), *y = calloc(R * C, sizeof *y), *want = malloc(sizeof(float) * R * C);
    for (int i = 0; i < R * C; i++) {
        float v = x[i];
        for (int s = 0; s < LEN; s++) v = v + k[i % C];
        want[i] = v;
    }
    tgraph *g = calloc(1, sizeof *g);
    uint32_t prev = tg_input(g, "x", BERTH_DTYPE_F32, 2, DIMS(R, C));
    uint32_t ki = tg_const(g, "k", BERTH_DTYPE_F32, 1, DIMS(C), k, sizeof(float) * C);
    for (int s = 0; s < LEN; s++) {
        uint32_t o = tg_value(g, s + 1 < LEN ? "t" : "y", BERTH_DTYPE_F32, 2, DIMS(R, C));
        tg_node(g, "add", 2, IDX(prev, ki), 1, IDX(o), 0, NULL);
        prev = o;
    }
    tg_output(g, prev);
    berth_graph_desc d = tg_desc(g);
    berth_plan *p = NULL;
    berth_error err;
    CHECK(cpu.be->plan(cpu.dev, NULL, &d, &p, &err) == BERTH_OK);
    berth_tensor ti = h_tensor(&g->ops[g->ins[0]], x), to = h_tensor(&g->ops[prev], y);
    int same = 1;
    for (int rep = 0; p && rep < 30; rep++) {
        memset(y, 0, sizeof(float) * R * C);
        CHECK(cpu.be->run(p, &ti, 1, &to, 1, &err) == BERTH_OK);
        same &= memcmp(y, want, sizeof(float) * R * C) == 0;
    }
    CHECK(same);
    cpu.be->free_plan(p);
    free(g), free(x), free(k), free(y), free(want);
}

/* The kernels "auto" picked, from the device's name. */
static void check_auto_picks(const char *want) {
    berth_caps caps = {.struct_size = sizeof caps};
    berth_error err;
    CHECK(cpu.be->caps(cpu.dev, &caps, &err) == BERTH_OK);
    char kernels[32];
    snprintf(kernels, sizeof kernels, ", %s kernels)", want);
    CHECK_CONTAINS(caps.device_name, kernels);
}

int main(void) {
    static const char *const isas[] = {"generic", "avx2", "avx512", "neon", "auto"};
    int ran = 0, ran_neon = 0;
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++)
        for (int threads = 1; threads <= 2; threads++) {
            isa_name = isas[i];
            if (!open_with(isas[i], threads)) continue;
            ran++;
            ran_neon += !strcmp(isas[i], "neon");
#if defined(__aarch64__)
            if (!strcmp(isas[i], "auto")) check_auto_picks("neon");
#endif
            test_sizes();
            test_epilogues();
            test_gemm_weights();
            test_quantized();
            test_attention();
            test_layer_norm_rows();
            test_conv();
            if (threads == 1) test_erf();
            test_softmax_rows();
            test_pool_chain();
            if (threads == 1) test_shared_packing();
            h_shutdown();
        }
    /* generic and auto everywhere, each with 1 and 2 threads, and every
     * path this cpu has; never another architecture's */
#if defined(__x86_64__)
    __builtin_cpu_init();
    int fma = __builtin_cpu_supports("fma");
    int has2 = fma && __builtin_cpu_supports("avx2"), has512 = fma && __builtin_cpu_supports("avx512f");
    CHECK(ran == 4 + 2 * has2 + 2 * has512);
    CHECK(ran_neon == 0);
#elif defined(__aarch64__)
    CHECK(ran == 6); /* generic, neon, auto (every arm64 Linux cpu has Advanced SIMD) */
    CHECK(ran_neon == 2);
#else
    CHECK(ran == 4);
#endif
    return check_exit();
}
