// softmax and log_softmax, forward and backward, on CUDA, over the middle dim
// of a contiguous [outer, n, inner] tensor, computing in opmath (float for
// 16-bit floats). Three layouts, as PyTorch's kernels:
//  - inner == 1, n <= 1024: one warp per row, the row held in registers
//    (each lane keeps up to 32 elements), combined by warp shuffles;
//  - inner == 1, n > 1024: one block per row, combined through shared memory;
//    rows aligned to 16 bytes of at most kRowMaxVecs vectors are held in
//    registers (one read of each input, 16-byte loads and stores; forward
//    and backward);
//  - inner > 1: one thread per (outer, inner) column, adjacent threads reading
//    adjacent memory.
#include <cuda/std/limits>

#include "ember/cuda/kernels/Reduce.cuh"
#include "ember/cuda/kernels/ReduceKernels.h"

namespace ember::cuda {
namespace {

constexpr int kWarpRowMax = 1024;
constexpr int kPerLane = kWarpRowMax / 32;
constexpr int kWarpsPerBlock = 4;
constexpr int kBlockRowThreads = 512;

template <typename V>
__device__ __forceinline__ V neg_inf() {
  return -::cuda::std::numeric_limits<V>::infinity();
}
template <typename V>
__device__ __forceinline__ V max_of(V a, V b) {
  return (a > b || is_nan(a)) ? a : b;
}

template <typename V>
__device__ __forceinline__ V warp_max(V v) {
#pragma unroll
  for (int d = 16; d > 0; d /= 2) v = max_of(v, __shfl_xor_sync(0xffffffffu, v, d));
  return v;
}
template <typename V>
__device__ __forceinline__ V warp_sum(V v) {
#pragma unroll
  for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;
}

// Block-wide max or sum, the result in every thread. smem holds 32 values.
template <typename V, bool kMax>
__device__ V block_all(V v, V* smem) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
  v = kMax ? warp_max(v) : warp_sum(v);
  __syncthreads();  // smem may still be read from the previous call
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = lane < nwarps ? smem[lane] : (kMax ? neg_inf<V>() : V(0));
  return kMax ? warp_max(v) : warp_sum(v);
}

// ---- forward ----------------------------------------------------------------------------

template <typename in_t, typename out_t>
__global__ void softmax_warp_kernel(const in_t* x, out_t* y, int64_t rows, int n, bool log) {
  using V = opmath_t<in_t>;
  const int64_t row = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
  if (row >= rows) return;  // the whole warp leaves together
  const int lane = threadIdx.x;
  x += row * n;
  y += row * n;
  V v[kPerLane];
  V m = neg_inf<V>();
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int j = i * 32 + lane;
    v[i] = j < n ? convert<V>(x[j]) : neg_inf<V>();
    m = max_of(m, v[i]);
  }
  m = warp_max(m);
  V s = 0;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    if (i * 32 + lane < n) {
      const V e = math_exp(v[i] - m);
      s += e;
      if (!log) v[i] = e;
    }
  }
  s = warp_sum(s);
  const V log_s = log ? math_log(s) : V(0);
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int j = i * 32 + lane;
    if (j < n) y[j] = convert<out_t>(log ? v[i] - m - log_s : v[i] / s);
  }
}

template <typename in_t, typename out_t>
__global__ void softmax_block_kernel(const in_t* x, out_t* y, int64_t n, bool log) {
  using V = opmath_t<in_t>;
  __shared__ V smem[32];
  x += int64_t(blockIdx.x) * n;
  y += int64_t(blockIdx.x) * n;
  V m = neg_inf<V>();
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = max_of(m, convert<V>(x[j]));
  m = block_all<V, true>(m, smem);
  V s = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += math_exp(convert<V>(x[j]) - m);
  s = block_all<V, false>(s, smem);
  const V log_s = math_log(s);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const V d = convert<V>(x[j]) - m;
    y[j] = convert<out_t>(log ? d - log_s : math_exp(d) / s);
  }
}

