// Convolution on the CPU (forward and backward, plain and transposed, 1-d and
// 2-d), and the conv1d/conv2d/conv_transpose2d front ends.
//
// Note [Convolution as GEMM]
// Every case is one of three products between a "large" image X (C x H x W),
// a "small" image Y (O x OH x OW) and a weight W (O x C*kh*kw), per sample and
// group, where col = im2col(X) is (C*kh*kw) x (OH*OW):
//   lower:  Y  = W @ col                     (conv forward, transposed-conv input grad)
//   raise:  X  = col2im(W^T @ Y)             (conv input grad, transposed-conv forward)
//   weight: dW += Y @ col^T                  (the weight gradient of both)
// For a convolution X is the input; for a transposed convolution X is the
// output, and its weight (Cin x Cout/g x kh x kw) already has the O x C*kh*kw
// layout per group. col is built a band of output rows at a time, sized to
// stay in L2, and the products run on the BLAS GEMM (float, double) or a plain
// loop (integer types). Samples are spread over threads, each calling a
// single-threaded GEMM; with one sample the GEMM itself uses the threads.
// 1x1 kernels with unit stride and no padding use X itself as col.
#include <cstring>
#include <memory>
#include <mutex>

#include "ember/cpu/Blas.h"
#include "ember/cpu/NNStubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember {
namespace cpu {
EMBER_DEFINE_DISPATCH(Im2ColFn, im2col_stub);
EMBER_DEFINE_DISPATCH(Col2ImFn, col2im_stub);
}  // namespace cpu

namespace native {
namespace {

// ---- GEMM over the element types -------------------------------------------------

// C = A' @ B' + beta * C, row-major; beta is 0 or 1.
template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
          bool beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    blas::sgemm(ta, tb, int(m), int(n), int(k), 1.f, a, int(lda), b, int(ldb), beta ? 1.f : 0.f, c, int(ldc));
  } else if constexpr (std::is_same_v<T, double>) {
    blas::dgemm(ta, tb, int(m), int(n), int(k), 1.0, a, int(lda), b, int(ldb), beta ? 1.0 : 0.0, c, int(ldc));
  } else {
    for (int64_t i = 0; i < m; ++i) {
      T* crow = c + i * ldc;
      if (!beta) std::fill(crow, crow + n, T(0));
      for (int64_t p = 0; p < k; ++p) {
        const T av = ta ? a[p * lda + i] : a[i * lda + p];
        if (tb) {
          for (int64_t j = 0; j < n; ++j) crow[j] += av * b[j * ldb + p];
        } else {
          const T* brow = b + p * ldb;
          for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
        }
      }
    }
  }
}

template <typename F>
void dispatch_conv_types(ScalarType t, const char* name, const F& f) {
  switch (t) {
    case ScalarType::Float: return f(float{});
    case ScalarType::Double: return f(double{});
    case ScalarType::Long: return f(int64_t{});
    case ScalarType::Int: return f(int32_t{});
    case ScalarType::Short: return f(int16_t{});
    case ScalarType::Char: return f(int8_t{});
    case ScalarType::Byte: return f(uint8_t{});
    default:
      throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", scalar_type_name(t), "'"));
  }
}

// Sums of bias gradients: double for floating types, int64 for integers.
template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

// out[c] = sum over n and positions of y (N x channels x spatial).
template <typename T>
void channel_sums(const T* y, int64_t N, int64_t channels, int64_t spatial, T* out) {
  parallel_for(0, channels, std::max<int64_t>(1, 65536 / std::max<int64_t>(N * spatial, 1)), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      acc_t<T> s = 0;
      for (int64_t n = 0; n < N; ++n) {
        const T* row = y + (n * channels + c) * spatial;
        for (int64_t i = 0; i < spatial; ++i) s += static_cast<acc_t<T>>(row[i]);
      }
      out[c] = static_cast<T>(s);
    }
  });
}

// ---- the three products of Note [Convolution as GEMM] ---------------------------------

