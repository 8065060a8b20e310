// Row kernels of the fused attention (cpu/AttentionStubs.h), compiled once
// per CPU capability.
#include <cmath>
#include <limits>

#include "ember/cpu/AttentionStubs.h"
#include "ember/cpu/kernels/MathLoops.h"
#include "ember/cpu/kernels/ReduceVec.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

using vecmath::Vf;
constexpr int64_t W = vecmath::kLanesF;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Adds the mask to row i; returns the number of leading columns left by the
// causal mask (the rest are skipped, then set to 0).
inline int64_t mask_row(float* r, int64_t i, int64_t S, const AttnMask& m) {
  if (m.mask) {
    const float* mr = m.mask + i * m.ms0;
    if (m.ms1 == 1) {
      for (int64_t j = 0; j < S; ++j) r[j] += mr[j];
    } else {
      for (int64_t j = 0; j < S; ++j) r[j] += mr[j * m.ms1];
    }
  }
  return m.causal ? std::min(S, i + 1) : S;
}

// exp(x) for the probabilities, 0 where x < -87.3 (masked entries and
// anything else whose exp is below the normal range): computing those goes
// through subnormal results, which cost microcode assists.
EMBER_VEC_INLINE Vf prob_exp(Vf x) {
  const auto tiny = x < -87.3f;
  return vecmath::select(tiny, vecmath::splat(0.0f), vecmath::exp(vecmath::select(tiny, vecmath::splat(0.0f), x)));
}

// r[j] <- prob_exp(r[j] - shift) for j < n, as vectors and a padded tail.
inline void exp_shifted(float* r, int64_t n, float shift) {
  int64_t j = 0;
  for (; j + W <= n; j += W) vecmath::store(r + j, prob_exp(vecmath::load(r + j) - shift));
  if (j < n) {
    float buf[W];
    for (int64_t k = 0; k < W; ++k) buf[k] = j + k < n ? r[j + k] : shift;
    vecmath::store(buf, prob_exp(vecmath::load(buf) - shift));
    for (int64_t k = 0; j + k < n; ++k) r[j + k] = buf[k];
  }
}

void attn_softmax_kernel(float* s, int64_t L, int64_t S, int64_t ld, const AttnMask& m, float* lse,
                         int64_t lse_stride) {
  for (int64_t i = 0; i < L; ++i) {
    float* r = s + i * ld;
    const int64_t n = mask_row(r, i, S, m);
    const float mx = n > 0 ? vec_extreme<true>(r, n) : kNegInf;
    if (mx == kNegInf) {
      for (int64_t j = 0; j < S; ++j) r[j] = 0.0f;
      lse[i * lse_stride] = 0.0f;
      continue;
    }
    exp_shifted(r, n, mx);
    const float sum = vec_sum_block(r, n, [](auto x) { return x; });
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < n; ++j) r[j] *= inv;
    for (int64_t j = n; j < S; ++j) r[j] = 0.0f;
    lse[i * lse_stride] = mx + std::log(sum);
  }
}

void attn_probs_kernel(float* s, int64_t L, int64_t S, int64_t ld, const AttnMask& m, const float* lse,
                       int64_t lse_stride) {
  for (int64_t i = 0; i < L; ++i) {
    float* r = s + i * ld;
    const int64_t n = mask_row(r, i, S, m);
    exp_shifted(r, n, lse[i * lse_stride]);
    for (int64_t j = n; j < S; ++j) r[j] = 0.0f;
  }
}

void attn_score_grad_kernel(float* dp, const float* p, int64_t L, int64_t S, int64_t ld, const float* row) {
  for (int64_t i = 0; i < L; ++i) {
    float* d = dp + i * ld;
    const float* pr = p + i * ld;
    const float ri = row[i];
    for (int64_t j = 0; j < S; ++j) d[j] = pr[j] * (d[j] - ri);
  }
}

}  // namespace

EMBER_REGISTER_DISPATCH(attn_softmax_stub, &attn_softmax_kernel);
EMBER_REGISTER_DISPATCH(attn_probs_stub, &attn_probs_kernel);
EMBER_REGISTER_DISPATCH(attn_score_grad_stub, &attn_score_grad_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
