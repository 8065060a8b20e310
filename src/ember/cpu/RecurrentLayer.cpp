// Note [LSTM layer op]
// nn.LSTM runs each layer and direction as one call of mkldnn_rnn_layer, the
// name of PyTorch's CPU layer operator, so outputs show the same node
// (MkldnnRnnLayerBackward0). Shapes: T steps, B rows, I inputs, H hidden
// units, G = 4H gates (i, f, g, o).
// Forward: one GEMM projects the whole sequence, X W_ih^T, into the gate
// buffer (T, B, G); each step adds h_prev W_hh^T + (b_ih + b_hh) into its
// slice (Note [Recurrent step GEMM]) and runs the fused cell (Note [Fused
// LSTM cell]), which writes the activated gates back over the
// pre-activations. The workspace is that buffer followed by every c_t
// (T, B, H), in the input's dtype.
// Backward walks the steps in reverse: the cell's backward gives dgates_t and
// dc_prev from dh_t and dc_t, and dh_prev = dgates_t W_hh + grad_output_prev.
// Then one GEMM each over all steps gives dW_ih = dG^T X, dW_hh = dG^T H_prev
// (plus the first step's dgates^T hx), dX = dG W_ih; db is dG's column sums.
// A backward that records a graph (create_graph=True) takes a second,
// operator-by-operator path instead, as PyTorch's does, so the gradients can
// be differentiated again.
// The large GEMMs go straight to BLAS (cpu/Blas.h), the per-step ones to
// Ember's kernel (float32) or BLAS (float64), all on buffers allocated once:
// no operator dispatch or allocation per step. Batch rows are independent
// sequences, so with threads each takes a block of rows through all T steps
// (forward and backward recurrences): one parallel region, no barrier per step.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ember/autograd/GradMode.h"
#include "ember/cpu/Blas.h"
#include "ember/cpu/RecurrentStubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember {
namespace cpu {
EMBER_DEFINE_DISPATCH(RecurrentGemmFn, recurrent_gemm_stub);
}  // namespace cpu

namespace native {
namespace {

constexpr int64_t kLstmMode = 2;  // PyTorch's mode numbers: RNN_RELU 0, RNN_TANH 1, LSTM 2, GRU 3

// C = op(A) op(B) + beta C (row-major); empty products leave beta C.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
          float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0) {
      for (int64_t r = 0; r < m; ++r) std::fill_n(c + r * ldc, n, 0.0f);
    }
    return;
  }
  blas::sgemm(ta, tb, int(m), int(n), int(k), 1.0f, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b, int64_t ldb,
          double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0) {
      for (int64_t r = 0; r < m; ++r) std::fill_n(c + r * ldc, n, 0.0);
    }
    return;
  }
  blas::dgemm(ta, tb, int(m), int(n), int(k), 1.0, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

// A step's small product C (m x n) = A (m x k) B (k x n) (+ C) (+ bias, n
// values), all row-major and tight: Ember's kernel for float32 (Note
// [Recurrent step GEMM]), its columns split over threads when the product is
// large enough.
void step_gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c, bool accumulate,
               const float* bias = nullptr) {
  if (m == 0 || n == 0) return;
  const int64_t lanes = 16, units = (n + lanes - 1) / lanes;  // a multiple of every vector width
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 19) / std::max<int64_t>(m * k * lanes, 1));
  parallel_for(0, units, grain, [&](int64_t u0, int64_t u1) {
    cpu::recurrent_gemm_stub(m, u0 * lanes, std::min(n, u1 * lanes), k, a, k, b, n, c, n, accumulate, bias);
  });
}

void step_gemm(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c, bool accumulate,
               const double* bias = nullptr) {
  if (bias) {
    for (int64_t r = 0; r < m; ++r) {
      double* row = c + r * n;
      if (accumulate) {
        for (int64_t j = 0; j < n; ++j) row[j] += bias[j];
      } else {
        std::copy_n(bias, n, row);
      }
    }
    accumulate = true;
  }
  gemm(false, false, m, n, k, a, k, b, n, accumulate ? 1.0 : 0.0, c, n);
}

