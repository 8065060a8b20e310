// CPU reductions: argument checks, result dtypes and shapes, then one call
// into the reduction kernels (see Note [Reduction plan] in ReduceStubs.h),
// skipped for meta results (Note [Meta tensors]).
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <optional>

#include "ember/cpu/OpMessages.h"
#include "ember/cpu/ReduceStubs.h"
#include "ember/ops/Dispatch.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/LimitedTypes.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(ReduceFn, reduce_stub);
EMBER_DEFINE_DISPATCH(NormFn, norm_stub);
EMBER_DEFINE_DISPATCH(VarFn, var_stub);
EMBER_DEFINE_DISPATCH(LogSumExpFn, logsumexp_stub);
EMBER_DEFINE_DISPATCH(ArgReduceFn, arg_reduce_stub);
EMBER_DEFINE_DISPATCH(ComplexRowSumFn, complex_row_sum_stub);
EMBER_DEFINE_DISPATCH(ScanFn, scan_stub);
}  // namespace ember::cpu

namespace ember::native {

namespace {

using cpu::ReduceOp;
using cpu::ReducePlan;
using DimList = std::optional<std::vector<int64_t>>;

bool is_integral_or_bool(ScalarType t) { return is_integral_type(t, /*include_bool=*/true); }

// Reduced dims as a mask over self's dims (a 0-dim tensor counts as 1-D).
// None reduces everything; an empty list does too when empty_reduces_all
// (all/any take an empty list as "reduce nothing", as in PyTorch).
std::vector<bool> make_mask(const Tensor& self, const DimList& dim, bool empty_reduces_all = true) {
  const int64_t nd = self.dim();
  std::vector<bool> mask(static_cast<size_t>(std::max<int64_t>(nd, 1)), false);
  if (!dim || (dim->empty() && empty_reduces_all)) {
    std::fill(mask.begin(), mask.end(), true);
    return mask;
  }
  for (int64_t d : *dim) {
    const int64_t w = maybe_wrap_dim(d, nd);
    EMBER_CHECK(!mask[w], "dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  return mask;
}

DimList single_dim(int64_t d) { return std::vector<int64_t>{d}; }

DimVector reduced_shape(const Tensor& self, const std::vector<bool>& mask, bool keepdim) {
  DimVector shape;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!mask[d]) {
      shape.push_back(self.sizes()[d]);
    } else if (keepdim) {
      shape.push_back(1);
    }
  }
  return shape;
}

int64_t reduced_numel(const Tensor& self, const std::vector<bool>& mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (mask[d]) n *= self.sizes()[d];
  }
  return n;
}

// Builds the plan for reducing `in` over mask into the contiguous `out`.
ReducePlan make_plan(const Tensor& in, const std::vector<bool>& mask, const Tensor& out) {
  ReducePlan p;
  const int64_t nd = in.dim();
  struct D {
    int64_t size, stride;
  };
  std::vector<D> kept, red;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t sz = in.sizes()[d];
    if (mask[d]) {
      p.reduce_numel *= sz;
      if (sz != 1) red.push_back({sz, in.strides()[d]});
    } else {
      p.num_outputs *= sz;
      if (sz != 1) kept.push_back({sz, in.strides()[d]});
    }
  }
  // Kept dims: merge an outer dim into the next inner one when they step evenly.
  std::vector<D> kc;
  for (const D& k : kept) {
    if (!kc.empty() && kc.back().stride == k.stride * k.size) {
      kc.back() = {kc.back().size * k.size, k.stride};
    } else {
      kc.push_back(k);
    }
  }
  // Reduced dims: order by stride (innermost last), then merge.
  std::stable_sort(red.begin(), red.end(), [](const D& a, const D& b) { return a.stride > b.stride; });
  std::vector<D> rc;
  for (const D& r : red) {
    if (!rc.empty() && rc.back().stride == r.stride * r.size) {
      rc.back() = {rc.back().size * r.size, r.stride};
    } else {
      rc.push_back(r);
    }
  }
  for (const D& k : kc) {
    p.out_sizes.push_back(k.size);
    p.out_strides.push_back(k.stride);
  }
  for (const D& r : rc) {
    p.red_sizes.push_back(r.size);
    p.red_strides.push_back(r.stride);
  }
  p.in = in.data_ptr();
  p.out = out.data_ptr();
  p.in_dtype = in.dtype();
  p.out_dtype = out.dtype();
  return p;
}

// For reductions a repeated element cannot change (max, min, all, any):
// drops the reduced dims of stride 0 (an expanded input reads each element
// once, not once per repeat).
void drop_repeats(ReducePlan& p) {
  if (p.reduce_numel == 0) return;
  ReducePlan q = p;
  q.red_sizes = DimVector();
  q.red_strides = DimVector();
  q.reduce_numel = 1;
  for (size_t d = 0; d < p.red_sizes.size(); ++d) {
    if (p.red_strides[d] == 0) continue;
    q.red_sizes.push_back(p.red_sizes[d]);
    q.red_strides.push_back(p.red_strides[d]);
    q.reduce_numel *= p.red_sizes[d];
  }
  p = std::move(q);
}

// Plan for an index-returning reduction over the single dim d.
ReducePlan make_arg_plan(const Tensor& in, int64_t d, const Tensor& values, const Tensor& indices) {
  std::vector<bool> mask(static_cast<size_t>(std::max<int64_t>(in.dim(), 1)), false);
  mask[d] = true;
  ReducePlan p = make_plan(in, mask, indices);
  if (in.dim() > 0 && in.sizes()[d] == 1) {
    p.red_sizes.resize(0);
    p.red_strides.resize(0);
  }
  p.out = values.defined() ? values.data_ptr() : nullptr;
  p.out2 = indices.data_ptr();
  p.out_dtype = in.dtype();
  return p;
}

