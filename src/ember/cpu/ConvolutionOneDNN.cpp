// Convolution through oneDNN, when the build found it (USE_ONEDNN; see
// docs/decisions/0004-convolution.md and 0092-bf16-convolution-onednn.md):
// float32, and bfloat16/float16 data with float32 accumulation. Ember's
// tensors stay NCHW: each call reorders into the layouts oneDNN's kernels
// prefer and back. Primitives come from oneDNN's own primitive cache, so
// repeated shapes cost a lookup, not a JIT compilation.
#include "ember/cpu/ConvUtils.h"
#include "ember/ops/BuildInfo.h"

#ifdef EMBER_USE_ONEDNN
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>

#include "ember/ops/Parallel.h"
#endif

namespace ember::native::conv {

#ifdef EMBER_USE_ONEDNN
namespace {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// EMBER_CONV_BACKEND=im2col switches oneDNN off (read per call, for tests
// and benchmarks of both paths in one process).
bool enabled() {
  const char* e = std::getenv("EMBER_CONV_BACKEND");
  return !(e && std::strcmp(e, "im2col") == 0);
}

const dnnl::engine& engine() {
  static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

dt data_type(ScalarType t) {
  switch (t) {
    case ScalarType::BFloat16: return dt::bf16;
    case ScalarType::Half: return dt::f16;
    default: return dt::f32;
  }
}

// The right padding giving `out` positions: the left one where that fits.
int64_t right_pad(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t p) {
  const int64_t span = (k - 1) * d + 1;
  if (in + 2 * p >= span && (in + 2 * p - span) / s + 1 == out) return p;
  return (out - 1) * s + span - in - p;
}

// The float32 3-d convolution (or, transposed, the one whose data gradient
// it is) of a geometry in oneDNN's terms; false for a negative right padding.
template <typename P>
bool init_3d(P& p, const Shape3d& g, bool transposed) {
  p.type = dt::f32;
  p.data_tag = tag::ncdhw;
  p.src = {g.N, g.IC, g.in[0], g.in[1], g.in[2]};
  p.dst = {g.N, g.OC, g.out[0], g.out[1], g.out[2]};
  if (g.G > 1) {
    p.wei = {g.G, g.OC / g.G, g.IC / g.G, g.k[0], g.k[1], g.k[2]};
    p.wei_tag = transposed ? tag::giodhw : tag::goidhw;
  } else {
    p.wei = {g.OC, g.IC, g.k[0], g.k[1], g.k[2]};
    p.wei_tag = transposed ? tag::iodhw : tag::oidhw;
  }
  p.bias = {g.OC};
  p.strides = dims(3);
  p.dilates = dims(3);
  p.pad_l = dims(3);
  p.pad_r = dims(3);
  for (int d = 0; d < 3; ++d) {
    p.strides[d] = g.stride[d];
    p.dilates[d] = g.dil[d] - 1;
    p.pad_l[d] = g.pad[d];
    // transposed: out = (in - 1) * stride - pad_l - pad_r + (k - 1) * dil + 1
    p.pad_r[d] = transposed ? (g.in[d] - 1) * g.stride[d] - g.pad[d] + (g.k[d] - 1) * g.dil[d] + 1 - g.out[d]
                            : right_pad(g.in[d], g.out[d], g.k[d], g.stride[d], g.dil[d], g.pad[d]);
    if (p.pad_r[d] < 0) return false;
  }
  return true;
}

// The convolution X -> Y of a geometry, in oneDNN's terms.
struct Problem {
  dims src, wei, bias, dst, strides, dilates, pad_l, pad_r;
  tag data_tag = tag::nchw, wei_tag;
  dt type;  // of every tensor, bias and its gradient included

  // False when oneDNN cannot express it (a negative right padding).
  bool init(const Geometry& g, ScalarType t) {
    type = data_type(t);
    const int64_t prh = right_pad(g.H, g.OH, g.kh, g.sh, g.dh, g.ph);
    const int64_t prw = right_pad(g.W, g.OW, g.kw, g.sw, g.dw, g.pw);
    if (prh < 0 || prw < 0) return false;
    src = {g.N, g.G * g.C, g.H, g.W};
    dst = {g.N, g.G * g.O, g.OH, g.OW};
    if (g.G > 1) {
      wei = {g.G, g.O, g.C, g.kh, g.kw};
      wei_tag = tag::goihw;
    } else {
      wei = {g.O, g.C, g.kh, g.kw};
      wei_tag = tag::oihw;
    }
    bias = {g.G * g.O};
    strides = {g.sh, g.sw};
    dilates = {g.dh - 1, g.dw - 1};
    pad_l = {g.ph, g.pw};
    pad_r = {prh, prw};
    return true;
  }

  // A float32 3-d convolution (its output sizes already computed).
  bool init(const Shape3d& g) { return init_3d(*this, g, false); }

  dnnl::memory::desc any(const dims& d) const { return dnnl::memory::desc(d, type, tag::any); }
  dnnl::memory::desc bias_desc() const { return dnnl::memory::desc(bias, type, tag::x); }
  // Ember's own tensor at p: NCHW data, or the weight in PyTorch's layout.
  dnnl::memory user(const dims& d, tag t, const void* ptr) const {
    return dnnl::memory(dnnl::memory::desc(d, type, t), engine(), const_cast<void*>(ptr));
  }

  dnnl::convolution_forward::primitive_desc forward(dnnl::prop_kind kind, bool with_bias) const {
    const auto algo = dnnl::algorithm::convolution_direct;
    if (with_bias)
      return dnnl::convolution_forward::primitive_desc(engine(), kind, algo, any(src), any(wei), bias_desc(), any(dst),
                                                       strides, dilates, pad_l, pad_r);
    return dnnl::convolution_forward::primitive_desc(engine(), kind, algo, any(src), any(wei), any(dst), strides,
                                                     dilates, pad_l, pad_r);
  }
};

// Runs oneDNN with Ember's thread count; oneDNN's errors mean "not here".
template <typename F>
bool run(const F& f) {
  if (in_parallel_region()) return false;
  sync_openmp_threads();
  try {
    thread_local dnnl::stream strm(engine());
    f(strm);
    strm.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// u's data in layout `want` (u itself when it already has it).
dnnl::memory into(const dnnl::memory::desc& want, const dnnl::memory& u, dnnl::stream& s) {
  if (want == u.get_desc()) return u;
  dnnl::memory m(want, engine());
  dnnl::reorder(u, m).execute(s, const_cast<dnnl::memory&>(u), m);
  return m;
}

void back(const dnnl::memory& m, const dnnl::memory& u, dnnl::stream& s) {
  if (m != u) dnnl::reorder(m, u).execute(s, const_cast<dnnl::memory&>(m), const_cast<dnnl::memory&>(u));
}

bool conv_forward(const Problem& p, const void* X, const void* W, const void* bias, void* Y) {
  return run([&](dnnl::stream& s) {
    auto pd = p.forward(dnnl::prop_kind::forward_training, bias != nullptr);
    auto ux = p.user(p.src, p.data_tag, X), uw = p.user(p.wei, p.wei_tag, W), uy = p.user(p.dst, p.data_tag, Y);
    auto mx = into(pd.src_desc(), ux, s), mw = into(pd.weights_desc(), uw, s);
    auto my = pd.dst_desc() == uy.get_desc() ? uy : dnnl::memory(pd.dst_desc(), engine());
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, mx}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, my}};
    if (bias) args.insert({DNNL_ARG_BIAS, p.user(p.bias, tag::x, bias)});
    dnnl::convolution_forward(pd).execute(s, args);
    back(my, uy, s);
  });
}

bool conv_data(const Problem& p, const void* Y, const void* W, void* X) {
  return run([&](dnnl::stream& s) {
    auto hint = p.forward(dnnl::prop_kind::forward_training, false);
    dnnl::convolution_backward_data::primitive_desc pd(engine(), dnnl::algorithm::convolution_direct, p.any(p.src),
                                                       p.any(p.wei), p.any(p.dst), p.strides, p.dilates, p.pad_l,
                                                       p.pad_r, hint);
    auto uy = p.user(p.dst, p.data_tag, Y), uw = p.user(p.wei, p.wei_tag, W), ux = p.user(p.src, p.data_tag, X);
    auto my = into(pd.diff_dst_desc(), uy, s), mw = into(pd.weights_desc(), uw, s);
    auto mx = pd.diff_src_desc() == ux.get_desc() ? ux : dnnl::memory(pd.diff_src_desc(), engine());
    dnnl::convolution_backward_data(pd).execute(
        s, {{DNNL_ARG_DIFF_DST, my}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DIFF_SRC, mx}});
    back(mx, ux, s);
  });
}

bool conv_weights(const Problem& p, const void* X, const void* Y, void* dW, void* dbias) {
  return run([&](dnnl::stream& s) {
    const bool with_bias = dbias != nullptr;
    auto hint = p.forward(dnnl::prop_kind::forward_training, with_bias);
    const auto algo = dnnl::algorithm::convolution_direct;
    auto pd = with_bias ? dnnl::convolution_backward_weights::primitive_desc(engine(), algo, p.any(p.src), p.any(p.wei),
                                                                             p.bias_desc(), p.any(p.dst), p.strides,
                                                                             p.dilates, p.pad_l, p.pad_r, hint)
                        : dnnl::convolution_backward_weights::primitive_desc(engine(), algo, p.any(p.src), p.any(p.wei),
                                                                             p.any(p.dst), p.strides, p.dilates,
                                                                             p.pad_l, p.pad_r, hint);
    auto ux = p.user(p.src, p.data_tag, X), uy = p.user(p.dst, p.data_tag, Y), uw = p.user(p.wei, p.wei_tag, dW);
    auto mx = into(pd.src_desc(), ux, s), my = into(pd.diff_dst_desc(), uy, s);
    auto mw = pd.diff_weights_desc() == uw.get_desc() ? uw : dnnl::memory(pd.diff_weights_desc(), engine());
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, mx}, {DNNL_ARG_DIFF_DST, my}, {DNNL_ARG_DIFF_WEIGHTS, mw}};
    if (with_bias) args.insert({DNNL_ARG_DIFF_BIAS, p.user(p.bias, tag::x, dbias)});
    dnnl::convolution_backward_weights(pd).execute(s, args);
    back(mw, uw, s);
  });
}

}  // namespace

