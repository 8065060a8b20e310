// View operators: new sizes/strides over the same storage, sharing the
// version counter so autograd sees in-place changes through any alias.
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

#include <algorithm>

namespace ember::native {

namespace {
Tensor make_view(const Tensor& self, IntArrayRef size, IntArrayRef stride, int64_t offset) {
  TensorImpl* base = self.unsafeGetTensorImpl();
  auto impl = make_intrusive<TensorImpl>(base->storage(), base->dtype(), size, stride, offset);
  impl->set_version_counter(base->shared_version_counter());
  impl->set_math_bits(base->math_bits());  // a view of a conjugate is conjugate
  return Tensor(std::move(impl));
}

// Throws PyTorch's error when the geometry reaches past the end of the storage.
void check_in_storage(const Tensor& self, IntArrayRef size, IntArrayRef stride, int64_t offset) {
  for (size_t i = 0; i < size.size(); ++i) {
    EMBER_CHECK(size[i] >= 0, "Storage size calculation overflowed with sizes=", shape_string(size),
                " and strides=", shape_string(stride));
  }
  check_in_bounds_for_storage(size, stride, offset, self.element_size(),
                              self.unsafeGetTensorImpl()->storage()->nbytes());  // Note [Checked sizes]
}

// Infers a -1 entry of a view/reshape shape from numel.
DimVector infer_size(IntArrayRef shape, int64_t numel) {
  DimVector res(shape);
  int64_t known = 1;
  int64_t infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      EMBER_CHECK(infer < 0, "only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      EMBER_CHECK(shape[i] >= 0, "invalid shape dimension ", shape[i]);
      known *= shape[i];
    }
  }
  bool ok = numel == known || (infer >= 0 && known > 0 && numel % known == 0);
  if (infer >= 0 && known == 0) {
    EMBER_CHECK(false, "cannot reshape tensor of 0 elements into shape ", shape_string(shape),
                " because the unspecified dimension size -1 can be any value and is ambiguous");
  }
  EMBER_CHECK(ok, "shape '", shape_string(shape), "' is invalid for input of size ", numel);
  if (infer >= 0) res[infer] = numel / known;
  return res;
}

// Strides for viewing (sizes, strides) as new_shape without copying, if possible.
std::optional<DimVector> compute_view_stride(IntArrayRef old_size, IntArrayRef old_stride, IntArrayRef new_size) {
  DimVector new_stride(new_size.size());
  if (old_size.empty()) {
    for (auto& s : new_stride) s = 1;
    return new_stride;
  }
  int64_t numel = product(old_size);
  if (numel == 0) {
    if (old_size.equals(new_size)) return DimVector(old_stride);
    return contiguous_strides(new_size);
  }
  int64_t view_d = static_cast<int64_t>(new_size.size()) - 1;
  int64_t chunk_base_stride = old_stride.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_size.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_size[tensor_d];
    if (tensor_d == 0 ||
        (old_size[tensor_d - 1] != 1 && old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_size[view_d] == 1)) {
        new_stride[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_size[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = old_stride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_stride;
}
}  // namespace

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  EMBER_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  int64_t offset = storage_offset.value_or(self.storage_offset());
  for (int64_t st : stride) {
    EMBER_CHECK(st >= 0,
                "as_strided: Negative strides are not supported at the moment, got strides: ", shape_string(stride));
  }
  EMBER_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  check_in_storage(self, size, stride, offset);
  return make_view(self, size, stride, offset);
}

Tensor expand(const Tensor& self, IntArrayRef size, bool /*implicit*/) {
  int64_t nd = static_cast<int64_t>(size.size());
  EMBER_CHECK(nd >= self.dim(), "expand(", self.type_name(), "{", shape_string(self.sizes()),
              "}, size=", shape_string(size), "): the number of sizes provided (", nd,
              ") must be greater or equal to the number of dimensions in the tensor (", self.dim(), ")");
  DimVector new_size(nd), new_stride(nd);
  for (int64_t i = nd - 1; i >= 0; --i) {
    int64_t off = nd - 1 - i;
    int64_t d = self.dim() - 1 - off;
    int64_t cur = d >= 0 ? self.sizes()[d] : 1;
    // New leading dims continue the stride pattern (0 for a 0-dim input, as in PyTorch).
    int64_t cur_stride = d >= 0 ? self.strides()[d] : (i + 1 < nd ? new_size[i + 1] * new_stride[i + 1] : 0);
    int64_t want = size[i];
    if (want == -1) {
      EMBER_CHECK(d >= 0, "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension ",
                  i);
      want = cur;
    }
    if (cur != want) {
      EMBER_CHECK(cur == 1, "The expanded size of the tensor (", want, ") must match the existing size (", cur,
                  ") at non-singleton dimension ", i, ".  Target sizes: ", shape_string(size),
                  ".  Tensor sizes: ", shape_string(self.sizes()));
      cur_stride = 0;
    }
    new_size[i] = want;
    new_stride[i] = cur_stride;
  }
  return make_view(self, new_size, new_stride, self.storage_offset());
}

Tensor view(const Tensor& self, IntArrayRef size) {
  DimVector shape = infer_size(size, self.numel());
  auto stride = compute_view_stride(self.sizes(), self.strides(), shape);
  EMBER_CHECK(stride.has_value(),
              "view size is not compatible with input tensor's size and stride (at least one dimension spans "
              "across two contiguous subspaces). Use .reshape(...) instead.");
  return make_view(self, shape, *stride, self.storage_offset());
}

// As PyTorch: a view when contiguous, else an alias with computed strides
// when the geometry allows (ReshapeAliasBackward0), else a copy.
Tensor reshape(const Tensor& self, IntArrayRef shape) {
  if (self.is_contiguous()) return self.view(shape);
  DimVector size = infer_size(shape, self.numel());
  if (auto stride = compute_view_stride(self.sizes(), self.strides(), size)) {
    return ember::_reshape_alias(self, size, *stride);
  }
  return ember::_unsafe_view(self.clone(MemoryFormat::Contiguous), size);
}

Tensor _reshape_alias(const Tensor& self, IntArrayRef size, IntArrayRef stride) {
  return make_view(self, size, stride, self.storage_offset());
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  int64_t d = maybe_wrap_dim(dim, self.dim() + 1);
  DimVector size(self.sizes()), stride(self.strides());
  int64_t new_stride = d >= self.dim() ? 1 : size[d] * stride[d];
  size.insert(d, 1);
  stride.insert(d, new_stride);
  return make_view(self, size, stride, self.storage_offset());
}

Tensor permute(const Tensor& self, IntArrayRef dims) {
  int64_t nd = self.dim();
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == nd,
              "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
              "desired ordering of dimensions i.e. input.dim() = ",
              nd, " is not equal to len(dims) = ", dims.size());
  DimVector size(nd), stride(nd);
  std::vector<bool> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t d = maybe_wrap_dim(dims[i], nd);
    EMBER_CHECK(!seen[d], "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    size[i] = self.sizes()[d];
    stride[i] = self.strides()[d];
  }
  return make_view(self, size, stride, self.storage_offset());
}

}  // namespace ember::native

