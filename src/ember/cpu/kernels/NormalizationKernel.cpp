// Batch, layer and group normalisation loops (float and double; 16-bit
// layer norm), compiled once per CPU capability, in PyTorch's order of
// operations (the Notes below); 16-bit backward passes sum in double.
#include <array>
#include <cmath>
#include <cstring>
#if defined(__AVX2__)
#include <immintrin.h>
#endif
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "ember/core/Error.h"
#include "ember/cpu/NNStubs.h"
#include "ember/cpu/kernels/MathLoops.h"
#include "ember/cpu/kernels/NormVec.h"
#include "ember/cpu/kernels/ReduceVec.h"
#include "ember/ops/Parallel.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

template <typename F>
void dispatch_norm_types(ScalarType t, const char* name, const F& f) {
  switch (t) {
    case ScalarType::Float: return f(float{});
    case ScalarType::Double: return f(double{});
    default: throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(t), "'"));
  }
}

template <typename T>
double row_sum(const T* p, int64_t n) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(p[i]);
  return s;
}

template <typename T>
double row_sq_dev(const T* p, int64_t n, double mean) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(p[i]) - mean;
    s += d * d;
  }
  return s;
}

// sum dy and sum dy * (x - center) over a row.
template <typename T>
void row_dot2(const T* dy, const T* x, int64_t n, double& s_dy, double& s_dyx, double center = 0.0) {
  double a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
  for (int64_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(dy[i]);
    a += g;
    b += g * (static_cast<double>(x[i]) - center);
  }
  s_dy += a;
  s_dyx += b;
}

// y = x * s + t over a row.
template <typename T>
inline void row_affine(const T* __restrict x, T* __restrict y, int64_t n, T s, T t) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s + t;
}

// ---- batch norm -------------------------------------------------------------------

template <typename T>
void bn_backward_reduce(const T* dy, const T* x, const T* mean, T* sum_dy, T* sum_dy_xmu, const BatchNormArgs& a) {
  if (a.S == 1) {
    std::vector<double> s(a.C, 0.0), q(a.C, 0.0);
    for (int64_t n = 0; n < a.N; ++n) {
      const T* g = dy + n * a.C;
      const T* xr = x + n * a.C;
      for (int64_t c = 0; c < a.C; ++c) {
        s[c] += static_cast<double>(g[c]);
        q[c] += static_cast<double>(g[c]) * (static_cast<double>(xr[c]) - static_cast<double>(mean[c]));
      }
    }
    for (int64_t c = 0; c < a.C; ++c) {
      sum_dy[c] = static_cast<T>(s[c]);
      sum_dy_xmu[c] = static_cast<T>(q[c]);
    }
    return;
  }
  const int64_t M = a.N * a.S;
  parallel_for(0, a.C, std::max<int64_t>(1, 32768 / std::max<int64_t>(M, 1)), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      double s = 0, sx = 0;
      const double m = static_cast<double>(mean[c]);
      for (int64_t n = 0; n < a.N; ++n) {
        const int64_t off = (n * a.C + c) * a.S;
        row_dot2(dy + off, x + off, a.S, s, sx, m);
      }
      sum_dy[c] = static_cast<T>(s);
      sum_dy_xmu[c] = static_cast<T>(sx);
    }
  });
}

// Note [Batch norm backward order]
// PyTorch's kernel for contiguous float/double input with planes (S > 1),
// channel by channel: per batch row, sum(dy) and sum((x - mean) * dy) over
// the plane as one 32-byte vector accumulator (a partial last vector added
// into its first lanes only, fused into the accumulator for the dot
// product, as PyTorch's build compiles it), folded as Vectorized does (float:
// halves, then pairs, then neighbours; double: lane by lane), each row's
// total added to a double. dx = ((dy - sum/M) - (x - mean) * k) * invstd * w
// with k = float(dotp) * invstd * invstd / M, the subtraction of the product
// fused; dweight = dotp * invstd, dbias = sum (rounded from double). Eval
// mode: dx = dy * invstd * w. Inputs without planes and channels-last ones
// take bn_backward_rows; other layouts the generic loop of Normalization.cpp.
typedef int32_t Vec32Int __attribute__((vector_size(kVecBytes)));

template <typename T>
T plane_fold(Vec<T> v) {
  if constexpr (std::is_same_v<T, float>) {
    v = v + __builtin_shuffle(v, Vec32Int{4, 5, 6, 7, 0, 1, 2, 3});
    v = v + __builtin_shuffle(v, Vec32Int{2, 3, 0, 1, 6, 7, 4, 5});
    v = v + __builtin_shuffle(v, Vec32Int{1, 0, 3, 2, 5, 4, 7, 6});
    return v[0];
  } else {
    return fold_in_order<T>(v, kVecBytes / sizeof(T));
  }
}

// PyTorch's vec::map2_reduce_all(map, +) over n elements of x and y;
// acc(a, x, y) adds map(x, y) to a (fused where PyTorch's build fuses it).
template <typename T, typename Map, typename Acc>
T plane_reduce(const T* x, const T* y, int64_t n, const Map& map, const Acc& acc_add) {
  constexpr int64_t W = kVecBytes / sizeof(T);
  auto load_partial = [](const T* p, int64_t count) {
    Vec<T> v{};
    std::memcpy(&v, p, count * sizeof(T));
    return v;
  };
  if (n < W) return fold_in_order<T>(map(load_partial(x, n), load_partial(y, n)), n);
  Vec<T> acc = map(vload(x), vload(y));
  int64_t d = W;
  for (; d < n - n % W; d += W) acc = acc + map(vload(x + d), vload(y + d));
  if (n - d > 0) {
    const Vec<T> added = acc_add(acc, load_partial(x + d, n - d), load_partial(y + d, n - d));
    for (int64_t l = 0; l < n - d; ++l) acc[l] = added[l];
  }
  return plane_fold<T>(acc);
}

template <typename T>
void bn_backward_contiguous(const T* dy, const T* x, const T* weight, const T* mean, const T* invstd, T* dx, T* dw,
                            T* db, bool train, const BatchNormArgs& a) {
  constexpr int64_t W = kVecBytes / sizeof(T);
  const int64_t S = a.S, M = a.N * a.S;
  parallel_for(0, a.C, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const T w = weight ? weight[c] : T(1), m = mean[c], r = invstd[c];
      const Vec<T> vm = Vec<T>{} + m;
      double sum = 0, dotp = 0;
      for (int64_t n = 0; n < a.N; ++n) {
        const T* xr = x + (n * a.C + c) * S;
        const T* gr = dy + (n * a.C + c) * S;
        sum += plane_reduce(
            gr, gr, S, [](Vec<T> g, Vec<T>) { return g; }, [](Vec<T> acc, Vec<T> g, Vec<T>) { return acc + g; });
        dotp += plane_reduce(
            xr, gr, S, [&](Vec<T> xv, Vec<T> g) { return (xv - vm) * g; },
            [&](Vec<T> acc, Vec<T> xv, Vec<T> g) { return vmadd(xv - vm, g, acc); });
      }
      if (dx) {
        const T k = static_cast<T>(dotp) * r * r / static_cast<T>(M);
        const T grad_mean = static_cast<T>(sum / static_cast<double>(M));
        const Vec<T> vk = Vec<T>{} + k, vg = Vec<T>{} + grad_mean, vr = Vec<T>{} + r, vw = Vec<T>{} + w;
        for (int64_t n = 0; n < a.N; ++n) {
          const int64_t off = (n * a.C + c) * S;
          const T *xr = x + off, *gr = dy + off;
          T* o = dx + off;
          int64_t d = 0;
          auto step = [&](Vec<T> xv, Vec<T> g) {
            if (!train) return g * vr * vw;
            return vmadd(vm - xv, vk, g - vg) * vr * vw;
          };
          for (; d < S - S % W; d += W) {
            const Vec<T> out = step(vload(xr + d), vload(gr + d));
            std::memcpy(o + d, &out, sizeof out);
          }
          if (S - d > 0) {
            Vec<T> xv{}, g{};
            std::memcpy(&xv, xr + d, (S - d) * sizeof(T));
            std::memcpy(&g, gr + d, (S - d) * sizeof(T));
            const Vec<T> out = step(xv, g);
            std::memcpy(o + d, &out, (S - d) * sizeof(T));
          }
        }
      }
      if (dw) dw[c] = static_cast<T>(dotp * r);
      if (db) db[c] = static_cast<T>(sum);
    }
  });
}

