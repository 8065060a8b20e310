// addr's loop, compiled once per CPU capability but AVX-512: PyTorch's
// linear algebra kernels have no AVX-512 form, their AVX2 one runs there.
#include <cmath>

#include "ember/cpu/FusedPointwiseStubs.h"
#include "ember/cpu/kernels/MathLoops.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// Note [addr in PyTorch's forms]
// PyTorch computes addr as beta * self + alpha * vec1 * vec2 (the product
// alone when beta is 0), and its compiler fuses the sum into a multiply-add
// differently in its two loops. Its vectorized loop (every operand
// contiguous along the inner loop, or one of them a broadcast number) runs
// blocks of two vectors (16 floats, 8 doubles) as fma(alpha * vec1, vec2,
// beta * self); the elements past the last block, and every element of other
// loops, are fma(beta, self, alpha * vec1 * vec2). A build without vector
// kernels computes the plain sum.
template <typename T>
void addr_loop(char** d, const int64_t* s, int64_t n, T beta, T alpha) {
  const auto fused_tail = [&](int64_t i) {
    const T x = at<T>(d[1], s[1], i), u = at<T>(d[2], s[2], i), v = at<T>(d[3], s[3], i);
    return beta == T(0) ? alpha * u * v : capability_fma(beta, x, alpha * u * v);
  };
  int64_t body = 0;
  constexpr int64_t z = sizeof(T);
  int broadcast = 0;
  for (int k = 1; k < 4; ++k) broadcast += s[k] == 0;
  bool dense = s[0] == z && broadcast <= 1;
  for (int k = 1; k < 4; ++k) dense = dense && (s[k] == z || s[k] == 0);
  if (dense && !EMBER_CPU_BASELINE_BUILD && beta != T(0)) {
    constexpr int64_t width = 2 * vecmath::kVecBytes / z;
    body = n / width * width;
    T* out = reinterpret_cast<T*>(d[0]);
    for (int64_t i = 0; i < body; ++i) {
      const T x = at<T>(d[1], s[1], i), u = at<T>(d[2], s[2], i), v = at<T>(d[3], s[3], i);
      out[i] = std::fma(alpha * u, v, beta * x);
    }
  }
  for (int64_t i = body; i < n; ++i) at<T>(d[0], s[0], i) = fused_tail(i);
}

void addr_kernel(const TensorIterator& it, double beta, double alpha) {
  if (it.common_dtype() == ScalarType::Float) {
    const float b = static_cast<float>(beta), a = static_cast<float>(alpha);
    it.for_each([=](char** d, const int64_t* s, int64_t n) { addr_loop<float>(d, s, n, b, a); });
  } else {
    EMBER_INTERNAL_ASSERT(it.common_dtype() == ScalarType::Double, "addr kernel: float or double");
    it.for_each([=](char** d, const int64_t* s, int64_t n) { addr_loop<double>(d, s, n, beta, alpha); });
  }
}

}  // namespace

EMBER_REGISTER_DISPATCH(addr_stub, &addr_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
