// Errors raised by the generated device dispatch.
#include "ember/ops/BuildInfo.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::dispatch {

static_assert(kNumDeviceTypes == 3, "tools/codegen/cpp.py DEVICE_TYPES lists the device types of core/Device.h");

void missing_kernel(const char* op, DeviceType device) {
  if (device == DeviceType::Meta) {
    throw NotImplementedError(str_cat("aten::", op,
                                      ": attempted to run this operator with Meta tensors, but there "
                                      "was no fake impl or Meta kernel registered."));
  }
  if (device == DeviceType::CUDA && cuda_version().empty()) {
    throw Error(str_cat("Could not run '", op, "' on a CUDA tensor: Ember was built without CUDA"));
  }
  throw NotImplementedError(str_cat("Could not run '", op, "' with arguments from the '",
                                    device == DeviceType::CUDA ? "CUDA" : "CPU",
                                    "' backend: no kernel is registered for it"));
}

}  // namespace ember::dispatch