// PyTorch's kernel for rows of C channels (channels-last input, or an
// (N, C) one): each of its threads sums its block of rows channel by channel
// in the input's type (blocks of ceil(rows / threads) rows), the blocks are
// added in double in thread order and rounded back; dx per row as above with
// k and sum / rows taken per lane; dweight = dotp * invstd in the input's
// type. The partial sums depend on the thread count, as PyTorch's do.
template <typename T>
void bn_backward_rows(const T* dy, const T* x, const T* weight, const T* mean, const T* invstd, T* dx, T* dw, T* db,
                      bool train, const BatchNormArgs& a) {
  const int64_t C = a.C, rows = a.N * a.S, threads = get_num_threads();
  std::vector<T> part_sum(threads * C, T(0)), part_dotp(threads * C, T(0));
  for_each_thread_block(rows, [&](int64_t t, int64_t begin, int64_t end) {
    T* ps = part_sum.data() + t * C;
    T* pd = part_dotp.data() + t * C;
    for (int64_t i = begin; i < end; ++i) {
      const T *g = dy + i * C, *xr = x + i * C;
      for (int64_t c = 0; c < C; ++c) {
        ps[c] = ps[c] + g[c];
        pd[c] = capability_fma(xr[c] - mean[c], g[c], pd[c]);
      }
    }
  });
  std::vector<T> sum(C), dotp(C);
  for (int64_t c = 0; c < C; ++c) {
    double s = 0, d = 0;
    for (int64_t t = 0; t < threads; ++t) {
      s += part_sum[t * C + c];
      d += part_dotp[t * C + c];
    }
    sum[c] = static_cast<T>(s);
    dotp[c] = static_cast<T>(d);
  }
  if (dx) {
    const T n = static_cast<T>(rows);
    const int64_t vector_channels = C - C % (kVecBytes / static_cast<int64_t>(sizeof(T)));
    parallel_for(0, rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const T *g = dy + i * C, *xr = x + i * C;
        T* o = dx + i * C;
        for (int64_t c = 0; c < C; ++c) {
          const T w = weight ? weight[c] : T(1);
          if (!train) {
            o[c] = g[c] * invstd[c] * w;
            continue;
          }
          const T k = dotp[c] * invstd[c] * invstd[c] / n;
          // PyTorch's build fuses this step in its whole vectors of channels, not in the last partial one.
          o[c] = c < vector_channels ? capability_fma(mean[c] - xr[c], k, g[c] - sum[c] / n) * invstd[c] * w
                                     : (g[c] - sum[c] / n - (xr[c] - mean[c]) * k) * invstd[c] * w;
        }
      }
    });
  }
  for (int64_t c = 0; c < C; ++c) {
    if (dw) dw[c] = dotp[c] * invstd[c];
    if (db) db[c] = sum[c];
  }
}

template <typename T>
void bn_backward_apply(const T* dy, const T* x, T* dx, const T* k1, const T* k2, const T* k3, const BatchNormArgs& a) {
  if (a.S == 1) {
    parallel_for(0, a.N, std::max<int64_t>(1, 32768 / std::max<int64_t>(a.C, 1)), [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) {
        const T* g = dy + n * a.C;
        const T* xr = x + n * a.C;
        T* d = dx + n * a.C;
#pragma omp simd
        for (int64_t c = 0; c < a.C; ++c) d[c] = g[c] * k1[c] + xr[c] * k2[c] + k3[c];
      }
    });
    return;
  }
  parallel_for(0, a.N * a.C, std::max<int64_t>(1, 32768 / a.S), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t c = r % a.C;
      const T *g = dy + r * a.S, *xr = x + r * a.S;
      T* d = dx + r * a.S;
      const T p = k1[c], q = k2[c], t = k3[c];
#pragma omp simd
      for (int64_t i = 0; i < a.S; ++i) d[i] = g[i] * p + xr[i] * q + t;
    }
  });
}

// ---- layer norm -------------------------------------------------------------------

// Note [PyTorch's row moments]
// PyTorch's layer and group norms take a row's mean and biased variance from
// RowwiseMoments: Welford updates on vector lanes (16 vectors to a chunk,
// 1/(j+1) from a table, fused multiply-adds), chunks merged pairwise on a
// stack like a binary counter, the stack folded into its first slot, then the
// scalar Welford over the remainder and the lanes merged into it one by one.
// Its vectors are 32 bytes wide (PyTorch has no AVX-512 build of these
// kernels: its AVX2 ones run on AVX-512 CPUs, and so do Ember's) and the
// merges fuse where Vectorized's fmadd does, so this file compiles without
// contraction and spells each fused step (capability_fma, vmadd); the DEFAULT
// build has no FMA and rounds the product apart, as PyTorch's generic
// Vectorized does. A 16-bit row reads two float vectors per 16-bit vector,
// each merged into the stack by itself.
// The type a row of S computes in.
template <typename S>
using AccOf = std::conditional_t<std::is_same_v<S, double>, double, float>;

// Merge moments (m1_add, m2_add) of n_add values into (m1, m2) of n values.
template <typename T, typename V>
inline void merge_moments(T c, T tn, V m1_add, V m2_add, V& m1, V& m2) {
  const V delta = m1_add - m1;
  const V sum2 = m2 + m2_add;
  const V cd = c * delta;
  m1 = m1 + cd;
  m2 = vmadd(delta * tn, cd, sum2);
}

// c = n_add / (n + n_add), as PyTorch's merge computes it.
template <typename T>
inline T merge_weight(int64_t n, int64_t n_add) {
  const int64_t total = n + n_add;
  return total == 0 ? T(0) : static_cast<T>(n_add) / static_cast<T>(total);
}

// 1 / (j + 1) in every lane, for the 16 steps of a chunk.
template <typename T>
const std::array<Vec<T>, 16> kInverse = [] {
  std::array<Vec<T>, 16> r{};
  for (int j = 0; j < 16; ++j) {
    for (size_t l = 0; l < kVecBytes / sizeof(T); ++l) r[j][l] = T(1) / static_cast<T>(j + 1);
  }
  return r;
}();

// Note [Chains side by side]
// RowwiseMoments' Welford steps within a chunk form a chain, each step waiting
// on the previous one's fused multiply-add; the chunks of a row and the rows
// are independent until their merges. rows_moments runs several chains
// through one loop: C consecutive chunks of a long row, or one chunk of each
// of R short rows, every chain keeping its own steps, lanes and merge order,
// so the CPU overlaps them and each row's bits stay those of PyTorch's
// RowwiseMoments (Note [PyTorch's row moments]). About six chains (twelve
// vector registers of moments) keep the vector units busy.
constexpr int kChains = 6;
constexpr int64_t kSteps = 16;  // vectors to a chunk

