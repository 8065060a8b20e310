#pragma once
// Kernels of the convolution, pooling and normalisation operators, compiled
// once per CPU capability (cpu/kernels/{Conv,Pooling,Normalization}Kernel.cpp)
// and selected at run time. They take raw contiguous buffers and plain
// structs, so an edit to ops.yaml does not recompile them.

#include <cstdint>
#include <string>

#include "ember/core/ScalarType.h"
#include "ember/ops/DispatchStub.h"

namespace ember::cpu {

// ---- convolution ---------------------------------------------------------------
// One image of C x H x W and the output rows [oh_begin, oh_end) of an OH x OW grid.
struct Im2ColArgs {
  int64_t C, H, W, OH, OW;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t oh_begin, oh_end;
};
// col[(c*kh + i)*kw + j][(oh - oh_begin)*OW + ow] = im[c][oh*sh - ph + i*dh][ow*sw - pw + j*dw],
// zero where that falls outside the image. col rows are (oh_end - oh_begin)*OW long.
using Im2ColFn = void (*)(ScalarType dtype, const void* im, void* col, const Im2ColArgs& a);
// The adjoint of im2col: im[...] += col[...] over the same index map.
using Col2ImFn = void (*)(ScalarType dtype, const void* col, void* im, const Im2ColArgs& a);

// Wide im2col (Note [Wide im2col] in cpu/Convolution.cpp): for a zero-padded
// image of rows Wp long, col[(c*kh + i)*kw + j][p] = im[c*plane + i*dh*Wp + j*dw + p]
// for p < L: one contiguous copy per col row.
struct WideArgs {
  int64_t C, plane, Wp, kh, kw, dh, dw, L;
};
using Im2ColWideFn = void (*)(ScalarType dtype, const void* im, void* col, const WideArgs& a);
// The adjoint: im[...] += col[...].
using Col2ImWideFn = void (*)(ScalarType dtype, const void* col, void* im, const WideArgs& a);

EMBER_DECLARE_DISPATCH(Im2ColFn, im2col_stub);
EMBER_DECLARE_DISPATCH(Col2ImFn, col2im_stub);
EMBER_DECLARE_DISPATCH(Im2ColWideFn, im2col_wide_stub);
EMBER_DECLARE_DISPATCH(Col2ImWideFn, col2im_wide_stub);

// ---- grid sampling --------------------------------------------------------------
// Bilinear 2-d grid sampling, zeros or border padding, in the arithmetic of
// PyTorch's vectorised kernel (Note [Vectorised bilinear grid sampling]):
// out[c][p] for `points` (x, y) pairs of grid, from in (C x H x W); out rows
// are out_stride apart. Registered by the AVX2 and AVX-512 builds only.
struct GridSample2dArgs {
  int64_t C, H, W, points, out_stride;
  bool border, align;
};
using GridSampleBilinear2dFn = void (*)(ScalarType dtype, const void* in, const void* grid, void* out,
                                        const GridSample2dArgs& a);
EMBER_DECLARE_DISPATCH(GridSampleBilinear2dFn, grid_sample_bilinear_2d_stub);

// ---- antialiased interpolation ----------------------------------------------------
// The antialiased bilinear (cubic: bicubic) interpolation of `planes`
// IH x IW images to OH x OW, with PyTorch's source scales per dim (Note
// [Antialiased interpolation kernels]).
struct UpsampleAAArgs {
  int64_t planes, IH, IW, OH, OW;
  double scale_h, scale_w;  // exact in the data's type
  bool cubic;
};
// out = the interpolation of in.
using UpsampleAAFn = void (*)(ScalarType dtype, const void* in, void* out, const UpsampleAAArgs& a);
// grad_in (zeroed by the caller) += the input gradient for grad_out.
using UpsampleAABackwardFn = void (*)(ScalarType dtype, const void* grad_out, void* grad_in, const UpsampleAAArgs& a);
EMBER_DECLARE_DISPATCH(UpsampleAAFn, upsample_aa_stub);
EMBER_DECLARE_DISPATCH(UpsampleAABackwardFn, upsample_aa_backward_stub);

// ---- pooling -------------------------------------------------------------------
// `planes` independent H x W images (N*C), each pooled to OH x OW.
struct Pool2dArgs {
  int64_t planes, H, W, OH, OW;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
};
// out and idx (int64, flat h*W + w of the maximum) are planes x OH x OW.
using MaxPool2dFn = void (*)(ScalarType dtype, const void* in, void* out, int64_t* idx, const Pool2dArgs& a);
// grad_in (zeroed by the caller) += grad_out scattered through idx.
using MaxPool2dBackwardFn = void (*)(ScalarType dtype, const void* grad_out, const int64_t* idx, void* grad_in,
                                     const Pool2dArgs& a);
// divisor <= 0: count_include_pad decides the divisor; otherwise it is the divisor.
using AvgPool2dFn = void (*)(ScalarType dtype, const void* in, void* out, const Pool2dArgs& a, bool count_include_pad,
                             int64_t divisor);
using AvgPool2dBackwardFn = void (*)(ScalarType dtype, const void* grad_out, void* grad_in, const Pool2dArgs& a,
                                     bool count_include_pad, int64_t divisor);
// Adaptive average pooling: window [floor(o*I/O), ceil((o+1)*I/O)). kh..dw unused.
using AdaptiveAvgPool2dFn = void (*)(ScalarType dtype, const void* in, void* out, const Pool2dArgs& a);
using AdaptiveAvgPool2dBackwardFn = void (*)(ScalarType dtype, const void* grad_out, void* grad_in,
                                             const Pool2dArgs& a);

EMBER_DECLARE_DISPATCH(MaxPool2dFn, max_pool2d_stub);
EMBER_DECLARE_DISPATCH(MaxPool2dBackwardFn, max_pool2d_backward_stub);
EMBER_DECLARE_DISPATCH(AvgPool2dFn, avg_pool2d_stub);
EMBER_DECLARE_DISPATCH(AvgPool2dBackwardFn, avg_pool2d_backward_stub);
EMBER_DECLARE_DISPATCH(AdaptiveAvgPool2dFn, adaptive_avg_pool2d_stub);
EMBER_DECLARE_DISPATCH(AdaptiveAvgPool2dBackwardFn, adaptive_avg_pool2d_backward_stub);

// ---- normalisation (float and double) ---------------------------------------------
// Batch norm over x of N x C x S (S = product of the spatial sizes).
// channels_last: x is stored as N*S rows of C (channels last, or S == 1);
// the forward stubs read it so, the backward ones ignore it.
// half_params (16-bit stubs): the parameters are float16 (float values).
struct BatchNormArgs {
  int64_t N, C, S;
  bool channels_last = false;
  bool half_params = false;
};
// Per channel: mean[c] and the sum of squared deviations var_sum[c] of x,
// as PyTorch's collect-stats kernel.
using BatchNormStatsFn = void (*)(ScalarType dtype, const void* x, void* mean, void* var_sum, const BatchNormArgs& a);
// y = x * alpha[c] + beta[c], alpha = invstd * weight, beta = bias - mean * alpha
// (weight and bias may be null).
using BatchNormApplyFn = void (*)(ScalarType dtype, const void* x, void* y, const void* mean, const void* invstd,
                                  const void* weight, const void* bias, const BatchNormArgs& a);
// Per channel: sum_dy[c] = sum dy, sum_dy_xmu[c] = sum dy * (x - mean[c]).
using BatchNormBackwardReduceFn = void (*)(ScalarType dtype, const void* dy, const void* x, const void* mean,
                                           void* sum_dy, void* sum_dy_xmu, const BatchNormArgs& a);
// Batch norm backward of contiguous float/double dy and x, in PyTorch's order
// (Note [Batch norm backward order]): mean and invstd per channel (saved, or
// running with invstd computed by the caller); dx, dweight, dbias may be null.
using BatchNormBackwardContiguousFn = void (*)(ScalarType dtype, const void* dy, const void* x, const void* weight,
                                               const void* mean, const void* invstd, void* dx, void* dweight,
                                               void* dbias, bool train, const BatchNormArgs& a);
// dx = dy * k1[c] + x * k2[c] + k3[c].
using BatchNormBackwardApplyFn = void (*)(ScalarType dtype, const void* dy, const void* x, void* dx, const void* k1,
                                          const void* k2, const void* k3, const BatchNormArgs& a);

// 16-bit batch norm (x, y, dy, dx in the 16-bit `dtype`, everything else
// float), as PyTorch's reduced-float kernels; channels_last as above, for
// the backward stub too. round_stats: the statistics are kept in the
// 16-bit dtype (parameters of the input's dtype), rounded where PyTorch's are.
using BatchNorm16StatsFn = void (*)(ScalarType dtype, const void* x, float* mean, float* var_sum,
                                    const BatchNormArgs& a, bool round_stats);
using BatchNorm16ApplyFn = void (*)(ScalarType dtype, const void* x, void* y, const float* mean, const float* invstd,
                                    const float* weight, const float* bias, const BatchNormArgs& a);
// Per channel sum_dy[c] and dotp[c] = sum dy * (x - mean[c]); dx (may be
// null) from them, the batch's statistics when train, else dy * invstd * weight.
using BatchNorm16BackwardFn = void (*)(ScalarType dtype, const void* dy, const void* x, void* dx, const float* mean,
                                       const float* invstd, const float* weight, float* sum_dy, float* dotp, bool train,
                                       const BatchNormArgs& a);

// Layer norm over rows: x is M x D, mean/rstd have M entries; gamma/beta may be null.
using LayerNormFn = void (*)(ScalarType dtype, const void* x, const void* gamma, const void* beta, void* y, void* mean,
                             void* rstd, int64_t M, int64_t D, double eps);
// layer_norm_16bit_stub: x and y in the 16-bit `dtype`, the rest float, as
// PyTorch's 16-bit kernel computes it (its moments and output formula).
// Any of dx, dgamma, dbeta may be null (not wanted); a 16-bit dtype names
// the input's type, the data being float.
using LayerNormBackwardFn = void (*)(ScalarType dtype, const void* dy, const void* x, const void* mean,
                                     const void* rstd, const void* gamma, void* dx, void* dgamma, void* dbeta,
                                     int64_t M, int64_t D);

// Group norm over x of N x C x HxW in `group` groups; mean/rstd are N x group.
// from_16bit: the float data of a 16-bit input (PyTorch's moments read it in pairs).
struct GroupNormArgs {
  int64_t N, C, HxW, group;
  bool from_16bit = false;
};
using GroupNormFn = void (*)(ScalarType dtype, const void* x, const void* gamma, const void* beta, void* y, void* mean,
                             void* rstd, const GroupNormArgs& a, double eps);
using GroupNormBackwardFn = void (*)(ScalarType dtype, const void* dy, const void* x, const void* mean,
                                     const void* rstd, const void* gamma, void* dx, void* dgamma, void* dbeta,
                                     const GroupNormArgs& a);

EMBER_DECLARE_DISPATCH(BatchNormStatsFn, batch_norm_stats_stub);
EMBER_DECLARE_DISPATCH(BatchNormApplyFn, batch_norm_apply_stub);
EMBER_DECLARE_DISPATCH(BatchNormBackwardReduceFn, batch_norm_backward_reduce_stub);
EMBER_DECLARE_DISPATCH(BatchNormBackwardApplyFn, batch_norm_backward_apply_stub);
EMBER_DECLARE_DISPATCH(BatchNormBackwardContiguousFn, batch_norm_backward_contiguous_stub);
// The same for rows of channels (channels-last input, or one without spatial dimensions).
EMBER_DECLARE_DISPATCH(BatchNormBackwardContiguousFn, batch_norm_backward_rows_stub);
EMBER_DECLARE_DISPATCH(BatchNorm16StatsFn, batch_norm_16bit_stats_stub);
EMBER_DECLARE_DISPATCH(BatchNorm16ApplyFn, batch_norm_16bit_apply_stub);
EMBER_DECLARE_DISPATCH(BatchNorm16BackwardFn, batch_norm_16bit_backward_stub);
EMBER_DECLARE_DISPATCH(LayerNormFn, layer_norm_stub);
EMBER_DECLARE_DISPATCH(LayerNormFn, layer_norm_16bit_stub);
EMBER_DECLARE_DISPATCH(LayerNormBackwardFn, layer_norm_backward_stub);
EMBER_DECLARE_DISPATCH(GroupNormFn, group_norm_stub);
EMBER_DECLARE_DISPATCH(GroupNormBackwardFn, group_norm_backward_stub);

}  // namespace ember::cpu
