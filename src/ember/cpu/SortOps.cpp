// CPU sort, argsort, msort, topk, kthvalue and mode. The inner loops live in
// cpu/kernels/SortKernel.cpp.
#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/cpu/SortStubs.h"
#include "ember/ops/Dispatch.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(SortFn, sort_stub);
EMBER_DEFINE_DISPATCH(TopkFn, topk_stub);
}  // namespace ember::cpu

namespace ember::native {

namespace {

// A 0-dim tensor as a 1-element 1-d view (same storage).
Tensor as_1d(const Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; }

// Calls f(offsets) for every position of `shape` with dimension `dim` left
// out; offsets[k] is the element offset of operand k (strides[k]).
template <size_t N, typename F>
void for_each_line(IntArrayRef shape, int64_t dim, const std::array<IntArrayRef, N>& strides, const F& f) {
  DimVector sz;
  std::array<DimVector, N> st;
  int64_t total = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d == dim) continue;
    sz.push_back(shape[d]);
    total *= shape[d];
    for (size_t k = 0; k < N; ++k) st[k].push_back(strides[k][d]);
  }
  if (total == 0) return;
  const int64_t nd = static_cast<int64_t>(sz.size());
  DimVector ctr(nd, 0);
  std::array<int64_t, N> off{};
  for (int64_t i = 0; i < total; ++i) {
    f(off);
    for (int64_t j = nd - 1; j >= 0; --j) {
      if (++ctr[j] < sz[j]) {
        for (size_t k = 0; k < N; ++k) off[k] += st[k][j];
        break;
      }
      for (size_t k = 0; k < N; ++k) off[k] -= st[k][j] * (sz[j] - 1);
      ctr[j] = 0;
    }
  }
}

}  // namespace

// ---- sort, topk, kthvalue ----------------------------------------------------------------------

namespace {
// Per-line pointers of a sort/topk along d: input lines and result lines.
std::vector<cpu::SortLine> sort_lines(const Tensor& in, const Tensor& values, const Tensor& indices, int64_t d) {
  std::vector<cpu::SortLine> lines;
  const size_t isz = in.element_size();
  char* ib = static_cast<char*>(in.data_ptr());
  char* vb = values.defined() ? static_cast<char*>(values.data_ptr()) : nullptr;
  int64_t* xb = static_cast<int64_t*>(indices.data_ptr());
  DimVector zero(in.dim(), 0);
  IntArrayRef vst = values.defined() ? values.strides() : IntArrayRef(zero);
  for_each_line<3>(in.sizes(), d, {in.strides(), vst, indices.strides()}, [&](const std::array<int64_t, 3>& off) {
    lines.push_back({ib + off[0] * isz, in.strides()[d], vb ? vb + off[1] * isz : nullptr,
                     values.defined() ? values.strides()[d] : 0, xb + off[2], indices.strides()[d]});
  });
  return lines;
}
}  // namespace

std::tuple<Tensor, Tensor> sort_stable(const Tensor& self, std::optional<bool> stable, int64_t dim, bool descending) {
  EMBER_CHECK(self.is_meta() || !is_complex_type_any_tier(self.dtype()),
              " Sort does not support complex dtypes on CPU");
  if (is_wide_unsigned_type(self.dtype())) {
    // uint16/32/64 sort as int64 keys; uint64's keys have the sign bit flipped, so
    // that signed order is unsigned order (Note [Limited dtypes]).
    const bool u64 = self.dtype() == ScalarType::UInt64;
    const Scalar flip(std::numeric_limits<int64_t>::min());
    Tensor key = self.to(ScalarType::Long);
    if (u64) key = ember::bitwise_xor(key, flip);
    auto [values, indices] = sort_stable(key, stable, dim, descending);
    if (u64) values = ember::bitwise_xor(values, flip);
    return {values.to(self.dtype()), indices};
  }
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  // PyTorch's layout: self's (Note [Preserved layout]).
  Tensor values = ember::empty_like(self);
  Tensor indices = ember::empty_like(self, ScalarType::Long);
  if (self.numel() == 0 || values.is_meta()) return {values, indices};
  Tensor in = as_1d(self), v = as_1d(values), x = as_1d(indices);
  const int64_t n = in.sizes()[d];
  std::vector<cpu::SortLine> lines = sort_lines(in, v, x, d);
  cpu::sort_stub.get()(self.dtype(), n, static_cast<int64_t>(lines.size()), descending, stable.value_or(false),
                       lines.data());
  return {values, indices};
}

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  return sort_stable(self, false, dim, descending);
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending) {
  return std::get<1>(ember::sort(self, dim, descending));
}

Tensor argsort_stable(const Tensor& self, bool stable, int64_t dim, bool descending) {
  return std::get<1>(ember::sort(self, std::optional<bool>(stable), dim, descending));
}

