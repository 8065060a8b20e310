#pragma once
// The loop driver shared by the reduction kernels (see Note [Reduction plan]).
// Included only by files under cpu/kernels, so it is compiled per capability.
//
// An Op describes one reduction:
//   using in_t, acc_t;
//   acc_t identity() const;
//   acc_t contig(const in_t* x, int64_t n) const;             // a contiguous run
//   acc_t strided(const in_t* x, int64_t n, int64_t s) const; // a strided run
//   acc_t combine(acc_t a, acc_t b) const;                    // a before b
//   void columns(const in_t* x, int64_t rows, int64_t row_stride, int64_t ncols, acc_t* acc) const;
//                                                            // acc[c] = combine(acc[c], reduce_r x[r*rs + c])
//   void write(int64_t o, acc_t a) const;                     // output o
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "ember/cpu/ReduceStubs.h"
#include "ember/cpu/kernels/Loops.h"
#include "ember/ops/Parallel.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {

// Walks a multi-dim index in row-major order, tracking the element offset.
struct DimWalker {
  const int64_t* sizes = nullptr;
  const int64_t* strides = nullptr;
  int nd = 0;
  int64_t idx[16] = {};
  int64_t offset = 0;

  DimWalker(const int64_t* sz, const int64_t* st, int n, int64_t linear) : sizes(sz), strides(st), nd(n) {
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = linear % sizes[d];
      linear /= sizes[d];
      offset += idx[d] * strides[d];
    }
  }
  void next() {
    for (int d = nd - 1; d >= 0; --d) {
      offset += strides[d];
      if (++idx[d] < sizes[d]) return;
      offset -= idx[d] * strides[d];
      idx[d] = 0;
    }
  }
};

// Column block width of the column loops (accumulators live on the stack).
constexpr int64_t kColBlock = 256;
// Minimum elements per task before going parallel.
constexpr int64_t kReduceGrain = 32768;

// Number of pieces to split one reduction of n elements into across
// threads; 1 when it stays on one thread.
inline int64_t reduction_split(int64_t n) {
  const int nthreads = get_num_threads();
  if (nthreads <= 1 || n < 2 * kReduceGrain || in_parallel_region()) return 1;
  return std::min<int64_t>(nthreads, n / kReduceGrain);
}

// part(begin, end) over `pieces` parallel pieces of [0, n), combined in
// order from identity.
template <typename Acc, typename Part, typename Combine>
Acc combine_pieces(int64_t n, int64_t pieces, Acc identity, const Part& part, const Combine& combine) {
  const int64_t size = (n + pieces - 1) / pieces;
  std::vector<Acc> partial(static_cast<size_t>(pieces), identity);
  parallel_for(0, pieces, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t s = c * size, end = std::min(n, s + size);
      if (s < end) partial[c] = part(s, end);
    }
  });
  Acc acc = identity;
  for (const Acc& a : partial) acc = combine(acc, a);
  return acc;
}

// A plan as the drivers walk it: each output's reduction is `router` lines
// (the outer reduced dims) of L elements Ls apart (the innermost reduced dim).
struct ReduceLines {
  explicit ReduceLines(const ReducePlan& p)
      : no(static_cast<int>(p.out_sizes.size())),
        nr(static_cast<int>(p.red_sizes.size())),
        nro(nr ? nr - 1 : 0),
        L(nr ? p.red_sizes[nr - 1] : 1),
        Ls(nr ? p.red_strides[nr - 1] : 1) {
    for (int d = 0; d < nro; ++d) router *= p.red_sizes[d];
    columns = nr > 0 && Ls != 1 && no > 0 && p.out_strides[no - 1] == 1 && p.out_sizes[no - 1] >= 4;
  }
  int no, nr, nro;
  int64_t L, Ls;
  int64_t router = 1;
  // The innermost kept dim is contiguous and the reduction is not: outputs
  // are reduced as blocks of adjacent columns (for_column_blocks).
  bool columns = false;
};

// True when nothing is left to reduce: no outputs, or outputs of empty
// reductions, which get the identity.
template <typename Op>
bool reduce_trivially(const ReducePlan& p, const Op& op) {
  if (p.num_outputs == 0) return true;
  if (p.reduce_numel != 0) return false;
  for (int64_t o = 0; o < p.num_outputs; ++o) op.write(o, op.identity());
  return true;
}

