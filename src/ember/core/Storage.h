#pragma once
// A storage is a refcounted block of bytes on one device. Views of a tensor
// share one storage.

#include "ember/core/Allocator.h"
#include "ember/core/IntrusivePtr.h"

namespace ember {

// Whether inference mode (ember.inference_mode) is on in this thread. Storage
// allocated while it is belongs to inference tensors, and so do their views.
EMBER_CORE_API bool inference_mode_enabled();
EMBER_CORE_API void set_inference_mode_enabled(bool enabled);

class EMBER_CORE_API StorageImpl final : public RefCounted {
 public:
  // Allocates nbytes with the given allocator.
  StorageImpl(size_t nbytes, Allocator* allocator)
      : data_(allocator->allocate(nbytes)), nbytes_(nbytes), allocator_(allocator) {}
  // Wraps memory owned elsewhere (allocator null: cannot be resized).
  StorageImpl(DataPtr data, size_t nbytes) : data_(std::move(data)), nbytes_(nbytes) {}

  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return data_.device(); }
  bool resizable() const { return allocator_ != nullptr; }
  bool is_inference() const { return inference_; }
  // Grows the block to at least nbytes, keeping its contents (CPU; meta has none).
  void resize(size_t nbytes);
  // Swaps in another block of the same size (e.g. shared memory holding a copy
  // of the contents); the storage is no longer resizable afterwards.
  void set_data_ptr(DataPtr data) {
    data_ = std::move(data);
    allocator_ = nullptr;
  }

 private:
  DataPtr data_;
  size_t nbytes_;
  Allocator* allocator_ = nullptr;
  bool inference_ = inference_mode_enabled();
};

using Storage = IntrusivePtr<StorageImpl>;

}  // namespace ember
