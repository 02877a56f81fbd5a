/* The rest of the ops the engine knows: prelu, logical and/or/xor,
 * softsign, l2Pool2d, argMax/argMin, cumulativeSum,
 * instanceNormalization, tile, triangular and gatherElements. */
#include "cpu_harness.h"

static void test_prelu_logical_softsign(void) {
    float *x = h_randf(2 * 3 * 4), *slope = h_randf(3), y[24];
    double ref[24];
    for (int i = 0; i < 24; i++) {
        double s = slope[(i / 4) % 3]; /* slope [3, 1] against [2, 3, 4] */
        ref[i] = x[i] >= 0 ? x[i] : x[i] * s;
    }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 3, DIMS(2, 3, 4)), si = tg_input(&g, "s", BERTH_DTYPE_F32, 2, DIMS(3, 1));
    uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_F32, 3, DIMS(2, 3, 4)), zi = tg_value(&g, "z", BERTH_DTYPE_F32, 3, DIMS(2, 3, 4));
    tg_node(&g, "prelu", 2, IDX(xi, si), 1, IDX(yi), 0, NULL);
    tg_node(&g, "softsign", 1, IDX(xi), 1, IDX(zi), 0, NULL);
    tg_output(&g, yi);
    tg_output(&g, zi);
    float z[24];
    double rz[24];
    for (int i = 0; i < 24; i++) rz[i] = x[i] / (1 + fabs((double)x[i]));
    if (h_ok(&g, (void *[]){x, slope}, (void *[]){y, z})) {
        h_close("prelu", y, ref, 24);
        h_close("softsign", z, rz, 24);
    }
    free(x), free(slope);

    static const char *const ops[] = {"logicalAnd", "logicalOr"};
    uint8_t a[4] = {0, 0, 7, 1}, b[2] = {0, 3}; /* b [2, 1] against a [2, 2] -> pairs (a[i], b[i/2]) */
    for (int o = 0; o < 2; o++) {
        tgraph h = {0};
        uint32_t ai = tg_input(&h, "a", BERTH_DTYPE_U8, 2, DIMS(2, 2)), bi = tg_input(&h, "b", BERTH_DTYPE_U8, 2, DIMS(2, 1));
        uint32_t oi = tg_value(&h, "o", BERTH_DTYPE_U8, 2, DIMS(2, 2));
        tg_node(&h, ops[o], 2, IDX(ai, bi), 1, IDX(oi), 0, NULL);
        tg_output(&h, oi);
        uint8_t out[4];
        if (!h_ok(&h, (void *[]){a, b}, (void *[]){out})) continue;
        int ok = 1;
        for (int i = 0; i < 4; i++) {
            int p = a[i] != 0, q = b[i / 2] != 0;
            ok &= out[i] == (o == 0 ? (p && q) : (p || q));
        }
        CHECK(ok);
    }
}

static void test_l2pool(void) {
    enum { P = 3, H = 5, W = 4, OH = 2, OW = 2 };
    float *x = h_randf(P * H * W), y[P * OH * OW];
    double ref[P * OH * OW];
    for (int pl = 0; pl < P; pl++)
        for (int i = 0; i < OH; i++)
            for (int j = 0; j < OW; j++) {
                double s = 0;
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 2; b++) {
                        int iy = i * 2 + a, ix = j * 2 + b;
                        s += (double)x[(pl * H + iy) * W + ix] * x[(pl * H + iy) * W + ix];
                    }
                ref[(pl * OH + i) * OW + j] = sqrt(s);
            }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 4, DIMS(1, P, H, W)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 4, DIMS(1, P, OH, OW));
    tg_node(&g, "l2Pool2d", 1, IDX(xi), 1, IDX(yi), 2,
            (berth_attr[]){A_INTS("windowDimensions", 2, 3, 2), A_INTS("strides", 2, 2, 2)});
    tg_output(&g, yi);
    if (h_ok(&g, (void *[]){x}, (void *[]){y})) h_close("l2Pool2d", y, ref, P * OH * OW);
    free(x);
}

