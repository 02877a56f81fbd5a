/* The int8 tiles of the quantized_activations = int8 product (gemm_int8.c):
 * the portable one in plain C, and which tile runs. Every tile returns the
 * same exact int32 sums, so the choice changes speed, never results. The
 * x86 tiles live in files of their own built with their own flags, and are
 * only returned here after CPUID reports what they need; the SDOT one
 * only where getauxval(AT_HWCAP) reports dotprod. Kept apart from the
 * product's driver so the tile test can compile it in without the pool. */
#include <string.h>

#include "cpu_gemm.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

enum { MR = CPU_DOT_MR, NR = CPU_DOT_NR };

/* The portable tile: the same integers as the vector ones, in plain C. */
static void dot_generic(size_t k4, const int8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc, int acc) {
    int32_t t[MR][NR] = {{0}};
    for (size_t p = 0; p < k4; p++) {
        const int8_t *bp = b + p * NR * 4;
        for (int r = 0; r < MR; r++) {
            const int8_t *ap = a + (size_t)r * lda + 4 * p;
            for (int j = 0; j < NR; j++)
                t[r][j] += ap[0] * bp[4 * j] + ap[1] * bp[4 * j + 1] + ap[2] * bp[4 * j + 2] + ap[3] * bp[4 * j + 3];
        }
    }
    for (int r = 0; r < MR; r++)
        for (int j = 0; j < NR; j++) c[(size_t)r * ldc + j] = (acc ? c[(size_t)r * ldc + j] : 0) + t[r][j];
}

typedef struct dot_tile {
    const char *name;
    cpu_dot_fn fn;
} dot_tile;

/* Fastest first. */
static const dot_tile tiles[] = {
#if defined(__x86_64__)
    {"avx512vnni", cpu_dot_avx512vnni},
    {"avxvnni", cpu_dot_avxvnni},
    {"avx2", cpu_dot_avx2},
#endif
#if defined(__aarch64__)
    {"sdot", cpu_dot_sdot},
#endif
    {"generic", dot_generic},
};
enum { TILES = sizeof tiles / sizeof tiles[0] };

static int has_tile(const char *name) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    /* vpdpbusd on zmm is AVX512-VNNI; the tile's loads and byte xor are
     * AVX-512F/BW, which every cpu with it also has */
    if (strcmp(name, "avx512vnni") == 0)
        return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512f");
    /* the VEX form on ymm (Alder Lake, Sapphire Rapids, Zen 5): CPUID
     * leaf 7 subleaf 1, EAX bit 4, read directly since clang 14's
     * __builtin_cpu_supports does not know it; AVX2's check covers the
     * OS saving ymm state */
    if (strcmp(name, "avxvnni") == 0) {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return __builtin_cpu_supports("avx2") && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4));
    }
    if (strcmp(name, "avx2") == 0) return __builtin_cpu_supports("avx2");
#endif
#if defined(__aarch64__)
    if (strcmp(name, "sdot") == 0) return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
    return strcmp(name, "generic") == 0;
}

cpu_dot_fn cpu_dot_by_name(const char *name) {
    for (int i = 0; i < TILES; i++)
        if (strcmp(tiles[i].name, name) == 0) return has_tile(name) ? tiles[i].fn : NULL;
    return NULL;
}

/* The float kernels' isa bounds the tile, so isa = avx2 never runs an
 * AVX-512 instruction and isa = generic runs plain C throughout. */
cpu_dot_fn cpu_dot_select(const char *isa) {
    static const char *const order_avx512[] = {"avx512vnni", "avxvnni", "avx2", NULL};
    static const char *const order_avx2[] = {"avxvnni", "avx2", NULL};
    static const char *const order_neon[] = {"sdot", NULL};
    const char *const *order = strcmp(isa, "avx512") == 0 || strcmp(isa, "auto") == 0 ? order_avx512
                               : strcmp(isa, "avx2") == 0                            ? order_avx2
                               : strcmp(isa, "neon") == 0                            ? order_neon
                                                                                     : NULL;
#if defined(__aarch64__)
    if (strcmp(isa, "auto") == 0) order = order_neon;
#endif
    for (; order && *order; order++) {
        cpu_dot_fn f = cpu_dot_by_name(*order);
        if (f) return f;
    }
    return dot_generic;
}

cpu_q8_fn cpu_q8_fused(cpu_dot_fn f) {
#if defined(__x86_64__)
    if (f == cpu_dot_avx512vnni) return cpu_q8_avx512vnni;
#endif
    (void)f;
    return NULL;
}

const char *cpu_dot_name(cpu_dot_fn f) {
    for (int i = 0; i < TILES; i++)
        if (tiles[i].fn == f) return tiles[i].name;
    return "unknown";
}
