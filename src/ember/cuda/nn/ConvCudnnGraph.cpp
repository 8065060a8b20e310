// Convolution passes through cuDNN's graph API (ConvCudnnGraph.h).
#ifdef EMBER_USE_CUDNN
#include "ember/cuda/nn/ConvCudnnGraph.h"

#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "ember/core/Error.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/nn/CudnnLoader.h"
#include "ember/ops/Ops.h"

namespace ember::cuda::conv {
namespace {

// Note [cuDNN graph convolution]
// cuDNN 9 serves its legacy convolution calls through the same engines, but
// chooses among them with the older per-algorithm heuristics; PyTorch builds
// an operation graph and takes the engine heuristics' ranking, which picks
// other (faster) engines for many shapes, channels-last 16-bit ones above all.
// Here, as there: the tensors X (uid 1), W (2) and Y (3) with their real
// strides (groups follow from the channel counts), the heuristics' configs in
// order, filtered by their numerical notes (engine_admitted), the first that
// finalizes into a plan whose workspace can be allocated. A key no plan can
// be built for is remembered and goes to the legacy API from then on.

// Note [cuDNN graph benchmark]
// With cudnn.benchmark PyTorch times plans instead of trusting the ranking:
// up to benchmark_limit admitted configurations (instant heuristics, then the
// fallback list) become plans; each runs once to warm up, then kTimedRuns
// times between CUDA events on the current stream with the call's own
// pointers (the pass only writes its output); the plan with the least time of
// one run is kept for the key, the others are destroyed. The legacy API's
// timed search (cudnnFind) covers only the legacy algorithms, which on Hopper
// ran a 3x3 convolution 1.3x (float32) to 2.1x (bf16 channels-last) slower
// than the engines the graph API reaches.
constexpr int kTimedRuns = 3;
constexpr int64_t kUidX = 1, kUidW = 2, kUidY = 3;

static_assert(int(kNoteTensorCore) == int(CUDNN_NUMERICAL_NOTE_TENSOR_CORE) &&
                  int(kNoteDownConvertInputs) == int(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) &&
                  int(kNoteReducedPrecisionReduction) == int(CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION) &&
                  int(kNoteNondeterministic) == int(CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC),
              "cuDNN's numerical note values");

const cudnn::Api& A() { return cudnn::api(); }

bool ok(cudnnStatus_t s) { return s == CUDNN_STATUS_SUCCESS; }

// Descriptors created while building a plan; destroyed unless kept.
class Descriptors {
 public:
  Descriptors() = default;
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() {
    for (cudnnBackendDescriptor_t d : owned_) A().cudnnBackendDestroyDescriptor(d);
  }
  // A new descriptor of `type`, or null.
  cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t d = nullptr;
    if (!ok(A().cudnnBackendCreateDescriptor(type, &d))) return nullptr;
    owned_.push_back(d);
    return d;
  }
  // Hands every descriptor over to the caller (a cached plan refers to them).
  std::vector<cudnnBackendDescriptor_t> release() { return std::move(owned_); }
  // Destroys one descriptor now (a plan that lost the benchmark).
  void destroy(cudnnBackendDescriptor_t d) {
    for (auto& o : owned_) {
      if (o == d) {
        A().cudnnBackendDestroyDescriptor(d);
        o = owned_.back();
        owned_.pop_back();
        return;
      }
    }
  }

 private:
  std::vector<cudnnBackendDescriptor_t> owned_;
};

bool set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t n,
         const void* values) {
  return d != nullptr && ok(A().cudnnBackendSetAttribute(d, name, type, n, values));
}

bool finalize(cudnnBackendDescriptor_t d) { return d != nullptr && ok(A().cudnnBackendFinalize(d)); }

cudnnBackendDescriptor_t tensor(Descriptors& ds, const NdShape& s, int64_t uid, cudnnDataType_t dtype,
                                int64_t alignment) {
  cudnnBackendDescriptor_t t = ds.make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const bool built = set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dtype) &&
                     set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, s.dims, s.sizes) &&
                     set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, s.dims, s.strides) &&
                     set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid) &&
                     set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment) && finalize(t);
  return built ? t : nullptr;
}

cudnnBackendDescriptor_t convolution(Descriptors& ds, const CudnnConvParams& p, cudnnDataType_t compute) {
  cudnnBackendDescriptor_t c = ds.make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const int64_t spatial = p.spatial;
  int64_t pad[kMaxSpatial], stride[kMaxSpatial], dilation[kMaxSpatial];
  for (int i = 0; i < p.spatial; ++i) {
    pad[i] = p.pad[i];
    stride[i] = p.stride[i];
    dilation[i] = p.dilation[i];
  }
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const bool built = set(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute) &&
                     set(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode) &&
                     set(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial) &&
                     set(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, spatial, dilation) &&
                     set(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, spatial, stride) &&
                     set(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, spatial, pad) &&
                     set(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, spatial, pad) && finalize(c);
  return built ? c : nullptr;
}

