// Convolution on the CPU (forward and backward, plain and transposed, 1-d and
// 2-d; 3-d through oneDNN), and the conv1d/conv2d/conv_transpose2d front ends.
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
#include <complex>
#include <cstring>
#include <memory>
#include <mutex>

#include "ember/cpu/Blas.h"
#include "ember/cpu/ConvUtils.h"
#include "ember/cpu/NNStubs.h"
#include "ember/cpu/OneDnnMatmul.h"
#include "ember/cpu/OpMessages.h"
#include "ember/cpu/ReducedFloat.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember {
namespace cpu {
EMBER_DEFINE_DISPATCH(Im2ColFn, im2col_stub);
EMBER_DEFINE_DISPATCH(Col2ImFn, col2im_stub);
EMBER_DEFINE_DISPATCH(Im2ColWideFn, im2col_wide_stub);
EMBER_DEFINE_DISPATCH(Col2ImWideFn, col2im_wide_stub);
}  // namespace cpu

namespace native {
namespace {

using conv::Geometry;

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
    default: throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(t), "'"));
  }
}

// Sums of bias gradients: double for floating types, int64 for integers.
template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

// x[n][c][:] += bias[c] for x of N x channels x spatial.
template <typename T>
void add_channel_bias(T* x, int64_t N, int64_t channels, int64_t spatial, const T* bias) {
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      T* row = x + (n * channels + c) * spatial;
      for (int64_t i = 0; i < spatial; ++i) row[i] += bias[c];
    }
  }
}

// Note [Which convolutions oneDNN computes]
// PyTorch's rule for float32 (ConvParams::use_mkldnn), so each problem gets
// the method, and so the bits, PyTorch gives it: oneDNN for groups, kernels
// larger than 3x3 both ways, a batch, or an input over 20480 elements, its
// own im2col products otherwise; a 1x1 unit-stride kernel on one thread with
// a batch under 16 stays on im2col too. Degenerate problems never go.
bool onednn_ok(const Geometry& g, bool transposed) {
  if (g.N <= 0 || g.K() <= 0 || g.O <= 0) return false;
  const int64_t in_elements =
      g.N * g.G * (transposed ? g.O * g.OH * g.OW : g.C * g.H * g.W);  // the op's input: the small image if transposed
  const bool strided = g.sh != 1 || g.sw != 1, dilated = g.dh != 1 || g.dw != 1;
  if (!strided && !dilated && g.N < 16 && g.kh == 1 && g.kw == 1 && get_num_threads() <= 1) return false;
  return g.G > 1 || (g.kh > 3 && g.kw > 3) || g.N > 1 || in_elements > 20480;
}

template <typename F>
void dispatch_float_types(ScalarType t, const char* name, const F& f) {
  switch (t) {
    case ScalarType::Float: return f(float{});
    case ScalarType::Double: return f(double{});
    default: throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(t), "'"));
  }
}

// ---- the three products of Note [Convolution as GEMM] ---------------------------------
//
// Note [Wide im2col]
// With unit strides, col can be built from whole rows of the zero-padded
// image Xp (C x Hp x Wp): output position p = oh*Wp + ow on a grid Wp wide
// reads Xp[c][i*dh*Wp + j*dw + p], so each col row is one contiguous slice
// of Xp. The grid has Wp - OW extra columns per row whose results are
// dropped (lower) or which carry zeros (raise, weight). It trades a little
// GEMM work and one padded copy of X for one long copy per col row instead of
// OH short ones, which is what small images need.

// Unit strides and rows short enough that per-row copies would dominate.
void choose_layout(Geometry& g) { g.wide = !g.direct() && g.sh == 1 && g.sw == 1 && g.OW < 32; }

// Per-thread scratch: col, the padded image and a band of Y on the wide grid.
template <typename T>
struct Workspace {
  std::unique_ptr<T[]> col, xpad, ywide;
  explicit Workspace(const Geometry& g) {
    const int64_t band = g.band();
    if (!g.direct())
      col.reset(new T[std::max<int64_t>(g.K() * g.cols(0, std::min(band, std::max<int64_t>(g.OH, 1))), 1)]);
    if (g.padded()) xpad.reset(new T[std::max<int64_t>(g.C * g.Hp() * g.Wp(), 1)]);
    if (g.wide) ywide.reset(new T[std::max<int64_t>(g.O * g.cols(0, std::min(band, std::max<int64_t>(g.OH, 1))), 1)]);
  }
};

// Xp = X with ph/pw rows/columns of zeros around each channel.
template <typename T>
void pad_image(const Geometry& g, const T* x, T* xp) {
  const int64_t Hp = g.Hp(), Wp = g.Wp();
  std::fill(xp, xp + g.C * Hp * Wp, T(0));
  for (int64_t c = 0; c < g.C; ++c) {
    for (int64_t h = 0; h < g.H; ++h) {
      std::copy(x + (c * g.H + h) * g.W, x + (c * g.H + h + 1) * g.W, xp + (c * Hp + h + g.ph) * Wp + g.pw);
    }
  }
}

// yw[o][(oh - r0)*Wp + ow] = y[o][oh][ow], zeros in the extra columns.
template <typename T>
void widen_band(const Geometry& g, const T* y, int64_t r0, int64_t r1, T* yw) {
  const int64_t L = g.cols(r0, r1), Wp = g.Wp(), OHW = g.OH * g.OW;
  for (int64_t o = 0; o < g.O; ++o) {
    T* dst = yw + o * L;
    for (int64_t oh = r0; oh < r1; ++oh) {
      T* row = dst + (oh - r0) * Wp;
      std::copy(y + o * OHW + oh * g.OW, y + o * OHW + (oh + 1) * g.OW, row);
      if (oh + 1 < r1) std::fill(row + g.OW, row + Wp, T(0));
    }
  }
}

