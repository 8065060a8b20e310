// Tensors from Python data: ember.tensor()'s nested sequences and buffers.
// The rules are PyTorch's (torch/csrc/utils/tensor_new): shape from the first
// element at each level, dtype by promoting over every leaf, and per-dtype
// conversions that refuse out-of-range integers.
#include "ember/python/PyFactories.h"
#include "ember/ops/native/LimitedTypes.h"

#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ember/ops/Ops.h"
#include "ember/python/Exceptions.h"
#include "ember/python/PyTensor.h"
#include "ember/python/PyTypes.h"

namespace nb = nanobind;

namespace ember::python {

namespace {

constexpr size_t kMaxDims = 64;

struct PyRef {
  PyObject* p;
  explicit PyRef(PyObject* o) : p(o) {
    if (!p) throw python_error();
  }
  ~PyRef() { Py_XDECREF(p); }
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
};

// numpy scalars and arrays are recognised by their type's module, so this
// layer needs no numpy headers.
bool is_numpy_object(PyObject* obj) {
  PyObject* mod = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(obj)), "__module__");
  if (!mod) {
    PyErr_Clear();
    return false;
  }
  bool r = PyUnicode_Check(mod) && std::strcmp(PyUnicode_AsUTF8(mod), "numpy") == 0;
  Py_DECREF(mod);
  return r;
}

ScalarType numpy_dtype(PyObject* obj) {
  PyRef dt(PyObject_GetAttrString(obj, "dtype"));
  PyRef name(PyObject_GetAttrString(dt.p, "name"));
  const std::string n = PyUnicode_AsUTF8(name.p);
  static const std::pair<const char*, ScalarType> table[] = {{"bool", ScalarType::Bool},
                                                             {"uint8", ScalarType::Byte},
                                                             {"uint16", ScalarType::UInt16},
                                                             {"uint32", ScalarType::UInt32},
                                                             {"uint64", ScalarType::UInt64},
                                                             {"int8", ScalarType::Char},
                                                             {"int16", ScalarType::Short},
                                                             {"int32", ScalarType::Int},
                                                             {"int64", ScalarType::Long},
                                                             {"float16", ScalarType::Half},
                                                             {"float32", ScalarType::Float},
                                                             {"float64", ScalarType::Double},
                                                             {"complex64", ScalarType::ComplexFloat},
                                                             {"complex128", ScalarType::ComplexDouble}};
  for (const auto& [k, v] : table) {
    if (n == k) return v;
  }
  throw TypeError(str_cat(
      "can't convert np.ndarray of type numpy.", n,
      ". The only supported types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
      "uint64, uint32, uint16, uint8, and bool."));
}

ScalarType infer_scalar_type(PyObject* obj) {
  if (PyFloat_CheckExact(obj)) return get_default_dtype();
  if (PyLong_CheckExact(obj)) return ScalarType::Long;
  if (PyBool_Check(obj)) return ScalarType::Bool;
  if (PyComplex_CheckExact(obj)) return to_complex_type(get_default_dtype());
  // numpy scalars before subclasses: numpy.float64 is also a Python float.
  if (is_numpy_object(obj) && PyObject_HasAttrString(obj, "dtype")) return numpy_dtype(obj);
  if (PyFloat_Check(obj)) return get_default_dtype();
  if (PyLong_Check(obj) && !PyBool_Check(obj)) return ScalarType::Long;
  if (PyBool_Check(obj)) return ScalarType::Bool;
  if (PyComplex_Check(obj)) return to_complex_type(get_default_dtype());
  if (is_tensor(obj)) return unpack_tensor(obj).dtype();
  if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
    throw TypeError(str_cat("new(): invalid data type '", Py_TYPE(obj)->tp_name, "'"));
  }
  if (PySequence_Check(obj)) {
    Py_ssize_t n = PySequence_Length(obj);
    if (n < 0) throw python_error();
    if (n == 0) return get_default_dtype();
    ScalarType t = ScalarType::Undefined;
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyRef item(PySequence_GetItem(obj, i));
      EMBER_CHECK_TYPE(TypeError, item.p != obj, "new(): self-referential lists are incompatible");
      ScalarType it = infer_scalar_type(item.p);
      t = t == ScalarType::Undefined ? it : promote_types(t, it);
    }
    return t;
  }
  throw Error(str_cat("Could not infer dtype of ", Py_TYPE(obj)->tp_name));
}

std::vector<int64_t> compute_sizes(PyObject* seq) {
  std::vector<int64_t> sizes;
  PyObject* cur = seq;
  PyObject* held = nullptr;  // keeps the current element alive
  while (!is_tensor(cur) && PySequence_Check(cur)) {
    Py_ssize_t n = PySequence_Length(cur);
    if (n < 0) {
      Py_XDECREF(held);
      throw python_error();
    }
    sizes.push_back(n);
    if (sizes.size() > kMaxDims) {
      std::string name = Py_TYPE(cur)->tp_name;
      Py_XDECREF(held);
      throw ValueError(str_cat("too many dimensions '", name, "'"));
    }
    if (n == 0) break;
    PyObject* next = PySequence_GetItem(cur, 0);
    Py_XDECREF(held);
    if (!next) throw python_error();
    held = next;
    cur = next;
  }
  Py_XDECREF(held);
  return sizes;
}

