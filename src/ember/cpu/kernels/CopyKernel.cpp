// Fill and dtype-converting copy kernels, compiled once per CPU capability.
#include <algorithm>
#include <cstring>

#include "ember/ops/Parallel.h"

#include "ember/cpu/Stubs.h"
#include "ember/cpu/kernels/Loops.h"
#include "ember/cpu/kernels/MathLoops.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

template <typename scalar_t>
scalar_t fill_value(const Scalar& value) {
  if constexpr (is_complex_v<scalar_t>) {
    return convert<scalar_t>(value.to_complex());
  } else {
    if (value.is_complex()) return convert<scalar_t>(value.to_complex());
    return value.is_floating_point() || value.is_big_unsigned() ? convert<scalar_t>(value.to<double>())
           : value.is_bool()                                    ? convert<scalar_t>(value.to<bool>())
                                                                : convert<scalar_t>(value.to<int64_t>());
  }
}

void fill_kernel(const TensorIterator& it, const Scalar& value) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), fill_stub, it, value);
  EMBER_DISPATCH_KERNEL_TYPES_AND_COMPLEX(it.common_dtype(), "fill_", [&] {
    const scalar_t vi = fill_value<scalar_t>(value);
    it.for_each([vi](char** d, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(scalar_t)) {
        scalar_t* out = reinterpret_cast<scalar_t*>(d[0]);
        for (int64_t i = 0; i < n; ++i) out[i] = vi;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<scalar_t*>(d[0] + i * s[0]) = vi;
      }
    });
  });
}

// Same-dtype copy of elements of type T (an unsigned integer of the element's size).
template <typename T>
void copy_same_size(const TensorIterator& it) {
  it.for_each([](char** d, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(T) && s[1] == sizeof(T)) {
      std::memcpy(d[0], d[1], n * sizeof(T));
    } else if (s[1] == 0) {
      const T v = *reinterpret_cast<const T*>(d[1]);
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(d[0] + i * s[0]) = v;
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<T*>(d[0] + i * s[0]) = *reinterpret_cast<const T*>(d[1] + i * s[1]);
      }
    }
  });
}

// Note [Tiled transpose copy]
// When src is contiguous along one of the two innermost iteration dims and
// dst along the other (x.t().contiguous(), a permute copied out), an element
// loop touches a new cache line for every element, and with power-of-two row
// strides those lines all fall into one cache set. Instead, square tiles go
// through a small buffer: src is read along its contiguous dim into the
// buffer, then dst is written along its contiguous dim from it, so every line
// is read or written whole at once.
constexpr int64_t kTile = 32;

// Blocks of 32 bytes square are transposed in registers: 8x8 of 4-byte
// elements, 4x4 of 8-byte, 2x2 of 16-byte. Rows are loaded along src's
// contiguous dim, shuffled, and stored along dst's. The loads and stores go
// through a 1-byte-aligned vector type: a memcpy into a vector array is
// expanded as 16-byte moves through the stack, which stalls store forwarding.
typedef uint32_t V8u __attribute__((vector_size(32)));
typedef uint64_t V4u __attribute__((vector_size(32)));
typedef uint64_t V4uUnaligned __attribute__((vector_size(32), aligned(1), may_alias));
inline V4u load32(const char* p) { return *reinterpret_cast<const V4uUnaligned*>(p); }
inline void store32(char* p, V4u v) { *reinterpret_cast<V4uUnaligned*>(p) = v; }
#if defined(__clang__)
#define EMBER_SHUFFLE8(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#define EMBER_SHUFFLE4(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define EMBER_SHUFFLE8(a, b, ...) __builtin_shuffle(a, b, V8u{__VA_ARGS__})
#define EMBER_SHUFFLE4(a, b, ...) __builtin_shuffle(a, b, V4u{__VA_ARGS__})
#endif

