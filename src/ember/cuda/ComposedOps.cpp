// CUDA entries of operators whose CPU functions loop over host memory,
// composed here of operators with CUDA kernels: fill_ with a tensor, tril and
// triu (a where over a diagonal mask), flip (index_select with reversed
// positions), trace (the diagonal's sum), median and nanmedian (a stable
// sort, then the lower median's position), repeat_interleave of a tensor of
// repeats (a running sum of run ends), searchsorted (a lock-step binary
// search), masked_scatter (a running count of the mask), put (index_put on
// the flattening), bincount (index_add into the bins), unique (marks after
// a sort), scatter with reduce "add" (scatter_add) or "multiply" (rounds of
// distinct targets), scatter_reduce (the same steps), histc (PyTorch's CUDA
// bin rule, index_add). Checks and result layouts come
// from the CPU functions run on meta copies.
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/cuda/CudaContext.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {

// kernels/IndexKernels.cu: a meta tensor of t's sizes, strides and dtype.
Tensor meta_copy(const Tensor& t);

namespace {

constexpr int kCpu = static_cast<int>(DeviceType::CPU);

// fill_ with a 0-dim tensor: its value is read (one copy from the device) and filled as a number.
Tensor& fill_tensor_cuda(Tensor& self, const Tensor& value) {
  return dispatch::fill__Tensor_kernels[kCpu](self, value.dim() == 0 ? value.to(Device(DeviceType::CPU)) : value);
}

// self with the elements outside the band zeroed: tril keeps j - i <= diagonal, triu j - i >= diagonal.
Tensor& tri_cuda(Tensor& (*cpu_fn)(const Tensor&, int64_t, Tensor&), const Tensor& self, int64_t diagonal, bool lower,
                 Tensor& out) {
  Tensor meta_out = out.defined() ? meta_copy(out) : Tensor();
  cpu_fn(meta_copy(self), diagonal, meta_out);  // the CPU function's checks
  const int64_t nd = self.dim(), rows = self.sizes()[nd - 2], cols = self.sizes()[nd - 1];
  const Tensor i = ember::arange(Scalar(rows), ScalarType::Long, self.device()).reshape({rows, 1});
  const Tensor j = ember::arange(Scalar(cols), ScalarType::Long, self.device()).reshape({1, cols});
  const Tensor offset = ember::sub(j, i);
  const Tensor band = lower ? ember::le(offset, Scalar(diagonal)) : ember::ge(offset, Scalar(diagonal));
  const Tensor result = ember::where(band, self, ember::zeros({}, self.dtype(), self.device()));
  if (!out.defined()) {
    out = ember::empty(self.sizes(), self.dtype(), self.device());
  } else if (!out.is_same(self)) {
    resize_output(out, self.sizes());
  }
  out.copy_(result);
  return out;
}

Tensor& tril_cuda(const Tensor& self, int64_t diagonal, Tensor& out) {
  return tri_cuda(dispatch::tril_kernels[kCpu], self, diagonal, true, out);
}
Tensor& triu_cuda(const Tensor& self, int64_t diagonal, Tensor& out) {
  return tri_cuda(dispatch::triu_kernels[kCpu], self, diagonal, false, out);
}

Tensor flip_cuda(const Tensor& self, IntArrayRef dims) {
  const Tensor meta = dispatch::flip_kernels[kCpu](meta_copy(self), dims);  // checks the dims
  Tensor out = ember::empty_strided(meta.sizes(), meta.strides(), self.dtype(), self.device());
  if (out.numel() == 0) return out;
  Tensor r = self;
  for (int64_t d : dims) {
    const int64_t w = maybe_wrap_dim(d, self.dim());
    const int64_t n = self.dim() == 0 ? 1 : self.sizes()[w];
    if (n > 1)
      r = ember::index_select(r, w,
                              ember::arange(Scalar(n - 1), Scalar(-1), Scalar(-1), ScalarType::Long, self.device()));
  }
  out.copy_(r);
  return out;
}

// PyTorch's CUDA trace sums the diagonal for every dtype (bool included, as int64).
Tensor trace_cuda(const Tensor& self) {
  EMBER_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return ember::sum(self.diagonal(0, 0, 1), std::optional<ScalarType>{});
}

// The first position along d (keepdim shape) of each line of x holding
// `value` (NaN matching NaN, -0 matching +0): PyTorch's CUDA median returns
// the index its threads find equal to the selected value, the lowest one
// for the lines its kernels scan in one pass.
Tensor first_position_of(const Tensor& x, const Tensor& value, int64_t d) {
  const int64_t n = x.sizes()[d];
  std::vector<int64_t> line_shape(static_cast<size_t>(x.dim()), 1);
  line_shape[static_cast<size_t>(d)] = n;
  const Tensor positions = ember::arange(Scalar(n), ScalarType::Long, x.device()).reshape(line_shape);
  const Tensor match = ember::logical_or(ember::eq(x, value), ember::logical_and(ember::isnan(x), ember::isnan(value)));
  const Tensor candidates = ember::where(match, positions, ember::full({}, Scalar(n), ScalarType::Long, x.device()));
  return ember::amin(candidates, std::vector<int64_t>{d}, true);
}

// The lower median along d (keepdim shape) of x, as (values, indices): median
// gives a line's first NaN when it has one, nanmedian the lower median of the
// other elements (NaN when there are none). NaNs sort last, stably. The index
// is the first position of the median's value in the line.
std::tuple<Tensor, Tensor> median_along(const Tensor& x, int64_t d, bool ignore_nan) {
  const Tensor sorted = std::get<0>(ember::sort(x, true, d, false));
  const Device device = x.device();
  const auto number = [&](int64_t v) { return ember::full({}, Scalar(v), ScalarType::Long, device); };
  const Tensor nans = ember::sum(ember::isnan(x), std::vector<int64_t>{d}, true, ScalarType::Long);
  const Tensor valid = ember::sub(number(x.sizes()[d]), nans);
  const Tensor lower = ember::div(ember::sub(valid, number(1)), number(2), std::string("floor"));
  const Tensor k =
      ignore_nan ? ember::clamp_min(lower, Scalar(0)) : ember::where(ember::gt(nans, Scalar(0)), valid, lower);
  const Tensor value = ember::gather(sorted, d, k);
  return {value, first_position_of(x, value, d)};
}

std::tuple<Tensor, Tensor> median_dim_common(std::tuple<Tensor, Tensor> (*cpu_fn)(const Tensor&, int64_t, bool),
                                             const Tensor& self, int64_t dim, bool keepdim, bool ignore_nan) {
  auto [mv, mi] = cpu_fn(meta_copy(self), dim, keepdim);  // checks and shapes
  Tensor values = ember::empty_strided(mv.sizes(), mv.strides(), mv.dtype(), self.device());
  Tensor indices = ember::empty_strided(mi.sizes(), mi.strides(), mi.dtype(), self.device());
  if (values.numel() == 0) return {values, indices};
  const Tensor x = self.dim() == 0 ? self.reshape({1}) : self;
  auto [v, i] = median_along(x, self.dim() == 0 ? 0 : maybe_wrap_dim(dim, self.dim()), ignore_nan);
  values.copy_(v.reshape(values.sizes()));
  indices.copy_(i.reshape(indices.sizes()));
  return {values, indices};
}

std::tuple<Tensor, Tensor> median_dim_cuda(const Tensor& self, int64_t dim, bool keepdim) {
  return median_dim_common(dispatch::median_dim_kernels[kCpu], self, dim, keepdim, false);
}
std::tuple<Tensor, Tensor> nanmedian_dim_cuda(const Tensor& self, int64_t dim, bool keepdim) {
  return median_dim_common(dispatch::nanmedian_dim_kernels[kCpu], self, dim, keepdim, true);
}

Tensor median_all_common(Tensor (*cpu_fn)(const Tensor&), const Tensor& self, bool ignore_nan) {
  const Tensor meta = cpu_fn(meta_copy(self));  // checks
  Tensor out = ember::empty({}, meta.dtype(), self.device());
  if (self.numel() == 0) return out.fill_(Scalar(std::nan(""))), out;
  out.copy_(std::get<0>(median_along(self.reshape({-1}), 0, ignore_nan)).reshape({}));
  return out;
}

Tensor median_cuda(const Tensor& self) { return median_all_common(dispatch::median_kernels[kCpu], self, false); }
Tensor nanmedian_cuda(const Tensor& self) { return median_all_common(dispatch::nanmedian_kernels[kCpu], self, true); }

// The positions 0..n-1, each repeated: a mark at each run's end (n - 1 of
// them; index_add counts empty runs), then a running sum. The total is read
// back once, as the CPU function checks it.
Tensor repeat_interleave_cuda(const Tensor& repeats, std::optional<int64_t> output_size) {
  if (repeats.dtype() != ScalarType::Long && repeats.dtype() != ScalarType::Int) {
    native::math::not_implemented_for("repeat_interleave_cuda", repeats.dtype());
  }
  EMBER_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  const Device device = repeats.device();
  const int64_t n = repeats.numel();
  const Tensor r = repeats.to(ScalarType::Long);
  const Tensor ends = ember::cumsum(r, 0, std::nullopt);
  int64_t total = 0;
  if (n > 0) {
    EMBER_CHECK(ember::min(r).to(Device(DeviceType::CPU)).item<int64_t>() >= 0, "repeats can not be negative");
    total = ends.select(0, n - 1).to(Device(DeviceType::CPU)).item<int64_t>();
  }
  EMBER_CHECK(!output_size || *output_size == total, "allocated size does not match required size");
  Tensor marks = ember::zeros({total + 1}, ScalarType::Long, device);
  if (n > 1) {
    marks = ember::index_add(marks, 0, ends.narrow(0, 0, n - 1), ember::ones({n - 1}, ScalarType::Long, device));
  }
  return ember::cumsum(marks, 0, std::nullopt).narrow(0, 0, total).contiguous();
}

// searchsorted as PyTorch's binary search, run in lock step for every value:
// floor(log2(n)) + 1 halvings of [start, end), each reading the middle
// boundary (take) and moving start past it while !(mid >= v) (right: !(mid > v)),
// so NaNs land where the search puts them.
Tensor& searchsorted_cuda(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                          std::optional<std::string> side, const std::optional<Tensor>& sorter, Tensor& out) {
  Tensor meta_out = out.defined() ? meta_copy(out) : Tensor();
  dispatch::searchsorted_Tensor_kernels[kCpu](meta_copy(sorted_sequence), meta_copy(self), out_int32, right, side,
                                              sorter, meta_out);  // the CPU function's checks
  if (side) right = *side == "right";
  const ScalarType rt = out_int32 ? ScalarType::Int : ScalarType::Long;
  if (out.defined()) {
    resize_output(out, self.sizes());
  } else {
    out = ember::empty(self.sizes(), rt, self.device());
  }
  const ScalarType ct = promote_types(sorted_sequence.dtype(), self.dtype());
  if (ct == ScalarType::Bool) native::math::not_implemented_for("searchsorted_out_cuda", ScalarType::Bool);
  if (self.numel() == 0) return out;
  const Device device = self.device();
  const Tensor b = sorted_sequence.to(ct).contiguous(), v = self.to(ct);
  const int64_t n = b.dim() > 0 ? b.sizes()[b.dim() - 1] : 1;
  // Flat position of each value's line of boundaries (0 for one line).
  Tensor base = ember::zeros({}, ScalarType::Long, device);
  if (b.dim() > 1) {
    const int64_t lines = b.numel() / std::max<int64_t>(n, 1), per_line = self.sizes()[self.dim() - 1];
    base = ember::arange(Scalar(lines), ScalarType::Long, device).mul_(Scalar(n)).reshape({lines, 1});
    base = base.expand({lines, per_line}).reshape(self.sizes());
  }
  Tensor start = ember::zeros(self.sizes(), ScalarType::Long, device);
  Tensor end = ember::full(self.sizes(), Scalar(n), ScalarType::Long, device);
  const Tensor one = ember::full({}, Scalar(int64_t(1)), ScalarType::Long, device);
  for (int64_t width = n; width > 0; width >>= 1) {
    const Tensor open = ember::lt(start, end);
    const Tensor mid = ember::bitwise_right_shift(ember::add(start, end), Scalar(1));
    const Tensor at = ember::take(b, ember::add(base, ember::clamp_max(mid, Scalar(n - 1))));
    const Tensor past = ember::logical_not(right ? ember::gt(at, v) : ember::ge(at, v));
    start = ember::where(ember::logical_and(open, past), ember::add(mid, one), start);
    end = ember::where(ember::logical_and(open, ember::logical_not(past)), mid, end);
  }
  out.copy_(start);
  return out;
}

// masked_scatter: the k-th true element of the mask (in row-major order)
// takes source's k-th element; k is the running count of the mask.
Tensor& masked_scatter_cuda(const Tensor& self, const Tensor& mask, const Tensor& source, Tensor& out) {
  Tensor meta_out = out.defined() ? meta_copy(out) : Tensor();
  meta_out = dispatch::masked_scatter_kernels[kCpu](meta_copy(self), meta_copy(mask), meta_copy(source), meta_out);
  if (!out.defined()) {
    out = ember::empty(meta_out.sizes(), self.dtype(), self.device());
    out.copy_(self.expand(meta_out.sizes()));
  }
  const Tensor m = mask.expand(out.sizes()).reshape({-1});
  if (m.numel() == 0) return out;
  const Tensor counts = ember::cumsum(m, 0, ScalarType::Long);
  const int64_t ones = counts.select(0, m.numel() - 1).to(Device(DeviceType::CPU)).item<int64_t>();
  EMBER_CHECK(ones <= source.numel(), "Number of elements of source < number of ones in mask");
  if (ones == 0) return out;
  const Tensor taken = ember::take(source, ember::clamp_min(ember::sub(counts, ember::ones_like(counts)), Scalar(0)));
  out.copy_(ember::where(m, taken, out.reshape({-1})).reshape(out.sizes()));
  return out;
}

// put: index_put over the row-major flattening of out; an index out of
// range (read back: the smallest and largest) raises the CPU function's error.
Tensor& put_cuda(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate, Tensor& out) {
  Tensor meta_out = out.defined() ? meta_copy(out) : Tensor();
  dispatch::put_kernels[kCpu](meta_copy(self), meta_copy(index), meta_copy(source), accumulate, meta_out);
  if (!out.defined()) out = self.clone(MemoryFormat::Contiguous);
  if (index.numel() == 0) return out;
  const Device cpu(DeviceType::CPU);
  const int64_t n = out.numel();
  const Tensor positions = index.reshape({-1});
  const int64_t lowest = ember::min(positions).to(cpu).item<int64_t>();
  const int64_t highest = ember::max(positions).to(cpu).item<int64_t>();
  if (lowest < -n || highest >= n) {
    Tensor on_cpu;
    dispatch::put_kernels[kCpu](self.to(cpu), index.to(cpu), source.to(cpu), accumulate, on_cpu);
  }
  Tensor flat = out.is_contiguous() ? out.view({-1}) : out.contiguous().view({-1});
  ember::index_put_(flat, {std::optional<Tensor>(positions)}, source.reshape({-1}), accumulate);
  if (!out.is_contiguous()) out.copy_(flat.view(out.sizes()));
  return out;
}

// bincount: index_add of ones (or of the weights, as float32 for float32
// weights, else float64) into max + 1 bins; the largest and smallest value
// are read back, as the CPU function checks them.
Tensor bincount_cuda(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  if (!is_integral_type(self.dtype(), false)) native::math::not_implemented_for("bincount_cuda", self.dtype());
  EMBER_CHECK(minlength >= 0, "minlength should be >= 0");
  const bool has_w = weights && weights->defined();
  EMBER_CHECK(self.dim() == 1 || (self.dim() == 0 && self.numel() == 0),
              "bincount only supports 1-d non-negative integral inputs.");
  if (has_w) {
    EMBER_CHECK(weights->dim() == 1 && weights->numel() == self.numel(),
                "weights should be 1-d and have the same length as input");
  }
  if (self.numel() == 0) return ember::zeros({minlength}, ScalarType::Long, self.device());
  const Device cpu(DeviceType::CPU);
  const Tensor x = self.to(ScalarType::Long);
  EMBER_CHECK(ember::min(x).to(cpu).item<int64_t>() >= 0, "bincount only supports 1-d non-negative integral inputs.");
  const int64_t bins = std::max(ember::max(x).to(cpu).item<int64_t>() + 1, minlength);
  if (!has_w) {
    return ember::index_add(ember::zeros({bins}, ScalarType::Long, self.device()), 0, x,
                            ember::ones({x.numel()}, ScalarType::Long, self.device()));
  }
  const ScalarType wt = weights->dtype() == ScalarType::Float ? ScalarType::Float : ScalarType::Double;
  return ember::index_add(ember::zeros({bins}, wt, self.device()), 0, x, weights->to(wt));
}

// unique: a stable sort (unique_consecutive: none), a mark where a value
// differs from the one before it (NaN never equals NaN, so each NaN stays
// its own value, as PyTorch), the marked values; inverse positions are the
// running count of marks sent back through the sort's permutation, counts an
// index_add of ones per group.
std::tuple<Tensor, Tensor, Tensor> unique_common(const Tensor& self, bool sort_first, bool return_inverse,
                                                 bool return_counts) {
  const Device device = self.device();
  const Tensor flat = self.reshape({-1});
  const int64_t n = flat.numel();
  Tensor vals = flat.contiguous(), order;
  if (sort_first) std::tie(vals, order) = ember::sort(flat, true, 0, false);
  if (n == 0) {
    return {ember::empty({0}, self.dtype(), device),
            ember::empty(return_inverse ? self.sizes() : IntArrayRef{0}, ScalarType::Long, device),
            ember::empty({0}, ScalarType::Long, device)};
  }
  Tensor is_new = ember::ones({n}, ScalarType::Bool, device);
  if (n > 1) is_new.narrow(0, 1, n - 1).copy_(ember::ne(vals.narrow(0, 1, n - 1), vals.narrow(0, 0, n - 1)));
  const Tensor group =
      ember::sub(ember::cumsum(is_new, 0, ScalarType::Long), ember::ones({}, ScalarType::Long, device));
  const Tensor out = ember::masked_select(vals, is_new);
  const int64_t u = out.numel();
  Tensor inverse = ember::empty({0}, ScalarType::Long, device);
  if (return_inverse) {
    inverse = order.defined()
                  ? ember::index_put(ember::empty({n}, ScalarType::Long, device), {std::optional<Tensor>(order)}, group)
                  : group;
    inverse = inverse.reshape(self.sizes());
  }
  Tensor counts = ember::empty({0}, ScalarType::Long, device);
  if (return_counts) {
    counts = ember::index_add(ember::zeros({u}, ScalarType::Long, device), 0, group,
                              ember::ones({n}, ScalarType::Long, device));
  }
  return {out, inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> unique2_cuda(const Tensor& self, bool sorted, bool return_inverse,
                                                bool return_counts) {
  (void)sorted;  // always sorted, as PyTorch's CUDA unique
  return unique_common(self, true, return_inverse, return_counts);
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive_cuda(const Tensor& self, bool return_inverse, bool return_counts,
                                                           std::optional<int64_t> dim) {
  EMBER_CHECK(!dim || self.dim() <= 1,
              "unique_consecutive(): dim is not supported for tensors with more than one dimension");
  return unique_common(self, false, return_inverse, return_counts);
}

// out[index] = combine(out[index], src): the targets' flat positions are
// sorted (stably), each entry ranked among those of its target, and round r
// combines the entries of rank r (their targets are distinct), so repeated
// targets combine in index order. The number of rounds is read back.
void scatter_rounds(Tensor& out, int64_t d, const Tensor& index, const Tensor& src,
                    Tensor (*combine)(const Tensor&, const Tensor&)) {
  const Device device = out.device();
  const int64_t nd = out.dim();
  Tensor flat = ember::mul(index, ember::full({}, Scalar(out.strides()[d]), ScalarType::Long, device));
  Tensor taken = src;
  for (int64_t k = 0; k < nd; ++k) {
    taken = taken.narrow(k, 0, index.sizes()[k]);
    if (k == d) continue;
    DimVector shape(nd, 1);
    shape[k] = index.sizes()[k];
    const Tensor along = ember::arange(Scalar(index.sizes()[k]), ScalarType::Long, device).reshape(shape);
    flat = ember::add(flat, ember::mul(along, ember::full({}, Scalar(out.strides()[k]), ScalarType::Long, device)));
  }
  const int64_t m = index.numel();
  auto [targets, order] = ember::sort(flat.reshape({-1}), true, 0, false);
  const Tensor values = ember::take(taken.contiguous(), order);
  Tensor is_new = ember::ones({m}, ScalarType::Bool, device);
  if (m > 1) is_new.narrow(0, 1, m - 1).copy_(ember::ne(targets.narrow(0, 1, m - 1), targets.narrow(0, 0, m - 1)));
  const Tensor starts = ember::nonzero(is_new).reshape({-1});
  const Tensor group =
      ember::sub(ember::cumsum(is_new, 0, ScalarType::Long), ember::ones({}, ScalarType::Long, device));
  const Tensor rank = ember::sub(ember::arange(Scalar(m), ScalarType::Long, device), ember::take(starts, group));
  const int64_t rounds = ember::max(rank).to(Device(DeviceType::CPU)).item<int64_t>() + 1;
  Tensor o = out.view({-1});
  for (int64_t r = 0; r < rounds; ++r) {
    const Tensor in_round = ember::eq(rank, Scalar(r));
    const Tensor t = ember::masked_select(targets, in_round);
    ember::index_put_(o, {std::optional<Tensor>(t)},
                      combine(ember::take(o, t), ember::masked_select(values, in_round)));
  }
}

// scatter with reduce="add" / "multiply" (src a tensor, or a number for every
// entry): the CPU function checks on meta copies; an index out of range
// (smallest and largest read back) raises the CPU function's error.
Tensor& scatter_reduce_common(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                              const std::string& reduce, Tensor& out, const std::function<void()>& cpu_error) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  if (!out.defined()) {
    out = ember::empty_like(self, std::nullopt, std::nullopt, MemoryFormat::Contiguous);
    out.copy_(self);
  } else if (!out.is_same(self)) {
    resize_output(out, self.sizes());
    out.copy_(self);
  }
  if (index.numel() == 0) return out;
  const Device cpu(DeviceType::CPU);
  const int64_t size = self.dim() == 0 ? 1 : self.sizes()[d];
  if (ember::min(index).to(cpu).item<int64_t>() < 0 || ember::max(index).to(cpu).item<int64_t>() >= size) cpu_error();
  if (reduce == "add") {
    Tensor taken = src;
    for (int64_t k = 0; k < index.dim(); ++k) taken = taken.narrow(k, 0, index.sizes()[k]);
    out.copy_(ember::scatter_add(out, d, index, taken));
    return out;
  }
  Tensor work = out.is_contiguous() ? out : out.contiguous();
  scatter_rounds(work, d, index, src, [](const Tensor& a, const Tensor& b) { return ember::mul(a, b); });
  if (!work.is_same(out)) out.copy_(work);
  return out;
}

Tensor& scatter_reduce_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                            const std::string& reduce, Tensor& out) {
  Tensor meta_out = out.defined() ? meta_copy(out) : Tensor();
  dispatch::scatter_reduce_kernels[kCpu](meta_copy(self), dim, meta_copy(index), meta_copy(src), reduce, meta_out);
  return scatter_reduce_common(self, dim, index, src, reduce, out, [&] {
    Tensor on_cpu;
    const Device cpu(DeviceType::CPU);
    dispatch::scatter_reduce_kernels[kCpu](self.to(cpu), dim, index.to(cpu), src.to(cpu), reduce, on_cpu);
  });
}

Tensor& scatter_value_reduce_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                                  const std::string& reduce, Tensor& out) {
  Tensor meta_out = out.defined() ? meta_copy(out) : Tensor();
  dispatch::scatter_value_reduce_kernels[kCpu](meta_copy(self), dim, meta_copy(index), value, reduce, meta_out);
  const Tensor src = ember::full(index.sizes(), value, self.dtype(), self.device());
  return scatter_reduce_common(self, dim, index, src, reduce, out, [&] {
    Tensor on_cpu;
    const Device cpu(DeviceType::CPU);
    dispatch::scatter_value_reduce_kernels[kCpu](self.to(cpu), dim, index.to(cpu), value, reduce, on_cpu);
  });
}

// The identity of a reduction in dtype t (include_self=False starts the
// receiving positions there): 0, 1, or the dtype's lowest / highest value.
Scalar reduce_identity(const std::string& reduce, ScalarType t) {
  if (reduce == "sum" || reduce == "mean") return Scalar(int64_t(0));
  if (reduce == "prod") return Scalar(int64_t(1));
  const bool lowest = reduce == "amax";
  if (is_floating_type(t)) return Scalar(lowest ? -INFINITY : INFINITY);
  switch (t) {
    case ScalarType::Bool: return Scalar(!lowest);
    case ScalarType::Byte: return Scalar(int64_t(lowest ? 0 : 255));
    case ScalarType::Char: return Scalar(int64_t(lowest ? -128 : 127));
    case ScalarType::Short: return Scalar(int64_t(lowest ? -32768 : 32767));
    case ScalarType::Int: return Scalar(int64_t(lowest ? INT32_MIN : INT32_MAX));
    default: return Scalar(lowest ? INT64_MIN : INT64_MAX);
  }
}

// scatter_reduce (sum, prod, mean, amax, amin; with or without self): the
// CPU function's steps, each a CUDA operator (scatter, scatter_add, rounds
// of distinct targets, a floor division for integer means).
Tensor& scatter_reduce_two_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                                const std::string& reduce, bool include_self, Tensor& out) {
  Tensor meta_out = out.defined() ? meta_copy(out) : Tensor();
  dispatch::scatter_reduce_two_kernels[kCpu](meta_copy(self), dim, meta_copy(index), meta_copy(src), reduce,
                                             include_self, meta_out);  // checks
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  if (!out.defined()) {
    out = ember::empty_like(self, std::nullopt, std::nullopt, MemoryFormat::Contiguous);
    out.copy_(self);
  } else if (!out.is_same(self)) {
    resize_output(out, self.sizes());
    out.copy_(self);
  }
  if (index.numel() == 0) return out;
  const Device cpu(DeviceType::CPU);
  const int64_t size = self.dim() == 0 ? 1 : self.sizes()[d];
  if (ember::min(index).to(cpu).item<int64_t>() < 0 || ember::max(index).to(cpu).item<int64_t>() >= size) {
    Tensor on_cpu;
    dispatch::scatter_reduce_two_kernels[kCpu](self.to(cpu), dim, index.to(cpu), src.to(cpu), reduce, include_self,
                                               on_cpu);
  }
  if (self.dtype() == ScalarType::Bool && reduce != "sum" && reduce != "mean") {
    // PyTorch's CUDA scatter kernel of prod, amax and amin takes no bool.
    native::math::not_implemented_for("cuda_scatter_gather_base_kernel_func", self.dtype());
  }
  if (!include_self) out.copy_(ember::scatter(out, d, index, reduce_identity(reduce, self.dtype())));
  Tensor taken = src;
  for (int64_t k = 0; k < index.dim(); ++k) taken = taken.narrow(k, 0, index.sizes()[k]);
  if (reduce == "sum" || reduce == "mean") {
    out.copy_(ember::scatter_add(out, d, index, taken));
  } else {
    Tensor work = out.is_contiguous() ? out : out.contiguous();
    if (reduce == "prod") {
      scatter_rounds(work, d, index, src, [](const Tensor& a, const Tensor& b) { return ember::mul(a, b); });
    } else if (reduce == "amax") {
      scatter_rounds(work, d, index, src, [](const Tensor& a, const Tensor& b) { return ember::maximum(a, b); });
    } else {
      scatter_rounds(work, d, index, src, [](const Tensor& a, const Tensor& b) { return ember::minimum(a, b); });
    }
    if (!work.is_same(out)) out.copy_(work);
  }
  if (reduce == "mean") {
    Tensor count = ember::full(self.sizes(), Scalar(include_self ? 1.0 : 0.0), self.dtype(), self.device());
    count = ember::scatter_add(count, d, index, ember::ones(index.sizes(), self.dtype(), self.device()));
    count.masked_fill_(ember::eq(count, Scalar(0)), Scalar(1));
    out.copy_(is_floating_type(self.dtype()) ? ember::div(out, count) : ember::div(out, count, std::string("floor")));
  }
  return out;
}

// histc as PyTorch's CUDA kernel bins: ((x - min) * bins) / (max - min) in
// the accumulate type (float for float32 and the 16-bit floats), truncated,
// the top edge in the last bin, values outside [min, max] skipped; counts by
// index_add. A range from the data (min == max) is read back.
Tensor& histc_cuda(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max, Tensor& out) {
  if (!is_floating_type(self.dtype())) native::math::not_implemented_for("histogram_cuda", self.dtype());
  Tensor meta_out = out.defined() ? meta_copy(out) : Tensor();
  dispatch::histc_kernels[kCpu](meta_copy(self), bins, min, max, meta_out);  // checks
  const Device device = self.device(), cpu(DeviceType::CPU);
  double lo = min.to_double(), hi = max.to_double();
  if (lo == hi && self.numel() > 0) {
    lo = ember::min(self).to(cpu).to(ScalarType::Double).item<double>();
    hi = ember::max(self).to(cpu).to(ScalarType::Double).item<double>();
  }
  if (lo == hi) lo -= 1, hi += 1;
  EMBER_CHECK(!(lo > hi), "torch.histc: max must be larger than min");
  EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  const ScalarType acc = self.dtype() == ScalarType::Double ? ScalarType::Double : ScalarType::Float;
  const auto number = [&](double v) { return ember::full({}, Scalar(v), acc, device); };
  const Tensor x = self.reshape({-1}).to(acc);
  const Tensor in_range = ember::logical_and(ember::ge(x, Scalar(lo)), ember::le(x, Scalar(hi)));
  const Tensor scaled = ember::div(ember::mul(ember::sub(x, number(lo)), number(static_cast<double>(bins))),
                                   ember::sub(number(hi), number(lo)));
  Tensor pos = scaled.to(ScalarType::Long);
  pos = ember::where(ember::eq(pos, Scalar(bins)), ember::full({}, Scalar(bins - 1), ScalarType::Long, device), pos);
  const Tensor chosen = ember::masked_select(pos, in_range);
  const Tensor counts = ember::index_add(ember::zeros({bins}, self.dtype(), device), 0, chosen,
                                         ember::ones({chosen.numel()}, self.dtype(), device));
  if (!out.defined()) return out = counts;
  resize_output(out, {bins});
  out.copy_(counts);
  return out;
}

[[maybe_unused]] const bool g_registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::fill__Tensor_kernels[cuda] = &fill_tensor_cuda;
  dispatch::tril_kernels[cuda] = &tril_cuda;
  dispatch::triu_kernels[cuda] = &triu_cuda;
  dispatch::flip_kernels[cuda] = &flip_cuda;
  dispatch::trace_kernels[cuda] = &trace_cuda;
  dispatch::repeat_interleave_Tensor_kernels[cuda] = &repeat_interleave_cuda;
  dispatch::searchsorted_Tensor_kernels[cuda] = &searchsorted_cuda;
  dispatch::masked_scatter_kernels[cuda] = &masked_scatter_cuda;
  dispatch::put_kernels[cuda] = &put_cuda;
  dispatch::bincount_kernels[cuda] = &bincount_cuda;
  dispatch::_unique2_kernels[cuda] = &unique2_cuda;
  dispatch::_unique_consecutive_kernels[cuda] = &unique_consecutive_cuda;
  dispatch::scatter_reduce_kernels[cuda] = &scatter_reduce_cuda;
  dispatch::scatter_value_reduce_kernels[cuda] = &scatter_value_reduce_cuda;
  dispatch::scatter_reduce_two_kernels[cuda] = &scatter_reduce_two_cuda;
  dispatch::histc_kernels[cuda] = &histc_cuda;
  dispatch::median_kernels[cuda] = &median_cuda;
  dispatch::median_dim_kernels[cuda] = &median_dim_cuda;
  dispatch::nanmedian_kernels[cuda] = &nanmedian_cuda;
  dispatch::nanmedian_dim_kernels[cuda] = &nanmedian_dim_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