namespace ember::native {

Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  EMBER_CHECK(self.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  int64_t d = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK(step > 0, "slice step must be positive");
  int64_t size = self.sizes()[d];
  int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::min(std::max<int64_t>(s, 0), size);
  e = std::min(std::max<int64_t>(e, s), size);
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes[d] = (e - s + step - 1) / step;
  strides[d] *= step;
  return make_view(self, sizes, strides, self.storage_offset() + s * self.strides()[d]);
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  EMBER_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  EMBER_CHECK(length >= 0, "narrow(): length must be non-negative.");
  int64_t d = maybe_wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[d];
  EMBER_CHECK_TYPE(IndexError, start >= -size && start <= size, "start out of range (expected to be in range of [",
                   -size, ", ", size, "], but got ", start, ")");
  if (start < 0) start += size;
  EMBER_CHECK(start <= size - length, "start (", start, ") + length (", length, ") exceeds dimension size (", size,
              ").");
  return ember::slice(self, d, start, start + length, 1);
}

// narrow with a 0-dim integral tensor as the start (PyTorch's narrow.Tensor).
Tensor narrow_tensor(const Tensor& self, int64_t dim, const Tensor& start, int64_t length) {
  EMBER_CHECK(start.dim() == 0 && is_integral_type(start.dtype(), /*include_bool=*/false),
              "start must be an 0-dim integral Tensor.");
  return native::narrow(self, dim, start.item<int64_t>(), length);
}

std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  int64_t d = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK_TYPE(IndexError, self.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  int64_t n = self.sizes()[d];
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.erase(d);
  strides.erase(d);
  std::vector<Tensor> out;
  out.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    out.push_back(make_view(self, sizes, strides, self.storage_offset() + i * self.strides()[d]));
  }
  return out;
}

}  // namespace ember::native

