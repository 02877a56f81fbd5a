// The elementwise unary float32 ops of unary.comp, unary4.comp and
// fused.comp, four lanes at a time (unary.comp uses lane x): one copy of
// the op switch per shader keeps pipeline compilation short. Where GLSL's
// built-in is undefined at an edge value, edge.glsl gives the contract's
// answer.
#include "edge.glsl"

vec4 unary_op(uint op, vec4 v, float al, float be) {
    switch (op) {
    case 0: return edge_relu(v);
    case 1: return edge_sigmoid(v);
    case 2: return edge_tanh(v);
    case 3: return edge_exp(v);
    case 4: return edge_log(v);
    case 5: return edge_sqrt(v);
    case 6: return abs(v);
    case 7: return -v;
    case 8: return edge_erf(v);
    case 9: return edge_gelu(v);
    case 10: return edge_clamp(al * v + be, 0.0, 1.0);
    case 11: return edge_hardswish(v);
    case 12: return edge_clamp(v, al, be);
    case 13: return mix(al * v, v, greaterThanEqual(v, vec4(0.0)));
    case 14: return mix(al * (edge_exp(v) - 1.0), v, greaterThanEqual(v, vec4(0.0)));
    case 15: return edge_softplus(v);
    case 16: return edge_div(vec4(1.0), v);
    case 17: return floor(v);
    case 18: return ceil(v);
    case 19: return sin(v);
    case 20: return cos(v);
    case 21: return mix(mix(v, vec4(-1.0), lessThan(v, vec4(0.0))), vec4(1.0), greaterThan(v, vec4(0.0)));
    default: return edge_softsign(v);
    }
}
