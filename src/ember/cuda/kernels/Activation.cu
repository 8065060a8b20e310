// CUDA kernels of activations and their backward: relu, gelu, silu,
// threshold, leaky_relu, elu, softplus, hardtanh, hardsigmoid, hardswish,
// mish, log_sigmoid; the backward ones take (grad_output, input or result).
#include <string>

#include "ember/cpu/FusedPointwiseStubs.h"
#include "ember/cpu/MathStubs.h"
#include "ember/cpu/Stubs.h"
#include "ember/cuda/kernels/DeviceMath.cuh"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cuda {
namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;  // 1 / sqrt(2)
constexpr double kGeluAlpha = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kGeluBeta = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kGeluKappa = 0.044715;

template <typename C>
struct ReluOp {
  __device__ C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool> || std::is_unsigned_v<C>)
      return x;
    else
      return x < C(0) ? C(0) : x;
  }
};

template <typename C>
struct GeluOp {
  bool tanh_form;
  __device__ C operator()(C x) const {
    if (tanh_form) {
      const C inner = C(kGeluBeta) * (x + C(kGeluKappa) * x * x * x);
      return C(0.5) * x * (C(1) + dm::tanh(inner));
    }
    return x * C(0.5) * (C(1) + dm::erf(x * C(kSqrt1_2)));
  }
};

template <typename C>
struct GeluBackwardOp {
  bool tanh_form;
  __device__ C operator()(C dy, C x) const {
    if (tanh_form) {
      const C x_sq = x * x;
      const C inner = C(kGeluBeta) * (x + C(kGeluKappa) * x_sq * x);
      const C t = dm::tanh(inner);
      const C left = C(0.5) * x;
      const C right = C(1) + t;
      const C left_derivative = C(0.5) * right;
      const C right_derivative = left * (C(1) - t * t) * C(kGeluBeta) * (C(1) + C(3) * C(kGeluKappa) * x_sq);
      return dy * (left_derivative + right_derivative);
    }
    const C cdf = C(0.5) * (C(1) + dm::erf(x * C(kSqrt1_2)));
    const C pdf = C(kGeluAlpha) * dm::exp(C(-0.5) * x * x);
    return dy * (cdf + x * pdf);
  }
};

EMBER_CUDA_UNARY_OP(SiluOp, x / (C(1) + dm::exp(-x)));
EMBER_CUDA_BINARY_OP(TanhBackwardOp, a*(C(1) - b * b));
EMBER_CUDA_BINARY_OP(SigmoidBackwardOp, a*(C(1) - b) * b);

template <typename C>
struct SiluBackwardOp {
  __device__ C operator()(C dy, C x) const {
    const C s = C(1) / (C(1) + dm::exp(-x));
    return dy * s * (C(1) + x * (C(1) - s));
  }
};

template <typename C>
struct ThresholdOp {
  C threshold, value;
  __device__ C operator()(C x) const { return x <= threshold ? value : x; }
};
template <typename C>
struct ThresholdBackwardOp {
  C threshold;
  __device__ C operator()(C dy, C x) const { return x <= threshold ? C(0) : dy; }
};

template <typename C>
struct LeakyReluOp {
  C slope;
  __device__ C operator()(C x) const { return x > C(0) ? x : x * slope; }
};
template <typename C>
struct LeakyReluBackwardOp {
  C slope;
  __device__ C operator()(C dy, C x) const { return x > C(0) ? dy : dy * slope; }
};

template <typename C>
struct EluOp {
  C negcoef, poscoef, negiptcoef;
  __device__ C operator()(C x) const { return x <= C(0) ? dm::expm1(x * negiptcoef) * negcoef : x * poscoef; }
};
template <typename C>
struct EluBackwardOp {
  C negcoef, poscoef, negiptcoef;
  __device__ C operator()(C dy, C x) const {
    return x <= C(0) ? dy * negiptcoef * negcoef * dm::exp(x * negiptcoef) : dy * poscoef;
  }
};

template <typename C>
struct SoftplusOp {
  C beta, threshold;
  __device__ C operator()(C x) const { return x * beta > threshold ? x : dm::log1p(dm::exp(x * beta)) / beta; }
};
template <typename C>
struct SoftplusBackwardOp {
  C beta, threshold;
  __device__ C operator()(C dy, C x) const {
    const C z = dm::exp(x * beta);
    return x * beta > threshold ? dy : dy * z / (z + C(1));
  }
};

