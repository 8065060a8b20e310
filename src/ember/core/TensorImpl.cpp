#include "ember/core/TensorImpl.h"

#include <algorithm>

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

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)), sizes_(sizes), strides_(strides), storage_offset_(storage_offset), dtype_(dtype) {
  EMBER_INTERNAL_ASSERT(sizes.size() == strides.size(), "sizes and strides differ in length");
  refresh_numel_and_contiguity();
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes)
    : storage_(std::move(storage)), sizes_(sizes), strides_(contiguous_strides(sizes)), dtype_(dtype) {
  numel_ = product(sizes);
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
  numel_ = product(sizes);
  is_contiguous_ = true;
}

void TensorImpl::refresh_numel_and_contiguity() {
  numel_ = product(sizes_);
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
  shared_version_counter()->version.fetch_add(1, std::memory_order_relaxed);
}

const IntrusivePtr<VersionCounter>& TensorImpl::shared_version_counter() {
  if (!version_) version_ = make_intrusive<VersionCounter>();
  return version_;
}

}  // namespace ember
