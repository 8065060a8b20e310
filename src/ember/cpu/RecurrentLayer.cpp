// Note [LSTM layer op]
// nn.LSTM runs each layer and direction as one call of mkldnn_rnn_layer, the
// name of PyTorch's CPU layer operator, so outputs show the same node
// (MkldnnRnnLayerBackward0). Shapes: T steps, B rows, I inputs, H hidden
// units, G = 4H gates (i, f, g, o).
// Forward: one GEMM projects the whole sequence, X W_ih^T, into the gate
// buffer (T, B, G); each step adds h_prev W_hh^T into its slice and runs the
// fused cell, which adds b_ih + b_hh and writes the activated gates back over
// the pre-activations. float32 follows oneDNN's RNN, which PyTorch runs, to
// the bit (Note [oneDNN LSTM arithmetic]); float64 adds the bias in the step
// product and runs Note [Fused LSTM cell]. The workspace is that buffer
// followed by every c_t (T, B, H), in the input's dtype.
// Backward walks the steps in reverse: the cell's backward gives dgates_t and
// dc_prev from dh_t and dc_t, and dh_prev = dgates_t W_hh + grad_output_prev.
// Then one GEMM each over all steps gives dW_ih = dG^T X, dW_hh = dG^T H_prev
// (plus the first step's dgates^T hx), dX = dG W_ih; db is dG's column sums.
// A backward that records a graph (create_graph=True) takes a second,
// operator-by-operator path instead, as PyTorch's does, so the gradients can
// be differentiated again.
// The large GEMMs go straight to BLAS (cpu/Blas.h; float32: oneDNN's sgemm),
// the per-step ones to oneDNN's sgemm or Ember's kernel (float32, Note
// [Recurrent step GEMM]) or BLAS (float64), all on buffers allocated once:
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
EMBER_DEFINE_DISPATCH(OnednnLstmCellFn, onednn_lstm_cell_stub);
EMBER_DEFINE_DISPATCH(OnednnLstmCellBackwardFn, onednn_lstm_cell_backward_stub);
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
    cpu::recurrent_gemm_stub.get()(m, u0 * lanes, std::min(n, u1 * lanes), k, a, k, b, n, c, n, accumulate, bias);
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
  const auto kernel = stub.get();  // the layer takes CPU tensors only (check_layer_args)
  parallel_for(b0, b1, std::max<int64_t>(1, 16384 / std::max<int64_t>(per_row, 1)),
               [&](int64_t b, int64_t e) { kernel(args, t, b, e); });
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
      cpu::onednn_lstm_cell_stub.get()(H, r0, r1, gates + t * B * G, bias.data(), c_prev, cs + t * BH, out + t * BH);
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
      cpu::onednn_lstm_cell_backward_stub.get()(H, r0, r1, acts + t * B * G, c_prev, cs + t * BH,
                                                g_out ? g_out + t * BH : nullptr, dh_next, dc_next, dg, dc);
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