struct Geometry {
  int64_t N, G;
  int64_t C, H, W;     // large image, channels per group
  int64_t O, OH, OW;   // small image, channels per group
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;

  int64_t K() const { return C * kh * kw; }
  bool direct() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0; }
  // Output rows per im2col band: about 256K elements of col.
  int64_t band() const {
    if (direct()) return OH;
    int64_t per_row = std::max<int64_t>(K() * OW, 1);
    return std::clamp<int64_t>((int64_t(1) << 18) / per_row, 1, std::max<int64_t>(OH, 1));
  }
  cpu::Im2ColArgs im2col_args(int64_t r0, int64_t r1) const {
    return {C, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw, r0, r1};
  }
};

// Runs body(n, col_buffer) for every sample, spreading samples over threads
// (single-threaded BLAS inside) when there are several.
template <typename T, typename Body>
void for_each_sample(const Geometry& g, const Body& body) {
  const int64_t col_size = g.direct() ? 0 : g.K() * g.band() * g.OW;
  if (g.N > 1 && get_num_threads() > 1) {
    blas::set_num_threads(1);  // see Note [BLAS threads]
    parallel_for(0, g.N, 1, [&](int64_t b, int64_t e) {
      std::unique_ptr<T[]> col(new T[std::max<int64_t>(col_size, 1)]);
      for (int64_t n = b; n < e; ++n) body(n, col.get());
    });
  } else {
    std::unique_ptr<T[]> col(new T[std::max<int64_t>(col_size, 1)]);
    for (int64_t n = 0; n < g.N; ++n) body(n, col.get());
  }
}

// Y[n] = W @ im2col(X[n]) (+ bias[o]).
template <typename T>
void conv_lower(const Geometry& g, const T* X, const T* Wt, const T* bias, T* Y) {
  const int64_t K = g.K(), OHW = g.OH * g.OW, HW = g.H * g.W, band = g.band();
  for_each_sample<T>(g, [&](int64_t n, T* col) {
    for (int64_t grp = 0; grp < g.G; ++grp) {
      const T* x = X + (n * g.G + grp) * g.C * HW;
      const T* w = Wt + grp * g.O * K;
      T* y = Y + (n * g.G + grp) * g.O * OHW;
      if (bias) {
        for (int64_t o = 0; o < g.O; ++o) std::fill(y + o * OHW, y + (o + 1) * OHW, bias[grp * g.O + o]);
      }
      if (K == 0) {
        if (!bias) std::fill(y, y + g.O * OHW, T(0));
        continue;
      }
      if (g.direct()) {
        gemm<T>(false, false, g.O, OHW, K, w, K, x, HW, bias != nullptr, y, OHW);
        continue;
      }
      for (int64_t r0 = 0; r0 < g.OH; r0 += band) {
        const int64_t r1 = std::min(g.OH, r0 + band), cols = (r1 - r0) * g.OW;
        auto args = g.im2col_args(r0, r1);
        cpu::im2col_stub(CppTypeToScalarType<T>::value, x, col, args);
        gemm<T>(false, false, g.O, cols, K, w, K, col, cols, bias != nullptr, y + r0 * g.OW, OHW);
      }
    }
  });
}

// X[n] = col2im(W^T @ Y[n]) (+ bias[c]).
template <typename T>
void conv_raise(const Geometry& g, const T* Y, const T* Wt, const T* bias, T* X) {
  const int64_t K = g.K(), OHW = g.OH * g.OW, HW = g.H * g.W, band = g.band();
  for_each_sample<T>(g, [&](int64_t n, T* col) {
    for (int64_t grp = 0; grp < g.G; ++grp) {
      T* x = X + (n * g.G + grp) * g.C * HW;
      const T* w = Wt + grp * g.O * K;
      const T* y = Y + (n * g.G + grp) * g.O * OHW;
      for (int64_t c = 0; c < g.C; ++c) {
        std::fill(x + c * HW, x + (c + 1) * HW, bias ? bias[grp * g.C + c] : T(0));
      }
      if (K == 0 || g.O == 0) continue;
      if (g.direct()) {
        gemm<T>(true, false, K, HW, g.O, w, K, y, OHW, true, x, HW);
        continue;
      }
      for (int64_t r0 = 0; r0 < g.OH; r0 += band) {
        const int64_t r1 = std::min(g.OH, r0 + band), cols = (r1 - r0) * g.OW;
        gemm<T>(true, false, K, cols, g.O, w, K, y + r0 * g.OW, OHW, false, col, cols);
        auto args = g.im2col_args(r0, r1);
        cpu::col2im_stub(CppTypeToScalarType<T>::value, col, x, args);
      }
    }
  });
}

