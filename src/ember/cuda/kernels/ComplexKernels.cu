// complex64/complex128 pointwise kernels: arithmetic, the functions PyTorch
// defines on complex inputs, comparisons and the complex<->real maps (abs,
// angle, complex, polar). As PyTorch's CUDA kernels: products are the plain
// (ac - bd) + (ad + bc)i, quotients scale by the larger part of the divisor
// (numpy's algorithm), a quotient by a number multiplies by its reciprocal,
// and the functions are thrust's (what PyTorch's complex math calls on CUDA).
// The unary functions share one functor per dtype that switches on the
// operator, to keep the kernels few.
#include <thrust/complex.h>

#include "ember/cpu/ComplexStubs.h"
#include "ember/cuda/kernels/DeviceMath.cuh"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cuda {
namespace {

template <typename R>
using Cx = thrust::complex<R>;

template <typename R>
__host__ __device__ Cx<R> cmul(Cx<R> a, Cx<R> b) {
  return Cx<R>(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}

// a / b scaled by b's larger part; 0 / 0 gives the infinities or NaNs of a part-wise division.
template <typename R>
__host__ __device__ Cx<R> cdiv(Cx<R> a, Cx<R> b) {
  const R c = b.real(), d = b.imag();
  const R ac = c < 0 ? -c : c, ad = d < 0 ? -d : d;
  if (ac >= ad) {
    if (ac == R(0) && ad == R(0)) return Cx<R>(a.real() / ac, a.imag() / ad);
    const R ratio = d / c, scale = R(1) / (c + d * ratio);
    return Cx<R>((a.real() + a.imag() * ratio) * scale, (a.imag() - a.real() * ratio) * scale);
  }
  const R ratio = c / d, scale = R(1) / (d + c * ratio);
  return Cx<R>((a.real() * ratio + a.imag()) * scale, (a.imag() * ratio - a.real()) * scale);
}

// Calls f(R{}) with R the real type of a complex dtype.
template <typename F>
void dispatch_complex(ScalarType t, const char* name, F&& f) {
  if (t == ScalarType::ComplexFloat) return f(float{});
  if (t == ScalarType::ComplexDouble) return f(double{});
  native::math::not_implemented_for(name, t);
}

bool is_cpu_number(const TensorIterator& it, int k) { return it.operand(k).dim() == 0 && it.operand(k).is_cpu(); }

// ---- arithmetic -------------------------------------------------------------------

template <typename R>
struct AddOp {
  Cx<R> alpha;
  __device__ Cx<R> operator()(Cx<R> a, Cx<R> b) const {
    const Cx<R> p = cmul(alpha, b);
    return Cx<R>(a.real() + p.real(), a.imag() + p.imag());
  }
};
template <typename R>
struct MulOp {
  __device__ Cx<R> operator()(Cx<R> a, Cx<R> b) const { return cmul(a, b); }
};
template <typename R>
struct DivOp {
  __device__ Cx<R> operator()(Cx<R> a, Cx<R> b) const { return cdiv(a, b); }
};
template <typename R>
struct SquareOp {  // z * z, as pow(z, 2)
  __device__ Cx<R> operator()(Cx<R> z) const { return cmul(z, z); }
};
template <typename R>
struct MulByOp {  // a * (1 / b) for a number b (the operand b is not read)
  Cx<R> inverse;
  __device__ Cx<R> operator()(Cx<R> a, Cx<R>) const { return cmul(a, inverse); }
};

void add_cuda(const TensorIterator& it, const Scalar& alpha) {
  dispatch_complex(it.common_dtype(), "add_cuda", [&](auto r) {
    using R = decltype(r);
    const std::complex<double> a = alpha.to_complex();
    gpu_kernel<Cx<R>, Cx<R>, Cx<R>>(it, AddOp<R>{Cx<R>(static_cast<R>(a.real()), static_cast<R>(a.imag()))});
  });
}

void mul_cuda(const TensorIterator& it) {
  dispatch_complex(it.common_dtype(), "mul_cuda", [&](auto r) {
    using R = decltype(r);
    gpu_kernel<Cx<R>, Cx<R>, Cx<R>>(it, MulOp<R>{});
  });
}

void square_cuda(const TensorIterator& it) {
  dispatch_complex(it.common_dtype(), "pow_cuda", [&](auto r) {
    using R = decltype(r);
    gpu_kernel<Cx<R>, Cx<R>>(it, SquareOp<R>{});
  });
}

Cx<double> number_at(const TensorIterator& it, int k) {
  const std::complex<double> v = it.operand(k).item<std::complex<double>>();
  return {v.real(), v.imag()};
}

void div_cuda(const TensorIterator& it) {
  dispatch_complex(it.common_dtype(), "div_true_cuda", [&](auto r) {
    using R = decltype(r);
    if (is_cpu_number(it, 2)) {
      // Dividing by a number multiplies by its reciprocal, computed in the dtype's precision.
      const Cx<double> b = number_at(it, 2);
      const Cx<R> inverse = cdiv(Cx<R>(R(1), R(0)), Cx<R>(static_cast<R>(b.real()), static_cast<R>(b.imag())));
      gpu_kernel<Cx<R>, Cx<R>, Cx<R>>(it, MulByOp<R>{inverse});
      return;
    }
    gpu_kernel<Cx<R>, Cx<R>, Cx<R>>(it, DivOp<R>{});
  });
}

// ---- unary functions --------------------------------------------------------------

enum class UnaryFn : int {
  Neg,
  Conj,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tan,
  Sinh,
  Cosh,
  Tanh,
  Asin,
  Acos,
  Atan,
  Sigmoid,
  Reciprocal,
  Sgn
};  // fmt: skip

template <typename R>
__device__ Cx<R> reciprocal(Cx<R> z) {
  // numpy's values at the infinities and NaNs, then 1 / z.
  const bool re_inf = ::isinf(z.real()), im_inf = ::isinf(z.imag());
  if (::isnan(z.real()) || ::isnan(z.imag()) || (re_inf && im_inf)) {
    return Cx<R>(dm::nan<R>(), dm::nan<R>());
  }
  if (re_inf || im_inf) return Cx<R>(R(0), R(0));
  return cdiv(Cx<R>(R(1), R(0)), z);
}

template <typename R>
struct UnaryOp {
  UnaryFn fn;
  __device__ Cx<R> operator()(Cx<R> z) const {
    switch (fn) {
      case UnaryFn::Neg: return Cx<R>(-z.real(), -z.imag());
      case UnaryFn::Conj: return Cx<R>(z.real(), -z.imag());
      case UnaryFn::Exp: return thrust::exp(z);
      case UnaryFn::Log: return thrust::log(z);
      case UnaryFn::Sqrt: return thrust::sqrt(z);
      case UnaryFn::Rsqrt: return cdiv(Cx<R>(R(1), R(0)), thrust::sqrt(z));
      case UnaryFn::Sin: return thrust::sin(z);
      case UnaryFn::Cos: return thrust::cos(z);
      case UnaryFn::Tan: return thrust::tan(z);
      case UnaryFn::Sinh: return thrust::sinh(z);
      case UnaryFn::Cosh: return thrust::cosh(z);
      case UnaryFn::Tanh: return thrust::tanh(z);
      case UnaryFn::Asin: return thrust::asin(z);
      case UnaryFn::Acos: return thrust::acos(z);
      case UnaryFn::Atan: return thrust::atan(z);
      case UnaryFn::Sigmoid: {
        const Cx<R> e = thrust::exp(Cx<R>(-z.real(), -z.imag()));
        return cdiv(Cx<R>(R(1), R(0)), Cx<R>(R(1) + e.real(), e.imag()));
      }
      case UnaryFn::Reciprocal: return reciprocal(z);
      case UnaryFn::Sgn: {
        if (z.real() == R(0) && z.imag() == R(0)) return Cx<R>(R(0), R(0));
        const R a = thrust::abs(z);
        return Cx<R>(z.real() / a, z.imag() / a);
      }
    }
    return z;
  }
};

template <UnaryFn F>
void unary_cuda(const TensorIterator& it) {
  static constexpr const char* kNames[] = {"neg_cuda",     "conj_cuda",       "exp_cuda",  "log_cuda",  "sqrt_cuda",
                                           "rsqrt_cuda",   "sin_cuda",        "cos_cuda",  "tan_cuda",  "sinh_cuda",
                                           "cosh_cuda",    "tanh_cuda",       "asin_cuda", "acos_cuda", "atan_cuda",
                                           "sigmoid_cuda", "reciprocal_cuda", "sgn_cuda"};
  dispatch_complex(it.common_dtype(), kNames[static_cast<int>(F)], [&](auto r) {
    using R = decltype(r);
    gpu_kernel<Cx<R>, Cx<R>>(it, UnaryOp<R>{F});
  });
}

// ---- tests and comparisons --------------------------------------------------------

enum class TestFn : int { IsNan, IsInf, IsFinite };
template <typename R>
struct TestOp {
  TestFn fn;
  __device__ bool operator()(Cx<R> z) const {
    switch (fn) {
      case TestFn::IsNan: return ::isnan(z.real()) || ::isnan(z.imag());
      case TestFn::IsInf: return ::isinf(z.real()) || ::isinf(z.imag());
      case TestFn::IsFinite: return ::isfinite(z.real()) && ::isfinite(z.imag());
    }
    return false;
  }
};
template <TestFn F>
void test_cuda(const TensorIterator& it) {
  static constexpr const char* kNames[] = {"isnan_cuda", "isinf_cuda", "isfinite_cuda"};
  dispatch_complex(it.dtype(1), kNames[static_cast<int>(F)], [&](auto r) {
    using R = decltype(r);
    gpu_kernel<bool, Cx<R>>(it, TestOp<R>{F});
  });
}

template <typename R>
struct EqualOp {
  bool equal;
  __device__ bool operator()(Cx<R> a, Cx<R> b) const {
    const bool same = a.real() == b.real() && a.imag() == b.imag();
    return equal ? same : !same;
  }
};
template <bool Equal>
void compare_cuda(const TensorIterator& it) {
  dispatch_complex(it.dtype(1), Equal ? "eq_cuda" : "ne_cuda", [&](auto r) {
    using R = decltype(r);
    gpu_kernel<bool, Cx<R>, Cx<R>>(it, EqualOp<R>{Equal});
  });
}

// ---- complex <-> real -------------------------------------------------------------

template <typename R>
struct AbsOp {
  __device__ R operator()(Cx<R> z) const { return thrust::abs(z); }
};
template <typename R>
struct ArgOp {
  __device__ R operator()(Cx<R> z) const { return thrust::arg(z); }
};
template <typename R>
struct RealAngleOp {  // 0, pi, or the NaN itself
  __device__ R operator()(R x) const { return dm::isnan(x) ? x : (x < R(0) ? static_cast<R>(dm::kPi) : R(0)); }
};
template <typename R>
struct MakeComplexOp {
  __device__ Cx<R> operator()(R re, R im) const { return Cx<R>(re, im); }
};
template <typename R>
struct PolarOp {
  __device__ Cx<R> operator()(R r, R t) const { return Cx<R>(r * dm::cos(t), r * dm::sin(t)); }
};

void abs_cuda(const TensorIterator& it) {
  dispatch_complex(it.dtype(1), "abs_cuda", [&](auto r) {
    using R = decltype(r);
    gpu_kernel<R, Cx<R>>(it, AbsOp<R>{});
  });
}

void angle_cuda(const TensorIterator& it) {
  const ScalarType in = it.dtype(1);
  if (is_complex_type(in)) {
    dispatch_complex(in, "angle_cuda", [&](auto r) {
      using R = decltype(r);
      gpu_kernel<R, Cx<R>>(it, ArgOp<R>{});
    });
  } else if (in == ScalarType::Float) {
    gpu_kernel<float, float>(it, RealAngleOp<float>{});
  } else if (in == ScalarType::Double) {
    gpu_kernel<double, double>(it, RealAngleOp<double>{});
  } else {
    native::math::not_implemented_for("angle_cuda", in);
  }
}

void make_complex_cuda(const TensorIterator& it) {
  dispatch_complex(it.dtype(0), "complex_cuda", [&](auto r) {
    using R = decltype(r);
    gpu_kernel<Cx<R>, R, R>(it, MakeComplexOp<R>{});
  });
}

// ---- fused: addcmul/addcdiv, lerp; sinc --------------------------------------------

// self + value * (t1 * t2), or self + value * (t1 / t2): PyTorch's complex kernels.
template <typename R>
struct AddcOp {
  Cx<R> value;
  bool divide;
  __device__ Cx<R> operator()(Cx<R> self, Cx<R> t1, Cx<R> t2) const {
    return self + cmul(value, divide ? cdiv(t1, t2) : cmul(t1, t2));
  }
};

// lerp's two forms, chosen by |weight| < 0.5 (PyTorch's Lerp.h).
template <typename R>
__device__ Cx<R> lerp(Cx<R> self, Cx<R> end, Cx<R> weight) {
  const Cx<R> diff = end - self;
  return thrust::abs(weight) < R(0.5) ? self + cmul(weight, diff) : end - cmul(diff, Cx<R>(R(1), R(0)) - weight);
}
template <typename R>
struct LerpScalarOp {
  Cx<R> weight;
  __device__ Cx<R> operator()(Cx<R> self, Cx<R> end) const { return lerp(self, end, weight); }
};
template <typename R>
struct LerpTensorOp {
  __device__ Cx<R> operator()(Cx<R> self, Cx<R> end, Cx<R> weight) const { return lerp(self, end, weight); }
};

// sin(pi z) / (pi z), 1 at 0; pi z as the complex product (pi, 0) * z.
template <typename R>
struct SincOp {
  __device__ Cx<R> operator()(Cx<R> z) const {
    if (z.real() == R(0) && z.imag() == R(0)) return Cx<R>(R(1), R(0));
    const Cx<R> product = cmul(Cx<R>(R(3.14159265358979323846), R(0)), z);
    return cdiv(thrust::sin(product), product);
  }
};

// x / (1 + exp(-x)), PyTorch's CUDA silu in complex arithmetic.
template <typename R>
struct SiluOp {
  __device__ Cx<R> operator()(Cx<R> z) const { return cdiv(z, Cx<R>(R(1), R(0)) + thrust::exp(-z)); }
};

void silu_cuda(const TensorIterator& it) {
  dispatch_complex(it.common_dtype(), "silu_cuda", [&](auto r) {
    using R = decltype(r);
    gpu_kernel<Cx<R>, Cx<R>>(it, SiluOp<R>{});
  });
}

template <typename R>
Cx<R> complex_number(const Scalar& s) {
  const std::complex<double> v = s.to_complex();
  return Cx<R>(static_cast<R>(v.real()), static_cast<R>(v.imag()));
}

void addc_cuda(const TensorIterator& it, const Scalar& value, bool divide) {
  dispatch_complex(it.common_dtype(), divide ? "addcdiv_cuda" : "addcmul_cuda", [&](auto r) {
    using R = decltype(r);
    gpu_kernel<Cx<R>, Cx<R>, Cx<R>, Cx<R>>(it, AddcOp<R>{complex_number<R>(value), divide});
  });
}

void lerp_scalar_cuda(const TensorIterator& it, const Scalar& weight) {
  dispatch_complex(it.common_dtype(), "lerp_cuda", [&](auto r) {
    using R = decltype(r);
    gpu_kernel<Cx<R>, Cx<R>, Cx<R>>(it, LerpScalarOp<R>{complex_number<R>(weight)});
  });
}

void lerp_tensor_cuda(const TensorIterator& it) {
  dispatch_complex(it.common_dtype(), "lerp_cuda", [&](auto r) {
    using R = decltype(r);
    gpu_kernel<Cx<R>, Cx<R>, Cx<R>, Cx<R>>(it, LerpTensorOp<R>{});
  });
}

void sinc_cuda(const TensorIterator& it) {
  dispatch_complex(it.common_dtype(), "sinc_cuda", [&](auto r) {
    using R = decltype(r);
    gpu_kernel<Cx<R>, Cx<R>>(it, SincOp<R>{});
  });
}

void polar_cuda(const TensorIterator& it) {
  dispatch_complex(it.dtype(0), "polar_cuda", [&](auto r) {
    using R = decltype(r);
    gpu_kernel<Cx<R>, R, R>(it, PolarOp<R>{});
  });
}

}  // namespace

EMBER_REGISTER_CUDA_DISPATCH(add_complex_stub, &add_cuda);
EMBER_REGISTER_CUDA_DISPATCH(mul_complex_stub, &mul_cuda);
EMBER_REGISTER_CUDA_DISPATCH(square_complex_stub, &square_cuda);
EMBER_REGISTER_CUDA_DISPATCH(neg_complex_stub, &unary_cuda<UnaryFn::Neg>);
EMBER_REGISTER_CUDA_DISPATCH(conj_complex_stub, &unary_cuda<UnaryFn::Conj>);
EMBER_REGISTER_CUDA_DISPATCH(sgn_complex_stub, &unary_cuda<UnaryFn::Sgn>);
EMBER_REGISTER_CUDA_DISPATCH(abs_complex_stub, &abs_cuda);
EMBER_REGISTER_CUDA_DISPATCH(angle_stub, &angle_cuda);
EMBER_REGISTER_CUDA_DISPATCH(make_complex_stub, &make_complex_cuda);
EMBER_REGISTER_CUDA_DISPATCH(polar_stub, &polar_cuda);
EMBER_REGISTER_CUDA_DISPATCH(addc_complex_stub, &addc_cuda);
EMBER_REGISTER_CUDA_DISPATCH(lerp_scalar_complex_stub, &lerp_scalar_cuda);
EMBER_REGISTER_CUDA_DISPATCH(lerp_tensor_complex_stub, &lerp_tensor_cuda);
EMBER_REGISTER_CUDA_DISPATCH(sinc_complex_stub, &sinc_cuda);
EMBER_REGISTER_CUDA_POINTWISE(silu_complex, &silu_cuda);
EMBER_REGISTER_CUDA_POINTWISE(div_complex, &div_cuda);
EMBER_REGISTER_CUDA_POINTWISE(eq_complex, &compare_cuda<true>);
EMBER_REGISTER_CUDA_POINTWISE(ne_complex, &compare_cuda<false>);
EMBER_REGISTER_CUDA_POINTWISE(exp_complex, &unary_cuda<UnaryFn::Exp>);
EMBER_REGISTER_CUDA_POINTWISE(log_complex, &unary_cuda<UnaryFn::Log>);
EMBER_REGISTER_CUDA_POINTWISE(sqrt_complex, &unary_cuda<UnaryFn::Sqrt>);
EMBER_REGISTER_CUDA_POINTWISE(rsqrt_complex, &unary_cuda<UnaryFn::Rsqrt>);
EMBER_REGISTER_CUDA_POINTWISE(sin_complex, &unary_cuda<UnaryFn::Sin>);
EMBER_REGISTER_CUDA_POINTWISE(cos_complex, &unary_cuda<UnaryFn::Cos>);
EMBER_REGISTER_CUDA_POINTWISE(tan_complex, &unary_cuda<UnaryFn::Tan>);
EMBER_REGISTER_CUDA_POINTWISE(sinh_complex, &unary_cuda<UnaryFn::Sinh>);
EMBER_REGISTER_CUDA_POINTWISE(cosh_complex, &unary_cuda<UnaryFn::Cosh>);
EMBER_REGISTER_CUDA_POINTWISE(tanh_complex, &unary_cuda<UnaryFn::Tanh>);
EMBER_REGISTER_CUDA_POINTWISE(asin_complex, &unary_cuda<UnaryFn::Asin>);
EMBER_REGISTER_CUDA_POINTWISE(acos_complex, &unary_cuda<UnaryFn::Acos>);
EMBER_REGISTER_CUDA_POINTWISE(atan_complex, &unary_cuda<UnaryFn::Atan>);
EMBER_REGISTER_CUDA_POINTWISE(sigmoid_complex, &unary_cuda<UnaryFn::Sigmoid>);
EMBER_REGISTER_CUDA_POINTWISE(reciprocal_complex, &unary_cuda<UnaryFn::Reciprocal>);
EMBER_REGISTER_CUDA_POINTWISE(isnan_complex, &test_cuda<TestFn::IsNan>);
EMBER_REGISTER_CUDA_POINTWISE(isinf_complex, &test_cuda<TestFn::IsInf>);
EMBER_REGISTER_CUDA_POINTWISE(isfinite_complex, &test_cuda<TestFn::IsFinite>);

}  // namespace ember::cuda