// Note [oneDNN LSTM arithmetic]
// PyTorch runs float32 nn.LSTM through oneDNN's RNN primitive, and these are
// the operations it performs, measured against PyTorch bit for bit (oneDNN
// 3.12, src/cpu/rnn and src/cpu/x64/rnn). With grad mode on it runs
// forward_training on its gemm-based ("ref") implementation: one sgemm
// X W_ih^T over all steps (per step from 128 batch rows on), then per step
// an sgemm h W_hh^T with beta = 1 into those gates. With grad mode off it
// runs forward_inference on its brgemm kernels wherever its ISA includes
// AVX2: both products are plain FMA chains over k from zero, and the step's
// chain is added to the layer's afterwards. Either way the cell then adds
// b_ih + b_hh (summed once) to each gate and applies its own sigmoid and tanh
// (the eltwise injector's: exp by a degree-5 polynomial on 2^n, sigmoid as
// e/(e+1) on -|x| mirrored, tanh by 32 degree-6 polynomials picked by the
// exponent bits); c = i g + f c_prev with one rounding of f c_prev,
// h = o tanh(c). The backward is always the sgemm one: the cell's gradients in
// the order below, dh_prev = dG_t W_hh per step (added to the output's
// gradient in the next cell), dX = dG W_ih and dW_ih = dG^T X over all steps,
// dW_hh over steps 1.. then plus the first step's product with hx, and db
// summed in float row by row in the order the steps are taken. The products
// go to oneDNN's own sgemm with oneDNN's arguments, so its kernel choices and
// k blocking come with them.
namespace onednn_math {

inline uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
inline float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// Coefficients of degree 0..6 of the 32 tanh polynomials.
constexpr uint32_t kTanhTable[7][32] = {
    {0x00000000, 0x39bfffff, 0x39ffffff, 0x3a3ffffe, 0x3a7ffffb, 0x3abffff7, 0x3affffeb, 0x3b3fffdc,
     0x3b7fffab, 0x3bbfff70, 0x3bfffeab, 0x3c3ffdc0, 0x3c7ffaab, 0x3cbff701, 0x3cffeaad, 0x3d3fdc08,
     0x3d7faacd, 0x3dbf7081, 0x3dfeacc9, 0x3e3dc7fd, 0x3e7acbf5, 0x3eb77a9f, 0x3eec9a9f, 0x3f22991f,
     0x3f42f7d6, 0x3f67b7cc, 0x3f76ca83, 0x3f7ebbe9, 0x3f7fd40c, 0x3f7fff32, 0x3f7ffffc, 0x3f800000},
    {0x3f800000, 0x3f800018, 0x3f7fffe8, 0x3f7fffda, 0x3f7fffdc, 0x3f7fffdc, 0x3f7fffac, 0x3f7fff70,
     0x3f7ffeec, 0x3f7ffdc0, 0x3f7ffbed, 0x3f7ff704, 0x3f7feff5, 0x3f7fdbca, 0x3f7fbfff, 0x3f7f7041,
     0x3f7f009b, 0x3f7dc36c, 0x3f7c0aa8, 0x3f7734b8, 0x3f70a4de, 0x3f5f1fd8, 0x3f495493, 0x3f18b9ec,
     0x3ed706cb, 0x3e390b06, 0x3d90b11f, 0x3c21a053, 0x3aaf7fdb, 0x37ccc1a3, 0x355c6733, 0x00000000},
    {0x00000000, 0xbe4e0ff1, 0x3d25b1b1, 0x3d6b6dab, 0x3c9fb1d5, 0xbabff06f, 0x3c07b3f6, 0xbb3fc1bc,
     0x3a9f5921, 0xbbbf06f2, 0xbbb0f402, 0xbc47db9e, 0xbc73d5e7, 0xbca25bda, 0xbcfca780, 0xbd40e07c,
     0xbd7dab03, 0xbdbe4a0f, 0xbdfb14a5, 0xbe36cc8d, 0xbe6bd102, 0xbe9fe7c5, 0xbeba0f10, 0xbec206a8,
     0xbea3c388, 0xbe277d62, 0xbd8b7960, 0xbc209f49, 0xbaad44ca, 0xb7c6eeac, 0xb663aa41, 0x00000000},
    {0x00000000, 0x45b3ae96, 0xc414eb20, 0xc450e02e, 0xc3152b4e, 0xbead2f56, 0xc2162e02, 0xbeb4bd5a,
     0xc11a59a4, 0xbed2f507, 0xc020d32c, 0x3dd0f506, 0xbf2a75e2, 0xbff950e3, 0xbed47334, 0xbe809b8c,
     0xbeb64532, 0xbe961a5b, 0xbe9b63ac, 0xbea0d4b2, 0xbe828a77, 0xbe378612, 0xbdc20908, 0x3d2d3957,
     0x3dd46e89, 0x3db3f629, 0x3d2c5e7b, 0x3bd20403, 0x3a59dfae, 0x3770af45, 0x372cc014, 0x00000000},
    {0x00000000, 0xcc981a1b, 0x4a7edd3d, 0x4ab1007c, 0x48fedd9c, 0x41a557b5, 0x477ee32a, 0x422557f5,
     0x45ff3ce4, 0x42a55641, 0x446e0867, 0xc33dc19a, 0x42915214, 0x43af4fad, 0x4110fe88, 0xc1099b75,
     0x3fc8a8dc, 0xbfbeaef5, 0xbe365aad, 0x3f4d9652, 0x3ddfa08f, 0x3e34e9b8, 0x3e2d07a6, 0x3dc63567,
     0x3cdaeb78, 0xbcd17537, 0xbc92829c, 0xbb43ab99, 0xb9b471dd, 0xb6baad5a, 0xb78bafc7, 0x00000000},
    {0x00000000, 0x52f688d5, 0xd0505c72, 0xd08f98e3, 0xce505cc9, 0xc7162b8a, 0xcc5061d6, 0xc7162bdf,
     0xca50b37f, 0xc7162a3a, 0xc8422086, 0x471a714e, 0xc5ece1f1, 0xc70e3d90, 0xc3eba94a, 0x43e0c424,
     0xc21f4552, 0x42217cc8, 0x405e7dc4, 0xc10dd401, 0x3e96b602, 0xbd1a6d2f, 0xbd393883, 0xbd674682,
     0xbd310016, 0xb961e269, 0x3ba32495, 0x3a7680d5, 0x38b3173c, 0x35a9deea, 0x375c3f2a, 0x00000000},
    {0x00000000, 0xd8995ed1, 0x558285ea, 0x55b2cd69, 0x53028625, 0x4bc9991f, 0x5082898a, 0x4b4999b3,
     0x4e02c07c, 0x4ac99764, 0x4b72c822, 0xca40c0e1, 0x489413e4, 0x49b12224, 0x46134c4e, 0xc60c2d57,
     0x43c83910, 0xc3c872d1, 0xc186bc9e, 0x42325bc3, 0xbf2ffa4a, 0x3d9a203c, 0xbc545a43, 0xbae08fee,
     0x3c80225d, 0x3b1fd1df, 0xba36b9d1, 0xb91de544, 0xb71f100f, 0xb408e2ed, 0xb685fec8, 0x00000000}};

inline float tanh(float x) {
  const float ax = std::fabs(x);
  const uint32_t idx = (((bits(ax) - 0x39800000u) & 0xffc00000u) >> 22) & 31u;
  const float r = ax - from_bits(bits(ax) & 0xffc00000u);
  float p = from_bits(kTanhTable[6][idx]);
  for (int d = 5; d >= 0; --d) p = std::fma(p, r, from_bits(kTanhTable[d][idx]));
  float y = 1.0f;
  if (from_bits(0x41102cb3u) > ax) y = p;  // below saturation
  if (from_bits(0x39ddb3d7u) > ax) y = ax;  // tanh(x) = x
  return from_bits(bits(y) ^ (bits(x) & 0x80000000u));
}

inline float exp(float x) {
  const float lo = from_bits(0xc2aeac50u), hi = from_bits(0x42b17218u);
  const bool underflow = x < lo;
  x = std::max(std::min(x, hi), lo);
  float fx = x * from_bits(0x3fb8aa3bu);  // log2(e)
  fx = fx + 0.5f;
  const float n = std::floor(fx);
  const float r = std::fma(-n, from_bits(0x3f317218u), x);  // x - n ln 2
  const float scale = underflow ? 0.0f : from_bits(uint32_t(int32_t(n - 1.0f) + 127) << 23);  // 2^(n-1)
  float p = from_bits(0x3c07cfceu);
  for (uint32_t c : {0x3d2b9d0du, 0x3e2aad40u, 0x3efffee3u, 0x3f7ffffbu, 0x3f800000u}) p = std::fma(p, r, from_bits(c));
  return p * scale * 2.0f;
}

inline float sigmoid(float x) {
  const float e = exp(from_bits(bits(x) | 0x80000000u));
  const float y = e / (e + 1.0f);
  return (bits(x) & 0x80000000u) ? y : 1.0f - y;
}

// The forward cell on rows [b0, b1): pre holds the gates' products and gets
// the activated gates; bias is b_ih + b_hh.
void cell_forward(int64_t H, int64_t b0, int64_t b1, float* pre, const float* bias, const float* c_prev, float* c,
                  float* h) {
  for (int64_t b = b0; b < b1; ++b) {
    float* g = pre + b * 4 * H;
    for (int64_t j = 0; j < H; ++j) {
      const float i = sigmoid(g[j] + bias[j]), f = sigmoid(g[H + j] + bias[H + j]);
      const float gg = tanh(g[2 * H + j] + bias[2 * H + j]), o = sigmoid(g[3 * H + j] + bias[3 * H + j]);
      g[j] = i, g[H + j] = f, g[2 * H + j] = gg, g[3 * H + j] = o;
      const float cf = c_prev[b * H + j] * f;
      const float cy = std::fma(i, gg, cf);
      c[b * H + j] = cy;
      h[b * H + j] = tanh(cy) * o;
    }
  }
}

// The backward cell on rows [b0, b1): act holds the activated gates; dh_out
// (the output's gradient) and dh_next (h's through the next step), dc_next
// may be null (zero); dc gets c_prev's gradient (it may be dc_next).
void cell_backward(int64_t H, int64_t b0, int64_t b1, const float* act, const float* c_prev, const float* c,
                   const float* dh_out, const float* dh_next, const float* dc_next, float* dG, float* dc) {
  for (int64_t b = b0; b < b1; ++b) {
    const float* g = act + b * 4 * H;
    float* d = dG + b * 4 * H;
    for (int64_t j = 0; j < H; ++j) {
      const int64_t k = b * H + j;
      const float i = g[j], f = g[H + j], gg = g[2 * H + j], o = g[3 * H + j];
      const float tc = tanh(c[k]);
      const float dh = (dh_out ? dh_out[k] : 0.0f) + (dh_next ? dh_next[k] : 0.0f);
      float t = std::fma(-tc, tc, 1.0f) * dh;
      t = t * o;
      const float dcy = (dc_next ? dc_next[k] : 0.0f) + t;
      d[3 * H + j] = std::fma(-o, o, o) * dh * tc;
      d[j] = std::fma(-i, i, i) * dcy * gg;
      d[H + j] = std::fma(-f, f, f) * dcy * c_prev[k];
      d[2 * H + j] = std::fma(-gg, gg, 1.0f) * (i * dcy);
      dc[k] = dcy * f;
    }
  }
}

}  // namespace onednn_math

