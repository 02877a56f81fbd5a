/* Normalizations, gemm, the fused matmul epilogue and attention on the
 * vulkan backend, against reference loops here and the cpu backend. */
#include "vk_harness.h"

static void test_layer_norm(void) {
    const int64_t A = 3, B = 4, C = 5;
    float *x = h_randf(A * B * C), *sc = h_randf(C * B), *bi = h_randf(C * B), got[60];
    double ref[60];
    /* axes [2, 1]: scale and bias are [C, B], in the order of axes. */
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 3, DIMS(A, B, C)), si = tg_input(&g, "s", BERTH_DTYPE_F32, 2, DIMS(C, B));
    uint32_t bb = tg_input(&g, "b", BERTH_DTYPE_F32, 2, DIMS(C, B)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 3, DIMS(A, B, C));
    tg_node(&g, "layerNormalization", 1, IDX(xi), 1, IDX(yi), 4,
            (berth_attr[]){A_INTS("axes", 2, 2, 1), A_FLOAT("epsilon", 1e-3), A_OPND("scale", si), A_OPND("bias", bb)});
    tg_output(&g, yi);
    for (int64_t a = 0; a < A; a++) {
        double m = 0, v = 0;
        for (int64_t i = 0; i < B * C; i++) m += x[a * B * C + i] / (double)(B * C);
        for (int64_t i = 0; i < B * C; i++) v += pow(x[a * B * C + i] - m, 2) / (double)(B * C);
        for (int64_t b = 0; b < B; b++)
            for (int64_t c = 0; c < C; c++)
                ref[(a * B + b) * C + c] = (x[(a * B + b) * C + c] - m) / sqrt(v + 1e-3) * sc[c * B + b] + bi[c * B + b];
    }
    if (h_ok(&g, (void *const[]){x, sc, bi}, (void *const[]){got})) {
        h_close("layerNormalization", got, ref, 60);
        h_same_as_cpu("layerNormalization vs cpu", &g, NULL, (void *const[]){x, sc, bi}, (void *const[]){got});
    }
    /* instanceNormalization in NHWC with scale only. */
    tgraph g2 = {0};
    uint32_t x2 = tg_input(&g2, "x", BERTH_DTYPE_F32, 4, DIMS(1, 3, 4, 5)), s2 = tg_input(&g2, "s", BERTH_DTYPE_F32, 1, DIMS(5));
    uint32_t y2 = tg_value(&g2, "y", BERTH_DTYPE_F32, 4, DIMS(1, 3, 4, 5));
    tg_node(&g2, "instanceNormalization", 1, IDX(x2), 1, IDX(y2), 2, (berth_attr[]){A_STR("layout", "nhwc"), A_OPND("scale", s2)});
    tg_output(&g2, y2);
    for (int64_t c = 0; c < 5; c++) {
        double m = 0, v = 0;
        for (int64_t i = 0; i < 12; i++) m += x[i * 5 + c] / 12.0;
        for (int64_t i = 0; i < 12; i++) v += pow(x[i * 5 + c] - m, 2) / 12.0;
        for (int64_t i = 0; i < 12; i++) ref[i * 5 + c] = (x[i * 5 + c] - m) / sqrt(v + 1e-5) * sc[c];
    }
    if (h_ok(&g2, (void *const[]){x, sc}, (void *const[]){got})) {
        h_close("instanceNormalization", got, ref, 60);
        h_same_as_cpu("instanceNormalization vs cpu", &g2, NULL, (void *const[]){x, sc}, (void *const[]){got});
    }
    free(x), free(sc), free(bi);
}

static void test_batch_norm(void) {
    float *x = h_randf(2 * 3 * 4), *mean = h_randf(3), *var = h_randf(3), *sc = h_randf(3), *bi = h_randf(3), got[24];
    for (int i = 0; i < 3; i++) var[i] = fabsf(var[i]) + 0.1f;
    double ref[24];
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 3, DIMS(2, 3, 4)), mi = tg_input(&g, "m", BERTH_DTYPE_F32, 1, DIMS(3));
    uint32_t vi = tg_input(&g, "v", BERTH_DTYPE_F32, 1, DIMS(3)), si = tg_input(&g, "s", BERTH_DTYPE_F32, 1, DIMS(3));
    uint32_t bb = tg_input(&g, "b", BERTH_DTYPE_F32, 1, DIMS(3)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 3, DIMS(2, 3, 4));
    tg_node(&g, "batchNormalization", 3, IDX(xi, mi, vi), 1, IDX(yi), 3,
            (berth_attr[]){A_OPND("scale", si), A_OPND("bias", bb), A_FLOAT("epsilon", 0.01)});
    tg_output(&g, yi);
    for (int i = 0; i < 24; i++) {
        int c = (i / 4) % 3;
        ref[i] = (x[i] - mean[c]) / sqrt(var[c] + 0.01) * sc[c] + bi[c];
    }
    if (h_ok(&g, (void *const[]){x, mean, var, sc, bi}, (void *const[]){got})) h_close("batchNormalization", got, ref, 24);
    free(x), free(mean), free(var), free(sc), free(bi);
}