// Welford from zero over m0 vectors of C chunks (chunk c at x + c * cs) of R
// rows (row r at x + r * ld), H float vectors per (16-bit) vector.
template <int C, int R, int H, typename S, typename V>
inline void chunk_moments(const S* x, int64_t ld, int64_t cs, int64_t m0, V (&a)[C][H][R], V (&b)[C][H][R]) {
  using T = AccOf<S>;
  constexpr int W = static_cast<int>(kVecBytes / sizeof(T));
  for (int c = 0; c < C; ++c) {
    for (int h = 0; h < H; ++h) {
      for (int r = 0; r < R; ++r) a[c][h][r] = b[c][h][r] = V{};
    }
  }
  for (int64_t j = 0; j < m0; ++j) {
    const V inv = kInverse<T>[j];
    for (int c = 0; c < C; ++c) {
      for (int h = 0; h < H; ++h) {
        for (int r = 0; r < R; ++r) {
          const V v = vload(x + c * cs + r * ld + (j * H + h) * W);
          const V delta = v - a[c][h][r];
          a[c][h][r] = vmadd(inv, delta, a[c][h][r]);
          b[c][h][r] = vmadd(delta, v - a[c][h][r], b[c][h][r]);
        }
      }
    }
  }
}

// PyTorch's stack of chunk moments: slot j holds 2^j chunks' merge.
template <typename T, int R>
struct MomentStack {
  using V = Vec<T>;
  int64_t depth = 0;
  int64_t m0[64] = {0};  // the same for every row
  V m1[64][R], m2[64][R];

  explicit MomentStack(int64_t chunks) {
    while ((int64_t{1} << depth) < chunks) ++depth;
    for (int64_t d = 0; d < std::max<int64_t>(depth, 1); ++d) {
      for (int r = 0; r < R; ++r) m1[d][r] = m2[d][r] = V{};
    }
  }

  // Merges chunk i (count vectors per half) into slot 0, then carries.
  template <int H>
  void push(int64_t i, int64_t count, const V (&a)[H][R], const V (&b)[H][R]) {
    for (int h = 0; h < H; ++h) {
      const T c = merge_weight<T>(m0[0], count), tn = static_cast<T>(m0[0]);
      for (int r = 0; r < R; ++r) merge_moments(c, tn, a[h][r], b[h][r], m1[0][r], m2[0][r]);
      m0[0] += count;
    }
    int64_t mask = i + 1;
    for (int64_t j = 1; j < depth && (mask & 1) == 0; ++j) {
      const T c = merge_weight<T>(m0[j], m0[j - 1]), tn = static_cast<T>(m0[j]);
      for (int r = 0; r < R; ++r) {
        merge_moments(c, tn, m1[j - 1][r], m2[j - 1][r], m1[j][r], m2[j][r]);
        m1[j - 1][r] = m2[j - 1][r] = V{};
      }
      m0[j] += m0[j - 1];
      m0[j - 1] = 0;
      mask >>= 1;
    }
  }

  // Folds the stack into slot 0.
  void fold() {
    for (int64_t i = 1; i < depth; ++i) {
      const T c = merge_weight<T>(m0[0], m0[i]), tn = static_cast<T>(m0[0]);
      for (int r = 0; r < R; ++r) merge_moments(c, tn, m1[i][r], m2[i][r], m1[0][r], m2[0][r]);
      m0[0] += m0[i];
    }
  }
};

// Chunks [i, i + C) of R rows into the stack, then i += C.
template <int C, int R, int H, typename S, typename T>
inline void push_chunks(const S* x, int64_t ld, int64_t n, int64_t& i, MomentStack<T, R>& stk) {
  constexpr int64_t step = H * static_cast<int64_t>(kVecBytes / sizeof(T));
  Vec<T> a[C][H][R], b[C][H][R];
  const int64_t m0 = std::min(kSteps, n - i * kSteps);  // C > 1: whole chunks
  chunk_moments<C, R, H>(x + i * kSteps * step, ld, kSteps * step, m0, a, b);
  for (int c = 0; c < C; ++c) stk.template push<H>(i + c, m0, a[c], b[c]);
  i += C;
}

// Mean and biased variance of R rows of N values (row r at x + r * ld), as
// PyTorch's RowwiseMoments; a 16-bit row computes in float, its 16-bit
// vectors read as H = 2 float vectors (float data read from a 16-bit row
// too, with H = 2).
template <typename S, int R, int H = sizeof(S) == 2 ? 2 : 1>
void rows_moments(const S* x, int64_t ld, int64_t N, AccOf<S>* mean, AccOf<S>* var) {
  using T = AccOf<S>;
  constexpr int W = static_cast<int>(kVecBytes / sizeof(T));
  constexpr int64_t step = H * W;
  const int64_t n = N / step;
  const int64_t m = (n + kSteps - 1) / kSteps;
  MomentStack<T, R> stk(m);
  int64_t i = 0;
  constexpr int C = kChains / (R * H);  // chunks of a row side by side
  if constexpr (C > 1) {
    const int64_t whole = n / kSteps;
    while (i + C <= whole) push_chunks<C, R, H>(x, ld, n, i, stk);
    if constexpr (C > 2) {
      while (i + 2 <= whole) push_chunks<2, R, H>(x, ld, n, i, stk);
    }
  }
  while (i < m) push_chunks<1, R, H>(x, ld, n, i, stk);
  stk.fold();
  // The scalar Welford over the remainder, then the lanes merged into it.
  T m1[R], m2[R];
  for (int r = 0; r < R; ++r) m1[r] = m2[r] = T(0);
  int64_t cnt = 0;
  for (int64_t k = n * step; k < N; ++k) {
    ++cnt;
    const T tc = static_cast<T>(cnt);
    for (int r = 0; r < R; ++r) {
      const T v = static_cast<T>(x[r * ld + k]);
      const T delta = v - m1[r];
      m1[r] += delta / tc;
      m2[r] = m2[r] + delta * (v - m1[r]);  // not fused in PyTorch's build
    }
  }
  const int64_t lane_n = n * step / W;
  for (int l = 0; l < W; ++l) {
    const T c = merge_weight<T>(cnt, lane_n), tn = static_cast<T>(cnt);
    for (int r = 0; r < R; ++r) {
      const T delta = stk.m1[0][r][l] - m1[r];
      m1[r] = smadd(c, delta, m1[r]);
      m2[r] += smadd(delta * delta * c, tn, stk.m2[0][r][l]);
    }
    cnt += lane_n;
  }
  for (int r = 0; r < R; ++r) {
    mean[r] = m1[r];
    var[r] = m2[r] / static_cast<T>(N);
  }
}

// Moments of `rows` rows (as rows_moments): kChains / H at a time, then the
// rows left over with their chunks side by side.
template <typename S, int H = sizeof(S) == 2 ? 2 : 1>
void some_rows_moments(const S* x, int64_t ld, int64_t N, int64_t rows, AccOf<S>* mean, AccOf<S>* var) {
  constexpr int R = kChains / H;
  int64_t r = 0;
  for (; r + R <= rows; r += R) rows_moments<S, R, H>(x + r * ld, ld, N, mean + r, var + r);
  if constexpr (R > 3) {
    if (r + 3 <= rows) {
      rows_moments<S, 3, H>(x + r * ld, ld, N, mean + r, var + r);
      r += 3;
    }
  }
  if constexpr (R > 2) {
    if (r + 2 <= rows) {
      rows_moments<S, 2, H>(x + r * ld, ld, N, mean + r, var + r);
      r += 2;
    }
  }
  for (; r < rows; ++r) rows_moments<S, 1, H>(x + r * ld, ld, N, mean + r, var + r);
}

// Rows of a (16-bit) type taken at once.
template <typename S, int H = sizeof(S) == 2 ? 2 : 1>
constexpr int64_t kRowsAtOnce = kChains / H;