bool onednn_lower(const Geometry& g, ScalarType t, const void* X, const void* W, const void* bias, void* Y) {
  Problem p;
  return enabled() && p.init(g, t) && conv_forward(p, X, W, bias, Y);
}

bool onednn_raise(const Geometry& g, ScalarType t, const void* Y, const void* W, void* X) {
  Problem p;
  return enabled() && p.init(g, t) && conv_data(p, Y, W, X);
}

bool onednn_weight(const Geometry& g, ScalarType t, const void* X, const void* Y, void* dW, void* dbias) {
  Problem p;
  return enabled() && p.init(g, t) && conv_weights(p, X, Y, dW, dbias);
}

bool onednn_conv3d(const Shape3d& g, const float* X, const float* W, const float* bias, float* Y) {
  Problem p;
  return enabled() && p.init(g) && conv_forward(p, X, W, bias, Y);
}

bool onednn_conv3d_data(const Shape3d& g, const float* dY, const float* W, float* dX) {
  Problem p;
  return enabled() && p.init(g) && conv_data(p, dY, W, dX);
}

bool onednn_conv3d_weight(const Shape3d& g, const float* X, const float* dY, float* dW) {
  Problem p;
  return enabled() && p.init(g) && conv_weights(p, X, dY, dW, nullptr);
}

