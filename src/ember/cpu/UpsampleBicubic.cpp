// upsample_bicubic2d (interpolate(mode="bicubic")) and the antialiased
// bilinear/bicubic interpolations on the CPU, with their backward.
//
// Bicubic: each output pixel mixes a 4x4 neighbourhood with the cubic
// convolution weights (A = -0.75) of its fractional source position, indices
// clamped to the border, in PyTorch's accumulate type (float for 16-bit
// floats) and summation order: rows of four along the width, then the four
// rows along the height.
//
// Antialiased (PyTorch's, after PIL): when shrinking by a factor s the filter
// (triangle, or cubic with A = -0.5) is stretched by s; each output takes the
// normalised filter weights of the source pixels within its support, one dim
// at a time; both directions are kernels (Note [Antialiased interpolation
// kernels]).
#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/cpu/NNStubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember {
namespace cpu {
EMBER_DEFINE_DISPATCH(UpsampleAAFn, upsample_aa_stub);
EMBER_DEFINE_DISPATCH(UpsampleAABackwardFn, upsample_aa_backward_stub);
}  // namespace cpu

namespace native {

namespace {

template <typename T>
using acc_of = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Source scale of one dim (PyTorch's area_pixel_compute_scale).
template <typename A>
A source_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<A>(in - 1) / static_cast<A>(out - 1) : A(0);
  if (scale && *scale > 0) return static_cast<A>(1.0 / *scale);
  return static_cast<A>(in) / static_cast<A>(out);
}

// Per output position: the first of the four source indices (unclamped) and
// the four weights.
template <typename A>
struct CubicAxis {
  std::vector<int64_t> start;
  std::vector<A> w;  // 4 per output
};

template <typename A>
void cubic_weights(A* c, A t) {
  const A a = -0.75;
  const A x1 = t;
  c[0] = ((a * (x1 + 1) - 5 * a) * (x1 + 1) + 8 * a) * (x1 + 1) - 4 * a;
  c[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
  const A x2 = 1 - t;
  c[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
  c[3] = ((a * (x2 + 1) - 5 * a) * (x2 + 1) + 8 * a) * (x2 + 1) - 4 * a;
}

template <typename A>
CubicAxis<A> cubic_axis(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  CubicAxis<A> ax;
  ax.start.resize(out);
  ax.w.resize(4 * out);
  const A s = source_scale<A>(in, out, align_corners, scale);
  for (int64_t o = 0; o < out; ++o) {
    const A real = align_corners ? s * static_cast<A>(o) : s * (static_cast<A>(o) + A(0.5)) - A(0.5);
    const int64_t i = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
    const A t = std::min(std::max(real - static_cast<A>(i), A(0)), A(1));
    ax.start[o] = i - 1;
    cubic_weights(&ax.w[4 * o], t);
  }
  return ax;
}

inline int64_t clamp_index(int64_t i, int64_t n) { return std::min(std::max(i, int64_t(0)), n - 1); }

struct BicubicShape {
  int64_t planes, IH, IW, OH, OW;
};

template <typename T>
void bicubic_forward(const T* src, T* dst, const BicubicShape& s, bool align_corners,
                     const std::optional<std::vector<double>>& scales) {
  using A = acc_of<T>;
  auto scale = [&](int d) { return scales ? std::optional<double>((*scales)[d]) : std::nullopt; };
  const CubicAxis<A> ay = cubic_axis<A>(s.IH, s.OH, align_corners, scale(0));
  const CubicAxis<A> ax = cubic_axis<A>(s.IW, s.OW, align_corners, scale(1));
  std::vector<int64_t> xs(4 * s.OW);
  for (int64_t ox = 0; ox < s.OW; ++ox) {
    for (int j = 0; j < 4; ++j) xs[4 * ox + j] = clamp_index(ax.start[ox] + j, s.IW);
  }
  parallel_for(0, s.planes, 4, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* plane = src + p * s.IH * s.IW;
      T* out = dst + p * s.OH * s.OW;
      for (int64_t oy = 0; oy < s.OH; ++oy) {
        const A* wy = &ay.w[4 * oy];
        const T* rows[4];
        for (int i = 0; i < 4; ++i) rows[i] = plane + clamp_index(ay.start[oy] + i, s.IH) * s.IW;
        for (int64_t ox = 0; ox < s.OW; ++ox) {
          const A* wx = &ax.w[4 * ox];
          const int64_t* x = &xs[4 * ox];
          A acc = 0;
          for (int i = 0; i < 4; ++i) {
            const T* r = rows[i];
            A t = static_cast<A>(r[x[0]]) * wx[0];
            t += static_cast<A>(r[x[1]]) * wx[1];
            t += static_cast<A>(r[x[2]]) * wx[2];
            t += static_cast<A>(r[x[3]]) * wx[3];
            acc = i == 0 ? t * wy[0] : acc + t * wy[i];
          }
          out[oy * s.OW + ox] = static_cast<T>(acc);
        }
      }
    }
  });
}

// grad_in (accumulate type, zeroed) += the transposed interpolation of grad.
template <typename A>
void bicubic_backward(const A* grad, A* grad_in, const BicubicShape& s, bool align_corners,
                      const std::optional<std::vector<double>>& scales) {
  auto scale = [&](int d) { return scales ? std::optional<double>((*scales)[d]) : std::nullopt; };
  const CubicAxis<A> ay = cubic_axis<A>(s.IH, s.OH, align_corners, scale(0));
  const CubicAxis<A> ax = cubic_axis<A>(s.IW, s.OW, align_corners, scale(1));
  parallel_for(0, s.planes, 4, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const A* g = grad + p * s.OH * s.OW;
      A* gi = grad_in + p * s.IH * s.IW;
      for (int64_t oy = 0; oy < s.OH; ++oy) {
        const A* wy = &ay.w[4 * oy];
        for (int64_t ox = 0; ox < s.OW; ++ox) {
          const A* wx = &ax.w[4 * ox];
          const A v = g[oy * s.OW + ox];
          for (int i = 0; i < 4; ++i) {
            for (int j = 0; j < 4; ++j) {
              const int64_t y = clamp_index(ay.start[oy] + j, s.IH), x = clamp_index(ax.start[ox] + i, s.IW);
              gi[y * s.IW + x] += v * wy[j] * wx[i];
            }
          }
        }
      }
    }
  });
}

