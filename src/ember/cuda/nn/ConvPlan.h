#pragma once
// Host-side description of a convolution for cuDNN: the per-call parameters
// as one hashable key (the algorithm cache's), the shapes cuDNN sees (1-d
// convolutions gain a unit height), output sizes, and the cache itself. Plain
// C++ (no CUDA or cuDNN headers): tested in tests/cpp/cuda_conv_plan_test.cpp.
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace ember::cuda::conv {

constexpr int kMaxConvDims = 5;  // N, C and up to 3 spatial dims
constexpr int kMaxSpatial = kMaxConvDims - 2;

// Everything a cuDNN algorithm choice depends on. Zero-initialised so that
// padding bytes compare and hash equal.
struct ConvKey {
  int32_t dims = 0;  // tensor rank seen by cuDNN (4 or 5)
  int32_t dtype = 0;  // ScalarType
  int32_t groups = 1;
  int32_t channels_last = 0;
  int32_t allow_tf32 = 0;
  int32_t deterministic = 0;
  int32_t device = 0;
  int32_t benchmark = 0;
  int64_t input[kMaxConvDims] = {};
  int64_t weight[kMaxConvDims] = {};
  int64_t output[kMaxConvDims] = {};
  int64_t padding[kMaxSpatial] = {};
  int64_t stride[kMaxSpatial] = {};
  int64_t dilation[kMaxSpatial] = {};
};

inline bool operator==(const ConvKey& a, const ConvKey& b) { return std::memcmp(&a, &b, sizeof(ConvKey)) == 0; }

// FNV-1a over the key's bytes.
struct ConvKeyHash {
  size_t operator()(const ConvKey& k) const {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(&k);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof(ConvKey); ++i) {
      h ^= p[i];
      h *= 1099511628211ull;
    }
    return static_cast<size_t>(h);
  }
};

// Output size along one spatial dim of a (non-transposed) convolution.
inline int64_t conv_output_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dil) {
  return (in + 2 * pad - dil * (kernel - 1) - 1) / stride + 1;
}

// Output size along one spatial dim of a transposed convolution.
inline int64_t conv_transpose_output_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dil,
                                          int64_t output_padding) {
  return (in - 1) * stride - 2 * pad + dil * (kernel - 1) + output_padding + 1;
}

// The arguments of one convolution call, spatial dims as given (1 to 3).
struct ConvArgs {
  int spatial = 0;
  int64_t padding[kMaxSpatial] = {};
  int64_t stride[kMaxSpatial] = {};
  int64_t dilation[kMaxSpatial] = {};
  int64_t output_padding[kMaxSpatial] = {};
  int64_t groups = 1;
  bool transposed = false;
};

// A tensor as cuDNN is given it: rank 4 or 5, sizes and strides in NC(D)HW order.
struct NdShape {
  int dims = 0;
  int64_t sizes[kMaxConvDims] = {};
  int64_t strides[kMaxConvDims] = {};
};

// 1-d tensors (N, C, W) become (N, C, 1, W): cuDNN takes 4 or 5 dims.
inline NdShape as_cudnn_shape(const int64_t* sizes, const int64_t* strides, int rank) {
  NdShape s;
  if (rank == 3) {
    s.dims = 4;
    s.sizes[0] = sizes[0];
    s.sizes[1] = sizes[1];
    s.sizes[2] = 1;
    s.sizes[3] = sizes[2];
    s.strides[0] = strides[0];
    s.strides[1] = strides[1];
    s.strides[2] = strides[2] * sizes[2];
    s.strides[3] = strides[2];
  } else {
    s.dims = rank;
    for (int i = 0; i < rank; ++i) {
      s.sizes[i] = sizes[i];
      s.strides[i] = strides[i];
    }
  }
  return s;
}

// The convolution's spatial parameters at cuDNN's rank (the unit height of a
// 1-d convolution has padding 0, stride 1, dilation 1).
struct CudnnConvParams {
  int spatial = 0;
  int pad[kMaxSpatial] = {};
  int stride[kMaxSpatial] = {};
  int dilation[kMaxSpatial] = {};
};