// ---- transposed convolution (oneDNN's deconvolution) ------------------------------------
namespace {

// Y (N, IC, in) -> X (N, OC, out), the weight (IC, OC / G, k) as PyTorch stores it.
struct DeconvProblem {
  dims src, wei, bias, dst, strides, dilates, pad_l, pad_r;
  tag data_tag, wei_tag;
  dt type;

  bool init(const Shape3d& g) { return init_3d(*this, g, true); }

  // A 2-d transposed convolution of Geometry g: the small image is its input.
  bool init(const Geometry& g, ScalarType t) {
    type = data_type(t);
    data_tag = tag::nchw;
    src = {g.N, g.G * g.O, g.OH, g.OW};
    dst = {g.N, g.G * g.C, g.H, g.W};
    if (g.G > 1) {
      wei = {g.G, g.C, g.O, g.kh, g.kw};
      wei_tag = tag::giohw;
    } else {
      wei = {g.C, g.O, g.kh, g.kw};
      wei_tag = tag::iohw;
    }
    bias = {g.G * g.C};
    strides = {g.sh, g.sw};
    dilates = {g.dh - 1, g.dw - 1};
    pad_l = {g.ph, g.pw};
    // padding - output_padding: negative where output_padding exceeds padding, as PyTorch passes it
    pad_r = {(g.OH - 1) * g.sh - g.ph + (g.kh - 1) * g.dh + 1 - g.H,
             (g.OW - 1) * g.sw - g.pw + (g.kw - 1) * g.dw + 1 - g.W};
    return true;
  }

