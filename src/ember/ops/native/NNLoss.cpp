// Embedding and the losses of torch.nn.functional that have their own
// autograd node (nll_loss, binary_cross_entropy[_with_logits], smooth_l1_loss,
// huber_loss). Element loops are plain scalar loops over contiguous data;
// the rest is built from other operators.
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/LossChecks.h"

namespace ember::native {

namespace {

std::string sizes_text(IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

Tensor one_minus(const Tensor& t) { return ember::sub(wrapped_scalar(Scalar(int64_t(1))), t); }

}  // namespace

// ---- embedding -------------------------------------------------------------------

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  EMBER_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  EMBER_CHECK(indices.dtype() == ScalarType::Long || indices.dtype() == ScalarType::Int,
              "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
              "but got torch.",
              dtype_message_name(indices.dtype()), "Tensor instead (while checking arguments for embedding)");
  if (indices.dim() == 1) return weight.index_select(0, indices);
  std::vector<int64_t> size(indices.sizes().begin(), indices.sizes().end());
  size.push_back(weight.sizes()[1]);
  return weight.index_select(0, indices.reshape({-1})).view(size);
}

Tensor embedding_dense_backward_cpu(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                    int64_t padding_idx, bool scale_grad_by_freq) {
  const int64_t d = grad_output.dim() > 0 ? grad_output.sizes()[grad_output.dim() - 1] : 1;
  Tensor idx = indices.to(ScalarType::Long).contiguous();
  const int64_t n = idx.numel();
  const int64_t* ip = static_cast<const int64_t*>(idx.data_ptr());
  bool in_range = true;
  for (int64_t i = 0; i < n; ++i) in_range = in_range && ip[i] >= 0 && ip[i] < num_weights;
  if (in_range && !scale_grad_by_freq &&
      (grad_output.dtype() == ScalarType::Float || grad_output.dtype() == ScalarType::Double)) {
    // Rows of grad_output add into their weight rows in order (index_add_'s
    // row loop; grad_output may be expanded, as the gradient of a sum is).
    // 16-bit floats keep the loop below: index_add_ would sum them in float.
    Tensor out = ember::zeros({num_weights, d}, grad_output.dtype());
    if (n == 0) return out;
    out.index_add_(0, idx.reshape({n}), grad_output.reshape({n, d}));
    if (padding_idx >= 0 && padding_idx < num_weights) out.select(0, padding_idx).zero_();
    return out;
  }
  Tensor grad = grad_output.contiguous();
  Tensor out = ember::zeros({num_weights, d}, grad.dtype());
  std::vector<int64_t> counts;
  if (scale_grad_by_freq) {
    counts.assign(num_weights, 0);
    for (int64_t i = 0; i < n; ++i) counts[ip[i]]++;
  }
  dispatch_floating_types(grad.dtype(), "embedding_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* g = static_cast<const T*>(grad.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = ip[i];
      if (r == padding_idx) continue;
      EMBER_CHECK_TYPE(IndexError, r >= 0 && r < num_weights, "index out of range in self");
      T* row = o + r * d;
      const T* src = g + i * d;
      if (scale_grad_by_freq) {
        const double s = 1.0 / static_cast<double>(counts[r]);
        for (int64_t j = 0; j < d; ++j)
          row[j] = static_cast<T>(static_cast<double>(row[j]) + static_cast<double>(src[j]) * s);
      } else {
        for (int64_t j = 0; j < d; ++j) row[j] = static_cast<T>(row[j] + src[j]);
      }
    }
  });
  return out;
}

Tensor& embedding_renorm_cpu_(Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  EMBER_CHECK(self.dim() == 2, "'self' must be 2-D");
  // The rows to renormalise depend on values (Note [Meta tensors]).
  if (self.is_meta() || indices.is_meta()) return self;
  Tensor idx = indices.to(ScalarType::Long).contiguous();
  std::vector<int64_t> rows(static_cast<const int64_t*>(idx.data_ptr()),
                            static_cast<const int64_t*>(idx.data_ptr()) + idx.numel());
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  for (int64_t r : rows) {
    Tensor row = self.select(0, r);
    Tensor norm = ember::linalg_vector_norm(row, Scalar(norm_type)).to(ScalarType::Double);
    const double v = *static_cast<const double*>(norm.data_ptr());
    if (v > max_norm) {
      const double scale = max_norm / (v + 1e-7);
      row.mul_(wrapped_scalar(Scalar(scale)));
    }
  }
  return self;
}

