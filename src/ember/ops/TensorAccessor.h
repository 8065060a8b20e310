#pragma once
// tensor.accessor<float, 2>(): indexed access to a tensor's elements through
// its strides, as PyTorch's TensorAccessor (a[i][j]); and
// tensor.packed_accessor32<float, 2>(), which keeps sizes and strides by value
// so that it can be passed to a CUDA kernel.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ember/core/DimVector.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif

namespace ember {

template <typename T>
struct DefaultPtrTraits {
  using PtrType = T*;
};
template <typename T>
struct RestrictPtrTraits {
  using PtrType = T* __restrict__;
};

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
class TensorAccessor {
 public:
  using PtrType = typename PtrTraits<T>::PtrType;
  EMBER_HOST_DEVICE TensorAccessor(PtrType data, const index_t* sizes, const index_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  EMBER_HOST_DEVICE TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) const {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(data_ + strides_[0] * i, sizes_ + 1, strides_ + 1);
  }
  EMBER_HOST_DEVICE index_t size(index_t d) const { return sizes_[d]; }
  EMBER_HOST_DEVICE index_t stride(index_t d) const { return strides_[d]; }
  template <typename I = index_t, std::enable_if_t<std::is_same_v<I, int64_t>, int> = 0>
  IntArrayRef sizes() const {
    return IntArrayRef(sizes_, N);
  }
  template <typename I = index_t, std::enable_if_t<std::is_same_v<I, int64_t>, int> = 0>
  IntArrayRef strides() const {
    return IntArrayRef(strides_, N);
  }
  EMBER_HOST_DEVICE PtrType data() const { return data_; }

 private:
  PtrType data_;
  const index_t* sizes_;
  const index_t* strides_;
};

template <typename T, template <typename U> class PtrTraits, typename index_t>
class TensorAccessor<T, 1, PtrTraits, index_t> {
 public:
  using PtrType = typename PtrTraits<T>::PtrType;
  EMBER_HOST_DEVICE TensorAccessor(PtrType data, const index_t* sizes, const index_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  EMBER_HOST_DEVICE T& operator[](index_t i) const { return data_[strides_[0] * i]; }
  EMBER_HOST_DEVICE index_t size(index_t d) const { return sizes_[d]; }
  EMBER_HOST_DEVICE index_t stride(index_t d) const { return strides_[d]; }
  template <typename I = index_t, std::enable_if_t<std::is_same_v<I, int64_t>, int> = 0>
  IntArrayRef sizes() const {
    return IntArrayRef(sizes_, 1);
  }
  template <typename I = index_t, std::enable_if_t<std::is_same_v<I, int64_t>, int> = 0>
  IntArrayRef strides() const {
    return IntArrayRef(strides_, 1);
  }
  EMBER_HOST_DEVICE PtrType data() const { return data_; }

 private:
  PtrType data_;
  const index_t* sizes_;
  const index_t* strides_;
};

// Sizes and strides held by value (index_t: int32_t or int64_t).
template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
class GenericPackedTensorAccessor {
 public:
  using PtrType = typename PtrTraits<T>::PtrType;
  GenericPackedTensorAccessor(PtrType data, const int64_t* sizes, const int64_t* strides) : data_(data) {
    for (size_t d = 0; d < N; ++d) {
      sizes_[d] = static_cast<index_t>(sizes[d]);
      strides_[d] = static_cast<index_t>(strides[d]);
    }
  }
  EMBER_HOST_DEVICE TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) const {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(data_ + strides_[0] * i, sizes_ + 1, strides_ + 1);
  }
  EMBER_HOST_DEVICE index_t size(index_t d) const { return sizes_[d]; }
  EMBER_HOST_DEVICE index_t stride(index_t d) const { return strides_[d]; }
  EMBER_HOST_DEVICE PtrType data() const { return data_; }

 private:
  PtrType data_;
  index_t sizes_[N];
  index_t strides_[N];
};

template <typename T, template <typename U> class PtrTraits, typename index_t>
class GenericPackedTensorAccessor<T, 1, PtrTraits, index_t> {
 public:
  using PtrType = typename PtrTraits<T>::PtrType;
  GenericPackedTensorAccessor(PtrType data, const int64_t* sizes, const int64_t* strides)
      : data_(data), sizes_{static_cast<index_t>(sizes[0])}, strides_{static_cast<index_t>(strides[0])} {}
  EMBER_HOST_DEVICE T& operator[](index_t i) const { return data_[strides_[0] * i]; }
  EMBER_HOST_DEVICE index_t size(index_t d) const { return sizes_[d]; }
  EMBER_HOST_DEVICE index_t stride(index_t d) const { return strides_[d]; }
  EMBER_HOST_DEVICE PtrType data() const { return data_; }

 private:
  PtrType data_;
  index_t sizes_[1];
  index_t strides_[1];
};

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor32 = GenericPackedTensorAccessor<T, N, PtrTraits, int32_t>;
template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor64 = GenericPackedTensorAccessor<T, N, PtrTraits, int64_t>;

}  // namespace ember
