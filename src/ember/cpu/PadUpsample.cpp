// Padding (constant, reflection, replication), nearest and linear upsampling,
// and im2col/col2im (unfold/fold) on the CPU, with PyTorch's checks.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/cpu/ReducedFloat.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember {
namespace native {
namespace {

std::string pair_string(IntArrayRef v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}

// Note [Index-map gather]
// Reflection and replication padding and nearest upsampling read, for every
// output position of the last k dims, one input position picked
// independently per dim. One table holds the source offset of each output
// position inside a contiguous k-d plane; the forward copies plane by plane,
// the backward adds each output gradient into its source, in output order.
using Maps = std::vector<std::vector<int64_t>>;

std::vector<int64_t> offset_table(IntArrayRef in_plane, const Maps& maps) {
  const size_t k = maps.size();
  std::vector<int64_t> stride(k);
  int64_t s = 1;
  for (size_t d = k; d-- > 0;) {
    stride[d] = s;
    s *= in_plane[d];
  }
  std::vector<int64_t> off{0};
  for (size_t d = 0; d < k; ++d) {
    std::vector<int64_t> next;
    next.reserve(off.size() * maps[d].size());
    for (int64_t o : off)
      for (int64_t m : maps[d]) next.push_back(o + m * stride[d]);
    off.swap(next);
  }
  return off;
}

int64_t prod(IntArrayRef v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

Tensor gather_maps(const Tensor& self, const Maps& maps, const char* name) {
  const int64_t k = static_cast<int64_t>(maps.size());
  IntArrayRef sizes = self.sizes();
  IntArrayRef plane(sizes.data() + sizes.size() - k, k);
  DimVector shape(IntArrayRef(sizes.data(), sizes.size() - k));
  const int64_t planes = prod(IntArrayRef(sizes.data(), sizes.size() - k));
  for (const auto& m : maps) shape.push_back(static_cast<int64_t>(m.size()));
  Tensor out = ember::empty(shape, self.dtype(), self.device());
  if (out.numel() == 0 || out.is_meta()) return out;  // a meta result has no values to compute
  // Rows of the last dim: one source-row offset per output row, the last
  // dim's map, and its longest stretch of consecutive sources (a plain copy).
  const Maps outer(maps.begin(), maps.end() - 1);
  std::vector<int64_t> outer_plane(plane.begin(), plane.end() - 1);
  std::vector<int64_t> rows = offset_table(IntArrayRef(outer_plane), outer);
  const int64_t W = plane[k - 1];
  for (auto& r : rows) r *= W;
  const std::vector<int64_t>& m = maps.back();
  const int64_t OW = static_cast<int64_t>(m.size());
  int64_t run_a = 0, run_b = 0;
  for (int64_t a = 0; a < OW;) {
    int64_t b = a + 1;
    while (b < OW && m[b] == m[b - 1] + 1) ++b;
    if (b - a > run_b - run_a) run_a = a, run_b = b;
    a = b;
  }
  const int64_t in_n = prod(plane), n_rows = static_cast<int64_t>(rows.size()), out_n = n_rows * OW;
  Tensor x = self.contiguous();
  EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX(self.dtype(), name, [&] {
    const scalar_t* src = x.data_ptr<scalar_t>();
    scalar_t* dst = out.data_ptr<scalar_t>();
    const int64_t* mi = m.data();
    parallel_for(0, planes * n_rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(OW, 1)), [&](int64_t b, int64_t e) {
      for (int64_t pr = b; pr < e; ++pr) {
        const int64_t p = pr / n_rows, r = pr % n_rows;
        const scalar_t* s = src + p * in_n + rows[r];
        scalar_t* d = dst + p * out_n + r * OW;
        for (int64_t t = 0; t < run_a; ++t) d[t] = s[mi[t]];
        std::copy(s + mi[run_a], s + mi[run_a] + (run_b - run_a), d + run_a);
        for (int64_t t = run_b; t < OW; ++t) d[t] = s[mi[t]];
      }
    });
  });
  return out;
}

Tensor scatter_maps(const Tensor& grad, IntArrayRef input_size, const Maps& maps, const char* name) {
  const int64_t k = static_cast<int64_t>(maps.size());
  const ScalarType dtype = grad.dtype();
  const ScalarType compute = is_reduced_float(dtype) ? ScalarType::Float : dtype;
  IntArrayRef plane(input_size.data() + input_size.size() - k, k);
  const int64_t planes = prod(IntArrayRef(input_size.data(), input_size.size() - k));
  Tensor gin = ember::zeros(input_size, compute, grad.device());
  const std::vector<int64_t> off = offset_table(plane, maps);
  const int64_t in_n = prod(plane), out_n = static_cast<int64_t>(off.size());
  EMBER_CHECK(grad.numel() == planes * out_n, name, ": grad_output has the wrong number of elements");
  if (gin.numel() == 0 || out_n == 0) return compute != dtype ? gin.to(dtype) : gin;
  Tensor g = grad.to(compute).contiguous();
  EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX(compute, name, [&] {
    if constexpr (std::is_same_v<scalar_t, bool>) {
      EMBER_CHECK(false, name, ": backward is not defined for bool");
    } else {
      const scalar_t* src = g.data_ptr<scalar_t>();
      scalar_t* dst = gin.data_ptr<scalar_t>();
      const int64_t* o = off.data();
      parallel_for(0, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(out_n, 1)), [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          const scalar_t* s = src + p * out_n;
          scalar_t* d = dst + p * in_n;
          for (int64_t t = 0; t < out_n; ++t) d[o[t]] = static_cast<scalar_t>(d[o[t]] + s[t]);
        }
      });
    }
  });
  return compute != dtype ? gin.to(dtype) : gin;
}

