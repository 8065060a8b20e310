// Inner loops of advanced indexing, masked_fill and the gather/scatter
// family, compiled once per CPU capability. See Notes [Advanced indexing
// geometry] and [Scatter/gather geometry] in cpu/IndexStubs.h.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "ember/cpu/IndexStubs.h"
#include "ember/cpu/kernels/Loops.h"
#include "ember/cpu/kernels/MathLoops.h"
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
    EMBER_DISPATCH_KERNEL_TYPES_AND_COMPLEX(dtype, "index_put_", [&] {
      run<scalar_t, IndexMode::Accumulate>(g, reinterpret_cast<scalar_t*>(idx_base),
                                           reinterpret_cast<scalar_t*>(lin_base));
    });
    return;
  }
  // Copies move bytes: one instantiation per element size serves every dtype.
  switch (element_size(dtype)) {
    case 1: return run_copy<uint8_t>(g, idx_base, lin_base, mode);
    case 2: return run_copy<uint16_t>(g, idx_base, lin_base, mode);
    case 4: return run_copy<uint32_t>(g, idx_base, lin_base, mode);
    case 8: return run_copy<uint64_t>(g, idx_base, lin_base, mode);
    case 16: return run_copy<std::complex<double>>(g, idx_base, lin_base, mode);
    default: EMBER_INTERNAL_ASSERT(false, "index: element size ", element_size(dtype));
  }
}

