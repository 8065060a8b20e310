#pragma once
// Floating sums that add in PyTorch's order, so that results agree bit for
// bit (see Note [Sum order]), and the driver PyTorch's vectorised reductions
// share. Included only by cpu/kernels/Reduce{,Stats}Kernel.cpp.
//
// Note [Sum order]
// PyTorch's CPU sum walks the input as a reduction iterator: reduced dims
// first (innermost first), then kept dims (innermost first); dims that step
// evenly are merged. The two innermost dims form 2-D blocks; each block is
// summed and added into the (zeroed) output element, which keeps its own
// dtype between blocks. Inside a block:
//  - a contiguous reduced run of at least one vector: vectors of 32 bytes
//    are summed as rows of four interleaved vector accumulators (row_sum),
//    the scalar tail is added to 0, then the vector lanes one by one;
//  - contiguous kept columns (at least one vector): groups of four vectors
//    of columns share one multi_row_sum, then single vectors, then scalars;
//  - otherwise scalar loops of the same two shapes.
// multi_row_sum keeps four levels of partial sums: each block of 2^p rows
// (p = max(4, ceil(log2 n) / 4)) is added into the next level, which is
// carried further every 2^p blocks, so the error grows slowly with n.
// Long reductions run in parallel as PyTorch does with the same number of
// threads: a single output splits the flat index into one contiguous piece
// per thread (pieces of at least 32768 elements), whose sums are then summed
// as a reduction of their own; several outputs split one kept dim, so each
// output is still added in the serial order.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "ember/cpu/kernels/ReduceEngine.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace sum_order {

// PyTorch's vector width (AVX2 and its default build: 32 bytes).
constexpr int64_t kVecBytes = 32;
constexpr int64_t kGrain = 32768;

template <typename A>
struct Vec;
template <>
struct Vec<float> {
  typedef float type __attribute__((vector_size(kVecBytes)));
};
template <>
struct Vec<double> {
  typedef double type __attribute__((vector_size(kVecBytes)));
};

inline int64_t ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  return 64 - __builtin_clzll(static_cast<uint64_t>(x - 1));
}

// acc[k] = the leveled sum over rows i < n of load(i, k), k < kRows.
template <typename E, int kRows, typename Load>
inline void multi_row_sum(int64_t n, const Load& load, E* out) {
  constexpr int kLevels = 4;
  const int64_t power = std::max<int64_t>(4, ceil_log2(n) / kLevels);
  const int64_t step = int64_t(1) << power;
  const int64_t mask = step - 1;
  E acc[kLevels][kRows];
  for (int l = 0; l < kLevels; ++l) {
    for (int k = 0; k < kRows; ++k) acc[l][k] = E{};
  }
  int64_t i = 0;
  while (i + step <= n) {
    // Level 0 in locals, so it stays in registers.
    // The row loop unrolled, so the accumulators stay in registers.
    E a[kRows];
#pragma GCC unroll 16
    for (int k = 0; k < kRows; ++k) a[k] = acc[0][k];
    for (int64_t j = 0; j < step; ++j, ++i) {
#pragma GCC unroll 16
      for (int k = 0; k < kRows; ++k) a[k] += load(i, k);
    }
    for (int k = 0; k < kRows; ++k) acc[0][k] = a[k];
    for (int l = 1; l < kLevels; ++l) {
      for (int k = 0; k < kRows; ++k) {
        acc[l][k] += acc[l - 1][k];
        acc[l - 1][k] = E{};
      }
      if ((i & (mask << (l * power))) != 0) break;
    }
  }
  for (; i < n; ++i) {
    for (int k = 0; k < kRows; ++k) acc[0][k] += load(i, k);
  }
  for (int l = 1; l < kLevels; ++l) {
    for (int k = 0; k < kRows; ++k) acc[0][k] += acc[l][k];
  }
  for (int k = 0; k < kRows; ++k) out[k] = acc[0][k];
}

