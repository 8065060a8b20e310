#pragma once
// The dispatcher's errors for an operator without a kernel on a device, in
// PyTorch's words (ops/Dispatch.cpp).

#include "ember/core/Device.h"
#include "ember/core/Macros.h"
#include "ember/core/TensorBase.h"

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

}  // namespace ember::dispatch