// y = (x - mean) * rstd * gamma + beta (float and double rows).
template <typename T>
void ln_forward(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* rstd, int64_t M, int64_t D, double eps) {
  parallel_for(0, M, std::max<int64_t>(1, 32768 / std::max<int64_t>(D, 1)), [&](int64_t b, int64_t e) {
    constexpr int64_t block = kRowsAtOnce<T>;
    for (int64_t r0 = b; r0 < e; r0 += block) {
      const int64_t rows = std::min(block, e - r0);
      T means[block], vars[block];
      some_rows_moments(x + r0 * D, D, D, rows, means, vars);
      for (int64_t k = 0; k < rows; ++k) {
        const int64_t r = r0 + k;
        const T* __restrict xr = x + r * D;
        T* __restrict yr = y + r * D;
        const T mt = means[k];
        const T rs = T(1) / std::sqrt(vars[k] + static_cast<T>(eps));
        mean[r] = mt;
        rstd[r] = rs;
        if (gamma && beta) {
#pragma omp simd
          for (int64_t i = 0; i < D; ++i) yr[i] = capability_fma((xr[i] - mt) * rs, gamma[i], beta[i]);
        } else if (beta) {
          // PyTorch's compiler drops the product by gamma = 1 and fuses the rest.
#pragma omp simd
          for (int64_t i = 0; i < D; ++i) yr[i] = capability_fma(xr[i] - mt, rs, beta[i]);
        } else {
#pragma omp simd
          for (int64_t i = 0; i < D; ++i) {
            const T xh = (xr[i] - mt) * rs;
            yr[i] = gamma ? xh * gamma[i] : xh;
          }
        }
      }
    }
  });
}

// A 16-bit input: (x * rstd - mean * rstd) * gamma + beta in float, read
// from and rounded back to 16 bits a vector at a time; gamma and beta are
// float.
template <typename H>
void ln_forward_16bit(const H* x, const float* gamma, const float* beta, H* y, float* mean, float* rstd, int64_t M,
                      int64_t D_, double eps) {
  using V = Vec<float>;
  constexpr int64_t W = kVecBytes / sizeof(float);
  parallel_for(0, M, std::max<int64_t>(1, 32768 / std::max<int64_t>(D_, 1)), [&](int64_t b, int64_t e) {
    // Locals: the compiler need not reload them after each store.
    const float *g = gamma, *t = beta;
    const int64_t D = D_;
    constexpr int64_t block = kRowsAtOnce<H>;
    for (int64_t r0 = b; r0 < e; r0 += block) {
      const int64_t rows = std::min(block, e - r0);
      float means[block], vars[block];
      some_rows_moments(x + r0 * D, D, D, rows, means, vars);
      for (int64_t k = 0; k < rows; ++k) {
        const int64_t r = r0 + k;
        const H* __restrict xr = x + r * D;
        H* __restrict yr = y + r * D;
        const float mt = means[k];
        const float rs = 1.0f / std::sqrt(vars[k] + static_cast<float>(eps));
        const float shift = -rs * mt;
        mean[r] = mt;
        rstd[r] = rs;
        const V rs_v = V{} + rs, shift_v = V{} + shift;
        // 16-bit vectors of 2 W values, then PyTorch's scalar tail.
        const int64_t end = D - D % (2 * W);
        int64_t i = 0;
        if (g && t) {
          for (; i < end; i += W)
            vstore(yr + i, vmadd(vmadd(vload(xr + i), rs_v, shift_v), vload(g + i), vload(t + i)));
        } else {
          const V one = V{} + 1.0f, zero = V{};
          for (; i < end; i += W) {
            vstore(yr + i, vmadd(vmadd(vload(xr + i), rs_v, shift_v), g ? vload(g + i) : one, t ? vload(t + i) : zero));
          }
        }
        for (; i < D; ++i) {
          yr[i] =
              H(capability_fma(capability_fma(static_cast<float>(xr[i]), rs, shift), g ? g[i] : 1.0f, t ? t[i] : 0.0f));
        }
      }
    }
  });
}

// ---- batch norm (PyTorch's collect-stats and transform kernels) ---------------------

// Per channel of an N x C x S input: mean and the sum of squared deviations.
template <typename T>
void bn_stats_planes(const T* x, T* mean, T* var_sum, const BatchNormArgs& a) {
  const int64_t M = a.N * a.S;
  parallel_for(0, a.C, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      double sum = 0;  // in order, in double (PyTorch's accumulate type)
      for (int64_t n = 0; n < a.N; ++n) {
        const T* p = x + (n * a.C + c) * a.S;
        for (int64_t i = 0; i < a.S; ++i) sum += p[i];
      }
      const T m = static_cast<T>(sum / static_cast<double>(M));
      double acc = 0;
      for (int64_t n = 0; n < a.N; ++n) {
        const T* p = x + (n * a.C + c) * a.S;
        for (int64_t i = 0; i < a.S; ++i) {
          const T d = p[i] - m;
          acc += d * d;
        }
      }
      mean[c] = m;
      var_sum[c] = static_cast<T>(acc);
    }
  });
}

// The same over R rows of C channels (channels last, or S == 1): per-thread
// column sums added in double, as PyTorch's two-pass vertical reduction.
template <typename T>
void bn_stats_rows(const T* x, T* mean, T* var_sum, const BatchNormArgs& a) {
  const int64_t R = a.N * a.S, C = a.C;
  const int64_t threads = get_num_threads();
  if (R > threads) {
    const int64_t chunk = (R + threads - 1) / threads;
    std::vector<T> buf(threads * C, T(0));
    auto pass = [&](const auto& op) {
      parallel_for(0, threads, 1, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          T* __restrict acc = buf.data() + t * C;
          for (int64_t r = t * chunk; r < std::min(R, (t + 1) * chunk); ++r) {
            const T* __restrict row = x + r * C;
#pragma omp simd
            for (int64_t c = 0; c < C; ++c) acc[c] = op(acc[c], row[c], c);
          }
        }
      });
    };
    auto fold = [&](T* out, bool divide) {
      for (int64_t c = 0; c < C; ++c) {
        double s = 0;
        for (int64_t t = 0; t < threads; ++t) s += buf[t * C + c];
        out[c] = static_cast<T>(divide ? s / static_cast<double>(R) : s);
      }
    };
    pass([](T acc, T v, int64_t) { return v + acc; });
    fold(mean, true);
    std::fill(buf.begin(), buf.end(), T(0));
    pass([mean](T acc, T v, int64_t c) {
      const T d = v - mean[c];
      return capability_fma(d, d, acc);
    });
    fold(var_sum, false);
    return;
  }
  if (threads == 1 || C <= 16 || C > 2048) {
    // Few rows: sums in the element type, the mean divided in it.
    for (int64_t c = 0; c < C; ++c) mean[c] = var_sum[c] = T(0);
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < C; ++c) mean[c] = x[r * C + c] + mean[c];
    for (int64_t c = 0; c < C; ++c) mean[c] = mean[c] / static_cast<T>(R);
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < C; ++c) {
        const T d = x[r * C + c] - mean[c];
        var_sum[c] = capability_fma(d, d, var_sum[c]);
      }
    return;
  }
  for (int64_t c = 0; c < C; ++c) {
    double s = 0;
    for (int64_t r = 0; r < R; ++r) s += x[r * C + c];
    mean[c] = static_cast<T>(s / static_cast<double>(R));
    double acc = 0;
    for (int64_t r = 0; r < R; ++r) {
      const T d = x[r * C + c] - mean[c];
      acc += d * d;  // the square rounds apart (PyTorch's build does not fuse it)
    }
    var_sum[c] = static_cast<T>(acc);
  }
}

