#pragma once
// Vector lgamma of float, computed in double (Note [Vector lgamma]).
//
// Note [Vector lgamma]
// Each double half of the vector is evaluated to about 1e-15 relative and
// rounded once to float (Note [Float functions through double]): results are
// the correctly rounded ones except within about 1e-7 ulp of a rounding
// boundary (2 of the 2^32 floats are 1 ulp off, none more).
// - 0 < a < 4.5: a = 2 + k + t, k = rint(a) - 2 in [-2, 2], |t| <= 1/2, and
//   lgamma(a) = lgamma(2 + t) + log((a-1)...(a-k)) for k > 0, and
//   lgamma(2 + t) - log(a) or - log(a (a+1)) for k = -1 or -2, where
//   lgamma(2 + t) = t P(t), P a degree-16 fit (relative error 1.6e-16). The
//   zeros at 1 and 2 keep their relative accuracy: t is exact, and t P(t)
//   and log(a) are relatively accurate near t = 0.
// - a >= 4.5: Stirling, (a - 1/2)(log a - 1) + log(2 pi)/2 - 1/2 + G(1/a^2)/a,
//   G a degree-7 fit of the correction (relative error 7e-16); a is clamped to
//   1e37, past the overflow to inf (from 4.0850034e36 on).
// Each lane takes one log (log_accurate_d, of the product or of a).
// - x < 0: lgamma(x) = log(pi) - log(a |sin(pi a)|) - lgamma(a), a = -x, with
//   r = a - rint(a) exact and sin(pi r) = r S(r^2) (degree-8 fit). Near the 16
//   zeros of lgamma on (-10, -2), where the two terms cancel, lanes whose
//   result is below 1e-2 take the Taylor expansion about the zero
//   (kLgammaZeros) on a scalar path.
// - +-0, negative integers and -inf give +inf; +inf gives +inf; NaN stays NaN.
// The fits are ours (weighted least squares iterated towards minimax, mpmath).
// PyTorch's float lgamma (SLEEF) overflows from 4.0371103e36 already: a
// caller that follows it selects inf there.

#include <cmath>

