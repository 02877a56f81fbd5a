#include <float.h>
/* Normalizations, gemm and the fused ops the engine emits
 * (berth.matmulEpilogue, berth.attention) against plain references. */
#include "cpu_harness.h"

static void test_layer_norm(void) {
    enum { A = 3, B = 4, C = 5 };
    float *x = h_randf(A * B * C), *scale = h_randf(C * A), *bias = h_randf(C * A), y[A * B * C];
    double ref[A * B * C];
    /* default axes [1, 2], no scale or bias */
    for (int a = 0; a < A; a++) {
        double m = 0, v = 0;
        for (int i = 0; i < B * C; i++) m += x[a * B * C + i];
        m /= B * C;
        for (int i = 0; i < B * C; i++) v += (x[a * B * C + i] - m) * (x[a * B * C + i] - m);
        v /= B * C;
        for (int i = 0; i < B * C; i++) ref[a * B * C + i] = (x[a * B * C + i] - m) / sqrt(v + 1e-5);
    }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 3, DIMS(A, B, C)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 3, DIMS(A, B, C));
    tg_node(&g, "layerNormalization", 1, IDX(xi), 1, IDX(yi), 0, NULL);
    tg_output(&g, yi);
    if (h_ok(&g, (void *[]){x}, (void *[]){y})) h_close("layerNorm default", y, ref, A * B * C);

    /* axes [2, 0] (listed out of order): scale and bias are [C, A]; epsilon 0.1 */
    for (int b = 0; b < B; b++) {
        double m = 0, v = 0;
        for (int a = 0; a < A; a++)
            for (int c = 0; c < C; c++) m += x[(a * B + b) * C + c];
        m /= A * C;
        for (int a = 0; a < A; a++)
            for (int c = 0; c < C; c++) v += (x[(a * B + b) * C + c] - m) * (x[(a * B + b) * C + c] - m);
        v /= A * C;
        for (int a = 0; a < A; a++)
            for (int c = 0; c < C; c++)
                ref[(a * B + b) * C + c] = (x[(a * B + b) * C + c] - m) / sqrt(v + 0.1) * scale[c * A + a] + bias[c * A + a];
    }
    tgraph h = {0};
    xi = tg_input(&h, "x", BERTH_DTYPE_F32, 3, DIMS(A, B, C));
    uint32_t si = tg_const(&h, "s", BERTH_DTYPE_F32, 2, DIMS(C, A), scale, sizeof(float) * C * A);
    uint32_t bi = tg_const(&h, "b", BERTH_DTYPE_F32, 2, DIMS(C, A), bias, sizeof(float) * C * A);
    yi = tg_value(&h, "y", BERTH_DTYPE_F32, 3, DIMS(A, B, C));
    tg_node(&h, "layerNormalization", 1, IDX(xi), 1, IDX(yi), 4,
            (berth_attr[]){A_INTS("axes", 2, 2, 0), A_FLOAT("epsilon", 0.1), A_OPND("scale", si), A_OPND("bias", bi)});
    tg_output(&h, yi);
    if (h_ok(&h, (void *[]){x}, (void *[]){y})) h_close("layerNorm axes", y, ref, A * B * C);
    free(x), free(scale), free(bias);
}

