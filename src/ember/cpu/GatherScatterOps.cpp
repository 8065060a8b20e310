// CPU gather, scatter and its reductions, index_add/index_copy/index_fill and
// take/put. The data moves in cpu/kernels/IndexKernel.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "ember/cpu/IndexStubs.h"
#include "ember/cpu/OpMessages.h"
#include "ember/ops/MemoryOverlap.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/LimitedTypes.h"

namespace ember::native {

namespace {

// A 0-dim tensor as a 1-element 1-d view (same storage).
Tensor as_1d(const Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; }

enum class Reduce { Assign, Sum, Prod, Mean, Max, Min };

bool is_index_dtype(ScalarType t) { return t == ScalarType::Long || t == ScalarType::Int; }

int64_t read_index(const Tensor& index, int64_t off) {
  if (index.dtype() == ScalarType::Long) return static_cast<const int64_t*>(index.data_ptr())[off];
  return static_cast<const int32_t*>(index.data_ptr())[off];
}

[[noreturn]] void out_of_bounds(int64_t v, int64_t d, int64_t size) {
  throw Error(str_cat("index ", v, " is out of bounds for dimension ", d, " with size ", size));
}

// out starts as a copy of self (unless it is self).
void init_like_self(const Tensor& self, Tensor& out) {
  if (!out.defined()) {
    out = self.clone(MemoryFormat::Contiguous);
    return;
  }
  if (out.is_same(self)) return;
  check_out_dtype(out, self.dtype());
  resize_output(out, self.sizes());
  out.copy_(self);
}

// Shared walk of gather/scatter: for each line of `index` (dim left out) and
// each j along dim, f(self offset of the line, index offset of the line,
// other offset of the line, j, idx).
// An empty index is not checked (PyTorch's kernels skip it before the check).
void check_scatter_gather_index(const char* op, const Tensor& index) {
  EMBER_CHECK(index.numel() == 0 || is_index_dtype(index.dtype()), op, "(): Expected dtype int32/int64 for index");
}

// Note [Scatter shape rules]
// gather: index.size(d) <= self.size(d) for d != dim. scatter: index.size(d)
// <= src.size(d) for all d and <= self.size(d) for d != dim. Empty index:
// nothing to check.
void check_gather_shape(const Tensor& self, int64_t dim, const Tensor& index) {
  if (index.numel() == 0) return;
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  EMBER_CHECK(std::max<int64_t>(index.dim(), 1) == nd,
              "Index tensor must have the same number of dimensions as input tensor");
  Tensor s = as_1d(self), i = as_1d(index);
  for (int64_t d = 0; d < nd; ++d) {
    if (d == dim) continue;
    EMBER_CHECK(i.sizes()[d] <= s.sizes()[d], "Size does not match at dimension ", d, " expected index ",
                shape_string(index.sizes()), " to be no larger than self ", shape_string(self.sizes()),
                " apart from dimension ", dim);
  }
}

void check_scatter_shape(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src) {
  if (index.numel() == 0) return;
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  EMBER_CHECK(std::max<int64_t>(index.dim(), 1) == nd,
              "Index tensor must have the same number of dimensions as self tensor");
  if (src) {
    EMBER_CHECK(std::max<int64_t>(src->dim(), 1) == nd,
                "Index tensor must have the same number of dimensions as src tensor");
  }
  Tensor s = as_1d(self), i = as_1d(index);
  bool ok = true;
  for (int64_t d = 0; d < nd; ++d) {
    if (d != dim && i.sizes()[d] > s.sizes()[d]) ok = false;
    if (src && i.sizes()[d] > as_1d(*src).sizes()[d]) ok = false;
  }
  if (ok) return;
  if (src) {
    throw Error(str_cat("Expected index ", shape_string(index.sizes()), " to be no larger than self ",
                        shape_string(self.sizes()), " apart from dimension ", dim,
                        " and to be no larger size than src ", shape_string(src->sizes())));
  }
  throw Error(str_cat("Expected index ", shape_string(index.sizes()), " to be no larger than self ",
                      shape_string(self.sizes()), " apart from dimension ", dim));
}

// ---- glue to the gather/scatter kernel (Note [Scatter/gather geometry]) ----

using cpu::ScatterGeometry;
using cpu::ScatterOp;

// The geometry over `shape` split at dim d; xs, ys, is are the strides of X,
// Y and the index over shape (entry d: their steps along J). Size-1 dims are
// dropped and neighbours that every operand steps across evenly merged.
ScatterGeometry scatter_geometry(IntArrayRef shape, int64_t d, IntArrayRef xs, IntArrayRef ys, IntArrayRef is,
                                 int64_t bound) {
  ScatterGeometry g;
  g.nj = shape[d], g.j_x = xs[d], g.j_y = ys[d], g.j_i = is[d], g.bound = bound;
  auto add = [&](DimVector& sz, DimVector& sx, DimVector& sy, DimVector& si, size_t k) {
    if (shape[k] == 1) return;
    if (!sz.empty()) {
      const size_t b = sz.size() - 1;
      if (sx[b] == xs[k] * shape[k] && sy[b] == ys[k] * shape[k] && si[b] == is[k] * shape[k]) {
        sz[b] *= shape[k], sx[b] = xs[k], sy[b] = ys[k], si[b] = is[k];
        return;
      }
    }
    sz.push_back(shape[k]), sx.push_back(xs[k]), sy.push_back(ys[k]), si.push_back(is[k]);
  };
  for (size_t k = 0; k < shape.size(); ++k) {
    if (static_cast<int64_t>(k) < d) add(g.a_sizes, g.a_x, g.a_y, g.a_i, k);
    if (static_cast<int64_t>(k) > d) add(g.c_sizes, g.c_x, g.c_y, g.c_i, k);
  }
  return g;
}

Tensor long_index(const Tensor& index) {
  return index.dtype() == ScalarType::Long ? index : index.to(ScalarType::Long);
}

// Throws PyTorch's message for the first index value (row-major) outside [0, size).
[[noreturn]] void report_bad_index(const Tensor& index, int64_t d, int64_t size) {
  Tensor c = index.contiguous();
  const int64_t* p = static_cast<const int64_t*>(c.data_ptr());
  for (int64_t k = 0; k < c.numel(); ++k) {
    if (p[k] < 0 || p[k] >= size) out_of_bounds(p[k], d, size);
  }
  EMBER_INTERNAL_ASSERT(false, "scatter/gather kernel reported a bad index that is not there");
}

// An expanded index (stride-0 dims) repeats few values: they are checked once
// here instead of at every repeat in the kernel. True when the index was
// expanded and every value lies in [0, bound).
bool check_expanded_index(const Tensor& i, int64_t d, int64_t bound) {
  DimVector sizes(i.sizes());
  bool expanded = false;
  for (int64_t k = 0; k < i.dim(); ++k) {
    if (i.strides()[k] == 0 && sizes[k] > 1) sizes[k] = 1, expanded = true;
  }
  if (!expanded) return false;
  Tensor distinct = i.as_strided(sizes, i.strides(), i.storage_offset()).contiguous();
  const int64_t* p = static_cast<const int64_t*>(distinct.data_ptr());
  for (int64_t k = 0; k < distinct.numel(); ++k) {
    if (p[k] < 0 || p[k] >= bound) report_bad_index(i, d, bound);
  }
  return true;
}

bool is_16bit_float(ScalarType t) { return t == ScalarType::Half || t == ScalarType::BFloat16; }

// PyTorch sums and multiplies 16-bit floats scattered into one element in
// float, rounding once at the end.
bool accumulates_in_float(ScalarType t, ScatterOp op) {
  return is_16bit_float(t) && (op == ScatterOp::Sum || op == ScatterOp::Prod);
}

// The value of a scatter with a number, as one element of dtype.
struct ValueBuffer {
  alignas(8) unsigned char bytes[16] = {};
  ValueBuffer(const Scalar& v, ScalarType dtype) {
    EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX(dtype, "scatter", [&] {
      const scalar_t x = v.to<scalar_t>();
      std::memcpy(bytes, &x, sizeof(x));
    });
  }
};

// out[dim = index[p]] (op)= src[p] (or value) over the positions p of index.
void scatter_into(Tensor& out, int64_t dim, const Tensor& index, const Tensor& src_tensor, const Scalar* value,
                  ScatterOp op) {
  if (index.numel() == 0) return;
  assert_no_internal_overlap(out);
  assert_no_overlap(out, index);
  assert_no_overlap(out, src_tensor);
  // No values to write (Note [Meta tensors]); the meta kernel runs when any argument is meta.
  if (out.is_meta() || index.is_meta() || dispatch::is_meta_arg(src_tensor)) return;
  Tensor o = as_1d(out), i = as_1d(long_index(index));
  Tensor s = src_tensor.defined() ? as_1d(src_tensor) : Tensor();
  DimVector zero(i.dim(), 0);
  ScatterGeometry g = scatter_geometry(i.sizes(), dim, o.strides(), s.defined() ? s.strides() : IntArrayRef(zero),
                                       i.strides(), o.sizes()[dim]);
  if (accumulates_in_float(out.dtype(), op)) {
    if (op == ScatterOp::Sum && s.defined() && index_is_one_vector(g)) {
      op = ScatterOp::FloatSum;
    } else {
      Tensor wide = out.to(ScalarType::Float);
      Tensor wide_src = src_tensor.defined() ? src_tensor.to(ScalarType::Float) : Tensor();
      // A number is first rounded to out's dtype, as PyTorch's value.
      const Scalar rounded = value ? Scalar(ember::scalar_tensor(*value, out.dtype()).item<double>()) : Scalar(0);
      scatter_into(wide, dim, index, wide_src, value ? &rounded : nullptr, op);
      out.copy_(wide);
      return;
    }
  }
  // Written serially when out may overlap itself, or src shares its memory.
  g.parallel = surely_no_internal_overlap(o) &&
               (!s.defined() || s.unsafeGetTensorImpl()->storage().get() != o.unsafeGetTensorImpl()->storage().get());
  ValueBuffer buf(value ? *value : Scalar(0), out.dtype());
  g.checked = check_expanded_index(i, dim, o.sizes()[dim]);
  char* y = s.defined() ? static_cast<char*>(s.data_ptr()) : reinterpret_cast<char*>(buf.bytes);
  if (!cpu::scatter_gather_stub.get()(g, static_cast<char*>(o.data_ptr()), y, static_cast<const int64_t*>(i.data_ptr()),
                                      out.dtype(), op, Scalar(1))) {
    report_bad_index(i, dim, o.sizes()[dim]);
  }
}

ScatterOp scatter_op(Reduce r) {
  switch (r) {
    case Reduce::Assign: return ScatterOp::Assign;
    case Reduce::Sum:
    case Reduce::Mean: return ScatterOp::Sum;
    case Reduce::Prod: return ScatterOp::Prod;
    case Reduce::Max: return ScatterOp::Max;
    default: return ScatterOp::Min;
  }
}

void scatter_impl(Tensor& out, int64_t dim, const Tensor& index, const Tensor& src_tensor, const Scalar* value,
                  Reduce r) {
  scatter_into(out, dim, index, src_tensor, value, scatter_op(r));
}

Reduce scatter_reduce_kind(const std::string& reduce) {
  if (reduce == "add") return Reduce::Sum;
  if (reduce == "multiply") return Reduce::Prod;
  throw Error("reduce argument must be either add or multiply.");
}

}  // namespace

// ---- gather -------------------------------------------------------------------------

Tensor& gather_out(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad, Tensor& out) {
  (void)sparse_grad;
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  check_scatter_gather_index("gather", index);
  check_gather_shape(self, d, index);
  check_out_dtype(out, self.dtype());
  if (out.defined()) {
    resize_output(out, index.sizes());
  } else {
    out = ember::empty(index.sizes(), self.dtype(), self.device());
  }
  if (index.numel() == 0) return out;
  assert_no_internal_overlap(out);
  assert_no_overlap(out, self);
  assert_no_overlap(out, index);
  if (out.is_meta() || self.is_meta() || index.is_meta()) return out;  // no values to read (Note [Meta tensors])
  Tensor o = as_1d(out), i = as_1d(long_index(index)), s = as_1d(self);
  ScatterGeometry g = scatter_geometry(i.sizes(), d, s.strides(), o.strides(), i.strides(), s.sizes()[d]);
  g.checked = check_expanded_index(i, d, s.sizes()[d]);
  if (!cpu::scatter_gather_stub.get()(g, static_cast<char*>(s.data_ptr()), static_cast<char*>(o.data_ptr()),
                                      static_cast<const int64_t*>(i.data_ptr()), self.dtype(), ScatterOp::Gather,
                                      Scalar(1))) {
    report_bad_index(i, d, s.sizes()[d]);
  }
  return out;
}

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  // Without dim gather checks the index dtype (int32 passes), as in PyTorch.
  if (!dim) return self.reshape({-1}).gather(0, indices.reshape({-1}));
  EMBER_CHECK(indices.dtype() == ScalarType::Long, "torch.take_along_dim(): dtype of indices should be Long but got ",
              dtype_message_name(indices.dtype()));
  EMBER_CHECK(self.dim() == indices.dim(),
              "torch.take_along_dim(): input and indices should have the same number of dimensions, but got ",
              self.dim(), " dimensions for input, and ", indices.dim(), " dimensions for indices");
  const int64_t d = maybe_wrap_dim(*dim, self.dim());
  DimVector ss(self.sizes()), is(indices.sizes());
  if (self.dim() > 0) ss[d] = 1, is[d] = 1;
  DimVector b = infer_broadcast_size(ss, is);
  DimVector self_shape(b), index_shape(b);
  if (self.dim() > 0) self_shape[d] = self.sizes()[d], index_shape[d] = indices.sizes()[d];
  return self.expand(self_shape).gather(d, indices.expand(index_shape));
}