template <typename C>
struct HardtanhOp {
  C lo, hi;
  __device__ C operator()(C x) const { return x < lo ? lo : (x > hi ? hi : x); }
};
template <typename C>
struct HardtanhBackwardOp {
  C lo, hi;
  __device__ C operator()(C dy, C x) const { return (x <= lo || x >= hi) ? C(0) : dy; }
};

template <typename C>
struct HardsigmoidOp {
  __device__ C operator()(C x) const {
    const C y = x + C(3);
    return (y < C(0) ? C(0) : (y > C(6) ? C(6) : y)) * C(1.0 / 6.0);
  }
};
template <typename C>
struct HardsigmoidBackwardOp {
  __device__ C operator()(C dy, C x) const { return (x > C(-3) && x < C(3)) ? dy * C(1.0 / 6.0) : C(0); }
};
template <typename C>
struct HardswishOp {
  __device__ C operator()(C x) const {
    const C y = x + C(3);
    return x * (y < C(0) ? C(0) : (y > C(6) ? C(6) : y)) / C(6);
  }
};
template <typename C>
struct HardswishBackwardOp {
  __device__ C operator()(C dy, C x) const {
    if (x < C(-3)) return C(0);
    if (x <= C(3)) return dy * ((x / C(3)) + C(0.5));
    return dy;
  }
};

template <typename C>
struct MishOp {
  __device__ C operator()(C x) const { return x * dm::tanh(dm::log1p(dm::exp(x))); }
};
template <typename C>
struct MishBackwardOp {
  __device__ C operator()(C dy, C x) const {
    const C s = C(1) / (C(1) + dm::exp(-x));
    const C t = dm::tanh(dm::log1p(dm::exp(x)));
    return dy * (t + x * s * (C(1) - t * t));
  }
};

template <typename C>
struct LogSigmoidOp {
  __device__ C operator()(C x) const {
    const C m = x < C(0) ? x : C(0);
    return m - dm::log1p(dm::exp(-dm::fabs(x)));
  }
};
template <typename C>
struct LogSigmoidBackwardOp {
  __device__ C operator()(C dy, C x) const {
    const bool negative = x < C(0);
    const C z = dm::exp(-dm::fabs(x));
    return dy * ((negative ? C(1) : C(0)) - (negative ? C(1) : C(-1)) * (z / (C(1) + z)));
  }
};

// The floating activations share one forward and one backward functor that
// switch on the operator (uniform per launch), holding up to three numbers:
// 8 kernels for each instead of 8 per operator.
enum class Act : int {
  silu,
  gelu,
  hardsigmoid,
  hardswish,
  mish,
  log_sigmoid,
  leaky_relu,
  elu,
  softplus,  // forward
  tanh_backward,
  sigmoid_backward,
  silu_backward,
  hardsigmoid_backward,
  hardswish_backward,
  mish_backward,
  log_sigmoid_backward,
  threshold_backward,
  leaky_relu_backward,
  elu_backward,
  softplus_backward,
  hardtanh_backward,
  gelu_backward,
};

template <typename C>
struct ActForwardOp {
  Act op;
  C p0, p1, p2;
  __device__ C operator()(C x) const {
    switch (op) {
      case Act::silu: return SiluOp<C>{}(x);
      case Act::gelu: return GeluOp<C>{p0 != C(0)}(x);
      case Act::hardsigmoid: return HardsigmoidOp<C>{}(x);
      case Act::hardswish: return HardswishOp<C>{}(x);
      case Act::mish: return MishOp<C>{}(x);
      case Act::log_sigmoid: return LogSigmoidOp<C>{}(x);
      case Act::leaky_relu: return LeakyReluOp<C>{p0}(x);
      case Act::elu: return EluOp<C>{p0, p1, p2}(x);
      case Act::softplus: return SoftplusOp<C>{p0, p1}(x);
      default: return x;
    }
  }
};

