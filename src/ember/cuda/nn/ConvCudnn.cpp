// CUDA convolution through cuDNN: forward, backward data and backward filter
// for 1-d (as 2-d with a unit height), 2-d and 3-d convolutions, grouped,
// dilated, padded and transposed; float32 (TF32 as
// torch.backends.cudnn.allow_tf32 says), float64, float16, bfloat16;
// contiguous or channels-last. Note [cuDNN convolution].
#ifdef EMBER_USE_CUDNN
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/Error.h"
#include "ember/core/MemoryFormat.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/nn/ConvCudnnGraph.h"
#include "ember/cuda/nn/ConvPlan.h"
#include "ember/cuda/nn/CudnnLoader.h"
#include "ember/ops/CudnnSettings.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {
namespace {

// Note [cuDNN convolution]
// - Checks and result shapes are the CPU function's, run on meta copies (3-d
//   non-transposed calls, which the CPU has no kernel for, check here).
// - A transposed convolution is the backward-data pass of the convolution
//   whose input it produces; its gradients are that convolution's forward
//   (for the input) and backward-filter (for the weight) passes.
// - Layout as PyTorch's: channels-last when the input or the weight suggests
//   it (4-d and 5-d), else contiguous; the result has that layout.
// - The bias is added after the convolution with add_, and its gradient is a
//   sum of grad_output over every dim but the channels: PyTorch's order.
// - Algorithms: the graph API's engine heuristics, as PyTorch (Note [cuDNN
//   graph convolution]); where it builds no plan, the legacy API:
//   cuDNN's heuristics, first usable one (with
//   torch.backends.cudnn.benchmark, a timed search: of the graph API's plans,
//   Note [cuDNN graph benchmark], else cudnnFind); deterministic ones only
//   under cudnn.deterministic or use_deterministic_algorithms; the choice
//   is cached per shape, dtype, layout and switches (ConvPlan.h).
using conv::AlgoCache;
using conv::AlgoCandidate;
using conv::AlgoChoice;
using conv::ConvArgs;
using conv::ConvKey;
using conv::NdShape;

constexpr int kCpuKernel = static_cast<int>(DeviceType::CPU);
constexpr int kCudaKernel = static_cast<int>(DeviceType::CUDA);

enum class Pass { Forward, BackwardData, BackwardFilter };

AlgoCache& cache(Pass p) {
  static AlgoCache caches[3];
  return caches[static_cast<int>(p)];
}

Tensor meta_like(const Tensor& t) {
  if (!t.defined()) return t;
  return ember::empty_strided(t.sizes(), t.strides(), t.dtype(), Device(DeviceType::Meta));
}

cudnnDataType_t data_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float: return CUDNN_DATA_FLOAT;
    case ScalarType::Double: return CUDNN_DATA_DOUBLE;
    case ScalarType::Half: return CUDNN_DATA_HALF;
    case ScalarType::BFloat16: return CUDNN_DATA_BFLOAT16;
    default: break;
  }
  throw Error("cuDNN convolution: unsupported dtype");
}

MemoryFormat layout_of(const Tensor& input, const Tensor& weight) {
  const int64_t k = weight.dim();
  if (k != 4 && k != 5) return MemoryFormat::Contiguous;
  const MemoryFormat cl = k == 4 ? MemoryFormat::ChannelsLast : MemoryFormat::ChannelsLast3d;
  if (suggest_memory_format(input.sizes(), input.strides()) == cl ||
      suggest_memory_format(weight.sizes(), weight.strides()) == cl) {
    return cl;
  }
  return MemoryFormat::Contiguous;
}

NdShape shape_of(const Tensor& t) {
  return conv::as_cudnn_shape(t.sizes().data(), t.strides().data(), static_cast<int>(t.dim()));
}

void check_int_range(const NdShape& s) {
  for (int i = 0; i < s.dims; ++i) {
    EMBER_CHECK(s.sizes[i] <= INT32_MAX && s.strides[i] <= INT32_MAX,
                "cuDNN convolution: a tensor dimension or stride exceeds 2^31-1");
  }
}

// RAII descriptors of one call.
struct Descriptors {
  const cudnn::Api& api;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnDataType_t dtype;
  bool tf32 = false;

