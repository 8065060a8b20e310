// random_ (bounded, full 64-bit range, unbounded) with PyTorch's CUDA
// transforms.
#include <limits>

#include "ember/cuda/random/RandomDevice.cuh"

namespace ember::cuda {
namespace {

// base + draw % range, through int64 as PyTorch casts it.
template <typename T>
struct FromToOp {
  uint64_t range;
  int64_t base;
  template <typename V>
  __device__ T operator()(V r) const {
    return Elem<T>::from_int(static_cast<int64_t>(static_cast<uint64_t>(r) % range + base));
  }
};

template <typename T>
struct FullRangeOp {
  __device__ T operator()(uint64_t r) const { return Elem<T>::from_int(static_cast<int64_t>(r)); }
};

template <typename T>
constexpr uint64_t kIntModulus = static_cast<uint64_t>(std::numeric_limits<T>::max()) + 1;

// random_() without bounds: [0, 2^digits] for floating types, [0, max] for
// integers, the low bit for bool.
template <typename T>
struct UnboundedOp {
  template <typename V>
  __device__ T operator()(V r) const {
    const uint64_t v = static_cast<uint64_t>(r);
    if constexpr (std::is_same_v<T, bool>) {
      return (v & 1) != 0;
    } else if constexpr (std::is_same_v<T, __half>) {
      return Elem<T>::from_int(static_cast<int64_t>(v % ((uint64_t(1) << 11) + 1)));
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      return Elem<T>::from_int(static_cast<int64_t>(v % ((uint64_t(1) << 8) + 1)));
    } else if constexpr (std::is_same_v<T, float>) {
      return static_cast<float>(v % ((uint64_t(1) << 24) + 1));
    } else if constexpr (std::is_same_v<T, double>) {
      return static_cast<double>(v % ((uint64_t(1) << 53) + 1));
    } else {
      return static_cast<T>(v % kIntModulus<T>);
    }
  }
};

template <typename T>
void from_to_typed(const RandomCall& c, uint64_t range, int64_t base, bool wide) {
  if (wide) {
    launch_distribution<T, 2>(c, Bits2x64{}, FromToOp<T>{range, base});
  } else {
    launch_distribution<T, 4>(c, Bits4{}, FromToOp<T>{range, base});
  }
}

template <typename T>
void full_range_typed(const RandomCall& c) {
  launch_distribution<T, 2>(c, Bits2x64{}, FullRangeOp<T>{});
}

// 64-bit draws for double and int64 only.
template <typename T>
void unbounded_typed(const RandomCall& c) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, int64_t>) {
    launch_distribution<T, 2>(c, Bits2x64{}, UnboundedOp<T>{});
  } else {
    launch_distribution<T, 4>(c, Bits4{}, UnboundedOp<T>{});
  }
}

}  // namespace

void launch_random_from_to(const RandomCall& c, uint64_t range, int64_t base, bool wide) {
  EMBER_RANDOM_ALL_SWITCH(c.type, from_to_typed, c, range, base, wide)
}

void launch_random_full_range(const RandomCall& c) {
  switch (c.type) {
    case RandomType::Long: full_range_typed<int64_t>(c); break;
    case RandomType::Float: full_range_typed<float>(c); break;
    case RandomType::Double: full_range_typed<double>(c); break;
    case RandomType::BFloat16: full_range_typed<__nv_bfloat16>(c); break;
    default: throw_cuda_error(cudaErrorInvalidValue, "random_full_range", __FILE__, __LINE__);
  }
}

void launch_random(const RandomCall& c) { EMBER_RANDOM_ALL_SWITCH(c.type, unbounded_typed, c) }

}  // namespace ember::cuda
