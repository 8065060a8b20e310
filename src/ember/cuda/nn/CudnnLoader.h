#pragma once
// cuDNN, loaded at run time: libcudnn.so.9 from the nvidia-cudnn wheel is
// opened on first use (dlopen), so libember_cuda loads and runs everything
// else where cuDNN is absent; the convolution then raises an error naming the
// paths tried. Note [Finding cuDNN] in CudnnLoader.cpp says where it looks.
#include <cudnn.h>

#include <string>

namespace ember::cuda::cudnn {

// The entry points the convolution uses, resolved from the loaded library.
struct Api {
#define EMBER_CUDNN_FN(name) decltype(&::name) name = nullptr;
#include "ember/cuda/nn/CudnnFunctions.inc"
#undef EMBER_CUDNN_FN
};

// The loaded library's entry points; throws ember::Error (why, and where it
// looked) when libcudnn cannot be loaded.
const Api& api();
// Whether it loads (tries once).
bool available();
// cudnnGetVersion(), -1 when unavailable.
long version();
std::string load_error();
void add_search_dir(const std::string& dir);

// The calling thread's handle for the current device, bound to its current stream.
cudnnHandle_t handle();

// Throws ember::Error naming the failed call and cuDNN's message.
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* expr);

}  // namespace ember::cuda::cudnn

#define EMBER_CUDNN_CHECK(expr)                                            \
  do {                                                                     \
    const cudnnStatus_t ember_cudnn_status_ = (expr);                      \
    if (ember_cudnn_status_ != CUDNN_STATUS_SUCCESS) {                     \
      ::ember::cuda::cudnn::throw_cudnn_error(ember_cudnn_status_, #expr); \
    }                                                                      \
  } while (0)