struct LayerDims {
  int64_t T, B, I, H;
  bool reverse;
  // Time index of the s-th step taken (reverse layers walk backwards).
  int64_t time(int64_t s) const { return reverse ? T - 1 - s : s; }
};

template <typename S>
const S* ptr(const Tensor& t) {
  return t.defined() ? static_cast<const S*>(t.data_ptr()) : nullptr;
}
template <typename S>
S* mut(const Tensor& t) {
  return t.defined() ? static_cast<S*>(t.data_ptr()) : nullptr;
}

LayerDims check_layer_args(const Tensor& input, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                           const Tensor& b_hh, const Tensor& hx, const Tensor& cx, bool reverse,
                           IntArrayRef batch_sizes, int64_t mode, int64_t hidden_size, bool has_biases,
                           bool batch_first) {
  EMBER_CHECK(mode == kLstmMode, "mkldnn_rnn_layer: only mode 2 (LSTM) is supported, got mode ", mode);
  EMBER_CHECK(batch_sizes.empty(), "mkldnn_rnn_layer: packed sequences (batch_sizes) are not supported");
  EMBER_CHECK(input.dim() == 3, "mkldnn_rnn_layer: expected a 3-D input, got ", input.dim(), "-D");
  const ScalarType t = input.dtype();
  EMBER_CHECK(t == ScalarType::Float || t == ScalarType::Double,
              "mkldnn_rnn_layer: expected a float or double input, got ", scalar_type_name(t));
  std::vector<const Tensor*> all{&input, &w_ih, &w_hh, &hx, &cx};
  if (has_biases) all.insert(all.end(), {&b_ih, &b_hh});
  for (const Tensor* p : all) {
    EMBER_CHECK(p->dtype() == t, "mkldnn_rnn_layer: expected all tensors of dtype ", scalar_type_name(t), ", got ",
                scalar_type_name(p->dtype()));
    EMBER_CHECK(p->is_cpu(), "mkldnn_rnn_layer: expected CPU tensors");
  }
  LayerDims d{input.size(batch_first ? 1 : 0), input.size(batch_first ? 0 : 1), input.size(2), hidden_size, reverse};
  EMBER_CHECK(d.T > 0, "Expected sequence length to be larger than 0 in RNN");
  const int64_t G = 4 * d.H;
  auto expect = [](const Tensor& x, std::vector<int64_t> shape, const char* what) {
    EMBER_CHECK(x.sizes().equals(shape), "mkldnn_rnn_layer: expected ", what, " of shape ", shape_string(shape),
                ", got ", shape_string(x.sizes()));
  };
  expect(w_ih, {G, d.I}, "weight0 (w_ih)");
  expect(w_hh, {G, d.H}, "weight1 (w_hh)");
  if (has_biases) {
    expect(b_ih, {G}, "weight2 (b_ih)");
    expect(b_hh, {G}, "weight3 (b_hh)");
  }
  expect(hx, {d.B, d.H}, "hx");
  expect(cx, {d.B, d.H}, "cx");
  return d;
}