// multi_row_sum over rows of nk columns at once: each column adds in the same
// order as in multi_row_sum (the level schedule depends only on the row), but
// a row is read once for all columns, in memory order.
template <typename E, typename Load>
inline void multi_row_sum_wide(int64_t n, int64_t nk, const Load& load, E* out) {
  constexpr int kLevels = 4;
  constexpr int64_t kMaxCols = 64;
  const int64_t power = std::max<int64_t>(4, ceil_log2(n) / kLevels);
  const int64_t step = int64_t(1) << power;
  const int64_t mask = step - 1;
  for (int64_t k0 = 0; k0 < nk; k0 += kMaxCols) {
    const int64_t m = std::min(kMaxCols, nk - k0);
    E acc[kLevels][kMaxCols];
    for (int l = 0; l < kLevels; ++l) {
      for (int64_t k = 0; k < m; ++k) acc[l][k] = E{};
    }
    int64_t i = 0;
    while (i + step <= n) {
      for (int64_t j = 0; j < step; ++j, ++i) {
        for (int64_t k = 0; k < m; ++k) acc[0][k] += load(i, k0 + k);
      }
      for (int l = 1; l < kLevels; ++l) {
        for (int64_t k = 0; k < m; ++k) {
          acc[l][k] += acc[l - 1][k];
          acc[l - 1][k] = E{};
        }
        if ((i & (mask << (l * power))) != 0) break;
      }
    }
    for (; i < n; ++i) {
      for (int64_t k = 0; k < m; ++k) acc[0][k] += load(i, k0 + k);
    }
    for (int l = 1; l < kLevels; ++l) {
      for (int64_t k = 0; k < m; ++k) acc[0][k] += acc[l][k];
    }
    for (int64_t k = 0; k < m; ++k) out[k0 + k] = acc[0][k];
  }
}

// Sum of load(i), i < n, as four interleaved multi_row_sum rows.
template <typename E, typename Load>
inline E row_sum(int64_t n, const Load& load) {
  const int64_t n4 = n / 4;
  E part[4];
  multi_row_sum<E, 4>(n4, [&](int64_t i, int k) { return load(i * 4 + k); }, part);
  for (int64_t i = n4 * 4; i < n; ++i) part[0] += load(i);
  for (int k = 1; k < 4; ++k) part[0] += part[k];
  return part[0];
}

// Sums of T elements into O outputs, accumulating in A. kWide: T is read as
// A with A's vector width (PyTorch's mean of 16-bit floats sums a float copy).
template <typename T, typename O, bool kNan, bool kWide>
struct Summer {
  using A = opmath_t<T>;
  using V = typename Vec<A>::type;
  static constexpr int64_t W = kVecBytes / static_cast<int64_t>(sizeof(A));
  static constexpr bool kNarrow = !std::is_same_v<T, A> && !kWide;
  // Elements in one vector of T (16-bit floats: two per float lane).
  static constexpr int64_t kVecT = kNarrow ? kVecBytes / static_cast<int64_t>(sizeof(T)) : W;

  static A scalar(const T& v) {
    A a = static_cast<A>(load(v));
    if constexpr (kNan) return a != a ? A(0) : a;
    return a;
  }
  // Lanes of one vector of a contiguous reduced run (kVecT elements).
  static V inner_vec(const T* x) {
    V v;
    if constexpr (std::is_same_v<T, A>) {
      std::memcpy(&v, x, sizeof v);
      if constexpr (kNan) v = v != v ? V{} : v;
    } else if constexpr (!kNarrow) {
      for (int64_t k = 0; k < W; ++k) v[k] = scalar(x[k]);
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      // Halves of the vector added lane by lane.
      for (int64_t k = 0; k < W; ++k) v[k] = scalar(x[k]) + scalar(x[k + W]);
    } else {
      // Neighbouring pairs added to 0 one after the other.
      for (int64_t k = 0; k < W; ++k) {
        A a = A(0);
        const A p = load(x[2 * k]), q = load(x[2 * k + 1]);
        a = (kNan && p != p) ? a : a + p;
        a = (kNan && q != q) ? a : a + q;
        v[k] = a;
      }
    }
    return v;
  }
  // W contiguous kept columns of one row.
  static V outer_vec(const T* x) {
    V v;
    if constexpr (std::is_same_v<T, A>) {
      std::memcpy(&v, x, sizeof v);
      if constexpr (kNan) v = v != v ? V{} : v;
    } else {
      for (int64_t k = 0; k < W; ++k) v[k] = scalar(x[k]);
    }
    return v;
  }
  static void store(O* out, int64_t i, A v) { out[i] = static_cast<O>(static_cast<A>(load(out[i])) + v); }
  static void store_vec(O* out, int64_t i, int64_t os, const V& v) {
    for (int64_t k = 0; k < W; ++k) store(out, i + k * os, v[k]);
  }

