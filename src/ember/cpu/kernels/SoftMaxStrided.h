#pragma once
// Softmax, log_softmax and their gradients along a dim whose inner size is
// above 1, in PyTorch's loops (Note [Softmax along a strided dim]).
//
// Note [Softmax along a strided dim]
// The input is a contiguous [outer, n, inner] block; each of the outer x
// inner columns is normalised over its n elements, inner elements apart.
// PyTorch 2.13 runs:
// - softmax: the columns split evenly over the threads (grain 0); from each
//   column a run of one Vectorized<T> (or, where the run would cross the
//   end of a row of columns or of the thread's range, the rest one column at
//   a time, libm's exp and std::max); per vector column NaN-propagating max,
//   SLEEF's exp of x - max, the sum in order, then each exp divided by it.
//   The 16-bit types compute in float and round each output once, but their
//   scalar columns round the exp to the dtype before the division.
// - log_softmax and both gradients: the columns of each outer index in
//   chunks of about 128 KB (a multiple of Vectorized<T>'s size), the chunks
//   split evenly over the threads; within a chunk the columns below the last
//   whole vector take SLEEF's exp (the rest libm's); the max keeps the first
//   of equal values and skips NaN (x > max ? x : max); log of the sums by
//   SLEEF for every column; out = x - max - log(sum).
//   Gradients: s = sum g y (softmax) or sum g (log_softmax), then y (g - s)
//   or g - exp(y) s.
// Each step is spelled out as PyTorch's GCC build computes it: it fuses the
// gradients' s + g y and g - exp(y) s, vector and scalar alike (found by
// trying each against torch 2.13; SoftMaxKernel.cpp builds without
// contraction).
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "ember/cpu/kernels/SleefLoops.h"
#include "ember/ops/Parallel.h"

#if EMBER_SLEEF_LOOPS
namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace strided_softmax {

using sleefvec::compute_t;
using sleefvec::Vec;

// Elements in one Vectorized<T> of PyTorch's build.
template <typename T>
constexpr int64_t vec_size = is_16bit_float_v<T> ? 2 * Vec<float>::size : Vec<compute_t<T>>::size;

// 16-bit <-> float vectors of Vec<float>::size lanes (round to nearest even,
// NaN to the quiet NaN, as the element conversions).
#if EMBER_SLEEF_AVX512
inline __m512 load_16bit(const Half* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline __m512 load_16bit(const BFloat16* p) {
  const __m512i u = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
}
inline void store_16bit(Half* p, __m512 v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline void store_16bit(BFloat16* p, __m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7fc0));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(r));
}
#else
inline __m256 load_16bit(const Half* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 load_16bit(const BFloat16* p) {
  const __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
}
inline void store_16bit(Half* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline void store_16bit(BFloat16* p, __m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc0), _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xD8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
}
#endif

// W::size values of T from p, in the computation type.
template <typename T>
inline typename Vec<compute_t<T>>::V load_c(const T* p) {
  if constexpr (is_16bit_float_v<T>) {
    return load_16bit(p);
  } else {
    return Vec<T>::load(p);
  }
}

// v rounded to T at p (W::size values).
template <typename T>
inline void store_t(T* p, typename Vec<compute_t<T>>::V v) {
  if constexpr (is_16bit_float_v<T>) {
    store_16bit(p, v);
  } else {
    Vec<T>::store(p, v);
  }
}

// n 16-bit values from p into out as floats.
template <typename T>
void to_c(const T* p, float* out, int64_t n) {
  using W = Vec<float>;
  int64_t j = 0;
  for (; j + W::size <= n; j += W::size) W::store(out + j, load_16bit(p + j));
  for (; j < n; ++j) out[j] = static_cast<float>(p[j]);
}

// x > m ? x : m per lane (m where x is NaN).
#if EMBER_SLEEF_AVX512
inline __m512 keep_max(__m512 x, __m512 m) { return _mm512_max_ps(x, m); }
inline __m512d keep_max(__m512d x, __m512d m) { return _mm512_max_pd(x, m); }
#else
inline __m256 keep_max(__m256 x, __m256 m) { return _mm256_max_ps(x, m); }
inline __m256d keep_max(__m256d x, __m256d m) { return _mm256_max_pd(x, m); }
#endif

// PyTorch's vec_logsoftmax_chunk_size_and_num_chunks: (chunk, chunks).
template <typename T>
std::pair<int64_t, int64_t> chunking(int64_t inner, int64_t n) {
  constexpr int64_t V = vec_size<T>;
  int64_t max_chunk = std::max<int64_t>(int64_t(131072 / static_cast<uint64_t>(n) / sizeof(T)), V);
  max_chunk = max_chunk / V * V;
  const int64_t chunk = std::min(max_chunk, inner);
  return {chunk, (inner + chunk - 1) / chunk};
}

// f(o, c0, size, body) for each chunk of columns: outer index o, first
// column c0, size columns of which the first body are vector columns.
template <typename T, typename F>
void for_each_chunk(int64_t outer, int64_t n, int64_t inner, const F& f) {
  const auto [chunk, chunks] = chunking<T>(inner, n);
  parallel_for(0, outer * chunks, 0, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t o = i / chunks, c0 = (i % chunks) * chunk;
      const int64_t size = std::min(chunk, inner - c0);
      f(o, c0, size, size - size % vec_size<T>, chunk);
    }
  });
}

