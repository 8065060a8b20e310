// bfloat16 and float16 batch norm (Note [16-bit batch norm]), compiled once
// per CPU capability.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "ember/cpu/NNStubs.h"
#include "ember/cpu/kernels/NormVec.h"
#include "ember/ops/Parallel.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// ---- 16-bit batch norm (PyTorch's reduced-float kernels) ----------------------------

// Note [16-bit batch norm]
// PyTorch's batch norm of a bfloat16 or float16 input (channels first or
// last) reads it in vectors of 16 values, each taken as two float vectors
// (its AVX2 kernels, which it also runs on AVX-512 CPUs), and computes in
// float; statistics and parameter gradients are float, or rounded to the
// input's dtype where the parameters are of that dtype.
// Channels first, per channel: the sum over the planes in one float vector
// (plus a scalar sum of each plane's last S % 16 values), its lanes added
// in lane order to the scalar sum, divided by N * S; then the squared
// deviations from that mean the same way, each square rounded apart.
// Channels last: per-thread float buffers of column sums (rows split as its
// parallel_for splits them), squares fused, the buffers added in thread
// order. The transform is x * alpha + beta fused, a row's last values in
// scalar code (rounded by the scalar conversion); beta = bias - mean * alpha
// fused, but for float16 parameters.
// The backward pass sums dy and (x - mean) * dy the same way, then
// dx = (dy - sum / n - (x - mean) * k) * invstd * weight with
// k = dotp * invstd^2 / n, each plane wholly in vectors (the tail's lanes
// too). Its products are fused into the sums except where PyTorch's
// compiled kernels keep them apart (measured on both dtypes, both layouts):
// a bfloat16 plane's scalar tail of (x - mean) * dy, and (x - mean) * k in
// the vectors of bfloat16 rows. Without FMA (DEFAULT) nothing fuses.
constexpr int64_t kHalfVec = 8;  // floats to a vector
constexpr int64_t k16Vec = 16;  // 16-bit values to a vector

inline Vec<float> splat(float v) { return Vec<float>{} + v; }

// The statistic as PyTorch keeps it: float, or rounded to H.
template <typename H>
inline float keep(float v, bool round) {
  return round ? static_cast<float>(H(v)) : v;
}

// The n < 16 values at p as two float vectors, the rest zero.
template <typename H>
inline void vload_tail(const H* p, int64_t n, Vec<float>& lo, Vec<float>& hi) {
  H buf[k16Vec] = {};
  for (int64_t l = 0; l < n; ++l) buf[l] = p[l];
  lo = vload(buf);
  hi = vload(buf + kHalfVec);
}

template <typename H>
inline void vstore_tail(H* p, int64_t n, Vec<float> lo, Vec<float> hi) {
  H buf[k16Vec];
  vstore2(buf, lo, hi);
  for (int64_t l = 0; l < n; ++l) p[l] = buf[l];
}

// Channels are summed kChannelChains at a time, each in its own chains
// (its bits unchanged): one channel's chain of dependent adds would leave
// the vector units idle.
constexpr int kChannelChains = 4;

// Mean and squared deviations of K channels from c0 (channels first).
template <int K, typename H>
void bn16_planes_moments(const H* x, int64_t c0, float* mean, float* var_sum, const BatchNormArgs& a, bool round) {
  const int64_t S = a.S, body = S - S % k16Vec;
  const float count = static_cast<float>(a.N * a.S);
  float s[K] = {}, q[K] = {}, m[K];
  Vec<float> sv[K] = {}, qv[K] = {}, mv[K];
  for (int64_t n = 0; n < a.N; ++n) {
    const H* p = x + (n * a.C + c0) * S;
    int64_t d = 0;
    for (; d < body; d += k16Vec) {
      for (int k = 0; k < K; ++k) {
        sv[k] = sv[k] + vload(p + k * S + d);
        sv[k] = sv[k] + vload(p + k * S + d + kHalfVec);
      }
    }
    for (int k = 0; k < K; ++k)
      for (int64_t t = d; t < S; ++t) s[k] += static_cast<float>(p[k * S + t]);
  }
  for (int k = 0; k < K; ++k) {
    s[k] += fold_in_order<float>(sv[k], kHalfVec);
    m[k] = s[k] / count;
    mv[k] = splat(m[k]);
  }
  for (int64_t n = 0; n < a.N; ++n) {
    const H* p = x + (n * a.C + c0) * S;
    int64_t d = 0;
    for (; d < body; d += k16Vec) {
      for (int k = 0; k < K; ++k) {
        const Vec<float> lo = vload(p + k * S + d) - mv[k], hi = vload(p + k * S + d + kHalfVec) - mv[k];
        qv[k] = qv[k] + lo * lo;
        qv[k] = qv[k] + hi * hi;
      }
    }
    for (int k = 0; k < K; ++k) {
      for (int64_t t = d; t < S; ++t) {
        const float v = static_cast<float>(p[k * S + t]) - m[k];
        q[k] = q[k] + v * v;
      }
    }
  }
  for (int k = 0; k < K; ++k) {
    q[k] += fold_in_order<float>(qv[k], kHalfVec);
    mean[c0 + k] = keep<H>(m[k], round);
    var_sum[c0 + k] = keep<H>(q[k], round);
  }
}

