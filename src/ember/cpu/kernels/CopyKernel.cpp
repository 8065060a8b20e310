// Fill and dtype-converting copy kernels, compiled once per CPU capability.
#include <cstring>

#include "ember/cpu/Stubs.h"
#include "ember/cpu/kernels/Loops.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

void fill_kernel(const TensorIterator& it, const Scalar& value) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), fill_stub, it, value);
  EMBER_DISPATCH_KERNEL_TYPES(it.common_dtype(), "fill_", [&] {
    const scalar_t vi = value.is_floating_point() ? convert<scalar_t>(value.to<double>())
                        : value.is_bool()           ? convert<scalar_t>(value.to<bool>())
                                                    : convert<scalar_t>(value.to<int64_t>());
    it.for_each([vi](char** d, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(scalar_t)) {
        scalar_t* out = reinterpret_cast<scalar_t*>(d[0]);
        for (int64_t i = 0; i < n; ++i) out[i] = vi;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<scalar_t*>(d[0] + i * s[0]) = vi;
      }
    });
  });
}

void copy_kernel(const TensorIterator& it) {
  ScalarType dst = it.dtype(0), src = it.dtype(1);
  if (dst == src) {
    const int64_t isz = static_cast<int64_t>(element_size(dst));
    it.for_each([isz](char** d, const int64_t* s, int64_t n) {
      if (s[0] == isz && s[1] == isz) {
        std::memcpy(d[0], d[1], n * isz);
      } else {
        for (int64_t i = 0; i < n; ++i) std::memcpy(d[0] + i * s[0], d[1] + i * s[1], isz);
      }
    });
    return;
  }
  EMBER_USE_BASELINE_KERNEL_FOR(has_loops_for(src) ? dst : src, copy_stub, it);
  EMBER_DISPATCH_KERNEL_TYPES(dst, "copy_", [&] {
    using dst_t = scalar_t;
    EMBER_DISPATCH_KERNEL_TYPES(src, "copy_", [&] {
      using src_t = scalar_t;
      it.for_each([](char** d, const int64_t* s, int64_t n) {
        unary_loop<dst_t, src_t>(d, s, n, [](src_t x) { return convert<dst_t>(x); });
      });
    });
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(fill_stub, &fill_kernel);
EMBER_REGISTER_DISPATCH(copy_stub, &copy_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