// One block per row held in registers: one read and one write of the row,
// 16-byte accesses (rows aligned to 16 bytes; plan_row_launch).
template <typename in_t, typename out_t, int kVecs>
__global__ void __launch_bounds__(kRowMaxThreads) softmax_rows_kernel(const in_t* x, out_t* y, int64_t n, bool log) {
  using V = opmath_t<in_t>;
  constexpr int W = 16 / sizeof(in_t);
  __shared__ V smem[32];
  const int64_t nvec = n / W;
  const auto* xv = reinterpret_cast<const VecOf<W, in_t>*>(x + int64_t(blockIdx.x) * n);
  auto* yv = reinterpret_cast<VecOf<W, out_t>*>(y + int64_t(blockIdx.x) * n);
  V v[kVecs][W];
  VecOf<W, in_t> chunk[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    if (i < nvec) chunk[k] = xv[i];
  }
  V m = neg_inf<V>();
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const bool valid = threadIdx.x + int64_t(k) * blockDim.x < nvec;
#pragma unroll
    for (int j = 0; j < W; ++j) {
      v[k][j] = valid ? convert<V>(chunk[k].v[j]) : neg_inf<V>();
      m = max_of(m, v[k][j]);
    }
  }
  m = block_all<V, true>(m, smem);
  V s = 0;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    if (threadIdx.x + int64_t(k) * blockDim.x < nvec) {
#pragma unroll
      for (int j = 0; j < W; ++j) {
        const V e = math_exp(v[k][j] - m);
        s += e;
        if (!log) v[k][j] = e;
      }
    }
  }
  s = block_all<V, false>(s, smem);
  const V log_s = log ? math_log(s) : V(0);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    if (i < nvec) {
      VecOf<W, out_t> o;
#pragma unroll
      for (int j = 0; j < W; ++j) o.v[j] = convert<out_t>(log ? v[k][j] - m - log_s : v[k][j] / s);
      yv[i] = o;
    }
  }
}

// The rows kernel's launch, or vecs == 0 when the rows do not suit it.
template <typename in_t, typename out_t>
RowLaunch rows_launch(const void* x, const void* y, int64_t n) {
  constexpr int W = 16 / sizeof(in_t);
  const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(y) % alignof(VecOf<W, out_t>) == 0 && n % W == 0;
  return aligned ? plan_row_launch(n / W) : RowLaunch{};
}

template <typename in_t, typename out_t>
__global__ void softmax_columns_kernel(const in_t* x, out_t* y, int64_t outer, int64_t n, int64_t inner, bool log) {
  using V = opmath_t<in_t>;
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= outer * inner) return;
  const int64_t base = (t / inner) * n * inner + t % inner;
  x += base;
  y += base;
  V m = neg_inf<V>();
  for (int64_t j = 0; j < n; ++j) m = max_of(m, convert<V>(x[j * inner]));
  V s = 0;
  for (int64_t j = 0; j < n; ++j) s += math_exp(convert<V>(x[j * inner]) - m);
  const V log_s = math_log(s);
  for (int64_t j = 0; j < n; ++j) {
    const V d = convert<V>(x[j * inner]) - m;
    y[j * inner] = convert<out_t>(log ? d - log_s : math_exp(d) / s);
  }
}