template <typename T>
void bn_stats(const T* x, T* mean, T* var_sum, const BatchNormArgs& a) {
  if (a.channels_last) {
    bn_stats_rows(x, mean, var_sum, a);
  } else {
    bn_stats_planes(x, mean, var_sum, a);
  }
}

// y = x * alpha[c] + beta[c] with alpha = invstd * weight and
// beta = bias - mean * alpha, both fused as PyTorch's kernel compiles them.
template <typename T>
void bn_apply(const T* x, T* y, const T* mean, const T* invstd, const T* weight, const T* bias,
              const BatchNormArgs& a) {
  std::vector<T> alpha(a.C), beta(a.C);
  for (int64_t c = 0; c < a.C; ++c) {
    alpha[c] = invstd[c] * (weight ? weight[c] : T(1));
    beta[c] = capability_fma(-mean[c], alpha[c], bias ? bias[c] : T(0));
  }
  const T* __restrict al = alpha.data();
  const T* __restrict be = beta.data();
  if (a.channels_last) {
    const int64_t R = a.N * a.S;
    parallel_for(0, R, std::max<int64_t>(1, 32768 / std::max<int64_t>(a.C, 1)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* __restrict xr = x + r * a.C;
        T* __restrict yr = y + r * a.C;
#pragma omp simd
        for (int64_t c = 0; c < a.C; ++c) yr[c] = capability_fma(xr[c], al[c], be[c]);
      }
    });
    return;
  }
  parallel_for(0, a.N * a.C, std::max<int64_t>(1, 32768 / std::max<int64_t>(a.S, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t c = r % a.C;
      const T s = al[c], t = be[c];
      const T* __restrict xr = x + r * a.S;
      T* __restrict yr = y + r * a.S;
#pragma omp simd
      for (int64_t i = 0; i < a.S; ++i) yr[i] = capability_fma(xr[i], s, t);
    }
  });
}

// A 16-bit input's float data: sums in double.
template <typename T>
void ln_backward_16bit(const T* dy, const T* x, const T* mean, const T* rstd, const T* gamma, T* dx, T* dgamma,
                       T* dbeta, int64_t M, int64_t D) {
  std::mutex mu;
  std::vector<double> dg(dgamma ? D : 0, 0.0), db(dbeta ? D : 0, 0.0);
  parallel_for(0, M, std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1)), [&](int64_t b, int64_t e) {
    // Per-thread column sums: pg = sum dy * xhat, pb = sum dy.
    std::vector<double> pg(dgamma ? D : 0, 0.0), pb(dbeta ? D : 0, 0.0);
    double* __restrict pgp = pg.data();
    double* __restrict pbp = pb.data();
    for (int64_t r = b; r < e; ++r) {
      const T* __restrict g = dy + r * D;
      const T* __restrict xr = x + r * D;
      const double m = static_cast<double>(mean[r]), rs = static_cast<double>(rstd[r]);
      if (dgamma) {
#pragma omp simd
        for (int64_t i = 0; i < D; ++i) pgp[i] += static_cast<double>(g[i]) * (static_cast<double>(xr[i]) - m) * rs;
      }
      if (dbeta) {
#pragma omp simd
        for (int64_t i = 0; i < D; ++i) pbp[i] += static_cast<double>(g[i]);
      }
      if (!dx) continue;
      // s1 = sum dy*gamma, s2 = sum dy*gamma*x; dx = rs*dy*gamma + x*k2 + k3.
      double s1 = 0, s2 = 0;
      if (gamma) {
#pragma omp simd reduction(+ : s1, s2)
        for (int64_t i = 0; i < D; ++i) {
          const double gg = static_cast<double>(g[i]) * static_cast<double>(gamma[i]);
          s1 += gg;
          s2 += gg * static_cast<double>(xr[i]);
        }
      } else {
#pragma omp simd reduction(+ : s1, s2)
        for (int64_t i = 0; i < D; ++i) {
          const double gg = static_cast<double>(g[i]);
          s1 += gg;
          s2 += gg * static_cast<double>(xr[i]);
        }
      }
      const double inv_d = 1.0 / static_cast<double>(D);
      const double k2 = -rs * rs * rs * (s2 - m * s1) * inv_d;
      const double k3 = -rs * s1 * inv_d - m * k2;
      T* __restrict d = dx + r * D;
      const T rsT = static_cast<T>(rs), k2T = static_cast<T>(k2), k3T = static_cast<T>(k3);
      if (gamma) {
#pragma omp simd
        for (int64_t i = 0; i < D; ++i) d[i] = g[i] * gamma[i] * rsT + xr[i] * k2T + k3T;
      } else {
#pragma omp simd
        for (int64_t i = 0; i < D; ++i) d[i] = g[i] * rsT + xr[i] * k2T + k3T;
      }
    }
    if (dgamma || dbeta) {
      std::lock_guard<std::mutex> lock(mu);
      for (int64_t i = 0; i < D; ++i) {
        if (dgamma) dg[i] += pg[i];
        if (dbeta) db[i] += pb[i];
      }
    }
  });
  for (int64_t i = 0; i < D; ++i) {
    if (dgamma) dgamma[i] = static_cast<T>(dg[i]);
    if (dbeta) dbeta[i] = static_cast<T>(db[i]);
  }
}

// Note [Layer norm backward in PyTorch's order]
// PyTorch's layer norm backward, per row i with a = rstd, scale = 1 / D:
//   dgamma_buf[j] += dy * (a * x + b), b = -a * mean (both steps fused),
//   dbeta_buf[j] += dy, one buffer per thread of its parallel loop, the
//   buffers summed in thread order from 0 at the end;
//   ds = sum dy * x * gamma, db = sum dy * gamma as its map_reduce_all: the
//   first vector's products, then each vector's added (not fused; the
//   tail's fused), the tail set lane-wise, the lanes folded (AVX2 float: halves, quarters, pairs;
//   else in lane order);
//   b' = (db * mean - ds) * a * a * a * scale, c = -b' * mean - db * a * scale
//   (the first step of each fused), dx = b' * x + a * dy * gamma fused, then
//   + c. Without FMA (DEFAULT) nothing fuses.

// A vector of the n < W values at p, the rest zero.
template <typename T>
inline Vec<T> vload_part(const T* p, int64_t n) {
  T buf[kVecBytes / sizeof(T)] = {};
  for (int64_t l = 0; l < n; ++l) buf[l] = p[l];
  return vload(buf);
}

// All lanes of v added as PyTorch's vec_reduce_all.
inline float fold_lanes(Vec<float> v) {
#if defined(__AVX2__)
  const float h[4] = {v[0] + v[4], v[1] + v[5], v[2] + v[6], v[3] + v[7]};
  return (h[0] + h[2]) + (h[1] + h[3]);
#else
  return fold_in_order<float>(v, 8);
#endif
}
inline double fold_lanes(Vec<double> v) { return fold_in_order<double>(v, 4); }

// sum p * q over D values as PyTorch's map_reduce_all, p and q loaded by
// pq(offset, count) (count < W: the rest zero), the tail's step fused or
// not as PyTorch's compiled kernel does it.
template <typename T, bool kFusedTail = true, typename F>
T sum_of_products(int64_t D, const F& pq) {
  constexpr int64_t W = kVecBytes / sizeof(T);
  if (D < W) {
    const auto [p, q] = pq(0, D);
    return fold_in_order<T>(p * q, D);
  }
  const auto [p0, q0] = pq(0, W);
  Vec<T> acc = p0 * q0;
  int64_t d = W;
  for (; d < D - D % W; d += W) {
    const auto [p, q] = pq(d, W);
    acc = acc + p * q;
  }
  if (d < D) {
    const auto [p, q] = pq(d, D - d);
    const Vec<T> s = kFusedTail ? vmadd(p, q, acc) : acc + p * q;
    for (int64_t l = 0; l < D - d; ++l) acc[l] = s[l];
  }
  return fold_lanes(acc);
}

