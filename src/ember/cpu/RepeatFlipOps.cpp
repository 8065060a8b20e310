// CPU repeat, tile, repeat_interleave, roll and flip (fliplr, flipud).
#include <algorithm>
#include <vector>

#include "ember/cpu/IndexStubs.h"
#include "ember/cpu/OpMessages.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

// ---- repeat, tile, repeat_interleave ------------------------------------------------------------

Tensor repeat(const Tensor& self, IntArrayRef repeats) {
  const int64_t nr = static_cast<int64_t>(repeats.size());
  EMBER_CHECK(nr >= self.dim(),
              "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  DimVector padded(nr - self.dim(), 1);
  for (int64_t s : self.sizes()) padded.push_back(s);
  DimVector target(nr);
  for (int64_t i = 0; i < nr; ++i) target[i] = padded[i] * repeats[i];
  for (int64_t i = 0; i < nr; ++i) {
    EMBER_CHECK(target[i] >= 0, "Trying to create tensor with negative dimension ", target[i], ": ",
                shape_string(target));
  }
  // View self as (1, s0, 1, s1, ...), expand to (r0, s0, r1, s1, ...), copy.
  DimVector inter, expanded;
  for (int64_t i = 0; i < nr; ++i) {
    inter.push_back(1), inter.push_back(padded[i]);
    expanded.push_back(repeats[i]), expanded.push_back(padded[i]);
  }
  Tensor r = ember::empty(target, self.dtype(), self.device());
  if (r.numel() == 0) return r;
  r.view(expanded).copy_(self.reshape(inter).expand(expanded));
  return r;
}

Tensor tile(const Tensor& self, IntArrayRef dims) {
  DimVector reps;
  for (int64_t d : dims) reps.push_back(d);
  while (static_cast<int64_t>(reps.size()) < self.dim()) reps.insert(0, 1);
  return self.repeat(reps);
}

Tensor repeat_interleave_tensor(const Tensor& repeats, std::optional<int64_t> output_size) {
  if (repeats.dtype() != ScalarType::Long && repeats.dtype() != ScalarType::Int) {
    throw NotImplementedError(
        str_cat("\"repeat_interleave_cpu\" not implemented for '", dtype_message_name(repeats.dtype()), "'"));
  }
  EMBER_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  Tensor r = repeats.to(ScalarType::Long).contiguous();
  const int64_t* rp = r.data_ptr<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < r.numel(); ++i) {
    EMBER_CHECK(rp[i] >= 0, "repeats can not be negative");
    total += rp[i];
  }
  EMBER_CHECK(!output_size || *output_size == total, "allocated size does not match required size");
  // The indices in the repeats' dtype, as PyTorch (int32 repeats give int32 indices).
  Tensor out = ember::empty({total}, ScalarType::Long, repeats.device());
  int64_t* op = out.data_ptr<int64_t>();
  for (int64_t i = 0, k = 0; i < r.numel(); ++i) {
    for (int64_t j = 0; j < rp[i]; ++j) op[k++] = i;
  }
  return repeats.dtype() == ScalarType::Long ? out : out.to(repeats.dtype());
}

Tensor repeat_interleave_self_tensor(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim,
                                     std::optional<int64_t> output_size) {
  Tensor input = dim ? self : self.reshape({-1});
  const int64_t d = dim ? maybe_wrap_dim(*dim, self.dim()) : 0;
  EMBER_CHECK(repeats.dim() <= 1, "repeats must be 0-dim or 1-dim tensor");
  const int64_t size = input.dim() > 0 ? input.sizes()[d] : 1;
  Tensor reps = repeats;
  if (repeats.dim() == 0 || (repeats.numel() == 1 && size != 1)) {
    reps = repeats.reshape({1}).expand({size});
  }
  EMBER_CHECK(reps.sizes()[0] == size,
              "repeats must have the same size as input along dim, but got repeats.size(0) = ", reps.sizes()[0],
              " and input.size(", d, ") = ", size);
  return input.index_select(d, ember::repeat_interleave(reps, output_size));
}

Tensor repeat_interleave_self_int(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                                  std::optional<int64_t> output_size) {
  Tensor input = dim ? self : self.reshape({-1});
  if (input.dim() == 0) input = input.reshape({1});
  const int64_t d = dim ? maybe_wrap_dim(*dim, input.dim()) : 0;
  EMBER_CHECK(repeats >= 0, "Repeats must be non-negative");  // after the dim, as PyTorch
  int64_t expected = 0;
  if (output_size && !__builtin_mul_overflow(input.sizes()[d], repeats, &expected)) {
    EMBER_CHECK(*output_size == expected, "repeat_interleave: Invalid output_size, expected ", expected, " but got ",
                *output_size);
  }
  DimVector expanded(input.sizes());
  expanded.insert(static_cast<size_t>(d + 1), repeats);
  DimVector shape(input.sizes());
  // Wrapped without overflow; when it wraps, contiguous() below refuses the size first.
  __builtin_mul_overflow(shape[d], repeats, &shape[d]);
  return input.unsqueeze(d + 1).expand(expanded).contiguous().view(shape);
}

