#pragma once
// Device guards for CUDA extension sources: the current CUDA device is the
// tensor's for the guard's scope (c10::cuda::CUDAGuard,
// at::cuda::OptionalCUDAGuard guard(at::device_of(x))).

#include <optional>

#include <c10/cuda/CUDAStream.h>

namespace c10::cuda {

class CUDAGuard {
 public:
  explicit CUDAGuard(int device) { set(device); }
  explicit CUDAGuard(const ::ember::Device& device) { set(device.index); }
  CUDAGuard(const CUDAGuard&) = delete;
  CUDAGuard& operator=(const CUDAGuard&) = delete;
  ~CUDAGuard() {
    if (original_ >= 0) cudaSetDevice(original_);
  }
  void set_device(const ::ember::Device& device) { set(device.index); }
  void set_index(int device) { set(device); }
  int original_device() const { return original_; }
  int current_device() const { return current_; }

 private:
  void set(int device) {
    if (original_ < 0) original_ = ::c10::cuda::current_device();
    current_ = device < 0 ? original_ : device;
    if (current_ != ::c10::cuda::current_device()) {
      const cudaError_t error = cudaSetDevice(current_);
      TORCH_CHECK(error == cudaSuccess, "CUDA error: ", cudaGetErrorString(error));
    }
  }
  int original_ = -1;
  int current_ = -1;
};

// A guard that does nothing for an absent or non-CUDA device.
class OptionalCUDAGuard {
 public:
  OptionalCUDAGuard() = default;
  explicit OptionalCUDAGuard(const std::optional<::ember::Device>& device) { set_device(device); }
  void set_device(const std::optional<::ember::Device>& device) {
    if (device && device->is_cuda()) guard_.emplace(*device);
  }
  void reset() { guard_.reset(); }

 private:
  std::optional<CUDAGuard> guard_;
};

}  // namespace c10::cuda

namespace at {
// The device of a tensor, for a guard (none for an undefined tensor).
inline std::optional<::ember::Device> device_of(const ::ember::Tensor& t) {
  return t.defined() ? std::optional<::ember::Device>(t.device()) : std::nullopt;
}
namespace cuda {
using ::c10::cuda::CUDAGuard;
using ::c10::cuda::OptionalCUDAGuard;
}  // namespace cuda
}  // namespace at
