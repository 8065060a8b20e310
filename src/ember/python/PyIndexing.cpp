// Python indexing with PyTorch's rules (Note [Python indexing]): index
// objects become ember::indexing::TensorIndex entries, which ops/TensorIndexing
// applies as C++'s x.index({...}) does.
#include "ember/python/PyIndexing.h"

#include <cmath>
#include <complex>
#include <limits>

#include "ember/autograd/Autograd.h"
#include "ember/cpu/IndexStubs.h"
#include "ember/ops/Ops.h"
#include "ember/python/PyTensor.h"

namespace ember::python {

namespace {

// Owns one reference.
struct PyRef {
  PyObject* p = nullptr;
  explicit PyRef(PyObject* o) : p(o) {}
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  ~PyRef() { Py_XDECREF(p); }
};

bool is_int_index(PyObject* o) { return PyLong_Check(o) && !PyBool_Check(o); }

indexing::Slice unpack_slice(PyObject* s) {
  Py_ssize_t start = 0, stop = 0, step = 0;
  if (PySlice_Unpack(s, &start, &stop, &step) < 0) throw python_error();
  return indexing::Slice(start, stop, step);
}

bool is_mask_dtype(ScalarType t) { return t == ScalarType::Bool || t == ScalarType::Byte; }

// A Python sequence used as an index: bool lists stay masks, anything else
// becomes int64 (floats truncate), as PyTorch's indexing conversion does.
Tensor sequence_to_index(PyObject* seq) {
  if (PyUnicode_Check(seq) || PyBytes_Check(seq)) {
    throw TypeError(str_cat("new(): invalid data type '", Py_TYPE(seq)->tp_name, "'"));
  }
  static PyObject* tensor_fn = nullptr;
  if (!tensor_fn) {
    PyRef mod(PyImport_ImportModule("ember._tensor"));
    if (!mod.p) throw python_error();
    tensor_fn = PyObject_GetAttrString(mod.p, "tensor");
    if (!tensor_fn) throw python_error();
  }
  PyRef r(PyObject_CallOneArg(tensor_fn, seq));
  if (!r.p) {
    // Report the element type the way PyTorch does.
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      PyRef msg(value ? PyObject_Str(value) : nullptr);
      std::string text = msg.p ? PyUnicode_AsUTF8(msg.p) : "";
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(tb);
      const std::string prefix = "Could not infer dtype of ";
      if (text.rfind(prefix, 0) == 0) text = "new(): invalid data type '" + text.substr(prefix.size()) + "'";
      throw TypeError(text);
    }
    throw python_error();
  }
  Tensor t = unpack_tensor(r.p);
  if (!is_mask_dtype(t.dtype())) t = t.to(ScalarType::Long);
  return t;
}

// PyTorch treats a short non-tuple sequence containing a sequence, slice,
// tensor, None or Ellipsis as a tuple of indices (a NumPy legacy).
bool treat_sequence_as_tuple(PyObject* index) {
  if (PyTuple_Check(index)) return true;
  if (is_tensor(index) || !PySequence_Check(index)) return false;
  Py_ssize_t n = PySequence_Size(index);
  if (n < 0) {
    PyErr_Clear();
    return false;
  }
  if (n >= 32) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyRef obj(PySequence_GetItem(index, i));
    if (!obj.p) {
      PyErr_Clear();
      return false;
    }
    if (is_tensor(obj.p) || PySequence_Check(obj.p) || PySlice_Check(obj.p) || obj.p == Py_Ellipsis ||
        obj.p == Py_None) {
      if (PyErr_WarnEx(PyExc_UserWarning,
                       "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
                       "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted "
                       "as tensor index, x[torch.tensor(seq)], which will result either in an error or a different "
                       "result",
                       1) < 0) {
        throw python_error();
      }
      return true;
    }
  }
  return false;
}

// One Python index object as a TensorIndex.
indexing::TensorIndex to_tensor_index(PyObject* obj) {
  if (is_int_index(obj)) return unpack_long(obj);
  if (PySlice_Check(obj)) return unpack_slice(obj);
  if (obj == Py_Ellipsis) return indexing::Ellipsis;
  if (obj == Py_None) return indexing::None;
  if (PyBool_Check(obj)) return obj == Py_True;
  if (is_tensor(obj)) return unpack_tensor(obj);
  if (PySequence_Check(obj)) return sequence_to_index(obj);
  PyRef idx(PyNumber_Index(obj));
  if (!idx.p) {
    PyErr_Clear();
    throw IndexError(
        str_cat("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                "are valid indices (got ",
                Py_TYPE(obj)->tp_name, ")"));
  }
  return unpack_long(idx.p);
}

// Calls f(entries, count, single) with a Python index as TensorIndex entries;
// `single` when it was not a tuple (then its one entry stays on the stack).
template <typename F>
auto with_index_entries(PyObject* index, const F& f) {
  const bool tuple_like = !is_tensor(index) && (PyTuple_Check(index) || treat_sequence_as_tuple(index));
  if (!tuple_like) {
    const indexing::TensorIndex entry = to_tensor_index(index);
    return f(&entry, size_t{1}, true);
  }
  PyRef tup(PySequence_Tuple(index));
  if (!tup.p) throw python_error();
  std::vector<indexing::TensorIndex> entries;
  entries.reserve(PyTuple_GET_SIZE(tup.p));
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tup.p); ++i)
    entries.push_back(to_tensor_index(PyTuple_GET_ITEM(tup.p, i)));
  return f(entries.data(), entries.size(), false);
}

