/* The kernel variants the vulkan backend picks by shape at plan time, each
 * against reference loops here and the cpu backend where built: matmul
 * reading vec4s from both operands, from A only, or floats (row and column
 * tails of its 8 x 8 tiles, broadcast batches), gemm with transposes on
 * each path, and binary and unary ops on their four-at-a-time shaders
 * (same-shape and single-value operands on either side) beside the
 * general broadcasting ones, and chains of them fused into one pass (the
 * recognizer's hardSwish and affine spelled as mul/add/clamp/div). */
#include "vk_harness.h"

/* a [batch or 1, M, K] times b [K, N] or [batch, K, N]. */
static void check_matmul(int64_t batch, int a_batched, int b_batched, int64_t M, int64_t K, int64_t N) {
    int64_t na = (a_batched ? batch : 1) * M * K, nb = (b_batched ? batch : 1) * K * N, ny = batch * M * N;
    float *a = h_randf((size_t)na), *b = h_randf((size_t)nb), *got = calloc((size_t)ny, 4);
    double *ref = h_zeros((size_t)ny);
    for (int64_t z = 0; z < batch; z++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t t = 0; t < K; t++)
                    s += (double)a[((a_batched ? z : 0) * M + i) * K + t] * b[((b_batched ? z : 0) * K + t) * N + j];
                ref[(z * M + i) * N + j] = s;
            }
    tgraph g = {0};
    uint32_t ai = a_batched ? tg_input(&g, "a", BERTH_DTYPE_F32, 3, DIMS(batch, M, K))
                            : tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(M, K));
    uint32_t bi = b_batched ? tg_input(&g, "b", BERTH_DTYPE_F32, 3, DIMS(batch, K, N))
                            : tg_input(&g, "b", BERTH_DTYPE_F32, 2, DIMS(K, N));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 3, DIMS(batch, M, N));
    tg_node(&g, "matmul", 2, IDX(ai, bi), 1, IDX(yi), 0, NULL);
    tg_output(&g, yi);
    char what[96];
    snprintf(what, sizeof what, "matmul [%lld, %lld, %lld] x [%lld, %lld]", (long long)batch, (long long)M,
             (long long)K, (long long)K, (long long)N);
    if (h_ok(&g, (void *const[]){a, b}, (void *const[]){got})) {
        h_close(what, got, ref, (size_t)ny);
        h_same_as_cpu(what, &g, NULL, (void *const[]){a, b}, (void *const[]){got});
    }
    free(a), free(b), free(got), free(ref);
}

static void test_matmul_paths(void) {
    check_matmul(2, 1, 0, 13, 20, 36);  /* vec4 A and B; B shared by the batch */
    check_matmul(3, 1, 1, 9, 8, 16);    /* vec4 A and B, both batched */
    check_matmul(1, 1, 0, 20, 12, 30);  /* vec4 A only: N is not a multiple of 4 */
    check_matmul(2, 0, 1, 7, 7, 9);     /* floats: K is not a multiple of 4 */
    check_matmul(1, 1, 0, 1, 4, 4);     /* one row, one vec4 */
    check_matmul(1, 1, 0, 17, 64, 72);  /* several tiles each way, long k */
}

/* gemm with each transpose: the transposed operand has k stride != 1, so
 * it leaves the vec4 path; alpha scales. */
static void test_gemm_paths(void) {
    const int64_t M = 10, N = 12, K = 8;
    float *a = h_randf(M * K), *b = h_randf(K * N), got[120];
    double ref[120];
    for (int t = 0; t < 4; t++) {
        int ta = t & 1, tb = t >> 1;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (double)(ta ? a[k * M + i] : a[i * K + k]) * (tb ? b[j * K + k] : b[k * N + j]);
                ref[i * N + j] = 1.5 * s;
            }
        tgraph g = {0};
        uint32_t ai = ta ? tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(K, M)) : tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(M, K));
        uint32_t bi = tb ? tg_input(&g, "b", BERTH_DTYPE_F32, 2, DIMS(N, K)) : tg_input(&g, "b", BERTH_DTYPE_F32, 2, DIMS(K, N));
        uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(M, N));
        tg_node(&g, "gemm", 2, IDX(ai, bi), 1, IDX(yi), 3,
                (berth_attr[]){A_BOOL("aTranspose", ta), A_BOOL("bTranspose", tb), A_FLOAT("alpha", 1.5)});
        tg_output(&g, yi);
        if (h_ok(&g, (void *const[]){a, b}, (void *const[]){got})) {
            h_close(ta ? (tb ? "gemm aT bT" : "gemm aT") : (tb ? "gemm bT" : "gemm"), got, ref, 120);
            h_same_as_cpu("gemm paths vs cpu", &g, NULL, (void *const[]){a, b}, (void *const[]){got});
        }
    }
    free(a), free(b);
}