// dW = sum_n Y[n] @ im2col(X[n])^T; dbias (over the small channels, if given) = sum of Y.
template <typename T>
void conv_weight(const Geometry& g, const T* X, const T* Y, T* dW, T* dbias) {
  const int64_t K = g.K(), OHW = g.OH * g.OW, HW = g.H * g.W, band = g.band();
  const int64_t wsize = g.G * g.O * K, nb = g.G * g.O;
  std::fill(dW, dW + wsize, T(0));
  if (dbias) std::fill(dbias, dbias + nb, T(0));
  std::mutex mu;
  const int64_t col_size = g.direct() ? 0 : K * band * g.OW;
  auto run = [&](int64_t b, int64_t e) {
    std::unique_ptr<T[]> col(new T[std::max<int64_t>(col_size, 1)]);
    std::unique_ptr<T[]> acc(new T[std::max<int64_t>(wsize, 1)]);
    std::vector<acc_t<T>> bacc(dbias ? nb : 0, acc_t<T>(0));
    std::fill(acc.get(), acc.get() + wsize, T(0));
    for (int64_t n = b; n < e; ++n) {
      for (int64_t grp = 0; grp < g.G; ++grp) {
        const T* x = X + (n * g.G + grp) * g.C * HW;
        const T* y = Y + (n * g.G + grp) * g.O * OHW;
        T* w = acc.get() + grp * g.O * K;
        if (dbias) {
          for (int64_t o = 0; o < g.O; ++o) {
            acc_t<T> s = 0;
            const T* row = y + o * OHW;
            for (int64_t i = 0; i < OHW; ++i) s += static_cast<acc_t<T>>(row[i]);
            bacc[grp * g.O + o] += s;
          }
        }
        if (K == 0 || g.O == 0) continue;
        if (g.direct()) {
          gemm<T>(false, true, g.O, K, OHW, y, OHW, x, HW, true, w, K);
          continue;
        }
        for (int64_t r0 = 0; r0 < g.OH; r0 += band) {
          const int64_t r1 = std::min(g.OH, r0 + band), cols = (r1 - r0) * g.OW;
          auto args = g.im2col_args(r0, r1);
          cpu::im2col_stub(CppTypeToScalarType<T>::value, x, col.get(), args);
          gemm<T>(false, true, g.O, K, cols, y + r0 * g.OW, OHW, col.get(), cols, true, w, K);
        }
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    for (int64_t i = 0; i < wsize; ++i) dW[i] += acc[i];
    if (dbias) {
      for (int64_t i = 0; i < nb; ++i) dbias[i] += static_cast<T>(bacc[i]);
    }
  };
  if (g.N > 1 && get_num_threads() > 1) {
    blas::set_num_threads(1);  // see Note [BLAS threads]
    parallel_for(0, g.N, 1, run);
  } else {
    run(0, g.N);
  }
}

// ---- argument checks (PyTorch's messages) ----------------------------------------------

struct ConvArgs {
  DimVector stride, padding, dilation, output_padding;
  bool transposed;
  int64_t groups;
};

DimVector expand_param(IntArrayRef p, const char* name, int64_t dims) {
  if (p.size() == 1) return DimVector(size_t(dims), p[0]);
  EMBER_CHECK(static_cast<int64_t>(p.size()) == dims, "expected ", name,
              " to be a single integer value or a list of ", dims,
              " values to match the convolution dimensions, but got ", name, "=", shape_string(p));
  return DimVector(p);
}

std::string cpp_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Float: return "float";
    case ScalarType::Double: return "double";
    case ScalarType::Half: return "c10::Half";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::Long: return "long int";
    case ScalarType::Int: return "int";
    case ScalarType::Short: return "short int";
    case ScalarType::Char: return "signed char";
    case ScalarType::Byte: return "unsigned char";
    default: return "bool";
  }
}