// (T, B, I) contiguous from input laid out (T, B, I), or (B, T, I) with batch_first.
Tensor time_major(const Tensor& t, bool batch_first) { return (batch_first ? t.transpose(0, 1) : t).contiguous(); }

// f(b0, b1) on blocks of batch rows, over threads when the recurrence is
// worth them; BLAS (the float64 steps) then runs one thread per caller
// (Note [BLAS threads]).
template <typename F>
void for_row_blocks(const LayerDims& d, const F& f) {
  const int64_t grain = d.T * d.B * 4 * d.H * d.H >= (int64_t(1) << 18) ? 4 : std::max<int64_t>(d.B, 1);
  if (d.B > grain && get_num_threads() > 1 && !in_parallel_region()) blas::set_num_threads(1);
  parallel_for(0, d.B, grain, f);
}

// The cell on rows [b0, b1) (split further only outside a parallel region).
void cell_rows(DispatchStub<cpu::LstmCellFn>& stub, const cpu::LstmCellArgs& args, ScalarType t, int64_t b0,
               int64_t b1) {
  const int64_t per_row = 4 * args.hidden;
  parallel_for(b0, b1, std::max<int64_t>(1, 16384 / std::max<int64_t>(per_row, 1)),
               [&](int64_t b, int64_t e) { stub(args, t, b, e); });
}

template <typename S>
void layer_forward(const LayerDims& d, const S* x, const S* w_ih, const S* w_hh_t, const S* b_ih, const S* b_hh,
                   const S* hx, const S* cx, S* out, S* gates, S* cs, ScalarType st) {
  const int64_t T = d.T, B = d.B, H = d.H, G = 4 * d.H, BH = B * H;
  std::vector<S> bias;  // b_ih + b_hh, added in each step's product
  if (b_ih) {
    bias.resize(G);
    for (int64_t j = 0; j < G; ++j) bias[j] = b_ih[j] + b_hh[j];
  }
  gemm(false, true, T * B, G, d.I, x, d.I, w_ih, d.I, S(0), gates, G);
  for_row_blocks(d, [&](int64_t b0, int64_t b1) {
    for (int64_t s = 0; s < T; ++s) {
      const int64_t t = d.time(s);
      const S* h_prev = s == 0 ? hx : out + d.time(s - 1) * BH;
      const S* c_prev = s == 0 ? cx : cs + d.time(s - 1) * BH;
      S* g = gates + t * B * G;
      step_gemm(b1 - b0, G, H, h_prev + b0 * H, w_hh_t, g + b0 * G, true, b_ih ? bias.data() : nullptr);
      cpu::LstmCellArgs args{H, g, c_prev, out + t * BH, cs + t * BH, nullptr, nullptr, nullptr, nullptr, nullptr};
      args.gates_act = g;
      cell_rows(cpu::lstm_cell_stub, args, st, b0, b1);
    }
  });
}

