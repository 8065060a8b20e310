// The limited dtypes' operations (Note [Limited dtypes]). Every loop here
// converts between one limited dtype and its carrier; everything else is the
// full tier's operators run on carriers, so no kernel is compiled for these
// dtypes and the per-capability kernel libraries do not grow.
#include "ember/ops/native/LimitedTypes.h"

#include <cstring>
#include <string>

#include "ember/core/Float8.h"
#include "ember/ops/Dispatch.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/Functions.h"

namespace ember::native::limited {

namespace {

struct ComplexHalfBits {
  Half re, im;
};
static_assert(sizeof(ComplexHalfBits) == 4, "complex32 is two float16 parts");

[[noreturn]] void refuse(const char* kernel, ScalarType t) {
  throw NotImplementedError(str_cat("\"", kernel, "\" not implemented for '", dtype_message_name(t), "'"));
}

// dst[i] = f(src[i]) over a copy iterator (src broadcast to dst's shape).
template <typename Dst, typename Src, typename F>
void convert_loop(const Tensor& dst, const Tensor& src, F f) {
  // A host loop: the conversion (copy_'s) has no CUDA kernel here.
  dispatch::check_cpu_only("aten::copy_", dst, src);
  auto it = TensorIterator::copy_op(dst, src);
  if (it.is_meta()) return;
  it.for_each([&f](char** d, const int64_t* s, int64_t n) {
    char* o = d[0];
    const char* x = d[1];
    for (int64_t i = 0; i < n; ++i, o += s[0], x += s[1]) {
      Src v;
      std::memcpy(&v, x, sizeof(Src));
      const Dst r = f(v);
      std::memcpy(o, &r, sizeof(Dst));
    }
  });
}

// Limited src into dst of src's carrier (or float64 for uint64 read as a float).
void read_into(const Tensor& dst, const Tensor& src) {
  const ScalarType s = src.dtype(), d = dst.dtype();
  switch (s) {
    case ScalarType::UInt16:
      return convert_loop<int64_t, uint16_t>(dst, src, [](uint16_t v) { return static_cast<int64_t>(v); });
    case ScalarType::UInt32:
      return convert_loop<int64_t, uint32_t>(dst, src, [](uint32_t v) { return static_cast<int64_t>(v); });
    case ScalarType::UInt64:
      if (d == ScalarType::Double) {
        return convert_loop<double, uint64_t>(dst, src, [](uint64_t v) { return static_cast<double>(v); });
      }
      return convert_loop<int64_t, uint64_t>(dst, src, [](uint64_t v) { return static_cast<int64_t>(v); });
    case ScalarType::ComplexHalf:
      return convert_loop<std::complex<float>, ComplexHalfBits>(dst, src, [](ComplexHalfBits v) {
        return std::complex<float>(static_cast<float>(v.re), static_cast<float>(v.im));
      });
    default: {
      float table[256];  // every float8 value, decoded once per call
      for (int b = 0; b < 256; ++b) table[b] = float8::to_float(static_cast<uint8_t>(b), s);
      return convert_loop<float, uint8_t>(dst, src, [&table](uint8_t v) { return table[v]; });
    }
  }
}

// src (of dst's carrier, or float64 for a uint64 dst) into limited dst.
void write_from(const Tensor& dst, const Tensor& src) {
  const ScalarType d = dst.dtype();
  switch (d) {
    case ScalarType::UInt16:
      return convert_loop<uint16_t, int64_t>(dst, src, [](int64_t v) { return static_cast<uint16_t>(v); });
    case ScalarType::UInt32:
      return convert_loop<uint32_t, int64_t>(dst, src, [](int64_t v) { return static_cast<uint32_t>(v); });
    case ScalarType::UInt64:
      if (src.dtype() == ScalarType::Double) {
        return convert_loop<uint64_t, double>(dst, src, [](double v) {
          // x86's conversion: negative values wrap through int64, as PyTorch's do.
          return v < 0 ? static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
        });
      }
      return convert_loop<uint64_t, int64_t>(dst, src, [](int64_t v) { return static_cast<uint64_t>(v); });
    case ScalarType::ComplexHalf:
      return convert_loop<ComplexHalfBits, std::complex<float>>(
          dst, src, [](std::complex<float> v) { return ComplexHalfBits{Half(v.real()), Half(v.imag())}; });
    default: return convert_loop<uint8_t, float>(dst, src, [d](float v) { return float8::from_float(v, d); });
  }
}

// The carrier a conversion between limited l and full-tier f goes through.
ScalarType carrier_with(ScalarType l, ScalarType f) {
  if (l == ScalarType::UInt64 && (is_floating_type(f) || is_complex_type(f))) return ScalarType::Double;
  return carrier_of(l);
}

Tensor to_carrier(const Tensor& t, ScalarType c) {
  Tensor tmp = ember::empty(t.sizes(), c, t.device());
  read_into(tmp, t);
  return tmp;
}

}  // namespace

ScalarType carrier_of(ScalarType t) {
  if (is_wide_unsigned_type(t)) return ScalarType::Long;
  if (is_float8_type(t)) return ScalarType::Float;
  if (t == ScalarType::ComplexHalf) return ScalarType::ComplexFloat;
  if (!is_limited_type(t)) return t;
  refuse("copy_", t);
}

void convert_copy(const Tensor& dst, const Tensor& src) {
  const ScalarType d = dst.dtype(), s = src.dtype();
  if (is_limited_type(s) && !is_convertible_limited_type(s)) refuse("copy_", s);
  if (is_limited_type(d) && !is_convertible_limited_type(d)) refuse("copy_", d);
  if (is_limited_type(s) && is_limited_type(d)) {
    convert_copy(dst, to_carrier(src, carrier_of(s)));
    return;
  }
  if (is_limited_type(s)) {
    const ScalarType c = carrier_with(s, d);
    if (c == d) {
      read_into(dst, src);
    } else if (d == ScalarType::BFloat16 && c == ScalarType::Float) {
      // PyTorch converts a float8 element by element: a NaN becomes 0x7fc0,
      // not the vector form of a float copy (Note [bfloat16 NaN in copies]).
      convert_loop<BFloat16, float>(dst, to_carrier(src, c), [](float v) { return BFloat16(v); });
    } else {
      Tensor tmp = to_carrier(src, c);
      Tensor out = dst;
      out.copy_(tmp);
    }
    return;
  }
  const ScalarType c = carrier_with(d, s);
  write_from(dst, s == c ? src : src.to(c));
}

void fill(const Tensor& dst, const Scalar& value) {
  dispatch::check_cpu_only("aten::fill_.Scalar", dst);  // written on the host
  const ScalarType d = dst.dtype();
  if (!is_convertible_limited_type(d)) {
    // Bit containers, float4 pairs and sub-byte integers take zero bytes only.
    if (value.is_complex() || value.to<double>() != 0) refuse("fill_cpu", d);
    auto it = TensorIterator::nullary_op(dst);
    if (it.is_meta()) return;
    const int64_t size = static_cast<int64_t>(element_size(d));
    it.for_each([size](char** p, const int64_t* s, int64_t n) {
      if (s[0] == size) {
        std::memset(p[0], 0, static_cast<size_t>(n * size));
      } else {
        for (int64_t i = 0; i < n; ++i) std::memset(p[0] + i * s[0], 0, static_cast<size_t>(size));
      }
    });
    return;
  }
  const bool floating_value = value.is_floating_point() || value.is_complex();
  const ScalarType c =
      d == ScalarType::UInt64 && (floating_value || value.is_big_unsigned()) ? ScalarType::Double : carrier_of(d);
  Tensor one = ember::empty({}, c, dst.device());
  one.fill_(value);
  write_from(dst, one);
}

void run_pointwise(const char* op, TensorIterator& it) {
  const ScalarType t = it.common_dtype();
  const std::string full(op);
  const std::string name = full.substr(0, full.find('.'));
  const bool compare = name == "eq" || name == "ne";
  const bool bitwise = name == "bitwise_and" || name == "bitwise_or" || name == "bitwise_xor";
  const bool abs = name == "abs" && is_float8_type(t) && t != ScalarType::Float8_e8m0fnu;
  // PyTorch's isnan is x != x; isinf and isfinite have kernels for a few limited dtypes.
  const bool nan = name == "isnan";
  const bool inf = name == "isinf" || name == "isfinite";
  if (inf && !(t == ScalarType::ComplexHalf || t == ScalarType::Float8_e5m2 || is_wide_unsigned_type(t) ||
               (name == "isfinite" && t == ScalarType::Float8_e8m0fnu))) {
    refuse(name.c_str(), t);
  }
  // float4 pairs compare as their bytes
  const bool bytes = (compare || nan) && t == ScalarType::Float4_e2m1fn_x2;
  if (!((compare || nan || inf) && is_convertible_limited_type(t)) && !(bitwise && is_wide_unsigned_type(t)) && !abs &&
      !bytes) {
    refuse((name + "_cpu").c_str(), t);
  }
  const ScalarType c = bytes ? ScalarType::Byte : carrier_of(t);
  // Each input as the common dtype first (a number wraps as it does in PyTorch), then as the carrier.
  const int ninputs = it.ntensors() - it.noutputs();
  Tensor in[2];
  for (int k = 0; k < ninputs && k < 2; ++k) {
    const Tensor& x = it.operand(it.noutputs() + k);
    EMBER_CHECK(!bytes || x.dtype() == t, "\"", name, "_cpu\" not implemented for '", dtype_message_name(x.dtype()),
                "'");
    in[k] = x.dtype() == t ? x : x.to(t);
    in[k] = bytes ? in[k].view(c) : in[k].to(c);
  }
  Tensor r = abs                     ? ember::abs(in[0])
             : nan                   ? ember::ne(in[0], in[0])
             : name == "isinf"       ? ember::isinf(in[0])
             : name == "isfinite"    ? ember::isfinite(in[0])
             : name == "eq"          ? ember::eq(in[0], in[1])
             : name == "ne"          ? ember::ne(in[0], in[1])
             : name == "bitwise_and" ? ember::bitwise_and(in[0], in[1])
             : name == "bitwise_or"  ? ember::bitwise_or(in[0], in[1])
                                     : ember::bitwise_xor(in[0], in[1]);
  Tensor out = it.operand(0);
  out.copy_(r);
}

namespace {
Tensor& binary_out(const char* kernel, const Tensor& self, const Tensor& other, Tensor& out,
                   Tensor (*op)(const Tensor&, const Tensor&, const Scalar&), const Scalar& alpha, bool uints) {
  const ScalarType t = result_type({&self, &other});
  // float8 multiplies tensor by tensor; by a number PyTorch's reduced-float kernel refuses it.
  const bool wrapped =
      self.unsafeGetTensorImpl()->is_wrapped_number() || other.unsafeGetTensorImpl()->is_wrapped_number();
  if (uints && is_float8_type(t) && wrapped) refuse("mul_cpu_reduced_float", t);
  if (!(t == ScalarType::ComplexHalf || (uints && (is_wide_unsigned_type(t) || is_float8_type(t))))) refuse(kernel, t);
  const ScalarType c = carrier_of(t);
  const Tensor a = (self.dtype() == t ? self : self.to(t)).to(c);
  const Tensor b = (other.dtype() == t ? other : other.to(t)).to(c);
  const Tensor r = op(a, b, alpha);
  if (!out.defined()) {
    out = r.to(t);
  } else {
    const bool inplace = out.is_same(self) || out.is_same(other);
    EMBER_CHECK(!inplace || out.sizes().equals(r.sizes()), "output with shape ", shape_string(out.sizes()),
                " doesn't match the broadcast shape ", shape_string(r.sizes()));
    resize_output(out, r.sizes());
    out.copy_(r);
  }
  return out;
}
}  // namespace

Tensor& abs_out(const Tensor& self, Tensor& out) {
  // complex32's magnitude, computed in float and rounded to float16 once
  const Tensor r = ember::abs(to_carrier(self, ScalarType::ComplexFloat));
  if (!out.defined()) {
    out = r.to(ScalarType::Half);
  } else {
    resize_output(out, r.sizes());
    out.copy_(r);
  }
  return out;
}

Tensor& neg_out(const Tensor& self, Tensor& out) {
  if (self.dtype() != ScalarType::ComplexHalf) refuse("neg_cpu", self.dtype());
  const Tensor r = ember::neg(to_carrier(self, ScalarType::ComplexFloat));
  if (!out.defined()) {
    out = r.to(ScalarType::ComplexHalf);
  } else {
    resize_output(out, r.sizes());
    out.copy_(r);
  }
  return out;
}

Tensor& sgn_out(const Tensor& self, Tensor& out) {
  const Tensor z = to_carrier(self, ScalarType::ComplexFloat);
  const Tensor magnitude = ember::abs(z);
  const Tensor q = ember::div(z, ember::complex(magnitude, ember::zeros_like(magnitude)));
  const Tensor r = ember::masked_fill(q, ember::eq(magnitude, Scalar(0)), Scalar(0));
  if (!out.defined()) out = ember::empty_like(self);
  resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor& conj_physical_out(const Tensor& self, Tensor& out) {
  const Tensor r = ember::conj_physical(to_carrier(self, ScalarType::ComplexFloat));
  // the input's layout, as PyTorch's conjugate keeps it
  if (!out.defined()) out = ember::empty_like(self);
  resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor& mul_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return binary_out(
      "mul_cpu", self, other, out, [](const Tensor& a, const Tensor& b, const Scalar&) { return ember::mul(a, b); },
      Scalar(int64_t(1)), /*uints=*/true);
}

Tensor& add_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  // PyTorch's complex32 kernel rounds alpha to float16 and alpha * other to
  // complex32 before the addition (which it computes in float).
  const auto op = [](const Tensor& a, const Tensor& b, const Scalar& s) {
    if (s.equal(1)) return ember::add(a, b);
    const std::complex<double> c = s.to_complex();
    const Scalar s16(std::complex<double>(static_cast<float>(Half(static_cast<float>(c.real()))),
                                          static_cast<float>(Half(static_cast<float>(c.imag())))));
    const Tensor scaled = ember::mul(b, ember::scalar_tensor(s16, ScalarType::ComplexFloat, b.device()));
    Tensor rounded = ember::empty(scaled.sizes(), ScalarType::ComplexHalf, b.device());
    write_from(rounded, scaled);
    return ember::add(a, to_carrier(rounded, ScalarType::ComplexFloat));
  };
  return binary_out("add_stub", self, other, out, op, alpha, /*uints=*/false);
}

Tensor as_words(const Tensor& t) {
  const ScalarType words[] = {ScalarType::Byte,      ScalarType::Short,     ScalarType::Undefined, ScalarType::Int,
                              ScalarType::Undefined, ScalarType::Undefined, ScalarType::Undefined, ScalarType::Long};
  const size_t size = element_size(t.dtype());
  EMBER_INTERNAL_ASSERT(size >= 1 && size <= 8 && words[size - 1] != ScalarType::Undefined);
  return t.resolve_conj().view(words[size - 1]);
}

Scalar word_of(ScalarType t, const Scalar& value) {
  Tensor one = ember::empty({}, t);
  fill(one, value);
  return Scalar(as_words(one).item<int64_t>());
}

}  // namespace ember::native::limited