// ---- more views: select, transpose, squeeze, split, unfold, diagonal, ... ----
namespace ember::native {

namespace {
// "Float" for Float: the dtype names of PyTorch's C++ messages.
std::string dtype_word(ScalarType t) {
  std::string s(legacy_type_name(t));
  return s.substr(0, s.size() - 6);  // drop "Tensor"
}
}  // namespace

Tensor alias(const Tensor& self) { return make_view(self, self.sizes(), self.strides(), self.storage_offset()); }

Tensor fw_primal_view(const Tensor& self, int64_t level) {
  (void)level;
  return make_view(self, self.sizes(), self.strides(), self.storage_offset());
}

Tensor _unsafe_view(const Tensor& self, IntArrayRef size) {
  // Shares storage but is not a view for autograd (reshape of a fresh copy).
  Tensor v = self.is_contiguous() ? self.view(size) : self.reshape(size);
  return make_view(v, v.sizes(), v.strides(), v.storage_offset());
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  EMBER_CHECK_TYPE(IndexError, self.dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  int64_t d = maybe_wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[d];
  EMBER_CHECK_TYPE(IndexError, index >= -size && index < size, "select(): index ", index,
                   " out of range for tensor of size ", shape_string(self.sizes()), " at dimension ", d);
  if (index < 0) index += size;
  DimVector sizes(self.sizes()), strides(self.strides());
  int64_t offset = self.storage_offset() + index * strides[d];
  sizes.erase(d);
  strides.erase(d);
  return make_view(self, sizes, strides, offset);
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  int64_t a = maybe_wrap_dim(dim0, self.dim()), b = maybe_wrap_dim(dim1, self.dim());
  DimVector sizes(self.sizes()), strides(self.strides());
  if (self.dim() > 0 && a != b) {
    std::swap(sizes[a], sizes[b]);
    std::swap(strides[a], strides[b]);
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor t(const Tensor& self) {
  EMBER_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return native::transpose(self, 0, self.dim() < 2 ? 0 : 1);
}

Tensor swapaxes(const Tensor& self, int64_t axis0, int64_t axis1) { return self.transpose(axis0, axis1); }
Tensor swapdims(const Tensor& self, int64_t dim0, int64_t dim1) { return self.transpose(dim0, dim1); }

namespace {
// A view without the dimensions flagged in drop (which have size 1).
Tensor squeeze_dims_view(const Tensor& self, const std::vector<bool>& drop) {
  DimVector sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (drop[i]) continue;
    sizes.push_back(self.sizes()[i]);
    strides.push_back(self.strides()[i]);
  }
  return make_view(self, sizes, strides, self.storage_offset());
}
}  // namespace

Tensor squeeze(const Tensor& self) {
  std::vector<bool> drop(self.dim());
  for (int64_t i = 0; i < self.dim(); ++i) drop[i] = self.sizes()[i] == 1;
  return squeeze_dims_view(self, drop);
}

Tensor squeeze_dim(const Tensor& self, int64_t dim) {
  int64_t d = maybe_wrap_dim(dim, self.dim());
  std::vector<bool> drop(self.dim());
  if (self.dim() > 0) drop[d] = self.sizes()[d] == 1;
  return squeeze_dims_view(self, drop);
}

Tensor squeeze_dims(const Tensor& self, IntArrayRef dims) {
  std::vector<bool> seen(std::max<int64_t>(self.dim(), 1)), drop(self.dim());
  for (int64_t dim : dims) {
    int64_t d = maybe_wrap_dim(dim, self.dim());
    EMBER_CHECK(!seen[d], "dim ", d, " appears multiple times in the list of dims");
    seen[d] = true;
    if (self.dim() > 0) drop[d] = self.sizes()[d] == 1;
  }
  return squeeze_dims_view(self, drop);
}

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  EMBER_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  EMBER_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size=", split_size);
  int64_t d = maybe_wrap_dim(dim, self.dim());
  int64_t dim_size = self.sizes()[d];
  EMBER_CHECK(split_size > 0 || dim_size == 0,
              "split_size can only be 0 if dimension size is 0, but got dimension size of ", dim_size);
  int64_t n = split_size == 0 ? 1 : std::max<int64_t>((dim_size + split_size - 1) / split_size, 1);
  DimVector sizes(self.sizes());
  std::vector<Tensor> out;
  out.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t start = i * split_size;
    sizes[d] = i < n - 1 ? split_size : dim_size - split_size * (n - 1);
    out.push_back(make_view(self, sizes, self.strides(), self.storage_offset() + start * self.strides()[d]));
  }
  return out;
}

std::vector<Tensor> split_sizes(const Tensor& self, IntArrayRef split_size, int64_t dim) {
  return ember::split_with_sizes(self, split_size, dim);
}

std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  EMBER_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  int64_t d = maybe_wrap_dim(dim, self.dim());
  int64_t dim_size = self.sizes()[d];
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    EMBER_CHECK(s >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=",
                shape_string(split_sizes));
    total += s;
  }
  EMBER_CHECK(total == dim_size, "split_with_sizes expects split_sizes to sum exactly to ", dim_size,
              " (input tensor's size at dimension ", d, "), but got split_sizes=", shape_string(split_sizes));
  DimVector sizes(self.sizes());
  std::vector<Tensor> out;
  out.reserve(split_sizes.size());
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    sizes[d] = s;
    out.push_back(make_view(self, sizes, self.strides(), self.storage_offset() + start * self.strides()[d]));
    start += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  EMBER_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  int64_t dim_size = self.size(dim);
  int64_t split_size = (dim_size + chunks - 1) / chunks;
  if (split_size == 0 && dim_size == 0) {
    // split() would return one piece; keep the requested number of empty chunks.
    std::vector<int64_t> sizes(chunks, 0);
    return self.split_with_sizes(sizes, dim);
  }
  return self.split(split_size, dim);
}