  // x: the convolution's input (large side), y: its output, w: the weight.
  Descriptors(const Tensor& xt, const Tensor& wt, const Tensor& yt, const ConvArgs& a, bool channels_last,
              bool allow_tf32)
      : api(cudnn::api()), dtype(data_type(xt.dtype())), tf32(allow_tf32) {
    EMBER_CUDNN_CHECK(api.cudnnCreateTensorDescriptor(&x));
    EMBER_CUDNN_CHECK(api.cudnnCreateTensorDescriptor(&y));
    EMBER_CUDNN_CHECK(api.cudnnCreateFilterDescriptor(&w));
    EMBER_CUDNN_CHECK(api.cudnnCreateConvolutionDescriptor(&conv));
    set_tensor(x, shape_of(xt));
    set_tensor(y, shape_of(yt));
    const NdShape ws = shape_of(wt);
    check_int_range(ws);
    int dims[conv::kMaxConvDims];
    for (int i = 0; i < ws.dims; ++i) dims[i] = static_cast<int>(ws.sizes[i]);
    EMBER_CUDNN_CHECK(
        api.cudnnSetFilterNdDescriptor(w, dtype, channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, ws.dims, dims));
    const conv::CudnnConvParams p = conv::cudnn_params(a);
    const cudnnDataType_t compute = dtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    EMBER_CUDNN_CHECK(api.cudnnSetConvolutionNdDescriptor(conv, p.spatial, p.pad, p.stride, p.dilation,
                                                          CUDNN_CROSS_CORRELATION, compute));
    EMBER_CUDNN_CHECK(api.cudnnSetConvolutionGroupCount(conv, static_cast<int>(a.groups)));
    set_math(default_math());
  }
  ~Descriptors() {
    api.cudnnDestroyConvolutionDescriptor(conv);
    api.cudnnDestroyFilterDescriptor(w);
    api.cudnnDestroyTensorDescriptor(y);
    api.cudnnDestroyTensorDescriptor(x);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;

  void set_tensor(cudnnTensorDescriptor_t d, const NdShape& s) {
    check_int_range(s);
    int dims[conv::kMaxConvDims], strides[conv::kMaxConvDims];
    for (int i = 0; i < s.dims; ++i) {
      dims[i] = static_cast<int>(s.sizes[i]);
      strides[i] = static_cast<int>(s.strides[i]);
    }
    EMBER_CUDNN_CHECK(api.cudnnSetTensorNdDescriptor(d, dtype, s.dims, dims, strides));
  }
  // Tensor cores for 16-bit floats; for float32 only as TF32, when allowed.
  cudnnMathType_t default_math() const {
    if (dtype == CUDNN_DATA_HALF || dtype == CUDNN_DATA_BFLOAT16) return CUDNN_TENSOR_OP_MATH;
    if (dtype == CUDNN_DATA_FLOAT && !tf32) return CUDNN_FMA_MATH;
    return CUDNN_DEFAULT_MATH;
  }
  void set_math(cudnnMathType_t m) {
    if (dtype == CUDNN_DATA_FLOAT && !tf32) m = CUDNN_FMA_MATH;
    EMBER_CUDNN_CHECK(api.cudnnSetConvolutionMathType(conv, m));
  }
};

template <typename Perf>
AlgoCandidate candidate_of(const Perf& p) {
  AlgoCandidate c;
  c.algo = static_cast<int>(p.algo);
  c.status = p.status == CUDNN_STATUS_SUCCESS ? 0 : 1;
  c.deterministic = p.determinism == CUDNN_DETERMINISTIC;
  c.math_type = static_cast<int>(p.mathType);
  c.memory = p.memory;
  return c;
}

// The three passes' cuDNN calls behind one interface.
struct PassCalls {
  Pass pass;
  Descriptors& d;
  cudnnHandle_t h;
  const void* x;  // forward: x; backward data: dy; backward filter: x
  const void* w;  // forward: w; backward data: w; backward filter: dy
  void* out;  // y, dx or dw

  int count() const {
    switch (pass) {
      case Pass::Forward: return CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
      case Pass::BackwardData: return CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
      default: return CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
    }
  }

