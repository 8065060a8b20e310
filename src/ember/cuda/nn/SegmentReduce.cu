// segment_reduce on CUDA: one thread per output element (outer index,
// segment, inner index) runs the CPU kernel's loop over the segment's rows, in
// the same order and element arithmetic (Note [Segment reductions]), and its
// gradient likewise. The offsets are checked on the host first.
#include <limits>
#include <string>
#include <vector>

#include "ember/cuda/nn/NnCommon.cuh"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda::nn {
namespace {

enum SegmentOp : int { kSum, kProd, kMean, kMax, kMin };

int segment_op(const std::string& reduce) {
  if (reduce == "sum") return kSum;
  if (reduce == "prod") return kProd;
  if (reduce == "mean") return kMean;
  if (reduce == "max" || reduce == "amax") return kMax;
  if (reduce == "min" || reduce == "amin") return kMin;
  EMBER_CHECK(false, "reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
  return kSum;
}

// The shapes of one call: data [outer, size, inner], offsets [outer, segments + 1].
struct Layout {
  int64_t outer, size, inner, segments;
};

Layout layout_of(const Tensor& data, const Tensor& offsets, int64_t axis) {
  Layout l{1, data.size(axis), 1, offsets.size(-1) - 1};
  for (int64_t d = 0; d < axis; ++d) l.outer *= data.size(d);
  for (int64_t d = axis + 1; d < data.dim(); ++d) l.inner *= data.size(d);
  return l;
}

// The element type's own arithmetic: 16-bit floats round after each step.
template <typename T>
__device__ __forceinline__ T add(T a, T b) {
  return narrow<T>(widen(a) + widen(b));
}
template <typename T>
__device__ __forceinline__ T mul(T a, T b) {
  return narrow<T>(widen(a) * widen(b));
}
template <typename T>
__device__ __forceinline__ T div(T a, T b) {
  return narrow<T>(widen(a) / widen(b));
}
// a / n for an integer n, converted to the element type first.
template <typename T>
__device__ __forceinline__ T div_count(T a, int64_t n) {
  return div(a, narrow<T>(static_cast<Acc<T>>(n)));
}
template <typename T>
__device__ __forceinline__ bool nan(T v) {
  const Acc<T> w = widen(v);
  return w != w;
}

template <typename T>
__global__ void segment_reduce_kernel(const T* x, const int64_t* offsets, T* y, Layout l, int op, T start,
                                      bool has_initial) {
  EMBER_NN_GRID_LOOP(i, l.outer * l.segments * l.inner) {
    const int64_t k = i % l.inner, os = i / l.inner, o = os / l.segments, s = os % l.segments;
    const int64_t* row = offsets + o * (l.segments + 1);
    const int64_t begin = row[s], end = row[s + 1];
    const T* xs = x + o * l.size * l.inner + k;
    T acc = start;
    for (int64_t j = begin; j < end; ++j) {
      const T v = xs[j * l.inner];
      if (op == kSum || op == kMean) {
        acc = add(acc, v);
      } else if (op == kProd) {
        acc = mul(acc, v);
      } else if (op == kMax) {
        acc = nan(v) ? v : (widen(acc) < widen(v) ? v : acc);
      } else {
        acc = nan(v) ? v : (widen(v) < widen(acc) ? v : acc);
      }
    }
    if (op == kMean) {
      const int64_t length = end - begin;
      if (length == 0 && !has_initial) {
        acc = narrow<T>(static_cast<Acc<T>>(NAN));
      } else if (length > 0 && !nan(acc)) {
        acc = div_count(acc, length);
      }
    }
    y[i] = acc;
  }
}

template <typename T>
__global__ void segment_reduce_backward_kernel(const T* grad, const T* y, const T* x, const int64_t* offsets, T* gx,
                                               Layout l, int op, T prod_start) {
  EMBER_NN_GRID_LOOP(i, l.outer * l.segments * l.inner) {
    const int64_t k = i % l.inner, os = i / l.inner, o = os / l.segments, s = os % l.segments;
    const int64_t* row = offsets + o * (l.segments + 1);
    const int64_t begin = row[s], end = row[s + 1], length = end - begin;
    if (length == 0) continue;
    const int64_t base = o * l.size * l.inner + k;
    const T* xs = x + base;
    T* gs = gx + base;
    const T g = grad[i];
    if (op == kSum || op == kMean) {
      const T v = op == kSum ? g : div_count(g, length);
      for (int64_t j = begin; j < end; ++j) gs[j * l.inner] = v;
    } else if (op == kMax || op == kMin) {
      int64_t count = 0;
      for (int64_t j = begin; j < end; ++j) {
        const T v = xs[j * l.inner];
        if (nan(v) || widen(v) == widen(y[i])) {
          gs[j * l.inner] = g;
          ++count;
        }
      }
      if (count < 2) continue;
      for (int64_t j = begin; j < end; ++j) {
        if (widen(gs[j * l.inner]) > 0) gs[j * l.inner] = div_count(gs[j * l.inner], count);
      }
    } else {
      const T scaled = mul(g, y[i]);
      for (int64_t j = begin; j < end; ++j) {
        const T v = xs[j * l.inner];
        if (nan(v) || widen(v) == 0) {
          T others = prod_start;
          for (int64_t m = begin; m < end; ++m) {
            if (m != j) others = mul(others, xs[m * l.inner]);
          }
          gs[j * l.inner] = mul(g, others);
        } else {
          gs[j * l.inner] = div(scaled, v);
        }
      }
    }
  }
}

// initial (or the reduction's identity) in the element type.
template <typename T>
T start_value(int op, const std::optional<Scalar>& initial) {
  if (initial) return narrow<T>(static_cast<Acc<T>>(initial->to<double>()));
  if (op == kMax) return narrow<T>(-std::numeric_limits<Acc<T>>::infinity());
  if (op == kMin) return narrow<T>(std::numeric_limits<Acc<T>>::infinity());
  return narrow<T>(static_cast<Acc<T>>(op == kProd ? 1 : 0));
}

Tensor segment_reduce_cuda(const Tensor& data, const Tensor& offsets, const std::string& reduce, int64_t axis,
                           std::optional<Scalar> initial) {
  const int op = segment_op(reduce);
  const Tensor offs = native::math::checked_segment_offsets(data, offsets, axis).to(data.device());
  const Tensor x = data.contiguous();
  const Layout l = layout_of(x, offs, axis);
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape[axis] = l.segments;
  Tensor out = ember::empty(shape, x.dtype(), x.device());
  const int64_t total = l.outer * l.segments * l.inner;
  dispatch_floating(x.dtype(), "_segment_reduce_cuda", [&](auto tag) {
    using T = decltype(tag);
    if (total == 0) return;
    segment_reduce_kernel<T><<<blocks_for(total), kThreads, 0, current_stream(x.device().index)>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<const int64_t*>(offs.data_ptr()),
        static_cast<T*>(out.data_ptr()), l, op, start_value<T>(op, initial), initial.has_value());
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

Tensor segment_reduce_backward_cuda(const Tensor& grad, const Tensor& output, const Tensor& data, const Tensor& offsets,
                                    const std::string& reduce, int64_t axis, std::optional<Scalar> initial) {
  const int op = segment_op(reduce);
  const Tensor offs = native::math::checked_segment_offsets(data, offsets, axis).to(data.device());
  const Tensor x = data.contiguous();
  const Layout l = layout_of(x, offs, axis);
  const Tensor g = grad.to(x.dtype()).contiguous(), y = output.contiguous();
  EMBER_CHECK(g.numel() == l.outer * l.segments * l.inner && y.numel() == g.numel(),
              "_segment_reduce_backward: grad and output must have the output's shape");
  Tensor gx = ember::zeros(x.sizes(), x.dtype(), x.device());
  const int64_t total = g.numel();
  dispatch_floating(x.dtype(), "_segment_reduce_cuda", [&](auto tag) {
    using T = decltype(tag);
    if (total == 0) return;
    const T prod_start = initial ? start_value<T>(kProd, initial) : narrow<T>(static_cast<Acc<T>>(1));
    segment_reduce_backward_kernel<T><<<blocks_for(total), kThreads, 0, current_stream(x.device().index)>>>(
        static_cast<const T*>(g.data_ptr()), static_cast<const T*>(y.data_ptr()), static_cast<const T*>(x.data_ptr()),
        static_cast<const int64_t*>(offs.data_ptr()), static_cast<T*>(gx.data_ptr()), l, op, prod_start);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return gx;
}

const bool registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::_segment_reduce_kernels[cuda] = &segment_reduce_cuda;
  dispatch::_segment_reduce_backward_kernels[cuda] = &segment_reduce_backward_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda::nn
