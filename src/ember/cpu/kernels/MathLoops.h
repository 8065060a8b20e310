#pragma once
// Inner loops of the elementwise math kernels: element types of the output
// and inputs may differ (comparisons write bool), contiguous operands take a
// plain indexed loop the compiler vectorises, and float-like types have a
// SIMD path through vecmath.

#include <algorithm>
#include <type_traits>

#include "ember/cpu/kernels/Loops.h"
#include "ember/cpu/kernels/VecMath.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) for the C++ type T of dtype t. Unlike
// EMBER_DISPATCH_ALL_TYPES, f is a template, so `if constexpr` branches that
// do not apply to T are not compiled for it.
template <typename F>
inline void dispatch_types(ScalarType t, const F& f) {
  switch (t) {
    case ScalarType::Byte: return f(TypeTag<uint8_t>{});
    case ScalarType::Char: return f(TypeTag<int8_t>{});
    case ScalarType::Short: return f(TypeTag<int16_t>{});
    case ScalarType::Int: return f(TypeTag<int32_t>{});
    case ScalarType::Long: return f(TypeTag<int64_t>{});
    case ScalarType::Half: return f(TypeTag<Half>{});
    case ScalarType::Float: return f(TypeTag<float>{});
    case ScalarType::Double: return f(TypeTag<double>{});
    case ScalarType::Bool: return f(TypeTag<bool>{});
    case ScalarType::BFloat16: return f(TypeTag<BFloat16>{});
    default: EMBER_INTERNAL_ASSERT(false, "dispatch on an undefined dtype");
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

// out[i] = op(a[i]).
template <typename Out, typename A, typename Op>
inline void loop1(char** data, const int64_t* strides, int64_t n, const Op& op) {
  if (strides[0] == sizeof(Out) && strides[1] == sizeof(A)) {
    Out* out = reinterpret_cast<Out*>(data[0]);
    const A* a = reinterpret_cast<const A*>(data[1]);
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) at<Out>(data[0], strides[0], i) = op(at<A>(data[1], strides[1], i));
  }
}

// out[i] = op(a[i], b[i]); a scalar (stride 0) operand is read once.
template <typename Out, typename A, typename B, typename Op>
inline void loop2(char** data, const int64_t* strides, int64_t n, const Op& op) {
  Out* out = reinterpret_cast<Out*>(data[0]);
  const A* a = reinterpret_cast<const A*>(data[1]);
  const B* b = reinterpret_cast<const B*>(data[2]);
  if (strides[0] == sizeof(Out)) {
    if (strides[1] == sizeof(A) && strides[2] == sizeof(B)) {
      for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
      return;
    }
    if (strides[1] == sizeof(A) && strides[2] == 0) {
      const B bv = *b;
      for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], bv);
      return;
    }
    if (strides[1] == 0 && strides[2] == sizeof(B)) {
      const A av = *a;
      for (int64_t i = 0; i < n; ++i) out[i] = op(av, b[i]);
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    at<Out>(data[0], strides[0], i) = op(at<A>(data[1], strides[1], i), at<B>(data[2], strides[2], i));
  }
}

// out[i] = op(a[i], b[i], c[i]).
template <typename Out, typename A, typename B, typename C, typename Op>
inline void loop3(char** data, const int64_t* strides, int64_t n, const Op& op) {
  if (strides[0] == sizeof(Out) && strides[1] == sizeof(A) && strides[2] == sizeof(B) && strides[3] == sizeof(C)) {
    Out* out = reinterpret_cast<Out*>(data[0]);
    const A* a = reinterpret_cast<const A*>(data[1]);
    const B* b = reinterpret_cast<const B*>(data[2]);
    const C* c = reinterpret_cast<const C*>(data[3]);
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i], c[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    at<Out>(data[0], strides[0], i) =
        op(at<A>(data[1], strides[1], i), at<B>(data[2], strides[2], i), at<C>(data[3], strides[3], i));
  }
}

// out[i] = f(a[i]) for float-like T (float, Half, BFloat16) with f mapping a
// vector of floats to a vector of floats. Every element goes through f in
// some vector (a partial block is padded), so results do not depend on the
// layout or on where a thread's chunk starts.
template <typename T, typename F>
inline void vec_loop1(char** data, const int64_t* strides, int64_t n, const F& f) {
  using vecmath::Vf;
  constexpr int W = vecmath::kLanesF;
  if constexpr (std::is_same_v<T, float>) {
    if (strides[0] == sizeof(float) && strides[1] == sizeof(float)) {
      float* out = reinterpret_cast<float*>(data[0]);
      const float* a = reinterpret_cast<const float*>(data[1]);
      int64_t i = 0;
      for (; i + W <= n; i += W) vecmath::store(out + i, f(vecmath::load(a + i)));
      if (i < n) {
        float buf[W] = {};
        for (int64_t j = i; j < n; ++j) buf[j - i] = a[j];
        vecmath::store(buf, f(vecmath::load(buf)));
        for (int64_t j = i; j < n; ++j) out[j] = buf[j - i];
      }
      return;
    }
  }
  float buf[W];
  for (int64_t i = 0; i < n; i += W) {
    const int m = static_cast<int>(std::min<int64_t>(W, n - i));
    for (int j = 0; j < m; ++j) buf[j] = static_cast<float>(at<T>(data[1], strides[1], i + j));
    for (int j = m; j < W; ++j) buf[j] = 0.0f;
    vecmath::store(buf, f(vecmath::load(buf)));
    for (int j = 0; j < m; ++j) at<T>(data[0], strides[0], i + j) = T(buf[j]);
  }
}

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