// ---- scatter -----------------------------------------------------------------------------

namespace {
// PyTorch names scatter for scatter_add and scatter_reduce too.
void check_scatter_src(const Tensor& self, const Tensor& src) {
  EMBER_CHECK(self.dtype() == src.dtype(), "scatter(): Expected self.dtype to be equal to src.dtype");
}
}  // namespace

Tensor& scatter_src_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, Tensor& out) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  check_scatter_gather_index("scatter", index);
  check_scatter_src(self, src);
  check_scatter_shape(self, d, index, &src);
  init_like_self(self, out);
  scatter_impl(out, d, index, src, nullptr, Reduce::Assign);
  return out;
}

Tensor& scatter_value_out(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, Tensor& out) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  check_scatter_gather_index("scatter", index);
  check_scatter_shape(self, d, index, nullptr);
  init_like_self(self, out);
  scatter_impl(out, d, index, Tensor(), &value, Reduce::Assign);
  return out;
}

Tensor& scatter_reduce_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                           const std::string& reduce, Tensor& out) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  Reduce r = scatter_reduce_kind(reduce);
  check_scatter_gather_index("scatter", index);
  check_scatter_src(self, src);
  check_scatter_shape(self, d, index, &src);
  init_like_self(self, out);
  scatter_impl(out, d, index, src, nullptr, r);
  return out;
}

