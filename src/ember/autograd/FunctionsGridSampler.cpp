// grid_sampler_2d/3d's gradient: the kernel, or while grad mode records a
// graph, the same sums composed of differentiable operators.
// See Note [Grid sampler gradient as a composite].
#include <climits>
#include <vector>

#include "ember/autograd/FunctionsDoubleBackward.h"
#include "ember/autograd/GradMode.h"
#include "ember/core/Error.h"
#include "ember/ops/Ops.h"

namespace ember::autograd::generated {

// Note [Grid sampler gradient as a composite]
// The kernels (cpu/GridSampler.cpp, Note [Grid sampling]) record no graph,
// so a gradient taken with create_graph=True could not be differentiated
// again. Under grad mode the gradient is rebuilt from gather/scatter_add and
// pointwise operators: every interpolation point (2^D linear corners, the
// nearest pixel, or the 4x4 bicubic taps) is gathered from the flattened
// input planes at an index computed without graph; its weight is a
// polynomial of the point's fraction, which carries the graph to the grid.
// The grid gradient is sum_c grad * value * d weight / d coordinate, times
// the slope of the coordinate map (unnormalisation, border clamp, reflection
// fold), constant per piece as in the kernel. Its derivatives in grad, input
// and grid then come from autograd, and so do higher ones.

namespace {

enum : int64_t { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };
constexpr double kCubicA = -0.75;

// A grid coordinate in [-1, 1] as a source coordinate (the kernel's
// operation order); slope gets d source / d grid.
Tensor unnormalize(const Tensor& g, int64_t size, bool align, double& slope) {
  if (align) {
    slope = static_cast<double>(size - 1) / 2;
    return ((g + 1.0) * 0.5) * static_cast<double>(size - 1);
  }
  slope = static_cast<double>(size) / 2;
  return ((g + 1.0) * static_cast<double>(size) - 1.0) * 0.5;
}

Tensor times(const Tensor& slope, const Tensor& factor) { return slope.defined() ? slope * factor : factor; }

// Clamped into [0, size - 1]; the slope is 0 where clamped.
Tensor clip(const Tensor& c, int64_t size, Tensor& slope) {
  const double top = static_cast<double>(size - 1);
  Tensor below = c.le(0.0), above = c.ge(top);
  slope = times(slope, ember::logical_not(ember::logical_or(below, above)).to(c.dtype()));
  return ember::where(below, Scalar(0.0), ember::where(above, Scalar(top), c));
}

// Folded about twice_low / 2 and twice_high / 2; the slope flips sign with
// each fold.
Tensor reflect(const Tensor& c, int64_t twice_low, int64_t twice_high, Tensor& slope) {
  if (twice_low == twice_high) {
    slope = ember::zeros_like(c);
    return ember::zeros_like(c);
  }
  const double low = static_cast<double>(twice_low) / 2;
  const double span = static_cast<double>(twice_high - twice_low) / 2;
  Tensor shifted = c - low;
  Tensor negative = shifted.lt(0.0);
  Tensor dist = shifted.abs();
  Tensor extra = dist.fmod(span);
  Tensor flips = ember::floor(dist.detach() / span);
  Tensor even = flips.fmod(2.0).eq(0.0);
  Tensor sign = ember::where(negative, Scalar(-1.0), Scalar(1.0)).to(c.dtype());
  slope = times(slope, ember::where(even, sign, -sign));
  return ember::where(even, extra + low, (span - extra) + low);
}

// The padding mode applied to a source coordinate; the kernel's int-range guard.
Tensor pad_coordinate(const Tensor& c, int64_t size, int64_t padding, bool align, Tensor& slope) {
  Tensor out = c;
  if (padding == kBorder) {
    out = clip(out, size, slope);
  } else if (padding == kReflection) {
    out = align ? reflect(out, 0, 2 * (size - 1), slope) : reflect(out, -1, 2 * size - 1, slope);
    out = clip(out, size, slope);
  }
  Tensor in_range = ember::logical_and(ember::logical_and(out.isfinite(), out.le(static_cast<double>(INT_MAX))),
                                       out.ge(static_cast<double>(INT_MIN)));
  return ember::where(in_range, out, Scalar(-100.0));
}

// One interpolation point of every grid point: its flat offset in a channel
// plane (0 where outside), 1/0 inside, and its weight (with graph).
struct Tap {
  Tensor offset, inside, weight;
  std::vector<Tensor> slope;  // d weight / d source coordinate, per grid axis
};

struct Geometry {
  int64_t batch, channels, points, plane;
  std::vector<int64_t> size, stride;  // per grid axis: x (last input dim), y, z
};

Geometry geometry(const Tensor& input, const Tensor& grid, int64_t dims) {
  Geometry g;
  g.batch = input.size(0);
  g.channels = input.size(1);
  g.points = 1;
  for (int64_t d = 0; d < dims; ++d) g.points *= grid.size(1 + d);
  g.plane = 1;
  for (int64_t d = 0; d < dims; ++d) {
    g.size.push_back(input.size(input.dim() - 1 - d));
    g.stride.push_back(g.plane);
    g.plane *= g.size.back();
  }
  return g;
}

// Integer source positions (float, no graph) per axis -> offset and inside.
void locate(const Geometry& g, const std::vector<Tensor>& at, Tap& tap) {
  Tensor inside, offset;
  for (size_t d = 0; d < at.size(); ++d) {
    Tensor here = ember::logical_and(at[d].ge(0.0), at[d].lt(static_cast<double>(g.size[d])));
    inside = inside.defined() ? ember::logical_and(inside, here) : here;
    Tensor part = at[d].to(ScalarType::Long) * Scalar(g.stride[d]);
    offset = offset.defined() ? offset + part : part;
  }
  tap.inside = inside;
  tap.offset = ember::where(inside, offset, Scalar(static_cast<int64_t>(0)));
}

std::vector<Tap> linear_taps(const Geometry& g, const std::vector<Tensor>& coord) {
  const size_t dims = coord.size();
  std::vector<Tensor> lo, w_lo, w_hi;
  for (const Tensor& c : coord) {
    Tensor f = ember::floor(c.detach());
    lo.push_back(f);
    w_lo.push_back((f + 1.0) - c);
    w_hi.push_back(c - f);
  }
  std::vector<Tap> taps;
  for (size_t corner = 0; corner < (size_t{1} << dims); ++corner) {
    auto high = [&](size_t d) { return ((corner >> d) & 1) != 0; };
    Tap tap;
    std::vector<Tensor> at;
    for (size_t d = 0; d < dims; ++d) at.push_back(high(d) ? lo[d] + 1.0 : lo[d]);
    locate(g, at, tap);
    for (size_t d = 0; d < dims; ++d) {
      const Tensor& w = high(d) ? w_hi[d] : w_lo[d];
      tap.weight = tap.weight.defined() ? tap.weight * w : w;
      Tensor s;
      for (size_t e = 0; e < dims; ++e) {
        if (e == d) continue;
        const Tensor& f = high(e) ? w_hi[e] : w_lo[e];
        s = s.defined() ? s * f : f;
      }
      if (!s.defined()) s = ember::ones_like(w);
      tap.slope.push_back(high(d) ? s : -s);
    }
    taps.push_back(std::move(tap));
  }
  return taps;
}

std::vector<Tap> nearest_taps(const Geometry& g, const std::vector<Tensor>& coord) {
  Tap tap;
  std::vector<Tensor> at;
  for (const Tensor& c : coord) at.push_back(ember::round(c.detach()));
  locate(g, at, tap);
  return {tap};
}

// The cubic convolution kernel's four weights at fraction t and their
// derivatives in t.
void cubic_weights(const Tensor& t, std::vector<Tensor>& w, std::vector<Tensor>& dw) {
  const double a = kCubicA;
  auto near = [&](const Tensor& s) { return ((s * (a + 2) - (a + 3)) * s) * s + 1.0; };
  auto far = [&](const Tensor& s) { return ((s * a - 5 * a) * s + 8 * a) * s - 4 * a; };
  auto near_slope = [&](const Tensor& s) { return (s * (3 * (a + 2)) - 2 * (a + 3)) * s; };
  auto far_slope = [&](const Tensor& s) { return (s * (3 * a) - 10 * a) * s + 8 * a; };
  Tensor one_minus = 1.0 - t;
  w = {far(t + 1.0), near(t), near(one_minus), far(one_minus + 1.0)};
  dw = {far_slope(t + 1.0), near_slope(t), -near_slope(one_minus), -far_slope(one_minus + 1.0)};
}

// Bicubic (2-d only): the 4x4 taps around the unnormalised (x, y), each
// padded on its own; coord holds the unnormalised coordinates.
std::vector<Tap> bicubic_taps(const Geometry& g, const std::vector<Tensor>& coord, int64_t padding, bool align) {
  std::vector<Tensor> floor_of, w[2], dw[2];
  for (size_t d = 0; d < 2; ++d) {
    Tensor f = ember::floor(coord[d].detach());
    floor_of.push_back(f);
    cubic_weights(coord[d] - f, w[d], dw[d]);
  }
  auto padded = [&](size_t d, int64_t k) {
    Tensor unused;
    return pad_coordinate(floor_of[d] + static_cast<double>(k - 1), g.size[d], padding, align, unused).trunc();
  };
  std::vector<Tap> taps;
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t q = 0; q < 4; ++q) {
      Tap tap;
      locate(g, {padded(0, q), padded(1, r)}, tap);
      tap.weight = w[0][q] * w[1][r];
      tap.slope = {dw[0][q] * w[1][r], w[0][q] * dw[1][r]};
      taps.push_back(std::move(tap));
    }
  }
  return taps;
}

}  // namespace

