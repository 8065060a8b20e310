#pragma once
// One-dimensional FFT plans of any length, float and double.
//
// ComplexPlan: an unnormalised complex DFT, forward (exp(-2 pi i jk/n)) or
// inverse (exp(+2 pi i jk/n)). Lengths whose prime factors are at most
// kMaxDirectRadix run a mixed-radix Stockham (self-sorting) transform with
// butterflies of 16, 8, 4, 2, 3, 5 and a generic odd radix; other lengths run
// Bluestein's chirp-z algorithm over a 2-3-5-smooth length >= 2n - 1.
// RealPlan: real-to-complex (onesided, n/2 + 1 outputs) and complex-to-real
// transforms; even lengths run a complex transform of half the length.
// Plans are immutable, cached per length and shared between threads; the
// caller supplies the scratch memory (work_size() elements).
#include <algorithm>
#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

namespace ember::fft {

constexpr int64_t kMaxDirectRadix = 31;
// Bytes of one vector of a packed (several lines at once) transform.
constexpr int kPackBytes = 32;

// One stage of a plan: radix, sub-length after it, stride, twiddles and (odd
// radices above 5) the cosines and sines of 2 pi j / radix.
template <typename T>
struct StageView {
  int radix;
  int64_t m;
  int64_t s;
  const std::complex<T>* tw;
  const T* cs;
  const T* sn;
};

template <typename T>
class ComplexPlan {
 public:
  using C = std::complex<T>;
  explicit ComplexPlan(int64_t n);
  int64_t size() const { return n_; }
  int64_t work_size() const { return work_size_; }
  // True for the mixed-radix path (false: Bluestein).
  bool direct() const { return !inner_; }
  // Transforms data[0, n) in place; work holds work_size() elements.
  void run(C* data, C* work, bool inverse) const;
  // Lines packed per run_packed call (a vector of T).
  static constexpr int kPackLines = kPackBytes / sizeof(T);
  // Transforms kPackLines lines at once with the butterflies on vectors:
  // element i of line k is read from in[k][i * in_stride] and its transform
  // written to out[k][i * out_stride] times scale (in == out allowed); work
  // holds packed_work_size() reals.
  // With split_tw (direct() plans only; RealPlan::split_twiddles()), the
  // lines are even/odd packed real lines and out gets their r2c outputs.
  void run_packed(const C* const* in, int64_t in_stride, C* const* out, int64_t out_stride, T* work, bool inverse,
                  T scale = T(1), const C* split_tw = nullptr) const;
  // run_packed on the lines data + k * dist, in place.
  void run_packed(C* data, int64_t dist, T* work, bool inverse) const;
  int64_t packed_work_size() const {
    if (inner_) return inner_->packed_work_size();
    return 4 * n_ * kPackLines + kPackBytes;
  }

 private:
  struct Stage {
    int radix;
    int64_t m;  // sub-length after this stage
    int64_t s;  // stride (product of earlier radices)
    std::vector<C> tw;  // tw[p * (radix - 1) + k - 1] = exp(-2 pi i p k / (radix * m))
  };
  template <bool Inverse>
  void run_stockham(C* data, C* work) const;
  void run_bluestein(C* data, C* work, bool inverse) const;
  void run_bluestein_packed(const C* const* in, int64_t in_stride, C* const* out, int64_t out_stride, T* work,
                            bool inverse, T scale) const;

  int64_t n_;
  int64_t work_size_;
  std::vector<Stage> stages_;
  std::vector<StageView<T>> views_;
  // Generic odd radices: cos/sin of 2 pi j / r, per radix r (indexed by r).
  std::vector<std::vector<T>> root_cos_, root_sin_;
  // Bluestein: chirp w_k = exp(-i pi k^2 / n), FFT of conj(w) over m points / m.
  std::unique_ptr<ComplexPlan<T>> inner_;
  std::vector<C> chirp_, chirp_spectrum_;
};

template <typename T>
class RealPlan {
 public:
  using C = std::complex<T>;
  explicit RealPlan(int64_t n);
  int64_t size() const { return n_; }
  int64_t work_size() const { return work_size_; }
  // in: n reals; out: n/2 + 1 complex values.
  void forward(const T* in, C* out, C* work) const;
  // forward() of an even length in three steps, so that the middle one (the
  // half-length complex transform) can run packed over several lines.
  bool even() const { return n_ % 2 == 0 && n_ >= 2; }
  const ComplexPlan<T>& half_plan() const { return *plan_; }
  void pack_even_odd(const T* in, C* out) const;
  // Turns the half-length transform (out[k * stride], k < n/2) into the
  // n/2 + 1 outputs of forward(), times scale.
  void split_even_odd(C* out, int64_t stride = 1, T scale = T(1)) const;
  // exp(-2 pi i k / n), k <= n/2 (even lengths).
  const C* split_twiddles() const { return tw_.data(); }
  // in: n/2 + 1 complex values (imag of the 0 and n/2 terms ignored); out: n reals.
  void inverse(const C* in, T* out, C* work) const;

 private:
  int64_t n_;
  int64_t work_size_;
  std::shared_ptr<const ComplexPlan<T>> plan_;  // n/2 points when n is even, else n
  std::vector<C> tw_;  // exp(-2 pi i k / n), k <= n/2
};

// Cached plans (thread-safe).
template <typename T>
std::shared_ptr<const ComplexPlan<T>> complex_plan(int64_t n);
template <typename T>
std::shared_ptr<const RealPlan<T>> real_plan(int64_t n);

}  // namespace ember::fft