// Runs body(n, workspace) for every sample, spreading samples over threads
// (single-threaded BLAS inside) when there are several.
template <typename T, typename Body>
void for_each_sample(const Geometry& g, const Body& body) {
  if (g.N > 1 && get_num_threads() > 1) {
    blas::set_num_threads(1);  // see Note [BLAS threads]
    parallel_for(0, g.N, 1, [&](int64_t b, int64_t e) {
      Workspace<T> ws(g);
      for (int64_t n = b; n < e; ++n) body(n, ws);
    });
  } else {
    Workspace<T> ws(g);
    for (int64_t n = 0; n < g.N; ++n) body(n, ws);
  }
}

// Y[n] = W @ im2col(X[n]) (+ bias[o]).
template <typename T>
void conv_lower(const Geometry& g, const T* X, const T* Wt, const T* bias, T* Y) {
  const int64_t K = g.K(), OHW = g.OH * g.OW, HW = g.H * g.W, band = g.band();
  constexpr ScalarType dt = CppTypeToScalarType<T>::value;
  for_each_sample<T>(g, [&](int64_t n, Workspace<T>& ws) {
    for (int64_t grp = 0; grp < g.G; ++grp) {
      const T* x = X + (n * g.G + grp) * g.C * HW;
      const T* w = Wt + grp * g.O * K;
      T* y = Y + (n * g.G + grp) * g.O * OHW;
      if (K == 0) {
        for (int64_t o = 0; o < g.O; ++o) std::fill(y + o * OHW, y + (o + 1) * OHW, bias ? bias[grp * g.O + o] : T(0));
        continue;
      }
      if (g.direct()) {
        if (bias) {
          for (int64_t o = 0; o < g.O; ++o) std::fill(y + o * OHW, y + (o + 1) * OHW, bias[grp * g.O + o]);
        }
        gemm<T>(false, false, g.O, OHW, K, w, K, x, HW, bias != nullptr, y, OHW);
        continue;
      }
      const T* xp = x;
      if (g.padded()) {
        pad_image(g, x, ws.xpad.get());
        xp = ws.xpad.get();
      }
      for (int64_t r0 = 0; r0 < g.OH; r0 += band) {
        const int64_t r1 = std::min(g.OH, r0 + band), cols = g.cols(r0, r1);
        if (g.wide) {
          cpu::im2col_wide_stub.get()(dt, xp + r0 * g.Wp(), ws.col.get(), g.wide_args(r0, r1));
          T* yw = ws.ywide.get();
          gemm<T>(false, false, g.O, cols, K, w, K, ws.col.get(), cols, false, yw, cols);
          for (int64_t o = 0; o < g.O; ++o) {
            const T b = bias ? bias[grp * g.O + o] : T(0);
            for (int64_t oh = r0; oh < r1; ++oh) {
              const T* src = yw + o * cols + (oh - r0) * g.Wp();
              T* dst = y + o * OHW + oh * g.OW;
              for (int64_t ow = 0; ow < g.OW; ++ow) dst[ow] = src[ow] + b;
            }
          }
        } else {
          if (bias) {
            for (int64_t o = 0; o < g.O; ++o) {
              std::fill(y + o * OHW + r0 * g.OW, y + o * OHW + r1 * g.OW, bias[grp * g.O + o]);
            }
          }
          cpu::im2col_stub.get()(dt, x, ws.col.get(), g.im2col_args(r0, r1));
          gemm<T>(false, false, g.O, cols, K, w, K, ws.col.get(), cols, bias != nullptr, y + r0 * g.OW, OHW);
        }
      }
    }
  });
}

// X[n] = col2im(W^T @ Y[n]) (+ bias[c]).
template <typename T>
void conv_raise(const Geometry& g, const T* Y, const T* Wt, const T* bias, T* X) {
  const int64_t K = g.K(), OHW = g.OH * g.OW, HW = g.H * g.W, band = g.band();
  constexpr ScalarType dt = CppTypeToScalarType<T>::value;
  for_each_sample<T>(g, [&](int64_t n, Workspace<T>& ws) {
    for (int64_t grp = 0; grp < g.G; ++grp) {
      T* x = X + (n * g.G + grp) * g.C * HW;
      const T* w = Wt + grp * g.O * K;
      const T* y = Y + (n * g.G + grp) * g.O * OHW;
      // Accumulate into Xp (padded) or X itself, starting from zero.
      T* acc = g.padded() ? ws.xpad.get() : x;
      const int64_t acc_size = g.padded() ? g.C * g.Hp() * g.Wp() : g.C * HW;
      std::fill(acc, acc + acc_size, T(0));
      if (K > 0 && g.O > 0) {
        if (g.direct()) {
          gemm<T>(true, false, K, HW, g.O, w, K, y, OHW, true, x, HW);
        } else {
          for (int64_t r0 = 0; r0 < g.OH; r0 += band) {
            const int64_t r1 = std::min(g.OH, r0 + band), cols = g.cols(r0, r1);
            if (g.wide) {
              widen_band(g, y, r0, r1, ws.ywide.get());
              gemm<T>(true, false, K, cols, g.O, w, K, ws.ywide.get(), cols, false, ws.col.get(), cols);
              cpu::col2im_wide_stub.get()(dt, ws.col.get(), acc + r0 * g.Wp(), g.wide_args(r0, r1));
            } else {
              gemm<T>(true, false, K, cols, g.O, w, K, y + r0 * g.OW, OHW, false, ws.col.get(), cols);
              cpu::col2im_stub.get()(dt, ws.col.get(), x, g.im2col_args(r0, r1));
            }
          }
        }
      }
      if (g.padded()) {
        const int64_t Hp = g.Hp(), Wp = g.Wp();
        for (int64_t c = 0; c < g.C; ++c) {
          for (int64_t h = 0; h < g.H; ++h) {
            const T* src = acc + (c * Hp + h + g.ph) * Wp + g.pw;
            std::copy(src, src + g.W, x + (c * g.H + h) * g.W);
          }
        }
      }
      if (bias) {
        for (int64_t c = 0; c < g.C; ++c) {
          const T b = bias[grp * g.C + c];
          for (int64_t i = 0; i < HW; ++i) x[c * HW + i] += b;
        }
      }
    }
  });
}

