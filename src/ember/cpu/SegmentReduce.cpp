// segment_reduce on the CPU: data, a contiguous [outer, size, inner] block, is
// reduced over the rows between consecutive offsets (segments + 1 per outer
// index) into [outer, segments, inner], and its gradient.
//
// Note [Segment reductions]
// PyTorch 2.13's kernels fix the arithmetic: each output element starts from
// initial (or the reduction's identity) and takes the segment's rows in
// order, in the element type itself (a 16-bit float rounds after every step);
// max/min keep the first NaN; a mean divides by the length converted to the
// element type (nan for an empty segment without initial). The gradient of
// max/min goes to every element that is NaN or equal to the output, and where
// two or more share it, the positive ones are divided by their count (the
// negative ones are not: PyTorch's kernel tests grad_input > 0). A product's
// gradient is grad * output / x, or, where x is zero or NaN, grad times the
// product of the segment's other elements from initial on.
// The rows of one output row are independent of the others, so the work is
// split over (outer, segment) pairs and each pair runs along inner, which
// changes no element's arithmetic.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

namespace {

enum class SegmentOp { Sum, Prod, Mean, Max, Min };

SegmentOp segment_op(const std::string& reduce) {
  if (reduce == "sum") return SegmentOp::Sum;
  if (reduce == "prod") return SegmentOp::Prod;
  if (reduce == "mean") return SegmentOp::Mean;
  if (reduce == "max" || reduce == "amax") return SegmentOp::Max;
  if (reduce == "min" || reduce == "amin") return SegmentOp::Min;
  EMBER_CHECK(false, "reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
  return SegmentOp::Sum;
}

// The element type's own arithmetic: 16-bit floats compute in float and round
// each result, as c10's Half and BFloat16 operators do.
template <typename T>
using segment_compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
inline T add(T a, T b) {
  using C = segment_compute_t<T>;
  return static_cast<T>(static_cast<C>(a) + static_cast<C>(b));
}
template <typename T>
inline T mul(T a, T b) {
  using C = segment_compute_t<T>;
  return static_cast<T>(static_cast<C>(a) * static_cast<C>(b));
}
template <typename T>
inline T div(T a, T b) {
  using C = segment_compute_t<T>;
  return static_cast<T>(static_cast<C>(a) / static_cast<C>(b));
}
// a / n for an integer n: c10 converts n to the 16-bit type first.
template <typename T>
inline T div_count(T a, int64_t n) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return a / static_cast<T>(n);
  } else {
    return div(a, static_cast<T>(static_cast<float>(n)));
  }
}
template <typename T>
inline bool is_nan(T v) {
  return std::isnan(static_cast<segment_compute_t<T>>(v));
}
template <typename T>
inline T larger(T a, T b) {  // std::max(a, b)
  return static_cast<segment_compute_t<T>>(a) < static_cast<segment_compute_t<T>>(b) ? b : a;
}
template <typename T>
inline T smaller(T a, T b) {  // std::min(a, b)
  return static_cast<segment_compute_t<T>>(b) < static_cast<segment_compute_t<T>>(a) ? b : a;
}

template <typename T>
T identity(SegmentOp op, const std::optional<Scalar>& initial) {
  if (initial) return static_cast<T>(static_cast<segment_compute_t<T>>(initial->to<double>()));
  switch (op) {
    case SegmentOp::Max: return static_cast<T>(-std::numeric_limits<float>::infinity());
    case SegmentOp::Min: return static_cast<T>(std::numeric_limits<float>::infinity());
    case SegmentOp::Prod: return static_cast<T>(1.0f);
    default: return static_cast<T>(0.0f);
  }
}

// The shapes of one call: data [outer, size, inner], offsets [outer, segments + 1].
struct SegmentLayout {
  int64_t outer = 1, size = 0, inner = 1, segments = 0;
  const int64_t* offsets = nullptr;

  SegmentLayout(const Tensor& data, const Tensor& offs, int64_t axis) {
    for (int64_t d = 0; d < axis; ++d) outer *= data.size(d);
    for (int64_t d = axis + 1; d < data.dim(); ++d) inner *= data.size(d);
    size = data.size(axis);
    segments = offs.size(-1) - 1;
    offsets = static_cast<const int64_t*>(offs.data_ptr());
  }

  // f(o, s, start, end) for each (outer, segment) pair, in parallel.
  template <typename F>
  void for_each_segment(const F& f) const {
    const int64_t rows = std::max<int64_t>(1, size / std::max<int64_t>(1, segments));
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, rows * inner));
    parallel_for(0, outer * segments, grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t o = i / segments, s = i % segments;
        const int64_t* row = offsets + o * (segments + 1);
        f(o, s, row[s], row[s + 1]);
      }
    });
  }
};

}  // namespace

