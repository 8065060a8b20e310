// Argument checks and PyTorch messages shared by the native functions.
#include "ember/ops/OpChecks.h"

#include <cmath>

#include "ember/ops/Ops.h"
#include "ember/ops/Pointwise.h"
#include "ember/ops/TensorIterator.h"

namespace ember::native {

namespace math {

void not_implemented_for(const char* kernel, ScalarType t) {
  throw NotImplementedError(str_cat("\"", kernel, "\" not implemented for '", dtype_message_name(t), "'"));
}

void check_scalar_fits(const Scalar& s, ScalarType t, bool reduced_floats, bool float32) {
  const char* name = nullptr;
  double lo = 0, hi = 0;
  switch (t) {
    // Unsigned types accept negative values down to -max, which wrap.
    case ScalarType::Byte:
      name = "uint8_t";
      lo = -255;
      hi = 255;
      break;
    case ScalarType::Char:
      name = "int8_t";
      lo = -128;
      hi = 127;
      break;
    case ScalarType::Short:
      name = "int16_t";
      lo = -32768;
      hi = 32767;
      break;
    case ScalarType::Int:
      name = "int";
      lo = -2147483648.0;
      hi = 2147483647.0;
      break;
    case ScalarType::Half:
      if (!reduced_floats) return;
      name = "c10::Half";
      lo = -65504;
      hi = 65504;
      break;
    case ScalarType::BFloat16:
      if (!reduced_floats) return;
      name = "c10::BFloat16";
      lo = -3.3895313892515355e38;
      hi = 3.3895313892515355e38;
      break;
    case ScalarType::Float:
      if (!float32) return;
      name = "float";
      lo = -3.4028234663852886e38;
      hi = 3.4028234663852886e38;
      break;
    default: return;
  }
  const double v = s.to_double();
  if (is_floating_type(t) && !std::isfinite(v)) return;  // inf and nan convert
  EMBER_CHECK(v >= lo && v <= hi, "value cannot be converted to type ", name, " without overflow");
}

Tensor scalar_tensor_checked(const Scalar& s, ScalarType t) {
  check_scalar_fits(s, t, /*reduced_floats=*/false, /*float32=*/true);
  return full({}, s, t);
}

Tensor checked_segment_offsets(const Tensor& data, const Tensor& offsets, int64_t axis) {
  EMBER_CHECK(axis >= 0 && axis < data.dim(), "segment_reduce(): axis ", axis, " out of range");
  EMBER_CHECK(offsets.dim() == axis + 1, "segment_reduce(): Expected lengths/offsets to have axis + 1 dimensions");
  EMBER_CHECK(offsets.size(-1) >= 1, "segment_reduce(): expected at least one offset");
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) {
    EMBER_CHECK(offsets.size(d) == data.size(d), "segment_reduce(): offsets of shape ", shape_string(offsets.sizes()),
                " do not match data of shape ", shape_string(data.sizes()), " before axis ", axis);
    outer *= data.size(d);
  }
  const Tensor offs = offsets.to(Device(DeviceType::CPU)).to(ScalarType::Long).contiguous();
  const int64_t segments = offs.size(-1) - 1, size = data.size(axis);
  const int64_t* p = static_cast<const int64_t*>(offs.data_ptr());
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t* row = p + o * (segments + 1);
    for (int64_t s = 0; s < segments; ++s) {
      EMBER_CHECK(row[s + 1] - row[s] >= 0,
                  "Expected segment_length >= 0 to be true, but got false.  (Could this error message be improved?  "
                  "If so, please report an enhancement request to PyTorch.)");
      EMBER_CHECK(row[s] >= 0 && row[s + 1] <= size, "segment_reduce(): segment [", row[s], ", ", row[s + 1],
                  ") lies outside the ", size, " rows along axis ", axis);
    }
  }
  return offs;
}

}  // namespace math

void check_pointwise_scalar(const TensorIterator& it, const Scalar& s, bool opmath) {
  if (it.is_meta()) return;
  ScalarType t = it.common_dtype();
  if (opmath && (t == ScalarType::Half || t == ScalarType::BFloat16)) t = ScalarType::Float;
  if (is_complex_type(t) || t == ScalarType::Bool) return;
  if (s.is_complex() && s.to_complex().imag() != 0) {
    const char* name = t == ScalarType::Double     ? "double"
                       : t == ScalarType::Float    ? "float"
                       : t == ScalarType::Half     ? "c10::Half"
                       : t == ScalarType::BFloat16 ? "c10::BFloat16"
                                                   : (t == ScalarType::Long ? "int64_t" : nullptr);
    if (name == nullptr) {
      math::check_scalar_fits(Scalar(1e300), t, true, true);  // names the integer type
    }
    throw Error(str_cat("value cannot be converted to type ", name, " without overflow"));
  }
  if (t == ScalarType::Long) {
    if (s.is_integral() && !s.is_big_unsigned()) return;  // a Python int below 2**63 fits int64_t
    const double v = s.to_double();
    EMBER_CHECK(v >= -9223372036854775808.0 && v < 9223372036854775808.0,
                "value cannot be converted to type int64_t without overflow");
    return;
  }
  math::check_scalar_fits(s.is_complex() ? Scalar(s.to_double()) : s, t, /*reduced_floats=*/true,
                          /*float32=*/true);
}

}  // namespace ember::native