// dW = sum_n Y[n] @ im2col(X[n])^T; dbias (over the small channels, if given) = sum of Y.
template <typename T>
void conv_weight(const Geometry& g, const T* X, const T* Y, T* dW, T* dbias) {
  const int64_t K = g.K(), OHW = g.OH * g.OW, HW = g.H * g.W, band = g.band();
  const int64_t wsize = g.G * g.O * K, nb = g.G * g.O;
  constexpr ScalarType dt = CppTypeToScalarType<T>::value;
  std::fill(dW, dW + wsize, T(0));
  if (dbias) std::fill(dbias, dbias + nb, T(0));
  std::mutex mu;
  auto run = [&](int64_t b, int64_t e) {
    Workspace<T> ws(g);
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
        const T* xp = x;
        if (g.padded()) {
          pad_image(g, x, ws.xpad.get());
          xp = ws.xpad.get();
        }
        for (int64_t r0 = 0; r0 < g.OH; r0 += band) {
          const int64_t r1 = std::min(g.OH, r0 + band), cols = g.cols(r0, r1);
          if (g.wide) {
            cpu::im2col_wide_stub.get()(dt, xp + r0 * g.Wp(), ws.col.get(), g.wide_args(r0, r1));
            widen_band(g, y, r0, r1, ws.ywide.get());
            gemm<T>(false, true, g.O, K, cols, ws.ywide.get(), cols, ws.col.get(), cols, true, w, K);
          } else {
            cpu::im2col_stub.get()(dt, x, ws.col.get(), g.im2col_args(r0, r1));
            gemm<T>(false, true, g.O, K, cols, y + r0 * g.OW, OHW, ws.col.get(), cols, true, w, K);
          }
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
  EMBER_CHECK(static_cast<int64_t>(p.size()) == dims, "expected ", name, " to be a single integer value or a list of ",
              dims, " values to match the convolution dimensions, but got ", name, "=", shape_string(p));
  return DimVector(p);
}

ConvArgs check_conv(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                    IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                    int64_t groups) {
  // PyTorch compares a (non-transposed) convolution's input and bias types before anything else.
  EMBER_CHECK(transposed || !bias.defined() || bias.dtype() == input.dtype(), "Input type (",
              cpp_type_name(input.dtype()), ") and bias type (", cpp_type_name(bias.dtype()), ") should be the same");
  const int64_t k = weight.dim();
  EMBER_CHECK(k >= 3, "weight should have at least three dimensions");
  EMBER_CHECK(groups > 0, "non-positive groups is not supported");
  const int64_t dims = k - 2;
  ConvArgs a{expand_param(stride, "stride", dims),
             expand_param(padding, "padding", dims),
             expand_param(dilation, "dilation", dims),
             expand_param(output_padding, "output_padding", dims),
             transposed,
             groups};
  for (int64_t d = 0; d < dims; ++d) {
    EMBER_CHECK(a.padding[d] >= 0, "negative padding is not supported");
    EMBER_CHECK(a.output_padding[d] >= 0, "negative output_padding is not supported");
    EMBER_CHECK(a.stride[d] > 0, "non-positive stride is not supported");
    EMBER_CHECK(a.dilation[d] > 0, "non-positive dilation is not supported");
  }
  IntArrayRef ws = weight.sizes();
  EMBER_CHECK(input.dim() == k, "Expected ", k, "-dimensional input for ", k, "-dimensional weight ", shape_string(ws),
              ", but got ", input.dim(), "-dimensional input of size ", shape_string(input.sizes()), " instead");
  EMBER_CHECK(ws[0] >= groups, "Given groups=", groups, ", expected weight to be at least ", groups,
              " at dimension 0, but got weight of size ", shape_string(ws), " instead");
  EMBER_CHECK(ws[0] % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ", groups,
              " at dimension 0, but got weight of size [", shape_string(ws), "] instead");
  if (!transposed) {
    EMBER_CHECK(input.size(1) == ws[1] * groups, "Given groups=", groups, ", weight of size ", shape_string(ws),
                ", expected input", shape_string(input.sizes()), " to have ", ws[1] * groups, " channels, but got ",
                input.size(1), " channels instead");
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
    // PyTorch's meta function takes the output channels from the weight and does not check the input's.
    EMBER_CHECK(input.is_meta() || input.size(1) == ws[0], "Given transposed=1, weight of size ", shape_string(ws),
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
                  a.output_padding[0], " output_padding_width: ", a.output_padding[1], " stride_height: ", a.stride[0],
                  " stride_width: ", a.stride[1], " dilation_height: ", a.dilation[0],
                  " dilation_width: ", a.dilation[1]);
    } else {
      for (int64_t d = 0; d < dims; ++d) {
        EMBER_CHECK(a.output_padding[d] < a.stride[d] || a.output_padding[d] < a.dilation[d],
                    "output padding must be smaller than either stride or dilation, but got output_padding: ",
                    a.output_padding[d], " stride: ", a.stride[d], " dilation: ", a.dilation[d]);
      }
    }
  }
  EMBER_CHECK(weight.dtype() == input.dtype(), "expected scalar type ", dtype_message_name(input.dtype()),
              " but found ", dtype_message_name(weight.dtype()));
  EMBER_CHECK(!bias.defined() || bias.dtype() == input.dtype(), "Input type (", cpp_type_name(input.dtype()),
              ") and bias type (", cpp_type_name(bias.dtype()), ") should be the same");
  EMBER_CHECK_TYPE(NotImplementedError, dims <= 3, "ember: ", dims, "-d convolution is not implemented");
  // The CPU kernels' dtype checks (PyTorch's meta function has none).
  if (input.is_meta()) return a;
  EMBER_CHECK_TYPE(NotImplementedError, input.dtype() != ScalarType::Bool, "\"",
                   transposed ? "slow_conv_transpose2d_out_cpu" : "slow_conv2d_cpu", "\" not implemented for 'Bool'");
  // Transposed convolution takes floating types and int64 only (as PyTorch).
  EMBER_CHECK_TYPE(NotImplementedError,
                   !transposed || is_floating_type(input.dtype()) || input.dtype() == ScalarType::Long,
                   "\"slow_conv_transpose2d_out_cpu\" not implemented for '", dtype_message_name(input.dtype()), "'");
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
  choose_layout(g);
  return g;
}

DimVector image_shape(const Geometry& g, bool one_d, bool large) {
  int64_t ch = (large ? g.C : g.O) * g.G;
  if (one_d) return {g.N, ch, large ? g.W : g.OW};
  return {g.N, ch, large ? g.H : g.OH, large ? g.W : g.OW};
}

Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

// Note [3-d transposed convolution]
// A 5-d transposed convolution runs as oneDNN's deconvolution, float32 only
// (16-bit floats widen first); nn.functional.conv_transpose3d takes this path
// when oneDNN is built in and its composite otherwise.
conv::Shape3d deconv3d_geometry(const Tensor& input, const Tensor& weight, const ConvArgs& a) {
  conv::Shape3d g{};
  g.N = input.size(0);
  g.G = a.groups;
  g.IC = input.size(1);
  g.OC = weight.size(1) * a.groups;
  for (int d = 0; d < 3; ++d) {
    g.in[d] = input.size(2 + d);
    g.k[d] = weight.size(2 + d);
    g.stride[d] = a.stride[d];
    g.pad[d] = a.padding[d];
    g.dil[d] = a.dilation[d];
    g.out[d] = (g.in[d] - 1) * g.stride[d] - 2 * g.pad[d] + g.dil[d] * (g.k[d] - 1) + a.output_padding[d] + 1;
    EMBER_CHECK(g.out[d] > 0, "Given input size per channel: (", g.in[0], " x ", g.in[1], " x ", g.in[2],
                "). Calculated output size per channel is too small");
  }
  return g;
}

// Note [Convolution bias gradients]
// PyTorch sums grad_output over batch and space: with its own kernels by its
// sum (over dims 0, 2, 3), under oneDNN in oneDNN's order. The oneDNN of
// PyTorch's wheel (3.12) gives each thread a balanced run of images, which it
// adds one element after another, and adds the threads' sums in order (a
// transposed convolution: one run); the oneDNN of Ember's build orders its
// own sum otherwise, so Ember adds in 3.12's order itself. (3.12's kernels
// for inputs of fewer than 4 channels, grouped and dilated convolutions split
// the work otherwise: on several threads those can still differ in the last
// bit.)

// The bias gradient of N images of channels x (slices x plane), summed in
// 3.12's order: the N * slices slices split into `runs` balanced runs (the
// first ones one slice longer), each added element by element, then the runs
// in order.
Tensor onednn_bias_sum(const Tensor& gy, int64_t N, int64_t channels, int64_t slices, int64_t plane, int64_t runs) {
  const Tensor y = gy.contiguous();
  Tensor out = ember::empty({channels}, gy.dtype(), gy.device());
  const float* yp = static_cast<const float*>(y.data_ptr());
  float* o = static_cast<float*>(out.data_ptr());
  const int64_t units = N * slices, base = units / runs, extra = units % runs;
  parallel_for(0, channels, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      float total = 0;
      for (int64_t r = 0; r < runs; ++r) {
        const int64_t u0 = r * base + std::min(r, extra), u1 = u0 + base + (r < extra ? 1 : 0);
        float run = 0;
        for (int64_t u = u0; u < u1; ++u) {
          const float* row = yp + ((u / slices) * channels + c) * slices * plane + (u % slices) * plane;
          for (int64_t i = 0; i < plane; ++i) run += row[i];
        }
        total += run;
      }
      o[c] = total;
    }
  });
  return out;
}

