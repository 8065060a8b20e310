// grid_sampler_2d and grid_sampler_3d on the CPU (bilinear, nearest and, in
// 2-d, bicubic interpolation; zeros, border and reflection padding) and their
// backward to the input and the grid. See Note [Grid sampling].
#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <vector>

#include "ember/cpu/NNStubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember {
namespace cpu {
EMBER_DEFINE_DISPATCH(GridSampleBilinear2dFn, grid_sample_bilinear_2d_stub);
}  // namespace cpu

namespace native {

// Note [Grid sampling]
// A grid coordinate in [-1, 1] maps to the input: with align_corners -1 and 1
// are the centres of the first and last pixels, ((c + 1) / 2) * (size - 1);
// without, they are the outer edges, ((c + 1) * size - 1) / 2. Border padding
// clamps the source coordinate into [0, size - 1]; reflection folds it about
// the centres (align_corners) or the edges, then clamps. A coordinate that is
// not finite or leaves the int range becomes -100 (outside: zero). Bilinear
// weights are products of 1 - frac and frac per dimension; bicubic uses
// the cubic convolution with A = -0.75 on a 4x4 neighbourhood whose points
// are padded one by one. The backward carries the chain rule of each of those
// maps (the clamp's and the fold's slopes) to the grid, as PyTorch does.

namespace {

enum Interpolation : int64_t { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum Padding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

template <typename T>
T unnormalize(T c, int64_t size, bool align, T* grad) {
  if (align) {
    if (grad) *grad = static_cast<T>(size - 1) / 2;
    return ((c + 1) / 2) * (size - 1);
  }
  if (grad) *grad = static_cast<T>(size) / 2;
  return ((c + 1) * size - 1) / 2;
}

template <typename T>
T clip(T c, int64_t size, T* grad) {
  if (c <= static_cast<T>(0)) {
    if (grad) *grad = 0;
    return 0;
  }
  const T top = static_cast<T>(size - 1);
  if (c >= top) {
    if (grad) *grad = 0;
    return top;
  }
  if (grad) *grad = 1;
  return c;
}

template <typename T>
T reflect(T c, int64_t twice_low, int64_t twice_high, T* grad) {
  if (twice_low == twice_high) {
    if (grad) *grad = 0;
    return 0;
  }
  const T low = static_cast<T>(twice_low) / 2;
  const T span = static_cast<T>(twice_high - twice_low) / 2;
  c = c - low;
  T sign = 1;
  if (c < 0) {
    sign = -1;
    c = -c;
  }
  const T extra = std::fmod(c, span);
  const int64_t flips = static_cast<int64_t>(std::floor(c / span));
  if (flips % 2 == 0) {
    if (grad) *grad = sign;
    return extra + low;
  }
  if (grad) *grad = -sign;
  return span - extra + low;
}

template <typename T>
T to_int_range(T c) {
  if (!std::isfinite(c) || c > static_cast<T>(INT_MAX) || c < static_cast<T>(INT_MIN)) return static_cast<T>(-100.0);
  return c;
}

// The padding mode applied to an unnormalised coordinate; grad (optional)
// gets its slope.
template <typename T>
T pad_coordinate(T c, int64_t size, int64_t padding, bool align, T* grad) {
  T slope = 1;
  if (padding == kBorder) {
    c = clip(c, size, &slope);
  } else if (padding == kReflection) {
    T fold = 1, cut = 1;
    c = align ? reflect(c, 0, 2 * (size - 1), &fold) : reflect(c, -1, 2 * size - 1, &fold);
    c = clip(c, size, &cut);
    slope = fold * cut;
  }
  if (grad) *grad = slope;
  return to_int_range(c);
}

template <typename T>
T source_index(T c, int64_t size, int64_t padding, bool align, T* grad) {
  T g_unnorm = 1, g_pad = 1;
  c = unnormalize(c, size, align, grad ? &g_unnorm : nullptr);
  c = pad_coordinate(c, size, padding, align, grad ? &g_pad : nullptr);
  if (grad) *grad = g_unnorm * g_pad;
  return c;
}

template <typename T>
void cubic_coefficients(T c[4], T t) {
  const T A = -0.75;
  auto near = [&](T x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  auto far = [&](T x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  c[0] = far(t + 1);
  c[1] = near(t);
  c[2] = near(1 - t);
  c[3] = far(1 - t + 1);
}

template <typename T>
void cubic_coefficients_grad(T c[4], T t) {
  const T A = -0.75;
  T x = -1 - t;
  c[0] = (-3 * A * x - 10 * A) * x - 8 * A;
  x = -t;
  c[1] = (-3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 1 - t;
  c[2] = (3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 2 - t;
  c[3] = (3 * A * x - 10 * A) * x + 8 * A;
}

// Shapes of one call: D spatial dims, index 0 is x (the last input dim).
template <int D>
struct Geometry {
  int64_t batch, channels, points;
  std::array<int64_t, D> size;  // input extent per grid axis (x, y, z)
  std::array<int64_t, D> stride;  // input element stride per grid axis
  int64_t plane;  // elements of one input channel
};

template <int D>
Geometry<D> geometry(const Tensor& input, const Tensor& grid) {
  Geometry<D> g;
  g.batch = input.size(0);
  g.channels = input.size(1);
  g.points = 1;
  for (int d = 0; d < D; ++d) g.points *= grid.size(1 + d);
  g.plane = 1;
  for (int d = 0; d < D; ++d) {
    g.size[d] = input.size(input.dim() - 1 - d);
    g.stride[d] = g.plane;
    g.plane *= g.size[d];
  }
  return g;
}

// One point's neighbours: offsets into a channel plane, in-bounds flags,
// interpolation weights, and per corner the signed weight products that the
// grid gradient uses.
template <typename T, int D>
struct Corners {
  static constexpr int kCount = 1 << D;
  int64_t offset[kCount];
  bool inside[kCount];
  T weight[kCount];
  T slope[kCount][D];  // d weight / d coordinate d
};

template <typename T, int D, bool kSlopes>
void linear_corners(const Geometry<D>& g, const T* coord, Corners<T, D>& k) {
  int64_t lo[D];
  T w_lo[D], w_hi[D];
  for (int d = 0; d < D; ++d) {
    const T f = std::floor(coord[d]);
    lo[d] = static_cast<int64_t>(f);
    w_lo[d] = (f + 1) - coord[d];
    w_hi[d] = coord[d] - f;
  }
  for (int c = 0; c < Corners<T, D>::kCount; ++c) {
    int64_t off = 0;
    bool inside = true;
    T w = 1;
    for (int d = 0; d < D; ++d) {
      const bool hi = (c >> d) & 1;
      const int64_t at = lo[d] + hi;
      inside = inside && at >= 0 && at < g.size[d];
      off += at * g.stride[d];
      w = d == 0 ? (hi ? w_hi[0] : w_lo[0]) : w * (hi ? w_hi[d] : w_lo[d]);
    }
    for (int d = 0; kSlopes && d < D; ++d) {
      T s = (c >> d) & 1 ? T(1) : T(-1);
      for (int e = 0; e < D; ++e) {
        if (e != d) s = s * ((c >> e) & 1 ? w_hi[e] : w_lo[e]);
      }
      k.slope[c][d] = s;
    }
    k.offset[c] = off;
    k.inside[c] = inside;
    k.weight[c] = w;
  }
}

template <typename T, int D>
bool nearest_offset(const Geometry<D>& g, const T* coord, int64_t& off) {
  off = 0;
  for (int d = 0; d < D; ++d) {
    const int64_t at = static_cast<int64_t>(std::nearbyint(coord[d]));
    if (at < 0 || at >= g.size[d]) return false;
    off += at * g.stride[d];
  }
  return true;
}

// The 2-d bicubic neighbour (x, y), padded: its offset, or -1 outside.
template <typename T>
int64_t bicubic_offset(const Geometry<2>& g, T x, T y, int64_t padding, bool align) {
  const int64_t ix = static_cast<int64_t>(pad_coordinate(x, g.size[0], padding, align, static_cast<T*>(nullptr)));
  const int64_t iy = static_cast<int64_t>(pad_coordinate(y, g.size[1], padding, align, static_cast<T*>(nullptr)));
  if (ix < 0 || ix >= g.size[0] || iy < 0 || iy >= g.size[1]) return -1;
  return iy * g.stride[1] + ix * g.stride[0];
}

template <typename T, int D>
void sample_forward(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding, bool align, Tensor& out) {
  const Geometry<D> g = geometry<D>(input, grid);
  const T* in = static_cast<const T*>(input.data_ptr());
  const T* gr = static_cast<const T*>(grid.data_ptr());
  T* o = static_cast<T*>(out.data_ptr());
  const int64_t C = g.channels, P = g.points;
  const auto vectorised = cpu::grid_sample_bilinear_2d_stub.get();
  if (D == 2 && mode == kBilinear && padding != kReflection && vectorised && g.plane < INT_MAX) {
    // Note [Vectorised bilinear grid sampling]
    parallel_for(0, g.batch * P, 256, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end;) {
        const int64_t n = i / P, count = std::min(end - i, P - i % P);
        const cpu::GridSample2dArgs a{C, g.size[1], g.size[0], count, P, padding == kBorder, align};
        vectorised(CppTypeToScalarType<T>::value, in + n * C * g.plane, gr + i * D, o + n * C * P + i % P, a);
        i += count;
      }
    });
    return;
  }
  parallel_for(0, g.batch * P, 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t n = i / P, p = i % P;
      const T* src = in + n * C * g.plane;
      T* dst = o + n * C * P + p;
      const T* gp = gr + i * D;
      if (mode == kBicubic) {
        if constexpr (D == 2) {
          const T x = unnormalize(gp[0], g.size[0], align, static_cast<T*>(nullptr));
          const T y = unnormalize(gp[1], g.size[1], align, static_cast<T*>(nullptr));
          const T fx = std::floor(x), fy = std::floor(y);
          T cx[4], cy[4];
          cubic_coefficients(cx, x - fx);
          cubic_coefficients(cy, y - fy);
          int64_t off[4][4];
          for (int r = 0; r < 4; ++r) {
            for (int q = 0; q < 4; ++q) {
              off[r][q] = bicubic_offset<T>(g, fx - 1 + q, fy - 1 + r, padding, align);
            }
          }
          for (int64_t c = 0; c < C; ++c) {
            const T* plane = src + c * g.plane;
            T rows[4];
            for (int r = 0; r < 4; ++r) {
              T v[4];
              for (int q = 0; q < 4; ++q) v[q] = off[r][q] < 0 ? T(0) : plane[off[r][q]];
              rows[r] = v[0] * cx[0] + v[1] * cx[1] + v[2] * cx[2] + v[3] * cx[3];
            }
            dst[c * P] = rows[0] * cy[0] + rows[1] * cy[1] + rows[2] * cy[2] + rows[3] * cy[3];
          }
        }
        continue;
      }
      T coord[D];
      for (int d = 0; d < D; ++d) coord[d] = source_index(gp[d], g.size[d], padding, align, static_cast<T*>(nullptr));
      if (mode == kNearest) {
        int64_t off;
        const bool inside = nearest_offset<T, D>(g, coord, off);
        for (int64_t c = 0; c < C; ++c) dst[c * P] = inside ? src[c * g.plane + off] : T(0);
        continue;
      }
      Corners<T, D> k;
      linear_corners<T, D, false>(g, coord, k);
      bool all_inside = true;
      for (int j = 0; j < Corners<T, D>::kCount; ++j) all_inside = all_inside && k.inside[j];
      if (all_inside) {
        for (int64_t c = 0; c < C; ++c) {
          const T* plane = src + c * g.plane;
          T acc = 0;
          for (int j = 0; j < Corners<T, D>::kCount; ++j) acc += plane[k.offset[j]] * k.weight[j];
          dst[c * P] = acc;
        }
        continue;
      }
      for (int64_t c = 0; c < C; ++c) {
        const T* plane = src + c * g.plane;
        T acc = 0;
        for (int j = 0; j < Corners<T, D>::kCount; ++j) {
          if (k.inside[j]) acc += plane[k.offset[j]] * k.weight[j];
        }
        dst[c * P] = acc;
      }
    }
  });
}

// The backward runs batch by batch in parallel (points of one sample may
// share input pixels).
template <typename T, int D>
void sample_backward(const Tensor& grad_out, const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                     bool align, T* grad_in, T* grad_grid) {
  const Geometry<D> g = geometry<D>(input, grid);
  const T* in = static_cast<const T*>(input.data_ptr());
  const T* gr = static_cast<const T*>(grid.data_ptr());
  const T* go = static_cast<const T*>(grad_out.data_ptr());
  const int64_t C = g.channels, P = g.points;
  parallel_for(0, g.batch, 1, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      const T* src = in + n * C * g.plane;
      T* gsrc = grad_in ? grad_in + n * C * g.plane : nullptr;
      const T* gdst = go + n * C * P;
      for (int64_t p = 0; p < P; ++p) {
        const T* gp = gr + (n * P + p) * D;
        T* gg = grad_grid ? grad_grid + (n * P + p) * D : nullptr;
        if (mode == kBicubic) {
          if constexpr (D == 2) {
            T mx = 1, my = 1;
            const T x = unnormalize(gp[0], g.size[0], align, &mx);
            const T y = unnormalize(gp[1], g.size[1], align, &my);
            const T fx = std::floor(x), fy = std::floor(y);
            T cx[4], cy[4], dx[4], dy[4];
            cubic_coefficients(cx, x - fx);
            cubic_coefficients(cy, y - fy);
            cubic_coefficients_grad(dx, x - fx);
            cubic_coefficients_grad(dy, y - fy);
            int64_t off[4][4];
            for (int r = 0; r < 4; ++r) {
              for (int q = 0; q < 4; ++q) {
                off[r][q] = bicubic_offset<T>(g, fx - 1 + q, fy - 1 + r, padding, align);
              }
            }
            T gx = 0, gy = 0;
            for (int64_t c = 0; c < C; ++c) {
              const T gv = gdst[c * P + p];
              const T* plane = src + c * g.plane;
              for (int q = 0; q < 4; ++q) {
                for (int r = 0; r < 4; ++r) {
                  if (off[r][q] < 0) continue;
                  if (gsrc) gsrc[c * g.plane + off[r][q]] += gv * cx[q] * cy[r];
                  const T v = plane[off[r][q]];
                  gx -= v * dx[q] * cy[r] * gv;
                  gy -= v * dy[r] * cx[q] * gv;
                }
              }
            }
            if (gg) {
              gg[0] = mx * gx;
              gg[1] = my * gy;
            }
          }
          continue;
        }
        T coord[D], mult[D];
        for (int d = 0; d < D; ++d) coord[d] = source_index(gp[d], g.size[d], padding, align, &mult[d]);
        if (mode == kNearest) {
          int64_t off;
          if (gsrc && nearest_offset<T, D>(g, coord, off)) {
            for (int64_t c = 0; c < C; ++c) gsrc[c * g.plane + off] += gdst[c * P + p];
          }
          if (gg) {
            for (int d = 0; d < D; ++d) gg[d] = 0;
          }
          continue;
        }
        Corners<T, D> k;
        linear_corners<T, D, true>(g, coord, k);
        T gc[D] = {};
        bool all_inside = true;
        for (int j = 0; j < Corners<T, D>::kCount; ++j) all_inside = all_inside && k.inside[j];
        if (all_inside && gsrc) {
          for (int64_t c = 0; c < C; ++c) {
            const T gv = gdst[c * P + p];
            const T* plane = src + c * g.plane;
            T* gplane = gsrc + c * g.plane;
            for (int j = 0; j < Corners<T, D>::kCount; ++j) {
              gplane[k.offset[j]] += k.weight[j] * gv;
              const T v = plane[k.offset[j]];
              for (int d = 0; d < D; ++d) gc[d] += v * k.slope[j][d] * gv;
            }
          }
          if (gg) {
            for (int d = 0; d < D; ++d) gg[d] = mult[d] * gc[d];
          }
          continue;
        }
        for (int64_t c = 0; c < C; ++c) {
          const T gv = gdst[c * P + p];
          const T* plane = src + c * g.plane;
          T* gplane = gsrc ? gsrc + c * g.plane : nullptr;
          for (int j = 0; j < Corners<T, D>::kCount; ++j) {
            if (!k.inside[j]) continue;
            if (gplane) gplane[k.offset[j]] += k.weight[j] * gv;
            const T v = plane[k.offset[j]];
            for (int d = 0; d < D; ++d) gc[d] += v * k.slope[j][d] * gv;
          }
        }
        if (gg) {
          for (int d = 0; d < D; ++d) gg[d] = mult[d] * gc[d];
        }
      }
    }
  });
}

const char* kModeNames[] = {"bilinear", "nearest", "bicubic"};

void check_grid_sampler(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding, int dims) {
  const int64_t nd = dims + 2;
  EMBER_CHECK(input.dim() == nd && grid.dim() == nd, "grid_sampler(): expected ", nd == 4 ? "4D" : "5D",
              " input and grid with same number of dimensions, but got input with sizes ", shape_string(input.sizes()),
              " and grid with sizes ", shape_string(grid.sizes()));
  EMBER_CHECK(input.size(0) == grid.size(0),
              "grid_sampler(): expected grid and input to have same batch size, but got input with sizes ",
              shape_string(input.sizes()), " and grid with sizes ", shape_string(grid.sizes()));
  EMBER_CHECK(grid.size(nd - 1) == dims, "grid_sampler(): expected grid to have size ", dims,
              " in last dimension, but got grid with sizes ", shape_string(grid.sizes()));
  for (int64_t i = 2; i < nd; ++i) {
    EMBER_CHECK(input.size(i) > 0,
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes ",
                shape_string(input.sizes()), " with dimension ", i, " being empty");
  }
  EMBER_CHECK(input.scalar_type() == grid.scalar_type(), "expected scalar type ",
              dtype_message_name(input.scalar_type()), " but found ", dtype_message_name(grid.scalar_type()));
  EMBER_CHECK(mode >= 0 && mode <= 2 && padding >= 0 && padding <= 2,
              "grid_sampler(): unknown interpolation or padding mode");
  EMBER_CHECK(!(dims == 3 && mode == kBicubic), "grid_sampler(): bicubic interpolation only supports 4D input");
  (void)kModeNames;
}

bool is_reduced(ScalarType t) { return t == ScalarType::Half || t == ScalarType::BFloat16; }

template <typename F>
void dispatch_sampler(ScalarType t, const char* name, const F& f) {
  if (t == ScalarType::Float) return f(float{});
  if (t == ScalarType::Double) return f(double{});
  throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(t), "'"));
}

