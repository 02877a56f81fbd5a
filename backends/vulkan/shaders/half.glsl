// float16 by hand, so every device gives the cpu backend's bits:
// half_to_float is exact; float_to_half rounds to nearest even, overflows
// to infinity and keeps subnormals (packHalf2x16's rounding is left to the
// implementation).
float half_to_float(uint h) {
    uint sign = (h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 0x3ffu;
    if (e == 0u) { // zero or subnormal: m * 2^-24, exact in float32
        float v = float(m) * 5.9604644775390625e-8;
        return sign != 0u ? -v : v;
    }
    if (e == 31u) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
    return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}

uint float_to_half(float v) {
    uint f = floatBitsToUint(v), sign = (f >> 16) & 0x8000u, m = f & 0x7fffffu;
    int fe = int((f >> 23) & 255u), e = fe - 112;
    if (fe == 255) return sign | 0x7c00u | (m != 0u ? 0x200u : 0u);
    if (e >= 31) return sign | 0x7c00u;
    uint h, rem, mid;
    if (e <= 0) {
        if (e < -10) return sign;
        m |= 0x800000u;
        uint shift = uint(14 - e);
        h = m >> shift;
        rem = m & ((1u << shift) - 1u);
        mid = 1u << (shift - 1u);
    } else {
        h = (uint(e) << 10) | (m >> 13);
        rem = m & 0x1fffu;
        mid = 0x1000u;
    }
    if (rem > mid || (rem == mid && (h & 1u) != 0u)) h++; // a carry rolls into the exponent
    return sign | h;
}