// Note [3-d convolution bias gradients]
// oneDNN 3.12's avx512 kernel for the weight gradient of a 3-d convolution
// (one group, a kernel larger than 1x1x1, no dilation, 1-3 or at least 16
// input channels) splits the N * OD depth slices of the batch into runs, as
// many as its cost model (jit_avx512_common_conv_bwd_weights_kernel_f32_t::
// balance) finds cheapest against splitting over channel blocks: fewest
// bytes moved per thread, then fewest blocks per thread. bias_runs_3d
// replays that model (one thread is always one run). Its other kernels are
// taken to split whole images, as in 2-d.
int64_t bias_runs_3d(const conv::Shape3d& g, int64_t threads) {
  auto div_up = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  if (threads < g.G) return 1;
  const int64_t nthr = threads / g.G;
  const int64_t ic = g.IC / g.G, oc = g.OC / g.G;
  const bool first = ic < 16 && g.G == 1;  // its "first convolution": ic unblocked
  const int64_t ic_block = first ? ic : 16, nb_ic = first ? 1 : div_up(ic, 16), nb_oc = div_up(oc, 16);
  const int64_t od = g.out[0], ksize = g.k[0] * g.k[1] * g.k[2];
  auto mem = [&](int64_t mb, int64_t ocb, int64_t icb) {
    return div_up(g.N, mb) * div_up(nb_ic, icb) * ic_block * g.in[1] * g.in[2] * g.in[0] / g.stride[0] / g.stride[1] /
               g.stride[2] +
           div_up(g.N, mb) * div_up(nb_oc, ocb) * 16 * g.out[1] * g.out[2] * od +
           8 * div_up(nb_oc, ocb) * div_up(nb_ic, icb) * ksize * ic_block * 16;
  };
  auto comp = [&](int64_t mb, int64_t ocb, int64_t icb) {
    return div_up(g.N, mb) * div_up(nb_oc, ocb) * div_up(nb_ic, icb);
  };
  int64_t best_mb = 1, best_oc = 1, best_ic = 1;
  int64_t best_mem = mem(1, 1, 1);
  const int64_t mb_max = std::min(nthr, g.N * od);
  for (int64_t mb = 1; mb <= mb_max; ++mb) {
    for (int64_t ocb = 1; ocb <= std::min(nthr / mb, nb_oc); ++ocb) {
      const int64_t icb = std::min(nthr / mb / ocb, nb_ic), m = mem(mb, ocb, icb);
      if (m <= best_mem) best_mem = m, best_mb = mb, best_oc = ocb, best_ic = icb;
    }
  }
  int64_t best_comp = comp(best_mb, best_oc, best_ic);
  for (int64_t mb = 1; mb <= mb_max; ++mb) {
    for (int64_t ocb = 1; ocb <= std::min(nthr / mb, nb_oc); ++ocb) {
      const int64_t icb = std::min(nthr / mb / ocb, nb_ic), c = comp(mb, ocb, icb);
      const bool cheaper = c <= best_comp && double(mem(mb, ocb, icb)) < 1.1 * double(best_mem);
      if (cheaper || 4 * c <= 3 * best_comp) best_comp = c, best_mb = mb, best_oc = ocb, best_ic = icb;
    }
  }
  if (best_mb > threads / 2 && best_mb < threads) best_mb = std::min(g.N * od, threads);
  return best_mb;
}

