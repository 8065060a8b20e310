#include "ember/core/MemoryFormat.h"

#include <initializer_list>

#include "ember/core/Error.h"
#include "ember/core/TensorImpl.h"

namespace ember {

const char* memory_format_name(MemoryFormat f) {
  switch (f) {
    case MemoryFormat::Contiguous: return "contiguous_format";
    case MemoryFormat::Preserve: return "preserve_format";
    case MemoryFormat::ChannelsLast: return "channels_last";
    case MemoryFormat::ChannelsLast3d: return "channels_last_3d";
  }
  return "?";
}

namespace {
// The dims of a channels-last layout, innermost first.
std::initializer_list<int> channels_last_order(size_t ndim) {
  static constexpr std::initializer_list<int> k4 = {1, 3, 2, 0};
  static constexpr std::initializer_list<int> k5 = {1, 4, 3, 2, 0};
  return ndim == 4 ? k4 : k5;
}

size_t required_rank(MemoryFormat f) { return f == MemoryFormat::ChannelsLast ? 4 : 5; }
}  // namespace

DimVector strides_for_format(IntArrayRef sizes, MemoryFormat f) {
  if (f == MemoryFormat::Contiguous) return contiguous_strides(sizes);
  EMBER_CHECK(f != MemoryFormat::Preserve, "unsupported memory format preserve_format");
  const size_t rank = required_rank(f);
  EMBER_CHECK(sizes.size() == rank, "required rank ", rank, " tensor to use ", memory_format_name(f), " format");
  DimVector strides(rank);
  int64_t next = 1;
  for (int d : channels_last_order(rank)) {
    strides[d] = next;
    next *= sizes[d];
  }
  return strides;
}

bool is_contiguous_as(IntArrayRef sizes, IntArrayRef strides, MemoryFormat f) {
  if (f == MemoryFormat::Contiguous || f == MemoryFormat::Preserve) {
    for (int64_t s : sizes) {
      if (s == 0) return true;
    }
    int64_t expected = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      if (sizes[i] == 1) continue;
      if (strides[i] != expected) return false;
      expected *= sizes[i];
    }
    return true;
  }
  if (sizes.size() != required_rank(f)) return false;
  int64_t expected = 1;
  for (int d : channels_last_order(sizes.size())) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides) {
  // PyTorch's heuristic: strides grow along C, W, H, N (C, W, H, D, N), and
  // ambiguous size-1 cases fall back to contiguous.
  const size_t ndim = sizes.size();
  if ((ndim != 4 && ndim != 5) || strides[1] == 0) return MemoryFormat::Contiguous;
  int64_t min = 0;
  for (int d : channels_last_order(ndim)) {
    if (sizes[d] == 0 || strides[d] < min) return MemoryFormat::Contiguous;
    if (d == 0 && min == strides[1]) return MemoryFormat::Contiguous;
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return ndim == 4 ? MemoryFormat::ChannelsLast : MemoryFormat::ChannelsLast3d;
}

DimVector infer_dense_strides(IntArrayRef sizes, IntArrayRef strides) {
  const int ndim = static_cast<int>(sizes.size());
  const DimVector order = order_dims_by_layout(ndim, [&](int a, int b) {
    if (strides[a] == 0 || strides[b] == 0) return 0;
    if (strides[a] != strides[b]) return strides[a] < strides[b] ? -1 : 1;
    return sizes[a] > sizes[b] ? 1 : 0;
  });
  DimVector out(ndim);
  int64_t next = 1;
  for (int i = 0; i < ndim; ++i) {
    out[order[i]] = next;
    if (sizes[order[i]] > 1) next *= sizes[order[i]];
  }
  return out;
}

}  // namespace ember