  // Heuristic (search=false) or timed (search=true) candidates, best first.
  std::vector<AlgoCandidate> candidates(bool search, void* workspace, size_t workspace_size) {
    const cudnn::Api& a = d.api;
    std::vector<AlgoCandidate> out_list;
    int n = 0;
    const int want = count();
    switch (pass) {
      case Pass::Forward: {
        std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(want);
        if (search) {
          EMBER_CUDNN_CHECK(a.cudnnFindConvolutionForwardAlgorithmEx(h, d.x, x, d.w, w, d.conv, d.y, out, want, &n,
                                                                     perf.data(), workspace, workspace_size));
        } else {
          EMBER_CUDNN_CHECK(a.cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, want, &n, perf.data()));
        }
        for (int i = 0; i < n; ++i) out_list.push_back(candidate_of(perf[i]));
        break;
      }
      case Pass::BackwardData: {
        std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(want);
        if (search) {
          EMBER_CUDNN_CHECK(a.cudnnFindConvolutionBackwardDataAlgorithmEx(h, d.w, w, d.y, x, d.conv, d.x, out, want, &n,
                                                                          perf.data(), workspace, workspace_size));
        } else {
          EMBER_CUDNN_CHECK(
              a.cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, want, &n, perf.data()));
        }
        for (int i = 0; i < n; ++i) out_list.push_back(candidate_of(perf[i]));
        break;
      }
      case Pass::BackwardFilter: {
        std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(want);
        if (search) {
          EMBER_CUDNN_CHECK(a.cudnnFindConvolutionBackwardFilterAlgorithmEx(
              h, d.x, x, d.y, w, d.conv, d.w, out, want, &n, perf.data(), workspace, workspace_size));
        } else {
          EMBER_CUDNN_CHECK(
              a.cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, want, &n, perf.data()));
        }
        for (int i = 0; i < n; ++i) out_list.push_back(candidate_of(perf[i]));
        break;
      }
    }
    return out_list;
  }

  // Workspace bytes of an algorithm under the descriptor's current math type; false when cuDNN refuses it.
  bool workspace_size(int algo, size_t* bytes) {
    const cudnn::Api& a = d.api;
    cudnnStatus_t s;
    switch (pass) {
      case Pass::Forward:
        s = a.cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y,
                                                      static_cast<cudnnConvolutionFwdAlgo_t>(algo), bytes);
        break;
      case Pass::BackwardData:
        s = a.cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x,
                                                           static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes);
        break;
      default:
        s = a.cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.w,
                                                             static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes);
        break;
    }
    return s == CUDNN_STATUS_SUCCESS;
  }

  void run(const AlgoChoice& c, void* workspace) {
    const cudnn::Api& a = d.api;
    // alpha/beta are double for double data, float otherwise.
    const float one_f = 1.f, zero_f = 0.f;
    const double one_d = 1.0, zero_d = 0.0;
    const bool dbl = d.dtype == CUDNN_DATA_DOUBLE;
    const void* one = dbl ? static_cast<const void*>(&one_d) : static_cast<const void*>(&one_f);
    const void* zero = dbl ? static_cast<const void*>(&zero_d) : static_cast<const void*>(&zero_f);
    d.set_math(static_cast<cudnnMathType_t>(c.math_type));
    switch (pass) {
      case Pass::Forward:
        EMBER_CUDNN_CHECK(a.cudnnConvolutionForward(h, one, d.x, x, d.w, w, d.conv,
                                                    static_cast<cudnnConvolutionFwdAlgo_t>(c.algo), workspace,
                                                    c.workspace, zero, d.y, out));
        break;
      case Pass::BackwardData:
        EMBER_CUDNN_CHECK(a.cudnnConvolutionBackwardData(h, one, d.w, w, d.y, x, d.conv,
                                                         static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo), workspace,
                                                         c.workspace, zero, d.x, out));
        break;
      case Pass::BackwardFilter:
        EMBER_CUDNN_CHECK(a.cudnnConvolutionBackwardFilter(h, one, d.x, x, d.y, w, d.conv,
                                                           static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo),
                                                           workspace, c.workspace, zero, d.w, out));
        break;
    }
  }
};

Tensor workspace_tensor(size_t bytes, const Device& device) {
  return ember::empty({static_cast<int64_t>(bytes)}, ScalarType::Byte, device);
}

// Tries to allocate; an undefined tensor when the device is out of memory.
Tensor try_workspace(size_t bytes, const Device& device) {
  if (bytes == 0) return Tensor();
  try {
    return workspace_tensor(bytes, device);
  } catch (const Error&) {
    return Tensor();
  }
}

// Largest workspace a timed search may use (PyTorch bounds it by what the allocator can give).
constexpr size_t kSearchWorkspaceCap = size_t(1) << 30;

