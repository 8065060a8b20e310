#pragma once
// Inner loops of the elementwise math kernels: element types of the output
// and inputs may differ (comparisons write bool), contiguous operands take a
// plain indexed loop the compiler vectorises, and float-like types have a
// SIMD path through vecmath.

#include <algorithm>
#include <optional>
#include <type_traits>

#include "ember/cpu/Blas.h"
#include "ember/cpu/kernels/Loops.h"
#include "ember/cpu/kernels/VecMath.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) for the C++ type T of dtype t. Unlike
// EMBER_DISPATCH_ALL_TYPES, f is a template, so `if constexpr` branches that
// do not apply to T are not compiled for it. Vector builds have the floating
// types only (Note [Vector builds compile the floating types]).
template <typename F>
inline void dispatch_types(ScalarType t, const F& f) {
  switch (t) {
    case ScalarType::Half: return f(TypeTag<Half>{});
    case ScalarType::Float: return f(TypeTag<float>{});
    case ScalarType::Double: return f(TypeTag<double>{});
    case ScalarType::BFloat16: return f(TypeTag<BFloat16>{});
#if EMBER_CPU_BASELINE_BUILD
    case ScalarType::Byte: return f(TypeTag<uint8_t>{});
    case ScalarType::Char: return f(TypeTag<int8_t>{});
    case ScalarType::Short: return f(TypeTag<int16_t>{});
    case ScalarType::Int: return f(TypeTag<int32_t>{});
    case ScalarType::Long: return f(TypeTag<int64_t>{});
    case ScalarType::Bool: return f(TypeTag<bool>{});
#endif
    default:
      if (is_limited_type(t)) dispatch_type_error(t, "kernel");  // Note [Limited dtypes]
      EMBER_INTERNAL_ASSERT(false, "kernel: no loops for ", scalar_type_name(t), " in this build");
  }
}

template <typename T>
constexpr bool is_float_like_v = std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
inline T& at(char* base, int64_t stride, int64_t i) {
  return *reinterpret_cast<T*>(base + i * stride);
}

// out[i] = op(load_element(a + i)).
// The loops take op by value: a local copy cannot alias the output, so the
// compiler keeps its captured values in registers.
template <typename Out, typename A, typename Op>
inline void loop1(char** data, const int64_t* strides, int64_t n, const Op op) {
  if (strides[0] == sizeof(Out) && strides[1] == sizeof(A)) {
    Out* out = reinterpret_cast<Out*>(data[0]);
    const A* a = reinterpret_cast<const A*>(data[1]);
    for (int64_t i = 0; i < n; ++i) out[i] = op(load_element(a + i));
  } else {
    for (int64_t i = 0; i < n; ++i) at<Out>(data[0], strides[0], i) = op(load_element(&at<A>(data[1], strides[1], i)));
  }
}

