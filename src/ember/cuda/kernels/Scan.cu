// cumsum and cumprod on CUDA over the middle dim of a contiguous
// [outer, n, inner] tensor (in and out of one dtype), accumulating in opmath
// (float for 16-bit floats). inner == 1: one block per row scans chunks of
// blockDim elements with cub::BlockScan, carrying the running total between
// chunks; inner > 1: one thread per (outer, inner) column scans in order.
#include <cub/block/block_scan.cuh>

#include "ember/cuda/kernels/Reduce.cuh"
#include "ember/cuda/kernels/ReduceKernels.h"

namespace ember::cuda {
namespace {

constexpr int kScanThreads = 256;

template <typename V>
struct ScanOp {
  bool prod;
  __device__ __forceinline__ V operator()(const V& a, const V& b) const { return prod ? a * b : a + b; }
};

template <typename T>
using scan_acc_t = std::conditional_t<std::is_integral_v<T>, T, opmath_t<T>>;

template <typename T>
__global__ void scan_rows_kernel(const T* x, T* y, int64_t n, bool prod) {
  using V = scan_acc_t<T>;
  using BlockScan = cub::BlockScan<V, kScanThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  __shared__ V carry_shared;
  const ScanOp<V> op{prod};
  x += int64_t(blockIdx.x) * n;
  y += int64_t(blockIdx.x) * n;
  V carry = prod ? V(1) : V(0);
  for (int64_t start = 0; start < n; start += kScanThreads) {
    const int64_t j = start + threadIdx.x;
    V v = j < n ? convert<V>(x[j]) : (prod ? V(1) : V(0));
    V total;
    BlockScan(temp).InclusiveScan(v, v, op, total);
    v = op(carry, v);
    if (j < n) y[j] = convert<T>(v);
    if (threadIdx.x == 0) carry_shared = op(carry, total);
    __syncthreads();  // temp and carry_shared are reused by the next chunk
    carry = carry_shared;
    __syncthreads();
  }
}

template <typename T>
__global__ void scan_columns_kernel(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool prod) {
  using V = scan_acc_t<T>;
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= outer * inner) return;
  const int64_t base = (t / inner) * n * inner + t % inner;
  V acc = prod ? V(1) : V(0);
  for (int64_t j = 0; j < n; ++j) {
    const V v = convert<V>(x[base + j * inner]);
    acc = prod ? acc * v : acc + v;
    y[base + j * inner] = convert<T>(acc);
  }
}

}  // namespace

void scan_kernel(const Tensor& in, Tensor& out, int64_t outer, int64_t n, int64_t inner, bool is_prod) {
  if (outer * inner == 0 || n == 0) return;
  const auto run = [&](auto tag) {
    using scalar_t = decltype(tag);
    const auto* x = static_cast<const scalar_t*>(in.data_ptr());
    auto* y = static_cast<scalar_t*>(out.data_ptr());
    cudaStream_t stream = current_stream();
    if (inner == 1) {
      scan_rows_kernel<scalar_t><<<static_cast<unsigned>(outer), kScanThreads, 0, stream>>>(x, y, n, is_prod);
    } else {
      const int threads = 256;
      scan_columns_kernel<scalar_t><<<static_cast<unsigned>(ceil_div(outer * inner, threads)), threads, 0, stream>>>(
          x, y, outer, n, inner, is_prod);
    }
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  };
  switch (in.dtype()) {
    case ScalarType::Byte: return run(uint8_t{});
    case ScalarType::Char: return run(int8_t{});
    case ScalarType::Short: return run(int16_t{});
    case ScalarType::Int: return run(int32_t{});
    case ScalarType::Long: return run(int64_t{});
    case ScalarType::Float: return run(float{});
    case ScalarType::Double: return run(double{});
    case ScalarType::Half: return run(__half{});
    case ScalarType::BFloat16: return run(__nv_bfloat16{});
    default:
      throw NotImplementedError(str_cat("\"", is_prod ? "cumprod" : "cumsum", "_out_cuda\" not implemented for '",
                                        dtype_message_name(in.dtype()), "'"));
  }
}

}  // namespace ember::cuda
