#pragma once
// ember._C's forward-mode AD functions (ember/autograd/ForwardAD.h).

#include <nanobind/nanobind.h>

namespace ember::python {

void init_forward_ad(nanobind::module_& m);

}  // namespace ember::python
