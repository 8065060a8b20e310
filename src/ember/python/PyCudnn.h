#pragma once
// torch._C's cuDNN functions: the library's version and the backend switches.
#include <nanobind/nanobind.h>

namespace ember::python {
void init_cudnn(nanobind::module_& m);
}  // namespace ember::python