std::vector<Tensor> tensor_split_sections(const Tensor& self, int64_t sections, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with ",
              self.dim(), " dims");
  int64_t d = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK(sections > 0, "number of sections must be larger than 0, got ", sections);
  int64_t dim_size = self.sizes()[d];
  int64_t base = dim_size / sections, extra = dim_size % sections;
  std::vector<Tensor> out;
  out.reserve(sections);
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    int64_t len = i < extra ? base + 1 : base;
    out.push_back(ember::slice(self, d, start, start + len, 1));
    start += len;
  }
  return out;
}

std::vector<Tensor> tensor_split_indices(const Tensor& self, IntArrayRef indices, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with ",
              self.dim(), " dims");
  int64_t d = maybe_wrap_dim(dim, self.dim());
  std::vector<Tensor> out;
  out.reserve(indices.size() + 1);
  int64_t start = 0;
  for (int64_t end : indices) {
    out.push_back(ember::slice(self, d, start, end, 1));
    start = end;
  }
  out.push_back(ember::slice(self, d, start, self.sizes()[d], 1));
  return out;
}

std::vector<Tensor> tensor_split_tensor(const Tensor& self, const Tensor& indices_or_sections, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with ",
              self.dim(), " dims");
  EMBER_CHECK(indices_or_sections.is_cpu(),
              "tensor_split expected tensor_indices_or_sections to be on cpu, but it's on ",
              indices_or_sections.device().str());
  EMBER_CHECK(indices_or_sections.dtype() == ScalarType::Long,
              "tensor_split expected tensor_indices_or_sections to have dtype of long, but got ",
              dtype_word(indices_or_sections.dtype()));
  int64_t nd = indices_or_sections.dim();
  EMBER_CHECK(nd == 0 || nd == 1,
              "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, "
              "but got a tensor with ",
              nd, " dims");
  if (nd == 0) return tensor_split_sections(self, indices_or_sections.item<int64_t>(), dim);
  std::vector<int64_t> idx(indices_or_sections.numel());
  const auto* p = indices_or_sections.data_ptr<int64_t>();
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = p[i * indices_or_sections.strides()[0]];
  return tensor_split_indices(self, idx, dim);
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  int64_t s = maybe_wrap_dim(start_dim, self.dim()), e = maybe_wrap_dim(end_dim, self.dim());
  EMBER_CHECK(s <= e, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (self.dim() == 0) return self.reshape({1});
  if (s == e) return self;
  DimVector shape;
  for (int64_t i = 0; i < s; ++i) shape.push_back(self.sizes()[i]);
  int64_t n = 1;
  for (int64_t i = s; i <= e; ++i) n *= self.sizes()[i];
  shape.push_back(n);
  for (int64_t i = e + 1; i < self.dim(); ++i) shape.push_back(self.sizes()[i]);
  return self.reshape(shape);
}

Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  int64_t d = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK(self.dim() > 0,
              "unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions");
  EMBER_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      EMBER_CHECK(infer < 0, "only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      known *= sizes[i];
    }
  }
  int64_t dim_size = self.dim() == 0 ? 1 : self.sizes()[d];
  DimVector inner(sizes);
  if (infer >= 0 && known != 0 && dim_size % known == 0) inner[infer] = dim_size / known;
  EMBER_CHECK(product(inner) == dim_size && (infer < 0 || inner[infer] >= 0), "unflatten: Provided sizes ",
              shape_string(sizes), " don't multiply up to the size of dim ", dim, " (", dim_size,
              ") in the input tensor");
  DimVector shape;
  for (int64_t i = 0; i < d; ++i) shape.push_back(self.sizes()[i]);
  for (int64_t s : inner) shape.push_back(s);
  for (int64_t i = d + 1; i < self.dim(); ++i) shape.push_back(self.sizes()[i]);
  return self.view(shape);
}