// Hands the result to the caller: as the output, or copied into out=.
Tensor& deliver(Tensor& out, const Tensor& result) {
  if (!out.defined()) {
    out = result;
    return out;
  }
  resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

// Sum-like result dtype: integers (and bool) accumulate into int64.
ScalarType sum_like_dtype(const Tensor& self, std::optional<ScalarType> dtype, const Tensor& out) {
  if (dtype) {
    // A dtype= and an out= (or the in-place form) must agree.
    EMBER_CHECK(!out.defined() || !out.is_same(self) || self.dtype() == *dtype,
                "Bad in-place call: input tensor dtype ", cpp_type_name(self.dtype()), " and output tensor dtype ",
                cpp_type_name(*dtype), " should match");
    check_out_dtype(out, *dtype);
    return *dtype;
  }
  if (out.defined()) return out.dtype();
  return is_integral_or_bool(self.dtype()) ? ScalarType::Long : self.dtype();
}

// The product of complex values over the dims in mask, in PyTorch's order
// (the reduction kernel's Note [Product order]).
Tensor complex_prod(const Tensor& self, const std::vector<bool>& mask, bool keepdim, ScalarType rtype) {
  Tensor result = ember::empty(reduced_shape(self, mask, keepdim), rtype, self.device());
  if (result.is_meta() || result.numel() == 0) return result;
  dispatch::check_cpu_only("aten::prod", self);
  Tensor in = self.to(rtype);
  ReducePlan p = make_plan(in, mask, result);
  cpu::kernel_for(cpu::reduce_stub, in, "aten::prod")(p, ReduceOp::Prod, 1.0);
  return result;
}

// The sum of complex values as the sum of their (re, im) pairs: the real
// kernel over view_as_real.
Tensor complex_pair_sum(const Tensor& in, const std::vector<bool>& mask, bool keepdim, ScalarType rtype) {
  Tensor pairs = ember::view_as_real(in);
  // (a 0-dim tensor's mask has one entry; its pairs have one dimension)
  std::vector<bool> pair_mask(mask.begin(), mask.begin() + std::min<size_t>(mask.size(), in.dim()));
  pair_mask.push_back(false);
  Tensor sums = ember::empty(reduced_shape(pairs, pair_mask, keepdim), to_real_type(rtype), in.device());
  ReducePlan p = make_plan(pairs, pair_mask, sums);
  if (!sums.is_meta()) cpu::kernel_for(cpu::reduce_stub, in, "aten::sum")(p, ReduceOp::Sum, 1.0);
  return ember::view_as_complex(sums);
}

// Runs a sum/nansum/prod/mean reduction producing rtype.
Tensor& sum_like(const Tensor& self, const std::vector<bool>& mask, bool keepdim, ScalarType rtype, ReduceOp op,
                 bool mean, Tensor& out) {
  if (is_complex_type(rtype) && op == ReduceOp::Prod) return deliver(out, complex_prod(self, mask, keepdim, rtype));
  if (is_complex_type(rtype)) {
    // The kernel's dtype check: an empty input reaches no kernel (PyTorch's zeros).
    EMBER_CHECK_TYPE(NotImplementedError, op == ReduceOp::Sum || self.numel() == 0,
                     "\"nansum_cpu\" not implemented for '", dtype_message_name(rtype), "'");
    const Tensor in = self.dtype() == rtype ? self : self.to(rtype);
    Tensor result = ember::empty(reduced_shape(in, mask, keepdim), rtype, self.device());
    ReducePlan cp = make_plan(in, mask, result);
    // One contiguous reduced dim, each output summed serially: PyTorch's
    // complex row sum (Note [Complex sums]).
    const bool rows = cp.red_sizes.size() == 1 && cp.red_strides[0] == 1 &&
                      (cp.num_outputs > 1 || cp.reduce_numel < 32768 || get_num_threads() <= 1);
    if (rows && in.is_cpu() && !result.is_meta()) {
      cpu::kernel_for(cpu::complex_row_sum_stub, self, "aten::sum")(cp);
    } else {
      result = complex_pair_sum(in, mask, keepdim, rtype);
    }
    // A complex mean is the sum divided by the count as a complex number, as
    // PyTorch's (a NaN or infinite real part makes the imaginary part NaN).
    if (mean && !result.is_meta()) {
      result = ember::div(result, ember::full({}, Scalar(static_cast<double>(cp.reduce_numel)), rtype, self.device()));
    }
    return deliver(out, result);
  }
  Tensor in = self;
  const bool widen = is_integral_or_bool(self.dtype()) && rtype == ScalarType::Long;
  // nansum of floats into an integer dtype: nan_to_num before the cast (NaN 0, infinities the
  // dtype's extremes), as PyTorch's.
  if (op == ReduceOp::NanSum && is_floating_type(self.dtype()) && !is_floating_type(rtype) && !self.is_meta()) {
    in = ember::nan_to_num(self, 0.0, std::nullopt, std::nullopt);
  }
  if (rtype != self.dtype() && !widen) in = in.to(rtype);
  Tensor result = ember::empty(reduced_shape(self, mask, keepdim), rtype, self.device());
  ReducePlan p = make_plan(in, mask, result);
  const double divisor = mean ? static_cast<double>(p.reduce_numel) : 1.0;
  if (!result.is_meta()) cpu::kernel_for(cpu::reduce_stub, self, "aten::sum")(p, op, divisor);
  return deliver(out, result);
}

Tensor& mean_impl(const Tensor& self, const DimList& dim, bool keepdim, std::optional<ScalarType> dtype, Tensor& out) {
  if (dtype) {
    EMBER_CHECK(is_floating_type(*dtype) || is_complex_type(*dtype),
                "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex "
                "dtype. Got: ",
                dtype_message_name(*dtype));
  } else {
    EMBER_CHECK(is_floating_type(self.dtype()) || is_complex_type(self.dtype()),
                "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
                "Got: ",
                dtype_message_name(self.dtype()));
  }
  ScalarType rtype = dtype ? *dtype : self.dtype();
  if (out.defined()) {
    if (dtype) check_out_dtype(out, *dtype);
    EMBER_CHECK(is_floating_type(out.dtype()) || is_complex_type(out.dtype()), "result type ",
                dtype_message_name(rtype), " can't be cast to the desired output type ",
                dtype_message_name(out.dtype()));
    rtype = out.dtype();
  }
  std::vector<bool> mask = make_mask(self, dim);
  return sum_like(self, mask, keepdim, rtype, ReduceOp::Sum, /*mean=*/true, out);
}

// The reduction-on-empty checks of max/min/amax/amin/argmax/argmin.
void check_nonempty_dims(const char* name, const Tensor& self, const std::vector<bool>& mask, bool dims_given) {
  if (self.numel() != 0) return;
  if (!dims_given) {
    throw Error(str_cat(name,
                        "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                        "reduction dim with the 'dim' argument."));
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    EMBER_CHECK_TYPE(IndexError, !mask[d] || self.sizes()[d] != 0, name, "(): Expected reduction dim ", d,
                     " to have non-zero size.");
  }
}

Tensor& minmax_values(const char* name, const Tensor& self, IntArrayRef dims, bool keepdim, bool is_max, Tensor& out,
                      bool out_may_cast = false) {
  DimList dl = dims.vec();
  std::vector<bool> mask = make_mask(self, dl);
  // PyTorch checks out='s dtype before the dims of an empty input.
  if (out_may_cast && out.defined()) {
    const bool can_cast = !(is_floating_type(self.dtype()) && !is_floating_type(out.dtype())) &&
                          !(self.dtype() != ScalarType::Bool && out.dtype() == ScalarType::Bool);
    EMBER_CHECK(can_cast,
                "Expected canCast( typeMetaToScalarType(self.dtype()), typeMetaToScalarType(out.dtype())) to "
                "be true, but got false.  (Could this error message be improved?  If so, please report an "
                "enhancement request to PyTorch.)");
  }
  EMBER_CHECK(out_may_cast || !out.defined() || out.dtype() == self.dtype(),
              "Expected the dtype for input and out to match, but got ", dtype_message_name(self.dtype()),
              " for input's dtype and ", dtype_message_name(out.dtype()), " for out's dtype.");
  check_nonempty_dims(name, self, mask, !dims.empty());
  if (self.is_complex() && !self.is_meta())
    math::not_implemented_for(self.device().type == DeviceType::CUDA ? (is_max ? "max_values_cuda" : "min_values_cuda")
                                                                     : (is_max ? "max_values_cpu" : "min_values_cpu"),
                              self.dtype());
  Tensor result = ember::empty(reduced_shape(self, mask, keepdim), self.dtype(), self.device());
  ReducePlan p = make_plan(self, mask, result);
  drop_repeats(p);
  if (!result.is_meta())
    cpu::kernel_for(cpu::reduce_stub, self, "aten::amax")(p, is_max ? ReduceOp::Max : ReduceOp::Min, 1.0);
  return deliver(out, result);
}

std::tuple<Tensor, Tensor> minmax_dim(const char* name, const Tensor& self, int64_t dim, bool keepdim, bool is_max) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  std::vector<bool> mask = make_mask(self, single_dim(d));
  check_nonempty_dims(name, self, mask, true);
  EMBER_CHECK(!self.is_complex(), name, "(): does not support complex input");
  DimVector shape = reduced_shape(self, mask, keepdim);
  Tensor values = ember::empty(shape, self.dtype(), self.device());
  Tensor indices = ember::empty(shape, ScalarType::Long, self.device());
  ReducePlan p = make_arg_plan(self, d, values, indices);
  if (!values.is_meta()) cpu::kernel_for(cpu::arg_reduce_stub, self, "aten::argmax")(p, is_max);
  return {values, indices};
}

Tensor& arg_impl(const char* name, const Tensor& self, std::optional<int64_t> dim, bool keepdim, bool is_max,
                 Tensor& out) {
  // The dtype check is the CPU kernel's: PyTorch's meta function accepts bool.
  EMBER_CHECK(self.is_meta() || self.dtype() != ScalarType::Bool, name, "(): does not support bool input");
  check_out_dtype(out, ScalarType::Long);
  Tensor in = self;
  int64_t d = 0;
  DimVector shape;
  if (dim) {
    d = maybe_wrap_dim(*dim, self.dim());
    std::vector<bool> mask = make_mask(self, single_dim(d));
    check_nonempty_dims(name, self, mask, true);
    shape = reduced_shape(self, mask, keepdim);
  } else {
    EMBER_CHECK_TYPE(IndexError, self.numel() != 0, name,
                     "(): Expected reduction dim to be specified for input.numel() == 0.");
    in = self.reshape({-1});
    if (keepdim) shape = DimVector(self.dim(), 1);
  }
  Tensor result = ember::empty(shape, ScalarType::Long, self.device());
  ReducePlan p = make_arg_plan(in, d, Tensor(), result);
  if (!result.is_meta()) cpu::kernel_for(cpu::arg_reduce_stub, self, "aten::argmax")(p, is_max);
  return deliver(out, result);
}

double correction_value(const std::optional<Scalar>& correction) { return correction ? correction->to_double() : 1.0; }

void check_var_dtype(const Tensor& self) {
  EMBER_CHECK(is_floating_type(self.dtype()) || is_complex_type(self.dtype()),
              "std and var only support floating point and complex dtypes");
}

// var/std (and with want_mean, the mean) into fresh tensors.
// `name` is the operator PyTorch's degrees-of-freedom warning names (std, var_mean, ...).
std::tuple<Tensor, Tensor> var_impl(const Tensor& self, const DimList& dim, const std::optional<Scalar>& correction,
                                    bool keepdim, bool take_sqrt, bool want_mean, const char* name = nullptr) {
  check_var_dtype(self);
  if (!name) name = take_sqrt ? (want_mean ? "std_mean" : "std") : (want_mean ? "var_mean" : "var");
  if (is_complex_type(self.dtype())) {
    // The variance of complex numbers is real: the real parts' plus the
    // imaginary parts'; the mean is complex.
    auto [var_re, mean_re] = var_impl(ember::real(self), dim, correction, keepdim, false, want_mean, name);
    auto [var_im, mean_im] = var_impl(ember::imag(self), dim, correction, keepdim, false, want_mean, name);
    Tensor v = ember::add(var_re, var_im);
    if (take_sqrt) v = ember::sqrt(v);
    return {v, want_mean ? ember::complex(mean_re, mean_im) : Tensor()};
  }
  std::vector<bool> mask = make_mask(self, dim);
  DimVector shape = reduced_shape(self, mask, keepdim);
  Tensor result = ember::empty(shape, self.dtype(), self.device());
  Tensor mean = want_mean ? ember::empty(shape, self.dtype(), self.device()) : Tensor();
  // PyTorch warns on every call that leaves no degrees of freedom (an empty reduction included).
  const int64_t outputs = result.numel();
  if (outputs == 0 || static_cast<double>(self.numel() / outputs) - correction_value(correction) <= 0) {
    warn(str_cat(name,
                 "(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
                 "(input numel divided by output numel)."));
  }
  ReducePlan p = make_plan(self, mask, result);
  if (want_mean) p.out2 = mean.data_ptr();
  // One float or double result: deviations from mean() (Note [Variance order]).
  const bool wide = self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double;
  if (!want_mean && wide && p.num_outputs == 1 && self.numel() > 0 && self.device().is_cpu() && !result.is_meta()) {
    p.mean = ember::mean(self).item<double>();
  }
  if (!result.is_meta()) cpu::kernel_for(cpu::var_stub, self, "aten::var")(p, correction_value(correction), take_sqrt);
  return {result, mean};
}

void check_var_out(const Tensor& self, const Tensor& out) {
  check_var_dtype(self);
  if (is_complex_type(self.dtype())) {
    const ScalarType r = to_real_type(self.dtype());
    EMBER_CHECK(!out.defined() || can_cast(r, out.dtype()), "result type ", dtype_message_name(r),
                " can't be cast to the desired output type ", dtype_message_name(out.dtype()));
    return;
  }
  EMBER_CHECK(!out.defined() || is_floating_type(out.dtype()), "result type ", dtype_message_name(self.dtype()),
              " can't be cast to the desired output type ", dtype_message_name(out.dtype()));
}

// The input var_out/std_out reduce: a complex one as it is; a real one in
// out's dtype, but for one float or double result (PyTorch's all-reduce
// reads the input itself and rounds to its dtype before out is filled).
Tensor var_input(const Tensor& self, const DimList& dim, const Tensor& out) {
  if (!out.defined() || is_complex_type(self.dtype()) || out.dtype() == self.dtype()) return self;
  const bool wide = self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double;
  const bool out_16bit = out.dtype() == ScalarType::Half || out.dtype() == ScalarType::BFloat16;
  if (wide && !out_16bit && self.device().is_cpu()) {
    const std::vector<bool> mask = make_mask(self, dim);
    int64_t kept = 1;
    for (int64_t d = 0; d < self.dim(); ++d) kept *= mask[static_cast<size_t>(d)] ? 1 : self.size(d);
    if (kept == 1) return self;
  }
  return self.to(out.dtype());
}

std::optional<Scalar> unbiased_correction(bool unbiased) { return Scalar(int64_t(unbiased ? 1 : 0)); }

Tensor& all_any(const Tensor& self, const DimList& dim, bool keepdim, bool empty_reduces_all, bool is_all,
                Tensor& out) {
  // A uint8 out= makes uint8 the reduction's dtype: PyTorch's loop reads the
  // input converted to uint8 (0.5 and 256 count as zero) unless a single
  // element is reduced (then its truth value is copied).
  if (out.defined() && out.dtype() == ScalarType::Byte && self.dtype() != ScalarType::Byte && self.numel() > 1 &&
      !self.is_meta()) {
    return all_any(self.to(ScalarType::Byte), dim, keepdim, empty_reduces_all, is_all, out);
  }
  // Complex and the limited dtypes' elements count by their truth value (nonzero), as in PyTorch.
  // Limited dtypes are read in their carrier (float8_e8m0fnu has no zero of its own).
  if ((is_complex_type(self.dtype()) || is_convertible_limited_type(self.dtype())) && !self.is_meta()) {
    const Tensor wide = self.to(limited::carrier_of(self.dtype()));
    return all_any(ember::ne(wide, Scalar(0)), dim, keepdim, empty_reduces_all, is_all, out);
  }
  const ScalarType rtype = self.dtype() == ScalarType::Byte ? ScalarType::Byte : ScalarType::Bool;
  // out= may be bool or uint8 whatever the input's dtype.
  EMBER_CHECK(!out.defined() || out.dtype() == ScalarType::Byte || out.dtype() == ScalarType::Bool,
              is_all ? "all" : "any", " only supports bool tensor for result, got: ", dtype_message_name(out.dtype()));
  std::vector<bool> mask = make_mask(self, dim, empty_reduces_all);
  Tensor result = ember::empty(reduced_shape(self, mask, keepdim), rtype, self.device());
  ReducePlan p = make_plan(self, mask, result);
  drop_repeats(p);
  if (!result.is_meta())
    cpu::kernel_for(cpu::reduce_stub, self, "aten::all")(p, is_all ? ReduceOp::All : ReduceOp::Any, 1.0);
  return deliver(out, result);
}

Tensor& scan_impl(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool is_prod, Tensor& out) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const ScalarType rtype = sum_like_dtype(self, dtype, out);
  if (rtype == ScalarType::Bool) {
    throw NotImplementedError(str_cat("\"", is_prod ? "cumprod" : "cumsum", "_out_cpu\" not implemented for 'Bool'"));
  }
  Tensor in = self.to(rtype).contiguous();
  Tensor result = ember::empty(self.sizes(), rtype, self.device());
  if (self.numel() > 0 && !result.is_meta()) {
    int64_t outer = 1, inner = 1, n = self.dim() ? self.sizes()[d] : 1;
    for (int64_t k = 0; k < d; ++k) outer *= self.sizes()[k];
    for (int64_t k = d + 1; k < self.dim(); ++k) inner *= self.sizes()[k];
    const char* op = is_prod ? "aten::cumprod" : "aten::cumsum";
    // The complex scans are host loops; the CUDA scan takes real types only.
    if (rtype == ScalarType::ComplexFloat || rtype == ScalarType::ComplexDouble) dispatch::check_cpu_only(op, self);
    cpu::kernel_for(cpu::scan_stub, self, op)(in, result, outer, n, inner, is_prod);
  }
  return deliver(out, result);
}

}  // namespace