Tensor& scatter_value_reduce_out(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                                 const std::string& reduce, Tensor& out) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  Reduce r = scatter_reduce_kind(reduce);
  check_scatter_gather_index("scatter", index);
  check_scatter_shape(self, d, index, nullptr);
  init_like_self(self, out);
  scatter_impl(out, d, index, Tensor(), &value, r);
  return out;
}

Tensor& scatter_add_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, Tensor& out) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  check_scatter_gather_index("scatter", index);
  check_scatter_src(self, src);
  check_scatter_shape(self, d, index, &src);
  init_like_self(self, out);
  scatter_impl(out, d, index, src, nullptr, Reduce::Sum);
  return out;
}

Tensor& scatter_reduce_two_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                               const std::string& reduce, bool include_self, Tensor& out) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  Reduce r;
  if (reduce == "sum") {
    r = Reduce::Sum;
  } else if (reduce == "prod") {
    r = Reduce::Prod;
  } else if (reduce == "mean") {
    r = Reduce::Mean;
  } else if (reduce == "amax") {
    r = Reduce::Max;
  } else if (reduce == "amin") {
    r = Reduce::Min;
  } else {
    throw Error(str_cat("reduce argument must be either sum, prod, mean, amax or amin, got ", reduce));
  }
  check_scatter_gather_index("scatter_reduce", index);
  check_scatter_src(self, src);
  check_scatter_shape(self, d, index, &src);
  init_like_self(self, out);
  if (index.numel() == 0 || out.is_meta() || index.is_meta() || src.is_meta()) return out;
  Tensor count;
  if (!include_self) {
    // Positions that receive a value forget self: start them at the identity.
    EMBER_DISPATCH_ALL_TYPES(self.dtype(), "scatter_reduce", [&] {
      double ident = 0;
      if (r == Reduce::Prod) ident = 1;
      if (r == Reduce::Max) ident = -std::numeric_limits<double>::infinity();
      if (r == Reduce::Min) ident = std::numeric_limits<double>::infinity();
      Scalar v;
      if constexpr (std::is_integral_v<scalar_t>) {
        if (r == Reduce::Max) {
          v = Scalar(static_cast<int64_t>(std::numeric_limits<scalar_t>::lowest()));
        } else if (r == Reduce::Min) {
          v = Scalar(static_cast<int64_t>(std::numeric_limits<scalar_t>::max()));
        } else {
          v = Scalar(static_cast<int64_t>(ident));
        }
        if constexpr (std::is_same_v<scalar_t, bool>) v = Scalar(r == Reduce::Min || r == Reduce::Prod);
      } else {
        v = Scalar(ident);
      }
      scatter_impl(out, d, index, Tensor(), &v, Reduce::Assign);
    });
  }
  scatter_impl(out, d, index, src, nullptr, r);
  if (r == Reduce::Mean) {
    count = ember::full(self.sizes(), Scalar(include_self ? 1.0 : 0.0), self.dtype(), self.device());
    Scalar one(1.0);
    scatter_impl(count, d, index, Tensor(), &one, Reduce::Sum);
    count.masked_fill_(ember::eq(count, Scalar(0)), Scalar(1));
    if (is_floating_type(self.dtype())) {
      out.div_(count);
    } else {
      out.copy_(out.div(count, std::string("floor")));
    }
  }
  return out;
}

