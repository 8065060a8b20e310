#pragma once
// The sampling kernels' launchers (RandomFloat.cu, RandomInt.cu), called by
// RandomCuda.cpp with plain arguments: the host side has picked the
// generator's seed and offset, the grid and the output's iteration order.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace ember::cuda {

constexpr int kMaxRandomDims = 25;

// Element i's byte offset: dims innermost first.
struct ElementIndexer {
  int ndim = 1;
  int64_t sizes[kMaxRandomDims] = {};
  int64_t strides[kMaxRandomDims] = {};
};

// The element types the samplers write (ember::ScalarType's names).
enum class RandomType : int { Byte, Char, Short, Int, Long, Half, Float, Double, Bool, BFloat16 };

struct RandomCall {
  RandomType type;
  char* data;
  ElementIndexer out;
  int64_t numel;
  uint64_t seed;
  uint64_t offset;
  uint32_t grid;
  cudaStream_t stream;
};

// Float kernels: float, half and bfloat16 draw four floats per step, double
// two doubles (unroll 2).
void launch_uniform(const RandomCall& c, double from, double to);
void launch_normal(const RandomCall& c, double mean, double std);
void launch_exponential(const RandomCall& c, double lambda);

// random_: base + draw % range; `wide`: 64-bit draws (two per step), for ranges from 2^28.
void launch_random_from_to(const RandomCall& c, uint64_t range, int64_t base, bool wide);
// random_(from=-2^63, to=None): the full 64-bit range.
void launch_random_full_range(const RandomCall& c);
// random_() without bounds: 64-bit draws for double and int64.
void launch_random(const RandomCall& c);
void launch_bernoulli_scalar(const RandomCall& c, double p);
// self (c.out, logical order) gets u <= p with p read through p_index.
void launch_bernoulli_tensor(const RandomCall& c, RandomType p_type, const char* p, const ElementIndexer& p_index);

}  // namespace ember::cuda
