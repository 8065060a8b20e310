#pragma once
// Host-side arithmetic of the CUDA reduction engine (Reduce.cuh): index maps
// from an output or reduced linear index to an input offset, and the launch
// shape. Plain C++ so that it is tested without a GPU (tests/cpp).
//
// Note [CUDA reduction launch]
// A reduction has num_outputs outputs of reduce_numel elements each (see
// Note [Reduction plan] in cpu/ReduceStubs.h). Two thread layouts:
//  - reduce_on_x: the threads along x of a block row share one output and
//    step through its reduced elements (rows: the innermost reduced dim is
//    contiguous, or there are few outputs); block_y rows = block_y outputs.
//    The x threads combine through warp shuffles and shared memory.
//  - otherwise each x thread owns one output (adjacent outputs are adjacent
//    in memory: column reductions) and the y threads split its reduced
//    elements; they combine through shared memory.
// When the blocks over outputs cannot fill the device, grid_y > 1 splits each
// output's reduced range into grid_y slices of split_len elements; each block
// writes a partial accumulator to global memory and a second kernel combines
// the grid_y partials of each output in a fixed order (two passes,
// deterministic; plan_partials_launch).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif

namespace ember::cuda {

// Most dims a reduction's kept or reduced group may have after coalescing.
constexpr int kMaxReduceDims = 16;

// Row-major linear index over `ndim` dims (innermost last) -> element offset.
struct IndexMap {
  int ndim = 0;
  int64_t sizes[kMaxReduceDims] = {};
  int64_t strides[kMaxReduceDims] = {};

  EMBER_HOST_DEVICE int64_t offset(int64_t linear) const {
    if (ndim == 1) return linear * strides[0];
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t q = linear / sizes[d];
      off += (linear - q * sizes[d]) * strides[d];
      linear = q;
    }
    return off;
  }
};

// Builds a map from sizes and strides (at most kMaxReduceDims; false if more).
inline bool make_index_map(IndexMap& m, const int64_t* sizes, const int64_t* strides, int ndim) {
  if (ndim > kMaxReduceDims) return false;
  m.ndim = ndim;
  for (int d = 0; d < ndim; ++d) {
    m.sizes[d] = sizes[d];
    m.strides[d] = strides[d];
  }
  return true;
}

struct ReduceLaunch {
  bool reduce_on_x = true;
  int block_x = 32, block_y = 1;
  int64_t grid_x = 1;  // blocks over outputs
  int64_t grid_y = 1;  // slices of each output's reduced range
  int64_t split_len = 0;  // reduced elements per slice (a multiple of the slice's step)
  int vec = 1;  // elements per vector load (reduce_on_x only)

  EMBER_HOST_DEVICE int64_t outputs_per_block() const { return reduce_on_x ? block_y : block_x; }
  // Threads that walk the reduced range of one output, and elements per step.
  EMBER_HOST_DEVICE int64_t reduce_threads() const { return reduce_on_x ? block_x : block_y; }
  EMBER_HOST_DEVICE int64_t step() const { return reduce_threads() * vec; }
};

// What one thread of block (bx, by) at (tx, ty) reduces: output `output`
// (>= num_outputs: none), the slice [begin, end) of its reduced range, walked
// from vector (or element) `tid` in steps of `threads`: first the whole
// vectors of the slice, then its tail elements one by one.
struct ThreadWork {
  int64_t output;
  int64_t begin, end;
  int tid, threads;

  EMBER_HOST_DEVICE int64_t num_vectors(int vec) const { return (end - begin) / vec; }
  EMBER_HOST_DEVICE int64_t tail_begin(int vec) const { return begin + num_vectors(vec) * vec; }
};

