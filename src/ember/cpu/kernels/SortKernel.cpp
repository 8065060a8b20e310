// Sort and topk inner loops, compiled once per CPU capability.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/Half.h"
#include "ember/cpu/SortStubs.h"
#include "ember/cpu/kernels/MathLoops.h"
#include "ember/ops/Parallel.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// Note [Sort keys]
// Every element is mapped to an unsigned key whose integer order is the sort
// order: integers flip their sign bit, floats map their bits so that negative
// numbers come first, -0.0 is folded onto 0.0 (they compare equal) and every
// NaN becomes the largest key. Descending sorts complement the key. Sorting
// (key, position) pairs stably then gives PyTorch's order, ties included, and
// the values are read back from the input by position, bit for bit.
template <typename T>
using key_t = std::conditional_t<(sizeof(T) == 8), uint64_t, uint32_t>;

template <typename T>
inline key_t<T> sort_key(T v) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, uint8_t>) {
    return static_cast<uint32_t>(v);
  } else if constexpr (std::is_integral_v<T> && sizeof(T) < 8) {
    return static_cast<uint32_t>(static_cast<int32_t>(v)) ^ 0x80000000u;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(v) ^ (uint64_t(1) << 63);
  } else if constexpr (std::is_same_v<T, double>) {
    if (std::isnan(v)) return ~uint64_t(0);
    if (v == 0) v = 0;
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return (b >> 63) ? ~b : (b | (uint64_t(1) << 63));
  } else {
    float f = static_cast<float>(v);
    if (std::isnan(f)) return ~uint32_t(0);
    if (f == 0) f = 0;
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return (b >> 31) ? ~b : (b | 0x80000000u);
  }
}

template <typename K>
struct KeyIdx {
  K key;
  uint32_t idx;
};

// Stable LSD radix sort of (key, index) pairs, 8 bits a pass; passes where
// every key has the same digit are skipped.
template <typename K>
void radix_sort(std::vector<KeyIdx<K>>& a, std::vector<KeyIdx<K>>& tmp) {
  const size_t n = a.size();
  tmp.resize(n);
  constexpr int kPasses = sizeof(K);
  std::vector<uint32_t> hist(256 * kPasses, 0);
  for (size_t i = 0; i < n; ++i) {
    K k = a[i].key;
    for (int p = 0; p < kPasses; ++p) ++hist[p * 256 + ((k >> (8 * p)) & 0xff)];
  }
  KeyIdx<K>* src = a.data();
  KeyIdx<K>* dst = tmp.data();
  for (int p = 0; p < kPasses; ++p) {
    uint32_t* h = &hist[p * 256];
    bool trivial = false;
    for (int d = 0; d < 256; ++d) {
      if (h[d] == n) trivial = true;
      if (h[d] != 0) break;
    }
    if (trivial) continue;
    uint32_t sum = 0;
    for (int d = 0; d < 256; ++d) {
      uint32_t c = h[d];
      h[d] = sum;
      sum += c;
    }
    const int shift = 8 * p;
    for (size_t i = 0; i < n; ++i) {
      const KeyIdx<K> e = src[i];
      dst[h[(e.key >> shift) & 0xff]++] = e;
    }
    std::swap(src, dst);
  }
  if (src != a.data()) std::memcpy(a.data(), src, n * sizeof(KeyIdx<K>));
}

template <typename T>
inline bool is_nan_value(T v) {
  if constexpr (is_float_like_v<T>) {
    return std::isnan(static_cast<float>(v));
  } else {
    return false;
  }
}

// (value, position) of an element; 16-bit floats compare as float.
template <typename T>
using SortPair = std::pair<std::conditional_t<is_16bit_float_v<T>, float, T>, int64_t>;

// PyTorch's order of values: NaN above everything.
template <typename E, bool kDescending>
struct NanAwareOrder {
  bool operator()(const E& x, const E& y) const {
    if constexpr (kDescending) {
      return (is_nan_value(x.first) && !is_nan_value(y.first)) || (x.first > y.first);
    } else {
      return (!is_nan_value(x.first) && is_nan_value(y.first)) || (x.first < y.first);
    }
  }
};

