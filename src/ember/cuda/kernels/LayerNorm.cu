// layer_norm forward and backward on CUDA over an M x D row-major input, in
// float or double. The forward of a 16-bit input (layer_norm_16bit_stub)
// reads and writes the 16-bit data and computes in float, with float
// parameters and statistics, as PyTorch's CUDA kernel does; its backward
// receives the data converted to float.
// Forward: one block per row; rows aligned to 16 bytes that fit in registers
// are read once with 16-byte loads (mean, then the mean squared deviation),
// others use Welford per thread and Chan's merge across the block; mean and
// rstd = 1 / math_sqrt(var + eps) are saved per row. Backward: one block per
// row for dx (rows held in registers as in the forward where they fit);
// dgamma/dbeta are column sums over slices of rows (partials in global
// memory), then one pass over the slices.
#include "ember/cuda/kernels/Reduce.cuh"
#include "ember/cuda/kernels/ReduceKernels.h"

namespace ember::cuda {
namespace {

template <typename T>
struct Moments {
  T mean, m2, n;
};

template <typename T>
__device__ __forceinline__ Moments<T> merge(Moments<T> a, Moments<T> b) {
  if (a.n == T(0)) return b;
  if (b.n == T(0)) return a;
  const T n = a.n + b.n, delta = b.mean - a.mean, nb_over_n = b.n / n;
  return {a.mean + delta * nb_over_n, a.m2 + b.m2 + delta * delta * a.n * nb_over_n, n};
}

template <typename T>
__device__ __forceinline__ Moments<T> shfl_xor_moments(Moments<T> v, int d) {
  return {__shfl_xor_sync(0xffffffffu, v.mean, d), __shfl_xor_sync(0xffffffffu, v.m2, d),
          __shfl_xor_sync(0xffffffffu, v.n, d)};
}

// T: the data's type; A: the computation's, the parameters' and the statistics' (float for 16-bit data).
template <typename T, typename A>
__global__ void layer_norm_kernel_impl(const T* x, const A* gamma, const A* beta, T* y, A* mean_out, A* rstd_out,
                                       int64_t D, A eps) {
  __shared__ Moments<A> smem[32];
  const int64_t row = blockIdx.x;
  x += row * D;
  y += row * D;
  Moments<A> w{A(0), A(0), A(0)};
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
    const A v = convert<A>(x[j]);
    w.n += A(1);
    const A delta = v - w.mean;
    w.mean += delta / w.n;
    w.m2 += delta * (v - w.mean);
  }
  for (int d = 16; d > 0; d /= 2) w = merge(w, shfl_xor_moments(w, d));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
  if (lane == 0) smem[warp] = w;
  __syncthreads();
  w = lane < nwarps ? smem[lane] : Moments<A>{A(0), A(0), A(0)};
  for (int d = 16; d > 0; d /= 2) w = merge(w, shfl_xor_moments(w, d));
  const A mean = w.mean;
  const A var = w.m2 / A(D);
  const A rstd = A(1) / math_sqrt(var + eps);
  if (threadIdx.x == 0) {
    mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
    A v = (convert<A>(x[j]) - mean) * rstd;
    if (gamma) v *= gamma[j];
    if (beta) v += beta[j];
    y[j] = convert<T>(v);
  }
}

template <typename T>
__device__ T block_sum(T v, T* smem);

// The W parameters of vector i (elements i * W ...) in 16-byte loads: one for
// parameters of the data's type, two for float parameters of 16-bit data.
template <int W, typename A>
__device__ __forceinline__ void load_params(const A* p, int64_t i, A (&out)[W]) {
  constexpr int kPer = 16 / sizeof(A);
  static_assert(W % kPer == 0, "whole 16-byte loads");
  const auto* pv = reinterpret_cast<const VecOf<kPer, A>*>(p + i * W);
#pragma unroll
  for (int c = 0; c < W / kPer; ++c) {
    const VecOf<kPer, A> v = pv[c];
#pragma unroll
    for (int j = 0; j < kPer; ++j) out[c * kPer + j] = v.v[j];
  }
}

// One block per row held in registers (rows aligned to 16 bytes; plan_row_launch):
// one read of x, 16-byte accesses; mean, then the variance as the mean of
// squared deviations from it (two sums over the registers), in A.
template <typename T, typename A, int kVecs>
__global__ void __launch_bounds__(kRowMaxThreads)
    layer_norm_rows_kernel(const T* x, const A* gamma, const A* beta, T* y, A* mean_out, A* rstd_out, int64_t D,
                           A eps) {
  constexpr int W = 16 / sizeof(T);
  using Vec = VecOf<W, T>;
  __shared__ A smem[32];
  const int64_t row = blockIdx.x;
  const int64_t nvec = D / W;
  const auto* xv = reinterpret_cast<const Vec*>(x + row * D);
  auto* yv = reinterpret_cast<Vec*>(y + row * D);
  Vec v[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    if (i < nvec) v[k] = xv[i];
  }
  A s = 0;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    if (threadIdx.x + int64_t(k) * blockDim.x < nvec) {
#pragma unroll
      for (int j = 0; j < W; ++j) s += convert<A>(v[k].v[j]);
    }
  }
  const A mean = block_sum(s, smem) / A(D);
  A sq = 0;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    if (threadIdx.x + int64_t(k) * blockDim.x < nvec) {
#pragma unroll
      for (int j = 0; j < W; ++j) {
        const A d = convert<A>(v[k].v[j]) - mean;
        sq += d * d;
      }
    }
  }
  const A var = block_sum(sq, smem) / A(D);
  const A rstd = A(1) / math_sqrt(var + eps);
  if (threadIdx.x == 0) {
    mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    if (i < nvec) {
      A o[W];
#pragma unroll
      for (int j = 0; j < W; ++j) o[j] = (convert<A>(v[k].v[j]) - mean) * rstd;
      if (gamma) {
        A g[W];
        load_params<W>(gamma, i, g);
#pragma unroll
        for (int j = 0; j < W; ++j) o[j] *= g[j];
      }
      if (beta) {
        A b[W];
        load_params<W>(beta, i, b);
#pragma unroll
        for (int j = 0; j < W; ++j) o[j] += b[j];
      }
      Vec out;
#pragma unroll
      for (int j = 0; j < W; ++j) out.v[j] = convert<T>(o[j]);
      yv[i] = out;
    }
  }
}