void masked_fill_kernel(const TensorIterator& it, const Scalar& value) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.dtype(0), masked_fill_stub, it, value);
  EMBER_DISPATCH_KERNEL_TYPES(it.dtype(0), "masked_fill_", [&] {
    const scalar_t v = value.is_floating_point() || value.is_big_unsigned() ? convert<scalar_t>(value.to<double>())
                       : value.is_bool()                                    ? convert<scalar_t>(value.to<bool>())
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

// ---- gather / scatter / index_add family (Note [Scatter/gather geometry]) ----

// One X element and one Y element.
template <typename T, ScatterOp M>
struct SgOp {
  using acc_t = opmath_t<T>;
  acc_t alpha{};

  static bool nan(acc_t v) {
    if constexpr (std::is_floating_point_v<acc_t>) {
      return std::isnan(v);
    } else {
      return false;
    }
  }

  inline void operator()(T* x, T* y) const {
    if constexpr (M == ScatterOp::Gather) {
      *y = *x;
    } else if constexpr (M == ScatterOp::Assign) {
      *x = *y;
    } else if constexpr (is_complex_t<T>::value) {
      // Sums only (the caller's dispatch); with alpha, PyTorch's product
      // y * alpha rounds every step (it is compiled without fused
      // multiply-adds), as `rounded` makes sure here.
      if constexpr (M == ScatterOp::SumAlpha) {
        const T& b = *y;
        const auto rounded = [](auto v) {
#if defined(__x86_64__) && defined(__SSE2__)
          asm volatile("" : "+x"(v));
#endif
          return v;
        };
        *x += T(rounded(b.real() * alpha.real()) - rounded(b.imag() * alpha.imag()),
                rounded(b.real() * alpha.imag()) + rounded(b.imag() * alpha.real()));
      } else {
        *x += *y;
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      if constexpr (M == ScatterOp::Prod || M == ScatterOp::Min) {
        *x = *x && *y;
      } else {
        *x = *x || *y;
      }
    } else {
      const acc_t a = convert<acc_t>(*x), b = convert<acc_t>(*y);
      if constexpr (M == ScatterOp::Sum) {
        *x = convert<T>(a + b);
      } else if constexpr (M == ScatterOp::SumAlpha) {
        // PyTorch's add with alpha fuses the multiply-add for floating types;
        // see Note [index_add with alpha] for float16 and bfloat16.
        if constexpr (!std::is_same_v<acc_t, T>) {
          *x = T(a + static_cast<float>(T(alpha * b)));
        } else if constexpr (std::is_floating_point_v<acc_t>) {
          *x = convert<T>(std::fma(b, alpha, a));
        } else {
          *x = convert<T>(a + alpha * b);
        }
      } else if constexpr (M == ScatterOp::Prod) {
        *x = convert<T>(a * b);
      } else if constexpr (M == ScatterOp::Max) {
        if (nan(b) || (!nan(a) && b > a)) *x = *y;
      } else {
        if (nan(b) || (!nan(a) && b < a)) *x = *y;
      }
    }
  }
};

// Note [index_add with alpha]
// index_add_ with alpha != 1 adds slice by slice with PyTorch's add
// (Note [16-bit add with alpha] in BinaryOpsKernel.cpp), whose
// float16/bfloat16 loop rounds alpha to the type and then has two forms: in
// blocks of 32 elements of a unit-stride run, a + alpha * b in float (the
// product is exact); in the rest of the run, and in runs with other strides,
// the product is rounded to the type before it is added. A run is the inner
// C dim (the same as PyTorch's coalesced slice); `vec_n` elements of it, counted
// from its start and not from a thread's share, take the first form.
template <typename T>
inline void add_alpha_vector_form(T* x, const T* y, float alpha, int64_t n) {
  for (int64_t k = 0; k < n; ++k) x[k] = T(static_cast<float>(x[k]) + alpha * static_cast<float>(y[k]));
}

// n elements of X (stride sx) and Y (stride sy), one op each; vec_n: Note
// [16-bit add with alpha].
template <typename T, ScatterOp M>
inline void sg_row(const SgOp<T, M>& op, T* x, int64_t sx, T* y, int64_t sy, int64_t n, int64_t vec_n = 0) {
  if constexpr (M == ScatterOp::SumAlpha && !std::is_same_v<opmath_t<T>, T>) {
    if (sx == 1 && sy == 1 && vec_n > 0) {
      add_alpha_vector_form(x, y, op.alpha, vec_n);
      x += vec_n, y += vec_n, n -= vec_n;
    }
  }
  if constexpr (M == ScatterOp::Gather) {
    if (sx == 1 && sy == 1) {
      std::memcpy(y, x, n * sizeof(T));
    } else if (sy == 1) {
      for (int64_t k = 0; k < n; ++k) y[k] = x[k * sx];
    } else {
      for (int64_t k = 0; k < n; ++k) y[k * sy] = x[k * sx];
    }
  } else if (sx == 1 && sy == 1) {
    if constexpr (M == ScatterOp::Assign) {
      std::memmove(x, y, n * sizeof(T));
    } else {
      T* __restrict xr = x;
      T* __restrict yr = y;
      for (int64_t k = 0; k < n; ++k) op(xr + k, yr + k);
    }
  } else if (sx == 1 && sy == 0) {
    T v = *y;
    if constexpr (M == ScatterOp::Assign) {
      for (int64_t k = 0; k < n; ++k) x[k] = v;
    } else {
      for (int64_t k = 0; k < n; ++k) op(x + k, &v);
    }
  } else {
    for (int64_t k = 0; k < n; ++k) op(x + k * sx, y + k * sy);
  }
}

// True when every one of the n index values (stride si) lies in [0, bound):
// x and bound - 1 - x then both have a clear top bit (in unsigned arithmetic,
// so the loop vectorises without 64-bit compares).
inline bool sg_indices_ok(const int64_t* ix, int64_t si, int64_t n, int64_t bound) {
  const uint64_t last = static_cast<uint64_t>(bound) - 1;
  uint64_t acc = 0;
  if (si == 1) {
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t x = static_cast<uint64_t>(ix[k]);
      acc |= x | (last - x);
    }
  } else {
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t x = static_cast<uint64_t>(ix[k * si]);
      acc |= x | (last - x);
    }
  }
  return bound > 0 && (acc >> 63) == 0;
}

// Positions along J (C empty): X[x * j_x] op Y[j * j_y] for j in [j0, j1).
template <typename T, ScatterOp M>
bool sg_j_inner(const SgOp<T, M>& op, const ScatterGeometry& g, T* X, T* Y, const int64_t* I, int64_t j0, int64_t j1) {
  const int64_t jx = g.j_x, jy = g.j_y, ji = g.j_i;
  const int64_t n = j1 - j0;
  if (!g.checked && !sg_indices_ok(I + j0 * ji, ji, n, g.bound)) return false;
  if constexpr (M == ScatterOp::Gather) {
    if (ji == 1 && jy == 1 && jx == 1) {
      const int64_t* __restrict ip = I;
      T* __restrict yp = Y;
      const T* __restrict xp = X;
      for (int64_t j = j0; j < j1; ++j) yp[j] = xp[ip[j]];
      return true;
    }
  }
  if (ji == 1 && jy == 1 && jx == 1) {
    for (int64_t j = j0; j < j1; ++j) op(X + I[j], Y + j);
  } else if (ji == 1 && jy == 1) {
    for (int64_t j = j0; j < j1; ++j) op(X + I[j] * jx, Y + j);
  } else {
    for (int64_t j = j0; j < j1; ++j) op(X + I[j * ji] * jx, Y + j * jy);
  }
  return true;
}

template <typename T, ScatterOp M>
struct SgRunner {
  const ScatterGeometry& g;
  SgOp<T, M> op;
  T* X;
  T* Y;
  const int64_t* I;

  // Element offsets of outer position a in X, Y and the index.
  void a_offsets(int64_t a, int64_t& ox, int64_t& oy, int64_t& oi) const {
    ox = oy = oi = 0;
    for (size_t d = g.a_sizes.size(); d-- > 0;) {
      const int64_t k = a % g.a_sizes[d];
      a /= g.a_sizes[d];
      ox += k * g.a_x[d];
      oy += k * g.a_y[d];
      oi += k * g.a_i[d];
    }
  }

  // Lines a in [a0, a1), positions j in [j0, j1), innermost C positions
  // [c0, c1) of each.
  bool run(int64_t a0, int64_t a1, int64_t j0, int64_t j1, int64_t c0, int64_t c1) const {
    const size_t ncd = g.c_sizes.size();
    for (int64_t a = a0; a < a1; ++a) {
      int64_t ox, oy, oi;
      a_offsets(a, ox, oy, oi);
      if (ncd == 0) {
        if (!sg_j_inner<T, M>(op, g, X + ox, Y + oy, I + oi, j0, j1)) return false;
        continue;
      }
      const int64_t cx = g.c_x[ncd - 1], cy = g.c_y[ncd - 1], ci = g.c_i[ncd - 1];
      int64_t outer = 1;
      for (size_t d = 0; d + 1 < ncd; ++d) outer *= g.c_sizes[d];
      const int64_t n = c1 - c0;
      DimVector ctr(ncd - 1, 0);
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t* ij = I + oi + j * g.j_i + c0 * ci;
        T* xj = X + ox + c0 * cx;
        T* yj = Y + oy + j * g.j_y + c0 * cy;
        // Odometer over the outer C dims (ctr is back at zero after each j).
        int64_t px = 0, py = 0, pi = 0;
        for (int64_t r = 0; r < outer; ++r) {
          if (ci == 0) {
            const int64_t x = ij[pi];
            if (!g.checked && static_cast<uint64_t>(x) >= static_cast<uint64_t>(g.bound)) return false;
            int64_t vec_n = 0;
            if constexpr (M == ScatterOp::SumAlpha && !std::is_same_v<opmath_t<T>, T>) {
              const int64_t run = g.c_sizes[ncd - 1];
              vec_n = std::clamp<int64_t>(run - run % 32 - c0, 0, n);
            }
            sg_row<T, M>(op, xj + px + x * g.j_x, cx, yj + py, cy, n, vec_n);
          } else {
            if (!g.checked && !sg_indices_ok(ij + pi, ci, n, g.bound)) return false;
            const int64_t* ip = ij + pi;
            T* xp = xj + px;
            T* yp = yj + py;
            const int64_t jx = g.j_x;
            if (ci == 1 && cx == 1 && cy == 1) {
              for (int64_t k = 0; k < n; ++k) op(xp + ip[k] * jx + k, yp + k);
            } else {
              for (int64_t k = 0; k < n; ++k) op(xp + ip[k * ci] * jx + k * cx, yp + k * cy);
            }
          }
          for (size_t d = ncd - 1; d-- > 0;) {
            px += g.c_x[d];
            py += g.c_y[d];
            pi += g.c_i[d];
            if (++ctr[d] < g.c_sizes[d]) break;
            px -= g.c_x[d] * g.c_sizes[d];
            py -= g.c_y[d] * g.c_sizes[d];
            pi -= g.c_i[d] * g.c_sizes[d];
            ctr[d] = 0;
          }
        }
      }
    }
    return true;
  }
};

