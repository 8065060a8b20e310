#pragma once
// erf and erfc of double on the vector types of VecMath.h
// (Note [Vectorised double erf]).
//
// Note [Vectorised double erf]
// Each function evaluates one of four polynomials in a = |x| per lane, with
// the coefficients looked up by one permute each (a row of four doubles fits
// one AVX2 register; the baseline build loads them per lane). A piece is
// evaluated about its centre: c0 + c1 w exactly (c0, c1 stored in two parts,
// two-product, Fast2Sum), c2 + c3 w + c4 w^2 by Horner's scheme and the rest
// by Estrin's, so only terms below about a tenth of the value are rounded.
// The fits are ours (minimax, relative error 2^-58 or less).
// erf: a P(a^2) below 1.3 (on a 2^64, so that a subnormal result is rounded
// once), erf(a) on [1.3, 2.55), [2.55, 3.8), [3.8, 5.92]; 1 from 5.9216.
// erfc(a) = e^(-a^2) Y, Y = erfcx(a) = e^(a^2) erfc(a) on [0, 0.75),
// [0.75, 2), [2, 3.25), and from 3.25 Y = H(1/a^2)/a with H(u) = a erfcx(a)
// (the one division; its residual is kept). a is clamped to 27.5 (erfc
// underflows from 27.23). e^(-a^2) = 2^-n (1 + eh + el): a^2 = sh + sl
// exactly, r = n ln2 - a^2 = rh + rl with rh exact, eh = rh + rh^2/2 summed
// exactly, el = rl + ... + r^3 P(r). Y (1 + eh + el) / a is summed with its
// large terms exact and rounded once, then scaled by 2^-n (a subnormal
// result is rounded twice: 0.75 ulp). erfc(-a) = 2 - erfc(a).
// Measured (18M points, mpmath and libquadmath): erf 0.77 ulp, erfc 0.85 ulp
// (0.89 without FMA, where the two-products use Dekker's splitting).

#include <cstdint>

