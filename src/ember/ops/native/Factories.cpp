// Tensor factories and conversions (device-generic: memory comes from the
// device's allocator, values from its fill/copy kernels).
#include <mutex>

#include "ember/ops/BuildInfo.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/FactoryUtils.h"

namespace ember {

namespace {
// item() of a tensor of another device reads its copy on the host (core's hook, TensorBase.h).
[[maybe_unused]] const bool host_copy_set = [] {
  set_host_copy([](const TensorBase& t) -> TensorBase { return Tensor(t).detach().to(Device(DeviceType::CPU)); });
  return true;
}();
ScalarType g_default_dtype = ScalarType::Float;
Device g_default_device{DeviceType::CPU};
}  // namespace
Device get_default_device() { return g_default_device; }
void set_default_device(Device d) { g_default_device = d; }
ScalarType get_default_dtype() { return g_default_dtype; }
void set_default_dtype(ScalarType t) {
  EMBER_CHECK_TYPE(TypeError, is_floating_type(t), "only floating-point types are supported as the default type");
  g_default_dtype = t;
}

namespace native {

namespace {
// A CUDA allocation happens on the current device: select the requested one
// for its duration (PyTorch's device guard). Without a usable device the
// allocator raises the reason.
class AllocationDevice {
 public:
  explicit AllocationDevice(Device d) {
    if (!d.is_cuda() || d.index < 0 || cuda_device_count() == 0) return;
    const CudaHooks* hooks = cuda_hooks();
    const int current = hooks->current_device();
    if (current == d.index) return;
    hooks->set_device(d.index);
    previous_ = current;
  }
  ~AllocationDevice() {
    if (previous_ < 0) return;
    try {
      cuda_hooks()->set_device(previous_);
    } catch (const std::exception&) {}
  }
  AllocationDevice(const AllocationDevice&) = delete;
  AllocationDevice& operator=(const AllocationDevice&) = delete;

 private:
  int previous_ = -1;
};

// PyTorch's note, once per process, on the first complex32 tensor.
void note_complex_half(ScalarType t) {
  if (t != ScalarType::ComplexHalf) return;
  static std::once_flag once;
  std::call_once(once, [] { warn("ComplexHalf support is experimental and many operators don't support it yet."); });
}
}  // namespace

// The allocation every factory starts from (not an operator of its own; the
// `empty` operator is empty_out below).
Tensor empty(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device) {
  for (int64_t s : size) {
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_string(size));
  }
  ScalarType t = dtype.value_or(get_default_dtype());
  Device dev = device.value_or(Device(DeviceType::CPU));
  size_t nbytes = storage_nbytes(size, element_size(t));  // Note [Checked sizes]
  note_complex_half(t);
  Allocator* alloc = get_allocator(dev.type);
  AllocationDevice on_device(dev);
  auto storage = make_intrusive<StorageImpl>(nbytes, alloc);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), t, size));
}

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                     std::optional<Device> device) {
  EMBER_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  ScalarType t = dtype.value_or(get_default_dtype());
  Device dev = device.value_or(Device(DeviceType::CPU));
  for (int64_t s : size) {
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_string(size));
  }
  const size_t nbytes = storage_nbytes(size, stride, element_size(t));  // Note [Checked sizes]
  note_complex_half(t);
  AllocationDevice on_device(dev);
  auto storage = make_intrusive<StorageImpl>(nbytes, get_allocator(dev.type));
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), t, size, stride, 0));
}

// Note [Factory out=]
// The plain factories take out= as PyTorch's do: a dtype= that differs from
// out's is an error, and out is resized to the requested size; without dtype=
// the values are written in out's dtype.
void prepare_factory_out(Tensor& out, IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device,
                         ScalarType default_dtype) {
  if (!out.defined()) {
    out = native::empty(size, dtype.value_or(default_dtype), device);
    return;
  }
  if (dtype && *dtype != out.dtype()) {
    std::string want(legacy_type_name(*dtype)), have(legacy_type_name(out.dtype()));
    throw Error(str_cat("dtype ", want.substr(0, want.size() - 6), " does not match dtype of out parameter (",
                        have.substr(0, have.size() - 6), ")"));
  }
  for (int64_t s : size) {
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_string(size));
  }
  resize_output(out, size);
}

void check_fill_value(ScalarType t, const Scalar& value) {
  switch (t) {
    case ScalarType::Byte: (void)checked_to<uint8_t>(value); break;
    case ScalarType::Char: (void)checked_to<int8_t>(value); break;
    case ScalarType::Short: (void)checked_to<int16_t>(value); break;
    case ScalarType::Int: (void)checked_to<int32_t>(value); break;
    case ScalarType::Long: (void)checked_to<int64_t>(value); break;
    case ScalarType::Half: (void)checked_to<Half>(value); break;
    case ScalarType::Float: (void)checked_to<float>(value); break;
    case ScalarType::Double: (void)checked_to<double>(value); break;
    case ScalarType::BFloat16: (void)checked_to<BFloat16>(value); break;
    default: break;
  }
}

