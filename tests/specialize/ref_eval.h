/* A plain reference interpreter for berth_graph_desc, f32 only: naive
 * loops in double for the ops the fusion tests and the differential
 * fuzzer (tests/diff) use and for the fused ops, so a fused graph can be
 * checked against its unfused form and a backend against it. Ops:
 * add sub mul div pow max min, relu gelu sigmoid tanh sqrt abs neg exp
 * log erf clamp leakyRelu elu, matmul (rank-1 operands read the ONNX
 * way), transpose, reshape identity squeeze unsqueeze expand slice
 * concat, softmax, reduceSum reduceMean reduceMax reduceMin,
 * layerNormalization, berth.matmulEpilogue, berth.attention. */
#ifndef SPEC_REF_EVAL_H
#define SPEC_REF_EVAL_H

#include "berth/backend.h"

/* Runs desc. inputs[i] feeds desc->inputs[i]; weights[id] holds weight id.
 * Returns one malloc'd buffer per operand (NULL for ones never written)
 * or NULL after printing why to stderr. */
float **ref_run(const berth_graph_desc *d, const float *const *inputs, const float *const *weights);
void ref_free(float **bufs, uint32_t n_operands);

#endif
