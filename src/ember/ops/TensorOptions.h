#pragma once
// Factory options and dtype/device constants as PyTorch's C++ API spells them:
//   ember::zeros({2, 3}, ember::dtype(ember::kFloat64).requires_grad(true))
//   ember::empty_like(x, x.options().dtype(ember::kInt64))

#include <optional>

#include "ember/core/Device.h"
#include "ember/core/MemoryFormat.h"
#include "ember/core/ScalarType.h"

namespace ember {

// Tensors are strided; the layout argument exists for source compatibility.
enum class Layout : int8_t { Strided };
constexpr Layout kStrided = Layout::Strided;

constexpr ScalarType kByte = ScalarType::Byte, kUInt8 = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char, kInt8 = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short, kInt16 = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int, kInt32 = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long, kInt64 = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half, kFloat16 = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float, kFloat32 = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double, kFloat64 = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kComplexFloat = ScalarType::ComplexFloat, kComplexDouble = ScalarType::ComplexDouble;
constexpr DeviceType kCPU = DeviceType::CPU, kCUDA = DeviceType::CUDA, kMeta = DeviceType::Meta;

class TensorOptions {
 public:
  TensorOptions() = default;

  // Setters return a changed copy, so calls chain.
  TensorOptions dtype(std::optional<ScalarType> t) const {
    return with([&](TensorOptions& o) { o.dtype_ = t; });
  }
  TensorOptions device(std::optional<Device> d) const {
    return with([&](TensorOptions& o) { o.device_ = d; });
  }
  TensorOptions device(DeviceType type, int8_t index = -1) const { return device(Device(type, index)); }
  TensorOptions requires_grad(bool r) const {
    return with([&](TensorOptions& o) { o.requires_grad_ = r; });
  }
  TensorOptions memory_format(std::optional<MemoryFormat> f) const {
    return with([&](TensorOptions& o) { o.memory_format_ = f; });
  }
  TensorOptions layout(Layout) const { return *this; }
  TensorOptions pinned_memory(bool) const { return *this; }

  bool has_dtype() const { return dtype_.has_value(); }
  bool has_device() const { return device_.has_value(); }
  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  std::optional<Device> device_opt() const { return device_; }
  std::optional<MemoryFormat> memory_format_opt() const { return memory_format_; }
  Device device() const { return device_.value_or(Device(DeviceType::CPU)); }
  bool requires_grad() const { return requires_grad_; }
  Layout layout() const { return Layout::Strided; }

 private:
  template <typename F>
  TensorOptions with(F&& change) const {
    TensorOptions o = *this;
    change(o);
    return o;
  }
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  std::optional<MemoryFormat> memory_format_;
  bool requires_grad_ = false;
};

inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions device(DeviceType t, int8_t index = -1) { return TensorOptions().device(t, index); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
inline TensorOptions layout(Layout l) { return TensorOptions().layout(l); }
inline TensorOptions memory_format(MemoryFormat f) { return TensorOptions().memory_format(f); }

}  // namespace ember
