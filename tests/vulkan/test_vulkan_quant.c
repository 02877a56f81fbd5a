/* scatterElements, quantizeLinear, dequantizeLinear and float16 casts on
 * the vulkan backend, against values known here and the cpu backend where
 * built: duplicate indices (the last wins), negative and int64 indices,
 * block-wise scales, rounding half to even, saturation, NaN, infinities
 * and subnormal halves. */
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

int main(void) {
    h_start();
    test_scatter();
    test_half_casts();
    check_quant(BERTH_DTYPE_U8);
    check_quant(BERTH_DTYPE_I8);
    h_stop();
    return check_exit();
}