Tensor& empty_out(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device,
                  std::optional<MemoryFormat> memory_format, Tensor& out) {
  EMBER_CHECK(!(memory_format && out.defined()), "'memory_format' argument is incompatible with 'out' tensor argument");
  prepare_factory_out(out, size, dtype, device, get_default_dtype());
  if (memory_format && *memory_format != MemoryFormat::Contiguous) {
    EMBER_CHECK(*memory_format != MemoryFormat::Preserve, "unsupported memory format Preserve");
    out.unsafeGetTensorImpl()->set_sizes_and_strides(size, strides_for_format(size, *memory_format), 0);
  }
  return out;
}

Tensor& full_out(IntArrayRef size, const Scalar& fill_value, std::optional<ScalarType> dtype,
                 std::optional<Device> device, Tensor& out) {
  // A bool fills bool, an int int64, a float the default dtype, a complex number its complex form.
  ScalarType t = fill_value.is_floating_point() ? get_default_dtype()
                 : fill_value.is_complex()      ? to_complex_type(get_default_dtype())
                                                : fill_value.default_dtype();
  prepare_factory_out(out, size, dtype, device, t);
  check_fill_value(out.dtype(), fill_value);
  out.fill_(fill_value);
  return out;
}

Tensor& zeros_out(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device, Tensor& out) {
  if (!out.defined()) {
    for (int64_t s : size) EMBER_CHECK(s >= 0, "zeros: Dimension size must be non-negative.");
  }
  prepare_factory_out(out, size, dtype, device, get_default_dtype());
  out.zero_();
  return out;
}

Tensor& ones_out(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device, Tensor& out) {
  prepare_factory_out(out, size, dtype, device, get_default_dtype());
  out.fill_(Scalar(int64_t(1)));
  return out;
}

Tensor full_like(const Tensor& self, const Scalar& fill_value, std::optional<ScalarType> dtype,
                 std::optional<Device> device, std::optional<MemoryFormat> memory_format) {
  Tensor r = native::empty_like(self, dtype, device, memory_format);
  check_fill_value(r.dtype(), fill_value);
  r.fill_(fill_value);
  return r;
}

// A 0-dim tensor; the default dtype unless dtype= says otherwise (also for ints).
Tensor scalar_tensor(const Scalar& s, std::optional<ScalarType> dtype, std::optional<Device> device) {
  Tensor r = native::empty({}, dtype.value_or(get_default_dtype()), device);
  check_fill_value(r.dtype(), s);
  r.fill_(s);
  return r;
}

// Note [Preserved layout]
// A copy "like" a tensor keeps its layout, as in PyTorch: a dense tensor's
// strides as they are, another strided one's dim order made dense
// (infer_dense_strides); an explicit format gives that format's strides.
Tensor empty_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                  std::optional<MemoryFormat> memory_format) {
  const ScalarType t = dtype.value_or(self.dtype());
  const Device dev = device.value_or(self.device());
  const MemoryFormat f = memory_format.value_or(MemoryFormat::Preserve);
  if (f == MemoryFormat::Contiguous) return native::empty(self.sizes(), t, dev);
  if (f != MemoryFormat::Preserve)
    return ember::empty_strided(self.sizes(), strides_for_format(self.sizes(), f), t, dev);
  if (self.is_non_overlapping_and_dense()) return ember::empty_strided(self.sizes(), self.strides(), t, dev);
  return ember::empty_strided(self.sizes(), infer_dense_strides(self.sizes(), self.strides()), t, dev);
}

Tensor zeros_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                  std::optional<MemoryFormat> memory_format) {
  if (device && !has_backend(device->type)) no_backend_error(device->type, nullptr);
  Tensor r = native::empty_like(self, dtype, device, memory_format);
  r.zero_();
  return r;
}

Tensor ones_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                 std::optional<MemoryFormat> memory_format) {
  if (device && !has_backend(device->type)) no_backend_error(device->type, nullptr);
  Tensor r = native::empty_like(self, dtype, device, memory_format);
  r.fill_(Scalar(int64_t(1)));
  return r;
}

Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  Tensor r = native::empty_like(self, std::nullopt, std::nullopt, memory_format);
  r.copy_(self);
  return r;
}

Tensor to_copy(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device, bool /*non_blocking*/,
               std::optional<MemoryFormat> memory_format) {
  if (device && !has_backend(device->type)) no_backend_error(device->type, nullptr);
  Tensor r = native::empty_like(self, dtype, device, memory_format);
  if (self.unsafeGetTensorImpl()->is_wrapped_uint64() &&
      (is_floating_type(r.dtype()) || is_complex_type_any_tier(r.dtype())) && self.is_cpu()) {
    // A Python int in [2**63, 2**64): a floating or complex dtype gets its value, not the int64 it wraps to.
    // Cast as a double tensor would be (a float16 result overflows to inf, as in PyTorch).
    Tensor d = native::empty({}, ScalarType::Double, std::nullopt);
    *d.data_ptr<double>() = static_cast<double>(static_cast<uint64_t>(self.item<int64_t>()));
    r.copy_(d);
    return r;
  }
  r.copy_(self);
  return r;
}