// out[i] = op(load_element(a + i), load_element(b + i)); a scalar (stride 0) operand is read once.
template <typename Out, typename A, typename B, typename Op>
inline void loop2(char** data, const int64_t* strides, int64_t n, const Op op) {
  Out* out = reinterpret_cast<Out*>(data[0]);
  const A* a = reinterpret_cast<const A*>(data[1]);
  const B* b = reinterpret_cast<const B*>(data[2]);
  if (strides[0] == sizeof(Out)) {
    if (strides[1] == sizeof(A) && strides[2] == sizeof(B)) {
      for (int64_t i = 0; i < n; ++i) out[i] = op(load_element(a + i), load_element(b + i));
      return;
    }
    if (strides[1] == sizeof(A) && strides[2] == 0) {
      const B bv = load_element(b);
      for (int64_t i = 0; i < n; ++i) out[i] = op(load_element(a + i), bv);
      return;
    }
    if (strides[1] == 0 && strides[2] == sizeof(B)) {
      const A av = load_element(a);
      for (int64_t i = 0; i < n; ++i) out[i] = op(av, load_element(b + i));
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    at<Out>(data[0], strides[0], i) =
        op(load_element(&at<A>(data[1], strides[1], i)), load_element(&at<B>(data[2], strides[2], i)));
  }
}

// out[i] = op(load_element(a + i), load_element(b + i), load_element(c + i)).
template <typename Out, typename A, typename B, typename C, typename Op>
inline void loop3(char** data, const int64_t* strides, int64_t n, const Op op) {
  if (strides[0] == sizeof(Out) && strides[1] == sizeof(A) && strides[2] == sizeof(B) && strides[3] == sizeof(C)) {
    Out* out = reinterpret_cast<Out*>(data[0]);
    const A* a = reinterpret_cast<const A*>(data[1]);
    const B* b = reinterpret_cast<const B*>(data[2]);
    const C* c = reinterpret_cast<const C*>(data[3]);
    for (int64_t i = 0; i < n; ++i) out[i] = op(load_element(a + i), load_element(b + i), load_element(c + i));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    at<Out>(data[0], strides[0], i) =
        op(load_element(&at<A>(data[1], strides[1], i)), load_element(&at<B>(data[2], strides[2], i)),
           load_element(&at<C>(data[3], strides[3], i)));
  }
}

// ---- 16-bit floats ---------------------------------------------------------------------
// Note [16-bit float loops]
// float16 and bfloat16 compute in float, as in PyTorch: a chunk of each
// input is converted to float in bulk (F16C instructions where compiled in,
// shifts for bfloat16), the op runs over float arrays, and the results are
// rounded back in bulk. The conversions round to nearest even like Half and
// BFloat16's own, so results equal an element-by-element loop.

template <typename T>
constexpr bool is_16bit_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// How many of an inner loop's n 16-bit elements PyTorch's vectorized loop
// computes: whole blocks of kBlock (two of its vectors: 32 for the kernels
// on Vectorized<float> pairs, 2 * Vectorized<T>::size() for those on
// Vectorized<T>) where the output is contiguous and each of the N inputs
// contiguous, one of them possibly a broadcast number; none in a build
// without vector kernels. Its scalar loop takes the rest, in some operators
// with other roundings (Note [16-bit add with alpha], Note [16-bit rsqrt]).
template <typename T, int N, int64_t kBlock = 32>
inline int64_t pytorch_vector_body(const int64_t* strides, int64_t n) {
  constexpr int64_t kSize = sizeof(T);
  if (EMBER_CPU_BASELINE_BUILD || strides[0] != kSize) return 0;
  int broadcast = 0;
  for (int k = 1; k <= N; ++k) {
    if (strides[k] != kSize && strides[k] != 0) return 0;
    broadcast += strides[k] == 0;
  }
  return broadcast <= 1 ? n / kBlock * kBlock : 0;
}

constexpr int kChunk = 256;

template <typename T>
inline void cvt_to_float(const T* in, float* out, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, Half>) {
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8) {
      __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
      _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    }
#endif
    for (; i < n; ++i) out[i] = static_cast<float>(in[i]);
  } else {
    for (; i < n; ++i) {
      uint32_t u = uint32_t(in[i].x) << 16;
      std::memcpy(out + i, &u, 4);
    }
  }
}

template <typename T>
inline void cvt_from_float(const float* in, T* out, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, Half>) {
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8) {
      __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
    }
#endif
    for (; i < n; ++i) out[i] = Half(in[i]);
  } else {
    for (; i < n; ++i) {
      uint32_t u;
      std::memcpy(&u, in + i, 4);
      uint16_t r =
          (u & 0x7fffffffu) > 0x7f800000u ? uint16_t(0x7fc0u) : uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
      out[i].x = r;
    }
  }
}

// m values of operand (base, stride) from element start, as floats.
template <typename T>
inline void gather_float(const char* base, int64_t stride, int64_t start, int m, float* dst) {
  if (stride == sizeof(T)) {
    cvt_to_float(reinterpret_cast<const T*>(base) + start, dst, m);
  } else if (stride == 0) {
    const float v = static_cast<float>(*reinterpret_cast<const T*>(base));
    for (int j = 0; j < m; ++j) dst[j] = v;
  } else {
    T tmp[kChunk];
    for (int j = 0; j < m; ++j) tmp[j] = at<T>(const_cast<char*>(base), stride, start + j);
    cvt_to_float(tmp, dst, m);
  }
}