// ---- index_add / index_copy / index_fill -----------------------------------------------

namespace {
// For each j: out.select(dim, index[j]) (op)= src.select(dim, j), in
// increasing j; src may be a number (index_fill).
void index_reduce_impl(Tensor& out, int64_t dim, const Tensor& index, const Tensor& src, const Scalar* value, Reduce r,
                       const Scalar& alpha, bool index_error) {
  const int64_t n = index.numel();
  // A meta out has no values, and PyTorch's meta functions read no index values.
  if (n == 0 || out.numel() == 0 || out.is_meta() || index.is_meta() || dispatch::is_meta_arg(src)) return;
  Tensor o = as_1d(out), idx = as_1d(index);
  const int64_t size = o.sizes()[dim];
  std::vector<int64_t> pos(n);
  for (int64_t j = 0; j < n; ++j) {
    int64_t x = read_index(idx, j * idx.strides()[0]);
    // Only index_fill takes negative positions.
    if (x < (value ? -size : 0) || x >= size) {
      std::string msg = str_cat(index_error && r == Reduce::Assign && value == nullptr ? "index_copy_(): " : "",
                                "index ", x, " is out of bounds for dimension ", dim, " with size ", size);
      if (index_error) throw IndexError(msg);
      // PyTorch's index_add checks the first and last dims in its scatter path
      // (alpha 1) and the others, 1-d inputs and alpha != 1 in its slice path.
      if (out.dim() <= 1 || (dim != 0 && dim != out.dim() - 1) || !alpha.equal(1.0)) {
        throw IndexError("index out of range in self");
      }
      throw Error(msg);
    }
    pos[j] = x < 0 ? x + size : x;
  }
  // PyTorch only warns about index_fill_ on an expanded tensor.
  if (!value) assert_no_internal_overlap(out);
  assert_no_overlap(out, index);
  assert_no_overlap(out, src);
  ScatterOp op = scatter_op(r);
  const bool is_bool = out.dtype() == ScalarType::Bool;
  if (op == ScatterOp::Sum && !is_bool && !alpha.equal(1.0)) op = ScatterOp::SumAlpha;
  // Complex numbers are multiplied by alpha, even 1 (inf * 0 is nan), except
  // in PyTorch's scatter path (see above).
  if (op == ScatterOp::Sum && out.is_complex()) {
    const bool scatter_path = out.dim() > 1 && (dim == 0 || dim == out.dim() - 1) && alpha.equal(1.0);
    if (!scatter_path) op = ScatterOp::SumAlpha;
  }
  DimVector shape(o.sizes());
  shape[dim] = n;
  DimVector zero(o.dim(), 0), index_strides(o.dim(), 0);
  index_strides[dim] = 1;
  Tensor s = src.defined() ? as_1d(src) : Tensor();
  // A one-element source of another rank (accepted with a 0-dim self) broadcasts.
  IntArrayRef ys = s.defined() && s.dim() == o.dim() ? s.strides() : IntArrayRef(zero);
  ValueBuffer buf(value ? *value : Scalar(0), out.dtype());
  ScatterGeometry g = scatter_geometry(shape, dim, o.strides(), ys, index_strides, size);
  g.parallel = surely_no_internal_overlap(o);
  g.checked = true;
  // index_add's scatter path (see above) sums 16-bit floats in float.
  if (op == ScatterOp::Sum && is_16bit_float(out.dtype()) && out.dim() > 1 && (dim == 0 || dim == out.dim() - 1)) {
    if (index_is_one_vector(g)) {
      op = ScatterOp::FloatSum;
    } else {
      Tensor wide = out.to(ScalarType::Float);
      index_reduce_impl(wide, dim, index, src.to(ScalarType::Float), nullptr, r, alpha, index_error);
      out.copy_(wide);
      return;
    }
  }
  char* y = s.defined() ? static_cast<char*>(s.data_ptr()) : reinterpret_cast<char*>(buf.bytes);
  const bool ok =
      cpu::scatter_gather_stub.get()(g, static_cast<char*>(o.data_ptr()), y, pos.data(), out.dtype(), op, alpha);
  EMBER_INTERNAL_ASSERT(ok, "index_add/index_copy/index_fill: positions were checked");
}

void check_index_vector(const char* op, const Tensor& index) {
  EMBER_CHECK_TYPE(IndexError, index.dim() <= 1, op, "(): Index is supposed to be a vector, but got dim: ", index.dim(),
                   " with type: ", dtype_message_name(index.dtype()), " and size: ", shape_string(index.sizes()));
}

void check_source_shape(const Tensor& self, int64_t d, const Tensor& source) {
  bool ok =
      self.dim() == 0 || source.dim() == 0 ? self.numel() == 1 || source.numel() == 1 : self.dim() == source.dim();
  if (ok && self.dim() > 0 && source.dim() > 0) {
    for (int64_t i = 0; i < self.dim(); ++i) {
      if (i != d && self.sizes()[i] != source.sizes()[i]) ok = false;
    }
  }
  EMBER_CHECK(ok,
              "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = ",
              shape_string(self.sizes()), " source.shape = ", shape_string(source.sizes()));
}
}  // namespace

