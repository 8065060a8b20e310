#pragma once
// What the generated native functions of pointwise operators share
// (tools/codegen/pointwise.py): the dtype check and running the stub on the
// operands' device.

#include "ember/ops/DispatchStub.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/DispatchTables.h"
#include "ember/ops/native/LimitedTypes.h"

namespace ember::native {

// Dtype classes a pointwise kernel accepts.
// An operator that takes complex dtypes runs their loops from a stub of its
// own, <op>_complex_stub (cpu/kernels/ComplexKernel.cpp).
enum PointwiseDtypes : unsigned { kBoolDtypes = 1, kIntegralDtypes = 2, kFloatingDtypes = 4, kComplexDtypes = 8 };

inline unsigned pointwise_dtype_class(ScalarType t) {
  if (is_complex_type_any_tier(t)) return kComplexDtypes;
  return t == ScalarType::Bool ? kBoolDtypes : (is_floating_type_any_tier(t) ? kFloatingDtypes : kIntegralDtypes);
}

// The kernel name of a dtype error: PyTorch's CUDA kernels have names of their own.
inline const char* pointwise_error_name(const TensorIterator& it, const char* cpu_name, const char* cuda_name) {
  return it.output().defined() && it.output().is_cuda() ? cuda_name : cpu_name;
}

// The check is the CPU kernel's: a meta iterator runs no kernel and, as
// PyTorch's meta functions, accepts every dtype (unless on_meta).
inline void check_pointwise_dtype(const TensorIterator& it, unsigned accepted, const char* error_name,
                                  bool on_meta = false) {
  if (it.is_meta() && !on_meta) return;
  const ScalarType t = it.common_dtype();
  if (!(pointwise_dtype_class(t) & accepted)) math::not_implemented_for(error_name, t);
}

// Where PyTorch's meta function is a reference implementation that refuses
// some dtypes (logaddexp subtracts its operands: bool raises), meta does too.
inline void check_meta_dtype(const TensorIterator& it, unsigned accepted, const char* op) {
  if (!it.is_meta()) return;
  const ScalarType t = it.common_dtype();
  EMBER_CHECK(pointwise_dtype_class(t) & accepted, op, ": PyTorch's meta function does not take ",
              dtype_message_name(t), " inputs");
}

// The operand of an operator whose CPU kernel makes a contiguous result
// (log_sigmoid): PyTorch's CUDA kernel is an elementwise loop whose result
// follows the input's layout.
inline Tensor contiguous_off_cuda(const Tensor& t) { return t.is_cuda() ? t : t.contiguous(); }

// PyTorch's kernels convert their number arguments to the element type
// (self) or to the type they compute in (opmath: float for float16 and
// bfloat16), and refuse a number that does not fit ("value cannot be
// converted to type float without overflow"). Checked after the dtype
// check, as the conversion happens in the kernel.
void check_pointwise_scalar(const TensorIterator& it, const Scalar& s, bool opmath);

// Runs the stub's kernel for the device, then finishes the iterator (casts
// to an out= tensor of another dtype). The device is the first operand's
// unless the iterator's output is elsewhere: a 0-dim CPU first operand of
// a CUDA operator is a number there (a meta iterator runs no kernel).
template <typename Fn, typename... Args>
void run_pointwise(const DispatchStub<Fn>& stub, DeviceType device, const char* op, TensorIterator& it,
                   const Args&... args) {
  if (!it.is_meta() && is_limited_type(it.common_dtype())) {
    limited::run_pointwise(op, it);  // Note [Limited dtypes]
  } else if (!it.is_meta()) {  // meta: the iterator has computed the output's metadata; no data to loop over
    const DeviceType on = it.output().defined() ? iterator_device_type(it) : device;
    Fn kernel = stub.for_device(on);
    if (!kernel) dispatch::missing_kernel(op, on);
    kernel(it, args...);
  }
  it.finish();
}

}  // namespace ember::native
