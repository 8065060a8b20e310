// Inner loops of advanced indexing and masked_fill, compiled once per CPU
// capability. See Note [Advanced indexing geometry] in cpu/IndexStubs.h.
#include <cstring>
#include <type_traits>

#include "ember/cpu/IndexStubs.h"
#include "ember/cpu/kernels/Loops.h"
#include "ember/ops/Parallel.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// The inner dims C after dropping size-1 dims and merging dims that are
// contiguous with each other in both operands (innermost last).
struct InnerBlock {
  DimVector sizes, si, sl;
  int64_t numel = 1;
};

InnerBlock coalesce_inner(const IndexGeometry& g) {
  InnerBlock c;
  for (size_t i = 0; i < g.c_sizes.size(); ++i) {
    int64_t n = g.c_sizes[i];
    c.numel *= n;
    if (n == 1) continue;
    size_t k = c.sizes.size();
    if (k > 0 && c.si[k - 1] == n * g.c_stride_idx[i] && c.sl[k - 1] == n * g.c_stride_lin[i]) {
      c.sizes[k - 1] *= n;
      c.si[k - 1] = g.c_stride_idx[i];
      c.sl[k - 1] = g.c_stride_lin[i];
    } else {
      c.sizes.push_back(n);
      c.si.push_back(g.c_stride_idx[i]);
      c.sl.push_back(g.c_stride_lin[i]);
    }
  }
  return c;
}

template <typename T, IndexMode M>
inline void move_one(T* pi, T* pl) {
  if constexpr (M == IndexMode::Gather) {
    *pl = *pi;
  } else if constexpr (M == IndexMode::Put) {
    *pi = *pl;
  } else if constexpr (std::is_same_v<T, bool>) {
    *pi = *pi || *pl;
  } else {
    using acc_t = opmath_t<T>;
    *pi = convert<T>(static_cast<acc_t>(*pi) + static_cast<acc_t>(*pl));
  }
}

// One C block starting at pi (indexed operand) and pl (linear operand).
template <typename T, IndexMode M>
void inner_block(const InnerBlock& c, T* pi, T* pl) {
  const size_t nd = c.sizes.size();
  if (nd == 0) {
    move_one<T, M>(pi, pl);
    return;
  }
  const int64_t n = c.sizes[nd - 1], si = c.si[nd - 1], sl = c.sl[nd - 1];
  auto row = [&](T* a, T* b) {
    if (M != IndexMode::Accumulate && si == 1 && sl == 1) {
      if constexpr (M == IndexMode::Gather) {
        std::memcpy(b, a, n * sizeof(T));
      } else {
        std::memcpy(a, b, n * sizeof(T));
      }
      return;
    }
    for (int64_t j = 0; j < n; ++j) move_one<T, M>(a + j * si, b + j * sl);
  };
  if (nd == 1) {
    row(pi, pl);
    return;
  }
  // Odometer over the outer C dims.
  DimVector idx(nd - 1, 0);
  int64_t outer = 1;
  for (size_t d = 0; d + 1 < nd; ++d) outer *= c.sizes[d];
  int64_t oi = 0, ol = 0;
  for (int64_t r = 0; r < outer; ++r) {
    row(pi + oi, pl + ol);
    for (size_t d = nd - 1; d-- > 0;) {
      oi += c.si[d];
      ol += c.sl[d];
      if (++idx[d] < c.sizes[d]) break;
      oi -= c.si[d] * c.sizes[d];
      ol -= c.sl[d] * c.sizes[d];
      idx[d] = 0;
    }
  }
}

// Odometer over the outer dims A: element offsets of position a in both operands.
struct OuterPos {
  DimVector idx;
  int64_t oi = 0, ol = 0;
  OuterPos(const IndexGeometry& g, int64_t a) : idx(g.a_sizes.size(), 0) {
    for (size_t d = g.a_sizes.size(); d-- > 0;) {
      idx[d] = a % g.a_sizes[d];
      a /= g.a_sizes[d];
      oi += idx[d] * g.a_stride_idx[d];
      ol += idx[d] * g.a_stride_lin[d];
    }
  }
  void next(const IndexGeometry& g) {
    for (size_t d = g.a_sizes.size(); d-- > 0;) {
      oi += g.a_stride_idx[d];
      ol += g.a_stride_lin[d];
      if (++idx[d] < g.a_sizes[d]) return;
      oi -= g.a_stride_idx[d] * g.a_sizes[d];
      ol -= g.a_stride_lin[d] * g.a_sizes[d];
      idx[d] = 0;
    }
  }
};

// The inner dims are empty: the indirect dim B is innermost, one element per (a, b).
template <typename T, IndexMode M>
void run_b_inner(const IndexGeometry& g, T* idx_base, T* lin_base, int64_t na, int64_t nb) {
  const int64_t* boi = g.b_off_idx.data();
  const int64_t* bol = g.b_off_lin.data();
  const int64_t ls = g.b_lin_stride;
  auto row = [&](T* pi, T* pl, int64_t b0, int64_t b1) {
    if (ls == 1) {
      for (int64_t b = b0; b < b1; ++b) move_one<T, M>(pi + boi[b], pl + b);
    } else if (ls >= 0) {
      for (int64_t b = b0; b < b1; ++b) move_one<T, M>(pi + boi[b], pl + b * ls);
    } else {
      for (int64_t b = b0; b < b1; ++b) move_one<T, M>(pi + boi[b], pl + bol[b]);
    }
  };
  if (M == IndexMode::Accumulate || na * nb < 32768) {
    OuterPos p(g, 0);
    for (int64_t a = 0; a < na; ++a, p.next(g)) row(idx_base + p.oi, lin_base + p.ol, 0, nb);
  } else if (na == 1) {
    parallel_for(0, nb, 32768, [&](int64_t b0, int64_t b1) { row(idx_base, lin_base, b0, b1); });
  } else {
    parallel_for(0, na, std::max<int64_t>(1, 32768 / nb), [&](int64_t a0, int64_t a1) {
      OuterPos p(g, a0);
      for (int64_t a = a0; a < a1; ++a, p.next(g)) row(idx_base + p.oi, lin_base + p.ol, 0, nb);
    });
  }
}

