#pragma once
// The CUDA reduction engine: runs a reduction op over a ReducePlan (Note
// [Reduction plan] in cpu/ReduceStubs.h) with the launch of Note [CUDA
// reduction launch] (ReduceConfig.h).
//
// An op is a small struct with
//   using in_t, acc_t;
//   __device__ acc_t identity() const;
//   __device__ acc_t reduce(acc_t a, in_t v, int64_t r) const;  // r: reduced index
//   __device__ acc_t combine(acc_t a, acc_t b) const;
//   __device__ void write(int64_t o, acc_t a) const;  // o: output index
// combine must be associative; the order of combination is fixed by the launch,
// so results are deterministic.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <atomic>
#include <cstring>
#include <type_traits>

#include "ember/core/Error.h"
#include "ember/core/ScalarType.h"
#include "ember/cpu/ReduceStubs.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/kernels/ReduceConfig.h"
#include "ember/ops/Ops.h"

namespace ember::cuda {

// ---- element types and their computation types ---------------------------------------

// The device type of a dtype: Half and BFloat16 are CUDA's own 16-bit types
// (same bits as ember::Half / ember::BFloat16).
template <typename T>
struct DeviceScalar {
  using type = T;
};
template <>
struct DeviceScalar<Half> {
  using type = __half;
};
template <>
struct DeviceScalar<BFloat16> {
  using type = __nv_bfloat16;
};
template <typename T>
using device_t = typename DeviceScalar<T>::type;

// PyTorch's opmath: 16-bit floats compute in float.
template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<__half> {
  using type = float;
};
template <>
struct OpMath<__nv_bfloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename OpMath<T>::type;

template <typename To, typename From>
__device__ __forceinline__ To convert(From v) {
  if constexpr (std::is_same_v<From, __half>) {
    return static_cast<To>(__half2float(v));
  } else if constexpr (std::is_same_v<From, __nv_bfloat16>) {
    return static_cast<To>(__bfloat162float(v));
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

template <typename T>
__device__ __forceinline__ bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

// CUDA's math library by precision (names inside namespace ember would find
// the tensor operators ember::exp, ember::log, ...).
__device__ __forceinline__ float math_exp(float x) { return ::expf(x); }
__device__ __forceinline__ double math_exp(double x) { return ::exp(x); }
__device__ __forceinline__ float math_log(float x) { return ::logf(x); }
__device__ __forceinline__ double math_log(double x) { return ::log(x); }
__device__ __forceinline__ float math_sqrt(float x) { return ::sqrtf(x); }
__device__ __forceinline__ double math_sqrt(double x) { return ::sqrt(x); }
__device__ __forceinline__ float math_pow(float x, float y) { return ::powf(x, y); }
__device__ __forceinline__ double math_pow(double x, double y) { return ::pow(x, y); }

// Runs f with scalar_t bound to the device type of dtype (real dtypes).
#define EMBER_CUDA_CASE(NAME, CPP, ...)            \
  case ::ember::ScalarType::NAME: {                \
    using scalar_t = ::ember::cuda::device_t<CPP>; \
    return __VA_ARGS__();                          \
  }
#define EMBER_CUDA_DISPATCH_FLOATING(DTYPE, NAME, ...)                                                          \
  [&] {                                                                                                         \
    switch (DTYPE) {                                                                                            \
      EMBER_CUDA_CASE(Float, float, __VA_ARGS__)                                                                \
      EMBER_CUDA_CASE(Double, double, __VA_ARGS__)                                                              \
      EMBER_CUDA_CASE(Half, ::ember::Half, __VA_ARGS__)                                                         \
      EMBER_CUDA_CASE(BFloat16, ::ember::BFloat16, __VA_ARGS__)                                                 \
      default:                                                                                                  \
        throw ::ember::NotImplementedError(                                                                     \
            ::ember::str_cat("\"", NAME, "\" not implemented for '", ::ember::dtype_message_name(DTYPE), "'")); \
    }                                                                                                           \
  }()
#define EMBER_CUDA_DISPATCH_ALL(DTYPE, NAME, ...)                                                               \
  [&] {                                                                                                         \
    switch (DTYPE) {                                                                                            \
      EMBER_CUDA_CASE(Byte, uint8_t, __VA_ARGS__)                                                               \
      EMBER_CUDA_CASE(Char, int8_t, __VA_ARGS__)                                                                \
      EMBER_CUDA_CASE(Short, int16_t, __VA_ARGS__)                                                              \
      EMBER_CUDA_CASE(Int, int32_t, __VA_ARGS__)                                                                \
      EMBER_CUDA_CASE(Long, int64_t, __VA_ARGS__)                                                               \
      EMBER_CUDA_CASE(Bool, bool, __VA_ARGS__)                                                                  \
      EMBER_CUDA_CASE(Float, float, __VA_ARGS__)                                                                \
      EMBER_CUDA_CASE(Double, double, __VA_ARGS__)                                                              \
      EMBER_CUDA_CASE(Half, ::ember::Half, __VA_ARGS__)                                                         \
      EMBER_CUDA_CASE(BFloat16, ::ember::BFloat16, __VA_ARGS__)                                                 \
      default:                                                                                                  \
        throw ::ember::NotImplementedError(                                                                     \
            ::ember::str_cat("\"", NAME, "\" not implemented for '", ::ember::dtype_message_name(DTYPE), "'")); \
    }                                                                                                           \
  }()

// ---- warp and block combination -------------------------------------------------------

// Shuffles any trivially copyable value down by `delta` lanes, 4 bytes at a time.
template <typename T>
__device__ __forceinline__ T shfl_down(const T& v, unsigned delta, int width) {
  constexpr int kWords = (sizeof(T) + 3) / 4;
  unsigned words[kWords] = {};
  memcpy(words, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < kWords; ++i) words[i] = __shfl_down_sync(0xffffffffu, words[i], delta, width);
  T out;
  memcpy(&out, words, sizeof(T));
  return out;
}

// Combines the block_x values of each block row; the result is valid in x == 0.
// All threads of the block must call it. smem holds block_y * 32 accumulators.
template <typename Op, typename acc_t>
__device__ acc_t block_x_combine(const Op& op, acc_t v, acc_t* smem) {
  const int bx = blockDim.x;
  if (bx <= 32) {
    for (int d = bx / 2; d > 0; d /= 2) v = op.combine(v, shfl_down(v, d, bx));
    return v;
  }
  for (int d = 16; d > 0; d /= 2) v = op.combine(v, shfl_down(v, d, 32));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = bx / 32;
  acc_t* row = smem + threadIdx.y * 32;
  if (lane == 0) row[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < nwarps ? row[lane] : op.identity();
    for (int d = 16; d > 0; d /= 2) v = op.combine(v, shfl_down(v, d, 32));
  }
  return v;
}

// Combines the block_y values of each column; the result is valid in y == 0.
// smem holds block_x * block_y accumulators; block_y is a power of two.
template <typename Op, typename acc_t>
__device__ acc_t block_y_combine(const Op& op, acc_t v, acc_t* smem) {
  const int bx = blockDim.x, by = blockDim.y;
  smem[threadIdx.y * bx + threadIdx.x] = v;
  __syncthreads();
  for (int half = by / 2; half > 0; half /= 2) {
    if (threadIdx.y < half) {
      v = op.combine(v, smem[(threadIdx.y + half) * bx + threadIdx.x]);
      smem[threadIdx.y * bx + threadIdx.x] = v;
    }
    __syncthreads();
  }
  return v;
}

// ---- the kernels ------------------------------------------------------------------------

struct ReduceArgs {
  IndexMap out_map;  // output index -> input offset of its first element
  IndexMap red_map;  // reduced index -> input offset from there
  int64_t num_outputs;
  int64_t reduce_numel;
  ReduceLaunch launch;
  void* partials;  // grid_y * num_outputs accumulators when grid_y > 1
};

template <int kVec, typename T>
struct alignas(sizeof(T) * kVec) VecOf {
  T v[kVec];
};

// Loads issued before the first of them is used, per thread and step of a loop
// (enough bytes in flight to cover the memory latency at full bandwidth).
constexpr int kReduceUnroll = 4;

// Accumulates what ThreadWork w assigns to this thread (see ReduceConfig.h).
// Each thread combines its elements in the same order as a plain loop would;
// the loops only issue up to kReduceUnroll loads before using any of them.
template <typename Op, int kVec>
__device__ typename Op::acc_t accumulate(const Op& op, const typename Op::in_t* in, const ReduceArgs& a,
                                         const ThreadWork& w) {
  using in_t = typename Op::in_t;
  constexpr int U = kReduceUnroll;
  typename Op::acc_t acc = op.identity();
  const in_t* base = in + a.out_map.offset(w.output);
  const int64_t t = w.threads;
  if constexpr (kVec > 1) {
    // A single contiguous reduced dim with aligned rows (vector_width checks).
    const int64_t nvec = w.num_vectors(kVec);
    const auto* vbase = reinterpret_cast<const VecOf<kVec, in_t>*>(base + w.begin);
    for (int64_t i = w.tid; i < nvec; i += U * t) {
      VecOf<kVec, in_t> chunk[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (i + u * t < nvec) chunk[u] = vbase[i + u * t];
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (i + u * t < nvec) {
#pragma unroll
          for (int j = 0; j < kVec; ++j) acc = op.reduce(acc, chunk[u].v[j], w.begin + (i + u * t) * kVec + j);
        }
      }
    }
    for (int64_t r = w.tail_begin(kVec) + w.tid; r < w.end; r += t) acc = op.reduce(acc, base[r], r);
  } else if (a.red_map.ndim == 1) {
    const int64_t s = a.red_map.strides[0];
    for (int64_t r = w.begin + w.tid; r < w.end; r += U * t) {
      in_t v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (r + u * t < w.end) v[u] = base[(r + u * t) * s];
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (r + u * t < w.end) acc = op.reduce(acc, v[u], r + u * t);
      }
    }
  } else {
    for (int64_t r = w.begin + w.tid; r < w.end; r += t) acc = op.reduce(acc, base[a.red_map.offset(r)], r);
  }
  return acc;
}

template <typename Op, int kVec>
__global__ void reduce_kernel(Op op, const typename Op::in_t* in, ReduceArgs a) {
  using acc_t = typename Op::acc_t;
  extern __shared__ __align__(16) unsigned char reduce_smem[];
  acc_t* smem = reinterpret_cast<acc_t*>(reduce_smem);
  const ReduceLaunch& l = a.launch;
  const ThreadWork w = thread_work(l, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, a.reduce_numel);
  const bool active = w.output < a.num_outputs;
  acc_t acc = active ? accumulate<Op, kVec>(op, in, a, w) : op.identity();
  bool leader;
  if (l.reduce_on_x) {
    acc = block_x_combine(op, acc, smem);
    leader = threadIdx.x == 0;
  } else {
    acc = block_y_combine(op, acc, smem);
    leader = threadIdx.y == 0;
  }
  if (!leader || !active) return;
  if (l.grid_y == 1) {
    op.write(w.output, acc);
  } else {
    static_cast<acc_t*>(a.partials)[int64_t(blockIdx.y) * a.num_outputs + w.output] = acc;
  }
}

// Second pass: the grid_y partials of each output are split among the block's
// y threads (each combines its share in order), then combined along y; x
// threads own adjacent outputs (adjacent partials). Deterministic.
template <typename Op>
__global__ void reduce_partials_kernel(Op op, ReduceArgs a) {
  using acc_t = typename Op::acc_t;
  extern __shared__ __align__(16) unsigned char reduce_smem[];
  acc_t* smem = reinterpret_cast<acc_t*>(reduce_smem);
  const int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool active = o < a.num_outputs;
  const acc_t* p = static_cast<const acc_t*>(a.partials);
  acc_t acc = op.identity();
  if (active) {
    for (int64_t s = threadIdx.y; s < a.launch.grid_y; s += blockDim.y) acc = op.combine(acc, p[s * a.num_outputs + o]);
  }
  acc = block_y_combine(op, acc, smem);
  if (active && threadIdx.y == 0) op.write(o, acc);
}

// n adjacent outputs of `Op` reduced and written together (Note [Column
// reductions, several outputs per thread] in ReduceConfig.h).
template <typename Op, int N>
struct OutputVecOp {
  using in_t = VecOf<N, typename Op::in_t>;
  struct acc_t {
    typename Op::acc_t v[N];
  };
  Op op;

  __device__ acc_t identity() const {
    acc_t a;
#pragma unroll
    for (int j = 0; j < N; ++j) a.v[j] = op.identity();
    return a;
  }
  __device__ acc_t reduce(acc_t a, const in_t& x, int64_t r) const {
#pragma unroll
    for (int j = 0; j < N; ++j) a.v[j] = op.reduce(a.v[j], x.v[j], r);
    return a;
  }
  __device__ acc_t combine(acc_t a, const acc_t& b) const {
#pragma unroll
    for (int j = 0; j < N; ++j) a.v[j] = op.combine(a.v[j], b.v[j]);
    return a;
  }
  __device__ void write(int64_t o, const acc_t& a) const {
#pragma unroll
    for (int j = 0; j < N; ++j) op.write(o * N + j, a.v[j]);
  }
};

// Whether an op asks for OutputVecOp on column reductions (static constexpr bool kVectorizeOutputs).
template <typename Op, typename = void>
struct VectorizesOutputs : std::false_type {};
template <typename Op>
struct VectorizesOutputs<Op, std::void_t<decltype(Op::kVectorizeOutputs)>> : std::bool_constant<Op::kVectorizeOutputs> {
};

// ---- the host driver ----------------------------------------------------------------------

// Elements per 16-byte load when the plan's rows allow it, else 1.
template <typename in_t>
int vector_width(const cpu::ReducePlan& p) {
  constexpr int kWidth = 16 / sizeof(in_t) >= 1 ? int(16 / sizeof(in_t)) : 1;
  if (kWidth <= 1 || p.red_sizes.size() != 1 || p.red_strides[0] != 1) return 1;
  if (reinterpret_cast<uintptr_t>(p.in) % 16 != 0) return 1;
  for (size_t d = 0; d < p.out_strides.size(); ++d) {
    if ((p.out_strides[d] * int64_t(sizeof(in_t))) % 16 != 0) return 1;
  }
  return p.reduce_numel >= 2 * kWidth ? kWidth : 1;
}

// Blocks of `kernel` with l's shape that one multiprocessor holds at once
// (registers and shared memory permitting), cached per kernel, layout and
// block size (a multiple of 32, at most kReduceMaxThreads).
template <typename Kernel>
int resident_blocks(Kernel kernel, bool vectorized, const ReduceLaunch& l, size_t smem) {
  constexpr int kSizes = kReduceMaxThreads / 32 + 1;
  static std::atomic<int> cache[2][2][kSizes] = {};
  const int threads = l.block_x * l.block_y;
  const int slot = threads % 32 == 0 && threads <= kReduceMaxThreads ? threads / 32 : 0;
  std::atomic<int>& c = cache[vectorized][l.reduce_on_x][slot];
  int n = slot ? c.load(std::memory_order_relaxed) : 0;
  if (n == 0) {
    EMBER_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem));
    if (slot) c.store(n, std::memory_order_relaxed);
  }
  return n;
}