static void test_arg_cumsum(void) {
    float x[2 * 3 * 2] = {1, 5, 9, 5, 9, 2, /* batch 0: rows (1,5) (9,5) (9,2) */ -1, -1, -3, 0, -1, 0};
    /* argMax along axis 1 of [2, 3, 2]; ties keep the first index */
    int32_t want_max[4] = {1, 0, 0, 1}, want_min[4] = {0, 2, 1, 0};
    for (int wide = 0; wide < 2; wide++)
        for (int mn = 0; mn < 2; mn++) {
            tgraph g = {0};
            uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 3, DIMS(2, 3, 2));
            uint32_t yi = tg_value(&g, "y", wide ? BERTH_DTYPE_I64 : BERTH_DTYPE_I32, wide ? 3 : 2, wide ? DIMS(2, 1, 2) : DIMS(2, 2));
            tg_node(&g, mn ? "argMin" : "argMax", 1, IDX(xi), 1, IDX(yi), 3,
                    (berth_attr[]){A_INT("axis", 1), A_BOOL("keepDimensions", wide),
                                   A_STR("outputDataType", wide ? "int64" : "int32")});
            tg_output(&g, yi);
            int32_t y32[4];
            int64_t y64[4];
            if (!h_ok(&g, (void *[]){x}, (void *[]){wide ? (void *)y64 : y32})) continue;
            int ok = 1;
            for (int i = 0; i < 4; i++) ok &= (wide ? y64[i] : y32[i]) == (mn ? want_min[i] : want_max[i]);
            CHECK(ok);
        }
    /* cumulativeSum along axis 1, every combination of exclusive and reversed */
    for (int ex = 0; ex < 2; ex++)
        for (int rev = 0; rev < 2; rev++) {
            float y[12];
            double ref[12];
            for (int o = 0; o < 2; o++)
                for (int i = 0; i < 2; i++)
                    for (int k = 0; k < 3; k++) {
                        double s = 0;
                        for (int q = 0; q < 3; q++) {
                            int in = rev ? (ex ? q > k : q >= k) : (ex ? q < k : q <= k);
                            if (in) s += x[(o * 3 + q) * 2 + i];
                        }
                        ref[(o * 3 + k) * 2 + i] = s;
                    }
            tgraph g = {0};
            uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 3, DIMS(2, 3, 2)), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 3, DIMS(2, 3, 2));
            tg_node(&g, "cumulativeSum", 1, IDX(xi), 1, IDX(yi), 3,
                    (berth_attr[]){A_INT("axis", -2), A_BOOL("exclusive", ex), A_BOOL("reversed", rev)});
            tg_output(&g, yi);
            if (h_ok(&g, (void *[]){x}, (void *[]){y})) h_close("cumulativeSum", y, ref, 12);
        }
}

static void test_instance_norm(void) {
    enum { N = 2, C = 3, H = 4, W = 5 };
    float *x = h_randf(N * C * H * W), *sc = h_randf(C), *bs = h_randf(C), y[N * C * H * W];
    double ref[N * C * H * W];
    for (int nhwc = 0; nhwc < 2; nhwc++) {
        /* the same data read as NCHW or NHWC: element (n, c, s) sits at these offsets */
        for (int n = 0; n < N; n++)
            for (int c = 0; c < C; c++) {
                double m = 0, v = 0;
#define AT(s) (nhwc ? (n * H * W + (s)) * C + c : (n * C + c) * H * W + (s))
                for (int s = 0; s < H * W; s++) m += x[AT(s)];
                m /= H * W;
                for (int s = 0; s < H * W; s++) v += (x[AT(s)] - m) * (x[AT(s)] - m);
                v /= H * W;
                for (int s = 0; s < H * W; s++) ref[AT(s)] = (x[AT(s)] - m) / sqrt(v + 1e-3) * sc[c] + bs[c];
#undef AT
            }
        tgraph g = {0};
        const int64_t *d = nhwc ? DIMS(N, H, W, C) : DIMS(N, C, H, W);
        uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 4, d), yi = tg_value(&g, "y", BERTH_DTYPE_F32, 4, d);
        uint32_t si = tg_input(&g, "s", BERTH_DTYPE_F32, 1, DIMS(C)), bi = tg_input(&g, "b", BERTH_DTYPE_F32, 1, DIMS(C));
        tg_node(&g, "instanceNormalization", 1, IDX(xi), 1, IDX(yi), 4,
                (berth_attr[]){A_OPND("scale", si), A_OPND("bias", bi), A_FLOAT("epsilon", 1e-3),
                               A_STR("layout", nhwc ? "nhwc" : "nchw")});
        tg_output(&g, yi);
        if (h_ok(&g, (void *[]){x, sc, bs}, (void *[]){y})) h_close("instanceNormalization", y, ref, N * C * H * W);
    }
    free(x), free(sc), free(bs);
}

