// Max pooling over windows that are not a fixed stride apart, on the CPU:
// adaptive_max_pool2d and fractional_max_pool2d, with their backward, which
// adds each output gradient at the input position its index names.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

namespace {

// The planes (N*C or C) and the output shape of a 3-d or 4-d input.
std::vector<int64_t> pooled_shape(const Tensor& self, int64_t oh, int64_t ow) {
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end() - 2);
  shape.push_back(oh);
  shape.push_back(ow);
  return shape;
}

// Comparisons and sums of 16-bit floats go through float.
template <typename T>
using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// The maximum of window [h0, h1) x [w0, w1) of one plane, and its flat
// position; a NaN replaces the maximum each time it is met (PyTorch's rule).
template <typename T>
inline void window_max(const T* plane, int64_t width, int64_t h0, int64_t h1, int64_t w0, int64_t w1, T& out,
                       int64_t& index) {
  using C = compute_t<T>;
  int64_t best = h0 * width + w0;
  C top = -std::numeric_limits<C>::infinity();
  for (int64_t h = h0; h < h1; ++h) {
    const T* row = plane + h * width;
    for (int64_t w = w0; w < w1; ++w) {
      const C v = static_cast<C>(row[w]);
      if (v > top || std::isnan(v)) {
        top = v;
        best = h * width + w;
      }
    }
  }
  out = static_cast<T>(top);
  index = best;
}

// grad_input of a pooling whose output positions carry plane-flat input
// indices: zeros, plus each output gradient at its index.
Tensor indexed_max_backward(const Tensor& grad_output, const Tensor& self, const Tensor& indices, const char* name) {
  Tensor grad_input = ember::zeros(self.sizes(), self.scalar_type());
  if (self.numel() == 0) return grad_input;
  const Tensor go = grad_output.to(self.scalar_type()).contiguous();
  const Tensor idx = indices.contiguous();
  const int64_t in_plane = self.size(-1) * self.size(-2);
  const int64_t out_plane = go.size(-1) * go.size(-2);
  const int64_t planes = out_plane ? go.numel() / out_plane : 0;
  dispatch_floating_types(self.scalar_type(), name, [&](auto zero) {
    using T = decltype(zero);
    const T* g = static_cast<const T*>(go.data_ptr());
    const int64_t* ix = static_cast<const int64_t*>(idx.data_ptr());
    T* gi = static_cast<T*>(grad_input.data_ptr());
    parallel_for(0, planes, 16, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        T* dst = gi + p * in_plane;
        const T* src = g + p * out_plane;
        const int64_t* at = ix + p * out_plane;
        for (int64_t o = 0; o < out_plane; ++o) {
          using C = compute_t<T>;
          dst[at[o]] = static_cast<T>(static_cast<C>(dst[at[o]]) + static_cast<C>(src[o]));
        }
      }
    });
  });
  return grad_input;
}

}  // namespace

// ---- adaptive max pooling ----------------------------------------------------------------------

std::tuple<Tensor, Tensor> adaptive_max_pool2d_cpu(const Tensor& self, IntArrayRef output_size) {
  const int64_t nd = self.dim();
  EMBER_CHECK(nd == 3 || nd == 4,
              "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: ", shape_string(self.sizes()));
  for (int64_t i = 1; i < nd; ++i) {
    EMBER_CHECK(self.size(i) > 0,
                "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input "
                "has sizes ",
                shape_string(self.sizes()), " with dimension ", i, " being empty");
  }
  EMBER_CHECK(output_size.size() == 2, "adaptive_max_pool2d(): internal error: output_size.size() must be 2");
  const int64_t oh = output_size[0], ow = output_size[1];
  const auto shape = pooled_shape(self, oh, ow);
  Tensor out = ember::empty(shape, self.scalar_type());
  Tensor indices = ember::empty(shape, ScalarType::Long);
  if (out.numel() == 0) {
    // PyTorch's kernel picks its loop (and refuses the dtype) even with nothing to compute.
    dispatch_floating_types(self.scalar_type(), "adaptive_max_pool2d", [](auto) {});
    return {out, indices};
  }
  const Tensor x = self.contiguous();
  const int64_t ih = x.size(-2), iw = x.size(-1);
  const int64_t planes = x.numel() / (ih * iw);
  // window i of n over a length of l: [floor(i*l/n), ceil((i+1)*l/n))
  std::vector<int64_t> h0(oh), h1(oh), w0(ow), w1(ow);
  for (int64_t i = 0; i < oh; ++i) {
    h0[i] = (i * ih) / oh;
    h1[i] = ((i + 1) * ih + oh - 1) / oh;
  }
  for (int64_t j = 0; j < ow; ++j) {
    w0[j] = (j * iw) / ow;
    w1[j] = ((j + 1) * iw + ow - 1) / ow;
  }
  dispatch_floating_types(x.scalar_type(), "adaptive_max_pool2d", [&](auto zero) {
    using T = decltype(zero);
    const T* src = static_cast<const T*>(x.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    int64_t* ix = static_cast<int64_t*>(indices.data_ptr());
    parallel_for(0, planes, 4, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const T* plane = src + p * ih * iw;
        for (int64_t i = 0; i < oh; ++i) {
          for (int64_t j = 0; j < ow; ++j) {
            const int64_t o = (p * oh + i) * ow + j;
            window_max(plane, iw, h0[i], h1[i], w0[j], w1[j], dst[o], ix[o]);
          }
        }
      }
    });
  });
  return {out, indices};
}