const char* int_name(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "uint8";
    case ScalarType::Char: return "int8";
    case ScalarType::Short: return "int16";
    case ScalarType::Int: return "int32";
    default: return "int64";
  }
}

[[noreturn]] void overflow(ScalarType t) {
  throw Error(str_cat("value cannot be converted to type ", int_name(t), " without overflow"));
}

template <typename T>
void store_int(char* data, ScalarType t, PyObject* obj) {
  using lim = std::numeric_limits<T>;
  T out;
  if (PyFloat_Check(obj)) {
    const double d = PyFloat_AS_DOUBLE(obj);
    if (std::isnan(d) || d < static_cast<double>(lim::lowest()) || d > static_cast<double>(lim::max())) overflow(t);
    out = static_cast<T>(d);
  } else {
    int of = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &of);
    if (v == -1 && PyErr_Occurred()) throw python_error();
    if (of) throw ValueError("Overflow when unpacking long long");
    // Negative values may wrap into unsigned types, as in PyTorch.
    bool bad = std::is_unsigned_v<T>
                   ? (v > static_cast<long long>(lim::max()) ||
                      (v < 0 && static_cast<uint64_t>(-(v + 1)) + 1 > static_cast<uint64_t>(lim::max())))
                   : (v < static_cast<long long>(lim::lowest()) || v > static_cast<long long>(lim::max()));
    if (bad) overflow(t);
    out = static_cast<T>(v);
  }
  std::memcpy(data, &out, sizeof(T));
}

// A one-element tensor among the data: converted like the Python number it
// holds (read on the host: another device's element is copied there first).
void store_tensor_scalar(char* data, ScalarType t, const Tensor& value) {
  const Tensor v = value.is_cuda() ? value.to(Device(DeviceType::CPU)) : value;
  if (is_complex_type(t) || v.is_complex()) {
    EMBER_CHECK_TYPE(ValueError, v.numel() == 1, "only one element tensors can be converted to Python scalars");
    const std::complex<double> c = v.item<std::complex<double>>();
    EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX(t, "tensor",
                                         [&] { *reinterpret_cast<scalar_t*>(data) = convert<scalar_t>(c); });
    return;
  }
  if (!is_floating_type(t)) {
    EMBER_CHECK_TYPE(TypeError, v.numel() == 1 && !v.is_floating_point(),
                     "only integer tensors of a single element can be converted to an index");
    PyRef o(PyLong_FromLongLong(v.item<int64_t>()));
    EMBER_DISPATCH_ALL_TYPES(t, "tensor", [&] {
      if constexpr (std::is_same_v<scalar_t, bool>) {
        *reinterpret_cast<bool*>(data) = v.item<int64_t>() != 0;
      } else if constexpr (std::is_integral_v<scalar_t>) {
        store_int<scalar_t>(data, t, o.p);
      }
    });
    return;
  }
  EMBER_CHECK_TYPE(ValueError, v.numel() == 1, "only one element tensors can be converted to Python scalars");
  const double d = v.item<double>();
  EMBER_DISPATCH_ALL_TYPES(t, "tensor", [&] {
    if constexpr (!std::is_integral_v<scalar_t>) *reinterpret_cast<scalar_t*>(data) = convert<scalar_t>(d);
  });
}

void store_scalar(char* data, ScalarType t, PyObject* obj) {
  if (is_tensor(obj)) return store_tensor_scalar(data, t, unpack_tensor(obj));
  switch (t) {
    case ScalarType::Bool: {
      bool b;
      if (PyFloat_Check(obj)) {
        b = PyFloat_AS_DOUBLE(obj) != 0;
      } else if (PyComplex_Check(obj) || (is_numpy_object(obj) && numpy_dtype(obj) == ScalarType::Bool)) {
        const int truth = PyObject_IsTrue(obj);
        if (truth < 0) throw python_error();
        b = truth != 0;
      } else {
        int of = 0;
        long long v = PyLong_AsLongLongAndOverflow(obj, &of);
        if (v == -1 && PyErr_Occurred()) throw python_error();
        b = of != 0 || v != 0;
      }
      *reinterpret_cast<bool*>(data) = b;
      return;
    }
    case ScalarType::Byte: return store_int<uint8_t>(data, t, obj);
    case ScalarType::Char: return store_int<int8_t>(data, t, obj);
    case ScalarType::Short: return store_int<int16_t>(data, t, obj);
    case ScalarType::Int: return store_int<int32_t>(data, t, obj);
    case ScalarType::Long: return store_int<int64_t>(data, t, obj);
    case ScalarType::UInt64: {
      // The whole unsigned range; a negative int wraps, as in PyTorch; a float is a TypeError.
      PyRef index(PyNumber_Index(obj));  // a float raises TypeError
      uint64_t v = PyLong_AsUnsignedLongLong(index.p);
      if (v == static_cast<uint64_t>(-1) && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw python_error();
        PyErr_Clear();
        const long long w = PyLong_AsLongLong(index.p);
        if (w == -1 && PyErr_Occurred()) throw python_error();
        v = static_cast<uint64_t>(w);
      }
      std::memcpy(data, &v, sizeof(v));
      return;
    }
    case ScalarType::ComplexFloat:
    case ScalarType::ComplexDouble: {
      const Py_complex c = PyComplex_AsCComplex(obj);
      if (c.real == -1.0 && PyErr_Occurred()) throw python_error();
      EMBER_DISPATCH_COMPLEX_TYPES(t, "tensor", [&] {
        *reinterpret_cast<scalar_t*>(data) = convert<scalar_t>(std::complex<double>(c.real, c.imag));
      });
      return;
    }
    default: break;
  }
  const double d = PyFloat_AsDouble(obj);
  if (d == -1.0 && PyErr_Occurred()) throw python_error();
  EMBER_DISPATCH_ALL_TYPES(t, "tensor", [&] {
    if constexpr (!std::is_integral_v<scalar_t>) *reinterpret_cast<scalar_t*>(data) = convert<scalar_t>(d);
  });
}

