#pragma once
// Host logic of the CUDA FFTs (cuda/fft/SpectralOps.cpp), plain C++ so the
// host tests check it without a GPU: the batch-first permutation of one
// cuFFT call, how a strided batch is described to cuFFT (Note [cuFFT
// layouts]), the key a plan is cached under, the bounded per-device plan
// cache, the dims each C2C pass takes and the normalization scale.
//
// Note [cuFFT layouts]
// One cuFFT plan transforms `batch` signals of rank 1 to 3. cuFFT's advanced
// layout addresses element (b, x_0 .. x_{r-1}) of a side (input or output) at
//   b * dist + stride * (x_{r-1} + embed[r-1] * (x_{r-2} + embed[r-2] * (...)))
// so a strided tensor (after the batch dims were collapsed into one) fits
// when its signal strides are positive multiples of each other, innermost
// the smallest: embed[j] = stride(dim j - 1) / stride(dim j), embed[0]
// unused. A signal dim of size 1 whose stride does not divide takes embed 1
// and is skipped in the ratios (its stride is never used).
// An input that does not fit (a zero or non-dividing stride, a zero batch
// stride over more than one signal) is cloned contiguous first; the outputs
// are always fresh contiguous tensors, which fit. When both sides are
// contiguous the plan is made with null embeds (cuFFT's basic layout), as
// PyTorch makes it. The complex side of an R2C or C2R holds n / 2 + 1
// entries of its last dim ("one-sided").
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ember::cuda::fft {

// cuFFT transforms at most 3 dims in one plan.
constexpr int kMaxRank = 3;
// PyTorch's default torch.backends.cuda.cufft_plan_cache.max_size (per device).
constexpr size_t kDefaultPlanCacheSize = 4096;

enum class FftKind : int { C2C = 0, R2C = 1, C2R = 2 };

inline FftKind kind_of(bool complex_input, bool complex_output) {
  if (complex_input && complex_output) return FftKind::C2C;
  return complex_input ? FftKind::C2R : FftKind::R2C;
}

// ---- one call: permutation and output strides ----------------------------------------

// The input dims in the order one call reads them: the dims not transformed
// (the batch) first, by decreasing stride (ties keep their order), then the
// transformed `dims` in the order given.
inline std::vector<int64_t> batch_first_permutation(const std::vector<int64_t>& strides,
                                                    const std::vector<int64_t>& dims) {
  const int64_t ndim = static_cast<int64_t>(strides.size());
  std::vector<bool> transformed(ndim, false);
  for (int64_t d : dims) transformed[d] = true;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < ndim; ++d) {
    if (!transformed[d]) perm.push_back(d);
  }
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  perm.insert(perm.end(), dims.begin(), dims.end());
  return perm;
}

// Strides of the result in the original dim order, given the contiguous
// batched output ([batch, signal...] with `batched_strides`): the batch dims
// nest in permutation order inside the batch stride.
inline std::vector<int64_t> unbatched_strides(const std::vector<int64_t>& out_sizes, const std::vector<int64_t>& perm,
                                              const std::vector<int64_t>& batched_strides, size_t signal_ndim) {
  const size_t ndim = out_sizes.size();
  const size_t batch_dims = ndim - signal_ndim;
  std::vector<int64_t> strides(ndim, 0);
  int64_t inner = 1;
  for (size_t i = batch_dims; i-- > 0;) {
    strides[perm[i]] = inner * batched_strides[0];
    inner *= out_sizes[perm[i]];
  }
  for (size_t i = batch_dims; i < ndim; ++i) strides[perm[i]] = batched_strides[1 + i - batch_dims];
  return strides;
}