// The operation node of the pass: y = conv(x, w), dx = conv_bwd_data(dy, w) or dw = conv_bwd_filter(x, dy).
cudnnBackendDescriptor_t operation(Descriptors& ds, GraphPass pass, cudnnBackendDescriptor_t x,
                                   cudnnBackendDescriptor_t w, cudnnBackendDescriptor_t y,
                                   cudnnBackendDescriptor_t conv, bool dbl) {
  struct Names {
    cudnnBackendDescriptorType_t type;
    cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
  };
  static const Names names[3] = {
      {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
      {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
      {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA},
  };
  const Names& n = names[static_cast<int>(pass)];
  cudnnBackendDescriptor_t op = ds.make(n.type);
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.f, zero_f = 0.f;
  const cudnnBackendAttributeType_t scalar = dbl ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  const void* one = dbl ? static_cast<const void*>(&one_d) : static_cast<const void*>(&one_f);
  const void* zero = dbl ? static_cast<const void*>(&zero_d) : static_cast<const void*>(&zero_f);
  const bool built =
      set(op, n.x, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x) && set(op, n.w, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w) &&
      set(op, n.y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y) && set(op, n.conv, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv) &&
      set(op, n.alpha, scalar, 1, one) && set(op, n.beta, scalar, 1, zero) && finalize(op);
  return built ? op : nullptr;
}

// The engine configurations cuDNN's heuristics rank for the graph in `mode`, best first.
std::vector<cudnnBackendDescriptor_t> ranked_configs(Descriptors& ds, cudnnBackendDescriptor_t graph,
                                                     cudnnBackendHeurMode_t mode) {
  cudnnBackendDescriptor_t heur = ds.make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  if (!set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph) ||
      !set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode) || !finalize(heur)) {
    return {};
  }
  int64_t count = 0;
  if (!ok(A().cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                       nullptr)) ||
      count <= 0) {
    return {};
  }
  std::vector<cudnnBackendDescriptor_t> configs(static_cast<size_t>(count));
  for (auto& c : configs) {
    c = ds.make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    if (c == nullptr) return {};
  }
  int64_t got = 0;
  if (!ok(A().cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                       configs.data()))) {
    return {};
  }
  configs.resize(static_cast<size_t>(std::min(got, count)));
  return configs;
}

// The numerical notes of a configuration's engine; false when they cannot be read.
bool engine_notes(Descriptors& ds, cudnnBackendDescriptor_t config, std::vector<int>* notes) {
  cudnnBackendDescriptor_t engine = ds.make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  int64_t n = 0;
  if (engine == nullptr || !ok(A().cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine))) {
    return false;
  }
  cudnnBackendNumericalNote_t raw[32];
  int64_t count = 0;
  if (!ok(A().cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, 32, &count,
                                       raw))) {
    return false;
  }
  notes->clear();
  for (int64_t i = 0; i < std::min<int64_t>(count, 32); ++i) notes->push_back(static_cast<int>(raw[i]));
  return true;
}

Tensor workspace(int64_t bytes) {
  return ember::empty({bytes}, ScalarType::Byte, Device(DeviceType::CUDA, current_device()));
}

struct Plan {
  cudnnBackendDescriptor_t plan = nullptr;  // null: no plan for this key (use the legacy API)
  int64_t workspace = 0;
};

// Runs `plan` once on the call's pointers with `ws` as its workspace.
cudnnStatus_t execute(cudnnBackendDescriptor_t plan, const GraphCall& call, void* ws) {
  Descriptors ds;
  cudnnBackendDescriptor_t pack = ds.make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  const int64_t uids[3] = {kUidX, kUidW, kUidY};
  void* ptrs[3] = {call.x_ptr, call.w_ptr, call.y_ptr};
  EMBER_CHECK(set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids) &&
                  set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs) &&
                  set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws) && finalize(pack),
              "cuDNN error: the convolution's variant pack could not be built");
  return A().cudnnBackendExecute(cudnn::handle(), plan, pack);
}

