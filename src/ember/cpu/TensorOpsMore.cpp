// CPU tensor operations, continued: masked_select/masked_scatter, nonzero,
// unique, tril/triu, repeat and repeat_interleave, roll, flip, addcmul/addcdiv,
// searchsorted, bincount, histc, isclose, nan_to_num, trace, diag.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "ember/cpu/OpMessages.h"
#include "ember/cpu/TensorOpsStubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(AddcFn, addc_stub);
EMBER_DEFINE_DISPATCH(NanToNumFn, nan_to_num_stub);
}  // namespace ember::cpu

namespace ember::native {

namespace {
std::string shape_text(IntArrayRef s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

template <typename T>
bool truthy(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(v) != 0.0f;
  } else {
    return v != T(0);
  }
}
}  // namespace

// ---- masked_select / masked_scatter -------------------------------------------------------

Tensor& masked_select_out(const Tensor& self, const Tensor& mask, Tensor& out) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "masked_select: expected BoolTensor for mask");
  EMBER_CHECK(!out.defined() || out.dtype() == self.dtype(),
              "masked_select(): self and result must have the same scalar type");
  DimVector shape = infer_broadcast_size(self.sizes(), mask.sizes());
  Tensor s = self.expand(shape).contiguous(), m = mask.expand(shape).contiguous();
  const bool* mp = m.data_ptr<bool>();
  const int64_t n = m.numel();
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += mp[i];
  if (out.defined()) {
    resize_output(out, {count});
  } else {
    out = ember::empty({count}, self.dtype(), self.device());
  }
  Tensor r = out.is_contiguous() ? out : ember::empty({count}, self.dtype(), self.device());
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "masked_select", [&] {
    const scalar_t* sp = static_cast<const scalar_t*>(s.data_ptr());
    scalar_t* rp = static_cast<scalar_t*>(r.data_ptr());
    int64_t k = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (mp[i]) rp[k++] = sp[i];
    }
  });
  if (!r.is_same(out)) out.copy_(r);
  return out;
}

namespace {
// Note [nonzero in two passes]
// Each piece of the flat input counts its true (nonzero) elements; the
// counts place every piece's output in the result, and each piece writes its
// output without branches: every element is stored at the next free slot,
// which only advances past a true element. Writing stops at the piece's last
// true element, so no slot outside the piece's own is touched. (nonzero
// writes rows of coordinates, masked_scatter reads source elements.)
struct CountedPieces {
  int64_t n = 0, per = 0;
  std::vector<int64_t> start;  // start[c]: true elements before piece c; start.back(): all
  int64_t total() const { return start.back(); }
  // f(piece, begin, end) for every piece, in parallel.
  template <typename F>
  void parallel(const F& f) const {
    parallel_for(0, static_cast<int64_t>(start.size()) - 1, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) f(c, c * per, std::min(n, (c + 1) * per));
    });
  }
};

// Pieces of [0, n) (one per thread, at least 64K elements each) with the
// running counts of is_true(i).
template <typename IsTrue>
CountedPieces count_true_pieces(int64_t n, const IsTrue& is_true) {
  constexpr int64_t kGrain = 1 << 16;
  const int64_t pieces = std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), n / kGrain));
  CountedPieces p;
  p.n = n;
  p.per = (n + pieces - 1) / pieces;
  p.start.assign(static_cast<size_t>(pieces + 1), 0);
  p.parallel([&](int64_t c, int64_t b, int64_t e) {
    int64_t count = 0;
    for (int64_t i = b; i < e; ++i) count += is_true(i);
    p.start[c + 1] = count;
  });
  for (int64_t c = 0; c < pieces; ++c) p.start[c + 1] += p.start[c];
  return p;
}
}  // namespace