// f(first_output, count, base) for blocks of up to kColBlock adjacent
// columns (outputs first_output ...), spread over threads; base points at
// the block's first column of the first reduced element.
template <typename T, typename F>
void for_column_blocks(const ReducePlan& p, const ReduceLines& lines, const T* in, const F& f) {
  const int64_t ncols = p.out_sizes[lines.no - 1];
  const int64_t nblocks = (ncols + kColBlock - 1) / kColBlock;
  const int64_t work_per_task = std::min(ncols, kColBlock) * p.reduce_numel;
  const int64_t grain = std::max<int64_t>(1, kReduceGrain / std::max<int64_t>(work_per_task, 1));
  parallel_for(0, p.num_outputs / ncols * nblocks, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t ok = t / nblocks, c0 = (t % nblocks) * kColBlock;
      DimWalker ow(p.out_sizes.data(), p.out_strides.data(), lines.no - 1, ok);
      f(ok * ncols + c0, std::min(kColBlock, ncols - c0), in + ow.offset + c0);
    }
  });
}

template <typename Op>
void run_reduction(const ReducePlan& p, const Op& op) {
  using T = typename Op::in_t;
  using Acc = typename Op::acc_t;
  if (reduce_trivially(p, op)) return;
  const T* in = static_cast<const T*>(p.in);
  const ReduceLines lines(p);
  const int no = lines.no, nro = lines.nro;
  const int64_t nout = p.num_outputs, L = lines.L, Ls = lines.Ls, router = lines.router;
  auto line = [&](const T* x, int64_t n) -> Acc { return Ls == 1 ? op.contig(x, n) : op.strided(x, n, Ls); };
  const int nthreads = get_num_threads();

  if (lines.columns) {
    for_column_blocks(p, lines, in, [&](int64_t first, int64_t nc, const T* base) {
      Acc buf[kColBlock];
      for (int64_t c = 0; c < nc; ++c) buf[c] = op.identity();
      DimWalker rw(p.red_sizes.data(), p.red_strides.data(), nro, 0);
      for (int64_t r = 0; r < router; ++r, rw.next()) op.columns(base + rw.offset, L, Ls, nc, buf);
      for (int64_t c = 0; c < nc; ++c) op.write(first + c, buf[c]);
    });
    return;
  }

  // Few outputs and a long reduction: split the reduction across threads.
  const int64_t pieces = nout < nthreads ? reduction_split(p.reduce_numel) : 1;
  if (pieces > 1) {
    const auto combine = [&](const Acc& a, const Acc& b) { return op.combine(a, b); };
    for (int64_t o = 0; o < nout; ++o) {
      DimWalker ow(p.out_sizes.data(), p.out_strides.data(), no, o);
      const T* base = in + ow.offset;
      Acc acc;
      if (nro == 0 || router < pieces) {
        // Split the inner line (and loop the outer reduced dims inside).
        acc = combine_pieces(
            L, pieces, op.identity(),
            [&](int64_t s, int64_t e) {
              Acc a = op.identity();
              DimWalker rw(p.red_sizes.data(), p.red_strides.data(), nro, 0);
              for (int64_t r = 0; r < router; ++r, rw.next()) a = op.combine(a, line(base + rw.offset + s * Ls, e - s));
              return a;
            },
            combine);
      } else {
        acc = combine_pieces(
            router, pieces, op.identity(),
            [&](int64_t s, int64_t e) {
              Acc a = op.identity();
              DimWalker rw(p.red_sizes.data(), p.red_strides.data(), nro, s);
              for (int64_t r = s; r < e; ++r, rw.next()) a = op.combine(a, line(base + rw.offset, L));
              return a;
            },
            combine);
      }
      op.write(o, acc);
    }
    return;
  }

  // One task per output (row reductions and the general strided case).
  const int64_t grain = std::max<int64_t>(1, kReduceGrain / std::max<int64_t>(p.reduce_numel, 1));
  parallel_for(0, nout, grain, [&](int64_t b, int64_t e) {
    DimWalker ow(p.out_sizes.data(), p.out_strides.data(), no, b);
    for (int64_t o = b; o < e; ++o, ow.next()) {
      const T* base = in + ow.offset;
      Acc acc;
      if (nro == 0) {
        acc = line(base, L);
      } else {
        acc = op.identity();
        DimWalker rw(p.red_sizes.data(), p.red_strides.data(), nro, 0);
        for (int64_t r = 0; r < router; ++r, rw.next()) acc = op.combine(acc, line(base + rw.offset, L));
      }
      op.write(o, acc);
    }
  });
}

