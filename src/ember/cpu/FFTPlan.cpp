#include "ember/cpu/FFTPlan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <type_traits>

#include "ember/cpu/FFTStages.h"
#include "ember/cpu/FFTStubs.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(FFTPackedFn, fft_packed_stub);
EMBER_DEFINE_DISPATCH(FFTBluesteinPackedFn, fft_bluestein_packed_stub);
}  // namespace ember::cpu

namespace ember::fft {

namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// exp(-2 pi i num / den), with num reduced first for accuracy.
template <typename T>
std::complex<T> root(int64_t num, int64_t den) {
  num %= den;
  const double a = -kTwoPi * static_cast<double>(num) / static_cast<double>(den);
  return {static_cast<T>(std::cos(a)), static_cast<T>(std::sin(a))};
}

std::vector<int> factorize(int64_t n) {
  // Powers of two: radix 8, with 4 x 4 in place of 8 x 2 and a 4 or 2 for the
  // rest; from 512 up, 8 x 8 x 8 becomes 16 x 8 x 4 (same passes, faster
  // packed; more radix-16 stages were slower: their vectors spill).
  std::vector<int> f;
  int twos = 0;
  while (n % 2 == 0) ++twos, n /= 2;
  if (twos >= 9 && twos % 3 == 0) f.push_back(16), twos -= 4;
  int eights = twos / 3, fours = 0, pairs = 0;
  if (twos % 3 == 2) fours = 1;
  if (twos % 3 == 1) {
    if (eights > 0) {
      --eights, fours = 2;
    } else {
      pairs = 1;
    }
  }
  f.insert(f.end(), eights, 8);
  f.insert(f.end(), fours, 4);
  f.insert(f.end(), pairs, 2);
  for (int64_t p = 3; p * p <= n; p += 2) {
    while (n % p == 0) f.push_back(static_cast<int>(p)), n /= p;
  }
  if (n > 1) f.push_back(n > kMaxDirectRadix ? 0 : static_cast<int>(n));  // 0: too large
  return f;
}

bool small_factors(int64_t n) {
  for (int r : factorize(n)) {
    if (r == 0) return false;
  }
  return true;
}

// Smallest 2^a 3^b 5^c >= n.
int64_t smooth_size(int64_t n) {
  int64_t best = 1;
  while (best < n) best *= 2;
  for (int64_t p5 = 1; p5 < best; p5 *= 5) {
    for (int64_t p35 = p5; p35 < best; p35 *= 3) {
      int64_t v = p35;
      while (v < n) v *= 2;
      best = std::min(best, v);
    }
  }
  return best;
}

}  // namespace

template <typename T>
ComplexPlan<T>::ComplexPlan(int64_t n) : n_(n), work_size_(n) {
  if (n <= 1) return;
  if (!small_factors(n)) {
    const int64_t m = smooth_size(2 * n - 1);
    inner_ = std::make_unique<ComplexPlan<T>>(m);
    work_size_ = 2 * m + inner_->work_size();
    chirp_.resize(n);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t k2 = (k * k) % (2 * n);  // exp(-i pi k^2 / n) = exp(-2 pi i k^2 / 2n)
      chirp_[k] = root<T>(k2, 2 * n);
    }
    std::vector<C> b(m, C(0, 0)), scratch(inner_->work_size());
    b[0] = std::conj(chirp_[0]);
    for (int64_t k = 1; k < n; ++k) b[k] = b[m - k] = std::conj(chirp_[k]);
    inner_->run(b.data(), scratch.data(), false);
    const T inv_m = T(1) / static_cast<T>(m);
    for (auto& v : b) v *= inv_m;
    chirp_spectrum_ = std::move(b);
    return;
  }
  int64_t len = n, s = 1;
  for (int r : factorize(n)) {
    Stage st{r, len / r, s, {}};
    st.tw.resize(static_cast<size_t>(st.m * (r - 1)));
    for (int64_t p = 0; p < st.m; ++p) {
      for (int k = 1; k < r; ++k) st.tw[p * (r - 1) + k - 1] = root<T>(p * k, len);
    }
    if (r > 5 && r % 2 == 1 && static_cast<int>(root_cos_.size()) <= r) {
      root_cos_.resize(r + 1);
      root_sin_.resize(r + 1);
    }
    if (r > 5 && r % 2 == 1 && root_cos_[r].empty()) {
      for (int j = 0; j < r; ++j) {
        const double a = kTwoPi * j / r;
        root_cos_[r].push_back(static_cast<T>(std::cos(a)));
        root_sin_[r].push_back(static_cast<T>(std::sin(a)));
      }
    }
    stages_.push_back(std::move(st));
    len /= r;
    s *= r;
  }
  for (const Stage& st : stages_) {
    const bool generic = st.radix > 5 && st.radix % 2 == 1;
    views_.push_back({st.radix, st.m, st.s, st.tw.data(), generic ? root_cos_[st.radix].data() : nullptr,
                      generic ? root_sin_[st.radix].data() : nullptr});
  }
}

