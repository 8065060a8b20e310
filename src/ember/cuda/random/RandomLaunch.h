#pragma once
// Host-side arithmetic of the CUDA samplers, kept apart from the kernels so
// that it is tested without a GPU. The numbers a sampler produces depend on
// all of it: which thread (Philox subsequence) and which step of that thread
// fills element i, and how far the generator's offset moves per call.
#include <algorithm>
#include <cstdint>
#include <vector>

namespace ember::cuda {

constexpr uint32_t kRandomBlockSize = 256;
// Words one curand4-style draw consumes; each thread's offset moves by this
// per loop step.
constexpr uint64_t kWordsPerDraw = 4;

struct RandomLaunch {
  uint32_t grid = 0;
  uint32_t block = kRandomBlockSize;
  // How far the generator's offset moves for this call (already a multiple of 4).
  uint64_t offset_increment = 0;
};

// Blocks of 256 threads, at most as many as the device keeps resident
// (multiprocessors x max threads per multiprocessor / 256); each thread makes
// ceil(numel / (threads x unroll)) draws of 4 words. numel > 0.
inline RandomLaunch random_launch(int64_t numel, uint32_t unroll, int multiprocessors, int max_threads_per_sm) {
  RandomLaunch l;
  const uint64_t n = static_cast<uint64_t>(numel);
  const uint64_t blocks = (n + l.block - 1) / l.block;
  const uint64_t resident = static_cast<uint64_t>(multiprocessors) * (max_threads_per_sm / l.block);
  l.grid = static_cast<uint32_t>(std::min(resident, blocks));
  const uint64_t per_step = static_cast<uint64_t>(l.block) * l.grid * unroll;
  l.offset_increment = ((n - 1) / per_step + 1) * kWordsPerDraw;
  return l;
}

// The generator's offset moves in whole Philox blocks (multiples of 4 words).
inline uint64_t round_offset_increment(uint64_t increment) { return (increment + 3) / 4 * 4; }

// Where element i of a launch takes its number from: thread (subsequence),
// loop step of that thread and the position within the draw.
struct RandomSource {
  uint64_t thread;
  uint64_t step;
  uint32_t lane;
};
inline RandomSource random_source(int64_t i, const RandomLaunch& l, uint32_t unroll) {
  const uint64_t threads = static_cast<uint64_t>(l.grid) * l.block;
  const uint64_t u = static_cast<uint64_t>(i);
  return {u % threads, u / (threads * unroll), static_cast<uint32_t>((u / threads) % unroll)};
}

// bernoulli_(Tensor p): PyTorch's four-elements-per-thread apply kernel,
// 512 threads a block, every thread restarting its stream at the same offset;
// the generator moves by a fixed 10 words (rounded to 12).
constexpr uint32_t kBernoulliTensorBlock = 512;
constexpr uint64_t kBernoulliTensorIncrement = 10;
inline uint32_t bernoulli_tensor_grid(int64_t numel, int64_t max_grid_x) {
  const uint64_t per_block = static_cast<uint64_t>(kBernoulliTensorBlock) * 4;
  const uint64_t blocks = (static_cast<uint64_t>(numel) + per_block - 1) / per_block;
  return static_cast<uint32_t>(std::min<uint64_t>(blocks, static_cast<uint64_t>(max_grid_x)));
}

// An output's iteration order, as PyTorch's TensorIterator gives it for one
// operand: dims of size 1 dropped, the rest sorted by stride (smallest
// innermost; equal strides keep the smaller size inside), then coalesced.
// Sizes and byte strides, innermost first; never empty.
struct OutputOrder {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};
inline OutputOrder output_order(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                                int64_t element_size) {
  struct Dim {
    int64_t size, stride;
  };
  std::vector<Dim> dims;
  for (size_t k = sizes.size(); k-- > 0;) {
    if (sizes[k] != 1) dims.push_back({sizes[k], strides[k] * element_size});
  }
  for (size_t i = 1; i < dims.size(); ++i) {
    for (size_t j = i; j > 0; --j) {
      const Dim& a = dims[j - 1];
      const Dim& b = dims[j];
      if (!(a.stride > b.stride || (a.stride == b.stride && a.size > b.size))) break;
      std::swap(dims[j - 1], dims[j]);
    }
  }
  OutputOrder out;
  for (const Dim& d : dims) {
    if (!out.sizes.empty() && d.stride == out.strides.back() * out.sizes.back()) {
      out.sizes.back() *= d.size;
      continue;
    }
    out.sizes.push_back(d.size);
    out.strides.push_back(d.stride);
  }
  if (out.sizes.empty()) {
    out.sizes.push_back(1);
    out.strides.push_back(element_size);
  }
  return out;
}

// Byte offset of element i (in iteration order).
inline int64_t output_offset(const OutputOrder& o, int64_t i) {
  int64_t off = 0;
  for (size_t d = 0; d < o.sizes.size(); ++d) {
    off += (i % o.sizes[d]) * o.strides[d];
    i /= o.sizes[d];
  }
  return off;
}

}  // namespace ember::cuda
