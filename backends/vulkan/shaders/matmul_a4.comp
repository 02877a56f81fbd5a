#version 450
// Matrix product, A read as vec4 along k (matmul.glsl).
#define VA 1
#define VB 0
#include "matmul.glsl"