  // One 2-D block: size0 x size1 elements, strides in elements.
  static void block(const T* in, O* out, int64_t is0, int64_t is1, int64_t os0, int64_t os1, int64_t n0, int64_t n1) {
    if (os0 != 0 && os1 == 0) {
      std::swap(is0, is1);
      std::swap(os0, os1);
      std::swap(n0, n1);
    }
    if (os0 != 0 && os1 != 0) {
      // Nothing reduced: out = out + in.
      for (int64_t j = 0; j < n1; ++j) {
        for (int64_t i = 0; i < n0; ++i) {
          O& o = out[j * os1 + i * os0];
          const T& x = in[j * is1 + i * is0];
          if constexpr (kWide) {
            o = static_cast<O>(load(o) + scalar(x));
          } else if constexpr (kNan) {
            const A a = load(o), b = load(x);
            o = static_cast<O>((a != a ? A(0) : a) + (b != b ? A(0) : b));
          } else {
            o = static_cast<O>(load(o) + load(x));
          }
        }
      }
      return;
    }
    const int64_t os = os1;
    if (is0 == 1 && n0 >= kVecT) {
      const int64_t nvec = n0 / kVecT;
      for (int64_t j = 0; j < n1; ++j) {
        const T* row = in + j * is1;
        const V acc = row_sum<V>(nvec, [row](int64_t i) { return inner_vec(row + i * kVecT); });
        A fin = A(0);
        for (int64_t k = nvec * kVecT; k < n0; ++k) fin += scalar(row[k]);
        for (int64_t k = 0; k < W; ++k) fin += acc[k];
        store(out, j * os, fin);
      }
    } else if (is1 == 1 && n1 >= kVecT) {
      // Groups of four vectors of columns (PyTorch gives each group one
      // multi_row_sum; the columns are independent, so all groups share rows).
      int64_t j = n1 / (4 * W) * (4 * W);
      if (j > 0) {
        std::vector<V> sums(static_cast<size_t>(j / W));
        multi_row_sum_wide<V>(
            n0, j / W, [in, is0](int64_t i, int64_t k) { return outer_vec(in + i * is0 + k * W); }, sums.data());
        for (int64_t k = 0; k < j / W; ++k) store_vec(out, k * W * os, os, sums[k]);
      }
      for (; j + W <= n1; j += W) {
        const T* col = in + j;
        store_vec(out, j * os, os, row_sum<V>(n0, [col, is0](int64_t i) { return outer_vec(col + i * is0); }));
      }
      for (; j < n1; ++j) {
        const T* col = in + j;
        store(out, j * os, row_sum<A>(n0, [col, is0](int64_t i) { return scalar(col[i * is0]); }));
      }
    } else if (is0 < is1) {
      for (int64_t j = 0; j < n1; ++j) {
        const T* row = in + j * is1;
        store(out, j * os, row_sum<A>(n0, [row, is0](int64_t i) { return scalar(row[i * is0]); }));
      }
    } else {
      int64_t j = 0;
      for (; j + 3 < n1; j += 4) {
        const T* col = in + j * is1;
        A sums[4];
        multi_row_sum<A, 4>(n0, [col, is0, is1](int64_t i, int k) { return scalar(col[i * is0 + k * is1]); }, sums);
        for (int k = 0; k < 4; ++k) store(out, (j + k) * os, sums[k]);
      }
      for (; j < n1; ++j) {
        const T* col = in + j * is1;
        store(out, j * os, row_sum<A>(n0, [col, is0](int64_t i) { return scalar(col[i * is0]); }));
      }
    }
  }
};

// The iteration shape: dim 0 innermost; out strides 0 on reduced dims.
struct Geometry {
  int nd = 0;
  int64_t size[34] = {};
  int64_t in_stride[34] = {};
  int64_t out_stride[34] = {};
  int64_t numel = 1;
  bool reduced(int d) const { return out_stride[d] == 0; }
};

inline Geometry geometry_of(const ReducePlan& p) {
  Geometry g;
  const int nr = static_cast<int>(p.red_sizes.size());
  const int no = static_cast<int>(p.out_sizes.size());
  for (int r = nr - 1; r >= 0; --r) {
    g.size[g.nd] = p.red_sizes[r];
    g.in_stride[g.nd] = p.red_strides[r];
    g.out_stride[g.nd++] = 0;
  }
  int64_t os = 1;
  for (int o = no - 1; o >= 0; --o) {
    g.size[g.nd] = p.out_sizes[o];
    g.in_stride[g.nd] = p.out_strides[o];
    g.out_stride[g.nd++] = os;
    os *= p.out_sizes[o];
  }
  while (g.nd < 2) {
    g.size[g.nd] = 1;
    g.in_stride[g.nd] = 0;
    g.out_stride[g.nd++] = 0;
  }
  for (int d = 0; d < g.nd; ++d) g.numel *= g.size[d];
  return g;
}

