// Reduction kernels, compiled once per CPU capability.
#include "ember/cpu/Stubs.h"
#include "ember/cpu/kernels/Loops.h"
#include "ember/ops/Parallel.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// Pairwise summation in blocks keeps float32 error close to PyTorch's cascade sum.
template <typename acc_t, typename T>
acc_t sum_contiguous(const T* p, int64_t n) {
  constexpr int64_t kBlock = 128;
  if (n <= kBlock) {
    acc_t lanes[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int j = 0; j < 8; ++j) lanes[j] += static_cast<acc_t>(static_cast<opmath_t<T>>(p[i + j]));
    }
    acc_t tail = 0;
    for (; i < n; ++i) tail += static_cast<acc_t>(static_cast<opmath_t<T>>(p[i]));
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7])) + tail;
  }
  int64_t half = (n / 2 + kBlock - 1) / kBlock * kBlock;
  return sum_contiguous<acc_t>(p, half) + sum_contiguous<acc_t>(p + half, n - half);
}

void sum_rows_kernel(const Tensor& in, int64_t outer, int64_t inner, Tensor& out) {
  // in and out share the output dtype here (the caller converts first).
  EMBER_DISPATCH_ALL_TYPES(out.dtype(), "sum", [&] {
    using acc_t = std::conditional_t<std::is_same_v<scalar_t, bool>, int64_t, opmath_t<scalar_t>>;
    const scalar_t* src = static_cast<const scalar_t*>(in.data_ptr());
    scalar_t* dst = static_cast<scalar_t*>(out.data_ptr());
    int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(inner, 1));
    parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        dst[i] = static_cast<scalar_t>(sum_contiguous<acc_t>(src + i * inner, inner));
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(sum_rows_stub, &sum_rows_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
