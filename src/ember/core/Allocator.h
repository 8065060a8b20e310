#pragma once
// Memory for tensors. A DataPtr owns one block and knows how to free it, so a
// storage may wrap memory from any source (our allocators, NumPy, mmap).

#include <cstddef>
#include <utility>

#include "ember/core/Device.h"
#include "ember/core/Macros.h"

namespace ember {

using DeleterFn = void (*)(void* ctx);

class DataPtr {
 public:
  DataPtr() = default;
  DataPtr(void* data, void* ctx, DeleterFn deleter, Device device)
      : data_(data), ctx_(ctx), deleter_(deleter), device_(device) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept { *this = std::move(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      ctx_ = std::exchange(o.ctx_, nullptr);
      deleter_ = std::exchange(o.deleter_, nullptr);
      device_ = o.device_;
    }
    return *this;
  }
  ~DataPtr() { reset(); }

  void reset() {
    if (deleter_) deleter_(ctx_);
    data_ = ctx_ = nullptr;
    deleter_ = nullptr;
  }
  void* get() const { return data_; }
  Device device() const { return device_; }

 private:
  void* data_ = nullptr;
  void* ctx_ = nullptr;
  DeleterFn deleter_ = nullptr;
  Device device_;
};

class EMBER_CORE_API Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns a block of at least nbytes (a valid, possibly null, pointer for 0).
  virtual DataPtr allocate(size_t nbytes) = 0;
  // Copies n bytes between two of this allocator's blocks (storage resize).
  virtual void copy_data(void* dst, const void* src, size_t n) const;
};

// The allocator registered for a device type; throws if the backend is absent.
EMBER_CORE_API Allocator* get_allocator(DeviceType type);
// Backends register their allocator when their library loads.
EMBER_CORE_API void set_allocator(DeviceType type, Allocator* allocator);

// Idle large CPU blocks kept for reuse (Note [Large CPU blocks]).
EMBER_CORE_API size_t cpu_cached_bytes();
EMBER_CORE_API void cpu_release_cached_blocks();

// Alignment of CPU allocations: one AVX-512 register / cache line.
constexpr size_t kCpuAlignment = 64;

}  // namespace ember
