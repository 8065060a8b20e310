// grid_sampler_2d and grid_sampler_3d on CUDA, forward and backward, with
// PyTorch's CUDA arithmetic (in the accumulate type): the grid's normalised
// coordinates unnormalised, then clipped or reflected by the padding mode
// (bilinear/trilinear and nearest), weighted corners (four, or eight in 3-d,
// in PyTorch's order) or nearbyint, and for 2-d bicubic sixteen taps whose
// positions are padded one by one. One thread per grid point loops over the
// channels; the backward adds input gradients atomically and sums the grid
// gradient over the channels.
#include <array>
#include <climits>
#include <tuple>

#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/cuda/nn/NnCommon.cuh"
#include "ember/cuda/nn/UpsampleFilter.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda::nn {
namespace {

enum Padding { kZeros = 0, kBorder = 1, kReflection = 2 };
enum Mode { kBilinear = 0, kNearest = 1, kBicubic = 2 };

template <typename A>
__device__ A unnormalize(A coord, int64_t size, bool align_corners, A* grad) {
  if (align_corners) {
    if (grad) *grad = static_cast<A>(size - 1) / 2;
    return ((coord + 1.f) / 2) * (size - 1);
  }
  if (grad) *grad = static_cast<A>(size) / 2;
  return ((coord + 1.f) * size - 1) / 2;
}

template <typename A>
__device__ A clip(A in, int64_t limit, A* grad) {
  if (!grad) return ::min(static_cast<A>(limit - 1), ::max(in, static_cast<A>(0)));
  if (in <= static_cast<A>(0)) {
    *grad = 0;
    return 0;
  }
  const A top = static_cast<A>(limit - 1);
  if (in >= top) {
    *grad = 0;
    return top;
  }
  *grad = 1;
  return in;
}

// Reflects in into [twice_low / 2, twice_high / 2].
template <typename A>
__device__ A reflect(A in, int64_t twice_low, int64_t twice_high, A* grad) {
  if (twice_low == twice_high) {
    if (grad) *grad = 0;
    return 0;
  }
  const A lo = static_cast<A>(twice_low) / 2;
  const A span = static_cast<A>(twice_high - twice_low) / 2;
  A sign = 1;
  in = in - lo;
  if (in < 0) {
    sign = -1;
    in = -in;
  }
  const A extra = ::fmod(in, span);
  const int flips = static_cast<int>(::floor(in / span));
  if (flips % 2 == 0) {
    if (grad) *grad = sign;
    return extra + lo;
  }
  if (grad) *grad = -sign;
  return span - extra + lo;
}

// Non-finite or out-of-int coordinates become -100 (outside every image).
template <typename A>
__device__ A int_range(A x) {
  if (!::isfinite(static_cast<double>(x)) || x > static_cast<A>(INT_MAX - 1) || x < static_cast<A>(INT_MIN)) {
    return static_cast<A>(-100.0);
  }
  return x;
}

// The padding of an unnormalised coordinate (grad: d(out)/d(in)).
template <typename A>
__device__ A pad_coordinate(A coord, int64_t size, int padding, bool align_corners, A* grad) {
  A g_clip = 1, g_reflect = 1;
  if (padding == kBorder) {
    coord = clip(coord, size, grad ? &g_clip : nullptr);
  } else if (padding == kReflection) {
    coord = align_corners ? reflect(coord, 0, 2 * (size - 1), grad ? &g_reflect : nullptr)
                          : reflect(coord, -1, 2 * size - 1, grad ? &g_reflect : nullptr);
    coord = clip(coord, size, grad ? &g_clip : nullptr);
  }
  if (grad) *grad = g_reflect * g_clip;
  return int_range(coord);
}

template <typename A>
__device__ A source_index(A coord, int64_t size, int padding, bool align_corners, A* grad) {
  A g_unnorm = 1, g_pad = 1;
  coord = unnormalize(coord, size, align_corners, grad ? &g_unnorm : nullptr);
  coord = pad_coordinate(coord, size, padding, align_corners, grad ? &g_pad : nullptr);
  if (grad) *grad = g_pad * g_unnorm;
  return coord;
}

__device__ __forceinline__ bool inside(int64_t y, int64_t x, int64_t h, int64_t w) {
  return y >= 0 && y < h && x >= 0 && x < w;
}

template <typename T>
__device__ Acc<T> value_bounded(const T* plane, Acc<T> x, Acc<T> y, int64_t h, int64_t w, int padding,
                                bool align_corners) {
  x = pad_coordinate<Acc<T>>(x, w, padding, align_corners, nullptr);
  y = pad_coordinate<Acc<T>>(y, h, padding, align_corners, nullptr);
  const int64_t ix = static_cast<int64_t>(x), iy = static_cast<int64_t>(y);
  return inside(iy, ix, h, w) ? widen(plane[iy * w + ix]) : Acc<T>(0);
}

template <typename T>
__device__ void add_bounded(T* plane, Acc<T> x, Acc<T> y, int64_t h, int64_t w, int padding, bool align_corners,
                            Acc<T> delta) {
  x = pad_coordinate<Acc<T>>(x, w, padding, align_corners, nullptr);
  y = pad_coordinate<Acc<T>>(y, h, padding, align_corners, nullptr);
  const int64_t ix = static_cast<int64_t>(x), iy = static_cast<int64_t>(y);
  if (inside(iy, ix, h, w)) atomic_add(plane + iy * w + ix, narrow<T>(delta));
}

// d/dt of the four cubic convolution weights (A = -0.75).
template <typename A>
__device__ void cubic_weight_grads(A* g, A t) {
  const A a = -0.75;
  A x = -1 - t;
  g[0] = (-3 * a * x - 10 * a) * x - 8 * a;
  x = -t;
  g[1] = (-3 * (a + 2) * x - 2 * (a + 3)) * x;
  x = 1 - t;
  g[2] = (3 * (a + 2) * x - 2 * (a + 3)) * x;
  x = 2 - t;
  g[3] = (3 * a * x - 10 * a) * x + 8 * a;
}

// The four cubic convolution weights (A = -0.75) at fraction t, as PyTorch
// forms them (the last from (1 - t) + 1).
template <typename A>
__device__ void cubic_weights(A* c, A t) {
  const A a = -0.75;
  const A u = 1 - t;
  c[0] = cubic_far<A>(t + 1, a);
  c[1] = cubic_near<A>(t, a);
  c[2] = cubic_near<A>(u, a);
  c[3] = cubic_far<A>(u + 1, a);
}

struct Shape {
  int64_t n, c, h, w, oh, ow;
};

template <typename T>
__global__ void grid_sample_kernel(const T* input, const T* grid, T* out, Shape s, int mode, int padding,
                                   bool align_corners) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(i, s.n * s.oh * s.ow) {
    const int64_t n = i / (s.oh * s.ow), pos = i % (s.oh * s.ow);
    const A gx = widen(grid[2 * i]), gy = widen(grid[2 * i + 1]);
    const T* in_n = input + n * s.c * s.h * s.w;
    T* out_n = out + n * s.c * s.oh * s.ow + pos;
    const int64_t plane = s.h * s.w, out_plane = s.oh * s.ow;
    if (mode == kBicubic) {
      const A ix = unnormalize<A>(gx, s.w, align_corners, nullptr);
      const A iy = unnormalize<A>(gy, s.h, align_corners, nullptr);
      const A x0 = ::floor(ix), y0 = ::floor(iy);
      A cx[4], cy[4];
      cubic_weights(cx, ix - x0);
      cubic_weights(cy, iy - y0);
      for (int64_t c = 0; c < s.c; ++c) {
        const T* p = in_n + c * plane;
        A rows[4];
        for (int k = 0; k < 4; ++k) {
          const A y = y0 - 1 + k;
          rows[k] = value_bounded(p, x0 - 1, y, s.h, s.w, padding, align_corners) * cx[0] +
                    value_bounded(p, x0 + 0, y, s.h, s.w, padding, align_corners) * cx[1] +
                    value_bounded(p, x0 + 1, y, s.h, s.w, padding, align_corners) * cx[2] +
                    value_bounded(p, x0 + 2, y, s.h, s.w, padding, align_corners) * cx[3];
        }
        out_n[c * out_plane] = narrow<T>(rows[0] * cy[0] + rows[1] * cy[1] + rows[2] * cy[2] + rows[3] * cy[3]);
      }
      continue;
    }
    const A ix = source_index<A>(gx, s.w, padding, align_corners, nullptr);
    const A iy = source_index<A>(gy, s.h, padding, align_corners, nullptr);
    if (mode == kNearest) {
      const int64_t x = static_cast<int64_t>(::nearbyint(ix)), y = static_cast<int64_t>(::nearbyint(iy));
      for (int64_t c = 0; c < s.c; ++c) {
        out_n[c * out_plane] = inside(y, x, s.h, s.w) ? in_n[c * plane + y * s.w + x] : narrow<T>(A(0));
      }
      continue;
    }
    const int64_t x_nw = static_cast<int64_t>(::floor(ix)), y_nw = static_cast<int64_t>(::floor(iy));
    const A fx = static_cast<A>(x_nw), fy = static_cast<A>(y_nw);
    const A nw = (fx + 1 - ix) * (fy + 1 - iy), ne = (ix - fx) * (fy + 1 - iy);
    const A sw = (fx + 1 - ix) * (iy - fy), se = (ix - fx) * (iy - fy);
    for (int64_t c = 0; c < s.c; ++c) {
      const T* p = in_n + c * plane;
      A acc = 0;
      if (inside(y_nw, x_nw, s.h, s.w)) acc += widen(p[y_nw * s.w + x_nw]) * nw;
      if (inside(y_nw, x_nw + 1, s.h, s.w)) acc += widen(p[y_nw * s.w + x_nw + 1]) * ne;
      if (inside(y_nw + 1, x_nw, s.h, s.w)) acc += widen(p[(y_nw + 1) * s.w + x_nw]) * sw;
      if (inside(y_nw + 1, x_nw + 1, s.h, s.w)) acc += widen(p[(y_nw + 1) * s.w + x_nw + 1]) * se;
      out_n[c * out_plane] = narrow<T>(acc);
    }
  }
}