  dnnl::memory::desc any(const dims& d) const { return dnnl::memory::desc(d, type, tag::any); }
  dnnl::memory::desc bias_desc() const { return dnnl::memory::desc(bias, type, tag::x); }
  dnnl::memory user(const dims& d, tag t, const void* ptr) const {
    return dnnl::memory(dnnl::memory::desc(d, type, t), engine(), const_cast<void*>(ptr));
  }

  dnnl::deconvolution_forward::primitive_desc forward(bool with_bias) const {
    const auto algo = dnnl::algorithm::deconvolution_direct;
    const auto kind = dnnl::prop_kind::forward_training;
    if (with_bias)
      return dnnl::deconvolution_forward::primitive_desc(engine(), kind, algo, any(src), any(wei), bias_desc(),
                                                         any(dst), strides, dilates, pad_l, pad_r);
    return dnnl::deconvolution_forward::primitive_desc(engine(), kind, algo, any(src), any(wei), any(dst), strides,
                                                       dilates, pad_l, pad_r);
  }
};

bool deconv_forward(const DeconvProblem& p, const void* X, const void* W, const void* bias, void* Y) {
  return run([&](dnnl::stream& s) {
    auto pd = p.forward(bias != nullptr);
    auto ux = p.user(p.src, p.data_tag, X), uw = p.user(p.wei, p.wei_tag, W), uy = p.user(p.dst, p.data_tag, Y);
    auto mx = into(pd.src_desc(), ux, s), mw = into(pd.weights_desc(), uw, s);
    auto my = pd.dst_desc() == uy.get_desc() ? uy : dnnl::memory(pd.dst_desc(), engine());
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, mx}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, my}};
    if (bias) args.insert({DNNL_ARG_BIAS, p.user(p.bias, tag::x, bias)});
    dnnl::deconvolution_forward(pd).execute(s, args);
    back(my, uy, s);
  });
}

bool deconv_data(const DeconvProblem& p, const void* dY, const void* W, void* dX) {
  return run([&](dnnl::stream& s) {
    auto hint = p.forward(false);
    dnnl::deconvolution_backward_data::primitive_desc pd(engine(), dnnl::algorithm::deconvolution_direct, p.any(p.src),
                                                         p.any(p.wei), p.any(p.dst), p.strides, p.dilates, p.pad_l,
                                                         p.pad_r, hint);
    auto uy = p.user(p.dst, p.data_tag, dY), uw = p.user(p.wei, p.wei_tag, W), ux = p.user(p.src, p.data_tag, dX);
    auto my = into(pd.diff_dst_desc(), uy, s), mw = into(pd.weights_desc(), uw, s);
    auto mx = pd.diff_src_desc() == ux.get_desc() ? ux : dnnl::memory(pd.diff_src_desc(), engine());
    dnnl::deconvolution_backward_data(pd).execute(
        s, {{DNNL_ARG_DIFF_DST, my}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DIFF_SRC, mx}});
    back(mx, ux, s);
  });
}

