/* The cpu backend's quantized_activations = int8: berth.matmulQuantized
 * with its activations quantized per weight block and integer dot
 * products. Against a double reference of the exact product, within the
 * bound the quantization allows (each activation moves by at most
 * max|a| / 254 of its block); the tile each isa picks (AVX512-VNNI,
 * AVX-VNNI, AVX2 on x86-64, SDOT on arm64 cpus with dotprod, the portable
 * one under isa generic) must give the same bits at 1 and 2 threads,
 * since their sums are exact integers and the fused AVX512-VNNI tile
 * scales them in the same steps (test_cpu_dot checks every tile
 * alone, including those no isa picks on this cpu). Also: a value the
 * quantization rounds away, a NaN, the weight packed for the fused tile
 * held once, and the option's errors. */
#include <math.h>

#include "cpu_harness.h"

/* 1: open; 0: this cpu lacks the isa (reported, not a failure); -1: failed */
static int open_int8(const char *isa, int threads) {
    if (!h_load()) return -1;
    char t[16];
    snprintf(t, sizeof t, "%d", threads);
    mh_host_clear_options(&host);
    mh_host_option(&host, "threads", t);
    mh_host_option(&host, "isa", isa);
    mh_host_option(&host, "quantized_activations", "int8");
    berth_error err;
    berth_status st = cpu.be->open(&host.services, &cpu.dev, &err);
    if (st == BERTH_ERR_INVALID && strstr(err.msg, "does not support")) {
        printf("not run: isa %s (%s)\n", isa, err.msg);
        h_shutdown();
        return 0;
    }
    CHECK(st == BERTH_OK);
    if (!cpu.dev) {
        fprintf(stderr, "open: %s\n", err.msg);
        h_shutdown();
        return -1;
    }
    berth_caps caps = {.struct_size = sizeof caps};
    CHECK(cpu.be->caps(cpu.dev, &caps, &err) == BERTH_OK);
    CHECK_CONTAINS(caps.device_name, "int8 activations (");
    /* the isa bounds the integer tile too */
    if (strcmp(isa, "generic") == 0) CHECK_CONTAINS(caps.device_name, "int8 activations (generic)");
    if (strcmp(isa, "avx2") == 0) CHECK(strstr(caps.device_name, "avx512vnni") == NULL);
    printf("%s\n", caps.device_name);
    return 1;
}

static uint32_t seed = 2024u;
static int next_int(int lo, int hi) {
    seed = seed * 1664525u + 1013904223u;
    return lo + (int)((seed >> 8) % (uint32_t)(hi - lo + 1));
}

/* The graph y = x @ dequant(q) (+ bias, where given) over the three
 * weights h_upload_quantized uploads, q [k, n] of type t and its scale
 * and zero point [g, n] (the zero point left out of the node unless
 * zero); returns x's operand, y's in *yi. */
static uint32_t mmq_graph(tgraph *gr, berth_dtype t, int64_t m, int64_t k, int64_t n, int64_t g, int zero,
                          const float *bias, uint32_t *yi) {
    uint32_t xi = tg_input(gr, "x", BERTH_DTYPE_F32, 2, DIMS(m, k));
    uint32_t qi = tg_operand(gr, "q", BERTH_OPERAND_WEIGHT, t, 2, DIMS(k, n));
    uint32_t si = tg_operand(gr, "s", BERTH_OPERAND_WEIGHT, BERTH_DTYPE_F32, 2, DIMS(g, n));
    uint32_t zi = tg_operand(gr, "z", BERTH_OPERAND_WEIGHT, t, 2, DIMS(g, n));
    gr->ops[qi].weight = 0, gr->ops[si].weight = 1, gr->ops[zi].weight = 2;
    *yi = tg_value(gr, "y", BERTH_DTYPE_F32, 2, DIMS(m, n));
    if (bias) {
        uint32_t bi = tg_const(gr, "bias", BERTH_DTYPE_F32, 1, DIMS(n), bias, sizeof(float) * (size_t)n);
        tg_node(gr, "berth.matmulQuantized", zero ? 4 : 3, IDX(xi, qi, si, zi), 1, IDX(*yi), 1,
                (berth_attr[]){A_OPND("bias", bi)});
    } else {
        tg_node(gr, "berth.matmulQuantized", zero ? 4 : 3, IDX(xi, qi, si, zi), 1, IDX(*yi), 0, NULL);
    }
    tg_output(gr, *yi);
    return xi;
}

/* Runs y = x @ dequant(q) + bias on the open device; q [k, n] of type t
 * (values in vals), scale and zero [k / rows, n]; zeros NULL: the node
 * has no zero point. */