Tensor& index_add_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha,
                      Tensor& out) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  check_index_vector("index_add_", index);
  EMBER_CHECK(is_index_dtype(index.dtype()),
              "index_add_(): Expected dtype int32/int64 for index but got: ", dtype_message_name(index.dtype()));
  EMBER_CHECK(self.dtype() == source.dtype(), "index_add_(): self (", dtype_message_name(self.dtype()),
              ") and source (", dtype_message_name(source.dtype()), ") must have the same scalar type");
  const int64_t src_n = source.dim() > 0 ? source.sizes()[d] : 1;
  EMBER_CHECK(index.numel() == src_n, "index_add_(): Number of indices (", index.numel(),
              ") should be equal to source.size(dim): (", src_n, "), for dim: ", d);
  check_source_shape(self, d, source);
  if (self.dtype() == ScalarType::ComplexHalf) {
    // As PyTorch: slice by slice through complex32's add, or element by
    // element (each sum rounded once) for a vector.
    init_like_self(self, out);
    if (self.dim() > 1) {
      const Tensor positions = index.to(ScalarType::Long).contiguous();
      const int64_t* p = positions.data_ptr<int64_t>();
      for (int64_t i = 0; i < positions.numel(); ++i) {
        EMBER_CHECK_TYPE(IndexError, p[i] >= 0 && p[i] < self.sizes()[d], "index out of range in self");
      }
      for (int64_t i = 0; i < positions.numel(); ++i) {
        out.select(d, p[i]).add_(source.select(d, i), alpha);
      }
    } else {
      out.copy_(
          ember::index_add(self.to(ScalarType::ComplexFloat), d, index, source.to(ScalarType::ComplexFloat), alpha));
    }
    return out;
  }
  init_like_self(self, out);
  index_reduce_impl(out, d, index, source, nullptr, Reduce::Sum, alpha, false);
  return out;
}