#include "ember/cpu/kernels/VecMath.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace vecmath {
namespace detail {
namespace erf_d {

// e^r - 1 - r - r^2/2 = r^3 sum_j kExpTail[j] r^j on |r| <= ln2/2.
constexpr double kExpTail[10] = {
    0x1.555555555555bp-3,  0x1.555555555555ap-5,  0x1.111111110ed95p-7,  0x1.6c16c16c141dfp-10, 0x1.a01a01b323a4bp-13,
    0x1.a01a01b1da2b1p-16, 0x1.71ddf0d398f22p-19, 0x1.27e4c300622a4p-22, 0x1.af6ae86d26567p-26, 0x1.1f996ccab8c49p-29};
// erf: piece 0 erf(a)/a in w = a^2 - centre (a < 1.3); pieces 1-3 erf(a) in w = a - centre
// on [1.3, 2.55), [2.55, 3.8), [3.8, 5.92]. Rows: centre, c0 (hi, lo), c1 (hi, lo), c2, ..., c19.
alignas(32) constexpr double kErfPieces[23][4] = {
    {0x1.b0a3d70a3d70ap-1, 0x1.ecccccccccccdp+0, 0x1.9666666666666p+1, 0x1.370a3d70a3d71p+2},  // centre
    {0x1.c12673ee2d0f5p-1, 0x1.fcae6d523cdc2p-1, 0x1.ffff112887f98p-1, 0x1.fffffffff22efp-1},  // c0 hi
    {-0x1.05dc9b3c605bfp-55, 0x1.c3c813267e969p-55, 0x1.090226175b210p-55, -0x1.73fd7749911c8p-55},  // c0 lo
    {-0x1.dbb26daa76bb5p-3, 0x1.c6824f50c4da3p-6, 0x1.8c726f51ac46ap-15, 0x1.12108c11ac2b2p-34},  // c1 hi
    {0x1.117185fa19f1dp-57, -0x1.1990562c247ebp-60, 0x1.061094e8f43ecp-69, -0x1.f8651d91f4131p-90},  // c1 lo
    {0x1.010d55feb46efp-4, -0x1.b57705f0f0af7p-5, -0x1.3aae085c07287p-13, -0x1.4cfce7a46bc60p-32},  // c2
    {-0x1.cdad35e21ed6ap-7, 0x1.e5a96d9af1f4cp-5, 0x1.3c847baced58ap-12, 0x1.0802c587f8fe6p-30},  // c3
    {0x1.59ec12347d86bp-9, -0x1.41a0bbc80430dp-5, -0x1.c20660ceea2d0p-12, -0x1.32e6a3bf9adc6p-29},  // c4
    {-0x1.b9588bce0d2c1p-12, 0x1.97d1d351f1173p-7, 0x1.dc938e29e9aa1p-12, 0x1.16816d32caaa6p-28},  // c5
    {0x1.e8adbf99a1a9dp-15, 0x1.458ab60080bbap-9, -0x1.805eba821008dp-12, -0x1.9a3ef9e3418bfp-28},  // c6
    {-0x1.dd2be162e0601p-18, -0x1.1bb94cec95e67p-8, 0x1.d66a79f6c5b07p-13, 0x1.f75b18308940fp-28},  // c7
    {0x1.a05813eec37b0p-21, 0x1.96a683abaa8efp-10, -0x1.a153438f67e46p-14, -0x1.05def22265ee2p-27},  // c8
    {-0x1.4826f81d11467p-24, 0x1.75be98203297cp-13, 0x1.be06c76ddae87p-16, 0x1.d3b7b584e1274p-28},  // c9
    {0x1.d787c6befa8c3p-28, -0x1.691ea24f74309p-12, 0x1.b1359ac0d6fcep-21, -0x1.69441ee05eb30p-28},  // c10
    {-0x1.372cec3cc4b32p-31, 0x1.7f405b653d0edp-14, -0x1.43344c647d77bp-18, 0x1.e5a65de86c6b0p-29},  // c11
    {0x1.7a0b59545eeddp-35, 0x1.7f9ed78aa90dap-16, 0x1.45a62905049bfp-19, -0x1.1ce47b30d3f7fp-29},  // c12
    {-0x1.a99f4df803712p-39, -0x1.49cf007bad58cp-16, -0x1.0fa3d9add2e66p-21, 0x1.2022f8f38f3c6p-30},  // c13
    {0x1.06529bb662017p-41, 0x1.405ba3f244905p-19, -0x1.8493c649792a1p-24, -0x1.e9c2acfca95ebp-32},  // c14
    {-0x1.2927f6f27dc31p-44, 0x1.e91f16c9c1e8dp-20, 0x1.b1dfcb9ae39f8p-24, 0x1.653b09d4cef9ap-33},  // c15
    {-0x1.be7606622de70p-43, -0x1.7c58f4e77f4e5p-21, -0x1.fac58201740efp-26, -0x1.d6a5c63004a8ep-35},  // c16
    {0x1.76f71f91608d0p-45, -0x1.6a636c47a7cdep-25, -0x1.2ad18f21611cbp-32, 0x1.69af4bc71b6f7p-37},  // c17
    {0x1.19a30af9fe5e8p-44, 0x1.3936f370aa3e4p-24, 0x1.ae941070d4fb3p-29, 0x1.953864a1c3fddp-39},  // c18
    {-0x1.e39a3d2a824c6p-47, -0x1.2f3b9fad2d670p-27, -0x1.d6cb1390502b4p-31, -0x1.c192fd0567a8bp-40},  // c19
};
// erfc: erfcx(a) = e^(a^2) erfc(a) in w = a - centre on [0, 0.75), [0.75, 2), [2, 3.25); piece 3
// a erfcx(a) in w = 1/a^2 for a in [3.25, 27.5]. Rows as for erf, up to c18.
alignas(32) constexpr double kErfcPieces[22][4] = {
    {0x1.8000000000000p-2, 0x1.6000000000000p+0, 0x1.5000000000000p+1, 0x0.0p+0},  // centre
    {0x1.5f28ade3ca4acp-1, 0x1.5f88f52f3c76bp-2, 0x1.9d7738e1f4db7p-3, 0x1.20dd750429b6dp-1},  // c0 hi
    {-0x1.29ce900fe797bp-57, -0x1.b67dd4f4d1188p-57, 0x1.e5944008bd70fp-59, 0x1.414c8e6ca74c5p-58},  // c0 lo
    {-0x1.3a5c679d7bb59p-1, -0x1.797a639d8129dp-3, -0x1.18737afe106cep-4, -0x1.20dd750429b05p-2},  // c1 hi
    {-0x1.8d3525932cfcap-56, -0x1.dd1e7f088e00fp-57, -0x1.7274c664091e0p-58, -0x1.f1317ec191947p-58},  // c1 lo
    {0x1.d28c0e1177cd5p-2, 0x1.701342cbcea7ap-4, 0x1.6afd3ba3fa642p-6, 0x1.b14c2f862d50bp-2},  // c2
    {-0x1.2e82dbf846febp-2, -0x1.4bcdb9d908333p-5, -0x1.c28dd3c4d6771p-8, -0x1.0ecf9dadd692ep+0},  // c3
    {0x1.611afb945d2c8p-3, 0x1.17eba60d32068p-6, 0x1.0d40a2ab369e6p-9, 0x1.d9eb5162f057ap+1},  // c4
    {-0x1.7a16147a55cf1p-4, -0x1.bdf24bccb8fbbp-8, -0x1.36e9940d2fbc4p-11, -0x1.0a943040495a2p+4},  // c5
    {0x1.78491fa73dd4ap-5, 0x1.51ab9ffce135cp-9, 0x1.5bd1dd62f0ca8p-13, 0x1.6e8758e433224p+6},  // c6
    {-0x1.5f77477a1c9ebp-6, -0x1.e8ae68ac07787p-11, -0x1.79dac38099adap-15, -0x1.29a66d77580b7p+9},  // c7
    {0x1.3662c23f43fa0p-7, 0x1.535f57ff4a000p-12, 0x1.8f693463ea7c5p-17, 0x1.1604d6fd15f30p+12},  // c8
    {-0x1.04aee657427bfp-8, -0x1.c5fa6dda587c4p-14, -0x1.9b8620d368ab6p-19, -0x1.223705433de37p+15},  // c9
    {0x1.a2698c0ac27c6p-10, 0x1.254ed2087e6bep-15, 0x1.9dea2afe3735fp-21, 0x1.449df796ec2eap+18},  // c10
    {-0x1.421e83b88176cp-11, -0x1.6f0593cb9c458p-17, -0x1.96f5879d640b0p-23, -0x1.6e590b895eb04p+21},  // c11
    {0x1.dd5a2127ac416p-13, 0x1.bdb700435135cp-19, 0x1.87994e6042adfp-25, 0x1.84c577218a093p+24},  // c12
    {-0x1.55634845e5ae6p-14, -0x1.073875e2310cep-20, -0x1.71338c71889f4p-27, -0x1.6a18bee018891p+27},  // c13
    {0x1.d876d564cc416p-16, 0x1.2eab9127e81cfp-22, 0x1.551a34cb52ec8p-29, 0x1.15cf568167a1ap+30},  // c14
    {-0x1.3c44bbbed1d51p-17, -0x1.50d3612c11001p-24, -0x1.34a872eb9a463p-31, -0x1.49922ddbaecc6p+32},  // c15
    {0x1.9a921de5a11b1p-19, 0x1.71e4cb9f8596dp-26, 0x1.1862b96c5beb1p-33, 0x1.17a3dc7e01a0ap+34},  // c16
    {-0x1.16fc8ed5b3921p-20, -0x1.c35d63fb114c6p-28, -0x1.07857169149a7p-35, -0x1.2b88bc7f25c54p+35},  // c17
    {0x1.6cb4c85908574p-22, 0x1.d0dde4ccf8193p-30, 0x1.6600309d3e7ebp-38, 0x1.2eb9d6f0a9762p+35},  // c18
};

typedef uint64_t Vu __attribute__((vector_size(kVecBytes)));

EMBER_VEC_INLINE Vd abs(Vd x) { return (Vd)((Vl)x & 0x7fffffffffffffffLL); }
EMBER_VEC_INLINE Vd with_sign_of(Vd mag, Vd x) { return (Vd)((Vl)mag | ((Vl)x & (int64_t)0x8000000000000000ULL)); }

// min(x, c) and max(x, c); a NaN x gives c.
EMBER_VEC_INLINE Vd min(Vd x, double c) {
#if defined(__AVX512F__)
  return (Vd)_mm512_min_pd((__m512d)x, _mm512_set1_pd(c));
#elif defined(__AVX2__)
  return (Vd)_mm256_min_pd((__m256d)x, _mm256_set1_pd(c));
#elif defined(__SSE2__)
  return (Vd)_mm_min_pd((__m128d)x, _mm_set1_pd(c));
#else
  return x < c ? x : splatd(c);
#endif
}
EMBER_VEC_INLINE Vd max(Vd x, double c) {
#if defined(__AVX512F__)
  return (Vd)_mm512_max_pd((__m512d)x, _mm512_set1_pd(c));
#elif defined(__AVX2__)
  return (Vd)_mm256_max_pd((__m256d)x, _mm256_set1_pd(c));
#elif defined(__SSE2__)
  return (Vd)_mm_max_pd((__m128d)x, _mm_set1_pd(c));
#else
  return x > c ? x : splatd(c);
#endif
}

// a * b - p exactly, for p = RN(a * b), no underflow and |a|, |b| < 2^969.
EMBER_VEC_INLINE Vd mul_err(Vd a, Vd b, Vd p) {
#if EMBER_VEC_HAS_FMA
  return madd(a, b, -p);
#else
  const double kSplit = 134217729.0;  // 2^27 + 1
  const Vd ta = a * kSplit, tb = b * kSplit;
  const Vd ah = ta - (ta - a), bh = tb - (tb - b);
  const Vd al = a - ah, bl = b - bh;
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
#endif
}

// 2^-n for integral n in [0, 1022].
EMBER_VEC_INLINE Vd pow2_neg(Vl n) { return (Vd)((1023 - n) << 52); }

// The piece number k in [0, 3] (low bits of kb) in the form lookup() reads.
EMBER_VEC_INLINE Vl piece_index(Vl kb) {
#if defined(__AVX512F__)
  return kb;  // vpermpd reads the low three bits
#elif defined(__AVX2__)
  const Vl k2 = (kb & 3) << 1;
  return k2 | (k2 << 32) | (int64_t{1} << 32);  // float indices 2k, 2k + 1
#else
  return kb & 3;
#endif
}

// row[k] per lane (rows of four), idx from piece_index.
EMBER_VEC_INLINE Vd lookup(const double* row, Vl idx) {
#if defined(__AVX512F__)
  return (Vd)_mm512_permutexvar_pd((__m512i)idx, _mm512_broadcast_f64x4(_mm256_load_pd(row)));
#elif defined(__AVX2__)
  return (Vd)_mm256_permutevar8x32_ps(_mm256_load_ps((const float*)row), (__m256i)idx);
#else
  Vd r;
  for (int i = 0; i < kLanesD; ++i) r[i] = row[idx[i]];
  return r;
#endif
}

// sum of c(j) w^(j - kLo) for j in [kLo, kHi] by Estrin's scheme; pw[i] = w^(2^i).
template <int kLo, int kHi, typename C>
EMBER_VEC_INLINE Vd estrin(const C& c, const Vd* pw) {
  if constexpr (kLo == kHi) {
    return c(kLo);
  } else {
    constexpr int kLog = kHi - kLo >= 8 ? 3 : kHi - kLo >= 4 ? 2 : kHi - kLo >= 2 ? 1 : 0;
    constexpr int kHalf = 1 << kLog;  // the largest power of two below the number of terms, at most 8
    return madd(estrin<kLo + kHalf, kHi>(c, pw), pw[kLog], estrin<kLo, kLo + kHalf - 1>(c, pw));
  }
}

// The piece polynomial c0 + c1 w + ... + cN w^N in w = v + vl - centre (table rows:
// centre, c0 hi, c0 lo, c1 hi, c1 lo, c2, ..., cN) as yh + yl: c0 + c1 w summed
// exactly, c2 + c3 w + c4 w^2 by Horner's scheme (the value's largest rounded
// part), the terms from w^5 by Estrin's.
template <int kDeg>
EMBER_VEC_INLINE Vd piece_poly(const double (*table)[4], Vl idx, Vd v, Vd vl, Vd& yl) {
  const auto c = [&](int j) { return lookup(table[j + 3], idx); };  // c_j, j >= 2
  const Vd centre = lookup(table[0], idx);
  const Vd w = v - centre;
  const Vd wl = (v - (w + centre)) + vl;  // exact where v - centre is not
  Vd pw[4];
  pw[0] = w;
  for (int i = 1; i < 4; ++i) pw[i] = pw[i - 1] * pw[i - 1];
  Vd q = estrin<5, kDeg>(c, pw);
  q = madd(q, w, c(4));
  q = madd(q, w, c(3));
  q = madd(q, w, c(2));
  const Vd c0 = lookup(table[1], idx), c1 = lookup(table[3], idx);
  const Vd q1 = w * c1;
  const Vd yh = c0 + q1;  // |q1| < |c0|
  const Vd tail = madd(w, madd(w, q, lookup(table[4], idx)), lookup(table[2], idx));
  yl = ((((c0 - yh) + q1) + mul_err(w, c1, q1)) + tail) + wl * madd(w + w, q, c1);
  return yh;
}

constexpr double kMagic = 0x1.8p52;  // adding it rounds to an integer, kept in the low bits

// erfcx(a) = e^(a^2) erfc(a) for a in [0, 27.5] as (t + tl)(yh + yl):
// returns yh, sets yl and 1/a = t + tl on the last piece (t = 1, tl = 0 below it).
EMBER_VEC_INLINE Vd erfcx_pieces(Vd a, Vd& t, Vd& tl, Vd& yl) {
  // Piece k: [0, 0.75), [0.75, 2), [2, 3.25), and from 3.25 (on 1/a).
  const Vd kv = madd(a, 0.8, 0.5 - 0.75 * 0.8);  // k + 1/2 - fraction
  const Vl kb = (Vl)(min(max(kv, -0.5), 3.0) + kMagic);
  const Vl idx = piece_index(kb);
  const Vl high = (kb & 3) == 3;
  const Vd d = high ? a : splatd(1.0);
  t = 1.0 / d;
#if EMBER_VEC_HAS_FMA
  tl = t * madd(-t, d, splatd(1.0));  // 1/d - t
#else
  const Vd td = t * d;
  tl = t * ((1.0 - td) - mul_err(t, d, td));
#endif
  const Vd u = madd(t, t, (t + t) * tl);
  return piece_poly<18>(kErfcPieces, idx, high ? u : a, Vd{}, yl);
}

// erfc(a) 2^n rounded, for a in [0, 27.5]; sets n.
EMBER_VEC_INLINE Vd erfc_scaled(Vd a, Vl& n_out) {
  const double kLog2e = 0x1.71547652b82fep+0;
  const double kLn2Hi = 0x1.62e42fefa3800p-1, kLn2Lo = 0x1.ef35793c76730p-45;  // kLn2Hi: 42 bits
  // e^(-a^2) = 2^-n e^r: a^2 = sh + sl; n = rint(sh / ln2); r = n ln2 - a^2 = rh + rl,
  // rh exact (n = 0, or n kLn2Hi exact and rh a multiple of 2^-54 below 1/2).
  const Vd sh = a * a;
  const Vd sl = mul_err(a, a, sh);
  const Vd nt = madd(sh, kLog2e, kMagic);
  const Vd n = nt - kMagic;
  const Vd rh = madd(n, kLn2Hi, -sh);
  const Vd rl = madd(n, kLn2Lo, -sl);
  const Vd r = rh + rl;
  Vd pr[4];
  pr[0] = r;
  for (int i = 1; i < 4; ++i) pr[i] = pr[i - 1] * pr[i - 1];
  const Vd p = estrin<0, 9>([](int j) { return splatd(kExpTail[j]); }, pr);
  // e^r - 1 = eh + el: rh + rh^2/2 summed exactly, the rest (below r^3/6) rounded.
  const Vd s2h = rh * rh;
  const Vd s2l = madd(rh + rh, rl, mul_err(rh, rh, s2h));  // r^2 - s2h
  const Vd eh = madd(s2h, 0.5, rh);
  const Vd el = ((rh - eh) + s2h * 0.5) + madd(r * pr[1], p, madd(s2l, 0.5, rl));

  Vd t, tl, yl;
  const Vd yh = erfcx_pieces(a, t, tl, yl);
  // Y (1 + E) = yh + yh eh + (yh el + yl (1 + E)), the first two summed exactly,
  // then times t + tl.
  const Vd ph = yh * eh;
  const Vd S = yh + ph;  // |ph| < |yh|
  const Vd s = ((yh - S) + ph) + mul_err(yh, eh, ph);
  const Vd rest = madd(yl, 1.0 + (eh + el), madd(yh, el, s));
  n_out = (Vl)nt - (Vl)splatd(kMagic);
#if EMBER_VEC_HAS_FMA
  return madd(t, S, madd(t, rest, tl * S));
#else
  const Vd th = t * S;
  return th + (mul_err(t, S, th) + (t * rest + tl * S));
#endif
}

}  // namespace erf_d
}  // namespace detail