template <typename T>
template <bool Inverse>
void ComplexPlan<T>::run_stockham(C* data, C* work) const {
  run_stages<Inverse>(views_.data(), static_cast<int>(views_.size()), n_, data, work);
}

template <typename T>
void ComplexPlan<T>::run_bluestein(C* data, C* work, bool inverse) const {
  // X_k = w_k sum_j (x_j w_j) conj(w_{k-j}); the inverse is conj(DFT(conj(x))).
  const int64_t m = inner_->size();
  C* a = work;
  C* inner_work = work + m;
  for (int64_t j = 0; j < n_; ++j) a[j] = mul(inverse ? std::conj(data[j]) : data[j], chirp_[j]);
  std::fill(a + n_, a + m, C(0, 0));
  inner_->run(a, inner_work, false);
  for (int64_t k = 0; k < m; ++k) a[k] = mul(a[k], chirp_spectrum_[k]);
  inner_->run(a, inner_work, true);
  for (int64_t k = 0; k < n_; ++k) {
    C v = mul(a[k], chirp_[k]);
    data[k] = inverse ? std::conj(v) : v;
  }
}

template <typename T>
void ComplexPlan<T>::run(C* data, C* work, bool inverse) const {
  if (n_ <= 1) return;
  if (inner_) {
    run_bluestein(data, work, inverse);
  } else if (inverse) {
    run_stockham<true>(data, work);
  } else {
    run_stockham<false>(data, work);
  }
}

template <typename T>
void ComplexPlan<T>::run_packed(const C* const* in, int64_t in_stride, C* const* out, int64_t out_stride, T* work,
                                bool inverse, T scale, const C* split_tw) const {
  if (n_ <= 1) {
    for (int k = 0; k < kPackLines; ++k) {
      if (n_ == 1) out[k][0] = in[k][0] * scale;
    }
    return;
  }
  if (inner_) {
    run_bluestein_packed(in, in_stride, out, out_stride, work, inverse, scale);
    return;
  }
  cpu::fft_packed_stub.get()(std::is_same_v<T, double>, views_.data(), static_cast<int>(views_.size()), n_,
                             reinterpret_cast<const void* const*>(in), in_stride, reinterpret_cast<void* const*>(out),
                             out_stride, work, inverse, static_cast<double>(scale), split_tw);
}

template <typename T>
void ComplexPlan<T>::run_packed(C* data, int64_t dist, T* work, bool inverse) const {
  C* lines[kPackLines];
  for (int k = 0; k < kPackLines; ++k) lines[k] = data + k * dist;
  run_packed(lines, 1, lines, 1, work, inverse);
}

template <typename T>
void ComplexPlan<T>::run_bluestein_packed(const C* const* in, int64_t in_stride, C* const* out, int64_t out_stride,
                                          T* work, bool inverse, T scale) const {
  // run_bluestein on kPackLines lines, all of it on vectors.
  const int64_t m = inner_->size();
  cpu::fft_bluestein_packed_stub.get()(
      std::is_same_v<T, double>, inner_->views_.data(), static_cast<int>(inner_->views_.size()), m, n_, chirp_.data(),
      chirp_spectrum_.data(), reinterpret_cast<const void* const*>(in), in_stride, reinterpret_cast<void* const*>(out),
      out_stride, work, inverse, static_cast<double>(scale));
}

template <typename T>
RealPlan<T>::RealPlan(int64_t n) : n_(n) {
  const bool even = n % 2 == 0 && n >= 2;
  const int64_t len = even ? n / 2 : n;
  plan_ = complex_plan<T>(len);
  work_size_ = len + plan_->work_size();
  if (even) {
    tw_.resize(n / 2 + 1);
    for (int64_t k = 0; k <= n / 2; ++k) tw_[k] = root<T>(k, n);
  }
}