// The flat range [begin, end) of g, in 2-D blocks as PyTorch's serial loop.
// s.block(in, out, is0, is1, os0, os1, n0, n1) reduces one block into out.
template <typename S>
void run_range(const S& s, const Geometry& g, const typename S::in_t* in, typename S::out_t* out, int64_t begin,
               int64_t end) {
  int64_t idx[34] = {};
  int64_t rest = begin;
  for (int d = 0; d < g.nd; ++d) {
    idx[d] = rest % g.size[d];
    rest /= g.size[d];
  }
  int64_t offset = begin;
  while (offset < end) {
    int64_t in_off = 0, out_off = 0;
    for (int d = 0; d < g.nd; ++d) {
      in_off += idx[d] * g.in_stride[d];
      out_off += idx[d] * g.out_stride[d];
    }
    const int64_t step0 = std::min(g.size[0] - idx[0], end - offset);
    int64_t step1 = 1;
    if (step0 == g.size[0]) step1 = std::min(g.size[1] - idx[1], (end - offset) / g.size[0]);
    s.block(in + in_off, out + out_off, g.in_stride[0], g.in_stride[1], g.out_stride[0], g.out_stride[1], step0, step1);
    offset += step0 * step1;
    int d = 0;
    int64_t carry = step0;
    if (step1 != 1) {
      d = 1;
      carry = step1;
    }
    for (; d < g.nd && carry > 0; ++d) {
      int64_t v = idx[d] + carry;
      carry = 0;
      if (v >= g.size[d]) {
        v -= g.size[d];
        carry = 1;
      }
      idx[d] = v;
    }
  }
}

template <typename T, typename O, bool kNan, bool kWide>
struct Kernel : Summer<T, O, kNan, kWide> {
  using in_t = T;
  using out_t = O;
};

// Reduces the plan's input into out (num_outputs elements of K::out_t, which
// the caller has set to the identity) as PyTorch's parallel reduction loop
// does: K reduces blocks of the input; a single output read by several
// threads gets one partial per thread, which KFinal then reduces into out.
template <typename K, typename KFinal>
void reduce_in_torch_order(const ReducePlan& p, typename K::out_t* out, const K& k, const KFinal& final_k) {
  using T = typename K::in_t;
  using O = typename K::out_t;
  const T* in = static_cast<const T*>(p.in);
  const int64_t nout = p.num_outputs;
  if (nout == 0 || p.reduce_numel == 0) return;
  const Geometry g = geometry_of(p);
  const int nthreads = get_num_threads();
  if (g.numel < kGrain || nthreads <= 1 || in_parallel_region()) {
    run_range(k, g, in, out, 0, g.numel);
    return;
  }
  if (nout == 1) {
    // One piece per thread, then the pieces reduced as an input of their own.
    const int64_t pieces = std::min<int64_t>(nthreads, (g.numel + kGrain - 1) / kGrain);
    const int64_t chunk = (g.numel + pieces - 1) / pieces;
    std::vector<O> partial(static_cast<size_t>(nthreads), out[0]);
    parallel_for(0, pieces, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t s = t * chunk, end = std::min(g.numel, s + chunk);
        if (s < end) run_range(k, g, in, &partial[t], s, end);
      }
    });
    ReducePlan q;
    q.red_sizes = {static_cast<int64_t>(nthreads)};
    q.red_strides = {1};
    q.num_outputs = 1;
    q.reduce_numel = nthreads;
    q.in = partial.data();
    Geometry h = geometry_of(q);
    run_range(final_k, h, partial.data(), out, 0, h.numel);
    return;
  }
  // Several outputs: split the outermost kept dim with at least nthreads
  // entries (else the largest), in one piece per thread; pieces of
  // columns contiguous in the input are rounded to 128 bytes.
  int split = g.nd - 1;
  for (int d = g.nd - 1; d >= 0 && !g.reduced(d); --d) {
    if (g.size[d] >= nthreads) {
      split = d;
      break;
    }
    if (g.size[d] > g.size[split]) split = d;
  }
  const int64_t cols = g.size[split];
  const int64_t pieces = std::min<int64_t>(nthreads, cols);
  const int64_t chunk = (cols + pieces - 1) / pieces;
  const bool round = g.in_stride[split] == 1;
  const int64_t per_128 = 128 / static_cast<int64_t>(sizeof(T));
  parallel_for(0, pieces, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      if (t * chunk >= cols) continue;  // no piece for this thread
      int64_t s = t * chunk, end = std::min(cols, s + chunk);
      if (round) {
        s -= s % per_128;
        if (end != cols) end -= end % per_128;
      }
      if (s >= end) continue;
      Geometry sub = g;
      sub.size[split] = end - s;
      sub.numel = g.numel / cols * (end - s);
      run_range(k, sub, in + s * g.in_stride[split], out + s * g.out_stride[split], 0, sub.numel);
    }
  });
}

// Sums the plan's input into out (num_outputs elements of O, overwritten).
template <typename T, typename O, bool kNan, bool kWide>
void sum_in_torch_order(const ReducePlan& p, O* out) {
  for (int64_t o = 0; o < p.num_outputs; ++o) out[o] = O(0);
  reduce_in_torch_order(p, out, Kernel<T, O, kNan, kWide>{}, Kernel<O, O, kNan, false>{});
}

}  // namespace sum_order
}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
