// CUDA kernels of arange, linspace and logspace (the device fill behind the range
// factories of ops/native/RangeFactories.cpp) and of nonzero.
#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_select.cuh>

#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/DispatchTables.h"
#include "ember/ops/native/RangeStubs.h"

namespace ember::cuda {
namespace {

// ---- arange, linspace ---------------------------------------------------------------------

// PyTorch's CUDA accumulate type: float for float and 16-bit floats, double
// for double, int64 for integers.
template <typename T>
using RangeAcc =
    std::conditional_t<std::is_integral_v<T>, int64_t, std::conditional_t<std::is_same_v<T, double>, double, float>>;

// out[i] = start + step * i in the accumulate type (one fused multiply-add).
template <typename T>
__global__ void arange_kernel(T* out, int64_t n, RangeAcc<T> start, RangeAcc<T> step) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if constexpr (std::is_integral_v<T>) {
      // Wrapping arithmetic, as the CPU kernel's unsigned form.
      out[i] = static_cast<T>(
          static_cast<int64_t>(static_cast<uint64_t>(start) + static_cast<uint64_t>(step) * static_cast<uint64_t>(i)));
    } else if constexpr (std::is_same_v<T, double>) {
      out[i] = fma(step, static_cast<double>(i), start);
    } else {
      out[i] = narrow<T>(fmaf(step, static_cast<float>(i), start));
    }
  }
}

// The first half counts up from start, the second down from end (the
// endpoints exact), as the CPU kernel and PyTorch do.
template <typename T>
__global__ void linspace_kernel(T* out, int64_t steps, double start, double end) {
  const int64_t half = steps / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < steps; i += stride) {
    if constexpr (std::is_integral_v<T>) {
      const double a = static_cast<double>(static_cast<T>(static_cast<int64_t>(start)));
      const double b = static_cast<double>(static_cast<T>(static_cast<int64_t>(end)));
      const double st = (b - a) / static_cast<double>(steps - 1);
      out[i] = static_cast<T>(i < half ? fma(st, static_cast<double>(i), a)
                                       : fma(-st, static_cast<double>(steps - i - 1), b));
    } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
      const T a = static_cast<T>(start), b = static_cast<T>(end);
      const T st = (b - a) / static_cast<T>(steps - 1);
      out[i] = i < half ? fma(st, static_cast<T>(i), a) : fma(-st, static_cast<T>(steps - i - 1), b);
    } else {
      // 16-bit arithmetic: every operation rounds to T.
      auto r = [](float v) { return widen(narrow<T>(v)); };
      const float a = static_cast<float>(start), b = static_cast<float>(end);
      const float st = r(r(b - a) / r(static_cast<float>(steps - 1)));
      const float value =
          i < half ? a + r(st * r(static_cast<float>(i))) : b - r(st * r(static_cast<float>(steps - i - 1)));
      out[i] = narrow<T>(value);
    }
  }
}

// base ** (start + step * i) as PyTorch's CUDA kernel: integer outputs raise
// a float base to float exponents; float and double compute in their type
// (the multiply-add fused, as nvcc contracts it); 16-bit outputs round every
// operation to the type. The second half counts down from end.
template <typename T>
__global__ void logspace_kernel(T* out, int64_t steps, double start, double end, double base) {
  const int64_t half = steps / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < steps; i += stride) {
    const int64_t back = steps - i - 1;
    if constexpr (std::is_integral_v<T>) {
      const T a = static_cast<T>(static_cast<int64_t>(start)), b = static_cast<T>(static_cast<int64_t>(end));
      const float st = static_cast<float>(b - a) / static_cast<float>(steps - 1);
      const float x = i < half ? fmaf(st, static_cast<float>(i), static_cast<float>(a))
                               : fmaf(-st, static_cast<float>(back), static_cast<float>(b));
      out[i] = static_cast<T>(powf(static_cast<float>(base), x));
    } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
      const T a = static_cast<T>(start), b = static_cast<T>(end);
      const T st = (b - a) / static_cast<T>(steps - 1);
      const T x = i < half ? fma(st, static_cast<T>(i), a) : fma(-st, static_cast<T>(back), b);
      if constexpr (std::is_same_v<T, double>) {
        out[i] = ::pow(base, x);
      } else {
        out[i] = ::powf(static_cast<float>(base), x);
      }
    } else {
      auto r = [](float v) { return widen(narrow<T>(v)); };
      const float a = static_cast<float>(start), b = static_cast<float>(end);
      const float st = r(r(b - a) / r(static_cast<float>(steps - 1)));
      const float x = i < half ? r(a + r(st * r(static_cast<float>(i)))) : r(b - r(st * r(static_cast<float>(back))));
      out[i] = narrow<T>(powf(r(static_cast<float>(base)), x));
    }
  }
}

