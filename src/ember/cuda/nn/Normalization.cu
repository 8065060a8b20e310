// CUDA kernels of batch_norm and group_norm (instance norm is batch_norm on
// a (1, N*C, ...) view, in Python), forward and backward. Statistics as
// PyTorch's CUDA kernels: Welford in the accumulate type (float for 16-bit
// inputs, whose batch-norm statistics are float32 as on PyTorch's CUDA),
// running statistics updated with the unbiased variance, normalised values
// computed as ((x - mean) * invstd) * weight + bias for batch norm and
// x * (rstd * gamma) + (beta - rstd * gamma * mean) for group norm.
#include <array>
#include <cmath>
#include <optional>

#include "ember/cuda/nn/NnCommon.cuh"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda::nn {
namespace {

constexpr int kMeta = static_cast<int>(DeviceType::Meta);
constexpr int kReduceThreads = 512;

template <typename A>
struct Welford {
  A mean = 0, m2 = 0;
  int64_t n = 0;
  __device__ void add(A v) {
    ++n;
    const A d = v - mean;
    mean += d / static_cast<A>(n);
    m2 += d * (v - mean);
  }
  __device__ void merge(const Welford& o) {
    if (o.n == 0) return;
    if (n == 0) {
      *this = o;
      return;
    }
    const int64_t total = n + o.n;
    const A d = o.mean - mean;
    const A frac = static_cast<A>(o.n) / static_cast<A>(total);
    mean += d * frac;
    m2 += o.m2 + d * d * static_cast<A>(n) * frac;
    n = total;
  }
};

// Block-wide Welford merge (blockDim.x == kReduceThreads); the result is valid in thread 0.
template <typename A>
__device__ Welford<A> block_welford(Welford<A> w) {
  __shared__ A s_mean[kReduceThreads], s_m2[kReduceThreads];
  __shared__ int64_t s_n[kReduceThreads];
  s_mean[threadIdx.x] = w.mean;
  s_m2[threadIdx.x] = w.m2;
  s_n[threadIdx.x] = w.n;
  __syncthreads();
  for (int step = kReduceThreads / 2; step > 0; step /= 2) {
    if (threadIdx.x < step) {
      Welford<A> a{s_mean[threadIdx.x], s_m2[threadIdx.x], s_n[threadIdx.x]};
      Welford<A> b{s_mean[threadIdx.x + step], s_m2[threadIdx.x + step], s_n[threadIdx.x + step]};
      a.merge(b);
      s_mean[threadIdx.x] = a.mean;
      s_m2[threadIdx.x] = a.m2;
      s_n[threadIdx.x] = a.n;
    }
    __syncthreads();
  }
  return Welford<A>{s_mean[0], s_m2[0], s_n[0]};
}

// Block-wide sums of two values; valid in thread 0.
template <typename A>
__device__ void block_sum2(A& a, A& b) {
  __shared__ A s_a[kReduceThreads], s_b[kReduceThreads];
  s_a[threadIdx.x] = a;
  s_b[threadIdx.x] = b;
  __syncthreads();
  for (int step = kReduceThreads / 2; step > 0; step /= 2) {
    if (threadIdx.x < step) {
      s_a[threadIdx.x] += s_a[threadIdx.x + step];
      s_b[threadIdx.x] += s_b[threadIdx.x + step];
    }
    __syncthreads();
  }
  a = s_a[0];
  b = s_b[0];
}

template <typename A>
__device__ A inv_std(A var, double eps) {
  if (var < 0) var = 0;
  return static_cast<A>(1) / ::sqrt(var + static_cast<A>(eps));
}

// ---- batch norm ------------------------------------------------------------------------

// One block per channel over (N, S): mean, 1/std, and the running statistics.
template <typename T>
__global__ void bn_stats_kernel(const T* x, Acc<T>* mean, Acc<T>* invstd, Acc<T>* run_mean, Acc<T>* run_var, int64_t N,
                                int64_t C, int64_t S, double momentum, double eps) {
  using A = Acc<T>;
  const int64_t c = blockIdx.x;
  Welford<A> w;
  for (int64_t i = threadIdx.x; i < N * S; i += blockDim.x) {
    const int64_t n = i / S, s = i % S;
    w.add(widen(x[(n * C + c) * S + s]));
  }
  w = block_welford(w);
  if (threadIdx.x == 0) {
    const A var = w.n > 0 ? w.m2 / static_cast<A>(w.n) : A(NAN);
    const A m = w.n > 0 ? w.mean : A(NAN);
    mean[c] = m;
    invstd[c] = inv_std(var, eps);
    const A mom = static_cast<A>(momentum);
    if (run_mean) run_mean[c] = mom * m + (1 - mom) * run_mean[c];
    if (run_var) {
      const A unbiased = w.n > 1 ? w.m2 / static_cast<A>(w.n - 1) : A(NAN);
      run_var[c] = mom * unbiased + (1 - mom) * run_var[c];
    }
  }
}

template <typename A>
__global__ void bn_eval_invstd_kernel(const A* var, A* invstd, int64_t C, double eps) {
  EMBER_NN_GRID_LOOP(c, C) { invstd[c] = inv_std(var[c], eps); }
}

template <typename T>
__global__ void bn_apply_kernel(const T* x, T* y, const Acc<T>* mean, const Acc<T>* invstd, const Acc<T>* weight,
                                const Acc<T>* bias, int64_t total, int64_t C, int64_t S) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t c = (i / S) % C;
    const A w = weight ? weight[c] : A(1), b = bias ? bias[c] : A(0);
    y[i] = narrow<T>(((widen(x[i]) - mean[c]) * invstd[c]) * w + b);
  }
}