// to() returns self when nothing changes (for a memory format: when self's
// suggested format is that one, as PyTorch decides); otherwise a copy that
// autograd records as ToCopyBackward0.
Tensor to_dtype_layout(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                       bool non_blocking, bool copy, std::optional<MemoryFormat> memory_format) {
  const ScalarType t = dtype.value_or(self.dtype());
  // A device without an index ("cuda") matches any of its type; "cuda:1" only itself.
  const bool same_device =
      !device || (device->type == self.device().type && (device->index < 0 || device->index == self.device().index));
  const MemoryFormat f = memory_format.value_or(MemoryFormat::Preserve);
  const bool same_format = f == MemoryFormat::Preserve || self.suggest_memory_format() == f;
  if (t == self.dtype() && same_device && same_format && !copy) return self;
  return ember::_to_copy(self, t, device, non_blocking, memory_format);
}

Tensor to_dtype(const Tensor& self, ScalarType dtype, bool non_blocking, bool copy,
                std::optional<MemoryFormat> memory_format) {
  return to_dtype_layout(self, dtype, std::nullopt, non_blocking, copy, memory_format);
}

Tensor to_device(const Tensor& self, Device device, std::optional<ScalarType> dtype, bool non_blocking, bool copy,
                 std::optional<MemoryFormat> memory_format) {
  return to_dtype_layout(self, dtype, device, non_blocking, copy, memory_format);
}

Tensor to_other(const Tensor& self, const Tensor& other, bool non_blocking, bool copy,
                std::optional<MemoryFormat> memory_format) {
  return to_dtype_layout(self, other.dtype(), other.device(), non_blocking, copy, memory_format);
}

Tensor type_as(const Tensor& self, const Tensor& other) { return to_other(self, other, false, false, std::nullopt); }

Tensor contiguous(const Tensor& self, MemoryFormat memory_format) {
  if (self.is_contiguous(memory_format)) return self;
  EMBER_CHECK(memory_format != MemoryFormat::Preserve,
              "preserve memory format is unsupported by the contiguous operator");
  return self.clone(memory_format);
}

}  // namespace native

Tensor wrapped_scalar(const Scalar& s) {
  ScalarType t = s.is_floating_point() ? ScalarType::Double
                 : s.is_complex()      ? ScalarType::ComplexDouble
                                       : s.default_dtype();
  Tensor r = native::empty({}, t, std::nullopt);
  if (s.is_big_unsigned()) {
    *r.data_ptr<int64_t>() = s.to_long();  // TensorImpl::is_wrapped_uint64
    r.unsafeGetTensorImpl()->set_wrapped_uint64(true);
  } else {
    r.fill_(s);
  }
  r.unsafeGetTensorImpl()->set_wrapped_number(true);
  return r;
}

Tensor from_vector(const std::vector<double>& values, IntArrayRef sizes, ScalarType dtype) {
  EMBER_CHECK(static_cast<int64_t>(values.size()) == product(sizes), "from_vector: ", values.size(),
              " values do not fill shape ", shape_string(sizes));
  Tensor r = native::empty(sizes, dtype, std::nullopt);
  EMBER_DISPATCH_ALL_TYPES(dtype, "from_vector", [&] {
    auto* p = static_cast<scalar_t*>(r.data_ptr());
    for (size_t i = 0; i < values.size(); ++i) p[i] = convert<scalar_t>(values[i]);
  });
  return r;
}

std::vector<double> to_vector(const Tensor& t) {
  if (t.is_meta()) throw NotImplementedError("Cannot copy out of meta tensor; no data!");
  // Another device's values are copied to the host first.
  Tensor c = t.is_cpu() ? t.contiguous() : t.to(Device(DeviceType::CPU)).contiguous();
  std::vector<double> out(static_cast<size_t>(c.numel()));
  EMBER_DISPATCH_ALL_TYPES(c.dtype(), "to_vector", [&] {
    const auto* p = static_cast<const scalar_t*>(c.data_ptr());
    for (size_t i = 0; i < out.size(); ++i) out[i] = convert<double>(p[i]);
  });
  return out;
}

std::string to_string(const Tensor& t) {
  std::vector<double> v = to_vector(t);
  std::string s = "tensor(" + shape_string(t.sizes()) + ", " + std::string(scalar_type_name(t.dtype())) + ", [";
  for (size_t i = 0; i < v.size(); ++i) {
    s += (i ? ", " : "") + str_cat(v[i]);
  }
  return s + "])";
}

}  // namespace ember