// For each line (in parallel): q holds its (value, position) pairs,
// arrange(q) orders them and returns how many to write out.
template <typename T, typename Arrange>
void arrange_lines(int64_t n, int64_t lines, const SortLine* per_line, const Arrange& arrange) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1));
  parallel_for(0, lines, grain, [&](int64_t b, int64_t e) {
    std::vector<SortPair<T>> q(n);
    for (int64_t l = b; l < e; ++l) {
      const SortLine& L = per_line[l];
      const T* in = reinterpret_cast<const T*>(L.in);
      for (int64_t i = 0; i < n; ++i)
        q[i] = SortPair<T>(static_cast<typename SortPair<T>::first_type>(in[i * L.in_stride]), i);
      const int64_t m = arrange(q);
      T* out = reinterpret_cast<T*>(L.values);
      for (int64_t i = 0; i < m; ++i) {
        const int64_t j = q[i].second;
        if (out) out[i * L.values_stride] = in[j * L.in_stride];
        L.indices[i * L.indices_stride] = j;
      }
    }
  });
}

// Unstable sort: std::sort over (value, position) pairs compared by value,
// the algorithm and comparison PyTorch's CPU sort uses, so equal values land
// in the same order.
template <typename T>
void introsort_lines(int64_t n, int64_t lines, bool descending, const SortLine* per_line) {
  using E = SortPair<T>;
  arrange_lines<T>(n, lines, per_line, [&](std::vector<E>& q) {
    if (descending) {
      std::sort(q.begin(), q.end(), NanAwareOrder<E, true>{});
    } else {
      std::sort(q.begin(), q.end(), NanAwareOrder<E, false>{});
    }
    return n;
  });
}

template <typename T>
void sort_lines(int64_t n, int64_t lines, bool descending, const SortLine* per_line) {
  using K = key_t<T>;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1));
  parallel_for(0, lines, grain, [&](int64_t b, int64_t e) {
    std::vector<KeyIdx<K>> buf(n), tmp;
    for (int64_t l = b; l < e; ++l) {
      const SortLine& L = per_line[l];
      const T* in = reinterpret_cast<const T*>(L.in);
      for (int64_t i = 0; i < n; ++i) {
        K k = sort_key<T>(in[i * L.in_stride]);
        buf[i] = {descending ? static_cast<K>(~k) : k, static_cast<uint32_t>(i)};
      }
      if (n <= 256) {
        std::stable_sort(buf.begin(), buf.end(), [](const KeyIdx<K>& x, const KeyIdx<K>& y) { return x.key < y.key; });
      } else {
        radix_sort(buf, tmp);
      }
      T* out = reinterpret_cast<T*>(L.values);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t j = buf[i].idx;
        if (out) out[i * L.values_stride] = in[j * L.in_stride];
        L.indices[i * L.indices_stride] = j;
      }
    }
  });
}

void sort_kernel(ScalarType dtype, int64_t n, int64_t lines, bool descending, bool stable, const SortLine* per_line) {
  EMBER_USE_BASELINE_KERNEL_FOR(dtype, sort_stub, dtype, n, lines, descending, stable, per_line);
  dispatch_types(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (stable) {
      sort_lines<T>(n, lines, descending, per_line);
    } else {
      introsort_lines<T>(n, lines, descending, per_line);
    }
  });
}

// topk follows PyTorch's selection exactly (a partial sort when k is small
// against n, otherwise nth_element and a sort of the first k - 1), so equal
// values come out in the same order.
template <typename T>
void topk_lines(int64_t n, int64_t k, int64_t lines, bool largest, bool sorted, const SortLine* per_line) {
  using E = SortPair<T>;
  const bool partial = k * 64 <= n;
  arrange_lines<T>(n, lines, per_line, [&](std::vector<E>& q) {
    auto run = [&](auto cmp) {
      if (partial) {
        std::partial_sort(q.begin(), q.begin() + k, q.end(), cmp);
      } else {
        std::nth_element(q.begin(), q.begin() + k - 1, q.end(), cmp);
        if (sorted) std::sort(q.begin(), q.begin() + k - 1, cmp);
      }
    };
    if (k == 0) return k;
    if (largest) {
      run(NanAwareOrder<E, true>{});
    } else {
      run(NanAwareOrder<E, false>{});
    }
    return k;
  });
}

void topk_kernel(ScalarType dtype, int64_t n, int64_t k, int64_t lines, bool largest, bool sorted,
                 const SortLine* per_line) {
  EMBER_USE_BASELINE_KERNEL_FOR(dtype, topk_stub, dtype, n, k, lines, largest, sorted, per_line);
  dispatch_types(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    topk_lines<T>(n, k, lines, largest, sorted, per_line);
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(sort_stub, &sort_kernel);
EMBER_REGISTER_DISPATCH(topk_stub, &topk_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