// One block per channel: sum(dy) and sum(dy * (x - mean)).
template <typename T>
__global__ void bn_backward_reduce_kernel(const T* dy, const T* x, const Acc<T>* mean, Acc<T>* sum_dy,
                                          Acc<T>* sum_dy_xmu, int64_t N, int64_t C, int64_t S) {
  using A = Acc<T>;
  const int64_t c = blockIdx.x;
  const A m = mean[c];
  A a = 0, b = 0;
  for (int64_t i = threadIdx.x; i < N * S; i += blockDim.x) {
    const int64_t off = ((i / S) * C + c) * S + i % S;
    const A g = widen(dy[off]);
    a += g;
    b += g * (widen(x[off]) - m);
  }
  block_sum2(a, b);
  if (threadIdx.x == 0) {
    sum_dy[c] = a;
    sum_dy_xmu[c] = b;
  }
}

template <typename T>
__global__ void bn_backward_input_kernel(const T* dy, const T* x, T* dx, const Acc<T>* mean, const Acc<T>* invstd,
                                         const Acc<T>* weight, const Acc<T>* sum_dy, const Acc<T>* sum_dy_xmu,
                                         int64_t total, int64_t C, int64_t S, int64_t count, bool train) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t c = (i / S) % C;
    const A w = weight ? weight[c] : A(1);
    const A g = widen(dy[i]);
    if (!train) {
      dx[i] = narrow<T>(g * invstd[c] * w);
      continue;
    }
    // PyTorch's order: (dy - mean(dy) - (x - mean) * invstd^2 * mean(dy * (x - mean))) * (weight * invstd).
    const A norm = static_cast<A>(1) / static_cast<A>(count);
    const A mean_dy = sum_dy[c] * norm;
    const A proj = invstd[c] * invstd[c] * sum_dy_xmu[c] * norm;
    dx[i] = narrow<T>((g - mean_dy - (widen(x[i]) - mean[c]) * proj) * (w * invstd[c]));
  }
}

template <typename A>
__global__ void bn_param_grads_kernel(const A* sum_dy, const A* sum_dy_xmu, const A* invstd, A* gw, A* gb, int64_t C) {
  EMBER_NN_GRID_LOOP(c, C) {
    if (gw) gw[c] = sum_dy_xmu[c] * invstd[c];
    if (gb) gb[c] = sum_dy[c];
  }
}

// ---- group norm ------------------------------------------------------------------------

// One block per (n, g) row of D elements: mean and rstd, stored in T.
template <typename T>
__global__ void gn_stats_kernel(const T* x, T* mean, T* rstd, int64_t D, double eps) {
  using A = Acc<T>;
  const int64_t row = blockIdx.x;
  Welford<A> w;
  for (int64_t i = threadIdx.x; i < D; i += blockDim.x) w.add(widen(x[row * D + i]));
  w = block_welford(w);
  if (threadIdx.x == 0) {
    const A var = w.n > 0 ? w.m2 / static_cast<A>(w.n) : A(0);
    mean[row] = narrow<T>(w.mean);
    rstd[row] = narrow<T>(inv_std(var, eps));
  }
}

