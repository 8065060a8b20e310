#pragma once
// Source positions of linear and bilinear upsampling on CUDA, as PyTorch's
// CUDA kernels compute them (in the accumulate type): the input-per-output
// ratio, and for an output position its left tap, the step to the right tap
// (0 at the last input position) and the two weights. Host and device;
// tested in tests/cpp/cuda_nn_plan_test.cpp.
#include <cstdint>
#include <optional>

#if defined(__CUDACC__)
#define EMBER_RESAMPLE_HD __host__ __device__ __forceinline__
#else
#define EMBER_RESAMPLE_HD inline
#endif

namespace ember::cuda::nn {

// Input positions per output position: (in - 1) / (out - 1) with aligned
// corners, else 1 / scale when a scale factor was given, else in / out.
template <typename A>
inline A area_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<A>(in - 1) / static_cast<A>(out - 1) : A(0);
  if (scale && *scale > 0) return static_cast<A>(1.0 / *scale);
  return static_cast<A>(in) / static_cast<A>(out);
}

template <typename A>
struct LinearTap {
  int64_t i0, step;
  A l0, l1;
};

template <typename A>
EMBER_RESAMPLE_HD LinearTap<A> linear_tap(A ratio, int64_t dst, bool align_corners, int64_t in) {
  A src;
  if (align_corners) {
    src = ratio * static_cast<A>(dst);
  } else {
    src = ratio * (static_cast<A>(dst) + static_cast<A>(0.5)) - static_cast<A>(0.5);
    if (src < 0) src = 0;
  }
  const int64_t i0 = static_cast<int64_t>(src);
  const A l1 = src - static_cast<A>(i0);
  return {i0, i0 < in - 1 ? 1 : 0, static_cast<A>(1) - l1, l1};
}

}  // namespace ember::cuda::nn