ConvArgs check_conv(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                    IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                    int64_t groups) {
  const int64_t k = weight.dim();
  EMBER_CHECK(k >= 3, "weight should have at least three dimensions");
  EMBER_CHECK(groups > 0, "non-positive groups is not supported");
  const int64_t dims = k - 2;
  ConvArgs a{expand_param(stride, "stride", dims), expand_param(padding, "padding", dims),
             expand_param(dilation, "dilation", dims), expand_param(output_padding, "output_padding", dims),
             transposed, groups};
  for (int64_t d = 0; d < dims; ++d) {
    EMBER_CHECK(a.padding[d] >= 0, "negative padding is not supported");
    EMBER_CHECK(a.output_padding[d] >= 0, "negative output_padding is not supported");
    EMBER_CHECK(a.stride[d] > 0, "non-positive stride is not supported");
    EMBER_CHECK(a.dilation[d] > 0, "non-positive dilation is not supported");
  }
  IntArrayRef ws = weight.sizes();
  EMBER_CHECK(input.dim() == k, "Expected ", k, "-dimensional input for ", k, "-dimensional weight ",
              shape_string(ws), ", but got ", input.dim(), "-dimensional input of size ",
              shape_string(input.sizes()), " instead");
  EMBER_CHECK(ws[0] >= groups, "Given groups=", groups, ", expected weight to be at least ", groups,
              " at dimension 0, but got weight of size ", shape_string(ws), " instead");
  EMBER_CHECK(ws[0] % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ", groups,
              " at dimension 0, but got weight of size [", shape_string(ws), "] instead");
  if (!transposed) {
    EMBER_CHECK(input.size(1) == ws[1] * groups, "Given groups=", groups, ", weight of size ", shape_string(ws),
                ", expected input", shape_string(input.sizes()), " to have ", ws[1] * groups,
                " channels, but got ", input.size(1), " channels instead");
    EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == ws[0]), "Given weight of size ",
                shape_string(ws), ", expected bias to be 1-dimensional with ", ws[0],
                " elements, but got bias of size ", shape_string(bias.sizes()), " instead");
    bool fits = true;
    std::string in_s, k_s;
    for (int64_t d = 0; d < dims; ++d) {
      int64_t padded = input.size(2 + d) + 2 * a.padding[d];
      int64_t span = a.dilation[d] * (ws[2 + d] - 1) + 1;
      fits = fits && padded >= span;
      in_s += (d ? " x " : "") + std::to_string(padded);
      k_s += (d ? " x " : "") + std::to_string(span);
    }
    EMBER_CHECK(fits, "Calculated padded input size per channel: (", in_s, "). Kernel size: (", k_s,
                "). Kernel size can't be greater than actual input size");
  } else {
    EMBER_CHECK(input.size(1) == ws[0], "Given transposed=1, weight of size ", shape_string(ws),
                ", expected input", shape_string(input.sizes()), " to have ", ws[0], " channels, but got ",
                input.size(1), " channels instead");
    EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == ws[1] * groups),
                "Given transposed=1, weight of size ", shape_string(ws), ", expected bias to be 1-dimensional with ",
                ws[1] * groups, " elements, but got bias of size ", shape_string(bias.sizes()), " instead");
    if (dims == 2) {
      bool ok = true;
      for (int64_t d = 0; d < 2; ++d) {
        ok = ok && (a.output_padding[d] < a.stride[d] || a.output_padding[d] < a.dilation[d]);
      }
      EMBER_CHECK(ok, "output padding must be smaller than either stride or dilation, but got output_padding_height: ",
                  a.output_padding[0], " output_padding_width: ", a.output_padding[1], " stride_height: ",
                  a.stride[0], " stride_width: ", a.stride[1], " dilation_height: ", a.dilation[0],
                  " dilation_width: ", a.dilation[1]);
    } else {
      EMBER_CHECK(a.output_padding[0] < a.stride[0] || a.output_padding[0] < a.dilation[0],
                  "output padding must be smaller than either stride or dilation, but got output_padding: ",
                  a.output_padding[0], " stride: ", a.stride[0], " dilation: ", a.dilation[0]);
    }
  }
  EMBER_CHECK(weight.dtype() == input.dtype(), "expected scalar type ", scalar_type_name(input.dtype()),
              " but found ", scalar_type_name(weight.dtype()));
  EMBER_CHECK(!bias.defined() || bias.dtype() == input.dtype(), "Input type (", cpp_type_name(input.dtype()),
              ") and bias type (", cpp_type_name(bias.dtype()), ") should be the same");
  EMBER_CHECK_TYPE(NotImplementedError, dims <= 2, "ember: ", dims, "-d convolution is not implemented");
  EMBER_CHECK_TYPE(NotImplementedError, input.dtype() != ScalarType::Bool, "\"",
                   transposed ? "slow_conv_transpose2d_out_cpu" : "slow_conv2d_cpu", "\" not implemented for 'Bool'");
  return a;
}

