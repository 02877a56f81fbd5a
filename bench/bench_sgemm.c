/* `sgemm`: the machine's limit for a model's matrix products. For each
 * line "M N K COUNT" of a shapes file (bench.py lists every matmul and
 * convolution of a model at a bucket as the GEMMs they amount to),
 * OpenBLAS alone multiplies an MxK by a KxN matrix; the best of many
 * repetitions gives the rate, and COUNT times that time, summed over the
 * lines, is how fast the model could be if it did nothing but its
 * products at that rate. */
#include <cblas.h>
#include <stdlib.h>

#include "bench.h"

static float *filled(size_t n, unsigned seed) {
    float *p = malloc((n ? n : 1) * sizeof *p);
    if (p)
        for (size_t i = 0; i < n; i++) p[i] = (float)((i * 131u + seed) % 97u) / 97.0f - 0.5f;
    return p;
}

static int time_shape(long m, long n, long k, uint64_t *best) {
    float *a = filled((size_t)m * (size_t)k, 1), *b = filled((size_t)k * (size_t)n, 2);
    size_t cn = (size_t)m * (size_t)n;
    float *c = calloc(cn ? cn : 1, sizeof *c);
    if (!a || !b || !c) {
        free(a);
        free(b);
        free(c);
        return 1;
    }
    /* one untimed call warms caches and OpenBLAS's buffers */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)k, b,
                (int)n, 0.0f, c, (int)n);
    *best = UINT64_MAX;
    uint64_t spent = 0;
    /* the best of many: on a shared machine, the minimum is the time of
     * a quiet moment, which is what a ceiling means */
    for (int rep = 0; rep < 60 && (rep < 5 || spent < 250000000u); rep++) {
        uint64_t t0 = bench_now_ns();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)k,
                    b, (int)n, 0.0f, c, (int)n);
        uint64_t dt = bench_now_ns() - t0;
        spent += dt;
        if (dt < *best) *best = dt;
    }
    free(a);
    free(b);
    free(c);
    return 0;
}

int bench_sgemm(const char *shapes_path, int threads) {
    FILE *f = fopen(shapes_path, "r");
    if (!f) {
        fprintf(stderr, "berth-bench: %s: cannot open the shapes file\n", shapes_path);
        return 1;
    }
    openblas_set_num_threads(threads);
    printf("{\"threads\": %d, \"shapes\": [", threads);
    long m, n, k, count;
    int line = 0, rc = 0, got;
    double total_ns = 0, total_flop = 0;
    while ((got = fscanf(f, "%ld %ld %ld %ld", &m, &n, &k, &count)) == 4) {
        line++;
        uint64_t best;
        if (m < 1 || n < 1 || k < 1 || count < 1) {
            fprintf(stderr, "berth-bench: %s:%d: expected M N K COUNT all >= 1, found %ld %ld %ld %ld\n",
                    shapes_path, line, m, n, k, count);
            rc = 1;
            break;
        }
        if (time_shape(m, n, k, &best)) {
            fprintf(stderr, "berth-bench: %s:%d: cannot allocate %ldx%ldx%ld\n", shapes_path, line, m, n, k);
            rc = 1;
            break;
        }
        double flop = 2.0 * (double)m * (double)n * (double)k;
        total_ns += (double)best * (double)count;
        total_flop += flop * (double)count;
        printf("%s\n  {\"m\": %ld, \"n\": %ld, \"k\": %ld, \"count\": %ld, \"ns\": %llu, \"gflops\": %.3f}",
               line > 1 ? "," : "", m, n, k, count, (unsigned long long)best, flop / (double)best);
    }
    if (rc == 0 && got != EOF) {
        fprintf(stderr, "berth-bench: %s:%d: expected a line 'M N K COUNT'\n", shapes_path, line + 1);
        rc = 1;
    }
    fclose(f);
    printf("],\n \"total_ns\": %.0f, \"total_gflop\": %.6f}\n", total_ns, total_flop / 1e9);
    return rc;
}
