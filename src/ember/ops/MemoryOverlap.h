#pragma once
// Overlap tests of written tensors, with PyTorch's rules and messages: an
// output may not hold one memory location twice (an expanded dim), and may
// share memory with an input only element for element (in-place) where the
// op allows it.

#include "ember/ops/Tensor.h"

namespace ember {

// kTooHard: a layout the test does not decide (not dense).
enum class MemOverlap { kNo, kFull, kPartial, kTooHard };

// Whether two tensors share memory: kNo for different storages, kFull for
// the same elements in the same layout, kPartial for any other intersection
// of their byte ranges.
EMBER_API MemOverlap overlap_status(const Tensor& a, const Tensor& b);

// Throws PyTorch's error when t writes one location through several elements
// (a stride-0 dim of size > 1).
EMBER_API void assert_no_internal_overlap(const Tensor& t);
// Throws when out and in overlap other than element for element.
EMBER_API void assert_no_partial_overlap(const Tensor& out, const Tensor& in);
// Throws when out and in share any memory (ops that read in after writing out).
EMBER_API void assert_no_overlap(const Tensor& out, const Tensor& in);

// True when no two elements of t share memory, by a sufficient test on the
// strides (each stride, smallest first, steps past all the smaller ones reach).
EMBER_API bool surely_no_internal_overlap(const Tensor& t);

}  // namespace ember