template <typename T, ScatterOp M>
bool sg_grouped(const SgOp<T, M>& op, const ScatterGeometry& g, T* X, T* Y, const int64_t* I, bool parallel);

template <typename T, ScatterOp M>
bool sg_run(const ScatterGeometry& g, char* x, char* y, const int64_t* index, const Scalar& alpha) {
  SgRunner<T, M> r{g, {}, reinterpret_cast<T*>(x), reinterpret_cast<T*>(y), index};
  if constexpr (M == ScatterOp::SumAlpha && !std::is_same_v<T, bool>) {
    if constexpr (!std::is_same_v<opmath_t<T>, T>) {
      r.op.alpha = static_cast<float>(T(static_cast<float>(alpha.to_double())));
    } else if constexpr (is_complex_t<T>::value) {
      r.op.alpha = alpha.to<T>();
    } else {
      r.op.alpha = std::is_floating_point_v<T> ? static_cast<T>(alpha.to_double()) : static_cast<T>(alpha.to_long());
    }
  }
  int64_t na = 1, nc_outer = 1;
  for (int64_t s : g.a_sizes) na *= s;
  const size_t ncd = g.c_sizes.size();
  const int64_t nc = ncd ? g.c_sizes[ncd - 1] : 1;
  for (size_t d = 0; d + 1 < ncd; ++d) nc_outer *= g.c_sizes[d];
  const int64_t work = na * g.nj * nc * nc_outer;
  if (work == 0) return true;
  constexpr int64_t kGrain = 32768;
  const int nt = get_num_threads();
  const int64_t nj = g.nj;
  if (!g.parallel || work < 2 * kGrain || nt <= 1) return r.run(0, na, 0, nj, 0, nc);
  std::atomic<bool> ok{true};
  if (na >= nt || (ncd == 0 && M != ScatterOp::Gather)) {
    // Split the outer lines.
    const int64_t per_a = std::max<int64_t>(1, work / na);
    parallel_for(0, na, std::max<int64_t>(1, kGrain / per_a), [&](int64_t a0, int64_t a1) {
      if (!r.run(a0, a1, 0, nj, 0, nc)) ok = false;
    });
  } else if (M == ScatterOp::Gather) {
    // Few outer lines: a gather's positions j are independent.
    const int64_t per_j = std::max<int64_t>(1, work / nj);
    parallel_for(0, nj, std::max<int64_t>(1, kGrain / per_j), [&](int64_t j0, int64_t j1) {
      if (!r.run(0, na, j0, j1, 0, nc)) ok = false;
    });
  } else if (index_is_one_vector(g)) {
    // Few outer lines, one index vector: threads own whole X rows (Note [Rows
    // grouped by target]).
    return sg_grouped<T, M>(r.op, g, r.X, r.Y, index, true);
  } else {
    // Few outer lines: split the innermost C dim, every thread walking all of J.
    const int64_t per_c = std::max<int64_t>(1, work / nc);
    parallel_for(0, nc, std::max<int64_t>(16, kGrain / per_c), [&](int64_t c0, int64_t c1) {
      if (!r.run(0, na, 0, nj, c0, c1)) ok = false;
    });
  }
  return ok;
}

