// CUDA copy (dtype cast, any strides) and fill_.
//
// A copy between equal dtypes moves elements as unsigned integers of their
// size (one kernel per size); a contiguous one is a device memcpy. A copy
// that casts goes through one kernel that switches on both dtypes per
// element: the value passes through int64 (integral and bool sources),
// double (floating sources) or a pair of doubles (complex), which gives the
// result a direct conversion gives (16-bit floats convert through float, as
// PyTorch's), for 144 dtype pairs at the compile cost of one kernel.
#include <cstring>

#include "ember/cpu/FusedPointwiseStubs.h"
#include "ember/cpu/MathStubs.h"
#include "ember/cpu/Stubs.h"
#include "ember/cuda/kernels/CopyKernel.h"
#include "ember/cuda/kernels/Loops.cuh"
#include "ember/cuda/kernels/Register.h"

namespace ember::cuda {
namespace {

struct alignas(16) Bits128 {
  uint64_t lo, hi;
};

template <typename U>
struct IdentityOp {
  __device__ U operator()(U v) const { return v; }
};

template <typename U>
struct ConstantOp {
  U value;
  __device__ U operator()() const { return value; }
};

template <typename Fn>
void dispatch_by_size(size_t size, const Fn& fn) {
  switch (size) {
    case 1: return fn(Tag<uint8_t>{});
    case 2: return fn(Tag<uint16_t>{});
    case 4: return fn(Tag<uint32_t>{});
    case 8: return fn(Tag<uint64_t>{});
    case 16: return fn(Tag<Bits128>{});
    default: EMBER_INTERNAL_ASSERT(false, "CUDA copy: element size ", size);
  }
}

// A value on its way from one dtype to another.
struct Wide {
  double re, im;
  int64_t i;
  bool is_int;
};

__device__ __forceinline__ float half_to_float(uint16_t x) { return __half2float(__ushort_as_half(x)); }
__device__ __forceinline__ float bf16_to_float(uint16_t x) { return __bfloat162float(__ushort_as_bfloat16(x)); }

__device__ Wide load_wide(ScalarType t, const char* p) {
  Wide w{0.0, 0.0, 0, true};
  switch (t) {
    case ScalarType::Bool: w.i = *reinterpret_cast<const uint8_t*>(p) != 0; break;
    case ScalarType::Byte: w.i = *reinterpret_cast<const uint8_t*>(p); break;
    case ScalarType::Char: w.i = *reinterpret_cast<const int8_t*>(p); break;
    case ScalarType::Short: w.i = *reinterpret_cast<const int16_t*>(p); break;
    case ScalarType::Int: w.i = *reinterpret_cast<const int32_t*>(p); break;
    case ScalarType::Long: w.i = *reinterpret_cast<const int64_t*>(p); break;
    default: {
      w.is_int = false;
      switch (t) {
        case ScalarType::Half: w.re = half_to_float(*reinterpret_cast<const uint16_t*>(p)); break;
        case ScalarType::BFloat16: w.re = bf16_to_float(*reinterpret_cast<const uint16_t*>(p)); break;
        case ScalarType::Float: w.re = *reinterpret_cast<const float*>(p); break;
        case ScalarType::Double: w.re = *reinterpret_cast<const double*>(p); break;
        case ScalarType::ComplexFloat:
          w.re = reinterpret_cast<const float*>(p)[0];
          w.im = reinterpret_cast<const float*>(p)[1];
          break;
        case ScalarType::ComplexDouble:
          w.re = reinterpret_cast<const double*>(p)[0];
          w.im = reinterpret_cast<const double*>(p)[1];
          break;
        default: break;
      }
    }
  }
  return w;
}

template <typename T>
__device__ __forceinline__ T wide_to(const Wide& w) {
  return w.is_int ? static_cast<T>(w.i) : static_cast<T>(w.re);
}

__device__ void store_wide(ScalarType t, char* p, const Wide& w) {
  switch (t) {
    case ScalarType::Bool: *reinterpret_cast<uint8_t*>(p) = w.is_int ? w.i != 0 : (w.re != 0 || w.im != 0); break;
    // A float reaches uint8 through int64, as on the CPU (and in PyTorch): -2.0 gives 254;
    // a direct conversion would saturate to 0 on the GPU.
    case ScalarType::Byte:
      *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(w.is_int ? w.i : static_cast<int64_t>(w.re));
      break;
    case ScalarType::Char: *reinterpret_cast<int8_t*>(p) = wide_to<int8_t>(w); break;
    case ScalarType::Short: *reinterpret_cast<int16_t*>(p) = wide_to<int16_t>(w); break;
    case ScalarType::Int: *reinterpret_cast<int32_t*>(p) = wide_to<int32_t>(w); break;
    case ScalarType::Long: *reinterpret_cast<int64_t*>(p) = wide_to<int64_t>(w); break;
    case ScalarType::Half:
      *reinterpret_cast<uint16_t*>(p) = __half_as_ushort(__float2half_rn(wide_to<float>(w)));
      break;
    case ScalarType::BFloat16:
      *reinterpret_cast<uint16_t*>(p) = __bfloat16_as_ushort(__float2bfloat16_rn(wide_to<float>(w)));
      break;
    case ScalarType::Float: *reinterpret_cast<float*>(p) = wide_to<float>(w); break;
    case ScalarType::Double: *reinterpret_cast<double*>(p) = wide_to<double>(w); break;
    case ScalarType::ComplexFloat:
      reinterpret_cast<float*>(p)[0] = wide_to<float>(w);
      reinterpret_cast<float*>(p)[1] = static_cast<float>(w.im);
      break;
    case ScalarType::ComplexDouble:
      reinterpret_cast<double*>(p)[0] = wide_to<double>(w);
      reinterpret_cast<double*>(p)[1] = w.im;
      break;
    default: break;
  }
}

// dst = cast(src); src_scalar (non-null) replaces a 0-dim CPU source.
__global__ void __launch_bounds__(kThreads)
    cast_copy_kernel(uint32_t n, OffsetCalculator<2> calc, char* dst, ScalarType dst_t, const char* src,
                     ScalarType src_t, Bits128 src_scalar, bool src_is_scalar) {
  uint32_t idx = blockIdx.x * kElemsPerBlock + threadIdx.x;
#pragma unroll
  for (int j = 0; j < kElemsPerThread; ++j, idx += kThreads) {
    if (idx < n) {
      const auto o = calc.get(idx);
      const char* from = src_is_scalar ? reinterpret_cast<const char*>(&src_scalar) : src + o.v[1];
      store_wide(dst_t, dst + o.v[0], load_wide(src_t, from));
    }
  }
}

bool is_dense_contiguous(const TensorIterator& it) {
  const IterGeometry g = make_geometry(it);
  const int64_t size = static_cast<int64_t>(element_size(it.dtype(0)));
  const int64_t sizes[2] = {size, size};
  return g.is_contiguous(sizes, 0);
}

void copy_iter_fn(const TensorIterator& it) { copy_kernel_cuda(const_cast<TensorIterator&>(it)); }

// The value of a fill as the bits of the dtype's element (CPU fill's conversion).
template <typename T>
T fill_value(const Scalar& value) {
  if constexpr (is_complex_v<T>) {
    return convert<T>(value.to_complex());
  } else {
    if (value.is_complex()) return convert<T>(value.to_complex());
    if (value.is_floating_point() || value.is_big_unsigned()) return convert<T>(value.to<double>());
    if (value.is_bool()) return convert<T>(value.to<bool>());
    return convert<T>(value.to<int64_t>());
  }
}

void fill_kernel_cuda(const TensorIterator& it, const Scalar& value) {
  Bits128 bits{0, 0};
  switch (it.dtype(0)) {
#define EMBER_FILL_CASE(cpp, name, py, legacy)    \
  case ScalarType::name: {                        \
    const cpp v = fill_value<cpp>(value);         \
    static_assert(sizeof(v) <= sizeof(bits), ""); \
    std::memcpy(&bits, &v, sizeof(v));            \
    break;                                        \
  }
    EMBER_FORALL_SCALAR_TYPES(EMBER_FILL_CASE)
#undef EMBER_FILL_CASE
    default: EMBER_INTERNAL_ASSERT(false, "fill_: undefined dtype");
  }
  dispatch_by_size(element_size(it.dtype(0)), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U v;
    std::memcpy(&v, &bits, sizeof(U));
    gpu_kernel<U>(it, ConstantOp<U>{v});
  });
}

}  // namespace

