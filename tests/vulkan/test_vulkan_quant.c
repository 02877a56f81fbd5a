/* scatterElements, quantizeLinear, dequantizeLinear, float16 casts and
 * berth.matmulQuantized on int4 weights on the vulkan backend, against
 * values known here and the cpu backend where built: duplicate indices
 * (the last wins), negative and int64 indices, block-wise scales,
 * rounding half to even, saturation, NaN, infinities and subnormal
 * halves; 4-bit weights held packed (weights_bytes), and weights of
 * other dtypes refused. */
#include "vk_harness.h"

static void test_scatter(void) {
    /* Along axis 0 of [4, 3]: indices [3, 3]; column 1 names row 1 twice
     * (the later update wins), column 2 uses -1 for row 3. */
    const float x[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    const int64_t ix[9] = {0, 1, -1, 2, 1, 0, 3, 2, 2};
    const float up[9] = {100, 101, 102, 103, 104, 105, 106, 107, 108};
    float want[12];
    memcpy(want, x, sizeof want);
    for (int r = 0; r < 3; r++)
        for (int col = 0; col < 3; col++) {
            int64_t k = ix[r * 3 + col] < 0 ? ix[r * 3 + col] + 4 : ix[r * 3 + col];
            want[k * 3 + col] = up[r * 3 + col]; /* in order: the last write stays */
        }
    float got[12] = {0};
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(4, 3)), ii = tg_input(&g, "i", BERTH_DTYPE_I64, 2, DIMS(3, 3));
    uint32_t ui = tg_input(&g, "u", BERTH_DTYPE_F32, 2, DIMS(3, 3)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(4, 3));
    tg_node(&g, "scatterElements", 3, IDX(xi, ii, ui), 1, IDX(yi), 1, (berth_attr[]){A_INT("axis", 0)});
    tg_output(&g, yi);
    if (h_ok(&g, (void *const[]){(void *)x, (void *)ix, (void *)up}, (void *const[]){got})) {
        CHECK(memcmp(got, want, sizeof want) == 0);
        h_same_as_cpu("scatterElements", &g, NULL, (void *const[]){(void *)x, (void *)ix, (void *)up},
                      (void *const[]){got});
    }
    /* int32 data along axis 1 with int32 indices. */
    const int32_t xd[6] = {1, 2, 3, 4, 5, 6}, i32[4] = {2, -3, 0, 0}, ud[4] = {-7, -8, -9, -10};
    const int32_t want2[6] = {-8, 2, -7, -10, 5, 6};
    int32_t got2[6] = {0};
    tgraph h = {0};
    xi = tg_input(&h, "x", BERTH_DTYPE_I32, 2, DIMS(2, 3)), ii = tg_input(&h, "i", BERTH_DTYPE_I32, 2, DIMS(2, 2));
    ui = tg_input(&h, "u", BERTH_DTYPE_I32, 2, DIMS(2, 2)), yi = tg_value(&h, "y", BERTH_DTYPE_I32, 2, DIMS(2, 3));
    tg_node(&h, "scatterElements", 3, IDX(xi, ii, ui), 1, IDX(yi), 1, (berth_attr[]){A_INT("axis", 1)});
    tg_output(&h, yi);
    if (h_ok(&h, (void *const[]){(void *)xd, (void *)i32, (void *)ud}, (void *const[]){got2})) {
        CHECK(memcmp(got2, want2, sizeof want2) == 0);
        h_same_as_cpu("scatterElements int32", &h, NULL, (void *const[]){(void *)xd, (void *)i32, (void *)ud},
                      (void *const[]){got2});
    }
}

