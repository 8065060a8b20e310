#pragma once
// ember._C's autocast functions (Note [Autocast] in ember/autograd/Autocast.h).

#include <nanobind/nanobind.h>

namespace ember::python {

// Registers the autocast switches and _autocast_wrap on ember._C.
void init_autocast(nanobind::module_& m);

}  // namespace ember::python