Tensor& index_copy_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, Tensor& out) {
  // PyTorch's order of checks: index rank, scalar/rank agreement, dtypes,
  // slice shapes, then the number of indices.
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK_TYPE(IndexError, index.dim() < 2, "index_copy_(): Index should have dimension 1 or 0 (got ", index.dim(),
                   ")");
  const int64_t n = index.numel();
  if (source.dim() == 0) {
    EMBER_CHECK_TYPE(IndexError, n == 1, "index_copy_(): When source is scalar, index should have one element (got ", n,
                     ")");
  } else {
    EMBER_CHECK_TYPE(IndexError, source.dim() == self.dim() || self.dim() == 0,
                     "index_copy_(): When source and destination are not scalars, their dimensionality must match. "
                     "Source dimensionality (",
                     source.dim(), "), destination dimensionality (", self.dim(), ")");
  }
  EMBER_CHECK(index.dtype() == ScalarType::Long, "index_copy_(): Expected a long tensor for index, but got ",
              dtype_message_name(index.dtype()));
  EMBER_CHECK(self.dtype() == source.dtype(),
              "index_copy_(): self and source expected to have the same dtype, but got (self) ",
              dtype_message_name(self.dtype()), " and (source) ", dtype_message_name(source.dtype()));
  auto sliced = [d](const Tensor& t) {
    std::string r;
    for (int64_t i = 0; i < t.dim(); ++i) {
      if (i != d) r += (r.empty() ? "" : " ") + std::to_string(t.sizes()[i]);
    }
    return r;
  };
  if (self.dim() > 0 && source.dim() > 0) {
    EMBER_CHECK(sliced(self) == sliced(source),
                "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: ",
                sliced(self), " at dimension ", d, " and source slice shape: ", sliced(source), " at dimension 0.");
  }
  const int64_t src_n = source.dim() > 0 ? source.sizes()[d] : 1;
  EMBER_CHECK_TYPE(IndexError, n == src_n, "index_copy_(): Number of indices (", n,
                   ") should be equal to source.size(dim) (", src_n, ")");
  init_like_self(self, out);
  if (self.dtype() == ScalarType::ComplexHalf) {  // complex32 moves as words
    Tensor words = limited::as_words(out);
    index_reduce_impl(words, d, index, limited::as_words(source), nullptr, Reduce::Assign, Scalar(1), true);
    return out;
  }
  index_reduce_impl(out, d, index, source, nullptr, Reduce::Assign, Scalar(1), true);
  return out;
}

