// Advanced indexing on CPU: index (x[idx]), index_put_ (x[idx] = v),
// index_select, masked_fill and fill_ with a tensor value. Index tensors are
// checked and turned into one offset per broadcast index position here; the
// data moves in cpu/kernels/IndexKernel.cpp (Note [Advanced indexing geometry]).
#include "ember/cpu/IndexStubs.h"

#include <cmath>
#include <limits>

#include "ember/cpu/OpMessages.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/LimitedTypes.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(IndexFn, index_stub);
EMBER_DEFINE_DISPATCH(FlipRowFn, flip_row_stub);
EMBER_DEFINE_DISPATCH(MaskedFillFn, masked_fill_stub);
EMBER_DEFINE_DISPATCH(ScatterGatherFn, scatter_gather_stub);

namespace {
[[noreturn]] void overflow(ScalarType t) {
  const char* name = "unknown";
  switch (t) {
    case ScalarType::Byte: name = "uint8_t"; break;
    case ScalarType::Char: name = "int8_t"; break;
    case ScalarType::Short: name = "int16_t"; break;
    case ScalarType::Int: name = "int"; break;
    case ScalarType::Half: name = "c10::Half"; break;
    case ScalarType::BFloat16: name = "c10::BFloat16"; break;
    case ScalarType::Long: name = "int64_t"; break;
    case ScalarType::Float: name = "float"; break;
    default: break;
  }
  throw Error(str_cat("value cannot be converted to type ", name, " without overflow"));
}
}  // namespace

void check_value_fits(ScalarType t, const Scalar& value, bool check_16bit_floats) {
  if (t == ScalarType::Float || (check_16bit_floats && (t == ScalarType::Half || t == ScalarType::BFloat16))) {
    const double max = t == ScalarType::Float  ? std::numeric_limits<float>::max()
                       : t == ScalarType::Half ? 65504.0
                                               : 3.3895313892515355e38;
    double v = value.to_double();
    if (std::isfinite(v) && std::fabs(v) > max) overflow(t);
    return;
  }
  if (!is_integral_type(t, /*include_bool=*/false)) return;  // bool, double, half, bfloat16: no check
  double lo = 0, hi = 0;
  switch (t) {
    case ScalarType::Byte: lo = 0, hi = 255; break;
    case ScalarType::Char: lo = -128, hi = 127; break;
    case ScalarType::Short: lo = -32768, hi = 32767; break;
    case ScalarType::Int: lo = -2147483648.0, hi = 2147483647.0; break;
    default: lo = -9223372036854775808.0, hi = 9223372036854775807.0; break;
  }
  if (value.is_floating_point()) {
    double v = value.to_double();
    if (std::isnan(v) || v < lo || (t == ScalarType::Long ? v >= hi : v > hi)) overflow(t);
    return;
  }
  if (t == ScalarType::Long) return;
  // Negative integers may wrap into uint8 (down to -255), as in PyTorch.
  double v = static_cast<double>(value.to_long());
  if (t == ScalarType::Byte ? (v < -hi || v > hi) : (v < lo || v > hi)) overflow(t);
}
}  // namespace ember::cpu