// Note [3-d convolution]
// A float32 5-d convolution runs as one oneDNN convolution, forward and both
// gradients, as PyTorch's mkldnn_convolution does; nn.functional.conv3d sends
// the problems PyTorch gives oneDNN here (Note [Which convolutions oneDNN
// computes]) and sums 2-d convolutions over the depth taps otherwise.
conv::Shape3d conv3d_geometry(const Tensor& input, const Tensor& weight, const ConvArgs& a) {
  conv::Shape3d g{};
  g.N = input.size(0);
  g.G = a.groups;
  g.IC = input.size(1);
  g.OC = weight.size(0);
  for (int d = 0; d < 3; ++d) {
    g.in[d] = input.size(2 + d);
    g.k[d] = weight.size(2 + d);
    g.stride[d] = a.stride[d];
    g.pad[d] = a.padding[d];
    g.dil[d] = a.dilation[d];
    g.out[d] = (g.in[d] + 2 * g.pad[d] - g.dil[d] * (g.k[d] - 1) - 1) / g.stride[d] + 1;
  }
  return g;
}

[[noreturn]] void conv3d_unavailable() {
  throw NotImplementedError("3-d convolution needs oneDNN and float32 tensors in this build");
}

Tensor conv3d_cpu(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvArgs& a) {
  const conv::Shape3d g = conv3d_geometry(input, weight, a);
  Tensor out = ember::empty({g.N, g.OC, g.out[0], g.out[1], g.out[2]}, input.dtype(), input.device());
  if (out.numel() == 0 || out.is_meta() || weight.is_meta() || dispatch::is_meta_arg(bias)) return out;
  if (input.dtype() != ScalarType::Float || weight.size(1) == 0) conv3d_unavailable();
  const Tensor x = input.contiguous(), w = weight.contiguous();
  const Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  if (!conv::onednn_conv3d(g, x.data_ptr<float>(), w.data_ptr<float>(), b.defined() ? b.data_ptr<float>() : nullptr,
                           out.data_ptr<float>())) {
    conv3d_unavailable();
  }
  return out;
}

std::tuple<Tensor, Tensor, Tensor> conv3d_backward_cpu(const Tensor& grad_output, const Tensor& input,
                                                       const Tensor& weight, const ConvArgs& a,
                                                       std::array<bool, 3> mask) {
  const conv::Shape3d g = conv3d_geometry(input, weight, a);
  if (input.dtype() != ScalarType::Float || weight.size(1) == 0) conv3d_unavailable();
  const Tensor gy = grad_output.to(ScalarType::Float).contiguous(), x = input.contiguous(), w = weight.contiguous();
  Tensor gx, gw, gb;
  const bool empty = gy.numel() == 0;
  if (mask[0]) {
    gx = ember::zeros(input.sizes(), ScalarType::Float, input.device());
    if (!empty && !conv::onednn_conv3d_data(g, gy.data_ptr<float>(), w.data_ptr<float>(), gx.data_ptr<float>()))
      conv3d_unavailable();
  }
  if (mask[1]) {
    gw = ember::zeros(weight.sizes(), ScalarType::Float, weight.device());
    if (!empty && !conv::onednn_conv3d_weight(g, x.data_ptr<float>(), gy.data_ptr<float>(), gw.data_ptr<float>()))
      conv3d_unavailable();
  }
  if (mask[2]) {
    const int64_t ic = g.IC / g.G, threads = get_num_threads();
    bool avx512 = g.G == 1 && (ic <= 3 || ic >= 16) && g.k[0] * g.k[1] * g.k[2] > 1;
    for (int d = 0; d < 3; ++d) avx512 = avx512 && g.dil[d] == 1;
    const int64_t plane = g.out[1] * g.out[2];
    gb = avx512 ? onednn_bias_sum(gy, g.N, g.OC, g.out[0], plane, bias_runs_3d(g, threads))
                : onednn_bias_sum(gy, g.N, g.OC, 1, g.out[0] * plane, std::clamp<int64_t>(g.N, 1, threads));
  }
  return {gx, gw, gb};
}

[[noreturn]] void deconv3d_unavailable() {
  throw NotImplementedError("3-d transposed convolution needs oneDNN and float32 tensors in this build");
}