// ---- sum, nansum, mean, prod ------------------------------------------------------

Tensor& sum_dim_out(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool keepdim,
                    std::optional<ScalarType> dtype, Tensor& out) {
  // uint16/32/64 sum as int64 (uint64 by its bits, wrapping as PyTorch's does): Note [Limited dtypes].
  if (is_wide_unsigned_type(self.dtype()) && (!dtype || *dtype == ScalarType::Long)) {
    return sum_dim_out(self.to(ScalarType::Long), dim, keepdim, dtype, out);
  }
  std::vector<bool> mask = make_mask(self, dim);
  return sum_like(self, mask, keepdim, sum_like_dtype(self, dtype, out), ReduceOp::Sum, false, out);
}

Tensor& sum_out(const Tensor& self, std::optional<ScalarType> dtype, Tensor& out) {
  return sum_dim_out(self, std::nullopt, false, dtype, out);
}

Tensor& nansum_out(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool keepdim,
                   std::optional<ScalarType> dtype, Tensor& out) {
  EMBER_CHECK(self.is_meta() || !self.is_complex(), "nansum on CPU does not support complex inputs");
  EMBER_CHECK(!dtype || !out.defined() || out.dtype() == *dtype,
              "nansum: provided dtype must match dtype of result. Got ", dtype_message_name(out.dtype()), " and ",
              dtype_message_name(*dtype), ".");
  std::vector<bool> mask = make_mask(self, dim);
  const ScalarType rtype = sum_like_dtype(self, dtype, out);
  if (!dtype && out.defined() && is_floating_type(self.dtype()) && !is_floating_type(rtype) && self.numel() != 0) {
    throw NotImplementedError(str_cat("\"nansum_cpu\" not implemented for '", dtype_message_name(rtype), "'"));
  }
  return sum_like(self, mask, keepdim, rtype, ReduceOp::NanSum, false, out);
}

