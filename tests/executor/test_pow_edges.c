/* pow with a constant exponent, through the whole engine on the cpu
 * backend: the specializer rewrites 1..4 and -1..-4 as mul / reciprocal /
 * identity and folds 0 to ones (tests/specialize proves the rewrites
 * happen); here the answers must be pow's at the edge values of ops.def
 * (NaN, +-inf, +-0, negative bases, overflow and underflow) and close to
 * powf elsewhere: exactly the correctly rounded power for exponents 1, 2
 * and -1 (one rounding), within a few ulp for the rest. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "berth/berth.h"
#include "check.h"
#include "slice_fixture.h"

static const double exponents[] = {1, 2, 3, 4, -1, -2, -3, -4, 0, 0.5};
#define N_EXP (sizeof exponents / sizeof exponents[0])

static const float xs[] = {
    NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.5f, -0.5f, 3.7f, -3.7f,
    1e-20f, -1e-20f,           /* the square underflows to a subnormal, the cube to zero */
    1.5e19f, -1.5e19f,         /* the square is finite, the cube overflows */
    1e30f, 1e-30f,             /* a negative power over- and underflows */
    0x1.8p-64f, -0x1.8p-64f,   /* x^-2 is finite though x^2 is near the subnormals */
    0x1.fffffep127f,           /* 1/x is subnormal */
    1e-40f, -1e-40f,           /* subnormal bases */
    1.0000001f, 0.99999994f,
};
#define N_X (sizeof xs / sizeof xs[0])

/* ulps between two finite floats of the same sign, or a large count */
static double ulps(float got, float want) {
    if (signbit(got) != signbit(want) && (got != 0 || want != 0)) return 1e9;
    double step = (double)nextafterf(fabsf(want), INFINITY) - fabsf(want);
    return fabs((double)got - want) / step;
}

static void check_one(double e, float x, float got) {
    float want = powf(x, (float)e);
    int ok;
    if (isnan(want)) ok = isnan(got);
    else if (isinf(want) || want == 0) ok = got == want && signbit(got) == signbit(want);
    else if (e == 1 || e == 2 || e == -1) ok = got == (float)pow((double)x, e); /* one rounding */
    else ok = !isnan(got) && !isinf(got) && ulps(got, want) <= 4;
    if (!ok) fprintf(stderr, "pow(%a, %g): got %a, powf gives %a\n", (double)x, e, (double)got, (double)want);
    CHECK(ok);
}

int main(void) {
    slice_model m; /* for its temp dir, file helpers and a weights file */
    if (slice_model_write(&m, 1)) return 1;
    static char graph[4096];
    size_t o = (size_t)snprintf(graph, sizeof graph, "webnn_graph \"pow\" v2 {\n  inputs { x: f32[%zu]; }\n  consts {\n",
                                N_X);
    for (size_t k = 0; k < N_EXP; k++)
        o += (size_t)snprintf(graph + o, sizeof graph - o, "    e%zu: f32[] @scalar(%.17g);\n", k, exponents[k]);
    o += (size_t)snprintf(graph + o, sizeof graph - o, "  }\n  nodes {\n");
    for (size_t k = 0; k < N_EXP; k++)
        o += (size_t)snprintf(graph + o, sizeof graph - o, "    y%zu = pow(x, e%zu);\n", k, k);
    o += (size_t)snprintf(graph + o, sizeof graph - o, "  }\n  outputs {");
    for (size_t k = 0; k < N_EXP; k++) o += (size_t)snprintf(graph + o, sizeof graph - o, " y%zu;", k);
    snprintf(graph + o, sizeof graph - o, " }\n}\n");
    char path[256];
    slice_write_file(&m, "pow.webnn", graph, path, sizeof path);
    berth_executor *ex = NULL;
    berth_error err;
    berth_status st = berth_executor_open(
        slice_write_file(&m, "pow.ini", "[model]\ngraph = pow.webnn\nweights = model.safetensors\n[backend]\nuse = cpu\n",
                         path, sizeof path),
        NULL, &ex, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) {
        fprintf(stderr, "open: %s\n", err.msg);
        slice_model_remove(&m);
        return check_exit();
    }
    berth_tensor in = {BERTH_DTYPE_F32, 1, {(int64_t)N_X}, (void *)xs, sizeof xs, 0}, out[N_EXP];
    memset(out, 0, sizeof out);
    st = berth_executor_run(ex, 0, &in, 1, out, N_EXP, NULL, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) fprintf(stderr, "run: %s\n", err.msg);
    for (size_t k = 0; k < N_EXP && st == BERTH_OK; k++) {
        CHECK(out[k].rank == 1 && out[k].dims[0] == (int64_t)N_X && out[k].bytes == sizeof xs);
        if (out[k].bytes != sizeof xs) continue;
        const float *y = out[k].data;
        for (size_t i = 0; i < N_X; i++) check_one(exponents[k], xs[i], y[i]);
    }
    for (size_t k = 0; k < N_EXP; k++) berth_tensor_release(&out[k]);
    berth_executor_close(ex);
    slice_model_remove(&m);
    return check_exit();
}
