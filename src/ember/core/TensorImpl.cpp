#include "ember/core/TensorImpl.h"

#include <algorithm>
#include <limits>

#include "ember/core/Error.h"
#include "ember/core/TensorBase.h"

namespace ember {

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return strides;
}

int64_t product(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

namespace {
constexpr uint64_t kMaxBytes = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// Product of sizes as uint64; true when it wrapped.
bool multiply_u64(IntArrayRef sizes, uint64_t* out) {
  uint64_t prod = 1;
  bool overflow = false;
  for (int64_t s : sizes) overflow |= __builtin_mul_overflow(prod, static_cast<uint64_t>(s), &prod);
  *out = prod;
  return overflow;
}
}  // namespace

int64_t safe_numel(IntArrayRef sizes) {
  uint64_t n = 1;
  const bool overflow = multiply_u64(sizes, &n) || n > kMaxBytes;
  EMBER_CHECK(!overflow, "numel: integer multiplication overflow");
  return static_cast<int64_t>(n);
}

size_t storage_nbytes(IntArrayRef sizes, size_t itemsize) {
  uint64_t n = 1;
  bool overflow = multiply_u64(sizes, &n);
  overflow |= __builtin_mul_overflow(n, static_cast<uint64_t>(itemsize), &n);
  EMBER_CHECK(!overflow && n <= kMaxBytes, "Storage size calculation overflowed with sizes=", shape_string(sizes));
  return static_cast<size_t>(n);
}

size_t checked_add_bytes(size_t bytes, size_t offset_bytes, IntArrayRef sizes) {
  uint64_t n = 0;
  const bool overflow = __builtin_add_overflow(static_cast<uint64_t>(bytes), static_cast<uint64_t>(offset_bytes), &n);
  EMBER_CHECK(!overflow && n <= kMaxBytes, "Storage size calculation overflowed with sizes=", shape_string(sizes));
  return static_cast<size_t>(n);
}

size_t storage_nbytes(IntArrayRef sizes, IntArrayRef strides, size_t itemsize) {
  uint64_t n = 1;
  bool overflow = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return 0;
    uint64_t extent = 0;
    overflow |= __builtin_mul_overflow(static_cast<uint64_t>(strides[i]), static_cast<uint64_t>(sizes[i] - 1), &extent);
    overflow |= __builtin_add_overflow(n, extent, &n);
  }
  overflow |= __builtin_mul_overflow(n, static_cast<uint64_t>(itemsize), &n);
  EMBER_CHECK(!overflow && n <= kMaxBytes, "Storage size calculation overflowed with sizes=", shape_string(sizes),
              " and strides=", shape_string(strides));
  return static_cast<size_t>(n);
}

void check_in_bounds_for_storage(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset, size_t itemsize,
                                 size_t storage_nbytes_have) {
  const size_t bytes = storage_nbytes(sizes, strides, itemsize);
  if (bytes == 0) return;
  uint64_t needed = 0;
  bool overflow =
      __builtin_mul_overflow(static_cast<uint64_t>(storage_offset), static_cast<uint64_t>(itemsize), &needed);
  overflow |= __builtin_add_overflow(needed, static_cast<uint64_t>(bytes), &needed);
  EMBER_CHECK(!overflow && storage_offset >= 0 && needed <= storage_nbytes_have, "setStorage: sizes ",
              shape_string(sizes), ", strides ", shape_string(strides), ", storage offset ", storage_offset,
              ", and itemsize ", itemsize, " requiring a storage size of ", needed,
              " are out of bounds for storage of size ", storage_nbytes_have);
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)), sizes_(sizes), strides_(strides), storage_offset_(storage_offset), dtype_(dtype) {
  EMBER_INTERNAL_ASSERT(sizes.size() == strides.size(), "sizes and strides differ in length");
  refresh_numel_and_contiguity();
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes)
    : storage_(std::move(storage)), sizes_(sizes), strides_(contiguous_strides(sizes)), dtype_(dtype) {
  numel_ = safe_numel(sizes);
  is_contiguous_ = true;
}

TensorImpl::~TensorImpl() = default;

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  EMBER_INTERNAL_ASSERT(sizes.size() == strides.size(), "sizes and strides differ in length");
  sizes_.assign(sizes);
  strides_.assign(strides);
  storage_offset_ = storage_offset;
  refresh_numel_and_contiguity();
}

void TensorImpl::set_sizes_contiguous(IntArrayRef sizes) {
  sizes_.assign(sizes);
  strides_ = contiguous_strides(sizes);
  numel_ = safe_numel(sizes);
  is_contiguous_ = true;
}

void TensorImpl::refresh_numel_and_contiguity() {
  numel_ = safe_numel(sizes_);
  // Dimensions of size 1 may have any stride; an empty tensor is contiguous.
  bool contiguous = true;
  if (numel_ != 0) {
    int64_t expected = 1;
    for (size_t i = sizes_.size(); i-- > 0;) {
      if (sizes_[i] == 1) continue;
      if (strides_[i] != expected) {
        contiguous = false;
        break;
      }
      expected *= sizes_[i];
    }
  }
  is_contiguous_ = contiguous;
}

bool TensorImpl::is_non_overlapping_and_dense() const {
  if (is_contiguous_) return true;
  DimVector order;  // the dims of size > 1, innermost (smallest stride) first
  for (size_t d = 0; d < sizes_.size(); ++d) {
    if (sizes_[d] != 1) order.push_back(static_cast<int64_t>(d));
  }
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return strides_[a] < strides_[b]; });
  int64_t expected = 1;
  for (int64_t d : order) {
    if (strides_[d] != expected) return false;
    expected *= sizes_[d];
  }
  return true;
}

void TensorImpl::bump_version() {
  EMBER_CHECK(
      !is_inference() || inference_mode_enabled(),
      "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
      "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.");
  shared_version_counter()->version.fetch_add(1, std::memory_order_relaxed);
}

const IntrusivePtr<VersionCounter>& TensorImpl::shared_version_counter() {
  if (!version_) version_ = make_intrusive<VersionCounter>();
  return version_;
}

}  // namespace ember
