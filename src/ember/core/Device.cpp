#include "ember/core/Device.h"

#include <cctype>
#include <optional>
#include <string_view>

#include "ember/core/NotCompiledError.h"

namespace ember {

namespace {

// PyTorch's names of the backends (its dispatch keys): the type in capitals,
// but Lazy and Vulkan.
std::string backend_name(DeviceType t) {
  if (t == DeviceType::Lazy) return "Lazy";
  if (t == DeviceType::Vulkan) return "Vulkan";
  std::string upper = device_type_name(t);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

constexpr const char* kKnownDeviceTypes =
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, "
    "privateuseone";

}  // namespace

void no_backend_error(DeviceType t, const char* op) {
  switch (t) {
    case DeviceType::CUDA: throw NotCompiledError("Torch not compiled with CUDA enabled");
    case DeviceType::XPU: throw NotCompiledError("Torch not compiled with XPU enabled");
    case DeviceType::MTIA:
      throw NotCompiledError(
          "Torch not compiled with MTIA enabled. Ensure you have `import mtia.host_runtime.torch_mtia.dynamic_library` "
          "in your python src file and include `//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!");
    case DeviceType::HPU:
    case DeviceType::PrivateUse1:
      throw MissingModuleError(str_cat("No module named 'ember.", device_type_name(t), "'"));
    case DeviceType::MKLDNN:
    case DeviceType::OpenGL:
    case DeviceType::OpenCL:
    case DeviceType::IDEEP:
      if (op) {
        throw Error(str_cat("This is a grandfathered Caffe2 device type ", device_type_name(t),
                            ", it shouldn't ever convert to a DispatchKey.  File a bug describing what you were "
                            "doing if you think this is in error."));
      }
      break;
    case DeviceType::Lazy:
      if (!op) op = "empty.memory_format";
      break;
    default: break;
  }
  if (!op) throw Error(str_cat("PyTorch is not linked with support for ", device_type_name(t), " devices"));
  const char* ns = std::string_view(op).substr(0, 6) == "aten::" ? "" : "aten::";
  throw NotImplementedError(str_cat("Could not run '", ns, op, "' with arguments from the '", backend_name(t),
                                    "' backend. This could be because the operator doesn't exist for this backend, "
                                    "or was omitted during the selective/custom build process (if using custom "
                                    "build)."));
}

Device Device::parse(const std::string& spec) {
  auto colon = spec.find(':');
  std::string type_part = spec.substr(0, colon);
  std::optional<DeviceType> type;
#define EMBER_DEVICE_PARSE(name, lower) \
  if (type_part == #lower) type = DeviceType::name;
  EMBER_FORALL_DEVICE_TYPES(EMBER_DEVICE_PARSE)
#undef EMBER_DEVICE_PARSE
  if (!type) {
    throw Error(str_cat("Expected one of ", kKnownDeviceTypes, " device type at start of device string: ", spec));
  }
  if (colon == std::string::npos) return Device(*type);
  std::string idx = spec.substr(colon + 1);
  bool digits = !idx.empty() && idx.size() < 4;
  for (char c : idx) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  EMBER_CHECK(digits, "Invalid device string: '", spec, "'");
  int index = std::stoi(idx);
  EMBER_CHECK(index < 128, "Device index must be less than 128, got ", index);
  EMBER_CHECK(type != DeviceType::CPU || index == 0, "CPU device index must be -1 or zero, got ", index);
  return Device(*type, static_cast<int8_t>(index));
}

std::string Device::str() const {
  std::string s = device_type_name(type);
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

}  // namespace ember