namespace ember::native {

namespace {

using cpu::IndexGeometry;
using cpu::IndexMode;
using OptTensors = std::vector<std::optional<Tensor>>;

bool is_mask(const Tensor& t) { return t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::Byte; }

std::string dtype_word(ScalarType t) {
  std::string s(legacy_type_name(t));
  return s.substr(0, s.size() - 6);  // "FloatTensor" -> "Float"
}

// Visits every element position of a (sizes, strides) geometry in row-major
// order, calling f(linear position, element offset).
template <typename F>
void for_each_offset(IntArrayRef sizes, IntArrayRef strides, const F& f) {
  const int64_t n = product(sizes);
  if (n == 0) return;
  const size_t nd = sizes.size();
  DimVector idx(nd, 0);
  int64_t off = 0;
  for (int64_t p = 0; p < n; ++p) {
    f(p, off);
    for (size_t d = nd; d-- > 0;) {
      off += strides[d];
      if (++idx[d] < sizes[d]) break;
      off -= strides[d] * sizes[d];
      idx[d] = 0;
    }
  }
}

// Strides of t viewed as broadcast to shape (0 where broadcast).
DimVector broadcast_strides(const Tensor& t, IntArrayRef shape) {
  DimVector st(shape.size(), 0);
  int64_t lead = static_cast<int64_t>(shape.size()) - t.dim();
  for (int64_t i = 0; i < t.dim(); ++i) st[lead + i] = t.sizes()[i] == 1 ? 0 : t.strides()[i];
  return st;
}

// Positions of the true elements of a bool/uint8 mask, one Long tensor per
// mask dimension (the indices nonzero() would give, column by column).
std::vector<Tensor> mask_to_indices(const Tensor& mask_in) {
  // The result's size depends on the mask's values: PyTorch's meta nonzero raises too.
  if (mask_in.is_meta()) dispatch::missing_kernel("nonzero", DeviceType::Meta);
  const Tensor mask = mask_in.contiguous();
  const int64_t k = mask.dim(), numel = mask.numel();
  const auto* m = static_cast<const uint8_t*>(mask.data_ptr());
  int64_t count = 0;
  for (int64_t i = 0; i < numel; ++i) count += m[i] != 0;
  std::vector<Tensor> out;
  std::vector<int64_t*> cols;
  for (int64_t j = 0; j < k; ++j) {
    out.push_back(ember::empty({count}, ScalarType::Long, mask.device()));
    cols.push_back(out.back().data_ptr<int64_t>());
  }
  if (count == 0 || k == 0) return out;
  // Branch-free: write every position, advance past the true ones. Up to
  // the last true element the write slot stays inside the result.
  int64_t last = numel - 1;
  while (!m[last]) --last;
  if (k == 1) {
    int64_t* c0 = cols[0];
    for (int64_t i = 0, w = 0; i <= last; ++i) {
      c0[w] = i;
      w += m[i] != 0;
    }
    return out;
  }
  DimVector coord(k, 0);
  const IntArrayRef sizes = mask.sizes();
  for (int64_t i = 0, w = 0; i <= last; ++i) {
    for (int64_t j = 0; j < k; ++j) cols[j][w] = coord[j];
    w += m[i] != 0;
    for (int64_t j = k; j-- > 0;) {
      if (++coord[j] < sizes[j]) break;
      coord[j] = 0;
    }
  }
  return out;
}

// The checked, broadcast form of an index list (PyTorch's make_info).
struct IndexPlan {
  std::vector<int64_t> dims;  // indexed dimensions of self, in order
  std::vector<Tensor> tensors;  // their Long/Int index tensors (not yet broadcast)
  DimVector bshape;  // broadcast shape of the index tensors
  bool adjacent = true;  // indexed dims are consecutive: result keeps their place
  DimVector result_shape;
  cpu::OffsetVector b_off;  // element offset into self per broadcast index position
};

IndexPlan plan_index(const Tensor& self, const OptTensors& indices) {
  for (const auto& t : indices) {
    if (!t || !t->defined()) continue;
    ScalarType st = t->dtype();
    EMBER_CHECK_TYPE(
        IndexError, st == ScalarType::Long || st == ScalarType::Int || st == ScalarType::Byte || st == ScalarType::Bool,
        "tensors used as indices must be long, int, byte or bool tensors");
  }
  EMBER_CHECK_TYPE(IndexError, static_cast<int64_t>(indices.size()) <= self.dim(),
                   "too many indices for tensor of dimension ", self.dim(), " (got ", indices.size(), ")");
  // Masks become one Long index per mask dimension.
  std::vector<Tensor> per_dim;
  for (const auto& t : indices) {
    if (!t || !t->defined()) {
      per_dim.emplace_back();
      continue;
    }
    if (!is_mask(*t)) {
      per_dim.push_back(*t);
      continue;
    }
    for (int64_t j = 0; j < t->dim(); ++j) {
      int64_t src = static_cast<int64_t>(per_dim.size()) + j;
      EMBER_CHECK_TYPE(IndexError, src < self.dim(), "too many indices for tensor of dimension ", self.dim());
      EMBER_CHECK_TYPE(IndexError, t->sizes()[j] == self.sizes()[src], "The shape of the mask ",
                       shape_string(t->sizes()), " at index ", j, " does not match the shape of the indexed tensor ",
                       shape_string(self.sizes()), " at index ", src);
    }
    for (Tensor& col : mask_to_indices(*t)) per_dim.push_back(std::move(col));
  }
  EMBER_CHECK_TYPE(IndexError, static_cast<int64_t>(per_dim.size()) <= self.dim(),
                   "too many indices for tensor of dimension ", self.dim(), " (got ", per_dim.size(), ")");
  IndexPlan plan;
  for (size_t d = 0; d < per_dim.size(); ++d) {
    if (!per_dim[d].defined()) continue;
    plan.dims.push_back(static_cast<int64_t>(d));
    plan.tensors.push_back(per_dim[d]);
  }
  // Broadcast the index shapes.
  bool ok = true;
  for (const Tensor& t : plan.tensors) {
    IntArrayRef s = t.sizes();
    size_t n = std::max(plan.bshape.size(), s.size());
    DimVector r(n, 1);
    for (size_t i = 0; i < n; ++i) {
      int64_t a = i < n - plan.bshape.size() ? 1 : plan.bshape[i - (n - plan.bshape.size())];
      int64_t b = i < n - s.size() ? 1 : s[i - (n - s.size())];
      if (a != b && a != 1 && b != 1) ok = false;
      r[i] = a == 1 ? b : a;
    }
    plan.bshape = r;
  }
  if (!ok) {
    std::string shapes;
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
      shapes += (i ? ", " : "") + shape_string(plan.tensors[i].sizes());
    }
    throw IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes " + shapes);
  }
  for (size_t i = 1; i < plan.dims.size(); ++i) plan.adjacent = plan.adjacent && plan.dims[i] == plan.dims[i - 1] + 1;
  // Result shape.
  if (plan.adjacent) {
    for (int64_t d = 0; d < plan.dims.front(); ++d) plan.result_shape.push_back(self.sizes()[d]);
    for (int64_t s : plan.bshape) plan.result_shape.push_back(s);
    for (int64_t d = plan.dims.back() + 1; d < self.dim(); ++d) plan.result_shape.push_back(self.sizes()[d]);
  } else {
    plan.result_shape = plan.bshape;
    std::vector<bool> indexed(self.dim());
    for (int64_t d : plan.dims) indexed[d] = true;
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (!indexed[d]) plan.result_shape.push_back(self.sizes()[d]);
    }
  }
  // An empty tensor is never read: PyTorch then only rejects positions in
  // its empty dimensions, and does so here, before other checks.
  if (self.numel() == 0 && product(plan.bshape) > 0) {
    for (int64_t d : plan.dims) {
      EMBER_CHECK_TYPE(IndexError, self.sizes()[d] != 0, "index is out of bounds for dimension with size 0");
    }
  }
  return plan;
}