static void test_batch_norm(void) {
    enum { N = 2, C = 3, S = 5 };
    float *x = h_randf(N * C * S), *mean = h_randf(C), *var = h_randf(C), *sc = h_randf(C), *bs = h_randf(C);
    for (int c = 0; c < C; c++) var[c] = fabsf(var[c]) + 0.1f;
    float y[N * C * S];
    double ref[N * C * S];
    /* axis 1 with scale and bias */
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int s = 0; s < S; s++) {
                int i = (n * C + c) * S + s;
                ref[i] = (x[i] - mean[c]) / sqrt(var[c] + 1e-3) * sc[c] + bs[c];
            }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 3, DIMS(N, C, S));
    uint32_t mi = tg_input(&g, "m", BERTH_DTYPE_F32, 1, DIMS(C)), vi = tg_input(&g, "v", BERTH_DTYPE_F32, 1, DIMS(C));
    uint32_t si = tg_input(&g, "s", BERTH_DTYPE_F32, 1, DIMS(C)), bi = tg_input(&g, "b", BERTH_DTYPE_F32, 1, DIMS(C));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 3, DIMS(N, C, S));
    tg_node(&g, "batchNormalization", 3, IDX(xi, mi, vi), 1, IDX(yi), 3,
            (berth_attr[]){A_OPND("scale", si), A_OPND("bias", bi), A_FLOAT("epsilon", 1e-3)});
    tg_output(&g, yi);
    if (h_ok(&g, (void *[]){x, mean, var, sc, bs}, (void *[]){y})) h_close("batchNorm", y, ref, N * C * S);
    /* axis -1 over [N*S, C]-shaped data, defaults otherwise */
    for (int r = 0; r < N * S; r++)
        for (int c = 0; c < C; c++) ref[r * C + c] = (x[r * C + c] - mean[c]) / sqrt(var[c] + 1e-5);
    tgraph h = {0};
    xi = tg_input(&h, "x", BERTH_DTYPE_F32, 2, DIMS(N * S, C));
    mi = tg_input(&h, "m", BERTH_DTYPE_F32, 1, DIMS(C)), vi = tg_input(&h, "v", BERTH_DTYPE_F32, 1, DIMS(C));
    yi = tg_value(&h, "y", BERTH_DTYPE_F32, 2, DIMS(N * S, C));
    tg_node(&h, "batchNormalization", 3, IDX(xi, mi, vi), 1, IDX(yi), 1, (berth_attr[]){A_INT("axis", -1)});
    tg_output(&h, yi);
    if (h_ok(&h, (void *[]){x, mean, var}, (void *[]){y})) h_close("batchNorm axis -1", y, ref, N * C * S);
    free(x), free(mean), free(var), free(sc), free(bs);
}

static void test_gemm(void) {
    enum { M = 4, K = 6, N = 5 };
    float *a = h_randf(M * K), *b = h_randf(K * N), *c = h_randf(N), y[M * N];
    double ref[M * N];
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            /* a is stored [K, M] when transposed, b [N, K] */
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double s = 0;
                    for (int q = 0; q < K; q++) s += (double)(ta ? a[q * M + i] : a[i * K + q]) * (tb ? b[j * K + q] : b[q * N + j]);
                    ref[i * N + j] = 0.5 * s + 2.0 * c[j];
                }
            tgraph g = {0};
            uint32_t ai = tg_input(&g, "a", BERTH_DTYPE_F32, 2, ta ? DIMS(K, M) : DIMS(M, K));
            uint32_t bi = tg_input(&g, "b", BERTH_DTYPE_F32, 2, tb ? DIMS(N, K) : DIMS(K, N));
            uint32_t ci = tg_input(&g, "c", BERTH_DTYPE_F32, 1, DIMS(N));
            uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(M, N));
            tg_node(&g, "gemm", 2, IDX(ai, bi), 1, IDX(yi), 5,
                    (berth_attr[]){A_OPND("c", ci), A_FLOAT("alpha", 0.5), A_FLOAT("beta", 2.0), A_BOOL("aTranspose", ta),
                                   A_BOOL("bTranspose", tb)});
            tg_output(&g, yi);
            if (h_ok(&g, (void *[]){a, b, c}, (void *[]){y})) h_close("gemm", y, ref, M * N);
        }
    /* defaults: no c, alpha 1 */
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int q = 0; q < K; q++) s += (double)a[i * K + q] * b[q * N + j];
            ref[i * N + j] = s;
        }
    tgraph g = {0};
    uint32_t ai = tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(M, K)), bi = tg_input(&g, "b", BERTH_DTYPE_F32, 2, DIMS(K, N));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(M, N));
    tg_node(&g, "gemm", 2, IDX(ai, bi), 1, IDX(yi), 0, NULL);
    tg_output(&g, yi);
    if (h_ok(&g, (void *[]){a, b}, (void *[]){y})) h_close("gemm defaults", y, ref, M * N);
    free(a), free(b), free(c);
}

static double act(const char *name, double v) {
    if (!strcmp(name, "relu")) return v > 0 ? v : 0;
    if (!strcmp(name, "gelu")) return 0.5 * v * (1 + erf(v / sqrt(2.0)));
    if (!strcmp(name, "sigmoid")) return 1 / (1 + exp(-v));
    if (!strcmp(name, "tanh")) return tanh(v);
    return v;
}

