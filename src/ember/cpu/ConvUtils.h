#pragma once
// Internal to the convolution kernels (cpu/Convolution.cpp and
// cpu/ConvolutionOneDNN.cpp): the geometry of one convolution as three
// products between a large image X, a small image Y and a weight (see
// Note [Convolution as GEMM]), and the optional oneDNN implementation of them.

#include <algorithm>
#include <cstdint>

#include "ember/core/ScalarType.h"
#include "ember/cpu/NNStubs.h"

namespace ember::native::conv {

struct Geometry {
  int64_t N, G;
  int64_t C, H, W;  // large image, channels per group
  int64_t O, OH, OW;  // small image, channels per group
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool wide = false;  // Note [Wide im2col]
  bool whole = false;  // col of the whole image at once (one band)

  int64_t K() const { return C * kh * kw; }
  // col is X itself: 1x1 kernel, unit stride, no padding (and, for a
  // transposed convolution, no output_padding making X larger than Y).
  bool direct() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0 && H == OH && W == OW; }
  bool padded() const { return wide && (ph > 0 || pw > 0); }
  int64_t Hp() const { return H + 2 * ph; }
  int64_t Wp() const { return wide ? W + 2 * pw : OW; }
  // col columns for output rows [r0, r1).
  int64_t cols(int64_t r0, int64_t r1) const { return wide ? (r1 - r0 - 1) * Wp() + OW : (r1 - r0) * OW; }
  // Output rows per band: about 256K elements of col (1 MB of float, in L2).
  int64_t band() const {
    if (direct() || whole) return std::max<int64_t>(OH, 1);
    int64_t per_row = std::max<int64_t>(K() * Wp(), 1);
    return std::clamp<int64_t>((int64_t(1) << 18) / per_row, 1, std::max<int64_t>(OH, 1));
  }
  cpu::Im2ColArgs im2col_args(int64_t r0, int64_t r1) const {
    return {C, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw, r0, r1};
  }
  cpu::WideArgs wide_args(int64_t r0, int64_t r1) const { return {C, Hp() * Wp(), Wp(), kh, kw, dh, dw, cols(r0, r1)}; }
};

// ---- oneDNN (see docs/decisions/0004-convolution.md, 0092-bf16-convolution-onednn.md) ----
// Each returns false when oneDNN is not built in, is switched off
// (EMBER_CONV_BACKEND=im2col) or does not take this geometry; the caller then
// uses im2col + GEMM. Call outside any parallel region. The tensors, bias
// and its gradient included, all have dtype t: Float, BFloat16 or Half (the
// 16-bit ones accumulate in float32 inside oneDNN).

// Y = conv(X, W) + bias (bias over Y's channels, may be null).
bool onednn_lower(const Geometry& g, ScalarType t, const void* X, const void* W, const void* bias, void* Y);
// X = the input gradient of conv(X, W) for output gradient Y (no bias).
bool onednn_raise(const Geometry& g, ScalarType t, const void* Y, const void* W, void* X);
// dW (and dbias over Y's channels, if not null) = the weight gradient of conv(X, W) for output gradient Y.
bool onednn_weight(const Geometry& g, ScalarType t, const void* X, const void* Y, void* dW, void* dbias);
// The transposed convolution of g as oneDNN's deconvolution (its input is the
// small image Y, its output the large image X; the weight as PyTorch stores
// it): X = conv_transpose(Y, W) + bias over X's channels (may be null).
bool onednn_deconv(const Geometry& g, ScalarType t, const void* Y, const void* W, const void* bias, void* X);
// dY = its input gradient for output gradient dX.
bool onednn_deconv_data(const Geometry& g, ScalarType t, const void* dX, const void* W, void* dY);
// dW (and dbias over X's channels, if not null) = its weight gradient for output gradient dX.
bool onednn_deconv_weight(const Geometry& g, ScalarType t, const void* Y, const void* dX, void* dW, void* dbias);
// A 3-d convolution X (N, IC, in) -> Y (N, OC, out) and the sizes of its
// weight: (OC, IC / G, k) for a convolution, (IC, OC / G, k) for a
// transposed one, as PyTorch stores them.
struct Shape3d {
  int64_t N, G, IC, OC;
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
};
// Y = conv3d(X, W) + bias (bias may be null).
bool onednn_conv3d(const Shape3d& g, const float* X, const float* W, const float* bias, float* Y);
// dX = its input gradient for output gradient dY.
bool onednn_conv3d_data(const Shape3d& g, const float* dY, const float* W, float* dX);
// dW = its weight gradient for output gradient dY.
bool onednn_conv3d_weight(const Shape3d& g, const float* X, const float* dY, float* dW);
// Y = conv_transpose3d(X, W) + bias (bias may be null).
bool onednn_deconv3d(const Shape3d& g, const float* X, const float* W, const float* bias, float* Y);
// dX = its input gradient for output gradient dY.
bool onednn_deconv3d_data(const Shape3d& g, const float* dY, const float* W, float* dX);
// dW (and dbias, if not null) = its weight gradient for output gradient dY.
bool onednn_deconv3d_weight(const Shape3d& g, const float* X, const float* dY, float* dW, float* dbias);
// "oneDNN <version>" when built in, else "".
const char* onednn_version();

}  // namespace ember::native::conv
