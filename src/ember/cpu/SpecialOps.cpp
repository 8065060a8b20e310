// Special functions with hand-written native functions (polygamma, signbit,
// mvlgamma), median and nanmedian; the other special functions are generated
// from ops.yaml (`pointwise:`), their loops in cpu/kernels/SpecialKernel.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/Pointwise.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::native {

using math::not_implemented_for;

// ---- unary ---------------------------------------------------------------------------------

Tensor& polygamma_out(int64_t n, const Tensor& self, Tensor& out) {
  EMBER_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  // As PyTorch's kernel, an n past 1 is taken as a 32-bit int: a larger n
  // wraps; a wrapped negative one gives NaN (zeta of an order below 1), a
  // wrapped 0 gives -zeta(1, x) = -inf.
  const auto n32 = static_cast<int32_t>(n);
  const bool wraps_to_constant = n > 1 && n32 <= 0;
  auto it = TensorIterator::unary_float_op(out, self);
  run_pointwise(polygamma_stub, self.device().type, "polygamma", it, static_cast<int64_t>(wraps_to_constant ? 0 : n32));
  if (wraps_to_constant) {
    out.fill_(n32 < 0 ? std::numeric_limits<double>::quiet_NaN() : -std::numeric_limits<double>::infinity());
  }
  return out;
}

Tensor& polygamma_cpu_(Tensor& self, int64_t n) {
  polygamma_out(n, self, self);
  return self;
}

Tensor& signbit_out(const Tensor& self, Tensor& out) {
  if (self.is_complex()) throw NotImplementedError("signbit is not implemented for complex tensors.");
  EMBER_CHECK(!out.defined() || out.dtype() == ScalarType::Bool, "signbit does not support non-boolean outputs.");
  auto it = TensorIterator::unary_bool_op(out, self);
  run_pointwise(signbit_stub, self.device().type, "signbit", it);
  return out;
}

// mvlgamma(x, p) = p(p-1)/4 log(pi) + sum_{j<p} lgamma(x - j/2), the terms
// added from the largest offset j = p-1 down to j = 0 (in float for 16-bit
// types, rounded once, as a sum over them).
Tensor mvlgamma(const Tensor& self, int64_t p) {
  // PyTorch's meta function (its reference implementation) lets bool through.
  EMBER_CHECK(self.is_meta() || self.dtype() != ScalarType::Bool, "The input tensor may not be a boolean tensor.");
  EMBER_CHECK(p >= 1, "p has to be greater than or equal to 1");
  // PyTorch's offsets are an arange of the input's dtype, which has no complex loops.
  if (self.is_complex()) {
    throw NotImplementedError(
        str_cat("\"arange_cpu\" not implemented for '", dtype_message_name(self.scalar_type()), "'"));
  }
  const ScalarType t = is_floating_type(self.dtype()) ? self.dtype() : get_default_dtype();
  const ScalarType acc = (t == ScalarType::Half || t == ScalarType::BFloat16) ? ScalarType::Float : t;
  const Tensor x = self.to(t);
  Tensor total;
  if (p > 64) {
    // PyTorch's form, one lgamma over x broadcast against the p offsets: its
    // memory (numel * p) fails as PyTorch's does for a huge p, where a loop
    // over p would run for minutes.
    Tensor offsets = ember::arange(Scalar(-0.5 * static_cast<double>(p - 1)), Scalar(0.5), Scalar(0.5), acc);
    total = ember::lgamma(x.to(acc).unsqueeze(-1) + offsets).sum(std::vector<int64_t>{-1});
  } else {
    auto term = [&](int64_t j) { return ember::lgamma(x - Scalar(0.5 * static_cast<double>(j))).to(acc); };
    total = term(p - 1);
    for (int64_t j = p - 2; j >= 0; --j) total = total + term(j);
  }
  const double c = static_cast<double>(p) * static_cast<double>(p - 1) * std::log(3.14159265358979323846) * 0.25;
  return total.to(t).add(wrapped_scalar(Scalar(c)));
}