Tensor conv_transpose3d_cpu(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvArgs& a) {
  const conv::Shape3d g = deconv3d_geometry(input, weight, a);
  Tensor out = ember::empty({g.N, g.OC, g.out[0], g.out[1], g.out[2]}, input.dtype(), input.device());
  if (out.numel() == 0 || out.is_meta() || weight.is_meta() || dispatch::is_meta_arg(bias)) return out;
  if (input.dtype() != ScalarType::Float) deconv3d_unavailable();
  const Tensor x = input.contiguous(), w = weight.contiguous();
  const Tensor b = bias.defined() ? bias.to(ScalarType::Float).contiguous() : Tensor();
  if (x.numel() == 0 || w.numel() == 0) {
    out.zero_();
    if (b.defined()) out.add_(b.view({1, g.OC, 1, 1, 1}));
    return out;
  }
  if (!conv::onednn_deconv3d(g, x.data_ptr<float>(), w.data_ptr<float>(), b.defined() ? b.data_ptr<float>() : nullptr,
                             out.data_ptr<float>())) {
    deconv3d_unavailable();
  }
  return out;
}

std::tuple<Tensor, Tensor, Tensor> conv_transpose3d_backward_cpu(const Tensor& grad_output, const Tensor& input,
                                                                 const Tensor& weight, const ConvArgs& a,
                                                                 std::array<bool, 3> mask) {
  const conv::Shape3d g = deconv3d_geometry(input, weight, a);
  if (input.dtype() != ScalarType::Float) deconv3d_unavailable();
  const Tensor gy = grad_output.to(ScalarType::Float).contiguous(), x = input.contiguous(), w = weight.contiguous();
  Tensor gx, gw, gb;
  if (mask[0]) {
    gx = ember::empty(input.sizes(), ScalarType::Float, input.device());
    if (gx.numel() > 0 &&
        !conv::onednn_deconv3d_data(g, gy.data_ptr<float>(), w.data_ptr<float>(), gx.data_ptr<float>()))
      deconv3d_unavailable();
  }
  if (mask[1] || mask[2]) {
    Tensor dw = ember::zeros(weight.sizes(), ScalarType::Float, weight.device());
    Tensor db = ember::zeros({g.OC}, ScalarType::Float, weight.device());
    if (x.numel() > 0 && gy.numel() > 0 &&
        !conv::onednn_deconv3d_weight(g, x.data_ptr<float>(), gy.data_ptr<float>(), dw.data_ptr<float>(),
                                      mask[2] ? db.data_ptr<float>() : nullptr)) {
      deconv3d_unavailable();
    }
    if (x.numel() == 0 || gy.numel() == 0) db = ember::sum(gy, std::vector<int64_t>{0, 2, 3, 4});
    if (mask[1]) gw = dw;
    if (mask[2]) gb = db;
  }
  return {gx, gw, gb};
}

// Note [16-bit convolutions through oneDNN]
// Where oneDNN has bfloat16 (float16) kernels for this CPU (PyTorch's
// mkldnn_bf16_device_check / mkldnn_fp16_device_check), PyTorch hands every
// 16-bit convolution to oneDNN, whatever its size, groups, stride or
// dilation: conv1d as a conv2d of height 1, conv_transpose as oneDNN's
// deconvolution; only a transposed one with an output_padding not below its
// stride takes its own kernel. oneDNN accumulates the exact products in
// float32 and rounds once: the output with the bias added in float32, the
// input gradient, the weight gradient summed over the batch, and the bias
// gradient, which oneDNN sums alongside the weight gradient (so it comes
// back as the data's dtype). Ember runs the same primitives on the same
// rule; elsewhere (or when oneDNN declines) 16-bit data widens to float32.
bool onednn_takes_16bit(ScalarType dtype, const Tensor& weight, const ConvArgs& a) {
  if (!onednn_takes_reduced(dtype) || weight.dim() > 4) return false;
  for (size_t d = 0; a.transposed && d < a.stride.size(); ++d) {
    if (a.output_padding[d] >= a.stride[d]) return false;
  }
  return true;
}

bool any_meta(std::initializer_list<Tensor> ts) {
  for (const Tensor& t : ts) {
    if (t.defined() && t.is_meta()) return true;
  }
  return false;
}

// The convolution on oneDNN in dtype; undefined when oneDNN declines.
Tensor convolution_16bit(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvArgs& a) {
  const ScalarType dtype = input.dtype();
  if (input.numel() == 0 || weight.numel() == 0 || any_meta({input, weight, bias})) return Tensor();
  const Geometry g = geometry(input.sizes(), weight.sizes(), a);
  if (g.H <= 0 || g.W <= 0 || g.OH <= 0 || g.OW <= 0) return Tensor();
  const Tensor x = input.contiguous(), w = weight.contiguous();
  const Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  const void* bp = b.defined() ? b.data_ptr() : nullptr;
  Tensor out = ember::empty(image_shape(g, weight.dim() == 3, a.transposed), dtype, input.device());
  const bool ok = a.transposed ? conv::onednn_deconv(g, dtype, x.data_ptr(), w.data_ptr(), bp, out.data_ptr())
                               : conv::onednn_lower(g, dtype, x.data_ptr(), w.data_ptr(), bp, out.data_ptr());
  return ok ? out : Tensor();
}

