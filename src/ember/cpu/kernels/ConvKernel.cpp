// im2col and col2im, compiled once per CPU capability.
#include <cstring>

#include "ember/core/Error.h"
#include "ember/cpu/NNStubs.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// The output columns ow whose input column ow*sw + off lies inside [0, W).
inline void valid_cols(int64_t off, int64_t W, int64_t sw, int64_t OW, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
  hi = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
  if (hi > OW) hi = OW;
  if (lo > hi) lo = hi;
}

// Rows are often short (OW of 10 or 20): plain loops, which GCC would
// otherwise turn back into memcpy/memset calls that cost more than the copy.
#if defined(__GNUC__) && !defined(__clang__)
#define EMBER_NO_LIBCALL_LOOPS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define EMBER_NO_LIBCALL_LOOPS
#endif

template <typename T>
EMBER_NO_LIBCALL_LOOPS void im2col_impl(const T* __restrict im, T* __restrict col, const Im2ColArgs& a) {
  const int64_t rows = a.oh_end - a.oh_begin;
  const int64_t ld = rows * a.OW;
  for (int64_t c = 0; c < a.C; ++c) {
    const T* plane = im + c * a.H * a.W;
    for (int64_t i = 0; i < a.kh; ++i) {
      for (int64_t j = 0; j < a.kw; ++j) {
        T* dst = col + ((c * a.kh + i) * a.kw + j) * ld;
        const int64_t off = j * a.dw - a.pw;
        int64_t lo, hi;
        valid_cols(off, a.W, a.sw, a.OW, lo, hi);
        for (int64_t oh = a.oh_begin; oh < a.oh_end; ++oh, dst += a.OW) {
          const int64_t h = oh * a.sh - a.ph + i * a.dh;
          if (h < 0 || h >= a.H) {
            for (int64_t ow = 0; ow < a.OW; ++ow) dst[ow] = T(0);
            continue;
          }
          const T* src = plane + h * a.W + off;
          for (int64_t ow = 0; ow < lo; ++ow) dst[ow] = T(0);
          if (a.sw == 1) {
            for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow];
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * a.sw];
          }
          for (int64_t ow = hi; ow < a.OW; ++ow) dst[ow] = T(0);
        }
      }
    }
  }
}

template <typename T>
EMBER_NO_LIBCALL_LOOPS void col2im_impl(const T* __restrict col, T* __restrict im, const Im2ColArgs& a) {
  const int64_t rows = a.oh_end - a.oh_begin;
  const int64_t ld = rows * a.OW;
  for (int64_t c = 0; c < a.C; ++c) {
    T* plane = im + c * a.H * a.W;
    for (int64_t i = 0; i < a.kh; ++i) {
      for (int64_t j = 0; j < a.kw; ++j) {
        const T* src = col + ((c * a.kh + i) * a.kw + j) * ld;
        const int64_t off = j * a.dw - a.pw;
        int64_t lo, hi;
        valid_cols(off, a.W, a.sw, a.OW, lo, hi);
        for (int64_t oh = a.oh_begin; oh < a.oh_end; ++oh, src += a.OW) {
          const int64_t h = oh * a.sh - a.ph + i * a.dh;
          if (h < 0 || h >= a.H) continue;
          T* dst = plane + h * a.W + off;
          if (a.sw == 1) {
            for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += src[ow];
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) dst[ow * a.sw] += src[ow];
          }
        }
      }
    }
  }
}

template <typename T>
void im2col_wide_impl(const T* __restrict im, T* __restrict col, const WideArgs& a) {
  T* dst = col;
  for (int64_t c = 0; c < a.C; ++c) {
    for (int64_t i = 0; i < a.kh; ++i) {
      for (int64_t j = 0; j < a.kw; ++j, dst += a.L) {
        std::memcpy(static_cast<void*>(dst), im + c * a.plane + i * a.dh * a.Wp + j * a.dw, sizeof(T) * a.L);
      }
    }
  }
}

template <typename T>
void col2im_wide_impl(const T* __restrict col, T* __restrict im, const WideArgs& a) {
  const T* src = col;
  for (int64_t c = 0; c < a.C; ++c) {
    for (int64_t i = 0; i < a.kh; ++i) {
      for (int64_t j = 0; j < a.kw; ++j, src += a.L) {
        T* dst = im + c * a.plane + i * a.dh * a.Wp + j * a.dw;
        for (int64_t p = 0; p < a.L; ++p) dst[p] += src[p];
      }
    }
  }
}

// The element types convolution computes in (16-bit floats go through float).
template <typename F>
void dispatch_conv_types(ScalarType t, const char* name, const F& f) {
  switch (t) {
    case ScalarType::Float: return f(float{});
    case ScalarType::Double: return f(double{});
    case ScalarType::Long: return f(int64_t{});
    case ScalarType::Int: return f(int32_t{});
    case ScalarType::Short: return f(int16_t{});
    case ScalarType::Char: return f(int8_t{});
    case ScalarType::Byte: return f(uint8_t{});
    default: throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(t), "'"));
  }
}

void im2col_kernel(ScalarType dtype, const void* im, void* col, const Im2ColArgs& a) {
  dispatch_conv_types(dtype, "im2col", [&](auto v) {
    using T = decltype(v);
    im2col_impl(static_cast<const T*>(im), static_cast<T*>(col), a);
  });
}

void col2im_kernel(ScalarType dtype, const void* col, void* im, const Im2ColArgs& a) {
  dispatch_conv_types(dtype, "col2im", [&](auto v) {
    using T = decltype(v);
    col2im_impl(static_cast<const T*>(col), static_cast<T*>(im), a);
  });
}

void im2col_wide_kernel(ScalarType dtype, const void* im, void* col, const WideArgs& a) {
  dispatch_conv_types(dtype, "im2col", [&](auto v) {
    using T = decltype(v);
    im2col_wide_impl(static_cast<const T*>(im), static_cast<T*>(col), a);
  });
}

void col2im_wide_kernel(ScalarType dtype, const void* col, void* im, const WideArgs& a) {
  dispatch_conv_types(dtype, "col2im", [&](auto v) {
    using T = decltype(v);
    col2im_wide_impl(static_cast<const T*>(col), static_cast<T*>(im), a);
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(im2col_stub, &im2col_kernel);
EMBER_REGISTER_DISPATCH(col2im_stub, &col2im_kernel);
EMBER_REGISTER_DISPATCH(im2col_wide_stub, &im2col_wide_kernel);
EMBER_REGISTER_DISPATCH(col2im_wide_stub, &col2im_wide_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
