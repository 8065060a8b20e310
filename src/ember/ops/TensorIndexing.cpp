// Python's indexing rules over TensorIndex lists (Note [Python indexing]).
//
// Note [Python indexing]
// An index is a single object or a tuple of them. Integers select (the
// dimension goes away), slices narrow, None inserts a dimension, Ellipsis
// stands for the dimensions no other entry names, and True/False insert a
// dimension of size 1/0. These give views of the tensor, recorded by
// autograd as SelectBackward0, SliceBackward0, UnsqueezeBackward0. Tensors,
// Python lists and other sequences are "advanced" indices: they are
// collected per dimension (a bool mask covers as many dimensions as it has)
// and handed, with None for the dimensions in between, to index() (a copy,
// IndexBackward0) or index_put_(). Inside a tuple a slice that covers the
// whole dimension is skipped, so x[:, 1] is just a select; a lone x[:] still
// records a slice, and x[...] gives an alias, as in PyTorch.
// Assignment first turns the value into a tensor (a Python number becomes a
// 0-dim tensor of the target's dtype), then copies or fills it into the
// selected view, which autograd records through CopySlices, or calls
// index_put_ when advanced indices are present.
#include "ember/ops/TensorIndexing.h"

#include <cstring>

#include "ember/ops/Ops.h"

namespace ember::indexing {

namespace {

using OptTensors = std::vector<std::optional<Tensor>>;

bool is_mask_dtype(ScalarType t) { return t == ScalarType::Bool || t == ScalarType::Byte; }

// Dimensions the index names (not None, Ellipsis or bools; a mask names its dims).
int64_t count_specified_dims(const TensorIndex* indices, size_t n) {
  int64_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    const TensorIndex& idx = indices[i];
    if (idx.is_tensor()) {
      count += is_mask_dtype(idx.tensor().dtype()) ? idx.tensor().dim() : 1;
    } else if (idx.is_integer() || idx.is_slice()) {
      ++count;
    }
  }
  return count;
}

// Walks a tuple index: applies basic indexing to self and collects the
// advanced indices.
class Slicer {
 public:
  Slicer(const Tensor& self, bool keep_full_slices) : self_(self), keep_full_(keep_full_slices) {}

  Tensor apply(const TensorIndex* indices, size_t n) {
    const int64_t specified = count_specified_dims(indices, n);
    EMBER_CHECK_TYPE(IndexError, specified <= self_.dim(), "too many indices for tensor of dimension ", self_.dim());
    result_ = self_;
    for (size_t i = 0; i < n; ++i) {
      const TensorIndex& idx = indices[i];
      const auto position = static_cast<int64_t>(i);
      switch (idx.kind()) {
        case TensorIndex::Kind::Integer: result_ = apply_select(result_, dim_, idx.integer(), position); break;
        case TensorIndex::Kind::Slice:
          result_ = apply_slice(result_, dim_, idx.slice(), keep_full_);
          ++dim_;
          break;
        case TensorIndex::Kind::Ellipsis: dim_ += self_.dim() - specified; break;
        case TensorIndex::Kind::None:
          result_ = result_.unsqueeze(dim_);
          ++dim_;
          break;
        case TensorIndex::Kind::Boolean:
          result_ = result_.unsqueeze(dim_);
          record(bool_index(idx.boolean()));
          break;
        case TensorIndex::Kind::Tensor: add_tensor(idx.tensor(), position); break;
      }
    }
    return result_;
  }

  OptTensors& indices() { return indices_; }

 private:
  void add_tensor(const Tensor& t, int64_t real_dim) {
    if (t.dim() == 0 && is_integral_type(t.dtype(), /*include_bool=*/true)) {
      if (!is_mask_dtype(t.dtype())) {
        result_ = apply_select(result_, dim_, t.item<int64_t>(), real_dim);
      } else {
        result_ = result_.unsqueeze(dim_);
        record(bool_index(t.item<int64_t>() != 0));
      }
      return;
    }
    record(t);
  }

  // Puts t at the current dimension (None for the skipped ones).
  void record(const Tensor& t) {
    while (covered_ < dim_) {
      indices_.emplace_back(std::nullopt);
      ++covered_;
    }
    indices_.emplace_back(t);
    const int64_t n = is_mask_dtype(t.dtype()) ? t.dim() : 1;
    covered_ += n;
    dim_ += n;
  }

  const Tensor& self_;
  bool keep_full_;
  Tensor result_;
  int64_t dim_ = 0;
  int64_t covered_ = 0;  // dimensions accounted for by indices_
  OptTensors indices_;
};

// Sizes without leading ones: a (1, 1, 3) value fits a (3,) target.
IntArrayRef strip_leading_ones(IntArrayRef sizes) {
  size_t i = 0;
  while (i < sizes.size() && sizes[i] == 1) ++i;
  return IntArrayRef(sizes.data() + i, sizes.size() - i);
}

}  // namespace

Slice::Slice(std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step) {
  step_ = step.value_or(1);
  EMBER_CHECK_TYPE(ValueError, step_ != 0, "slice step cannot be zero");
  start_ = start.value_or(step_ < 0 ? INDEX_MAX : 0);
  stop_ = stop.value_or(step_ < 0 ? INDEX_MIN : INDEX_MAX);
}