template <typename T>
__global__ void gn_apply_kernel(const T* x, T* y, const T* mean, const T* rstd, const T* gamma, const T* beta,
                                int64_t total, int64_t C, int64_t HxW, int64_t group) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t c = (i / HxW) % C, n = i / (HxW * C);
    const int64_t ng = n * group + c / (C / group);
    const A r = widen(rstd[ng]), m = widen(mean[ng]);
    const A a = gamma ? r * widen(gamma[c]) : r;
    const A b = (beta ? widen(beta[c]) : A(0)) - a * m;
    y[i] = narrow<T>(widen(x[i]) * a + b);
  }
}

// One block per (n, c): sum(dy * x) and sum(dy) over the plane.
template <typename T>
__global__ void gn_internal_grads_kernel(const T* dy, const T* x, Acc<T>* ds, Acc<T>* db, int64_t HxW) {
  using A = Acc<T>;
  const int64_t nc = blockIdx.x;
  A a = 0, b = 0;
  for (int64_t i = threadIdx.x; i < HxW; i += blockDim.x) {
    const A g = widen(dy[nc * HxW + i]);
    a += g * widen(x[nc * HxW + i]);
    b += g;
  }
  block_sum2(a, b);
  if (threadIdx.x == 0) {
    ds[nc] = a;
    db[nc] = b;
  }
}

// Per (n, g): the coefficients c2, c3 of dx = rstd * gamma * dy + c2 * x + c3.
template <typename T>
__global__ void gn_backward_params_kernel(const T* mean, const T* rstd, const T* gamma, const Acc<T>* ds,
                                          const Acc<T>* db, Acc<T>* c2, Acc<T>* c3, int64_t N, int64_t C, int64_t HxW,
                                          int64_t group) {
  using A = Acc<T>;
  const int64_t D = C / group;
  EMBER_NN_GRID_LOOP(ng, N * group) {
    const int64_t n = ng / group, g = ng % group;
    A sum_ds = 0, sum_db = 0;
    for (int64_t d = 0; d < D; ++d) {
      const int64_t c = g * D + d;
      const A gm = gamma ? widen(gamma[c]) : A(1);
      sum_ds += ds[n * C + c] * gm;
      sum_db += db[n * C + c] * gm;
    }
    const A s = static_cast<A>(1) / static_cast<A>(D * HxW);
    const A r = widen(rstd[ng]), m = widen(mean[ng]);
    const A x = (sum_db * m - sum_ds) * r * r * r * s;
    c2[ng] = x;
    c3[ng] = -x * m - sum_db * r * s;
  }
}

template <typename T>
__global__ void gn_backward_input_kernel(const T* dy, const T* x, T* dx, const T* rstd, const T* gamma,
                                         const Acc<T>* c2, const Acc<T>* c3, int64_t total, int64_t C, int64_t HxW,
                                         int64_t group) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t c = (i / HxW) % C, n = i / (HxW * C);
    const int64_t ng = n * group + c / (C / group);
    const A c1 = gamma ? widen(rstd[ng]) * widen(gamma[c]) : widen(rstd[ng]);
    dx[i] = narrow<T>(c1 * widen(dy[i]) + c2[ng] * widen(x[i]) + c3[ng]);
  }
}

template <typename T>
__global__ void gn_param_grads_kernel(const T* mean, const T* rstd, const Acc<T>* ds, const Acc<T>* db, T* dgamma,
                                      T* dbeta, int64_t N, int64_t C, int64_t group) {
  using A = Acc<T>;
  const int64_t D = C / group;
  EMBER_NN_GRID_LOOP(c, C) {
    A sg = 0, sb = 0;
    for (int64_t n = 0; n < N; ++n) {
      const int64_t ng = n * group + c / D;
      sg += (ds[n * C + c] - db[n * C + c] * widen(mean[ng])) * widen(rstd[ng]);
      sb += db[n * C + c];
    }
    if (dgamma) dgamma[c] = narrow<T>(sg);
    if (dbeta) dbeta[c] = narrow<T>(sb);
  }
}

// ---- host side --------------------------------------------------------------------------

Tensor meta_of(const Tensor& t) {
  if (!t.defined()) return t;
  return ember::empty_strided(t.sizes(), t.strides(), t.dtype(), Device(DeviceType::Meta));
}
std::optional<Tensor> meta_of(const std::optional<Tensor>& t) {
  if (!t || !t->defined()) return std::nullopt;
  return meta_of(*t);
}
Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

template <typename P>
P* ptr_or_null(const Tensor& t) {
  return t.defined() ? static_cast<P*>(t.data_ptr()) : nullptr;
}

ScalarType acc_dtype(ScalarType t) { return t == ScalarType::Double ? ScalarType::Double : ScalarType::Float; }

