#version 450
// berth.matmulQuantized, A read as vec4 along k (matmul_q.glsl).
#define VA 1
#include "matmul_q.glsl"
