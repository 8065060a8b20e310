#pragma once
// The butterflies of the mixed-radix Stockham transform (cpu/FFTPlan.h),
// generic over the element: std::complex<T> (one line) or Pack<T> (a vector
// of lines, split into real and imaginary parts). Included by FFTPlan.cpp and
// by cpu/kernels/FFTKernel.cpp, which compiles the packed transform once per
// CPU capability; everything here has internal linkage so that each copy
// keeps its own instructions.
#include <complex>
#include <cstdint>
#include <utility>
#include <vector>

#include "ember/cpu/FFTPlan.h"

namespace ember::fft {

namespace {

// Plain products: std::complex's operator* checks for inf/nan (slow calls).
template <typename T>
inline std::complex<T> mul(std::complex<T> a, std::complex<T> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}
template <typename T>
inline std::complex<T> mul_conj(std::complex<T> a, std::complex<T> b) {  // a * conj(b)
  return {a.real() * b.real() + a.imag() * b.imag(), a.imag() * b.real() - a.real() * b.imag()};
}
// -i * a (forward) or +i * a (inverse).
template <bool Inverse, typename T>
inline std::complex<T> rot(std::complex<T> a) {
  return Inverse ? std::complex<T>(-a.imag(), a.real()) : std::complex<T>(a.imag(), -a.real());
}
// a * exp(-+ 2 pi i / 8): the twiddle inside the radix-8 butterfly.
template <bool Inverse, typename T>
inline std::complex<T> eighth(std::complex<T> a) {
  const T h = T(0.70710678118654752440);
  return Inverse ? std::complex<T>((a.real() - a.imag()) * h, (a.imag() + a.real()) * h)
                 : std::complex<T>((a.real() + a.imag()) * h, (a.imag() - a.real()) * h);
}
template <bool Inverse, typename T>
inline std::complex<T> twiddle(std::complex<T> a, std::complex<T> w) {
  return Inverse ? mul_conj(a, w) : mul(a, w);
}

// kW complex values of kW lines, split into real and imaginary vectors, so
// one butterfly transforms kW lines at once.
template <typename T>
struct Pack {
  static constexpr int kW = kPackBytes / sizeof(T);
  typedef T V __attribute__((vector_size(kPackBytes)));
  V re, im;
};
template <typename T>
inline Pack<T> operator+(const Pack<T>& a, const Pack<T>& b) {
  return {a.re + b.re, a.im + b.im};
}
template <typename T>
inline Pack<T> operator-(const Pack<T>& a, const Pack<T>& b) {
  return {a.re - b.re, a.im - b.im};
}
template <typename T>
inline Pack<T> operator*(const Pack<T>& a, T b) {
  return {a.re * b, a.im * b};
}
template <typename T>
inline Pack<T>& operator+=(Pack<T>& a, const Pack<T>& b) {
  a.re += b.re;
  a.im += b.im;
  return a;
}
template <typename T>
inline Pack<T> mul(const Pack<T>& a, std::complex<T> b) {
  return {a.re * b.real() - a.im * b.imag(), a.re * b.imag() + a.im * b.real()};
}
template <typename T>
inline Pack<T> mul_conj(const Pack<T>& a, std::complex<T> b) {
  return {a.re * b.real() + a.im * b.imag(), a.im * b.real() - a.re * b.imag()};
}
template <bool Inverse, typename T>
inline Pack<T> rot(const Pack<T>& a) {
  return Inverse ? Pack<T>{-a.im, a.re} : Pack<T>{a.im, -a.re};
}
template <bool Inverse, typename T>
inline Pack<T> eighth(const Pack<T>& a) {
  const T h = T(0.70710678118654752440);
  return Inverse ? Pack<T>{(a.re - a.im) * h, (a.im + a.re) * h} : Pack<T>{(a.re + a.im) * h, (a.im - a.re) * h};
}
template <bool Inverse, typename T>
inline Pack<T> twiddle(const Pack<T>& a, std::complex<T> w) {
  return Inverse ? mul_conj(a, w) : mul(a, w);
}

// A 4-point DFT of v[0], v[i], v[2i], v[3i], in place.
template <bool Inverse, typename C>
inline void dft4(C* v, int i) {
  C t0 = v[0] + v[2 * i], t1 = v[0] - v[2 * i], t2 = v[i] + v[3 * i], t3 = rot<Inverse>(C(v[i] - v[3 * i]));
  v[0] = t0 + t2;
  v[i] = t1 + t3;
  v[2 * i] = t0 - t2;
  v[3 * i] = t1 - t3;
}

// One Stockham stage of radix R (R in 2, 3, 4, 5, 8, 16): x -> y.
template <int R, bool Inverse, typename C, typename T>
void stage_fixed(const C* x, C* y, int64_t m, int64_t s, const std::complex<T>* tw) {
  const T c3 = T(-0.5), s3 = T(0.86602540378443864676);
  const T c51 = T(0.30901699437494742410), s51 = T(0.95105651629515357212);
  const T c52 = T(-0.80901699437494742410), s52 = T(0.58778525229247312917);
  const T c16 = T(0.92387953251128675613), s16 = T(0.38268343236508977173);
  const std::complex<T> w16_1(c16, -s16), w16_3(s16, -c16), w16_9(-c16, s16);
  for (int64_t p = 0; p < m; ++p) {
    const std::complex<T>* w = tw + p * (R - 1);
    for (int64_t q = 0; q < s; ++q) {
      const C* in = x + q + s * p;
      C* out = y + q + s * R * p;
      if constexpr (R == 2) {
        C a0 = in[0], a1 = in[s * m];
        out[0] = a0 + a1;
        out[s] = twiddle<Inverse>(C(a0 - a1), w[0]);
      } else if constexpr (R == 4) {
        C a0 = in[0], a1 = in[s * m], a2 = in[2 * s * m], a3 = in[3 * s * m];
        C t0 = a0 + a2, t1 = a0 - a2, t2 = a1 + a3, t3 = rot<Inverse>(C(a1 - a3));
        out[0] = t0 + t2;
        out[s] = twiddle<Inverse>(C(t1 + t3), w[0]);
        out[2 * s] = twiddle<Inverse>(C(t0 - t2), w[1]);
        out[3 * s] = twiddle<Inverse>(C(t1 - t3), w[2]);
      } else if constexpr (R == 8) {
        // A radix-2 step (b: sums, c: differences times exp(-+ 2 pi i j / 8)),
        // then radix-4 butterflies give the even and the odd outputs.
        const int64_t sm = s * m;
        C a0 = in[0], a1 = in[sm], a2 = in[2 * sm], a3 = in[3 * sm];
        C a4 = in[4 * sm], a5 = in[5 * sm], a6 = in[6 * sm], a7 = in[7 * sm];
        C b0 = a0 + a4, b1 = a1 + a5, b2 = a2 + a6, b3 = a3 + a7;
        C c0 = a0 - a4, c1 = eighth<Inverse>(C(a1 - a5)), c2 = rot<Inverse>(C(a2 - a6));
        C c3 = rot<Inverse>(eighth<Inverse>(C(a3 - a7)));
        C t0 = b0 + b2, t1 = b0 - b2, t2 = b1 + b3, t3 = rot<Inverse>(C(b1 - b3));
        C u0 = c0 + c2, u1 = c0 - c2, u2 = c1 + c3, u3 = rot<Inverse>(C(c1 - c3));
        out[0] = t0 + t2;
        out[s] = twiddle<Inverse>(C(u0 + u2), w[0]);
        out[2 * s] = twiddle<Inverse>(C(t1 + t3), w[1]);
        out[3 * s] = twiddle<Inverse>(C(u1 + u3), w[2]);
        out[4 * s] = twiddle<Inverse>(C(t0 - t2), w[3]);
        out[5 * s] = twiddle<Inverse>(C(u0 - u2), w[4]);
        out[6 * s] = twiddle<Inverse>(C(t1 - t3), w[5]);
        out[7 * s] = twiddle<Inverse>(C(u1 - u3), w[6]);
      } else if constexpr (R == 16) {
        // 4 x 4: DFTs of a[j1 + 4 j2] over j2, the twiddles exp(-+ 2 pi i j1 k1 / 16),
        // then DFTs over j1 give X[k1 + 4 k2] (v[4 k2 + k1] after the transpose).
        const int64_t sm = s * m;
        C v[16];
        for (int j = 0; j < 16; ++j) v[j] = in[j * sm];
        for (int j1 = 0; j1 < 4; ++j1) dft4<Inverse>(v + j1, 4);  // v[j1 + 4 k1]
        v[5] = twiddle<Inverse>(v[5], w16_1);
        v[9] = eighth<Inverse>(v[9]);
        v[13] = twiddle<Inverse>(v[13], w16_3);
        v[6] = eighth<Inverse>(v[6]);
        v[10] = rot<Inverse>(v[10]);
        v[14] = rot<Inverse>(eighth<Inverse>(v[14]));
        v[7] = twiddle<Inverse>(v[7], w16_3);
        v[11] = rot<Inverse>(eighth<Inverse>(v[11]));
        v[15] = twiddle<Inverse>(v[15], w16_9);
        for (int k1 = 0; k1 < 4; ++k1) dft4<Inverse>(v + 4 * k1, 1);  // v[4 k1 + k2] = X[k1 + 4 k2]
        out[0] = v[0];
        for (int k = 1; k < 16; ++k) out[k * s] = twiddle<Inverse>(v[4 * (k % 4) + k / 4], w[k - 1]);
      } else if constexpr (R == 3) {
        C a0 = in[0], a1 = in[s * m], a2 = in[2 * s * m];
        C sum = a1 + a2;
        C t = a0 + sum * c3;
        C u = rot<Inverse>(C((a1 - a2) * s3));
        out[0] = a0 + sum;
        out[s] = twiddle<Inverse>(C(t + u), w[0]);
        out[2 * s] = twiddle<Inverse>(C(t - u), w[1]);
      } else {
        C a0 = in[0], a1 = in[s * m], a2 = in[2 * s * m], a3 = in[3 * s * m], a4 = in[4 * s * m];
        C p1 = a1 + a4, m1 = a1 - a4, p2 = a2 + a3, m2 = a2 - a3;
        C t1 = a0 + p1 * c51 + p2 * c52, t2 = a0 + p1 * c52 + p2 * c51;
        C u1 = rot<Inverse>(C(m1 * s51 + m2 * s52)), u2 = rot<Inverse>(C(m1 * s52 - m2 * s51));
        out[0] = a0 + p1 + p2;
        out[s] = twiddle<Inverse>(C(t1 + u1), w[0]);
        out[2 * s] = twiddle<Inverse>(C(t2 + u2), w[1]);
        out[3 * s] = twiddle<Inverse>(C(t2 - u2), w[2]);
        out[4 * s] = twiddle<Inverse>(C(t1 - u1), w[3]);
      }
    }
  }
}

// A Stockham stage of odd radix r (O(r^2) butterfly over conjugate pairs).
template <bool Inverse, typename C, typename T>
void stage_generic(const C* x, C* y, int r, int64_t m, int64_t s, const std::complex<T>* tw, const T* cs, const T* sn) {
  const int half = (r - 1) / 2;
  std::vector<C> a(r), sums(half + 1), diffs(half + 1);
  for (int64_t p = 0; p < m; ++p) {
    const std::complex<T>* w = tw + p * (r - 1);
    for (int64_t q = 0; q < s; ++q) {
      const C* in = x + q + s * p;
      C* out = y + q + s * r * p;
      C total = in[0];
      for (int j = 1; j <= half; ++j) {
        C aj = in[j * s * m], ar = in[(r - j) * s * m];
        sums[j] = aj + ar;
        diffs[j] = aj - ar;
        total += sums[j];
      }
      out[0] = total;
      for (int k = 1; k <= half; ++k) {
        C re = in[0], im{};
        for (int j = 1; j <= half; ++j) {
          const int jk = static_cast<int>((static_cast<int64_t>(j) * k) % r);
          re += sums[j] * cs[jk];
          im += diffs[j] * sn[jk];
        }
        C u = rot<Inverse>(im);
        out[k * s] = twiddle<Inverse>(C(re + u), w[k - 1]);
        out[(r - k) * s] = twiddle<Inverse>(C(re - u), w[r - k - 1]);
      }
    }
  }
}

// All stages, ping-ponging between data and work; returns the buffer that
// holds the result (data or work).
template <bool Inverse, typename E, typename T>
E* run_stages_to(const StageView<T>* stages, int count, E* data, E* work) {
  E* x = data;
  E* y = work;
  for (int i = 0; i < count; ++i) {
    const StageView<T>& st = stages[i];
    switch (st.radix) {
      case 2: stage_fixed<2, Inverse>(x, y, st.m, st.s, st.tw); break;
      case 3: stage_fixed<3, Inverse>(x, y, st.m, st.s, st.tw); break;
      case 4: stage_fixed<4, Inverse>(x, y, st.m, st.s, st.tw); break;
      case 5: stage_fixed<5, Inverse>(x, y, st.m, st.s, st.tw); break;
      case 8: stage_fixed<8, Inverse>(x, y, st.m, st.s, st.tw); break;
      case 16: stage_fixed<16, Inverse>(x, y, st.m, st.s, st.tw); break;
      default: stage_generic<Inverse>(x, y, st.radix, st.m, st.s, st.tw, st.cs, st.sn);
    }
    std::swap(x, y);
  }
  return x;
}

// All stages; the result ends in data.
template <bool Inverse, typename E, typename T>
void run_stages(const StageView<T>* stages, int count, int64_t n, E* data, E* work) {
  E* x = run_stages_to<Inverse>(stages, count, data, work);
  if (x != data) {
    for (int64_t i = 0; i < n; ++i) data[i] = x[i];
  }
}

// The even/odd split of RealPlan::split_even_odd on packed lines: z holds
// the half-length transforms Z (h points), tw exp(-2 pi i k / 2h); X_k for
// 0 < k < h replace Z_k, X_0 and X_h go to first and last.
template <typename T>
void split_packed(Pack<T>* z, int64_t h, const std::complex<T>* tw, Pack<T>& first, Pack<T>& last) {
  const Pack<T> z0 = z[0];
  const typename Pack<T>::V zero{};
  first = {z0.re + z0.im, zero};
  last = {z0.re - z0.im, zero};
  const T half = T(0.5);
  for (int64_t k = 1; k <= h / 2; ++k) {
    const Pack<T> zk = z[k], zm = z[h - k];
    const Pack<T> e{(zk.re + zm.re) * half, (zk.im - zm.im) * half};  // E_k
    const Pack<T> o{(zk.im + zm.im) * half, (zm.re - zk.re) * half};  // O_k
    const Pack<T> a = mul(o, tw[k]), b = mul(Pack<T>{o.re, -o.im}, tw[h - k]);
    z[k] = e + a;
    z[h - k] = Pack<T>{e.re + b.re, b.im - e.im};
  }
}

// kPackLines lines through the stages at once: element i of line k read from
// in[k][i * in_stride] straight into the packed layout, the result written to
// out[k][i * out_stride] times scale (in and out may be the same lines).
// With split_tw, the result is split as split_packed says (n + 1 outputs).
template <typename T>
void run_packed_lines(const StageView<T>* stages, int count, int64_t n, const std::complex<T>* const* in,
                      int64_t in_stride, std::complex<T>* const* out, int64_t out_stride, Pack<T>* x, Pack<T>* y,
                      bool inverse, T scale, const std::complex<T>* split_tw) {
  constexpr int W = Pack<T>::kW;
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < W; ++k) {
      const std::complex<T> v = in[k][i * in_stride];
      x[i].re[k] = v.real();
      x[i].im[k] = v.imag();
    }
  }
  Pack<T>* r = inverse ? run_stages_to<true>(stages, count, x, y) : run_stages_to<false>(stages, count, x, y);
  int64_t begin = 0;
  if (split_tw) {
    Pack<T> first, last;
    split_packed(r, n, split_tw, first, last);
    first = first * scale;
    last = last * scale;
    for (int k = 0; k < W; ++k) {
      out[k][0] = std::complex<T>(first.re[k], first.im[k]);
      out[k][n * out_stride] = std::complex<T>(last.re[k], last.im[k]);
    }
    begin = 1;
  }
  for (int64_t i = begin; i < n; ++i) {
    const Pack<T> v = scale == T(1) ? r[i] : r[i] * scale;
    for (int k = 0; k < W; ++k) out[k][i * out_stride] = std::complex<T>(v.re[k], v.im[k]);
  }
}