std::tuple<Tensor, Tensor> grid_sampler_gradient(const Tensor& grad, const Tensor& input, const Tensor& grid,
                                                 int64_t interpolation_mode, int64_t padding_mode, bool align_corners,
                                                 std::array<bool, 2> grad_input_mask) {
  const int64_t dims = input.dim() - 2;
  if (!GradMode::is_enabled()) {
    if (dims == 2)
      return ember::grid_sampler_2d_backward(grad, input, grid, interpolation_mode, padding_mode, align_corners,
                                             grad_input_mask);
    return ember::grid_sampler_3d_backward(grad, input, grid, interpolation_mode, padding_mode, align_corners,
                                           grad_input_mask);
  }
  const Geometry g = geometry(input, grid, dims);
  const int64_t N = g.batch, C = g.channels, P = g.points;
  Tensor planes = input.reshape({N, C, g.plane});
  Tensor grad_planes = grad.reshape({N, C, P});
  Tensor points = grid.reshape({N, P, dims});
  std::vector<Tensor> coord, slope;
  for (int64_t d = 0; d < dims; ++d) {
    double scale = 1;
    Tensor c = unnormalize(points.select(2, d), g.size[d], align_corners, scale);
    Tensor s;
    if (interpolation_mode != kBicubic) c = pad_coordinate(c, g.size[d], padding_mode, align_corners, s);
    coord.push_back(c);
    slope.push_back(s.defined() ? s * scale : ember::full_like(c, Scalar(scale)).detach());
  }
  std::vector<Tap> taps;
  if (interpolation_mode == kNearest) {
    taps = nearest_taps(g, coord);
  } else if (interpolation_mode == kBicubic) {
    EMBER_INTERNAL_ASSERT(dims == 2, "bicubic grid sampling of ", dims, " dims");
    taps = bicubic_taps(g, coord, padding_mode, align_corners);
  } else {
    taps = linear_taps(g, coord);
  }
  const std::vector<int64_t> per_channel{N, C, P};
  Tensor grad_input, grad_grid;
  if (grad_input_mask[0]) {
    std::vector<Tensor> index, source;
    for (const Tap& tap : taps) {
      index.push_back(tap.offset.unsqueeze(1).expand(per_channel));
      Tensor w = tap.inside.to(grad.dtype());
      if (tap.weight.defined()) w = w * tap.weight;
      source.push_back(grad_planes * w.unsqueeze(1));
    }
    grad_input = ember::zeros({N, C, g.plane}, input.scalar_type(), input.device())
                     .scatter_add(2, ember::cat(index, 2), ember::cat(source, 2))
                     .reshape(input.sizes());
  }
  if (grad_input_mask[1]) {
    if (interpolation_mode == kNearest) {
      grad_grid = ember::zeros_like(grid);
    } else {
      std::vector<Tensor> axis_grads(static_cast<size_t>(dims));
      for (const Tap& tap : taps) {
        Tensor values = planes.gather(2, tap.offset.unsqueeze(1).expand(per_channel));
        Tensor dot = (grad_planes * values).sum(std::vector<int64_t>{1}, false) * tap.inside.to(grad.dtype());
        for (int64_t d = 0; d < dims; ++d) {
          Tensor term = dot * tap.slope[d];
          Tensor& acc = axis_grads[d];
          acc = acc.defined() ? acc + term : term;
        }
      }
      for (int64_t d = 0; d < dims; ++d) axis_grads[d] = axis_grads[d] * slope[d];
      grad_grid = ember::stack(axis_grads, 2).reshape(grid.sizes());
    }
  }
  return {grad_input, grad_grid};
}

}  // namespace ember::autograd::generated
