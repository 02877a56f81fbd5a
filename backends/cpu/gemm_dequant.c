/* Quantized weights widened a slice at a time, for the quantized matrix
 * product and the quantized gather: each value is (q - zero) * scale of
 * its block, exactly dequantizeLinear's. The loops are written to
 * vectorize (cloned per instruction set); 4-bit rows that start on a byte
 * are split into bytes first, others are read a value at a time. */
#include <string.h>

#include "cpu_gemm.h"
#include "cpu_internal.h"

/* Nibble i of p as a signed or unsigned value. */
static inline int nib(const uint8_t *p, size_t i, int sgn) {
    int v = (p[i / 2] >> (4 * (i % 2))) & 15;
    return sgn && v >= 8 ? v - 16 : v;
}

/* Value e of q as stored (4-bit sign-extended for int4). */
static inline int q_value(const uint8_t *b, int kind, size_t e) {
    return kind == CPU_Q_I8 ? ((const int8_t *)b)[e] : kind == CPU_Q_U8 ? b[e] : nib(b, e, kind == CPU_Q_I4);
}

/* The panel's rows come in blocks that share one row of zero points and
 * scales: the zero points are widened to floats once per block, and each
 * row is then ((float)q - zero) * scale, which equals dequantizeLinear's
 * (q - zero) * scale because both differences are exact. */

/* Zero points ez .. ez + w - 1 as floats (none: zeros). */
static inline void zero_floats(const cpu_gemm_qb *q, size_t ez, size_t w, float *restrict zf) {
    if (!q->zero) {
        memset(zf, 0, sizeof(float) * w);
        return;
    }
    for (size_t j = 0; j < w; j++) zf[j] = (float)q_value(q->zero, q->kind, ez + j);
}

/* 4-bit values, low nibble first, split and interleaved 16 (then 8) at a
 * time with a vector shuffle (GCC and clang vector extensions; SSE2's
 * punpcklbw on any x86-64), since compilers turn the same in scalar code
 * into byte stores; (v ^ 8) - 8 sign-extends a nibble. Values e .. e +
 * w - 1 into t, as bytes. */
typedef uint8_t u8x16 __attribute__((vector_size(16)));
typedef uint64_t u64x2 __attribute__((vector_size(16)));
typedef uint8_t u8x8 __attribute__((vector_size(8)));
typedef uint32_t u32x2 __attribute__((vector_size(8)));