// n 16-bit floats (stride s) to float and back; unit strides take the
// bulk conversions of MathLoops.h.
template <typename T>
inline void load_floats(const T* in, int64_t s, float* out, int64_t n) {
  if (s == 1) return cvt_to_float(in, out, n);
  for (int64_t k = 0; k < n; ++k) out[k] = static_cast<float>(in[k * s]);
}

template <typename T>
inline void store_floats(const float* in, T* out, int64_t s, int64_t n) {
  if (s == 1) return cvt_from_float(in, out, n);
  for (int64_t k = 0; k < n; ++k) out[k * s] = T(in[k]);
}

// Note [Rows grouped by target]
// When the index is one vector along J (the same at every outer and inner
// position) and C is not empty, every j moves whole C rows into X row
// index[j]. Grouping the positions j by target (a stable sort keeps their
// order) lets each X row be finished in one go, and lets threads own whole X
// rows instead of slices of every row. Each element still receives its
// updates in increasing j, so results equal the plain walk.
// Note [Float sums of 16-bit rows]
// PyTorch sums 16-bit floats scattered into one element in float, rounding
// once: with rows grouped by target, each one is summed in a float buffer (X
// read and written once, Y read once, nothing else allocated).
struct TargetGroups {
  std::vector<int64_t> order, first, targets;  // j by target; group t is order[first[t] .. first[t + 1])
};

