// DLPack interop: tensors exchanged with other libraries (NumPy, PyTorch, JAX, CuPy ...) without a copy.
// See Note [DLPack capsules].
#include <cstdint>
#include <cstring>
#include <vector>

#include "ember/core/Allocator.h"
#include "ember/python/PyInterop.h"
#include "ember/python/PyTensor.h"
#include "ember/python/PyTypes.h"

// Note [DLPack capsules]
// A DLPack tensor travels in a PyCapsule. The unversioned form (name
// "dltensor") holds a DLManagedTensor; the versioned form of DLPack 1.x
// ("dltensor_versioned") holds a DLManagedTensorVersioned, which adds the
// version and flags (read-only, copied). The consumer renames the capsule to
// "used_dltensor[_versioned]" and owns the managed tensor from then on: it
// calls the producer's deleter when it no longer needs the memory. A capsule
// that nobody consumed calls the deleter when it is destroyed.
// Exported: the managed tensor holds a reference to the Ember tensor (and its
// shape and strides), so the memory stays valid until the consumer is done.
// Imported: the tensor's storage holds the managed tensor and calls its
// deleter when the storage is freed. The structs below are DLPack's ABI.

namespace ember::python {
namespace {

enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3 };
enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
  kDLFloat8_e4m3fn = 10,
  kDLFloat8_e4m3fnuz = 11,
  kDLFloat8_e5m2 = 12,
  kDLFloat8_e5m2fnuz = 13,
  kDLFloat8_e8m0fnu = 14,
  kDLFloat4_e2m1fn = 17,
};

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kFlagReadOnly = 1;
constexpr uint64_t kFlagIsCopied = 2;
constexpr uint32_t kMajorVersion = 1;
constexpr uint32_t kMinorVersion = 0;

// ---- dtypes ---------------------------------------------------------------------------------------

DLDataType dl_dtype(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return {kDLBool, 8, 1};
    case ScalarType::Byte: return {kDLUInt, 8, 1};
    case ScalarType::Char: return {kDLInt, 8, 1};
    case ScalarType::Short: return {kDLInt, 16, 1};
    case ScalarType::Int: return {kDLInt, 32, 1};
    case ScalarType::Long: return {kDLInt, 64, 1};
    case ScalarType::Half: return {kDLFloat, 16, 1};
    case ScalarType::BFloat16: return {kDLBfloat, 16, 1};
    case ScalarType::Float: return {kDLFloat, 32, 1};
    case ScalarType::Double: return {kDLFloat, 64, 1};
    case ScalarType::ComplexFloat: return {kDLComplex, 64, 1};
    case ScalarType::ComplexDouble: return {kDLComplex, 128, 1};
    case ScalarType::ComplexHalf: return {kDLComplex, 32, 1};
    case ScalarType::UInt16: return {kDLUInt, 16, 1};
    case ScalarType::UInt32: return {kDLUInt, 32, 1};
    case ScalarType::UInt64: return {kDLUInt, 64, 1};
    case ScalarType::Float8_e4m3fn: return {kDLFloat8_e4m3fn, 8, 1};
    case ScalarType::Float8_e4m3fnuz: return {kDLFloat8_e4m3fnuz, 8, 1};
    case ScalarType::Float8_e5m2: return {kDLFloat8_e5m2, 8, 1};
    case ScalarType::Float8_e5m2fnuz: return {kDLFloat8_e5m2fnuz, 8, 1};
    case ScalarType::Float8_e8m0fnu: return {kDLFloat8_e8m0fnu, 8, 1};
    case ScalarType::Float4_e2m1fn_x2: return {kDLFloat4_e2m1fn, 4, 2};  // two values a byte
    default: break;
  }
  // Sub-byte integers travel as bytes, as PyTorch exports them.
  if (is_sub_byte_int_type(t)) return {t >= ScalarType::Int1 ? kDLInt : kDLUInt, 8, 1};
  if (is_bits_type(t)) {
    PyErr_SetString(PyExc_BufferError, "Bit types are not supported by dlpack");
    throw python_error();
  }
  throw TypeError(str_cat("DLPack does not support the dtype ", scalar_type_name(t)));
}

