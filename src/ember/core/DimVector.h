#pragma once
// Sizes and strides: int64 vectors that keep up to kInline entries inside the
// object, so tensors of up to 5 dimensions allocate nothing for their shape.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <vector>

namespace ember {

// A non-owning view of int64 values (sizes, strides, dims).
class IntArrayRef {
 public:
  constexpr IntArrayRef() = default;
  constexpr IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}
  IntArrayRef(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  IntArrayRef(std::initializer_list<int64_t> l) : data_(l.begin()), size_(l.size()) {}  // NOLINT
  IntArrayRef(const int64_t& single) : data_(&single), size_(1) {}  // NOLINT

  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t operator[](size_t i) const { return data_[i]; }
  int64_t back() const { return data_[size_ - 1]; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  bool equals(IntArrayRef o) const { return size_ == o.size_ && std::equal(begin(), end(), o.begin()); }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

class DimVector {
 public:
  static constexpr size_t kInline = 5;

  DimVector() = default;
  explicit DimVector(size_t n, int64_t value = 0) { assign(n, value); }
  DimVector(IntArrayRef r) { assign(r); }  // NOLINT
  DimVector(std::initializer_list<int64_t> l) { assign(IntArrayRef(l.begin(), l.size())); }
  DimVector(const DimVector& o) { assign(IntArrayRef(o)); }
  DimVector(DimVector&& o) noexcept { move_from(o); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(IntArrayRef(o));
    return *this;
  }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this != &o) {
      free_heap();
      move_from(o);
    }
    return *this;
  }
  ~DimVector() { free_heap(); }

  operator IntArrayRef() const { return IntArrayRef(data(), size_); }  // NOLINT
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return heap_ ? heap_ : inline_; }
  const int64_t* data() const { return heap_ ? heap_ : inline_; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t back() const { return data()[size_ - 1]; }

  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = value;
    size_ = n;
  }
  void push_back(int64_t v) {
    reserve(size_ + 1);
    data()[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    reserve(size_ + 1);
    int64_t* d = data();
    std::memmove(d + pos + 1, d + pos, (size_ - pos) * sizeof(int64_t));
    d[pos] = v;
    ++size_;
  }
  void erase(size_t pos) {
    int64_t* d = data();
    std::memmove(d + pos, d + pos + 1, (size_ - pos - 1) * sizeof(int64_t));
    --size_;
  }
  void assign(size_t n, int64_t value) {
    size_ = 0;
    resize(n, value);
  }
  void assign(IntArrayRef r) {
    reserve(r.size());
    if (r.size()) std::memmove(data(), r.data(), r.size() * sizeof(int64_t));
    size_ = r.size();
  }

 private:
  void reserve(size_t n) {
    if (n <= capacity_) return;
    size_t cap = std::max(n, capacity_ * 2);
    auto* fresh = new int64_t[cap];
    if (size_) std::memcpy(fresh, data(), size_ * sizeof(int64_t));
    free_heap();
    heap_ = fresh;
    capacity_ = cap;
  }
  void free_heap() {
    delete[] heap_;
    heap_ = nullptr;
    capacity_ = kInline;
  }
  void move_from(DimVector& o) {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      capacity_ = o.capacity_;
      o.heap_ = nullptr;
      o.capacity_ = kInline;
    } else {
      std::memcpy(inline_, o.inline_, size_ * sizeof(int64_t));
    }
    o.size_ = 0;
  }

  int64_t* heap_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = kInline;
  int64_t inline_[kInline];
};

// An optional list of dims (PyTorch's OptionalIntArrayRef): the type of every
// `int[]?` argument of the C++ API, so that x.sum(0), x.sum({0, 1}) and
// x.sum(std::nullopt) read as in PyTorch. It owns its values.
class OptionalIntArrayRef : public std::optional<std::vector<int64_t>> {
 public:
  using Base = std::optional<std::vector<int64_t>>;
  OptionalIntArrayRef() = default;
  OptionalIntArrayRef(std::nullopt_t) {}  // NOLINT
  OptionalIntArrayRef(Base v) : Base(std::move(v)) {}  // NOLINT
  OptionalIntArrayRef(std::vector<int64_t> v) : Base(std::move(v)) {}  // NOLINT
  OptionalIntArrayRef(std::initializer_list<int64_t> l) : Base(std::vector<int64_t>(l)) {}  // NOLINT
  OptionalIntArrayRef(IntArrayRef r) : Base(r.vec()) {}  // NOLINT
  OptionalIntArrayRef(const DimVector& d) : Base(std::vector<int64_t>(d.begin(), d.end())) {}  // NOLINT
  OptionalIntArrayRef(int64_t single) : Base(std::vector<int64_t>{single}) {}  // NOLINT
};

}  // namespace ember
