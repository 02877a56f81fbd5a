/* The AVX-512 depthwise span: n outputs of one plane of a kh x kw filter
 * at stride 1 and dilation 1, output i reading the padded plane from
 * P + i (row ki at P + ki * pw). Up to six vectors of outputs at once,
 * each with two sums, one over the even filter rows and one over the
 * odd, so twelve chains of fused multiply-adds are in flight where the
 * vectorized C keeps one sum per vector and waits on its adds. Loads and
 * stores past n are masked, so it reads and writes nothing beyond the
 * span's last output. Built with -mavx512f -mfma; called only after
 * CPUID reports AVX-512F. */
#if defined(__x86_64__)
#include <immintrin.h>

#include "cpu_gemm.h"

static inline __attribute__((always_inline)) void block(float *y, const float *P, size_t pw, size_t left,
                                                        const float *w, float b, int kh, int kw, const int NV) {
    __m512 e[6], o[6];
    __mmask16 m[6];
    for (int v = 0; v < NV; v++) {
        size_t rest = left > (size_t)v * 16 ? left - (size_t)v * 16 : 0;
        m[v] = rest >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rest) - 1);
        e[v] = _mm512_set1_ps(b);
        o[v] = _mm512_setzero_ps();
    }
    for (int ki = 0; ki < kh; ki++) {
        const float *r = P + (size_t)ki * pw;
        for (int kj = 0; kj < kw; kj++) {
            __m512 x = _mm512_set1_ps(w[ki * kw + kj]);
            for (int v = 0; v < NV; v++) {
                __m512 p = _mm512_maskz_loadu_ps(m[v], r + 16 * v + kj);
                if (ki & 1) o[v] = _mm512_fmadd_ps(x, p, o[v]);
                else e[v] = _mm512_fmadd_ps(x, p, e[v]);
            }
        }
    }
    for (int v = 0; v < NV; v++) _mm512_mask_storeu_ps(y + 16 * v, m[v], _mm512_add_ps(e[v], o[v]));
}

void cpu_dw_avx512(float *y, const float *P, size_t pw, size_t n, const float *w, float b, int kh, int kw) {
    size_t i = 0;
    for (; i + 96 <= n; i += 96) block(y + i, P + i, pw, 96, w, b, kh, kw, 6);
    size_t left = n - i;
    switch ((left + 15) / 16) {
    case 1: block(y + i, P + i, pw, left, w, b, kh, kw, 1); break;
    case 2: block(y + i, P + i, pw, left, w, b, kh, kw, 2); break;
    case 3: block(y + i, P + i, pw, left, w, b, kh, kw, 3); break;
    case 4: block(y + i, P + i, pw, left, w, b, kh, kw, 4); break;
    case 5: block(y + i, P + i, pw, left, w, b, kh, kw, 5); break;
    default: break; /* 0 */
    }
}
#endif
