// CPU tril/triu, trace and diag.
#include <algorithm>
#include <cstdlib>

#include "ember/cpu/OpMessages.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/LimitedTypes.h"

namespace ember::native {

// ---- tril / triu -------------------------------------------------------------------------------

namespace {
Tensor& tri_impl(const char* name, const Tensor& self, int64_t diagonal, bool lower, Tensor& out) {
  EMBER_CHECK(self.dim() >= 2, name, ": input tensor must have at least 2 dimensions");
  if (!out.defined()) {
    out = self.clone(MemoryFormat::Contiguous);
  } else if (!out.is_same(self)) {
    check_out_dtype(out, self.dtype());
    EMBER_CHECK(out.device() == self.device(), "Attempting to copy from device ", self.device().str(), " to device ",
                out.device().str(), ", but cross-device copies are not allowed!");
    resize_output(out, self.sizes());
    out.copy_(self);
  }
  if (out.is_meta()) return out;  // no values to clear (Note [Meta tensors])
  const int64_t nd = out.dim(), rows = out.sizes()[nd - 2], cols = out.sizes()[nd - 1];
  const int64_t rs = out.strides()[nd - 2], cs = out.strides()[nd - 1];
  const int64_t batch = rows * cols == 0 ? 0 : out.numel() / (rows * cols);
  // Offsets beyond the matrix act as the matrix's edge; clamping first keeps
  // i + diagonal from overflowing (diagonal may be near INT64_MAX).
  const int64_t diag = std::clamp<int64_t>(diagonal, -rows - 1, cols + 1);
  // complex32's zero is all zero bits: its elements are cleared as words.
  const Tensor target = out.dtype() == ScalarType::ComplexHalf ? limited::as_words(out) : out;
  EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX(target.dtype(), name, [&] {
    scalar_t* base = static_cast<scalar_t*>(target.data_ptr());
    for (int64_t b = 0; b < batch; ++b) {
      int64_t off = 0, rem = b;
      for (int64_t d = nd - 3; d >= 0; --d) {
        off += (rem % out.sizes()[d]) * out.strides()[d];
        rem /= out.sizes()[d];
      }
      scalar_t* m = base + off;
      for (int64_t i = 0; i < rows; ++i) {
        // lower keeps j <= i + diagonal; upper keeps j >= i + diagonal.
        const int64_t lo = lower ? std::max<int64_t>(0, i + diag + 1) : 0;
        const int64_t hi = lower ? cols : std::min<int64_t>(cols, std::max<int64_t>(0, i + diag));
        for (int64_t j = lo; j < hi; ++j) m[i * rs + j * cs] = scalar_t(0);
      }
    }
  });
  return out;
}
}  // namespace

Tensor& tril_out(const Tensor& self, int64_t diagonal, Tensor& out) {
  return tri_impl("tril", self, diagonal, true, out);
}
Tensor& triu_out(const Tensor& self, int64_t diagonal, Tensor& out) {
  return tri_impl("triu", self, diagonal, false, out);
}

// ---- trace, diag ----------------------------------------------------------------------------------

Tensor trace(const Tensor& self) {
  // PyTorch's dtype dispatch comes before its matrix check.
  if (self.dtype() == ScalarType::Bool && !self.is_meta())
    throw NotImplementedError("\"trace\" not implemented for 'Bool'");
  EMBER_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return ember::sum(self.diagonal(0, 0, 1), std::optional<ScalarType>{});
}

Tensor diag(const Tensor& self, int64_t diagonal) {
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, "diag(): Supports 1D or 2D tensors. Got ", self.dim(), "D");
  // As PyTorch's: recorded as DiagonalBackward0_copy or DiagEmbedBackward0.
  if (self.dim() == 2) return ember::diagonal_copy(self, diagonal, 0, 1);
  return ember::diag_embed(self, diagonal, 0, 1);
}

}  // namespace ember::native