TargetGroups group_by_target(const int64_t* I, int64_t ji, int64_t nj, int64_t bound) {
  TargetGroups r;
  r.order.resize(nj);
  if (bound <= 4 * nj + 1024) {
    std::vector<int64_t> count(bound + 1, 0);
    for (int64_t j = 0; j < nj; ++j) ++count[I[j * ji] + 1];
    for (int64_t x = 0; x < bound; ++x) {
      if (count[x + 1]) r.targets.push_back(x), r.first.push_back(count[x]);
      count[x + 1] += count[x];
    }
    for (int64_t j = 0; j < nj; ++j) r.order[count[I[j * ji]]++] = j;
  } else {
    for (int64_t j = 0; j < nj; ++j) r.order[j] = j;
    std::stable_sort(r.order.begin(), r.order.end(), [&](int64_t p, int64_t q) { return I[p * ji] < I[q * ji]; });
    for (int64_t k = 0; k < nj; ++k) {
      const int64_t x = I[r.order[k] * ji];
      if (k == 0 || x != I[r.order[k - 1] * ji]) r.targets.push_back(x), r.first.push_back(k);
    }
  }
  r.first.push_back(nj);
  return r;
}

// Note [Rows grouped by target] over every outer line; FloatSum sums in a
// float buffer per row. Threads (when parallel) split the targets.
template <typename T, ScatterOp M>
bool sg_grouped(const SgOp<T, M>& op, const ScatterGeometry& g, T* X, T* Y, const int64_t* I, bool parallel) {
  const int64_t nj = g.nj, ji = g.j_i;
  if (!g.checked && !sg_indices_ok(I, ji, nj, g.bound)) return false;
  const TargetGroups tg = group_by_target(I, ji, nj, g.bound);
  const int64_t ntargets = static_cast<int64_t>(tg.targets.size());
  int64_t na = 1, outer = 1;
  for (int64_t sz : g.a_sizes) na *= sz;
  const size_t ncd = g.c_sizes.size();
  for (size_t d = 0; d + 1 < ncd; ++d) outer *= g.c_sizes[d];
  const int64_t n = g.c_sizes[ncd - 1], cx = g.c_x[ncd - 1], cy = g.c_y[ncd - 1];
  constexpr bool kFloatSum = M == ScatterOp::FloatSum;
  auto body = [&](int64_t t0, int64_t t1) {
    std::vector<float> buf(kFloatSum ? 2 * n : 0);
    float* b = buf.data();
    float* tmp = b + n;
    DimVector ctr(ncd - 1, 0);
    for (int64_t a = 0; a < na; ++a) {
      int64_t ox = 0, oy = 0;
      for (int64_t d = static_cast<int64_t>(g.a_sizes.size()) - 1, r = a; d >= 0; --d) {
        const int64_t k = r % g.a_sizes[d];
        r /= g.a_sizes[d];
        ox += k * g.a_x[d], oy += k * g.a_y[d];
      }
      for (int64_t t = t0; t < t1; ++t) {
        int64_t px = ox + tg.targets[t] * g.j_x, py = oy;
        for (int64_t r = 0; r < outer; ++r) {
          T* xr = X + px;
          if constexpr (kFloatSum) load_floats(xr, cx, b, n);
          for (int64_t q = tg.first[t]; q < tg.first[t + 1]; ++q) {
            T* yr = Y + py + tg.order[q] * g.j_y;
            if constexpr (!kFloatSum) {
              int64_t vec_n = 0;
              if constexpr (M == ScatterOp::SumAlpha && !std::is_same_v<opmath_t<T>, T>) vec_n = n - n % 32;
              sg_row<T, M>(op, xr, cx, yr, cy, n, vec_n);
            } else if (std::is_same_v<T, BFloat16> && cy == 1) {
              for (int64_t k = 0; k < n; ++k) {
                const uint32_t u = uint32_t(reinterpret_cast<const uint16_t*>(yr)[k]) << 16;
                float f;
                std::memcpy(&f, &u, 4);
                b[k] += f;
              }
            } else {
              load_floats(yr, cy, tmp, n);
              for (int64_t k = 0; k < n; ++k) b[k] += tmp[k];
            }
          }
          if constexpr (kFloatSum) store_floats(b, xr, cx, n);
          for (size_t d = ncd - 1; d-- > 0;) {
            px += g.c_x[d], py += g.c_y[d];
            if (++ctr[d] < g.c_sizes[d]) break;
            px -= g.c_x[d] * g.c_sizes[d], py -= g.c_y[d] * g.c_sizes[d];
            ctr[d] = 0;
          }
        }
      }
    }
  };
  const int64_t per_target =
      std::max<int64_t>(1, na * outer * n * std::max<int64_t>(1, nj / std::max<int64_t>(ntargets, 1)));
  if (parallel) {
    parallel_for(0, ntargets, std::max<int64_t>(1, 32768 / per_target), body);
  } else {
    body(0, ntargets);
  }
  return true;
}

