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
  return Tensor(std::move(impl));
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
    if (tensor_d == 0 || (old_size[tensor_d - 1] != 1 && old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
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
  return make_view(self, size, stride, storage_offset.value_or(self.storage_offset()));
}

Tensor expand(const Tensor& self, IntArrayRef size, bool /*implicit*/) {
  int64_t nd = static_cast<int64_t>(size.size());
  EMBER_CHECK(nd >= self.dim(), "expand(", self.type_name(), "{", shape_string(self.sizes()).substr(1, shape_string(self.sizes()).size() - 2),
              "}, size=", shape_string(size), "): the number of sizes provided (", nd,
              ") must be greater or equal to the number of dimensions in the tensor (", self.dim(), ")");
  DimVector new_size(nd), new_stride(nd);
  for (int64_t i = nd - 1; i >= 0; --i) {
    int64_t off = nd - 1 - i;
    int64_t d = self.dim() - 1 - off;
    int64_t cur = d >= 0 ? self.sizes()[d] : 1;
    int64_t cur_stride = d >= 0 ? self.strides()[d] : (i + 1 < nd ? new_size[i + 1] * new_stride[i + 1] : 1);
    int64_t want = size[i];
    if (want == -1) {
      EMBER_CHECK(d >= 0, "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension ", i);
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

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  DimVector size = infer_size(shape, self.numel());
  if (compute_view_stride(self.sizes(), self.strides(), size)) return self.view(size);
  return self.clone().view(size);
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
              "desired ordering of dimensions i.e. input.dim() = ", nd, " is not equal to len(dims) = ", dims.size());
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

std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  int64_t d = maybe_wrap_dim(dim, self.dim());
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