// float32 as oneDNN computes it (Note [oneDNN LSTM arithmetic]); chains: the
// brgemm products (grad mode off), else oneDNN's sgemm ones. w_ih_t, w_hh_t
// are (I, 4H) and (H, 4H).
void layer_forward_f32(const LayerDims& d, const float* x, const float* w_ih_t, const float* w_hh_t, const float* b_ih,
                       const float* b_hh, const float* hx, const float* cx, float* out, float* gates, float* cs,
                       bool chains) {
  const int64_t T = d.T, B = d.B, I = d.I, H = d.H, G = 4 * d.H, BH = B * H;
  std::vector<float> bias(G, 0.0f);
  if (b_ih) {
    for (int64_t j = 0; j < G; ++j) bias[j] = b_ih[j] + b_hh[j];
  }
  auto h_prev = [&](int64_t s) { return s == 0 ? hx : out + d.time(s - 1) * BH; };
  auto cell = [&](int64_t s, int64_t b0, int64_t b1) {
    const int64_t t = d.time(s);
    const float* c_prev = s == 0 ? cx : cs + d.time(s - 1) * BH;
    parallel_for(b0, b1, std::max<int64_t>(1, 4096 / std::max<int64_t>(G, 1)), [&](int64_t r0, int64_t r1) {
      onednn_math::cell_forward(H, r0, r1, gates + t * B * G, bias.data(), c_prev, cs + t * BH, out + t * BH);
    });
  };
  if (chains && I == H && !(B == 1 && T > 1)) {
    // One chain over [x_t, h_prev] against [W_ih^T; W_hh^T] per step.
    std::vector<float> w_cat(2 * H * G);
    std::copy_n(w_ih_t, H * G, w_cat.data());
    std::copy_n(w_hh_t, H * G, w_cat.data() + H * G);
    for_row_blocks(d, [&](int64_t b0, int64_t b1) {
      std::vector<float> a_cat((b1 - b0) * 2 * H);
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = d.time(s);
        for (int64_t b = b0; b < b1; ++b) {
          std::copy_n(x + (t * B + b) * H, H, a_cat.data() + (b - b0) * 2 * H);
          std::copy_n(h_prev(s) + b * H, H, a_cat.data() + (b - b0) * 2 * H + H);
        }
        step_gemm(b1 - b0, G, 2 * H, a_cat.data(), w_cat.data(), gates + t * B * G + b0 * G, false);
        cell(s, b0, b1);
      }
    });
    return;
  }
  if (chains) {
    step_gemm(T * B, G, I, x, w_ih_t, gates, false);
    for_row_blocks(d, [&](int64_t b0, int64_t b1) {
      for (int64_t s = 0; s < T; ++s) {
        step_gemm(b1 - b0, G, H, h_prev(s) + b0 * H, w_hh_t, gates + d.time(s) * B * G + b0 * G, true);
        cell(s, b0, b1);
      }
    });
    return;
  }
  auto layer_gemm = [&](int64_t row0, int64_t rows) {
    blas::onednn_sgemm(false, false, int(rows), int(G), int(I), x + row0 * I, int(I), w_ih_t, int(G), 0.0f,
                       gates + row0 * G, int(G));
  };
  if (B < 128 && d.reverse) {
    // One product over the steps in the order they are taken: oneDNN's sgemm
    // may round a row differently at another position.
    std::vector<float> x_taken(T * B * I), g_taken(T * B * G);
    for (int64_t s = 0; s < T; ++s) std::copy_n(x + d.time(s) * B * I, B * I, x_taken.data() + s * B * I);
    blas::onednn_sgemm(false, false, int(T * B), int(G), int(I), x_taken.data(), int(I), w_ih_t, int(G), 0.0f,
                       g_taken.data(), int(G));
    for (int64_t s = 0; s < T; ++s) std::copy_n(g_taken.data() + s * B * G, B * G, gates + d.time(s) * B * G);
  } else if (B < 128) {
    layer_gemm(0, T * B);
  }
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = d.time(s);
    if (B >= 128) layer_gemm(t * B, B);
    blas::onednn_sgemm(false, false, int(B), int(G), int(H), h_prev(s), int(H), w_hh_t, int(G), 1.0f, gates + t * B * G,
                       int(G));
    cell(s, 0, B);
  }
}

struct LayerGrads {
  Tensor input, w_ih, w_hh, b_ih, b_hh, hx, cx;
};

template <typename S>
void layer_backward(const LayerDims& d, const S* x, const S* w_ih, const S* w_hh, const S* hx, const S* cx,
                    const S* out, const S* gates, const S* cs, const S* g_out, const S* g_hy, const S* g_cy, S* dG,
                    S* dh, S* dc, const LayerGrads& r, ScalarType st) {
  const int64_t T = d.T, B = d.B, I = d.I, H = d.H, G = 4 * d.H, BH = B * H;
  const int64_t t0 = d.time(0), t_last = d.time(T - 1);
  for_row_blocks(d, [&](int64_t b0, int64_t b1) {
    // dh, dc rows: the loss's gradient wrt h_t, c_t of the step about to be taken back.
    const int64_t o = b0 * H, n = (b1 - b0) * H;
    if (g_hy)
      std::copy_n(g_hy + o, n, dh + o);
    else
      std::fill_n(dh + o, n, S(0));
    if (g_out) {
      for (int64_t k = o; k < o + n; ++k) dh[k] += g_out[t_last * BH + k];
    }
    if (g_cy) std::copy_n(g_cy + o, n, dc + o);
    for (int64_t s = T - 1; s >= 0; --s) {
      const int64_t t = d.time(s);
      cpu::LstmCellArgs args{H,
                             gates + t * B * G,
                             s == 0 ? cx : cs + d.time(s - 1) * BH,
                             nullptr,
                             nullptr,
                             dh,
                             (s == T - 1 && !g_cy) ? nullptr : dc,
                             cs + t * BH,
                             dG + t * B * G,
                             dc};
      args.activated = true;
      cell_rows(cpu::lstm_cell_backward_stub, args, st, b0, b1);
      if (s > 0) {
        const S* go = g_out ? g_out + d.time(s - 1) * BH : nullptr;
        if (go) std::copy_n(go + o, n, dh + o);
        step_gemm(b1 - b0, H, G, dG + (t * B + b0) * G, w_hh, dh + o, go != nullptr);
      }
    }
    if (r.hx.defined()) step_gemm(b1 - b0, H, G, dG + (t0 * B + b0) * G, w_hh, mut<S>(r.hx) + o, false);
    if (r.cx.defined()) std::copy_n(dc + o, n, mut<S>(r.cx) + o);
  });
  if (r.w_ih.defined()) gemm(true, false, G, I, T * B, dG, G, x, I, S(0), mut<S>(r.w_ih), I);
  if (r.w_hh.defined()) {
    // Step time t's previous h is out[t - 1] (out[t + 1] reversed), hx for the first step.
    S* dw = mut<S>(r.w_hh);
    const S* dg_rest = d.reverse ? dG : dG + B * G;
    const S* h_rest = d.reverse ? out + BH : out;
    gemm(true, false, G, H, (T - 1) * B, dg_rest, G, h_rest, H, S(0), dw, H);
    gemm(true, false, G, H, B, dG + t0 * B * G, G, hx, H, S(1), dw, H);
  }
  if (r.input.defined()) gemm(false, false, T * B, I, G, dG, G, w_ih, I, S(0), mut<S>(r.input), I);
  if (r.b_ih.defined() || r.b_hh.defined()) {
    std::vector<double> sum(G, 0.0);
    for (int64_t row = 0; row < T * B; ++row) {
      const S* g = dG + row * G;
      for (int64_t j = 0; j < G; ++j) sum[j] += g[j];
    }
    for (const Tensor* db : {&r.b_ih, &r.b_hh}) {
      if (!db->defined()) continue;
      S* p = mut<S>(*db);
      for (int64_t j = 0; j < G; ++j) p[j] = static_cast<S>(sum[j]);
    }
  }
}