// ---- reflection and replication padding ------------------------------------

// mode 0: reflect, 1: replicate. padding holds (left, right) pairs from the
// last dim backwards, as F.pad.
Maps pad_maps(IntArrayRef input_size, IntArrayRef padding, int64_t mode) {
  const size_t k = padding.size() / 2;
  Maps maps(k);
  for (size_t d = 0; d < k; ++d) {
    const int64_t n = input_size[input_size.size() - k + d];
    const size_t pi = 2 * (k - 1 - d);
    const int64_t l = padding[pi], r = padding[pi + 1];
    const int64_t len = n + l + r;
    auto& m = maps[d];
    m.resize(static_cast<size_t>(std::max<int64_t>(len, 0)));
    for (int64_t o = 0; o < len; ++o) {
      int64_t i = o - l;
      if (mode == 0) {
        if (i < 0) i = -i;
        if (i >= n) i = 2 * (n - 1) - i;
      } else {
        i = std::min(std::max<int64_t>(i, 0), n - 1);
      }
      m[o] = i;
    }
  }
  return maps;
}

void check_pad(const Tensor& self, IntArrayRef padding, int64_t k, bool reflect) {
  const int64_t nd = self.dim();
  EMBER_CHECK(static_cast<int64_t>(padding.size()) == 2 * k, "padding size is expected to be ", 2 * k,
              ", but got: ", padding.size());
  bool ok = nd == k + 1 || nd == k + 2;
  if (ok) {
    for (int64_t d = nd - k - 1 + (nd == k + 2 ? 0 : 0); d < nd; ++d) {
      if (d == 0 && nd == k + 2) continue;  // the batch may be empty
      ok = ok && self.size(d) != 0;
    }
  }
  EMBER_CHECK(ok, "Expected ", k + 1, "D or ", k + 2,
              "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: ",
              shape_string(self.sizes()));
  for (int64_t d = 0; d < k; ++d) {
    const int64_t dim = nd - 1 - d;
    const int64_t n = self.size(dim), l = padding[2 * d], r = padding[2 * d + 1];
    if (reflect) {
      EMBER_CHECK(l < n && r < n,
                  "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (",
                  l, ", ", r, ") at dimension ", dim, " of input ", shape_string(self.sizes()));
    }
  }
  // As PyTorch: only all-empty outputs are "too small"; a negative size fails
  // when the output is created.
  bool any_nonempty = false;
  int64_t min_out = 1;
  std::string in_s, out_s;
  static const char* names[] = {"D", "H", "W"};
  for (int64_t d = 0; d < k; ++d) {
    const int64_t dim = nd - k + d;
    const int64_t n = self.size(dim), o = n + padding[2 * (k - 1 - d)] + padding[2 * (k - 1 - d) + 1];
    min_out = std::min(min_out, o);
    any_nonempty = any_nonempty || o >= 1;
    const char* nm = names[3 - k + d];
    const bool last = d == k - 1;
    in_s += std::string(nm) + ": " + std::to_string(n) + (last ? "" : (d == k - 2 ? ", " : " "));
    out_s += std::string(" ") + nm + ": " + std::to_string(o);
  }
  if (!reflect && k == 2) in_s += " ";
  EMBER_CHECK(any_nonempty, "input (", in_s, ") is too small. Calculated output", out_s);
  EMBER_CHECK(min_out >= 0, "Trying to create tensor with negative dimension ", min_out);
}

