#include "ember/autograd/ViewsBackward.h"

#include <algorithm>

#include "ember/ops/Ops.h"

namespace ember::autograd::generated {

namespace {

std::vector<std::optional<Tensor>> as_optional(const std::vector<Tensor>& ts) {
  std::vector<std::optional<Tensor>> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) {
    if (t.defined()) {
      out.emplace_back(t);
    } else {
      out.emplace_back(std::nullopt);
    }
  }
  return out;
}

// Largest element offset a geometry reaches (0 for a single element).
int64_t max_offset(IntArrayRef sizes, IntArrayRef strides) {
  int64_t m = 0;
  for (size_t i = 0; i < sizes.size(); ++i) m += (sizes[i] - 1) * strides[i];
  return m;
}

// True when two index tuples may address the same element.
bool has_overlap(IntArrayRef sizes, IntArrayRef strides) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return false;
    if (sizes[i] > 1) dims.emplace_back(strides[i], sizes[i]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;
  for (auto [stride, size] : dims) {
    if (stride <= reach) return true;
    reach += (size - 1) * stride;
  }
  return false;
}

// Storage offsets (from `offset`) of every element of a geometry, row-major.
Tensor linear_offsets(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  const int64_t n = product(sizes);
  Tensor out = empty({n}, ScalarType::Long);
  int64_t* p = out.data_ptr<int64_t>();
  const size_t nd = sizes.size();
  DimVector idx(nd, 0);
  int64_t off = offset;
  for (int64_t k = 0; k < n; ++k) {
    p[k] = off;
    for (size_t d = nd; d-- > 0;) {
      off += strides[d];
      if (++idx[d] < sizes[d]) break;
      off -= strides[d] * sizes[d];
      idx[d] = 0;
    }
  }
  return out;
}

Tensor join_pieces(const std::vector<Tensor>& grads, const std::vector<int64_t>& lengths, int64_t dim,
                   IntArrayRef sizes, ScalarType dtype) {
  int64_t d = maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  Device device(DeviceType::CPU);
  for (const Tensor& g : grads) {
    if (g.defined()) {
      device = g.device();
      break;
    }
  }
  std::vector<Tensor> parts;
  parts.reserve(lengths.size());
  DimVector piece(sizes);
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (i < grads.size() && grads[i].defined()) {
      parts.push_back(grads[i]);
    } else {
      piece[d] = lengths[i];
      parts.push_back(zeros(piece, dtype, device));
    }
  }
  return cat(parts, d);
}

}  // namespace

Tensor select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t index) {
  Tensor g = zeros(sizes, grad.dtype(), grad.device());
  g.select(dim, index).copy_(grad);
  return g;
}

Tensor as_strided_backward(const Tensor& grad, IntArrayRef in_sizes, IntArrayRef in_strides, int64_t in_offset,
                           IntArrayRef out_sizes, IntArrayRef out_strides, std::optional<int64_t> out_offset) {
  const int64_t out_off = out_offset.value_or(in_offset);
  if (product(in_sizes) == 0) return zeros(in_sizes, grad.dtype(), grad.device());
  EMBER_CHECK(!has_overlap(in_sizes, in_strides),
              "as_strided: the backward of a tensor whose elements overlap in memory is not supported");
  const bool out_empty = product(out_sizes) == 0;
  int64_t lo = in_offset, hi = in_offset + max_offset(in_sizes, in_strides) + 1;
  if (!out_empty) {
    lo = std::min(lo, out_off);
    hi = std::max(hi, out_off + max_offset(out_sizes, out_strides) + 1);
  }
  Tensor buf = zeros({hi - lo}, grad.dtype(), grad.device());
  if (!out_empty) {
    if (!has_overlap(out_sizes, out_strides)) {
      buf.as_strided(out_sizes, out_strides, out_off - lo).copy_(grad);
    } else {
      // Elements the view reaches more than once collect all their gradients.
      Tensor where = linear_offsets(out_sizes, out_strides, out_off - lo).to(grad.device());
      buf.index_put_({where}, grad.reshape({-1}), true);
    }
  }
  return buf.as_strided(in_sizes, in_strides, in_offset - lo);
}

Tensor split_backward(const std::vector<Tensor>& grads, int64_t split_size, int64_t dim, IntArrayRef sizes,
                      ScalarType dtype) {
  int64_t d = maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  const int64_t dim_size = sizes[d];
  const int64_t n = static_cast<int64_t>(grads.size());
  std::vector<int64_t> lengths(n, split_size);
  if (n > 0) lengths[n - 1] = dim_size - split_size * (n - 1);
  return join_pieces(grads, lengths, dim, sizes, dtype);
}

Tensor split_with_sizes_backward(const std::vector<Tensor>& grads, IntArrayRef split_sizes, int64_t dim,
                                 IntArrayRef sizes, ScalarType dtype) {
  return join_pieces(grads, split_sizes.vec(), dim, sizes, dtype);
}

Tensor unfold_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t size, int64_t step) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  DimVector in_strides = contiguous_strides(sizes);
  DimVector out_sizes(sizes), out_strides(in_strides);
  if (nd == 0) {
    out_sizes.push_back(size);
    out_strides.push_back(1);
  } else {
    int64_t d = maybe_wrap_dim(dim, nd);
    out_sizes.push_back(size);
    out_strides.push_back(in_strides[d]);
    out_sizes[d] = (sizes[d] - size) / step + 1;
    out_strides[d] *= step;
  }
  return as_strided_backward(grad, sizes, in_strides, 0, out_sizes, out_strides, 0);
}

Tensor diagonal_backward(const Tensor& grad, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2) {
  Tensor g = zeros(sizes, grad.dtype(), grad.device());
  g.diagonal(offset, dim1, dim2).copy_(grad);
  return g;
}

Tensor index_backward(const Tensor& grad, IntArrayRef sizes, const std::vector<Tensor>& indices) {
  Tensor g = zeros(sizes, grad.dtype(), grad.device());
  g.index_put_(as_optional(indices), grad, true);
  return g;
}

Tensor index_put_self_backward(const Tensor& grad, const std::vector<Tensor>& indices, bool accumulate) {
  if (accumulate) return grad;
  return grad.index_put(as_optional(indices), zeros({}, grad.dtype(), grad.device()), false);
}

Tensor index_put_values_backward(const Tensor& grad, const std::vector<Tensor>& indices) {
  return ember::index(grad, as_optional(indices));
}

Tensor index_select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, const Tensor& index) {
  if (sizes.empty()) return grad.reshape({});
  int64_t d = maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  Tensor g = zeros(sizes, grad.dtype(), grad.device());
  std::vector<std::optional<Tensor>> where(d, std::nullopt);
  where.emplace_back(index.reshape({-1}));
  g.index_put_(where, grad, true);
  return g;
}

Tensor masked_fill_value_backward(const Tensor& grad, const Tensor& mask) {
  // Positions where the mask is false get zero, then everything is summed.
  return grad.masked_fill(logical_not(mask.expand(grad.sizes())), 0).sum();
}

}  // namespace ember::autograd::generated
