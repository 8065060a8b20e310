#pragma once
// Kernels of the random-sampling ops (cpu/kernels/RandomKernel.cpp), chosen
// at run time by CPU capability. The caller holds the generator's mutex and
// has checked the arguments; each kernel fills `self` in place, drawing in
// PyTorch's order so that equal seeds give equal tensors.

#include <cstdint>
#include <optional>

#include "ember/core/Generator.h"
#include "ember/core/TensorBase.h"
#include "ember/ops/DispatchStub.h"

namespace ember::cpu {

using UniformFn = void (*)(const TensorBase& self, double from, double to, GeneratorImpl* gen);
using NormalFn = void (*)(const TensorBase& self, double mean, double std, GeneratorImpl* gen);
// random_(from, to): base + (draw % range), a 64-bit draw when range >= 2^32.
using RandomFromToFn = void (*)(const TensorBase& self, uint64_t range, int64_t base, GeneratorImpl* gen);
using RandomFn = void (*)(const TensorBase& self, GeneratorImpl* gen);
using ExponentialFn = void (*)(const TensorBase& self, double lambda, GeneratorImpl* gen);
using BernoulliScalarFn = void (*)(const TensorBase& self, double p, GeneratorImpl* gen);
// p has self's shape (expanded) and a floating dtype.
using BernoulliTensorFn = void (*)(const TensorBase& self, const TensorBase& p, GeneratorImpl* gen);

EMBER_DECLARE_DISPATCH(UniformFn, uniform_stub);
EMBER_DECLARE_DISPATCH(NormalFn, normal_stub);
EMBER_DECLARE_DISPATCH(RandomFromToFn, random_from_to_stub);
EMBER_DECLARE_DISPATCH(RandomFn, random_full_range_stub);  // [-2^63, 2^63)
EMBER_DECLARE_DISPATCH(RandomFn, random_stub);  // random_() without bounds
EMBER_DECLARE_DISPATCH(ExponentialFn, exponential_stub);
EMBER_DECLARE_DISPATCH(BernoulliScalarFn, bernoulli_scalar_stub);
EMBER_DECLARE_DISPATCH(BernoulliTensorFn, bernoulli_tensor_stub);

// randperm into out (checked, n elements) on a device without a CPU-style
// shuffle (CUDA); it samples through the ops, so the caller holds no lock.
using RandpermFn = void (*)(const TensorBase& out, int64_t n, std::optional<Generator> gen);
EMBER_DECLARE_DISPATCH(RandpermFn, randperm_device_stub);
// multinomial into out (checked and shaped) on such a device.
using MultinomialFn = void (*)(const TensorBase& self, int64_t n_sample, bool replacement, std::optional<Generator> gen,
                               const TensorBase& out);
EMBER_DECLARE_DISPATCH(MultinomialFn, multinomial_device_stub);

}  // namespace ember::cpu