template <typename in_t, typename out_t>
void launch_softmax(const Tensor& in, Tensor& out, int64_t outer, int64_t n, int64_t inner, bool log) {
  const auto* x = static_cast<const in_t*>(in.data_ptr());
  auto* y = static_cast<out_t*>(out.data_ptr());
  cudaStream_t stream = current_stream();
  if (inner == 1 && n <= kWarpRowMax) {
    const dim3 block(32, kWarpsPerBlock);
    const int64_t blocks = ceil_div(outer, kWarpsPerBlock);
    softmax_warp_kernel<in_t, out_t><<<static_cast<unsigned>(blocks), block, 0, stream>>>(x, y, outer, int(n), log);
  } else if (inner == 1) {
    const RowLaunch rl = rows_launch<in_t, out_t>(x, y, n);
    const unsigned rows = static_cast<unsigned>(outer);
    switch (rl.vecs) {
      case 1: softmax_rows_kernel<in_t, out_t, 1><<<rows, rl.threads, 0, stream>>>(x, y, n, log); break;
      case 2: softmax_rows_kernel<in_t, out_t, 2><<<rows, rl.threads, 0, stream>>>(x, y, n, log); break;
      case 4: softmax_rows_kernel<in_t, out_t, 4><<<rows, rl.threads, 0, stream>>>(x, y, n, log); break;
      case 8: softmax_rows_kernel<in_t, out_t, 8><<<rows, rl.threads, 0, stream>>>(x, y, n, log); break;
      default: softmax_block_kernel<in_t, out_t><<<rows, kBlockRowThreads, 0, stream>>>(x, y, n, log); break;
    }
  } else {
    const int threads = 256;
    const int64_t blocks = ceil_div(outer * inner, threads);
    softmax_columns_kernel<in_t, out_t>
        <<<static_cast<unsigned>(blocks), threads, 0, stream>>>(x, y, outer, n, inner, log);
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

// ---- backward ---------------------------------------------------------------------------
// softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - math_exp(y) * sum(g).

template <typename T>
__device__ __forceinline__ opmath_t<T> backward_term(T g, T y, bool log) {
  using V = opmath_t<T>;
  return log ? convert<V>(g) : convert<V>(g) * convert<V>(y);
}
template <typename T>
__device__ __forceinline__ T backward_value(T g, T y, opmath_t<T> s, bool log) {
  using V = opmath_t<T>;
  const V gv = convert<V>(g), yv = convert<V>(y);
  return convert<T>(log ? gv - math_exp(yv) * s : yv * (gv - s));
}

template <typename T>
__global__ void softmax_backward_warp_kernel(const T* g, const T* y, T* gx, int64_t rows, int n, bool log) {
  using V = opmath_t<T>;
  const int64_t row = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
  if (row >= rows) return;
  const int lane = threadIdx.x;
  const int64_t off = row * n;
  V s = 0;
  for (int j = lane; j < n; j += 32) s += backward_term(g[off + j], y[off + j], log);
  s = warp_sum(s);
  for (int j = lane; j < n; j += 32) gx[off + j] = backward_value(g[off + j], y[off + j], s, log);
}

template <typename T>
__global__ void softmax_backward_block_kernel(const T* g, const T* y, T* gx, int64_t n, bool log) {
  using V = opmath_t<T>;
  __shared__ V smem[32];
  const int64_t off = int64_t(blockIdx.x) * n;
  V s = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += backward_term(g[off + j], y[off + j], log);
  s = block_all<V, false>(s, smem);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) gx[off + j] = backward_value(g[off + j], y[off + j], s, log);
}

// One block per row, g and y held in registers (rows_launch): one read of each.
template <typename T, int kVecs>
__global__ void __launch_bounds__(kRowMaxThreads)
    softmax_backward_rows_kernel(const T* g, const T* y, T* gx, int64_t n, bool log) {
  using V = opmath_t<T>;
  constexpr int W = 16 / sizeof(T);
  using Vec = VecOf<W, T>;
  __shared__ V smem[32];
  const int64_t off = int64_t(blockIdx.x) * n, nvec = n / W;
  const auto* gv = reinterpret_cast<const Vec*>(g + off);
  const auto* yv = reinterpret_cast<const Vec*>(y + off);
  auto* gxv = reinterpret_cast<Vec*>(gx + off);
  Vec gc[kVecs], yc[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    if (i < nvec) {
      gc[k] = gv[i];
      yc[k] = yv[i];
    }
  }
  V s = 0;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    if (threadIdx.x + int64_t(k) * blockDim.x < nvec) {
#pragma unroll
      for (int j = 0; j < W; ++j) s += backward_term(gc[k].v[j], yc[k].v[j], log);
    }
  }
  s = block_all<V, false>(s, smem);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    if (i < nvec) {
      Vec o;
#pragma unroll
      for (int j = 0; j < W; ++j) o.v[j] = backward_value(gc[k].v[j], yc[k].v[j], s, log);
      gxv[i] = o;
    }
  }
}

