/* Op cases of convolution, pooling and resampling (nchw; filters oihw,
 * transposed iohw), berth.conv2dEpilogue's included, with their
 * expected values from the plain reference loops here. */
#include <math.h>
#include <string.h>

#include "op_cases_build.h"

/* ---- convolution, pooling, resampling (nchw; filters oihw, transposed iohw) ---- */

static void conv_ref(const float *x, const int64_t *dx, const float *w, const int64_t *dw, const float *bias,
                     int64_t groups, const int64_t *pad, const int64_t *stride, double *y, const int64_t *dy) {
    int64_t cin_g = dw[1], cout_g = dy[1] / groups;
    for (int64_t n = 0; n < dy[0]; n++)
        for (int64_t o = 0; o < dy[1]; o++)
            for (int64_t i = 0; i < dy[2]; i++)
                for (int64_t j = 0; j < dy[3]; j++) {
                    double s = bias ? bias[o] : 0;
                    int64_t g = o / cout_g;
                    for (int64_t ci = 0; ci < cin_g; ci++)
                        for (int64_t kh = 0; kh < dw[2]; kh++)
                            for (int64_t kw = 0; kw < dw[3]; kw++) {
                                int64_t h = i * stride[0] - pad[0] + kh, v = j * stride[1] - pad[2] + kw;
                                if (h < 0 || h >= dx[2] || v < 0 || v >= dx[3]) continue;
                                int64_t cx = g * cin_g + ci;
                                s += (double)x[((n * dx[1] + cx) * dx[2] + h) * dx[3] + v] *
                                     w[((o * dw[1] + ci) * dw[2] + kh) * dw[3] + kw];
                            }
                    y[((n * dy[1] + o) * dy[2] + i) * dy[3] + j] = s;
                }
}

void c_conv2d_pad_stride(oc_case *c, const char *op) {
    /* x [1, 1, 5, 5], w [2, 1, 3, 3], padding 1, strides 2, bias -> [1, 2, 3, 3] */
    static float x[25], w[18];
    static const float bias[2] = {0.5f, -1};
    static double want[18];
    fill(x, 25, 5), fill(w, 18, 6);
    conv_ref(x, DIMS(1, 1, 5, 5), w, DIMS(2, 1, 3, 3), bias, 1, DIMS(1, 1, 1, 1), DIMS(2, 2), want,
             DIMS(1, 2, 3, 3));
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 1, 5, 5), x), f = in(c, "w", F32, 4, DIMS(2, 1, 3, 3), w);
    uint32_t b = tg_const(&c->g, "bias", F32, 1, DIMS(2), bias, sizeof bias);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 2, 3, 3), want);
    node(c, op, 2, IDX(a, f), 1, IDX(o),
         ATTRS(A_INTS("padding", 4, 1, 1, 1, 1), A_INTS("strides", 2, 2, 2), A_OPND("bias", b)));
}

void c_conv2d_groups(oc_case *c, const char *op) {
    /* x [1, 4, 3, 3], w [4, 2, 2, 2], groups 2 -> [1, 4, 2, 2] */
    static float x[36], w[32];
    static double want[16];
    fill(x, 36, 7), fill(w, 32, 8);
    conv_ref(x, DIMS(1, 4, 3, 3), w, DIMS(4, 2, 2, 2), NULL, 2, DIMS(0, 0, 0, 0), DIMS(1, 1), want,
             DIMS(1, 4, 2, 2));
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 4, 3, 3), x), f = in(c, "w", F32, 4, DIMS(4, 2, 2, 2), w);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 4, 2, 2), want);
    node(c, op, 2, IDX(a, f), 1, IDX(o), ATTRS(A_INT("groups", 2)));
}

/* berth.conv2dEpilogue: a convolution, then a program on its result;
 * one case per path of a kernel (a product of four or more output
 * channels, depthwise, a product of fewer). */
