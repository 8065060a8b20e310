#pragma once
// Registration of CUDA kernels into the stubs the CPU library defines: each
// assignment runs when libember_cuda is loaded.
#include "ember/core/Macros.h"

#define EMBER_REGISTER_CUDA_STUB_(tag, stub, fn)                                \
  static const bool EMBER_CUDA_CONCAT_(tag##_cuda_registered_, __LINE__) = [] { \
    (stub).cuda = (fn);                                                         \
    return true;                                                                \
  }()
#define EMBER_CUDA_CONCAT_IMPL_(a, b) a##b
#define EMBER_CUDA_CONCAT_(a, b) EMBER_CUDA_CONCAT_IMPL_(a, b)

// The CUDA kernel of a hand-written stub (cpu/*Stubs.h).
#define EMBER_REGISTER_CUDA_DISPATCH(stub, fn) EMBER_REGISTER_CUDA_STUB_(stub, ::ember::cpu::stub, fn)
// The CUDA kernel of a pointwise operator of ops.yaml (its stub is
// generated: ember/ops/generated/PointwiseStubs.h). tools/cuda_pointwise_coverage.py
// reads these lines to list the operators without one.
#define EMBER_REGISTER_CUDA_POINTWISE(op, fn) EMBER_REGISTER_CUDA_STUB_(op, ::ember::native::op##_stub, fn)