EMBER_HOST_DEVICE inline ThreadWork thread_work(const ReduceLaunch& l, int64_t bx, int64_t by, int tx, int ty,
                                                int64_t reduce_numel) {
  ThreadWork w;
  w.begin = by * l.split_len;
  w.end = reduce_numel < w.begin + l.split_len ? reduce_numel : w.begin + l.split_len;
  if (l.reduce_on_x) {
    w.output = bx * l.block_y + ty;
    w.tid = tx;
    w.threads = l.block_x;
  } else {
    w.output = bx * l.block_x + tx;
    w.tid = ty;
    w.threads = l.block_y;
  }
  return w;
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int last_pow2_at_most(int64_t n) {
  int p = 1;
  while (int64_t(p) * 2 <= n) p *= 2;
  return p;
}
inline int next_pow2(int64_t n) {
  int p = 1;
  while (p < n && p < (1 << 30)) p *= 2;
  return p;
}

constexpr int kReduceMaxThreads = 512;
// Each thread should load at least this many vectors before a slice is split off.
constexpr int64_t kReduceMinLoadsPerThread = 16;
// Vectors each thread of a row reduction should load when rows are plentiful.
constexpr int64_t kRowLoadsPerThread = 16;
// Most slices per output (bounds the second pass and the partials buffer).
constexpr int64_t kReduceMaxSlices = 1024;

// The launch for num_outputs x reduce_numel. rows: the innermost reduced dim
// is contiguous (or the outputs are not). vec: elements per vector load the
// caller may use in row layouts (1 if the data does not allow it).
// target_blocks: blocks that fill the device (e.g. 4 per multiprocessor).
inline ReduceLaunch plan_reduce_launch(int64_t num_outputs, int64_t reduce_numel, bool rows, int vec,
                                       int64_t target_blocks) {
  ReduceLaunch l;
  num_outputs = std::max<int64_t>(num_outputs, 1);
  reduce_numel = std::max<int64_t>(reduce_numel, 1);
  // Few outputs: even a column reduction is better walked along x.
  l.reduce_on_x = rows || num_outputs < 32;
  if (l.reduce_on_x) {
    l.vec = rows ? std::max(vec, 1) : 1;
    const int64_t loads = ceil_div(reduce_numel, l.vec);
    l.block_x = std::min(kReduceMaxThreads, std::max(1, next_pow2(loads)));
    if (l.block_x > 32 && loads < 4 * l.block_x) l.block_x = std::max(32, last_pow2_at_most(loads / 2));
    // Many short rows: fewer threads per row, each with kRowLoadsPerThread
    // loads in flight, several rows per block, as long as the blocks still
    // fill the device.
    while (l.block_x > 32 && loads < kRowLoadsPerThread * l.block_x &&
           ceil_div(num_outputs, kReduceMaxThreads / (l.block_x / 2)) >= target_blocks) {
      l.block_x /= 2;
    }
    l.block_y = std::max(1, std::min<int>(kReduceMaxThreads / l.block_x, next_pow2(num_outputs)));
    // Whole warps: the x threads combine through warp shuffles (extra rows idle).
    l.block_y = std::max(l.block_y, 32 / l.block_x);
  } else {
    l.vec = 1;
    l.block_x = static_cast<int>(std::min<int64_t>(32 * ceil_div(std::min<int64_t>(num_outputs, 256), 32), 256));
    l.block_y =
        std::max(1, std::min(last_pow2_at_most(kReduceMaxThreads / l.block_x), next_pow2(ceil_div(reduce_numel, 4))));
  }
  l.grid_x = ceil_div(num_outputs, l.outputs_per_block());
  const int64_t step = l.step();
  int64_t slices = 1;
  if (l.grid_x < target_blocks) {
    const int64_t by_work = reduce_numel / (step * kReduceMinLoadsPerThread);
    slices = std::max<int64_t>(1, std::min({ceil_div(target_blocks, l.grid_x), by_work, kReduceMaxSlices}));
  }
  l.split_len = ceil_div(ceil_div(reduce_numel, slices), step) * step;
  l.grid_y = ceil_div(reduce_numel, l.split_len);
  return l;
}

// Note [Column reductions, several outputs per thread]
// In a column reduction (the innermost kept dim contiguous, the reduced dims
// stepping over it) each thread of the column layout owns one output and a
// warp loads 32 adjacent elements per reduced index. With the innermost kept
// size a multiple of n, every stride a multiple of n and the input aligned to
// n elements, the plan is rewritten in units of n-element vectors: a thread
// then owns n adjacent outputs and loads them with one vector load (a
// quarter of the load instructions and four times the bytes in flight for
// n = 4, as PyTorch's output vectorization), and each output still combines
// its elements in the same order. Reduce.cuh's OutputVecOp reduces and
// writes the n outputs. Plan: cpu::ReducePlan (templated: no dependence here).
template <typename Plan>
bool plan_output_vectors(Plan& p, int n, size_t elem_size) {
  if (n < 2 || p.out_sizes.empty() || p.red_sizes.empty()) return false;
  if (p.out_strides.back() != 1 || p.out_sizes.back() % n != 0 || p.red_strides.back() == 1) return false;
  if (p.num_outputs / n < 32) return false;  // few outputs are reduced along x
  if (reinterpret_cast<uintptr_t>(p.in) % (size_t(n) * elem_size) != 0) return false;
  for (size_t d = 0; d + 1 < p.out_strides.size(); ++d) {
    if (p.out_strides[d] % n != 0) return false;
  }
  for (int64_t s : p.red_strides) {
    if (s % n != 0) return false;
  }
  p.out_sizes[p.out_sizes.size() - 1] /= n;
  for (size_t d = 0; d + 1 < p.out_strides.size(); ++d) p.out_strides[d] /= n;
  for (auto& s : p.red_strides) s /= n;
  p.num_outputs /= n;
  return true;
}

// The second pass over grid_y partials per output (reduce_partials_kernel):
// block_x outputs per block, block_y threads (a power of two) share each
// output's partials.
struct PartialsLaunch {
  int block_x = 1, block_y = 1;
  int64_t grid_x = 1;
};

inline PartialsLaunch plan_partials_launch(int64_t num_outputs, int64_t slices) {
  PartialsLaunch l;
  l.block_x = static_cast<int>(std::min<int64_t>(32, next_pow2(std::max<int64_t>(num_outputs, 1))));
  l.block_y = std::max(1, std::min(kReduceMaxThreads / l.block_x, last_pow2_at_most(std::max<int64_t>(slices, 1))));
  l.grid_x = ceil_div(std::max<int64_t>(num_outputs, 1), l.block_x);
  return l;
}

// Row kernels that hold a whole row in registers (softmax, layer_norm): one
// block per row, each thread loads `vecs` 16-byte vectors (thread t the
// vectors t, t + threads, ...) before any arithmetic. vecs is one of
// kRowVecChoices; 0 when the row has more than kRowMaxVecs vectors.
constexpr int kRowMaxThreads = 512;
constexpr int kRowMaxVecsPerThread = 8;
constexpr int64_t kRowMaxVecs = int64_t(kRowMaxThreads) * kRowMaxVecsPerThread;

struct RowLaunch {
  int threads = 32;
  int vecs = 0;
};

inline RowLaunch plan_row_launch(int64_t num_vecs) {
  RowLaunch l;
  if (num_vecs <= 0 || num_vecs > kRowMaxVecs) return l;
  // About 4 vectors per thread: 64 bytes in flight, few registers.
  const int64_t per_thread = 4;
  int64_t threads = 32 * ceil_div(ceil_div(num_vecs, per_thread), 32);
  threads = std::min<int64_t>(kRowMaxThreads, std::max<int64_t>(32, threads));
  const int64_t need = ceil_div(num_vecs, threads);
  l.threads = static_cast<int>(threads);
  l.vecs = need <= 1 ? 1 : need <= 2 ? 2 : need <= 4 ? 4 : 8;
  return l;
}

}  // namespace ember::cuda