// The geometry of a 1-d or 2-d convolution on 4-d (or 3-d, for 1-d) tensors.
Geometry geometry(IntArrayRef in, IntArrayRef w, const ConvArgs& a) {
  const bool one_d = w.size() == 3;
  auto at = [&](IntArrayRef s, size_t d) { return one_d ? (d == 0 ? int64_t(1) : s[2]) : s[2 + d]; };
  auto p = [&](const DimVector& v, size_t d, int64_t dflt) { return one_d ? (d == 0 ? dflt : v[0]) : v[d]; };
  Geometry g{};
  g.N = in[0];
  g.G = a.groups;
  g.kh = at(w, 0);
  g.kw = at(w, 1);
  g.sh = p(a.stride, 0, 1);
  g.sw = p(a.stride, 1, 1);
  g.ph = p(a.padding, 0, 0);
  g.pw = p(a.padding, 1, 0);
  g.dh = p(a.dilation, 0, 1);
  g.dw = p(a.dilation, 1, 1);
  const int64_t ih = at(in, 0), iw = at(in, 1);
  if (!a.transposed) {
    g.C = in[1] / a.groups;
    g.H = ih;
    g.W = iw;
    g.O = w[0] / a.groups;
    g.OH = (ih + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
    g.OW = (iw + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  } else {
    // X is the output here, Y the input.
    g.O = in[1] / a.groups;
    g.OH = ih;
    g.OW = iw;
    g.C = w[1];
    g.H = (ih - 1) * g.sh - 2 * g.ph + g.dh * (g.kh - 1) + p(a.output_padding, 0, 0) + 1;
    g.W = (iw - 1) * g.sw - 2 * g.pw + g.dw * (g.kw - 1) + p(a.output_padding, 1, 0) + 1;
  }
  return g;
}

DimVector image_shape(const Geometry& g, bool one_d, bool large) {
  int64_t ch = (large ? g.C : g.O) * g.G;
  if (one_d) return {g.N, ch, large ? g.W : g.OW};
  return {g.N, ch, large ? g.H : g.OH, large ? g.W : g.OW};
}

bool is_reduced_float(ScalarType t) { return t == ScalarType::Half || t == ScalarType::BFloat16; }

Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

}  // namespace

Tensor convolution_cpu(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias_opt,
                       IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                       IntArrayRef output_padding, int64_t groups) {
  Tensor bias = opt(bias_opt);
  ConvArgs a = check_conv(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
  const ScalarType dtype = input.dtype();
  if (is_reduced_float(dtype)) {
    // 16-bit floats compute in float and round once at the end.
    Tensor b32 = bias.defined() ? bias.to(ScalarType::Float) : Tensor();
    return convolution_cpu(input.to(ScalarType::Float), weight.to(ScalarType::Float),
                           b32.defined() ? std::optional<Tensor>(b32) : std::nullopt, stride, padding, dilation,
                           transposed, output_padding, groups)
        .to(dtype);
  }
  const bool one_d = weight.dim() == 3;
  Geometry g = geometry(input.sizes(), weight.sizes(), a);
  if (transposed) {
    EMBER_CHECK(g.H > 0 && g.W > 0, "Given input size per channel: (", g.OH, " x ", g.OW,
                "). Calculated output size per channel: (", g.H, " x ", g.W, "). Output size is too small");
  }
  Tensor x = input.contiguous(), w = weight.contiguous();
  Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  Tensor out = ember::empty(image_shape(g, one_d, transposed), dtype, input.device());
  if (out.numel() == 0) return out;
  dispatch_conv_types(dtype, transposed ? "slow_conv_transpose2d_out_cpu" : "slow_conv2d_cpu", [&](auto v) {
    using T = decltype(v);
    const T* bp = b.defined() ? static_cast<const T*>(b.data_ptr()) : nullptr;
    if (!transposed) {
      conv_lower<T>(g, static_cast<const T*>(x.data_ptr()), static_cast<const T*>(w.data_ptr()), bp,
                    static_cast<T*>(out.data_ptr()));
    } else {
      conv_raise<T>(g, static_cast<const T*>(x.data_ptr()), static_cast<const T*>(w.data_ptr()), bp,
                    static_cast<T*>(out.data_ptr()));
    }
  });
  return out;
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward_cpu(const Tensor& grad_output, const Tensor& input,
                                                            const Tensor& weight, IntArrayRef stride,
                                                            IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                                            IntArrayRef output_padding, int64_t groups,
                                                            std::array<bool, 3> mask) {
  ConvArgs a = check_conv(input, weight, Tensor(), stride, padding, dilation, transposed, output_padding, groups);
  const ScalarType dtype = input.dtype();
  if (is_reduced_float(dtype)) {
    auto r = convolution_backward_cpu(grad_output.to(ScalarType::Float), input.to(ScalarType::Float),
                                      weight.to(ScalarType::Float), stride, padding, dilation, transposed,
                                      output_padding, groups, mask);
    auto back = [&](const Tensor& t) { return t.defined() ? t.to(dtype) : t; };
    return {back(std::get<0>(r)), back(std::get<1>(r)), back(std::get<2>(r))};
  }
  Geometry g = geometry(input.sizes(), weight.sizes(), a);
  Tensor gy = grad_output.to(dtype).contiguous(), x = input.contiguous(), w = weight.contiguous();
  Tensor gx, gw, gb;
  if (mask[0]) gx = ember::empty(input.sizes(), dtype, input.device());
  if (mask[1]) gw = ember::empty(weight.sizes(), dtype, weight.device());
  if (mask[2]) gb = ember::empty({transposed ? g.C * g.G : g.O * g.G}, dtype, weight.device());
  dispatch_conv_types(dtype, transposed ? "slow_conv_transpose2d_backward_out_cpu" : "slow_conv2d_backward_out_cpu",
                      [&](auto v) {
    using T = decltype(v);
    auto p = [](const Tensor& t) { return static_cast<T*>(t.data_ptr()); };
    const T *xp = p(x), *wp = p(w), *gyp = p(gy);
    if (!transposed) {
      if (gx.defined() && gx.numel() > 0) conv_raise<T>(g, gyp, wp, nullptr, p(gx));
      if (gw.defined()) {
        conv_weight<T>(g, xp, gyp, p(gw), gb.defined() ? p(gb) : nullptr);
      } else if (gb.defined()) {
        channel_sums<T>(gyp, g.N, g.G * g.O, g.OH * g.OW, p(gb));
      }
    } else {
      // Transposed: the input is Y, grad_output is X.
      if (gx.defined() && gx.numel() > 0) conv_lower<T>(g, gyp, wp, nullptr, p(gx));
      if (gw.defined()) conv_weight<T>(g, gyp, xp, p(gw), nullptr);
      if (gb.defined()) channel_sums<T>(gyp, g.N, g.G * g.C, g.H * g.W, p(gb));
    }
  });
  return {gx, gw, gb};
}

// ---- front ends ------------------------------------------------------------------------

namespace {

// Adds a batch dimension to unbatched input; returns whether it did.
bool batchify(Tensor& input, int64_t dims, const char* name) {
  const int64_t nd = input.dim();
  EMBER_CHECK(nd == dims + 1 || nd == dims + 2, "Expected ", dims + 1, "D (unbatched) or ", dims + 2,
              "D (batched) input to ", name, ", but got input of size: ", shape_string(input.sizes()));
  if (nd == dims + 1) {
    input = input.unsqueeze(0);
    return true;
  }
  return false;
}

Tensor unbatch(const Tensor& out) {
  DimVector s(out.sizes());
  s.erase(0);
  return out.reshape(s);
}

// padding="same"/"valid": symmetric zero padding where the total is even; an
// odd total pads one more on the right (computed as one more on both sides and
// dropping the first output position).
Tensor conv_padding_str(const Tensor& input_in, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, const std::string& padding, IntArrayRef dilation, int64_t groups,
                        int64_t dims, const char* name) {
  Tensor input = input_in;
  bool unbatched = batchify(input, dims, name);
  DimVector pad(size_t(dims), 0);
  std::vector<int64_t> trim;
  if (padding == "same") {
    for (int64_t s : stride) EMBER_CHECK(s == 1, "padding='same' is not supported for strided convolutions");
    DimVector dil = expand_param(dilation, "dilation", dims);
    EMBER_CHECK(weight.dim() == dims + 2, "expected stride to be a single integer value or a list of ",
                weight.dim() - 2, " values to match the convolution dimensions, but got stride=",
                shape_string(stride));
    for (int64_t d = 0; d < dims; ++d) {
      int64_t total = dil[d] * (weight.size(2 + d) - 1);
      pad[d] = (total + 1) / 2;
      if (total % 2) trim.push_back(d);
    }
  } else {
    EMBER_CHECK(padding == "valid", "Invalid padding string: '", padding, "'");
  }
  Tensor out = ember::convolution(input, weight, bias, stride, pad, dilation, false, {0}, groups);
  for (int64_t d : trim) out = out.narrow(2 + d, 1, out.size(2 + d) - 1);
  return unbatched ? unbatch(out) : out;
}

Tensor conv_nd(const Tensor& input_in, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
               IntArrayRef padding, IntArrayRef dilation, int64_t groups, int64_t dims, const char* name) {
  Tensor input = input_in;
  bool unbatched = batchify(input, dims, name);
  Tensor out = ember::convolution(input, weight, bias, stride, padding, dilation, false, {0}, groups);
  return unbatched ? unbatch(out) : out;
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d");
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d");
}

Tensor conv1d_padding(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                      IntArrayRef stride, const std::string& padding, IntArrayRef dilation, int64_t groups) {
  return conv_padding_str(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d");
}

Tensor conv2d_padding(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                      IntArrayRef stride, const std::string& padding, IntArrayRef dilation, int64_t groups) {
  return conv_padding_str(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d");
}

Tensor conv_transpose2d(const Tensor& input_in, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  Tensor input = input_in;
  bool unbatched = batchify(input, 2, "conv_transpose2d");
  Tensor out = ember::convolution(input, weight, bias, stride, padding, dilation, true, output_padding, groups);
  return unbatched ? unbatch(out) : out;
}

}  // namespace native
}  // namespace ember