template <typename H>
void bn16_stats_planes(const H* x, float* mean, float* var_sum, const BatchNormArgs& a, bool round) {
  parallel_for(0, a.C, 1, [&](int64_t b, int64_t e) {
    int64_t c = b;
    for (; c + kChannelChains <= e; c += kChannelChains)
      bn16_planes_moments<kChannelChains>(x, c, mean, var_sum, a, round);
    for (; c < e; ++c) bn16_planes_moments<1>(x, c, mean, var_sum, a, round);
  });
}

// acc[c] = f(acc[c], row[c]) over the columns of one row: 16 at a time as
// float vectors, then one by one (scalar code).
template <typename H, typename VF, typename SF>
inline void bn16_row_update(const H* row, float* acc, int64_t C, const VF& vf, const SF& sf) {
  int64_t d = 0;
  for (; d < C - C % k16Vec; d += k16Vec) {
    for (int64_t h = 0; h < k16Vec; h += kHalfVec) {
      const Vec<float> r = vf(vload(acc + d + h), vload(row + d + h), d + h);
      std::memcpy(acc + d + h, &r, sizeof r);
    }
  }
  for (; d < C; ++d) acc[d] = sf(acc[d], static_cast<float>(row[d]), d);
}

// Channels last: column sums per thread (rows split as PyTorch's
// parallel_for splits them), added in thread order.
template <typename H>
void bn16_stats_rows(const H* x, float* mean, float* var_sum, const BatchNormArgs& a, bool round) {
  const int64_t R = a.N * a.S, C = a.C;
  const int64_t threads = get_num_threads();
  if (R > threads) {
    std::vector<float> buf(threads * C, 0.f);
    auto pass = [&](const auto& vf, const auto& sf) {
      for_each_thread_block(R, [&](int64_t t, int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) bn16_row_update(x + r * C, buf.data() + t * C, C, vf, sf);
      });
    };
    auto fold = [&](float* out, bool divide) {
      for (int64_t c = 0; c < C; ++c) {
        float s = 0;
        for (int64_t t = 0; t < threads; ++t) s += buf[t * C + c];
        out[c] = keep<H>(divide ? s / static_cast<float>(R) : s, round);
      }
    };
    pass([](Vec<float> acc, Vec<float> v, int64_t) { return acc + v; },
         [](float acc, float v, int64_t) { return acc + v; });
    fold(mean, true);
    std::fill(buf.begin(), buf.end(), 0.f);
    pass(
        [mean](Vec<float> acc, Vec<float> v, int64_t d) {
          const Vec<float> dv = v - vload(mean + d);
          return vmadd(dv, dv, acc);
        },
        [mean](float acc, float v, int64_t d) {
          const float dv = v - mean[d];
          return smadd(dv, dv, acc);
        });
    fold(var_sum, false);
    return;
  }
  // Few rows: scalar sums in float.
  for (int64_t c = 0; c < C; ++c) {
    float s = 0;
    for (int64_t r = 0; r < R; ++r) s += static_cast<float>(x[r * C + c]);
    mean[c] = keep<H>(s / static_cast<float>(R), round);
  }
  for (int64_t c = 0; c < C; ++c) {
    float q = 0;
    for (int64_t r = 0; r < R; ++r) {
      if (round) {  // the 16-bit type's steps, each rounded
        const H dv = H(static_cast<float>(x[r * C + c]) - mean[c]);
        q += static_cast<float>(H(static_cast<float>(dv) * static_cast<float>(dv)));
      } else {
        const float dv = static_cast<float>(x[r * C + c]) - mean[c];
        q = smadd(dv, dv, q);
      }
    }
    var_sum[c] = keep<H>(q, round);
  }
}

