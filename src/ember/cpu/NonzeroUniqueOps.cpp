// CPU operators whose output size depends on the values: masked_select,
// masked_scatter, nonzero (argwhere), unique and unique_consecutive.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "ember/cpu/OpMessages.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/LimitedTypes.h"

namespace ember::native {

namespace {
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
  // complex32 and float8 elements move as words (PyTorch selects both, not uint16/32/64).
  if (self.dtype() == ScalarType::ComplexHalf || is_float8_type(self.dtype())) {
    const Tensor r = ember::masked_select(limited::as_words(self), mask).view(self.dtype());
    if (!out.defined()) return out = r;
    resize_output(out, r.sizes());
    out.copy_(r);
    return out;
  }
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
  EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX(self.dtype(), "masked_select", [&] {
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
              dtype_message_name(mask.dtype()));
  EMBER_CHECK(self.dtype() == source.dtype(), "masked_scatter: expected self and source to have same dtypes but got",
              dtype_message_name(self.dtype()), " and ", dtype_message_name(source.dtype()));
  if (!out.defined()) {
    DimVector shape = infer_broadcast_size(self.sizes(), mask.sizes());
    out = ember::empty(shape, self.dtype(), self.device());
    out.copy_(self.expand(shape));
  }
  // The rest counts the mask's values (Note [Meta tensors]); the meta kernel runs when any argument is meta.
  if (out.is_meta() || mask.is_meta() || source.is_meta()) return out;
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
    case 8: run(uint64_t{}); break;
    case 16: run(static_cast<unsigned __int128>(0)); break;  // complex128
    default: EMBER_INTERNAL_ASSERT(false, "masked_scatter: element size ", o.element_size());
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
  if (self.dtype() == ScalarType::ComplexHalf) return native::nonzero_out(ember::ne(self, Scalar(int64_t(0))), out);
  const int64_t nd = self.dim();
  Tensor s = self.contiguous();
  const int64_t n = s.numel();
  Tensor r;
  EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX(self.dtype(), "nonzero", [&] {
    const scalar_t* p = static_cast<const scalar_t*>(s.data_ptr());
    const CountedPieces pieces = count_true_pieces(n, [p](int64_t i) { return truthy(p[i]); });
    r = ember::empty({pieces.total(), nd}, ScalarType::Long, self.device());
    if (nd == 0 || pieces.total() == 0) return;
    int64_t* rp = r.data_ptr<int64_t>();
    pieces.parallel(
        [&](int64_t c, int64_t b, int64_t e) { nonzero_rows(p, self.sizes(), b, e, rp + pieces.start[c] * nd); });
  });
  if (!out.defined()) return out = r;
  resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor argwhere(const Tensor& self) { return ember::nonzero(self); }
Tensor count_nonzero_dims(const Tensor& self, IntArrayRef dim) {
  return ember::sum(ember::ne(self, Scalar(int64_t(0))), dim.vec(), false, ScalarType::Long);
}
Tensor count_nonzero(const Tensor& self, std::optional<int64_t> dim) {
  // Counted in place, without a mask; PyTorch's kernel refuses the limited dtypes but complex32.
  if (!dim && self.is_cpu() && self.dtype() != ScalarType::ComplexHalf) {
    const Tensor s = self.contiguous();
    Tensor r = ember::empty({}, ScalarType::Long);
    EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX(s.dtype(), "nonzero_count_cpu", [&] {
      const scalar_t* p = static_cast<const scalar_t*>(s.data_ptr());
      *r.data_ptr<int64_t>() = count_true_pieces(s.numel(), [p](int64_t i) { return truthy(p[i]); }).total();
    });
    return r;
  }
  const Tensor mask = ember::ne(self, Scalar(int64_t(0)));
  if (!dim) return ember::sum(mask, ScalarType::Long);
  return ember::sum(mask, std::vector<int64_t>{*dim}, false, ScalarType::Long);
}

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
  // uint16/32/64 values are equal when their words are.
  const bool words = is_wide_unsigned_type(self.dtype());
  const Tensor keys = words ? limited::as_words(vals) : vals;
  EMBER_DISPATCH_ALL_TYPES(keys.dtype(), "unique", [&] {
    const scalar_t* p = static_cast<const scalar_t*>(keys.data_ptr());
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
  const Tensor out_keys = words ? limited::as_words(out) : out;
  EMBER_DISPATCH_ALL_TYPES(keys.dtype(), "unique", [&] {
    const scalar_t* p = static_cast<const scalar_t*>(keys.data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out_keys.data_ptr());
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

namespace {
// PyTorch's unique kernels have no complex loops.
void check_unique_dtype(const Tensor& self) {
  if (is_complex_type_any_tier(self.dtype()) && !self.is_meta()) {
    throw NotImplementedError(str_cat("\"unique\" not implemented for '", dtype_message_name(self.dtype()), "'"));
  }
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> unique2(const Tensor& self, bool sorted, bool return_inverse, bool return_counts) {
  (void)sorted;  // the CPU result is always sorted, as PyTorch's
  check_unique_dtype(self);
  return unique_impl(self, true, return_inverse, return_counts);
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& self, bool return_inverse, bool return_counts,
                                                      std::optional<int64_t> dim) {
  EMBER_CHECK(!dim || self.dim() <= 1,
              "unique_consecutive(): dim is not supported for tensors with more than one dimension");
  check_unique_dtype(self);
  return unique_impl(self, false, return_inverse, return_counts);
}

}  // namespace ember::native