// ---- nll_loss --------------------------------------------------------------------------

namespace {

void check_target_dtype(const Tensor& target) {
  EMBER_CHECK(target.dtype() == ScalarType::Long || target.dtype() == ScalarType::Byte,
              "expected target dtype to be Long or Byte, but got ", dtype_message_name(target.dtype()));
}

// Input viewed as (N, C, S), target as (N, S).
std::tuple<Tensor, Tensor> nll_loss_impl(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight_,
                                         int64_t reduction, int64_t ignore_index, int64_t N, int64_t C, int64_t S,
                                         std::vector<int64_t> none_shape) {
  EMBER_CHECK(reduction >= 0 && reduction <= 2, reduction, " is not a valid value for reduction");
  Tensor weight = weight_.has_value() ? *weight_ : Tensor();
  if (weight.defined()) {
    EMBER_CHECK(weight.dim() == 1 && weight.numel() == C, "weight tensor should be defined either for all ", C,
                " classes or no classes but got weight tensor of shape: ", sizes_text(weight.sizes()));
    weight = weight.to(self.dtype()).contiguous();
  }
  Tensor x = self.contiguous(), t = target.to(ScalarType::Long).contiguous();
  Tensor out = ember::empty(reduction == 0 ? IntArrayRef(none_shape) : IntArrayRef(), self.dtype(), self.device());
  Tensor total = ember::empty({}, self.dtype(), self.device());
  // No values to read (Note [Meta tensors]); the meta kernel runs when any argument is meta.
  if (self.is_meta() || target.is_meta() || dispatch::is_meta_arg(weight_)) return {out, total};
  dispatch_floating_types(self.dtype(), "nll_loss_forward_out_frame", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data_ptr());
    const int64_t* tp = static_cast<const int64_t*>(t.data_ptr());
    const T* wp = weight.defined() ? static_cast<const T*>(weight.data_ptr()) : nullptr;
    T* op = static_cast<T*>(out.data_ptr());
    // Note [nll_loss summation]: the reduced loss and weight are summed in the
    // element type with 8 cascaded partial sums of 16 terms per level, in the
    // order of the (n, s) positions, as PyTorch does; the result is then the
    // same float.
    constexpr int kLevels = 8;
    constexpr int64_t kMask = 15;
    T loss_sum[kLevels] = {}, weight_sum[kLevels] = {};
    int64_t ignored = 0;
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t s = 0; s < S; ++s) {
        const int64_t idx = n * S + s;
        const int64_t cls = tp[idx];
        if (cls == ignore_index) {
          if (reduction == 0) op[idx] = T(0);
          ++ignored;
          continue;
        }
        EMBER_CHECK_TYPE(IndexError, cls >= 0 && cls < C, "Target ", cls, " is out of bounds.");
        const T v = xp[(n * C + cls) * S + s];
        if (reduction == 0) {
          op[idx] = wp ? static_cast<T>(-(v * wp[cls])) : static_cast<T>(-v);
          continue;
        }
        if (wp) {
          loss_sum[0] = static_cast<T>(loss_sum[0] - static_cast<T>(v * wp[cls]));
          weight_sum[0] = static_cast<T>(weight_sum[0] + wp[cls]);
        } else {
          loss_sum[0] = static_cast<T>(loss_sum[0] - v);
        }
        for (int j = 0; j + 1 < kLevels; ++j) {
          if ((idx & (kMask << (4 * j))) != 0) break;
          weight_sum[j + 1] = static_cast<T>(weight_sum[j + 1] + weight_sum[j]);
          loss_sum[j + 1] = static_cast<T>(loss_sum[j + 1] + loss_sum[j]);
          weight_sum[j] = T(0);
          loss_sum[j] = T(0);
        }
      }
    }
    if (reduction != 0) {
      T tw(0), total_loss(0);
      if (wp) {
        for (int j = 0; j < kLevels; ++j) tw = static_cast<T>(tw + weight_sum[j]);
      } else {
        tw = static_cast<T>(N * S - ignored);
      }
      for (int j = 0; j < kLevels; ++j) total_loss = static_cast<T>(total_loss + loss_sum[j]);
      *static_cast<T*>(total.data_ptr()) = tw;
      *op = reduction == 1 ? static_cast<T>(total_loss / tw) : total_loss;
    } else {
      *static_cast<T*>(total.data_ptr()) = T(0);
    }
  });
  return {out, total};
}

}  // namespace

