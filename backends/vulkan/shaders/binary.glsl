// The binary arithmetic ops of binary.comp, binary4.comp and fused.comp,
// four lanes at a time (binary.comp uses lane x); 7 is prelu.
vec4 binary_op(uint op, vec4 x, vec4 z) {
    switch (op) {
    case 0: return x + z;
    case 1: return x - z;
    case 2: return x * z;
    case 3: return x / z;
    case 4: return max(x, z);
    case 5: return min(x, z);
    case 6: return pow(x, z);
    default: return mix(x * z, x, greaterThanEqual(x, vec4(0.0)));
    }
}
