// Note [Elementwise engine]
// One engine serves every elementwise op, as PyTorch's TensorIterator does:
//  1. the output shape is the broadcast of the input shapes;
//  2. the common dtype follows PyTorch's promotion (dimensioned tensors beat
//     0-dim ones, which beat wrapped Python numbers, within a category);
//     Config can turn an integral common dtype into the default float
//     (exp, true division), fix the output dtype (comparisons), keep inputs
//     out of promotion (where's condition) or demand an exact out= dtype;
//  3. inputs of another dtype are converted once up front (CPU), and a result
//     for an output of another dtype is computed in the common dtype and
//     copied back in finish();
//  4. each operand gets byte strides over the output shape (0 where it is
//     broadcast), and adjacent dims that can be merged are coalesced, so a
//     contiguous op is one inner loop over numel elements;
//  5. the outer dims are split across OpenMP threads only above a grain size.
#include "ember/ops/TensorIterator.h"

#include <algorithm>

#include "ember/ops/BuildInfo.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/MemoryOverlap.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"

namespace ember {

DimVector infer_broadcast_size(IntArrayRef a, IntArrayRef b) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  // From the last dim, as PyTorch's infer_size: its message names the last mismatch.
  for (size_t i = n; i-- > 0;) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw Error(str_cat("The size of tensor a (", da, ") must match the size of tensor b (", db,
                          ") at non-singleton dimension ", i));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {
enum class Category { Bool = 0, Integral = 1, Floating = 2, Complex = 3 };
Category category(ScalarType t) {
  if (t == ScalarType::Bool) return Category::Bool;
  if (is_complex_type_any_tier(t)) return Category::Complex;
  return is_floating_type_any_tier(t) ? Category::Floating : Category::Integral;
}
}  // namespace

ScalarType result_type(const std::vector<const TensorBase*>& operands) {
  // Three priority tiers: dimensioned tensors, 0-dim tensors, wrapped numbers.
  ScalarType tier[3] = {ScalarType::Undefined, ScalarType::Undefined, ScalarType::Undefined};
  for (const TensorBase* t : operands) {
    if (!t->defined()) continue;
    int k = t->unsafeGetTensorImpl()->is_wrapped_number() ? 2 : (t->dim() == 0 ? 1 : 0);
    ScalarType d = t->dtype();
    if (k == 2) {
      // A wrapped number contributes only its category, at the default dtype.
      if (d == ScalarType::Double) d = get_default_dtype();
      if (d == ScalarType::ComplexDouble) d = to_complex_type(get_default_dtype());
    }
    tier[k] = tier[k] == ScalarType::Undefined ? d : promote_types(tier[k], d);
  }
  ScalarType result = ScalarType::Undefined;
  for (ScalarType t : tier) {
    if (t == ScalarType::Undefined) continue;
    if (result == ScalarType::Undefined) {
      result = t;
    } else if (category(t) == Category::Complex && category(result) != Category::Complex) {
      // A weaker complex operand keeps a floating result's width (float64 + 1j is complex128,
      // float16 + 1j complex32; bfloat16, which has no complex type, complex64).
      if (result == ScalarType::Half) {
        result = ScalarType::ComplexHalf;
      } else {
        result = is_floating_type(result) ? to_complex_type(result) : t;
      }
    } else if (category(t) > category(result)) {
      result = promote_types(result, t);
      // A weaker tier may raise the category but not the width within it.
      if (category(t) == Category::Floating && !is_floating_type(result)) result = t;
    }
  }
  return result;
}

void resize_output(const Tensor& t, IntArrayRef shape) {
  if (t.sizes().equals(shape)) return;
  TensorImpl* impl = t.unsafeGetTensorImpl();
  safe_numel(shape);  // PyTorch's order of errors: the element count, then the bytes
  const size_t needed = storage_nbytes(shape, impl->itemsize());
  const size_t offset = impl->storage_offset() * impl->itemsize();
  if (needed > impl->storage()->nbytes() - offset) impl->storage()->resize(checked_add_bytes(needed, offset, shape));
  impl->set_sizes_and_strides(shape, contiguous_strides(shape), impl->storage_offset());
}

bool can_cast(ScalarType from, ScalarType to) { return category(from) <= category(to); }

TensorIterator TensorIterator::op(Tensor& out, std::initializer_list<Tensor> inputs, const Config& config) {
  EMBER_INTERNAL_ASSERT(inputs.size() < static_cast<size_t>(kMaxOperands), "too many operands");
  TensorIterator it;
  it.add_output(out);
  for (const Tensor& t : inputs) it.add_input(t);
  it.build(config);
  if (!out.defined()) out = it.operands_[0];
  return it;
}

TensorIterator TensorIterator::binary_op(Tensor& out, const Tensor& a, const Tensor& b) {
  return op(out, {a, b}, Config{});
}

TensorIterator TensorIterator::binary_float_op(Tensor& out, const Tensor& a, const Tensor& b) {
  Config c;
  c.int_to_float = true;
  return op(out, {a, b}, c);
}

TensorIterator TensorIterator::comparison_op(Tensor& out, const Tensor& a, const Tensor& b) {
  Config c;
  c.out_dtype = ScalarType::Bool;
  return op(out, {a, b}, c);
}

TensorIterator TensorIterator::unary_op(Tensor& out, const Tensor& a) {
  Config c;
  c.exact_out_dtype = true;
  return op(out, {a}, c);
}

TensorIterator TensorIterator::unary_float_op(Tensor& out, const Tensor& a) {
  Config c;
  c.int_to_float = true;
  return op(out, {a}, c);
}

TensorIterator TensorIterator::unary_bool_op(Tensor& out, const Tensor& a) {
  Config c;
  c.promote_inputs = false;
  c.out_dtype = ScalarType::Bool;
  return op(out, {a}, c);
}

TensorIterator TensorIterator::copy_op(const Tensor& dst, const Tensor& src, bool check_overlap) {
  if (src.is_meta() && !dst.is_meta()) {
    throw Error(
        str_cat("Tensor on device ", src.device().str(), " is not on the expected device ", dst.device().str(), "!"));
  }
  TensorIterator it;
  it.add_output(dst);
  it.add_input(src);
  if (check_overlap) {
    it.check_no_internal_overlap();
    it.check_no_partial_overlap();
  }
  it.common_dtype_ = dst.dtype();
  it.shape_ = DimVector(dst.sizes());
  DimVector b = infer_broadcast_size(dst.sizes(), src.sizes());
  EMBER_CHECK(b.size() == dst.sizes().size() && IntArrayRef(b).equals(dst.sizes()), "output with shape [",
              dst.sizes().size(), " dims] doesn't match the broadcast shape");
  it.numel_ = dst.numel();
  it.compute_strides_and_coalesce();
  return it;
}

TensorIterator TensorIterator::nullary_op(const Tensor& out) {
  TensorIterator it;
  it.add_output(out);
  it.common_dtype_ = out.dtype();
  it.shape_ = DimVector(out.sizes());
  it.numel_ = out.numel();
  it.compute_strides_and_coalesce();
  return it;
}

void TensorIterator::build(const Config& config) {
  // PyTorch checks the outputs it is given for overlapping elements before
  // anything else (before resizing them, in particular).
  for (int k = 0; k < noutputs_; ++k) {
    if (operands_[k].defined()) assert_no_internal_overlap(operands_[k]);
  }
  // 1. shape
  shape_ = DimVector();
  Device device(DeviceType::CPU);
  bool have_device = false;
  bool device_from_cpu_scalar = false;
  // As in PyTorch, the common device is the first input's that is off the
  // CPU; when it is a device (CUDA), a 0-dim CPU input is a number there.
  const Tensor* off_cpu = nullptr;
  for (int k = noutputs_; k < ntensors_ && !off_cpu; ++k) {
    if (!operands_[k].is_cpu()) off_cpu = &operands_[k];
  }
  const bool cpu_scalars_ride = config.allow_cpu_scalars && off_cpu && !off_cpu->is_meta();
  for (int k = noutputs_; k < ntensors_; ++k) {
    const Tensor& t = operands_[k];
    shape_ = infer_broadcast_size(shape_, t.sizes());
    if (t.unsafeGetTensorImpl()->is_wrapped_number() || (have_device && t.device() == device)) continue;
    // A 0-dim CPU tensor counts as a scalar with meta or a device (as in PyTorch).
    const bool cpu_scalar = t.dim() == 0 && t.is_cpu();
    if (cpu_scalar && cpu_scalars_ride) continue;
    if (have_device && cpu_scalar && device.is_meta()) continue;
    if (have_device && !(device_from_cpu_scalar && t.is_meta())) {
      if (device.is_meta() || t.is_meta()) {
        throw Error(
            str_cat("Tensor on device ", t.device().str(), " is not on the expected device ", device.str(), "!"));
      }
      // PyTorch names the common device first.
      const bool common_is_t = off_cpu && t.device() == off_cpu->device();
      throw Error(str_cat("Expected all tensors to be on the same device, but found at least two devices, ",
                          (common_is_t ? t.device() : device).str(), " and ", (common_is_t ? device : t.device()).str(),
                          "!"));
    }
    device = t.device();
    have_device = true;
    device_from_cpu_scalar = cpu_scalar;
  }
  numel_ = safe_numel(shape_);  // Note [Checked sizes]

  // 2. dtype
  const int first_promoted = noutputs_ + config.num_unpromoted;
  std::vector<const TensorBase*> inputs;
  for (int k = first_promoted; k < ntensors_; ++k) inputs.push_back(&operands_[k]);
  common_dtype_ = result_type(inputs);
  if (config.int_to_float && !is_floating_type_any_tier(common_dtype_) && !is_complex_type_any_tier(common_dtype_))
    common_dtype_ = get_default_dtype();
  Tensor& out = operands_[0];
  // In-place is decided before inputs are converted (a converted input is a new tensor).
  bool inplace = false;
  if (out.defined()) {
    for (int k = noutputs_; k < ntensors_; ++k) inplace = inplace || operands_[k].is_same(out);
  }
  // Inputs are converted on the CPU only; on meta, as in PyTorch, they keep
  // their dtype and strides (which then decide the result's layout).
  if (config.promote_inputs && !device.is_meta()) {
    for (int k = first_promoted; k < ntensors_; ++k) {
      Tensor& t = operands_[k];
      if (t.dtype() == common_dtype_) continue;
      const bool half_common = common_dtype_ == ScalarType::Half || common_dtype_ == ScalarType::BFloat16;
      if (half_common && t.dim() == 0 && t.is_cpu()) {
        // A Python int in [2**63, 2**64) keeps its value (TensorImpl::is_wrapped_uint64).
        original_scalar_[k] = t.unsafeGetTensorImpl()->is_wrapped_uint64()
                                  ? static_cast<double>(static_cast<uint64_t>(t.item<int64_t>()))
                                  : t.item<double>();
        original_scalar_mask_ |= 1u << k;
      }
      t = t.to(common_dtype_);
    }
  }

  // 3. output: a new or resized one takes the inputs' memory layout.
  const ScalarType want = config.out_dtype ? *config.out_dtype : common_dtype_;
  const bool out_is_new = !out.defined() || !out.sizes().equals(shape_);
  // Off the CPU, 0-dim CPU operands (numbers) take no part in the layout.
  unsigned skip = out_is_new ? 1u : 0u;
  for (int k = noutputs_; k < ntensors_ && !device.is_cpu(); ++k) {
    if (operands_[k].dim() == 0 && operands_[k].is_cpu()) skip |= 1u << k;
  }
  const DimVector order = memory_order(skip);
  const DimVector strides = out_is_new ? output_strides(skip, order) : DimVector();
  auto restride = [&](const Tensor& t) {
    if (!IntArrayRef(strides).equals(t.strides())) {
      t.unsafeGetTensorImpl()->set_sizes_and_strides(shape_, strides, t.storage_offset());
    }
  };
  if (!out.defined()) {
    out = empty(shape_, want, device);
    restride(out);
  } else {
    EMBER_CHECK(out.device() == device || !have_device, "Expected out tensor to have device ", device.str(),
                ", but got ", out.device().str(), " instead");
    if (out_is_new) {
      EMBER_CHECK(!inplace, "output with shape ", shape_string(out.sizes()), " doesn't match the broadcast shape ",
                  shape_string(shape_));
      resize_output(out, shape_);
      if (!out.is_meta()) restride(out);  // PyTorch's meta out= stays contiguous
    }
    EMBER_CHECK(!config.exact_out_dtype || out.dtype() == want, "Found dtype ", dtype_message_name(out.dtype()),
                " but expected ", dtype_message_name(want));
    if (out.dtype() != want) {
      // Casting the result into a narrower category is an error, as in PyTorch.
      EMBER_CHECK(config.out_dtype || can_cast(want, out.dtype()), "result type ", dtype_message_name(want),
                  " can't be cast to the desired output type ", dtype_message_name(out.dtype()));
      user_output_ = out;
      out = empty(shape_, want, device);
      if (out_is_new) restride(out);
    }
  }
  check_no_internal_overlap();
  check_no_partial_overlap();
  compute_strides_and_coalesce(order);
}

// Note [Memory-format propagation]
// As in PyTorch, an elementwise result keeps its inputs' layout: when every
// operand has the same shape and is contiguous, or channels-last (4-D), or
// dense with the same strides, the result takes that layout; otherwise the
// dims are ordered innermost first by the operands' strides (outputs first,
// broadcast and 0-dim operands abstaining, ties going to the smaller dim)
// and the result is dense in that order. The same order drives iteration.
namespace {
bool channels_last_contiguous(const Tensor& t) {
  if (t.dim() != 4) return false;
  int64_t expected = 1;
  for (int d : {1, 3, 2, 0}) {
    if (t.sizes()[d] == 1) continue;
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}
}  // namespace

DimVector TensorIterator::memory_order(unsigned skip_mask) const {
  const int ndim = static_cast<int>(shape_.size());
  // Byte strides over the broadcast shape; 0 where an operand is broadcast.
  auto stride_of = [&](int k, int d) -> int64_t {
    const Tensor& t = operands_[k];
    const int td = d - (ndim - static_cast<int>(t.dim()));
    if (td < 0 || (t.sizes()[td] == 1 && shape_[d] != 1)) return 0;
    return t.strides()[td] * static_cast<int64_t>(t.element_size());
  };
  // 1 when dim a should sit outside dim b, -1 inside, 0 when no operand says.
  auto should_swap = [&](int a, int b) -> int {
    for (int k = 0; k < ntensors_; ++k) {
      if ((skip_mask >> k & 1u) || !operands_[k].defined()) continue;
      const int64_t sa = stride_of(k, a), sb = stride_of(k, b);
      if (sa == 0 || sb == 0) continue;
      if (sa < sb) return -1;
      if (sa > sb) return 1;
      if (shape_[a] > shape_[b]) return 1;
    }
    return 0;
  };
  DimVector order(ndim);
  for (int i = 0; i < ndim; ++i) order[i] = ndim - 1 - i;
  // Insertion sort that tolerates undecided comparisons.
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

DimVector TensorIterator::output_strides(unsigned skip_mask, const DimVector& order) const {
  const int ndim = static_cast<int>(shape_.size());
  // Fast cases: every operand the same shape and in one layout.
  bool same_shape = true, has_scalar = false, has_dims = false;
  for (int k = noutputs_; k < ntensors_; ++k) {
    if (skip_mask >> k & 1u) continue;
    const Tensor& t = operands_[k];
    (t.dim() == 0 ? has_scalar : has_dims) = true;
    same_shape = same_shape && t.sizes().equals(shape_);
  }
  if (same_shape && !(has_scalar && has_dims)) {
    bool contiguous = true, channels_last = true, dense = true;
    for (int k = 0; k < ntensors_; ++k) {
      if ((skip_mask >> k & 1u) || !operands_[k].defined()) continue;
      contiguous = contiguous && operands_[k].is_contiguous();
      channels_last = channels_last && channels_last_contiguous(operands_[k]);
      dense = dense && operands_[k].is_non_overlapping_and_dense();
    }
    if (contiguous) return contiguous_strides(shape_);
    if (channels_last) {
      DimVector s(4);
      s[1] = 1;
      s[3] = shape_[1];
      s[2] = s[3] * shape_[3];
      s[0] = s[2] * shape_[2];
      return s;
    }
    if (dense) {
      const Tensor* first = nullptr;
      bool same_strides = true;
      for (int k = ntensors_ - 1; k >= 0; --k) {
        if ((skip_mask >> k & 1u) || !operands_[k].defined()) continue;
        if (!first) first = &operands_[k];
        same_strides = same_strides && operands_[k].strides().equals(first->strides());
      }
      if (same_strides && first) return DimVector(first->strides());
    }
  }
  // Dense in the operands' memory order.
  DimVector strides(ndim);
  int64_t next = 1;
  for (int i = 0; i < ndim; ++i) {
    strides[order[i]] = next;
    next *= shape_[order[i]];
  }
  return strides;
}

void TensorIterator::check_no_partial_overlap() const {
  for (int k = 0; k < noutputs_; ++k) {
    for (int j = noutputs_; j < ntensors_; ++j) assert_no_partial_overlap(operands_[k], operands_[j]);
  }
}

void TensorIterator::check_no_internal_overlap() const {
  // Writing through an expanded tensor would store several results in one
  // element: PyTorch refuses it (fills excepted).
  for (int k = 0; k < noutputs_; ++k) assert_no_internal_overlap(operands_[k]);
}

void TensorIterator::compute_strides_and_coalesce(const DimVector& order) {
  int ndim = static_cast<int>(shape_.size());
  strides_.assign(std::max(ndim, 1) * kMaxOperands, 0);
  for (int k = 0; k < ntensors_; ++k) {
    const Tensor& t = operands_[k];
    int offset = ndim - static_cast<int>(t.dim());
    int64_t isz = static_cast<int64_t>(t.element_size());
    for (int d = 0; d < ndim; ++d) {
      int td = d - offset;
      strides_[d * kMaxOperands + k] = (td < 0 || t.sizes()[td] == 1) ? 0 : t.strides()[td] * isz;
    }
  }
  // Coalesce, innermost first: drop size-1 dims and merge a dim into the one
  // inside it when every operand steps across both evenly.
  struct Dim {
    int64_t size;
    int64_t stride[kMaxOperands];
  };
  std::vector<Dim> merged;  // innermost first
  for (int i = 0; i < ndim; ++i) {
    const int d = static_cast<int>(order[i]);
    if (shape_[d] == 1) continue;
    Dim cur{shape_[d], {}};
    for (int k = 0; k < ntensors_; ++k) cur.stride[k] = strides_[d * kMaxOperands + k];
    if (!merged.empty()) {
      Dim& in = merged.back();
      bool can_merge = true;
      for (int k = 0; k < ntensors_; ++k) can_merge = can_merge && cur.stride[k] == in.stride[k] * in.size;
      if (can_merge) {
        in.size *= cur.size;
        continue;
      }
    }
    merged.push_back(cur);
  }
  if (merged.empty()) merged.push_back(Dim{ndim == 0 || numel_ != 0 ? 1 : 0, {}});
  if (numel_ == 0) merged = {Dim{0, {}}};
  int nd = static_cast<int>(merged.size());
  iter_shape_ = DimVector(nd);
  strides_.assign(nd * kMaxOperands, 0);
  for (int d = 0; d < nd; ++d) {
    const Dim& m = merged[nd - 1 - d];
    iter_shape_[d] = m.size;
    for (int k = 0; k < ntensors_; ++k) strides_[d * kMaxOperands + k] = m.stride[k];
  }
}

void TensorIterator::serial_for_each(LoopFn fn, void* ctx, int64_t begin, int64_t end) const {
  // Iterates outer indices [begin, end) of the iteration shape without its last dim.
  int nd = static_cast<int>(iter_shape_.size());
  int64_t inner = iter_shape_[nd - 1];
  char* base[kMaxOperands];
  for (int k = 0; k < ntensors_; ++k) base[k] = static_cast<char*>(operands_[k].data_ptr());
  int64_t inner_strides[kMaxOperands];
  for (int k = 0; k < ntensors_; ++k) inner_strides[k] = strides_[(nd - 1) * kMaxOperands + k];
  if (nd == 1) {
    fn(base, inner_strides, inner, ctx);
    return;
  }
  DimVector counter(nd - 1);
  int64_t rem = begin;
  for (int d = nd - 2; d >= 0; --d) {
    counter[d] = rem % iter_shape_[d];
    rem /= iter_shape_[d];
  }
  // Row pointers move by strides as the counter steps (fn gets a copy).
  char* row[kMaxOperands];
  for (int k = 0; k < ntensors_; ++k) {
    row[k] = base[k];
    for (int d = 0; d < nd - 1; ++d) row[k] += counter[d] * strides_[d * kMaxOperands + k];
  }
  char* ptrs[kMaxOperands];
  for (int64_t i = begin; i < end; ++i) {
    for (int k = 0; k < ntensors_; ++k) ptrs[k] = row[k];
    fn(ptrs, inner_strides, inner, ctx);
    for (int d = nd - 2; d >= 0; --d) {
      const int64_t* sd = &strides_[d * kMaxOperands];
      if (++counter[d] < iter_shape_[d]) {
        for (int k = 0; k < ntensors_; ++k) row[k] += sd[k];
        break;
      }
      counter[d] = 0;
      for (int k = 0; k < ntensors_; ++k) row[k] -= sd[k] * (iter_shape_[d] - 1);
    }
  }
}

void TensorIterator::for_each(LoopFn fn, void* ctx, int64_t grain_size) const {
  if (numel_ == 0 || is_meta()) return;
  int nd = static_cast<int>(iter_shape_.size());
  int64_t outer = 1;
  for (int d = 0; d < nd - 1; ++d) outer *= iter_shape_[d];
  if (nd == 1 && numel_ > grain_size && get_num_threads() > 1) {
    // One long dim: split it into chunks.
    int64_t inner_strides[kMaxOperands];
    for (int k = 0; k < ntensors_; ++k) inner_strides[k] = strides_[k];
    parallel_for(0, numel_, grain_size, [&](int64_t b, int64_t e) {
      char* ptrs[kMaxOperands];
      for (int k = 0; k < ntensors_; ++k) ptrs[k] = static_cast<char*>(operands_[k].data_ptr()) + b * inner_strides[k];
      fn(ptrs, inner_strides, e - b, ctx);
    });
    return;
  }
  int64_t inner = iter_shape_[nd - 1];
  int64_t grain_rows = std::max<int64_t>(1, grain_size / std::max<int64_t>(inner, 1));
  if (numel_ > grain_size && outer > 1) {
    parallel_for(0, outer, grain_rows, [&](int64_t b, int64_t e) { serial_for_each(fn, ctx, b, e); });
  } else {
    serial_for_each(fn, ctx, 0, outer);
  }
}

bool iterator_is_meta(const TensorIterator& it) { return it.is_meta(); }

DeviceType iterator_device_type(const TensorIterator& it) {
  return it.output().defined() ? it.output().device().type : DeviceType::CPU;
}

void missing_device_kernel(DeviceType device) {
  if (device == DeviceType::CUDA && cuda_version().empty()) {
    throw Error("Could not run this operator on a CUDA tensor: Ember was built without CUDA");
  }
  throw NotImplementedError(
      str_cat("no ", device == DeviceType::CUDA ? "CUDA" : "device", " kernel is registered for this operator"));
}

void TensorIterator::finish() {
  if (user_output_.defined()) {
    user_output_.copy_(operands_[0]);
    operands_[0] = user_output_;
    user_output_ = Tensor();
  }
}

}  // namespace ember