inline CudnnConvParams cudnn_params(const ConvArgs& a) {
  CudnnConvParams p;
  if (a.spatial == 1) {
    p.spatial = 2;
    p.pad[0] = 0;
    p.stride[0] = 1;
    p.dilation[0] = 1;
    p.pad[1] = static_cast<int>(a.padding[0]);
    p.stride[1] = static_cast<int>(a.stride[0]);
    p.dilation[1] = static_cast<int>(a.dilation[0]);
    return p;
  }
  p.spatial = a.spatial;
  for (int i = 0; i < a.spatial; ++i) {
    p.pad[i] = static_cast<int>(a.padding[i]);
    p.stride[i] = static_cast<int>(a.stride[i]);
    p.dilation[i] = static_cast<int>(a.dilation[i]);
  }
  return p;
}

// The key of a call: `input` is the convolution's (large-side for transposed
// calls, as cuDNN sees it: x of the forward convolution), `output` its result.
inline ConvKey make_key(const NdShape& input, const NdShape& weight, const NdShape& output, const ConvArgs& a,
                        int dtype, bool channels_last, bool allow_tf32, bool deterministic, bool benchmark,
                        int device) {
  ConvKey k;
  k.dims = input.dims;
  k.dtype = dtype;
  k.groups = static_cast<int32_t>(a.groups);
  k.channels_last = channels_last;
  k.allow_tf32 = allow_tf32;
  k.deterministic = deterministic;
  k.benchmark = benchmark;
  k.device = device;
  for (int i = 0; i < input.dims; ++i) {
    k.input[i] = input.sizes[i];
    k.weight[i] = weight.sizes[i];
    k.output[i] = output.sizes[i];
  }
  const CudnnConvParams p = cudnn_params(a);
  for (int i = 0; i < p.spatial; ++i) {
    k.padding[i] = p.pad[i];
    k.stride[i] = p.stride[i];
    k.dilation[i] = p.dilation[i];
  }
  return k;
}

// The chosen algorithm of each direction, per key (PyTorch's benchmark cache:
// found once per shape, reused after).
struct AlgoChoice {
  int algo = 0;
  int math_type = 0;
  size_t workspace = 0;
};

class AlgoCache {
 public:
  std::optional<AlgoChoice> find(const ConvKey& k) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(k);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }
  void insert(const ConvKey& k, const AlgoChoice& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    map_[k] = c;
  }
  void erase(const ConvKey& k) {
    std::lock_guard<std::mutex> lock(mutex_);
    map_.erase(k);
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.size();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    map_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<ConvKey, AlgoChoice, ConvKeyHash> map_;
};

// One candidate algorithm from cuDNN's heuristics or search.
struct AlgoCandidate {
  int algo = 0;
  int status = 0;  // 0: usable
  bool deterministic = false;
  int math_type = 0;
  size_t memory = 0;
};

// The first usable candidate (they come best first), deterministic ones only
// when asked; -1 when none.
inline int pick_candidate(const AlgoCandidate* c, int n, bool deterministic, size_t max_memory) {
  for (int i = 0; i < n; ++i) {
    if (c[i].status != 0) continue;
    if (deterministic && !c[i].deterministic) continue;
    if (c[i].memory > max_memory) continue;
    return i;
  }
  return -1;
}

// Largest power of two (at most 16) that divides an address: the alignment a
// cuDNN graph plan is built for (part of its key).
inline int64_t pointer_alignment(uintptr_t address) {
  int64_t align = 16;
  while (align > 1 && address % static_cast<uintptr_t>(align) != 0) align /= 2;
  return align;
}

// cuDNN's numerical notes of an engine (cudnnBackendNumericalNote_t values;
// ConvCudnnGraph.cpp asserts they match).
enum EngineNote : int {
  kNoteTensorCore = 0,
  kNoteDownConvertInputs = 1,
  kNoteReducedPrecisionReduction = 2,
  kNoteNondeterministic = 4,
};

// Which engine configurations a call may use, from the engine's notes: never
// ones that down-convert their inputs or reduce in reduced precision; float32
// uses tensor cores only as TF32, when allowed; deterministic calls skip
// non-deterministic engines.
inline bool engine_admitted(const int* notes, int count, bool is_float32, bool allow_tf32, bool deterministic) {
  for (int i = 0; i < count; ++i) {
    const int n = notes[i];
    if (n == kNoteDownConvertInputs || n == kNoteReducedPrecisionReduction) return false;
    if (n == kNoteTensorCore && is_float32 && !allow_tf32) return false;
    if (n == kNoteNondeterministic && deterministic) return false;
  }
  return true;
}

}  // namespace ember::cuda::conv