/* x [2, 6] with scales per (row, block of 3 columns) = [2, 2]. */
static void check_quant(berth_dtype qt) {
    const float x[12] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 1000.0f, -1000.0f, 3.0f, 7.2f, NAN, 0.26f, -0.74f};
    const float scale[4] = {1.0f, 0.5f, 2.0f, 0.25f};
    int signed8 = qt == BERTH_DTYPE_I8;
    const uint8_t zp_u[4] = {0, 128, 3, 250};
    const int8_t zp_i[4] = {0, -2, 5, -128};
    uint8_t q[12] = {0};
    float back[12];
    double lo = signed8 ? -128 : 0, hi = signed8 ? 127 : 255;
    int64_t want[12];
    double ref[12];
    for (int i = 0; i < 12; i++) {
        int s = (i / 6) * 2 + (i % 6) / 3;
        double z = signed8 ? zp_i[s] : zp_u[s];
        /* Half to even; NaN becomes 0 before saturation, as on the cpu backend. */
        double v = x[i] != x[i] ? 0 : nearbyint((double)x[i] / scale[s]) + z;
        v = v < lo ? lo : v > hi ? hi : v;
        want[i] = (int64_t)v;
        ref[i] = ((double)want[i] - z) * scale[s];
    }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(2, 6)), si = tg_input(&g, "s", BERTH_DTYPE_F32, 2, DIMS(2, 2));
    uint32_t zi = tg_input(&g, "z", qt, 2, DIMS(2, 2)), qi = tg_value(&g, "q", qt, 2, DIMS(2, 6));
    uint32_t di = tg_value(&g, "dq", BERTH_DTYPE_F32, 2, DIMS(2, 6));
    tg_node(&g, "quantizeLinear", 3, IDX(xi, si, zi), 1, IDX(qi), 0, NULL);
    tg_node(&g, "dequantizeLinear", 3, IDX(qi, si, zi), 1, IDX(di), 0, NULL);
    tg_output(&g, qi);
    tg_output(&g, di);
    const void *zp = signed8 ? (const void *)zp_i : (const void *)zp_u;
    if (!h_ok(&g, (void *const[]){(void *)x, (void *)scale, (void *)zp}, (void *const[]){q, back})) return;
    int bad = 0;
    for (int i = 0; i < 12; i++) bad += (signed8 ? (int64_t)(int8_t)q[i] : (int64_t)q[i]) != want[i];
    CHECK(bad == 0);
    if (bad) fprintf(stderr, "  quantize %s: %d wrong\n", signed8 ? "int8" : "uint8", bad);
    h_close(signed8 ? "dequantize int8" : "dequantize uint8", back, ref, 12);
    h_same_as_cpu("quantize round trip", &g, NULL, (void *const[]){(void *)x, (void *)scale, (void *)zp},
                  (void *const[]){q, back});
}

/* IEEE half bit patterns, each worked out by hand. */
static void test_half_casts(void) {
    const float f[12] = {1.0f, -2.0f, 65504.0f, 65520.0f, 1e-8f, 5.9604644775390625e-8f, 1.0f + 0x1p-11f,
                         1.0f + 0x3p-11f, NAN, INFINITY, -0.0f, 0.5f};
    const uint16_t want[12] = {0x3c00, 0xc000, 0x7bff, 0x7c00, 0x0000, 0x0001, 0x3c00, 0x3c02, 0x7e00, 0x7c00, 0x8000, 0x3800};
    uint16_t got[12] = {0};
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(12)), yi = tg_value(&g, "y", BERTH_DTYPE_F16, 1, DIMS(12));
    tg_node(&g, "cast", 1, IDX(xi), 1, IDX(yi), 1, (berth_attr[]){A_STR("type", "float16")});
    tg_output(&g, yi);
    if (h_ok(&g, (void *const[]){(void *)f}, (void *const[]){got})) {
        CHECK(memcmp(got, want, sizeof want) == 0);
        h_same_as_cpu("cast to float16", &g, NULL, (void *const[]){(void *)f}, (void *const[]){got});
    }
    const uint16_t h[5] = {0x3555, 0x0001, 0x7c00, 0xfbff, 0x8000};
    const float back_want[5] = {0.333251953125f, 5.9604644775390625e-8f, INFINITY, -65504.0f, -0.0f};
    float back[5] = {0};
    tgraph g2 = {0};
    xi = tg_input(&g2, "h", BERTH_DTYPE_F16, 1, DIMS(5)), yi = tg_value(&g2, "y", BERTH_DTYPE_F32, 1, DIMS(5));
    tg_node(&g2, "cast", 1, IDX(xi), 1, IDX(yi), 1, (berth_attr[]){A_STR("type", "float32")});
    tg_output(&g2, yi);
    if (h_ok(&g2, (void *const[]){(void *)h}, (void *const[]){back})) {
        CHECK(memcmp(back, back_want, sizeof back_want) == 0);
        h_same_as_cpu("cast from float16", &g2, NULL, (void *const[]){(void *)h}, (void *const[]){back});
    }
}