void copy_kernel_cuda(TensorIterator& iter) {
  if (iter.numel() == 0) return;
  const ScalarType dst_t = iter.dtype(0);
  const ScalarType src_t = iter.dtype(1);
  const Tensor& src = iter.operand(1);
  const bool src_is_scalar = src.dim() == 0 && src.is_cpu();
  EMBER_INTERNAL_ASSERT(iter.output().is_cuda() && (src.is_cuda() || src_is_scalar),
                        "copy_kernel_cuda: operands on one CUDA device");
  const TensorDeviceGuard guard(iter.output());
  if (dst_t == src_t && !src_is_scalar) {
    if (is_dense_contiguous(iter)) {
      EMBER_CUDA_CHECK(cudaMemcpyAsync(iter.output().data_ptr(), src.data_ptr(), iter.numel() * element_size(dst_t),
                                       cudaMemcpyDeviceToDevice, current_stream()));
      return;
    }
    dispatch_by_size(element_size(dst_t), [&](auto tag) {
      using U = typename decltype(tag)::type;
      gpu_kernel<U, U>(iter, IdentityOp<U>{});
    });
    return;
  }
  Bits128 scalar{0, 0};
  if (src_is_scalar) std::memcpy(&scalar, src.data_ptr(), element_size(src_t));
  char* dst = static_cast<char*>(iter.output().data_ptr());
  const char* from = src_is_scalar ? nullptr : static_cast<const char*>(src.data_ptr());
  const cudaStream_t stream = current_stream();
  for_each_32bit_piece(make_geometry(iter), [&](const IterGeometry& piece) {
    const auto n = static_cast<uint32_t>(piece.numel());
    const unsigned blocks = (n + kElemsPerBlock - 1) / kElemsPerBlock;
    cast_copy_kernel<<<blocks, kThreads, 0, stream>>>(n, OffsetCalculator<2>(piece), dst + piece.base_offsets[0], dst_t,
                                                      from ? from + piece.base_offsets[1] : nullptr, src_t, scalar,
                                                      src_is_scalar);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

EMBER_REGISTER_CUDA_DISPATCH(copy_stub, &copy_iter_fn);
EMBER_REGISTER_CUDA_DISPATCH(fill_stub, &fill_kernel_cuda);

}  // namespace ember::cuda