static void test_tile_triangular_gather_elements(void) {
    int32_t x[6] = {1, 2, 3, 4, 5, 6}; /* [2, 3] */
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_I32, 2, DIMS(2, 3));
    uint32_t ti = tg_value(&g, "t", BERTH_DTYPE_I32, 2, DIMS(4, 6));
    uint32_t up = tg_value(&g, "up", BERTH_DTYPE_I32, 2, DIMS(2, 3));
    uint32_t lo = tg_value(&g, "lo", BERTH_DTYPE_I32, 2, DIMS(2, 3));
    uint32_t ii = tg_input(&g, "i", BERTH_DTYPE_I64, 2, DIMS(3, 3));
    uint32_t ge = tg_value(&g, "ge", BERTH_DTYPE_I32, 2, DIMS(3, 3));
    tg_node(&g, "tile", 1, IDX(xi), 1, IDX(ti), 1, (berth_attr[]){A_INTS("repetitions", 2, 2, 2)});
    tg_node(&g, "triangular", 1, IDX(xi), 1, IDX(up), 1, (berth_attr[]){A_INT("diagonal", 1)});
    tg_node(&g, "triangular", 1, IDX(xi), 1, IDX(lo), 2, (berth_attr[]){A_BOOL("upper", 0), A_INT("diagonal", -1)});
    tg_node(&g, "gatherElements", 2, IDX(xi, ii), 1, IDX(ge), 1, (berth_attr[]){A_INT("axis", 0)});
    tg_output(&g, ti);
    tg_output(&g, up);
    tg_output(&g, lo);
    tg_output(&g, ge);
    int64_t idx[9] = {0, 1, 1, -1, 0, 5, 1, -7, 0}; /* -1 wraps to 1; 5 clamps to 1; -7 clamps to 0 */
    int32_t yt[24], yu[6], yl[6], yg[9];
    if (!h_ok(&g, (void *[]){x, idx}, (void *[]){yt, yu, yl, yg})) return;
    int ok = 1;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++) ok &= yt[i * 6 + j] == x[(i % 2) * 3 + j % 3];
    CHECK(ok);
    const int32_t wu[6] = {0, 2, 3, 0, 0, 6}, wl[6] = {0, 0, 0, 4, 0, 0};
    ok = 1;
    for (int i = 0; i < 6; i++) ok &= yu[i] == wu[i] && yl[i] == wl[i];
    CHECK(ok);
    const int64_t eff[9] = {0, 1, 1, 1, 0, 1, 1, 0, 0};
    ok = 1;
    for (int i = 0; i < 9; i++) ok &= yg[i] == x[eff[i] * 3 + i % 3];
    CHECK(ok);

    /* scatterElements along axis 1 of [2, 3]: indices [2, 2] with -1 wrapping to 2 */
    tgraph h = {0};
    xi = tg_input(&h, "x", BERTH_DTYPE_I32, 2, DIMS(2, 3));
    uint32_t si = tg_input(&h, "i", BERTH_DTYPE_I32, 2, DIMS(2, 2));
    uint32_t ui = tg_input(&h, "u", BERTH_DTYPE_I32, 2, DIMS(2, 2));
    uint32_t so = tg_value(&h, "s", BERTH_DTYPE_I32, 2, DIMS(2, 3));
    tg_node(&h, "scatterElements", 3, IDX(xi, si, ui), 1, IDX(so), 1, (berth_attr[]){A_INT("axis", 1)});
    tg_output(&h, so);
    int32_t sidx[4] = {2, 0, -1, 1}, upd[4] = {10, 20, 30, 40}, ys[6];
    if (h_ok(&h, (void *[]){x, sidx, upd}, (void *[]){ys})) {
        const int32_t want[6] = {20, 2, 10, 4, 40, 30};
        ok = 1;
        for (int i = 0; i < 6; i++) ok &= ys[i] == want[i];
        CHECK(ok);
    }
}

