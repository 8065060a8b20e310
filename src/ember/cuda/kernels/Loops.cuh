#pragma once
// The CUDA elementwise engine: gpu_kernel<Out, In...>(iter, op) runs op over
// every element of a TensorIterator whose operands live on one CUDA device.
//
// - Storage types are the dtypes' element types (Half and BFloat16 as the
//   16-bit DHalf/DBFloat16 below); op receives and returns compute types:
//   float for 16-bit floats (PyTorch's opmath), the type itself otherwise.
// - Inputs arrive in the dtypes the iterator gave them: TensorIterator
//   converts inputs to the common dtype before a kernel runs, so kernels are
//   instantiated per common dtype only (no dynamic casting in the loop).
// - A 0-dim CPU input (a number, or a 0-dim CPU tensor as PyTorch allows)
//   travels as a kernel argument.
// - Contiguous operands take a vectorised path (4 elements per thread, one
//   aligned load of 4 elements per operand); others go through the offset
//   calculator, in pieces that 32-bit offsets can address.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/tuple>

#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>

#include "ember/core/Half.h"
#include "ember/core/Scalar.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/kernels/OffsetCalculator.h"
#include "ember/ops/OpChecks.h"

namespace ember::cuda {

// 16-bit float storage in device code.
struct alignas(2) DHalf {
  uint16_t x;
};
struct alignas(2) DBFloat16 {
  uint16_t x;
};

// Compute type of a storage type.
template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<DHalf> {
  using type = float;
};
template <>
struct OpMath<DBFloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename OpMath<T>::type;

template <typename T>
__device__ __forceinline__ opmath_t<T> load_as_opmath(const T& v) {
  if constexpr (std::is_same_v<T, DHalf>) {
    return __half2float(__ushort_as_half(v.x));
  } else if constexpr (std::is_same_v<T, DBFloat16>) {
    return __bfloat162float(__ushort_as_bfloat16(v.x));
  } else {
    return v;
  }
}

// Conversion of a computed value into the output's storage type.
template <typename T, typename V>
__device__ __forceinline__ T store_from(V v) {
  if constexpr (std::is_same_v<T, V>) {
    return v;
  } else if constexpr (std::is_same_v<T, DHalf>) {
    return DHalf{__half_as_ushort(__float2half_rn(static_cast<float>(v)))};
  } else if constexpr (std::is_same_v<T, DBFloat16>) {
    return DBFloat16{__bfloat16_as_ushort(__float2bfloat16_rn(static_cast<float>(v)))};
  } else {
    return static_cast<T>(v);
  }
}

// Bool storage holds 0 or 1; reading it as a byte normalises other values.
template <typename T>
__device__ __forceinline__ T load_storage(const char* p) {
  if constexpr (std::is_same_v<T, bool>) {
    return *reinterpret_cast<const uint8_t*>(p) != 0;
  } else {
    return *reinterpret_cast<const T*>(p);
  }
}

constexpr int kThreads = 128;
constexpr int kElemsPerThread = 4;
constexpr int kElemsPerBlock = kThreads * kElemsPerThread;

// Kernel arguments: operand pointers (outputs first) and the numbers that
// replace 0-dim CPU inputs: the bit pattern of their storage type, or for
// float16/bfloat16 their value as float.
template <int N>
struct LoopArgs {
  char* data[N];
  alignas(8) uint64_t scalar_bits[N];
  uint64_t scalar_high_bits[N];  // the upper half of a 16-byte number (complex128)
  float scalar_float[N];
  unsigned scalar_mask;  // bit k: operand k is a number held above
};

template <typename T, int N>
__device__ __forceinline__ opmath_t<T> load_arg(const LoopArgs<N>& args, int k, uint32_t offset) {
  if (args.scalar_mask >> k & 1u) {
    if constexpr (std::is_same_v<T, DHalf> || std::is_same_v<T, DBFloat16>) {
      return args.scalar_float[k];
    } else if constexpr (std::is_same_v<T, bool>) {
      return (args.scalar_bits[k] & 0xffu) != 0;
    } else if constexpr (sizeof(T) <= sizeof(uint64_t)) {
      T v;
      memcpy(&v, &args.scalar_bits[k], sizeof(T));
      return v;
    } else {
      static_assert(sizeof(T) == 2 * sizeof(uint64_t), "numbers of 16 bytes at most");
      const uint64_t bits[2] = {args.scalar_bits[k], args.scalar_high_bits[k]};
      T v;
      memcpy(&v, bits, sizeof(T));
      return v;
    }
  }
  return load_as_opmath(load_storage<T>(args.data[k] + offset));
}

template <typename Out, typename... In, typename Op, size_t... I>
__device__ __forceinline__ void apply_at(const Op& op, const LoopArgs<sizeof...(In) + 1>& args, const uint32_t* offsets,
                                         std::index_sequence<I...>) {
  const auto r = op(load_arg<In>(args, I + 1, offsets[I + 1])...);
  *reinterpret_cast<Out*>(args.data[0] + offsets[0]) = store_from<Out>(r);
}

// Strided path: each thread handles kElemsPerThread elements, blockDim apart.
template <typename Op, typename Out, typename... In>
__global__ void __launch_bounds__(kThreads)
    strided_kernel(uint32_t n, OffsetCalculator<sizeof...(In) + 1> calc, LoopArgs<sizeof...(In) + 1> args, Op op) {
  uint32_t idx = blockIdx.x * kElemsPerBlock + threadIdx.x;
#pragma unroll
  for (int j = 0; j < kElemsPerThread; ++j, idx += kThreads) {
    if (idx < n) {
      const auto o = calc.get(idx);
      apply_at<Out, In...>(op, args, o.v, std::index_sequence_for<In...>{});
    }
  }
}

template <typename T, int V>
struct alignas(sizeof(T) * V) AlignedVector {
  T v[V];
};

template <typename T>
struct Lanes {
  T v[4];
};

template <typename T, int N>
__device__ __forceinline__ void load_vec(const LoopArgs<N>& args, int k, uint32_t base, opmath_t<T> (&out)[4],
                                         bool full) {
  if (args.scalar_mask >> k & 1u) {
    const opmath_t<T> s = load_arg<T>(args, k, 0);
#pragma unroll
    for (int j = 0; j < 4; ++j) out[j] = s;
  } else if (full && !std::is_same_v<T, bool>) {
    const auto vec = *reinterpret_cast<const AlignedVector<T, 4>*>(args.data[k] + base * sizeof(T));
#pragma unroll
    for (int j = 0; j < 4; ++j) out[j] = load_as_opmath(vec.v[j]);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) out[j] = load_as_opmath(load_storage<T>(args.data[k] + (base + j) * sizeof(T)));
  }
}