// Its gradients on oneDNN; false when oneDNN declines.
bool convolution_backward_16bit(const Tensor& grad_output, const Tensor& input, const Tensor& weight, const ConvArgs& a,
                                std::array<bool, 3> mask, Tensor& gx, Tensor& gw, Tensor& gb) {
  const ScalarType dtype = input.dtype();
  if (input.numel() == 0 || weight.numel() == 0 || grad_output.numel() == 0 || any_meta({grad_output, input, weight}))
    return false;
  const Geometry g = geometry(input.sizes(), weight.sizes(), a);
  const Tensor gy = grad_output.to(dtype).contiguous(), x = input.contiguous(), w = weight.contiguous();
  if (mask[0]) gx = ember::empty(input.sizes(), dtype, input.device());
  // oneDNN sums the bias gradient with the weight gradient's.
  if (mask[1] || mask[2]) gw = ember::empty(weight.sizes(), dtype, weight.device());
  if (mask[2]) gb = ember::empty({a.transposed ? g.G * g.C : g.G * g.O}, dtype, input.device());
  void* gbp = gb.defined() ? gb.data_ptr() : nullptr;
  if (gx.defined() && !(a.transposed ? conv::onednn_deconv_data(g, dtype, gy.data_ptr(), w.data_ptr(), gx.data_ptr())
                                     : conv::onednn_raise(g, dtype, gy.data_ptr(), w.data_ptr(), gx.data_ptr())))
    return false;
  if (gw.defined() &&
      !(a.transposed ? conv::onednn_deconv_weight(g, dtype, x.data_ptr(), gy.data_ptr(), gw.data_ptr(), gbp)
                     : conv::onednn_weight(g, dtype, x.data_ptr(), gy.data_ptr(), gw.data_ptr(), gbp)))
    return false;
  if (!mask[1]) gw = Tensor();
  return true;
}

}  // namespace

