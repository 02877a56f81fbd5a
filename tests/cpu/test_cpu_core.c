/* The first vertical slice through the ABI: matmul (2-D, batched with
 * broadcast batch dims, 1-D rules), broadcasting binary ops in f32, i32
 * and i64, relu, reshape and identity, and matmul + add + relu over a
 * batch. References are plain loops in double. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu_harness.h"

/* y[batch..., m, n] = a @ b with numpy batch broadcasting. */
static void ref_matmul(const float *a, uint32_t ar, const int64_t *ad, const float *b, uint32_t br,
                       const int64_t *bd, double *y, uint32_t yr, const int64_t *yd) {
    int64_t m = ad[ar - 2], k = ad[ar - 1], n = bd[br - 1];
    size_t batches = 1;
    for (uint32_t d = 0; d + 2 < yr; d++) batches *= (size_t)yd[d];
    for (size_t bi = 0; bi < batches; bi++) {
        int64_t idx[8] = {0};
        h_unravel(bi, yr - 2, yd, idx);
        idx[yr - 2] = 0;
        idx[yr - 1] = 0;
        size_t oa = h_bcast_off(idx, yr, ar, ad), ob = h_bcast_off(idx, yr, br, bd);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t q = 0; q < k; q++) s += (double)a[oa + i * k + q] * b[ob + q * n + j];
                y[bi * m * n + i * n + j] = s;
            }
    }
}

static void test_matmul_case(uint32_t ar, const int64_t *ad, uint32_t br, const int64_t *bd, uint32_t yr,
                             const int64_t *yd) {
    tgraph g = {0};
    uint32_t a = tg_input(&g, "a", BERTH_DTYPE_F32, ar, ad), b = tg_input(&g, "b", BERTH_DTYPE_F32, br, bd);
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, yr, yd);
    tg_node(&g, "matmul", 2, IDX(a, b), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    size_t na = h_numel(&g.ops[a]), nb = h_numel(&g.ops[b]), ny = h_numel(&g.ops[y]);
    float *xa = h_randf(na), *xb = h_randf(nb), *got = calloc(ny, sizeof(float));
    double *ref = h_zeros(ny);
    ref_matmul(xa, ar, ad, xb, br, bd, ref, yr, yd);
    if (h_ok(&g, (void *[]){xa, xb}, (void *[]){got})) h_close("matmul", got, ref, ny);
    free(xa), free(xb), free(got), free(ref);
}

