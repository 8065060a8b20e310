#pragma once
// What the generated native functions of pointwise operators share
// (tools/codegen/pointwise.py): the dtype check and running the stub on the
// operands' device.

#include "ember/ops/DispatchStub.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::native {

// Dtype classes a pointwise kernel accepts.
enum PointwiseDtypes : unsigned { kBoolDtypes = 1, kIntegralDtypes = 2, kFloatingDtypes = 4 };

inline void check_pointwise_dtype(ScalarType t, unsigned accepted, const char* error_name) {
  const unsigned cls = t == ScalarType::Bool ? kBoolDtypes : (is_floating_type(t) ? kFloatingDtypes : kIntegralDtypes);
  if (!(cls & accepted)) math::not_implemented_for(error_name, t);
}

// Runs the stub's kernel for the device, then finishes the iterator (casts
// to an out= tensor of another dtype). The device is the operands' (a meta
// iterator runs no kernel).
template <typename Fn, typename... Args>
void run_pointwise(const DispatchStub<Fn>& stub, DeviceType device, const char* op, TensorIterator& it,
                   const Args&... args) {
  if (!it.is_meta()) {  // meta: the iterator has computed the output's metadata; no data to loop over
    Fn kernel = stub.for_device(device);
    if (!kernel) dispatch::missing_kernel(op, device);
    kernel(it, args...);
  }
  it.finish();
}

}  // namespace ember::native