Tensor& masked_scatter_out(const Tensor& self, const Tensor& mask, const Tensor& source, Tensor& out) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              type_word(mask.dtype()));
  EMBER_CHECK(self.dtype() == source.dtype(), "masked_scatter: expected self and source to have same dtypes but got",
              type_word(self.dtype()), " and ", type_word(source.dtype()));
  if (!out.defined()) {
    DimVector shape = infer_broadcast_size(self.sizes(), mask.sizes());
    out = ember::empty(shape, self.dtype(), self.device());
    out.copy_(self.expand(shape));
  }
  Tensor m = mask.expand(out.sizes()).contiguous();
  Tensor src = source.contiguous();
  const bool* mp = m.data_ptr<bool>();
  const int64_t n = m.numel(), avail = src.numel();
  Tensor o = out.is_contiguous() ? out : out.contiguous();
  // Note [nonzero in two passes].
  const CountedPieces pieces = count_true_pieces(n, [mp](int64_t i) { return mp[i]; });
  EMBER_CHECK(pieces.total() <= avail, "Number of elements of source < number of ones in mask");
  // Elements move as bits of their size; the select is done with masks so
  // that it stays free of branches.
  auto run = [&](auto tag) {
    using U = decltype(tag);
    const U* sp = static_cast<const U*>(src.data_ptr());
    U* op = static_cast<U*>(o.data_ptr());
    pieces.parallel([&](int64_t c, int64_t b, int64_t e) {
      while (e > b && !mp[e - 1]) --e;
      const U* s = sp + pieces.start[c];
      // s[k] is read at every step: k stays below the piece's count up to
      // its last true element.
      for (int64_t i = b, k = 0; i < e; ++i) {
        const U keep = static_cast<U>(mp[i]) - U(1);  // all ones where the mask is false
        op[i] = static_cast<U>((op[i] & keep) | (s[k] & static_cast<U>(~keep)));
        k += mp[i];
      }
    });
  };
  switch (o.element_size()) {
    case 1: run(uint8_t{}); break;
    case 2: run(uint16_t{}); break;
    case 4: run(uint32_t{}); break;
    default: run(uint64_t{}); break;
  }
  if (!o.is_same(out)) out.copy_(o);
  return out;
}

// ---- nonzero, unique ------------------------------------------------------------------------

namespace {
// The rows of piece [begin, end) (Note [nonzero in two passes]).
template <typename T>
void nonzero_rows(const T* p, IntArrayRef sizes, int64_t begin, int64_t end, int64_t* rows) {
  while (end > begin && !truthy(p[end - 1])) --end;
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (nd == 1) {
    for (int64_t i = begin, w = 0; i < end; ++i) {
      rows[w] = i;
      w += truthy(p[i]);
    }
    return;
  }
  DimVector coord(nd, 0);
  for (int64_t d = nd - 1, r = begin; d >= 0; --d) {
    coord[d] = r % sizes[d];
    r /= sizes[d];
  }
  const int64_t inner = sizes[nd - 1];
  int64_t w = 0;
  for (int64_t i = begin; i < end;) {
    const int64_t run = std::min(inner - coord[nd - 1], end - i);
    const int64_t c0 = coord[nd - 1];
    if (nd == 2) {
      const int64_t c = coord[0];
      for (int64_t k = 0; k < run; ++k) {
        rows[2 * w] = c;
        rows[2 * w + 1] = c0 + k;
        w += truthy(p[i + k]);
      }
    } else {
      for (int64_t k = 0; k < run; ++k) {
        int64_t* row = rows + w * nd;
        for (int64_t d = 0; d + 1 < nd; ++d) row[d] = coord[d];
        row[nd - 1] = c0 + k;
        w += truthy(p[i + k]);
      }
    }
    i += run;
    coord[nd - 1] += run;
    for (int64_t d = nd - 1; d > 0 && coord[d] == sizes[d]; --d) {
      coord[d] = 0;
      ++coord[d - 1];
    }
  }
}
}  // namespace

Tensor& nonzero_out(const Tensor& self, Tensor& out) {
  check_out_dtype(out, ScalarType::Long);
  const int64_t nd = self.dim();
  Tensor s = self.contiguous();
  const int64_t n = s.numel();
  Tensor r;
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "nonzero", [&] {
    const scalar_t* p = static_cast<const scalar_t*>(s.data_ptr());
    const CountedPieces pieces = count_true_pieces(n, [p](int64_t i) { return truthy(p[i]); });
    r = ember::empty({pieces.total(), nd}, ScalarType::Long, self.device());
    if (nd == 0 || pieces.total() == 0) return;
    int64_t* rp = r.data_ptr<int64_t>();
    pieces.parallel([&](int64_t c, int64_t b, int64_t e) { nonzero_rows(p, self.sizes(), b, e, rp + pieces.start[c] * nd); });
  });
  if (!out.defined()) return out = r;
  resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor argwhere(const Tensor& self) { return ember::nonzero(self); }

