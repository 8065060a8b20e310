// 2-d max, average and adaptive average pooling over contiguous N*C planes,
// compiled once per CPU capability. Threads split the planes.
#include <cmath>
#include <limits>

#include "ember/core/Error.h"
#include "ember/cpu/NNStubs.h"
#include "ember/ops/Parallel.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// Planes per task: enough work per thread to pay for starting it.
int64_t plane_grain(const Pool2dArgs& a) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(a.H * a.W + a.OH * a.OW, 1));
}

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    (void)v;
    return false;
  }
}

template <typename T>
T lowest() {
  if constexpr (std::is_floating_point_v<T>) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

template <typename T>
void max_pool_impl(const T* in, T* out, int64_t* idx, const Pool2dArgs& a) {
  parallel_for(0, a.planes, plane_grain(a), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* src = in + p * a.H * a.W;
      T* dst = out + p * a.OH * a.OW;
      int64_t* di = idx + p * a.OH * a.OW;
      for (int64_t oh = 0; oh < a.OH; ++oh) {
        int64_t h0 = oh * a.sh - a.ph;
        const int64_t h1 = std::min(h0 + (a.kh - 1) * a.dh + 1, a.H);
        while (h0 < 0) h0 += a.dh;
        for (int64_t ow = 0; ow < a.OW; ++ow) {
          int64_t w0 = ow * a.sw - a.pw;
          const int64_t w1 = std::min(w0 + (a.kw - 1) * a.dw + 1, a.W);
          while (w0 < 0) w0 += a.dw;
          int64_t best_i = h0 * a.W + w0;
          T best = lowest<T>();
          for (int64_t h = h0; h < h1; h += a.dh) {
            for (int64_t w = w0; w < w1; w += a.dw) {
              const T v = src[h * a.W + w];
              // A NaN wins (the last one, as in PyTorch).
              if (v > best || is_nan(v)) {
                best = v;
                best_i = h * a.W + w;
              }
            }
          }
          dst[oh * a.OW + ow] = best;
          di[oh * a.OW + ow] = best_i;
        }
      }
    }
  });
}

template <typename T>
void max_pool_backward_impl(const T* gout, const int64_t* idx, T* gin, const Pool2dArgs& a) {
  parallel_for(0, a.planes, plane_grain(a), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* g = gout + p * a.OH * a.OW;
      const int64_t* ix = idx + p * a.OH * a.OW;
      T* dst = gin + p * a.H * a.W;
      // A window lying wholly in the padding keeps an index past the plane
      // (as PyTorch's does); it receives no gradient.
      const int64_t plane = a.H * a.W;
      for (int64_t i = 0; i < a.OH * a.OW; ++i) {
        if (ix[i] >= 0 && ix[i] < plane) dst[ix[i]] += g[i];
      }
    }
  });
}

// Window [h0, h1) x [w0, w1) of one average-pooling output and its divisor.
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};

inline AvgWindow avg_window(const Pool2dArgs& a, int64_t oh, int64_t ow, bool count_include_pad, int64_t divisor) {
  int64_t h0 = oh * a.sh - a.ph, w0 = ow * a.sw - a.pw;
  int64_t h1 = std::min(h0 + a.kh, a.H + a.ph), w1 = std::min(w0 + a.kw, a.W + a.pw);
  const int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0);
  w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, a.H);
  w1 = std::min(w1, a.W);
  int64_t div = divisor > 0 ? divisor : (count_include_pad ? padded : (h1 - h0) * (w1 - w0));
  return {h0, h1, w0, w1, div};
}

template <typename T>
using avg_acc_t = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;

template <typename T>
void avg_pool_impl(const T* in, T* out, const Pool2dArgs& a, bool count_include_pad, int64_t divisor) {
  parallel_for(0, a.planes, plane_grain(a), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* src = in + p * a.H * a.W;
      T* dst = out + p * a.OH * a.OW;
      for (int64_t oh = 0; oh < a.OH; ++oh) {
        for (int64_t ow = 0; ow < a.OW; ++ow) {
          AvgWindow wd = avg_window(a, oh, ow, count_include_pad, divisor);
          if (wd.h0 >= wd.h1 || wd.w0 >= wd.w1) {
            dst[oh * a.OW + ow] = T(0);
            continue;
          }
          avg_acc_t<T> s = 0;
          for (int64_t h = wd.h0; h < wd.h1; ++h) {
            for (int64_t w = wd.w0; w < wd.w1; ++w) s += src[h * a.W + w];
          }
          dst[oh * a.OW + ow] = static_cast<T>(s / static_cast<avg_acc_t<T>>(wd.divisor));
        }
      }
    }
  });
}

