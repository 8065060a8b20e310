// Scaled dot-product attention as one operator with an explicit backward,
// the CPU "flash" entry of PyTorch (same name, so the same grad_fn). The
// forward keeps the row log-sum-exp; the backward recomputes the
// probabilities from it instead of saving the L x S matrix.
//
// Note [Fused attention]
// float32 inputs whose rows are contiguous run one (batch, head) at a time,
// in parallel over them: the L x S scores of one head live in a scratch
// block, the GEMMs go to sgemm with the rows' strides, and the mask,
// softmax and score gradient are row kernels (cpu/AttentionStubs.h). Other
// inputs take the composite of ops below.
#include <cmath>
#include <limits>
#include <vector>

#include "ember/cpu/AttentionStubs.h"
#include "ember/cpu/Blas.h"
#include "ember/cpu/ReducedFloat.h"
#include "ember/ops/Dispatch.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember {
namespace native {
namespace {

Tensor scalar_of(double v, const Tensor& like) { return ember::full({}, v, like.dtype(), like.device()); }

double attn_scale(const Tensor& query, std::optional<double> scale) {
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
}

// Scores q k^T * scale, plus the float mask, with -inf above the diagonal when causal.
Tensor attn_scores(const Tensor& q, const Tensor& k, bool is_causal, const std::optional<Tensor>& attn_mask,
                   double scale) {
  Tensor s = ember::mul(ember::matmul(q, ember::transpose(k, -2, -1)), scalar_of(scale, q));
  if (attn_mask && attn_mask->defined()) {
    s = ember::add(s, attn_mask->dtype() == ScalarType::Bool
                          ? ember::masked_fill(ember::zeros_like(*attn_mask, q.dtype()), ember::logical_not(*attn_mask),
                                               -std::numeric_limits<double>::infinity())
                          : *attn_mask);
  }
  if (is_causal) {
    const int64_t L = q.size(-2), S = k.size(-2);
    Tensor above = ember::triu(ember::ones({L, S}, ScalarType::Bool, q.device()), 1);
    s = ember::masked_fill(s, above, -std::numeric_limits<double>::infinity());
  }
  return s;
}

Tensor probabilities(const Tensor& scores, const Tensor& lse) {
  return ember::exp(ember::sub(scores, ember::unsqueeze(lse, -1)));
}

// ---- fused float32 path (Note [Fused attention]) --------------------------------

bool rows_contiguous(const Tensor& t) { return t.dtype() == ScalarType::Float && t.dim() == 4 && t.stride(3) == 1; }

// The float mask expanded to [B, H, L, S] (a bool mask becomes 0 / -inf), or
// undefined; false when the fused path cannot take it.
bool fused_mask(const std::optional<Tensor>& attn_mask, IntArrayRef shape, Tensor& out) {
  if (!attn_mask || !attn_mask->defined()) return true;
  Tensor m = *attn_mask;
  if (m.dtype() == ScalarType::Bool) {
    m = ember::masked_fill(ember::zeros_like(m, ScalarType::Float), ember::logical_not(m),
                           -std::numeric_limits<double>::infinity());
  }
  if (m.dtype() != ScalarType::Float || m.dim() > 4) return false;
  out = m.expand(shape);
  return true;
}

struct Head {
  int64_t b, h;
  template <typename T>
  T* at(const Tensor& t) const {
    return static_cast<T*>(t.data_ptr()) + b * t.stride(0) + h * t.stride(1);
  }
};

cpu::AttnMask head_mask(const Tensor& mask, const Head& hd, bool causal) {
  cpu::AttnMask m;
  m.causal = causal;
  if (mask.defined()) {
    m.mask = hd.at<const float>(mask);
    m.ms0 = mask.stride(2);
    m.ms1 = mask.stride(3);
  }
  return m;
}

// An output laid out as the query: [B, L, H, D] memory when the query is a
// transposed [B, L, H, D] tensor (multi-head attention's heads), else contiguous.
Tensor like_query(const Tensor& query, int64_t last) {
  const int64_t B = query.size(0), H = query.size(1), L = query.size(2);
  if (query.transpose(1, 2).is_contiguous() && !query.is_contiguous()) {
    return ember::empty({B, L, H, last}, ScalarType::Float, query.device()).transpose(1, 2);
  }
  return ember::empty({B, H, L, last}, ScalarType::Float, query.device());
}

template <typename F>
void for_each_head(int64_t B, int64_t H, int64_t L, int64_t S, int64_t D, const F& f) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(L * S + L * D, 1));
  parallel_for(0, B * H, grain, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(static_cast<size_t>(2 * L * S + L));
    for (int64_t t = begin; t < end; ++t) f(Head{t / H, t % H}, scratch.data());
  });
}

