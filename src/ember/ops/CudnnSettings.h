#pragma once
// torch.backends.cudnn's switches (enabled, benchmark, deterministic,
// allow_tf32, benchmark_limit) as one C++ state the CUDA convolution reads,
// and the cuDNN library's answers (version, or why it is unavailable), which
// libember_cuda registers when it loads; torch.backends.mkldnn.enabled.
#include <string>

#include "ember/core/Macros.h"

namespace ember {

struct CudnnSettings {
  bool enabled = true;
  bool benchmark = false;
  bool deterministic = false;
  bool allow_tf32 = true;
  int benchmark_limit = 10;
};

EMBER_API CudnnSettings cudnn_settings();
EMBER_API void set_cudnn_settings(const CudnnSettings& s);
// torch.use_deterministic_algorithms: cuDNN then also picks deterministic algorithms.
EMBER_API bool deterministic_algorithms();
EMBER_API void set_deterministic_algorithms(bool on);

// torch.backends.mkldnn.enabled (PyTorch's userEnabledMkldnn): while off,
// the CPU kernels that PyTorch hands to oneDNN by its own choice (GELU) take
// their own loops, as PyTorch's do.
EMBER_API bool user_enabled_onednn();
EMBER_API void set_user_enabled_onednn(bool on);

// What the CUDA backend's cuDNN loader answers.
struct CudnnLibrary {
  virtual ~CudnnLibrary() = default;
  // cudnnGetVersion() of the loaded library (e.g. 92801); -1 when it cannot be loaded.
  virtual long version() const = 0;
  // "" when loaded; otherwise why not (paths tried).
  virtual std::string load_error() const = 0;
  // Directories searched first for libcudnn.so.9 (the nvidia-cudnn wheel's lib folder).
  virtual void add_search_dir(const std::string& dir) const = 0;
};
EMBER_API void register_cudnn_library(const CudnnLibrary* lib);
// nullptr when the build has no cuDNN support.
EMBER_API const CudnnLibrary* cudnn_library();

}  // namespace ember
