// CPU implementations of the special functions (lgamma, digamma, polygamma,
// i0, sinc, logit, frac, signbit, hypot, copysign, xlogy, ...) and of median
// and nanmedian; loops in cpu/kernels/SpecialKernel.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "ember/cpu/MathHelpers.h"
#include "ember/cpu/SpecialStubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::cpu {

EMBER_DEFINE_DISPATCH(SpecialUnaryFn, special_unary_stub);
EMBER_DEFINE_DISPATCH(SpecialBinaryFn, special_binary_stub);

}  // namespace ember::cpu

namespace ember::native {

namespace {

using cpu::SpecialBinaryOp;
using cpu::SpecialUnaryOp;
using math::not_implemented_for;

Tensor& run_unary(TensorIterator& it, SpecialUnaryOp op, Tensor& out, double param = 0) {
  cpu::special_unary_stub(it, op, param);
  it.finish();
  return out;
}

// Integral and bool inputs compute in the default float dtype.
Tensor& float_unary(const Tensor& self, Tensor& out, SpecialUnaryOp op, double param = 0) {
  auto it = TensorIterator::unary_float_op(out, self);
  return run_unary(it, op, out, param);
}

Tensor& run_binary(TensorIterator& it, SpecialBinaryOp op, Tensor& out) {
  cpu::special_binary_stub(it, op);
  it.finish();
  return out;
}

Tensor& float_binary(const Tensor& a, const Tensor& b, Tensor& out, SpecialBinaryOp op) {
  auto it = TensorIterator::binary_float_op(out, a, b);
  return run_binary(it, op, out);
}

Tensor wrap(const Scalar& s) { return wrapped_scalar(s); }

}  // namespace

// ---- unary ---------------------------------------------------------------------------------

Tensor& lgamma_out(const Tensor& self, Tensor& out) { return float_unary(self, out, SpecialUnaryOp::Lgamma); }
Tensor& digamma_out(const Tensor& self, Tensor& out) { return float_unary(self, out, SpecialUnaryOp::Digamma); }
Tensor& i0_out(const Tensor& self, Tensor& out) { return float_unary(self, out, SpecialUnaryOp::I0); }
Tensor& special_i1_out(const Tensor& self, Tensor& out) { return float_unary(self, out, SpecialUnaryOp::I1); }
Tensor& sinc_out(const Tensor& self, Tensor& out) { return float_unary(self, out, SpecialUnaryOp::Sinc); }

Tensor& polygamma_out(int64_t n, const Tensor& self, Tensor& out) {
  EMBER_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  if (n == 0) return float_unary(self, out, SpecialUnaryOp::Digamma);
  if (n == 1) return float_unary(self, out, SpecialUnaryOp::Trigamma);
  return float_unary(self, out, SpecialUnaryOp::Polygamma, static_cast<double>(n));
}

Tensor& polygamma_cpu_(Tensor& self, int64_t n) {
  polygamma_out(n, self, self);
  return self;
}

Tensor& logit_out(const Tensor& self, std::optional<double> eps, Tensor& out) {
  return float_unary(self, out, SpecialUnaryOp::Logit, eps ? *eps : -1.0);
}

Tensor& frac_out(const Tensor& self, Tensor& out) {
  auto it = TensorIterator::unary_op(out, self);
  if (!is_floating_type(it.common_dtype())) not_implemented_for("frac_cpu", it.common_dtype());
  return run_unary(it, SpecialUnaryOp::Frac, out);
}

Tensor& signbit_out(const Tensor& self, Tensor& out) {
  EMBER_CHECK(!out.defined() || out.dtype() == ScalarType::Bool, "signbit does not support non-boolean outputs.");
  TensorIterator::Config c;
  c.promote_inputs = false;
  c.out_dtype = ScalarType::Bool;
  auto it = TensorIterator::op(out, {self}, c);
  return run_unary(it, SpecialUnaryOp::Signbit, out);
}

// mvlgamma(x, p) = p(p-1)/4 log(pi) + sum_{j<p} lgamma(x - j/2), the terms
// added from the largest offset j = p-1 down to j = 0 (in float for 16-bit
// types, rounded once, as a sum over them).
Tensor mvlgamma(const Tensor& self, int64_t p) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "The input tensor may not be a boolean tensor.");
  EMBER_CHECK(p >= 1, "p has to be greater than or equal to 1");
  const ScalarType t = is_floating_type(self.dtype()) ? self.dtype() : get_default_dtype();
  const ScalarType acc = (t == ScalarType::Half || t == ScalarType::BFloat16) ? ScalarType::Float : t;
  const Tensor x = self.to(t);
  auto term = [&](int64_t j) { return ember::lgamma(x - Scalar(0.5 * static_cast<double>(j))).to(acc); };
  Tensor total = term(p - 1);
  for (int64_t j = p - 2; j >= 0; --j) total = total + term(j);
  const double c = static_cast<double>(p * (p - 1)) * std::log(3.14159265358979323846) * 0.25;
  return total.to(t).add(wrapped_scalar(Scalar(c)));
}