static berth_status run_q(berth_dtype t, int64_t m, int64_t k, int64_t n, int64_t rows, const int *vals,
                          const int *zeros, const float *sc, const float *x, const float *bias, float *y) {
    int packed = t == BERTH_DTYPE_I4 || t == BERTH_DTYPE_U4;
    int64_t g = k / rows;
    size_t kn = (size_t)(k * n), gn = (size_t)(g * n), bb = packed ? (kn + 1) / 2 : kn, zb = packed ? (gn + 1) / 2 : gn;
    uint8_t *bd = calloc(bb, 1), *zd = calloc(zb, 1);
    for (size_t i = 0; i < kn; i++)
        if (packed) bd[i / 2] |= (uint8_t)((vals[i] & 15) << (4 * (i % 2)));
        else bd[i] = (uint8_t)vals[i];
    for (size_t i = 0; zeros && i < gn; i++)
        if (packed) zd[i / 2] |= (uint8_t)((zeros[i] & 15) << (4 * (i % 2)));
        else zd[i] = (uint8_t)zeros[i];
    berth_weights *w = h_upload_quantized(t, k, n, g, bd, bb, sc, zd, zb);
    berth_error err = {{0}};
    tgraph gr = {0};
    uint32_t yi;
    mmq_graph(&gr, t, m, k, n, g, zeros != NULL, bias, &yi);
    berth_status st = h_run_w(&gr, w, (void *[]){(void *)x}, (void *[]){y}, &err);
    if (st) fprintf(stderr, "  run: %s\n", err.msg);
    cpu.be->free_weights(w);
    free(bd), free(zd);
    return st;
}

enum { SHAPES = 8, EXTREME = 7, TYPES = 4 };
static const int64_t shapes[SHAPES][4] = {
    /* {m, k, n, rows per block}: one row; tiles cut off on every side; a
     * block of 30 (not a multiple of 4); one block of 1100 (slices of 512);
     * rows past one task's 128 (256 for the fused tile); many blocks; more
     * blocks than the fused tile takes at once (512 rows), so its sums go
     * on in a second call */
    {1, 64, 33, 32}, {5, 96, 37, 32}, {7, 90, 19, 30}, {3, 1100, 20, 1100}, {270, 128, 48, 64}, {2, 512, 16, 16},
    {11, 1280, 21, 16},
    /* the extremes (EXTREME): activations +-1, so every quantized one is
     * +-127, and weights at their type's ends, so b' is -128 or 127 */
    {9, 100, 35, 50}};
static const berth_dtype types[TYPES] = {BERTH_DTYPE_I8, BERTH_DTYPE_U8, BERTH_DTYPE_I4, BERTH_DTYPE_U4};
/* the first run's outputs, with and without zero points: all later ones
 * must equal them */
static float *first[2][SHAPES][TYPES];