AlgoChoice choose(PassCalls& calls, const ConvKey& key, bool benchmark, bool deterministic, const Device& device) {
  if (auto hit = cache(calls.pass).find(key)) return *hit;
  std::vector<AlgoCandidate> list;
  Tensor search_space;
  if (benchmark) {
    // A workspace as large as the largest heuristic candidate needs (capped), then a timed search.
    size_t largest = 0;
    for (const AlgoCandidate& c : calls.candidates(false, nullptr, 0)) {
      size_t bytes = 0;
      if (c.status == 0 && calls.workspace_size(c.algo, &bytes) && bytes <= kSearchWorkspaceCap) {
        largest = std::max(largest, bytes);
      }
    }
    search_space = try_workspace(largest, device);
    const size_t have = search_space.defined() ? largest : 0;
    list = calls.candidates(true, search_space.defined() ? search_space.data_ptr() : nullptr, have);
    search_space = Tensor();
  } else {
    list = calls.candidates(false, nullptr, 0);
  }
  for (size_t start = 0; start < list.size();) {
    const int i =
        conv::pick_candidate(list.data() + start, static_cast<int>(list.size() - start), deterministic, SIZE_MAX);
    if (i < 0) break;
    const AlgoCandidate c = list[start + i];
    start += i + 1;
    calls.d.set_math(static_cast<cudnnMathType_t>(c.math_type));
    size_t bytes = 0;
    if (!calls.workspace_size(c.algo, &bytes)) continue;
    if (bytes > 0 && !try_workspace(bytes, device).defined()) continue;
    AlgoChoice choice{c.algo, c.math_type, bytes};
    cache(calls.pass).insert(key, choice);
    return choice;
  }
  throw Error(std::string("cuDNN error: no ") + (deterministic ? "deterministic " : "") +
              "convolution algorithm is usable for this shape");
}

// Runs one pass: `x` the convolution's input (or dy/x as PassCalls says), `w`, and `out` preallocated.
void run_pass(Pass pass, const Tensor& large, const Tensor& weight, const Tensor& small, const Tensor& xin,
              const Tensor& win, const Tensor& out, const ConvArgs& a, bool channels_last) {
  const CudnnSettings s = cudnn_settings();
  const bool deterministic = s.deterministic || deterministic_algorithms();
  const Device device = out.device();
  ConvKey key = conv::make_key(shape_of(large), shape_of(weight), shape_of(small), a, static_cast<int>(large.dtype()),
                               channels_last, s.allow_tf32, deterministic, s.benchmark, device.index);
  if (conv::graph_enabled()) {
    // The pointers bound to x, w and y (Note [cuDNN graph convolution]).
    conv::GraphCall g;
    g.pass = static_cast<conv::GraphPass>(pass);
    g.dtype = data_type(large.dtype());
    g.x = shape_of(large);
    g.w = shape_of(weight);
    g.y = shape_of(small);
    g.params = conv::cudnn_params(a);
    g.allow_tf32 = s.allow_tf32;
    g.deterministic = deterministic;
    g.benchmark = s.benchmark;
    g.benchmark_limit = s.benchmark_limit;
    void* ptrs[3] = {xin.data_ptr(), win.data_ptr(), out.data_ptr()};
    const int slot[3][3] = {{0, 1, 2}, {2, 1, 0}, {0, 2, 1}};  // x, w, y for forward, backward data, backward filter
    const int* sl = slot[static_cast<int>(pass)];
    g.x_ptr = ptrs[sl[0]];
    g.w_ptr = ptrs[sl[1]];
    g.y_ptr = ptrs[sl[2]];
    if (conv::run_graph(key, g)) return;
  }
  Descriptors d(large, weight, small, a, channels_last, s.allow_tf32);
  PassCalls calls{pass, d, cudnn::handle(), xin.data_ptr(), win.data_ptr(), out.data_ptr()};
  const AlgoChoice c = choose(calls, key, s.benchmark, deterministic, device);
  Tensor ws = c.workspace > 0 ? workspace_tensor(c.workspace, device) : Tensor();
  calls.run(c, ws.defined() ? ws.data_ptr() : nullptr);
}

ConvArgs conv_args(const Tensor& weight, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups) {
  ConvArgs a;
  a.spatial = static_cast<int>(weight.dim()) - 2;
  EMBER_CHECK(a.spatial >= 1 && a.spatial <= conv::kMaxSpatial, "weight should have at least three dimensions");
  auto fill = [&](IntArrayRef v, int64_t* dst, int64_t dflt) {
    for (int i = 0; i < a.spatial; ++i) dst[i] = v.empty() ? dflt : (v.size() == 1 ? v[0] : v[i]);
  };
  fill(stride, a.stride, 1);
  fill(padding, a.padding, 0);
  fill(dilation, a.dilation, 1);
  fill(output_padding, a.output_padding, 0);
  a.groups = groups;
  a.transposed = transposed;
  return a;
}