void recursive_store(char* data, const std::vector<int64_t>& sizes, const DimVector& strides, size_t dim, ScalarType t,
                     size_t esize, PyObject* obj) {
  if (dim == sizes.size()) {
    store_scalar(data, t, obj);
    return;
  }
  // A tensor inside the data stands for the nested list of its values.
  PyObject* src = obj;
  PyObject* owned = nullptr;
  if (is_tensor(obj)) {
    owned = PyObject_CallMethod(obj, "tolist", nullptr);
    if (!owned) throw python_error();
    src = owned;
  }
  PyObject* seq = PySequence_Fast(src, "not a sequence");
  Py_XDECREF(owned);
  if (!seq) throw python_error();
  PyRef hold(seq);
  const int64_t n = sizes[dim];
  const Py_ssize_t got = PySequence_Fast_GET_SIZE(seq);
  if (got != n) throw ValueError(str_cat("expected sequence of length ", n, " at dim ", dim, " (got ", got, ")"));
  PyObject** items = PySequence_Fast_ITEMS(seq);
  for (int64_t i = 0; i < n; ++i) {
    recursive_store(data, sizes, strides, dim + 1, t, esize, items[i]);
    data += strides[dim] * static_cast<int64_t>(esize);
  }
}

}  // namespace

Tensor tensor_from_data(PyObject* data, std::optional<ScalarType> dtype) {
  if (PyUnicode_Check(data) || PyBytes_Check(data)) {
    throw TypeError(str_cat("new(): invalid data type '", Py_TYPE(data)->tp_name, "'"));
  }
  std::vector<int64_t> sizes = compute_sizes(data);
  ScalarType t = dtype ? *dtype : infer_scalar_type(data);
  if (is_limited_type(t) && t != ScalarType::UInt64) {
    // Stored as the carrier dtype, then converted (Note [Limited dtypes]); uint64 is stored directly.
    EMBER_CHECK(is_convertible_limited_type(t), "store_scalar: invalid type");
    return tensor_from_data(data, native::limited::carrier_of(t)).to(t);
  }
  Tensor out = empty(sizes, t);
  if (out.numel() == 0) return out;
  DimVector strides = contiguous_strides(sizes);
  recursive_store(static_cast<char*>(out.data_ptr()), sizes, strides, 0, t, element_size(t), data);
  return out;
}

void init_factories(nb::module_& m) {
  m.def(
      "_tensor_from_data",
      [](nb::handle data, nb::handle dtype) {
        std::optional<ScalarType> t;
        if (!dtype.is_none()) t = parse_dtype(dtype.ptr());
        return nb::steal(wrap(tensor_from_data(data.ptr(), t)));
      },
      nb::arg("data").none(), nb::arg("dtype").none());
  // A copy of a C-contiguous buffer's bytes as a tensor of the given shape and dtype.
  m.def("_tensor_from_buffer", [](nb::handle obj, std::vector<int64_t> shape, nb::handle dtype) {
    ScalarType t = parse_dtype(dtype.ptr());
    Py_buffer view;
    if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) throw python_error();
    Tensor out = empty(shape, t);
    const size_t nbytes = static_cast<size_t>(out.numel()) * element_size(t);
    const bool ok = static_cast<size_t>(view.len) == nbytes;
    if (ok && nbytes) std::memcpy(out.data_ptr(), view.buf, nbytes);
    PyBuffer_Release(&view);
    EMBER_CHECK(ok, "buffer of ", view.len, " bytes does not fill a tensor of shape ", shape_string(shape));
    return nb::steal(wrap(std::move(out)));
  });
}

}  // namespace ember::python
