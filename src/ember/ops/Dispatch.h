#pragma once
// The dispatcher's errors for an operator without a kernel on a device, in
// PyTorch's words (ops/Dispatch.cpp).

#include "ember/core/Device.h"
#include "ember/core/Macros.h"
#include "ember/core/TensorBase.h"

#include <initializer_list>

namespace ember::dispatch {

// PyTorch's error for `op` ("aten::cumprod", or the schema name "cumprod")
// without a kernel for `device`: NotImplementedError: Could not run
// 'aten::cumprod' with arguments from the 'CUDA' backend...
[[noreturn]] EMBER_API void missing_kernel(const char* op, DeviceType device);

// For a native function that computes on the host (loops over data_ptr(),
// LAPACK, std::sort...) but is reachable with CUDA tensors: raises the
// missing-kernel error when a defined tensor lives on CUDA, as PyTorch's
// dispatcher does for an operator without a CUDA kernel. Meta tensors pass
// (their callers compute metadata only).
template <typename... Tensors>
void check_cpu_only(const char* op, const Tensors&... tensors) {
  const auto check = [op](const TensorBase& t) {
    if (t.defined() && t.device().is_cuda()) missing_kernel(op, DeviceType::CUDA);
  };
  (check(tensors), ...);
}

// PyTorch's device check of an operator's CUDA entry (generated for the
// operators with `device_check` in ops.yaml): the defined tensors share the
// first one's device, else RuntimeError "Expected all tensors to be on the
// same device, but got ARG is on ..., different from other tensors on ...
// (when checking argument in method METHOD)". Calls without a CUDA tensor,
// or with a meta tensor, pass; so do wrapped numbers (internal numbers).
struct NamedTensor {
  const char* name;
  const TensorBase* tensor;
};
EMBER_API void check_same_device_of_cuda_call(const char* method, std::initializer_list<NamedTensor> args);
inline void check_same_device(const char* method, std::initializer_list<NamedTensor> args) {
  for (const NamedTensor& a : args) {
    if (a.tensor && a.tensor->defined() && a.tensor->device().is_cuda()) {
      check_same_device_of_cuda_call(method, args);
      return;
    }
  }
}

}  // namespace ember::dispatch