template <typename T>
__device__ T block_sum(T v, T* smem) {
  for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xffffffffu, v, d);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
  __syncthreads();
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = lane < nwarps ? smem[lane] : T(0);
  for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;
}

// dx = rstd * (dy*g - mean(dy*g) - xhat * mean(dy*g*xhat)), xhat = (x - mean) * rstd.
template <typename T>
__global__ void layer_norm_dx_kernel(const T* dy, const T* x, const T* mean, const T* rstd, const T* gamma, T* dx,
                                     int64_t D) {
  __shared__ T smem[32];
  const int64_t row = blockIdx.x;
  dy += row * D;
  x += row * D;
  dx += row * D;
  const T mu = mean[row], rs = rstd[row];
  T a = 0, b = 0;
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
    const T dyg = gamma ? dy[j] * gamma[j] : dy[j];
    a += dyg;
    b += dyg * (x[j] - mu) * rs;
  }
  a = block_sum(a, smem);
  b = block_sum(b, smem);
  const T inv_d = T(1) / T(D);
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
    const T dyg = gamma ? dy[j] * gamma[j] : dy[j];
    const T xhat = (x[j] - mu) * rs;
    dx[j] = rs * (dyg - a * inv_d - xhat * b * inv_d);
  }
}

// dx with one block per row, dy, x and gamma held in registers (rows_launch).
template <typename T, int kVecs>
__global__ void __launch_bounds__(kRowMaxThreads)
    layer_norm_dx_rows_kernel(const T* dy, const T* x, const T* mean, const T* rstd, const T* gamma, T* dx, int64_t D) {
  constexpr int W = 16 / sizeof(T);
  using Vec = VecOf<W, T>;
  __shared__ T smem[32];
  const int64_t row = blockIdx.x, nvec = D / W;
  const auto* dyv = reinterpret_cast<const Vec*>(dy + row * D);
  const auto* xv = reinterpret_cast<const Vec*>(x + row * D);
  const auto* gv = reinterpret_cast<const Vec*>(gamma);
  auto* dxv = reinterpret_cast<Vec*>(dx + row * D);
  Vec dyg[kVecs], xhat[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    if (i < nvec) {
      dyg[k] = dyv[i];
      xhat[k] = xv[i];
    }
  }
  const T mu = mean[row], rs = rstd[row];
  T a = 0, b = 0;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    if (i < nvec) {
      Vec g;
      if (gamma) g = gv[i];
#pragma unroll
      for (int j = 0; j < W; ++j) {
        if (gamma) dyg[k].v[j] *= g.v[j];
        xhat[k].v[j] = (xhat[k].v[j] - mu) * rs;
        a += dyg[k].v[j];
        b += dyg[k].v[j] * xhat[k].v[j];
      }
    }
  }
  a = block_sum(a, smem);
  b = block_sum(b, smem);
  const T inv_d = T(1) / T(D);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    if (i < nvec) {
      Vec o;
#pragma unroll
      for (int j = 0; j < W; ++j) o.v[j] = rs * (dyg[k].v[j] - a * inv_d - xhat[k].v[j] * b * inv_d);
      dxv[i] = o;
    }
  }
}