void c_conv_epilogue_gemm(oc_case *c, const char *op) {
    /* x [1, 2, 5, 5], w [4, 2, 3, 3], padding 1, bias; then
     * hardswish(conv) * s[c] + r */
    static float x[50], w[72], r[100];
    static const float bias[4] = {0.5f, -1, 0.25f, 2}, sc[4] = {1, -2, 0.5f, 3};
    static double want[100];
    fill(x, 50, 11), fill(w, 72, 12), fill(r, 100, 13);
    conv_ref(x, DIMS(1, 2, 5, 5), w, DIMS(4, 2, 3, 3), bias, 1, DIMS(1, 1, 1, 1), DIMS(1, 1), want, DIMS(1, 4, 5, 5));
    for (int i = 0; i < 100; i++) {
        double v = want[i], cl = v + 3 < 0 ? 0 : v + 3 > 6 ? 6 : v + 3;
        want[i] = v * cl / 6 * sc[i / 25] + r[i];
    }
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 2, 5, 5), x), f = in(c, "w", F32, 4, DIMS(4, 2, 3, 3), w);
    uint32_t b = tg_const(&c->g, "bias", F32, 1, DIMS(4), bias, sizeof bias);
    uint32_t si = in(c, "s", F32, 3, DIMS(4, 1, 1), sc), ri = in(c, "r", F32, 4, DIMS(1, 4, 5, 5), r);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 4, 5, 5), want);
    /* inputs: 0 the convolution, 1 s, 2 r; steps from 3 */
    node(c, op, 2, IDX(a, f), 1, IDX(o),
         ATTRS(A_INTS("padding", 4, 1, 1, 1, 1), A_OPND("bias", b), A_STR("ops", "add clamp mul div mul add"),
               A_INTS("steps", 12, 0, -1, 3, -2, 0, 4, 5, -3, 6, 1, 7, 2), A_FLOATS("constants", 3, 3.0, 0.0, 6.0),
               ((berth_attr){.key = "epilogueInputs", .type = BERTH_ATTR_OPERANDS, .count = 2,
                             .ints = (const int64_t[]){si, ri}})));
}

void c_conv_epilogue_depthwise(oc_case *c, const char *op) {
    /* x [1, 3, 4, 4], w [3, 1, 3, 3], groups 3, padding 1; then relu(conv) * 2 */
    static float x[48], w[27];
    static double want[48];
    fill(x, 48, 14), fill(w, 27, 15);
    conv_ref(x, DIMS(1, 3, 4, 4), w, DIMS(3, 1, 3, 3), NULL, 3, DIMS(1, 1, 1, 1), DIMS(1, 1), want, DIMS(1, 3, 4, 4));
    for (int i = 0; i < 48; i++) want[i] = (want[i] > 0 ? want[i] : 0) * 2;
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 3, 4, 4), x), f = in(c, "w", F32, 4, DIMS(3, 1, 3, 3), w);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 3, 4, 4), want);
    node(c, op, 2, IDX(a, f), 1, IDX(o),
         ATTRS(A_INTS("padding", 4, 1, 1, 1, 1), A_INT("groups", 3), A_STR("ops", "relu mul"),
               A_INTS("steps", 4, 0, 0, 1, -1), A_FLOATS("constants", 1, 2.0)));
}

void c_conv_epilogue_narrow(oc_case *c, const char *op) {
    /* x [2, 3, 2, 3], w [2, 3, 1, 1]; then conv * sigmoid(conv) (SiLU) */
    static float x[36], w[6];
    static double want[24];
    fill(x, 36, 16), fill(w, 6, 17);
    conv_ref(x, DIMS(2, 3, 2, 3), w, DIMS(2, 3, 1, 1), NULL, 1, DIMS(0, 0, 0, 0), DIMS(1, 1), want, DIMS(2, 2, 2, 3));
    for (int i = 0; i < 24; i++) want[i] = want[i] / (1 + exp(-want[i]));
    uint32_t a = in(c, "x", F32, 4, DIMS(2, 3, 2, 3), x), f = in(c, "w", F32, 4, DIMS(2, 3, 1, 1), w);
    uint32_t o = out_f(c, "y", 4, DIMS(2, 2, 2, 3), want);
    node(c, op, 2, IDX(a, f), 1, IDX(o), ATTRS(A_STR("ops", "sigmoid mul"), A_INTS("steps", 4, 0, 0, 0, 1)));
}

