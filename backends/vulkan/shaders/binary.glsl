// The binary arithmetic ops of binary.comp, binary4.comp and fused.comp,
// four lanes at a time (binary.comp uses lane x); 7 is prelu. div, max,
// min and pow take edge.glsl's contract answers, not GLSL's built-ins.
#include "edge.glsl"

vec4 binary_op(uint op, vec4 x, vec4 z) {
    switch (op) {
    case 0: return x + z;
    case 1: return x - z;
    case 2: return x * z;
    case 3: return edge_div(x, z);
    case 4: return edge_max(x, z);
    case 5: return edge_min(x, z);
    case 6: return edge_pow(x, z);
    default: return mix(x * z, x, greaterThanEqual(x, vec4(0.0)));
    }
}
