// The activations of berth.matmulEpilogue's epilogue, shared by the
// matmul shaders (matmul.glsl, matmul_q.glsl): kind 0 none, 1 relu,
// 2 gelu, 3 sigmoid, 4 tanh; the same helpers as the unary ops
// (edge.glsl), so a fused activation answers as the op does.
#include "edge.glsl"

float act(uint kind, float v) {
    if (kind == 1u) return edge_relu(vec4(v)).x;
    if (kind == 2u) return edge_gelu(vec4(v)).x;
    if (kind == 3u) return edge_sigmoid(vec4(v)).x;
    if (kind == 4u) return edge_tanh(vec4(v)).x;
    return v;
}
