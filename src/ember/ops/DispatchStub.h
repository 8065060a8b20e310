#pragma once
// Kernel selection by device and, on the CPU, by capability. Kernel files
// under cpu/kernels are compiled once per capability (DEFAULT, AVX2, AVX512),
// each registering its function into a stub; a call picks the best one this
// CPU supports. A device backend (CUDA) fills its entry when it is loaded.
//
// Note [Stub device]
// A call runs the kernel of the device its data lives on: the device of a
// TensorIterator first argument, else of the first defined tensor argument
// (a TensorBase or a class derived from it). A device without a kernel
// raises. A stub called with neither (raw pointers, plans) cannot tell, so
// such a call does not compile: the caller names the device, get() for the
// CPU kernel once it has made sure its tensors are on the CPU, or
// for_device(); cpu::kernel_for (cpu/ReduceStubs.h) raises PyTorch's error
// for an operator without a kernel on the tensor's device.

#include <array>
#include <tuple>
#include <type_traits>

#include "ember/core/Device.h"
#include "ember/core/Macros.h"
#include "ember/core/TensorBase.h"

namespace ember {

class TensorIterator;
// Whether the iterator's outputs are meta tensors (defined in TensorIterator.cpp).
EMBER_API bool iterator_is_meta(const TensorIterator& it);
// The device type of the iterator's outputs (TensorIterator.cpp).
EMBER_API DeviceType iterator_device_type(const TensorIterator& it);
// Throws the error for a stub without a kernel for a device (TensorIterator.cpp).
[[noreturn]] EMBER_API void missing_device_kernel(DeviceType device);

enum class CpuCapability : int { Default = 0, AVX2 = 1, AVX512 = 2, NumCapabilities = 3 };

// The capability in use: the best the CPU supports among those compiled in,
// lowered by EMBER_CPU_CAPABILITY=default|avx2|avx512 if set.
EMBER_API CpuCapability cpu_capability();
EMBER_API const char* cpu_capability_name(CpuCapability c);
// Names of the capabilities compiled into this build, e.g. "DEFAULT AVX2 AVX512".
EMBER_API const char* compiled_cpu_capabilities();

template <typename Fn>
struct DispatchStub {
  std::array<Fn, static_cast<int>(CpuCapability::NumCapabilities)> table{};
  Fn cuda = nullptr;

  // The CPU kernel of the best capability compiled in.
  Fn get() const {
    for (int c = static_cast<int>(cpu_capability()); c >= 0; --c) {
      if (table[c]) return table[c];
    }
    return nullptr;
  }
  // The kernel for a device, or nullptr.
  Fn for_device(DeviceType device) const {
    if (device == DeviceType::CPU) return get();
    if (device == DeviceType::CUDA) return cuda;
    return nullptr;
  }
  // Runs the kernel of the arguments' device (Note [Stub device]).
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) const {
    DeviceType device = DeviceType::CPU;
    if constexpr (runs_on_iterator<Args...>()) {
      // A meta iterator has computed its outputs' metadata; there is no data to loop over.
      const TensorIterator& it = first_of(args...);
      if (iterator_is_meta(it)) return;
      device = iterator_device_type(it);
    } else {
      static_assert((is_tensor<Args>() || ...),
                    "a stub called without a TensorIterator or a tensor cannot tell the device: "
                    "call get() for the CPU kernel or for_device() (Note [Stub device])");
      device = first_tensor_device(args...);
    }
    if (device != DeviceType::CPU) {
      const Fn fn = for_device(device);
      if (!fn) missing_device_kernel(device);
      return fn(std::forward<Args>(args)...);
    }
    return get()(std::forward<Args>(args)...);
  }

 private:
  template <typename... Args>
  static constexpr bool runs_on_iterator() {
    if constexpr (sizeof...(Args) == 0) {
      return false;
    } else {
      using First = std::decay_t<std::tuple_element_t<0, std::tuple<Args...>>>;
      return std::is_same_v<First, TensorIterator> && std::is_void_v<std::invoke_result_t<Fn, Args...>>;
    }
  }
  template <typename First, typename... Rest>
  static const First& first_of(const First& first, const Rest&...) {
    return first;
  }
  template <typename T>
  static constexpr bool is_tensor() {
    return std::is_base_of_v<TensorBase, std::decay_t<T>>;
  }
  // The device of the first defined tensor argument; the CPU if none is defined.
  template <typename... Rest>
  static DeviceType first_tensor_device(const Rest&... rest) {
    DeviceType device = DeviceType::CPU;
    bool found = false;
    auto visit = [&](const auto& arg) {
      if constexpr (is_tensor<decltype(arg)>()) {
        if (!found && arg.defined()) {
          device = arg.device().type;
          found = true;
        }
      }
    };
    (visit(rest), ...);
    return device;
  }
};

#define EMBER_DECLARE_DISPATCH(fn_type, name) extern EMBER_API ::ember::DispatchStub<fn_type> name
#define EMBER_DEFINE_DISPATCH(fn_type, name) ::ember::DispatchStub<fn_type> name

// Used inside a kernel file: registers fn for the capability being compiled.
#define EMBER_REGISTER_DISPATCH(name, fn) EMBER_REGISTER_STUB_(name, name, fn)
// Registers kernel as the CPU kernel of a pointwise operator (its stub is
// generated from ops.yaml: ember/ops/generated/PointwiseStubs.h).
#define EMBER_REGISTER_POINTWISE(op, kernel) EMBER_REGISTER_STUB_(op, ::ember::native::op##_stub, kernel)
#define EMBER_REGISTER_STUB_(tag, stub, fn)                                          \
  static const bool EMBER_CONCAT_(tag##_registered_, __LINE__) = [] {                \
    stub.table[static_cast<int>(::ember::CpuCapability::EMBER_CPU_CAPABILITY)] = fn; \
    return true;                                                                     \
  }()
#define EMBER_CONCAT_IMPL_(a, b) a##b
#define EMBER_CONCAT_(a, b) EMBER_CONCAT_IMPL_(a, b)

}  // namespace ember