template <typename T>
__global__ void softmax_backward_columns_kernel(const T* g, const T* y, T* gx, int64_t outer, int64_t n, int64_t inner,
                                                bool log) {
  using V = opmath_t<T>;
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= outer * inner) return;
  const int64_t base = (t / inner) * n * inner + t % inner;
  V s = 0;
  for (int64_t j = 0; j < n; ++j) s += backward_term(g[base + j * inner], y[base + j * inner], log);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t k = base + j * inner;
    gx[k] = backward_value(g[k], y[k], s, log);
  }
}

}  // namespace

void softmax_kernel(const Tensor& in, Tensor& out, int64_t outer, int64_t n, int64_t inner, bool log) {
  const char* name = log ? "log_softmax_cuda" : "softmax_cuda";
  if (in.dtype() == ScalarType::Half && out.dtype() == ScalarType::Float) {
    launch_softmax<__half, float>(in, out, outer, n, inner, log);
    return;
  }
  EMBER_CHECK(in.dtype() == out.dtype(), name, ": unexpected output dtype");
  EMBER_CUDA_DISPATCH_FLOATING(in.dtype(), name,
                               [&] { launch_softmax<scalar_t, scalar_t>(in, out, outer, n, inner, log); });
}

void softmax_backward_kernel(const Tensor& grad, const Tensor& out, Tensor& grad_input, int64_t outer, int64_t n,
                             int64_t inner, bool log) {
  const char* name = log ? "log_softmax_backward_cuda" : "softmax_backward_cuda";
  EMBER_CUDA_DISPATCH_FLOATING(out.dtype(), name, [&] {
    const auto* g = static_cast<const scalar_t*>(grad.data_ptr());
    const auto* y = static_cast<const scalar_t*>(out.data_ptr());
    auto* gx = static_cast<scalar_t*>(grad_input.data_ptr());
    cudaStream_t stream = current_stream();
    if (inner == 1 && n <= kWarpRowMax) {
      const dim3 block(32, kWarpsPerBlock);
      const int64_t blocks = ceil_div(outer, kWarpsPerBlock);
      softmax_backward_warp_kernel<scalar_t>
          <<<static_cast<unsigned>(blocks), block, 0, stream>>>(g, y, gx, outer, int(n), log);
    } else if (inner == 1) {
      const unsigned rows = static_cast<unsigned>(outer);
      RowLaunch rl = rows_launch<scalar_t, scalar_t>(g, gx, n);
      if (reinterpret_cast<uintptr_t>(y) % 16 != 0) rl.vecs = 0;
      switch (rl.vecs) {
        case 1: softmax_backward_rows_kernel<scalar_t, 1><<<rows, rl.threads, 0, stream>>>(g, y, gx, n, log); break;
        case 2: softmax_backward_rows_kernel<scalar_t, 2><<<rows, rl.threads, 0, stream>>>(g, y, gx, n, log); break;
        case 4: softmax_backward_rows_kernel<scalar_t, 4><<<rows, rl.threads, 0, stream>>>(g, y, gx, n, log); break;
        case 8: softmax_backward_rows_kernel<scalar_t, 8><<<rows, rl.threads, 0, stream>>>(g, y, gx, n, log); break;
        default:
          softmax_backward_block_kernel<scalar_t><<<rows, kBlockRowThreads, 0, stream>>>(g, y, gx, n, log);
          break;
      }
    } else {
      const int threads = 256;
      softmax_backward_columns_kernel<scalar_t>
          <<<static_cast<unsigned>(ceil_div(outer * inner, threads)), threads, 0, stream>>>(g, y, gx, outer, n, inner,
                                                                                            log);
    }
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace ember::cuda