Tensor adaptive_max_pool2d_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  return indexed_max_backward(grad_output, self, indices, "adaptive_max_pool2d_backward");
}

// ---- fractional max pooling --------------------------------------------------------------------

namespace {

// PyTorch's window starts (Note [Fractional max pooling windows] in
// nn/_functional_ctc.py), in the accumulate type A of the input's dtype.
template <typename A>
void fractional_starts(std::vector<int64_t>& starts, A sample, int64_t in, int64_t out, int64_t k) {
  starts.resize(out);
  if (out > 1) {
    const A alpha = static_cast<A>(in - k) / static_cast<A>(out - 1);
    for (int64_t i = 0; i < out - 1; ++i) {
      starts[i] = static_cast<int>((static_cast<A>(i) + sample) * alpha) - static_cast<int>(sample * alpha);
    }
  }
  if (out > 0) starts[out - 1] = in - k;
}

template <typename T, typename A>
void fractional_planes(const Tensor& x, const Tensor& samples, int64_t kh, int64_t kw, Tensor& out, Tensor& indices) {
  const int64_t ih = x.size(-2), iw = x.size(-1);
  const int64_t oh = out.size(-2), ow = out.size(-1);
  const int64_t planes = x.numel() / (ih * iw);
  const T* src = static_cast<const T*>(x.data_ptr());
  const T* su = static_cast<const T*>(samples.data_ptr());
  T* dst = static_cast<T*>(out.data_ptr());
  int64_t* ix = static_cast<int64_t*>(indices.data_ptr());
  parallel_for(0, planes, 4, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> hs, ws;
    for (int64_t p = begin; p < end; ++p) {
      fractional_starts<A>(ws, static_cast<A>(su[2 * p]), iw, ow, kw);
      fractional_starts<A>(hs, static_cast<A>(su[2 * p + 1]), ih, oh, kh);
      const T* plane = src + p * ih * iw;
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          const int64_t o = (p * oh + i) * ow + j;
          window_max(plane, iw, hs[i], hs[i] + kh, ws[j], ws[j] + kw, dst[o], ix[o]);
        }
      }
    }
  });
}

}  // namespace

std::tuple<Tensor, Tensor> fractional_max_pool2d_cpu(const Tensor& self, IntArrayRef kernel_size,
                                                     IntArrayRef output_size, const Tensor& random_samples) {
  EMBER_CHECK(kernel_size.size() == 2,
              "fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints");
  EMBER_CHECK(output_size.size() == 2,
              "fractional_max_pool2d: output_size must either be a single Int or tuple of Ints");
  const int64_t nd = self.dim();
  EMBER_CHECK(nd == 3 || nd == 4,
              "fractional_max_pool2d(): Expected 3D or 4D tensor, but got: ", shape_string(self.sizes()));
  for (int64_t i = 1; i < nd; ++i) {
    EMBER_CHECK(self.size(i) > 0,
                "fractional_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but got",
                shape_string(self.sizes()), " with dimension ", i, " being empty.");
  }
  const int64_t kh = kernel_size[0], kw = kernel_size[1];
  const int64_t oh = output_size[0], ow = output_size[1];
  const int64_t ih = self.size(-2), iw = self.size(-1);
  EMBER_CHECK(oh + kh - 1 <= ih, "fractional_max_pool2d_out(): pool height ", kh,
              " too large relative to input height ", ih, " and output height ", oh);
  EMBER_CHECK(ow + kw - 1 <= iw, "fractional_max_pool2d_out(): pool width ", kw, " too large relative to input width ",
              iw, " and output width ", ow);
  const int64_t planes = self.numel() / (ih * iw);
  EMBER_CHECK(random_samples.numel() == 2 * planes, "fractional_max_pool2d(): expected _random_samples of ", 2 * planes,
              " elements, but got ", random_samples.numel());
  const auto shape = pooled_shape(self, oh, ow);
  Tensor out = ember::empty(shape, self.scalar_type());
  Tensor indices = ember::empty(shape, ScalarType::Long);
  if (out.numel() == 0) return {out, indices};
  const Tensor x = self.contiguous();
  const Tensor samples = random_samples.to(self.scalar_type()).contiguous();
  dispatch_floating_types(x.scalar_type(), "fractional_max_pool2d_out_frame", [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
      fractional_planes<T, double>(x, samples, kh, kw, out, indices);
    } else {
      fractional_planes<T, float>(x, samples, kh, kw, out, indices);
    }
  });
  return {out, indices};
}

Tensor fractional_max_pool2d_backward_cpu(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                          IntArrayRef output_size, const Tensor& indices) {
  (void)kernel_size;
  (void)output_size;
  return indexed_max_backward(grad_output, self, indices, "fractional_max_pool2d_backward_out_frame");
}

}  // namespace ember::native
