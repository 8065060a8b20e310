#pragma once
// Window arithmetic of the CUDA pooling kernels, shared by host and device:
// which input rows a pooling output reads and which outputs an input row
// feeds (the backward passes gather through these). Plain C++ for the host;
// tested in tests/cpp/cuda_nn_plan_test.cpp.
#include <cstdint>

#if defined(__CUDACC__)
#define EMBER_POOL_HD __host__ __device__ __forceinline__
#else
#define EMBER_POOL_HD inline
#endif

namespace ember::cuda::nn {

struct PoolWindow2d {
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
};

// A half-open range of output rows (or columns).
struct PoolRange {
  int64_t begin, end;
};

EMBER_POOL_HD int64_t pool_min(int64_t a, int64_t b) { return a < b ? a : b; }
EMBER_POOL_HD int64_t pool_max(int64_t a, int64_t b) { return a > b ? a : b; }

// Outputs of a (dilated) max pooling whose window may hold input position `i`.
EMBER_POOL_HD PoolRange max_pool_range(int64_t i, int64_t pad, int64_t kernel, int64_t dilation, int64_t stride,
                                       int64_t out) {
  const int64_t span = (kernel - 1) * dilation + 1;
  const int64_t begin = (i + pad < span) ? 0 : (i + pad - span) / stride + 1;
  return {begin, pool_min((i + pad) / stride + 1, out)};
}

// Outputs of an average pooling whose window holds input position `i`.
EMBER_POOL_HD PoolRange avg_pool_range(int64_t i, int64_t pad, int64_t kernel, int64_t stride, int64_t out) {
  const int64_t begin = (i + pad < kernel) ? 0 : (i + pad - kernel) / stride + 1;
  return {begin, pool_min((i + pad) / stride + 1, out)};
}

// An average-pooling window clipped to the input, and its size counting padding.
struct AvgWindow {
  int64_t h0, h1, w0, w1;
  int64_t padded_size;
  bool empty;
};

EMBER_POOL_HD AvgWindow avg_window(int64_t oh, int64_t ow, const PoolWindow2d& g) {
  int64_t h0 = oh * g.stride_h - g.pad_h, w0 = ow * g.stride_w - g.pad_w;
  int64_t h1 = pool_min(h0 + g.kernel_h, g.in_h + g.pad_h), w1 = pool_min(w0 + g.kernel_w, g.in_w + g.pad_w);
  const int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = pool_max(h0, 0);
  w0 = pool_max(w0, 0);
  h1 = pool_min(h1, g.in_h);
  w1 = pool_min(w1, g.in_w);
  return {h0, h1, w0, w1, padded, h0 >= h1 || w0 >= w1};
}

// divisor_override (0: none), else the window's size with or without padding.
EMBER_POOL_HD int64_t avg_divisor(const AvgWindow& w, bool count_include_pad, int64_t divisor_override) {
  if (divisor_override != 0) return divisor_override;
  return count_include_pad ? w.padded_size : (w.h1 - w.h0) * (w.w1 - w.w0);
}

// Adaptive pooling: output a of b reads input [start, end) of c.
EMBER_POOL_HD int64_t adaptive_start(int64_t a, int64_t b, int64_t c) { return (a * c) / b; }
EMBER_POOL_HD int64_t adaptive_end(int64_t a, int64_t b, int64_t c) { return ((a + 1) * c + b - 1) / b; }

}  // namespace ember::cuda::nn
