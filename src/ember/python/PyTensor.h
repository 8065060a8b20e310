#pragma once
// The Python tensor type (_C.TensorBase); ember.Tensor subclasses it in Python.

#include <Python.h>

#include <initializer_list>
#include <tuple>
#include <vector>

#include "ember/ops/Tensor.h"
#include "ember/python/Exceptions.h"

namespace ember::python {

struct PyTensorObject {
  PyObject_HEAD Tensor tensor;  // constructed in place; never undefined while the object lives
  PyObject* dict;
  PyObject* weakreflist;
};

extern PyTypeObject* g_tensor_base_type;  // _C.TensorBase
extern PyObject* g_tensor_class;  // ember.Tensor (set from Python)

inline bool is_tensor(PyObject* obj) { return PyObject_TypeCheck(obj, g_tensor_base_type); }
inline const Tensor& unpack_tensor(PyObject* obj) { return reinterpret_cast<PyTensorObject*>(obj)->tensor; }

// The Python object for t: the existing one if t already has one.
PyObject* wrap(Tensor t);
PyObject* wrap(const std::vector<Tensor>& ts);  // a tuple
template <typename... Ts>
PyObject* wrap(const std::tuple<Ts...>& t) {
  PyObject* out = PyTuple_New(sizeof...(Ts));
  Py_ssize_t i = 0;
  std::apply([&](const auto&... x) { (PyTuple_SET_ITEM(out, i++, wrap(x)), ...); }, t);
  return out;
}
// torch.return_types.<name>: a named tuple type with the given fields (cached).
PyTypeObject* return_type(const char* name, std::initializer_list<const char*> fields);
template <typename... Ts>
PyObject* wrap_named(PyTypeObject* type, const std::tuple<Ts...>& t) {
  PyObject* out = PyStructSequence_New(type);
  if (!out) throw python_error();
  Py_ssize_t i = 0;
  std::apply([&](const auto&... x) { (PyStructSequence_SET_ITEM(out, i++, wrap(x)), ...); }, t);
  return out;
}
// Creates a new Python object of `type` (a TensorBase subclass) for t.
PyObject* wrap_as(PyTypeObject* type, Tensor t);

// A Python bool/int/float as a 0-dim "wrapped number" tensor.
Tensor scalar_to_tensor(PyObject* obj);
// Python ints as PyTorch unpacks them, every error raised (never left set):
// unpack_int_scalar gives an int64 Scalar, or a uint64 one for [2**63, 2**64)
// and Python's OverflowError beyond; unpack_long (THPUtils_unpackLong) gives
// an int64 or raises ValueError "Overflow when unpacking long long".
Scalar unpack_int_scalar(PyObject* obj);
int64_t unpack_long(PyObject* obj);
// A Python float or int as a double; Python's OverflowError for huge ints.
double unpack_double(PyObject* obj);
std::complex<double> unpack_complex(PyObject* obj);
// NumPy's scalars PyTorch takes as numbers: np.bool_, np.integer, np.floating
// and np.complexfloating (np.float64 is also a float).
enum class NumpyScalar { None, Bool, Int, Float, Complex };
NumpyScalar numpy_scalar_kind(PyObject* obj);
// A NumPy scalar as PyTorch's parser reads it: an integer as an int, anything
// else (np.bool_ and np.complex64 too) through float().
Scalar numpy_scalar_value(PyObject* obj, NumpyScalar kind);
bool is_number(PyObject* obj);

void init_tensor_type(PyObject* module);

}  // namespace ember::python
