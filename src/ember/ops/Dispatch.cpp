// Errors raised by the generated device dispatch.
#include "ember/ops/Dispatch.h"

#include <string_view>

#include "ember/ops/BuildInfo.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::dispatch {

static_assert(kNumDeviceTypes == 20, "tools/codegen/cpp.py DEVICE_TYPES lists the device types of core/Device.h");

void missing_kernel(const char* op, DeviceType device) {
  // Schema names come without the namespace ("neg", "cumsum.out").
  const char* ns = std::string_view(op).substr(0, 6) == "aten::" ? "" : "aten::";
  if (device == DeviceType::Meta) {
    throw NotImplementedError(str_cat(ns, op,
                                      ": attempted to run this operator with Meta tensors, but there "
                                      "was no fake impl or Meta kernel registered."));
  }
  if (!has_backend(device)) no_backend_error(device, op);
  if (device == DeviceType::CUDA && cuda_version().empty()) {
    throw Error(str_cat("Could not run '", ns, op, "' on a CUDA tensor: Ember was built without CUDA"));
  }
  throw NotImplementedError(str_cat("Could not run '", ns, op, "' with arguments from the '",
                                    device == DeviceType::CUDA ? "CUDA" : "CPU",
                                    "' backend. This could be because the operator doesn't exist for this backend, "
                                    "or was omitted during the selective/custom build process (if using custom "
                                    "build)."));
}

void check_same_device_of_cuda_call(const char* method, std::initializer_list<NamedTensor> args) {
  const NamedTensor* first = nullptr;
  for (const NamedTensor& a : args) {
    if (!a.tensor || !a.tensor->defined()) continue;
    if (a.tensor->is_meta()) return;
    if (a.tensor->unsafeGetTensorImpl()->is_wrapped_number()) continue;
    if (!first) {
      first = &a;
    } else if (a.tensor->device() != first->tensor->device()) {
      throw Error(str_cat("Expected all tensors to be on the same device, but got ", a.name, " is on ",
                          a.tensor->device().str(), ", different from other tensors on ", first->tensor->device().str(),
                          " (when checking argument in method ", method, ")"));
    }
  }
}

}  // namespace ember::dispatch
