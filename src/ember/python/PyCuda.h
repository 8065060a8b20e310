#pragma once
// torch._C's CUDA runtime functions (_cuda_*): streams, events, the caching
// allocator's statistics, pinned memory.
#include <nanobind/nanobind.h>

namespace ember::python {
void init_cuda(nanobind::module_& m);
}  // namespace ember::python
