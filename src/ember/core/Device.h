#pragma once
// Where a tensor's memory lives: a device type and an index (-1 = current).

#include <cstdint>
#include <string>
#include <type_traits>

#include "ember/core/Error.h"

namespace ember {

// The one list of device types; kNumDeviceTypes sizes every per-device table.
// The first three have backends in Ember; the others are the rest of
// PyTorch's device types, which parse and print but hold no tensor (creating
// one there raises the error PyTorch raises in a build without that backend).
// clang-format off
#define EMBER_FORALL_DEVICE_TYPES(_)                                          \
  _(CPU, cpu) _(CUDA, cuda) _(Meta, meta)                                     \
  _(IPU, ipu) _(XPU, xpu) _(MKLDNN, mkldnn) _(OpenGL, opengl)                 \
  _(OpenCL, opencl) _(IDEEP, ideep) _(HIP, hip) _(VE, ve) _(FPGA, fpga)       \
  _(MAIA, maia) _(XLA, xla) _(Lazy, lazy) _(Vulkan, vulkan) _(MPS, mps)       \
  _(HPU, hpu) _(MTIA, mtia) _(PrivateUse1, privateuseone)
// clang-format on

enum class DeviceType : int8_t {
#define EMBER_DEVICE_ENUM(name, lower) name,
  EMBER_FORALL_DEVICE_TYPES(EMBER_DEVICE_ENUM)
#undef EMBER_DEVICE_ENUM
};
constexpr int kNumDeviceTypes = 0
#define EMBER_DEVICE_COUNT(name, lower) +1
    EMBER_FORALL_DEVICE_TYPES(EMBER_DEVICE_COUNT)
#undef EMBER_DEVICE_COUNT
    ;

// True for the device types Ember has a backend for (cpu, cuda, meta).
constexpr bool has_backend(DeviceType t) {
  return t == DeviceType::CPU || t == DeviceType::CUDA || t == DeviceType::Meta;
}

// Raises what PyTorch raises for a device type without a backend in its
// build: `op` runs there (a factory) or, for nullptr, a tensor is copied there.
[[noreturn]] EMBER_CORE_API void no_backend_error(DeviceType t, const char* op);

inline const char* device_type_name(DeviceType t) {
  switch (t) {
#define EMBER_DEVICE_NAME(name, lower) \
  case DeviceType::name: return #lower;
    EMBER_FORALL_DEVICE_TYPES(EMBER_DEVICE_NAME)
#undef EMBER_DEVICE_NAME
  }
  return "unknown";
}

// A Device field: it reads as its value (d.type == DeviceType::CUDA,
// d.index < 0) and also as PyTorch's C++ API spells it, a call (d.type(),
// d.index()), so extension code written for PyTorch compiles.
template <typename T>
struct DeviceField {
  T value;
  constexpr explicit DeviceField(T v) : value(v) {}
  DeviceField& operator=(T v) {
    value = v;
    return *this;
  }
  constexpr operator T() const { return value; }  // NOLINT: read as its value
  constexpr T operator()() const { return value; }
  // static_cast<int>(d.type), as of the enum itself (a table index).
  template <typename I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  constexpr explicit operator I() const {
    return static_cast<I>(value);
  }
};

struct Device {
  DeviceField<DeviceType> type{DeviceType::CPU};
  DeviceField<int8_t> index{-1};

  constexpr Device() = default;
  constexpr Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  // Parses "cpu", "cuda", "cuda:1", "meta"; throws on anything else.
  EMBER_CORE_API static Device parse(const std::string& spec);

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  // Shapes, dtypes and strides without data (see Note [Meta tensors]).
  bool is_meta() const { return type == DeviceType::Meta; }
  bool has_index() const { return index >= 0; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  EMBER_CORE_API std::string str() const;
};

}  // namespace ember