// ---- assignment --------------------------------------------------------------

// A Python float as a 0-dim tensor of the target's dtype. 16-bit floats take
// it rounded from double (1e300 becomes inf), as PyTorch's assignment does.
Tensor complex_value_to_tensor(const Tensor& self, Py_complex c);

Tensor float_value_to_tensor(const Tensor& self, double v) {
  const ScalarType t = self.dtype();
  if (is_complex_type(t)) return complex_value_to_tensor(self, Py_complex{v, 0.0});
  if (t == ScalarType::Half || t == ScalarType::BFloat16) {
    return full({}, Scalar(v), ScalarType::Double, self.device()).to(t);
  }
  cpu::check_value_fits(t, Scalar(v), /*check_16bit_floats=*/false);
  return full({}, Scalar(v), t, self.device());
}

// A Python complex as a 0-dim tensor of the target's dtype, checked as
// PyTorch converts it: complex64 parts must fit a float; a real dtype takes a
// number without imaginary part (bool takes any).
Tensor complex_value_to_tensor(const Tensor& self, Py_complex c) {
  const ScalarType t = self.dtype();
  if (is_complex_type(t)) {
    const auto too_big = [](double v) { return std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max(); };
    EMBER_CHECK(t != ScalarType::ComplexFloat || !(too_big(c.real) || too_big(c.imag)),
                "value cannot be converted to type c10::complex<float> without overflow");
    return full({}, Scalar(std::complex<double>(c.real, c.imag)), t, self.device());
  }
  if (t == ScalarType::Bool) return full({}, Scalar(c.real != 0 || c.imag != 0), t, self.device());
  if (c.imag != 0) {
    if (is_integral_type(t, /*include_bool=*/false)) cpu::check_value_fits(t, Scalar(std::nan("")), false);
    throw Error(str_cat("value cannot be converted to type ", t == ScalarType::Float ? "float" : "double",
                        " without overflow"));
  }
  return float_value_to_tensor(self, c.real);
}

// The value of an assignment as a tensor: tensors as they are, Python
// numbers as 0-dim tensors of the target's dtype.
Tensor value_to_tensor(const Tensor& self, PyObject* value) {
  if (is_tensor(value)) return unpack_tensor(value);
  if (PyLong_Check(value)) {
    int64_t v = PyBool_Check(value) ? (value == Py_True) : unpack_long(value);
    cpu::check_value_fits(self.dtype(), Scalar(v), /*check_16bit_floats=*/false);
    return full({}, Scalar(v), self.dtype(), self.device());
  }
  if (PyFloat_Check(value)) return float_value_to_tensor(self, PyFloat_AsDouble(value));
  if (PyComplex_Check(value)) return complex_value_to_tensor(self, PyComplex_AsCComplex(value));
  throw TypeError(str_cat("can't assign a ", Py_TYPE(value)->tp_name, " to a ", self.type_name()));
}

}  // namespace

PyObject* tensor_getitem(PyObject* self, PyObject* index) {
  EMBER_PY_TRY
  const Tensor& t = unpack_tensor(self);
  if (is_int_index(index)) return wrap(indexing::apply_select(t, 0, unpack_long(index), 0));
  return wrap(with_index_entries(index, [&](const indexing::TensorIndex* entries, size_t n, bool single) {
    return indexing::get_item(t, entries, n, single);
  }));
  EMBER_PY_CATCH
}

int tensor_setitem(PyObject* self, PyObject* index, PyObject* value) {
  EMBER_PY_TRY
  if (!value) throw TypeError("Tensor does not support deleting items");
  const Tensor& t = unpack_tensor(self);
  Tensor v = value_to_tensor(t, value);
  with_index_entries(index, [&](const indexing::TensorIndex* entries, size_t n, bool single) {
    indexing::set_item(t, entries, n, single, v);
  });
  return 0;
  EMBER_PY_CATCH_RET(-1)
}

PyObject* tensor_get_base(PyObject* self, void*) {
  EMBER_PY_TRY
  return wrap(autograd::view_base(unpack_tensor(self)));
  EMBER_PY_CATCH
}

namespace {
PyObject* m_is_view(PyObject* self, PyObject*) { return PyBool_FromLong(autograd::is_view(unpack_tensor(self))); }
}  // namespace

void add_view_methods(std::vector<PyMethodDef>& methods) {
  methods.push_back({"_is_view", m_is_view, METH_NOARGS, nullptr});
}

}  // namespace ember::python
