#pragma once
// Device helpers of the CUDA index kernels: atomic adds for every dtype,
// the one-thread-per-element walk, and the bad-index flag read back after a
// launch. Element types by dtype are DeviceMath.cuh's.
#include <cstdint>
#include <cstring>

#include "ember/core/ScalarType.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/kernels/DeviceMath.cuh"
#include "ember/cuda/kernels/IndexGeometry.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {

// The CPU kernels these fall back to or check meta tensors with are reached
// through their operators' exported dispatch tables.
constexpr int kCpuKernel = static_cast<int>(DeviceType::CPU);

// ---- atomic add ------------------------------------------------------------------

#if defined(__CUDACC__)
// Read-modify-write of a 1- or 2-byte element through the aligned 32-bit word holding it.
template <typename T, typename F>
__device__ void atomic_update_narrow(T* address, F f) {
  static_assert(sizeof(T) <= 2, "narrow types only");
  const uintptr_t addr = reinterpret_cast<uintptr_t>(address);
  unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t(3));
  const unsigned shift = static_cast<unsigned>(addr & 3) * 8;
  const unsigned mask = ((1u << (8 * sizeof(T))) - 1u) << shift;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    unsigned bits = (assumed & mask) >> shift;
    T current;
    memcpy(&current, &bits, sizeof(T));
    const T next = f(current);
    unsigned next_bits = 0;
    memcpy(&next_bits, &next, sizeof(T));
    old = atomicCAS(word, assumed, (assumed & ~mask) | ((next_bits << shift) & mask));
  } while (assumed != old);
}

__device__ inline void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ inline void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ inline void atomic_add(int32_t* p, int32_t v) { atomicAdd(p, v); }
__device__ inline void atomic_add(int64_t* p, int64_t v) {
  // Two's complement: unsigned addition is signed addition.
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
__device__ inline void atomic_add(__half* p, __half v) {
#if __CUDA_ARCH__ >= 700
  atomicAdd(p, v);
#else
  atomic_update_narrow(p, [v](__half a) { return narrow<__half>(widen(a) + widen(v)); });
#endif
}
__device__ inline void atomic_add(__nv_bfloat16* p, __nv_bfloat16 v) {
#if __CUDA_ARCH__ >= 800
  atomicAdd(p, v);
#else
  atomic_update_narrow(p, [v](__nv_bfloat16 a) { return narrow<__nv_bfloat16>(widen(a) + widen(v)); });
#endif
}
__device__ inline void atomic_add(uint8_t* p, uint8_t v) {
  atomic_update_narrow(p, [v](uint8_t a) { return static_cast<uint8_t>(a + v); });
}
__device__ inline void atomic_add(int8_t* p, int8_t v) {
  atomic_update_narrow(p, [v](int8_t a) { return static_cast<int8_t>(a + v); });
}
__device__ inline void atomic_add(int16_t* p, int16_t v) {
  atomic_update_narrow(p, [v](int16_t a) { return static_cast<int16_t>(a + v); });
}
__device__ inline void atomic_add(bool* p, bool v) {
  atomic_update_narrow(p, [v](bool a) { return static_cast<bool>(a || v); });
}
template <typename T>
__device__ void atomic_add(DeviceComplex<T>* p, DeviceComplex<T> v) {
  atomic_add(&p->re, v.re);
  atomic_add(&p->im, v.im);
}

// a * b in the dtype's arithmetic (16-bit floats compute in float and round once).
template <typename T>
__device__ T mul_in(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    return narrow<T>(widen(a) * widen(b));
  } else {
    return static_cast<T>(a * b);
  }
}
template <typename T>
__device__ DeviceComplex<T> mul_in(DeviceComplex<T> a, DeviceComplex<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

// One thread per element of g (grid-stride): reads the index at operand 2
// (a negative one counts from the end when wrap_negative), and when it lies in [0, size_d) calls op(target offset,
// other offset) with the target's offset moved along the indexed dimension; else records the smallest bad linear
// position in *bad.
template <typename IndexT, typename Op>
__global__ void index_walk_kernel(IndexGeometry g, const IndexT* index, int64_t target_stride_d, int64_t size_d,
                                  bool wrap_negative, unsigned long long* bad, Op op) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t linear = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; linear < g.numel; linear += step) {
    int64_t off[kOperands];
    g.offsets(linear, off);
    int64_t v = static_cast<int64_t>(index[off[2]]);
    if (wrap_negative && v < 0) v += size_d;
    if (v < 0 || v >= size_d) {
      atomicMin(bad, static_cast<unsigned long long>(linear));
      continue;
    }
    op(off[0] + v * target_stride_d, off[1], v);
  }
}
#endif  // __CUDACC__

// ---- host side --------------------------------------------------------------------

// A meta tensor with t's sizes, strides and dtype (undefined stays undefined):
// running the CPU function on such copies performs its checks and computes
// the output's shape without touching data.
Tensor meta_copy(const Tensor& t);

// t copied to the CPU (undefined stays undefined), for operators computed there.
inline Tensor on_cpu(const Tensor& t) { return t.defined() ? t.to(Device(DeviceType::CPU)) : Tensor(); }

// A device word for the smallest bad position, set to "none" on the current stream.
struct BadIndexFlag {
  Tensor storage;
  unsigned long long* ptr = nullptr;
  explicit BadIndexFlag(const Device& device);
  // Reads the flag back (waits for the stream): true when an index was out of range.
  bool raised() const;
};

// Builds the walk of `shape` over operands (target, other, index); throws past kMaxIndexDims.
IndexGeometry geometry_of(IntArrayRef shape, IntArrayRef target, IntArrayRef other, IntArrayRef index);

// Strides of t along `shape`'s dimensions with dimension d set to 0.
DimVector strides_without(const Tensor& t, int64_t d);

}  // namespace ember::cuda
