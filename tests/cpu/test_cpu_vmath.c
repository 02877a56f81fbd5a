/* The cpu backend's vector math against libm in double precision: exp,
 * erf, tanh and sigmoid as the unary ops and gemm's epilogue compute them
 * (NEON polynomials on arm64, libm or the portable loops elsewhere), and
 * softmax's exp. Each is swept over [-100, 100] densely (a uniform grid,
 * plus float bit patterns at a stride, which reach every binade down to
 * the subnormals) and run on the edge values with exact expectations:
 * NaN in gives NaN, infinities and overflow, signed zeros, the ends of the
 * float exponent range. The sources are compiled into this program: the
 * module hides these functions. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cpu_internal.h"

/* Relative error allowed, a few float ulp (one ulp is 6e-8 to 1.2e-7). */
#define BOUND 4e-7

typedef void (*vfn)(const float *x, float *y, size_t n);

static double ref_exp(double x) { return exp(x); }
static double ref_erf(double x) { return erf(x); }
static double ref_tanh(double x) { return tanh(x); }
static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

static void softmax_exp(const float *x, float *y, size_t n) {
    memcpy(y, x, sizeof(float) * n);
    cpu_vexp(y, n);
}

typedef struct fn_case {
    const char *name;
    vfn f;
    double (*ref)(double);
    double lo, hi; /* the sweep's range */
    /* Results under FLT_MIN may be off by up to FLT_MIN (0 for a
     * subnormal): x86's sigmoid is 1 / (1 + expf(-x)), whose e^-x
     * overflows first. */
    int flushes_subnormal;
    double max_err, at;
} fn_case;

/* |y - ref| relative to |ref|, and to FLT_MIN below it (subnormal results
 * are measured in absolute terms). Where ref overflows float, y must be
 * that infinity; elsewhere an infinite y counts as 2^128, the value from
 * which float rounds to it, so overflow just below the edge of the range
 * is an error of about one ulp, not an infinite one. */
static double err_of(float y, double ref) {
    if (isnan(ref) || isnan(y)) return isnan(ref) && isnan(y) ? 0.0 : INFINITY;
    if (isinf((float)ref)) return y == (float)ref ? 0.0 : INFINITY;
    double yd = isinf(y) ? copysign(ldexp(1.0, 128), y) : y;
    return fabs(yd - ref) / fmax(fabs(ref), FLT_MIN);
}

#define CHUNK 1001 /* odd, so every call has a tail shorter than a vector */

static void check_chunk(fn_case *c, const float *x, size_t n) {
    float y[CHUNK], z[CHUNK];
    c->f(x, y, n);
    memcpy(z, x, sizeof(float) * n);
    c->f(z, z, n); /* in place, as gemm's epilogue calls it */
    for (size_t i = 0; i < n; i++) {
        double ref = c->ref((double)x[i]), e = err_of(y[i], ref);
        if (c->flushes_subnormal && fabs(ref) < FLT_MIN && fabs((double)y[i] - ref) <= FLT_MIN) e = 0.0;
        if (memcmp(&y[i], &z[i], sizeof(float)) != 0) e = INFINITY;
        if (e > c->max_err || e != e) {
            c->max_err = e != e ? INFINITY : e;
            c->at = x[i];
        }
    }
}

static void sweep(fn_case *c) {
    float x[CHUNK];
    size_t n = 0;
    /* a uniform grid, 2.5e-4 apart over [-100, 100] */
    const long steps = 800000;
    for (long s = 0; s <= steps; s++) {
        x[n++] = (float)(c->lo + (c->hi - c->lo) * (double)s / (double)steps);
        if (n == CHUNK) check_chunk(c, x, n), n = 0;
    }
    /* every 4099th float from 0 (subnormals first) to the range's ends, both signs */
    for (int sign = 0; sign < 2; sign++)
        for (uint32_t b = 0;; b += 4099) {
            float v;
            memcpy(&v, &b, sizeof v);
            if (sign) v = -v;
            if (v < c->lo || v > c->hi) break;
            x[n++] = v;
            if (n == CHUNK) check_chunk(c, x, n), n = 0;
        }
    if (n) check_chunk(c, x, n);
}

/* One edge value: NaN stays NaN; a result that is 0 or +-inf in float
 * must be that value, the sign of a zero included, and so must +-1 from
 * |x| >= 10 on (tanh, erf and sigmoid saturated); any other result must
 * be within the bound. */
static void edge(const fn_case *c, float x) {
    float y;
    c->f(&x, &y, 1);
    double ref = c->ref((double)x);
    float want = (float)ref;
    int ok;
    if (isnan(x))
        ok = isnan(y);
    else if (want == 0.0f || isinf(want) || (fabsf(want) == 1.0f && fabsf(x) >= 10.0f))
        ok = memcmp(&y, &want, sizeof y) == 0 ||
             (c->flushes_subnormal && want == 0.0f && y == 0.0f); /* no sign to keep: the exact value is not 0 */
    else if (c->flushes_subnormal && fabs(ref) < FLT_MIN)
        ok = fabs((double)y - ref) <= FLT_MIN;
    else
        ok = err_of(y, ref) <= BOUND;
    CHECK(ok);
    if (!ok) fprintf(stderr, "  %s(%a = %.9g) = %a = %.9g, want %a = %.9g\n", c->name, x, x, y, y, want, want);
}

int main(void) {
    fn_case cases[] = {
        {"exp", cpu_vexp_full, ref_exp, -100, 100, 0, 0, 0},
        {"erf", cpu_verf, ref_erf, -100, 100, 0, 0, 0},
        {"tanh", cpu_vtanh, ref_tanh, -100, 100, 0, 0, 0},
#if defined(__aarch64__)
        {"sigmoid", cpu_vsigmoid, ref_sigmoid, -100, 100, 0, 0, 0},
#else
        {"sigmoid", cpu_vsigmoid, ref_sigmoid, -100, 100, 1, 0, 0},
#endif
        /* softmax's: its arguments are x - max(x), and below -40 they are
         * -inf; the portable loop gives 0 below -87 */
        {"exp (softmax)", softmax_exp, ref_exp, -87, 88, 0, 0, 0},
    };
    const float edges[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 88.0f, -88.0f, 89.0f, -89.0f, -87.5f,
                           88.72f, 88.73f, -103.0f, -104.0f, -110.0f, 1e-30f, -1e-30f, 1e-40f, -1e-40f,
                           FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MIN, -FLT_MIN, 1e30f, -1e30f, FLT_MAX, -FLT_MAX,
                           9.0f, -9.0f, 9.1f, 10.0f, -10.0f, 0.5f, -0.5f, 1.0f, -1.0f, 3.99f, 4.0f, -4.0f};
    const size_t n_cases = sizeof cases / sizeof cases[0];
    for (size_t k = 0; k < n_cases; k++) {
        fn_case *c = &cases[k];
        sweep(c);
        CHECK(c->max_err <= BOUND);
        printf("%-14s max relative error %.3g at x = %.9g\n", c->name, c->max_err, c->at);
        if (c->f == softmax_exp) {
            /* softmax hands it 0 for the largest entry and -inf for those far below */
            float x[3] = {0.0f, -INFINITY, NAN};
            softmax_exp(x, x, 3);
            CHECK(x[0] == 1.0f && x[1] == 0.0f && !signbit(x[1]) && isnan(x[2]));
            continue;
        }
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) edge(c, edges[i]);
    }
    return check_exit();
}
