#version 450
// berth.matmulQuantized, A read a float at a time (matmul_q.glsl).
#define VA 0
#include "matmul_q.glsl"