Tensor pad_forward(const Tensor& self, IntArrayRef padding, int64_t k, int64_t mode, const char* name) {
  check_pad(self, padding, k, mode == 0);
  return gather_maps(self, pad_maps(self.sizes(), padding, mode), name);
}

// ---- upsampling ---------------------------------------------------------------

DimVector upsample_output_size(IntArrayRef input_size, const std::optional<std::vector<int64_t>>& output_size,
                               const std::optional<std::vector<double>>& scales, int64_t k) {
  EMBER_CHECK(static_cast<int64_t>(input_size.size()) == k + 2 || static_cast<int64_t>(input_size.size()) == k + 1,
              "Expected ", k + 1, "D or ", k + 2, "D input, but got input of size ", shape_string(input_size));
  EMBER_CHECK(output_size.has_value() != scales.has_value(),
              "Must specify exactly one of output_size and scale_factors");
  const int64_t nd = static_cast<int64_t>(input_size.size());
  DimVector out;
  if (output_size) {
    EMBER_CHECK(static_cast<int64_t>(output_size->size()) == k, "It is expected output_size equals to ", k,
                ", but got size ", output_size->size());
    out = DimVector(IntArrayRef(*output_size));
  } else {
    EMBER_CHECK(static_cast<int64_t>(scales->size()) == k, "It is expected scale_factors equals to ", k,
                ", but got size ", scales->size());
    for (int64_t d = 0; d < k; ++d)
      out.push_back(static_cast<int64_t>(static_cast<double>(input_size[nd - k + d]) * (*scales)[d]));
  }
  for (int64_t d = 0; d < k; ++d) {
    EMBER_CHECK(input_size[nd - k + d] > 0 && out[d] > 0,
                "Input and output sizes should be greater than 0, but got input ", shape_string(input_size),
                " and output ", shape_string(IntArrayRef(out.data(), out.size())));
  }
  return out;
}

std::optional<double> scale_at(const std::optional<std::vector<double>>& scales, int64_t d) {
  if (!scales) return std::nullopt;
  return (*scales)[d];
}

// PyTorch computes the nearest-neighbour ratio in float for every dtype.
float nearest_scale(int64_t in, int64_t out, std::optional<double> scale) {
  if (scale && *scale > 0) return static_cast<float>(1.0 / *scale);
  return static_cast<float>(in) / static_cast<float>(out);
}

Maps nearest_maps(IntArrayRef input_size, IntArrayRef out_size, const std::optional<std::vector<double>>& scales,
                  bool exact) {
  const int64_t k = static_cast<int64_t>(out_size.size());
  Maps maps(k);
  for (int64_t d = 0; d < k; ++d) {
    const int64_t in = input_size[input_size.size() - k + d], out = out_size[d];
    const float s = nearest_scale(in, out, scale_at(scales, d));
    auto& m = maps[d];
    m.resize(out);
    for (int64_t o = 0; o < out; ++o) {
      int64_t i;
      if (exact) {
        i = static_cast<int64_t>(std::floor((static_cast<float>(o) + 0.5f) * s));
      } else if (out == in) {
        i = o;
      } else if (out == 2 * in) {
        i = o >> 1;
      } else {
        i = static_cast<int64_t>(std::floor(static_cast<float>(o) * s));
      }
      m[o] = std::min(i, in - 1);
    }
  }
  return maps;
}

// Linear interpolation along one dim: two source indices and weights per output.
template <typename opmath_t>
struct LinearAxis {
  std::vector<int64_t> i0, i1;
  std::vector<opmath_t> w0, w1;
};