// t in dtype, contiguous (undefined stays undefined).
Tensor as(const Tensor& t, ScalarType dtype) { return t.defined() ? t.to(dtype).contiguous() : t; }

std::tuple<Tensor, Tensor, Tensor> batch_norm_cuda(const Tensor& input, const std::optional<Tensor>& weight,
                                                   const std::optional<Tensor>& bias,
                                                   const std::optional<Tensor>& running_mean,
                                                   const std::optional<Tensor>& running_var, bool training,
                                                   double momentum, double eps) {
  dispatch::native_batch_norm_kernels[kMeta](meta_of(input), meta_of(weight), meta_of(bias), meta_of(running_mean),
                                             meta_of(running_var), training, momentum, eps);
  const ScalarType dtype = input.dtype(), acc = acc_dtype(dtype);
  const Device device = input.device();
  const int64_t N = input.size(0), C = input.size(1);
  const int64_t S = N > 0 && C > 0 ? input.numel() / (N * C) : 0;
  Tensor y = ember::empty(input.sizes(), dtype, device);
  Tensor mean, invstd;
  const Tensor x = input.contiguous();
  const Tensor w = as(opt(weight), acc), b = as(opt(bias), acc);
  cudaStream_t stream = current_stream(device.index);
  Tensor rm = opt(running_mean), rv = opt(running_var);
  dispatch_floating(dtype, "batch_norm_cuda", [&](auto tag) {
    using T = decltype(tag);
    using A = Acc<T>;
    if (training) {
      mean = ember::empty({C}, acc, device);
      invstd = ember::empty({C}, acc, device);
      Tensor rm_acc = as(rm, acc), rv_acc = as(rv, acc);
      if (C > 0) {
        bn_stats_kernel<T><<<static_cast<unsigned>(C), kReduceThreads, 0, stream>>>(
            static_cast<const T*>(x.data_ptr()), ptr_or_null<A>(mean), ptr_or_null<A>(invstd), ptr_or_null<A>(rm_acc),
            ptr_or_null<A>(rv_acc), N, C, S, momentum, eps);
        EMBER_CUDA_KERNEL_LAUNCH_CHECK();
      }
      // The running statistics keep their dtype and layout.
      if (rm.defined() && !rm_acc.is_same(rm)) rm.copy_(rm_acc.view(rm.sizes()));
      if (rv.defined() && !rv_acc.is_same(rv)) rv.copy_(rv_acc.view(rv.sizes()));
    } else {
      mean = as(rm, acc);
      invstd = ember::empty({C}, acc, device);
      const Tensor var = as(rv, acc);
      if (C > 0) {
        bn_eval_invstd_kernel<A>
            <<<blocks_for(C), kThreads, 0, stream>>>(ptr_or_null<const A>(var), ptr_or_null<A>(invstd), C, eps);
        EMBER_CUDA_KERNEL_LAUNCH_CHECK();
      }
    }
    const int64_t total = x.numel();
    if (total > 0) {
      bn_apply_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
          static_cast<const T*>(x.data_ptr()), static_cast<T*>(y.data_ptr()), ptr_or_null<const A>(mean),
          ptr_or_null<const A>(invstd), ptr_or_null<const A>(w), ptr_or_null<const A>(b), total, C, S);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    }
  });
  if (!training) {
    // In evaluation PyTorch's CUDA kernel returns a copy of the running mean
    // and 1 / sqrt(running_var + eps), in the accumulation dtype.
    if (!mean.defined()) return {y, ember::empty({0}, acc, device), ember::empty({0}, acc, device)};
    return {y, mean.is_same(rm) ? mean.clone() : mean, invstd};
  }
  return {y, mean, invstd};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_cuda(const Tensor& grad_out, const Tensor& input,
                                                            const std::optional<Tensor>& weight,
                                                            const std::optional<Tensor>& running_mean,
                                                            const std::optional<Tensor>& running_var,
                                                            const std::optional<Tensor>& save_mean,
                                                            const std::optional<Tensor>& save_invstd, bool train,
                                                            double eps, std::array<bool, 3> mask) {
  const ScalarType dtype = input.dtype(), acc = acc_dtype(dtype);
  const Device device = input.device();
  EMBER_CHECK(input.dim() >= 2, "batch_norm_backward: expected at least 2-D input, got ", input.dim(), "-D");
  const int64_t N = input.size(0), C = input.size(1);
  const int64_t S = N > 0 && C > 0 ? input.numel() / (N * C) : 0;
  const Tensor w = as(opt(weight), acc);
  Tensor mean, invstd;
  cudaStream_t stream = current_stream(device.index);
  if (train) {
    mean = as(opt(save_mean), acc);
    invstd = as(opt(save_invstd), acc);
  } else {
    mean = as(opt(running_mean), acc);
    invstd = ember::empty({C}, acc, device);
  }
  EMBER_CHECK(mean.defined() && mean.numel() == C, "batch_norm_backward: statistics should contain ", C, " elements");
  const Tensor x = input.contiguous(), dy = grad_out.to(dtype).contiguous();
  Tensor sum_dy = ember::zeros({C}, acc, device), sum_dy_xmu = ember::zeros({C}, acc, device);
  Tensor gx, gw, gb;
  dispatch_floating(dtype, "batch_norm_backward_cuda", [&](auto tag) {
    using T = decltype(tag);
    using A = Acc<T>;
    if (!train && C > 0) {
      const Tensor var = as(opt(running_var), acc);
      bn_eval_invstd_kernel<A>
          <<<blocks_for(C), kThreads, 0, stream>>>(ptr_or_null<const A>(var), ptr_or_null<A>(invstd), C, eps);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    }
    if ((mask[1] || mask[2] || (train && mask[0])) && x.numel() > 0) {
      bn_backward_reduce_kernel<T><<<static_cast<unsigned>(C), kReduceThreads, 0, stream>>>(
          static_cast<const T*>(dy.data_ptr()), static_cast<const T*>(x.data_ptr()), ptr_or_null<const A>(mean),
          ptr_or_null<A>(sum_dy), ptr_or_null<A>(sum_dy_xmu), N, C, S);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    }
    if (mask[0]) {
      gx = ember::empty(input.sizes(), dtype, device);
      const int64_t total = x.numel();
      if (total > 0) {
        bn_backward_input_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
            static_cast<const T*>(dy.data_ptr()), static_cast<const T*>(x.data_ptr()), static_cast<T*>(gx.data_ptr()),
            ptr_or_null<const A>(mean), ptr_or_null<const A>(invstd), ptr_or_null<const A>(w),
            ptr_or_null<const A>(sum_dy), ptr_or_null<const A>(sum_dy_xmu), total, C, S, N * S, train);
        EMBER_CUDA_KERNEL_LAUNCH_CHECK();
      }
    }
    if ((mask[1] || mask[2]) && C > 0) {
      Tensor gw_acc = mask[1] ? ember::empty({C}, acc, device) : Tensor();
      Tensor gb_acc = mask[2] ? ember::empty({C}, acc, device) : Tensor();
      bn_param_grads_kernel<A><<<blocks_for(C), kThreads, 0, stream>>>(
          ptr_or_null<const A>(sum_dy), ptr_or_null<const A>(sum_dy_xmu), ptr_or_null<const A>(invstd),
          ptr_or_null<A>(gw_acc), ptr_or_null<A>(gb_acc), C);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
      // A parameter's gradient has the parameter's dtype.
      const ScalarType pt = weight && weight->defined() ? weight->dtype() : dtype;
      if (mask[1]) gw = gw_acc.to(pt);
      if (mask[2]) gb = gb_acc.to(pt);
    }
  });
  return {gx, gw, gb};
}

