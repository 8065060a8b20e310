// flip's reversed rows, compiled once per CPU capability: whole vectors are
// loaded, their lanes reversed by one shuffle, and stored (Note [Flip rows]).
//
// Note [Flip rows]
// flip reads each flipped dim backwards; along a contiguous last dim that is
// a reversed copy of every row. Elements are moved as unsigned integers of
// their size (flip never looks at values), so one kernel serves every dtype.
#include <cstdint>
#include <cstring>
#include <utility>

#include "ember/cpu/IndexStubs.h"

namespace ember::cpu {
namespace {

constexpr size_t kVectorBytes = 32;

template <typename T, size_t... I>
void reverse_rows(const T* row, int64_t n, T* out, std::index_sequence<I...>) {
  constexpr int64_t lanes = sizeof...(I);
  using V [[gnu::vector_size(kVectorBytes)]] = T;
  constexpr V reversed_lanes = {static_cast<T>(lanes - 1 - I)...};
  int64_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    V v;
    std::memcpy(&v, row + (n - j - lanes), kVectorBytes);
    v = __builtin_shuffle(v, reversed_lanes);
    std::memcpy(out + j, &v, kVectorBytes);
  }
  for (; j < n; ++j) out[j] = row[n - 1 - j];
}

template <typename T>
void reverse_rows(const void* row, int64_t rows, int64_t row_step, int64_t n, void* out) {
  const T* src = static_cast<const T*>(row);
  T* dst = static_cast<T*>(out);
  for (int64_t r = 0; r < rows; ++r) {
    reverse_rows(src + r * row_step, n, dst + r * n, std::make_index_sequence<kVectorBytes / sizeof(T)>());
  }
}

struct Pair {
  uint64_t lo, hi;
};

void flip_row_kernel(const void* row, int64_t rows, int64_t row_step, int64_t n, void* out, int64_t elem_size) {
  switch (elem_size) {
    case 1: return reverse_rows<uint8_t>(row, rows, row_step, n, out);
    case 2: return reverse_rows<uint16_t>(row, rows, row_step, n, out);
    case 4: return reverse_rows<uint32_t>(row, rows, row_step, n, out);
    case 8: return reverse_rows<uint64_t>(row, rows, row_step, n, out);
    default: {  // 16 bytes (complex128): one element per 16-byte move
      const Pair* src = static_cast<const Pair*>(row);
      Pair* dst = static_cast<Pair*>(out);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < n; ++j) dst[r * n + j] = src[r * row_step + n - 1 - j];
      }
    }
  }
}

}  // namespace

EMBER_REGISTER_DISPATCH(flip_row_stub, &flip_row_kernel);

}  // namespace ember::cpu
