#pragma once
// Inner-loop helpers for kernels. Included only by files compiled per CPU
// capability, so the loops below are vectorised for each target.

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ember/core/Error.h"
#include "ember/core/ScalarType.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {

// Note [Vector builds compile the floating types]
// The baseline build of a kernel file has loops for every dtype; the AVX2
// and AVX-512 builds only for float, double, float16 and bfloat16. A kernel
// of a vector build hands bool and integer tensors to the baseline build of
// itself (EMBER_USE_BASELINE_KERNEL_FOR), so every dtype works on every CPU
// while the integer loops, rarely the hot ones, are compiled once instead
// of three times: that is about a third of the kernels' compile time.
#if EMBER_CPU_BASELINE_BUILD
constexpr bool kBaselineBuild = true;
#else
constexpr bool kBaselineBuild = false;
#endif

// a * b + c rounded once where this build has fused multiply-adds (as the
// compiler contracts PyTorch's scalar code in its capability builds), the
// product rounded apart otherwise.
template <typename T>
inline T capability_fma(T a, T b, T c) {
#if defined(__FMA__)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

// True when this build of the kernels has loops for dtype t.
inline bool has_loops_for(ScalarType t) { return kBaselineBuild || is_floating_type(t); }

// First statement of a kernel whose loops dispatch on `dtype`: returns the
// result of the baseline build's kernel of `stub` (called with the
// remaining arguments) when this build has no loops for `dtype`.
#define EMBER_USE_BASELINE_KERNEL_FOR(dtype, stub, ...) \
  if (!::ember::cpu::has_loops_for(dtype)) return (stub).table[0](__VA_ARGS__)

// EMBER_DISPATCH_ALL_TYPES limited to the dtypes this build has loops for.
#if EMBER_CPU_BASELINE_BUILD
#define EMBER_DISPATCH_KERNEL_TYPES EMBER_DISPATCH_ALL_TYPES
#define EMBER_DISPATCH_KERNEL_TYPES_AND_COMPLEX EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX
#else
#define EMBER_DISPATCH_KERNEL_TYPES_AND_COMPLEX EMBER_DISPATCH_KERNEL_TYPES
#define EMBER_DISPATCH_KERNEL_TYPES(DTYPE, OPNAME, ...)                                                              \
  [&] {                                                                                                              \
    switch (DTYPE) {                                                                                                 \
      EMBER_DISPATCH_CASE(Half, ::ember::Half, __VA_ARGS__)                                                          \
      EMBER_DISPATCH_CASE(Float, float, __VA_ARGS__)                                                                 \
      EMBER_DISPATCH_CASE(Double, double, __VA_ARGS__)                                                               \
      EMBER_DISPATCH_CASE(BFloat16, ::ember::BFloat16, __VA_ARGS__)                                                  \
      default:                                                                                                       \
        if (::ember::is_limited_type(DTYPE)) ::ember::dispatch_type_error(DTYPE, OPNAME);                            \
        EMBER_INTERNAL_ASSERT(false, OPNAME, ": no loops for ", ::ember::scalar_type_name(DTYPE), " in this build"); \
    }                                                                                                                \
  }()
#endif

// An element read from memory. A bool is read through its byte, any nonzero
// byte meaning true, as PyTorch's loads do: a bool view of other bytes
// (x.view(torch.bool)) holds values other than 0 and 1, and reading those
// as bool is undefined behaviour (the compiler assumes 0 or 1).
template <typename T>
inline T load_element(const T* p) {
  if constexpr (std::is_same_v<T, bool>) {
    return *reinterpret_cast<const unsigned char*>(p) != 0;
  } else {
    return *p;
  }
}

// out[i] = op(a[i], b[i]) with fast paths for contiguous and scalar operands.
template <typename T, typename Op>
inline void binary_loop(char** data, const int64_t* strides, int64_t n, Op op) {
  constexpr int64_t s = sizeof(T);
  T* out = reinterpret_cast<T*>(data[0]);
  const T* a = reinterpret_cast<const T*>(data[1]);
  const T* b = reinterpret_cast<const T*>(data[2]);
  if (strides[0] == s && strides[1] == s && strides[2] == s) {
    for (int64_t i = 0; i < n; ++i) out[i] = op(load_element(a + i), load_element(b + i));
  } else if (strides[0] == s && strides[1] == s && strides[2] == 0) {
    const T bv = load_element(b);
    for (int64_t i = 0; i < n; ++i) out[i] = op(load_element(a + i), bv);
  } else if (strides[0] == s && strides[1] == 0 && strides[2] == s) {
    const T av = load_element(a);
    for (int64_t i = 0; i < n; ++i) out[i] = op(av, load_element(b + i));
  } else {
    char *o = data[0], *x = data[1], *y = data[2];
    for (int64_t i = 0; i < n; ++i, o += strides[0], x += strides[1], y += strides[2]) {
      *reinterpret_cast<T*>(o) =
          op(load_element(reinterpret_cast<const T*>(x)), load_element(reinterpret_cast<const T*>(y)));
    }
  }
}

// out[i] = op(a[i]).
template <typename T, typename U, typename Op>
inline void unary_loop(char** data, const int64_t* strides, int64_t n, Op op) {
  T* out = reinterpret_cast<T*>(data[0]);
  const U* a = reinterpret_cast<const U*>(data[1]);
  if (strides[0] == sizeof(T) && strides[1] == sizeof(U)) {
    for (int64_t i = 0; i < n; ++i) out[i] = op(load_element(a + i));
  } else {
    char *o = data[0], *x = data[1];
    for (int64_t i = 0; i < n; ++i, o += strides[0], x += strides[1]) {
      *reinterpret_cast<T*>(o) = op(load_element(reinterpret_cast<const U*>(x)));
    }
  }
}

// Computation type for an element type: 16-bit floats compute in float.
template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<Half> {
  using type = float;
};
template <>
struct OpMath<BFloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename OpMath<T>::type;

// Unsigned type in which integer arithmetic of T wraps: at least as wide as
// int, since narrower unsigned types promote to int, whose products and left
// shifts can overflow. Casting the result back to T keeps the low bits.
template <typename T>
using wrap_uint_t = std::conditional_t<(sizeof(T) > sizeof(unsigned)), uint64_t, unsigned>;

// Computation type of arithmetic that may overflow (add, sub, mul, neg):
// signed integers compute in wrap_uint_t, so an overflow wraps as two's
// complement, as PyTorch's results do, instead of being undefined behaviour;
// every other type computes in opmath_t. The machine instructions are the
// same; only the compiler's assumptions change.
template <typename T>
using wrap_opmath_t = std::conditional_t<std::is_integral_v<T> && std::is_signed_v<T>, wrap_uint_t<T>, opmath_t<T>>;

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
