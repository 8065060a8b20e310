#pragma once
// PyTorch C++ functions whose Ember implementation is written in Python
// (composites such as linear, einsum, the losses and most of linalg): inside
// an extension module they call the Python function with the GIL held, so
// they compute, record autograd and raise exactly as from Python.

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/extension/Pybind11.h"
#include "ember/ops/Ops.h"

namespace ember::extension {

// module.name(args...) converted to R.
template <typename R, typename... Args>
R call_python(const char* module, const char* name, Args&&... args) {
  pybind11::gil_scoped_acquire gil;
  pybind11::object fn = pybind11::module_::import(module).attr(name);
  return fn(std::forward<Args>(args)...).template cast<R>();
}

inline const char* reduction_name(int64_t reduction) {
  switch (reduction) {
    case 0: return "none";
    case 1: return "mean";
    case 2: return "sum";
    default: throw ValueError(str_cat(reduction, " is not a valid value for reduction"));
  }
}

constexpr const char* kFunctional = "ember.nn.functional";
constexpr const char* kLinalg = "ember.linalg";

}  // namespace ember::extension

namespace at {

namespace Reduction {
enum Reduction { None, Mean, Sum, END };
}  // namespace Reduction

using ::ember::Tensor;

#define EMBER_PY_ARG(name, value) pybind11::arg(name) = (value)

inline Tensor einsum(std::string_view equation, const std::vector<Tensor>& tensors) {
  pybind11::gil_scoped_acquire gil;
  return pybind11::module_::import("ember")
      .attr("einsum")(std::string(equation), *pybind11::cast(tensors))
      .cast<Tensor>();
}
inline Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "linear", input, weight, bias);
}
inline Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight,
                       const std::optional<Tensor>& bias = std::nullopt) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "bilinear", x1, x2, weight, bias);
}
inline Tensor dropout(const Tensor& input, double p, bool train) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "dropout", input, p, train);
}
inline Tensor one_hot(const Tensor& self, int64_t num_classes = -1) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "one_hot", self, num_classes);
}
inline Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode = "constant",
                  std::optional<double> value = std::nullopt) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "pad", self, pad.vec(), std::string(mode),
                                               value);
}
inline Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                           const std::optional<Tensor>& attn_mask = std::nullopt,
                                           double dropout_p = 0.0, bool is_causal = false,
                                           std::optional<double> scale = std::nullopt, bool enable_gqa = false) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "scaled_dot_product_attention", query,
                                               key, value, attn_mask, dropout_p, is_causal,
                                               EMBER_PY_ARG("scale", scale), EMBER_PY_ARG("enable_gqa", enable_gqa));
}
inline Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-08) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "cosine_similarity", x1, x2, dim, eps);
}
inline Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2, double eps = 1e-06,
                                bool keepdim = false) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "pairwise_distance", x1, x2, p, eps,
                                               keepdim);
}
inline Tensor prelu(const Tensor& self, const Tensor& weight) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "prelu", self, weight);
}

// Losses take PyTorch's C++ reduction numbers (at::Reduction::Mean).
inline Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                       int64_t reduction = Reduction::Mean, int64_t ignore_index = -100) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "nll_loss", self, target, weight,
                                               EMBER_PY_ARG("ignore_index", ignore_index),
                                               EMBER_PY_ARG("reduction", ember::extension::reduction_name(reduction)));
}
inline Tensor cross_entropy_loss(const Tensor& self, const Tensor& target,
                                 const std::optional<Tensor>& weight = std::nullopt,
                                 int64_t reduction = Reduction::Mean, int64_t ignore_index = -100,
                                 double label_smoothing = 0.0) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "cross_entropy", self, target, weight,
                                               EMBER_PY_ARG("ignore_index", ignore_index),
                                               EMBER_PY_ARG("reduction", ember::extension::reduction_name(reduction)),
                                               EMBER_PY_ARG("label_smoothing", label_smoothing));
}
inline Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "l1_loss", self, target,
                                               EMBER_PY_ARG("reduction", ember::extension::reduction_name(reduction)));
}
inline Tensor kl_div(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean,
                     bool log_target = false) {
  return ember::extension::call_python<Tensor>(ember::extension::kFunctional, "kl_div", self, target,
                                               EMBER_PY_ARG("reduction", ember::extension::reduction_name(reduction)),
                                               EMBER_PY_ARG("log_target", log_target));
}