TensorIndex::TensorIndex(const char* text) : kind_(Kind::Ellipsis) {
  EMBER_CHECK_TYPE(ValueError, std::strcmp(text, "...") == 0,
                   "Expected \"...\" to represent an ellipsis index, but got \"", text, "\"");
}

Tensor apply_select(const Tensor& self, int64_t dim, int64_t index, int64_t real_dim) {
  if (self.dim() == 0) {
    EMBER_CHECK_TYPE(IndexError, index != 0,
                     "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
                     "convert a 0-dim tensor to a number");
    throw IndexError(str_cat("index ", index, " is out of bounds for dimension ", real_dim, " with size 0"));
  }
  const int64_t size = self.sizes()[dim];
  EMBER_CHECK_TYPE(IndexError, size > -1 - index && size > index, "index ", index, " is out of bounds for dimension ",
                   real_dim, " with size ", size);
  return ember::select(self, dim, index);
}

Tensor apply_slice(const Tensor& self, int64_t dim, const Slice& s, bool keep_full) {
  EMBER_CHECK_TYPE(ValueError, s.step() > 0, "step must be greater than zero");
  EMBER_CHECK_TYPE(IndexError, self.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  if (!keep_full && s.start() == 0 && s.step() == 1 && s.stop() >= self.sizes()[dim]) return self;
  return ember::slice(self, dim, s.start(), s.stop(), s.step());
}

Tensor bool_index(bool value) {
  Tensor t = empty({value ? 1 : 0}, ScalarType::Long);
  if (value) *t.data_ptr<int64_t>() = 0;
  return t;
}

void copy_to(const Tensor& dst, const Tensor& src) {
  if (dst.sizes().equals(src.sizes())) {
    dst.copy_(src);
    return;
  }
  if (src.dim() == 0 && src.is_cpu()) {
    ember::fill_(dst, src);
    return;
  }
  // As PyTorch records it: a view without leading ones, then an expand to
  // the target's shape unless it already fits.
  Tensor v = src.view(strip_leading_ones(src.sizes()));
  if (!v.sizes().equals(dst.sizes())) v = v.expand(dst.sizes());
  dst.copy_(v);
}

Tensor get_item(const Tensor& self, const TensorIndex* indices, size_t n, bool single) {
  if (single && n == 1) {
    const TensorIndex& idx = indices[0];
    switch (idx.kind()) {
      case TensorIndex::Kind::None: return self.unsqueeze(0);
      case TensorIndex::Kind::Ellipsis: return ember::alias(self);
      case TensorIndex::Kind::Integer: return apply_select(self, 0, idx.integer(), 0);
      case TensorIndex::Kind::Slice: return apply_slice(self, 0, idx.slice(), /*keep_full=*/true);
      case TensorIndex::Kind::Boolean: return ember::index(self.unsqueeze(0), OptTensors{bool_index(idx.boolean())});
      case TensorIndex::Kind::Tensor: break;
    }
  }
  Slicer slicer(self, /*keep_full_slices=*/false);
  Tensor sliced = slicer.apply(indices, n);
  if (slicer.indices().empty()) return sliced.is_same(self) ? ember::alias(self) : sliced;
  return ember::index(sliced, slicer.indices());
}

void set_item(const Tensor& self, const TensorIndex* indices, size_t n, bool single, const Tensor& value) {
  if (single && n == 1) {
    const TensorIndex& idx = indices[0];
    switch (idx.kind()) {
      case TensorIndex::Kind::Boolean:
        if (!idx.boolean()) return;  // selects nothing
        [[fallthrough]];
      case TensorIndex::Kind::None: return copy_to(self.unsqueeze(0), value);
      case TensorIndex::Kind::Ellipsis: return copy_to(self, value);
      case TensorIndex::Kind::Integer: return copy_to(apply_select(self, 0, idx.integer(), 0), value);
      case TensorIndex::Kind::Slice: return copy_to(apply_slice(self, 0, idx.slice(), /*keep_full=*/false), value);
      case TensorIndex::Kind::Tensor: break;
    }
  }
  Slicer slicer(self, /*keep_full_slices=*/false);
  Tensor sliced = slicer.apply(indices, n);
  if (slicer.indices().empty()) {
    copy_to(sliced, value);
    return;
  }
  IntArrayRef stripped = strip_leading_ones(value.sizes());
  Tensor values = stripped.size() == value.sizes().size() ? value : value.view(stripped);
  sliced.index_put_(slicer.indices(), values, false);
}

}  // namespace ember::indexing

namespace ember {

Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> indices) const {
  return indexing::get_item(*this, indices.begin(), indices.size(), indices.size() == 1);
}
Tensor Tensor::index(const std::vector<indexing::TensorIndex>& indices) const {
  return indexing::get_item(*this, indices.data(), indices.size(), indices.size() == 1);
}
const Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value) const {
  indexing::set_item(*this, indices.begin(), indices.size(), indices.size() == 1, value);
  return *this;
}
const Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& value) const {
  return index_put_(indices, ember::full({}, value, dtype(), device()));
}
const Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& value) const {
  indexing::set_item(*this, indices.data(), indices.size(), indices.size() == 1, value);
  return *this;
}
const Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, const Scalar& value) const {
  return index_put_(indices, ember::full({}, value, dtype(), device()));
}

}  // namespace ember