// Fills plan.b_off, checking bounds (after the checks PyTorch makes first).
void compute_offsets(const Tensor& self, IndexPlan& plan) {
  plan.b_off.resize(static_cast<size_t>(product(plan.bshape)));
  if (self.numel() == 0 || plan.dims.empty()) {
    std::fill(plan.b_off.begin(), plan.b_off.end(), 0);
    return;
  }
  for (size_t k = 0; k < plan.dims.size(); ++k) {
    const Tensor& t = plan.tensors[k];
    const int64_t d = plan.dims[k], size = self.sizes()[d], stride = self.strides()[d];
    DimVector st = broadcast_strides(t, plan.bshape);
    int64_t* off_out = plan.b_off.data();
    auto add = [&](int64_t pos, int64_t v) {
      // PyTorch names the dimension by the index tensor's position among the indices.
      EMBER_CHECK_TYPE(IndexError, v >= -size && v < size, "index ", v, " is out of bounds for dimension ", k,
                       " with size ", size);
      const int64_t off = (v < 0 ? v + size : v) * stride;
      off_out[pos] = k == 0 ? off : off_out[pos] + off;  // the table starts uninitialised
    };
    const bool dense = t.is_contiguous() && t.sizes().equals(plan.bshape);
    auto visit = [&](auto* p) {
      if (dense) {
        const int64_t n = t.numel();
        for (int64_t pos = 0; pos < n; ++pos) add(pos, static_cast<int64_t>(p[pos]));
      } else {
        for_each_offset(plan.bshape, st, [&](int64_t pos, int64_t off) { add(pos, static_cast<int64_t>(p[off])); });
      }
    };
    if (t.dtype() == ScalarType::Int) {
      visit(t.data_ptr<int32_t>());
    } else {
      visit(t.data_ptr<int64_t>());
    }
  }
}

