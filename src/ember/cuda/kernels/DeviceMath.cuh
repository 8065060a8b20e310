#pragma once
// Device math shared by the CUDA kernels: CUDA's math library per compute
// type (the float functions for float and the 16-bit floats, the double ones
// for double), registration helpers, and for the kernels outside the
// elementwise engine (index, shape, scan, loss) their element types: the
// dtype switch and the 16-bit float conversions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/limits>

#include "ember/cuda/kernels/Loops.cuh"
#include "ember/cuda/kernels/Register.h"

namespace ember::cuda::dm {

#define EMBER_DM_UNARY(name)                  \
  template <typename C>                       \
  __device__ __forceinline__ C name(C x) {    \
    if constexpr (std::is_same_v<C, float>) { \
      return ::name##f(x);                    \
    } else {                                  \
      return ::name(static_cast<double>(x));  \
    }                                         \
  }
#define EMBER_DM_BINARY(name)                                        \
  template <typename C>                                              \
  __device__ __forceinline__ C name(C x, C y) {                      \
    if constexpr (std::is_same_v<C, float>) {                        \
      return ::name##f(x, y);                                        \
    } else {                                                         \
      return ::name(static_cast<double>(x), static_cast<double>(y)); \
    }                                                                \
  }
EMBER_DM_UNARY(exp)
EMBER_DM_UNARY(exp2)
EMBER_DM_UNARY(expm1)
EMBER_DM_UNARY(log)
EMBER_DM_UNARY(log1p)
EMBER_DM_UNARY(log2)
EMBER_DM_UNARY(log10)
EMBER_DM_UNARY(sqrt)
EMBER_DM_UNARY(rsqrt)
EMBER_DM_UNARY(sin)
EMBER_DM_UNARY(cos)
EMBER_DM_UNARY(tan)
EMBER_DM_UNARY(asin)
EMBER_DM_UNARY(acos)
EMBER_DM_UNARY(atan)
EMBER_DM_UNARY(sinh)
EMBER_DM_UNARY(cosh)
EMBER_DM_UNARY(tanh)
EMBER_DM_UNARY(asinh)
EMBER_DM_UNARY(acosh)
EMBER_DM_UNARY(atanh)
EMBER_DM_UNARY(erf)
EMBER_DM_UNARY(erfc)
EMBER_DM_UNARY(erfinv)
EMBER_DM_UNARY(erfcx)
EMBER_DM_UNARY(normcdfinv)
EMBER_DM_UNARY(lgamma)
EMBER_DM_UNARY(floor)
EMBER_DM_UNARY(ceil)
EMBER_DM_UNARY(trunc)
EMBER_DM_UNARY(nearbyint)
EMBER_DM_UNARY(fabs)
EMBER_DM_UNARY(cyl_bessel_i0)
EMBER_DM_UNARY(cyl_bessel_i1)
EMBER_DM_BINARY(pow)
EMBER_DM_BINARY(atan2)
EMBER_DM_BINARY(copysign)
EMBER_DM_BINARY(hypot)
EMBER_DM_BINARY(fmod)
EMBER_DM_BINARY(fmax)
EMBER_DM_BINARY(fmin)
#undef EMBER_DM_UNARY
#undef EMBER_DM_BINARY

template <typename C>
__device__ __forceinline__ bool isnan(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    return x != x;
  } else {
    return false;
  }
}
template <typename C>
__device__ __forceinline__ C nan() {
  return ::cuda::std::numeric_limits<C>::quiet_NaN();
}
template <typename C>
__device__ __forceinline__ C inf() {
  return ::cuda::std::numeric_limits<C>::infinity();
}

constexpr double kPi = 3.14159265358979323846;

}  // namespace ember::cuda::dm