static void check_shape(int si, int ti, int nz) {
    berth_dtype t = types[ti];
    int64_t m = shapes[si][0], k = shapes[si][1], n = shapes[si][2], rows = shapes[si][3], g = k / rows;
    int lo = t == BERTH_DTYPE_I8 ? -128 : t == BERTH_DTYPE_I4 ? -8 : 0;
    int hi = t == BERTH_DTYPE_I8 ? 127 : t == BERTH_DTYPE_U8 ? 255 : t == BERTH_DTYPE_I4 ? 7 : 15;
    size_t kn = (size_t)(k * n), gn = (size_t)(g * n), mn = (size_t)(m * n);
    int *vals = malloc(sizeof(int) * kn), *zeros = malloc(sizeof(int) * gn);
    float *sc = malloc(sizeof(float) * gn), *bias = malloc(sizeof(float) * (size_t)n);
    float *x = malloc(sizeof(float) * (size_t)(m * k)), *y = calloc(mn, sizeof(float));
    /* the same values for every kernel and thread count */
    seed = 77u + (uint32_t)(si * TYPES + ti);
    for (int64_t i = 0; i < m * k; i++)
        x[i] = si == EXTREME ? (next_int(0, 1) ? 1.0f : -1.0f) : 0.001f * (float)next_int(-1000, 1000);
    for (int64_t j = 0; j < n; j++) bias[j] = 0.01f * (float)next_int(-100, 100);
    for (size_t i = 0; i < kn; i++) vals[i] = si == EXTREME ? (next_int(0, 1) ? hi : lo) : next_int(lo, hi);
    for (size_t i = 0; i < gn; i++) zeros[i] = nz ? 0 : next_int(lo, hi), sc[i] = 0.001f * (float)next_int(1, 100);
    CHECK(run_q(t, m, k, n, rows, vals, nz ? NULL : zeros, sc, x, bias, y) == BERTH_OK);
    double worst = 0.0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double exact = bias[j], bound = 0.0, mag = fabs(bias[j]);
            for (int64_t b = 0; b < g; b++) {
                double amax = 0.0, wsum = 0.0;
                for (int64_t p = b * rows; p < (b + 1) * rows; p++) {
                    double wv = ((double)vals[p * n + j] - zeros[b * n + j]) * sc[b * n + j];
                    double av = x[i * k + p];
                    exact += av * wv;
                    mag += fabs(av * wv);
                    amax = fabs(av) > amax ? fabs(av) : amax;
                    wsum += fabs(wv);
                }
                bound += amax / 254.0 * wsum;
            }
            /* and float rounding of the scaled sums */
            bound = bound * 1.001 + 1e-6 * mag + 1e-6;
            double err = fabs(y[i * n + j] - exact);
            if (!(err <= bound)) {
                printf("FAIL: int8 shape %d type %d: y[%lld, %lld] = %.9g, exact %.9g, error %.3g beyond %.3g\n", si,
                       ti, (long long)i, (long long)j, y[i * n + j], exact, err, bound);
                check_failures++;
                i = m;
                break;
            }
            worst = err / bound > worst ? err / bound : worst;
        }
    if (!first[nz][si][ti]) {
        first[nz][si][ti] = y;
        printf("ok: int8 shape %d type %d%s: worst error %.2f of the bound\n", si, ti, nz ? ", no zero point" : "",
               worst);
    } else {
        if (memcmp(first[nz][si][ti], y, sizeof(float) * mn) != 0) {
            printf("FAIL: int8 shape %d type %d%s: not the same bits as the first kernel and thread count\n", si, ti,
                   nz ? ", no zero point" : "");
            check_failures++;
        }
        free(y);
    }
    free(vals), free(zeros), free(sc), free(bias), free(x);
}

/* 0.003 * 127 rounds to 0 against a block maximum of 1: the int8 product
 * drops it where the float one keeps it; 0.006 becomes 1/127. A NaN makes
 * its block's outputs NaN. */
static void check_rounding(void) {
    int vals[4 * 2] = {0, 1, 1, 0, 0, 0, 0, 0}, zeros[2] = {0, 0}; /* y0 = x1, y1 = x0 */
    float sc[2] = {1.0f, 1.0f}, bias[2] = {0.0f, 0.0f}, y[2];
    float x[4] = {1.0f, 0.003f, 0.0f, 0.0f};
    CHECK(run_q(BERTH_DTYPE_I8, 1, 4, 2, 4, vals, zeros, sc, x, bias, y) == BERTH_OK);
    CHECK(y[0] == 0.0f && y[1] == 1.0f);
    x[1] = 0.006f;
    CHECK(run_q(BERTH_DTYPE_I8, 1, 4, 2, 4, vals, zeros, sc, x, bias, y) == BERTH_OK);
    CHECK(fabsf(y[0] - 1.0f / 127.0f) < 1e-7f && y[1] == 1.0f);
    x[2] = NAN;
    CHECK(run_q(BERTH_DTYPE_I8, 1, 4, 2, 4, vals, zeros, sc, x, bias, y) == BERTH_OK);
    CHECK(isnan(y[0]) && isnan(y[1]));
}

/* An 8-bit weight is packed for the fused AVX512-VNNI tile once, at the
 * first plan, and then held only so: weights_bytes counts the panels in
 * place of the upload. A plan that reads it as uploaded (a cast) gets it
 * back exactly, rebuilt from the panels and held while that plan lives;
 * the product plan still gives its first bits afterwards. Where the cpu
 * lacks the fused tile, nothing is packed and the upload is all there
 * is. */