constexpr int kColThreadsX = 32, kColThreadsY = 16;
constexpr int64_t kRowsPerSlice = 256;

// Partial column sums of dy * xhat (dgamma) and dy (dbeta) over one slice of rows.
template <typename T>
__global__ void layer_norm_gamma_beta_kernel(const T* dy, const T* x, const T* mean, const T* rstd, T* part_g,
                                             T* part_b, int64_t M, int64_t D, int64_t rows_per_slice) {
  __shared__ T sg[kColThreadsY][kColThreadsX + 1];
  __shared__ T sb[kColThreadsY][kColThreadsX + 1];
  const int64_t j = int64_t(blockIdx.x) * kColThreadsX + threadIdx.x;
  const int64_t r0 = int64_t(blockIdx.y) * rows_per_slice, r1 = M < r0 + rows_per_slice ? M : r0 + rows_per_slice;
  T g = 0, b = 0;
  if (j < D) {
    for (int64_t r = r0 + threadIdx.y; r < r1; r += kColThreadsY) {
      const T d = dy[r * D + j];
      g += d * (x[r * D + j] - mean[r]) * rstd[r];
      b += d;
    }
  }
  sg[threadIdx.y][threadIdx.x] = g;
  sb[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y == 0 && j < D) {
    for (int k = 1; k < kColThreadsY; ++k) {
      g += sg[k][threadIdx.x];
      b += sb[k][threadIdx.x];
    }
    part_g[int64_t(blockIdx.y) * D + j] = g;
    part_b[int64_t(blockIdx.y) * D + j] = b;
  }
}

template <typename T>
__global__ void sum_slices_kernel(const T* part, T* out, int64_t slices, int64_t D) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= D || !out) return;
  T s = 0;
  for (int64_t k = 0; k < slices; ++k) s += part[k * D + j];
  out[j] = s;
}

// Runs f(T{}) for float or double (16-bit inputs are converted by the caller).
template <typename F>
void dispatch_float_double(ScalarType dtype, const char* name, const F& f) {
  if (dtype == ScalarType::Float) return f(float{});
  if (dtype == ScalarType::Double) return f(double{});
  throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(dtype), "'"));
}

// The rows kernel's launch for rows of D elements, or vecs == 0 when a
// pointer (null ones aside) is not 16-byte aligned or D is not a whole number of vectors.
template <typename T>
RowLaunch rows_launch(std::initializer_list<const void*> pointers, int64_t D) {
  constexpr int W = 16 / sizeof(T);
  for (const void* p : pointers) {
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return RowLaunch{};
  }
  return D % W == 0 ? plan_row_launch(D / W) : RowLaunch{};
}

int row_threads(int64_t D) { return std::min(512, std::max(32, next_pow2((D + 3) / 4))); }

}  // namespace

