// cumsum and cumprod on CUDA over the middle dim of a contiguous
// [outer, n, inner] tensor (in and out of one dtype), in PyTorch's orders and
// roundings: each step is computed in opmath (float for 16-bit floats) and
// kept in the element type, so 16-bit floats round after every step.
// - inner > 1: one thread per (outer, inner) column scans in order;
// - inner == 1, floating types: one block per row scans chunks of
//   2 * threads elements by Sklansky's method, the chunk's first element
//   taking the running total; threads per row as PyTorch picks them from
//   the row count and length (the chunk bounds decide the roundings);
// - inner == 1, integers (exact in any order): chunks of blockDim elements
//   with cub::BlockScan, carrying the running total between chunks.
#include <cub/block/block_scan.cuh>

#include "ember/cuda/kernels/Reduce.cuh"
#include "ember/cuda/kernels/ReduceKernels.h"
#include "ember/cuda/kernels/ScanPlan.h"

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
  T acc = convert<T>(prod ? V(1) : V(0));
  for (int64_t j = 0; j < n; ++j) {
    const V v = convert<V>(x[base + j * inner]);
    const V a = convert<V>(acc);
    acc = convert<T>(prod ? a * v : a + v);
    y[base + j * inner] = acc;
  }
}

// Sklansky's scan of rows of n elements, one row per block of `blockDim.x`
// (a power of two) threads, chunks of 2 * blockDim.x elements; every partial
// result is rounded to T. `buf` holds 2 * blockDim.x values.
template <typename T>
__global__ void sklansky_rows_kernel(const T* x, T* y, int64_t n, unsigned log_threads, bool prod) {
  using V = opmath_t<T>;
  extern __shared__ unsigned char sklansky_smem[];
  V* buf = reinterpret_cast<V*>(sklansky_smem);
  const unsigned threads = 1u << log_threads;
  const unsigned t = threadIdx.x;
  const V init = prod ? V(1) : V(0);
  const auto step = [prod](V a, V b) { return convert<V>(convert<T>(prod ? a * b : a + b)); };
  x += int64_t(blockIdx.x) * n;
  y += int64_t(blockIdx.x) * n;
  V total = init;
  for (int64_t start = 0; start < n; start += 2 * int64_t(threads)) {
    const int64_t c1 = start + t, c2 = start + threads + t;
    buf[t] = c1 < n ? convert<V>(x[c1]) : init;
    buf[threads + t] = c2 < n ? convert<V>(x[c2]) : init;
    if (t == 0) buf[0] = step(buf[0], total);
    __syncthreads();
    for (unsigned m = 0; m <= log_threads; ++m) {
      const unsigned s = 1u << m;
      const unsigned a = ((t >> m) << (m + 1)) | s;
      const unsigned ti = a + (t & (s - 1)), si = a - 1;
      buf[ti] = step(buf[ti], buf[si]);
      __syncthreads();
    }
    if (c1 < n) y[c1] = convert<T>(buf[t]);
    if (c2 < n) y[c2] = convert<T>(buf[threads + t]);
    total = buf[2 * threads - 1];
    __syncthreads();
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
    if (inner == 1 && !std::is_integral_v<scalar_t>) {
      const unsigned log_threads = sklansky_log_threads(static_cast<uint32_t>(outer), static_cast<uint32_t>(n));
      const size_t smem = sizeof(opmath_t<scalar_t>) * (size_t(2) << log_threads);
      sklansky_rows_kernel<scalar_t>
          <<<static_cast<unsigned>(outer), 1u << log_threads, smem, stream>>>(x, y, n, log_threads, is_prod);
    } else if (inner == 1) {
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
