/* Every int8 tile of quantized_activations = int8 that this cpu has,
 * against the portable one and an int64 reference: the same int32 sums,
 * bit for bit, on random shapes and on the extremes (A at +-127, B' all
 * -128 or all 127, which the unsigned-times-signed instructions must not
 * saturate on), k not a multiple of 4 (zero padded, as the packing does),
 * m not a multiple of the tile's rows and n not one of its columns, and a
 * sum continued over two calls (acc). A tile this cpu lacks is reported
 * as not run; on an x86-64 cpu with AVX2 at least one vector tile must
 * run. Also: the isa option's bound on the choice (cpu_dot_select). The
 * tiles' sources are compiled in, since the module hides them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_gemm.h"

enum { MR = CPU_DOT_MR, NR = CPU_DOT_NR };

static uint32_t seed = 12345u;
static int next_int(int lo, int hi) {
    seed = seed * 1664525u + 1013904223u;
    return lo + (int)((seed >> 8) % (uint32_t)(hi - lo + 1));
}

enum { FILL_RANDOM, FILL_MAX, FILL_MIN, FILL_MIXED };

/* C = A B' through tile f over every row tile and panel; A m x k (rows
 * padded to MR with zeros, row stride lda, zeros past k), B' k x n packed
 * into panels of [k4][NR][4] with zeros past k and n. With split, each
 * tile's sum is two calls, the second continuing the first. */
static void run_tile(cpu_dot_fn f, size_t m, size_t k, size_t n, const int8_t *a, size_t lda, const int8_t *bp,
                     int32_t *c, size_t ldc, size_t split) {
    size_t k4 = (k + 3) / 4, panels = (n + NR - 1) / NR;
    for (size_t i = 0; i < m; i += MR)
        for (size_t pn = 0; pn < panels; pn++) {
            const int8_t *b = bp + pn * k4 * NR * 4;
            int32_t *cc = c + i * ldc + pn * NR;
            if (split && split < k4) {
                f(split, a + i * lda, lda, b, cc, ldc, 0);
                f(k4 - split, a + i * lda + 4 * split, lda, b + split * NR * 4, cc, ldc, 1);
            } else {
                f(k4, a + i * lda, lda, b, cc, ldc, 0);
            }
        }
}

static int check_case(const char *name, cpu_dot_fn f, cpu_dot_fn ref, size_t m, size_t k, size_t n, int fill,
                      size_t split) {
    size_t k4 = (k + 3) / 4, mp = (m + MR - 1) / MR * MR, panels = (n + NR - 1) / NR;
    size_t lda = 4 * k4 + 4 * (size_t)next_int(0, 3), ldc = panels * NR;
    int8_t *a = calloc(mp * lda, 1), *b = calloc(k * n, 1);
    int8_t *bp = aligned_alloc(64, panels * k4 * NR * 4);
    int32_t *c = malloc(sizeof(int32_t) * mp * ldc), *cr = malloc(sizeof(int32_t) * mp * ldc);
    memset(bp, 0, panels * k4 * NR * 4);
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++)
            a[i * lda + p] = (int8_t)(fill == FILL_RANDOM ? next_int(-127, 127)
                                      : fill == FILL_MIXED ? (next_int(0, 1) ? 127 : -127)
                                      : fill == FILL_MAX   ? 127
                                                           : -127);
    for (size_t p = 0; p < k * n; p++)
        b[p] = (int8_t)(fill == FILL_RANDOM ? next_int(-128, 127)
                        : fill == FILL_MIXED ? (next_int(0, 1) ? 127 : -128)
                        : fill == FILL_MAX   ? -128
                                             : 127);
    for (size_t p = 0; p < k; p++)
        for (size_t j = 0; j < n; j++) bp[(j / NR) * k4 * NR * 4 + (p / 4) * NR * 4 + (j % NR) * 4 + p % 4] = b[p * n + j];
    /* garbage in C: with acc 0 a tile must overwrite it */
    memset(c, 0x5a, sizeof(int32_t) * mp * ldc), memset(cr, 0xa5, sizeof(int32_t) * mp * ldc);
    run_tile(f, mp, k, n, a, lda, bp, c, ldc, split);
    run_tile(ref, mp, k, n, a, lda, bp, cr, ldc, split);
    int ok = 1;
    for (size_t i = 0; i < m && ok; i++)
        for (size_t j = 0; j < n; j++) {
            int64_t exact = 0;
            for (size_t p = 0; p < k; p++) exact += (int64_t)a[i * lda + p] * b[p * n + j];
            if (c[i * ldc + j] != cr[i * ldc + j] || c[i * ldc + j] != exact) {
                printf("FAIL: tile %s, m %zu k %zu n %zu fill %d split %zu: c[%zu, %zu] = %d, generic %d, exact %lld\n",
                       name, m, k, n, fill, split, i, j, c[i * ldc + j], cr[i * ldc + j], (long long)exact);
                check_failures++;
                ok = 0;
                break;
            }
        }
    /* the padding rows (zero A) give zero sums in every tile */
    for (size_t i = m; i < mp && ok; i++)
        for (size_t j = 0; j < ldc; j++)
            if (c[i * ldc + j] != 0) {
                printf("FAIL: tile %s: padding row %zu column %zu = %d\n", name, i, j, c[i * ldc + j]);
                check_failures++;
                ok = 0;
                break;
            }
    check_count++;
    free(a), free(b), free(bp), free(c), free(cr);
    return ok;
}