// The dims of the next C2C pass: `remaining` sorted by decreasing stride of
// the tensor the pass reads, its last (innermost) kMaxRank taken off it.
inline std::vector<int64_t> take_pass_dims(std::vector<int64_t>& remaining, const std::vector<int64_t>& strides) {
  std::stable_sort(remaining.begin(), remaining.end(), [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  const size_t take = std::min(remaining.size(), static_cast<size_t>(kMaxRank));
  std::vector<int64_t> pass(remaining.end() - static_cast<std::ptrdiff_t>(take), remaining.end());
  remaining.resize(remaining.size() - take);
  return pass;
}

// ---- layouts (Note [cuFFT layouts]) ------------------------------------------------------

struct Layout {
  std::vector<long long> embed;  // one entry per signal dim
  long long stride = 1;
  long long dist = 1;
  bool simple = true;  // contiguous: described by a null embed
  bool must_clone = false;  // the strides do not fit: the data is copied contiguous first
};

// `sizes` is [batch, n_0 .. n_{r-1}] (the signal sizes); this side stores
// n_{r-1} / 2 + 1 entries of the last dim when `onesided`.
inline Layout contiguous_layout(const std::vector<int64_t>& sizes, bool onesided) {
  Layout l;
  l.embed.assign(sizes.begin() + 1, sizes.end());
  if (onesided) l.embed.back() = sizes.back() / 2 + 1;
  l.dist = 1;
  for (long long e : l.embed) l.dist *= e;
  return l;
}

// `strides` is [batch stride, signal strides...] in elements of this side's type.
inline Layout strided_layout(const std::vector<int64_t>& strides, const std::vector<int64_t>& sizes, bool onesided) {
  const size_t rank = sizes.size() - 1;
  const int64_t last_extent = onesided ? sizes[rank] / 2 + 1 : sizes[rank];
  int64_t signal_numel = last_extent;
  for (size_t i = 1; i < rank; ++i) signal_numel *= sizes[i];
  Layout l;
  l.embed.assign(rank, 1);
  int64_t inner = strides[rank];
  bool fits = inner > 0;
  if (sizes[0] == 1) {
    l.dist = signal_numel;  // one signal: any distance will do
  } else if (strides[0] == 0) {
    fits = false;
  } else {
    l.dist = strides[0];
  }
  for (size_t j = rank - 1; fits && j >= 1; --j) {
    // embed[j] relates signal dim j - 1 (strides[j]) to the next inner one.
    if (strides[j] > 0 && strides[j] % inner == 0) {
      l.embed[j] = strides[j] / inner;
      inner = strides[j];
    } else if (sizes[j] == 1) {
      l.embed[j] = 1;  // its stride is never used
    } else {
      fits = false;
    }
  }
  if (!fits) {
    Layout c = contiguous_layout(sizes, onesided);
    c.must_clone = true;
    return c;
  }
  l.embed[0] = sizes[1];
  l.stride = strides[rank];
  bool simple = l.stride == 1 && l.dist == signal_numel;
  for (size_t j = 1; simple && j < rank; ++j) {
    const int64_t extent = j + 1 == rank ? last_extent : sizes[j + 1];
    simple = l.embed[j] == extent;
  }
  l.simple = simple;
  return l;
}

// ---- plan keys ----------------------------------------------------------------------------

// Everything a plan is made from: device, kind, precision, the signal sizes
// with the batch ([batch, n...]) and both sides' batched strides.
struct PlanKey {
  std::vector<int64_t> values;

  PlanKey() = default;
  PlanKey(int device, FftKind kind, bool is_double, const std::vector<int64_t>& sizes,
          const std::vector<int64_t>& in_strides, const std::vector<int64_t>& out_strides) {
    values.reserve(4 + 3 * sizes.size());
    values.push_back(device);
    values.push_back(static_cast<int64_t>(kind));
    values.push_back(is_double ? 1 : 0);
    values.push_back(static_cast<int64_t>(sizes.size()) - 1);
    values.insert(values.end(), sizes.begin(), sizes.end());
    values.insert(values.end(), in_strides.begin(), in_strides.end());
    values.insert(values.end(), out_strides.begin(), out_strides.end());
  }
  int device() const { return static_cast<int>(values[0]); }
  FftKind kind() const { return static_cast<FftKind>(values[1]); }
  bool is_double() const { return values[2] != 0; }
  size_t rank() const { return static_cast<size_t>(values[3]); }
  std::vector<int64_t> sizes() const { return slice(0); }
  std::vector<int64_t> in_strides() const { return slice(1); }
  std::vector<int64_t> out_strides() const { return slice(2); }
  bool operator==(const PlanKey& o) const { return values == o.values; }

 private:
  std::vector<int64_t> slice(size_t which) const {
    const size_t n = rank() + 1;
    auto first = values.begin() + static_cast<std::ptrdiff_t>(4 + which * n);
    return std::vector<int64_t>(first, first + static_cast<std::ptrdiff_t>(n));
  }
};

struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t v : k.values) h = (h ^ std::hash<int64_t>()(v)) * 1099511628211ull;
    return h;
  }
};

