// CUDA kernels of the fused pointwise operators: where, clamp (numbers or
// tensors as bounds), lerp, addcmul/addcdiv.
#include <thrust/complex.h>

#include "ember/cpu/FusedPointwiseStubs.h"
#include "ember/cpu/MathStubs.h"
#include "ember/cpu/Stubs.h"
#include "ember/cuda/kernels/DeviceMath.cuh"

namespace ember::cuda {
namespace {

template <typename C>
struct WhereOp {
  __device__ C operator()(bool cond, C a, C b) const { return cond ? a : b; }
};

// NaN inputs stay NaN; bounds are optional.
template <typename C>
struct ClampScalarOp {
  C lo, hi;
  bool has_lo, has_hi;
  __device__ C operator()(C x) const {
    if (dm::isnan(x)) return x;
    if (has_lo && x < lo) x = lo;
    if (has_hi && x > hi) x = hi;
    return x;
  }
};

// minimum(maximum(x, lo), hi), NaN anywhere propagating.
template <typename C>
struct ClampTensorOp {
  __device__ C operator()(C x, C lo, C hi) const {
    if (dm::isnan(x)) return x;
    if (dm::isnan(lo)) return lo;
    if (dm::isnan(hi)) return hi;
    const C m = x < lo ? lo : x;
    return hi < m ? hi : m;
  }
};

template <typename C>
__device__ __forceinline__ C lerp(C self, C end, C weight) {
  const C w_abs = weight < C(0) ? -weight : weight;
  return w_abs < C(0.5) ? self + weight * (end - self) : end - (end - self) * (C(1) - weight);
}
template <typename C>
struct LerpScalarOp {
  C weight;
  __device__ C operator()(C self, C end) const { return lerp(self, end, weight); }
};
template <typename C>
struct LerpTensorOp {
  __device__ C operator()(C self, C end, C weight) const { return lerp(self, end, weight); }
};

template <typename C>
struct AddcOp {
  C value;
  bool divide;
  __device__ C operator()(C self, C t1, C t2) const {
    if (divide) return self + value * (t1 / t2);
    return self + value * t1 * t2;
  }
};

template <typename S>
void where_of(const TensorIterator& it, bool byte_cond) {
  if (byte_cond) return gpu_kernel<S, uint8_t, S, S>(it, WhereOp<S>{});
  gpu_kernel<S, bool, S, S>(it, WhereOp<S>{});
}

void where_cuda_kernel(const TensorIterator& it) {
  const bool byte_cond = it.dtype(1) == ScalarType::Byte;
  // A selection moves bits: complex elements as thrust's complex of their parts.
  if (it.dtype(0) == ScalarType::ComplexFloat) return where_of<thrust::complex<float>>(it, byte_cond);
  if (it.dtype(0) == ScalarType::ComplexDouble) return where_of<thrust::complex<double>>(it, byte_cond);
  dispatch_dtype<kAllReal>(it.dtype(0), "where_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    if (byte_cond) return gpu_kernel<S, uint8_t, S, S>(it, WhereOp<opmath_t<S>>{});
    gpu_kernel<S, bool, S, S>(it, WhereOp<opmath_t<S>>{});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(where_stub, &where_cuda_kernel);

void clamp_scalar_cuda_kernel(const TensorIterator& it, const std::optional<Scalar>& min,
                              const std::optional<Scalar>& max) {
  dispatch_dtype<kIntegral | kAllFloating>(it.common_dtype(), "clamp_scalar_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = opmath_t<S>;
    gpu_kernel<S, S>(it, ClampScalarOp<C>{min ? scalar_as<S>(*min) : C(0), max ? scalar_as<S>(*max) : C(0),
                                          min.has_value(), max.has_value()});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(clamp_scalar_stub, &clamp_scalar_cuda_kernel);

void clamp_tensor_cuda_kernel(const TensorIterator& it) {
  dispatch_dtype<kIntegral | kAllFloating>(it.common_dtype(), "clamp_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    gpu_kernel<S, S, S, S>(it, ClampTensorOp<opmath_t<S>>{});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(clamp_tensor_stub, &clamp_tensor_cuda_kernel);

void lerp_scalar_cuda_kernel(const TensorIterator& it, const Scalar& weight) {
  dispatch_dtype<kAllFloating>(it.common_dtype(), "lerp_kernel_scalar", [&](auto tag) {
    using S = typename decltype(tag)::type;
    gpu_kernel<S, S, S>(it, LerpScalarOp<opmath_t<S>>{scalar_opmath<S>(weight)});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(lerp_scalar_stub, &lerp_scalar_cuda_kernel);

void lerp_tensor_cuda_kernel(const TensorIterator& it) {
  dispatch_dtype<kAllFloating>(it.common_dtype(), "lerp_kernel_tensor", [&](auto tag) {
    using S = typename decltype(tag)::type;
    gpu_kernel<S, S, S, S>(it, LerpTensorOp<opmath_t<S>>{});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(lerp_tensor_stub, &lerp_tensor_cuda_kernel);

void addc_cuda_kernel(const TensorIterator& it, const Scalar& value, bool divide) {
  dispatch_dtype<kIntegral | kAllFloating>(it.common_dtype(), divide ? "addcdiv_cuda" : "addcmul_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = opmath_t<S>;
    gpu_kernel<S, S, S, S>(it, AddcOp<C>{scalar_opmath<S>(value), divide});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(addc_stub, &addc_cuda_kernel);

}  // namespace
}  // namespace ember::cuda