bool cudnn_dtype(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half || t == ScalarType::BFloat16;
}

const char* kernel_name(int spatial, bool transposed) {
  if (transposed) return spatial == 3 ? "slow_conv_transpose3d_out_cuda" : "slow_conv_transpose2d_out_cuda";
  return spatial == 3 ? "slow_conv3d_cuda" : "slow_conv2d_cuda";
}

// PyTorch's CUDA convolution hands every real dtype to cuDNN: the 8-bit and
// 32-bit integers are cuDNN types without an engine for convolution, the
// others have no cuDNN type.
[[noreturn]] void refuse_integer_conv(ScalarType dtype, int spatial, bool transposed) {
  if (dtype == ScalarType::Byte || dtype == ScalarType::Char || dtype == ScalarType::Int) {
    throw Error("GET was unable to find an engine to execute this computation");
  }
  if (is_integral_type(dtype, /*include_bool=*/true)) {
    throw Error(str_cat("getCudnnDataTypeFromScalarType() not supported for ", dtype_message_name(dtype)));
  }
  throw NotImplementedError(
      str_cat("\"", kernel_name(spatial, transposed), "\" not implemented for '", dtype_message_name(dtype), "'"));
}

// The checks of the CPU function and the result's shape (Note [cuDNN convolution]).
DimVector checked_output_shape(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                               IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                               IntArrayRef output_padding, int64_t groups) {
  if (weight.dim() != 5 || transposed) {
    std::optional<Tensor> meta_bias;
    if (bias && bias->defined()) meta_bias = meta_like(*bias);
    Tensor out = dispatch::convolution_kernels[static_cast<int>(DeviceType::Meta)](
        meta_like(input), meta_like(weight), meta_bias, stride, padding, dilation, transposed, output_padding, groups);
    return DimVector(out.sizes());
  }
  const ConvArgs a = conv_args(weight, stride, padding, dilation, transposed, output_padding, groups);
  EMBER_CHECK(input.dim() == 5, "Expected 5-dimensional input for 5-dimensional weight ", shape_string(weight.sizes()),
              ", but got ", input.dim(), "-dimensional input of size ", shape_string(input.sizes()), " instead");
  EMBER_CHECK(groups > 0, "non-positive groups is not supported");
  EMBER_CHECK(weight.size(0) % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ", groups,
              " at dimension 0, but got weight of size [", shape_string(weight.sizes()), "] instead");
  EMBER_CHECK(input.size(1) == weight.size(1) * groups, "Given groups=", groups, ", weight of size ",
              shape_string(weight.sizes()), ", expected input", shape_string(input.sizes()), " to have ",
              weight.size(1) * groups, " channels, but got ", input.size(1), " channels instead");
  EMBER_CHECK(!bias || !bias->defined() || (bias->dim() == 1 && bias->size(0) == weight.size(0)),
              "Given weight of size ", shape_string(weight.sizes()), ", expected bias to be 1-dimensional with ",
              weight.size(0), " elements, but got bias of size ", shape_string(bias->sizes()), " instead");
  EMBER_CHECK(weight.dtype() == input.dtype(), "expected scalar type ", dtype_message_name(input.dtype()),
              " but found ", dtype_message_name(weight.dtype()));
  DimVector out{input.size(0), weight.size(0)};
  for (int i = 0; i < 3; ++i) {
    EMBER_CHECK(a.stride[i] > 0, "non-positive stride is not supported");
    EMBER_CHECK(a.padding[i] >= 0, "negative padding is not supported");
    EMBER_CHECK(a.dilation[i] > 0, "non-positive dilation is not supported");
    const int64_t padded = input.size(2 + i) + 2 * a.padding[i];
    const int64_t span = a.dilation[i] * (weight.size(2 + i) - 1) + 1;
    EMBER_CHECK(padded >= span, "Calculated padded input size per channel: (", input.size(2) + 2 * a.padding[0], " x ",
                input.size(3) + 2 * a.padding[1], " x ", input.size(4) + 2 * a.padding[2], "). Kernel size: (",
                a.dilation[0] * (weight.size(2) - 1) + 1, " x ", a.dilation[1] * (weight.size(3) - 1) + 1, " x ",
                a.dilation[2] * (weight.size(4) - 1) + 1, "). Kernel size can't be greater than actual input size");
    out.push_back(
        conv::conv_output_size(input.size(2 + i), weight.size(2 + i), a.padding[i], a.stride[i], a.dilation[i]));
  }
  return out;
}