template <typename T, IndexMode M>
void run(const IndexGeometry& g, T* idx_base, T* lin_base) {
  const int64_t nb = static_cast<int64_t>(g.b_off_idx.size());
  int64_t na = 1;
  for (int64_t s : g.a_sizes) na *= s;
  const InnerBlock c = coalesce_inner(g);
  if (na == 0 || nb == 0 || c.numel == 0) return;
  if (c.sizes.empty()) return run_b_inner<T, M>(g, idx_base, lin_base, na, nb);
  const size_t nda = g.a_sizes.size();
  auto body = [&](int64_t begin, int64_t end) {
    // Position (a, b) of the flat outer index begin = a * nb + b.
    int64_t a = begin / nb, b = begin % nb;
    DimVector ai(nda, 0);
    int64_t oi = 0, ol = 0;
    for (size_t d = nda; d-- > 0;) {
      ai[d] = a % g.a_sizes[d];
      a /= g.a_sizes[d];
      oi += ai[d] * g.a_stride_idx[d];
      ol += ai[d] * g.a_stride_lin[d];
    }
    for (int64_t r = begin; r < end; ++r) {
      const int64_t bl = g.b_lin_stride >= 0 ? b * g.b_lin_stride : g.b_off_lin[b];
      inner_block<T, M>(c, idx_base + oi + g.b_off_idx[b], lin_base + ol + bl);
      if (++b < nb) continue;
      b = 0;
      for (size_t d = nda; d-- > 0;) {
        oi += g.a_stride_idx[d];
        ol += g.a_stride_lin[d];
        if (++ai[d] < g.a_sizes[d]) break;
        oi -= g.a_stride_idx[d] * g.a_sizes[d];
        ol -= g.a_stride_lin[d] * g.a_sizes[d];
        ai[d] = 0;
      }
    }
  };
  if (M == IndexMode::Accumulate) {
    body(0, na * nb);  // repeated indices must add up: no threads
  } else {
    parallel_for(0, na * nb, std::max<int64_t>(1, 32768 / c.numel), body);
  }
}

template <typename T>
void run_copy(const IndexGeometry& g, char* idx_base, char* lin_base, IndexMode mode) {
  if (mode == IndexMode::Gather) {
    run<T, IndexMode::Gather>(g, reinterpret_cast<T*>(idx_base), reinterpret_cast<T*>(lin_base));
  } else {
    run<T, IndexMode::Put>(g, reinterpret_cast<T*>(idx_base), reinterpret_cast<T*>(lin_base));
  }
}

void index_kernel(const IndexGeometry& g, char* idx_base, char* lin_base, ScalarType dtype, IndexMode mode) {
  if (mode == IndexMode::Accumulate) {
    EMBER_USE_BASELINE_KERNEL_FOR(dtype, index_stub, g, idx_base, lin_base, dtype, mode);
    EMBER_DISPATCH_KERNEL_TYPES(dtype, "index_put_", [&] {
      run<scalar_t, IndexMode::Accumulate>(g, reinterpret_cast<scalar_t*>(idx_base),
                                           reinterpret_cast<scalar_t*>(lin_base));
    });
    return;
  }
  // Copies move bytes: one instantiation per element size serves every dtype.
  switch (element_size(dtype)) {
    case 1:
      return run_copy<uint8_t>(g, idx_base, lin_base, mode);
    case 2:
      return run_copy<uint16_t>(g, idx_base, lin_base, mode);
    case 4:
      return run_copy<uint32_t>(g, idx_base, lin_base, mode);
    default:
      return run_copy<uint64_t>(g, idx_base, lin_base, mode);
  }
}

void masked_fill_kernel(const TensorIterator& it, const Scalar& value) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.dtype(0), masked_fill_stub, it, value);
  EMBER_DISPATCH_KERNEL_TYPES(it.dtype(0), "masked_fill_", [&] {
    const scalar_t v = value.is_floating_point() ? convert<scalar_t>(value.to<double>())
                       : value.is_bool()         ? convert<scalar_t>(value.to<bool>())
                                                 : convert<scalar_t>(value.to<int64_t>());
    it.for_each([v](char** d, const int64_t* s, int64_t n) {
      char* out = d[0];
      const char* mask = d[1];
      if (s[0] == sizeof(scalar_t) && s[1] == 1) {
        scalar_t* o = reinterpret_cast<scalar_t*>(out);
        const bool* m = reinterpret_cast<const bool*>(mask);
        for (int64_t i = 0; i < n; ++i) o[i] = m[i] ? v : o[i];
      } else {
        for (int64_t i = 0; i < n; ++i) {
          if (*reinterpret_cast<const bool*>(mask + i * s[1])) *reinterpret_cast<scalar_t*>(out + i * s[0]) = v;
        }
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(index_stub, &index_kernel);
EMBER_REGISTER_DISPATCH(masked_fill_stub, &masked_fill_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