Tensor& mvlgamma_out(const Tensor& self, int64_t p, Tensor& out) {
  Tensor r = native::mvlgamma(self, p);
  // PyTorch's message names the input's dtype, then the result's.
  EMBER_CHECK(out.dtype() == r.dtype() || is_floating_type(out.dtype()), "mvlgamma: result type ",
              dtype_message_name(self.dtype()), " can't be cast to the desired output type ",
              dtype_message_name(r.dtype()));
  resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor& mvlgamma_(Tensor& self, int64_t p) { return native::mvlgamma_out(self, p, self); }

// deg2rad / rad2deg: a multiply by pi/180 (180/pi) in the computation type
// (float for float16/bfloat16), as PyTorch's multiply by a Python number.
namespace {
constexpr double kPiOver180 = 0.017453292519943295769236907684886;
constexpr double k180OverPi = 57.295779513082320876798154814105;
}  // namespace

Tensor& deg2rad_out(const Tensor& self, Tensor& out) { return float_unary(self, out, SpecialUnaryOp::Scale, kPiOver180); }
Tensor& rad2deg_out(const Tensor& self, Tensor& out) { return float_unary(self, out, SpecialUnaryOp::Scale, k180OverPi); }

// ---- binary ----------------------------------------------------------------------------------

Tensor& hypot_out(const Tensor& self, const Tensor& other, Tensor& out) {
  auto it = TensorIterator::binary_op(out, self, other);
  if (!is_floating_type(it.common_dtype())) not_implemented_for("hypot_cpu", it.common_dtype());
  return run_binary(it, SpecialBinaryOp::Hypot, out);
}

Tensor& copysign_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return float_binary(self, other, out, SpecialBinaryOp::Copysign);
}
Tensor& copysign_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return float_binary(self, wrap(other), out, SpecialBinaryOp::Copysign);
}

Tensor& xlogy_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return float_binary(self, other, out, SpecialBinaryOp::Xlogy);
}
Tensor& xlogy_scalar_other_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return float_binary(self, wrap(other), out, SpecialBinaryOp::Xlogy);
}
Tensor& xlogy_scalar_self_out(const Scalar& self, const Tensor& other, Tensor& out) {
  return float_binary(wrap(self), other, out, SpecialBinaryOp::Xlogy);
}

Tensor& special_xlog1py_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return float_binary(self, other, out, SpecialBinaryOp::Xlog1py);
}
Tensor& special_xlog1py_scalar_other_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return float_binary(self, wrap(other), out, SpecialBinaryOp::Xlog1py);
}
Tensor& special_xlog1py_scalar_self_out(const Scalar& self, const Tensor& other, Tensor& out) {
  return float_binary(wrap(self), other, out, SpecialBinaryOp::Xlog1py);
}

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
  if (self.dtype() == ScalarType::Bool) not_implemented_for("median_cpu", self.dtype());
  const int64_t n = self.numel();
  if (n == 0) return ember::full({}, Scalar(std::numeric_limits<double>::quiet_NaN()), ScalarType::Float).to(self.dtype());
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
    std::nth_element(v.begin(), mid, v.end(), [](scalar_t a, scalar_t b) {
      return a < b || (is_nan_v(b) && !is_nan_v(a));
    });
    *o = *mid;
  });
  return out;
}

std::tuple<Tensor, Tensor> median_dim_impl(const Tensor& self, int64_t dim, bool keepdim, bool ignore_nan) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  if (self.dim() > 0) {
    EMBER_CHECK_TYPE(IndexError, self.sizes()[d] != 0, "median(): Expected reduction dim ", d,
                     " to have non-zero size.");
  }
  if (self.dtype() == ScalarType::Bool) not_implemented_for("median_out", self.dtype());
  // Rows along the last dim, contiguous.
  Tensor in = self.dim() > 0 ? self.movedim(d, -1).contiguous() : self.reshape({1});
  const int64_t size = in.sizes()[in.dim() - 1];
  const DimVector row_shape(IntArrayRef(in.sizes().data(), static_cast<size_t>(in.dim() - 1)));
  Tensor values = ember::empty(row_shape, self.dtype(), self.device());
  Tensor indices = ember::empty(row_shape, ScalarType::Long, self.device());
  const int64_t rows = values.numel();
  if (rows > 0) {
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