// Tensor functions written in Python.
#define EMBER_PY_TENSOR_FN1(NAME) \
  inline Tensor NAME(const Tensor& self) { return ember::extension::call_python<Tensor>("ember", #NAME, self); }
EMBER_PY_TENSOR_FN1(det)
EMBER_PY_TENSOR_FN1(logdet)
EMBER_PY_TENSOR_FN1(inverse)
EMBER_PY_TENSOR_FN1(matrix_exp)
EMBER_PY_TENSOR_FN1(atleast_1d)
EMBER_PY_TENSOR_FN1(atleast_2d)
EMBER_PY_TENSOR_FN1(atleast_3d)
#undef EMBER_PY_TENSOR_FN1

inline Tensor kron(const Tensor& self, const Tensor& other) {
  return ember::extension::call_python<Tensor>("ember", "kron", self, other);
}
inline Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim = std::nullopt) {
  return ember::extension::call_python<Tensor>("ember", "cross", self, other, EMBER_PY_ARG("dim", dim));
}
inline Tensor diff(const Tensor& self, int64_t n = 1, int64_t dim = -1,
                   const std::optional<Tensor>& prepend = std::nullopt,
                   const std::optional<Tensor>& append = std::nullopt) {
  return ember::extension::call_python<Tensor>("ember", "diff", self, n, dim, prepend, append);
}
inline Tensor matrix_power(const Tensor& self, int64_t n) {
  return ember::extension::call_python<Tensor>("ember", "matrix_power", self, n);
}
inline Tensor pinverse(const Tensor& self, double rcond = 1e-15) {
  return ember::extension::call_python<Tensor>("ember", "pinverse", self, rcond);
}
inline Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2,
                    std::optional<int64_t> compute_mode = std::nullopt) {
  static const char* modes[] = {"use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                                "donot_use_mm_for_euclid_dist"};
  const int64_t mode = compute_mode.value_or(0);
  EMBER_CHECK(mode >= 0 && mode <= 2, "possible modes: 0, 1, 2, but was: ", mode);
  return ember::extension::call_python<Tensor>("ember", "cdist", x1, x2, p, modes[mode]);
}
inline Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other) {
  return ember::extension::call_python<Tensor>("ember", "tensordot", self, other,
                                               std::make_tuple(dims_self.vec(), dims_other.vec()));
}
inline Tensor block_diag(const std::vector<Tensor>& tensors) {
  pybind11::gil_scoped_acquire gil;
  return pybind11::module_::import("ember").attr("block_diag")(*pybind11::cast(tensors)).cast<Tensor>();
}
inline std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing = "ij") {
  pybind11::gil_scoped_acquire gil;
  return pybind11::module_::import("ember")
      .attr("meshgrid")(*pybind11::cast(tensors), EMBER_PY_ARG("indexing", std::string(indexing)))
      .cast<std::vector<Tensor>>();
}
inline std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors) {
  pybind11::gil_scoped_acquire gil;
  return pybind11::module_::import("ember")
      .attr("broadcast_tensors")(*pybind11::cast(tensors))
      .cast<std::vector<Tensor>>();
}
inline std::tuple<Tensor, Tensor> slogdet(const Tensor& self) {
  return ember::extension::call_python<std::tuple<Tensor, Tensor>>("ember", "slogdet", self);
}
inline std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& self, bool some = true, bool compute_uv = true) {
  return ember::extension::call_python<std::tuple<Tensor, Tensor, Tensor>>("ember", "svd", self, some, compute_uv);
}
inline std::tuple<Tensor, Tensor> qr(const Tensor& self, bool some = true) {
  return ember::extension::call_python<std::tuple<Tensor, Tensor>>("ember", "qr", self, some);
}
inline std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim = -1, bool keepdim = false) {
  return ember::extension::call_python<std::tuple<Tensor, Tensor>>("ember", "mode", self, dim, keepdim);
}
inline std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) {
  return ember::extension::call_python<std::tuple<Tensor, Tensor>>("ember", "cummax", self, dim);
}

// torch.linalg functions (at::linalg_*).
inline Tensor linalg_inv(const Tensor& A) {
  return ember::extension::call_python<Tensor>(ember::extension::kLinalg, "inv", A);
}
inline Tensor linalg_det(const Tensor& A) {
  return ember::extension::call_python<Tensor>(ember::extension::kLinalg, "det", A);
}
inline Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left = true) {
  return ember::extension::call_python<Tensor>(ember::extension::kLinalg, "solve", A, B, EMBER_PY_ARG("left", left));
}
inline Tensor linalg_cholesky(const Tensor& A, bool upper = false) {
  return ember::extension::call_python<Tensor>(ember::extension::kLinalg, "cholesky", A, EMBER_PY_ARG("upper", upper));
}
inline Tensor linalg_pinv(const Tensor& A) {
  return ember::extension::call_python<Tensor>(ember::extension::kLinalg, "pinv", A);
}
inline std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, std::string_view mode = "reduced") {
  return ember::extension::call_python<std::tuple<Tensor, Tensor>>(ember::extension::kLinalg, "qr", A,
                                                                   std::string(mode));
}
inline std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A, std::string_view uplo = "L") {
  return ember::extension::call_python<std::tuple<Tensor, Tensor>>(ember::extension::kLinalg, "eigh", A,
                                                                   std::string(uplo));
}
inline std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices = true) {
  return ember::extension::call_python<std::tuple<Tensor, Tensor, Tensor>>(ember::extension::kLinalg, "svd", A,
                                                                           full_matrices);
}
inline Tensor linalg_norm(const Tensor& A, const std::optional<double>& ord = std::nullopt,
                          OptionalIntArrayRef dim = std::nullopt, bool keepdim = false) {
  const std::optional<std::vector<int64_t>>& dims = dim;  // pybind11 converts the base type
  return ember::extension::call_python<Tensor>(ember::extension::kLinalg, "norm", A, ord, dims, keepdim);
}

#undef EMBER_PY_ARG

}  // namespace at
