#version 450
// Matrix product, A read as vec4 along k, B as vec4 along its columns (matmul.glsl).
#define VA 1
#define VB 1
#include "matmul.glsl"