static double bin_ref(int op, double x, double z) {
    return op == 0 ? x + z : op == 1 ? x - z : op == 2 ? x * z : x / z;
}

/* x op z over [n / 2, 2], each operand either that shape or a single value. */
static void check_binary(int op, int64_t n, int x_one, int z_one) {
    static const char *const names[] = {"add", "sub", "mul", "div"};
    float *x = h_randf((size_t)n), *z = h_randf((size_t)n), *got = calloc((size_t)n, 4);
    double *ref = h_zeros((size_t)n);
    for (int64_t i = 0; op == 3 && i < n; i++) z[i] = z[i] >= 0 ? z[i] + 0.5f : z[i] - 0.5f; /* away from 0 */
    for (int64_t i = 0; i < n; i++) ref[i] = bin_ref(op, x[x_one ? 0 : i], z[z_one ? 0 : i]);
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, x_one ? DIMS(1, 1) : DIMS(n / 2, 2));
    uint32_t zi = z_one ? tg_input(&g, "z", BERTH_DTYPE_F32, 1, DIMS(1)) : tg_input(&g, "z", BERTH_DTYPE_F32, 2, DIMS(n / 2, 2));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(n / 2, 2));
    tg_node(&g, names[op], 2, IDX(xi, zi), 1, IDX(yi), 0, NULL);
    tg_output(&g, yi);
    char what[64];
    snprintf(what, sizeof what, "%s of %lld%s%s", names[op], (long long)n, x_one ? ", x single" : "",
             z_one ? ", z single" : "");
    if (h_ok(&g, (void *const[]){x, z}, (void *const[]){got})) {
        h_close(what, got, ref, (size_t)n);
        h_same_as_cpu(what, &g, NULL, (void *const[]){x, z}, (void *const[]){got});
    }
    free(x), free(z), free(got), free(ref);
}

static void test_binary_paths(void) {
    for (int op = 0; op < 4; op++) {
        check_binary(op, 24, 0, 0);  /* four at a time */
        check_binary(op, 24, 0, 1);
        check_binary(op, 24, 1, 0);
        check_binary(op, 22, 0, 0);  /* 22 elements: the general shader */
        check_binary(op, 22, 1, 0);
    }
    /* A channel broadcast ([C, 1] against [C, W]) stays general even at a
     * multiple of 4. */
    const int64_t C = 4, W = 6;
    float *x = h_randf(C * W), *s = h_randf(C), got[24];
    double ref[24];
    for (int64_t c = 0; c < C; c++)
        for (int64_t w = 0; w < W; w++) ref[c * W + w] = (double)x[c * W + w] * s[c];
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(C, W)), si = tg_input(&g, "s", BERTH_DTYPE_F32, 2, DIMS(C, 1));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(C, W));
    tg_node(&g, "mul", 2, IDX(xi, si), 1, IDX(yi), 0, NULL);
    tg_output(&g, yi);
    if (h_ok(&g, (void *const[]){x, s}, (void *const[]){got})) h_close("mul by channel", got, ref, 24);
    free(x), free(s);
}

static void test_unary_paths(void) {
    static const int64_t sizes[] = {24, 7, 4, 1};
    for (int k = 0; k < 4; k++) {
        int64_t n = sizes[k];
        float *x = h_randf((size_t)n), *got = calloc((size_t)n, 4);
        double *ref = h_zeros((size_t)n);
        for (int64_t i = 0; i < n; i++) {
            double v = x[i] * 4.0;
            x[i] = (float)v;
            ref[i] = v * fmin(fmax(v + 3.0, 0.0), 6.0) / 6.0;
        }
        tgraph g = {0};
        uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(n)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(n));
        tg_node(&g, "hardSwish", 1, IDX(xi), 1, IDX(yi), 0, NULL);
        tg_output(&g, yi);
        if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) {
            h_close("hardSwish", got, ref, (size_t)n);
            h_same_as_cpu("hardSwish vs cpu", &g, NULL, (void *const[]){x}, (void *const[]){got});
        }
        free(x), free(got), free(ref);
    }
}