#include "ember/cpu/kernels/VecMathBinary.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace vecmath {
namespace detail {

// Zeros z of lgamma on (-10, -2), two per interval (-n-1, -n) for n = 2..9 (the
// one nearer -n-1 first): z = hi + lo and the Taylor coefficients c1..c10 of
// lgamma(z + d) = d (c1 + d (c2 + ...)). Relative truncation error below 2e-16
// where |lgamma| <= 1.5e-2.
constexpr double kLgammaZeros[16][12] = {
    {-0x1.5fb410a1bd901p+1, 0x1.a19a96d2e6f85p-54, -0x1.ea12da904b18cp+0, 0x1.3267f3c265a52p+3,  // -2.7476826467274127
     -0x1.4185ac30c8bf2p+4, 0x1.f504accc9f19bp+5, -0x1.8588458207eacp+7, 0x1.4373f7cc709b3p+9, -0x1.12239bdd6c013p+11,
     0x1.dba65e27421c4p+12, -0x1.a2d2504d7e987p+14, 0x1.7581739ee6087p+16},
    {-0x1.3a7fc9600f86cp+1, -0x1.55f64f98af8d0p-55, 0x1.83fe966af535fp+0, 0x1.36eebb002f55dp+2,  // -2.4570247382208006
     0x1.694a6058a7858p+0, 0x1.1718d7ca09e5bp+3, 0x1.7339fe04b2764p+2, 0x1.8d32f682aa0bdp+4, 0x1.809f04ee6e0fap+4,
     0x1.48eaa81657361p+6, 0x1.9297adb2def5ap+6, 0x1.286fb8cbaebb3p+8},
    {-0x1.fa471547c2fe5p+1, -0x1.70d4561291237p-56, -0x1.4b99d966c5647p+4, 0x1.f76deae0436bep+7,  // -3.955294284858598
     -0x1.d25359d4b2f38p+11, 0x1.e8f829f141aa5p+15, -0x1.116f7806d26d3p+20, 0x1.3e8f3ab9fc1f4p+24,
     -0x1.7dbbe062ffd9ep+28, 0x1.d2f76de7bd027p+32, -0x1.2225fe4f8493dp+37, 0x1.6d12ae1936a57p+41},
    {-0x1.9260dbc9e59afp+1, -0x1.f717cd335a7b3p-53, 0x1.f20a65f2fac55p+2, 0x1.9d4d2977150efp+4,  // -3.14358088834998
     0x1.c1137124d5c5bp+6, 0x1.267203d776b0ep+9, 0x1.99a6337da39ddp+11, 0x1.293c3f78d3bdbp+14, 0x1.bb97aa0b71e45p+16,
     0x1.51ea3345f5349p+19, 0x1.057f65c64b21bp+22, 0x1.99c8650e3a38bp+24},
    {-0x1.3f7577a6eeafdp+2, 0x1.5de5eab7f12cfp-53, -0x1.d224a3ef9e41fp+6, 0x1.b533c678a3956p+12,  // -4.991544640560048
     -0x1.0d3f7fee65d34p+19, 0x1.752a6f5ac2726p+25, -0x1.13d5d163bd3f7p+32, 0x1.a8c5c53458ca5p+38,
     -0x1.5068b3ed69409p+45, 0x1.0ffa575ea7fe9p+52, -0x1.bec12dd78a14bp+58, 0x1.7382570f089d4p+65},
    {-0x1.0284e78599581p+2, 0x1.e78c1e9e43cfep-53, 0x1.aca5cf4921642p+4, 0x1.44415cd813f8ep+8,  // -4.039361839740537
     0x1.559b11b2a9c7cp+12, 0x1.96d18e21aebdbp+16, 0x1.0261eb5732e40p+21, 0x1.55e3dbf99eb3dp+25, 0x1.d14fe49c4e437p+29,
     0x1.433dce282da6ep+34, 0x1.c8399c7588cd0p+38, 0x1.45fbe666d9402p+43},
    {-0x1.7fe92f591f40dp+2, -0x1.7dd4ed62cbd32p-52, -0x1.661f6a43a5e12p+9, 0x1.f79dcb794f26fp+17,  // -5.998607480080875
     -0x1.d6e8088a19ffep+26, 0x1.ef5d308dbfc97p+35, -0x1.15ea6b0ab529ep+45, 0x1.44d54e9fe2397p+54,
     -0x1.8684e40cebb3dp+63, 0x1.df44c1d81c723p+72, -0x1.2ac3053f4ee19p+82, 0x1.79226ae04a7a4p+91},
    {-0x1.4086a57f0b6d9p+2, -0x1.95262b72ca9cap-55, 0x1.ed72e0829ae02p+6, 0x1.cecc32ec22f9bp+12,  // -5.0082181683225935
     0x1.253d8563f7264p+19, 0x1.a225df2da6e63p+25, 0x1.3e01773762671p+32, 0x1.f7d8d5bdcb186p+38, 0x1.9a8d00c77a92cp+45,
     0x1.557fd8c490b4bp+52, 0x1.209221a6240a0p+59, 0x1.edc98d3bbb5dap+65},
    {-0x1.bffcbf76b86f0p+2, 0x1.853b29347b806p-57, -0x1.3abf7a5cea91bp+12, 0x1.8349a2550422dp+23,  // -6.999801507890638
     -0x1.3d91dadc98428p+35, 0x1.24f3d636f3339p+47, -0x1.20427df1b3492p+59, 0x1.2775e857fb69cp+71,
     -0x1.377e70b463c13p+83, 0x1.4f3d28edba5cdp+95, -0x1.6e8557168cf8ep+107, 0x1.95bb17ce4279bp+119},
    {-0x1.8016b25897c8dp+2, 0x1.27e0f49a4ba72p-54, 0x1.69de49e3af2aap+9, 0x1.fce23484cfd10p+17,  // -6.001385294453155
     0x1.de503a3c37c40p+26, 0x1.f9c7b52558abbp+35, 0x1.1d3d50714416ap+45, 0x1.4f21e2fb9e060p+54, 0x1.9500994cd8a9ep+63,
     0x1.f3a2c23c19d79p+72, 0x1.39152652eb3abp+82, 0x1.8d45f8be8912ep+91},
    {-0x1.ffff97f8159cfp+2, -0x1.e54f415a91586p-55, -0x1.3af76fe4c2fabp+15,
     0x1.838e76caaf123p+29,  // -7.999975197095821
     -0x1.3de68b3256526p+44, 0x1.255c052530c71p+59, -0x1.20c2a8418126ap+74, 0x1.28139342cef00p+89,
     -0x1.384066c322246p+104, 0x1.502bc4dad47d3p+119, -0x1.6faadfece0e2fp+134, 0x1.9724323c8991ep+149},
    {-0x1.c0033fdedfe1fp+2, 0x1.20bb7d2324678p-52, 0x1.3b407aa387bd1p+12, 0x1.83e85daafbad6p+23,  // -7.000198333407325
     0x1.3e552b5e3c226p+35, 0x1.25e42a45e905bp+47, 0x1.216a3560743eep+59, 0x1.28e1c70ef5313p+71, 0x1.393e2bc330081p+83,
     0x1.5164141f5ae6ap+95, 0x1.712b3a86e1be0p+107, 0x1.98fd36b906d52p+119},
    {-0x1.1ffffa3884bd0p+3, -0x1.ff90c9d2ae925p-53, -0x1.625edfc63db2fp+18,
     0x1.ea8c150480a7ap+35,  // -8.999997244250977
     -0x1.c4b30e4bc55c1p+53, 0x1.d5fe468dbbf03p+71, -0x1.043d21bc24decp+90, 0x1.2c334ae535e1dp+108,
     -0x1.64314b431cd64p+126, 0x1.af6ed589b3a86p+144, -0x1.096e446edcfb3p+163, 0x1.4aaf49e713c02p+181},
    {-0x1.000034028b3f9p+3, -0x1.f60cb3cec1cedp-52, 0x1.3b088fed67718p+15, 0x1.83a3893550edcp+29,  // -8.000024800270682
     0x1.3e0078db8ada4p+44, 0x1.257bec9464251p+59, 0x1.20e9ea0755a47p+74, 0x1.2843e1313c83bp+89, 0x1.387bd6a785478p+104,
     0x1.5074e788de770p+119, 0x1.7004dd990d7d9p+134, 0x1.9792ed5f6dfc9p+149},
    {-0x1.3fffff6c0d7c0p+3, 0x1.197cea8c42d7dp-51, -0x1.baf7da5f3795dp+21, 0x1.7f3e8791fa0d2p+42,  // -9.99999972442663
     -0x1.ba18befcaaa63p+63, 0x1.1ede14765dc0cp+85, -0x1.8d1a9ab5a5050p+106, 0x1.1e4d8c35d22ccp+128,
     -0x1.a8a191db10900p+149, 0x1.4174f65ff8680p+171, -0x1.ee6d90f2332c5p+192, 0x1.80fd3420fba1dp+214},
    {-0x1.200005c7768fbp+3, -0x1.b5b610ffb70d4p-54, 0x1.6261203919440p+18, 0x1.ea8f32fb7f586p+35,  // -9.000002755714823
     0x1.c4b75ee68e2bap+53, 0x1.d6043fa1ffaa5p+71, 0x1.04414411db7f4p+90, 0x1.2c3903ec9c90cp+108,
     0x1.64393744bb9bdp+126, 0x1.af79ccdc71d33p+144, 0x1.0975db7d71fc6p+163, 0x1.4ab9cba1e346ep+181},
};

// lgamma(x) for x in (-10, -2) near a zero, from the nearer of the two
// expansions in its interval.
inline double lgamma_near_zero(double x) {
  const int n = static_cast<int>(-x);  // x in (-n-1, -n), n in [2, 9]
  const double* z = kLgammaZeros[2 * (n - 2)];
  if (std::fabs(x - kLgammaZeros[2 * (n - 2) + 1][0]) < std::fabs(x - z[0])) z = kLgammaZeros[2 * (n - 2) + 1];
  const double d = (x - z[0]) - z[1];  // x - z[0] is exact
  double p = z[11];
  for (int k = 10; k >= 2; --k) p = p * d + z[k];
  return p * d;
}

// lgamma(a) for a > 0 (and +inf); a = 0 and NaN give garbage (selected by the caller).
EMBER_VEC_INLINE Vd lgamma_positive_d(Vd a) {
  const double kX0 = 4.5;
  const Vl big = a >= kX0;
  // a < 4.5: lgamma(a) = t P(t) +- log(prod)
  const Vd as = select(big, splatd(1.0), a);
  const Vd n = (as + 4503599627370496.0) - 4503599627370496.0;  // rint, in [0, 4]
  const Vd t = as - n;
  const Vd f1 = select(n >= 3.0, as - 1.0, select(n <= 1.0, as, splatd(1.0)));
  const Vd f2 = select(n >= 4.0, as - 2.0, select(n == 0.0, as + 1.0, splatd(1.0)));
  // a >= 4.5: Stirling on min(a, 1e37)
  const Vd ab = select(big, select(a > 1e37, splatd(1e37), a), splatd(kX0));
  const Vd lg = log_accurate_d(select(big, ab, f1 * f2));
  // lgamma(2 + t) / t, |t| <= 1/2
  const Vd p = poly_d(t, 0.42278433509846713, 0.3224670334241122, -0.06735230105318625, 0.02058080842798129,
                      -0.007385551029724484, 0.0028905103196430666, -0.0011927538757560512, 0.0005096698047011062,
                      -0.00022315537407444219, 9.94537843844053e-05, -4.492034354763971e-05, 2.053521141045628e-05,
                      -9.472283954783554e-06, 4.256354418431846e-06, -1.934941230642507e-06, 1.2149138642648737e-06,
                      -6.20493563594493e-07);
  const Vd small = madd(t, p, select(n <= 1.0, -lg, lg));
#if EMBER_VEC_HAS_FMA
  const Vd ia = recip_d<true>(ab);
#else
  const Vd ia = 1.0 / ab;
#endif
  // a (lgamma(a) - Stirling's leading terms) as a function of 1/a^2
  const Vd g =
      poly_d(ia * ia, 0.08333333333333329, -0.002777777777637211, 0.0007936507316448705, -0.0005952276164677557,
             0.0008408703945068054, -0.0018763612367381827, 0.005287377471673121, -0.011419446682132588);
  const Vd large = madd(ab - 0.5, lg - 1.0, madd(g, ia, splatd(0.41893853320467274178)));  // + log(2 pi)/2 - 1/2
  return select(big, large, small);
}

// lgamma(x) for lanes x < 0 (a = -x, pos = lgamma(a)): +inf at the poles.
EMBER_VEC_INLINE Vd lgamma_negative_d(Vd x, Vd a, Vd pos) {
  const double kMagic = 4503599627370496.0;
  const Vd ac = select(a < 8388608.0, a, splatd(0.0));  // from 2^23 on every float is an integer
  const Vd r = ac - ((ac + kMagic) - kMagic);  // a - rint(a), exact, |r| <= 1/2
  const Vd s = r * poly_d(r * r, 3.141592653589793, -5.167712780049969, 2.550164039877294, -0.5992645293187391,
                          0.08214588656990122, -0.007370430478810108, 0.00046629968890763877, -2.190318557498449e-05,
                          7.694727402873896e-07);  // sin(pi r)
  const Vl pole = r == 0.0;
  const Vd lr = log_accurate_d(select(pole, splatd(1.0), abs(ac * s)));
  Vd res = (1.1447298858494002 - lr) - pos;  // log(pi) - lr - pos
  const Vl near_zero = (x > -10.0) & (x < -2.0) & (abs(res) < 1e-2);
  if (__builtin_expect(any(near_zero), 0)) {
    for (int i = 0; i < kLanesD; ++i) {
      if (near_zero[i]) res[i] = lgamma_near_zero(x[i]);
    }
  }
  return select(pole, splatd(INFINITY), res);
}

EMBER_VEC_INLINE Vd lgamma_half(Vd x) {
  const Vd a = abs(x);
  Vd res = lgamma_positive_d(a);
  const Vl neg = x < 0.0;
  if (any(neg)) res = select(neg, lgamma_negative_d(x, a, res), res);
  return res;
}

}  // namespace detail

// log|Gamma(x)| (Note [Vector lgamma]).
EMBER_VEC_INLINE Vf lgamma(Vf x) {
  Vd lo, hi;
  detail::widen(x, lo, hi);
  const Vf r = detail::narrow(detail::lgamma_half(lo), detail::lgamma_half(hi));
  return select(isnan(x), x, select(x == 0.0f, splat(INFINITY), r));
}

}  // namespace vecmath
}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