/* Large results, which the cpu backend computes in column blocks packed
 * straight from the input (1024 columns or more on two threads). */
void c_conv2d_large(oc_case *c, const char *op) {
    /* x [1, 2, 48, 48], w [4, 2, 3, 3], padding 1, strides 1 -> [1, 4, 48, 48] */
    static float x[2 * 48 * 48], w[72];
    static const float bias[4] = {0.5f, -1, 0.25f, 2};
    static double want[4 * 48 * 48];
    fill(x, 2 * 48 * 48, 18), fill(w, 72, 19);
    conv_ref(x, DIMS(1, 2, 48, 48), w, DIMS(4, 2, 3, 3), bias, 1, DIMS(1, 1, 1, 1), DIMS(1, 1), want, DIMS(1, 4, 48, 48));
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 2, 48, 48), x), f = in(c, "w", F32, 4, DIMS(4, 2, 3, 3), w);
    uint32_t b = tg_const(&c->g, "bias", F32, 1, DIMS(4), bias, sizeof bias);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 4, 48, 48), want);
    node(c, op, 2, IDX(a, f), 1, IDX(o), ATTRS(A_INTS("padding", 4, 1, 1, 1, 1), A_OPND("bias", b)));
}

void c_conv2d_large_strided(oc_case *c, const char *op) {
    /* x [1, 3, 64, 64], w [8, 3, 3, 3], padding [1, 0, 1, 2], strides 2,
     * dilations [1, 2] -> [1, 8, 32, 32] */
    static float x[3 * 64 * 64], w[8 * 27];
    static double want[8 * 32 * 32];
    fill(x, 3 * 64 * 64, 23), fill(w, 8 * 27, 24);
    /* conv_ref has no dilation: the filter dilated by hand, [8, 3, 3, 5] */
    static float wd[8 * 3 * 3 * 5];
    for (int i = 0; i < 8 * 3 * 3; i++)
        for (int j = 0; j < 5; j++) wd[i * 5 + j] = j % 2 ? 0.0f : w[i * 3 + j / 2];
    conv_ref(x, DIMS(1, 3, 64, 64), wd, DIMS(8, 3, 3, 5), NULL, 1, DIMS(1, 0, 1, 2), DIMS(2, 2), want, DIMS(1, 8, 32, 32));
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 3, 64, 64), x), f = in(c, "w", F32, 4, DIMS(8, 3, 3, 3), w);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 8, 32, 32), want);
    node(c, op, 2, IDX(a, f), 1, IDX(o),
         ATTRS(A_INTS("padding", 4, 1, 0, 1, 2), A_INTS("strides", 2, 2, 2), A_INTS("dilations", 2, 1, 2)));
}

void c_conv_epilogue_large(oc_case *c, const char *op) {
    /* x [2, 3, 40, 40], w [8, 3, 1, 1]; then relu(conv) * s[c] */
    static float x[2 * 3 * 1600], w[24], sc[8];
    static double want[2 * 8 * 1600];
    fill(x, 2 * 3 * 1600, 20), fill(w, 24, 21), fill(sc, 8, 22);
    conv_ref(x, DIMS(2, 3, 40, 40), w, DIMS(8, 3, 1, 1), NULL, 1, DIMS(0, 0, 0, 0), DIMS(1, 1), want, DIMS(2, 8, 40, 40));
    for (int i = 0; i < 2 * 8 * 1600; i++) want[i] = (want[i] > 0 ? want[i] : 0) * sc[(i / 1600) % 8];
    uint32_t a = in(c, "x", F32, 4, DIMS(2, 3, 40, 40), x), f = in(c, "w", F32, 4, DIMS(8, 3, 1, 1), w);
    uint32_t si = in(c, "s", F32, 3, DIMS(8, 1, 1), sc);
    uint32_t o = out_f(c, "y", 4, DIMS(2, 8, 40, 40), want);
    node(c, op, 2, IDX(a, f), 1, IDX(o),
         ATTRS(A_STR("ops", "relu mul"), A_INTS("steps", 4, 0, 0, 2, 1),
               ((berth_attr){.key = "epilogueInputs", .type = BERTH_ATTR_OPERANDS, .count = 1,
                             .ints = (const int64_t[]){si}})));
}

