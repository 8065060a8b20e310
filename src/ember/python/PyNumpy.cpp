// NumPy interop without NumPy's C API (so NumPy is not a build dependency).
// See Note [NumPy through the buffer protocol].
#include <cstring>
#include <string>
#include <vector>

#include "ember/core/Allocator.h"
#include "ember/python/PyInterop.h"
#include "ember/python/PyTensor.h"
#include "ember/python/PyTypes.h"

// Note [NumPy through the buffer protocol]
// An ndarray comes in through PEP 3118: its buffer gives the data pointer,
// shape, strides in bytes and a one-character struct format that names the
// element type. The buffer is released at once and the tensor's storage holds
// a reference to the array instead (as PyTorch does), so the array cannot be
// resized while the tensor lives, and the memory stays valid.
// A tensor goes out through a small exporter object that holds the tensor and
// implements the buffer protocol; numpy.asarray() on it builds an ndarray over
// the same memory whose base chain keeps the exporter (and the tensor) alive.

namespace ember::python {
namespace {

PyObject* g_numpy = nullptr;
PyObject* g_ndarray = nullptr;
PyObject* g_asarray = nullptr;

void load_numpy() {
  if (g_numpy) return;
  PyObject* np = PyImport_ImportModule("numpy");
  if (!np) throw python_error();
  PyObject* nd = PyObject_GetAttrString(np, "ndarray");
  PyObject* as = nd ? PyObject_GetAttrString(np, "asarray") : nullptr;
  if (!as) {
    Py_XDECREF(nd);
    Py_DECREF(np);
    throw python_error();
  }
  g_numpy = np;
  g_ndarray = nd;
  g_asarray = as;
}

// "numpy.object_": the scalar type of an array's dtype, for messages (the
// tp_name of NumPy's scalar types carries the module).
std::string numpy_type_name(PyObject* array) {
  std::string name = "unknown";
  PyObject* dt = PyObject_GetAttrString(array, "dtype");
  PyObject* ty = dt ? PyObject_GetAttrString(dt, "type") : nullptr;
  if (ty && PyType_Check(ty)) name = reinterpret_cast<PyTypeObject*>(ty)->tp_name;
  Py_XDECREF(ty);
  Py_XDECREF(dt);
  PyErr_Clear();
  return name;
}

[[noreturn]] void unsupported_numpy_type(PyObject* array) {
  throw TypeError(str_cat(
      "can't convert np.ndarray of type ", numpy_type_name(array),
      ". The only supported types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
      "uint64, uint32, uint16, uint8, and bool."));
}

// The dtype named by a buffer format; Undefined if Ember has no such dtype.
ScalarType dtype_from_format(const char* f, Py_ssize_t itemsize, bool& swapped) {
  swapped = false;
  if (!f) f = "B";
  if (*f == '@' || *f == '=' || *f == '<') {
    ++f;
  } else if (*f == '>' || *f == '!') {
    swapped = true;
    ++f;
  }
  if (f[0] == 'Z' && f[1] != 0 && f[2] == 0) {
    if (f[1] == 'f' && itemsize == 8) return ScalarType::ComplexFloat;
    if (f[1] == 'd' && itemsize == 16) return ScalarType::ComplexDouble;
    return ScalarType::Undefined;
  }
  if (f[0] == 0 || f[1] != 0) return ScalarType::Undefined;
  switch (f[0]) {
    case '?': return ScalarType::Bool;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
      switch (itemsize) {
        case 1: return ScalarType::Byte;
        case 2: return ScalarType::UInt16;
        case 4: return ScalarType::UInt32;
        case 8: return ScalarType::UInt64;
        default: return ScalarType::Undefined;
      }
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
      switch (itemsize) {
        case 1: return ScalarType::Char;
        case 2: return ScalarType::Short;
        case 4: return ScalarType::Int;
        case 8: return ScalarType::Long;
        default: return ScalarType::Undefined;
      }
    case 'e': return ScalarType::Half;
    case 'f': return itemsize == 4 ? ScalarType::Float : ScalarType::Undefined;
    case 'd': return itemsize == 8 ? ScalarType::Double : ScalarType::Undefined;
    default: return ScalarType::Undefined;
  }
}

const char* format_of(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "?";
    case ScalarType::Byte: return "B";
    case ScalarType::Char: return "b";
    case ScalarType::Short: return "h";
    case ScalarType::Int: return "i";
    case ScalarType::Long: return sizeof(long) == 8 ? "l" : "q";
    case ScalarType::UInt16: return "H";
    case ScalarType::UInt32: return "I";
    case ScalarType::UInt64: return sizeof(long) == 8 ? "L" : "Q";
    case ScalarType::Half: return "e";
    case ScalarType::Float: return "f";
    case ScalarType::Double: return "d";
    case ScalarType::ComplexFloat: return "Zf";
    case ScalarType::ComplexDouble: return "Zd";
    default: return nullptr;
  }
}

void release_array(void* ctx) { release_pyobject(static_cast<PyObject*>(ctx)); }

// ---- the exporter ----------------------------------------------------------------

struct ExporterObject {
  PyObject_HEAD Tensor tensor;
  std::vector<Py_ssize_t> shape;
  std::vector<Py_ssize_t> strides;  // bytes
  const char* format;
};

PyTypeObject* g_exporter_type = nullptr;
char g_empty_buffer[1];

int exporter_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  auto* e = reinterpret_cast<ExporterObject*>(self);
  const Tensor& t = e->tensor;
  if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !t.is_contiguous()) {
    PyErr_SetString(PyExc_BufferError, "tensor is not contiguous");
    return -1;
  }
  void* data = t.data_ptr();
  view->buf = data ? data : g_empty_buffer;
  view->obj = self;
  Py_INCREF(self);
  view->itemsize = static_cast<Py_ssize_t>(t.element_size());
  view->len = static_cast<Py_ssize_t>(t.numel()) * view->itemsize;
  view->readonly = 0;
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(e->format) : nullptr;
  view->ndim = static_cast<int>(e->shape.size());
  view->shape = (flags & PyBUF_ND) ? e->shape.data() : nullptr;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? e->strides.data() : nullptr;
  view->suboffsets = nullptr;
  view->internal = nullptr;
  return 0;
}