std::tuple<Tensor, Tensor, Tensor> group_norm_cuda(const Tensor& input, const std::optional<Tensor>& weight,
                                                   const std::optional<Tensor>& bias, int64_t N, int64_t C, int64_t HxW,
                                                   int64_t group, double eps) {
  dispatch::native_group_norm_kernels[kMeta](meta_of(input), meta_of(weight), meta_of(bias), N, C, HxW, group, eps);
  const ScalarType dtype = input.dtype();
  const Device device = input.device();
  Tensor y = ember::empty(input.sizes(), dtype, device);
  Tensor mean = ember::empty({N, group}, dtype, device), rstd = ember::empty({N, group}, dtype, device);
  const Tensor x = input.contiguous(), gamma = as(opt(weight), dtype), beta = as(opt(bias), dtype);
  cudaStream_t stream = current_stream(device.index);
  const int64_t D = group > 0 ? C / group * HxW : 0;
  dispatch_floating(dtype, "GroupNormKernelImpl", [&](auto tag) {
    using T = decltype(tag);
    if (N * group > 0) {
      gn_stats_kernel<T><<<static_cast<unsigned>(N * group), kReduceThreads, 0, stream>>>(
          static_cast<const T*>(x.data_ptr()), static_cast<T*>(mean.data_ptr()), static_cast<T*>(rstd.data_ptr()), D,
          eps);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    }
    const int64_t total = x.numel();
    if (total > 0) {
      gn_apply_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
          static_cast<const T*>(x.data_ptr()), static_cast<T*>(y.data_ptr()), static_cast<const T*>(mean.data_ptr()),
          static_cast<const T*>(rstd.data_ptr()), ptr_or_null<const T>(gamma), ptr_or_null<const T>(beta), total, C,
          HxW, group);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    }
  });
  return {y, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> group_norm_backward_cuda(const Tensor& grad_out, const Tensor& input,
                                                            const Tensor& mean_in, const Tensor& rstd_in,
                                                            const std::optional<Tensor>& weight, int64_t N, int64_t C,
                                                            int64_t HxW, int64_t group, std::array<bool, 3> mask) {
  EMBER_CHECK(group > 0 && C % group == 0 && input.numel() == N * C * HxW,
              "group_norm_backward: input does not match N, C, HxW and group");
  const ScalarType dtype = input.dtype(), acc = acc_dtype(dtype);
  const Device device = input.device();
  const Tensor x = input.contiguous(), dy = grad_out.to(dtype).contiguous();
  const Tensor mean = as(mean_in, dtype), rstd = as(rstd_in, dtype), gamma = as(opt(weight), dtype);
  Tensor ds = ember::zeros({N, C}, acc, device), db = ember::zeros({N, C}, acc, device);
  Tensor gx, gw, gb;
  cudaStream_t stream = current_stream(device.index);
  dispatch_floating(dtype, "GroupNormBackwardKernelImpl", [&](auto tag) {
    using T = decltype(tag);
    using A = Acc<T>;
    if (N * C > 0 && HxW > 0) {
      gn_internal_grads_kernel<T><<<static_cast<unsigned>(N * C), kReduceThreads, 0, stream>>>(
          static_cast<const T*>(dy.data_ptr()), static_cast<const T*>(x.data_ptr()), ptr_or_null<A>(ds),
          ptr_or_null<A>(db), HxW);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    }
    if (mask[0]) {
      gx = ember::empty(input.sizes(), dtype, device);
      const int64_t total = x.numel();
      if (total > 0) {
        Tensor c2 = ember::empty({N, group}, acc, device), c3 = ember::empty({N, group}, acc, device);
        gn_backward_params_kernel<T><<<blocks_for(N * group), kThreads, 0, stream>>>(
            static_cast<const T*>(mean.data_ptr()), static_cast<const T*>(rstd.data_ptr()), ptr_or_null<const T>(gamma),
            ptr_or_null<const A>(ds), ptr_or_null<const A>(db), ptr_or_null<A>(c2), ptr_or_null<A>(c3), N, C, HxW,
            group);
        EMBER_CUDA_KERNEL_LAUNCH_CHECK();
        gn_backward_input_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
            static_cast<const T*>(dy.data_ptr()), static_cast<const T*>(x.data_ptr()), static_cast<T*>(gx.data_ptr()),
            static_cast<const T*>(rstd.data_ptr()), ptr_or_null<const T>(gamma), ptr_or_null<const A>(c2),
            ptr_or_null<const A>(c3), total, C, HxW, group);
        EMBER_CUDA_KERNEL_LAUNCH_CHECK();
      }
    }
    if (mask[1] || mask[2]) {
      if (mask[1]) gw = ember::empty({C}, dtype, device);
      if (mask[2]) gb = ember::empty({C}, dtype, device);
      if (C > 0) {
        gn_param_grads_kernel<T><<<blocks_for(C), kThreads, 0, stream>>>(
            static_cast<const T*>(mean.data_ptr()), static_cast<const T*>(rstd.data_ptr()), ptr_or_null<const A>(ds),
            ptr_or_null<const A>(db), ptr_or_null<T>(gw), ptr_or_null<T>(gb), N, C, group);
        EMBER_CUDA_KERNEL_LAUNCH_CHECK();
      }
    }
  });
  return {gx, gw, gb};
}

const bool registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::native_batch_norm_kernels[cuda] = &batch_norm_cuda;
  dispatch::native_batch_norm_backward_kernels[cuda] = &batch_norm_backward_cuda;
  dispatch::native_group_norm_kernels[cuda] = &group_norm_cuda;
  dispatch::native_group_norm_backward_kernels[cuda] = &group_norm_backward_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda::nn