static inline void unpack4(const uint8_t *restrict b, size_t e, int sgn, size_t w, int8_t *restrict t) {
    size_t j = 0;
    if (e % 2 == 0) {
        for (; j + 16 <= w; j += 16) {
            uint64_t bytes;
            memcpy(&bytes, b + (e + j) / 2, 8);
            u8x16 x = (u8x16)(u64x2){bytes, 0}; /* not through memory: a wider reload stalls */
            u8x16 lo = x & 15, hi = x >> 4;
            if (sgn) {
                lo = (lo ^ 8) - 8;
                hi = (hi ^ 8) - 8;
            }
            u8x16 v = __builtin_shufflevector(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
            memcpy(t + j, &v, 16);
        }
        /* then 8: the whole row of an 8-wide panel (NEON's), which the
         * loop above never reaches */
        if (j + 8 <= w) {
            uint32_t bytes;
            memcpy(&bytes, b + (e + j) / 2, 4);
            u8x8 x = (u8x8)(u32x2){bytes, 0};
            u8x8 lo = x & 15, hi = x >> 4;
            if (sgn) {
                lo = (lo ^ 8) - 8;
                hi = (hi ^ 8) - 8;
            }
            u8x8 v = __builtin_shufflevector(lo, hi, 0, 8, 1, 9, 2, 10, 3, 11);
            memcpy(t + j, &v, 8);
            j += 8;
        }
    }
    for (; j < w; j++) t[j] = (int8_t)nib(b, e + j, sgn);
}

/* One row of a panel, (q - zero) * scale. Restrict parameters, not local
 * restrict pointers: clang keeps only the former, and without them it
 * checks at run time, on every row, that the float stores do not overlap
 * the bytes read (a char type may alias anything), as many instructions
 * as an 8-wide row's vector loop itself. */
static inline void row_s8(float *restrict row, const int8_t *restrict b, const float *restrict zf,
                          const float *restrict s, size_t w) {
    for (size_t j = 0; j < w; j++) row[j] = ((float)b[j] - zf[j]) * s[j];
}

static inline void row_u8(float *restrict row, const uint8_t *restrict b, const float *restrict zf,
                          const float *restrict s, size_t w) {
    for (size_t j = 0; j < w; j++) row[j] = ((float)b[j] - zf[j]) * s[j];
}

CPU_CLONES void cpu_gemm_dequant_panel(const cpu_gemm_qb *q, size_t n, size_t k0, size_t kc, size_t j0, size_t w,
                                       size_t nr, float *dst) {
    float zf[CPU_GEMM_NR_MAX];
    /* 4-bit rows are unpacked to bytes for the whole slice first: read
     * right after their own stores, they would wait on each row. */
    int8_t t[CPU_GEMM_SLICE];
    if (q->kind == CPU_Q_I4 || q->kind == CPU_Q_U4)
        for (size_t p = 0; p < kc; p++) unpack4(q->b, (k0 + p) * n + j0, q->kind == CPU_Q_I4, w, t + p * nr);
    const float *restrict s = NULL;
    size_t gz = SIZE_MAX;
    for (size_t p = 0; p < kc; p++) {
        size_t k = k0 + p, g = k / q->rows, e = k * n + j0;
        float *restrict row = dst + p * nr;
        if (g != gz) {
            zero_floats(q, g * n + j0, w, zf);
            s = q->scale + g * n + j0;
            gz = g;
        }
        if (q->kind == CPU_Q_I8)
            row_s8(row, (const int8_t *)q->b + e, zf, s, w);
        else if (q->kind == CPU_Q_U8)
            row_u8(row, q->b + e, zf, s, w);
        else
            row_s8(row, t + p * nr, zf, s, w);
        if (w < nr) memset(row + w, 0, sizeof(float) * (nr - w));
    }
}

/* w values from element e of q, all of one block (zero z, scale s). */
CPU_CLONES static void dequant_block(const cpu_gemm_qb *q, size_t e, int z, float s, size_t w, float *restrict out) {
    if (q->kind == CPU_Q_I8) {
        const int8_t *restrict b = (const int8_t *)q->b + e;
        for (size_t j = 0; j < w; j++) out[j] = (float)(b[j] - z) * s;
    } else if (q->kind == CPU_Q_U8) {
        const uint8_t *restrict b = q->b + e;
        for (size_t j = 0; j < w; j++) out[j] = (float)(b[j] - z) * s;
    } else {
        for (size_t j = 0; j < w; j++) out[j] = (float)(nib(q->b, e + j, q->kind == CPU_Q_I4) - z) * s;
    }
}

void cpu_dequant_row(const cpu_gemm_qb *q, size_t d, size_t r, float *dst) {
    size_t blocks = d / q->rows;
    for (size_t g = 0; g < blocks; g++) {
        size_t bi = r * blocks + g;
        int z = q->zero ? q_value(q->zero, q->kind, bi) : 0;
        dequant_block(q, r * d + g * q->rows, z, q->scale[bi], q->rows, dst + g * q->rows);
    }
}


/* Rows r0 .. r0 + 3 (row stride n) of 16 bytes each into 16 columns of
 * 4 bytes, each xor x (0x80 flips the top bit: uint8 - 128 as int8,
 * or int8 + 128 as uint8): the tile's layout for one full step, by byte shuffles rather
 * than 64 single-byte stores (on x86-64 SSE2's punpck, always there). */
static inline void transpose_4x16(const uint8_t *r0, size_t n, uint8_t x, uint8_t *restrict d) {
    u8x16 a, b, c, e, f;
    memcpy(&a, r0, 16), memcpy(&b, r0 + n, 16), memcpy(&c, r0 + 2 * n, 16), memcpy(&e, r0 + 3 * n, 16);
    memset(&f, x, sizeof f);
    a ^= f, b ^= f, c ^= f, e ^= f;
    u8x16 ab0 = __builtin_shufflevector(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    u8x16 ce0 = __builtin_shufflevector(c, e, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    u8x16 ab1 = __builtin_shufflevector(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    u8x16 ce1 = __builtin_shufflevector(c, e, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    u8x16 o0 = __builtin_shufflevector(ab0, ce0, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
    u8x16 o1 = __builtin_shufflevector(ab0, ce0, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
    u8x16 o2 = __builtin_shufflevector(ab1, ce1, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
    u8x16 o3 = __builtin_shufflevector(ab1, ce1, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
    memcpy(d, &o0, 16), memcpy(d + 16, &o1, 16), memcpy(d + 32, &o2, 16), memcpy(d + 48, &o3, 16);
}

void cpu_gemm_qpanel_i8(const cpu_gemm_qb *q, size_t n, size_t k0, size_t kc, size_t j0, size_t w, uint8_t flip,
                        int8_t *dst) {
    _Static_assert(CPU_DOT_NR == 16, "a step of the tile's B is 16 columns of 4 bytes");
    size_t k4 = (kc + 3) / 4, p = 0;
    int o = cpu_q_offset(q->kind);
    /* The common case, 8-bit weights and a full panel: whole steps at once.
     * Packed once per task and block and read by every row tile of the
     * task, this ran as long as the AVX512-VNNI tile itself when it was
     * a store per byte. */
    if ((q->kind == CPU_Q_I8 || q->kind == CPU_Q_U8) && w == CPU_DOT_NR) {
        uint8_t x = (q->kind == CPU_Q_U8 ? 0x80 : 0) ^ flip;
        for (; p + 4 <= kc; p += 4) transpose_4x16(q->b + (k0 + p) * n + j0, n, x, (uint8_t *)dst + p * CPU_DOT_NR);
    }
    memset(dst + p * CPU_DOT_NR, flip, (k4 * 4 - p) * CPU_DOT_NR);
    for (; p < kc; p++) {
        int8_t *d = dst + (p / 4) * CPU_DOT_NR * 4 + p % 4;
        size_t e = (k0 + p) * n + j0;
        for (size_t j = 0; j < w; j++) d[4 * j] = (int8_t)((uint8_t)(q_value(q->b, q->kind, e + j) - o) ^ flip);
    }
}

void cpu_gemm_qzero_i32(const cpu_gemm_qb *q, size_t n, size_t g, size_t j0, size_t w, int32_t *z) {
    int o = cpu_q_offset(q->kind);
    for (size_t j = 0; j < w; j++) z[j] = (q->zero ? q_value(q->zero, q->kind, g * n + j0 + j) : 0) - o;
}
