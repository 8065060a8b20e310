#pragma once
// Helpers used by the forward-mode (tangent) formulas of ops.yaml. A `*_t`
// argument is a tangent; an optional one may be undefined (no tangent).

#include <optional>
#include <vector>

#include "ember/ops/Tensor.h"

namespace ember::autograd::forward_ad {

// t summed over `dim` (all dimensions when absent or empty).
EMBER_API Tensor sum_over(const Tensor& t, const std::optional<std::vector<int64_t>>& dim, bool keepdim);
EMBER_API Tensor sum_over(const Tensor& t, IntArrayRef dim, bool keepdim);
EMBER_API Tensor sum_over(const Tensor& t, int64_t dim, bool keepdim);
// t * weight when an (optional) weight is given, else t.
EMBER_API Tensor weighted(const Tensor& t, const std::optional<Tensor>& weight);
// A loss's reduction (0 none, 1 mean, 2 sum) applied to per-element tangents.
EMBER_API Tensor apply_loss_reduction(const Tensor& t, int64_t reduction);
// The tangent of the values a (max|min|sort|...) along `dim` picked by `indices`.
EMBER_API Tensor gather_values(const Tensor& self_t, int64_t dim, const Tensor& indices, bool keepdim);
// The tangent of max_pool2d's output, read through its flat indices.
EMBER_API Tensor pool_values(const Tensor& self_t, const Tensor& indices);
// a_t @ b + a @ b_t for a matrix product `mul` (mm, bmm, mv, dot, vdot).
enum class Product { MM, BMM, MV, DOT, VDOT, OUTER };
EMBER_API Tensor product_jvp(Product kind, const Tensor& a, const Tensor& a_t, const Tensor& b, const Tensor& b_t);
// beta * self_t + alpha * (a_t @ b + a @ b_t) for addmm, addmv, baddbmm, addr; addbmm sums over the batch.
EMBER_API Tensor add_product_jvp(Product kind, const Tensor& self_t, const Tensor& a, const Tensor& a_t,
                                 const Tensor& b, const Tensor& b_t, const Scalar& beta, const Scalar& alpha,
                                 bool sum_batch = false);
EMBER_API Tensor convolution_jvp(const Tensor& input, const Tensor& input_t, const Tensor& weight,
                                 const Tensor& weight_t, const Tensor& bias_t, IntArrayRef stride, IntArrayRef padding,
                                 IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups);
EMBER_API Tensor layer_norm_jvp(const Tensor& input, const Tensor& input_t, IntArrayRef normalized_shape,
                                const std::optional<Tensor>& weight, const Tensor& weight_t, const Tensor& bias_t,
                                double eps);
EMBER_API Tensor batch_norm_jvp(const Tensor& input, const Tensor& input_t, const std::optional<Tensor>& weight,
                                const Tensor& weight_t, const Tensor& bias_t, const std::optional<Tensor>& running_mean,
                                const std::optional<Tensor>& running_var, bool training, double eps);
EMBER_API Tensor group_norm_jvp(const Tensor& input, const Tensor& input_t, const std::optional<Tensor>& weight,
                                const Tensor& weight_t, const Tensor& bias_t, int64_t group, double eps);
// Tangent of a normalization's per-row statistic `stat` (mean, or rstd when
// is_rstd), rows being input reshaped to stat.numel() rows.
EMBER_API Tensor norm_stat_jvp(const Tensor& input, const Tensor& input_t, const Tensor& stat, bool is_rstd,
                               const Tensor& rstd);
EMBER_API Tensor cumprod_jvp(const Tensor& self, const Tensor& self_t, int64_t dim, const Tensor& result);
EMBER_API Tensor glu_jvp(const Tensor& self, const Tensor& self_t, int64_t dim);
// scatter_reduce.two: sum and mean are linear; amax/amin average the tangents
// of the elements equal to the result (as PyTorch); prod has none (undefined).
EMBER_API Tensor scatter_reduce_jvp(const Tensor& self, const Tensor& self_t, int64_t dim, const Tensor& index,
                                    const Tensor& src, const Tensor& src_t, const std::string& reduce,
                                    bool include_self, const Tensor& result);

}  // namespace ember::autograd::forward_ad