template <typename T>
void avg_pool_backward_impl(const T* gout, T* gin, const Pool2dArgs& a, bool count_include_pad, int64_t divisor) {
  parallel_for(0, a.planes, plane_grain(a), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* g = gout + p * a.OH * a.OW;
      T* dst = gin + p * a.H * a.W;
      for (int64_t oh = 0; oh < a.OH; ++oh) {
        for (int64_t ow = 0; ow < a.OW; ++ow) {
          AvgWindow wd = avg_window(a, oh, ow, count_include_pad, divisor);
          const T v = static_cast<T>(g[oh * a.OW + ow] / static_cast<T>(wd.divisor));
          for (int64_t h = wd.h0; h < wd.h1; ++h) {
            for (int64_t w = wd.w0; w < wd.w1; ++w) dst[h * a.W + w] += v;
          }
        }
      }
    }
  });
}

inline int64_t start_index(int64_t o, int64_t O, int64_t I) { return (o * I) / O; }
inline int64_t end_index(int64_t o, int64_t O, int64_t I) { return ((o + 1) * I + O - 1) / O; }

template <typename T>
void adaptive_avg_impl(const T* in, T* out, const Pool2dArgs& a) {
  if (a.OH == 1 && a.OW == 1) {
    // Global average: one contiguous sum per plane.
    const int64_t n = a.H * a.W;
    parallel_for(0, a.planes, plane_grain(a), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const T* src = in + p * n;
        T s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = 0; i < n; ++i) s += src[i];
        out[p] = s / static_cast<T>(n);
      }
    });
    return;
  }
  parallel_for(0, a.planes, plane_grain(a), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* src = in + p * a.H * a.W;
      T* dst = out + p * a.OH * a.OW;
      for (int64_t oh = 0; oh < a.OH; ++oh) {
        const int64_t h0 = start_index(oh, a.OH, a.H), h1 = end_index(oh, a.OH, a.H);
        for (int64_t ow = 0; ow < a.OW; ++ow) {
          const int64_t w0 = start_index(ow, a.OW, a.W), w1 = end_index(ow, a.OW, a.W);
          T s = 0;
          for (int64_t h = h0; h < h1; ++h) {
            for (int64_t w = w0; w < w1; ++w) s += src[h * a.W + w];
          }
          dst[oh * a.OW + ow] = s / static_cast<T>((h1 - h0) * (w1 - w0));
        }
      }
    }
  });
}

template <typename T>
void adaptive_avg_backward_impl(const T* gout, T* gin, const Pool2dArgs& a) {
  if (a.OH == 1 && a.OW == 1) {
    const int64_t n = a.H * a.W;
    parallel_for(0, a.planes, plane_grain(a), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const T v = gout[p] / static_cast<T>(n);
        T* dst = gin + p * n;
        for (int64_t i = 0; i < n; ++i) dst[i] = v;
      }
    });
    return;
  }
  parallel_for(0, a.planes, plane_grain(a), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* g = gout + p * a.OH * a.OW;
      T* dst = gin + p * a.H * a.W;
      for (int64_t oh = 0; oh < a.OH; ++oh) {
        const int64_t h0 = start_index(oh, a.OH, a.H), h1 = end_index(oh, a.OH, a.H);
        for (int64_t ow = 0; ow < a.OW; ++ow) {
          const int64_t w0 = start_index(ow, a.OW, a.W), w1 = end_index(ow, a.OW, a.W);
          const T v = g[oh * a.OW + ow] / static_cast<T>((h1 - h0) * (w1 - w0));
          for (int64_t h = h0; h < h1; ++h) {
            for (int64_t w = w0; w < w1; ++w) dst[h * a.W + w] += v;
          }
        }
      }
    }
  });
}