Tensor& mean_out(const Tensor& self, std::optional<ScalarType> dtype, Tensor& out) {
  return mean_impl(self, std::nullopt, false, dtype, out);
}

Tensor& mean_dim_out(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool keepdim,
                     std::optional<ScalarType> dtype, Tensor& out) {
  return mean_impl(self, dim, keepdim, dtype, out);
}

Tensor& prod_out(const Tensor& self, std::optional<ScalarType> dtype, Tensor& out) {
  // uint16/32/64 multiply as int64, as PyTorch's integer prod does (Note [Limited dtypes]).
  if (is_wide_unsigned_type(self.dtype()) && (!dtype || *dtype == ScalarType::Long)) {
    return prod_out(self.to(ScalarType::Long), dtype, out);
  }
  std::vector<bool> mask = make_mask(self, std::nullopt);
  return sum_like(self, mask, false, sum_like_dtype(self, dtype, out), ReduceOp::Prod, false, out);
}

Tensor& prod_dim_out(const Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype, Tensor& out) {
  if (is_wide_unsigned_type(self.dtype()) && (!dtype || *dtype == ScalarType::Long)) {
    return prod_dim_out(self.to(ScalarType::Long), dim, keepdim, dtype, out);  // as prod_out
  }
  std::vector<bool> mask = make_mask(self, single_dim(dim));
  return sum_like(self, mask, keepdim, sum_like_dtype(self, dtype, out), ReduceOp::Prod, false, out);
}