template <typename C>
struct ActBackwardOp {
  Act op;
  C p0, p1, p2;
  __device__ C operator()(C dy, C x) const {
    switch (op) {
      case Act::tanh_backward: return TanhBackwardOp<C>{}(dy, x);
      case Act::sigmoid_backward: return SigmoidBackwardOp<C>{}(dy, x);
      case Act::silu_backward: return SiluBackwardOp<C>{}(dy, x);
      case Act::hardsigmoid_backward: return HardsigmoidBackwardOp<C>{}(dy, x);
      case Act::hardswish_backward: return HardswishBackwardOp<C>{}(dy, x);
      case Act::mish_backward: return MishBackwardOp<C>{}(dy, x);
      case Act::log_sigmoid_backward: return LogSigmoidBackwardOp<C>{}(dy, x);
      case Act::threshold_backward: return ThresholdBackwardOp<C>{p0}(dy, x);
      case Act::leaky_relu_backward: return LeakyReluBackwardOp<C>{p0}(dy, x);
      case Act::elu_backward: return EluBackwardOp<C>{p0, p1, p2}(dy, x);
      case Act::softplus_backward: return SoftplusBackwardOp<C>{p0, p1}(dy, x);
      case Act::hardtanh_backward: return HardtanhBackwardOp<C>{p0, p1}(dy, x);
      case Act::gelu_backward: return GeluBackwardOp<C>{p0 != C(0)}(dy, x);
      default: return dy;
    }
  }
};

// Numbers of an activation as kernel arguments: rounded to the dtype first
// (PyTorch's scalar_t arguments) or taken in the compute type (opmath ones).
struct ActNumber {
  double value;
  bool rounded;
  double factor = 1;  // multiplied in the compute type (elu's alpha * scale)
};

template <typename S>
opmath_t<S> act_number(const ActNumber& n) {
  using C = opmath_t<S>;
  if (n.rounded) return scalar_as<S>(Scalar(n.value));
  const C v = scalar_opmath<S>(Scalar(n.value));
  return n.factor == 1 ? v : C(v * static_cast<C>(n.factor));
}

void run_activation(const TensorIterator& it, const char* name, Act op, bool backward, ActNumber p0 = {0, false},
                    ActNumber p1 = {0, false}, ActNumber p2 = {0, false}) {
  dispatch_dtype<kAllFloating>(it.common_dtype(), name, [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = opmath_t<S>;
    const C a = act_number<S>(p0), b = act_number<S>(p1), c = act_number<S>(p2);
    if (backward) return gpu_kernel<S, S, S>(it, ActBackwardOp<C>{op, a, b, c});
    gpu_kernel<S, S>(it, ActForwardOp<C>{op, a, b, c});
  });
}

ActNumber opmath(const Scalar& s) { return {s.to_double(), false}; }
ActNumber rounded(const Scalar& s) { return {s.to_double(), true}; }