// Runs op over the plan: every output gets op.write(o, ...) once. An empty
// reduced range writes identity-based results; no outputs launches nothing.
template <typename Op>
void run_reduce(const cpu::ReducePlan& p, const Op& op) {
  using in_t = typename Op::in_t;
  using acc_t = typename Op::acc_t;
  if (p.num_outputs == 0) return;
  if constexpr (VectorizesOutputs<Op>::value) {
    constexpr int kN = 16 / sizeof(in_t) >= 4 ? 4 : int(16 / sizeof(in_t));
    if constexpr (kN > 1) {
      cpu::ReducePlan q = p;
      if (plan_output_vectors(q, kN, sizeof(in_t))) {
        run_reduce(q, OutputVecOp<Op, kN>{op});
        return;
      }
    }
  }
  ReduceArgs a{};
  EMBER_CHECK(make_index_map(a.out_map, p.out_sizes.data(), p.out_strides.data(), int(p.out_sizes.size())) &&
                  make_index_map(a.red_map, p.red_sizes.data(), p.red_strides.data(), int(p.red_sizes.size())),
              "reduction over a tensor with more than ", kMaxReduceDims, " non-mergeable dims is not supported");
  a.num_outputs = p.num_outputs;
  a.reduce_numel = p.reduce_numel;
  const bool rows =
      p.red_sizes.empty() || p.red_strides.back() == 1 || p.out_sizes.empty() || p.out_strides.back() != 1;
  const int vec = vector_width<in_t>(p);
  const auto& props = device_properties();
  const int64_t sms = props.multiProcessorCount;
  a.launch = plan_reduce_launch(p.num_outputs, p.reduce_numel, rows, vec, sms * 4);
  const bool vectorized = a.launch.vec == 16 / int(sizeof(in_t)) && a.launch.vec > 1;
  auto* kernel = &reduce_kernel<Op, 1>;
  if constexpr (16 / sizeof(in_t) > 1) {
    if (vectorized) kernel = &reduce_kernel<Op, int(16 / sizeof(in_t))>;
  }
  auto smem_of = [](const ReduceLaunch& l) {
    return sizeof(acc_t) * (l.reduce_on_x ? size_t(l.block_y) * 32 : size_t(l.block_x) * l.block_y);
  };
  if (a.launch.grid_y > 1) {
    // Split the reduced range into as many slices as fit on the device at
    // once (one wave): the block shape does not depend on the target.
    const int per_sm = resident_blocks(kernel, vectorized, a.launch, smem_of(a.launch));
    if (per_sm != 4) {
      a.launch = plan_reduce_launch(p.num_outputs, p.reduce_numel, rows, vec, sms * std::max(per_sm, 1));
    }
  }
  const ReduceLaunch& l = a.launch;
  Tensor partials;
  if (l.grid_y > 1) {
    const int64_t bytes = l.grid_y * p.num_outputs * int64_t(sizeof(acc_t));
    partials = ember::empty({bytes}, ScalarType::Byte, Device(DeviceType::CUDA, current_device()));
    a.partials = partials.data_ptr();
  }
  const dim3 block(l.block_x, l.block_y);
  const dim3 grid(static_cast<unsigned>(l.grid_x), static_cast<unsigned>(l.grid_y));
  const in_t* in = static_cast<const in_t*>(p.in);
  cudaStream_t stream = current_stream();
  kernel<<<grid, block, smem_of(l), stream>>>(op, in, a);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  if (l.grid_y > 1) {
    const PartialsLaunch pl = plan_partials_launch(p.num_outputs, l.grid_y);
    const size_t psmem = sizeof(acc_t) * size_t(pl.block_x) * pl.block_y;
    reduce_partials_kernel<Op>
        <<<static_cast<unsigned>(pl.grid_x), dim3(pl.block_x, pl.block_y), psmem, stream>>>(op, a);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

}  // namespace ember::cuda