Tensor segment_reduce_cpu(const Tensor& data, const Tensor& offsets, const std::string& reduce, int64_t axis,
                          std::optional<Scalar> initial) {
  const SegmentOp op = segment_op(reduce);
  const Tensor offs = math::checked_segment_offsets(data, offsets, axis);
  const Tensor x = data.contiguous();
  const SegmentLayout lay(x, offs, axis);
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape[axis] = lay.segments;
  Tensor out = ember::empty(shape, x.scalar_type());
  dispatch_floating_types(x.scalar_type(), "_segment_reduce_cpu", [&](auto zero) {
    using T = decltype(zero);
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(out.data_ptr());
    const T start = identity<T>(op, initial);
    const int64_t inner = lay.inner, size = lay.size, segments = lay.segments;
    const bool has_initial = initial.has_value();
    lay.for_each_segment([&](int64_t o, int64_t s, int64_t begin, int64_t end) {
      T* y = yp + (o * segments + s) * inner;
      const T* xs = xp + o * size * inner;
      for (int64_t k = 0; k < inner; ++k) y[k] = start;
      for (int64_t j = begin; j < end; ++j) {
        const T* row = xs + j * inner;
        switch (op) {
          case SegmentOp::Sum:
          case SegmentOp::Mean:
            for (int64_t k = 0; k < inner; ++k) y[k] = add(y[k], row[k]);
            break;
          case SegmentOp::Prod:
            for (int64_t k = 0; k < inner; ++k) y[k] = mul(y[k], row[k]);
            break;
          case SegmentOp::Max:
            for (int64_t k = 0; k < inner; ++k) y[k] = is_nan(row[k]) ? row[k] : larger(y[k], row[k]);
            break;
          case SegmentOp::Min:
            for (int64_t k = 0; k < inner; ++k) y[k] = is_nan(row[k]) ? row[k] : smaller(y[k], row[k]);
            break;
        }
      }
      if (op != SegmentOp::Mean) return;
      const int64_t length = end - begin;
      for (int64_t k = 0; k < inner; ++k) {
        if (length == 0 && !has_initial) {
          y[k] = static_cast<T>(std::numeric_limits<float>::quiet_NaN());
        } else if (length > 0 && !is_nan(y[k])) {
          y[k] = div_count(y[k], length);
        }
      }
    });
  });
  return out;
}

Tensor segment_reduce_backward_cpu(const Tensor& grad, const Tensor& output, const Tensor& data, const Tensor& offsets,
                                   const std::string& reduce, int64_t axis, std::optional<Scalar> initial) {
  const SegmentOp op = segment_op(reduce);
  const Tensor offs = math::checked_segment_offsets(data, offsets, axis);
  const Tensor x = data.contiguous();
  const SegmentLayout lay(x, offs, axis);
  const Tensor g = grad.to(x.scalar_type()).contiguous();
  const Tensor y = output.contiguous();
  EMBER_CHECK(g.numel() == lay.outer * lay.segments * lay.inner && y.numel() == g.numel(),
              "_segment_reduce_backward: grad and output must have the output's shape");
  Tensor gx = ember::zeros(x.sizes(), x.scalar_type());
  dispatch_floating_types(x.scalar_type(), "_segment_reduce_cpu", [&](auto zero) {
    using T = decltype(zero);
    const T* xp = static_cast<const T*>(x.data_ptr());
    const T* gp = static_cast<const T*>(g.data_ptr());
    const T* yp = static_cast<const T*>(y.data_ptr());
    T* gxp = static_cast<T*>(gx.data_ptr());
    const T prod_start = initial ? identity<T>(SegmentOp::Prod, initial) : static_cast<T>(1.0f);
    const int64_t inner = lay.inner, size = lay.size, segments = lay.segments;
    lay.for_each_segment([&](int64_t o, int64_t s, int64_t begin, int64_t end) {
      const int64_t length = end - begin;
      if (length == 0) return;
      const T* gs = gp + (o * segments + s) * inner;
      const T* ys = yp + (o * segments + s) * inner;
      const T* xs = xp + o * size * inner;
      T* gxs = gxp + o * size * inner;
      switch (op) {
        case SegmentOp::Sum:
        case SegmentOp::Mean:
          for (int64_t j = begin; j < end; ++j) {
            for (int64_t k = 0; k < inner; ++k)
              gxs[j * inner + k] = op == SegmentOp::Sum ? gs[k] : div_count(gs[k], length);
          }
          return;
        case SegmentOp::Max:
        case SegmentOp::Min:
          for (int64_t k = 0; k < inner; ++k) {
            int64_t count = 0;
            for (int64_t j = begin; j < end; ++j) {
              const T v = xs[j * inner + k];
              if (is_nan(v) || static_cast<segment_compute_t<T>>(v) == static_cast<segment_compute_t<T>>(ys[k])) {
                gxs[j * inner + k] = gs[k];
                ++count;
              }
            }
            if (count < 2) continue;
            for (int64_t j = begin; j < end; ++j) {
              T& gv = gxs[j * inner + k];
              if (static_cast<segment_compute_t<T>>(gv) > 0) gv = div_count(gv, count);
            }
          }
          return;
        case SegmentOp::Prod:
          for (int64_t k = 0; k < inner; ++k) {
            const T scaled = mul(gs[k], ys[k]);
            for (int64_t j = begin; j < end; ++j) {
              const T v = xs[j * inner + k];
              if (is_nan(v) || static_cast<segment_compute_t<T>>(v) == 0) {
                T others = prod_start;
                for (int64_t i = begin; i < end; ++i) {
                  if (i != j) others = mul(others, xs[i * inner + k]);
                }
                gxs[j * inner + k] = mul(gs[k], others);
              } else {
                gxs[j * inner + k] = div(scaled, v);
              }
            }
          }
          return;
      }
    });
  });
  return gx;
}

}  // namespace ember::native
