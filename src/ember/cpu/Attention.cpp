// Scaled dot-product attention as one operator with an explicit backward,
// the CPU "flash" entry of PyTorch (same name, so the same grad_fn). The
// forward keeps the row log-sum-exp; the backward recomputes the
// probabilities from it instead of saving the L x S matrix.
#include <cmath>
#include <limits>

#include "ember/ops/Ops.h"
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
                          ? ember::masked_fill(ember::zeros_like(*attn_mask, q.dtype()),
                                               ember::logical_not(*attn_mask),
                                               -std::numeric_limits<double>::infinity())
                          : *attn_mask);
  }
  if (is_causal) {
    const int64_t L = q.size(-2), S = k.size(-2);
    Tensor above = ember::empty({L, S}, ScalarType::Bool, q.device());
    bool* m = above.data_ptr<bool>();
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < S; ++j) m[i * S + j] = j > i;
    s = ember::masked_fill(s, above, -std::numeric_limits<double>::infinity());
  }
  return s;
}

Tensor probabilities(const Tensor& scores, const Tensor& lse) {
  return ember::exp(ember::sub(scores, ember::unsqueeze(lse, -1)));
}

}  // namespace

std::tuple<Tensor, Tensor> sdpa_flash_cpu(const Tensor& query, const Tensor& key, const Tensor& value,
                                          double dropout_p, bool is_causal, const std::optional<Tensor>& attn_mask,
                                          std::optional<double> scale) {
  EMBER_CHECK(dropout_p == 0.0, "_scaled_dot_product_flash_attention_for_cpu: dropout is not supported");
  EMBER_CHECK(query.dim() == 4 && key.dim() == 4 && value.dim() == 4,
              "_scaled_dot_product_flash_attention_for_cpu: query, key and value must be 4-D");
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
  const double sc = attn_scale(query, scale);
  Tensor g = grad_out.defined() ? grad_out : ember::zeros_like(out);
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