template <typename T>
inline void scatter_float(char* base, int64_t stride, int64_t start, int m, const float* src) {
  if (stride == sizeof(T)) {
    cvt_from_float(src, reinterpret_cast<T*>(base) + start, m);
  } else {
    T tmp[kChunk];
    cvt_from_float(src, tmp, m);
    for (int j = 0; j < m; ++j) at<T>(base, stride, start + j) = tmp[j];
  }
}

// out[i] = f(a[i], ...) for 16-bit float inputs T; f takes and returns
// float (Out = T) or returns bool (Out = bool).
template <typename Out, typename T, int N, typename F>
inline void f16_loop(char** data, const int64_t* strides, int64_t n, const F& f) {
  alignas(64) float in[N][kChunk];
  alignas(64) float res[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int m = static_cast<int>(std::min<int64_t>(kChunk, n - i));
    for (int k = 0; k < N; ++k) gather_float<T>(data[k + 1], strides[k + 1], i, m, in[k]);
    if constexpr (std::is_same_v<Out, bool>) {
      for (int j = 0; j < m; ++j) {
        if constexpr (N == 1)
          at<bool>(data[0], strides[0], i + j) = f(in[0][j]);
        else if constexpr (N == 2)
          at<bool>(data[0], strides[0], i + j) = f(in[0][j], in[1][j]);
        else
          at<bool>(data[0], strides[0], i + j) = f(in[0][j], in[1][j], in[2][j]);
      }
    } else {
      for (int j = 0; j < m; ++j) {
        if constexpr (N == 1)
          res[j] = f(in[0][j]);
        else if constexpr (N == 2)
          res[j] = f(in[0][j], in[1][j]);
        else
          res[j] = f(in[0][j], in[1][j], in[2][j]);
      }
      scatter_float<T>(data[0], strides[0], i, m, res);
    }
  }
}

// out[i] = f(a[i], ...) over N inputs (1 to 3) of float-like T (float,
// Half, BFloat16), with f mapping vectors of floats to a vector of floats.
// Every element goes through f in some vector (a partial block is padded),
// so results do not depend on the layout or on where a thread's chunk starts.
// flatten: f and the vecmath functions it calls are inlined into the loop
// (an out-of-line f costs a call per vector and reloads its constants).
template <int N, typename F>
EMBER_VEC_INLINE vecmath::Vf apply_vec(const F& f, const float* const* in, int64_t i) {
  using vecmath::load;
  if constexpr (N == 1)
    return f(load(in[0] + i));
  else if constexpr (N == 2)
    return f(load(in[0] + i), load(in[1] + i));
  else
    return f(load(in[0] + i), load(in[1] + i), load(in[2] + i));
}

// As apply_vec, with input k read at i * step[k] (step 0: a broadcast value).
template <int N, typename F>
EMBER_VEC_INLINE vecmath::Vf apply_vec_steps(const F& f, const float* const* in, const int64_t* step, int64_t i) {
  using vecmath::load;
  if constexpr (N == 1)
    return f(load(in[0] + i * step[0]));
  else if constexpr (N == 2)
    return f(load(in[0] + i * step[0]), load(in[1] + i * step[1]));
  else
    return f(load(in[0] + i * step[0]), load(in[1] + i * step[1]), load(in[2] + i * step[2]));
}