template <typename H>
void bn16_apply(const H* x, H* y, const float* mean, const float* invstd, const float* weight, const float* bias,
                const BatchNormArgs& a) {
  std::vector<float> alpha(a.C), beta(a.C);
  for (int64_t c = 0; c < a.C; ++c) {
    alpha[c] = invstd[c] * (weight ? weight[c] : 1.f);
    const float shift = bias ? bias[c] : 0.f;
    beta[c] = a.half_params ? shift - mean[c] * alpha[c] : smadd(-mean[c], alpha[c], shift);
  }
  const float* al = alpha.data();
  const float* be = beta.data();
  if (a.channels_last) {
    const int64_t R = a.N * a.S, C = a.C, body = C - C % k16Vec;
    parallel_for(0, R, std::max<int64_t>(1, 32768 / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const H* xr = x + r * C;
        H* yr = y + r * C;
        int64_t d = 0;
        for (; d < body; d += k16Vec) {
          vstore2(yr + d, vmadd(vload(xr + d), vload(al + d), vload(be + d)),
                  vmadd(vload(xr + d + kHalfVec), vload(al + d + kHalfVec), vload(be + d + kHalfVec)));
        }
        for (; d < C; ++d) yr[d] = H(smadd(static_cast<float>(xr[d]), al[d], be[d]));
      }
    });
    return;
  }
  const int64_t S = a.S, body = S - S % k16Vec;
  parallel_for(0, a.N * a.C, std::max<int64_t>(1, 32768 / std::max<int64_t>(S, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t c = r % a.C;
      const float s = al[c], t = be[c];
      const Vec<float> sv = splat(s), tv = splat(t);
      const H* xr = x + r * S;
      H* yr = y + r * S;
      int64_t d = 0;
      for (; d < body; d += k16Vec)
        vstore2(yr + d, vmadd(vload(xr + d), sv, tv), vmadd(vload(xr + d + kHalfVec), sv, tv));
      for (; d < S; ++d) yr[d] = H(smadd(static_cast<float>(xr[d]), s, t));
    }
  });
}

// dx of one vector (or, with scalars, one value); fused: (x - mean) * k fused
// into the subtraction.
template <typename V>
inline V bn16_dx(bool fused, V x, V dy, V mean, V k, V grad_mean, V invstd, V w) {
  if (!fused) return (dy - grad_mean - (x - mean) * k) * invstd * w;
  if constexpr (std::is_same_v<V, float>) {
    return smadd(-(x - mean), k, dy - grad_mean) * invstd * w;
  } else {
    return vmadd(-(x - mean), k, dy - grad_mean) * invstd * w;
  }
}