// ---- max, min, amax, amin, argmax, argmin -----------------------------------------------

namespace {
// Note [Signed zero of min() and max()]
// PyTorch's min()/max() of a whole tensor fold its contiguous elements in
// 32-byte vectors (8 float lanes, 4 double; a 16-bit vector as two float
// vectors, the second winning ties), ties going to the later element, then
// fold the lanes: in turn, or as a tree on its AVX2/AVX-512 builds for
// float32 and 16-bit inputs of at least one whole vector (the lane with the
// larger bit-reversed index wins). Threads take consecutive chunks of at
// least 32768 elements; the first chunk wins. The value is the same every
// way; which zero comes out (+0 or -0) is not, so that one is picked here.
template <typename T>
std::optional<bool> winning_zero_is_negative(const T* x, int64_t n, int64_t lanes, int64_t block, bool tree) {
  const int bits = lanes == 8 ? 3 : 2;
  int64_t best_lane = -1, best_half = -1;
  std::optional<bool> negative;
  for (int64_t r = 0; r < n; ++r) {
    const double v = static_cast<double>(x[r]);
    if (v != 0.0) continue;
    int64_t lane = (r % block) % lanes;
    const int64_t half = (r % block) / lanes;
    if (tree) {
      int64_t rev = 0;
      for (int b = 0; b < bits; ++b) rev |= ((lane >> b) & 1) << (bits - 1 - b);
      lane = rev;
    }
    if (lane > best_lane || (lane == best_lane && half >= best_half)) {
      best_lane = lane;
      best_half = half;
      negative = std::signbit(v);
    }
  }
  return negative;
}

// Gives a zero result of min()/max() the sign PyTorch's CPU kernel gives it
// (CUDA tensors keep their kernel's).
void sign_zero_as_torch(const Tensor& self, Tensor& out) {
  const ScalarType t = self.dtype();
  const bool half = t == ScalarType::Half || t == ScalarType::BFloat16;
  if ((!half && t != ScalarType::Float && t != ScalarType::Double) || self.numel() == 0) return;
  if (self.device().type != DeviceType::CPU) return;
  if (out.item<double>() != 0.0) return;
  const Tensor x = self.contiguous();
  const int64_t n = x.numel(), lanes = t == ScalarType::Double ? 4 : 8, block = half ? 2 * lanes : lanes;
  const bool tree_build = cpu_capability() != CpuCapability::Default && t != ScalarType::Double;
  constexpr int64_t kGrain = 32768;
  const int64_t nt =
      n > kGrain && !in_parallel_region() ? std::min<int64_t>(get_num_threads(), (n + kGrain - 1) / kGrain) : 1;
  const int64_t size = (n + nt - 1) / nt;
  const auto pick = [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(x.data_ptr());
    for (int64_t s = 0; s < n; s += size) {
      const int64_t m = std::min(size, n - s);
      if (auto negative = winning_zero_is_negative(p + s, m, lanes, block, tree_build && m >= block)) {
        out.fill_(Scalar(*negative ? -0.0 : 0.0));
        return;
      }
    }
  };
  switch (t) {
    case ScalarType::Float: return pick(float());
    case ScalarType::Double: return pick(double());
    case ScalarType::Half: return pick(Half());
    default: return pick(BFloat16());
  }
}
}  // namespace

