#pragma once
// The sampling stubs whose `cuda` entries libember_cuda fills. They are
// defined in cpu/Random.cpp and declared for the CPU kernels in
// cpu/RandomStubs.h; the CUDA layer may not include cpu/, so the same
// declarations are repeated here and must stay identical to those.
#include <cstdint>

#include "ember/core/Generator.h"
#include "ember/core/TensorBase.h"
#include "ember/ops/DispatchStub.h"

namespace ember::cpu {

using UniformFn = void (*)(const TensorBase& self, double from, double to, GeneratorImpl* gen);
using NormalFn = void (*)(const TensorBase& self, double mean, double std, GeneratorImpl* gen);
using RandomFromToFn = void (*)(const TensorBase& self, uint64_t range, int64_t base, GeneratorImpl* gen);
using RandomFn = void (*)(const TensorBase& self, GeneratorImpl* gen);
using ExponentialFn = void (*)(const TensorBase& self, double lambda, GeneratorImpl* gen);
using BernoulliScalarFn = void (*)(const TensorBase& self, double p, GeneratorImpl* gen);
using BernoulliTensorFn = void (*)(const TensorBase& self, const TensorBase& p, GeneratorImpl* gen);

EMBER_DECLARE_DISPATCH(UniformFn, uniform_stub);
EMBER_DECLARE_DISPATCH(NormalFn, normal_stub);
EMBER_DECLARE_DISPATCH(RandomFromToFn, random_from_to_stub);
EMBER_DECLARE_DISPATCH(RandomFn, random_full_range_stub);
EMBER_DECLARE_DISPATCH(RandomFn, random_stub);
EMBER_DECLARE_DISPATCH(ExponentialFn, exponential_stub);
EMBER_DECLARE_DISPATCH(BernoulliScalarFn, bernoulli_scalar_stub);
EMBER_DECLARE_DISPATCH(BernoulliTensorFn, bernoulli_tensor_stub);

}  // namespace ember::cpu