template <typename Out, typename... In, typename Op, size_t... I>
__device__ __forceinline__ void vectorized_body(uint32_t n, const LoopArgs<sizeof...(In) + 1>& args, const Op& op,
                                                std::index_sequence<I...>) {
  const uint32_t base = (blockIdx.x * kThreads + threadIdx.x) * 4;
  if (base >= n) return;
  const bool full = base + 4 <= n;
  ::cuda::std::tuple<Lanes<opmath_t<In>>...> vals;
  (load_vec<In>(args, I + 1, base, ::cuda::std::get<I>(vals).v, full), ...);
  Out res[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) res[j] = store_from<Out>(op(::cuda::std::get<I>(vals).v[j]...));
  if (full) {
    AlignedVector<Out, 4> v;
#pragma unroll
    for (int j = 0; j < 4; ++j) v.v[j] = res[j];
    *reinterpret_cast<AlignedVector<Out, 4>*>(args.data[0] + base * sizeof(Out)) = v;
  } else {
    for (uint32_t j = 0; base + j < n; ++j) reinterpret_cast<Out*>(args.data[0])[base + j] = res[j];
  }
}

// Contiguous path: thread t handles elements [4t, 4t + 4), loaded as one
// aligned vector per operand (16 bytes for float) when all 4 are in range.
template <typename Op, typename Out, typename... In>
__global__ void __launch_bounds__(kThreads) vectorized_kernel(uint32_t n, LoopArgs<sizeof...(In) + 1> args, Op op) {
  vectorized_body<Out, In...>(n, args, op, std::index_sequence_for<In...>{});
}