template <typename opmath_t>
LinearAxis<opmath_t> linear_axis(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  LinearAxis<opmath_t> a;
  a.i0.resize(out);
  a.i1.resize(out);
  a.w0.resize(out);
  a.w1.resize(out);
  opmath_t ratio;
  if (align_corners) {
    ratio = out > 1 ? static_cast<opmath_t>(in - 1) / static_cast<opmath_t>(out - 1) : opmath_t(0);
  } else if (scale && *scale > 0) {
    ratio = static_cast<opmath_t>(1.0 / *scale);
  } else {
    ratio = static_cast<opmath_t>(in) / static_cast<opmath_t>(out);
  }
  for (int64_t o = 0; o < out; ++o) {
    if (in == out) {
      a.i0[o] = a.i1[o] = o;
      a.w0[o] = 1;
      a.w1[o] = 0;
      continue;
    }
    opmath_t real;
    if (align_corners) {
      real = ratio * static_cast<opmath_t>(o);
    } else {
      real = ratio * (static_cast<opmath_t>(o) + opmath_t(0.5)) - opmath_t(0.5);
      if (real < 0) real = 0;
    }
    int64_t i0 = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
    opmath_t l1 = std::min(std::max(real - static_cast<opmath_t>(i0), opmath_t(0)), opmath_t(1));
    a.i0[o] = i0;
    a.i1[o] = i0 + (i0 < in - 1 ? 1 : 0);
    a.w1[o] = l1;
    a.w0[o] = opmath_t(1) - l1;
  }
  return a;
}

template <typename scalar_t>
using opmath_of = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;

// Forward (backward=false) or backward of 1-d/2-d linear interpolation over
// contiguous planes; `in` and `out` are the plane sizes (1 or 2 entries).
template <typename scalar_t>
void linear_kernel(const scalar_t* src, scalar_t* dst, int64_t planes, IntArrayRef in, IntArrayRef out,
                   bool align_corners, const std::optional<std::vector<double>>& scales, bool backward) {
  using opmath_t = opmath_of<scalar_t>;
  const bool two = in.size() == 2;
  const int64_t IH = two ? in[0] : 1, IW = in.back(), OH = two ? out[0] : 1, OW = out.back();
  LinearAxis<opmath_t> ax_w = linear_axis<opmath_t>(IW, OW, align_corners, scale_at(scales, two ? 1 : 0));
  LinearAxis<opmath_t> ax_h;
  if (two) {
    ax_h = linear_axis<opmath_t>(IH, OH, align_corners, scale_at(scales, 0));
  } else {
    ax_h.i0 = ax_h.i1 = {0};
    ax_h.w0 = {opmath_t(1)};
    ax_h.w1 = {opmath_t(0)};
  }
  const int64_t in_n = IH * IW, out_n = OH * OW;
  parallel_for(0, planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(out_n, 1)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      if (!backward) {
        const scalar_t* x = src + p * in_n;
        scalar_t* y = dst + p * out_n;
        for (int64_t oh = 0; oh < OH; ++oh) {
          const scalar_t* r0 = x + ax_h.i0[oh] * IW;
          const scalar_t* r1 = x + ax_h.i1[oh] * IW;
          const opmath_t h0 = ax_h.w0[oh], h1 = ax_h.w1[oh];
          for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t a = ax_w.i0[ow], c = ax_w.i1[ow];
            const opmath_t w0 = ax_w.w0[ow], w1 = ax_w.w1[ow];
            opmath_t t0 = static_cast<opmath_t>(r0[a]) * w0;
            t0 += static_cast<opmath_t>(r0[c]) * w1;
            opmath_t v = t0 * h0;
            if (two) {
              opmath_t t1 = static_cast<opmath_t>(r1[a]) * w0;
              t1 += static_cast<opmath_t>(r1[c]) * w1;
              v += t1 * h1;
            }
            y[oh * OW + ow] = static_cast<scalar_t>(v);
          }
        }
      } else {
        const scalar_t* g = src + p * out_n;
        opmath_t* gi = reinterpret_cast<opmath_t*>(dst) + p * in_n;
        for (int64_t oh = 0; oh < OH; ++oh) {
          opmath_t* r0 = gi + ax_h.i0[oh] * IW;
          opmath_t* r1 = gi + ax_h.i1[oh] * IW;
          const opmath_t h0 = ax_h.w0[oh], h1 = ax_h.w1[oh];
          for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t a = ax_w.i0[ow], c = ax_w.i1[ow];
            const opmath_t w0 = ax_w.w0[ow], w1 = ax_w.w1[ow];
            const opmath_t v = static_cast<opmath_t>(g[oh * OW + ow]);
            if (two) {
              r0[a] += h0 * w0 * v;
              r0[c] += h0 * w1 * v;
              r1[a] += h1 * w0 * v;
              r1[c] += h1 * w1 * v;
            } else {
              r0[a] += w0 * v;
              r0[c] += w1 * v;
            }
          }
        }
      }
    }
  });
}

