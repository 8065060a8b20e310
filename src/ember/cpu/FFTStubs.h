#pragma once
// The packed (several lines at once) mixed-radix transform, compiled once per
// CPU capability in cpu/kernels/FFTKernel.cpp.
#include <cstdint>

#include "ember/ops/DispatchStub.h"

namespace ember::cpu {

// stages: StageView<float or double>[count]; in/out: kPackLines complex
// lines each (element i of line k at in[k] + i * in_stride), read straight
// into the packed layout and written back times scale (in == out allowed);
// work: reals, packed_work_size() of them (ComplexPlan). split_tw, when not
// null, holds exp(-2 pi i k / 2n) (k <= n): the lines are the even/odd
// packing of real lines of 2n, and out gets their n + 1 r2c outputs.
using FFTPackedFn = void (*)(bool is_double, const void* stages, int count, int64_t n, const void* const* in,
                             int64_t in_stride, void* const* out, int64_t out_stride, void* work, bool inverse,
                             double scale, const void* split_tw);

EMBER_DECLARE_DISPATCH(FFTPackedFn, fft_packed_stub);

// Bluestein's algorithm on kPackLines lines of n points (in/out as above),
// all in the packed layout: stages are the inner plan's (m points), chirp
// exp(-i pi k^2 / n) (n values), spectrum that of the conjugate chirp over m
// points, divided by m.
using FFTBluesteinPackedFn = void (*)(bool is_double, const void* stages, int count, int64_t m, int64_t n,
                                      const void* chirp, const void* spectrum, const void* const* in, int64_t in_stride,
                                      void* const* out, int64_t out_stride, void* work, bool inverse, double scale);

EMBER_DECLARE_DISPATCH(FFTBluesteinPackedFn, fft_bluestein_packed_stub);

}  // namespace ember::cpu