template <typename T>
void ln_backward(const T* dy, const T* x, const T* mean, const T* rstd, const T* gamma, T* dx, T* dgamma, T* dbeta,
                 int64_t M, int64_t D) {
  using V = Vec<T>;
  constexpr int64_t W = kVecBytes / sizeof(T);
  // PyTorch's parallel_for split (grain 1): a buffer per thread.
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), M));
  const int64_t per = (M + threads - 1) / threads;
  const int64_t slots = get_num_threads();
  std::vector<T> buf(dgamma || dbeta ? 2 * slots * D : 0, T(0));
  const T scale = T(1) / static_cast<T>(D);
  parallel_for(0, M, 1, [&](int64_t b0, int64_t e0) {
    T* __restrict bg = dgamma ? buf.data() + (b0 / per) * D : nullptr;
    T* __restrict bb = dbeta ? buf.data() + (slots + b0 / per) * D : nullptr;
    for (int64_t i = b0; i < e0; ++i) {
      const T* __restrict g = dy + i * D;
      const T* __restrict xr = x + i * D;
      const T a = rstd[i], m = mean[i];
      if (bg) {
        const T b = -a * m;
#pragma omp simd
        for (int64_t j = 0; j < D; ++j) bg[j] = capability_fma(g[j], capability_fma(a, xr[j], b), bg[j]);
      }
      if (bb) {
#pragma omp simd
        for (int64_t j = 0; j < D; ++j) bb[j] = bb[j] + g[j];
      }
      if (!dx) continue;
      auto load = [](const T* p, int64_t d, int64_t n) { return n == W ? vload(p + d) : vload_part(p + d, n); };
      T ds, db;
      if (gamma) {
        ds = sum_of_products<T>(D, [&](int64_t d, int64_t n) {
          return std::pair<V, V>(load(g, d, n) * load(xr, d, n), load(gamma, d, n));
        });
        db = sum_of_products<T>(
            D, [&](int64_t d, int64_t n) { return std::pair<V, V>(load(g, d, n), load(gamma, d, n)); });
      } else {
        ds =
            sum_of_products<T>(D, [&](int64_t d, int64_t n) { return std::pair<V, V>(load(g, d, n), load(xr, d, n)); });
        const V one = V{} + T(1);
        db = sum_of_products<T>(D, [&](int64_t d, int64_t n) { return std::pair<V, V>(load(g, d, n), one); });
      }
      const T bx = capability_fma(db, m, -ds) * a * a * a * scale;
      const T c = capability_fma(-bx, m, -(db * a * scale));
      T* __restrict o = dx + i * D;
      if (gamma) {
#pragma omp simd
        for (int64_t j = 0; j < D; ++j) o[j] = capability_fma(bx, xr[j], a * g[j] * gamma[j]) + c;
      } else {
#pragma omp simd
        for (int64_t j = 0; j < D; ++j) o[j] = capability_fma(bx, xr[j], a * g[j]) + c;
      }
    }
  });
  for (int64_t j = 0; j < D && (dgamma || dbeta); ++j) {
    T sg = 0, sb = 0;
    for (int64_t t = 0; t < slots; ++t) {
      if (dgamma) sg += buf[t * D + j];
      if (dbeta) sb += buf[(slots + t) * D + j];
    }
    if (dgamma) dgamma[j] = sg;
    if (dbeta) dbeta[j] = sb;
  }
}

// ---- group norm -------------------------------------------------------------------

// PyTorch's contiguous group norm: each (n, group) span's moments as a layer
// norm row's (Note [PyTorch's row moments]), rstd from a double sum with eps,
// then (x - mean) * rstd, or x * scale + bias fused per channel.
template <typename T>
void gn_forward(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* rstd, const GroupNormArgs& a, double eps) {
  const int64_t D = a.C / a.group, span = D * a.HxW;
  parallel_for(0, a.N * a.group, std::max<int64_t>(1, 32768 / std::max<int64_t>(span, 1)), [&](int64_t b, int64_t e) {
    // float data of a 16-bit input: read in pairs of vectors
    auto moments = [&](const T* xs, int64_t spans, T* means, T* vars) {
      if constexpr (std::is_same_v<T, float>) {
        if (a.from_16bit) return some_rows_moments<T, 2>(xs, span, span, spans, means, vars);
      }
      some_rows_moments(xs, span, span, spans, means, vars);
    };
    constexpr int64_t block = kRowsAtOnce<T>;
    for (int64_t ng0 = b; ng0 < e; ng0 += block) {
      const int64_t spans = std::min(block, e - ng0);
      T means[block], vars[block];
      moments(x + ng0 * span, spans, means, vars);
      for (int64_t k = 0; k < spans; ++k) {
        const int64_t ng = ng0 + k;
        const T* __restrict xs = x + ng * span;
        T* __restrict ys = y + ng * span;
        const T m = means[k];
        const T rs = static_cast<T>(1.0 / std::sqrt(static_cast<double>(std::max(vars[k], T(0))) + eps));
        mean[ng] = m;
        rstd[ng] = rs;
        if (!gamma && !beta) {
#pragma omp simd
          for (int64_t i = 0; i < span; ++i) ys[i] = (xs[i] - m) * rs;
          continue;
        }
        const int64_t c0 = (ng % a.group) * D;
        for (int64_t d = 0; d < D; ++d) {
          const T s = rs * (gamma ? gamma[c0 + d] : T(1));
          const T t = capability_fma(-s, m, beta ? beta[c0 + d] : T(0));
          const T* __restrict xr = xs + d * a.HxW;
          T* __restrict yr = ys + d * a.HxW;
#pragma omp simd
          for (int64_t i = 0; i < a.HxW; ++i) yr[i] = capability_fma(s, xr[i], t);
        }
      }
    }
  });
}

// A 16-bit input's float data: sums in double.
template <typename T>
void gn_backward_16bit(const T* dy, const T* x, const T* mean, const T* rstd, const T* gamma, T* dx, T* dgamma,
                       T* dbeta, const GroupNormArgs& a) {
  const int64_t D = a.C / a.group, span = D * a.HxW;
  // Per (n, c): ds = sum dy*x, db = sum dy.
  std::vector<double> ds(a.N * a.C), db(a.N * a.C);
  parallel_for(0, a.N * a.group, std::max<int64_t>(1, 16384 / std::max<int64_t>(span, 1)), [&](int64_t b, int64_t e) {
    for (int64_t ng = b; ng < e; ++ng) {
      const int64_t n = ng / a.group, c0 = (ng % a.group) * D;
      const double m = static_cast<double>(mean[ng]), rs = static_cast<double>(rstd[ng]);
      double sum1 = 0, sum2 = 0;  // sum over the group of ds*gamma and db*gamma
      for (int64_t d = 0; d < D; ++d) {
        const int64_t off = ng * span + d * a.HxW;
        double s_dy = 0, s_dyx = 0;
        row_dot2(dy + off, x + off, a.HxW, s_dy, s_dyx);
        ds[n * a.C + c0 + d] = s_dyx;
        db[n * a.C + c0 + d] = s_dy;
        const double gm = gamma ? static_cast<double>(gamma[c0 + d]) : 1.0;
        sum1 += s_dyx * gm;
        sum2 += s_dy * gm;
      }
      if (!dx) continue;
      const double s = 1.0 / static_cast<double>(span);
      const double c2 = (sum2 * m - sum1) * rs * rs * rs * s;
      const double c3 = -c2 * m - sum2 * rs * s;
      for (int64_t d = 0; d < D; ++d) {
        const int64_t off = ng * span + d * a.HxW;
        const T c1 = static_cast<T>(rs * (gamma ? static_cast<double>(gamma[c0 + d]) : 1.0));
        const T c2T = static_cast<T>(c2), c3T = static_cast<T>(c3);
        const T *g = dy + off, *xr = x + off;
        T* o = dx + off;
#pragma omp simd
        for (int64_t i = 0; i < a.HxW; ++i) o[i] = g[i] * c1 + xr[i] * c2T + c3T;
      }
    }
  });
  if (dgamma || dbeta) {
    for (int64_t c = 0; c < a.C; ++c) {
      double gsum = 0, bsum = 0;
      const int64_t grp = c / D;
      for (int64_t n = 0; n < a.N; ++n) {
        const double m = static_cast<double>(mean[n * a.group + grp]);
        const double rs = static_cast<double>(rstd[n * a.group + grp]);
        gsum += (ds[n * a.C + c] - db[n * a.C + c] * m) * rs;
        bsum += db[n * a.C + c];
      }
      if (dgamma) dgamma[c] = static_cast<T>(gsum);
      if (dbeta) dbeta[c] = static_cast<T>(bsum);
    }
  }
}

