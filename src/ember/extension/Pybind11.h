#pragma once
// pybind11 glue for extension modules: ember::Tensor and ember::ScalarType
// (named torch.Tensor and torch.dtype in signatures, as Ember prints dtypes)
// cross the boundary as ember.Tensor and ember.dtype objects, and Ember's C++
// exceptions become the Python exceptions Ember itself raises.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "ember/extension/PythonApi.h"
#include "ember/ops/Tensor.h"

namespace ember::extension {

inline const PythonApi& python_api_or_throw() {
  const PythonApi* api = python_api();
  if (!api) throw pybind11::error_already_set();
  return *api;
}

inline void translate_exception(std::exception_ptr error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what());
  } catch (const Error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

// Registered once per extension module, when it is loaded.
inline const bool exception_translator_registered = [] {
  pybind11::register_local_exception_translator(&translate_exception);
  return true;
}();

}  // namespace ember::extension

namespace pybind11::detail {

template <>
struct type_caster<ember::Tensor> {
  PYBIND11_TYPE_CASTER(ember::Tensor, const_name("torch.Tensor"));

  bool load(handle src, bool) {
    const auto& api = ember::extension::python_api_or_throw();
    if (!api.is_tensor(src.ptr())) return false;
    value = *api.unpack_tensor(src.ptr());
    return true;
  }
  // An undefined tensor becomes None, as in PyTorch.
  static handle cast(const ember::Tensor& t, return_value_policy, handle) {
    if (!t.defined()) return none().release();
    PyObject* obj = ember::extension::python_api_or_throw().wrap_tensor(t);
    if (!obj) throw error_already_set();
    return obj;
  }
};

template <>
struct type_caster<ember::ScalarType> {
  PYBIND11_TYPE_CASTER(ember::ScalarType, const_name("torch.dtype"));

  bool load(handle src, bool) { return ember::extension::python_api_or_throw().unpack_dtype(src.ptr(), &value); }
  static handle cast(ember::ScalarType t, return_value_policy, handle) {
    return handle(ember::extension::python_api_or_throw().dtype_object(t)).inc_ref();
  }
};

// int[] arguments: a Python int or a sequence of ints, kept in the caster.
template <>
struct type_caster<ember::IntArrayRef> {
  PYBIND11_TYPE_CASTER(ember::IntArrayRef, const_name("List[int]"));

  bool load(handle src, bool convert) {
    if (PyLong_Check(src.ptr()) && !PyBool_Check(src.ptr())) {
      storage_.assign(1, src.cast<int64_t>());
    } else {
      list_caster<std::vector<int64_t>, int64_t> items;
      if (!items.load(src, convert)) return false;
      storage_ = std::move(static_cast<std::vector<int64_t>&>(items));
    }
    value = ember::IntArrayRef(storage_);
    return true;
  }
  static handle cast(ember::IntArrayRef v, return_value_policy policy, handle parent) {
    return list_caster<std::vector<int64_t>, int64_t>::cast(std::vector<int64_t>(v.begin(), v.end()), policy, parent);
  }

 private:
  std::vector<int64_t> storage_;
};

// Scalar arguments: a Python bool, int, float or complex.
template <>
struct type_caster<ember::Scalar> {
  PYBIND11_TYPE_CASTER(ember::Scalar, const_name("Union[bool, int, float, complex]"));

  bool load(handle src, bool) {
    PyObject* obj = src.ptr();
    if (PyBool_Check(obj)) {
      value = ember::Scalar(obj == Py_True);
    } else if (PyLong_Check(obj)) {
      value = ember::Scalar(static_cast<int64_t>(PyLong_AsLongLong(obj)));
      if (PyErr_Occurred()) throw error_already_set();
    } else if (PyFloat_Check(obj)) {
      value = ember::Scalar(PyFloat_AsDouble(obj));
    } else if (PyComplex_Check(obj)) {
      value = ember::Scalar(std::complex<double>(PyComplex_RealAsDouble(obj), PyComplex_ImagAsDouble(obj)));
    } else {
      return false;
    }
    return true;
  }
  static handle cast(const ember::Scalar& s, return_value_policy, handle) {
    if (s.is_bool()) return pybind11::bool_(s.to_bool()).release();
    if (s.is_integral()) return PyLong_FromLongLong(s.to_long());
    if (s.is_complex()) {
      auto c = s.to_complex();
      return PyComplex_FromDoubles(c.real(), c.imag());
    }
    return PyFloat_FromDouble(s.to_double());
  }
};

}  // namespace pybind11::detail
