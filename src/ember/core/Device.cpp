#include "ember/core/Device.h"

#include <cctype>
#include <optional>

namespace ember {

Device Device::parse(const std::string& spec) {
  auto colon = spec.find(':');
  std::string type_part = spec.substr(0, colon);
  std::optional<DeviceType> type;
#define EMBER_DEVICE_PARSE(name, lower) \
  if (type_part == #lower) type = DeviceType::name;
  EMBER_FORALL_DEVICE_TYPES(EMBER_DEVICE_PARSE)
#undef EMBER_DEVICE_PARSE
  if (!type) {
    std::string known;
#define EMBER_DEVICE_LIST(name, lower) known += known.empty() ? #lower : ", " #lower;
    EMBER_FORALL_DEVICE_TYPES(EMBER_DEVICE_LIST)
#undef EMBER_DEVICE_LIST
    throw Error(str_cat("Expected one of ", known, " device type at start of device string: ", spec));
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