// sum dy and sum (x - mean) * dy of K channels from c0 (channels first).
template <int K, typename H>
void bn16_planes_dots(const H* dy, const H* x, int64_t c0, const float* mean, float* sum_dy, float* dotp,
                      const BatchNormArgs& a) {
  const int64_t S = a.S, body = S - S % k16Vec;
  float s[K] = {}, q[K] = {};
  Vec<float> sv[K] = {}, qv[K] = {}, mv[K];
  for (int k = 0; k < K; ++k) mv[k] = splat(mean[c0 + k]);
  for (int64_t n = 0; n < a.N; ++n) {
    const int64_t off = (n * a.C + c0) * S;
    const H *g = dy + off, *xr = x + off;
    int64_t d = 0;
    for (; d < body; d += k16Vec) {
      for (int k = 0; k < K; ++k) {
        const Vec<float> g0 = vload(g + k * S + d), g1 = vload(g + k * S + d + kHalfVec);
        sv[k] = sv[k] + g0;
        sv[k] = sv[k] + g1;
        qv[k] = vmadd(vload(xr + k * S + d) - mv[k], g0, qv[k]);
        qv[k] = vmadd(vload(xr + k * S + d + kHalfVec) - mv[k], g1, qv[k]);
      }
    }
    for (int k = 0; k < K; ++k) {
      for (int64_t t = d; t < S; ++t) {
        const float gd = static_cast<float>(g[k * S + t]);
        s[k] += gd;
        const float xm = static_cast<float>(xr[k * S + t]) - mean[c0 + k];
        q[k] = std::is_same_v<H, Half> ? smadd(xm, gd, q[k]) : q[k] + xm * gd;
      }
    }
  }
  for (int k = 0; k < K; ++k) {
    sum_dy[c0 + k] = s[k] + fold_in_order<float>(sv[k], kHalfVec);
    dotp[c0 + k] = q[k] + fold_in_order<float>(qv[k], kHalfVec);
  }
}

template <typename H>
void bn16_backward_planes(const H* dy, const H* x, H* dx, const float* mean, const float* invstd, const float* weight,
                          float* sum_dy, float* dotp, bool train, const BatchNormArgs& a) {
  const int64_t S = a.S, body = S - S % k16Vec;
  const float count = static_cast<float>(a.N * a.S);
  parallel_for(0, a.C, 1, [&](int64_t b, int64_t e) {
    int64_t c = b;
    for (; c + kChannelChains <= e; c += kChannelChains)
      bn16_planes_dots<kChannelChains>(dy, x, c, mean, sum_dy, dotp, a);
    for (; c < e; ++c) bn16_planes_dots<1>(dy, x, c, mean, sum_dy, dotp, a);
    if (!dx) return;
    for (c = b; c < e; ++c) {
      const float m = mean[c], is = invstd[c], w = weight ? weight[c] : 1.f, s = sum_dy[c], q = dotp[c];
      const Vec<float> mv = splat(m);
      // Every value through vectors (the tail's lanes too), as PyTorch's map2.
      const float k = q * is * is / count, gm = s / count;
      const Vec<float> kv = splat(k), gmv = splat(gm), isv = splat(is), wv = splat(w);
      auto step = [&](Vec<float> xv, Vec<float> gv) {
        return train ? bn16_dx(true, xv, gv, mv, kv, gmv, isv, wv) : gv * isv * wv;
      };
      for (int64_t n = 0; n < a.N; ++n) {
        const int64_t off = (n * a.C + c) * S;
        const H *g = dy + off, *xr = x + off;
        H* o = dx + off;
        int64_t d = 0;
        for (; d < body; d += k16Vec) {
          vstore2(o + d, step(vload(xr + d), vload(g + d)), step(vload(xr + d + kHalfVec), vload(g + d + kHalfVec)));
        }
        if (d < S) {
          Vec<float> x0, x1, g0, g1;
          vload_tail(xr + d, S - d, x0, x1);
          vload_tail(g + d, S - d, g0, g1);
          vstore_tail(o + d, S - d, step(x0, g0), step(x1, g1));
        }
      }
    }
  });
}