// The geometry of an advanced-indexing result over self (indexed operand)
// and `lin` (the result, or the values broadcast to the result shape).
IndexGeometry make_geometry(const Tensor& self, IndexPlan& plan, IntArrayRef lin_strides) {
  IndexGeometry g;
  g.b_off_idx = std::move(plan.b_off);
  const int64_t nb_dims = static_cast<int64_t>(plan.bshape.size());
  int64_t r = 0;  // current result dim
  if (plan.adjacent) {
    for (int64_t d = 0; d < plan.dims.front(); ++d, ++r) {
      g.a_sizes.push_back(self.sizes()[d]);
      g.a_stride_idx.push_back(self.strides()[d]);
      g.a_stride_lin.push_back(lin_strides[r]);
    }
  }
  // Offsets of the linear operand over the broadcast index dims: a single
  // stride when they are laid out row-major (the usual case), else a table.
  DimVector b_lin_strides;
  for (int64_t i = 0; i < nb_dims; ++i) b_lin_strides.push_back(lin_strides[r + i]);
  int64_t step = nb_dims > 0 ? b_lin_strides[nb_dims - 1] : 0;
  bool linear = true;
  for (int64_t i = nb_dims - 1, span = 1; i >= 0; --i) {
    linear = linear && (plan.bshape[i] == 1 || b_lin_strides[i] == step * span);
    span *= plan.bshape[i];
  }
  if (linear) {
    g.b_lin_stride = step;
  } else {
    g.b_off_lin.assign(g.b_off_idx.size(), 0);
    for_each_offset(plan.bshape, b_lin_strides, [&](int64_t pos, int64_t off) { g.b_off_lin[pos] = off; });
  }
  r += nb_dims;
  std::vector<bool> indexed(self.dim());
  for (int64_t d : plan.dims) indexed[d] = true;
  const int64_t first_after = plan.adjacent ? plan.dims.back() + 1 : 0;
  for (int64_t d = first_after; d < self.dim(); ++d) {
    if (indexed[d]) continue;
    g.c_sizes.push_back(self.sizes()[d]);
    g.c_stride_idx.push_back(self.strides()[d]);
    g.c_stride_lin.push_back(lin_strides[r++]);
  }
  return g;
}

char* byte_ptr(const Tensor& t) { return static_cast<char*>(t.data_ptr()); }

// PyTorch sends x[mask] = scalar to masked_fill_: returns the mask, shaped to
// broadcast against self, when indices are one mask (plus Nones).
Tensor as_masked_fill(const Tensor& self, const OptTensors& indices, const Tensor& values) {
  if (values.numel() != 1 || !values.is_cpu()) return Tensor();
  int64_t dims = 0;
  Tensor mask;
  for (const auto& t : indices) {
    if (!t || !t->defined()) {
      ++dims;
      continue;
    }
    if (!is_mask(*t) || mask.defined()) return Tensor();
    mask = *t;
    for (int64_t j = 0; j < mask.dim(); ++j) {
      int64_t src = dims + j;
      EMBER_CHECK_TYPE(IndexError, src < self.dim() && mask.sizes()[j] == self.sizes()[src], "The shape of the mask ",
                       shape_string(mask.sizes()), " at index ", j, " does not match the shape of the indexed tensor ",
                       shape_string(self.sizes()), " at index ", src);
    }
    dims += mask.dim();
  }
  if (!mask.defined()) return Tensor();
  DimVector sizes(mask.sizes()), strides(mask.strides());
  for (int64_t i = dims; i < self.dim(); ++i) {
    sizes.push_back(1);
    strides.push_back(1);
  }
  return Tensor(make_intrusive<TensorImpl>(mask.unsafeGetTensorImpl()->storage(), ScalarType::Bool, sizes, strides,
                                           mask.storage_offset()));
}

// The value of a one-element tensor (read on the host: another device's is copied there).
Scalar item_scalar(const Tensor& value) {
  const Tensor t = value.to(Device(DeviceType::CPU));
  if (t.is_complex()) return Scalar(t.item<std::complex<double>>());
  if (t.is_floating_point()) return Scalar(t.item<double>());
  if (t.dtype() == ScalarType::Bool) return Scalar(t.item<bool>());
  return Scalar(t.item<int64_t>());
}