static void test_matmul(void) {
    test_matmul_case(2, DIMS(3, 5), 2, DIMS(5, 4), 2, DIMS(3, 4));
    test_matmul_case(3, DIMS(6, 7, 9), 3, DIMS(6, 9, 5), 3, DIMS(6, 7, 5));
    /* batch broadcast both ways: [2,1,3,4] @ [1,5,4,2] -> [2,5,3,2] */
    test_matmul_case(4, DIMS(2, 1, 3, 4), 4, DIMS(1, 5, 4, 2), 4, DIMS(2, 5, 3, 2));
    /* rank mismatch: [4,3,8] @ [8,6] */
    test_matmul_case(3, DIMS(4, 3, 8), 2, DIMS(8, 6), 3, DIMS(4, 3, 6));
    /* big enough to split over the pool: by rows, then by columns (few rows) */
    test_matmul_case(2, DIMS(96, 128), 2, DIMS(128, 80), 2, DIMS(96, 80));
    test_matmul_case(2, DIMS(4, 512), 2, DIMS(512, 600), 2, DIMS(4, 600));

    /* 1-D rules: [k] @ [k, n] -> [n]; [m, k] @ [k] -> [m]; [k] @ [k] -> [] */
    int64_t k = 6;
    float *v = h_randf((size_t)k), *mat = h_randf(6 * 4);
    for (int c = 0; c < 3; c++) {
        tgraph g = {0};
        uint32_t a, b, y;
        if (c == 0) {
            a = tg_input(&g, "a", BERTH_DTYPE_F32, 1, DIMS(6));
            b = tg_input(&g, "b", BERTH_DTYPE_F32, 2, DIMS(6, 4));
            y = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(4));
        } else if (c == 1) {
            a = tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(4, 6));
            b = tg_input(&g, "b", BERTH_DTYPE_F32, 1, DIMS(6));
            y = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(4));
        } else {
            a = tg_input(&g, "a", BERTH_DTYPE_F32, 1, DIMS(6));
            b = tg_input(&g, "b", BERTH_DTYPE_F32, 1, DIMS(6));
            y = tg_value(&g, "y", BERTH_DTYPE_F32, 0, NULL);
        }
        tg_node(&g, "matmul", 2, IDX(a, b), 1, IDX(y), 0, NULL);
        tg_output(&g, y);
        float got[4] = {0};
        double ref[4] = {0};
        if (c == 0)
            for (int j = 0; j < 4; j++)
                for (int q = 0; q < 6; q++) ref[j] += (double)v[q] * mat[q * 4 + j];
        else if (c == 1)
            for (int i = 0; i < 4; i++)
                for (int q = 0; q < 6; q++) ref[i] += (double)mat[i * 6 + q] * v[q];
        else
            for (int q = 0; q < 6; q++) ref[0] += (double)v[q] * v[q];
        void *in[2] = {c == 1 ? (void *)mat : v, c == 0 ? (void *)mat : v};
        if (h_ok(&g, in, (void *[]){got})) h_close("matmul 1-D", got, ref, c == 2 ? 1 : 4);
    }
    free(v), free(mat);

    /* inner dims that disagree fail naming the node */
    tgraph g = {0};
    uint32_t a = tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(3, 5)), b = tg_input(&g, "b", BERTH_DTYPE_F32, 2, DIMS(4, 2));
    uint32_t y = tg_value(&g, "mm_out", BERTH_DTYPE_F32, 2, DIMS(3, 2));
    tg_node(&g, "matmul", 2, IDX(a, b), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    berth_error err;
    berth_graph_desc d = tg_desc(&g);
    berth_plan *p = NULL;
    CHECK(cpu.be->plan(cpu.dev, NULL, &d, &p, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "mm_out");
    CHECK_CONTAINS(err.msg, "matmul");
    CHECK_CONTAINS(err.msg, "5");
}

static double ref_bin(const char *op, double x, double z) {
    if (!strcmp(op, "add")) return x + z;
    if (!strcmp(op, "sub")) return x - z;
    if (!strcmp(op, "mul")) return x * z;
    if (!strcmp(op, "div")) return x / z;
    if (!strcmp(op, "max")) return x > z ? x : z;
    if (!strcmp(op, "min")) return x < z ? x : z;
    return pow(x, z);
}

static void test_binary_f32(void) {
    static const char *const ops[] = {"add", "sub", "mul", "div", "max", "min", "pow"};
    struct { uint32_t ar, br, yr; int64_t ad[4], bd[4], yd[4]; } cases[] = {
        {2, 2, 2, {3, 4}, {3, 4}, {3, 4}},
        {2, 1, 2, {3, 4}, {4}, {3, 4}},
        {3, 2, 3, {2, 1, 5}, {3, 1}, {2, 3, 5}},
        {0, 3, 3, {0}, {2, 3, 4}, {2, 3, 4}},
        {4, 4, 4, {2, 1, 3, 1}, {1, 4, 1, 5}, {2, 4, 3, 5}},
        {1, 1, 1, {70000}, {70000}, {70000}},
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            tgraph g = {0};
            uint32_t a = tg_input(&g, "a", BERTH_DTYPE_F32, cases[c].ar, cases[c].ad);
            uint32_t b = tg_input(&g, "b", BERTH_DTYPE_F32, cases[c].br, cases[c].bd);
            uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, cases[c].yr, cases[c].yd);
            tg_node(&g, ops[o], 2, IDX(a, b), 1, IDX(y), 0, NULL);
            tg_output(&g, y);
            size_t na = h_numel(&g.ops[a]), nb = h_numel(&g.ops[b]), ny = h_numel(&g.ops[y]);
            float *xa = h_randf(na), *xb = h_randf(nb), *got = calloc(ny, sizeof(float));
            if (!strcmp(ops[o], "pow"))
                for (size_t i = 0; i < na; i++) xa[i] = fabsf(xa[i]) + 0.1f;
            if (!strcmp(ops[o], "div"))
                for (size_t i = 0; i < nb; i++) xb[i] = xb[i] < 0 ? xb[i] - 0.5f : xb[i] + 0.5f;
            double *ref = h_zeros(ny);
            for (size_t i = 0; i < ny; i++) {
                int64_t idx[8];
                h_unravel(i, cases[c].yr, cases[c].yd, idx);
                ref[i] = ref_bin(ops[o], xa[h_bcast_off(idx, cases[c].yr, cases[c].ar, cases[c].ad)],
                                 xb[h_bcast_off(idx, cases[c].yr, cases[c].br, cases[c].bd)]);
            }
            if (h_ok(&g, (void *[]){xa, xb}, (void *[]){got})) h_close(ops[o], got, ref, ny);
            free(xa), free(xb), free(got), free(ref);
        }
}

