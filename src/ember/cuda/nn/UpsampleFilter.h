#pragma once
// Source positions and filter weights of bicubic and antialiased resampling
// on CUDA, as PyTorch's CUDA kernels compute them (in the accumulate type A).
// Host and device; tested in tests/cpp/cuda_resample_filter_test.cpp.
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define EMBER_FILTER_HD __host__ __device__ __forceinline__
#else
#define EMBER_FILTER_HD inline
#endif

namespace ember::cuda::nn {

// ---- bicubic (cubic convolution, A = -0.75) -----------------------------------------------

template <typename A>
EMBER_FILTER_HD A cubic_near(A x, A a) {  // |x| <= 1
  return ((a + 2) * x - (a + 3)) * x * x + 1;
}

template <typename A>
EMBER_FILTER_HD A cubic_far(A x, A a) {  // 1 < |x| < 2
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

// The four taps around a source position: the index of the second (the
// first is i0 - 1) and their weights.
template <typename A>
struct CubicTap {
  int64_t i0;
  A c[4];
};

// The position is not clamped at zero (the taps are clamped to the border
// by the kernel); its integer part is taken in float, as PyTorch's floorf.
template <typename A>
EMBER_FILTER_HD CubicTap<A> cubic_tap(A ratio, int64_t dst, bool align_corners) {
  const A real = align_corners ? ratio * static_cast<A>(dst)
                               : ratio * (static_cast<A>(dst) + static_cast<A>(0.5)) - static_cast<A>(0.5);
  CubicTap<A> tap;
  tap.i0 = static_cast<int64_t>(floorf(static_cast<float>(real)));
  const A t = real - static_cast<A>(tap.i0);
  const A a = static_cast<A>(-0.75);
  tap.c[0] = cubic_far<A>(t + static_cast<A>(1), a);
  tap.c[1] = cubic_near<A>(t, a);
  const A u = static_cast<A>(1) - t;
  tap.c[2] = cubic_near<A>(u, a);
  tap.c[3] = cubic_far<A>(u + static_cast<A>(1), a);
  return tap;
}

// ---- antialiased (PIL's triangle and cubic A = -0.5 filters) ------------------------------

template <typename A>
EMBER_FILTER_HD A aa_filter(A x, bool cubic) {
  if (x < 0) x = -x;
  if (!cubic) return x < 1 ? 1 - x : static_cast<A>(0);
  const A a = static_cast<A>(-0.5);
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
}

// The filter's half-width in source pixels (stretched when shrinking), the
// weight slots per output position, and the factor taking source distances
// to filter coordinates.
template <typename A>
struct AaSupport {
  A support, invscale;
  int64_t width;
};

template <typename A>
inline AaSupport<A> aa_support(A scale, bool cubic) {
  const A half = static_cast<A>(0.5);
  const int size = cubic ? 4 : 2;
  AaSupport<A> s;
  s.support = scale >= 1.0 ? (size * half) * scale : size * half;
  s.width = static_cast<int64_t>(std::ceil(static_cast<float>(s.support))) * 2 + 1;
  s.invscale = scale >= 1.0 ? static_cast<A>(1.0 / static_cast<double>(scale)) : static_cast<A>(1);
  return s;
}

// The source window of output position o: its first index, its length and
// the first index minus the window's centre.
template <typename A>
struct AaSpan {
  int64_t min, size;
  A min_minus_center;
};

template <typename A>
EMBER_FILTER_HD AaSpan<A> aa_span(int64_t o, int64_t in_size, A scale, A support) {
  const A center = scale * (static_cast<A>(o) + static_cast<A>(0.5));
  AaSpan<A> s;
  const int64_t lo = static_cast<int64_t>(center - support + static_cast<A>(0.5));
  s.min = lo > 0 ? lo : 0;
  const int64_t hi = static_cast<int64_t>(center + support + static_cast<A>(0.5));
  s.size = (hi < in_size ? hi : in_size) - s.min;
  s.min_minus_center = static_cast<A>(s.min) - center;
  return s;
}

// The filter coordinate of tap j of a window.
template <typename A>
EMBER_FILTER_HD A aa_filter_arg(int64_t j, A min_minus_center, A invscale) {
  return (static_cast<A>(j) + min_minus_center + static_cast<A>(0.5)) * invscale;
}

}  // namespace ember::cuda::nn