// self[mask] = value in place; mask broadcasts to self.
void masked_fill_inplace(const Tensor& self, const Tensor& mask, const Scalar& value) {
  if (self.dtype() == ScalarType::ComplexHalf) {  // filled as words
    masked_fill_inplace(limited::as_words(self), mask, limited::word_of(self.dtype(), value));
    return;
  }
  cpu::check_value_fits(self.dtype(), value);
  DimVector b = infer_broadcast_size(self.sizes(), mask.sizes());
  EMBER_CHECK(IntArrayRef(b).equals(self.sizes()), "output with shape ", shape_string(self.sizes()),
              " doesn't match the broadcast shape ", shape_string(b));
  if (self.numel() == 0) return;
  if (self.is_complex()) {
    // Complex values move through where's loops.
    const_cast<Tensor&>(self).copy_(ember::where(mask, ember::full_like(self, value), self));
    return;
  }
  auto it = TensorIterator::copy_op(self, mask, /*check_overlap=*/false);
  cpu::masked_fill_stub(it, value);
}

}  // namespace

Tensor index(const Tensor& self, const OptTensors& indices) {
  IndexPlan plan = plan_index(self, indices);
  compute_offsets(self, plan);
  Tensor result = ember::empty(plan.result_shape, self.dtype(), self.device());
  if (plan.dims.empty()) {  // only Nones: a copy
    native::copy_(result, self, false);
    return result;
  }
  IndexGeometry g = make_geometry(self, plan, result.strides());
  cpu::index_stub.get()(g, byte_ptr(self), byte_ptr(result), self.dtype(), IndexMode::Gather);
  return result;
}

Tensor& index_put_out(const Tensor& self, const OptTensors& indices, const Tensor& values, bool accumulate,
                      Tensor& out) {
  // PyTorch raises for an empty index list (its message names an undefined tensor).
  EMBER_CHECK(!indices.empty(), "index_put_: at least one index must be given, got an empty list of indices");
  if (!out.defined()) {
    out = self.clone(MemoryFormat::Contiguous);
  } else if (!out.is_same(self)) {
    resize_output(out, self.sizes());
    out.copy_(self);
  }
  // PyTorch's meta function checks nothing (the checks below may need index values).
  if (out.is_meta() || values.is_meta() || dispatch::is_meta_arg(indices)) return out;
  EMBER_CHECK_TYPE(IndexError, static_cast<int64_t>(indices.size()) <= out.dim(),
                   "too many indices for tensor of dimension ", out.dim(), " (got ", indices.size(), ")");
  if (!accumulate) {
    Tensor mask = as_masked_fill(out, indices, values);
    if (mask.defined()) {
      masked_fill_inplace(out, mask, item_scalar(values));
      return out;
    }
  }
  IndexPlan plan = plan_index(out, indices);
  DimVector b;
  bool fits = values.dim() <= static_cast<int64_t>(plan.result_shape.size());
  if (fits) {
    int64_t lead = static_cast<int64_t>(plan.result_shape.size()) - values.dim();
    for (int64_t i = 0; i < values.dim(); ++i) {
      fits = fits && (values.sizes()[i] == 1 || values.sizes()[i] == plan.result_shape[lead + i]);
    }
  }
  EMBER_CHECK(fits, "shape mismatch: value tensor of shape ", shape_string(values.sizes()),
              " cannot be broadcast to indexing result of shape ", shape_string(plan.result_shape));
  EMBER_CHECK(values.dtype() == out.dtype(), "Index put requires the source and destination dtypes match, got ",
              dtype_word(out.dtype()), " for the destination and ", dtype_word(values.dtype()), " for the source.");
  if (plan.dims.empty()) {
    out.copy_(values);
    return out;
  }
  compute_offsets(out, plan);
  DimVector lin = broadcast_strides(values, plan.result_shape);
  IndexGeometry g = make_geometry(out, plan, lin);
  cpu::index_stub.get()(g, byte_ptr(out), byte_ptr(values), out.dtype(),
                        accumulate ? IndexMode::Accumulate : IndexMode::Put);
  return out;
}