namespace {
// Sorted (or consecutive) unique values of a flat tensor, with inverse and counts.
std::tuple<Tensor, Tensor, Tensor> unique_impl(const Tensor& self, bool sort_first, bool return_inverse,
                                               bool return_counts) {
  Tensor flat = self.reshape({-1});
  const int64_t n = flat.numel();
  Tensor vals = flat, order;
  if (sort_first) {
    auto sorted = native::sort_stable(flat, true, 0, false);
    vals = std::get<0>(sorted);
    order = std::get<1>(sorted);
  } else {
    vals = flat.contiguous();
  }
  std::vector<int64_t> group(n);
  std::vector<int64_t> starts;
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "unique", [&] {
    const scalar_t* p = static_cast<const scalar_t*>(vals.data_ptr());
    int64_t g = -1;
    for (int64_t i = 0; i < n; ++i) {
      // NaN never equals NaN, so each NaN stays its own value (as PyTorch).
      if (i == 0 || !(p[i] == p[i - 1])) {
        ++g;
        starts.push_back(i);
      }
      group[i] = g;
    }
  });
  const int64_t u = static_cast<int64_t>(starts.size());
  Tensor out = ember::empty({u}, self.dtype(), self.device());
  Tensor inverse = ember::empty(return_inverse ? self.sizes() : IntArrayRef{0}, ScalarType::Long, self.device());
  Tensor counts = ember::empty({return_counts ? u : 0}, ScalarType::Long, self.device());
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "unique", [&] {
    const scalar_t* p = static_cast<const scalar_t*>(vals.data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t g = 0; g < u; ++g) o[g] = p[starts[g]];
  });
  if (return_inverse && n > 0) {
    int64_t* ip = inverse.data_ptr<int64_t>();
    const int64_t* op = order.defined() ? order.data_ptr<int64_t>() : nullptr;
    for (int64_t i = 0; i < n; ++i) ip[op ? op[i] : i] = group[i];
  }
  if (return_counts) {
    int64_t* cp = counts.data_ptr<int64_t>();
    for (int64_t g = 0; g < u; ++g) cp[g] = (g + 1 < u ? starts[g + 1] : n) - starts[g];
  }
  return {out, inverse, counts};
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> unique2(const Tensor& self, bool sorted, bool return_inverse, bool return_counts) {
  (void)sorted;  // the CPU result is always sorted, as PyTorch's
  return unique_impl(self, true, return_inverse, return_counts);
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& self, bool return_inverse, bool return_counts,
                                                      std::optional<int64_t> dim) {
  EMBER_CHECK(!dim || self.dim() <= 1, "unique_consecutive(): dim is not supported for tensors with more than one dimension");
  return unique_impl(self, false, return_inverse, return_counts);
}

// ---- tril / triu -------------------------------------------------------------------------------

namespace {
Tensor& tri_impl(const char* name, const Tensor& self, int64_t diagonal, bool lower, Tensor& out) {
  EMBER_CHECK(self.dim() >= 2, name, ": input tensor must have at least 2 dimensions");
  if (!out.defined()) {
    out = self.clone();
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
  EMBER_DISPATCH_ALL_TYPES(out.dtype(), name, [&] {
    scalar_t* base = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t b = 0; b < batch; ++b) {
      int64_t off = 0, rem = b;
      for (int64_t d = nd - 3; d >= 0; --d) {
        off += (rem % out.sizes()[d]) * out.strides()[d];
        rem /= out.sizes()[d];
      }
      scalar_t* m = base + off;
      for (int64_t i = 0; i < rows; ++i) {
        // lower keeps j <= i + diagonal; upper keeps j >= i + diagonal.
        const int64_t lo = lower ? std::max<int64_t>(0, i + diagonal + 1) : 0;
        const int64_t hi = lower ? cols : std::min<int64_t>(cols, std::max<int64_t>(0, i + diagonal));
        for (int64_t j = lo; j < hi; ++j) m[i * rs + j * cs] = scalar_t(0);
      }
    }
  });
  return out;
}
}  // namespace

