// The connectionist temporal classification loss on the CPU: _ctc_loss (the
// log-alpha recursion, per sample) and _ctc_loss_backward (log-beta and the
// gradient with respect to log_probs), with PyTorch's checks and arithmetic.
// See Note [CTC recursions].
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

// Note [CTC recursions]
// A target l1..lS is widened to blank, l1, blank, ..., lS, blank (2S+1 states,
// "primes"). alpha[t][s] = logsumexp(alpha[t-1][s], alpha[t-1][s-1], and
// alpha[t-1][s-2] when prime s differs from prime s-2) + log_probs[t][prime s];
// beta runs the same recursion backwards from the last step. Each sum is
// log(exp(a - m) + exp(b - m) + exp(c - m)) + m in the input's dtype with m the
// largest term (0 when all are -inf), as PyTorch computes it, so the losses
// and gradients are PyTorch's to the last bit. The gradient for step t and
// class c is (exp(lp) - exp(log(sum over s with prime c of alpha*beta) + nll -
// lp)) * grad; steps past a sample's input length get zero.

namespace {

struct CtcLayout {
  int64_t steps, batch, classes;
  std::vector<int64_t> target_offset;  // first label of each sample in targets
  int64_t target_stride;
  int64_t max_target_length = 0;
};

std::string ctc_arg(const char* name, int pos) { return str_cat("argument #", pos, " '", name, "'"); }

// PyTorch's checks of ctc_loss_cpu, in its order and words.
CtcLayout ctc_layout(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                     IntArrayRef target_lengths, int64_t blank) {
  const char* where = " (while checking arguments for ctc_loss_allocate_outputs)";
  EMBER_CHECK(targets.scalar_type() == ScalarType::Long || targets.scalar_type() == ScalarType::Int,
              "Expected tensor for ", ctc_arg("targets", 2), " to have scalar type Int; but got ",
              dtype_message_name(targets.scalar_type()), " instead", where);
  EMBER_CHECK(log_probs.dim() == 3, "Expected 3-dimensional tensor, but got ", log_probs.dim(),
              "-dimensional tensor for ", ctc_arg("log_probs", 1), where);
  EMBER_CHECK(targets.dim() >= 1 && targets.dim() <= 2, "Expected 1 to 2 dimensions, but got ", targets.dim(),
              "-dimensional tensor for ", ctc_arg("targets", 2), where);
  CtcLayout l;
  l.steps = log_probs.size(0);
  l.batch = log_probs.size(1);
  l.classes = log_probs.size(2);
  EMBER_CHECK(blank >= 0 && blank < l.classes, "blank must be in label range");
  EMBER_CHECK(static_cast<int64_t>(input_lengths.size()) == l.batch, "input_lengths must be of size batch_size");
  EMBER_CHECK(static_cast<int64_t>(target_lengths.size()) == l.batch, "target_lengths must be of size batch_size");
  l.target_offset.resize(l.batch);
  int64_t pos = 0;
  for (int64_t b = 0; b < l.batch; ++b) {
    EMBER_CHECK(target_lengths[b] >= 0, "Expected target_lengths to have value at least 0, but got value ",
                target_lengths[b], where);
    l.target_offset[b] = targets.dim() == 1 ? pos : b * targets.stride(0);
    pos += target_lengths[b];
    l.max_target_length = std::max(l.max_target_length, target_lengths[b]);
  }
  if (targets.dim() == 1) {
    l.target_stride = targets.stride(0);
    EMBER_CHECK(targets.size(0) == pos, "Expected tensor to have size ", pos, " at dimension 0, but got size ",
                targets.size(0), " for ", ctc_arg("targets", 2), where);
  } else {
    l.target_stride = targets.stride(1);
    EMBER_CHECK(targets.size(0) == l.batch, "Expected tensor to have size ", l.batch, " at dimension 0, but got size ",
                targets.size(0), " for ", ctc_arg("targets", 2), where);
    EMBER_CHECK(targets.size(1) >= l.max_target_length, "Expected tensor to have size at least ", l.max_target_length,
                " at dimension 1, but got size ", targets.size(1), " for ", ctc_arg("targets", 2), where);
  }
  for (int64_t b = 0; b < l.batch; ++b) {
    EMBER_CHECK(input_lengths[b] >= 0, "Expected input_lengths to have value at least 0, but got value ",
                input_lengths[b], where);
    EMBER_CHECK(input_lengths[b] <= l.steps, "Expected input_lengths to have value at most ", l.steps,
                ", but got value ", input_lengths[b], where);
  }
  return l;
}

// The primes (blank, l1, blank, ...) of sample b, as int64.
template <typename index_t>
void fill_primes(std::vector<int64_t>& primes, const index_t* targets, int64_t offset, int64_t stride, int64_t length,
                 int64_t blank) {
  primes.assign(2 * length + 1, blank);
  for (int64_t j = 0; j < length; ++j) primes[2 * j + 1] = static_cast<int64_t>(targets[offset + j * stride]);
}

void primes_of(std::vector<int64_t>& primes, const Tensor& targets, const CtcLayout& l, int64_t b, int64_t length,
               int64_t blank) {
  if (targets.scalar_type() == ScalarType::Long) {
    fill_primes(primes, static_cast<const int64_t*>(targets.data_ptr()), l.target_offset[b], l.target_stride, length,
                blank);
  } else {
    fill_primes(primes, static_cast<const int32_t*>(targets.data_ptr()), l.target_offset[b], l.target_stride, length,
                blank);
  }
}

// log(exp(a - m) + exp(b - m) + exp(c - m)) + m, m the largest (0 if all -inf).
template <typename T>
inline T log_sum3(T a, T b, T c) {
  constexpr T neginf = -std::numeric_limits<T>::infinity();
  T m = std::max(a, std::max(b, c));
  if (m == neginf) m = 0;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

template <typename T>
void ctc_forward(const Tensor& lp, const Tensor& targets, IntArrayRef input_lengths, IntArrayRef target_lengths,
                 int64_t blank, const CtcLayout& l, Tensor& nll, Tensor& log_alpha) {
  constexpr T neginf = -std::numeric_limits<T>::infinity();
  const T* lp_data = static_cast<const T*>(lp.data_ptr());
  T* la_data = static_cast<T*>(log_alpha.data_ptr());
  T* nll_data = static_cast<T*>(nll.data_ptr());
  const int64_t lp_t = lp.stride(0), lp_b = lp.stride(1), lp_c = lp.stride(2);
  const int64_t states = 2 * l.max_target_length + 1;
  parallel_for(0, l.batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> primes;
    std::vector<char> skip;
    for (int64_t b = begin; b < end; ++b) {
      const int64_t in_len = input_lengths[b], tg_len = target_lengths[b];
      T* la = la_data + b * l.steps * states;
      std::fill(la, la + l.steps * states, neginf);
      if (in_len == 0) {
        nll_data[b] = tg_len == 0 ? T(0) : std::numeric_limits<T>::infinity();
        continue;
      }
      primes_of(primes, targets, l, b, tg_len, blank);
      const int64_t n = 2 * tg_len + 1;
      skip.assign(n, 0);
      for (int64_t s = 2; s < n; ++s) skip[s] = primes[s - 2] != primes[s];
      const T* lpb = lp_data + b * lp_b;
      la[0] = lpb[blank * lp_c];
      if (tg_len > 0) la[1] = lpb[primes[1] * lp_c];
      for (int64_t t = 1; t < in_len; ++t) {
        const T* prev = la + (t - 1) * states;
        T* cur = la + t * states;
        const T* lpt = lpb + t * lp_t;
        for (int64_t s = 0; s < n; ++s) {
          const T a1 = prev[s];
          const T a2 = s > 0 ? prev[s - 1] : neginf;
          const T a3 = skip[s] ? prev[s - 2] : neginf;
          cur[s] = log_sum3(a1, a2, a3) + lpt[primes[s] * lp_c];
        }
      }
      const T* last = la + (in_len - 1) * states;
      if (tg_len == 0) {
        nll_data[b] = -last[0];
      } else {
        const T l1 = last[2 * tg_len], l2 = last[2 * tg_len - 1];
        T m = std::max(l1, l2);
        if (m == neginf) m = 0;
        nll_data[b] = -(std::log(std::exp(l1 - m) + std::exp(l2 - m)) + m);
      }
    }
  });
}

template <typename T>
void ctc_backward(const Tensor& grad_out, const Tensor& lp, const Tensor& targets, IntArrayRef input_lengths,
                  IntArrayRef target_lengths, const Tensor& nll, const Tensor& log_alpha, int64_t blank,
                  bool zero_infinity, const CtcLayout& l, Tensor& grad) {
  constexpr T neginf = -std::numeric_limits<T>::infinity();
  const T* lp_data = static_cast<const T*>(lp.data_ptr());
  const T* la_data = static_cast<const T*>(log_alpha.data_ptr());
  const T* nll_data = static_cast<const T*>(nll.data_ptr());
  const T* go_data = static_cast<const T*>(grad_out.data_ptr());
  const int64_t go_stride = grad_out.dim() ? grad_out.stride(0) : 0;
  T* g_data = static_cast<T*>(grad.data_ptr());
  const int64_t lp_t = lp.stride(0), lp_b = lp.stride(1), lp_c = lp.stride(2);
  const int64_t la_b = log_alpha.stride(0), la_t = log_alpha.stride(1), la_s = log_alpha.stride(2);
  const int64_t g_t = grad.stride(0), g_b = grad.stride(1);  // grad is contiguous (T, N, C)
  const int64_t C = l.classes;
  parallel_for(0, l.batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> primes;
    std::vector<char> skip;
    std::vector<T> beta_next, beta_cur;
    for (int64_t b = begin; b < end; ++b) {
      const int64_t in_len = input_lengths[b], tg_len = target_lengths[b];
      const T nll_b = nll_data[b];
      T* gb = g_data + b * g_b;
      if (zero_infinity && nll_b == std::numeric_limits<T>::infinity()) {
        for (int64_t t = 0; t < l.steps; ++t) std::fill(gb + t * g_t, gb + t * g_t + C, T(0));
        continue;
      }
      for (int64_t t = 0; t < in_len; ++t) std::fill(gb + t * g_t, gb + t * g_t + C, neginf);
      const int64_t n = 2 * tg_len + 1;
      primes_of(primes, targets, l, b, tg_len, blank);
      skip.assign(n + 2, 0);  // skip[s]: state s may come from s + 2
      for (int64_t s = 0; s + 2 < n; ++s) skip[s] = primes[s + 2] != primes[s];
      const T* lpb = lp_data + b * lp_b;
      const T* lab = la_data + b * la_b;
      beta_next.assign(n + 2, neginf);
      beta_cur.assign(n + 2, neginf);
      if (in_len > 0) {
        const int64_t t = in_len - 1;
        const T* lpt = lpb + t * lp_t;
        beta_next[2 * tg_len] = lpt[blank * lp_c];
        gb[t * g_t + blank] = lab[t * la_t + 2 * tg_len * la_s] + beta_next[2 * tg_len];
        if (tg_len > 0) {
          const int64_t c = primes[2 * tg_len - 1];
          beta_next[2 * tg_len - 1] = lpt[c * lp_c];
          gb[t * g_t + c] = lab[t * la_t + (2 * tg_len - 1) * la_s] + beta_next[2 * tg_len - 1];
        }
      }
      for (int64_t t = in_len - 2; t >= 0; --t) {
        const T* lpt = lpb + t * lp_t;
        const T* lat = lab + t * la_t;
        T* gt = gb + t * g_t;
        for (int64_t s = n - 1; s >= 0; --s) {
          const T b1 = beta_next[s];
          const T b2 = s < n - 1 ? beta_next[s + 1] : neginf;
          const T b3 = skip[s] ? beta_next[s + 2] : neginf;
          const int64_t c = primes[s];
          const T beta = log_sum3(b1, b2, b3) + lpt[c * lp_c];
          beta_cur[s] = beta;
          const T ab = lat[s * la_s] + beta;
          T& lcab = gt[c];
          if (lcab == neginf) {
            lcab = ab;
          } else {
            const T m = std::max(lcab, ab);
            lcab = std::log(std::exp(lcab - m) + std::exp(ab - m)) + m;
          }
        }
        std::swap(beta_next, beta_cur);
      }
      const T gr = go_data[b * go_stride];
      for (int64_t t = 0; t < in_len; ++t) {
        const T* lpt = lpb + t * lp_t;
        T* gt = gb + t * g_t;
        for (int64_t c = 0; c < C; ++c) {
          const T lpv = lpt[c * lp_c];
          gt[c] = (std::exp(lpv) - std::exp(gt[c] + nll_b - lpv)) * gr;
        }
      }
      for (int64_t t = in_len; t < l.steps; ++t) std::fill(gb + t * g_t, gb + t * g_t + C, T(0));
    }
  });
}