std::tuple<Tensor, Tensor> nll_loss_forward_cpu(const Tensor& self, const Tensor& target,
                                                const std::optional<Tensor>& weight, int64_t reduction,
                                                int64_t ignore_index) {
  check_target_dtype(target);
  EMBER_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  EMBER_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  const bool no_batch = self.dim() == 1 && target.dim() == 0;
  EMBER_CHECK(no_batch || self.sizes()[0] == target.sizes()[0], "size mismatch (got input: ", sizes_text(self.sizes()),
              ", target: ", sizes_text(target.sizes()), ")");
  const int64_t N = self.dim() == 2 ? self.sizes()[0] : 1;
  const int64_t C = self.sizes()[self.dim() - 1];
  std::vector<int64_t> none_shape;
  if (self.dim() == 2) none_shape.push_back(N);
  return nll_loss_impl(self, target, weight, reduction, ignore_index, N, C, 1, none_shape);
}

std::tuple<Tensor, Tensor> nll_loss2d_forward_cpu(const Tensor& self, const Tensor& target,
                                                  const std::optional<Tensor>& weight, int64_t reduction,
                                                  int64_t ignore_index) {
  check_target_dtype(target);
  EMBER_CHECK(target.dtype() == ScalarType::Long, "expected scalar type Long but found ",
              dtype_message_name(target.dtype()));
  EMBER_CHECK(target.dim() == 3,
              "only batches of spatial targets supported (3D tensors) but got targets of dimension: ", target.dim());
  EMBER_CHECK(self.dim() == 4,
              "only batches of spatial inputs supported (4D tensors), but got input of dimension: ", self.dim());
  EMBER_CHECK(self.sizes()[0] == target.sizes()[0] && self.sizes()[2] == target.sizes()[1] &&
                  self.sizes()[3] == target.sizes()[2],
              "size mismatch (got input: ", sizes_text(self.sizes()), " , target: ", sizes_text(target.sizes()));
  const int64_t N = self.sizes()[0], C = self.sizes()[1], S = self.sizes()[2] * self.sizes()[3];
  return nll_loss_impl(self, target, weight, reduction, ignore_index, N, C, S,
                       {self.sizes()[0], self.sizes()[2], self.sizes()[3]});
}

Tensor nll_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                             const std::optional<Tensor>& weight_, int64_t reduction, int64_t ignore_index,
                             const Tensor& total_weight) {
  const int64_t C = self.dim() == 1 ? self.sizes()[0] : self.sizes()[1];
  const int64_t N = self.dim() == 1 ? 1 : self.sizes()[0];
  const int64_t S = self.numel() / std::max<int64_t>(N * C, 1);
  Tensor weight = weight_.has_value() && weight_->defined() ? weight_->to(self.dtype()).contiguous() : Tensor();
  Tensor g = grad_output.to(self.dtype()).contiguous(), t = target.contiguous();
  Tensor tw = total_weight.to(self.dtype());
  Tensor out = ember::zeros(self.sizes(), self.dtype());
  dispatch_floating_types(self.dtype(), "nll_loss_backward_out_frame", [&](auto tag) {
    using T = decltype(tag);
    using acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T* gp = static_cast<const T*>(g.data_ptr());
    const int64_t* tp = static_cast<const int64_t*>(t.data_ptr());
    const T* wp = weight.defined() ? static_cast<const T*>(weight.data_ptr()) : nullptr;
    T* op = static_cast<T*>(out.data_ptr());
    const acc twv = static_cast<acc>(*static_cast<const T*>(tw.data_ptr()));
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t s = 0; s < S; ++s) {
        const int64_t cls = tp[n * S + s];
        if (cls == ignore_index) continue;
        acc gv = reduction == 0 ? static_cast<acc>(gp[n * S + s]) : static_cast<acc>(gp[0]);
        if (reduction == 1) gv = static_cast<acc>(static_cast<T>(gv / twv));  // divided in the element type
        gv = -gv;
        op[(n * C + cls) * S + s] = static_cast<T>(wp ? static_cast<acc>(wp[cls]) * gv : gv);
      }
    }
  });
  return out;
}

// ---- binary cross entropy (the forward is in cpu/Loss.cpp) ------------------------