Tensor linear_forward(const Tensor& self, IntArrayRef out_size, bool align_corners,
                      const std::optional<std::vector<double>>& scales, const char* name) {
  const int64_t k = static_cast<int64_t>(out_size.size());
  IntArrayRef sizes = self.sizes();
  DimVector shape(IntArrayRef(sizes.data(), sizes.size() - k));
  for (int64_t s : out_size) shape.push_back(s);
  const ScalarType dtype = self.dtype();
  EMBER_CHECK(dtype == ScalarType::Float || dtype == ScalarType::Double || is_reduced_float(dtype), "\"", name,
              "\" not implemented for '", scalar_type_name(dtype), "'");
  Tensor out = ember::empty(shape, dtype, self.device());
  if (out.numel() == 0 || out.is_meta()) return out;
  IntArrayRef plane(sizes.data() + sizes.size() - k, k);
  const int64_t planes = prod(IntArrayRef(sizes.data(), sizes.size() - k));
  if (is_reduced_float(dtype)) {
    Tensor x = self.to(ScalarType::Float).contiguous();
    Tensor o = ember::empty(shape, ScalarType::Float, self.device());
    linear_kernel<float>(x.data_ptr<float>(), o.data_ptr<float>(), planes, plane, out_size, align_corners, scales,
                         false);
    return o.to(dtype);
  }
  Tensor x = self.contiguous();
  if (dtype == ScalarType::Double) {
    linear_kernel<double>(x.data_ptr<double>(), out.data_ptr<double>(), planes, plane, out_size, align_corners, scales,
                          false);
  } else {
    linear_kernel<float>(x.data_ptr<float>(), out.data_ptr<float>(), planes, plane, out_size, align_corners, scales,
                         false);
  }
  return out;
}

// ---- im2col / col2im -------------------------------------------------------------

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

struct Im2Col {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
};

Im2Col im2col_args(IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  EMBER_CHECK(kernel_size.size() == 2, "It is expected kernel_size equals to 2, but got size ", kernel_size.size());
  EMBER_CHECK(dilation.size() == 2, "It is expected dilation equals to 2, but got size ", dilation.size());
  EMBER_CHECK(padding.size() == 2, "It is expected padding equals to 2, but got size ", padding.size());
  EMBER_CHECK(stride.size() == 2, "It is expected stride equals to 2, but got size ", stride.size());
  Im2Col a{kernel_size[0], kernel_size[1], dilation[0], dilation[1], padding[0], padding[1], stride[0], stride[1]};
  EMBER_CHECK(a.kw > 0 && a.kh > 0, "kernel size should be greater than zero, but got kernel_height: ", a.kh,
              " kernel_width: ", a.kw);
  EMBER_CHECK(a.dw > 0 && a.dh > 0, "dilation should be greater than zero, but got dilation_height: ", a.dh,
              " dilation_width: ", a.dw);
  EMBER_CHECK(a.pw >= 0 && a.ph >= 0, "padding should be non-negative, but got pad_height: ", a.ph,
              " pad_width: ", a.pw);
  EMBER_CHECK(a.sw > 0 && a.sh > 0, "stride should be greater than zero, but got stride_height: ", a.sh,
              " stride_width: ", a.sw);
  return a;
}

// The block's extent, the padded plane and the columns' count in int64: a
// kernel or dilation near 2**63 would wrap them and index out of bounds
// (PyTorch wraps and returns a meaningless shape; Ember refuses).
void check_im2col_extent(const Im2Col& a, int64_t C, int64_t H, int64_t W) {
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  const __int128 eh = static_cast<__int128>(a.dh) * (a.kh - 1) + 1, ew = static_cast<__int128>(a.dw) * (a.kw - 1) + 1;
  const __int128 ph = static_cast<__int128>(H) + 2 * static_cast<__int128>(a.ph);
  const __int128 pw = static_cast<__int128>(W) + 2 * static_cast<__int128>(a.pw);
  const __int128 k = static_cast<__int128>(a.kh) * a.kw;
  EMBER_CHECK(eh <= kMax && ew <= kMax && ph <= kMax && pw <= kMax && k <= kMax && k * C <= kMax,
              "im2col: kernel_size, dilation and padding give sizes past int64");
}

std::string sizes4(const Im2Col& a, int which) {
  switch (which) {
    case 0: return pair_string({a.kh, a.kw});
    case 1: return pair_string({a.dh, a.dw});
    case 2: return pair_string({a.ph, a.pw});
    default: return pair_string({a.sh, a.sw});
  }
}