// ---- roll, flip ------------------------------------------------------------------------------------

Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  EMBER_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {
    return ember::roll(self.reshape({-1}), shifts, {0}).view(self.sizes());
  }
  EMBER_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  EMBER_CHECK_TYPE(IndexError, self.dim() > 0, "Dimension specified as ", dims[0], " but tensor has no dimensions");
  Tensor r = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = maybe_wrap_dim(dims[i], self.dim());
    const int64_t n = r.dim() > 0 ? r.sizes()[d] : 1;
    if (n == 0) continue;
    int64_t s = shifts[i] % n;
    if (s < 0) s += n;
    if (s == 0) continue;
    r = ember::cat({r.narrow(d, n - s, s), r.narrow(d, 0, n - s)}, d);
  }
  return r.is_same(self) ? self.clone() : r;
}

Tensor flip(const Tensor& self, IntArrayRef dims) {
  std::vector<bool> seen(std::max<int64_t>(self.dim(), 1), false);
  for (int64_t d : dims) {
    const int64_t w = maybe_wrap_dim(d, self.dim());
    EMBER_CHECK(!seen[w], "dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
  }
  // PyTorch's layout: self's (Note [Preserved layout]).
  Tensor out = ember::empty_like(self);
  if (out.numel() == 0 || out.is_meta()) return out;
  if (self.dim() == 0) return out.copy_(self), out;
  if (!out.is_contiguous()) {  // the loop below writes in row-major order
    out.copy_(native::flip(self.contiguous(), dims));
    return out;
  }
  // Read self through a view that walks each flipped dim backwards.
  const int64_t nd = self.dim();
  DimVector ctr(nd, 0);
  const int64_t n = self.numel();
  int64_t src_off = 0;
  DimVector step(self.strides()), start(nd, 0);
  for (int64_t d = 0; d < nd; ++d) {
    if (seen[d]) {
      step[d] = -self.strides()[d];
      src_off += (self.sizes()[d] - 1) * self.strides()[d];
    }
  }
  const int64_t inner = self.sizes()[nd - 1], istep = step[nd - 1];
  // The next position of dims 0..last (row-major), its source offset updated.
  auto advance = [&](int64_t last, int64_t& off) {
    for (int64_t d = last; d >= 0; --d) {
      if (++ctr[d] < self.sizes()[d]) {
        off += step[d];
        return;
      }
      off -= step[d] * (self.sizes()[d] - 1);
      ctr[d] = 0;
    }
  };
  if (istep == -1) {  // the last dim flipped: a block of rows per call (Note [Flip rows])
    const cpu::FlipRowFn flip_rows = cpu::flip_row_stub.get();
    const int64_t esize = static_cast<int64_t>(self.element_size());
    const int64_t rows = nd >= 2 ? self.sizes()[nd - 2] : 1, row_step = nd >= 2 ? step[nd - 2] : 0;
    const char* sp = static_cast<const char*>(self.data_ptr());
    char* op = static_cast<char*>(out.data_ptr());
    int64_t off = src_off;
    for (int64_t k = 0; k < n; k += rows * inner) {
      flip_rows(sp + (off - (inner - 1)) * esize, rows, row_step, inner, op + k * esize, esize);
      advance(nd - 3, off);
    }
    return out;
  }
  EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX(self.dtype(), "flip", [&] {
    const scalar_t* sp = static_cast<const scalar_t*>(self.data_ptr());
    scalar_t* op = static_cast<scalar_t*>(out.data_ptr());
    int64_t off = src_off;
    for (int64_t k = 0; k < n; k += inner) {
      const scalar_t* row = sp + off;
      if (istep == 1) {
        std::copy(row, row + inner, op + k);
      } else {
        for (int64_t j = 0; j < inner; ++j) op[k + j] = row[j * istep];
      }
      advance(nd - 2, off);
    }
  });
  return out;
}

Tensor fliplr(const Tensor& self) {
  EMBER_CHECK(self.dim() >= 2, "Input must be >= 2-d.");
  return self.flip({1});
}

Tensor flipud(const Tensor& self) {
  EMBER_CHECK(self.dim() >= 1, "Input must be >= 1-d.");
  return self.flip({0});
}

}  // namespace ember::native