std::tuple<Tensor, Tensor> fused_forward(const Tensor& q, const Tensor& k, const Tensor& v, bool is_causal,
                                         const Tensor& mask, float scale) {
  const int64_t B = q.size(0), H = q.size(1), L = q.size(2), D = q.size(3), S = k.size(2), Dv = v.size(3);
  Tensor out = like_query(q, Dv);
  Tensor lse = ember::empty({B, H, L}, ScalarType::Float, q.device());
  for_each_head(B, H, L, S, D, [&](const Head& hd, float* sc) {
    blas::sgemm(false, true, int(L), int(S), int(D), scale, hd.at<const float>(q), int(q.stride(2)),
                hd.at<const float>(k), int(k.stride(2)), 0.0f, sc, int(S));
    cpu::attn_softmax_stub.get()(sc, L, S, S, head_mask(mask, hd, is_causal), hd.at<float>(lse), 1);
    blas::sgemm(false, false, int(L), int(Dv), int(S), 1.0f, sc, int(S), hd.at<const float>(v), int(v.stride(2)), 0.0f,
                hd.at<float>(out), int(out.stride(2)));
  });
  return {out, lse};
}

std::tuple<Tensor, Tensor, Tensor> fused_backward(const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v,
                                                  const Tensor& out, const Tensor& lse, bool is_causal,
                                                  const Tensor& mask, float scale) {
  const int64_t B = q.size(0), H = q.size(1), L = q.size(2), D = q.size(3), S = k.size(2), Dv = v.size(3);
  Tensor gq = like_query(q, D), gk = like_query(k, D), gv = like_query(v, Dv);
  for_each_head(B, H, L, S, D, [&](const Head& hd, float* scratch) {
    float* p = scratch;
    float* dp = scratch + L * S;
    float* row = scratch + 2 * L * S;
    const float* qh = hd.at<const float>(q);
    const float* kh = hd.at<const float>(k);
    const float* vh = hd.at<const float>(v);
    const float* gh = hd.at<const float>(g);
    const float* oh = hd.at<const float>(out);
    const int qs = int(q.stride(2)), ks = int(k.stride(2)), vs = int(v.stride(2)), gs = int(g.stride(2));
    blas::sgemm(false, true, int(L), int(S), int(D), scale, qh, qs, kh, ks, 0.0f, p, int(S));
    cpu::attn_probs_stub.get()(p, L, S, S, head_mask(mask, hd, is_causal), hd.at<const float>(lse), lse.stride(2));
    // dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO * O)), dQ = dS K s, dK = dS^T Q s.
    blas::sgemm(true, false, int(S), int(Dv), int(L), 1.0f, p, int(S), gh, gs, 0.0f, hd.at<float>(gv),
                int(gv.stride(2)));
    blas::sgemm(false, true, int(L), int(S), int(Dv), 1.0f, gh, gs, vh, vs, 0.0f, dp, int(S));
    for (int64_t i = 0; i < L; ++i) {
      const float* gr = gh + i * gs;
      const float* orow = oh + i * out.stride(2);
      float acc = 0.0f;
      for (int64_t d = 0; d < Dv; ++d) acc += gr[d] * orow[d];
      row[i] = acc;
    }
    cpu::attn_score_grad_stub.get()(dp, p, L, S, S, row);
    blas::sgemm(false, false, int(L), int(D), int(S), scale, dp, int(S), kh, ks, 0.0f, hd.at<float>(gq),
                int(gq.stride(2)));
    blas::sgemm(true, false, int(S), int(D), int(L), scale, dp, int(S), qh, qs, 0.0f, hd.at<float>(gk),
                int(gk.stride(2)));
  });
  return {gq, gk, gv};
}