// col[c*kh*kw + i*kw + j][oh*OW + ow] <-> img[c][oh*sh - ph + i*dh][ow*sw - pw + j*dw]
template <typename scalar_t, bool kToCol>
void im2col_kernel(scalar_t* img, scalar_t* col, int64_t planes, int64_t C, int64_t H, int64_t W, int64_t OH,
                   int64_t OW, const Im2Col& a) {
  const int64_t K = a.kh * a.kw, L = OH * OW;
  parallel_for(0, planes * C, 1, [&](int64_t b, int64_t e) {
    for (int64_t pc = b; pc < e; ++pc) {
      scalar_t* im = img + pc * H * W;
      scalar_t* cl = col + pc * K * L;
      for (int64_t i = 0; i < a.kh; ++i) {
        for (int64_t j = 0; j < a.kw; ++j) {
          scalar_t* row = cl + (i * a.kw + j) * L;
          for (int64_t oh = 0; oh < OH; ++oh) {
            const int64_t h = oh * a.sh - a.ph + i * a.dh;
            for (int64_t ow = 0; ow < OW; ++ow) {
              const int64_t w = ow * a.sw - a.pw + j * a.dw;
              const bool inside = h >= 0 && h < H && w >= 0 && w < W;
              if constexpr (kToCol) {
                row[oh * OW + ow] = inside ? im[h * W + w] : scalar_t(0);
              } else {
                if (inside) im[h * W + w] = static_cast<scalar_t>(im[h * W + w] + row[oh * OW + ow]);
              }
            }
          }
        }
      }
    }
  });
}

}  // namespace

// ---- operators ------------------------------------------------------------------------

Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  const int64_t nd = self.dim();
  EMBER_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals ", pad.size());
  EMBER_CHECK(static_cast<int64_t>(pad.size()) / 2 <= nd,
              "Length of pad should be no more than twice the number of dimensions of the input. Pad length is ",
              pad.size(), " while the input has ", nd, " dimensions.");
  const int64_t k = static_cast<int64_t>(pad.size()) / 2;
  DimVector shape(self.sizes());
  for (int64_t i = 0; i < k; ++i) {
    const int64_t dim = nd - 1 - i;
    const int64_t n = self.size(dim) + pad[2 * i] + pad[2 * i + 1];
    EMBER_CHECK(n >= 0, "The input size ", self.size(dim), ", plus negative padding ", pad[2 * i], " and ",
                pad[2 * i + 1], " resulted in a negative output size, which is invalid. Check dimension ", dim,
                " of your input.");
    shape[dim] = n;
  }
  Tensor out = ember::full(shape, value, self.dtype(), self.device());
  Tensor src = self, dst = out;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t dim = nd - 1 - i, l = pad[2 * i], r = pad[2 * i + 1];
    const int64_t n = self.size(dim);
    const int64_t s0 = std::max<int64_t>(-l, 0), s1 = std::max<int64_t>(-r, 0);
    const int64_t len = n - s0 - s1;
    if (len <= 0) return out;
    src = src.narrow(dim, s0, len);
    dst = dst.narrow(dim, std::max<int64_t>(l, 0), len);
  }
  if (src.numel() > 0) dst.copy_(src);
  return out;
}

Tensor constant_pad_nd_backward(const Tensor& grad, IntArrayRef pad) {
  std::vector<int64_t> neg(pad.begin(), pad.end());
  for (auto& p : neg) p = -p;
  return ember::constant_pad_nd(grad, neg, 0);
}

Tensor reflection_pad1d_cpu(const Tensor& self, IntArrayRef padding) {
  return pad_forward(self, padding, 1, 0, "reflection_pad1d");
}
Tensor reflection_pad2d_cpu(const Tensor& self, IntArrayRef padding) {
  return pad_forward(self, padding, 2, 0, "reflection_pad2d");
}
Tensor reflection_pad3d_cpu(const Tensor& self, IntArrayRef padding) {
  return pad_forward(self, padding, 3, 0, "reflection_pad3d");
}
Tensor replication_pad1d_cpu(const Tensor& self, IntArrayRef padding) {
  return pad_forward(self, padding, 1, 1, "replication_pad1d");
}
Tensor replication_pad2d_cpu(const Tensor& self, IntArrayRef padding) {
  return pad_forward(self, padding, 2, 1, "replication_pad2d");
}
Tensor replication_pad3d_cpu(const Tensor& self, IntArrayRef padding) {
  return pad_forward(self, padding, 3, 1, "replication_pad3d");
}