/* berth.matmulQuantized with b and its zero points uploaded as int4
 * weights, packed two to a byte: the device holds them as uploaded, so
 * weights_bytes is their ceil(n / 2) bytes, rounded up only by the
 * module's per-tensor alignment (upload_begin sizes its block as the
 * announced bytes plus one 256-byte alignment per tensor; Vulkan caps
 * minStorageBufferOffsetAlignment at 256), far below the 4 bytes a value
 * a float copy would take. Shapes: an odd count with blocks of 11 (A
 * read a float at a time, a last byte half used), and one whose rows
 * fill whole words (A as vec4s). */
static void check_int4_weight(int64_t batch, int64_t m, int64_t k, int64_t n, int64_t g, const char *act) {
    size_t kn = (size_t)(k * n), gn = (size_t)(g * n), rows = (size_t)(batch * m);
    size_t bb = (kn + 1) / 2, zb = (gn + 1) / 2;
    int *bq = calloc(kn, sizeof *bq), *zq = calloc(gn, sizeof *zq);
    uint8_t *bp = calloc(bb, 1), *zpk = calloc(zb, 1);
    float *sc = h_randf(gn), *a = h_randf(rows * (size_t)k), *bias = h_randf((size_t)n);
    float *got = calloc(rows * (size_t)n, sizeof *got);
    double *ref = h_zeros(rows * (size_t)n);
    for (size_t i = 0; i < kn + gn; i++) {
        int v = (int)((h_rand() + 1.0) * 8.0) - 8; /* -8 .. 7 */
        v = v < -8 ? -8 : v > 7 ? 7 : v;
        uint8_t *p = i < kn ? bp : zpk;
        size_t e = i < kn ? i : i - kn;
        (i < kn ? bq : zq)[e] = v;
        p[e / 2] |= (uint8_t)((v & 15) << (4 * (e % 2)));
    }
    for (size_t i = 0; i < gn; i++) sc[i] = 0.01f + 0.02f * (sc[i] + 1.0f);
    int64_t block = k / g;
    for (size_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) {
                size_t bi = (size_t)((p / block) * n + j);
                s += (double)a[r * (size_t)k + (size_t)p] * ((double)(bq[p * n + j] - zq[bi]) * sc[bi]);
            }
            s += bias[j];
            ref[r * (size_t)n + (size_t)j] = !strcmp(act, "tanh") ? tanh(s) : s > 0 ? s : 0;
        }

    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 2, .total_bytes = bb + zb,
                              .largest_bytes = bb > zb ? bb : zb};
    berth_weight_desc d[2] = {
        {.name = "b", .id = 0, .dtype = BERTH_DTYPE_I4, .rank = 2, .dims = {k, n}, .bytes = bb},
        {.name = "zero", .id = 1, .dtype = BERTH_DTYPE_I4, .rank = 2, .dims = {g, n}, .bytes = zb},
    };
    void *data[2] = {bp, zpk};
    berth_weights *w = NULL;
    berth_error err = {{0}};
    berth_status st = vk.be->upload_begin(vk.dev, &info, &w, &err);
    for (uint32_t i = 0; i < 2 && !st; i++) {
        int taken = 0;
        st = vk.be->upload_tensor(w, &d[i], data[i], 0, &taken, &err);
    }
    if (!st) st = vk.be->upload_end(w, &err);
    CHECK(st == BERTH_OK);
    if (st) fprintf(stderr, "  int4 upload: %s\n", err.msg);
    if (!st) {
        uint64_t held = vk.be->weights_bytes(w);
        CHECK(held >= bb + zb && held <= bb + zb + 2 * 256);
        if (held < bb + zb || held > bb + zb + 2 * 256)
            fprintf(stderr, "  int4 weights of %zu + %zu bytes hold %llu bytes\n", bb, zb, (unsigned long long)held);

        tgraph gr = {0};
        uint32_t ai = tg_input(&gr, "a", BERTH_DTYPE_F32, 3, DIMS(batch, m, k));
        uint32_t bi = tg_operand(&gr, "b", BERTH_OPERAND_WEIGHT, BERTH_DTYPE_I4, 2, DIMS(k, n));
        gr.ops[bi].weight = 0;
        uint32_t zi = tg_operand(&gr, "zero", BERTH_OPERAND_WEIGHT, BERTH_DTYPE_I4, 2, DIMS(g, n));
        gr.ops[zi].weight = 1;
        uint32_t si = tg_const(&gr, "scale", BERTH_DTYPE_F32, 2, DIMS(g, n), sc, gn * sizeof(float));
        uint32_t bo = tg_const(&gr, "bias", BERTH_DTYPE_F32, 2, DIMS(1, n), bias, (size_t)n * sizeof(float));
        uint32_t yi = tg_value(&gr, "y", BERTH_DTYPE_F32, 3, DIMS(batch, m, n));
        tg_node(&gr, "berth.matmulQuantized", 4, IDX(ai, bi, si, zi), 1, IDX(yi), 2,
                (berth_attr[]){A_OPND("bias", bo), A_STR("activation", act)});
        tg_output(&gr, yi);
        st = mh_run(&vk, &gr, w, (void *const[]){a}, (void *const[]){got}, &err);
        CHECK(st == BERTH_OK);
        if (st) fprintf(stderr, "  matmulQuantized on int4 weights: %s\n", err.msg);
        else h_close("matmulQuantized on int4 weights", got, ref, rows * (size_t)n);
    }
    vk.be->free_weights(w);
    free(bq), free(zq), free(bp), free(zpk), free(sc), free(a), free(bias), free(got), free(ref);
}