// Milliseconds of the plan's fastest timed run; negative when cuDNN refuses to run it.
float time_plan(const Plan& p, const GraphCall& call) {
  Tensor ws = p.workspace > 0 ? workspace(p.workspace) : Tensor();
  void* ws_ptr = ws.defined() ? ws.data_ptr() : nullptr;
  if (!ok(execute(p.plan, call, ws_ptr))) return -1.f;
  cudaStream_t stream = current_stream();
  cudaEvent_t start = nullptr, end = nullptr;
  EMBER_CUDA_CHECK(cudaEventCreate(&start));
  EMBER_CUDA_CHECK(cudaEventCreate(&end));
  float best = -1.f;
  for (int i = 0; i < kTimedRuns; ++i) {
    EMBER_CUDA_CHECK(cudaEventRecord(start, stream));
    const bool ran = ok(execute(p.plan, call, ws_ptr));
    EMBER_CUDA_CHECK(cudaEventRecord(end, stream));
    EMBER_CUDA_CHECK(cudaEventSynchronize(end));
    float ms = 0.f;
    EMBER_CUDA_CHECK(cudaEventElapsedTime(&ms, start, end));
    if (!ran) {
      best = -1.f;
      break;
    }
    if (best < 0.f || ms < best) best = ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  return best;
}

// Builds the plan of a call, or a null one.
Plan build_plan(const GraphCall& c, const int64_t* alignment) {
  Descriptors ds;
  const bool dbl = c.dtype == CUDNN_DATA_DOUBLE;
  const cudnnDataType_t compute = dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t x = tensor(ds, c.x, kUidX, c.dtype, alignment[0]);
  cudnnBackendDescriptor_t w = tensor(ds, c.w, kUidW, c.dtype, alignment[1]);
  cudnnBackendDescriptor_t y = tensor(ds, c.y, kUidY, c.dtype, alignment[2]);
  cudnnBackendDescriptor_t conv = convolution(ds, c.params, compute);
  if (!x || !w || !y || !conv) return {};
  cudnnBackendDescriptor_t op = operation(ds, c.pass, x, w, y, conv, dbl);
  if (!op) return {};
  cudnnHandle_t handle = cudnn::handle();
  cudnnBackendDescriptor_t graph = ds.make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  if (!set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op) ||
      !set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle) || !finalize(graph)) {
    return {};
  }
  const bool is_float32 = c.dtype == CUDNN_DATA_FLOAT;
  std::vector<int> notes;
  // With cudnn.benchmark: the fastest so far and how many plans were timed.
  Plan best;
  float best_ms = 0.f;
  int timed = 0;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_INSTANT, CUDNN_HEUR_MODE_FALLBACK}) {
    for (cudnnBackendDescriptor_t config : ranked_configs(ds, graph, mode)) {
      if (!engine_notes(ds, config, &notes) ||
          !engine_admitted(notes.data(), static_cast<int>(notes.size()), is_float32, c.allow_tf32, c.deterministic)) {
        continue;
      }
      cudnnBackendDescriptor_t plan = ds.make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      if (!set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle) ||
          !set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config) ||
          !finalize(plan)) {
        continue;
      }
      int64_t bytes = 0, n = 0;
      if (!ok(A().cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                           &bytes)) ||
          bytes < 0) {
        continue;
      }
      if (bytes > 0) {
        try {
          workspace(bytes);
        } catch (const Error&) {
          continue;  // out of memory: a configuration with less workspace
        }
      }
      if (!c.benchmark) {
        ds.release();  // the plan refers to the graph, its tensors and its configuration
        return {plan, bytes};
      }
      const float ms = time_plan({plan, bytes}, c);
      if (ms >= 0.f && (best.plan == nullptr || ms < best_ms)) {
        if (best.plan != nullptr) ds.destroy(best.plan);
        best = {plan, bytes};
        best_ms = ms;
      } else {
        ds.destroy(plan);
      }
      if (c.benchmark_limit > 0 && ++timed >= c.benchmark_limit) break;
    }
    if (c.benchmark_limit > 0 && timed >= c.benchmark_limit) break;
  }
  if (best.plan != nullptr) ds.release();
  return best;
}

struct GraphKey {
  ConvKey conv;  // a multiple of 8 bytes
  int64_t pass = 0;
  int64_t alignment[3] = {};
};

static_assert(sizeof(GraphKey) == sizeof(ConvKey) + 4 * sizeof(int64_t), "GraphKey has no padding");

bool operator==(const GraphKey& a, const GraphKey& b) { return std::memcmp(&a, &b, sizeof(GraphKey)) == 0; }

struct GraphKeyHash {
  size_t operator()(const GraphKey& k) const {
    const auto* p = reinterpret_cast<const unsigned char*>(&k);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof(GraphKey); ++i) {
      h ^= p[i];
      h *= 1099511628211ull;
    }
    return static_cast<size_t>(h);
  }
};

}  // namespace

bool graph_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("EMBER_CUDNN_GRAPH");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

bool run_graph(const ConvKey& key, const GraphCall& call) {
  GraphKey k;  // no padding bytes: compared and hashed as bytes
  k.conv = key;
  k.pass = static_cast<int64_t>(call.pass);
  k.alignment[0] = pointer_alignment(reinterpret_cast<uintptr_t>(call.x_ptr));
  k.alignment[1] = pointer_alignment(reinterpret_cast<uintptr_t>(call.w_ptr));
  k.alignment[2] = pointer_alignment(reinterpret_cast<uintptr_t>(call.y_ptr));
  // Plans hold the thread's cuDNN handle (the key names the device); they are
  // never destroyed, as the handles are not.
  thread_local auto* plans = new std::unordered_map<GraphKey, Plan, GraphKeyHash>();
  auto it = plans->find(k);
  if (it == plans->end()) it = plans->emplace(k, build_plan(call, k.alignment)).first;
  const Plan& plan = it->second;
  if (plan.plan == nullptr) return false;
  Tensor ws = plan.workspace > 0 ? workspace(plan.workspace) : Tensor();
  EMBER_CUDNN_CHECK(execute(plan.plan, call, ws.defined() ? ws.data_ptr() : nullptr));
  return true;
}

}  // namespace ember::cuda::conv
#endif  // EMBER_USE_CUDNN