static void test_binary_int(void) {
    static const char *const ops[] = {"add", "sub", "mul", "div", "max", "min"};
    for (int wide = 0; wide < 2; wide++)
        for (size_t o = 0; o < 6; o++) {
            berth_dtype t = wide ? BERTH_DTYPE_I64 : BERTH_DTYPE_I32;
            tgraph g = {0};
            uint32_t a = tg_input(&g, "a", t, 2, DIMS(3, 4)), b = tg_input(&g, "b", t, 1, DIMS(4));
            uint32_t y = tg_value(&g, "y", t, 2, DIMS(3, 4));
            tg_node(&g, ops[o], 2, IDX(a, b), 1, IDX(y), 0, NULL);
            tg_output(&g, y);
            int64_t va[12], vb[4] = {3, -2, 0, 7}, want[12];
            for (int i = 0; i < 12; i++) va[i] = (i * 37) % 23 - 11;
            for (int i = 0; i < 12; i++) {
                int64_t x = va[i], z = vb[i % 4];
                want[i] = o == 0 ? x + z : o == 1 ? x - z : o == 2 ? x * z
                        : o == 3 ? (z == 0 ? 0 : x / z) : o == 4 ? (x > z ? x : z) : (x < z ? x : z);
            }
            int32_t a32[12], b32[4], y32[12];
            int64_t y64[12];
            for (int i = 0; i < 12; i++) a32[i] = (int32_t)va[i];
            for (int i = 0; i < 4; i++) b32[i] = (int32_t)vb[i];
            void *in[2] = {wide ? (void *)va : a32, wide ? (void *)vb : b32};
            if (!h_ok(&g, in, (void *[]){wide ? (void *)y64 : y32})) continue;
            int same = 1;
            for (int i = 0; i < 12; i++) same &= (wide ? y64[i] : y32[i]) == want[i];
            CHECK(same);
            if (!same) fprintf(stderr, "  int %s (%s) differs\n", ops[o], wide ? "i64" : "i32");
        }
}

static void test_relu_reshape_identity(void) {
    tgraph g = {0};
    uint32_t x = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(4, 6));
    uint32_t r = tg_value(&g, "r", BERTH_DTYPE_F32, 2, DIMS(4, 6));
    uint32_t s = tg_value(&g, "s", BERTH_DTYPE_F32, 3, DIMS(2, 3, 4));
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 3, DIMS(2, 3, 4));
    tg_node(&g, "relu", 1, IDX(x), 1, IDX(r), 0, NULL);
    tg_node(&g, "reshape", 1, IDX(r), 1, IDX(s), 1, (berth_attr[]){A_INTS("newShape", 3, 2, 3, 4)});
    tg_node(&g, "identity", 1, IDX(s), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    tg_output(&g, r);
    float *xv = h_randf(24), got[24], got_r[24];
    double ref[24];
    for (int i = 0; i < 24; i++) ref[i] = xv[i] > 0 ? xv[i] : 0;
    if (h_ok(&g, (void *[]){xv}, (void *[]){got, got_r})) {
        h_close("relu-reshape-identity", got, ref, 24);
        h_close("relu output also read by later nodes", got_r, ref, 24);
    }
    free(xv);

}

/* Subnormal float32 weights and constants are stored as zero of the same
 * sign (every multiply with one would take a microcode assist); zeros,
 * the smallest normal number, NaN and ordinary values are kept. Checked
 * for a constant, a weight the backend copies and one it is given. */
static const float subnormals[7] = {FLT_MIN / 2, -FLT_MIN / 4, -0.0f, 0.0f, FLT_MIN, NAN, -1.5f};

static void check_flushed(const char *what, const float *got) {
    static const float want[7] = {0.0f, -0.0f, -0.0f, 0.0f, FLT_MIN, NAN, -1.5f};
    for (int i = 0; i < 7; i++) {
        int same = isnan(want[i]) ? isnan(got[i]) != 0 : memcmp(&got[i], &want[i], sizeof(float)) == 0;
        CHECK(same);
        if (!same)
            fprintf(stderr, "  %s, value %d: expected %g (sign %d), found %g (sign %d)\n", what, i, (double)want[i],
                    signbit(want[i]) != 0, (double)got[i], signbit(got[i]) != 0);
    }
}