/* b of a dtype the kernels do not unpack (float32, int32) is refused as
 * unsupported, naming what is, so the engine keeps the node elsewhere. */
static void test_matmul_quantized_refusals(void) {
    const berth_dtype bad[2] = {BERTH_DTYPE_F32, BERTH_DTYPE_I32};
    for (int i = 0; i < 2; i++) {
        tgraph g = {0};
        uint32_t ai = tg_input(&g, "a", BERTH_DTYPE_F32, 2, DIMS(2, 4));
        uint32_t bi = tg_input(&g, "b", bad[i], 2, DIMS(4, 3)), si = tg_input(&g, "s", BERTH_DTYPE_F32, 2, DIMS(1, 3));
        uint32_t zi = tg_input(&g, "z", bad[i], 2, DIMS(1, 3)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(2, 3));
        tg_node(&g, "berth.matmulQuantized", 4, IDX(ai, bi, si, zi), 1, IDX(yi), 0, NULL);
        tg_output(&g, yi);
        berth_graph_desc d = tg_desc(&g);
        berth_error err = {{0}};
        berth_status st = mh_supports(&vk, &d, 0, &err);
        CHECK(st == BERTH_ERR_UNSUPPORTED && strstr(err.msg, "int4") != NULL);
        if (st != BERTH_ERR_UNSUPPORTED) fprintf(stderr, "  matmulQuantized with %s b: status %d: %s\n",
                                                 i ? "int32" : "float32", (int)st, err.msg);
    }
}

int main(void) {
    h_start();
    test_scatter();
    test_half_casts();
    check_quant(BERTH_DTYPE_U8);
    check_quant(BERTH_DTYPE_I8);
    check_int4_weight(2, 5, 33, 13, 3, "tanh");
    check_int4_weight(1, 9, 64, 16, 4, "relu");
    test_matmul_quantized_refusals();
    h_stop();
    return check_exit();
}