static void test_epilogue(void) {
    enum { BT = 2, M = 3, K = 8, N = 6 };
    static const char *const acts[] = {"none", "relu", "gelu", "sigmoid", "tanh"};
    float *a = h_randf(BT * M * K), *b = h_randf(K * N), *bias = h_randf(N), *res = h_randf(BT * M * N), y[BT * M * N];
    double ref[BT * M * N];
    for (int k = 0; k < 5; k++)
        for (int with = 0; with < 2; with++) {
            for (int r = 0; r < BT * M; r++)
                for (int j = 0; j < N; j++) {
                    double s = with ? bias[j] : 0;
                    for (int q = 0; q < K; q++) s += (double)a[r * K + q] * b[q * N + j];
                    ref[r * N + j] = act(acts[k], s) + (with ? res[r * N + j] : 0);
                }
            tgraph g = {0};
            uint32_t ai = tg_input(&g, "a", BERTH_DTYPE_F32, 3, DIMS(BT, M, K));
            uint32_t bi = tg_const(&g, "b", BERTH_DTYPE_F32, 2, DIMS(K, N), b, sizeof(float) * K * N);
            uint32_t bb = tg_const(&g, "bias", BERTH_DTYPE_F32, 1, DIMS(N), bias, sizeof(float) * N);
            uint32_t ri = tg_input(&g, "res", BERTH_DTYPE_F32, 3, DIMS(BT, M, N));
            uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 3, DIMS(BT, M, N));
            tg_node(&g, "berth.matmulEpilogue", 2, IDX(ai, bi), 1, IDX(yi), with ? 3 : 1,
                    (berth_attr[]){A_STR("activation", acts[k]), A_OPND("bias", bb), A_OPND("residual", ri)});
            tg_output(&g, yi);
            if (h_ok(&g, (void *[]){a, res}, (void *[]){y})) h_close(acts[k], y, ref, BT * M * N);
        }
    /* an unknown activation is named */
    tgraph g = {0};
    uint32_t ai = tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(M, K)), bi = tg_input(&g, "b", BERTH_DTYPE_F32, 2, DIMS(K, N));
    uint32_t yi = tg_value(&g, "fused", BERTH_DTYPE_F32, 2, DIMS(M, N));
    tg_node(&g, "berth.matmulEpilogue", 2, IDX(ai, bi), 1, IDX(yi), 1, (berth_attr[]){A_STR("activation", "swish")});
    tg_output(&g, yi);
    berth_error err;
    CHECK(h_run(&g, (void *[]){a, b}, (void *[]){y}, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "swish");
    CHECK_CONTAINS(err.msg, "fused");
    free(a), free(b), free(bias), free(res);
}

static void test_attention(void) {
    enum { B = 2, H = 3, SQ = 4, SK = 5, D = 8 };
    float *q = h_randf(B * H * SQ * D), *k = h_randf(B * H * SK * D), *v = h_randf(B * H * SK * D);
    float *mask = h_randf(B * SQ * SK), y[B * H * SQ * D];
    double ref[B * H * SQ * D];
    for (int masked = 0; masked < 2; masked++) {
        double scale = masked ? 0.7 : 1.0 / sqrt((double)D);
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++)
                for (int i = 0; i < SQ; i++) {
                    double s[SK], mx = -INFINITY, sum = 0;
                    for (int j = 0; j < SK; j++) {
                        double t = 0;
                        for (int d = 0; d < D; d++)
                            t += (double)q[((b * H + h) * SQ + i) * D + d] * k[((b * H + h) * SK + j) * D + d];
                        s[j] = t * scale + (masked ? mask[(b * SQ + i) * SK + j] : 0); /* mask [B, 1, SQ, SK] */
                        mx = fmax(mx, s[j]);
                    }
                    for (int j = 0; j < SK; j++) sum += s[j] = exp(s[j] - mx);
                    for (int d = 0; d < D; d++) {
                        double o = 0;
                        for (int j = 0; j < SK; j++) o += s[j] / sum * v[((b * H + h) * SK + j) * D + d];
                        ref[((b * H + h) * SQ + i) * D + d] = o;
                    }
                }
        tgraph g = {0};
        uint32_t qi = tg_input(&g, "q", BERTH_DTYPE_F32, 4, DIMS(B, H, SQ, D));
        uint32_t ki = tg_input(&g, "k", BERTH_DTYPE_F32, 4, DIMS(B, H, SK, D));
        uint32_t vi = tg_input(&g, "v", BERTH_DTYPE_F32, 4, DIMS(B, H, SK, D));
        uint32_t mi = tg_input(&g, "mask", BERTH_DTYPE_F32, 4, DIMS(B, 1, SQ, SK));
        uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 4, DIMS(B, H, SQ, D));
        tg_node(&g, "berth.attention", 3, IDX(qi, ki, vi), 1, IDX(yi), masked ? 2 : 0,
                (berth_attr[]){A_OPND("mask", mi), A_FLOAT("scale", 0.7)});
        tg_output(&g, yi);
        if (h_ok(&g, (void *[]){q, k, v, mask}, (void *[]){y})) h_close(masked ? "attention masked" : "attention", y, ref, B * H * SQ * D);
    }
    free(q), free(k), free(v), free(mask);

    /* rank 3, v wider than q, a [SQ, SK] mask shared by every batch */
    enum { T = 3, DV = 6 };
    q = h_randf(T * SQ * D), k = h_randf(T * SK * D), v = h_randf(T * SK * DV), mask = h_randf(SQ * SK);
    float y3[T * SQ * DV];
    double r3[T * SQ * DV];
    for (int t = 0; t < T; t++)
        for (int i = 0; i < SQ; i++) {
            double s[SK], mx = -INFINITY, sum = 0;
            for (int j = 0; j < SK; j++) {
                double acc = 0;
                for (int d = 0; d < D; d++) acc += (double)q[(t * SQ + i) * D + d] * k[(t * SK + j) * D + d];
                s[j] = acc / sqrt((double)D) + mask[i * SK + j];
                mx = fmax(mx, s[j]);
            }
            for (int j = 0; j < SK; j++) sum += s[j] = exp(s[j] - mx);
            for (int d = 0; d < DV; d++) {
                double o = 0;
                for (int j = 0; j < SK; j++) o += s[j] / sum * v[(t * SK + j) * DV + d];
                r3[(t * SQ + i) * DV + d] = o;
            }
        }
    tgraph g = {0};
    uint32_t qi = tg_input(&g, "q", BERTH_DTYPE_F32, 3, DIMS(T, SQ, D));
    uint32_t ki = tg_input(&g, "k", BERTH_DTYPE_F32, 3, DIMS(T, SK, D));
    uint32_t vi = tg_input(&g, "v", BERTH_DTYPE_F32, 3, DIMS(T, SK, DV));
    uint32_t mi = tg_input(&g, "mask", BERTH_DTYPE_F32, 2, DIMS(SQ, SK));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 3, DIMS(T, SQ, DV));
    tg_node(&g, "berth.attention", 3, IDX(qi, ki, vi), 1, IDX(yi), 1, (berth_attr[]){A_OPND("mask", mi)});
    tg_output(&g, yi);
    if (h_ok(&g, (void *[]){q, k, v, mask}, (void *[]){y3})) h_close("attention rank 3", y3, r3, T * SQ * DV);
    free(q), free(k), free(v), free(mask);
}