Tensor msort(const Tensor& self) { return std::get<0>(ember::sort(self, 0, false)); }

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t size = self.dim() > 0 ? self.sizes()[d] : 1;
  EMBER_CHECK(k >= 0 && k <= size, "selected index k out of range");
  // Dtype checks here and below are the CPU kernels'; PyTorch's meta functions accept bool.
  EMBER_CHECK(self.is_meta() || self.dtype() != ScalarType::Bool, "topk does not support bool dtypes on CPU");
  EMBER_CHECK(self.is_meta() || !self.is_complex(), " topk does not support complex dtypes on CPU");
  if (self.dim() == 0) return {self.clone(), ember::zeros({}, ScalarType::Long, self.device())};
  DimVector shape(self.sizes());
  shape[d] = k;
  Tensor values = ember::empty(shape, self.dtype(), self.device());
  Tensor indices = ember::empty(shape, ScalarType::Long, self.device());
  if (values.numel() == 0 || values.is_meta()) return {values, indices};
  Tensor in = as_1d(self), v = as_1d(values), x = as_1d(indices);
  std::vector<cpu::SortLine> lines = sort_lines(in, v, x, d);
  cpu::topk_stub.get()(self.dtype(), size, k, static_cast<int64_t>(lines.size()), largest, sorted, lines.data());
  return {values, indices};
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t size = self.dim() > 0 ? self.sizes()[d] : 1;
  if (self.numel() == 0 && size == 0)
    throw IndexError(str_cat("kthvalue(): Expected reduction dim ", d, " to have non-zero size."));
  EMBER_CHECK(k >= 1 && k <= size, "kthvalue(): selected number k out of range for dimension ", d);
  if ((self.dtype() == ScalarType::Bool || self.is_complex()) && !self.is_meta()) {
    throw NotImplementedError(str_cat("\"kthvalue_cpu\" not implemented for '", dtype_message_name(self.dtype()), "'"));
  }
  if (self.dim() == 0) return {self.clone(), ember::zeros({}, ScalarType::Long, self.device())};
  // Unsorted selection leaves the k-th smallest at position k - 1.
  auto [values, indices] = native::topk(self, k, dim, false, false);
  Tensor v = values.narrow(d, k - 1, 1), x = indices.narrow(d, k - 1, 1);
  if (!keepdim) v = v.squeeze(d), x = x.squeeze(d);
  return {v.contiguous(), x.contiguous()};
}

// Note [mode in PyTorch's order]
// PyTorch's CPU mode copies each slice's (value, index) pairs, sorts them
// with std::sort comparing values alone (so equal values, and NaNs, keep no
// defined order) and takes the value and index of the last pair of the first
// longest run of equal values (NaN != NaN: each NaN is a run of its own).
// Ember runs the same sort on the same pairs.
std::tuple<Tensor, Tensor> mode_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  dispatch::check_cpu_only("aten::mode", self);
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const Tensor lines = self.movedim(d, -1).contiguous();
  const int64_t n = self.dim() > 0 ? self.size(d) : 1;
  EMBER_CHECK(n > 0, "mode(): Expected reduction dim ", d, " to have non-zero size.");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  if (self.dim() > 0) shape.erase(shape.begin() + d);
  Tensor values = ember::empty(shape, self.dtype(), self.device());
  Tensor indices = ember::empty(shape, ScalarType::Long, self.device());
  const int64_t count = n > 0 ? lines.numel() / n : 0;
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "mode_cpu", [&] {
    using T = scalar_t;
    using C = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
    const T* in = lines.data_ptr<T>();
    T* out_values = values.data_ptr<T>();
    int64_t* out_indices = indices.data_ptr<int64_t>();
    std::vector<std::pair<T, int64_t>> pairs(static_cast<size_t>(n));
    for (int64_t line = 0; line < count; ++line) {
      for (int64_t k = 0; k < n; ++k) pairs[k] = {in[line * n + k], k};
      // 16-bit values compare as floats, as c10's operators do; a NaN keeps its bits.
      std::sort(pairs.begin(), pairs.end(),
                [](const auto& a, const auto& b) { return static_cast<C>(a.first) < static_cast<C>(b.first); });
      T mode = T(0);
      int64_t mode_index = 0, run = 0, longest = 0;
      for (int64_t i = 0; i < n; ++i) {
        ++run;
        if (i == n - 1 || static_cast<C>(pairs[i].first) != static_cast<C>(pairs[i + 1].first)) {
          if (run > longest) mode = pairs[i].first, mode_index = pairs[i].second, longest = run;
          run = 0;
        }
      }
      out_values[line] = mode;
      out_indices[line] = mode_index;
    }
  });
  if (keepdim && self.dim() > 0) values = values.unsqueeze(d), indices = indices.unsqueeze(d);
  return {values, indices};
}

}  // namespace ember::native
