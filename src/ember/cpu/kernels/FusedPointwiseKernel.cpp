// addcmul/addcdiv and nan_to_num loops, compiled once per CPU capability.
#include <limits>
#include <type_traits>

#include "ember/core/Half.h"
#include "ember/cpu/FusedPointwiseStubs.h"
#include "ember/cpu/kernels/MathLoops.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// PyTorch evaluates self + value * t1 * t2 left to right in the element
// type (float for 16-bit floats).
void addc_kernel(const TensorIterator& it, const Scalar& value, bool divide) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), addc_stub, it, value, divide);
  dispatch_types(it.common_dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      using A = opmath_t<T>;
      const A v = value.to<A>();
      it.for_each([&](char** d, const int64_t* s, int64_t n) {
        T* out = reinterpret_cast<T*>(d[0]);
        const T* a = reinterpret_cast<const T*>(d[1]);
        const T* b = reinterpret_cast<const T*>(d[2]);
        const T* c = reinterpret_cast<const T*>(d[3]);
        constexpr int64_t z = sizeof(T);
        if (s[0] == z && s[1] == z && s[2] == z && s[3] == z) {
          if (divide) {
            for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(A(a[i]) + v * A(b[i]) / A(c[i]));
          } else {
            for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(A(a[i]) + v * A(b[i]) * A(c[i]));
          }
        } else {
          for (int64_t i = 0; i < n; ++i) {
            const A x = A(at<T>(d[1], s[1], i)), y = A(at<T>(d[2], s[2], i)), w = A(at<T>(d[3], s[3], i));
            at<T>(d[0], s[0], i) = static_cast<T>(divide ? x + v * y / w : x + v * y * w);
          }
        }
      });
    }
  });
}

void nan_to_num_kernel(const TensorIterator& it, double nan, double posinf, double neginf) {
  dispatch_types(it.common_dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_like_v<T>) {
      using A = opmath_t<T>;
      // Replacements rounded to the element type first.
      const A rn = static_cast<A>(static_cast<T>(static_cast<A>(nan)));
      const A rp = static_cast<A>(static_cast<T>(static_cast<A>(posinf)));
      const A rm = static_cast<A>(static_cast<T>(static_cast<A>(neginf)));
      constexpr A inf = std::numeric_limits<A>::infinity();
      if constexpr (std::is_same_v<A, float>) {
        using vecmath::select;
        using vecmath::splat;
        const auto vf = [=](vecmath::Vf f) {
          const vecmath::Vf r = select(f == inf, splat(rp), select(f == -inf, splat(rm), f));
          return select(f != f, splat(rn), r);
        };
        it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop<T, 1>(d, s, n, vf); });
      } else {
        run_acc<T, T, 1>(it, [=](A f) { return f != f ? rn : (f == inf ? rp : (f == -inf ? rm : f)); });
      }
    }
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(addc_stub, &addc_kernel);
EMBER_REGISTER_DISPATCH(nan_to_num_stub, &nan_to_num_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