#define EMBER_ACT_KERNEL(op, backward)                                                                    \
  void op##_cuda_kernel(const TensorIterator& it) { run_activation(it, #op "_cuda", Act::op, backward); } \
  EMBER_REGISTER_CUDA_POINTWISE(op, &op##_cuda_kernel)
EMBER_ACT_KERNEL(silu, false);
EMBER_ACT_KERNEL(hardsigmoid, false);
EMBER_ACT_KERNEL(hardswish, false);
EMBER_ACT_KERNEL(mish, false);
EMBER_ACT_KERNEL(log_sigmoid, false);
EMBER_ACT_KERNEL(tanh_backward, true);
EMBER_ACT_KERNEL(sigmoid_backward, true);
EMBER_ACT_KERNEL(silu_backward, true);
EMBER_ACT_KERNEL(hardsigmoid_backward, true);
EMBER_ACT_KERNEL(hardswish_backward, true);
EMBER_ACT_KERNEL(mish_backward, true);
EMBER_ACT_KERNEL(log_sigmoid_backward, true);
#undef EMBER_ACT_KERNEL

void gelu_cuda_kernel(const TensorIterator& it, const std::string& approximate) {
  run_activation(it, "gelu_cuda", Act::gelu, false, {approximate == "tanh" ? 1.0 : 0.0, false});
}
void gelu_backward_cuda_kernel(const TensorIterator& it, bool tanh_form) {
  run_activation(it, "gelu_backward_cuda", Act::gelu_backward, true, {tanh_form ? 1.0 : 0.0, false});
}
void leaky_relu_cuda_kernel(const TensorIterator& it, const Scalar& slope) {
  run_activation(it, "leaky_relu_cuda", Act::leaky_relu, false, opmath(slope));
}
void leaky_relu_backward_cuda_kernel(const TensorIterator& it, const Scalar& slope) {
  run_activation(it, "leaky_relu_backward_cuda", Act::leaky_relu_backward, true, opmath(slope));
}
// elu's numbers: negcoef = alpha * scale, poscoef = scale, negiptcoef = input_scale.
void elu_cuda_kernel(const TensorIterator& it, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  run_activation(it, "elu_cuda", Act::elu, false, {alpha.to_double(), false, scale.to_double()}, opmath(scale),
                 opmath(input_scale));
}
void elu_backward_cuda_kernel(const TensorIterator& it, const Scalar& alpha, const Scalar& scale,
                              const Scalar& input_scale) {
  run_activation(it, "elu_backward_cuda", Act::elu_backward, true, {alpha.to_double(), false, scale.to_double()},
                 opmath(scale), opmath(input_scale));
}
void softplus_cuda_kernel(const TensorIterator& it, const Scalar& beta, const Scalar& threshold) {
  run_activation(it, "softplus_cuda", Act::softplus, false, opmath(beta), opmath(threshold));
}
void softplus_backward_cuda_kernel(const TensorIterator& it, const Scalar& beta, const Scalar& threshold) {
  run_activation(it, "softplus_backward_cuda", Act::softplus_backward, true, opmath(beta), opmath(threshold));
}
void threshold_backward_cuda_kernel(const TensorIterator& it, const Scalar& threshold) {
  run_activation(it, "threshold_backward_cuda", Act::threshold_backward, true, rounded(threshold));
}
void hardtanh_backward_cuda_kernel(const TensorIterator& it, const Scalar& lo, const Scalar& hi) {
  run_activation(it, "hardtanh_backward_cuda", Act::hardtanh_backward, true, rounded(lo), rounded(hi));
}
EMBER_REGISTER_CUDA_POINTWISE(gelu, &gelu_cuda_kernel);
EMBER_REGISTER_CUDA_DISPATCH(gelu_backward_stub, &gelu_backward_cuda_kernel);
EMBER_REGISTER_CUDA_POINTWISE(leaky_relu, &leaky_relu_cuda_kernel);
EMBER_REGISTER_CUDA_POINTWISE(leaky_relu_backward, &leaky_relu_backward_cuda_kernel);
EMBER_REGISTER_CUDA_POINTWISE(elu, &elu_cuda_kernel);
EMBER_REGISTER_CUDA_POINTWISE(elu_backward, &elu_backward_cuda_kernel);
EMBER_REGISTER_CUDA_POINTWISE(softplus, &softplus_cuda_kernel);
EMBER_REGISTER_CUDA_POINTWISE(softplus_backward, &softplus_backward_cuda_kernel);
EMBER_REGISTER_CUDA_POINTWISE(threshold_backward, &threshold_backward_cuda_kernel);
EMBER_REGISTER_CUDA_POINTWISE(hardtanh_backward, &hardtanh_backward_cuda_kernel);

// relu, threshold and hardtanh also take integral dtypes.
EMBER_CUDA_UNARY_KERNEL(relu, ReluOp, kAllReal);

void threshold_cuda_kernel(const TensorIterator& it, const Scalar& threshold, const Scalar& value) {
  dispatch_dtype<kIntegral | kAllFloating>(it.common_dtype(), "threshold_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    gpu_kernel<S, S>(it, ThresholdOp<opmath_t<S>>{scalar_as<S>(threshold), scalar_as<S>(value)});
  });
}
EMBER_REGISTER_CUDA_POINTWISE(threshold, &threshold_cuda_kernel);

void hardtanh_cuda_kernel(const TensorIterator& it, const Scalar& lo, const Scalar& hi) {
  dispatch_dtype<kIntegral | kAllFloating>(it.common_dtype(), "hardtanh_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    gpu_kernel<S, S>(it, HardtanhOp<opmath_t<S>>{scalar_as<S>(lo), scalar_as<S>(hi)});
  });
}
EMBER_REGISTER_CUDA_POINTWISE(hardtanh, &hardtanh_cuda_kernel);

}  // namespace
}  // namespace ember::cuda