Tensor& max_all_out(const Tensor& self, Tensor& out) {
  minmax_values("max", self, {}, false, true, out, true);
  sign_zero_as_torch(self, out);
  return out;
}

Tensor& min_all_out(const Tensor& self, Tensor& out) {
  minmax_values("min", self, {}, false, false, out, true);
  sign_zero_as_torch(self, out);
  return out;
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return minmax_dim("max", self, dim, keepdim, true);
}

std::tuple<Tensor, Tensor> min_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return minmax_dim("min", self, dim, keepdim, false);
}

Tensor& amax_out(const Tensor& self, IntArrayRef dim, bool keepdim, Tensor& out) {
  return minmax_values("amax", self, dim, keepdim, true, out);
}

Tensor& amin_out(const Tensor& self, IntArrayRef dim, bool keepdim, Tensor& out) {
  return minmax_values("amin", self, dim, keepdim, false, out);
}

// hash_tensor: each element's bits as a 64-bit word (floating types through
// double, the others through int64), xor-reduced over dim as PyTorch's
// xor_sum. Composed of other operators, so that every device runs it: the
// reduced dims go last and are folded in halves.
Tensor& hash_tensor_out(const Tensor& self, IntArrayRef dim, bool keepdim, int64_t mode, Tensor& out) {
  EMBER_CHECK(mode == 0, "Unknown hash_tensor mode: ", mode);
  const ScalarType t = self.dtype();
  if (is_complex_type(t) || t == ScalarType::UInt16 || t == ScalarType::UInt32 || t == ScalarType::UInt64)
    math::not_implemented_for(self.device().type == DeviceType::CUDA ? "xor_sum_cuda" : "xor_sum_cpu", t);
  EMBER_CHECK(!out.defined() || out.dtype() == ScalarType::UInt64, "Expected result to be of dtype uint64, but got ",
              dtype_message_name(out.dtype()));
  const std::vector<bool> mask = make_mask(self, dim.vec());
  if (self.numel() == 0) {
    EMBER_CHECK(!dim.empty(),
                "hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                "dim with the 'dim' argument.");
    for (int64_t d = 0; d < self.dim(); ++d) {
      EMBER_CHECK_TYPE(IndexError, !mask[d] || self.sizes()[d] != 0, "hash_tensor: Expected reduction dim ", d,
                       " to have non-zero size.");
    }
  }
  const Tensor bits =
      is_floating_type(t) ? self.to(ScalarType::Double).view(ScalarType::Long) : self.to(ScalarType::Long);
  std::vector<int64_t> perm;
  int64_t k = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!mask[d]) perm.push_back(d);
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (mask[d]) perm.push_back(d), k *= self.sizes()[d];
  }
  Tensor w = (self.dim() == 0 ? bits : bits.permute(perm)).reshape({-1, k});
  if (k == 1) w = w.clone();  // a fresh result, never a view of self
  while (w.size(1) > 1) {
    const int64_t half = w.size(1) / 2;
    Tensor folded = ember::bitwise_xor(w.narrow(1, 0, half), w.narrow(1, half, half));
    if (w.size(1) % 2) folded = ember::cat({folded, w.narrow(1, 2 * half, 1)}, 1);
    w = folded;
  }
  return deliver(out, w.reshape(reduced_shape(self, mask, keepdim)).view(ScalarType::UInt64));
}

Tensor& argmax_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out) {
  EMBER_CHECK(!self.is_complex(), "argmax(): does not support complex input");
  return arg_impl("argmax", self, dim, keepdim, true, out);
}

Tensor& argmin_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out) {
  EMBER_CHECK(!self.is_complex(), "argmin(): does not support complex input");
  return arg_impl("argmin", self, dim, keepdim, false, out);
}

// ---- var, std ---------------------------------------------------------------------------

namespace {
// PyTorch's complex var/std into an out= tensor: the variances of the real and
// of the imaginary parts, each in out's real dtype, added into out, then
// (std) its square root there (a complex one for a complex out).
Tensor& complex_var_into(const Tensor& self, const std::optional<std::vector<int64_t>>& dim,
                         const std::optional<Scalar>& correction, bool keepdim, bool take_sqrt, Tensor& out) {
  const ScalarType r = to_real_type(out.dtype());
  Tensor re = ember::empty({0}, r, self.device()), im = ember::empty({0}, r, self.device());
  var_out(ember::real(self), dim, correction, keepdim, re);
  var_out(ember::imag(self), dim, correction, keepdim, im);
  ember::add_out(out, re, im);
  if (take_sqrt) ember::sqrt_out(out, out);
  return out;
}
}  // namespace

Tensor& var_out(const Tensor& self, std::optional<std::vector<int64_t>> dim, std::optional<Scalar> correction,
                bool keepdim, Tensor& out) {
  check_var_out(self, out);
  if (out.defined() && self.is_complex() && out.dtype() != to_real_type(self.dtype())) {
    return complex_var_into(self, dim, correction, keepdim, false, out);
  }
  const Tensor in = var_input(self, dim, out);
  return deliver(out, std::get<0>(var_impl(in, dim, correction, keepdim, false, false)));
}

Tensor& std_out(const Tensor& self, std::optional<std::vector<int64_t>> dim, std::optional<Scalar> correction,
                bool keepdim, Tensor& out) {
  check_var_out(self, out);
  if (out.defined() && self.is_complex() && out.dtype() != to_real_type(self.dtype())) {
    return complex_var_into(self, dim, correction, keepdim, true, out);
  }
  const Tensor in = var_input(self, dim, out);
  return deliver(out, std::get<0>(var_impl(in, dim, correction, keepdim, true, false)));
}