// The float32 gradients as oneDNN computes them (Note [oneDNN LSTM
// arithmetic]); acts holds the activated gates.
void layer_backward_f32(const LayerDims& d, const float* x, const float* w_ih, const float* w_hh, const float* hx,
                        const float* cx, const float* out, const float* acts, const float* cs, const float* g_out,
                        const float* g_hy, const float* g_cy, float* dG, float* dh, float* dc, const LayerGrads& r) {
  const int64_t T = d.T, B = d.B, I = d.I, H = d.H, G = 4 * d.H, BH = B * H;
  const bool want_db = r.b_ih.defined() || r.b_hh.defined();
  std::vector<float> db(want_db ? G : 0, 0.0f);
  const float* dh_next = g_hy;
  const float* dc_next = g_cy;
  for (int64_t s = T - 1; s >= 0; --s) {
    const int64_t t = d.time(s);
    const float* c_prev = s == 0 ? cx : cs + d.time(s - 1) * BH;
    float* dg = dG + t * B * G;
    parallel_for(0, B, std::max<int64_t>(1, 4096 / std::max<int64_t>(G, 1)), [&](int64_t r0, int64_t r1) {
      onednn_math::cell_backward(H, r0, r1, acts + t * B * G, c_prev, cs + t * BH, g_out ? g_out + t * BH : nullptr,
                                 dh_next, dc_next, dg, dc);
    });
    dc_next = dc;
    blas::onednn_sgemm(false, false, int(B), int(H), int(G), dg, int(G), w_hh, int(H), 0.0f, dh, int(H));
    dh_next = dh;
    for (int64_t b = 0; b < B && want_db; ++b) {
      for (int64_t j = 0; j < G; ++j) db[j] += dg[b * G + j];
    }
  }
  if (r.hx.defined()) std::copy_n(dh, BH, mut<float>(r.hx));
  if (r.cx.defined()) std::copy_n(dc, BH, mut<float>(r.cx));
  // oneDNN's weight gradients are (in, 4H): computed so, then transposed.
  auto transpose_into = [](const std::vector<float>& src, int64_t rows, int64_t cols, float* dst) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) dst[j * rows + i] = src[i * cols + j];
    }
  };
  // The weight products sum over (step, row) in the order the steps are
  // taken, with the previous h of each step (hx for the first); left to right,
  // the first step's product with hx is added last.
  const float* dG_taken = dG;
  const float* x_taken = x;
  std::vector<float> dG_rev, x_rev, h_rev;
  if (d.reverse) {
    dG_rev.resize(T * B * G), x_rev.resize(T * B * I), h_rev.resize(T * BH);
    for (int64_t s = 0; s < T; ++s) {
      const int64_t t = d.time(s);
      std::copy_n(dG + t * B * G, B * G, dG_rev.data() + s * B * G);
      std::copy_n(x + t * B * I, B * I, x_rev.data() + s * B * I);
      std::copy_n(s == 0 ? hx : out + d.time(s - 1) * BH, BH, h_rev.data() + s * BH);
    }
    dG_taken = dG_rev.data(), x_taken = x_rev.data();
  }
  if (r.w_ih.defined()) {
    std::vector<float> w(I * G);
    blas::onednn_sgemm(true, false, int(I), int(G), int(T * B), x_taken, int(I), dG_taken, int(G), 0.0f, w.data(),
                       int(G));
    transpose_into(w, I, G, mut<float>(r.w_ih));
  }
  if (r.w_hh.defined()) {
    std::vector<float> w(H * G);
    if (d.reverse) {
      blas::onednn_sgemm(true, false, int(H), int(G), int(T * B), h_rev.data(), int(H), dG_taken, int(G), 0.0f,
                         w.data(), int(G));
    } else {
      if (T > 1)
        blas::onednn_sgemm(true, false, int(H), int(G), int((T - 1) * B), out, int(H), dG + B * G, int(G), 0.0f,
                           w.data(), int(G));
      blas::onednn_sgemm(true, false, int(H), int(G), int(B), hx, int(H), dG, int(G), T > 1 ? 1.0f : 0.0f, w.data(),
                         int(G));
    }
    transpose_into(w, H, G, mut<float>(r.w_hh));
  }
  if (r.input.defined()) {
    float* dx = mut<float>(r.input);
    std::vector<float> dx_taken(d.reverse ? T * B * I : 0);
    blas::onednn_sgemm(false, false, int(T * B), int(I), int(G), dG_taken, int(G), w_ih, int(I), 0.0f,
                       d.reverse ? dx_taken.data() : dx, int(I));
    for (int64_t s = 0; s < T && d.reverse; ++s)
      std::copy_n(dx_taken.data() + s * B * I, B * I, dx + d.time(s) * B * I);
  }
  for (const Tensor* p : {&r.b_ih, &r.b_hh}) {
    if (p->defined()) std::copy(db.begin(), db.end(), mut<float>(*p));
  }
}