Tensor pad_backward_cpu(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef padding, int64_t mode) {
  return scatter_maps(grad_output, input_size, pad_maps(input_size, padding, mode), "pad_backward");
}

// The maps copy any dtype (padding takes complex numbers); PyTorch's nearest
// upsampling does not.
void check_nearest_dtype(const Tensor& self) {
  if (is_complex_type_any_tier(self.dtype()))
    math::not_implemented_for("compute_indices_weights_nearest", self.dtype());
}

#define EMBER_NEAREST_OP(NAME, K, EXACT)                                                                            \
  Tensor NAME##_cpu(const Tensor& self, std::optional<std::vector<int64_t>> output_size,                            \
                    std::optional<std::vector<double>> scale_factors) {                                             \
    DimVector out = upsample_output_size(self.sizes(), output_size, scale_factors, K);                              \
    check_nearest_dtype(self);                                                                                      \
    return gather_maps(self, nearest_maps(self.sizes(), IntArrayRef(out.data(), out.size()), scale_factors, EXACT), \
                       #NAME);                                                                                      \
  }
EMBER_NEAREST_OP(upsample_nearest1d, 1, false)
EMBER_NEAREST_OP(upsample_nearest2d, 2, false)
EMBER_NEAREST_OP(upsample_nearest3d, 3, false)
EMBER_NEAREST_OP(_upsample_nearest_exact1d, 1, true)
EMBER_NEAREST_OP(_upsample_nearest_exact2d, 2, true)
EMBER_NEAREST_OP(_upsample_nearest_exact3d, 3, true)
#undef EMBER_NEAREST_OP

Tensor upsample_nearest_backward_cpu(const Tensor& grad_output, IntArrayRef input_size, int64_t k,
                                     std::optional<std::vector<double>> scale_factors, bool exact) {
  IntArrayRef gs = grad_output.sizes();
  IntArrayRef out(gs.data() + gs.size() - k, k);
  return scatter_maps(grad_output, input_size, nearest_maps(input_size, out, scale_factors, exact),
                      "upsample_nearest_backward");
}

Tensor upsample_linear1d_cpu(const Tensor& self, std::optional<std::vector<int64_t>> output_size, bool align_corners,
                             std::optional<std::vector<double>> scale_factors) {
  DimVector out = upsample_output_size(self.sizes(), output_size, scale_factors, 1);
  return linear_forward(self, IntArrayRef(out.data(), out.size()), align_corners, scale_factors, "upsample_linear1d");
}

Tensor upsample_bilinear2d_cpu(const Tensor& self, std::optional<std::vector<int64_t>> output_size, bool align_corners,
                               std::optional<std::vector<double>> scale_factors) {
  DimVector out = upsample_output_size(self.sizes(), output_size, scale_factors, 2);
  return linear_forward(self, IntArrayRef(out.data(), out.size()), align_corners, scale_factors, "upsample_bilinear2d");
}

Tensor upsample_linear_backward_cpu(const Tensor& grad_output, IntArrayRef input_size, int64_t k, bool align_corners,
                                    std::optional<std::vector<double>> scale_factors) {
  const ScalarType dtype = grad_output.dtype();
  const ScalarType compute = dtype == ScalarType::Double ? ScalarType::Double : ScalarType::Float;
  Tensor gin = ember::zeros(input_size, compute, grad_output.device());
  IntArrayRef gs = grad_output.sizes();
  IntArrayRef out(gs.data() + gs.size() - k, k);
  IntArrayRef plane(input_size.data() + input_size.size() - k, k);
  const int64_t planes = prod(IntArrayRef(input_size.data(), input_size.size() - k));
  if (gin.numel() > 0 && grad_output.numel() > 0) {
    Tensor g = grad_output.to(compute).contiguous();
    if (compute == ScalarType::Double) {
      linear_kernel<double>(g.data_ptr<double>(), gin.data_ptr<double>(), planes, plane, out, align_corners,
                            scale_factors, true);
    } else {
      linear_kernel<float>(g.data_ptr<float>(), gin.data_ptr<float>(), planes, plane, out, align_corners, scale_factors,
                           true);
    }
  }
  return compute != dtype ? gin.to(dtype) : gin;
}

Tensor im2col_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                  IntArrayRef stride) {
  Im2Col a = im2col_args(kernel_size, dilation, padding, stride);
  const int64_t nd = self.dim();
  EMBER_CHECK((nd == 3 && self.size(0) != 0 && self.size(1) != 0 && self.size(2) != 0) ||
                  (nd == 4 && self.size(1) != 0 && self.size(2) != 0 && self.size(3) != 0),
              "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
              "input, but got: ",
              shape_string(self.sizes()));
  const int64_t N = nd == 4 ? self.size(0) : 1, C = self.size(-3), H = self.size(-2), W = self.size(-1);
  check_im2col_extent(a, C, H, W);
  const int64_t OH = floor_div(H + 2 * a.ph - (a.dh * (a.kh - 1) + 1), a.sh) + 1;
  const int64_t OW = floor_div(W + 2 * a.pw - (a.dw * (a.kw - 1) + 1), a.sw) + 1;
  EMBER_CHECK(OH >= 1 && OW >= 1, "Given input with spatial size (", H, ", ", W, "), kernel_size=", sizes4(a, 0),
              ", dilation=", sizes4(a, 1), ", padding=", sizes4(a, 2),
              ", calculated shape of the array of sliding blocks as (", OH, ", ", OW,
              "), but its components must be at least one.");
  DimVector shape;
  if (nd == 4) shape.push_back(N);
  shape.push_back(C * a.kh * a.kw);
  shape.push_back(OH * OW);
  Tensor out = ember::empty(shape, self.dtype(), self.device());
  if (out.numel() == 0 || out.is_meta()) return out;
  Tensor x = self.contiguous();
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "im2col", [&] {
    im2col_kernel<scalar_t, true>(const_cast<scalar_t*>(x.data_ptr<scalar_t>()), out.data_ptr<scalar_t>(), N, C, H, W,
                                  OH, OW, a);
  });
  return out;
}

