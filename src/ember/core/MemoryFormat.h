#pragma once
// Memory formats (PyTorch's torch.memory_format): how a dense tensor orders
// its dims in memory, and the stride rules that keep a layout through copies.

#include <utility>

#include "ember/core/DimVector.h"
#include "ember/core/Macros.h"

namespace ember {

enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };
constexpr int kNumMemoryFormats = 4;

// "contiguous_format", "preserve_format", "channels_last", "channels_last_3d".
EMBER_CORE_API const char* memory_format_name(MemoryFormat f);

// Dense strides of this shape in a format (not Preserve); channels_last needs
// 4 dims and channels_last_3d 5 (PyTorch's "required rank" error otherwise).
EMBER_CORE_API DimVector strides_for_format(IntArrayRef sizes, MemoryFormat f);
// Whether the strides are dense in that format, size-1 dims ignored.
EMBER_CORE_API bool is_contiguous_as(IntArrayRef sizes, IntArrayRef strides, MemoryFormat f);
// PyTorch's suggest_memory_format: channels_last(_3d) when the strides look
// like it, else contiguous.
EMBER_CORE_API MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides);
// Dense strides that keep the dim order of a strided tensor (a
// preserve_format copy of one that is not dense).
EMBER_CORE_API DimVector infer_dense_strides(IntArrayRef sizes, IntArrayRef strides);

// Orders dims innermost first by an insertion sort that tolerates undecided
// comparisons: should_swap(a, b) > 0 puts a outside b, < 0 keeps it inside,
// 0 says nothing. PyTorch orders dims this way wherever it keeps a layout.
template <typename ShouldSwap>
DimVector order_dims_by_layout(int ndim, ShouldSwap&& should_swap) {
  DimVector order(ndim);
  for (int i = 0; i < ndim; ++i) order[i] = ndim - 1 - i;
  for (int i = 1; i < ndim; ++i) {
    int b = i;
    for (int a = i - 1; a >= 0; --a) {
      const int c = should_swap(static_cast<int>(order[a]), static_cast<int>(order[b]));
      if (c > 0) {
        std::swap(order[a], order[b]);
        b = a;
      } else if (c < 0) {
        break;
      }
    }
  }
  return order;
}

}  // namespace ember