Tensor& mvlgamma_out(const Tensor& self, int64_t p, Tensor& out) {
  Tensor r = native::mvlgamma(self, p);
  // PyTorch's message names the input's dtype, then the result's.
  EMBER_CHECK(can_cast(r.scalar_type(), out.scalar_type()), "mvlgamma: result type ", dtype_message_name(self.dtype()),
              " can't be cast to the desired output type ", dtype_message_name(r.dtype()));
  resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor& mvlgamma_(Tensor& self, int64_t p) { return native::mvlgamma_out(self, p, self); }

// ---- median, nanmedian -----------------------------------------------------------------------
// Note [Median selection]
// The median is the lower one: element (n - 1) / 2 of the sorted values,
// n counting the non-NaN values for nanmedian. median returns NaN (and the
// first NaN's index) when a row has one. With a dim, the selection is
// std::nth_element over the row's indices ordered by (value, index) with NaN
// last, the order PyTorch's CPU kernel uses, so ties pick the same index;
// a row of NaN only gives the index that selection leaves in place.

namespace {

template <typename T>
inline bool is_nan_v(T v) {
  if constexpr (std::is_integral_v<T>) {
    (void)v;
    return false;
  } else {
    return std::isnan(static_cast<double>(v));
  }
}

Tensor median_all(const Tensor& self, bool ignore_nan) {
  // As PyTorch's meta function: a 0-dim result and no checks (they are the CPU kernel's).
  if (self.is_meta()) return ember::empty({}, self.dtype(), self.device());
  if (self.dtype() == ScalarType::Bool) not_implemented_for("median_cpu", self.dtype());
  const int64_t n = self.numel();
  if (n == 0)
    return ember::full({}, Scalar(std::numeric_limits<double>::quiet_NaN()), ScalarType::Float).to(self.dtype());
  Tensor in = self.contiguous();
  Tensor out = ember::empty({}, self.dtype(), self.device());
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "median_cpu", [&] {
    const scalar_t* p = in.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    const int64_t nans = std::count_if(p, p + n, [](scalar_t v) { return is_nan_v(v); });
    if (!ignore_nan && nans > 0) {
      *o = static_cast<scalar_t>(std::numeric_limits<float>::quiet_NaN());
      return;
    }
    std::vector<scalar_t> v(p, p + n);
    const auto mid = v.begin() + (n - nans - 1) / 2;
    std::nth_element(v.begin(), mid, v.end(),
                     [](scalar_t a, scalar_t b) { return a < b || (is_nan_v(b) && !is_nan_v(a)); });
    *o = *mid;
  });
  return out;
}

std::tuple<Tensor, Tensor> median_dim_impl(const Tensor& self, int64_t dim, bool keepdim, bool ignore_nan) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  if (!self.is_meta()) {  // the CPU kernel's checks; PyTorch's meta function makes none
    if (self.dim() > 0) {
      EMBER_CHECK_TYPE(IndexError, self.sizes()[d] != 0, "median(): Expected reduction dim ", d,
                       " to have non-zero size.");
    }
    if (self.dtype() == ScalarType::Bool) not_implemented_for("median_out", self.dtype());
  }
  // Rows along the last dim, contiguous.
  Tensor in = self.dim() > 0 ? self.movedim(d, -1).contiguous() : self.reshape({1});
  const int64_t size = in.sizes()[in.dim() - 1];
  const DimVector row_shape(IntArrayRef(in.sizes().data(), static_cast<size_t>(in.dim() - 1)));
  Tensor values = ember::empty(row_shape, self.dtype(), self.device());
  Tensor indices = ember::empty(row_shape, ScalarType::Long, self.device());
  const int64_t rows = values.numel();
  if (rows > 0 && !values.is_meta()) {
    EMBER_DISPATCH_ALL_TYPES(self.dtype(), "median_out", [&] {
      const scalar_t* src = in.data_ptr<scalar_t>();
      scalar_t* vp = values.data_ptr<scalar_t>();
      int64_t* ip = indices.data_ptr<int64_t>();
      parallel_for(0, rows, std::max<int64_t>(1, 32768 / size), [&](int64_t r0, int64_t r1) {
        std::vector<int64_t> idx(static_cast<size_t>(size));
        for (int64_t r = r0; r < r1; ++r) {
          const scalar_t* row = src + r * size;
          if (!ignore_nan) {
            const scalar_t* nanp = std::find_if(row, row + size, [](scalar_t v) { return is_nan_v(v); });
            if (nanp != row + size) {
              vp[r] = *nanp;
              ip[r] = nanp - row;
              continue;
            }
          }
          std::iota(idx.begin(), idx.end(), int64_t(0));
          int64_t k = (size - 1) / 2;
          if (ignore_nan) {
            const int64_t nans = std::count_if(row, row + size, [](scalar_t v) { return is_nan_v(v); });
            k = (size - nans - 1) / 2;
          }
          std::nth_element(idx.begin(), idx.begin() + k, idx.end(), [row](int64_t i, int64_t j) {
            return row[i] < row[j] || (row[i] == row[j] && i < j) || (is_nan_v(row[j]) && !is_nan_v(row[i]));
          });
          vp[r] = row[idx[k]];
          ip[r] = idx[k];
        }
      });
    });
  }
  if (self.dim() > 0 && keepdim) {
    values = values.unsqueeze(d);
    indices = indices.unsqueeze(d);
  }
  return {values, indices};
}

}  // namespace

Tensor median_cpu(const Tensor& self) { return median_all(self, false); }
Tensor nanmedian_cpu(const Tensor& self) { return median_all(self, true); }

std::tuple<Tensor, Tensor> median_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  return median_dim_impl(self, dim, keepdim, false);
}
std::tuple<Tensor, Tensor> nanmedian_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  return median_dim_impl(self, dim, keepdim, true);
}

}  // namespace ember::native
