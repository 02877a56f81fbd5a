// The binary arithmetic ops of binary.comp and binary4.comp (7 is prelu).
float binary_op(uint op, float x, float z) {
    switch (op) {
    case 0: return x + z;
    case 1: return x - z;
    case 2: return x * z;
    case 3: return x / z;
    case 4: return max(x, z);
    case 5: return min(x, z);
    case 6: return pow(x, z);
    default: return x >= 0.0 ? x : x * z;
    }
}
