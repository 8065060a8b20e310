#pragma once
// #include <torch/extension.h> for extension modules built against Ember
// (ember.utils.cpp_extension): PyTorch's C++ names plus the pybind11 glue.

#include <torch/torch.h>

#include <torch/library.h>
#include "ember/extension/Pybind11.h"

namespace py = pybind11;
