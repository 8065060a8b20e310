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

}  // namespace pybind11::detail