void check_ctc_dtype(ScalarType t, const char* name) {
  if (t != ScalarType::Float && t != ScalarType::Double) {
    throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(t), "'"));
  }
}

}  // namespace

std::tuple<Tensor, Tensor> ctc_loss_cpu(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                                        IntArrayRef target_lengths, int64_t blank, bool zero_infinity) {
  (void)zero_infinity;  // used by the backward only
  check_ctc_dtype(log_probs.scalar_type(), "ctc_loss_cpu");
  const CtcLayout l = ctc_layout(log_probs, targets, input_lengths, target_lengths, blank);
  Tensor log_alpha = ember::empty({l.batch, l.steps, 2 * l.max_target_length + 1}, log_probs.scalar_type());
  Tensor nll = ember::empty({l.batch}, log_probs.scalar_type());
  if (log_probs.scalar_type() == ScalarType::Double) {
    ctc_forward<double>(log_probs, targets, input_lengths, target_lengths, blank, l, nll, log_alpha);
  } else {
    ctc_forward<float>(log_probs, targets, input_lengths, target_lengths, blank, l, nll, log_alpha);
  }
  return {nll, log_alpha};
}

Tensor ctc_loss_backward_cpu(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                             IntArrayRef input_lengths, IntArrayRef target_lengths, const Tensor& neg_log_likelihood,
                             const Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  const CtcLayout l = ctc_layout(log_probs, targets, input_lengths, target_lengths, blank);
  check_ctc_dtype(log_probs.scalar_type(), "ctc_loss_backward_cpu");
  Tensor result = ember::empty({l.steps, l.batch, l.classes}, log_probs.scalar_type());
  const Tensor g = grad.to(log_probs.scalar_type()).contiguous();
  const Tensor nll = neg_log_likelihood.contiguous();
  if (log_probs.scalar_type() == ScalarType::Double) {
    ctc_backward<double>(g, log_probs, targets, input_lengths, target_lengths, nll, log_alpha, blank, zero_infinity, l,
                         result);
  } else {
    ctc_backward<float>(g, log_probs, targets, input_lengths, target_lengths, nll, log_alpha, blank, zero_infinity, l,
                        result);
  }
  return result;
}

}  // namespace ember::native
