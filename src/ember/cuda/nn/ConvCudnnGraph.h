#pragma once
// One convolution pass through cuDNN's graph (backend) API: an operation
// graph of one convolution node, cuDNN's engine heuristics (instant mode,
// then its fallback list), the first engine configuration that the filters
// admit, that finalizes and whose workspace can be allocated (with
// cudnn.benchmark, the fastest of several). The plan is built once per key
// and thread and kept. Note [cuDNN graph convolution].
#include <cudnn.h>

#include <cstdint>

#include "ember/cuda/nn/ConvPlan.h"

namespace ember::cuda::conv {

enum class GraphPass { Forward = 0, BackwardData = 1, BackwardFilter = 2 };

// x, w, y: the convolution's input, weight and output as cuDNN sees them;
// the pointers are bound the same way whatever the pass (the pass writes
// y, x or w).
struct GraphCall {
  GraphPass pass = GraphPass::Forward;
  cudnnDataType_t dtype = CUDNN_DATA_FLOAT;
  NdShape x, w, y;
  CudnnConvParams params;
  bool allow_tf32 = true;
  bool deterministic = false;
  // torch.backends.cudnn.benchmark: the fastest of up to benchmark_limit
  // plans (0: all), timed with the call's pointers (Note [cuDNN graph benchmark]).
  bool benchmark = false;
  int benchmark_limit = 10;
  void* x_ptr = nullptr;
  void* w_ptr = nullptr;
  void* y_ptr = nullptr;
};

// Runs the pass; false (nothing launched) when cuDNN builds no usable plan for
// it, and the caller then uses the legacy API. A failed launch throws.
bool run_graph(const ConvKey& key, const GraphCall& call);

// Whether the graph API is used (EMBER_CUDNN_GRAPH=0 turns it off).
bool graph_enabled();

}  // namespace ember::cuda::conv
