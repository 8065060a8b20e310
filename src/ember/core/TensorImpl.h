#pragma once
// The tensor object: a view (sizes, strides, offset, dtype) onto a storage,
// plus the slots autograd and the Python binding hang their state on.

#include <atomic>
#include <memory>

#include "ember/core/Device.h"
#include "ember/core/DimVector.h"
#include "ember/core/IntrusivePtr.h"
#include "ember/core/ScalarType.h"
#include "ember/core/Storage.h"

namespace ember {

// Counts in-place modifications; shared by a tensor and all its views so that
// autograd can detect a saved tensor changed behind its back.
struct VersionCounter final : RefCounted {
  std::atomic<uint32_t> version{0};
};

// Autograd's per-tensor state lives in the autograd layer; the core only owns it.
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
  virtual bool requires_grad() const = 0;
};

class EMBER_CORE_API TensorImpl final : public RefCounted {
 public:
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  // A contiguous tensor over storage (strides computed).
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes);
  ~TensorImpl() override;

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t size(int64_t d) const { return sizes_[d]; }
  int64_t stride(int64_t d) const { return strides_[d]; }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  ScalarType dtype() const { return dtype_; }
  // Only for `tensor.data = other` (which may change the dtype) and alike.
  void set_dtype(ScalarType dtype) { dtype_ = dtype; }
  size_t itemsize() const { return element_size(dtype_); }
  Device device() const { return storage_->device(); }
  bool is_contiguous() const { return is_contiguous_; }
  // Every element at a distinct address, without gaps, in some order of the dims.
  bool is_non_overlapping_and_dense() const;
  const Storage& storage() const { return storage_; }
  // Made in inference mode (or a view of such a tensor): no version counter,
  // no in-place update or autograd outside inference mode.
  bool is_inference() const { return storage_ && storage_->is_inference(); }

  // Address of element 0 of this view.
  void* data() const {
    return static_cast<char*>(storage_->data()) + storage_offset_ * static_cast<int64_t>(itemsize());
  }

  // Re-points this tensor (used by views and in-place metadata changes).
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  void set_sizes_contiguous(IntArrayRef sizes);
  void set_storage(Storage storage) { storage_ = std::move(storage); }

  // A Python float/int/bool wrapped into a 0-dim tensor; such tensors take
  // part in type promotion as weak scalars.
  bool is_wrapped_number() const { return is_wrapped_number_; }
  void set_wrapped_number(bool v) { is_wrapped_number_ = v; }
  // A wrapped number made from a Python int in [2**63, 2**64) (PyTorch's
  // uint64 wrapped number): it holds the int64 the value wraps to, which is
  // what integer dtypes see; TensorIterator gives floating ones its value.
  bool is_wrapped_uint64() const { return is_wrapped_uint64_; }
  void set_wrapped_uint64(bool v) { is_wrapped_uint64_ = v; }

  // Note [Conjugate and negative bits]
  // A tensor may be read lazily conjugated (conj()) or negated (imag of a
  // conjugate, _neg_view()): its value is conj/neg of what its storage holds.
  // Views carry the bits of their base; operators that do not know them get
  // resolved operands from the fallback in front of each generated operator
  // (ops/MathBits.h), so that a kernel never sees a bit it does not read.
  static constexpr uint8_t kConjBit = 1;
  static constexpr uint8_t kNegBit = 2;
  uint8_t math_bits() const { return math_bits_; }
  void set_math_bits(uint8_t bits) { math_bits_ = bits; }
  bool is_conj() const { return (math_bits_ & kConjBit) != 0; }
  bool is_neg() const { return (math_bits_ & kNegBit) != 0; }
  void set_conj(bool v) { math_bits_ = v ? (math_bits_ | kConjBit) : (math_bits_ & ~kConjBit); }
  void set_neg(bool v) { math_bits_ = v ? (math_bits_ | kNegBit) : (math_bits_ & ~kNegBit); }

  // Version counter, created on first need and shared with views.
  uint32_t version() const { return version_ ? version_->version.load(std::memory_order_relaxed) : 0; }
  void bump_version();
  const IntrusivePtr<VersionCounter>& shared_version_counter();
  void set_version_counter(IntrusivePtr<VersionCounter> vc) { version_ = std::move(vc); }

  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> m) { autograd_meta_ = std::move(m); }
  bool requires_grad() const { return autograd_meta_ && autograd_meta_->requires_grad(); }

  // Borrowed pointer to the Python object wrapping this tensor, if any; the
  // binding keeps it so one TensorImpl maps to one Python object.
  void* pyobj() const { return pyobj_; }
  void set_pyobj(void* p) { pyobj_ = p; }

 private:
  void refresh_numel_and_contiguity();

  Storage storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_ = 0;
  int64_t numel_ = 1;  // product of sizes_, cached
  IntrusivePtr<VersionCounter> version_;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
  void* pyobj_ = nullptr;
  ScalarType dtype_;
  bool is_contiguous_ = true;  // row-major contiguity of sizes_/strides_, cached
  bool is_wrapped_number_ = false;
  bool is_wrapped_uint64_ = false;
  uint8_t math_bits_ = 0;
};

// Keep the tensor object within four cache lines: it is allocated per op.
static_assert(sizeof(TensorImpl) <= 4 * 64, "TensorImpl grew; keep per-op allocations small");

// Row-major strides for sizes.
EMBER_CORE_API DimVector contiguous_strides(IntArrayRef sizes);
// Product of sizes (1 for a 0-dim shape).
EMBER_CORE_API int64_t product(IntArrayRef sizes);

// Note [Checked sizes]
// Every size a tensor gets goes through safe_numel (TensorImpl keeps numel
// with it), and every allocation or view of a storage through the byte
// counts below, so a wrapped product can neither give a tensor a wrong numel
// nor a storage too small for its sizes. The errors are PyTorch's.
//
// sizes' product; "numel: integer multiplication overflow" when it does not
// fit int64 (a negative size counts as a huge unsigned one, as in c10).
EMBER_CORE_API int64_t safe_numel(IntArrayRef sizes);
// Bytes of a contiguous tensor of these sizes.
EMBER_CORE_API size_t storage_nbytes(IntArrayRef sizes, size_t itemsize);
// bytes + offset_bytes, with the overflow error of storage_nbytes (naming sizes).
EMBER_CORE_API size_t checked_add_bytes(size_t bytes, size_t offset_bytes, IntArrayRef sizes);
// Bytes of a tensor of these sizes and strides (the storage offset excluded).
EMBER_CORE_API size_t storage_nbytes(IntArrayRef sizes, IntArrayRef strides, size_t itemsize);
// PyTorch's checkInBoundsForStorage: these sizes, strides and offset fit in
// storage_nbytes bytes.
EMBER_CORE_API void check_in_bounds_for_storage(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
                                                size_t itemsize, size_t storage_nbytes);

}  // namespace ember
