#pragma once
// Row kernels of the fused float32 attention (cpu/Attention.cpp), selected at
// run time by CPU capability. A score block is L x S floats with row stride
// ld; the additive mask, if any, has element (i, j) at mask[i * ms0 + j * ms1];
// causal masks j > i. Rows whose keys are all masked get probabilities 0
// and a log-sum-exp of 0.

#include <cstdint>

#include "ember/ops/DispatchStub.h"

namespace ember::cpu {

struct AttnMask {
  const float* mask = nullptr;
  int64_t ms0 = 0, ms1 = 0;
  bool causal = false;
};

// s <- softmax(s + mask) per row; lse[i * lse_stride] <- its log-sum-exp.
using AttnSoftmaxFn = void (*)(float* s, int64_t L, int64_t S, int64_t ld, const AttnMask& m, float* lse,
                               int64_t lse_stride);
// s <- exp(s + mask - lse[i]) per row (the probabilities again, from the saved lse).
using AttnProbsFn = void (*)(float* s, int64_t L, int64_t S, int64_t ld, const AttnMask& m, const float* lse,
                             int64_t lse_stride);
// dp <- p * (dp - row[i]) per row (the gradient of the scores).
using AttnScoreGradFn = void (*)(float* dp, const float* p, int64_t L, int64_t S, int64_t ld, const float* row);

EMBER_DECLARE_DISPATCH(AttnSoftmaxFn, attn_softmax_stub);
EMBER_DECLARE_DISPATCH(AttnProbsFn, attn_probs_stub);
EMBER_DECLARE_DISPATCH(AttnScoreGradFn, attn_score_grad_stub);

}  // namespace ember::cpu
