// Elementwise arithmetic kernels, compiled once per CPU capability.
#include "ember/cpu/Stubs.h"
#include "ember/cpu/kernels/Loops.h"
#include "ember/cpu/kernels/MathLoops.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// 16-bit floats go through float in bulk (Note [16-bit float loops]); a
// template, so the other element types do not instantiate it.
template <typename T, typename F>
void f16_binary(const TensorIterator& it, const F& f) {
  if constexpr (is_16bit_float_v<T>) run_acc<T, T, 2>(it, f);
}

// Note [16-bit add with alpha]
// PyTorch adds 16-bit floats with alpha as x + a * y, a rounded to the dtype
// first, in two forms: its vectorized loop (pytorch_vector_body) computes in
// float and rounds once; every other element (the blocks' tail, strided
// loops, the whole of a build without vector kernels) uses the dtype's own
// arithmetic, which rounds the product a * y before adding.
template <typename T>
void add_16bit(const TensorIterator& it, float alpha) {
  const float a = static_cast<float>(T(alpha));
  it.for_each([a](char** d, const int64_t* s, int64_t n) {
    const int64_t body = pytorch_vector_body<T, 2>(s, n);
    if (body > 0) f16_loop<T, T, 2>(d, s, body, [a](float x, float y) { return x + a * y; });
    if (body < n) {
      char* rest[3] = {d[0] + body * s[0], d[1] + body * s[1], d[2] + body * s[2]};
      f16_loop<T, T, 2>(rest, s, n - body, [a](float x, float y) { return x + static_cast<float>(T(a * y)); });
    }
  });
}

void add_kernel(const TensorIterator& it, const Scalar& alpha) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), add_stub, it, alpha);
  EMBER_DISPATCH_KERNEL_TYPES(it.common_dtype(), "add", [&] {
    using acc_t = wrap_opmath_t<scalar_t>;
    if constexpr (std::is_same_v<scalar_t, bool>) {
      bool a = alpha.to<bool>();
      it.for_each([a](char** d, const int64_t* s, int64_t n) {
        binary_loop<bool>(d, s, n, [a](bool x, bool y) { return x || (a && y); });
      });
    } else if constexpr (is_16bit_float_v<scalar_t>) {
      const float a = alpha.to<float>();
      if (a == 1.f) {
        f16_binary<scalar_t>(it, [](float x, float y) { return x + y; });
      } else {
        add_16bit<scalar_t>(it, a);  // Note [16-bit add with alpha]
      }
    } else {
      const acc_t a = alpha.to<acc_t>();
      if (a == acc_t(1)) {
        it.for_each([](char** d, const int64_t* s, int64_t n) {
          binary_loop<scalar_t>(d, s, n, [](scalar_t x, scalar_t y) {
            return static_cast<scalar_t>(static_cast<acc_t>(x) + static_cast<acc_t>(y));
          });
        });
      } else {
        it.for_each([a](char** d, const int64_t* s, int64_t n) {
          binary_loop<scalar_t>(d, s, n, [a](scalar_t x, scalar_t y) {
            return static_cast<scalar_t>(static_cast<acc_t>(x) + a * static_cast<acc_t>(y));
          });
        });
      }
    }
  });
}

void mul_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), mul_stub, it);
  EMBER_DISPATCH_KERNEL_TYPES(it.common_dtype(), "mul", [&] {
    using acc_t = wrap_opmath_t<scalar_t>;
    if constexpr (is_16bit_float_v<scalar_t>) {
      if (run_16bit_by_original_scalar(it, [](float x, float s) { return x * s; })) return;
      f16_binary<scalar_t>(it, [](float x, float y) { return x * y; });
      return;
    }
    it.for_each([](char** d, const int64_t* s, int64_t n) {
      if constexpr (std::is_same_v<scalar_t, bool>) {
        binary_loop<bool>(d, s, n, [](bool x, bool y) { return x && y; });
      } else {
        binary_loop<scalar_t>(d, s, n, [](scalar_t x, scalar_t y) {
          return static_cast<scalar_t>(static_cast<acc_t>(x) * static_cast<acc_t>(y));
        });
      }
    });
  });
}

void neg_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), neg_stub, it);
  EMBER_DISPATCH_KERNEL_TYPES(it.common_dtype(), "neg", [&] {
    using acc_t = wrap_opmath_t<scalar_t>;
    if constexpr (std::is_same_v<scalar_t, bool>) {
      throw Error(
          "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
          "mask, use the `~` or `logical_not()` operator instead.");
    } else {
      it.for_each([](char** d, const int64_t* s, int64_t n) {
        unary_loop<scalar_t, scalar_t>(d, s, n,
                                       [](scalar_t x) { return static_cast<scalar_t>(-static_cast<acc_t>(x)); });
      });
    }
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(add_stub, &add_kernel);
EMBER_REGISTER_DISPATCH(mul_stub, &mul_kernel);
EMBER_REGISTER_DISPATCH(neg_stub, &neg_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