static void check_packed_once(berth_dtype t) {
    enum { M = 5, K = 96, N = 37, ROWS = 32, G = K / ROWS };
    int lo = t == BERTH_DTYPE_I8 ? -128 : 0, hi = t == BERTH_DTYPE_I8 ? 127 : 255;
    uint8_t bq[K * N], zq[G * N];
    float sc[G * N], x[M * K], y1[M * N], y2[M * N];
    int32_t back[K * N];
    seed = 5u;
    for (int i = 0; i < K * N; i++) bq[i] = (uint8_t)next_int(lo, hi);
    for (int i = 0; i < G * N; i++) zq[i] = (uint8_t)next_int(lo, hi), sc[i] = 0.001f * (float)next_int(1, 100);
    for (int i = 0; i < M * K; i++) x[i] = 0.001f * (float)next_int(-1000, 1000);
    berth_weights *w = h_upload_quantized(t, K, N, G, bq, sizeof bq, sc, zq, sizeof zq);
    uint64_t uploaded = sizeof bq + sizeof sc + sizeof zq;
    CHECK(cpu.be->weights_bytes(w) == uploaded);
    berth_error err = {{0}};
    tgraph g = {0};
    uint32_t yi, xi = mmq_graph(&g, t, M, K, N, G, 1, NULL, &yi);
    berth_graph_desc d = tg_desc(&g);
    berth_plan *p1 = NULL, *p2 = NULL;
    CHECK(cpu.be->plan(cpu.dev, w, &d, &p1, &err) == BERTH_OK);
    berth_caps caps = {.struct_size = sizeof caps};
    CHECK(cpu.be->caps(cpu.dev, &caps, &err) == BERTH_OK);
    /* 3 panels of 16 columns, 3 blocks of 32 rows each */
    uint64_t held = strstr(caps.device_name, "(avx512vnni)") ? 3 * G * ROWS * 16 + sizeof sc + sizeof zq : uploaded;
    CHECK(cpu.be->weights_bytes(w) == held);
    berth_tensor tx = h_tensor(&g.ops[xi], x), ty = h_tensor(&g.ops[yi], y1);
    CHECK(p1 && cpu.be->run(p1, &tx, 1, &ty, 1, &err) == BERTH_OK);

    tgraph g2 = {0};
    uint32_t q2 = tg_operand(&g2, "q", BERTH_OPERAND_WEIGHT, t, 2, DIMS(K, N));
    uint32_t ci = tg_value(&g2, "c", BERTH_DTYPE_I32, 2, DIMS(K, N));
    tg_node(&g2, "cast", 1, IDX(q2), 1, IDX(ci), 1, (berth_attr[]){A_STR("type", "int32")});
    tg_output(&g2, ci);
    berth_graph_desc d2 = tg_desc(&g2);
    CHECK(cpu.be->plan(cpu.dev, w, &d2, &p2, &err) == BERTH_OK);
    CHECK(cpu.be->weights_bytes(w) == (held == uploaded ? uploaded : held + sizeof bq));
    berth_tensor tc = h_tensor(&g2.ops[ci], back);
    CHECK(p2 && cpu.be->run(p2, NULL, 0, &tc, 1, &err) == BERTH_OK);
    int same = 1;
    for (int i = 0; i < K * N; i++) same &= back[i] == (t == BERTH_DTYPE_I8 ? (int8_t)bq[i] : bq[i]);
    CHECK(same);
    cpu.be->free_plan(p2);
    CHECK(cpu.be->weights_bytes(w) == held);
    ty = h_tensor(&g.ops[yi], y2);
    CHECK(p1 && cpu.be->run(p1, &tx, 1, &ty, 1, &err) == BERTH_OK);
    CHECK(memcmp(y1, y2, sizeof y1) == 0);
    cpu.be->free_plan(p1);
    cpu.be->free_weights(w);
    printf("ok: %s weight held once (%llu bytes, %llu as uploaded)\n", t == BERTH_DTYPE_I8 ? "int8" : "uint8",
           (unsigned long long)held, (unsigned long long)uploaded);
}

/* Products reading one input quantize it once: y1 and y3 (zero points)
 * share y1's quantized x, y2 (no zero points: its rows' corrections
 * differ) quantizes its own, y4 reads another input. Each must give the
 * bits of the same product planned alone. */
