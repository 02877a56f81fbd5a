/* berth-bench peak --threads N: the float32 multiply-add rate this
 * machine sustains, as the ceiling a matrix-bound row is read against.
 * Each thread runs independent chains of fused multiply-adds on the
 * widest vectors the cpu has (AVX-512, else AVX2 with FMA, else plain C,
 * which the compiler vectorizes as it can), enough chains to cover the
 * FMA latency; the best of several rounds is printed as JSON:
 *   {"isa": "avx512", "threads": N, "gflops": G}
 * A product cannot run faster than this; how close a model's matrix
 * products come is the room a kernel has left. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "bench.h"

#define ROUNDS 5
#define STEPS 4000000L
#define CHAINS 12

typedef struct peak_job {
    double (*fn)(long);
    double flops;
    int ok;
} peak_job;

#if defined(__x86_64__)
#include <immintrin.h>

/* Twelve chains spelled out, so they live in registers (an array of
 * them is kept in memory at -O2). */
#define CHAIN12(F, a, m, c)                                                                                        \
    a##0 = F(a##0, m, c), a##1 = F(a##1, m, c), a##2 = F(a##2, m, c), a##3 = F(a##3, m, c), a##4 = F(a##4, m, c), \
    a##5 = F(a##5, m, c), a##6 = F(a##6, m, c), a##7 = F(a##7, m, c), a##8 = F(a##8, m, c), a##9 = F(a##9, m, c), \
    a##10 = F(a##10, m, c), a##11 = F(a##11, m, c)
#define SUM12(ADD, a)                                                                                              \
    ADD(ADD(ADD(ADD(a##0, a##1), ADD(a##2, a##3)), ADD(ADD(a##4, a##5), ADD(a##6, a##7))),                         \
        ADD(ADD(a##8, a##9), ADD(a##10, a##11)))

__attribute__((target("avx512f"))) static double fma512(long steps) {
    __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a0 = _mm512_set1_ps(0), a1 = _mm512_set1_ps(1), a2 = _mm512_set1_ps(2), a3 = _mm512_set1_ps(3);
    __m512 a4 = _mm512_set1_ps(4), a5 = _mm512_set1_ps(5), a6 = _mm512_set1_ps(6), a7 = _mm512_set1_ps(7);
    __m512 a8 = _mm512_set1_ps(8), a9 = _mm512_set1_ps(9), a10 = _mm512_set1_ps(10), a11 = _mm512_set1_ps(11);
    for (long s = 0; s < steps; s++) CHAIN12(_mm512_fmadd_ps, a, m, c);
    volatile float sink = _mm512_reduce_add_ps(SUM12(_mm512_add_ps, a));
    (void)sink;
    return 2.0 * 16 * CHAINS * (double)steps;
}

__attribute__((target("avx2,fma"))) static double fma256(long steps) {
    __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    __m256 a0 = _mm256_set1_ps(0), a1 = _mm256_set1_ps(1), a2 = _mm256_set1_ps(2), a3 = _mm256_set1_ps(3);
    __m256 a4 = _mm256_set1_ps(4), a5 = _mm256_set1_ps(5), a6 = _mm256_set1_ps(6), a7 = _mm256_set1_ps(7);
    __m256 a8 = _mm256_set1_ps(8), a9 = _mm256_set1_ps(9), a10 = _mm256_set1_ps(10), a11 = _mm256_set1_ps(11);
    for (long s = 0; s < steps; s++) CHAIN12(_mm256_fmadd_ps, a, m, c);
    float out[8];
    _mm256_storeu_ps(out, SUM12(_mm256_add_ps, a));
    volatile float sink = out[0];
    (void)sink;
    return 2.0 * 8 * CHAINS * (double)steps;
}
#endif

/* The portable chains: 4 floats each, however the compiler maps them. */
static double fma_plain(long steps) {
    float a[CHAINS][4];
    for (int i = 0; i < CHAINS; i++)
        for (int j = 0; j < 4; j++) a[i][j] = (float)(i + j);
    for (long s = 0; s < steps; s++)
        for (int i = 0; i < CHAINS; i++)
            for (int j = 0; j < 4; j++) a[i][j] = a[i][j] * 0.999999f + 1e-7f;
    volatile float sink = a[0][0];
    (void)sink;
    return 2.0 * 4 * CHAINS * (double)steps;
}

static void *peak_thread(void *ctx) {
    peak_job *j = ctx;
    j->flops = j->fn(STEPS);
    j->ok = 1;
    return NULL;
}

int bench_peak(int threads) {
    const char *isa = "generic";
    double (*fn)(long) = fma_plain;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) isa = "avx512", fn = fma512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isa = "avx2", fn = fma256;
#endif
    if (threads < 1 || threads > 256) {
        fprintf(stderr, "berth-bench peak: --threads must be 1 to 256\n");
        return 2;
    }
    double best = 0;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_t tid[256];
        peak_job job[256];
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int started = 0;
        for (int t = 0; t < threads; t++) {
            job[t] = (peak_job){fn, 0, 0};
            if (pthread_create(&tid[t], NULL, peak_thread, &job[t]) != 0) break;
            started++;
        }
        double flops = 0;
        for (int t = 0; t < started; t++) {
            pthread_join(tid[t], NULL);
            flops += job[t].flops;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (started != threads) {
            fprintf(stderr, "berth-bench peak: could not start %d threads\n", threads);
            return 1;
        }
        double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        if (flops / s > best) best = flops / s;
    }
    printf("{\"isa\": \"%s\", \"threads\": %d, \"gflops\": %.1f}\n", isa, threads, best / 1e9);
    return 0;
}
