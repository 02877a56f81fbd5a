/* Quantized weights widened a slice at a time, for the quantized matrix
 * product and the quantized gather: each value is (q - zero) * scale of
 * its block, exactly dequantizeLinear's. The loops are written to
 * vectorize (cloned per instruction set); 4-bit rows that start on a byte
 * take the pairwise path, others the per-value one. */
#include <string.h>

#include "cpu_gemm.h"
#include "cpu_internal.h"

/* Nibble i of p as a signed or unsigned value. */
static inline int nib(const uint8_t *p, size_t i, int sgn) {
    int v = (p[i / 2] >> (4 * (i % 2))) & 15;
    return sgn && v >= 8 ? v - 16 : v;
}

/* w values from element e of q (zero point element ez) with scales s. */
CPU_CLONES static void dequant_run(const cpu_gemm_qb *q, size_t e, size_t ez, const float *restrict s, size_t w,
                                   float *restrict out) {
    switch (q->kind) {
    case CPU_Q_I8: {
        const int8_t *restrict b = (const int8_t *)q->b + e, *restrict z = (const int8_t *)q->zero + ez;
        for (size_t j = 0; j < w; j++) out[j] = (float)(b[j] - z[j]) * s[j];
        break;
    }
    case CPU_Q_U8: {
        const uint8_t *restrict b = q->b + e, *restrict z = q->zero + ez;
        for (size_t j = 0; j < w; j++) out[j] = (float)(b[j] - z[j]) * s[j];
        break;
    }
    default: {
        int sgn = q->kind == CPU_Q_I4;
        size_t j = 0;
        if (e % 2 == 0 && ez % 2 == 0) {
            const uint8_t *restrict b = q->b + e / 2, *restrict z = q->zero + ez / 2;
            if (sgn)
                /* (v ^ 8) - 8 sign-extends a nibble without shifting a
                 * negative value, which C leaves undefined. */
                for (; j + 2 <= w; j += 2) {
                    int bb = b[j / 2], zz = z[j / 2];
                    out[j] = (float)((((bb & 15) ^ 8) - 8) - (((zz & 15) ^ 8) - 8)) * s[j];
                    out[j + 1] = (float)((((bb >> 4) ^ 8) - 8) - (((zz >> 4) ^ 8) - 8)) * s[j + 1];
                }
            else
                for (; j + 2 <= w; j += 2) {
                    uint8_t bb = b[j / 2], zz = z[j / 2];
                    out[j] = (float)((bb & 15) - (zz & 15)) * s[j];
                    out[j + 1] = (float)((bb >> 4) - (zz >> 4)) * s[j + 1];
                }
        }
        for (; j < w; j++) out[j] = (float)(nib(q->b, e + j, sgn) - nib(q->zero, ez + j, sgn)) * s[j];
        break;
    }
    }
}

void cpu_gemm_dequant_panel(const cpu_gemm_qb *q, size_t n, size_t k0, size_t kc, size_t j0, size_t w, size_t nr,
                            float *dst) {
    for (size_t p = 0; p < kc; p++) {
        size_t k = k0 + p, g = k / q->rows;
        float *row = dst + p * nr;
        dequant_run(q, k * n + j0, g * n + j0, q->scale + g * n + j0, w, row);
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
        int z = q->kind == CPU_Q_I8   ? ((const int8_t *)q->zero)[bi]
              : q->kind == CPU_Q_U8 ? q->zero[bi]
                                     : nib(q->zero, bi, q->kind == CPU_Q_I4);
        dequant_block(q, r * d + g * q->rows, z, q->scale[bi], q->rows, dst + g * q->rows);
    }
}
