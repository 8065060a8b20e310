// Errors raised by the generated device dispatch.
#include "ember/ops/BuildInfo.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::dispatch {

void missing_kernel(const char* op, DeviceType device) {
  if (device == DeviceType::CUDA && cuda_version().empty()) {
    throw Error(str_cat("Could not run '", op, "' on a CUDA tensor: Ember was built without CUDA"));
  }
  throw NotImplementedError(str_cat("Could not run '", op, "' with arguments from the '",
                                    device == DeviceType::CUDA ? "CUDA" : "CPU",
                                    "' backend: no kernel is registered for it"));
}

}  // namespace ember::dispatch