Tensor var_dim(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool unbiased, bool keepdim) {
  return ember::var(self, dim, unbiased_correction(unbiased), keepdim);
}

Tensor var_unbiased(const Tensor& self, bool unbiased) {
  return ember::var(self, DimList(std::nullopt), unbiased_correction(unbiased), false);
}

Tensor std_dim(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool unbiased, bool keepdim) {
  return ember::std(self, dim, unbiased_correction(unbiased), keepdim);
}

Tensor std_unbiased(const Tensor& self, bool unbiased) {
  return ember::std(self, DimList(std::nullopt), unbiased_correction(unbiased), false);
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& self, std::optional<std::vector<int64_t>> dim,
                                    std::optional<Scalar> correction, bool keepdim) {
  return var_impl(self, dim, correction, keepdim, false, true);
}

std::tuple<Tensor, Tensor> std_mean(const Tensor& self, std::optional<std::vector<int64_t>> dim,
                                    std::optional<Scalar> correction, bool keepdim) {
  return var_impl(self, dim, correction, keepdim, true, true);
}

std::tuple<Tensor, Tensor> var_mean_dim(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool unbiased,
                                        bool keepdim) {
  return ember::var_mean(self, dim, unbiased_correction(unbiased), keepdim);
}

std::tuple<Tensor, Tensor> var_mean_unbiased(const Tensor& self, bool unbiased) {
  return ember::var_mean(self, DimList(std::nullopt), unbiased_correction(unbiased), false);
}

std::tuple<Tensor, Tensor> std_mean_dim(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool unbiased,
                                        bool keepdim) {
  return ember::std_mean(self, dim, unbiased_correction(unbiased), keepdim);
}

std::tuple<Tensor, Tensor> std_mean_unbiased(const Tensor& self, bool unbiased) {
  return ember::std_mean(self, DimList(std::nullopt), unbiased_correction(unbiased), false);
}

// ---- norms, logsumexp ---------------------------------------------------------------------

Tensor& linalg_vector_norm_out(const Tensor& self, const Scalar& ord, std::optional<std::vector<int64_t>> dim,
                               bool keepdim, std::optional<ScalarType> dtype, Tensor& out) {
  const bool complex = is_complex_type_any_tier(self.dtype());
  if (is_float8_type(self.dtype())) {  // PyTorch's norm kernel has no float8 loop
    throw NotImplementedError(str_cat("\"norm_cpu\" not implemented for '", dtype_message_name(self.dtype()), "'"));
  }
  if (self.dtype() == ScalarType::ComplexHalf && !dtype) {  // in complex64, rounded to float16 once (PyTorch's)
    const Tensor r = ember::linalg_vector_norm(self.to(ScalarType::ComplexFloat), ord, dim, keepdim, std::nullopt);
    check_out_dtype(out, ScalarType::Half);
    return deliver(out, r.to(ScalarType::Half));
  }
  if (complex) {
    EMBER_CHECK(!dtype || is_complex_type(*dtype),
                "linalg.vector_norm: dtype should be complex for complex inputs, but got ", dtype_message_name(*dtype));
    // The infinite norms of complex numbers are those of abs(z) (PyTorch's);
    // the others fold the magnitudes in the CPU norm kernel.
    if (std::isinf(ord.to_double()) || self.device().type != DeviceType::CPU) {
      return linalg_vector_norm_out(ember::abs(dtype ? self.to(*dtype) : self), ord, dim, keepdim, std::nullopt, out);
    }
  }
  EMBER_CHECK(complex || is_floating_type(self.dtype()),
              "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
              dtype_message_name(self.dtype()));
  Tensor in = self;
  if (complex && dtype) {
    in = self.to(*dtype);
  } else if (dtype) {
    EMBER_CHECK(is_floating_type(*dtype) && promote_types(self.dtype(), *dtype) == *dtype,
                "linalg.vector_norm: the dtype of the input (", dtype_message_name(self.dtype()),
                ") should be convertible without narrowing to the specified dtype (", dtype_message_name(*dtype), ")");
    in = self.to(*dtype);
  }
  const ScalarType real = complex ? to_real_type(in.dtype()) : in.dtype();
  check_out_dtype(out, real);
  const double p = ord.to_double();
  std::vector<bool> mask = make_mask(self, dim);
  if (p < 0 || std::isinf(p)) {
    bool empty = false;
    for (int64_t d = 0; d < self.dim(); ++d) empty = empty || (mask[d] && self.sizes()[d] == 0);
    if (empty) {
      std::string ord_text =
          std::isinf(p) ? (p > 0 ? "inf" : "-inf") : (ord.is_floating_point() ? str_cat(p) : str_cat(ord.to_long()));
      if (dim && !dim->empty()) {
        // PyTorch names the first empty dim as given (and misses a space after it).
        for (int64_t d : *dim) {
          if (self.sizes()[maybe_wrap_dim(d, self.dim())] == 0) {
            throw Error(str_cat("linalg.vector_norm cannot compute the ", ord_text, " norm on the dimension ", d,
                                "because this dimension is empty and the operation does not have an identity"));
          }
        }
      }
      throw Error(str_cat("linalg.vector_norm cannot compute the ", ord_text,
                          " norm on an empty tensor because the operation does not have an identity"));
    }
  }
  int64_t per_output = 1;
  for (int64_t d = 0; d < self.dim(); ++d) per_output *= mask[d] ? self.sizes()[d] : 1;
  if (per_output == 0 && !self.is_meta()) {
    // Nothing reduced: 0 for every ord that passed the checks above, NaN included (PyTorch's).
    return deliver(out, ember::zeros(reduced_shape(self, mask, keepdim), real, self.device()));
  }
  // (A 0-dim input reduced along a named dim takes PyTorch's power and root.)
  const bool zero_dim_along_dim = self.dim() == 0 && dim && !dim->empty();
  if (per_output == 1 && self.numel() > 0 && !zero_dim_along_dim) {
    // One element per result: PyTorch gives its magnitude for every ord but 0
    // (no power and root: the 2-norm of 1e200 is 1e200).
    const Tensor one = p == 0 ? ember::ne(in, Scalar(0)).to(real) : ember::abs(in);
    return deliver(out, one.contiguous().reshape(reduced_shape(self, mask, keepdim)));
  }
  Tensor result = ember::empty(reduced_shape(self, mask, keepdim), real, self.device());
  ReducePlan p_ = make_plan(in, mask, result);
  if (!result.is_meta()) cpu::kernel_for(cpu::norm_stub, self, "aten::linalg_vector_norm")(p_, p);
  return deliver(out, result);
}

