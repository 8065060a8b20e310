#pragma once
// Intrusive reference counting: the count lives in the object, so a handle is
// one pointer and copying it is one atomic increment.

#include <atomic>
#include <cstdint>
#include <utility>

namespace ember {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  void retain() const noexcept { refcount_.fetch_add(1, std::memory_order_relaxed); }
  // Returns true when this was the last reference.
  bool release() const noexcept { return refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1; }
  uint32_t use_count() const noexcept { return refcount_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint32_t> refcount_{0};
};

template <typename T>
class IntrusivePtr {
 public:
  IntrusivePtr() noexcept = default;
  IntrusivePtr(std::nullptr_t) noexcept {}
  // Takes a new reference to p.
  explicit IntrusivePtr(T* p) noexcept : ptr_(p) {
    if (ptr_) ptr_->retain();
  }
  IntrusivePtr(const IntrusivePtr& o) noexcept : IntrusivePtr(o.ptr_) {}
  IntrusivePtr(IntrusivePtr&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  template <typename U>
  IntrusivePtr(IntrusivePtr<U>&& o) noexcept : ptr_(o.steal()) {}
  ~IntrusivePtr() { reset(); }

  IntrusivePtr& operator=(const IntrusivePtr& o) noexcept {
    IntrusivePtr(o).swap(*this);
    return *this;
  }
  IntrusivePtr& operator=(IntrusivePtr&& o) noexcept {
    IntrusivePtr(std::move(o)).swap(*this);
    return *this;
  }

  void reset() noexcept {
    if (ptr_ && ptr_->release()) delete ptr_;
    ptr_ = nullptr;
  }
  void swap(IntrusivePtr& o) noexcept { std::swap(ptr_, o.ptr_); }
  // Gives up ownership without decrementing.
  T* steal() noexcept { return std::exchange(ptr_, nullptr); }
  // Adopts a pointer whose reference was already counted (the inverse of steal).
  static IntrusivePtr adopt(T* p) noexcept {
    IntrusivePtr r;
    r.ptr_ = p;
    return r;
  }

  T* get() const noexcept { return ptr_; }
  T* operator->() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  bool operator==(const IntrusivePtr& o) const noexcept { return ptr_ == o.ptr_; }
  bool operator!=(const IntrusivePtr& o) const noexcept { return ptr_ != o.ptr_; }

 private:
  T* ptr_ = nullptr;
};

template <typename T, typename... Args>
IntrusivePtr<T> make_intrusive(Args&&... args) {
  return IntrusivePtr<T>(new T(std::forward<Args>(args)...));
}

}  // namespace ember