template <typename H>
void bn16_backward_rows(const H* dy, const H* x, H* dx, const float* mean, const float* invstd, const float* weight,
                        float* sum_dy, float* dotp, bool train, const BatchNormArgs& a) {
  const int64_t R = a.N * a.S, C = a.C, body = C - C % k16Vec;
  const int64_t threads = get_num_threads();
  std::vector<float> w(C, 1.f);
  if (weight) std::copy(weight, weight + C, w.begin());
  std::vector<float> sbuf(threads * C, 0.f), qbuf(threads * C, 0.f);
  for_each_thread_block(R, [&](int64_t t, int64_t begin, int64_t end) {
    float* sp = sbuf.data() + t * C;
    float* qp = qbuf.data() + t * C;
    for (int64_t r = begin; r < end; ++r) {
      const H *g = dy + r * C, *xr = x + r * C;
      int64_t d = 0;
      for (; d < body; d += kHalfVec) {
        const Vec<float> gv = vload(g + d);
        const Vec<float> sn = gv + vload(sp + d);
        const Vec<float> qn = vmadd(vload(xr + d) - vload(mean + d), gv, vload(qp + d));
        std::memcpy(sp + d, &sn, sizeof sn);
        std::memcpy(qp + d, &qn, sizeof qn);
      }
      for (; d < C; ++d) {
        const float gd = static_cast<float>(g[d]);
        sp[d] += gd;
        qp[d] = smadd(static_cast<float>(xr[d]) - mean[d], gd, qp[d]);
      }
    }
  });
  for (int64_t c = 0; c < C; ++c) {
    float s = 0, q = 0;
    for (int64_t t = 0; t < threads; ++t) s += sbuf[t * C + c];
    for (int64_t t = 0; t < threads; ++t) q += qbuf[t * C + c];
    sum_dy[c] = s;
    dotp[c] = q;
  }
  if (!dx) return;
  const float count = static_cast<float>(R);
  const float* wp = w.data();
  parallel_for(0, R, std::max<int64_t>(1, 32768 / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const H *g = dy + r * C, *xr = x + r * C;
      H* o = dx + r * C;
      int64_t d = 0;
      auto at = [&](int64_t j) {
        const Vec<float> isv = vload(invstd + j), gv = vload(g + j), wv = vload(wp + j);
        if (!train) return gv * isv * wv;
        const Vec<float> kv = vload(dotp + j) * isv * isv / splat(count);
        return bn16_dx(!std::is_same_v<H, BFloat16>, vload(xr + j), gv, vload(mean + j), kv,
                       vload(sum_dy + j) / splat(count), isv, wv);
      };
      for (; d < body; d += k16Vec) vstore2(o + d, at(d), at(d + kHalfVec));
      for (; d < C; ++d) {
        const float gd = static_cast<float>(g[d]);
        const float res = train ? bn16_dx(true, static_cast<float>(xr[d]), gd, mean[d],
                                          dotp[d] * invstd[d] * invstd[d] / count, sum_dy[d] / count, invstd[d], wp[d])
                                : gd * invstd[d] * wp[d];
        o[d] = H(res);
      }
    }
  });
}

template <typename F>
void dispatch_16bit(ScalarType t, const F& f) {
  if (t == ScalarType::BFloat16) {
    f(BFloat16{});
  } else {
    f(Half{});
  }
}

void batch_norm_16bit_stats_kernel(ScalarType dt, const void* x, float* mean, float* var_sum, const BatchNormArgs& a,
                                   bool round_stats) {
  dispatch_16bit(dt, [&](auto h) {
    using H = decltype(h);
    if (a.channels_last) {
      bn16_stats_rows(static_cast<const H*>(x), mean, var_sum, a, round_stats);
    } else {
      bn16_stats_planes(static_cast<const H*>(x), mean, var_sum, a, round_stats);
    }
  });
}

void batch_norm_16bit_apply_kernel(ScalarType dt, const void* x, void* y, const float* mean, const float* invstd,
                                   const float* weight, const float* bias, const BatchNormArgs& a) {
  dispatch_16bit(dt, [&](auto h) {
    using H = decltype(h);
    bn16_apply(static_cast<const H*>(x), static_cast<H*>(y), mean, invstd, weight, bias, a);
  });
}

void batch_norm_16bit_backward_kernel(ScalarType dt, const void* dy, const void* x, void* dx, const float* mean,
                                      const float* invstd, const float* weight, float* sum_dy, float* dotp, bool train,
                                      const BatchNormArgs& a) {
  dispatch_16bit(dt, [&](auto h) {
    using H = decltype(h);
    auto run = a.channels_last ? &bn16_backward_rows<H> : &bn16_backward_planes<H>;
    run(static_cast<const H*>(dy), static_cast<const H*>(x), static_cast<H*>(dx), mean, invstd, weight, sum_dy, dotp,
        train, a);
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(batch_norm_16bit_stats_stub, &batch_norm_16bit_stats_kernel);
EMBER_REGISTER_DISPATCH(batch_norm_16bit_apply_stub, &batch_norm_16bit_apply_kernel);
EMBER_REGISTER_DISPATCH(batch_norm_16bit_backward_stub, &batch_norm_16bit_backward_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
