#pragma once
// ember._C's profiler functions (ember/autograd/Profiler.h).

#include <nanobind/nanobind.h>

namespace ember::python {

void init_profiler(nanobind::module_& m);

}  // namespace ember::python