ScalarType from_dl_dtype(DLDataType t) {
  if (t.code == kDLFloat4_e2m1fn && t.bits == 4 && t.lanes == 2) return ScalarType::Float4_e2m1fn_x2;
  if (t.lanes != 1) throw Error("DLPack only supports lanes equal to 1");
  switch (t.code) {
    case kDLBool:
      if (t.bits == 8) return ScalarType::Bool;
      break;
    case kDLUInt:
      switch (t.bits) {
        case 8: return ScalarType::Byte;
        case 16: return ScalarType::UInt16;
        case 32: return ScalarType::UInt32;
        case 64: return ScalarType::UInt64;
        default: break;
      }
      break;
    case kDLInt:
      switch (t.bits) {
        case 8: return ScalarType::Char;
        case 16: return ScalarType::Short;
        case 32: return ScalarType::Int;
        case 64: return ScalarType::Long;
        default: break;
      }
      break;
    case kDLFloat:
      switch (t.bits) {
        case 16: return ScalarType::Half;
        case 32: return ScalarType::Float;
        case 64: return ScalarType::Double;
        default: break;
      }
      break;
    case kDLBfloat:
      if (t.bits == 16) return ScalarType::BFloat16;
      break;
    case kDLFloat8_e4m3fn: return ScalarType::Float8_e4m3fn;
    case kDLFloat8_e4m3fnuz: return ScalarType::Float8_e4m3fnuz;
    case kDLFloat8_e5m2: return ScalarType::Float8_e5m2;
    case kDLFloat8_e5m2fnuz: return ScalarType::Float8_e5m2fnuz;
    case kDLFloat8_e8m0fnu: return ScalarType::Float8_e8m0fnu;
    case kDLComplex:
      if (t.bits == 32) return ScalarType::ComplexHalf;
      if (t.bits == 64) return ScalarType::ComplexFloat;
      if (t.bits == 128) return ScalarType::ComplexDouble;
      break;
    default: break;
  }
  throw Error(
      str_cat("Unsupported DLPack dtype code ", static_cast<int>(t.code), " with ", static_cast<int>(t.bits), " bits"));
}

// ---- export ---------------------------------------------------------------------------------------

// What an exported managed tensor keeps alive.
struct ExportContext {
  Tensor tensor;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

void fill_dl_tensor(DLTensor& dl, ExportContext& ctx) {
  const Tensor& t = ctx.tensor;
  ctx.shape.assign(t.sizes().begin(), t.sizes().end());
  ctx.strides.assign(t.strides().begin(), t.strides().end());
  dl.data = t.data_ptr();
  const Device dev = t.device();
  if (dev.is_cpu()) {
    dl.device = {kDLCPU, 0};
  } else if (dev.is_cuda()) {
    dl.device = {kDLCUDA, static_cast<int32_t>(dev.index < 0 ? 0 : dev.index)};
  } else {
    throw TypeError(str_cat("Cannot pack tensors on ", dev.str()));
  }
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = dl_dtype(t.scalar_type());
  dl.shape = ctx.shape.data();
  dl.strides = ctx.strides.data();
  dl.byte_offset = 0;
}

template <typename Managed>
void delete_exported(Managed* self) {
  delete static_cast<ExportContext*>(self->manager_ctx);
  delete self;
}

// A capsule destroyed unconsumed still owns its managed tensor.
template <typename Managed>
void capsule_destructor(PyObject* capsule, const char* name) {
  if (!PyCapsule_IsValid(capsule, name)) return;  // consumed (renamed): the consumer owns it
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed && managed->deleter) managed->deleter(managed);
}
void unversioned_destructor(PyObject* capsule) { capsule_destructor<DLManagedTensor>(capsule, "dltensor"); }
void versioned_destructor(PyObject* capsule) {
  capsule_destructor<DLManagedTensorVersioned>(capsule, "dltensor_versioned");
}

PyObject* to_capsule(const Tensor& t, bool versioned, bool copied) {
  auto ctx = std::make_unique<ExportContext>();
  ctx->tensor = t;
  if (versioned) {
    auto managed = std::make_unique<DLManagedTensorVersioned>();
    fill_dl_tensor(managed->dl_tensor, *ctx);
    managed->version = {kMajorVersion, kMinorVersion};
    managed->flags = copied ? kFlagIsCopied : 0;
    managed->manager_ctx = ctx.release();
    managed->deleter = &delete_exported<DLManagedTensorVersioned>;
    PyObject* capsule = PyCapsule_New(managed.get(), "dltensor_versioned", versioned_destructor);
    if (!capsule) {
      managed->deleter(managed.release());
      throw python_error();
    }
    managed.release();
    return capsule;
  }
  auto managed = std::make_unique<DLManagedTensor>();
  fill_dl_tensor(managed->dl_tensor, *ctx);
  managed->manager_ctx = ctx.release();
  managed->deleter = &delete_exported<DLManagedTensor>;
  PyObject* capsule = PyCapsule_New(managed.get(), "dltensor", unversioned_destructor);
  if (!capsule) {
    managed->deleter(managed.release());
    throw python_error();
  }
  managed.release();
  return capsule;
}