// Note [16-bit attention]
// PyTorch's CPU kernel for bfloat16/half inputs keeps the scores, maxima and
// sums in float and walks the keys in blocks (512 keys, or all when fewer):
// each block's scores are scaled (plus the mask), the row maximum updated,
// exp(score - max) summed in float, the exponentials rounded to the input's
// type and multiplied with the block's values into a float accumulator that
// earlier blocks' share is rescaled by exp(old max - new max); the output is
// accumulator * (1 / sum), rounded once. Rounding at those points (and not
// after each operator) is what makes its results.
std::tuple<Tensor, Tensor> reduced_float_forward(const Tensor& q, const Tensor& k, const Tensor& v, bool is_causal,
                                                 const std::optional<Tensor>& attn_mask, double scale) {
  const ScalarType T = q.dtype(), F = ScalarType::Float;
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t L = q.size(2), S = k.size(2), split = S >= 512 ? 512 : S;
  const Tensor qf = q.to(F), kf = k.to(F), vf = v.to(F);
  Tensor mask;
  if (attn_mask && attn_mask->defined()) {
    mask = attn_mask->dtype() == ScalarType::Bool
               ? ember::masked_fill(ember::zeros_like(*attn_mask, F), ember::logical_not(*attn_mask), -inf)
               : attn_mask->to(F);
  }
  Tensor run_max = ember::full({q.size(0), q.size(1), L}, -inf, F, q.device());
  Tensor run_sum = ember::zeros({q.size(0), q.size(1), L}, F, q.device());
  Tensor acc = ember::zeros({q.size(0), q.size(1), L, v.size(3)}, F, q.device());
  for (int64_t n = 0; n < S; n += split) {
    const int64_t bs = std::min(split, S - n);
    Tensor qk = ember::matmul(qf, ember::transpose(kf.narrow(2, n, bs), -2, -1));
    if (is_causal) {  // key n + j is hidden from query i when n + j > i
      Tensor cols = ember::add(ember::arange(Scalar(bs), ScalarType::Long, q.device()), Scalar(n));
      Tensor rows = ember::unsqueeze(ember::arange(Scalar(L), ScalarType::Long, q.device()), 1);
      qk = ember::masked_fill(qk, ember::gt(cols, rows), -inf);
    }
    qk = ember::mul(qk, scalar_of(scale, qk));
    if (mask.defined()) qk = ember::add(qk, mask.narrow(-1, n, bs));
    Tensor new_max = ember::maximum(run_max, ember::amax(qk, {-1}, false));
    Tensor live = ember::ne(new_max, Scalar(-inf));  // rows with a visible key so far
    Tensor safe_max = ember::where(live, new_max, ember::zeros_like(new_max));
    Tensor e = ember::where(ember::unsqueeze(live, -1), ember::exp(ember::sub(qk, ember::unsqueeze(safe_max, -1))),
                            ember::zeros_like(qk));
    Tensor rescale = ember::where(live, ember::exp(ember::sub(run_max, safe_max)), ember::ones_like(run_max));
    run_sum = ember::where(live, ember::add(ember::sum(e, {-1}), ember::mul(rescale, run_sum)), run_sum);
    run_max = new_max;
    if (n > 0) acc = ember::mul(acc, ember::unsqueeze(rescale, -1));
    acc = ember::add(ember::matmul(e.to(T).to(F), vf.narrow(2, n, bs)), acc);
  }
  Tensor empty_rows = ember::eq(run_sum, Scalar(0.0));  // every key masked: zeros (not NaN)
  Tensor recip = ember::where(empty_rows, ember::zeros_like(run_sum), ember::reciprocal(run_sum));
  Tensor out = ember::mul(acc, ember::unsqueeze(recip, -1)).to(T);
  Tensor lse = ember::where(empty_rows, ember::zeros_like(run_sum), ember::add(run_max, ember::log(run_sum)));
  return {out, lse};
}

bool can_fuse(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (!rows_contiguous(*t) || !t->device().is_cpu() || t->numel() == 0) return false;
  }
  return true;
}

}  // namespace

