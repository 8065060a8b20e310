// ember._C._extension_api: the table of PythonApi.h, for extension modules.

#include "ember/extension/PythonApi.h"

#include "ember/python/PyTensor.h"
#include "ember/python/PyTypes.h"

namespace ember::python {
namespace {

PyObject* api_wrap_tensor(const Tensor& t) {
  try {
    return wrap(t);
  } catch (...) {
    translate_exception();
    return nullptr;
  }
}
int api_is_tensor(PyObject* obj) { return is_tensor(obj) ? 1 : 0; }
const Tensor* api_unpack_tensor(PyObject* obj) { return &unpack_tensor(obj); }
PyObject* api_dtype_object(ScalarType t) { return dtype_object(t); }
int api_unpack_dtype(PyObject* obj, ScalarType* out) {
  if (!is_dtype(obj)) return 0;
  *out = dtype_of(obj);
  return 1;
}

const extension::PythonApi kApi = {extension::kPythonApiVersion,
                                   api_wrap_tensor,
                                   api_is_tensor,
                                   api_unpack_tensor,
                                   api_dtype_object,
                                   api_unpack_dtype};

}  // namespace

void init_extension_api(PyObject* module) {
  PyObject* capsule = PyCapsule_New(const_cast<extension::PythonApi*>(&kApi), "ember._C._extension_api", nullptr);
  if (!capsule || PyModule_AddObject(module, "_extension_api", capsule) < 0) {
    Py_XDECREF(capsule);
    throw python_error();
  }
}

}  // namespace ember::python