// Element types of max pooling: every type but bool (16-bit floats are
// widened by the caller). Average pooling takes floats and int64 only.
template <typename F>
void dispatch_pool_types(ScalarType t, const char* name, bool all_ints, const F& f) {
  switch (t) {
    case ScalarType::Float: return f(float{});
    case ScalarType::Double: return f(double{});
    case ScalarType::Long: return f(int64_t{});
    default: break;
  }
  if (all_ints) {
    switch (t) {
      case ScalarType::Int: return f(int32_t{});
      case ScalarType::Short: return f(int16_t{});
      case ScalarType::Char: return f(int8_t{});
      case ScalarType::Byte: return f(uint8_t{});
      default: break;
    }
  }
  throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(t), "'"));
}

template <typename F>
void dispatch_float_types(ScalarType t, const char* name, const F& f) {
  switch (t) {
    case ScalarType::Float: return f(float{});
    case ScalarType::Double: return f(double{});
    default: throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(t), "'"));
  }
}

void max_pool2d_kernel(ScalarType dtype, const void* in, void* out, int64_t* idx, const Pool2dArgs& a) {
  dispatch_pool_types(dtype, "max_pool2d", true, [&](auto v) {
    using T = decltype(v);
    max_pool_impl(static_cast<const T*>(in), static_cast<T*>(out), idx, a);
  });
}

void max_pool2d_backward_kernel(ScalarType dtype, const void* gout, const int64_t* idx, void* gin,
                                const Pool2dArgs& a) {
  dispatch_float_types(dtype, "max_pool2d_with_indices_backward", [&](auto v) {
    using T = decltype(v);
    max_pool_backward_impl(static_cast<const T*>(gout), idx, static_cast<T*>(gin), a);
  });
}

void avg_pool2d_kernel(ScalarType dtype, const void* in, void* out, const Pool2dArgs& a, bool count_include_pad,
                       int64_t divisor) {
  dispatch_pool_types(dtype, "avg_pool2d", false, [&](auto v) {
    using T = decltype(v);
    avg_pool_impl(static_cast<const T*>(in), static_cast<T*>(out), a, count_include_pad, divisor);
  });
}

void avg_pool2d_backward_kernel(ScalarType dtype, const void* gout, void* gin, const Pool2dArgs& a,
                                bool count_include_pad, int64_t divisor) {
  dispatch_float_types(dtype, "avg_pool2d_backward_out_frame", [&](auto v) {
    using T = decltype(v);
    avg_pool_backward_impl(static_cast<const T*>(gout), static_cast<T*>(gin), a, count_include_pad, divisor);
  });
}

void adaptive_avg_pool2d_kernel(ScalarType dtype, const void* in, void* out, const Pool2dArgs& a) {
  dispatch_float_types(dtype, "adaptive_avg_pool2d", [&](auto v) {
    using T = decltype(v);
    adaptive_avg_impl(static_cast<const T*>(in), static_cast<T*>(out), a);
  });
}

void adaptive_avg_pool2d_backward_kernel(ScalarType dtype, const void* gout, void* gin, const Pool2dArgs& a) {
  dispatch_float_types(dtype, "adaptive_avg_pool2d_backward_cpu", [&](auto v) {
    using T = decltype(v);
    adaptive_avg_backward_impl(static_cast<const T*>(gout), static_cast<T*>(gin), a);
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(max_pool2d_stub, &max_pool2d_kernel);
EMBER_REGISTER_DISPATCH(max_pool2d_backward_stub, &max_pool2d_backward_kernel);
EMBER_REGISTER_DISPATCH(avg_pool2d_stub, &avg_pool2d_kernel);
EMBER_REGISTER_DISPATCH(avg_pool2d_backward_stub, &avg_pool2d_backward_kernel);
EMBER_REGISTER_DISPATCH(adaptive_avg_pool2d_stub, &adaptive_avg_pool2d_kernel);
EMBER_REGISTER_DISPATCH(adaptive_avg_pool2d_backward_stub, &adaptive_avg_pool2d_backward_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