template <typename T>
void RealPlan<T>::forward(const T* in, C* out, C* work) const {
  if (n_ % 2 != 0 || n_ < 2) {
    C* full = work;
    for (int64_t j = 0; j < n_; ++j) full[j] = C(in[j], 0);
    plan_->run(full, work + n_, false);
    std::copy(full, full + n_ / 2 + 1, out);
    return;
  }
  pack_even_odd(in, out);
  plan_->run(out, work + n_ / 2, false);
  split_even_odd(out);
}

template <typename T>
void RealPlan<T>::pack_even_odd(const T* in, C* out) const {
  for (int64_t j = 0; j < n_ / 2; ++j) out[j] = C(in[2 * j], in[2 * j + 1]);
}

template <typename T>
void RealPlan<T>::split_even_odd(C* out, int64_t stride, T scale) const {
  // Z = E + iO with E, O the DFTs of the even and odd samples; X_k = E_k + t_k O_k.
  const int64_t h = n_ / 2;
  const C z0 = out[0];
  out[0] = C((z0.real() + z0.imag()) * scale, 0);
  out[h * stride] = C((z0.real() - z0.imag()) * scale, 0);
  const T half = T(0.5) * scale;
  for (int64_t k = 1; k <= h / 2; ++k) {
    const C zk = out[k * stride], zm = out[(h - k) * stride];
    const C e = (zk + std::conj(zm)) * half;
    const C d = (zk - std::conj(zm)) * half;  // i * O_k
    const C o(d.imag(), -d.real());
    const C ec = std::conj(e), oc = std::conj(o);
    out[k * stride] = e + mul(o, tw_[k]);
    out[(h - k) * stride] = ec + mul(oc, tw_[h - k]);
  }
}

template <typename T>
void RealPlan<T>::inverse(const C* in, T* out, C* work) const {
  if (n_ % 2 != 0 || n_ < 2) {
    C* full = work;
    full[0] = C(in[0].real(), 0);
    for (int64_t k = 1; k <= n_ / 2; ++k) {
      full[k] = in[k];
      full[n_ - k] = std::conj(in[k]);
    }
    plan_->run(full, work + n_, true);
    for (int64_t j = 0; j < n_; ++j) out[j] = full[j].real();
    return;
  }
  const int64_t h = n_ / 2;
  C* z = work;
  for (int64_t k = 0; k < h; ++k) {
    C xk = in[k], xm = in[h - k];
    if (k == 0) xk = C(xk.real(), 0), xm = C(xm.real(), 0);
    const C sum = xk + std::conj(xm);
    const C diff = mul_conj(C(xk - std::conj(xm)), tw_[k]);
    z[k] = sum + C(-diff.imag(), diff.real());
  }
  plan_->run(z, work + h, true);
  for (int64_t j = 0; j < h; ++j) {
    out[2 * j] = z[j].real();
    out[2 * j + 1] = z[j].imag();
  }
}

namespace {

template <typename P>
std::shared_ptr<const P> cached(int64_t n) {
  static std::mutex mutex;
  static std::map<int64_t, std::shared_ptr<const P>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(n);
    if (it != cache.end()) return it->second;
  }
  auto plan = std::make_shared<const P>(n);  // built outside the lock
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > 256) cache.clear();
  return cache.emplace(n, plan).first->second;
}

}  // namespace

template <typename T>
std::shared_ptr<const ComplexPlan<T>> complex_plan(int64_t n) {
  return cached<ComplexPlan<T>>(n);
}
template <typename T>
std::shared_ptr<const RealPlan<T>> real_plan(int64_t n) {
  return cached<RealPlan<T>>(n);
}

template class ComplexPlan<float>;
template class ComplexPlan<double>;
template class RealPlan<float>;
template class RealPlan<double>;
template std::shared_ptr<const ComplexPlan<float>> complex_plan<float>(int64_t);
template std::shared_ptr<const ComplexPlan<double>> complex_plan<double>(int64_t);
template std::shared_ptr<const RealPlan<float>> real_plan<float>(int64_t);
template std::shared_ptr<const RealPlan<double>> real_plan<double>(int64_t);

}  // namespace ember::fft