// y = log_softmax(x).
template <typename T>
void log_softmax(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  using C = compute_t<T>;
  using W = Vec<C>;
  const auto exp = W::unary(sleef::Exp), log = W::unary(sleef::Log);
  for_each_chunk<T>(outer, n, inner, [&](int64_t o, int64_t c0, int64_t size, int64_t body, int64_t chunk) {
    // Locals, so that the loops keep them in registers.
    const auto vexp = exp, vlog = log;
    const int64_t rows = n, stride = inner;
    const T* const xb = x + o * rows * stride + c0;
    T* const yb = y + o * rows * stride + c0;
    thread_local std::vector<C> buf;
    buf.resize(static_cast<size_t>((is_16bit_float_v<T> ? rows + 2 : 2) * chunk));
    C* const m = buf.data();
    C* const s = m + chunk;
    C* const xc = s + chunk;  // 16-bit: the chunk's rows as floats
    // Row d of the chunk in C: the input itself, or its float copy.
    const auto row = [xb, xc, stride, chunk](int64_t d) -> const C* {
      if constexpr (is_16bit_float_v<T>) {
        return xc + d * chunk;
      } else {
        return xb + d * stride;
      }
    };
    for (int64_t j = 0; j < size; ++j) {
      m[j] = -std::numeric_limits<C>::infinity();
      s[j] = C(0);
    }
    for (int64_t d = 0; d < rows; ++d) {
      if constexpr (is_16bit_float_v<T>) to_c(xb + d * stride, xc + d * chunk, size);
      const C* xr = row(d);
      int64_t j = 0;
      for (; j + W::size <= size; j += W::size) W::store(m + j, keep_max(W::load(xr + j), W::load(m + j)));
      for (; j < size; ++j) m[j] = xr[j] > m[j] ? xr[j] : m[j];
    }
    for (int64_t d = 0; d < rows; ++d) {
      const C* xr = row(d);
      int64_t j = 0;
      for (; j < body; j += W::size) {
        W::store(s + j, W::add(W::load(s + j), vexp(W::sub(W::load(xr + j), W::load(m + j)))));
      }
      for (; j < size; ++j) s[j] += std::exp(xr[j] - m[j]);
    }
    int64_t j = 0;
    for (; j + W::size <= size; j += W::size) W::store(s + j, vlog(W::load(s + j)));
    if (j < size) W::store(s + j, vlog(W::load(s + j, size - j)), size - j);
    for (int64_t d = 0; d < rows; ++d) {
      const C* xr = row(d);
      T* out = yb + d * stride;
      int64_t k = 0;
      for (; k + W::size <= size; k += W::size) {
        store_t(out + k, W::sub(W::sub(W::load(xr + k), W::load(m + k)), W::load(s + k)));
      }
      for (; k < size; ++k) out[k] = static_cast<T>(xr[k] - m[k] - s[k]);
    }
  });
}

// Full vector runs of one row of columns taken together in softmax: each
// column keeps PyTorch's arithmetic, but a pass over the rows reads this many
// bytes of each row instead of one vector, which the hardware fetches far
// better when rows lie pages apart.
constexpr int64_t kSoftmaxBlockBytes = 256;