std::vector<int64_t> bicubic_output_size(IntArrayRef input_size, const std::optional<std::vector<int64_t>>& output_size,
                                         const std::optional<std::vector<double>>& scales) {
  EMBER_CHECK(input_size.size() == 4, "Expected 4D input, but got input of size ", shape_string(input_size));
  EMBER_CHECK(output_size.has_value() != scales.has_value(),
              "Must specify exactly one of output_size and scale_factors");
  std::vector<int64_t> out;
  if (output_size) {
    EMBER_CHECK(output_size->size() == 2, "It is expected output_size equals to 2, but got size ", output_size->size());
    out = *output_size;
  } else {
    EMBER_CHECK(scales->size() == 2, "It is expected scale_factors equals to 2, but got size ", scales->size());
    for (int d = 0; d < 2; ++d)
      out.push_back(static_cast<int64_t>(static_cast<double>(input_size[2 + d]) * (*scales)[d]));
  }
  EMBER_CHECK(input_size[2] > 0 && input_size[3] > 0 && out[0] > 0 && out[1] > 0,
              "Input and output sizes should be greater than 0, but got input (H: ", input_size[2],
              ", W: ", input_size[3], ") output (H: ", out[0], ", W: ", out[1], ")");
  return out;
}

// ---- antialiased interpolation -------------------------------------------------------------

// The kernels' arguments for an IH x IW -> OH x OW interpolation of `planes`
// images in type T (float or double).
template <typename T>
cpu::UpsampleAAArgs aa_args(int64_t planes, int64_t IH, int64_t IW, int64_t OH, int64_t OW, bool align_corners,
                            const std::optional<std::vector<double>>& scales, bool cubic) {
  auto scale = [&](int d) { return scales ? std::optional<double>((*scales)[d]) : std::nullopt; };
  return {planes,
          IH,
          IW,
          OH,
          OW,
          static_cast<double>(source_scale<T>(IH, OH, align_corners, scale(0))),
          static_cast<double>(source_scale<T>(IW, OW, align_corners, scale(1))),
          cubic};
}

Tensor aa_forward(const Tensor& self, std::optional<std::vector<int64_t>> output_size, bool align_corners,
                  std::optional<std::vector<double>> scales, bool cubic, const char* name) {
  const std::vector<int64_t> out = bicubic_output_size(self.sizes(), output_size, scales);
  const ScalarType dtype = self.scalar_type();
  if (self.numel() == 0 || self.is_meta())
    return ember::empty({self.size(0), self.size(1), out[0], out[1]}, dtype, self.device());
  // PyTorch computes the weights for float and double only (uint8 has its own path)
  EMBER_CHECK_TYPE(NotImplementedError, dtype == ScalarType::Float || dtype == ScalarType::Double, "\"", name,
                   "\" not implemented for '", dtype_message_name(dtype), "'");
  const Tensor x = self.contiguous();
  Tensor result = ember::empty({self.size(0), self.size(1), out[0], out[1]}, dtype, self.device());
  const int64_t planes = x.size(0) * x.size(1);
  const cpu::UpsampleAAArgs a =
      dtype == ScalarType::Double
          ? aa_args<double>(planes, x.size(2), x.size(3), out[0], out[1], align_corners, scales, cubic)
          : aa_args<float>(planes, x.size(2), x.size(3), out[0], out[1], align_corners, scales, cubic);
  // Note [Antialiased interpolation kernels]
  cpu::upsample_aa_stub.get()(dtype, x.data_ptr(), result.data_ptr(), a);
  return result;
}