/* Block-wise (de)quantization: x [4, 6] with scale/zeroPoint [2, 3], so
 * each scale covers a 2x2 block; int8 and packed int4. */
static void test_quant(void) {
    float *x = h_randf(24), scale[6] = {0.01f, 0.02f, 0.05f, 0.1f, 0.2f, 0.03f};
    for (int i = 0; i < 24; i++) x[i] *= 2;
    int8_t zp8[6] = {0, 3, -2, 1, 0, -5};
    for (int four = 0; four < 2; four++) {
        berth_dtype qt = four ? BERTH_DTYPE_I4 : BERTH_DTYPE_I8;
        uint8_t zp4[3] = {0};
        for (int i = 0; i < 6; i++) {
            int v = zp8[i] < -8 ? -8 : zp8[i];
            zp4[i / 2] |= (uint8_t)((v & 15) << (4 * (i % 2)));
        }
        tgraph g = {0};
        uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(4, 6));
        uint32_t si = tg_input(&g, "s", BERTH_DTYPE_F32, 2, DIMS(2, 3));
        uint32_t zi = tg_input(&g, "z", qt, 2, DIMS(2, 3));
        uint32_t q = tg_value(&g, "q", qt, 2, DIMS(4, 6));
        uint32_t dq = tg_value(&g, "dq", BERTH_DTYPE_F32, 2, DIMS(4, 6));
        tg_node(&g, "quantizeLinear", 3, IDX(xi, si, zi), 1, IDX(q), 0, NULL);
        tg_node(&g, "dequantizeLinear", 3, IDX(q, si, zi), 1, IDX(dq), 0, NULL);
        tg_output(&g, q);
        tg_output(&g, dq);
        int8_t q8[24];
        uint8_t q4[12];
        float y[24];
        double ref[24];
        int want_q[24];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 6; j++) {
                int b = (i / 2) * 3 + j / 2;
                double lo = four ? -8 : -128, hi = four ? 7 : 127;
                double z = four && zp8[b] < -8 ? -8 : zp8[b];
                double v = nearbyint((double)x[i * 6 + j] / scale[b]) + z;
                v = v < lo ? lo : v > hi ? hi : v;
                want_q[i * 6 + j] = (int)v;
                ref[i * 6 + j] = (v - z) * scale[b];
            }
        void *in[3] = {x, scale, four ? (void *)zp4 : zp8};
        if (!h_ok(&g, in, (void *[]){four ? (void *)q4 : q8, y})) continue;
        int ok = 1;
        for (int i = 0; i < 24; i++) {
            int got = four ? ((q4[i / 2] >> (4 * (i % 2))) & 15) : q8[i];
            if (four && got >= 8) got -= 16;
            ok &= got == want_q[i];
        }
        CHECK(ok);
        h_close(four ? "dequantize int4" : "dequantize int8", y, ref, 24);
    }
    free(x);
}

int main(void) {
    if (!h_open(2)) {
        CHECK(0);
        return check_exit();
    }
    test_prelu_logical_softsign();
    test_l2pool();
    test_arg_cumsum();
    test_instance_norm();
    test_tile_triangular_gather_elements();
    test_quant();
    h_shutdown();
    return check_exit();
}