static void check_shared_input(berth_dtype t) {
    enum { M = 7, K = 96, N = 37, ROWS = 32, G = K / ROWS };
    int lo = t == BERTH_DTYPE_I8 ? -128 : 0, hi = t == BERTH_DTYPE_I8 ? 127 : 255;
    uint8_t bq[K * N], zq[G * N];
    float sc[G * N], x[M * K], x2[M * K], y[4][M * N], want[3][M * N];
    seed = 9u;
    for (int i = 0; i < K * N; i++) bq[i] = (uint8_t)next_int(lo, hi);
    for (int i = 0; i < G * N; i++) zq[i] = (uint8_t)next_int(lo, hi), sc[i] = 0.001f * (float)next_int(1, 100);
    for (int i = 0; i < M * K; i++)
        x[i] = 0.001f * (float)next_int(-1000, 1000), x2[i] = 0.002f * (float)next_int(-1000, 1000);
    berth_weights *w = h_upload_quantized(t, K, N, G, bq, sizeof bq, sc, zq, sizeof zq);
    berth_error err = {{0}};
    /* alone: with zero points on x and on x2, without on x */
    for (int r = 0; r < 3; r++) {
        tgraph g = {0};
        uint32_t yi;
        mmq_graph(&g, t, M, K, N, G, r != 2, NULL, &yi);
        CHECK(h_run_w(&g, w, (void *[]){r == 1 ? x2 : x}, (void *[]){want[r]}, &err) == BERTH_OK);
    }
    tgraph g = {0};
    uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(M, K));
    uint32_t x2i = tg_input(&g, "x2", BERTH_DTYPE_F32, 2, DIMS(M, K));
    uint32_t qi = tg_operand(&g, "q", BERTH_OPERAND_WEIGHT, t, 2, DIMS(K, N));
    uint32_t si = tg_operand(&g, "s", BERTH_OPERAND_WEIGHT, BERTH_DTYPE_F32, 2, DIMS(G, N));
    uint32_t zi = tg_operand(&g, "z", BERTH_OPERAND_WEIGHT, t, 2, DIMS(G, N));
    g.ops[qi].weight = 0, g.ops[si].weight = 1, g.ops[zi].weight = 2;
    uint32_t yi[4];
    for (int r = 0; r < 4; r++) {
        char name[8];
        snprintf(name, sizeof name, "y%d", r + 1);
        yi[r] = tg_value(&g, name, BERTH_DTYPE_F32, 2, DIMS(M, N));
    }
    tg_node(&g, "berth.matmulQuantized", 4, IDX(xi, qi, si, zi), 1, IDX(yi[0]), 0, NULL);
    tg_node(&g, "berth.matmulQuantized", 3, IDX(xi, qi, si), 1, IDX(yi[1]), 0, NULL);
    tg_node(&g, "berth.matmulQuantized", 4, IDX(xi, qi, si, zi), 1, IDX(yi[2]), 0, NULL);
    tg_node(&g, "berth.matmulQuantized", 4, IDX(x2i, qi, si, zi), 1, IDX(yi[3]), 0, NULL);
    for (int r = 0; r < 4; r++) tg_output(&g, yi[r]);
    CHECK(h_run_w(&g, w, (void *[]){x, x2}, (void *[]){y[0], y[1], y[2], y[3]}, &err) == BERTH_OK);
    CHECK(memcmp(y[0], want[0], sizeof want[0]) == 0);
    CHECK(memcmp(y[1], want[2], sizeof want[2]) == 0);
    CHECK(memcmp(y[2], want[0], sizeof want[0]) == 0);
    CHECK(memcmp(y[3], want[1], sizeof want[1]) == 0);
    cpu.be->free_weights(w);
}

int main(void) {
    /* each isa picks its own tile (on an x86-64 cpu with AVX512-VNNI:
     * generic, AVX-VNNI or AVX2, AVX512-VNNI, AVX512-VNNI); all must give
     * the first one's bits */
    static const char *const isas[] = {"generic", "avx2", "avx512", "neon", "auto"};
    int ran = 0, must = 0;
    for (int i = 0; i < 5; i++)
        for (int threads = 1; threads <= 2; threads++) {
            int o = open_int8(isas[i], threads);
            must += strcmp(isas[i], "generic") == 0 || strcmp(isas[i], "auto") == 0;
            CHECK(o >= 0);
            if (o <= 0) continue;
            ran++;
            for (int s = 0; s < SHAPES; s++)
                for (int t = 0; t < TYPES; t++)
                    for (int nz = 0; nz < 2; nz++) check_shape(s, t, nz);
            check_rounding();
            check_packed_once(BERTH_DTYPE_I8);
            check_packed_once(BERTH_DTYPE_U8);
            check_shared_input(BERTH_DTYPE_I8);
            check_shared_input(BERTH_DTYPE_U8);
            h_shutdown();
        }
    CHECK(ran >= must && must == 4);
    /* the option's errors */
    if (h_load()) {
        mh_host_clear_options(&host);
        mh_host_option(&host, "quantized_activations", "int4");
        berth_error err;
        berth_device *d = NULL;
        CHECK(cpu.be->open(&host.services, &d, &err) == BERTH_ERR_INVALID);
        CHECK(d == NULL);
        CHECK_CONTAINS(err.msg, "quantized_activations");
        CHECK_CONTAINS(err.msg, "'int4'");
        h_shutdown();
    }
    for (int s = 0; s < SHAPES; s++)
        for (int t = 0; t < TYPES; t++) free(first[0][s][t]), free(first[1][s][t]);
    return check_exit();
}