Tensor& logsumexp_out(const Tensor& self, IntArrayRef dim, bool keepdim, Tensor& out) {
  // An empty dim list reduces everything but, as in PyTorch, only keepdim=True
  // (or a 0-dim or empty input) gets a result of the right shape.
  EMBER_CHECK(!dim.empty() || keepdim || self.dim() == 0 || self.numel() == 0,
              "output with shape [] doesn't match the broadcast shape ", shape_string(DimVector(self.dim(), 1)));
  EMBER_CHECK(
      !out.defined() || is_floating_type(out.dtype()) || is_complex_type(out.dtype()),
      "logsumexp(): Expected floating point type for result tensor, but got: ", dtype_message_name(out.dtype()));
  if (is_complex_type(self.dtype()) && !self.is_meta() && self.numel() > 0) {
    // log(sum(exp(z - m))) + m, with m the largest finite real part.
    Tensor m = ember::amax(ember::real(self), dim, /*keepdim=*/true);
    m = ember::where(ember::isinf(m), Scalar(0.0), m);
    Tensor terms = ember::exp(ember::sub(self, m));
    Tensor r;
    if (out.defined() && out.dtype() != self.dtype()) {
      // PyTorch sums into out=, in its dtype (a real one drops the imaginary parts first), then
      // takes the log and adds m there.
      Tensor sum = ember::sum(terms.to(out.dtype()), dim.vec(), /*keepdim=*/true);
      r = ember::add(ember::log(sum), m).to(out.dtype());
    } else {
      r = ember::add(ember::log(ember::sum(terms, dim.vec(), /*keepdim=*/true)), m);
    }
    if (!keepdim) r = dim.empty() ? ember::squeeze(r) : ember::squeeze(r, dim);
    return deliver(out, r);
  }
  if (is_complex_type(self.dtype()) && !self.is_meta()) {
    // Nothing to sum: -inf in the input's complex dtype.
    Tensor r = ember::empty(reduced_shape(self, make_mask(self, dim.vec()), keepdim), self.dtype(), self.device());
    r.fill_(Scalar(-std::numeric_limits<double>::infinity()));
    return deliver(out, r);
  }
  EMBER_CHECK(
      !out.defined() || is_floating_type(out.dtype()),
      "logsumexp(): Expected floating point type for result tensor, but got: ", dtype_message_name(out.dtype()));
  const ScalarType rtype =
      out.defined() ? out.dtype() : (is_floating_type(self.dtype()) ? self.dtype() : get_default_dtype());
  std::vector<bool> mask = make_mask(self, dim.vec());
  if (!self.device().is_cpu()) {
    Tensor in = self.to(rtype);
    Tensor result = ember::empty(reduced_shape(self, mask, keepdim), in.dtype(), self.device());
    ReducePlan p = make_plan(in, mask, result);
    if (!result.is_meta()) cpu::kernel_for(cpu::logsumexp_stub, self, "aten::logsumexp")(p);
    return deliver(out, result);
  }
  const Tensor in = is_floating_type(self.dtype()) ? self : self.to(get_default_dtype());
  if (in.is_meta() || in.numel() == 0) {
    Tensor result = ember::empty(reduced_shape(self, mask, keepdim), rtype, self.device());
    if (!result.is_meta()) result.fill_(Scalar(-std::numeric_limits<double>::infinity()));
    return deliver(out, result);
  }
  // PyTorch's composition, step by step in the input's dtype (each step
  // rounds): log(sum(exp(x - m))) + m, m the max with infinities as 0.
  Tensor m = ember::amax(in, dim, /*keepdim=*/true);
  m = ember::where(ember::eq(ember::abs(m), Scalar(std::numeric_limits<double>::infinity())), Scalar(0.0), m);
  Tensor r = ember::sum(ember::sub(in, m).exp_(), dim.vec(), keepdim, rtype);
  r.log_().add_(keepdim ? m : (dim.empty() ? ember::squeeze(m) : ember::squeeze(m, dim)));
  return deliver(out, r);
}

// ---- all, any -------------------------------------------------------------------------------

Tensor& all_all_out(const Tensor& self, Tensor& out) { return all_any(self, std::nullopt, false, true, true, out); }

Tensor& all_dim_out(const Tensor& self, int64_t dim, bool keepdim, Tensor& out) {
  return all_any(self, single_dim(dim), keepdim, true, true, out);
}

Tensor& all_dims_out(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool keepdim, Tensor& out) {
  return all_any(self, dim, keepdim, /*empty_reduces_all=*/false, true, out);
}

Tensor& any_all_out(const Tensor& self, Tensor& out) { return all_any(self, std::nullopt, false, true, false, out); }

Tensor& any_dim_out(const Tensor& self, int64_t dim, bool keepdim, Tensor& out) {
  return all_any(self, single_dim(dim), keepdim, true, false, out);
}

Tensor& any_dims_out(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool keepdim, Tensor& out) {
  return all_any(self, dim, keepdim, /*empty_reduces_all=*/false, false, out);
}

// ---- scans ------------------------------------------------------------------------------------

Tensor& cumsum_out(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, Tensor& out) {
  // uint16/32/64 accumulate as int64, as PyTorch's integer cumsum does (Note [Limited dtypes]).
  if (is_wide_unsigned_type(self.dtype()) && (!dtype || *dtype == ScalarType::Long)) {
    return cumsum_out(self.to(ScalarType::Long), dim, dtype, out);
  }
  return scan_impl(self, dim, dtype, false, out);
}

Tensor& cumprod_out(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, Tensor& out) {
  return scan_impl(self, dim, dtype, true, out);
}

}  // namespace ember::native