Tensor col2im_cpu(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
                  IntArrayRef padding, IntArrayRef stride) {
  EMBER_CHECK(output_size.size() == 2, "It is expected output_size equals to 2, but got size ", output_size.size());
  Im2Col a = im2col_args(kernel_size, dilation, padding, stride);
  const int64_t nd = self.dim();
  EMBER_CHECK(
      (nd == 2 && self.size(0) != 0 && self.size(1) != 0) || (nd == 3 && self.size(1) != 0 && self.size(2) != 0),
      "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, "
      "but got: ",
      shape_string(self.sizes()));
  const int64_t H = output_size[0], W = output_size[1];
  EMBER_CHECK(W >= 1 && H >= 1, "output_size should be greater than zero, but got output_height: ", H,
              " output_width: ", W);
  check_im2col_extent(a, 1, H, W);
  const int64_t K = a.kh * a.kw;
  const int64_t rows = self.size(-2), L = self.size(-1);
  EMBER_CHECK(
      rows % K == 0,
      "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)=",
      rows, " and kernel_size=", sizes4(a, 0), ".");
  const int64_t OH = floor_div(H + 2 * a.ph - (a.dh * (a.kh - 1) + 1), a.sh) + 1;
  const int64_t OW = floor_div(W + 2 * a.pw - (a.dw * (a.kw - 1) + 1), a.sw) + 1;
  EMBER_CHECK(OH >= 1 && OW >= 1 && L == OH * OW, "Given output_size=(", H, ", ", W, "), kernel_size=", sizes4(a, 0),
              ", dilation=", sizes4(a, 1), ", padding=", sizes4(a, 2), ", stride=", sizes4(a, 3),
              ", expected size of input's dimension 2 to match the calculated number of sliding blocks ", OH, " * ", OW,
              " = ", OH * OW, ", but got input.size(2)=", L, ".");
  const int64_t N = nd == 3 ? self.size(0) : 1, C = rows / K;
  DimVector shape;
  if (nd == 3) shape.push_back(N);
  shape.push_back(C);
  shape.push_back(H);
  shape.push_back(W);
  const ScalarType dtype = self.dtype();
  const ScalarType compute = is_reduced_float(dtype) ? ScalarType::Float : dtype;
  Tensor out = ember::zeros(shape, compute, self.device());
  if (out.numel() == 0 || self.numel() == 0 || out.is_meta()) return compute != dtype ? out.to(dtype) : out;
  Tensor x = self.to(compute).contiguous();
  EMBER_DISPATCH_ALL_TYPES(compute, "col2im", [&] {
    im2col_kernel<scalar_t, false>(out.data_ptr<scalar_t>(), const_cast<scalar_t*>(x.data_ptr<scalar_t>()), N, C, H, W,
                                   OH, OW, a);
  });
  return compute != dtype ? out.to(dtype) : out;
}

}  // namespace native
}  // namespace ember