bool scatter_gather_kernel(const ScatterGeometry& g, char* x, char* y, const int64_t* index, ScalarType dtype,
                           ScatterOp op, const Scalar& alpha) {
  if (op == ScatterOp::Gather || op == ScatterOp::Assign) {
    // Copies move bytes: one instantiation per element size serves every dtype.
    auto by_size = [&](auto tag) {
      using U = decltype(tag);
      return op == ScatterOp::Gather ? sg_run<U, ScatterOp::Gather>(g, x, y, index, alpha)
                                     : sg_run<U, ScatterOp::Assign>(g, x, y, index, alpha);
    };
    switch (element_size(dtype)) {
      case 1: return by_size(uint8_t{});
      case 2: return by_size(uint16_t{});
      case 4: return by_size(uint32_t{});
      case 8: return by_size(uint64_t{});
      case 16: return by_size(std::complex<double>{});
      default: EMBER_INTERNAL_ASSERT(false, "gather/scatter: element size ", element_size(dtype));
    }
  }
  EMBER_USE_BASELINE_KERNEL_FOR(dtype, scatter_gather_stub, g, x, y, index, dtype, op, alpha);
  if (op == ScatterOp::FloatSum) {
    EMBER_INTERNAL_ASSERT(dtype == ScalarType::Half || dtype == ScalarType::BFloat16, "FloatSum: 16-bit floats only");
    EMBER_INTERNAL_ASSERT(index_is_one_vector(g), "FloatSum: the index must be one vector along the scattered dim");
    if (dtype == ScalarType::Half) {
      return sg_grouped<Half, ScatterOp::FloatSum>({}, g, reinterpret_cast<Half*>(x), reinterpret_cast<Half*>(y), index,
                                                   g.parallel);
    }
    return sg_grouped<BFloat16, ScatterOp::FloatSum>({}, g, reinterpret_cast<BFloat16*>(x),
                                                     reinterpret_cast<BFloat16*>(y), index, g.parallel);
  }
  if (is_complex_type(dtype) && (op == ScatterOp::Sum || op == ScatterOp::SumAlpha)) {
    return EMBER_DISPATCH_COMPLEX_TYPES(dtype, "scatter", [&]() -> bool {
      return op == ScatterOp::Sum ? sg_run<scalar_t, ScatterOp::Sum>(g, x, y, index, alpha)
                                  : sg_run<scalar_t, ScatterOp::SumAlpha>(g, x, y, index, alpha);
    });
  }
  return EMBER_DISPATCH_KERNEL_TYPES(dtype, "scatter", [&]() -> bool {
    switch (op) {
      case ScatterOp::Sum: return sg_run<scalar_t, ScatterOp::Sum>(g, x, y, index, alpha);
      case ScatterOp::SumAlpha: return sg_run<scalar_t, ScatterOp::SumAlpha>(g, x, y, index, alpha);
      case ScatterOp::Prod: return sg_run<scalar_t, ScatterOp::Prod>(g, x, y, index, alpha);
      case ScatterOp::Max: return sg_run<scalar_t, ScatterOp::Max>(g, x, y, index, alpha);
      default: return sg_run<scalar_t, ScatterOp::Min>(g, x, y, index, alpha);
    }
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(index_stub, &index_kernel);
EMBER_REGISTER_DISPATCH(masked_fill_stub, &masked_fill_kernel);
EMBER_REGISTER_DISPATCH(scatter_gather_stub, &scatter_gather_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