// Note [Serial reductions]
// PyTorch's generic reduction loop (binary_kernel_reduce: norms, Welford's
// variance) folds each output's elements into one accumulator one after the
// other, in iteration order (the innermost reduced dim fastest). Only a
// single output of more than kReduceGrain elements on several threads is
// split: into min(threads, ceil(n / kReduceGrain)) equal pieces of the flat
// index, each folded from the identity and then combined in order.
// run_serial_reduction does the same with an Op that has
//   acc_t reduce(acc_t acc, const in_t& x) const;  // x folded into acc
// besides identity, combine and write; column layouts fold whole rows of
// columns at a time, which keeps each column's order.
template <typename Op>
void run_serial_reduction(const ReducePlan& p, const Op& op) {
  using T = typename Op::in_t;
  using Acc = typename Op::acc_t;
  if (reduce_trivially(p, op)) return;
  const T* in = static_cast<const T*>(p.in);
  const ReduceLines lines(p);
  const int no = lines.no, nro = lines.nro;
  const int64_t nout = p.num_outputs, L = lines.L, Ls = lines.Ls, router = lines.router;
  const auto line = [&](Acc acc, const T* x, int64_t n) {
    if (Ls == 1) {
      for (int64_t i = 0; i < n; ++i) acc = op.reduce(acc, x[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) acc = op.reduce(acc, x[i * Ls]);
    }
    return acc;
  };
  // Elements [s, e) of the flat reduced index of the output at base.
  const auto range = [&](Acc acc, const T* base, int64_t s, int64_t e) {
    int64_t i = s % L;
    DimWalker rw(p.red_sizes.data(), p.red_strides.data(), nro, s / L);
    while (s < e) {
      const int64_t n = std::min(L - i, e - s);
      acc = line(acc, base + rw.offset + i * Ls, n);
      s += n;
      i = 0;
      rw.next();
    }
    return acc;
  };

  if (lines.columns) {
    for_column_blocks(p, lines, in, [&](int64_t first, int64_t nc, const T* base) {
      Acc buf[kColBlock];
      for (int64_t c = 0; c < nc; ++c) buf[c] = op.identity();
      DimWalker rw(p.red_sizes.data(), p.red_strides.data(), nro, 0);
      for (int64_t r = 0; r < router; ++r, rw.next()) {
        for (int64_t i = 0; i < L; ++i) {
          const T* row = base + rw.offset + i * Ls;
          for (int64_t c = 0; c < nc; ++c) buf[c] = op.reduce(buf[c], row[c]);
        }
      }
      for (int64_t c = 0; c < nc; ++c) op.write(first + c, buf[c]);
    });
    return;
  }

  const int64_t n = p.reduce_numel;
  const int nthreads = get_num_threads();
  if (nout == 1 && n > kReduceGrain && nthreads > 1 && !in_parallel_region()) {
    DimWalker ow(p.out_sizes.data(), p.out_strides.data(), no, 0);
    const T* base = in + ow.offset;
    const int64_t pieces = std::min<int64_t>(nthreads, (n + kReduceGrain - 1) / kReduceGrain);
    const int64_t chunk = (n + pieces - 1) / pieces;
    std::vector<Acc> partial(static_cast<size_t>(pieces), op.identity());
    parallel_for(0, pieces, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t s = t * chunk, end = std::min(n, s + chunk);
        if (s < end) partial[t] = range(op.identity(), base, s, end);
      }
    });
    Acc acc = op.identity();
    for (const Acc& a : partial) acc = op.combine(acc, a);
    op.write(0, acc);
    return;
  }

  // Outputs in groups of kGroup, their folds interleaved element by element:
  // independent dependency chains run side by side, each in its own order.
  constexpr int64_t kGroup = 8;
  const int64_t groups = (nout + kGroup - 1) / kGroup;
  const int64_t grain = std::max<int64_t>(1, kReduceGrain / std::max<int64_t>(n * kGroup, 1));
  parallel_for(0, groups, grain, [&](int64_t b, int64_t e) {
    DimWalker ow(p.out_sizes.data(), p.out_strides.data(), no, b * kGroup);
    for (int64_t gi = b; gi < e; ++gi) {
      const int64_t o0 = gi * kGroup;
      const int64_t m = std::min(kGroup, nout - o0);
      if (m < kGroup) {
        for (int64_t o = o0; o < nout; ++o, ow.next()) op.write(o, range(op.identity(), in + ow.offset, 0, n));
        continue;
      }
      const T* base[kGroup];
      Acc acc[kGroup];
      for (int64_t k = 0; k < kGroup; ++k, ow.next()) {
        base[k] = in + ow.offset;
        acc[k] = op.identity();
      }
      DimWalker rw(p.red_sizes.data(), p.red_strides.data(), nro, 0);
      for (int64_t r = 0; r < router; ++r, rw.next()) {
        for (int64_t i = 0; i < L; ++i) {
          const int64_t off = rw.offset + i * Ls;
#pragma GCC unroll 8
          for (int64_t k = 0; k < kGroup; ++k) acc[k] = op.reduce(acc[k], base[k][off]);
        }
      }
      for (int64_t k = 0; k < kGroup; ++k) op.write(o0 + k, acc[k]);
    }
  });
}