Tensor movedim_list(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  EMBER_CHECK(source.size() == destination.size(), "movedim: Invalid source or destination dims: source (",
              shape_string(source), " dims) should contain the same number of dims as destination (",
              shape_string(destination), " dims)");
  int64_t nd = self.dim();
  std::vector<int64_t> src, dst;
  std::vector<bool> src_seen(std::max<int64_t>(nd, 1)), dst_seen(std::max<int64_t>(nd, 1));
  for (size_t i = 0; i < source.size(); ++i) {
    int64_t s = maybe_wrap_dim(source[i], nd), t = maybe_wrap_dim(destination[i], nd);
    EMBER_CHECK(!src_seen[s], "movedim: repeated dim in `source` (", shape_string(source), ")");
    EMBER_CHECK(!dst_seen[t], "movedim: repeated dim in `destination` (", shape_string(destination), ")");
    src_seen[s] = dst_seen[t] = true;
    src.push_back(s);
    dst.push_back(t);
  }
  if (nd == 0) return ember::alias(self);
  std::vector<int64_t> order(nd, -1);
  for (size_t i = 0; i < src.size(); ++i) order[dst[i]] = src[i];
  int64_t next = 0;
  for (int64_t i = 0; i < nd; ++i) {
    if (order[i] >= 0) continue;
    while (src_seen[next]) ++next;
    order[i] = next++;
  }
  return self.permute(order);
}

Tensor movedim_int(const Tensor& self, int64_t source, int64_t destination) {
  return movedim_list(self, IntArrayRef(source), IntArrayRef(destination));
}

