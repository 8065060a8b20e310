#pragma once
// nanobind glue shared by the binding files: tensors cross the boundary as
// the same objects the hand-written bindings use.
#include <nanobind/nanobind.h>

#include "ember/ops/Tensor.h"
#include "ember/python/Exceptions.h"
#include "ember/python/PyTensor.h"

namespace nanobind::detail {
template <>
struct type_caster<ember::Tensor> {
  NB_TYPE_CASTER(ember::Tensor, const_name("Tensor"))
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    if (!ember::python::is_tensor(src.ptr())) return false;
    value = ember::python::unpack_tensor(src.ptr());
    return true;
  }
  static handle from_cpp(const ember::Tensor& t, rv_policy, cleanup_list*) noexcept {
    try {
      return ember::python::wrap(t);
    } catch (...) {
      ember::python::translate_exception();
      return handle();
    }
  }
};
}  // namespace nanobind::detail

namespace ember::python {
// ember._C._distributed (PyDistributed.cpp; built with USE_DISTRIBUTED).
void init_distributed(nanobind::module_& m);
}  // namespace ember::python