Tensor empty_in(IntArrayRef sizes, ScalarType dtype, const Device& device, MemoryFormat fmt) {
  return ember::empty(sizes, dtype, device, fmt);
}

Tensor bias_view(const Tensor& bias, int64_t dims) {
  DimVector shape(static_cast<size_t>(dims), 1);
  shape[1] = bias.size(0);
  return bias.view(shape);
}

Tensor convolution_cuda(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                        IntArrayRef output_padding, int64_t groups) {
  const DimVector out_shape =
      checked_output_shape(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
  const ConvArgs a = conv_args(weight, stride, padding, dilation, transposed, output_padding, groups);
  const ScalarType dtype = input.dtype();
  if (!cudnn_dtype(dtype)) refuse_integer_conv(dtype, a.spatial, transposed);
  const MemoryFormat fmt = layout_of(input, weight);
  const bool cl = fmt != MemoryFormat::Contiguous;
  Tensor out = empty_in(out_shape, dtype, input.device(), fmt);
  if (out.numel() == 0) return out;
  if (input.numel() == 0 || weight.numel() == 0) {
    out.zero_();
  } else {
    const Tensor x = input.contiguous(fmt), w = weight.contiguous(fmt);
    if (!transposed) {
      run_pass(Pass::Forward, x, w, out, x, w, out, a, cl);
    } else {
      // The transposed convolution's output is the input of the convolution it reverses.
      run_pass(Pass::BackwardData, out, w, x, x, w, out, a, cl);
    }
  }
  if (bias && bias->defined()) out.add_(bias_view(*bias, out.dim()));
  return out;
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward_cuda(const Tensor& grad_output, const Tensor& input,
                                                             const Tensor& weight, IntArrayRef stride,
                                                             IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                                             IntArrayRef output_padding, int64_t groups,
                                                             std::array<bool, 3> mask) {
  checked_output_shape(input, weight, std::nullopt, stride, padding, dilation, transposed, output_padding, groups);
  const ConvArgs a = conv_args(weight, stride, padding, dilation, transposed, output_padding, groups);
  const ScalarType dtype = input.dtype();
  if (!cudnn_dtype(dtype)) {
    throw NotImplementedError(
        str_cat("\"", kernel_name(a.spatial, transposed), "\" not implemented for '", dtype_message_name(dtype), "'"));
  }
  const MemoryFormat fmt = layout_of(input, weight);
  const bool cl = fmt != MemoryFormat::Contiguous;
  const Tensor gy = grad_output.to(dtype).contiguous(fmt);
  const Tensor x = input.contiguous(fmt), w = weight.contiguous(fmt);
  const bool empty = x.numel() == 0 || w.numel() == 0 || gy.numel() == 0;
  Tensor gx, gw, gb;
  if (mask[0]) {
    gx = empty_in(input.sizes(), dtype, input.device(), fmt);
    if (gx.numel() > 0) {
      if (empty) {
        gx.zero_();
      } else if (!transposed) {
        run_pass(Pass::BackwardData, gx, w, gy, gy, w, gx, a, cl);
      } else {
        run_pass(Pass::Forward, gy, w, gx, gy, w, gx, a, cl);
      }
    }
  }
  if (mask[1]) {
    gw = empty_in(weight.sizes(), dtype, weight.device(), fmt);
    if (gw.numel() > 0) {
      if (empty) {
        gw.zero_();
      } else if (!transposed) {
        run_pass(Pass::BackwardFilter, x, gw, gy, x, gy, gw, a, cl);
      } else {
        // The reversed convolution's input is grad_output and its output the input.
        run_pass(Pass::BackwardFilter, gy, gw, x, gy, x, gw, a, cl);
      }
    }
  }
  if (mask[2]) {
    std::vector<int64_t> dims{0};
    for (int64_t d = 2; d < grad_output.dim(); ++d) dims.push_back(d);
    gb = grad_output.sum(dims);
  }
  return {gx, gw, gb};
}

const bool registered = [] {
  dispatch::convolution_kernels[kCudaKernel] = &convolution_cuda;
  dispatch::convolution_backward_kernels[kCudaKernel] = &convolution_backward_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
#endif  // EMBER_USE_CUDNN