// Bluestein's algorithm on kPackLines lines: X_k = w_k sum_j (x_j w_j)
// conj(w_{k-j}) as a cyclic convolution of m points; the inverse is
// conj(DFT(conj(x))). x and y hold m packs each.
template <typename T>
void bluestein_packed_lines(const StageView<T>* stages, int count, int64_t m, int64_t n, const std::complex<T>* chirp,
                            const std::complex<T>* spectrum, const std::complex<T>* const* in, int64_t in_stride,
                            std::complex<T>* const* out, int64_t out_stride, Pack<T>* x, Pack<T>* y, bool inverse,
                            T scale) {
  constexpr int W = Pack<T>::kW;
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < W; ++k) {
      const std::complex<T> v = in[k][i * in_stride];
      x[i].re[k] = v.real();
      x[i].im[k] = inverse ? -v.imag() : v.imag();
    }
    x[i] = mul(x[i], chirp[i]);
  }
  const typename Pack<T>::V zero{};
  for (int64_t i = n; i < m; ++i) x[i] = {zero, zero};
  Pack<T>* a = run_stages_to<false>(stages, count, x, y);
  for (int64_t i = 0; i < m; ++i) a[i] = mul(a[i], spectrum[i]);
  Pack<T>* other = a == x ? y : x;
  Pack<T>* r = run_stages_to<true>(stages, count, a, other);
  for (int64_t i = 0; i < n; ++i) {
    const Pack<T> v = mul(r[i], chirp[i]) * scale;
    for (int k = 0; k < W; ++k) {
      out[k][i * out_stride] = std::complex<T>(v.re[k], inverse ? -v.im[k] : v.im[k]);
    }
  }
}

}  // namespace

}  // namespace ember::fft