// Makes the device of a CUDA tensor current while kernels are launched on it.
class TensorDeviceGuard {
 public:
  explicit TensorDeviceGuard(const Tensor& t) {
    const int device = t.device().index < 0 ? current_device() : t.device().index;
    const int current = current_device();
    if (device != current) {
      EMBER_CUDA_CHECK(cudaSetDevice(device));
      previous_ = current;
    }
  }
  ~TensorDeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  TensorDeviceGuard(const TensorDeviceGuard&) = delete;
  TensorDeviceGuard& operator=(const TensorDeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

namespace detail {
inline bool is_cpu_number(const Tensor& t) { return t.dim() == 0 && t.is_cpu(); }

// Fills operand k's number into args (t is a 0-dim CPU tensor of T's size).
template <typename T, int N>
void set_number(LoopArgs<N>& args, const TensorIterator& it, int k) {  // NOLINT
  const Tensor& t = it.operand(k);
  if constexpr (std::is_same_v<T, DHalf> || std::is_same_v<T, DBFloat16>) {
    args.scalar_float[k] = t.item<float>();
  } else {
    if constexpr (sizeof(T) > sizeof(uint64_t)) {  // complex128
      static_assert(sizeof(T) == 2 * sizeof(uint64_t), "numbers of 16 bytes at most");
      std::memcpy(&args.scalar_bits[k], t.data_ptr(), sizeof(uint64_t));
      std::memcpy(&args.scalar_high_bits[k], static_cast<const char*>(t.data_ptr()) + sizeof(uint64_t),
                  sizeof(uint64_t));
    } else {
      std::memcpy(&args.scalar_bits[k], t.data_ptr(), sizeof(T));
    }
  }
  args.scalar_mask |= 1u << k;
  args.data[k] = nullptr;
}
}  // namespace detail

// Runs op over iter. Out and In... are storage types of the operands, in
// order (outputs first); op takes opmath_t<In>... and returns a value
// convertible to opmath_t<Out>.
template <typename Out, typename... In, typename Op>
void gpu_kernel(const TensorIterator& iter, const Op& op) {
  constexpr int N = sizeof...(In) + 1;
  EMBER_INTERNAL_ASSERT(iter.ntensors() == N, "gpu_kernel: ", iter.ntensors(), " operands, expected ", N);
  if (iter.numel() == 0) return;
  LoopArgs<N> args{};
  constexpr size_t sizes[N] = {sizeof(Out), sizeof(In)...};
  for (int k = 0; k < N; ++k) {
    const Tensor& t = iter.operand(k);
    EMBER_INTERNAL_ASSERT(element_size(t.dtype()) == sizes[k], "gpu_kernel: operand ", k, " has dtype ",
                          scalar_type_name(t.dtype()), " of another size");
    EMBER_INTERNAL_ASSERT(t.is_cuda() || (k > 0 && detail::is_cpu_number(t)), "gpu_kernel: operand ", k,
                          " is not a CUDA tensor");
    args.data[k] = static_cast<char*>(t.data_ptr());
  }
  [[maybe_unused]] int input = 1;
  ((detail::is_cpu_number(iter.operand(input)) ? detail::set_number<In>(args, iter, input) : void(), ++input), ...);
  const IterGeometry geometry = make_geometry(iter);
  const TensorDeviceGuard guard(iter.output());
  const cudaStream_t stream = current_stream();
  int64_t elem_sizes[N];
  for (int k = 0; k < N; ++k) elem_sizes[k] = static_cast<int64_t>(sizes[k]);
  bool aligned = true;
  for (int k = 0; k < N; ++k) {
    if (args.data[k]) aligned = aligned && reinterpret_cast<uintptr_t>(args.data[k]) % (4 * sizes[k]) == 0;
  }
  if (aligned && geometry.is_contiguous(elem_sizes, args.scalar_mask) && geometry.numel() <= INT32_MAX) {
    const auto n = static_cast<uint32_t>(geometry.numel());
    const unsigned blocks = (n + kElemsPerBlock - 1) / kElemsPerBlock;
    vectorized_kernel<Op, Out, In...><<<blocks, kThreads, 0, stream>>>(n, args, op);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  for_each_32bit_piece(geometry, [&](const IterGeometry& piece) {
    LoopArgs<N> piece_args = args;
    for (int k = 0; k < N; ++k) {
      if (piece_args.data[k]) piece_args.data[k] += piece.base_offsets[k];
    }
    const auto n = static_cast<uint32_t>(piece.numel());
    const unsigned blocks = (n + kElemsPerBlock - 1) / kElemsPerBlock;
    strided_kernel<Op, Out, In...><<<blocks, kThreads, 0, stream>>>(n, OffsetCalculator<N>(piece), piece_args, op);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

// ---- dtype dispatch ------------------------------------------------------
// dispatch_dtype<Set>(t, name, fn): fn(Tag<S>{}) with S the device storage
// type of t, when t is in the set; otherwise PyTorch's "name" not
// implemented for 'dtype' error.
template <typename S>
struct Tag {
  using type = S;
};

enum DtypeSet : unsigned {
  kBool = 1,
  kIntegral = 2,  // uint8, int8, int16, int32, int64
  kFloating = 4,  // float, double
  kReducedFloating = 8,  // float16, bfloat16
  kAllFloating = kFloating | kReducedFloating,
  kAllReal = kBool | kIntegral | kAllFloating,
};

template <unsigned Set, typename Fn>
void dispatch_dtype(ScalarType t, const char* name, const Fn& fn) {
  switch (t) {
    case ScalarType::Bool:
      if constexpr ((Set & kBool) != 0) return fn(Tag<bool>{});
      break;
    case ScalarType::Byte:
      if constexpr ((Set & kIntegral) != 0) return fn(Tag<uint8_t>{});
      break;
    case ScalarType::Char:
      if constexpr ((Set & kIntegral) != 0) return fn(Tag<int8_t>{});
      break;
    case ScalarType::Short:
      if constexpr ((Set & kIntegral) != 0) return fn(Tag<int16_t>{});
      break;
    case ScalarType::Int:
      if constexpr ((Set & kIntegral) != 0) return fn(Tag<int32_t>{});
      break;
    case ScalarType::Long:
      if constexpr ((Set & kIntegral) != 0) return fn(Tag<int64_t>{});
      break;
    case ScalarType::Float:
      if constexpr ((Set & kFloating) != 0) return fn(Tag<float>{});
      break;
    case ScalarType::Double:
      if constexpr ((Set & kFloating) != 0) return fn(Tag<double>{});
      break;
    case ScalarType::Half:
      if constexpr ((Set & kReducedFloating) != 0) return fn(Tag<DHalf>{});
      break;
    case ScalarType::BFloat16:
      if constexpr ((Set & kReducedFloating) != 0) return fn(Tag<DBFloat16>{});
      break;
    default: break;
  }
  native::math::not_implemented_for(name, t);
}

// A number as the compute type of storage type S, rounded to S first (as a
// kernel argument of PyTorch's scalar_t).
template <typename S>
opmath_t<S> scalar_as(const Scalar& s) {
  if constexpr (std::is_same_v<S, DHalf>) {
    return static_cast<float>(Half(static_cast<float>(s.to_double())));
  } else if constexpr (std::is_same_v<S, DBFloat16>) {
    return static_cast<float>(BFloat16(static_cast<float>(s.to_double())));
  } else {
    return s.to<S>();
  }
}
// A number in the compute type of S, unrounded (PyTorch's opmath arguments).
template <typename S>
opmath_t<S> scalar_opmath(const Scalar& s) {
  if constexpr (std::is_same_v<opmath_t<S>, S>) {
    return s.to<S>();
  } else {
    return static_cast<opmath_t<S>>(s.to_double());
  }
}

// The common case: every operand of the common dtype; Op<C> computes in C.
template <template <typename> class Op, unsigned Set, typename... Extra>
void unary_same(const TensorIterator& it, const char* name, Extra... extra) {
  dispatch_dtype<Set>(it.common_dtype(), name, [&](auto tag) {
    using S = typename decltype(tag)::type;
    gpu_kernel<S, S>(it, Op<opmath_t<S>>{extra...});
  });
}
template <template <typename> class Op, unsigned Set, typename... Extra>
void binary_same(const TensorIterator& it, const char* name, Extra... extra) {
  dispatch_dtype<Set>(it.common_dtype(), name, [&](auto tag) {
    using S = typename decltype(tag)::type;
    gpu_kernel<S, S, S>(it, Op<opmath_t<S>>{extra...});
  });
}

}  // namespace ember::cuda
