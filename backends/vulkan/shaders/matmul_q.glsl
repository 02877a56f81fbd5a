// The body of the matmul_q*.comp shaders, which define VA.
// berth.matmulQuantized: y = act(A W + bias) + residual with W [K, N]
// held as packed integers (packed.glsl) and dequantized as it is read,
// w[k, n] = (q[k, n] - zp[k / block, n]) * scale[k / block, n]; no float
// copy of W exists anywhere. A is [R, K] (a's leading dims folded into
// R, rows contiguous), y is [R, N]. Tiled as matmul.glsl is, for
// lavapipe: each invocation owns an 8 x 8 block of y and, per step of k,
// loads 8 values of A (VA: 8 vec4s per 4 steps) and the 1 to 3 words
// that hold its 8 columns of q; per block of k, its 8 scales and the
// words of its 8 zero points. Columns past N read whatever the words
// hold there (word indices are clamped to the tensor) and are not
// stored; rows past R read the last row. VA needs K and block to be
// multiples of 4 (the planner checks).
// pc: 0 R, 1 N, 2 K, 3 block (rows of q per row of scale), 4 G (blocks;
//     0 when K is 0), 5 flags (2 bias, 4 residual, 8 zp given (else every
//     zero point is 0), act << 4), 6 last word of q, 7 last word of zp.
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 8) in;
#include "common.glsl"
#include "epilogue.glsl"
#include "packed.glsl"
#if VA
layout(std430, binding = 0) readonly buffer A { vec4 a4[]; };
#else
layout(std430, binding = 0) readonly buffer A { float a[]; };
#endif
layout(std430, binding = 1) readonly buffer Q { uint q[]; };
layout(std430, binding = 2) readonly buffer S { float scale[]; };
layout(std430, binding = 3) readonly buffer Z { uint zp[]; };
layout(std430, binding = 4) readonly buffer Bias { float bias[]; };
layout(std430, binding = 5) readonly buffer Res { float res[]; };
layout(std430, binding = 6) writeonly buffer Y { float y[]; };

#define RM 8
#define RN 8

// Elements e .. e + 7 from the words that hold them: w0 is e's word, w1
// and w2 the next ones; t is e's place in w0 (0..3 for 8-bit, 0..7 for
// 4-bit), so element e + j is at place t + j of the window.
void unpack8(uint t, uint w0, uint w1, uint w2, out float v[RN]) {
    [[unroll]] for (uint j = 0u; j < RN; j++) {
        uint p = t + j;
        uint w = KIND < 2u ? (p < 4u ? w0 : (p < 8u ? w1 : w2)) : (p < 8u ? w0 : w1);
        v[j] = float(packed_at(w, p));
    }
}

// The eight integers of BUF (packed, LAST its last word) from element e
// on (a row's eight columns) into v: 8-bit values span two words when
// aligned, else three; 4-bit ones one, else two. A macro, as GLSL cannot
// pass a buffer; q8 and zp8 are its two uses.
#define READ8(BUF, LAST, e, v)                                                   \
    {                                                                           \
        uint wi_ = packed_word(e), t_ = KIND < 2u ? (e) & 3u : (e) & 7u;       \
        uint w0_ = BUF[wi_], w1_ = 0u, w2_ = 0u;                                \
        if (KIND < 2u || t_ != 0u) w1_ = BUF[min(wi_ + 1u, LAST)];             \
        if (KIND < 2u && t_ != 0u) w2_ = BUF[min(wi_ + 2u, LAST)];             \
        unpack8(t_, w0_, w1_, w2_, v);                                          \
    }

void q8(uint e, out float v[RN]) { READ8(q, pc.u[6], e, v) }
void zp8(uint e, out float v[RN]) { READ8(zp, pc.u[7], e, v) }

void main() {
    uint R = pc.u[0], N = pc.u[1], K = pc.u[2], block = pc.u[3], G = pc.u[4], flags = pc.u[5];
    uint tiles_m = (R + RM - 1u) / RM, tiles_n = (N + RN - 1u) / RN;
    uint lanes = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
        uint ar[RM];
        [[unroll]] for (uint i = 0u; i < RM; i++) ar[i] = min(tm * RM + i, R - 1u) * K;
        for (uint tn = gl_GlobalInvocationID.x; tn < tiles_n; tn += lanes) {
            uint c0 = tn * RN;
            float acc[RM][RN];
            [[unroll]] for (uint i = 0u; i < RM; i++)
                [[unroll]] for (uint j = 0u; j < RN; j++) acc[i][j] = 0.0;
            for (uint g = 0u; g < G; g++) {
                float s[RN], z[RN];
                [[unroll]] for (uint j = 0u; j < RN; j++) s[j] = scale[g * N + min(c0 + j, N - 1u)];
                if ((flags & 8u) != 0u) zp8(g * N + c0, z);
                else [[unroll]] for (uint j = 0u; j < RN; j++) z[j] = 0.0;
                uint k1 = (g + 1u) * block;
#if VA
                for (uint k = g * block; k < k1; k += 4u) {
                    vec4 av[RM];
                    [[unroll]] for (uint i = 0u; i < RM; i++) av[i] = a4[(ar[i] + k) >> 2];
                    [[unroll]] for (uint kk = 0u; kk < 4u; kk++) {
                        float bv[RN];
                        q8((k + kk) * N + c0, bv);
                        [[unroll]] for (uint j = 0u; j < RN; j++) bv[j] = (bv[j] - z[j]) * s[j];
                        [[unroll]] for (uint i = 0u; i < RM; i++)
                            [[unroll]] for (uint j = 0u; j < RN; j++) acc[i][j] += av[i][kk] * bv[j];
                    }
                }
#else
                for (uint k = g * block; k < k1; k++) {
                    float av[RM], bv[RN];
                    [[unroll]] for (uint i = 0u; i < RM; i++) av[i] = a[ar[i] + k];
                    q8(k * N + c0, bv);
                    [[unroll]] for (uint j = 0u; j < RN; j++) bv[j] = (bv[j] - z[j]) * s[j];
                    [[unroll]] for (uint i = 0u; i < RM; i++)
                        [[unroll]] for (uint j = 0u; j < RN; j++) acc[i][j] += av[i] * bv[j];
                }
#endif
            }
            [[unroll]] for (uint i = 0u; i < RM; i++) {
                uint row = tm * RM + i;
                if (row >= R) break;
                [[unroll]] for (uint j = 0u; j < RN; j++) {
                    uint col = c0 + j;
                    if (col >= N) break;
                    float v = acc[i][j];
                    if ((flags & 2u) != 0u) v += bias[col];
                    v = act(flags >> 4u, v);
                    uint yi = row * N + col;
                    if ((flags & 4u) != 0u) v += res[yi];
                    y[yi] = v;
                }
            }
        }
    }
}