void logspace_cuda(const TensorBase& out, const ::ember::cpu::RangeBounds& b, double base) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const LaunchShape s = launch_shape(n);
  cudaStream_t stream = current_stream(out.device().index);
  dispatch_device_types<kIntegral | kAllFloating>(out.dtype(), "logspace_cuda", [&](auto tag) {
    using T = decltype(tag);
    const double start = std::is_integral_v<T> ? static_cast<double>(b.i0) : b.d0;
    const double end = std::is_integral_v<T> ? static_cast<double>(b.i1) : b.d1;
    logspace_kernel<T><<<static_cast<unsigned>(s.blocks), s.threads, 0, stream>>>(static_cast<T*>(out.data_ptr()), n,
                                                                                  start, end, base);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

void arange_cuda(const TensorBase& out, const ::ember::cpu::RangeBounds& b) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const LaunchShape s = launch_shape(n);
  cudaStream_t stream = current_stream(out.device().index);
  dispatch_device_types<kIntegral | kAllFloating>(out.dtype(), "arange_cuda", [&](auto tag) {
    using T = decltype(tag);
    using Acc = RangeAcc<T>;
    Acc start, step;
    if constexpr (std::is_integral_v<T>) {
      start = b.i0, step = b.i1;
    } else {
      start = static_cast<Acc>(b.d0), step = static_cast<Acc>(b.d1);
    }
    arange_kernel<T>
        <<<static_cast<unsigned>(s.blocks), s.threads, 0, stream>>>(static_cast<T*>(out.data_ptr()), n, start, step);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

void linspace_cuda(const TensorBase& out, const ::ember::cpu::RangeBounds& b) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const LaunchShape s = launch_shape(n);
  cudaStream_t stream = current_stream(out.device().index);
  dispatch_device_types<kIntegral | kAllFloating>(out.dtype(), "linspace_cuda", [&](auto tag) {
    using T = decltype(tag);
    const double start = std::is_integral_v<T> ? static_cast<double>(b.i0) : b.d0;
    const double end = std::is_integral_v<T> ? static_cast<double>(b.i1) : b.d1;
    linspace_kernel<T>
        <<<static_cast<unsigned>(s.blocks), s.threads, 0, stream>>>(static_cast<T*>(out.data_ptr()), n, start, end);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

// ---- nonzero ---------------------------------------------------------------------------------

template <typename T>
__device__ bool is_nonzero(T v) {
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    return widen(v) != 0.0f;
  } else if constexpr (std::is_same_v<T, DeviceComplex<float>> || std::is_same_v<T, DeviceComplex<double>>) {
    return v.re != 0 || v.im != 0;
  } else {
    return v != T(0);
  }
}

template <typename T>
__global__ void nonzero_flags_kernel(const T* in, uint8_t* flags, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    flags[i] = is_nonzero(in[i]) ? 1 : 0;
  }
}

struct Sizes {
  int64_t s[kMaxIndexDims];
};

// Row r of the result: the coordinates of the r-th selected linear position;
// column k of the result lies at out + k * column_stride.
__global__ void nonzero_coords_kernel(const int64_t* selected, int64_t count, Sizes sizes, int ndim, int64_t* out,
                                      int64_t column_stride) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < count; r += stride) {
    int64_t linear = selected[r];
    for (int k = ndim - 1; k >= 0; --k) {
      out[r + k * column_stride] = linear % sizes.s[k];
      linear /= sizes.s[k];
    }
  }
}

Tensor& nonzero_out_cuda(const Tensor& self, Tensor& out) {
  EMBER_CHECK(!out.defined() || out.dtype() == ScalarType::Long, "Expected object of scalar type Long as out, but got ",
              dtype_message_name(out.defined() ? out.dtype() : ScalarType::Long));
  EMBER_CHECK(self.dim() <= kMaxIndexDims, "nonzero is not supported for tensor with more than ", kMaxIndexDims,
              " dimensions");
  EMBER_CHECK(self.numel() < std::numeric_limits<int>::max(),
              "nonzero is not supported for tensors with more than INT_MAX elements, See "
              "https://github.com/pytorch/pytorch/issues/51871");
  const int64_t n = self.numel();
  const int ndim = static_cast<int>(self.dim());
  const Device device = self.device();
  cudaStream_t stream = current_stream(device.index);
  Tensor s = self.contiguous();
  Tensor flags = ember::empty({std::max<int64_t>(n, 1)}, ScalarType::Byte, device);
  Tensor selected = ember::empty({std::max<int64_t>(n, 1)}, ScalarType::Long, device);
  Tensor count = ember::empty({1}, ScalarType::Int, device);
  int64_t found = 0;
  if (n > 0) {
    const LaunchShape ls = launch_shape(n);
    dispatch_device_types(self.dtype(), "nonzero_cuda", [&](auto tag) {
      using T = decltype(tag);
      nonzero_flags_kernel<T><<<static_cast<unsigned>(ls.blocks), ls.threads, 0, stream>>>(
          static_cast<const T*>(s.data_ptr()), static_cast<uint8_t*>(flags.data_ptr()), n);
    });
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    thrust::counting_iterator<int64_t> positions(0);
    size_t temp_bytes = 0;
    auto* flag_ptr = static_cast<const uint8_t*>(flags.data_ptr());
    auto* selected_ptr = static_cast<int64_t*>(selected.data_ptr());
    auto* count_ptr = static_cast<int*>(count.data_ptr());
    EMBER_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes, positions, flag_ptr, selected_ptr, count_ptr,
                                                static_cast<int>(n), stream));
    Tensor temp = ember::empty({static_cast<int64_t>(std::max<size_t>(temp_bytes, 1))}, ScalarType::Byte, device);
    EMBER_CUDA_CHECK(cub::DeviceSelect::Flagged(temp.data_ptr(), temp_bytes, positions, flag_ptr, selected_ptr,
                                                count_ptr, static_cast<int>(n), stream));
    // The result's size is needed on the host: the one synchronization of nonzero.
    int host_count = 0;
    EMBER_CUDA_CHECK(cudaMemcpyAsync(&host_count, count_ptr, sizeof(int), cudaMemcpyDeviceToHost, stream));
    EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
    found = host_count;
  }
  // PyTorch's CUDA result is the transpose of a (ndim, count) tensor: strides (1, count).
  Tensor columns = ember::empty({ndim, found}, ScalarType::Long, device);
  Tensor result = columns.t();
  if (found > 0 && ndim > 0) {
    Sizes sizes{};
    for (int k = 0; k < ndim; ++k) sizes.s[k] = self.sizes()[k];
    const LaunchShape ls = launch_shape(found);
    nonzero_coords_kernel<<<static_cast<unsigned>(ls.blocks), ls.threads, 0, stream>>>(
        static_cast<const int64_t*>(selected.data_ptr()), found, sizes, ndim, static_cast<int64_t*>(columns.data_ptr()),
        found);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  }
  if (!out.defined()) return out = result;
  resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

const bool registered = [] {
  ::ember::cpu::arange_stub.cuda = &arange_cuda;
  ::ember::cpu::linspace_stub.cuda = &linspace_cuda;
  ::ember::cpu::logspace_stub.cuda = &logspace_cuda;
  dispatch::nonzero_kernels[static_cast<int>(DeviceType::CUDA)] = &nonzero_out_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