void exporter_dealloc(PyObject* self) {
  auto* e = reinterpret_cast<ExporterObject*>(self);
  e->tensor.~Tensor();
  e->shape.~vector();
  e->strides.~vector();
  Py_TYPE(self)->tp_free(self);
}

PyBufferProcs g_exporter_buffer = {exporter_getbuffer, nullptr};

void init_exporter_type() {
  static PyTypeObject type = {PyVarObject_HEAD_INIT(nullptr, 0)};
  type.tp_name = "ember._C._TensorBuffer";
  type.tp_basicsize = sizeof(ExporterObject);
  type.tp_flags = Py_TPFLAGS_DEFAULT;
  type.tp_dealloc = exporter_dealloc;
  type.tp_as_buffer = &g_exporter_buffer;
  if (PyType_Ready(&type) < 0) throw python_error();
  g_exporter_type = &type;
}

// ---- Python functions ---------------------------------------------------------------

PyObject* py_from_numpy(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  return wrap(tensor_from_numpy(arg));
  EMBER_PY_CATCH
}

PyObject* py_to_numpy(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  if (!is_tensor(arg)) throw TypeError("expected a Tensor");
  return tensor_to_numpy(unpack_tensor(arg));
  EMBER_PY_CATCH
}

PyMethodDef numpy_functions[] = {
    {"from_numpy", py_from_numpy, METH_O, "from_numpy(ndarray) -> Tensor\n\nA tensor sharing the array's memory."},
    {"_to_numpy", py_to_numpy, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

Tensor tensor_from_numpy(PyObject* array) {
  load_numpy();
  if (!PyObject_TypeCheck(array, reinterpret_cast<PyTypeObject*>(g_ndarray))) {
    throw TypeError(str_cat("expected np.ndarray (got ", Py_TYPE(array)->tp_name, ")"));
  }
  Py_buffer view;
  if (PyObject_GetBuffer(array, &view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();  // dtypes the buffer protocol cannot describe (datetime, ...)
    unsupported_numpy_type(array);
  }
  struct Release {
    Py_buffer* v;
    ~Release() { PyBuffer_Release(v); }
  } release{&view};

  bool swapped = false;
  ScalarType dtype = dtype_from_format(view.format, view.itemsize, swapped);
  if (dtype == ScalarType::Undefined) unsupported_numpy_type(array);
  if (swapped && view.itemsize > 1) {
    throw ValueError(
        "given numpy array has byte order different from the native byte order. Conversion between byte orders "
        "is currently not supported.");
  }
  if (view.readonly) {
    static bool warned = false;
    if (!warned) {
      warned = true;
      if (PyErr_WarnEx(PyExc_UserWarning,
                       "The given NumPy array is not writable, and Ember does not support non-writable tensors. "
                       "This means writing to this tensor will result in undefined behavior. You may want to copy "
                       "the array to protect its data or make it writable before converting it to a tensor. This "
                       "type of warning will be suppressed for the rest of this program.",
                       1) != 0) {
        throw python_error();
      }
    }
  }
  const int64_t itemsize = view.itemsize;
  DimVector sizes(static_cast<size_t>(view.ndim)), strides(static_cast<size_t>(view.ndim));
  bool empty = false;
  for (int d = 0; d < view.ndim; ++d) {
    sizes[d] = view.shape[d];
    int64_t st = view.strides ? view.strides[d] : 0;
    if (st % itemsize != 0) {
      throw ValueError(
          "given numpy array strides not a multiple of the element byte size. Copy the numpy array to reallocate "
          "the memory.");
    }
    strides[d] = st / itemsize;
    empty = empty || sizes[d] == 0;
  }
  if (!view.strides) strides = contiguous_strides(sizes);
  for (int d = 0; d < view.ndim; ++d) {
    if (strides[d] < 0) {
      throw ValueError(
          "At least one stride in the given numpy array is negative, and tensors with negative strides are not "
          "currently supported. (You can probably work around this by making a copy of your array  with "
          "array.copy().) ");
    }
  }
  size_t nbytes = 0;
  if (!empty) {
    int64_t extent = 1;
    for (int d = 0; d < view.ndim; ++d) extent += (sizes[d] - 1) * strides[d];
    nbytes = static_cast<size_t>(extent * itemsize);
  }
  Py_INCREF(array);
  DataPtr data(view.buf, array, &release_array, Device(DeviceType::CPU));
  auto storage = make_intrusive<StorageImpl>(std::move(data), nbytes);
  return Tensor(make_intrusive<TensorImpl>(Storage(std::move(storage)), dtype, sizes, strides, 0));
}

PyObject* tensor_to_numpy(const Tensor& t) {
  if (!t.device().is_cpu()) {
    throw TypeError(str_cat("can't convert ", t.device().str(),
                            " device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."));
  }
  EMBER_CHECK(!t.requires_grad(),
              "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
  EMBER_CHECK(!t.is_conj(),
              "Can't call numpy() on Tensor that has conjugate bit set. Use tensor.resolve_conj().numpy() instead.");
  EMBER_CHECK(!t.is_neg(),
              "Can't call numpy() on Tensor that has negative bit set. Use tensor.resolve_neg().numpy() instead.");
  const char* format = format_of(t.dtype());
  if (!format) {
    throw TypeError(str_cat("Got unsupported ScalarType ", dtype_message_name(t.dtype())));
  }
  load_numpy();
  PyObject* obj = g_exporter_type->tp_alloc(g_exporter_type, 0);
  if (!obj) throw python_error();
  auto* e = reinterpret_cast<ExporterObject*>(obj);
  new (&e->tensor) Tensor(t);
  new (&e->shape) std::vector<Py_ssize_t>(t.sizes().begin(), t.sizes().end());
  new (&e->strides) std::vector<Py_ssize_t>(t.strides().begin(), t.strides().end());
  for (auto& s : e->strides) s *= static_cast<Py_ssize_t>(t.element_size());
  e->format = format;
  PyObject* arr = PyObject_CallOneArg(g_asarray, obj);
  Py_DECREF(obj);
  if (!arr) throw python_error();
  return arr;
}

void init_numpy(PyObject* module) {
  init_exporter_type();
  if (PyModule_AddFunctions(module, numpy_functions) < 0) throw python_error();
}

}  // namespace ember::python