template <int64_t E>
inline void transpose_block(const char* src, int64_t src_row, char* dst, int64_t dst_row) {
  if constexpr (E == 4) {
    V8u r[8], t[8], u[8];
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) r[k] = reinterpret_cast<V8u>(load32(src + k * src_row));
#pragma GCC unroll 4
    for (int k = 0; k < 8; k += 2) {
      t[k] = EMBER_SHUFFLE8(r[k], r[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
      t[k + 1] = EMBER_SHUFFLE8(r[k], r[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
#pragma GCC unroll 2
    for (int k = 0; k < 8; k += 4) {
      u[k] = EMBER_SHUFFLE8(t[k], t[k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[k + 1] = EMBER_SHUFFLE8(t[k], t[k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
      u[k + 2] = EMBER_SHUFFLE8(t[k + 1], t[k + 3], 0, 1, 8, 9, 4, 5, 12, 13);
      u[k + 3] = EMBER_SHUFFLE8(t[k + 1], t[k + 3], 2, 3, 10, 11, 6, 7, 14, 15);
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      store32(dst + k * dst_row, reinterpret_cast<V4u>(EMBER_SHUFFLE8(u[k], u[k + 4], 0, 1, 2, 3, 8, 9, 10, 11)));
      store32(dst + (k + 4) * dst_row,
              reinterpret_cast<V4u>(EMBER_SHUFFLE8(u[k], u[k + 4], 4, 5, 6, 7, 12, 13, 14, 15)));
    }
  } else if constexpr (E == 8) {
    const V4u r0 = load32(src), r1 = load32(src + src_row);
    const V4u r2 = load32(src + 2 * src_row), r3 = load32(src + 3 * src_row);
    const V4u t0 = EMBER_SHUFFLE4(r0, r1, 0, 4, 2, 6), t1 = EMBER_SHUFFLE4(r0, r1, 1, 5, 3, 7);
    const V4u t2 = EMBER_SHUFFLE4(r2, r3, 0, 4, 2, 6), t3 = EMBER_SHUFFLE4(r2, r3, 1, 5, 3, 7);
    store32(dst, EMBER_SHUFFLE4(t0, t2, 0, 1, 4, 5));
    store32(dst + dst_row, EMBER_SHUFFLE4(t1, t3, 0, 1, 4, 5));
    store32(dst + 2 * dst_row, EMBER_SHUFFLE4(t0, t2, 2, 3, 6, 7));
    store32(dst + 3 * dst_row, EMBER_SHUFFLE4(t1, t3, 2, 3, 6, 7));
  } else {
    static_assert(E == 16, "transpose_block: 4-, 8- or 16-byte elements");
    const V4u r0 = load32(src), r1 = load32(src + src_row);
    store32(dst, EMBER_SHUFFLE4(r0, r1, 0, 1, 4, 5));
    store32(dst + dst_row, EMBER_SHUFFLE4(r0, r1, 2, 3, 6, 7));
  }
}
#undef EMBER_SHUFFLE8
#undef EMBER_SHUFFLE4

struct Bytes16 {
  uint64_t lo, hi;
};

template <typename T>
bool copy_transposed(const TensorIterator& it) {
  const IntArrayRef shape = it.iter_shape();
  const int nd = static_cast<int>(shape.size());
  if (nd < 2) return false;
  constexpr int64_t E = sizeof(T);
  const int inner = nd - 1, next = nd - 2;
  // p: the dim along which src is contiguous; q: the one along which dst is.
  int p, q;
  if (it.iter_stride(inner, 0) == E && it.iter_stride(next, 1) == E && it.iter_stride(inner, 1) != E) {
    p = next, q = inner;
  } else if (it.iter_stride(inner, 1) == E && it.iter_stride(next, 0) == E && it.iter_stride(inner, 0) != E) {
    p = inner, q = next;
  } else {
    return false;
  }
  const int64_t np = shape[p], nq = shape[q];
  if (np < kTile / 2 || nq < kTile / 2) return false;
  const int64_t src_q = it.iter_stride(q, 1), dst_p = it.iter_stride(p, 0);
  int64_t outer = 1;
  for (int d = 0; d < next; ++d) outer *= shape[d];
  const int64_t p_tiles = (np + kTile - 1) / kTile;
  char* dst = static_cast<char*>(it.operand(0).data_ptr());
  const char* src = static_cast<const char*>(it.operand(1).data_ptr());
  const int64_t grain = std::max<int64_t>(1, 32768 / (kTile * nq));
  parallel_for(0, outer * p_tiles, grain, [&](int64_t b, int64_t e) {
    T buf[kTile][kTile];
    for (int64_t u = b; u < e; ++u) {
      int64_t rem = u / p_tiles, doff = 0, soff = 0;
      for (int d = next - 1; d >= 0; --d) {
        const int64_t c = rem % shape[d];
        rem /= shape[d];
        doff += c * it.iter_stride(d, 0);
        soff += c * it.iter_stride(d, 1);
      }
      const int64_t p0 = (u % p_tiles) * kTile, mp = std::min(kTile, np - p0);
      for (int64_t q0 = 0; q0 < nq; q0 += kTile) {
        const int64_t mq = std::min(kTile, nq - q0);
        if constexpr (E == 4 || E == 8 || E == 16) {
          constexpr int64_t B = 32 / E;
          if (mp == kTile && mq == kTile) {
            for (int64_t j = 0; j < kTile; j += B) {
              const char* sp = src + soff + (q0 + j) * src_q + p0 * E;
              for (int64_t i = 0; i < kTile; i += B) {
                transpose_block<E>(sp + i * E, src_q, dst + doff + (p0 + i) * dst_p + (q0 + j) * E, dst_p);
              }
            }
            continue;
          }
        }
        for (int64_t j = 0; j < mq; ++j) {
          const T* sp = reinterpret_cast<const T*>(src + soff + (q0 + j) * src_q) + p0;
          for (int64_t i = 0; i < mp; ++i) buf[i][j] = sp[i];
        }
        for (int64_t i = 0; i < mp; ++i) {
          T* dp = reinterpret_cast<T*>(dst + doff + (p0 + i) * dst_p) + q0;
          for (int64_t j = 0; j < mq; ++j) dp[j] = buf[i][j];
        }
      }
    }
  });
  return true;
}

template <typename T>
void copy_same_dtype(const TensorIterator& it) {
  if (!copy_transposed<T>(it)) copy_same_size<T>(it);
}

// float <-> float16 on contiguous runs with the bulk conversions of
// Note [16-bit float loops] (F16C where compiled in).
bool convert_float16(const TensorIterator& it, ScalarType dst, ScalarType src) {
  if (dst == ScalarType::Half && src == ScalarType::Float) {
    it.for_each([](char** d, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(Half) && s[1] == sizeof(float)) {
        for (int64_t i = 0; i < n; i += kChunk) {
          cvt_from_float(reinterpret_cast<const float*>(d[1]) + i, reinterpret_cast<Half*>(d[0]) + i,
                         static_cast<int>(std::min<int64_t>(kChunk, n - i)));
        }
      } else {
        unary_loop<Half, float>(d, s, n, [](float x) { return Half(x); });
      }
    });
    return true;
  }
  if (dst == ScalarType::Float && src == ScalarType::Half) {
    it.for_each([](char** d, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(float) && s[1] == sizeof(Half)) {
        for (int64_t i = 0; i < n; i += kChunk) {
          cvt_to_float(reinterpret_cast<const Half*>(d[1]) + i, reinterpret_cast<float*>(d[0]) + i,
                       static_cast<int>(std::min<int64_t>(kChunk, n - i)));
        }
      } else {
        unary_loop<float, Half>(d, s, n, [](Half x) { return static_cast<float>(x); });
      }
    });
    return true;
  }
  return false;
}

// Note [bfloat16 NaN in copies]
// PyTorch's vectorized float -> bfloat16 conversion gives every NaN the bits
// 0xffff, its scalar one 0x7fc0 (signbit and copysign see the difference).
// Its copy converts a contiguous float run whole in vector form, tail
// included; a contiguous double run in blocks of 16, the rest by scalar; any
// other source dtype, or a strided run, by scalar. A build without vector
// kernels is scalar throughout.
inline BFloat16 bfloat16_vector_form(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  BFloat16 r;
  r.x = (u & 0x7fffffffu) > 0x7f800000u ? uint16_t(0xffffu) : uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  return r;
}

bool convert_to_bfloat16(const TensorIterator& it, ScalarType dst, ScalarType src) {
  if (EMBER_CPU_BASELINE_BUILD || dst != ScalarType::BFloat16) return false;
  if (src == ScalarType::Float && it.numel() == 1) {
    // One element: the vector form unless either side is 0-dim (PyTorch's loop is then strided).
    const bool vector = it.operand(0).dim() > 0 && it.operand(1).dim() > 0;
    const float x = *static_cast<const float*>(it.operand(1).data_ptr());
    *static_cast<BFloat16*>(it.operand(0).data_ptr()) = vector ? bfloat16_vector_form(x) : BFloat16(x);
    return true;
  }
  const auto run = [&it](auto zero) {
    using src_t = decltype(zero);
    constexpr int64_t block = std::is_same_v<src_t, float> ? 1 : 16;
    it.for_each([](char** d, const int64_t* s, int64_t n) {
      if (s[0] != sizeof(BFloat16) || s[1] != sizeof(src_t)) {
        unary_loop<BFloat16, src_t>(d, s, n, [](src_t x) { return BFloat16(static_cast<float>(x)); });
        return;
      }
      auto* out = reinterpret_cast<BFloat16*>(d[0]);
      const auto* in = reinterpret_cast<const src_t*>(d[1]);
      const int64_t body = n / block * block;
      for (int64_t i = 0; i < body; ++i) out[i] = bfloat16_vector_form(static_cast<float>(in[i]));
      for (int64_t i = body; i < n; ++i) out[i] = BFloat16(static_cast<float>(in[i]));
    });
  };
  if (src == ScalarType::Float) return run(float{}), true;
  if (src == ScalarType::Double) return run(double{}), true;
  return false;
}

void copy_kernel(const TensorIterator& it) {
  ScalarType dst = it.dtype(0), src = it.dtype(1);
  if (dst == src) {
    switch (element_size(dst)) {
      case 1: return copy_same_dtype<uint8_t>(it);
      case 2: return copy_same_dtype<uint16_t>(it);
      case 4: return copy_same_dtype<uint32_t>(it);
      case 8: return copy_same_dtype<uint64_t>(it);
      case 16: return copy_same_dtype<Bytes16>(it);
      default: EMBER_INTERNAL_ASSERT(false, "copy_: element size ", element_size(dst));
    }
  }
  if (convert_float16(it, dst, src) || convert_to_bfloat16(it, dst, src)) return;
  EMBER_USE_BASELINE_KERNEL_FOR(has_loops_for(src) ? dst : src, copy_stub, it);
  EMBER_DISPATCH_KERNEL_TYPES_AND_COMPLEX(dst, "copy_", [&] {
    using dst_t = scalar_t;
    EMBER_DISPATCH_KERNEL_TYPES_AND_COMPLEX(src, "copy_", [&] {
      using src_t = scalar_t;
      it.for_each([](char** d, const int64_t* s, int64_t n) {
        unary_loop<dst_t, src_t>(d, s, n, [](src_t x) { return convert<dst_t>(x); });
      });
    });
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(fill_stub, &fill_kernel);
EMBER_REGISTER_DISPATCH(copy_stub, &copy_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