Tensor& tril_out(const Tensor& self, int64_t diagonal, Tensor& out) { return tri_impl("tril", self, diagonal, true, out); }
Tensor& triu_out(const Tensor& self, int64_t diagonal, Tensor& out) { return tri_impl("triu", self, diagonal, false, out); }

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
                shape_text(target));
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
    throw NotImplementedError(str_cat("\"repeat_interleave_cpu\" not implemented for '", type_word(repeats.dtype()), "'"));
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
  Tensor out = ember::empty({total}, ScalarType::Long, repeats.device());
  int64_t* op = out.data_ptr<int64_t>();
  for (int64_t i = 0, k = 0; i < r.numel(); ++i) {
    for (int64_t j = 0; j < rp[i]; ++j) op[k++] = i;
  }
  return out;
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
  EMBER_CHECK(reps.sizes()[0] == size, "repeats must have the same size as input along dim, but got repeats.size(0) = ",
              reps.sizes()[0], " and input.size(", d, ") = ", size);
  return input.index_select(d, ember::repeat_interleave(reps, output_size));
}

Tensor repeat_interleave_self_int(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                                  std::optional<int64_t> output_size) {
  (void)output_size;
  EMBER_CHECK(repeats >= 0, "Repeats must be non-negative");
  Tensor input = dim ? self : self.reshape({-1});
  if (input.dim() == 0) input = input.reshape({1});
  const int64_t d = dim ? maybe_wrap_dim(*dim, input.dim()) : 0;
  DimVector expanded(input.sizes());
  expanded.insert(static_cast<size_t>(d + 1), repeats);
  DimVector shape(input.sizes());
  shape[d] *= repeats;
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
  Tensor out = ember::empty(self.sizes(), self.dtype(), self.device());
  if (out.numel() == 0) return out;
  if (self.dim() == 0) return out.copy_(self), out;
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
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "flip", [&] {
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
      for (int64_t d = nd - 2; d >= 0; --d) {
        if (++ctr[d] < self.sizes()[d]) {
          off += step[d];
          break;
        }
        off -= step[d] * (self.sizes()[d] - 1);
        ctr[d] = 0;
      }
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

// ---- addcmul / addcdiv ----------------------------------------------------------------------------

namespace {
Tensor& addc_impl(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value, bool divide,
                  Tensor& out) {
  if (divide && is_integral_type(t1.dtype(), true) && is_integral_type(t2.dtype(), true)) {
    throw Error(
        "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
        "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value "
        "* torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
        "tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value "
        "* tensor1 / tensor2), for all dtypes.");
  }
  TensorIterator::Config c;
  auto it = TensorIterator::op(out, {self, t1, t2}, c);
  if (it.common_dtype() == ScalarType::Bool) {
    throw NotImplementedError(str_cat("\"", divide ? "addcdiv_cpu_out" : "addcmul_cpu_out",
                                      "\" not implemented for 'Bool'"));
  }
  cpu::addc_stub(it, value, divide);
  it.finish();
  return out;
}
}  // namespace

Tensor& addcmul_out(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
                    Tensor& out) {
  return addc_impl(self, tensor1, tensor2, value, false, out);
}

Tensor& addcdiv_out(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
                    Tensor& out) {
  return addc_impl(self, tensor1, tensor2, value, true, out);
}

// ---- searchsorted, bincount, histc ------------------------------------------------------------------

Tensor& searchsorted_out(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                         std::optional<std::string> side, const std::optional<Tensor>& sorter,
                         Tensor& out) {
  if (side) {
    EMBER_CHECK(*side == "left" || *side == "right",
                "torch.searchsorted(): side can only be 'left' or 'right' but got ", *side);
    EMBER_CHECK(!(right && *side == "left"),
                "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True");
    right = *side == "right";
  }
  EMBER_CHECK(!sorter || !sorter->defined(), "torch.searchsorted(): sorter is not supported");
  const Tensor& bd = sorted_sequence;
  bool ok = bd.dim() == 1;
  if (!ok && bd.dim() == self.dim() && bd.dim() > 0) {
    ok = true;
    for (int64_t i = 0; i + 1 < bd.dim(); ++i) ok = ok && bd.sizes()[i] == self.sizes()[i];
  }
  EMBER_CHECK(ok, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                  "boundaries tensor and input value tensor must match, but we got boundaries tensor ",
              shape_text(bd.sizes()), " and input value tensor ", shape_text(self.sizes()));
  const ScalarType rt = out_int32 ? ScalarType::Int : ScalarType::Long;
  check_out_dtype(out, rt);
  if (out.defined()) {
    resize_output(out, self.sizes());
  } else {
    out = ember::empty(self.sizes(), rt, self.device());
  }
  const ScalarType ct = promote_types(bd.dtype(), self.dtype());
  if (ct == ScalarType::Bool) throw NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'");
  Tensor b = bd.to(ct).contiguous(), v = self.to(ct).contiguous();
  Tensor r = ember::empty(self.sizes(), ScalarType::Long, self.device());
  const int64_t nb = b.dim() > 0 ? b.sizes()[b.dim() - 1] : 1;
  const int64_t nv = v.numel();
  const int64_t per_line = bd.dim() <= 1 ? nv : (self.dim() > 0 ? self.sizes()[self.dim() - 1] : 1);
  int64_t* rp = r.data_ptr<int64_t>();
  EMBER_DISPATCH_ALL_TYPES(ct, "searchsorted", [&] {
    const scalar_t* bp = static_cast<const scalar_t*>(b.data_ptr());
    const scalar_t* vp = static_cast<const scalar_t*>(v.data_ptr());
    for (int64_t i = 0; i < nv; ++i) {
      const scalar_t* line = bd.dim() <= 1 ? bp : bp + (i / std::max<int64_t>(per_line, 1)) * nb;
      const scalar_t x = vp[i];
      int64_t lo = 0, hi = nb;
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        // left: first position whose value is >= x; right: first whose value is > x.
        const bool go_right = right ? !(line[mid] > x) : !(line[mid] >= x);
        if (go_right) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      rp[i] = lo;
    }
  });
  out.copy_(r);
  return out;
}

Tensor searchsorted_scalar(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                           std::optional<std::string> side, const std::optional<Tensor>& sorter) {
  Tensor v = ember::scalar_tensor(self, sorted_sequence.dtype(), sorted_sequence.device());
  return ember::searchsorted(sorted_sequence, v, out_int32, right, side, sorter);
}

Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  if (!is_integral_type(self.dtype(), false)) {
    throw NotImplementedError(str_cat("\"bincount_cpu\" not implemented for '", type_word(self.dtype()), "'"));
  }
  EMBER_CHECK(minlength >= 0, "minlength should be >= 0");
  const bool has_w = weights && weights->defined();
  EMBER_CHECK(self.dim() == 1 || (self.dim() == 0 && self.numel() == 0) || self.dim() == 1,
              "bincount only supports 1-d non-negative integral inputs.");
  if (has_w) {
    EMBER_CHECK(weights->dim() == 1 && weights->numel() == self.numel(),
                "weights should be 1-d and have the same length as input");
  }
  if (self.dim() == 1 && self.numel() == 0) return ember::zeros({minlength}, ScalarType::Long, self.device());
  Tensor x = self.to(ScalarType::Long).contiguous();
  const int64_t* xp = x.data_ptr<int64_t>();
  const int64_t n = x.numel();
  int64_t mx = -1;
  for (int64_t i = 0; i < n; ++i) {
    EMBER_CHECK(xp[i] >= 0, "bincount only supports 1-d non-negative integral inputs.");
    mx = std::max(mx, xp[i]);
  }
  const int64_t bins = std::max(mx + 1, minlength);
  if (!has_w) {
    Tensor out = ember::zeros({bins}, ScalarType::Long, self.device());
    int64_t* op = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) ++op[xp[i]];
    return out;
  }
  const ScalarType wt = weights->dtype() == ScalarType::Float ? ScalarType::Float : ScalarType::Double;
  Tensor w = weights->to(wt).contiguous();
  Tensor out = ember::zeros({bins}, wt, self.device());
  if (wt == ScalarType::Float) {
    const float* wp = w.data_ptr<float>();
    float* op = out.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) op[xp[i]] += wp[i];
  } else {
    const double* wp = w.data_ptr<double>();
    double* op = out.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) op[xp[i]] += wp[i];
  }
  return out;
}