template <typename T>
__global__ void grid_sample_backward_kernel(const T* grad_out, const T* input, const T* grid, T* grad_in, T* grad_grid,
                                            Shape s, int mode, int padding, bool align_corners) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(i, s.n * s.oh * s.ow) {
    const int64_t n = i / (s.oh * s.ow), pos = i % (s.oh * s.ow);
    const A gx = widen(grid[2 * i]), gy = widen(grid[2 * i + 1]);
    const T* in_n = input + n * s.c * s.h * s.w;
    T* gin_n = grad_in ? grad_in + n * s.c * s.h * s.w : nullptr;
    const T* gout_n = grad_out + n * s.c * s.oh * s.ow + pos;
    const int64_t plane = s.h * s.w, out_plane = s.oh * s.ow;
    A gix = 0, giy = 0, mult_x = 1, mult_y = 1;
    if (mode == kBicubic) {
      const A ix = unnormalize<A>(gx, s.w, align_corners, &mult_x);
      const A iy = unnormalize<A>(gy, s.h, align_corners, &mult_y);
      const A x0 = ::floor(ix), y0 = ::floor(iy);
      A cx[4], cy[4], dx[4], dy[4];
      cubic_weights(cx, ix - x0);
      cubic_weights(cy, iy - y0);
      cubic_weight_grads(dx, ix - x0);
      cubic_weight_grads(dy, iy - y0);
      for (int64_t c = 0; c < s.c; ++c) {
        const A g = widen(gout_n[c * out_plane]);
        for (int a = 0; a < 4; ++a) {
          for (int b = 0; b < 4; ++b) {
            const A x = x0 - 1 + a, y = y0 - 1 + b;
            if (gin_n) add_bounded(gin_n + c * plane, x, y, s.h, s.w, padding, align_corners, g * cx[a] * cy[b]);
            if (grad_grid) {
              const A v = value_bounded(in_n + c * plane, x, y, s.h, s.w, padding, align_corners);
              gix -= v * dx[a] * cy[b] * g;
              giy -= v * dy[b] * cx[a] * g;
            }
          }
        }
      }
    } else {
      const A ix = source_index<A>(gx, s.w, padding, align_corners, &mult_x);
      const A iy = source_index<A>(gy, s.h, padding, align_corners, &mult_y);
      if (mode == kNearest) {
        const int64_t x = static_cast<int64_t>(::nearbyint(ix)), y = static_cast<int64_t>(::nearbyint(iy));
        if (gin_n && inside(y, x, s.h, s.w)) {
          for (int64_t c = 0; c < s.c; ++c) atomic_add(gin_n + c * plane + y * s.w + x, gout_n[c * out_plane]);
        }
        mult_x = mult_y = 0;
      } else {
        const int64_t x_nw = static_cast<int64_t>(::floor(ix)), y_nw = static_cast<int64_t>(::floor(iy));
        const A fx = static_cast<A>(x_nw), fy = static_cast<A>(y_nw);
        const A nw = (fx + 1 - ix) * (fy + 1 - iy), ne = (ix - fx) * (fy + 1 - iy);
        const A sw = (fx + 1 - ix) * (iy - fy), se = (ix - fx) * (iy - fy);
        const bool in_nw = inside(y_nw, x_nw, s.h, s.w), in_ne = inside(y_nw, x_nw + 1, s.h, s.w);
        const bool in_sw = inside(y_nw + 1, x_nw, s.h, s.w), in_se = inside(y_nw + 1, x_nw + 1, s.h, s.w);
        for (int64_t c = 0; c < s.c; ++c) {
          const A g = widen(gout_n[c * out_plane]);
          const T* p = in_n + c * plane;
          if (gin_n) {
            T* q = gin_n + c * plane;
            if (in_nw) atomic_add(q + y_nw * s.w + x_nw, narrow<T>(nw * g));
            if (in_ne) atomic_add(q + y_nw * s.w + x_nw + 1, narrow<T>(ne * g));
            if (in_sw) atomic_add(q + (y_nw + 1) * s.w + x_nw, narrow<T>(sw * g));
            if (in_se) atomic_add(q + (y_nw + 1) * s.w + x_nw + 1, narrow<T>(se * g));
          }
          if (in_nw) {
            const A v = widen(p[y_nw * s.w + x_nw]);
            gix -= v * (fy + 1 - iy) * g;
            giy -= v * (fx + 1 - ix) * g;
          }
          if (in_ne) {
            const A v = widen(p[y_nw * s.w + x_nw + 1]);
            gix += v * (fy + 1 - iy) * g;
            giy -= v * (ix - fx) * g;
          }
          if (in_sw) {
            const A v = widen(p[(y_nw + 1) * s.w + x_nw]);
            gix -= v * (iy - fy) * g;
            giy += v * (fx + 1 - ix) * g;
          }
          if (in_se) {
            const A v = widen(p[(y_nw + 1) * s.w + x_nw + 1]);
            gix += v * (iy - fy) * g;
            giy += v * (ix - fx) * g;
          }
        }
      }
    }
    if (grad_grid) {
      grad_grid[2 * i] = narrow<T>(mult_x * gix);
      grad_grid[2 * i + 1] = narrow<T>(mult_y * giy);
    }
  }
}