namespace {
// T: the data's type, A: the computation's (see layer_norm_kernel_impl).
template <typename T, typename A>
void launch_layer_norm(const void* x, const void* gamma, const void* beta, void* y, void* mean, void* rstd, int64_t M,
                       int64_t D, double eps) {
  const T* x_ = static_cast<const T*>(x);
  const A* g_ = static_cast<const A*>(gamma);
  const A* b_ = static_cast<const A*>(beta);
  T* y_ = static_cast<T*>(y);
  A* mean_ = static_cast<A*>(mean);
  A* rstd_ = static_cast<A*>(rstd);
  const A eps_ = static_cast<A>(eps);
  const unsigned rows = static_cast<unsigned>(M);
  cudaStream_t stream = current_stream();
  const RowLaunch rl = rows_launch<T>({x, gamma, beta, y}, D);
  switch (rl.vecs) {
    case 1:
      layer_norm_rows_kernel<T, A, 1><<<rows, rl.threads, 0, stream>>>(x_, g_, b_, y_, mean_, rstd_, D, eps_);
      break;
    case 2:
      layer_norm_rows_kernel<T, A, 2><<<rows, rl.threads, 0, stream>>>(x_, g_, b_, y_, mean_, rstd_, D, eps_);
      break;
    case 4:
      layer_norm_rows_kernel<T, A, 4><<<rows, rl.threads, 0, stream>>>(x_, g_, b_, y_, mean_, rstd_, D, eps_);
      break;
    case 8:
      layer_norm_rows_kernel<T, A, 8><<<rows, rl.threads, 0, stream>>>(x_, g_, b_, y_, mean_, rstd_, D, eps_);
      break;
    default:
      layer_norm_kernel_impl<T, A><<<rows, row_threads(D), 0, stream>>>(x_, g_, b_, y_, mean_, rstd_, D, eps_);
      break;
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}
}  // namespace

void layer_norm_kernel(ScalarType dtype, const void* x, const void* gamma, const void* beta, void* y, void* mean,
                       void* rstd, int64_t M, int64_t D, double eps) {
  dispatch_float_double(dtype, "layer_norm_cuda", [&](auto tag) {
    using T = decltype(tag);
    launch_layer_norm<T, T>(x, gamma, beta, y, mean, rstd, M, D, eps);
  });
}

void layer_norm_16bit_kernel(ScalarType dtype, const void* x, const void* gamma, const void* beta, void* y, void* mean,
                             void* rstd, int64_t M, int64_t D, double eps) {
  if (dtype == ScalarType::Half) return launch_layer_norm<__half, float>(x, gamma, beta, y, mean, rstd, M, D, eps);
  if (dtype == ScalarType::BFloat16) {
    return launch_layer_norm<__nv_bfloat16, float>(x, gamma, beta, y, mean, rstd, M, D, eps);
  }
  throw NotImplementedError(str_cat("\"layer_norm_cuda\" not implemented for '", dtype_message_name(dtype), "'"));
}

void layer_norm_backward_kernel(ScalarType dtype, const void* dy, const void* x, const void* mean, const void* rstd,
                                const void* gamma, void* dx, void* dgamma, void* dbeta, int64_t M, int64_t D) {
  dispatch_float_double(dtype, "layer_norm_backward_cuda", [&](auto tag) {
    using T = decltype(tag);
    {
      cudaStream_t stream = current_stream();
      const T* dy_ = static_cast<const T*>(dy);
      const T* x_ = static_cast<const T*>(x);
      const T* mean_ = static_cast<const T*>(mean);
      const T* rstd_ = static_cast<const T*>(rstd);
      if (dx) {
        const T* g_ = static_cast<const T*>(gamma);
        T* dx_ = static_cast<T*>(dx);
        const unsigned rows = static_cast<unsigned>(M);
        const RowLaunch rl = rows_launch<T>({dy, x, gamma, dx}, D);
        switch (rl.vecs) {
          case 1:
            layer_norm_dx_rows_kernel<T, 1><<<rows, rl.threads, 0, stream>>>(dy_, x_, mean_, rstd_, g_, dx_, D);
            break;
          case 2:
            layer_norm_dx_rows_kernel<T, 2><<<rows, rl.threads, 0, stream>>>(dy_, x_, mean_, rstd_, g_, dx_, D);
            break;
          case 4:
            layer_norm_dx_rows_kernel<T, 4><<<rows, rl.threads, 0, stream>>>(dy_, x_, mean_, rstd_, g_, dx_, D);
            break;
          case 8:
            layer_norm_dx_rows_kernel<T, 8><<<rows, rl.threads, 0, stream>>>(dy_, x_, mean_, rstd_, g_, dx_, D);
            break;
          default:
            layer_norm_dx_kernel<T><<<rows, row_threads(D), 0, stream>>>(dy_, x_, mean_, rstd_, g_, dx_, D);
            break;
        }
        EMBER_CUDA_KERNEL_LAUNCH_CHECK();
      }
      if (dgamma || dbeta) {
        const int64_t rows_per_slice = std::max(kRowsPerSlice, ceil_div(M, 65535));  // grid.y limit
        const int64_t slices = ceil_div(M, rows_per_slice);
        Tensor part = ember::empty({2, slices, D}, dtype, Device(DeviceType::CUDA, current_device()));
        T* part_g = static_cast<T*>(part.data_ptr());
        T* part_b = part_g + slices * D;
        const dim3 grid(static_cast<unsigned>(ceil_div(D, kColThreadsX)), static_cast<unsigned>(slices));
        layer_norm_gamma_beta_kernel<T><<<grid, dim3(kColThreadsX, kColThreadsY), 0, stream>>>(
            dy_, x_, mean_, rstd_, part_g, part_b, M, D, rows_per_slice);
        EMBER_CUDA_KERNEL_LAUNCH_CHECK();
        const unsigned blocks = static_cast<unsigned>(ceil_div(D, 256));
        sum_slices_kernel<T><<<blocks, 256, 0, stream>>>(part_g, static_cast<T*>(dgamma), slices, D);
        sum_slices_kernel<T><<<blocks, 256, 0, stream>>>(part_b, static_cast<T*>(dbeta), slices, D);
        EMBER_CUDA_KERNEL_LAUNCH_CHECK();
      }
    }
  });
}

}  // namespace ember::cuda