// Value as its computation type (16-bit floats widen to float).
template <typename T>
inline opmath_t<T> load(const T& v) {
  return static_cast<opmath_t<T>>(v);
}

// An element as an accumulator of type Acc, and an accumulator back as an
// element (bool: nonzero). Integers pass through int64, so an unsigned
// accumulator (uint64: integer sums wrap as int64 does in PyTorch, without
// signed-overflow UB) reads back as a signed value.
template <typename Acc, typename T>
inline Acc to_acc(const T& v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<Acc>(static_cast<int64_t>(v));
  } else {
    return static_cast<Acc>(load(v));
  }
}
template <typename T, typename Acc>
inline T from_acc(Acc a) {
  if constexpr (std::is_same_v<T, bool>) {
    return a != Acc(0);
  } else if constexpr (std::is_integral_v<T> || std::is_integral_v<Acc>) {
    return static_cast<T>(static_cast<int64_t>(a));
  } else {
    return static_cast<T>(a);
  }
}

// Pairwise ("cascade") summation of f(0..n): blocks of kBlock elements are
// summed in kLanes independent lanes, and blocks are added in a binary tree
// (f takes an absolute index in [begin, begin + n)),
// so the rounding error grows with log(n) rather than n.
template <typename Acc, typename F>
inline Acc cascade_sum(int64_t begin, int64_t n, const F& f) {
  constexpr int64_t kLanes = 16;
  constexpr int64_t kBlock = 512;
  if constexpr (std::is_integral_v<Acc>) {
    // Integer sums are exact (modulo 2^64) in any order.
    Acc r = Acc(0);
    for (int64_t i = 0; i < n; ++i) r += f(begin + i);
    return r;
  } else {
    if (n <= kBlock) {
      Acc lanes[kLanes] = {};
      int64_t i = 0;
      for (; i + kLanes <= n; i += kLanes) {
        for (int64_t j = 0; j < kLanes; ++j) lanes[j] += f(begin + i + j);
      }
      Acc tail = Acc(0);
      for (; i < n; ++i) tail += f(begin + i);
      for (int64_t w = kLanes / 2; w > 0; w /= 2) {
        for (int64_t j = 0; j < w; ++j) lanes[j] += lanes[j + w];
      }
      return lanes[0] + tail;
    }
    const int64_t half = (n / 2 + kBlock - 1) / kBlock * kBlock;
    return cascade_sum<Acc>(begin, half, f) + cascade_sum<Acc>(begin + half, n - half, f);
  }
}

// Column sums with the same cascade over rows: halves of the rows summed
// apart and added, down to leaves of at most 16 rows, where
// leaf(x, rows, acc) adds rows into acc one after the other.
template <typename Acc, typename T, typename Leaf>
inline void cascade_column_tree(const T* x, int64_t rows, int64_t rs, int64_t nc, Acc* acc, const Leaf& leaf) {
  constexpr int64_t kRows = 16;
  if (std::is_integral_v<Acc> || rows <= kRows) return leaf(x, rows, acc);
  Acc tmp[kColBlock], tmp2[kColBlock];
  for (int64_t c = 0; c < nc; ++c) tmp[c] = tmp2[c] = Acc(0);
  const int64_t half = rows / 2;
  cascade_column_tree<Acc>(x, half, rs, nc, tmp, leaf);
  cascade_column_tree<Acc>(x + half * rs, rows - half, rs, nc, tmp2, leaf);
  for (int64_t c = 0; c < nc; ++c) acc[c] += tmp[c] + tmp2[c];
}

// acc[c] += sum_r f(x[r*rs + c]) in that cascade.
template <typename Acc, typename T, typename F>
inline void cascade_columns(const T* x, int64_t rows, int64_t rs, int64_t nc, Acc* acc, const F& f) {
  cascade_column_tree<Acc>(x, rows, rs, nc, acc, [&](const T* xs, int64_t n, Acc* a) {
    for (int64_t r = 0; r < n; ++r) {
      const T* row = xs + r * rs;
      for (int64_t c = 0; c < nc; ++c) a[c] += f(row[c]);
    }
  });
}

template <typename T>
inline bool is_nan_value(const T& v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    float f = static_cast<float>(v);
    return f != f;
  } else {
    return false;
  }
}

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