// y = softmax(x).
template <typename T>
void softmax(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  using C = compute_t<T>;
  using W = Vec<C>;
  using V = typename W::V;
  constexpr int64_t step = vec_size<T>;
  constexpr int64_t max_vecs = std::max<int64_t>(1, kSoftmaxBlockBytes / int64_t(sizeof(C) * W::size));
  constexpr int64_t max_runs = std::max<int64_t>(1, max_vecs * W::size / step);
  const auto exp = W::unary(sleef::Exp);
  parallel_for(0, outer * inner, 0, [&](int64_t b, int64_t e) {
    // Locals, so that the loops keep them in registers.
    const auto vexp = exp;
    const int64_t n_ = n, inner_ = inner;
    const T* const x_ = x;
    T* const y_ = y;
    thread_local std::vector<C> buf;
    buf.resize(static_cast<size_t>(2 * n_ * max_runs * step));
    C* const ex = buf.data();
    C* const in = ex + n_ * max_runs * step;  // 16-bit inputs converted once, as PyTorch's
    int64_t idx = b;
    while (idx < e) {
      const int64_t o = idx / inner_, c = idx % inner_;
      if (c + step <= inner_ && idx + step <= e) {
        int64_t runs = 1;
        while (runs < max_runs && c + (runs + 1) * step <= inner_ && idx + (runs + 1) * step <= e) ++runs;
        const int64_t nv = runs * step / W::size;  // independent vector columns
        const T* const xc = x_ + o * n_ * inner_ + c;
        T* const yc = y_ + o * n_ * inner_ + c;
        const auto at = [xc, inner_](int64_t d, int64_t h) { return load_c(xc + d * inner_ + h * W::size); };
        V mv[max_vecs], sv[max_vecs];
        for (int64_t h = 0; h < nv; ++h) {
          mv[h] = at(0, h);
          if constexpr (is_16bit_float_v<T>) W::store(in + h * W::size, mv[h]);
        }
        for (int64_t d = 1; d < n_; ++d) {
          for (int64_t h = 0; h < nv; ++h) {
            const auto v = at(d, h);
            if constexpr (is_16bit_float_v<T>) W::store(in + (d * nv + h) * W::size, v);
            mv[h] = W::maximum(mv[h], v);
          }
        }
        for (int64_t h = 0; h < nv; ++h) sv[h] = W::set1(C(0));
        for (int64_t d = 0; d < n_; ++d) {
          for (int64_t h = 0; h < nv; ++h) {
            const auto xv = is_16bit_float_v<T> ? W::load(in + (d * nv + h) * W::size) : at(d, h);
            const auto ev = vexp(W::sub(xv, mv[h]));
            W::store(ex + (d * nv + h) * W::size, ev);
            sv[h] = W::add(sv[h], ev);
          }
        }
        for (int64_t d = 0; d < n_; ++d) {
          for (int64_t h = 0; h < nv; ++h) {
            store_t(yc + d * inner_ + h * W::size, W::div(W::load(ex + (d * nv + h) * W::size), sv[h]));
          }
        }
        idx += runs * step;
        continue;
      }
      const int64_t tail = idx + step > e ? e - idx : inner_ - c;
      for (int64_t t = idx; t < idx + tail; ++t) {
        const T* col = x_ + (t / inner_) * n_ * inner_ + t % inner_;
        T* out = y_ + (t / inner_) * n_ * inner_ + t % inner_;
        C m = static_cast<C>(col[0]);
        for (int64_t d = 1; d < n_; ++d) m = std::max(m, static_cast<C>(col[d * inner_]));
        C s = C(0);
        for (int64_t d = 0; d < n_; ++d) {
          const C ev = std::exp(static_cast<C>(col[d * inner_]) - m);
          s += ev;
          out[d * inner_] = static_cast<T>(ev);
        }
        for (int64_t d = 0; d < n_; ++d) out[d * inner_] = static_cast<T>(static_cast<C>(out[d * inner_]) / s);
      }
      idx += tail;
    }
  });
}

// gx = softmax'(y) g (log: log_softmax'(y) g).
template <typename T>
void softmax_backward(const T* g, const T* y, T* gx, int64_t outer, int64_t n, int64_t inner, bool log) {
  using C = compute_t<T>;
  using W = Vec<C>;
  const auto exp = W::unary(sleef::Exp);
  for_each_chunk<T>(outer, n, inner, [&](int64_t o, int64_t c0, int64_t size, int64_t body, int64_t chunk) {
    // Locals, so that the loops keep them in registers.
    const auto vexp = exp;
    const bool is_log = log;
    const int64_t rows = n, stride = inner, base = o * n * inner + c0;
    const T* const gb = g + base;
    const T* const yb = y + base;
    T* const ob = gx + base;
    thread_local std::vector<C> buf;
    buf.resize(static_cast<size_t>(chunk));
    C* const s = buf.data();
    for (int64_t j = 0; j < size; ++j) s[j] = C(0);
    for (int64_t d = 0; d < rows; ++d) {
      const T* gr = gb + d * stride;
      const T* yr = yb + d * stride;
      int64_t j = 0;
      if (is_log) {
        for (; j + W::size <= size; j += W::size) W::store(s + j, W::add(W::load(s + j), load_c(gr + j)));
        for (; j < size; ++j) s[j] += static_cast<C>(gr[j]);
        continue;
      }
      for (; j < body; j += W::size)
        W::store(s + j, W::fmadd(load_c(gr + j), load_c(yr + j), W::load(s + j)));  // fused
      for (; j < size; ++j) s[j] = std::fma(static_cast<C>(gr[j]), static_cast<C>(yr[j]), s[j]);  // fused
    }
    for (int64_t d = 0; d < rows; ++d) {
      const T* gr = gb + d * stride;
      const T* yr = yb + d * stride;
      T* out = ob + d * stride;
      int64_t j = 0;
      for (; j < body; j += W::size) {
        const auto gv = load_c(gr + j), yv = load_c(yr + j), sv = W::load(s + j);
        store_t(out + j, is_log ? W::fnmadd(vexp(yv), sv, gv) : W::mul(yv, W::sub(gv, sv)));  // fused
      }
      for (; j < size; ++j) {
        const C gv = static_cast<C>(gr[j]), yv = static_cast<C>(yr[j]);
        out[j] = static_cast<T>(is_log ? std::fma(-std::exp(yv), s[j], gv) : yv * (gv - s[j]));  // fused
      }
    }
  });
}

}  // namespace strided_softmax
}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
#endif