struct Shape3 {
  int64_t n, c, d, h, w, od, oh, ow;
};

__device__ __forceinline__ bool inside3(int64_t z, int64_t y, int64_t x, const Shape3& s) {
  return z >= 0 && z < s.d && y >= 0 && y < s.h && x >= 0 && x < s.w;
}

// Corner k of a cell: bit 2 the depth step, bit 1 the height step, bit 0 the
// width step (PyTorch's tnw, tne, tsw, tse, bnw, bne, bsw, bse); its factor
// per axis is (i - f) for a step, else (f + 1 - i).
template <typename T>
__global__ void grid_sample_3d_kernel(const T* input, const T* grid, T* out, Shape3 s, int mode, int padding,
                                      bool align_corners) {
  using A = Acc<T>;
  const int64_t points = s.od * s.oh * s.ow;
  EMBER_NN_GRID_LOOP(i, s.n * points) {
    const int64_t n = i / points, pos = i % points;
    const A ix = source_index<A>(widen(grid[3 * i]), s.w, padding, align_corners, nullptr);
    const A iy = source_index<A>(widen(grid[3 * i + 1]), s.h, padding, align_corners, nullptr);
    const A iz = source_index<A>(widen(grid[3 * i + 2]), s.d, padding, align_corners, nullptr);
    const int64_t plane = s.d * s.h * s.w;
    const T* in_n = input + n * s.c * plane;
    T* out_n = out + n * s.c * points + pos;
    if (mode == kNearest) {
      const int64_t x = static_cast<int64_t>(::nearbyint(ix)), y = static_cast<int64_t>(::nearbyint(iy));
      const int64_t z = static_cast<int64_t>(::nearbyint(iz));
      for (int64_t c = 0; c < s.c; ++c) {
        out_n[c * points] = inside3(z, y, x, s) ? in_n[c * plane + (z * s.h + y) * s.w + x] : narrow<T>(A(0));
      }
      continue;
    }
    const int64_t x0 = static_cast<int64_t>(::floor(ix)), y0 = static_cast<int64_t>(::floor(iy));
    const int64_t z0 = static_cast<int64_t>(::floor(iz));
    const A fx = static_cast<A>(x0), fy = static_cast<A>(y0), fz = static_cast<A>(z0);
    A weight[8];
    for (int k = 0; k < 8; ++k) {
      const A wx = (k & 1) ? ix - fx : fx + 1 - ix, wy = (k & 2) ? iy - fy : fy + 1 - iy;
      const A wz = (k & 4) ? iz - fz : fz + 1 - iz;
      weight[k] = wx * wy * wz;
    }
    for (int64_t c = 0; c < s.c; ++c) {
      const T* p = in_n + c * plane;
      A acc = 0;
      for (int k = 0; k < 8; ++k) {
        const int64_t x = x0 + (k & 1), y = y0 + ((k >> 1) & 1), z = z0 + (k >> 2);
        if (inside3(z, y, x, s)) acc += widen(p[(z * s.h + y) * s.w + x]) * weight[k];
      }
      out_n[c * points] = narrow<T>(acc);
    }
  }
}