void c_conv_transpose2d(oc_case *c, const char *op) {
    /* x [1, 2, 2, 2], w [2, 1, 3, 3] (iohw), strides 2, padding 1 -> [1, 1, 3, 3]:
     * y[(i*2 - 1 + kh), (j*2 - 1 + kw)] += x[ci, i, j] * w[ci, 0, kh, kw] */
    static float x[8], w[18];
    static double want[9];
    fill(x, 8, 9), fill(w, 18, 10);
    memset(want, 0, sizeof want);
    for (int ci = 0; ci < 2; ci++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
                for (int kh = 0; kh < 3; kh++)
                    for (int kw = 0; kw < 3; kw++) {
                        int h = i * 2 - 1 + kh, v = j * 2 - 1 + kw;
                        if (h < 0 || h >= 3 || v < 0 || v >= 3) continue;
                        want[h * 3 + v] += (double)x[(ci * 2 + i) * 2 + j] * w[ci * 9 + kh * 3 + kw];
                    }
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 2, 2, 2), x), f = in(c, "w", F32, 4, DIMS(2, 1, 3, 3), w);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 1, 3, 3), want);
    node(c, op, 2, IDX(a, f), 1, IDX(o), ATTRS(A_INTS("padding", 4, 1, 1, 1, 1), A_INTS("strides", 2, 2, 2)));
}

static const float P16[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

void c_pool(oc_case *c, const char *op) {
    /* 1..16 as [1, 1, 4, 4], windows 2x2, strides 2 */
    static double want[3][4];
    static int slot;
    double *w = want[slot++ % 3];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double s = 0, m = -INFINITY, q = 0;
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++) {
                    double v = P16[(i * 2 + a) * 4 + j * 2 + b];
                    s += v, q += v * v, m = v > m ? v : m;
                }
            w[i * 2 + j] = !strcmp(op, "averagePool2d") ? s / 4 : !strcmp(op, "maxPool2d") ? m : sqrt(q);
        }
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 1, 4, 4), P16);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 1, 2, 2), w);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_INTS("windowDimensions", 2, 2, 2), A_INTS("strides", 2, 2, 2)));
}

void c_resample_nearest(oc_case *c, const char *op) {
    static const float x[4] = {1, 2, 3, 4};
    static const double want[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 1, 2, 2), x);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 1, 4, 4), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_STR("mode", "nearest-neighbor"), A_FLOATS("scales", 2, 2.0, 2.0)));
}

void c_resample_linear(oc_case *c, const char *op) {
    /* half-pixel centres, 2 -> 4: source coordinates -0.25 0.25 0.75 1.25,
     * clamped to 0 0.25 0.75 1 */
    static const float x[4] = {1, 2, 3, 4};
    static double want[16];
    const double t[4] = {0, 0.25, 0.75, 1};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double top = 1 + t[j], bottom = 3 + t[j];
            want[i * 4 + j] = top + (bottom - top) * t[i];
        }
    uint32_t a = in(c, "x", F32, 4, DIMS(1, 1, 2, 2), x);
    uint32_t o = out_f(c, "y", 4, DIMS(1, 1, 4, 4), want);
    node(c, op, 1, IDX(a), 1, IDX(o), ATTRS(A_STR("mode", "linear"), A_INTS("sizes", 2, 4, 4)));
}