EMBER_VEC_INLINE Vd erf(Vd x) {
  namespace ed = detail::erf_d;
  const Vd a = ed::abs(x);
  const Vd ac = ed::min(a, 5.92);  // NaN: 5.92; erf(5.92) rounds to 1 - 2^-53
  // Piece k: [0, 1.3) (on a^2), [1.3, 2.55), [2.55, 3.8), [3.8, 5.92].
  const Vd kv = madd(ac, 0.8, 0.5 - 1.3 * 0.8);  // k + 1/2 - fraction
  const Vl kb = (Vl)(ed::min(ed::max(kv, -0.5), 3.0) + ed::kMagic);
  const Vl idx = ed::piece_index(kb);
  const Vl small = (kb & 3) == 0;
  const Vd zh = ac * ac;
  const Vd zl = ed::mul_err(ac, ac, zh);
  Vd yl;
  const Vd yh = ed::piece_poly<19>(ed::kErfPieces, idx, small ? zh : ac, (Vd)((Vl)zl & small), yl);
  // erf = m (yh + yl) rounded once, m = a on piece 0 (times 2^64 there, so
  // that nothing underflows before the last step).
  const Vd m = small ? ac * 0x1p64 : splatd(1.0);
#if EMBER_VEC_HAS_FMA
  const Vd r0 = madd(m, yh, m * yl);
#else
  const Vd ph = m * yh;
  const Vd r0 = ph + (ed::mul_err(m, yh, ph) + m * yl);
#endif
  Vd r = r0 * (small ? splatd(0x1p-64) : splatd(1.0));
  r = a >= 0x1.7afb48dc96627p+2 ? splatd(1.0) : r;  // erf rounds to 1 from there
  return x != x ? x : ed::with_sign_of(r, x);
}

// e^(a^2) erfc(a) for a in [0, 27.5].
EMBER_VEC_INLINE Vd erfcx_nonnegative(Vd a) {
  Vd t, tl, yl;
  const Vd yh = detail::erf_d::erfcx_pieces(a, t, tl, yl);
  return madd(t, yh, madd(t, yl, tl * yh));
}

EMBER_VEC_INLINE Vd erfc(Vd x) {
  namespace ed = detail::erf_d;
  Vl n;
  const Vd R = ed::erfc_scaled(ed::min(ed::abs(x), 27.5), n);  // NaN: 27.5
  const Vl n1 = (Vl)((ed::Vu)n >> 1);
  const Vd pos = (R * ed::pow2_neg(n1)) * ed::pow2_neg(n - n1);
  const Vd r = x < 0.0 ? 2.0 - pos : pos;
  return x != x ? x : r;
}

}  // namespace vecmath
}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