// ---- import ---------------------------------------------------------------------------------------

template <typename Managed>
void release_imported(void* ctx) {
  auto* managed = static_cast<Managed*>(ctx);
  if (managed->deleter) managed->deleter(managed);
}

template <typename Managed>
Tensor tensor_over(Managed* managed, const DLTensor& dl) {
  if (dl.device.device_type != kDLCPU && dl.device.device_type != kDLCUDAHost) {
    throw Error(str_cat("Unsupported device_type: ", dl.device.device_type));
  }
  const ScalarType dtype = from_dl_dtype(dl.dtype);
  if (dl.ndim < 0) throw ValueError("DLPack tensor has a negative number of dimensions");
  DimVector sizes(static_cast<size_t>(dl.ndim)), strides(static_cast<size_t>(dl.ndim));
  bool empty = false;
  for (int d = 0; d < dl.ndim; ++d) {
    sizes[d] = dl.shape[d];
    empty = empty || sizes[d] == 0;
  }
  if (dl.strides) {
    for (int d = 0; d < dl.ndim; ++d) strides[d] = dl.strides[d];
  } else {
    strides = contiguous_strides(sizes);
  }
  const int64_t itemsize = static_cast<int64_t>(element_size(dtype));
  size_t nbytes = 0;
  if (!empty) {
    int64_t extent = 1;
    for (int d = 0; d < dl.ndim; ++d) extent += (sizes[d] - 1) * strides[d];
    nbytes = static_cast<size_t>(extent * itemsize);
  }
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  DataPtr ptr(data, managed, &release_imported<Managed>, Device(DeviceType::CPU));
  auto storage = make_intrusive<StorageImpl>(std::move(ptr), nbytes);
  return Tensor(make_intrusive<TensorImpl>(Storage(std::move(storage)), dtype, sizes, strides, 0));
}

Tensor from_capsule(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    auto* managed = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, "dltensor_versioned"));
    if (managed->version.major > kMajorVersion) {
      throw Error(str_cat("Unsupported DLPack version: ", managed->version.major, ".", managed->version.minor));
    }
    Tensor t = tensor_over(managed, managed->dl_tensor);
    if (PyCapsule_SetName(capsule, "used_dltensor_versioned") != 0) throw python_error();
    return t;
  }
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    Tensor t = tensor_over(managed, managed->dl_tensor);
    if (PyCapsule_SetName(capsule, "used_dltensor") != 0) throw python_error();
    return t;
  }
  throw Error(
      "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, so you "
      "might have already constructed a tensor from it once.");
}

// ---- Python functions -----------------------------------------------------------------------------

// _to_dlpack(tensor, versioned=False, copied=False) -> capsule
PyObject* py_to_dlpack(PyObject*, PyObject* args) {
  EMBER_PY_TRY
  PyObject* tensor = nullptr;
  int versioned = 0, copied = 0;
  if (!PyArg_ParseTuple(args, "O|pp", &tensor, &versioned, &copied)) return nullptr;
  if (!is_tensor(tensor)) throw TypeError(str_cat("expected a Tensor, got ", Py_TYPE(tensor)->tp_name));
  return to_capsule(unpack_tensor(tensor), versioned != 0, copied != 0);
  EMBER_PY_CATCH
}

PyObject* py_from_dlpack(PyObject*, PyObject* capsule) {
  EMBER_PY_TRY
  return wrap(from_capsule(capsule));
  EMBER_PY_CATCH
}

PyMethodDef dlpack_functions[] = {
    {"_to_dlpack", py_to_dlpack, METH_VARARGS, "_to_dlpack(tensor, versioned=False, copied=False) -> capsule"},
    {"_from_dlpack", py_from_dlpack, METH_O, "_from_dlpack(capsule) -> Tensor over the capsule's memory"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void init_dlpack(PyObject* module) {
  if (PyModule_AddFunctions(module, dlpack_functions) < 0) throw python_error();
}

}  // namespace ember::python