Tensor convolution_cpu(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias_opt,
                       IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                       IntArrayRef output_padding, int64_t groups) {
  Tensor bias = opt(bias_opt);
  ConvArgs a = check_conv(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
  const ScalarType dtype = input.dtype();
  if (transposed && weight.dim() == 5 && !is_reduced_float(dtype)) return conv_transpose3d_cpu(input, weight, bias, a);
  if (!transposed && weight.dim() == 5 && !is_reduced_float(dtype)) return conv3d_cpu(input, weight, bias, a);
  if (is_reduced_float(dtype) && onednn_takes_16bit(dtype, weight, a)) {
    Tensor out = convolution_16bit(input, weight, bias, a);
    if (out.defined()) return out;
  }
  if (is_reduced_float(dtype)) {
    // Elsewhere 16-bit floats compute in float and round once at the end.
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
  // No values to compute (Note [Meta tensors]); the meta kernel runs when any argument is meta.
  if (out.numel() == 0 || out.is_meta() || weight.is_meta() || dispatch::is_meta_arg(bias)) return out;
  dispatch_conv_types(dtype, transposed ? "slow_conv_transpose2d_out_cpu" : "slow_conv2d_cpu", [&](auto v) {
    using T = decltype(v);
    const T* bp = b.defined() ? static_cast<const T*>(b.data_ptr()) : nullptr;
    if constexpr (std::is_same_v<T, float>) {
      const float *xp = x.data_ptr<float>(), *wp = w.data_ptr<float>();
      float* op = out.data_ptr<float>();
      if (!transposed && onednn_ok(g, false) && conv::onednn_lower(g, ScalarType::Float, xp, wp, bp, op)) return;
      if (transposed && onednn_ok(g, true) && conv::onednn_raise(g, ScalarType::Float, xp, wp, op)) {
        if (bp) add_channel_bias(op, g.N, g.G * g.C, g.H * g.W, bp);
        return;
      }
    }
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

Tensor bias_gradient(const Tensor& gy, const Geometry& g, bool transposed, bool dnn) {
  const int64_t channels = transposed ? g.G * g.C : g.G * g.O;
  const int64_t spatial = transposed ? g.H * g.W : g.OH * g.OW;
  if (!dnn) return gy.reshape({g.N, channels, spatial}).sum(std::vector<int64_t>{0, 2});
  const int64_t runs = transposed ? 1 : std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), g.N));
  return onednn_bias_sum(gy, g.N, channels, 1, spatial, runs);
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward_cpu(const Tensor& grad_output, const Tensor& input,
                                                            const Tensor& weight, IntArrayRef stride,
                                                            IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                                            IntArrayRef output_padding, int64_t groups,
                                                            std::array<bool, 3> mask) {
  ConvArgs a = check_conv(input, weight, Tensor(), stride, padding, dilation, transposed, output_padding, groups);
  const ScalarType dtype = input.dtype();
  if (is_reduced_float(dtype) && onednn_takes_16bit(dtype, weight, a)) {
    Tensor gx, gw, gb;
    if (convolution_backward_16bit(grad_output, input, weight, a, mask, gx, gw, gb)) return {gx, gw, gb};
  }
  if (is_reduced_float(dtype)) {
    auto r = convolution_backward_cpu(grad_output.to(ScalarType::Float), input.to(ScalarType::Float),
                                      weight.to(ScalarType::Float), stride, padding, dilation, transposed,
                                      output_padding, groups, mask);
    auto back = [&](const Tensor& t) { return t.defined() ? t.to(dtype) : t; };
    return {back(std::get<0>(r)), back(std::get<1>(r)), back(std::get<2>(r))};
  }
  if (transposed && weight.dim() == 5) return conv_transpose3d_backward_cpu(grad_output, input, weight, a, mask);
  if (weight.dim() == 5) return conv3d_backward_cpu(grad_output, input, weight, a, mask);
  Geometry g = geometry(input.sizes(), weight.sizes(), a);
  Tensor gy = grad_output.to(dtype).contiguous(), x = input.contiguous(), w = weight.contiguous();
  Tensor gx, gw, gb;
  if (mask[0]) gx = ember::empty(input.sizes(), dtype, input.device());
  if (mask[1]) gw = ember::empty(weight.sizes(), dtype, weight.device());
  const bool dnn = dtype == ScalarType::Float && onednn_ok(g, transposed);
  if (mask[2]) gb = bias_gradient(gy, g, transposed, dnn);
  // Gradients exist for floating types only (16-bit ones were widened above).
  dispatch_float_types(dtype, transposed ? "slow_conv_transpose2d_backward_out_cpu" : "slow_conv2d_backward_out_cpu",
                       [&](auto v) {
                         using T = decltype(v);
                         auto p = [](const Tensor& t) { return static_cast<T*>(t.data_ptr()); };
                         const T *xp = p(x), *wp = p(w), *gyp = p(gy);
                         constexpr bool f32 = std::is_same_v<T, float>;
                         auto lower = [&](const T* X, T* Y) {
                           if constexpr (f32) {
                             if (dnn && conv::onednn_lower(g, dtype, X, wp, nullptr, Y)) return;
                           }
                           conv_lower<T>(g, X, wp, nullptr, Y);
                         };
                         auto raise = [&](const T* Y, T* X) {
                           if constexpr (f32) {
                             if (dnn && conv::onednn_raise(g, dtype, Y, wp, X)) return;
                           }
                           conv_raise<T>(g, Y, wp, nullptr, X);
                         };
                         auto weight = [&](const T* X, const T* Y, T* dW, T* dbias) {
                           if constexpr (f32) {
                             if (dnn && conv::onednn_weight(g, dtype, X, Y, dW, dbias)) return;
                           }
                           // PyTorch's own kernel: one product per image over plain im2col columns
                           Geometry plain = g;
                           plain.wide = false, plain.whole = true;
                           conv_weight<T>(plain, X, Y, dW, dbias);
                         };
                         if (!transposed) {
                           if (gx.defined() && gx.numel() > 0) raise(gyp, p(gx));
                           if (gw.defined()) weight(xp, gyp, p(gw), nullptr);
                         } else {
                           // Transposed: the input is Y, grad_output is X.
                           if (gx.defined() && gx.numel() > 0) lower(gyp, p(gx));
                           if (gw.defined()) weight(gyp, xp, p(gw), nullptr);
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

Tensor unbatch(const Tensor& out) { return out.squeeze(0); }

// padding="same"/"valid": symmetric zero padding where the total is even; an
// odd total pads one more on the right, by a zero slice joined to the input
// (PyTorch also copies the input into a padded one there).
// Note [Complex convolution]
// As PyTorch, three real convolutions by Gauss's trick: with a = conv(xr, wr,
// br), b = conv(xi, wi) and c = conv(xr + xi, wr + wi, br + bi), the result
// is a - b + i (c - a - b), each step an operator of its own (autograd
// differentiates through them). A complex input with weights of another
// dtype keeps the real path's error.
Tensor convolution_any(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                       int64_t groups) {
  const bool has_bias = bias && bias->defined();
  if (!input.is_complex() || weight.dtype() != input.dtype() || (has_bias && bias->dtype() != input.dtype())) {
    return ember::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
  }
  const auto parts = [](const Tensor& t) {
    Tensor r = ember::view_as_real(t.resolve_conj());
    return std::make_pair(r.select(-1, 0), r.select(-1, 1));
  };
  const auto conv = [&](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
    return ember::convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups);
  };
  const auto [xr, xi] = parts(input);
  const auto [wr, wi] = parts(weight);
  Tensor a, b, c;
  if (has_bias) {
    const auto [br, bi] = parts(*bias);
    a = conv(xr, wr, br);
    b = conv(xi, wi, std::nullopt);
    c = conv(xr + xi, wr + wi, br + bi);
  } else {
    a = conv(xr, wr, std::nullopt);
    b = conv(xi, wi, std::nullopt);
    c = conv(xr + xi, wr + wi, std::nullopt);
  }
  return a - b + (c - a - b) * Scalar(std::complex<double>(0, 1));
}

Tensor conv_padding_str(const Tensor& input_in, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, const std::string& padding, IntArrayRef dilation, int64_t groups,
                        int64_t dims, const char* name) {
  Tensor input = input_in;
  bool unbatched = batchify(input, dims, name);
  DimVector pad(size_t(dims), 0);
  if (padding == "same") {
    for (int64_t s : stride) EMBER_CHECK(s == 1, "padding='same' is not supported for strided convolutions");
    DimVector dil = expand_param(dilation, "dilation", dims);
    EMBER_CHECK(weight.dim() == dims + 2, "expected stride to be a single integer value or a list of ",
                weight.dim() - 2, " values to match the convolution dimensions, but got stride=", shape_string(stride));
    for (int64_t d = 0; d < dims; ++d) {
      const int64_t total = dil[d] * (weight.size(2 + d) - 1);
      pad[d] = total / 2;
      if (total % 2) {
        DimVector zshape(input.sizes());
        zshape[2 + d] = 1;
        input = ember::cat({input, ember::zeros(zshape, input.dtype(), input.device())}, 2 + d);
      }
    }
  } else {
    EMBER_CHECK(padding == "valid", "Invalid padding string: '", padding, "'");
  }
  Tensor out = convolution_any(input, weight, bias, stride, pad, dilation, false, {0}, groups);
  return unbatched ? unbatch(out) : out;
}

Tensor conv_nd(const Tensor& input_in, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
               IntArrayRef padding, IntArrayRef dilation, int64_t groups, int64_t dims, const char* name) {
  Tensor input = input_in;
  bool unbatched = batchify(input, dims, name);
  Tensor out = convolution_any(input, weight, bias, stride, padding, dilation, false, {0}, groups);
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

Tensor conv1d_padding(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                      const std::string& padding, IntArrayRef dilation, int64_t groups) {
  return conv_padding_str(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d");
}

Tensor conv2d_padding(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                      const std::string& padding, IntArrayRef dilation, int64_t groups) {
  return conv_padding_str(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d");
}

Tensor conv_transpose2d(const Tensor& input_in, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  Tensor input = input_in;
  bool unbatched = batchify(input, 2, "conv_transpose2d");
  Tensor out = convolution_any(input, weight, bias, stride, padding, dilation, true, output_padding, groups);
  return unbatched ? unbatch(out) : out;
}

}  // namespace native
}  // namespace ember