/* y = sigmoid(t - hardSwish(w0 * x + w1) ) with hardSwish spelled
 * a * clamp(a + 3, 0, 6) / 6, all single values but x and t; with
 * a_out set, a = w0 * x + w1 is a graph output too, which splits the run. */
static void check_chain(int a_out) {
    enum { N = 96 };
    float *x = h_randf(N), *t = h_randf(N), w0 = 3.5f, w1 = -0.25f, c3 = 3.0f, c6 = 6.0f;
    float got_y[N], got_a[N];
    double ref_y[N], ref_a[N];
    for (int i = 0; i < N; i++) {
        double a = (double)w0 * x[i] + w1, hs = a * fmin(fmax(a + c3, 0.0), 6.0) / c6;
        ref_a[i] = a;
        ref_y[i] = 1.0 / (1.0 + exp(-(t[i] - hs)));
    }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 4, DIMS(2, 3, 4, 4)), ti = tg_input(&g, "t", BERTH_DTYPE_F32, 4, DIMS(2, 3, 4, 4));
    uint32_t w0i = tg_input(&g, "w0", BERTH_DTYPE_F32, 1, DIMS(1)), w1i = tg_input(&g, "w1", BERTH_DTYPE_F32, 1, DIMS(1));
    uint32_t c3i = tg_input(&g, "c3", BERTH_DTYPE_F32, 1, DIMS(1)), c6i = tg_input(&g, "c6", BERTH_DTYPE_F32, 1, DIMS(1));
    uint32_t v[8];
    static const char *const names[8] = {"m1", "a", "a5", "c1", "m3", "hs", "s", "y"};
    for (int k = 0; k < 8; k++) v[k] = tg_value(&g, names[k], BERTH_DTYPE_F32, 4, DIMS(2, 3, 4, 4));
    tg_node(&g, "mul", 2, IDX(w0i, xi), 1, IDX(v[0]), 0, NULL);
    tg_node(&g, "add", 2, IDX(v[0], w1i), 1, IDX(v[1]), 0, NULL);
    tg_node(&g, "add", 2, IDX(v[1], c3i), 1, IDX(v[2]), 0, NULL);
    tg_node(&g, "clamp", 1, IDX(v[2]), 1, IDX(v[3]), 2, (berth_attr[]){A_FLOAT("minValue", 0.0), A_FLOAT("maxValue", 6.0)});
    tg_node(&g, "mul", 2, IDX(v[1], v[3]), 1, IDX(v[4]), 0, NULL);
    tg_node(&g, "div", 2, IDX(v[4], c6i), 1, IDX(v[5]), 0, NULL);
    tg_node(&g, "sub", 2, IDX(ti, v[5]), 1, IDX(v[6]), 0, NULL);
    tg_node(&g, "sigmoid", 1, IDX(v[6]), 1, IDX(v[7]), 0, NULL);
    tg_output(&g, v[7]);
    if (a_out) tg_output(&g, v[1]);
    void *const in[] = {x, t, &w0, &w1, &c3, &c6};
    if (h_ok(&g, in, a_out ? (void *const[]){got_y, got_a} : (void *const[]){got_y})) {
        h_close(a_out ? "fused chain, split" : "fused chain", got_y, ref_y, N);
        if (a_out) h_close("fused chain's inner output", got_a, ref_a, N);
        h_same_as_cpu("fused chain vs cpu", &g, NULL, in, a_out ? (void *const[]){got_y, got_a} : (void *const[]){got_y});
    }
    free(x), free(t);
}

int main(void) {
    h_start();
    check_chain(0);
    check_chain(1);
    test_matmul_paths();
    test_gemm_paths();
    test_binary_paths();
    test_unary_paths();
    h_stop();
    return check_exit();
}