Tensor aa_backward(const Tensor& grad_output, IntArrayRef input_size, bool align_corners,
                   const std::optional<std::vector<double>>& scales, bool cubic) {
  const ScalarType dtype = grad_output.scalar_type();
  const ScalarType compute = dtype == ScalarType::Double ? ScalarType::Double : ScalarType::Float;
  Tensor gin = ember::zeros(input_size, compute, grad_output.device());
  if (gin.numel() == 0 || grad_output.numel() == 0) return gin.to(dtype);
  const Tensor g = grad_output.to(compute).contiguous();
  const int64_t planes = input_size[0] * input_size[1];
  const cpu::UpsampleAAArgs a =
      compute == ScalarType::Double
          ? aa_args<double>(planes, input_size[2], input_size[3], g.size(2), g.size(3), align_corners, scales, cubic)
          : aa_args<float>(planes, input_size[2], input_size[3], g.size(2), g.size(3), align_corners, scales, cubic);
  // Note [Antialiased interpolation kernels]
  cpu::upsample_aa_backward_stub.get()(compute, g.data_ptr(), gin.data_ptr(), a);
  return compute != dtype ? gin.to(dtype) : gin;
}

}  // namespace

Tensor upsample_bicubic2d_cpu(const Tensor& self, std::optional<std::vector<int64_t>> output_size, bool align_corners,
                              std::optional<std::vector<double>> scale_factors) {
  const std::vector<int64_t> out = bicubic_output_size(self.sizes(), output_size, scale_factors);
  const ScalarType dtype = self.scalar_type();
  Tensor result = ember::empty({self.size(0), self.size(1), out[0], out[1]}, dtype, self.device());
  if (result.numel() == 0 || result.is_meta()) return result;
  const Tensor x = self.contiguous();
  const BicubicShape s{self.size(0) * self.size(1), self.size(2), self.size(3), out[0], out[1]};
  switch (dtype) {
    case ScalarType::Float:
      bicubic_forward<float>(x.data_ptr<float>(), result.data_ptr<float>(), s, align_corners, scale_factors);
      break;
    case ScalarType::Double:
      bicubic_forward<double>(x.data_ptr<double>(), result.data_ptr<double>(), s, align_corners, scale_factors);
      break;
    case ScalarType::Half:
      bicubic_forward<Half>(static_cast<const Half*>(x.data_ptr()), static_cast<Half*>(result.data_ptr()), s,
                            align_corners, scale_factors);
      break;
    case ScalarType::BFloat16:
      bicubic_forward<BFloat16>(static_cast<const BFloat16*>(x.data_ptr()), static_cast<BFloat16*>(result.data_ptr()),
                                s, align_corners, scale_factors);
      break;
    default:
      throw NotImplementedError(
          str_cat("\"compute_indices_weights_cubic\" not implemented for '", dtype_message_name(dtype), "'"));
  }
  return result;
}

Tensor upsample_bicubic2d_backward_cpu(const Tensor& grad_output, IntArrayRef input_size, bool align_corners,
                                       std::optional<std::vector<double>> scale_factors) {
  const ScalarType dtype = grad_output.scalar_type();
  const ScalarType compute = dtype == ScalarType::Double ? ScalarType::Double : ScalarType::Float;
  Tensor gin = ember::zeros(input_size, compute, grad_output.device());
  if (gin.numel() == 0 || grad_output.numel() == 0) return gin.to(dtype);
  const Tensor g = grad_output.to(compute).contiguous();
  const BicubicShape s{input_size[0] * input_size[1], input_size[2], input_size[3], grad_output.size(2),
                       grad_output.size(3)};
  if (compute == ScalarType::Double) {
    bicubic_backward<double>(g.data_ptr<double>(), gin.data_ptr<double>(), s, align_corners, scale_factors);
  } else {
    bicubic_backward<float>(g.data_ptr<float>(), gin.data_ptr<float>(), s, align_corners, scale_factors);
  }
  return compute != dtype ? gin.to(dtype) : gin;
}

Tensor upsample_bilinear2d_aa_cpu(const Tensor& self, std::optional<std::vector<int64_t>> output_size,
                                  bool align_corners, std::optional<std::vector<double>> scale_factors) {
  return aa_forward(self, output_size, align_corners, scale_factors, false, "compute_index_ranges_weights");
}

Tensor upsample_bicubic2d_aa_cpu(const Tensor& self, std::optional<std::vector<int64_t>> output_size,
                                 bool align_corners, std::optional<std::vector<double>> scale_factors) {
  return aa_forward(self, output_size, align_corners, scale_factors, true, "compute_index_ranges_weights");
}

Tensor upsample_aa2d_backward_cpu(const Tensor& grad_output, IntArrayRef input_size, bool align_corners,
                                  std::optional<std::vector<double>> scale_factors, bool cubic) {
  return aa_backward(grad_output, input_size, align_corners, scale_factors, cubic);
}

}  // namespace native
}  // namespace ember