template <int D>
Tensor grid_sampler_forward(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding, bool align,
                            const char* name) {
  check_grid_sampler(input, grid, mode, padding, D);
  if (is_reduced(input.scalar_type())) {
    // 16-bit floats compute in float and round once
    return grid_sampler_forward<D>(input.to(ScalarType::Float), grid.to(ScalarType::Float), mode, padding, align, name)
        .to(input.scalar_type());
  }
  std::vector<int64_t> shape = {input.size(0), input.size(1)};
  for (int d = 0; d < D; ++d) shape.push_back(grid.size(1 + d));
  Tensor out = ember::empty(shape, input.scalar_type());
  if (out.numel() == 0) return out;
  const Tensor x = input.contiguous();
  const Tensor gr = grid.to(input.scalar_type()).contiguous();
  dispatch_sampler(input.scalar_type(), name, [&](auto zero) {
    using T = decltype(zero);
    sample_forward<T, D>(x, gr, mode, padding, align, out);
  });
  return out;
}

template <int D>
std::tuple<Tensor, Tensor> grid_sampler_backward(const Tensor& grad_output, const Tensor& input, const Tensor& grid,
                                                 int64_t mode, int64_t padding, bool align,
                                                 std::array<bool, 2> output_mask, const char* name) {
  check_grid_sampler(input, grid, mode, padding, D);
  if (is_reduced(input.scalar_type())) {
    auto r = grid_sampler_backward<D>(grad_output.to(ScalarType::Float), input.to(ScalarType::Float),
                                      grid.to(ScalarType::Float), mode, padding, align, output_mask, name);
    auto narrow = [&](const Tensor& t) { return t.defined() ? t.to(input.scalar_type()) : t; };
    return {narrow(std::get<0>(r)), narrow(std::get<1>(r))};
  }
  Tensor grad_input, grad_grid;
  if (output_mask[0]) grad_input = ember::zeros(input.sizes(), input.scalar_type());
  if (output_mask[1]) grad_grid = ember::empty(grid.sizes(), input.scalar_type());
  if (!output_mask[0] && !output_mask[1]) return {grad_input, grad_grid};
  if (grid.numel() == 0 || input.numel() == 0) {
    if (grad_grid.defined()) grad_grid.zero_();
    return {grad_input, grad_grid};
  }
  const Tensor x = input.contiguous();
  const Tensor gr = grid.to(input.scalar_type()).contiguous();
  const Tensor go = grad_output.to(input.scalar_type()).contiguous();
  dispatch_sampler(input.scalar_type(), name, [&](auto zero) {
    using T = decltype(zero);
    sample_backward<T, D>(go, x, gr, mode, padding, align,
                          grad_input.defined() ? static_cast<T*>(grad_input.data_ptr()) : nullptr,
                          grad_grid.defined() ? static_cast<T*>(grad_grid.data_ptr()) : nullptr);
  });
  return {grad_input, grad_grid};
}

}  // namespace