// Note [Group norm backward in PyTorch's order]
// PyTorch's contiguous group norm backward (float, double): per (n, c)
// ds = sum dy * x and db = sum dy as map_reduce_all (sum_of_products); per
// (n, group) the channels' ds * gamma and db * gamma summed in vector lanes
// (fused), the lanes added in order from 0, the channels left over after
// them; c2 = (db * mean - ds) * rstd^3 / (D * HxW) (its first step
// fused), c3 = -c2 * mean - db * rstd / (D * HxW) (the second product fused
// in), dx = c1 * dy + c2 * x fused, then + c3 (c1 = rstd * gamma); dgamma[c] =
// sum over n of (ds - db * mean) * rstd, dbeta[c] = sum over n of db, each
// step fused.
template <typename T>
void gn_backward(const T* dy, const T* x, const T* mean, const T* rstd, const T* gamma, T* dx, T* dgamma, T* dbeta,
                 const GroupNormArgs& a) {
  using V = Vec<T>;
  constexpr int64_t W = kVecBytes / sizeof(T);
  const int64_t G = a.group, D = a.C / G, HxW = a.HxW, C = a.C;
  std::vector<T> ds(a.N * C), db(a.N * C);
  // PyTorch's compiler fuses the tail step of the double sums over HxW and
  // of the float sums over a group's channels (found by experiment; with a
  // weight, some channel counts still differ in the input gradient).
  constexpr bool kDouble = std::is_same_v<T, double>;
  auto load = [](const T* p, int64_t d, int64_t n) { return n == W ? vload(p + d) : vload_part(p + d, n); };
  parallel_for(0, a.N * C, 1, [&](int64_t b0, int64_t e0) {
    const V one = V{} + T(1);
    for (int64_t i = b0; i < e0; ++i) {
      const T* g = dy + i * HxW;
      const T* xr = x + i * HxW;
      ds[i] = sum_of_products<T, kDouble>(
          HxW, [&](int64_t d, int64_t n) { return std::pair<V, V>(load(g, d, n), load(xr, d, n)); });
      db[i] =
          sum_of_products<T, kDouble>(HxW, [&](int64_t d, int64_t n) { return std::pair<V, V>(load(g, d, n), one); });
    }
  });
  if (dx) {
    const T s = T(1) / static_cast<T>(D * HxW);
    parallel_for(0, a.N * G, 1, [&](int64_t b0, int64_t e0) {
      const int64_t d_vec = D / W * W;
      for (int64_t i = b0; i < e0; ++i) {
        const int64_t grp = i % G;
        const T* dsp = ds.data() + i * D;
        const T* dbp = db.data() + i * D;
        const T* gp = gamma ? gamma + grp * D : nullptr;
        V ds_acc{}, db_acc{};
        for (int64_t j = 0; j < d_vec; j += W) {
          const V gv = gp ? vload(gp + j) : V{} + T(1);
          ds_acc = vmadd(vload(dsp + j), gv, ds_acc);
          db_acc = vmadd(vload(dbp + j), gv, db_acc);
        }
        T ds_val = 0, db_val = 0;
        for (int64_t l = 0; l < W; ++l) {
          ds_val += ds_acc[l];
          db_val += db_acc[l];
        }
        for (int64_t j = d_vec; j < D; ++j) {
          const T gv = gp ? gp[j] : T(1);
          if constexpr (kDouble) {
            ds_val = ds_val + dsp[j] * gv;
            db_val = db_val + dbp[j] * gv;
          } else {
            ds_val = capability_fma(dsp[j], gv, ds_val);
            db_val = capability_fma(dbp[j], gv, db_val);
          }
        }
        const T m = mean[i], r = rstd[i];
        const T c2 = capability_fma(db_val, m, -ds_val) * r * r * r * s;
        const T c3 = capability_fma(-(db_val * r), s, -c2 * m);
        for (int64_t j = 0; j < D; ++j) {
          const T c1 = r * (gp ? gp[j] : T(1));
          const T* __restrict gr = dy + (i * D + j) * HxW;
          const T* __restrict xr = x + (i * D + j) * HxW;
          T* __restrict o = dx + (i * D + j) * HxW;
#pragma omp simd
          for (int64_t k = 0; k < HxW; ++k) o[k] = capability_fma(c1, gr[k], c2 * xr[k]) + c3;
        }
      }
    });
  }
  for (int64_t c = 0; c < C && (dgamma || dbeta); ++c) {
    const int64_t grp = c / D;
    T sg = 0, sb = 0;
    for (int64_t n = 0; n < a.N; ++n) {
      const T m = mean[n * G + grp], r = rstd[n * G + grp];
      sg = capability_fma(capability_fma(-db[n * C + c], m, ds[n * C + c]), r, sg);
      sb = sb + db[n * C + c];
    }
    if (dgamma) dgamma[c] = sg;
    if (dbeta) dbeta[c] = sb;
  }
}

// ---- registered entry points --------------------------------------------------------

#define EMBER_NORM_PTR(p) static_cast<const T*>(p)
#define EMBER_NORM_MUT(p) static_cast<T*>(p)

void batch_norm_stats_kernel(ScalarType dt, const void* x, void* mean, void* var_sum, const BatchNormArgs& a) {
  dispatch_norm_types(dt, "batch_norm", [&](auto v) {
    using T = decltype(v);
    bn_stats(EMBER_NORM_PTR(x), EMBER_NORM_MUT(mean), EMBER_NORM_MUT(var_sum), a);
  });
}

void batch_norm_apply_kernel(ScalarType dt, const void* x, void* y, const void* mean, const void* invstd,
                             const void* weight, const void* bias, const BatchNormArgs& a) {
  dispatch_norm_types(dt, "batch_norm", [&](auto v) {
    using T = decltype(v);
    bn_apply(EMBER_NORM_PTR(x), EMBER_NORM_MUT(y), EMBER_NORM_PTR(mean), EMBER_NORM_PTR(invstd), EMBER_NORM_PTR(weight),
             EMBER_NORM_PTR(bias), a);
  });
}

void batch_norm_backward_reduce_kernel(ScalarType dt, const void* dy, const void* x, const void* mean, void* sum_dy,
                                       void* sum_dy_xmu, const BatchNormArgs& a) {
  dispatch_norm_types(dt, "batch_norm_backward", [&](auto v) {
    using T = decltype(v);
    bn_backward_reduce(EMBER_NORM_PTR(dy), EMBER_NORM_PTR(x), EMBER_NORM_PTR(mean), EMBER_NORM_MUT(sum_dy),
                       EMBER_NORM_MUT(sum_dy_xmu), a);
  });
}