template <typename T>
__global__ void grid_sample_3d_backward_kernel(const T* grad_out, const T* input, const T* grid, T* grad_in,
                                               T* grad_grid, Shape3 s, int mode, int padding, bool align_corners) {
  using A = Acc<T>;
  const int64_t points = s.od * s.oh * s.ow;
  EMBER_NN_GRID_LOOP(i, s.n * points) {
    const int64_t n = i / points, pos = i % points;
    A mx = 1, my = 1, mz = 1;
    const A ix = source_index<A>(widen(grid[3 * i]), s.w, padding, align_corners, &mx);
    const A iy = source_index<A>(widen(grid[3 * i + 1]), s.h, padding, align_corners, &my);
    const A iz = source_index<A>(widen(grid[3 * i + 2]), s.d, padding, align_corners, &mz);
    const int64_t plane = s.d * s.h * s.w;
    const T* in_n = input + n * s.c * plane;
    T* gin_n = grad_in ? grad_in + n * s.c * plane : nullptr;
    const T* gout_n = grad_out + n * s.c * points + pos;
    A gix = 0, giy = 0, giz = 0;
    if (mode == kNearest) {
      const int64_t x = static_cast<int64_t>(::nearbyint(ix)), y = static_cast<int64_t>(::nearbyint(iy));
      const int64_t z = static_cast<int64_t>(::nearbyint(iz));
      if (gin_n && inside3(z, y, x, s)) {
        for (int64_t c = 0; c < s.c; ++c) {
          atomic_add(gin_n + c * plane + (z * s.h + y) * s.w + x, gout_n[c * points]);
        }
      }
      mx = my = mz = 0;
    } else {
      const int64_t x0 = static_cast<int64_t>(::floor(ix)), y0 = static_cast<int64_t>(::floor(iy));
      const int64_t z0 = static_cast<int64_t>(::floor(iz));
      const A fx = static_cast<A>(x0), fy = static_cast<A>(y0), fz = static_cast<A>(z0);
      for (int64_t c = 0; c < s.c; ++c) {
        const A g = widen(gout_n[c * points]);
        const T* p = in_n + c * plane;
        for (int k = 0; k < 8; ++k) {
          const int64_t x = x0 + (k & 1), y = y0 + ((k >> 1) & 1), z = z0 + (k >> 2);
          if (!inside3(z, y, x, s)) continue;
          const A wx = (k & 1) ? ix - fx : fx + 1 - ix, wy = (k & 2) ? iy - fy : fy + 1 - iy;
          const A wz = (k & 4) ? iz - fz : fz + 1 - iz;
          const int64_t at = (z * s.h + y) * s.w + x;
          if (gin_n) atomic_add(gin_n + c * plane + at, narrow<T>(wx * wy * wz * g));
          const A v = widen(p[at]);
          if (k & 1) {
            gix += v * wy * wz * g;
          } else {
            gix -= v * wy * wz * g;
          }
          if (k & 2) {
            giy += v * wx * wz * g;
          } else {
            giy -= v * wx * wz * g;
          }
          if (k & 4) {
            giz += v * wx * wy * g;
          } else {
            giz -= v * wx * wy * g;
          }
        }
      }
    }
    if (grad_grid) {
      grad_grid[3 * i] = narrow<T>(mx * gix);
      grad_grid[3 * i + 1] = narrow<T>(my * giy);
      grad_grid[3 * i + 2] = narrow<T>(mz * giz);
    }
  }
}

