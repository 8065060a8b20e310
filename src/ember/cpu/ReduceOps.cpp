// CPU reductions: the reduced dims are moved innermost and summed row by row.
#include <algorithm>

#include "ember/cpu/Stubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

namespace {

ScalarType sum_result_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral_type(self.dtype(), /*include_bool=*/true) ? ScalarType::Long : self.dtype();
}

// Marks reduced dims; None or an empty list means all dims.
std::vector<bool> reduced_mask(const Tensor& self, const std::optional<std::vector<int64_t>>& dim) {
  int64_t nd = self.dim();
  std::vector<bool> mask(std::max<int64_t>(nd, 1), false);
  if (!dim || dim->empty()) {
    std::fill(mask.begin(), mask.end(), true);
    return mask;
  }
  for (int64_t d : *dim) {
    int64_t w = maybe_wrap_dim(d, nd);
    EMBER_CHECK(!mask[w], "dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  return mask;
}

}  // namespace

Tensor& sum_dim_out(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool keepdim,
                    std::optional<ScalarType> dtype, Tensor& out) {
  ScalarType rtype = sum_result_dtype(self, dtype);
  if (out.defined() && !dtype) rtype = out.dtype();
  std::vector<bool> mask = reduced_mask(self, dim);
  int64_t nd = self.dim();

  DimVector out_shape, kept_dims, red_dims;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (mask[d]) {
      red_dims.push_back(d);
      inner *= self.sizes()[d];
      if (keepdim) out_shape.push_back(1);
    } else {
      kept_dims.push_back(d);
      outer *= self.sizes()[d];
      out_shape.push_back(self.sizes()[d]);
    }
  }

  Tensor result = ember::empty(out_shape, rtype, self.device());
  if (outer > 0) {
    if (inner == 0) {
      result.zero_();
    } else {
      DimVector perm = kept_dims;
      for (int64_t d : red_dims) perm.push_back(d);
      Tensor src = nd == 0 ? self : self.permute(perm);
      src = src.to(rtype).contiguous();
      cpu::sum_rows_stub(src, outer, inner, result);
    }
  }
  if (!out.defined()) {
    out = result;
  } else {
    resize_output(out, out_shape);
    out.copy_(result);
  }
  return out;
}

Tensor& sum_out(const Tensor& self, std::optional<ScalarType> dtype, Tensor& out) {
  return sum_dim_out(self, std::nullopt, false, dtype, out);
}

}  // namespace ember::native