static void test_subnormal_weights(void) {
    float ones[7] = {1, 1, 1, 1, 1, 1, 1}, got[7];
    tgraph g = {0};
    uint32_t x = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(7));
    uint32_t wi = tg_const(&g, "w", BERTH_DTYPE_F32, 1, DIMS(7), subnormals, sizeof subnormals);
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(7));
    tg_node(&g, "mul", 2, IDX(x, wi), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    if (h_ok(&g, (void *[]){ones}, (void *[]){got})) check_flushed("constant", got);

    for (int given = 0; given < 2; given++) {
        berth_error err;
        berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 1, .total_bytes = sizeof subnormals,
                                  .largest_bytes = sizeof subnormals};
        berth_weights *w = NULL;
        CHECK(cpu.be->upload_begin(cpu.dev, &info, &w, &err) == BERTH_OK);
        if (!w) return;
        berth_weight_desc d = {.name = "w", .id = 0, .dtype = BERTH_DTYPE_F32, .rank = 1, .dims = {7},
                               .bytes = sizeof subnormals};
        float copy[7];
        float *data = given ? mh_host_alloc(&host, sizeof subnormals, 64) : copy;
        memcpy(data, subnormals, sizeof subnormals);
        int taken = 0;
        CHECK(cpu.be->upload_tensor(w, &d, data, given ? BERTH_UPLOAD_GIVEN : 0, &taken, &err) == BERTH_OK);
        CHECK(taken == given);
        CHECK(cpu.be->upload_end(w, &err) == BERTH_OK);
        tgraph gw = {0};
        uint32_t xw = tg_input(&gw, "x", BERTH_DTYPE_F32, 1, DIMS(7));
        uint32_t ww = tg_weight(&gw, "w", 0, 1, DIMS(7));
        uint32_t yw = tg_value(&gw, "y", BERTH_DTYPE_F32, 1, DIMS(7));
        tg_node(&gw, "mul", 2, IDX(xw, ww), 1, IDX(yw), 0, NULL);
        tg_output(&gw, yw);
        CHECK(h_run_w(&gw, w, (void *[]){ones}, (void *[]){got}, &err) == BERTH_OK);
        check_flushed(given ? "given weight" : "copied weight", got);
        cpu.be->free_weights(w);
    }
}

/* matmul + add + relu over a batch, with the weight and bias as constants. */
static void test_slice(void) {
    for (int64_t batch = 1; batch <= 9; batch += 4) {
        enum { K = 16, N = 8 };
        float *w = h_randf(K * N), *bias = h_randf(N), *x = h_randf((size_t)batch * K);
        tgraph g = {0};
        uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(batch, K));
        uint32_t wi = tg_const(&g, "w", BERTH_DTYPE_F32, 2, DIMS(K, N), w, sizeof(float) * K * N);
        uint32_t bi = tg_const(&g, "b", BERTH_DTYPE_F32, 1, DIMS(N), bias, sizeof(float) * N);
        uint32_t mm = tg_value(&g, "mm", BERTH_DTYPE_F32, 2, DIMS(batch, N));
        uint32_t ad = tg_value(&g, "ad", BERTH_DTYPE_F32, 2, DIMS(batch, N));
        uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(batch, N));
        tg_node(&g, "matmul", 2, IDX(xi, wi), 1, IDX(mm), 0, NULL);
        tg_node(&g, "add", 2, IDX(mm, bi), 1, IDX(ad), 0, NULL);
        tg_node(&g, "relu", 1, IDX(ad), 1, IDX(y), 0, NULL);
        tg_output(&g, y);
        float *got = calloc((size_t)batch * N, sizeof(float));
        double *ref = h_zeros((size_t)batch * N);
        for (int64_t i = 0; i < batch; i++)
            for (int j = 0; j < N; j++) {
                double s = bias[j];
                for (int q = 0; q < K; q++) s += (double)x[i * K + q] * w[q * N + j];
                ref[i * N + j] = s > 0 ? s : 0;
            }
        if (h_ok(&g, (void *[]){x}, (void *[]){got})) h_close("slice", got, ref, (size_t)batch * N);
        free(w), free(bias), free(x), free(got), free(ref);
    }
}

int main(void) {
    if (!h_open(2)) {
        CHECK(0);
        return check_exit();
    }
    test_matmul();
    test_binary_f32();
    test_binary_int();
    test_relu_reshape_identity();
    test_slice();
    test_subnormal_weights();
    h_shutdown();
    return check_exit();
}
