// Device-generic operators built from other operators, each recorded as one
// autograd node as PyTorch records it: rsub, diag_embed, diagonal_copy,
// linalg_cross, pixel_shuffle and pixel_unshuffle.
#include <cmath>
#include <cstdlib>

#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha) { return ember::sub(other, self, alpha); }

Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return ember::sub(wrapped_scalar(other), self, alpha);
}

Tensor add_scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return ember::add(self, wrapped_scalar(other), alpha);
}
Tensor sub_scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return ember::sub(self, wrapped_scalar(other), alpha);
}
Tensor mul_scalar(const Tensor& self, const Scalar& other) { return ember::mul(self, wrapped_scalar(other)); }
Tensor div_scalar(const Tensor& self, const Scalar& other) { return ember::div(self, wrapped_scalar(other)); }

Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t nd = self.dim() + 1;
  const int64_t d1 = maybe_wrap_dim(dim1, nd), d2 = maybe_wrap_dim(dim2, nd);
  EMBER_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t n = (self.dim() == 0 ? 1 : self.sizes()[self.dim() - 1]) + std::abs(offset);
  // The batch dims in order, the two new ones of size n at d1 and d2.
  DimVector sizes;
  int64_t next = 0;
  for (int64_t d = 0; d < nd; ++d) {
    sizes.push_back(d == d1 || d == d2 ? n : self.sizes()[next++]);
  }
  Tensor result = ember::zeros(sizes, self.dtype(), self.device());
  result.diagonal(offset, d1, d2).copy_(self);
  return result;
}

Tensor diagonal_copy(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  return self.diagonal(offset, dim1, dim2).clone(MemoryFormat::Contiguous);
}

namespace {
// PyTorch's float and double kernel, as its compiler contracts a1 * b2 - a2 * b1:
// fma(a1, b2, -(a2 * b1)). The result is contiguous in the broadcast shape.
template <typename T>
Tensor cross_fused(const Tensor& a, const Tensor& b, int64_t dim) {
  const Tensor x = a.movedim(dim, -1).contiguous(), y = b.movedim(dim, -1).contiguous();
  Tensor out = ember::empty(x.sizes(), x.dtype());
  const T* p = x.data_ptr<T>();
  const T* q = y.data_ptr<T>();
  T* o = out.data_ptr<T>();
  for (int64_t k = 0; k < x.numel(); k += 3) {
    o[k] = std::fma(p[k + 1], q[k + 2], -(p[k + 2] * q[k + 1]));
    o[k + 1] = std::fma(p[k + 2], q[k], -(p[k] * q[k + 2]));
    o[k + 2] = std::fma(p[k], q[k + 1], -(p[k + 1] * q[k]));
  }
  return out.movedim(-1, dim).contiguous();
}
}  // namespace

Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim) {
  const DimVector shape = infer_broadcast_size(self.sizes(), other.sizes());
  const Tensor a = self.expand(shape), b = other.expand(shape);
  const ScalarType t = self.dtype();
  if (self.is_cpu() && other.is_cpu() && other.dtype() == t && !self.has_math_bits() && !other.has_math_bits() &&
      a.sizes()[maybe_wrap_dim(dim, a.dim())] == 3) {
    if (t == ScalarType::Float) return cross_fused<float>(a, b, dim);
    if (t == ScalarType::Double) return cross_fused<double>(a, b, dim);
  }
  auto at = [&](const Tensor& t, int64_t i) { return t.narrow(dim, i, 1); };
  return ember::cat({at(a, 1) * at(b, 2) - at(a, 2) * at(b, 1), at(a, 2) * at(b, 0) - at(a, 0) * at(b, 2),
                     at(a, 0) * at(b, 1) - at(a, 1) * at(b, 0)},
                    dim);
}

namespace {
// The sizes of t without its last three dims, then `tail`.
DimVector batch_then(const Tensor& t, std::initializer_list<int64_t> tail) {
  DimVector out;
  for (int64_t d = 0; d < t.dim() - 3; ++d) out.push_back(t.sizes()[d]);
  for (int64_t v : tail) out.push_back(v);
  return out;
}

// The permutation that keeps the batch dims and orders the last `tail` as given.
std::vector<int64_t> batch_then_perm(int64_t nb, std::initializer_list<int64_t> tail) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t v : tail) perm.push_back(nb + v);
  return perm;
}
}  // namespace

Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor) {
  EMBER_CHECK(self.dim() >= 3, "pixel_shuffle expects input to have at least 3 dimensions, but got input with ",
              self.dim(), " dimension(s)");
  const int64_t r = upscale_factor;
  EMBER_CHECK(r > 0, "pixel_shuffle expects a positive upscale_factor, but got ", r);
  const int64_t nd = self.dim(), c = self.sizes()[nd - 3], h = self.sizes()[nd - 2], w = self.sizes()[nd - 1];
  EMBER_CHECK(c % (r * r) == 0,
              "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
              "but input.size(-3)=",
              c, " is not divisible by ", r * r);
  const int64_t oc = c / (r * r), nb = nd - 3;
  return self.reshape(batch_then(self, {oc, r, r, h, w}))
      .permute(batch_then_perm(nb, {0, 3, 1, 4, 2}))
      .reshape(batch_then(self, {oc, h * r, w * r}));
}

Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor) {
  EMBER_CHECK(self.dim() >= 3, "pixel_unshuffle expects input to have at least 3 dimensions, but got input with ",
              self.dim(), " dimension(s)");
  const int64_t r = downscale_factor;
  EMBER_CHECK(r > 0, "pixel_unshuffle expects a positive downscale_factor, but got ", r);
  const int64_t nd = self.dim(), c = self.sizes()[nd - 3], h = self.sizes()[nd - 2], w = self.sizes()[nd - 1];
  EMBER_CHECK(h % r == 0, "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=", h,
              " is not divisible by ", r);
  EMBER_CHECK(w % r == 0, "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=", w,
              " is not divisible by ", r);
  if (self.numel() == 0) return self.clone();  // PyTorch: an empty input comes back as a copy, its shape unchanged
  const int64_t nb = nd - 3;
  return self.reshape(batch_then(self, {c, h / r, r, w / r, r}))
      .permute(batch_then_perm(nb, {0, 2, 4, 1, 3}))
      .reshape(batch_then(self, {c * r * r, h / r, w / r}));
}

}  // namespace ember::native