Tensor& histc_out(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max, Tensor& out) {
  if (!is_floating_type(self.dtype())) {
    throw NotImplementedError(str_cat("\"histogram_cpu\" not implemented for '", type_word(self.dtype()), "'"));
  }
  EMBER_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  check_out_dtype(out, self.dtype());
  Tensor x = self.contiguous().to(ScalarType::Double);
  const double* xp = x.data_ptr<double>();
  const int64_t n = x.numel();
  double lo = min.to_double(), hi = max.to_double();
  if (lo == hi && n > 0) {
    lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (int64_t i = 0; i < n; ++i) {
      lo = std::min(lo, xp[i]), hi = std::max(hi, xp[i]);
    }
  }
  if (lo == hi) lo -= 1, hi += 1;
  EMBER_CHECK(!(lo > hi), "torch.histc: max must be larger than min");
  EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  // Bin edges and the position rule follow PyTorch's histogram: the edges are
  // linspace(lo, hi, bins + 1) in the input dtype and the last bin is closed.
  std::vector<double> counts(bins, 0.0);
  const double width = hi - lo;
  for (int64_t i = 0; i < n; ++i) {
    const double v = xp[i];
    if (!(v >= lo && v <= hi)) continue;
    int64_t pos = static_cast<int64_t>((v - lo) * bins / width);
    if (pos == bins) pos -= 1;
    counts[pos] += 1;
  }
  Tensor r = ember::empty({bins}, ScalarType::Double, self.device());
  std::copy(counts.begin(), counts.end(), r.data_ptr<double>());
  if (out.defined()) {
    resize_output(out, {bins});
  } else {
    out = ember::empty({bins}, self.dtype(), self.device());
  }
  out.copy_(r);
  return out;
}