/* Entries masked by -10000 weigh exactly 0: no denormal comes out of a
 * softmax (they made a padded BERT batch eight times slower); the exp op
 * itself keeps its exact tiny results. */
static void test_masked_softmax(void) {
    float x[6] = {0.5f, -10000.0f, 1.0f, -41.0f, 2.0f, -10000.0f}, y[6];
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(1, 6));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(1, 6));
    tg_node(&g, "softmax", 1, IDX(xi), 1, IDX(yi), 1, (berth_attr[]){A_INT("axis", 1)});
    tg_output(&g, yi);
    if (h_ok(&g, (void *[]){x}, (void *[]){y})) {
        CHECK(y[1] == 0.0f && y[5] == 0.0f);
        CHECK(y[3] == 0.0f); /* 43 below the largest: under 4e-19 of it */
        double sum = exp(0.5 - 2.0) + exp(1.0 - 2.0) + 1.0;
        CHECK(fabs(y[4] - 1.0 / sum) < 1e-6 && fabs(y[0] - exp(0.5 - 2.0) / sum) < 1e-6);
        for (int i = 0; i < 6; i++) CHECK(y[i] == 0.0f || y[i] >= FLT_MIN);
    }
    float e[3] = {-100.0f, -50.0f, -INFINITY}, z[3];
    tgraph h = {0};
    uint32_t ei = tg_input(&h, "e", BERTH_DTYPE_F32, 1, DIMS(3));
    uint32_t zi = tg_value(&h, "z", BERTH_DTYPE_F32, 1, DIMS(3));
    tg_node(&h, "exp", 1, IDX(ei), 1, IDX(zi), 0, NULL);
    tg_output(&h, zi);
    if (h_ok(&h, (void *[]){e}, (void *[]){z})) {
        CHECK(z[0] < 1e-40f && z[2] == 0.0f);
        CHECK(fabs(z[1] - exp(-50.0)) < 1e-6 * exp(-50.0));
    }
}

int main(void) {
    if (!h_open(2)) {
        CHECK(0);
        return check_exit();
    }
    test_layer_norm();
    test_batch_norm();
    test_gemm();
    test_epilogue();
    test_attention();
    test_masked_softmax();
    h_shutdown();
    return check_exit();
}