Shape3 shape3_of(const Tensor& input, const Tensor& grid) {
  return {input.size(0), input.size(1), input.size(2), input.size(3),
          input.size(4), grid.size(1),  grid.size(2),  grid.size(3)};
}

Tensor grid_sampler_3d_cuda(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                            bool align_corners) {
  EMBER_CHECK(input.dim() == 5 && grid.dim() == 5 && grid.size(4) == 3 && grid.size(0) == input.size(0),
              "grid_sampler_3d: expected 5D input and (N, D, H, W, 3) grid");
  EMBER_CHECK(mode != kBicubic, "grid_sampler(): bicubic interpolation only supports 4D input");
  const Shape3 s = shape3_of(input, grid);
  Tensor out = ember::empty({s.n, s.c, s.od, s.oh, s.ow}, input.dtype(), input.device());
  dispatch_floating(input.dtype(), "grid_sampler_3d_cuda", [&](auto tag) {
    using T = decltype(tag);
    const int64_t points = s.n * s.od * s.oh * s.ow;
    if (points == 0 || out.numel() == 0) return;
    const Tensor x = input.contiguous(), g = grid.to(input.dtype()).contiguous();
    grid_sample_3d_kernel<T><<<blocks_for(points), kThreads, 0, current_stream(input.device().index)>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<const T*>(g.data_ptr()), static_cast<T*>(out.data_ptr()), s,
        static_cast<int>(mode), static_cast<int>(padding), align_corners);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

std::tuple<Tensor, Tensor> grid_sampler_3d_backward_cuda(const Tensor& grad_output, const Tensor& input,
                                                         const Tensor& grid, int64_t mode, int64_t padding,
                                                         bool align_corners, std::array<bool, 2> output_mask) {
  const Shape3 s = shape3_of(input, grid);
  Tensor grad_input, grad_grid;
  if (output_mask[0]) grad_input = ember::zeros(input.sizes(), input.dtype(), input.device());
  if (output_mask[1]) grad_grid = ember::zeros(grid.sizes(), grid.dtype(), grid.device());
  dispatch_floating(input.dtype(), "grid_sampler_3d_backward_cuda", [&](auto tag) {
    using T = decltype(tag);
    const int64_t points = s.n * s.od * s.oh * s.ow;
    if (points == 0 || (!output_mask[0] && !output_mask[1])) return;
    const Tensor g = grad_output.contiguous(), x = input.contiguous(), gr = grid.to(input.dtype()).contiguous();
    grid_sample_3d_backward_kernel<T><<<blocks_for(points), kThreads, 0, current_stream(input.device().index)>>>(
        static_cast<const T*>(g.data_ptr()), static_cast<const T*>(x.data_ptr()), static_cast<const T*>(gr.data_ptr()),
        output_mask[0] ? static_cast<T*>(grad_input.data_ptr()) : nullptr,
        output_mask[1] ? static_cast<T*>(grad_grid.data_ptr()) : nullptr, s, static_cast<int>(mode),
        static_cast<int>(padding), align_corners);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return {grad_input, grad_grid};
}

Shape shape_of(const Tensor& input, const Tensor& grid) {
  return {input.size(0), input.size(1), input.size(2), input.size(3), grid.size(1), grid.size(2)};
}

Tensor grid_sampler_2d_cuda(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                            bool align_corners) {
  EMBER_CHECK(input.dim() == 4 && grid.dim() == 4 && grid.size(3) == 2 && grid.size(0) == input.size(0),
              "grid_sampler_2d: expected 4D input and (N, H, W, 2) grid");
  EMBER_CHECK(input.dtype() == grid.dtype(),
              "grid_sampler(): expected input and grid to have same dtype, but input has ",
              dtype_message_name(input.dtype()), " and grid has ", dtype_message_name(grid.dtype()));
  const Shape s = shape_of(input, grid);
  Tensor out = ember::empty({s.n, s.c, s.oh, s.ow}, input.dtype(), input.device());
  dispatch_floating(input.dtype(), "grid_sampler_2d_cuda", [&](auto tag) {
    using T = decltype(tag);
    const int64_t points = s.n * s.oh * s.ow;
    if (points == 0 || out.numel() == 0) return;
    const Tensor x = input.contiguous(), g = grid.contiguous();
    grid_sample_kernel<T><<<blocks_for(points), kThreads, 0, current_stream(input.device().index)>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<const T*>(g.data_ptr()), static_cast<T*>(out.data_ptr()), s,
        static_cast<int>(mode), static_cast<int>(padding), align_corners);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

std::tuple<Tensor, Tensor> grid_sampler_2d_backward_cuda(const Tensor& grad_output, const Tensor& input,
                                                         const Tensor& grid, int64_t mode, int64_t padding,
                                                         bool align_corners, std::array<bool, 2> output_mask) {
  const Shape s = shape_of(input, grid);
  Tensor grad_input, grad_grid;
  if (output_mask[0]) grad_input = ember::zeros(input.sizes(), input.dtype(), input.device());
  if (output_mask[1]) grad_grid = ember::zeros(grid.sizes(), grid.dtype(), grid.device());
  dispatch_floating(input.dtype(), "grid_sampler_2d_backward_cuda", [&](auto tag) {
    using T = decltype(tag);
    const int64_t points = s.n * s.oh * s.ow;
    if (points == 0 || (!output_mask[0] && !output_mask[1])) return;
    const Tensor g = grad_output.contiguous(), x = input.contiguous(), gr = grid.contiguous();
    grid_sample_backward_kernel<T><<<blocks_for(points), kThreads, 0, current_stream(input.device().index)>>>(
        static_cast<const T*>(g.data_ptr()), static_cast<const T*>(x.data_ptr()), static_cast<const T*>(gr.data_ptr()),
        output_mask[0] ? static_cast<T*>(grad_input.data_ptr()) : nullptr,
        output_mask[1] ? static_cast<T*>(grad_grid.data_ptr()) : nullptr, s, static_cast<int>(mode),
        static_cast<int>(padding), align_corners);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return {grad_input, grad_grid};
}

const bool registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::grid_sampler_2d_kernels[cuda] = &grid_sampler_2d_cuda;
  dispatch::grid_sampler_2d_backward_kernels[cuda] = &grid_sampler_2d_backward_cuda;
  dispatch::grid_sampler_3d_kernels[cuda] = &grid_sampler_3d_cuda;
  dispatch::grid_sampler_3d_backward_kernels[cuda] = &grid_sampler_3d_backward_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda::nn