// ---- isclose, nan_to_num, trace, diag ---------------------------------------------------------------

Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  EMBER_CHECK(self.dtype() == other.dtype(), type_word(self.dtype()), " did not match ", type_word(other.dtype()));
  EMBER_CHECK(rtol >= 0, "rtol must be greater than or equal to zero, but got ", rtol);
  EMBER_CHECK(atol >= 0, "atol must be greater than or equal to zero, but got ", atol);
  auto weak = [&](const Tensor& like, double v) { return ember::scalar_tensor(Scalar(v), like.dtype(), like.device()); };
  Tensor close = ember::eq(self, other);
  if (equal_nan && is_floating_type(self.dtype())) {
    close = ember::logical_or(close, ember::logical_and(ember::isnan(self), ember::isnan(other)));
  }
  if (self.dtype() == ScalarType::Bool || (rtol == 0 && atol == 0)) return close;
  if (!is_floating_type(self.dtype())) {
    // Integers compare in the default float type, as PyTorch.
    Tensor a = self.to(ScalarType::Float), b = other.to(ScalarType::Float);
    Tensor diff = ember::abs(ember::sub(a, b));
    Tensor allowed = ember::add(ember::abs(ember::mul(b, weak(b, rtol))), weak(b, atol));
    return ember::logical_or(close, ember::le(diff, allowed));
  }
  Tensor diff = ember::abs(ember::sub(self, other));
  Tensor allowed = ember::add(ember::abs(ember::mul(other, weak(other, rtol))), weak(other, atol));
  Tensor finite = ember::logical_and(ember::isfinite(diff), ember::le(diff, allowed));
  return ember::logical_or(close, finite);
}

Tensor& nan_to_num_out(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                       std::optional<double> neginf, Tensor& out) {
  auto it = TensorIterator::unary_op(out, self);
  if (!is_floating_type(self.dtype())) {
    if (!out.is_same(self)) out.copy_(self);
    return out;
  }
  double big = 0;
  switch (self.dtype()) {
    case ScalarType::Half: big = 65504.0; break;
    case ScalarType::BFloat16: big = 3.3895313892515355e38; break;
    case ScalarType::Float: big = std::numeric_limits<float>::max(); break;
    default: big = std::numeric_limits<double>::max(); break;
  }
  cpu::nan_to_num_stub(it, nan.value_or(0.0), posinf.value_or(big), neginf.value_or(-big));
  it.finish();
  return out;
}

Tensor trace(const Tensor& self) {
  EMBER_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  if (self.dtype() == ScalarType::Bool) throw NotImplementedError("\"trace\" not implemented for 'Bool'");
  return ember::sum(self.diagonal(0, 0, 1), std::optional<ScalarType>{});
}

Tensor diag(const Tensor& self, int64_t diagonal) {
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, "diag(): Supports 1D or 2D tensors. Got ", self.dim(), "D");
  if (self.dim() == 2) return self.diagonal(diagonal, 0, 1).clone();
  const int64_t n = self.sizes()[0] + std::abs(diagonal);
  Tensor out = ember::zeros({n, n}, self.dtype(), self.device());
  out.diagonal(diagonal, 0, 1).copy_(self);
  return out;
}

}  // namespace ember::native