Tensor contiguous_or_undefined(const std::optional<Tensor>& t) {
  return t && t->defined() ? t->contiguous() : Tensor();
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> lstm_layer_cpu(const Tensor& input, const Tensor& weight0,
                                                          const Tensor& weight1, const Tensor& weight2,
                                                          const Tensor& weight3, const Tensor& hx_, const Tensor& cx_,
                                                          bool reverse, IntArrayRef batch_sizes, int64_t mode,
                                                          int64_t hidden_size, int64_t /*num_layers*/, bool has_biases,
                                                          bool /*bidirectional*/, bool batch_first, bool /*train*/) {
  const LayerDims d = check_layer_args(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes, mode,
                                       hidden_size, has_biases, batch_first);
  const ScalarType st = input.dtype();
  const Device dev = input.device();
  Tensor x = time_major(input, batch_first), w_ih = weight0.contiguous(), w_hh_t = weight1.t().contiguous();
  Tensor b_ih = has_biases ? weight2.contiguous() : Tensor(), b_hh = has_biases ? weight3.contiguous() : Tensor();
  Tensor hx = hx_.contiguous(), cx = cx_.contiguous();
  const int64_t T = d.T, B = d.B, H = d.H;
  Tensor output = ember::empty({T, B, H}, st, dev);
  Tensor workspace = ember::empty({T * B * 5 * H}, st, dev);
  auto run = [&](auto zero) {
    using S = decltype(zero);
    S* ws = mut<S>(workspace);
    layer_forward<S>(d, ptr<S>(x), ptr<S>(w_ih), ptr<S>(w_hh_t), ptr<S>(b_ih), ptr<S>(b_hh), ptr<S>(hx), ptr<S>(cx),
                     mut<S>(output), ws, ws + T * B * 4 * H, st);
  };
  if (st == ScalarType::Float) {
    float* ws = mut<float>(workspace);
    const bool chains = !autograd::GradMode::is_enabled() && blas::onednn_has_avx2();
    Tensor w_ih_t = weight0.t().contiguous();
    layer_forward_f32(d, ptr<float>(x), ptr<float>(w_ih_t), ptr<float>(w_hh_t), ptr<float>(b_ih), ptr<float>(b_hh),
                      ptr<float>(hx), ptr<float>(cx), mut<float>(output), ws, ws + T * B * 4 * H, chains);
  } else {
    run(0.0);
  }
  const int64_t t_last = d.time(T - 1);
  Tensor hy = output.select(0, t_last).clone();
  Tensor cy = workspace.narrow(0, (T * B * 4 + t_last * B) * H, B * H).view({B, H}).clone();
  return {batch_first ? output.transpose(0, 1) : output, hy, cy, workspace};
}

namespace {

using LayerGradTuple = std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor>;

// The gradients of Note [LSTM layer op] with kernels and raw buffers.
LayerGradTuple layer_backward_kernel(const Tensor& input, const Tensor& weight1, const Tensor& weight2,
                                     const Tensor& weight3, const Tensor& weight4, const Tensor& hx_,
                                     const Tensor& cx_tmp, const Tensor& output, const Tensor& /*hy_*/,
                                     const Tensor& /*cy_*/, const std::optional<Tensor>& grad_output,
                                     const std::optional<Tensor>& grad_hy, const std::optional<Tensor>& grad_cy,
                                     bool reverse, int64_t mode, int64_t hidden_size, int64_t /*num_layers*/,
                                     bool has_biases, bool /*train*/, bool /*bidirectional*/, IntArrayRef batch_sizes,
                                     bool batch_first, const Tensor& workspace, std::array<bool, 7> output_mask) {
  const LayerDims d = check_layer_args(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, reverse, batch_sizes,
                                       mode, hidden_size, has_biases, batch_first);
  const ScalarType st = input.dtype();
  const Device dev = input.device();
  const int64_t T = d.T, B = d.B, I = d.I, H = d.H, G = 4 * d.H;
  EMBER_CHECK(workspace.numel() == T * B * 5 * H && workspace.dtype() == st,
              "mkldnn_rnn_layer_backward: the workspace does not match the input");
  LayerGrads r;
  if (output_mask[0]) r.input = ember::empty({T, B, I}, st, dev);
  if (output_mask[1]) r.w_ih = ember::empty({G, I}, st, dev);
  if (output_mask[2]) r.w_hh = ember::empty({G, H}, st, dev);
  if (has_biases && output_mask[3]) r.b_ih = ember::empty({G}, st, dev);
  if (has_biases && output_mask[4]) r.b_hh = ember::empty({G}, st, dev);
  if (output_mask[5]) r.hx = ember::empty({B, H}, st, dev);
  if (output_mask[6]) r.cx = ember::empty({B, H}, st, dev);
  Tensor go = contiguous_or_undefined(grad_output), ghy = contiguous_or_undefined(grad_hy),
         gcy = contiguous_or_undefined(grad_cy);
  if (go.defined() && batch_first) go = go.transpose(0, 1).contiguous();
  if (!go.defined() && !ghy.defined() && !gcy.defined()) {
    // Nothing flows back: every requested gradient is zero.
    for (Tensor* g : {&r.input, &r.w_ih, &r.w_hh, &r.b_ih, &r.b_hh, &r.hx, &r.cx}) {
      if (g->defined()) g->zero_();
    }
  } else {
    Tensor x = time_major(input, batch_first), w_ih = weight1.contiguous(), w_hh = weight2.contiguous();
    Tensor hx = hx_.contiguous(), cx = cx_tmp.contiguous(), out = time_major(output, batch_first);
    Tensor ws = workspace.contiguous();
    Tensor dG = ember::empty({T * B * G}, st, dev), dh = ember::empty({B * H}, st, dev),
           dc = ember::empty({B * H}, st, dev);
    auto run = [&](auto zero) {
      using S = decltype(zero);
      const S* w = ptr<S>(ws);
      layer_backward<S>(d, ptr<S>(x), ptr<S>(w_ih), ptr<S>(w_hh), ptr<S>(hx), ptr<S>(cx), ptr<S>(out), w, w + T * B * G,
                        ptr<S>(go), ptr<S>(ghy), ptr<S>(gcy), mut<S>(dG), mut<S>(dh), mut<S>(dc), r, st);
    };
    if (st == ScalarType::Float) {
      const float* w = ptr<float>(ws);
      layer_backward_f32(d, ptr<float>(x), ptr<float>(w_ih), ptr<float>(w_hh), ptr<float>(hx), ptr<float>(cx),
                         ptr<float>(out), w, w + T * B * G, ptr<float>(go), ptr<float>(ghy), ptr<float>(gcy),
                         mut<float>(dG), mut<float>(dh), mut<float>(dc), r);
    } else {
      run(0.0);
    }
  }
  if (r.input.defined() && batch_first) r.input = r.input.transpose(0, 1);
  return {r.input, r.w_ih, r.w_hh, r.b_ih, r.b_hh, r.hx, r.cx};
}

Tensor one_minus(const Tensor& t) { return (-t) + 1.0; }

// The same gradients from differentiable operators: the forward recomputed
// step by step, then the backward recurrence written with operators, so a
// graph is recorded when the backward runs in grad mode (double backward).
LayerGradTuple layer_backward_differentiable(const LayerDims& d, const Tensor& input, const Tensor& w_ih,
                                             const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                                             const Tensor& hx, const Tensor& cx, const Tensor& grad_output,
                                             const Tensor& grad_hy, const Tensor& grad_cy, bool has_biases,
                                             bool batch_first, std::array<bool, 7> mask) {
  const int64_t T = d.T, B = d.B, I = d.I, H = d.H, G = 4 * d.H;
  const Tensor x = batch_first ? input.transpose(0, 1) : input;
  Tensor proj = ember::matmul(x, w_ih.t());
  if (has_biases) proj = proj + b_ih + b_hh;
  std::vector<Tensor> i_(T), f_(T), g_(T), o_(T), c_prev(T), c_(T), h_prev(T);
  Tensor h = hx, c = cx;
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = d.time(s);
    std::vector<Tensor> q = ember::chunk(proj.select(0, t) + ember::mm(h, w_hh.t()), 4, 1);
    i_[t] = q[0].sigmoid(), f_[t] = q[1].sigmoid(), g_[t] = q[2].tanh(), o_[t] = q[3].sigmoid();
    c_prev[t] = c, h_prev[t] = h;
    c = f_[t] * c + i_[t] * g_[t];
    h = o_[t] * c.tanh();
    c_[t] = c;
  }
  const Tensor go = grad_output.defined() && batch_first ? grad_output.transpose(0, 1) : grad_output;
  Tensor dh = grad_hy.defined() ? grad_hy : ember::zeros_like(hx);
  Tensor dc = grad_cy.defined() ? grad_cy : ember::zeros_like(cx);
  std::vector<Tensor> dgates(T);
  for (int64_t s = T - 1; s >= 0; --s) {
    const int64_t t = d.time(s);
    if (go.defined()) dh = dh + go.select(0, t);
    const Tensor tc = c_[t].tanh();
    dc = dc + dh * o_[t] * one_minus(tc * tc);
    const Tensor& i = i_[t];
    const Tensor& f = f_[t];
    const Tensor& g = g_[t];
    const Tensor& o = o_[t];
    dgates[t] = ember::cat({dc * g * i * one_minus(i), dc * c_prev[t] * f * one_minus(f), dc * i * one_minus(g * g),
                            dh * tc * o * one_minus(o)},
                           1);
    dh = ember::mm(dgates[t], w_hh);
    dc = dc * f;
  }
  const Tensor dG = ember::stack(dgates, 0).reshape({T * B, G});
  Tensor dx, dw_ih, dw_hh, db_ih, db_hh;
  if (mask[0]) {
    dx = ember::mm(dG, w_ih).reshape({T, B, I});
    if (batch_first) dx = dx.transpose(0, 1);
  }
  if (mask[1]) dw_ih = ember::mm(dG.t(), x.reshape({T * B, I}));
  if (mask[2]) dw_hh = ember::mm(dG.t(), ember::stack(h_prev, 0).reshape({T * B, H}));
  if (has_biases && (mask[3] || mask[4])) {
    const Tensor db = ember::sum(dG, std::vector<int64_t>{0});
    if (mask[3]) db_ih = db;
    if (mask[4]) db_hh = mask[3] ? db.clone() : db;
  }
  return {dx, dw_ih, dw_hh, db_ih, db_hh, mask[5] ? dh : Tensor(), mask[6] ? dc : Tensor()};
}

}  // namespace