static void test_gemm_epilogue(void) {
    /* gemm: 0.5 * a^T b^T + 2 * c, a [K, M], b [N, K], c [N] broadcast over rows. */
    const int64_t M = 5, N = 7, K = 6;
    float *a = h_randf(K * M), *b = h_randf(N * K), *cv = h_randf(N), got[35];
    double ref[35];
    tgraph g = {0};
    uint32_t ai = tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(K, M)), bi = tg_input(&g, "b", BERTH_DTYPE_F32, 2, DIMS(N, K));
    uint32_t ci = tg_input(&g, "c", BERTH_DTYPE_F32, 1, DIMS(N)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(M, N));
    tg_node(&g, "gemm", 2, IDX(ai, bi), 1, IDX(yi), 5,
            (berth_attr[]){A_BOOL("aTranspose", 1), A_BOOL("bTranspose", 1), A_FLOAT("alpha", 0.5), A_FLOAT("beta", 2.0),
                           A_OPND("c", ci)});
    tg_output(&g, yi);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t t = 0; t < K; t++) s += (double)a[t * M + i] * b[j * K + t];
            ref[i * N + j] = 0.5 * s + 2.0 * cv[j];
        }
    if (h_ok(&g, (void *const[]){a, b, cv}, (void *const[]){got})) {
        h_close("gemm", got, ref, 35);
        h_same_as_cpu("gemm vs cpu", &g, NULL, (void *const[]){a, b, cv}, (void *const[]){got});
    }
    /* berth.matmulEpilogue: gelu(a @ b + bias) + residual, batched. */
    tgraph g2 = {0};
    float *x = h_randf(2 * M * K), *w = h_randf(K * N), *bias = h_randf(N), *res = h_randf(2 * M * N), got2[70];
    double ref2[70];
    uint32_t xi = tg_input(&g2, "x", BERTH_DTYPE_F32, 3, DIMS(2, M, K)), wi = tg_input(&g2, "w", BERTH_DTYPE_F32, 2, DIMS(K, N));
    uint32_t bsi = tg_input(&g2, "bias", BERTH_DTYPE_F32, 1, DIMS(N)), ri = tg_input(&g2, "res", BERTH_DTYPE_F32, 3, DIMS(2, M, N));
    uint32_t oi = tg_value(&g2, "y", BERTH_DTYPE_F32, 3, DIMS(2, M, N));
    tg_node(&g2, "berth.matmulEpilogue", 2, IDX(xi, wi), 1, IDX(oi), 3,
            (berth_attr[]){A_STR("activation", "gelu"), A_OPND("bias", bsi), A_OPND("residual", ri)});
    tg_output(&g2, oi);
    for (int64_t z = 0; z < 2; z++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = bias[j];
                for (int64_t t = 0; t < K; t++) s += (double)x[(z * M + i) * K + t] * w[t * N + j];
                ref2[(z * M + i) * N + j] = 0.5 * s * (1 + erf(s / sqrt(2.0))) + res[(z * M + i) * N + j];
            }
    if (h_ok(&g2, (void *const[]){x, w, bias, res}, (void *const[]){got2})) {
        h_close("matmulEpilogue", got2, ref2, 70);
        h_same_as_cpu("matmulEpilogue vs cpu", &g2, NULL, (void *const[]){x, w, bias, res}, (void *const[]){got2});
    }
    free(a), free(b), free(cv), free(x), free(w), free(bias), free(res);
}

static void check_attention(int with_mask) {
    const int64_t B = 2, H = 3, SQ = 4, SK = 5, D = 8, DV = 6;
    size_t nq = B * H * SQ * D, nk = B * H * SK * D, nv = B * H * SK * DV, ny = B * H * SQ * DV;
    float *q = h_randf(nq), *k = h_randf(nk), *v = h_randf(nv), *m = h_randf(SQ * SK), *got = calloc(ny, 4);
    /* The last query row is fully masked: its output is zeros. */
    for (int64_t j = 0; j < SK; j++) m[(SQ - 1) * SK + j] = -INFINITY;
    double *ref = h_zeros(ny), sc = 1.0 / sqrt((double)D);
    for (int64_t t = 0; t < B * H; t++)
        for (int64_t i = 0; i < SQ; i++) {
            double s[5], mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < SK; j++) {
                double acc = 0;
                for (int64_t d = 0; d < D; d++) acc += (double)q[(t * SQ + i) * D + d] * k[(t * SK + j) * D + d];
                s[j] = acc * sc + (with_mask ? m[i * SK + j] : 0);
                mx = fmax(mx, s[j]);
            }
            for (int64_t j = 0; j < SK; j++) sum += s[j] = isinf(mx) ? 0 : exp(s[j] - mx);
            for (int64_t e = 0; e < DV; e++) {
                double acc = 0;
                for (int64_t j = 0; j < SK; j++) acc += (sum > 0 ? s[j] / sum : 0) * v[(t * SK + j) * DV + e];
                ref[(t * SQ + i) * DV + e] = acc;
            }
        }
    tgraph g = {0};
    uint32_t qi = tg_input(&g, "q", BERTH_DTYPE_F32, 4, DIMS(B, H, SQ, D)), ki = tg_input(&g, "k", BERTH_DTYPE_F32, 4, DIMS(B, H, SK, D));
    uint32_t vi = tg_input(&g, "v", BERTH_DTYPE_F32, 4, DIMS(B, H, SK, DV)), mi = tg_input(&g, "m", BERTH_DTYPE_F32, 2, DIMS(SQ, SK));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 4, DIMS(B, H, SQ, DV));
    tg_node(&g, "berth.attention", 3, IDX(qi, ki, vi), 1, IDX(yi), with_mask ? 1 : 0, (berth_attr[]){A_OPND("mask", mi)});
    tg_output(&g, yi);
    if (h_ok(&g, (void *const[]){q, k, v, m}, (void *const[]){got})) {
        h_close(with_mask ? "attention masked" : "attention", got, ref, ny);
        h_same_as_cpu("attention vs cpu", &g, NULL, (void *const[]){q, k, v, m}, (void *const[]){got});
    }
    free(q), free(k), free(v), free(m), free(got), free(ref);
}

int main(void) {
    h_start();
    test_layer_norm();
    test_batch_norm();
    test_gemm_epilogue();
    check_attention(0);
    check_attention(1);
    h_stop();
    return check_exit();
}
