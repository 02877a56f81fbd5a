// Packed integer tensors, read as uint words and taken apart by index:
// KIND, specialization constant 0, is 0 int8 or 1 uint8 (four to a word)
// or 2 int4 or 3 uint4 (eight to a word, two to a byte, low nibble
// first, as berth stores them). Element e lies in word packed_word(e).
layout(constant_id = 0) const uint KIND = 0u;

uint packed_word(uint e) { return KIND < 2u ? e >> 2u : e >> 3u; }

// Element e's value, from w, the word it lies in (any word whose place
// in the tensor is a whole number of words before it reads the same
// element: only e's place in its word counts).
int packed_at(uint w, uint e) {
    if (KIND < 2u) {
        uint b = (w >> ((e & 3u) * 8u)) & 255u;
        return KIND == 0u ? int(b << 24u) >> 24 : int(b);
    }
    uint n = (w >> ((e & 7u) * 4u)) & 15u;
    return KIND == 2u ? int(n << 28u) >> 28 : int(n);
}
