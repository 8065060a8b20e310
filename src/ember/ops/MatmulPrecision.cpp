#include "ember/ops/MatmulPrecision.h"

#include <atomic>

namespace ember {
namespace {
std::atomic<int> g_precision{static_cast<int>(MatmulPrecision::Highest)};
}  // namespace

MatmulPrecision float32_matmul_precision() { return static_cast<MatmulPrecision>(g_precision.load()); }

void set_float32_matmul_precision(MatmulPrecision p) { g_precision.store(static_cast<int>(p)); }

bool set_float32_matmul_precision(const std::string& name) {
  if (name == "highest") {
    set_float32_matmul_precision(MatmulPrecision::Highest);
  } else if (name == "high") {
    set_float32_matmul_precision(MatmulPrecision::High);
  } else if (name == "medium") {
    set_float32_matmul_precision(MatmulPrecision::Medium);
  } else {
    return false;
  }
  return true;
}

const char* float32_matmul_precision_name() {
  switch (float32_matmul_precision()) {
    case MatmulPrecision::High: return "high";
    case MatmulPrecision::Medium: return "medium";
    default: return "highest";
  }
}

}  // namespace ember