Tensor grid_sampler_2d_cpu(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                           bool align_corners) {
  return grid_sampler_forward<2>(input, grid, interpolation_mode, padding_mode, align_corners,
                                 "grid_sampler_2d_cpu_kernel_impl");
}

std::tuple<Tensor, Tensor> grid_sampler_2d_backward_cpu(const Tensor& grad_output, const Tensor& input,
                                                        const Tensor& grid, int64_t interpolation_mode,
                                                        int64_t padding_mode, bool align_corners,
                                                        std::array<bool, 2> output_mask) {
  return grid_sampler_backward<2>(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                                  output_mask, "grid_sampler_2d_backward_cpu");
}

Tensor grid_sampler_3d_cpu(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                           bool align_corners) {
  return grid_sampler_forward<3>(input, grid, interpolation_mode, padding_mode, align_corners, "grid_sampler3d_cpu");
}

std::tuple<Tensor, Tensor> grid_sampler_3d_backward_cpu(const Tensor& grad_output, const Tensor& input,
                                                        const Tensor& grid, int64_t interpolation_mode,
                                                        int64_t padding_mode, bool align_corners,
                                                        std::array<bool, 2> output_mask) {
  return grid_sampler_backward<3>(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                                  output_mask, "grid_sampler_3d_backward_cpu");
}

}  // namespace native
}  // namespace ember
