// The antialiased interpolations and their input gradient, compiled once per
// CPU capability.
//
// Note [Antialiased interpolation kernels]
// PyTorch's kernels are scalar code compiled per capability, so with FMA
// their sums fuse: this file is built the same way (contraction on) and
// spells the same expressions, so each capability rounds as PyTorch's. The
// window of an output (first source index, length, normalised weights)
// comes from _compute_indices_min_size_weights_aa, some steps in double.
// Forward: one dim at a time, width then height (a dim whose size does not
// change is not filtered), rounding to the data's type in between; each
// output is x0 * w0 + x1 * w1 + ... in window order.
// Backward: PyTorch scatters each output gradient straight into the input,
// grad_in[y][x] += wx * wy * g over the window of every output pixel in
// row-major order. The planes run one after another here (PyTorch visits the
// channels innermost) and each output row's window rows one after another
// (PyTorch: each output's whole window), which leaves every element's sum in
// the same order.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ember/core/Error.h"
#include "ember/cpu/NNStubs.h"
#include "ember/ops/Parallel.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

template <typename T>
T triangle(T x) {
  if (x < 0.0) x = -x;
  if (x < 1.0) return 1.0 - x;
  return 0.0;
}

template <typename T>
T keys_cubic(T x) {
  const T A = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2.0) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  return 0.0;
}

// The window of output i along one dim: first source index, its length and
// `width` weights (zero past the length).
template <typename T>
struct Window {
  std::vector<int64_t> start, size;
  std::vector<T> w;
};

template <typename T>
Window<T> windows(int64_t in, int64_t out, T scale, bool cubic, int64_t& width) {
  const int interp = cubic ? 4 : 2;
  const T support = scale >= 1.0 ? (interp * 0.5) * scale : interp * 0.5;
  width = static_cast<int64_t>(std::ceil(static_cast<float>(support))) * 2 + 1;
  const T invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
  Window<T> win;
  win.start.resize(out);
  win.size.resize(out);
  win.w.assign(out * width, T(0));
  for (int64_t i = 0; i < out; ++i) {
    const T center = scale * (i + 0.5);
    const int64_t lo = std::max(static_cast<int64_t>(center - support + 0.5), static_cast<int64_t>(0));
    const int64_t n = std::clamp(std::min(static_cast<int64_t>(center + support + 0.5), in) - lo, int64_t(0), width);
    T* w = &win.w[i * width];
    T total = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      const T arg = (j + lo - center + 0.5) * invscale;
      w[j] = cubic ? keys_cubic<T>(arg) : triangle<T>(arg);
      total += w[j];
    }
    if (total != 0.0) {
      for (int64_t j = 0; j < n; ++j) w[j] /= total;
    }
    win.start[i] = lo;
    win.size[i] = n;
  }
  return win;
}

template <typename T>
void aa_forward(const T* in, T* out, const UpsampleAAArgs& a) {
  const bool horizontal = a.IW != a.OW, vertical = a.IH != a.OH;
  if (!horizontal && !vertical) {
    std::copy(in, in + a.planes * a.IH * a.IW, out);
    return;
  }
  std::vector<T> mid;
  const T* src = in;
  if (horizontal) {
    int64_t width = 0;
    const Window<T> wx = windows<T>(a.IW, a.OW, static_cast<T>(a.scale_w), a.cubic, width);
    T* dst = out;
    if (vertical) {
      mid.resize(a.planes * a.IH * a.OW);
      dst = mid.data();
    }
    parallel_for(0, a.planes * a.IH, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        for (int64_t ow = 0; ow < a.OW; ++ow) {
          const T* s = in + r * a.IW + wx.start[ow];
          const T* w = &wx.w[ow * width];
          const int64_t n = wx.size[ow];
          T acc = n > 0 ? s[0] * w[0] : T(0);
          for (int64_t j = 1; j < n; ++j) acc += s[j] * w[j];
          dst[r * a.OW + ow] = acc;
        }
      }
    });
    src = dst;
  }
  if (vertical) {
    int64_t width = 0;
    const Window<T> wy = windows<T>(a.IH, a.OH, static_cast<T>(a.scale_h), a.cubic, width);
    const int64_t W = a.OW;
    parallel_for(0, a.planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        for (int64_t oh = 0; oh < a.OH; ++oh) {
          const T* s = src + (p * a.IH + wy.start[oh]) * W;
          const T* w = &wy.w[oh * width];
          const int64_t n = wy.size[oh];
          T* d = out + (p * a.OH + oh) * W;
          // element by element the same sum as the width pass, rows at a time
          for (int64_t x = 0; x < W; ++x) d[x] = n > 0 ? s[x] * w[0] : T(0);
          for (int64_t j = 1; j < n; ++j) {
            const T* row = s + j * W;
            const T wj = w[j];
            for (int64_t x = 0; x < W; ++x) d[x] += row[x] * wj;
          }
        }
      }
    });
  }
}

template <typename T>
void aa_backward(const T* go, T* gi, const UpsampleAAArgs& a) {
  int64_t width_x = 0, width_y = 0;
  const Window<T> wx = windows<T>(a.IW, a.OW, static_cast<T>(a.scale_w), a.cubic, width_x);
  const Window<T> wy = windows<T>(a.IH, a.OH, static_cast<T>(a.scale_h), a.cubic, width_y);
  parallel_for(0, a.planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const T* g = go + c * a.OH * a.OW;
      T* plane = gi + c * a.IH * a.IW;
      for (int64_t oh = 0; oh < a.OH; ++oh) {
        const T* ky = &wy.w[oh * width_y];
        const T* grow = g + oh * a.OW;
        // an input row takes one window row of every output in this row, in order
        for (int64_t y = 0; y < wy.size[oh]; ++y) {
          T* row = plane + (wy.start[oh] + y) * a.IW;
          for (int64_t ow = 0; ow < a.OW; ++ow) {
            const T* kx = &wx.w[ow * width_x];
            T* dst = row + wx.start[ow];
            const T v = grow[ow];
            for (int64_t x = 0; x < wx.size[ow]; ++x) dst[x] += kx[x] * ky[y] * v;
          }
        }
      }
    }
  });
}

void upsample_aa_kernel(ScalarType dtype, const void* in, void* out, const UpsampleAAArgs& a) {
  if (dtype == ScalarType::Double) return aa_forward(static_cast<const double*>(in), static_cast<double*>(out), a);
  EMBER_CHECK(dtype == ScalarType::Float, "upsample_aa: float or double expected");
  aa_forward(static_cast<const float*>(in), static_cast<float*>(out), a);
}

void upsample_aa_backward_kernel(ScalarType dtype, const void* grad_out, void* grad_in, const UpsampleAAArgs& a) {
  if (dtype == ScalarType::Double) {
    return aa_backward(static_cast<const double*>(grad_out), static_cast<double*>(grad_in), a);
  }
  EMBER_CHECK(dtype == ScalarType::Float, "upsample_aa_backward: float or double expected");
  aa_backward(static_cast<const float*>(grad_out), static_cast<float*>(grad_in), a);
}

}  // namespace

EMBER_REGISTER_DISPATCH(upsample_aa_stub, &upsample_aa_kernel);
EMBER_REGISTER_DISPATCH(upsample_aa_backward_stub, &upsample_aa_backward_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