Tensor binary_cross_entropy_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                     const std::optional<Tensor>& weight, int64_t reduction) {
  Tensor g = grad_output * (self - target);
  Tensor gi = g / ember::clamp_min(one_minus(self) * self, Scalar(1e-12));
  if (weight.has_value() && weight->defined()) gi = gi * *weight;
  if (reduction == 1) gi = gi / Scalar(static_cast<double>(self.numel()));
  return gi;
}

Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight, int64_t reduction) {
  // PyTorch's order of in-place steps: the loss has (1 - target)'s shape and
  // dtype, so an input that broadcasts beyond the target's shape, or a result
  // type the target's dtype cannot hold, is PyTorch's in-place error.
  Tensor ls = ember::log_sigmoid(self);
  if (pos_weight.has_value() && pos_weight->defined()) {
    Tensor log_weight = ((*pos_weight - Scalar(int64_t(1))) * target) + Scalar(int64_t(1));
    ls.mul_(log_weight);
  }
  Tensor loss = one_minus(target);
  loss.mul_(self).sub_(ls);
  if (weight.has_value() && weight->defined()) loss.mul_(*weight);
  return apply_reduction(loss, reduction);
}

Tensor binary_cross_entropy_with_logits_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                                 const std::optional<Tensor>& weight,
                                                 const std::optional<Tensor>& pos_weight, int64_t reduction) {
  Tensor gi;
  if (pos_weight.has_value() && pos_weight->defined()) {
    Tensor t = *pos_weight * target;
    gi = ((t + Scalar(int64_t(1))) - target) * self.sigmoid() - t;
  } else {
    gi = self.sigmoid() - target;
  }
  gi = gi * grad_output;
  if (weight.has_value() && weight->defined()) gi = gi * *weight;
  if (reduction == 1) gi = gi / Scalar(static_cast<double>(self.numel()));
  return gi;
}

// ---- smooth L1 and Huber ------------------------------------------------------------------

Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  EMBER_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  check_float_loss("smooth_l1_cpu", self, target);
  Tensor z = (self - target).abs();
  if (beta == 0) return apply_reduction(z, reduction);
  Tensor quad = Scalar(0.5) * z * z / Scalar(beta);
  Tensor lin = z - Scalar(0.5 * beta);
  return apply_reduction(ember::where(z.lt(Scalar(beta)), quad, lin), reduction);
}

Tensor smooth_l1_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, int64_t reduction,
                               double beta) {
  const double norm = reduction == 1 ? 1.0 / static_cast<double>(self.numel()) : 1.0;
  Tensor x = self - target;
  Tensor g = grad_output * Scalar(norm);
  Tensor g_full = g.expand_as(x);
  if (beta == 0)
    return ember::where(x.lt(Scalar(0.0)), g_full.neg(), ember::where(x.gt(Scalar(0.0)), g_full, g_full * Scalar(0.0)));
  Tensor mid = x * g / Scalar(beta);
  return ember::where(x.le(Scalar(-beta)), g_full.neg(), ember::where(x.ge(Scalar(beta)), g_full, mid));
}

Tensor huber_loss(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  EMBER_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  // PyTorch's loss is empty_like(self): computed in the promoted dtype, stored in self's.
  const ScalarType promoted = result_type({&self, &target});
  EMBER_CHECK(can_cast(promoted, self.dtype()), "result type ", dtype_message_name(promoted),
              " can't be cast to the desired output type ", dtype_message_name(self.dtype()));
  check_float_loss("huber_cpu", self, target);
  Tensor z = (self - target).abs();
  Tensor quad = Scalar(0.5) * z * z;
  Tensor lin = Scalar(delta) * (z - Scalar(0.5 * delta));
  Tensor loss = ember::where(z.lt(Scalar(delta)), quad, lin);
  return apply_reduction(loss.dtype() == self.dtype() ? loss : loss.to(self.dtype()), reduction);
}

Tensor huber_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, int64_t reduction,
                           double delta) {
  const double norm = reduction == 1 ? 1.0 / static_cast<double>(self.numel()) : 1.0;
  Tensor x = self - target;
  Tensor g = (grad_output * Scalar(norm)).expand_as(x);
  return ember::where(x.le(Scalar(-delta)), g.neg() * Scalar(delta),
                      ember::where(x.ge(Scalar(delta)), g * Scalar(delta), x * g));
}

}  // namespace ember::native