Tensor expand_as(const Tensor& self, const Tensor& other) { return self.expand(other.sizes()); }
Tensor view_as(const Tensor& self, const Tensor& other) { return self.view(other.sizes()); }
Tensor reshape_as(const Tensor& self, const Tensor& other) { return self.reshape(other.sizes()); }

Tensor unfold(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  int64_t nd = self.dim();
  int64_t d = maybe_wrap_dim(dimension, nd);
  int64_t max_size = nd == 0 ? 1 : self.sizes()[d];
  EMBER_CHECK(size <= max_size, "maximum size for tensor at dimension ", d, " is ", max_size, " but size is ", size);
  EMBER_CHECK(size >= 0, "size is ", size, " but must be >= 0");
  EMBER_CHECK(step > 0, "step is ", step, " but must be > 0");
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.push_back(size);
  strides.push_back(nd == 0 ? 1 : strides[d]);
  if (nd > 0) {
    sizes[d] = (sizes[d] - size) / step + 1;
    strides[d] *= step;
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t nd = self.dim();
  int64_t a = maybe_wrap_dim(dim1, nd), b = maybe_wrap_dim(dim2, nd);
  EMBER_CHECK(a != b, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t n = offset >= 0 ? std::min(self.sizes()[a], self.sizes()[b] - offset)
                          : std::min(self.sizes()[a] + offset, self.sizes()[b]);
  n = std::max<int64_t>(n, 0);
  int64_t start = self.storage_offset();
  if (n > 0) start += offset >= 0 ? offset * self.strides()[b] : -offset * self.strides()[a];
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.erase(std::max(a, b));
  strides.erase(std::max(a, b));
  sizes.erase(std::min(a, b));
  strides.erase(std::min(a, b));
  sizes.push_back(n);
  strides.push_back(self.strides()[a] + self.strides()[b]);
  return make_view(self, sizes, strides, start);
}

Tensor view_dtype(const Tensor& self, ScalarType dtype) {
  // PyTorch refuses these even for the same dtype.
  EMBER_CHECK(!self.is_conj(),
              "torch.Tensor.view is not supported for conjugate view tensors when converting to a different dtype.");
  EMBER_CHECK(!self.is_neg(),
              "torch.Tensor.view is not supported for tensors with negative bit set when converting to a different "
              "dtype.");
  const int64_t from = static_cast<int64_t>(self.element_size());
  const int64_t to = static_cast<int64_t>(element_size(dtype));
  DimVector sizes(self.sizes()), strides(self.strides());
  int64_t offset = self.storage_offset();
  if (from != to) {
    const std::string what =
        str_cat(" to view ", dtype_word(self.dtype()), " as ", dtype_word(dtype), " (different element sizes)");
    EMBER_CHECK(self.dim() > 0, "self.dim() cannot be 0", what);
    EMBER_CHECK(strides.back() == 1, "self.stride(-1) must be 1", what, ", but got ", strides.back());
    int64_t last = self.dim() - 1;
    if (to < from) {
      int64_t r = from / to;
      for (int64_t i = 0; i < last; ++i) strides[i] *= r;
      sizes[last] *= r;
      offset *= r;
    } else {
      int64_t r = to / from;
      EMBER_CHECK(sizes[last] % r == 0, "self.size(-1) must be divisible by ", r, what, ", but got ", sizes[last]);
      for (int64_t i = 0; i < last; ++i) {
        EMBER_CHECK(strides[i] % r == 0, "self.stride(", i, ") must be divisible by ", r, what, ", but got ",
                    strides[i]);
        strides[i] /= r;
      }
      EMBER_CHECK(offset % r == 0, "self.storage_offset() must be divisible by ", r, what, ", but got ", offset);
      sizes[last] /= r;
      offset /= r;
    }
  }
  TensorImpl* base = self.unsafeGetTensorImpl();
  auto impl = make_intrusive<TensorImpl>(base->storage(), dtype, sizes, strides, offset);
  impl->set_version_counter(base->shared_version_counter());
  impl->set_math_bits(base->math_bits());  // a view of a conjugate is conjugate
  return Tensor(std::move(impl));
}

}  // namespace ember::native
