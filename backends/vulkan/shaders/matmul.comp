#version 450
// Matrix product, A and B read a float at a time (matmul.glsl).
#define VA 0
#define VB 0
#include "matmul.glsl"
