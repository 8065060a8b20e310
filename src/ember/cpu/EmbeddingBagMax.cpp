// embedding_bag's max mode on the CPU: each bag's element-wise maximum of its
// rows and, per element, the row that gave it; the backward sends each
// gradient element to that row. The first maximum wins a tie and a bag with no
// rows gives zeros (index -1), as in PyTorch's kernel.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

namespace {

template <typename T>
using bag_compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

}  // namespace

std::tuple<Tensor, Tensor> embedding_bag_max_cpu(const Tensor& weight, const Tensor& indices, const Tensor& bag,
                                                 int64_t bags) {
  EMBER_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor, but got Tensor of dimension ", weight.dim());
  EMBER_CHECK(indices.numel() == bag.numel(), "embedding_bag: indices and bag numbers differ in length");
  const int64_t dim = weight.size(1);
  Tensor out = ember::zeros({bags, dim}, weight.scalar_type());
  Tensor arg = ember::full({bags, dim}, Scalar(int64_t(-1)), ScalarType::Long);
  const Tensor w = weight.contiguous();
  const Tensor idx = indices.to(ScalarType::Long).contiguous();
  const Tensor bg = bag.to(ScalarType::Long).contiguous();
  const int64_t n = idx.numel(), rows = w.size(0);
  const int64_t* ip = static_cast<const int64_t*>(idx.data_ptr());
  const int64_t* bp = static_cast<const int64_t*>(bg.data_ptr());
  for (int64_t i = 0; i < n; ++i) {
    EMBER_CHECK(ip[i] >= 0 && ip[i] < rows, "embedding_bag: index ", ip[i], " out of range for ", rows, " rows");
    EMBER_CHECK(bp[i] >= 0 && bp[i] < bags, "embedding_bag: bag ", bp[i], " out of range for ", bags, " bags");
  }
  dispatch_floating_types(w.scalar_type(), "embedding_bag_cpu_max_out", [&](auto zero) {
    using T = decltype(zero);
    using C = bag_compute_t<T>;
    const T* wp = static_cast<const T*>(w.data_ptr());
    T* op = static_cast<T*>(out.data_ptr());
    int64_t* ap = static_cast<int64_t*>(arg.data_ptr());
    std::vector<char> empty(bags, 1);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t b = bp[i], r = ip[i];
      const T* src = wp + r * dim;
      T* dst = op + b * dim;
      int64_t* at = ap + b * dim;
      if (empty[b]) {
        for (int64_t d = 0; d < dim; ++d) {
          dst[d] = src[d];
          at[d] = r;
        }
        empty[b] = 0;
        continue;
      }
      for (int64_t d = 0; d < dim; ++d) {
        if (static_cast<C>(src[d]) > static_cast<C>(dst[d])) {
          dst[d] = src[d];
          at[d] = r;
        }
      }
    }
  });
  return {out, arg};
}

Tensor embedding_bag_max_backward_cpu(const Tensor& grad, const Tensor& max_indices, const Tensor& weight) {
  Tensor gw = ember::zeros(weight.sizes(), weight.scalar_type());
  const Tensor g = grad.to(weight.scalar_type()).contiguous();
  const Tensor at = max_indices.contiguous();
  const int64_t dim = weight.size(1), bags = at.numel() / std::max<int64_t>(dim, 1);
  const int64_t* ap = static_cast<const int64_t*>(at.data_ptr());
  dispatch_floating_types(weight.scalar_type(), "embedding_bag_cpu_max_out", [&](auto zero) {
    using T = decltype(zero);
    using C = bag_compute_t<T>;
    const T* gp = static_cast<const T*>(g.data_ptr());
    T* wp = static_cast<T*>(gw.data_ptr());
    for (int64_t b = 0; b < bags; ++b) {
      for (int64_t d = 0; d < dim; ++d) {
        const int64_t r = ap[b * dim + d];
        if (r < 0) continue;
        T& dst = wp[r * dim + d];
        dst = static_cast<T>(static_cast<C>(dst) + static_cast<C>(gp[b * dim + d]));
      }
    }
  });
  return gw;
}

}  // namespace ember::native