int main(void) {
    static const char *const names[] = {"avx512vnni", "avxvnni", "avx2", "sdot", "generic"};
    cpu_dot_fn ref = cpu_dot_by_name("generic");
    CHECK(ref != NULL);
    CHECK(cpu_dot_by_name("vnni") == NULL);
    int vector_run = 0;
    for (int t = 0; t < 5; t++) {
        cpu_dot_fn f = cpu_dot_by_name(names[t]);
        if (!f) {
            printf("not run: tile %s (not on this cpu or architecture)\n", names[t]);
            continue;
        }
        CHECK(strcmp(cpu_dot_name(f), names[t]) == 0);
        int ok = 1;
        seed = 12345u;
        /* the extremes, at the longest slice the product passes (512) and past it */
        for (int fill = FILL_MAX; fill <= FILL_MIXED; fill++) {
            ok &= check_case(names[t], f, ref, 5, 512, 17, fill, 0);
            ok &= check_case(names[t], f, ref, 4, 2050, 16, fill, 0);
            ok &= check_case(names[t], f, ref, 3, 33, 40, fill, 3);
        }
        for (int i = 0; i < 300; i++) {
            size_t m = (size_t)next_int(1, 13), k = (size_t)next_int(1, 600), n = (size_t)next_int(1, 50);
            size_t split = next_int(0, 1) ? (size_t)next_int(1, (int)((k + 3) / 4)) : 0;
            int fill = next_int(0, 3) ? FILL_RANDOM : next_int(FILL_MAX, FILL_MIXED);
            ok &= check_case(names[t], f, ref, m, k, n, fill, split);
        }
        printf("%s: tile %s against generic and exact sums\n", ok ? "ok" : "FAIL", names[t]);
        if (ok && strcmp(names[t], "generic") != 0) vector_run++;
    }
#if defined(__x86_64__)
    __builtin_cpu_init();
    /* the comparison must have run here: every x86-64 cpu with AVX2 has a vector tile */
    if (__builtin_cpu_supports("avx2")) CHECK(vector_run >= 1);
    /* the isa option bounds the tile: no AVX-512 under avx2, plain C under generic */
    const char *under2 = cpu_dot_name(cpu_dot_select("avx2"));
    CHECK(strcmp(under2, "avxvnni") == 0 || strcmp(under2, "avx2") == 0 || strcmp(under2, "generic") == 0);
    if (__builtin_cpu_supports("avx2")) CHECK(strcmp(under2, "generic") != 0);
    if (cpu_dot_by_name("avx512vnni")) CHECK(strcmp(cpu_dot_name(cpu_dot_select("avx512")), "avx512vnni") == 0);
    if (cpu_dot_by_name("avxvnni")) CHECK(strcmp(under2, "avxvnni") == 0);
    printf("isa auto: %s, avx512: %s, avx2: %s\n", cpu_dot_name(cpu_dot_select("auto")),
           cpu_dot_name(cpu_dot_select("avx512")), under2);
#endif
    (void)vector_run;
    CHECK(cpu_dot_select("generic") == ref);
    return check_exit();
}