template <typename T, int N, typename F>
__attribute__((flatten)) inline void vec_loop(char** data, const int64_t* strides, int64_t n, const F& f) {
  static_assert(N >= 1 && N <= 3, "vec_loop takes one to three inputs");
  constexpr int W = vecmath::kLanesF;
  if constexpr (std::is_same_v<T, float>) {
    bool contiguous = strides[0] == sizeof(float), dense = contiguous;
    for (int k = 1; k <= N; ++k) {
      contiguous = contiguous && strides[k] == sizeof(float);
      dense = dense && (strides[k] == sizeof(float) || strides[k] == 0);
    }
    if (contiguous) {
      float* out = reinterpret_cast<float*>(data[0]);
      const float* in[N];
      for (int k = 0; k < N; ++k) in[k] = reinterpret_cast<const float*>(data[k + 1]);
      int64_t i = 0;
      // Four independent vectors per step: the math functions are long
      // dependency chains, and -O2 does not unroll. Each step also prefetches
      // the input 2 KB ahead: the hardware prefetchers alone let the longer
      // functions (tan, erf) stall on memory at 16M elements (10-20 % slower
      // than a copy-like op); prefetches never fault, past the end too.
      for (; i + 4 * W <= n; i += 4 * W) {
        for (int k = 0; k < N; ++k) {
          for (int b = 0; b < 4 * W * 4; b += 64)
            __builtin_prefetch(reinterpret_cast<const char*>(in[k] + i) + 2048 + b);
        }
        const vecmath::Vf r0 = apply_vec<N>(f, in, i), r1 = apply_vec<N>(f, in, i + W);
        const vecmath::Vf r2 = apply_vec<N>(f, in, i + 2 * W), r3 = apply_vec<N>(f, in, i + 3 * W);
        vecmath::store(out + i, r0);
        vecmath::store(out + i + W, r1);
        vecmath::store(out + i + 2 * W, r2);
        vecmath::store(out + i + 3 * W, r3);
      }
      for (; i + W <= n; i += W) vecmath::store(out + i, apply_vec<N>(f, in, i));
      if (i < n) {
        float buf[N + 1][W] = {};
        const float* bin[N];
        for (int k = 0; k < N; ++k) {
          for (int64_t j = i; j < n; ++j) buf[k][j - i] = in[k][j];
          bin[k] = buf[k];
        }
        vecmath::store(buf[N], apply_vec<N>(f, bin, 0));
        for (int64_t j = i; j < n; ++j) out[j] = buf[N][j - i];
      }
      return;
    }
    if (dense && N > 1) {
      // Contiguous inputs and broadcast (stride-0) ones, e.g. a gradient
      // expanded from a sum.
      float* out = reinterpret_cast<float*>(data[0]);
      float splat[N][W];
      const float* in[N];
      int64_t step[N];
      for (int k = 0; k < N; ++k) {
        const float* p = reinterpret_cast<const float*>(data[k + 1]);
        step[k] = strides[k + 1] == 0 ? 0 : 1;
        if (step[k] == 0) {
          for (int j = 0; j < W; ++j) splat[k][j] = *p;
          p = splat[k];
        }
        in[k] = p;
      }
      int64_t i = 0;
      for (; i + W <= n; i += W) vecmath::store(out + i, apply_vec_steps<N>(f, in, step, i));
      if (i < n) {
        float buf[N + 1][W] = {};
        const float* bin[N];
        for (int k = 0; k < N; ++k) {
          for (int64_t j = i; j < n; ++j) buf[k][j - i] = in[k][(j - i) + i * step[k]];
          bin[k] = buf[k];
        }
        vecmath::store(buf[N], apply_vec<N>(f, bin, 0));
        for (int64_t j = i; j < n; ++j) out[j] = buf[N][j - i];
      }
      return;
    }
    // Strided: blocks of four vectors gathered into a buffer, so that their
    // dependency chains overlap as in the contiguous loop (one vector at a
    // time made tan on a stride-2 view 3x slower than contiguous).
    constexpr int B = 4 * W;
    float buf[N + 1][B];
    const float* bin[N];
    for (int k = 0; k < N; ++k) bin[k] = buf[k];
    for (int64_t i = 0; i < n; i += B) {
      const int m = static_cast<int>(std::min<int64_t>(B, n - i));
      for (int k = 0; k < N; ++k) {
        for (int j = 0; j < m; ++j) buf[k][j] = at<float>(data[k + 1], strides[k + 1], i + j);
        for (int j = m; j < B; ++j) buf[k][j] = 0.0f;
      }
      const vecmath::Vf r0 = apply_vec<N>(f, bin, 0), r1 = apply_vec<N>(f, bin, W);
      const vecmath::Vf r2 = apply_vec<N>(f, bin, 2 * W), r3 = apply_vec<N>(f, bin, 3 * W);
      vecmath::store(buf[N], r0);
      vecmath::store(buf[N] + W, r1);
      vecmath::store(buf[N] + 2 * W, r2);
      vecmath::store(buf[N] + 3 * W, r3);
      for (int j = 0; j < m; ++j) at<float>(data[0], strides[0], i + j) = buf[N][j];
    }
  } else {
    static_assert(kChunk % W == 0, "chunks hold whole vectors");
    alignas(64) float buf[N][kChunk];
    alignas(64) float res[kChunk];
    const float* bin[N];
    for (int k = 0; k < N; ++k) bin[k] = buf[k];
    for (int64_t i = 0; i < n; i += kChunk) {
      const int m = static_cast<int>(std::min<int64_t>(kChunk, n - i));
      const int padded = (m + W - 1) / W * W;
      for (int k = 0; k < N; ++k) {
        gather_float<T>(data[k + 1], strides[k + 1], i, m, buf[k]);
        for (int j = m; j < padded; ++j) buf[k][j] = 0.0f;
      }
      for (int j = 0; j < padded; j += W) vecmath::store(res + j, apply_vec<N>(f, bin, j));
      scatter_float<T>(data[0], strides[0], i, m, res);
    }
  }
}

