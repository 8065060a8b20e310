#include "ember/ops/MemoryOverlap.h"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

namespace ember {

namespace {

constexpr const char* kInternalOverlap =
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation.";
constexpr const char* kInputOverlap =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation.";

}  // namespace

MemOverlap overlap_status(const Tensor& a, const Tensor& b) {
  if (a.is_same(b)) return MemOverlap::kFull;
  if (a.numel() == 0 || b.numel() == 0) return MemOverlap::kNo;
  // Different storages never overlap (checked first: it is the common case, and cheap).
  if (a.unsafeGetTensorImpl()->storage().get() != b.unsafeGetTensorImpl()->storage().get()) return MemOverlap::kNo;
  if (!a.is_non_overlapping_and_dense() || !b.is_non_overlapping_and_dense()) return MemOverlap::kTooHard;
  const char* a0 = static_cast<const char*>(a.data_ptr());
  const char* b0 = static_cast<const char*>(b.data_ptr());
  const char* a1 = a0 + a.numel() * static_cast<int64_t>(a.element_size());
  const char* b1 = b0 + b.numel() * static_cast<int64_t>(b.element_size());
  if (a0 == b0 && a1 == b1) return a.strides().equals(b.strides()) ? MemOverlap::kFull : MemOverlap::kPartial;
  return (a0 < b1 && b0 < a1) ? MemOverlap::kPartial : MemOverlap::kNo;
}

void assert_no_internal_overlap(const Tensor& t) {
  // A dense tensor has no stride-0 dim of size > 1, so the strides decide.
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.strides()[d] == 0 && t.sizes()[d] > 1) EMBER_CHECK(t.numel() == 0, kInternalOverlap);
  }
}

void assert_no_partial_overlap(const Tensor& out, const Tensor& in) {
  EMBER_CHECK(overlap_status(out, in) != MemOverlap::kPartial, kInputOverlap);
}

void assert_no_overlap(const Tensor& out, const Tensor& in) {
  if (!in.defined()) return;
  const MemOverlap s = overlap_status(out, in);
  EMBER_CHECK(s != MemOverlap::kPartial && s != MemOverlap::kFull, kInputOverlap);
}

bool surely_no_internal_overlap(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.sizes()[d] > 1) dims.emplace_back(std::abs(t.strides()[d]), t.sizes()[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;
  for (auto [stride, size] : dims) {
    if (stride <= reach) return false;
    reach += stride * (size - 1);
  }
  return true;
}

}  // namespace ember