void batch_norm_backward_contiguous_kernel(ScalarType dt, const void* dy, const void* x, const void* weight,
                                           const void* mean, const void* invstd, void* dx, void* dw, void* db,
                                           bool train, const BatchNormArgs& a) {
  dispatch_norm_types(dt, "batch_norm_backward", [&](auto v) {
    using T = decltype(v);
    bn_backward_contiguous(EMBER_NORM_PTR(dy), EMBER_NORM_PTR(x), EMBER_NORM_PTR(weight), EMBER_NORM_PTR(mean),
                           EMBER_NORM_PTR(invstd), EMBER_NORM_MUT(dx), EMBER_NORM_MUT(dw), EMBER_NORM_MUT(db), train,
                           a);
  });
}

void batch_norm_backward_rows_kernel(ScalarType dt, const void* dy, const void* x, const void* weight, const void* mean,
                                     const void* invstd, void* dx, void* dw, void* db, bool train,
                                     const BatchNormArgs& a) {
  dispatch_norm_types(dt, "batch_norm_backward", [&](auto v) {
    using T = decltype(v);
    bn_backward_rows(EMBER_NORM_PTR(dy), EMBER_NORM_PTR(x), EMBER_NORM_PTR(weight), EMBER_NORM_PTR(mean),
                     EMBER_NORM_PTR(invstd), EMBER_NORM_MUT(dx), EMBER_NORM_MUT(dw), EMBER_NORM_MUT(db), train, a);
  });
}

void batch_norm_backward_apply_kernel(ScalarType dt, const void* dy, const void* x, void* dx, const void* k1,
                                      const void* k2, const void* k3, const BatchNormArgs& a) {
  dispatch_norm_types(dt, "batch_norm_backward", [&](auto v) {
    using T = decltype(v);
    bn_backward_apply(EMBER_NORM_PTR(dy), EMBER_NORM_PTR(x), EMBER_NORM_MUT(dx), EMBER_NORM_PTR(k1), EMBER_NORM_PTR(k2),
                      EMBER_NORM_PTR(k3), a);
  });
}

void layer_norm_kernel(ScalarType dt, const void* x, const void* gamma, const void* beta, void* y, void* mean,
                       void* rstd, int64_t M, int64_t D, double eps) {
  dispatch_norm_types(dt, "LayerNormKernelImpl", [&](auto v) {
    using T = decltype(v);
    ln_forward(EMBER_NORM_PTR(x), EMBER_NORM_PTR(gamma), EMBER_NORM_PTR(beta), EMBER_NORM_MUT(y), EMBER_NORM_MUT(mean),
               EMBER_NORM_MUT(rstd), M, D, eps);
  });
}

void layer_norm_16bit_kernel(ScalarType dt, const void* x, const void* gamma, const void* beta, void* y, void* mean,
                             void* rstd, int64_t M, int64_t D, double eps) {
  auto run = [&](auto h) {
    using H = decltype(h);
    ln_forward_16bit(static_cast<const H*>(x), static_cast<const float*>(gamma), static_cast<const float*>(beta),
                     static_cast<H*>(y), static_cast<float*>(mean), static_cast<float*>(rstd), M, D, eps);
  };
  if (dt == ScalarType::BFloat16) {
    run(BFloat16{});
  } else {
    run(Half{});
  }
}

void layer_norm_backward_kernel(ScalarType dt, const void* dy, const void* x, const void* mean, const void* rstd,
                                const void* gamma, void* dx, void* dgamma, void* dbeta, int64_t M, int64_t D) {
  if (dt == ScalarType::BFloat16 || dt == ScalarType::Half) {  // float data
    using T = float;
    ln_backward_16bit(EMBER_NORM_PTR(dy), EMBER_NORM_PTR(x), EMBER_NORM_PTR(mean), EMBER_NORM_PTR(rstd),
                      EMBER_NORM_PTR(gamma), EMBER_NORM_MUT(dx), EMBER_NORM_MUT(dgamma), EMBER_NORM_MUT(dbeta), M, D);
    return;
  }
  dispatch_norm_types(dt, "LayerNormBackwardKernelImpl", [&](auto v) {
    using T = decltype(v);
    ln_backward(EMBER_NORM_PTR(dy), EMBER_NORM_PTR(x), EMBER_NORM_PTR(mean), EMBER_NORM_PTR(rstd),
                EMBER_NORM_PTR(gamma), EMBER_NORM_MUT(dx), EMBER_NORM_MUT(dgamma), EMBER_NORM_MUT(dbeta), M, D);
  });
}

void group_norm_kernel(ScalarType dt, const void* x, const void* gamma, const void* beta, void* y, void* mean,
                       void* rstd, const GroupNormArgs& a, double eps) {
  dispatch_norm_types(dt, "GroupNormKernelImpl", [&](auto v) {
    using T = decltype(v);
    gn_forward(EMBER_NORM_PTR(x), EMBER_NORM_PTR(gamma), EMBER_NORM_PTR(beta), EMBER_NORM_MUT(y), EMBER_NORM_MUT(mean),
               EMBER_NORM_MUT(rstd), a, eps);
  });
}

void group_norm_backward_kernel(ScalarType dt, const void* dy, const void* x, const void* mean, const void* rstd,
                                const void* gamma, void* dx, void* dgamma, void* dbeta, const GroupNormArgs& a) {
  if (a.from_16bit) {
    using T = float;
    gn_backward_16bit(EMBER_NORM_PTR(dy), EMBER_NORM_PTR(x), EMBER_NORM_PTR(mean), EMBER_NORM_PTR(rstd),
                      EMBER_NORM_PTR(gamma), EMBER_NORM_MUT(dx), EMBER_NORM_MUT(dgamma), EMBER_NORM_MUT(dbeta), a);
    return;
  }
  dispatch_norm_types(dt, "GroupNormBackwardKernelImpl", [&](auto v) {
    using T = decltype(v);
    gn_backward(EMBER_NORM_PTR(dy), EMBER_NORM_PTR(x), EMBER_NORM_PTR(mean), EMBER_NORM_PTR(rstd),
                EMBER_NORM_PTR(gamma), EMBER_NORM_MUT(dx), EMBER_NORM_MUT(dgamma), EMBER_NORM_MUT(dbeta), a);
  });
}

#undef EMBER_NORM_PTR
#undef EMBER_NORM_MUT

}  // namespace

EMBER_REGISTER_DISPATCH(batch_norm_stats_stub, &batch_norm_stats_kernel);
EMBER_REGISTER_DISPATCH(batch_norm_apply_stub, &batch_norm_apply_kernel);
EMBER_REGISTER_DISPATCH(batch_norm_backward_reduce_stub, &batch_norm_backward_reduce_kernel);
EMBER_REGISTER_DISPATCH(batch_norm_backward_apply_stub, &batch_norm_backward_apply_kernel);
EMBER_REGISTER_DISPATCH(batch_norm_backward_contiguous_stub, &batch_norm_backward_contiguous_kernel);
EMBER_REGISTER_DISPATCH(batch_norm_backward_rows_stub, &batch_norm_backward_rows_kernel);
EMBER_REGISTER_DISPATCH(layer_norm_stub, &layer_norm_kernel);
EMBER_REGISTER_DISPATCH(layer_norm_16bit_stub, &layer_norm_16bit_kernel);
EMBER_REGISTER_DISPATCH(layer_norm_backward_stub, &layer_norm_backward_kernel);
EMBER_REGISTER_DISPATCH(group_norm_stub, &group_norm_kernel);
EMBER_REGISTER_DISPATCH(group_norm_backward_stub, &group_norm_backward_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