// out[i] = f(a[i]) for double with f mapping a vector of doubles to a
// vector of doubles; partial blocks are padded as in vec_loop.
template <typename F>
__attribute__((flatten)) inline void vec_loop1_double(char** data, const int64_t* strides, int64_t n, const F& f) {
  constexpr int W = vecmath::kLanesD;
  double buf[W];
  const bool contiguous = strides[0] == sizeof(double) && strides[1] == sizeof(double);
  int64_t i = 0;
  if (contiguous) {
    double* out = reinterpret_cast<double*>(data[0]);
    const double* a = reinterpret_cast<const double*>(data[1]);
    // Four independent vectors per step, as vec_loop.
    for (; i + 4 * W <= n; i += 4 * W) {
      const vecmath::Vd r0 = f(vecmath::load(a + i)), r1 = f(vecmath::load(a + i + W));
      const vecmath::Vd r2 = f(vecmath::load(a + i + 2 * W)), r3 = f(vecmath::load(a + i + 3 * W));
      vecmath::store(out + i, r0);
      vecmath::store(out + i + W, r1);
      vecmath::store(out + i + 2 * W, r2);
      vecmath::store(out + i + 3 * W, r3);
    }
    for (; i + W <= n; i += W) vecmath::store(out + i, f(vecmath::load(a + i)));
  }
  for (; i < n; i += W) {
    const int m = static_cast<int>(std::min<int64_t>(W, n - i));
    for (int j = 0; j < m; ++j) buf[j] = at<double>(data[1], strides[1], i + j);
    for (int j = m; j < W; ++j) buf[j] = 0.0;
    vecmath::store(buf, f(vecmath::load(buf)));
    for (int j = 0; j < m; ++j) at<double>(data[0], strides[0], i + j) = buf[j];
  }
}

// Runs f over the iterator's N inputs of element type T, writing Out (T or
// bool). f takes and returns the computation type: float for float16 and
// bfloat16 (see Note [16-bit float loops]), T itself otherwise.
template <typename Out, typename T, int N, typename F>
inline void run_acc(const TensorIterator& it, const F& f) {
  using acc_t = opmath_t<T>;
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    if constexpr (is_16bit_float_v<T>) {
      f16_loop<Out, T, N>(d, s, n, f);
    } else if constexpr (N == 1) {
      loop1<Out, T>(d, s, n, [&](T a) { return static_cast<Out>(f(static_cast<acc_t>(a))); });
    } else if constexpr (N == 2) {
      loop2<Out, T, T>(d, s, n,
                       [&](T a, T b) { return static_cast<Out>(f(static_cast<acc_t>(a), static_cast<acc_t>(b))); });
    } else {
      loop3<Out, T, T, T>(d, s, n, [&](T a, T b, T c) {
        return static_cast<Out>(f(static_cast<acc_t>(a), static_cast<acc_t>(b), static_cast<acc_t>(c)));
      });
    }
  });
}