namespace ember::cuda {

// ---- element types of the kernels outside the elementwise engine ------------------------

template <typename T>
struct DeviceComplex {
  T re, im;
};
struct alignas(16) Bytes16 {  // a 16-byte element moved as bytes
  uint64_t lo, hi;
};

// complex64/complex128 (the real-number sets are Loops.cuh's DtypeSet).
constexpr unsigned kComplexElements = 16;
constexpr unsigned kAllElements = kAllReal | kComplexElements;

// Calls f(T{}) with T the device element type of t (cuda's __half and
// __nv_bfloat16 for the 16-bit floats) when t is in Set; else PyTorch's
// "name" not implemented for 'dtype' error.
template <unsigned Set = kAllElements, typename F>
void dispatch_device_types(ScalarType t, const char* name, F&& f) {
  switch (t) {
    case ScalarType::Bool:
      if constexpr ((Set & kBool) != 0) return f(bool{});
      break;
    case ScalarType::Byte:
      if constexpr ((Set & kIntegral) != 0) return f(uint8_t{});
      break;
    case ScalarType::Char:
      if constexpr ((Set & kIntegral) != 0) return f(int8_t{});
      break;
    case ScalarType::Short:
      if constexpr ((Set & kIntegral) != 0) return f(int16_t{});
      break;
    case ScalarType::Int:
      if constexpr ((Set & kIntegral) != 0) return f(int32_t{});
      break;
    case ScalarType::Long:
      if constexpr ((Set & kIntegral) != 0) return f(int64_t{});
      break;
    case ScalarType::Half:
      if constexpr ((Set & kReducedFloating) != 0) return f(__half{});
      break;
    case ScalarType::BFloat16:
      if constexpr ((Set & kReducedFloating) != 0) return f(__nv_bfloat16{});
      break;
    case ScalarType::Float:
      if constexpr ((Set & kFloating) != 0) return f(float{});
      break;
    case ScalarType::Double:
      if constexpr ((Set & kFloating) != 0) return f(double{});
      break;
    case ScalarType::ComplexFloat:
      if constexpr ((Set & kComplexElements) != 0) return f(DeviceComplex<float>{});
      break;
    case ScalarType::ComplexDouble:
      if constexpr ((Set & kComplexElements) != 0) return f(DeviceComplex<double>{});
      break;
    default: break;
  }
  native::math::not_implemented_for(name, t);
}

// Calls f(T{}) with T an unsigned element type of t's size (kernels that only move bytes).
template <typename F>
void dispatch_by_size(ScalarType t, F&& f) {
  switch (element_size(t)) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: return f(Bytes16{});
  }
}

// The accumulate type of an element type: float for the 16-bit floats, the type itself otherwise.
template <typename T>
struct DeviceAcc {
  using type = T;
};
template <>
struct DeviceAcc<__half> {
  using type = float;
};
template <>
struct DeviceAcc<__nv_bfloat16> {
  using type = float;
};
template <typename T>
using device_acc_t = typename DeviceAcc<T>::type;

// A 16-bit float as float; other values unchanged.
template <typename T>
__device__ __forceinline__ device_acc_t<T> widen(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return v;
  }
}

// v as element type T, rounded to nearest.
template <typename T, typename V>
__device__ __forceinline__ T narrow(V v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace ember::cuda

// A unary kernel over the common dtype: Op<C> computes in C.
#define EMBER_CUDA_UNARY_KERNEL(op, Op, set)                                                \
  void op##_cuda_kernel(const TensorIterator& it) { unary_same<Op, set>(it, #op "_cuda"); } \
  EMBER_REGISTER_CUDA_POINTWISE(op, &op##_cuda_kernel)
// The same, with the kernel name of dtype errors given (special_ndtri: "ndtri_cuda").
#define EMBER_CUDA_UNARY_KERNEL_NAMED(op, name, Op, set)                             \
  void op##_cuda_kernel(const TensorIterator& it) { unary_same<Op, set>(it, name); } \
  EMBER_REGISTER_CUDA_POINTWISE(op, &op##_cuda_kernel)
#define EMBER_CUDA_BINARY_KERNEL(op, Op, set)                                                \
  void op##_cuda_kernel(const TensorIterator& it) { binary_same<Op, set>(it, #op "_cuda"); } \
  EMBER_REGISTER_CUDA_POINTWISE(op, &op##_cuda_kernel)
// A functor Name<C> returning expr of x.
#define EMBER_CUDA_UNARY_OP(Name, expr)                 \
  template <typename C>                                 \
  struct Name {                                         \
    __device__ C operator()(C x) const { return expr; } \
  }
#define EMBER_CUDA_BINARY_OP(Name, expr)                     \
  template <typename C>                                      \
  struct Name {                                              \
    __device__ C operator()(C a, C b) const { return expr; } \
  }