Tensor& index_fill_int_scalar_out(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                                  Tensor& out) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  check_index_vector("index_fill_", index);
  EMBER_CHECK_TYPE(IndexError, index.dtype() == ScalarType::Long, "index_fill_(): Expected dtype int64 for index.");
  EMBER_CHECK(!value.is_complex() || is_complex_type_any_tier(self.dtype()),
              "index_fill_(): Converting complex Scalar to non-complex type is not supported");
  if (!is_limited_type(self.dtype())) cpu::check_value_fits(self.dtype(), value);
  init_like_self(self, out);
  if (self.dtype() == ScalarType::ComplexHalf) {  // complex32 is filled as words
    const Scalar word = limited::word_of(self.dtype(), value);
    Tensor words = limited::as_words(out);
    index_reduce_impl(words, d, index, Tensor(), &word, Reduce::Assign, Scalar(1), true);
    return out;
  }
  index_reduce_impl(out, d, index, Tensor(), &value, Reduce::Assign, Scalar(1), true);
  return out;
}

Tensor& index_fill_int_tensor_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value,
                                  Tensor& out) {
  EMBER_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  const Tensor host = value.is_meta() ? value : value.to(Device(DeviceType::CPU));
  Scalar v = value.is_meta()                     ? Scalar(int64_t(0))  // no value to read: only its metadata counts
             : is_complex_type(value.dtype())    ? Scalar(host.item<std::complex<double>>())
             : is_floating_type(value.dtype())   ? Scalar(host.item<double>())
             : value.dtype() == ScalarType::Bool ? Scalar(host.item<bool>())
                                                 : Scalar(host.item<int64_t>());
  return index_fill_int_scalar_out(self, dim, index, v, out);
}

// ---- take / put_ ---------------------------------------------------------------------------