LayerGradTuple lstm_layer_backward(const Tensor& input, const Tensor& weight1, const Tensor& weight2,
                                   const Tensor& weight3, const Tensor& weight4, const Tensor& hx_,
                                   const Tensor& cx_tmp, const Tensor& output, const Tensor& hy_, const Tensor& cy_,
                                   const std::optional<Tensor>& grad_output, const std::optional<Tensor>& grad_hy,
                                   const std::optional<Tensor>& grad_cy, bool reverse, int64_t mode,
                                   int64_t hidden_size, int64_t num_layers, bool has_biases, bool train,
                                   bool bidirectional, IntArrayRef batch_sizes, bool batch_first,
                                   const Tensor& workspace, std::array<bool, 7> output_mask) {
  if (!autograd::GradMode::is_enabled()) {
    return layer_backward_kernel(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, output, hy_, cy_, grad_output,
                                 grad_hy, grad_cy, reverse, mode, hidden_size, num_layers, has_biases, train,
                                 bidirectional, batch_sizes, batch_first, workspace, output_mask);
  }
  const LayerDims d = check_layer_args(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, reverse, batch_sizes,
                                       mode, hidden_size, has_biases, batch_first);
  auto get = [](const std::optional<Tensor>& t) { return t ? *t : Tensor(); };
  return layer_backward_differentiable(d, input, weight1, weight2, weight3, weight4, hx_, cx_tmp, get(grad_output),
                                       get(grad_hy), get(grad_cy), has_biases, batch_first, output_mask);
}

}  // namespace native
}  // namespace ember