std::tuple<Tensor, Tensor> sdpa_flash_cpu(const Tensor& query, const Tensor& key, const Tensor& value, double dropout_p,
                                          bool is_causal, const std::optional<Tensor>& attn_mask,
                                          std::optional<double> scale) {
  // PyTorch's CPU entry point (the causal mask is built on the host).
  dispatch::check_cpu_only("aten::_scaled_dot_product_flash_attention_for_cpu", query, key, value);
  EMBER_CHECK(dropout_p == 0.0, "_scaled_dot_product_flash_attention_for_cpu: dropout is not supported");
  EMBER_CHECK(query.dim() == 4 && key.dim() == 4 && value.dim() == 4,
              "_scaled_dot_product_flash_attention_for_cpu: query, key and value must be 4-D");
  if (can_fuse({&query, &key, &value})) {
    Tensor mask;
    if (fused_mask(attn_mask, {query.size(0), query.size(1), query.size(2), key.size(2)}, mask)) {
      return fused_forward(query, key, value, is_causal, mask, static_cast<float>(attn_scale(query, scale)));
    }
  }
  if (is_reduced_float(query.dtype()) && key.dtype() == query.dtype() && value.dtype() == query.dtype() &&
      query.numel() > 0 && key.size(2) > 0) {
    return reduced_float_forward(query, key, value, is_causal, attn_mask, attn_scale(query, scale));
  }
  Tensor s = attn_scores(query, key, is_causal, attn_mask, attn_scale(query, scale));
  Tensor lse = ember::logsumexp(s, {-1}, false);
  // Rows with every key masked give zeros, not NaN.
  lse = ember::masked_fill(lse, ember::eq(lse, Scalar(-std::numeric_limits<double>::infinity())), 0.0);
  Tensor out = ember::matmul(probabilities(s, lse), value);
  return {out, lse};
}

std::tuple<Tensor, Tensor, Tensor> sdpa_flash_backward_cpu(const Tensor& grad_out, const Tensor& query,
                                                           const Tensor& key, const Tensor& value, const Tensor& out,
                                                           const Tensor& logsumexp, double dropout_p, bool is_causal,
                                                           const std::optional<Tensor>& attn_mask,
                                                           std::optional<double> scale) {
  (void)dropout_p;
  dispatch::check_cpu_only("aten::_scaled_dot_product_flash_attention_for_cpu_backward", grad_out, query, key, value);
  const double sc = attn_scale(query, scale);
  Tensor g = grad_out.defined() ? grad_out : ember::zeros_like(out);
  if (can_fuse({&g, &query, &key, &value, &out}) && logsumexp.dtype() == ScalarType::Float) {
    Tensor mask;
    if (fused_mask(attn_mask, {query.size(0), query.size(1), query.size(2), key.size(2)}, mask)) {
      return fused_backward(g, query, key, value, out, logsumexp, is_causal, mask, static_cast<float>(sc));
    }
  }
  if (is_reduced_float(query.dtype())) {
    // 16-bit inputs: the gradients in float (the forward's log-sum-exp is float), rounded once.
    const ScalarType F = ScalarType::Float, T = query.dtype();
    auto [gq, gk, gv] = sdpa_flash_backward_cpu(g.to(F), query.to(F), key.to(F), value.to(F), out.to(F),
                                                logsumexp.to(F), dropout_p, is_causal, attn_mask, scale);
    return {gq.to(T), gk.to(T), gv.to(T)};
  }
  Tensor p = probabilities(attn_scores(query, key, is_causal, attn_mask, sc), logsumexp);
  Tensor grad_v = ember::matmul(ember::transpose(p, -2, -1), g);
  Tensor dp = ember::matmul(g, ember::transpose(value, -2, -1));
  Tensor row = ember::sum(ember::mul(g, out), std::vector<int64_t>{-1}, true);
  Tensor ds = ember::mul(p, ember::sub(dp, row));
  Tensor s = scalar_of(sc, query);
  Tensor grad_q = ember::mul(ember::matmul(ds, key), s);
  Tensor grad_k = ember::mul(ember::matmul(ember::transpose(ds, -2, -1), query), s);
  return {grad_q, grad_k, grad_v};
}

}  // namespace native
}  // namespace ember