namespace {
// The index as Long positions into a flat tensor of n elements, negative
// ones wrapped; PyTorch's IndexError names the first one out of range.
Tensor flat_positions(const Tensor& index, int64_t n) {
  Tensor i = index.contiguous();
  const int64_t* p = static_cast<const int64_t*>(i.data_ptr());
  const int64_t m = i.numel();
  bool negative = false;
  for (int64_t k = 0; k < m; ++k) {
    EMBER_CHECK_TYPE(IndexError, p[k] >= -n && p[k] < n, "out of range: tried to access index ", p[k],
                     " on a tensor of ", n, " elements.");
    negative = negative || p[k] < 0;
  }
  if (!negative) return i;
  Tensor w = ember::empty(i.sizes(), ScalarType::Long, i.device());
  int64_t* q = static_cast<int64_t*>(w.data_ptr());
  for (int64_t k = 0; k < m; ++k) q[k] = p[k] < 0 ? p[k] + n : p[k];
  return w;
}

// One flat line of m positions: X[index[j]] (op) Y[j].
ScatterGeometry flat_geometry(int64_t m, int64_t bound) {
  ScatterGeometry g;
  g.nj = m, g.j_x = 1, g.j_y = 1, g.j_i = 1, g.bound = bound;
  g.checked = true;
  return g;
}
}  // namespace

Tensor& take_out(const Tensor& self, const Tensor& index, Tensor& out) {
  EMBER_CHECK(index.dtype() == ScalarType::Long, "take(): Expected a long tensor for index, but got ",
              dtype_message_name(index.dtype()));
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == self.dtype(),
                "take(): self and out expected to have the same dtype, but got self.dtype = ",
                dtype_message_name(self.dtype()), " and out.dtype = ", dtype_message_name(out.dtype()));
  }
  EMBER_CHECK_TYPE(IndexError, !(self.numel() == 0 && index.numel() != 0),
                   "take(): tried to take from an empty tensor");
  if (out.defined()) {
    resize_output(out, index.sizes());
    assert_no_internal_overlap(out);
    assert_no_overlap(out, index);
    assert_no_overlap(out, self);
  } else {
    out = ember::empty(index.sizes(), self.dtype(), self.device());
  }
  if (index.numel() == 0 || out.is_meta() || self.is_meta() || index.is_meta()) return out;
  Tensor pos = flat_positions(index, self.numel());
  Tensor src = self.contiguous();
  Tensor o = out.is_contiguous() ? out : ember::empty(index.sizes(), self.dtype(), self.device());
  ScatterGeometry g = flat_geometry(pos.numel(), src.numel());
  g.parallel = true;
  cpu::scatter_gather_stub.get()(g, static_cast<char*>(src.data_ptr()), static_cast<char*>(o.data_ptr()),
                                 static_cast<const int64_t*>(pos.data_ptr()), self.dtype(), ScatterOp::Gather,
                                 Scalar(1));
  if (!o.is_same(out)) out.copy_(o);
  return out;
}

Tensor& put_out(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate, Tensor& out) {
  EMBER_CHECK(index.dtype() == ScalarType::Long, "put_(): Expected a long tensor for index, but got ",
              dtype_message_name(index.dtype()));
  EMBER_CHECK(self.dtype() == source.dtype(),
              "put_(): self and source expected to have the same dtype, but got self.dtype = ",
              dtype_message_name(self.dtype()), " and source.dtype = ", dtype_message_name(source.dtype()));
  EMBER_CHECK_TYPE(IndexError, source.numel() == index.numel(),
                   "put_(): Expected source and index to have the same number of elements, but got source.numel() = ",
                   source.numel(), ", index.numel() = ", index.numel());
  EMBER_CHECK_TYPE(IndexError, !(self.numel() == 0 && index.numel() != 0),
                   "put_(): Tried to put elements into an empty tensor");
  if (!out.defined()) {
    out = self.clone(MemoryFormat::Contiguous);
  } else {
    assert_no_internal_overlap(out);
    assert_no_overlap(out, index);
    assert_no_overlap(out, source);
  }
  if (index.numel() == 0 || out.is_meta() || index.is_meta() || source.is_meta()) return out;
  Tensor pos = flat_positions(index, out.numel());
  Tensor src = source.contiguous();
  // Positions count in the row-major order of out's elements.
  Tensor o = out.is_contiguous() ? out : out.contiguous();
  ScatterGeometry g = flat_geometry(pos.numel(), o.numel());
  g.parallel = false;
  cpu::scatter_gather_stub.get()(g, static_cast<char*>(o.data_ptr()), static_cast<char*>(src.data_ptr()),
                                 static_cast<const int64_t*>(pos.data_ptr()), self.dtype(),
                                 accumulate ? ScatterOp::Sum : ScatterOp::Assign, Scalar(1));
  if (!o.is_same(out)) out.copy_(o);
  return out;
}

}  // namespace ember::native
