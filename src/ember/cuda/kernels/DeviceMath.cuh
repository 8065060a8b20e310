#pragma once
// Device math shared by the CUDA pointwise kernels: CUDA's math library per
// compute type (the float functions for float and the 16-bit floats, the
// double ones for double), and registration helpers.
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
