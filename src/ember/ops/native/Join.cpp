// Joining tensors: cat and stack (device-generic; copies go through copy_).
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

Tensor& cat_out(const TensorList& tensors, int64_t dim, Tensor& out) {
  if (tensors.empty()) throw ValueError("torch.cat(): expected a non-empty list of Tensors");
  // 1-D empty tensors are skipped, as PyTorch does for legacy reasons.
  std::vector<const Tensor*> parts;
  const Tensor* ref = nullptr;
  for (const Tensor& t : tensors) {
    if (t.dim() == 1 && t.numel() == 0) continue;
    parts.push_back(&t);
    if (!ref) ref = &t;
  }
  std::vector<const TensorBase*> all;
  for (const Tensor& t : tensors) all.push_back(&t);
  ScalarType dtype = result_type(all);
  if (out.defined() && !can_cast(dtype, out.dtype())) {
    throw TypeError(
        str_cat("torch.cat(): input types can't be cast to the desired output type ", dtype_message_name(out.dtype())));
  }
  if (!ref) {
    if (!out.defined()) {
      out = ember::empty({0}, dtype, tensors[0].device());
    } else {
      resize_output(out, {0});
    }
    return out;
  }
  EMBER_CHECK(ref->dim() > 0, "zero-dimensional tensor (at position 0) cannot be concatenated");
  int64_t d = maybe_wrap_dim(dim, ref->dim());
  DimVector shape(ref->sizes());
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dim() == 1 && t.numel() == 0) continue;
    EMBER_CHECK(t.dim() == ref->dim(), "Tensors must have same number of dimensions: got ", ref->dim(), " and ",
                t.dim());
    if (t.device() != ref->device() && (t.is_meta() || ref->is_meta())) {
      throw Error(
          str_cat("Tensor on device ", t.device().str(), " is not on the expected device ", ref->device().str(), "!"));
    }
    EMBER_CHECK(t.device() == ref->device(),
                "Expected all tensors to be on the same device, but found at least two "
                "devices, ",
                ref->device().str(), " and ", t.device().str(), "!");
    for (int64_t k = 0; k < t.dim(); ++k) {
      if (k == d) continue;
      EMBER_CHECK(t.sizes()[k] == shape[k], "Sizes of tensors must match except in dimension ", d, ". Expected size ",
                  shape[k], " but got size ", t.sizes()[k], " for tensor number ", i, " in the list.");
    }
    total += t.sizes()[d];
  }
  shape[d] = total;
  if (!out.defined()) {
    out = ember::empty(shape, dtype, ref->device());
  } else {
    resize_output(out, shape);
  }
  int64_t offset = 0;
  for (const Tensor* t : parts) {
    int64_t len = t->sizes()[d];
    if (len > 0) out.narrow(d, offset, len).copy_(*t);
    offset += len;
  }
  return out;
}

Tensor& stack_out(const TensorList& tensors, int64_t dim, Tensor& out) {
  EMBER_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  for (size_t i = 1; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].sizes().equals(tensors[0].sizes()), "stack expects each tensor to be equal size, but got ",
                shape_string(tensors[0].sizes()), " at entry 0 and ", shape_string(tensors[i].sizes()), " at entry ",
                i);
  }
  int64_t d = maybe_wrap_dim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> expanded;
  expanded.reserve(tensors.size());
  for (const Tensor& t : tensors) expanded.push_back(t.unsqueeze(d));
  return cat_out(expanded, d, out);
}

}  // namespace ember::native
