#include "ember/core/Device.h"

#include <cctype>

namespace ember {

Device Device::parse(const std::string& spec) {
  auto colon = spec.find(':');
  std::string type_part = spec.substr(0, colon);
  DeviceType type;
  if (type_part == "cpu") {
    type = DeviceType::CPU;
  } else if (type_part == "cuda") {
    type = DeviceType::CUDA;
  } else {
    throw Error(str_cat("Expected one of cpu, cuda device type at start of device string: ", spec));
  }
  if (colon == std::string::npos) return Device(type);
  std::string idx = spec.substr(colon + 1);
  bool digits = !idx.empty() && idx.size() < 4;
  for (char c : idx) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  EMBER_CHECK(digits, "Invalid device string: '", spec, "'");
  int index = std::stoi(idx);
  EMBER_CHECK(index < 128, "Device index must be less than 128, got ", index);
  EMBER_CHECK(type != DeviceType::CPU || index == 0, "CPU device index must be -1 or zero, got ", index);
  return Device(type, static_cast<int8_t>(index));
}

std::string Device::str() const {
  std::string s = device_type_name(type);
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

}  // namespace ember