Tensor& index_select_out(const Tensor& self, int64_t dim, const Tensor& index, Tensor& out) {
  // PyTorch's order: the dim, the index's rank and count, then its dtype.
  int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t n = index.numel();
  EMBER_CHECK_TYPE(IndexError, index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  EMBER_CHECK(self.dim() > 0 || n == 1, "index_select(): Index to scalar can have only 1 value, got ", n, " value(s)");
  EMBER_CHECK(index.dtype() == ScalarType::Long || index.dtype() == ScalarType::Int,
              "index_select(): Expected dtype int32 or int64 for index");
  DimVector shape(self.sizes());
  if (self.dim() > 0) shape[d] = n;
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == self.dtype(), "index_select(): self and result must have the same scalar type");
    resize_output(out, shape);
  } else {
    out = ember::empty(shape, self.dtype(), self.device());
  }
  // The rest reads index values (Note [Meta tensors]); the meta kernel runs when any argument is meta.
  if (out.is_meta() || self.is_meta() || index.is_meta()) return out;
  const int64_t size = self.dim() > 0 ? self.sizes()[d] : 1;
  const int64_t istride = index.dim() > 0 ? index.strides()[0] : 0;
  IndexGeometry g;
  g.b_off_idx.resize(n);
  g.b_lin_stride = out.dim() > 0 ? out.strides()[d] : 0;
  // PyTorch's message depends on its code path: empty inputs and dim 1 with
  // a contiguous result name the bad index, the others do not.
  EMBER_CHECK(self.dim() <= 1 || self.numel() > 0 || n == 0 || size > 0,
              "index_select(): self indexing axis dim should be positive");
  const bool short_message = self.dim() <= 1 || (self.numel() > 0 && !(d == 1 && out.is_contiguous()));
  auto fill = [&](auto* p) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = static_cast<int64_t>(p[i * istride]);
      if (v < 0 || v >= size) {
        if (short_message) throw IndexError("index out of range in self");
        throw Error(str_cat("INDICES element is out of DATA bounds, id=", v, " axis_dim=", size));
      }
      g.b_off_idx[i] = self.dim() > 0 ? v * self.strides()[d] : 0;
    }
  };
  if (index.dtype() == ScalarType::Int) {
    fill(index.data_ptr<int32_t>());
  } else {
    fill(index.data_ptr<int64_t>());
  }
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i == d) continue;
    auto& sizes = i < d ? g.a_sizes : g.c_sizes;
    (i < d ? g.a_stride_idx : g.c_stride_idx).push_back(self.strides()[i]);
    (i < d ? g.a_stride_lin : g.c_stride_lin).push_back(out.strides()[i]);
    sizes.push_back(self.sizes()[i]);
  }
  cpu::index_stub.get()(g, byte_ptr(self), byte_ptr(out), self.dtype(), IndexMode::Gather);
  return out;
}

namespace {
Tensor& masked_fill_impl(const Tensor& self, const Tensor& mask, const Scalar& value, Tensor& out) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              cpp_type_name(mask.dtype()));
  if (!out.defined()) {
    DimVector shape = infer_broadcast_size(self.sizes(), mask.sizes());
    out = ember::empty(shape, self.dtype(), self.device());
    out.copy_(self);
  }
  masked_fill_inplace(out, mask, value);
  return out;
}
}  // namespace

Tensor& masked_fill_out(const Tensor& self, const Tensor& mask, const Scalar& value, Tensor& out) {
  return masked_fill_impl(self, mask, value, out);
}

Tensor& masked_fill_tensor_out(const Tensor& self, const Tensor& mask, const Tensor& value, Tensor& out) {
  EMBER_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  // A meta value has no number to read: its metadata is all PyTorch's meta function checks.
  return masked_fill_impl(self, mask, value.is_meta() ? Scalar(int64_t(0)) : item_scalar(value), out);
}

Tensor& fill_tensor_(Tensor& self, const Tensor& value) {
  EMBER_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  // Unlike fill_ with a number, PyTorch refuses an expanded target here.
  (void)TensorIterator::copy_op(self, value);
  if (self.is_meta() || value.is_meta()) return self;  // no value to read or write (Note [Meta tensors])
  return native::fill_(self, item_scalar(value));
}

}  // namespace ember::native