bool deconv_weight(const DeconvProblem& p, const void* X, const void* dY, void* dW, void* dbias) {
  return run([&](dnnl::stream& s) {
    const bool with_bias = dbias != nullptr;
    auto hint = p.forward(with_bias);
    const auto algo = dnnl::algorithm::deconvolution_direct;
    auto pd = with_bias ? dnnl::deconvolution_backward_weights::primitive_desc(
                              engine(), algo, p.any(p.src), p.any(p.wei), p.bias_desc(), p.any(p.dst), p.strides,
                              p.dilates, p.pad_l, p.pad_r, hint)
                        : dnnl::deconvolution_backward_weights::primitive_desc(engine(), algo, p.any(p.src),
                                                                               p.any(p.wei), p.any(p.dst), p.strides,
                                                                               p.dilates, p.pad_l, p.pad_r, hint);
    auto ux = p.user(p.src, p.data_tag, X), uy = p.user(p.dst, p.data_tag, dY), uw = p.user(p.wei, p.wei_tag, dW);
    auto mx = into(pd.src_desc(), ux, s), my = into(pd.diff_dst_desc(), uy, s);
    auto mw = pd.diff_weights_desc() == uw.get_desc() ? uw : dnnl::memory(pd.diff_weights_desc(), engine());
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, mx}, {DNNL_ARG_DIFF_DST, my}, {DNNL_ARG_DIFF_WEIGHTS, mw}};
    if (with_bias) args.insert({DNNL_ARG_DIFF_BIAS, p.user(p.bias, tag::x, dbias)});
    dnnl::deconvolution_backward_weights(pd).execute(s, args);
    back(mw, uw, s);
  });
}

}  // namespace

bool onednn_deconv3d(const Shape3d& g, const float* X, const float* W, const float* bias, float* Y) {
  DeconvProblem p;
  return enabled() && p.init(g) && deconv_forward(p, X, W, bias, Y);
}

bool onednn_deconv3d_data(const Shape3d& g, const float* dY, const float* W, float* dX) {
  DeconvProblem p;
  return enabled() && p.init(g) && deconv_data(p, dY, W, dX);
}

bool onednn_deconv3d_weight(const Shape3d& g, const float* X, const float* dY, float* dW, float* dbias) {
  DeconvProblem p;
  return enabled() && p.init(g) && deconv_weight(p, X, dY, dW, dbias);
}

bool onednn_deconv(const Geometry& g, ScalarType t, const void* Y, const void* W, const void* bias, void* X) {
  DeconvProblem p;
  return enabled() && p.init(g, t) && deconv_forward(p, Y, W, bias, X);
}

bool onednn_deconv_data(const Geometry& g, ScalarType t, const void* dX, const void* W, void* dY) {
  DeconvProblem p;
  return enabled() && p.init(g, t) && deconv_data(p, dX, W, dY);
}

bool onednn_deconv_weight(const Geometry& g, ScalarType t, const void* Y, const void* dX, void* dW, void* dbias) {
  DeconvProblem p;
  return enabled() && p.init(g, t) && deconv_weight(p, Y, dX, dW, dbias);
}

const char* onednn_version() {
  static const std::string v = [] {
    const dnnl_version_t* ver = dnnl_version();
    return "oneDNN " + std::to_string(ver->major) + "." + std::to_string(ver->minor) + "." + std::to_string(ver->patch);
  }();
  return v.c_str();
}

#else

bool onednn_lower(const Geometry&, ScalarType, const void*, const void*, const void*, void*) { return false; }
bool onednn_raise(const Geometry&, ScalarType, const void*, const void*, void*) { return false; }
bool onednn_weight(const Geometry&, ScalarType, const void*, const void*, void*, void*) { return false; }
bool onednn_deconv(const Geometry&, ScalarType, const void*, const void*, const void*, void*) { return false; }
bool onednn_deconv_data(const Geometry&, ScalarType, const void*, const void*, void*) { return false; }
bool onednn_deconv_weight(const Geometry&, ScalarType, const void*, const void*, void*, void*) { return false; }
bool onednn_conv3d(const Shape3d&, const float*, const float*, const float*, float*) { return false; }
bool onednn_conv3d_data(const Shape3d&, const float*, const float*, float*) { return false; }
bool onednn_conv3d_weight(const Shape3d&, const float*, const float*, float*) { return false; }
bool onednn_deconv3d(const Shape3d&, const float*, const float*, const float*, float*) { return false; }
bool onednn_deconv3d_data(const Shape3d&, const float*, const float*, float*) { return false; }
bool onednn_deconv3d_weight(const Shape3d&, const float*, const float*, float*, float*) { return false; }
const char* onednn_version() { return ""; }

#endif

}  // namespace ember::native::conv

namespace ember {
const char* onednn_info() { return native::conv::onednn_version(); }
}  // namespace ember