// What a plan is made with: both sides' layouts and whether the input is
// cloned contiguous before each execution.
struct PlanLayout {
  Layout in, out;
  bool clone_input = false;
  bool simple = false;  // null embeds for both sides
};

inline PlanLayout plan_layout(const PlanKey& key) {
  const auto sizes = key.sizes();
  PlanLayout p;
  p.in = strided_layout(key.in_strides(), sizes, key.kind() == FftKind::C2R);
  p.out = strided_layout(key.out_strides(), sizes, key.kind() == FftKind::R2C);
  p.clone_input = p.in.must_clone;
  p.simple = p.in.simple && p.out.simple;
  return p;
}

// ---- the plan cache -----------------------------------------------------------------------

// A least-recently-used cache of at most max_size() plans; a plan in use
// stays alive (shared) after it is evicted. Thread-safe.
template <typename Plan>
class PlanCache {
 public:
  explicit PlanCache(size_t max_size = kDefaultPlanCacheSize) : max_size_(max_size) {}

  // The cached plan of `key`, made by make() (outside the lock) when absent.
  template <typename Make>
  std::shared_ptr<Plan> lookup(const PlanKey& key, Make make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
      }
    }
    std::shared_ptr<Plan> plan = make();
    std::lock_guard<std::mutex> lock(mutex_);
    if (max_size_ == 0) return plan;
    auto it = index_.find(key);
    if (it != index_.end()) {  // made meanwhile by another thread
      order_.splice(order_.begin(), order_, it->second);
      return it->second->second;
    }
    order_.emplace_front(key, plan);
    index_.emplace(key, order_.begin());
    trim();
    return plan;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return order_.size();
  }
  size_t max_size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return max_size_;
  }
  void set_max_size(size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    max_size_ = n;
    trim();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    index_.clear();
    order_.clear();
  }
  bool contains(const PlanKey& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return index_.count(key) != 0;
  }

 private:
  void trim() {
    while (order_.size() > max_size_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

  mutable std::mutex mutex_;
  size_t max_size_;
  std::list<std::pair<PlanKey, std::shared_ptr<Plan>>> order_;  // most recent first
  std::unordered_map<PlanKey, typename decltype(order_)::iterator, PlanKeyHash> index_;
};

// ---- normalization --------------------------------------------------------------------

// The factor of normalization 1 (by sqrt(n)) or 2 (by n), n the product of
// sizes[d] over dims; 1 for 0 (none).
inline double normalization_scale(int64_t normalization, const std::vector<int64_t>& sizes,
                                  const std::vector<int64_t>& dims) {
  if (normalization == 0) return 1.0;
  int64_t n = 1;
  for (int64_t d : dims) n *= sizes[d];
  const double numel = static_cast<double>(n);
  return normalization == 1 ? 1.0 / std::sqrt(numel) : 1.0 / numel;
}

}  // namespace ember::cuda::fft