// Floating ops over N inputs: vf on vectors of floats (float, Half and
// BFloat16 storage), df on doubles (for one input, a vector of doubles when
// it accepts one, else one double).
template <int N, typename VF, typename DF>
void float_map(const TensorIterator& it, const VF& vf, const DF& df) {
  switch (it.common_dtype()) {
    case ScalarType::Float:
      it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop<float, N>(d, s, n, vf); });
      return;
    case ScalarType::Half:
      it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop<Half, N>(d, s, n, vf); });
      return;
    case ScalarType::BFloat16:
      it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop<BFloat16, N>(d, s, n, vf); });
      return;
    case ScalarType::Double:
      if constexpr (N == 2) {
        it.for_each([&](char** d, const int64_t* s, int64_t n) { loop2<double, double, double>(d, s, n, df); });
      } else if constexpr (std::is_invocable_v<DF, vecmath::Vd>) {
        it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop1_double(d, s, n, df); });
      } else {
        it.for_each([&](char** d, const int64_t* s, int64_t n) { loop1<double, double>(d, s, n, df); });
      }
      return;
    default: EMBER_INTERNAL_ASSERT(false, "float_map on ", scalar_type_name(it.common_dtype()));
  }
}

// out = f(in) through MKL's VML function `name` (Note [MKL for elementwise
// functions]) for float32/float64 without casts; false where it does not apply.
template <typename T>
bool vml_loop(const TensorIterator& it, void (*f)(int, const T*, T*, long long)) {
  if (it.dtype(0) != it.dtype(1)) return false;
  it.for_each([f](char** d, const int64_t* s, int64_t n) {
    constexpr int64_t kChunk = 4096;
    T in[kChunk], out[kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t len = std::min(kChunk, n - i);
      const bool dense = s[0] == sizeof(T) && s[1] == sizeof(T);
      if (dense) {
        f(int(len), reinterpret_cast<const T*>(d[1]) + i, reinterpret_cast<T*>(d[0]) + i, blas::kVmlMode);
        continue;
      }
      for (int64_t j = 0; j < len; ++j) in[j] = *reinterpret_cast<const T*>(d[1] + (i + j) * s[1]);
      f(int(len), in, out, blas::kVmlMode);
      for (int64_t j = 0; j < len; ++j) *reinterpret_cast<T*>(d[0] + (i + j) * s[0]) = out[j];
    }
  });
  return true;
}

inline bool try_vml(const TensorIterator& it, const char* name) {
  const ScalarType t = it.common_dtype();
  if (t != ScalarType::Float && t != ScalarType::Double) return false;
  const blas::VmlFunction* fn = blas::vml(name);
  if (!fn) return false;
  return t == ScalarType::Float ? vml_loop<float>(it, fn->f) : vml_loop<double>(it, fn->d);
}

template <typename VF, typename DF>
void float_unary(const TensorIterator& it, const VF& vf, const DF& df) {
  float_map<1>(it, vf, df);
}

// float_unary, or MKL's VML function `name` where PyTorch uses it.
template <typename VF, typename DF>
void float_unary_vml(const TensorIterator& it, const char* name, const VF& vf, const DF& df) {
  if (!try_vml(it, name)) float_map<1>(it, vf, df);
}

// Note [Scalar operand of 16-bit products]: x * s, x / s and the floor and
// trunc divisions of float16/bfloat16 x by a 0-dim s of another dtype (a
// Python number too) use s rounded to float, not to x's dtype, as PyTorch
// does (its original_scalar_value). Runs out = f(x, s) in float when the
// iterator's operand 2 is such an s; false otherwise.
template <typename F>
bool run_16bit_by_original_scalar(const TensorIterator& it, const F& f) {
  const std::optional<double> s = it.original_scalar(2);
  if (!s) return false;
  const float b = static_cast<float>(*s);
  const auto g = [&](float x) { return f(x, b); };
  if (it.common_dtype() == ScalarType::Half)
    run_acc<Half, Half, 1>(it, g);
  else
    run_acc<BFloat16, BFloat16, 1>(it, g);
  return true;
}

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
