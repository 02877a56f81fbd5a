// Shared by every berth shader: 32 words of push constants (the layout is
// per shader, written by the op file that emits the dispatch) and a
// grid-stride loop, since group counts are capped at 65535 per axis.
layout(push_constant) uniform PushConstants { uint u[32]; } pc;

#define PCF(i) uintBitsToFloat(pc.u[i])
#define GRID_STRIDE (gl_NumWorkGroups.x * gl_WorkGroupSize.x)
#define FOR_EACH(i, n) for (uint i = gl_GlobalInvocationID.x; i < (n); i += GRID_STRIDE)

// Offset of linear element i of a `rank`-dim iteration shape whose dims
// start at pc.u[dims] into a tensor with element strides at pc.u[strides].
uint strided_offset(uint i, uint rank, uint dims, uint strides) {
    uint off = 0;
    for (int d = int(rank) - 1; d >= 0; d--) {
        uint n = pc.u[dims + uint(d)];
        off += (i % n) * pc.u[strides + uint(d)];
        i /= n;
    }
    return off;
}
