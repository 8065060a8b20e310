#include "ember/core/Allocator.h"

#include <cstdlib>
#include <new>

#include "ember/core/Error.h"

namespace ember {

namespace {

void free_cpu(void* ctx) { std::free(ctx); }

class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(DeviceType::CPU));
    size_t rounded = (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
    void* p = std::aligned_alloc(kCpuAlignment, rounded);
    if (!p) {
      throw Error(str_cat("DefaultCPUAllocator: not enough memory: you tried to allocate ", nbytes,
                          " bytes."));
    }
    return DataPtr(p, p, &free_cpu, Device(DeviceType::CPU));
  }
};

CpuAllocator g_cpu_allocator;
Allocator* g_allocators[kNumDeviceTypes] = {&g_cpu_allocator};

}  // namespace

Allocator* get_allocator(DeviceType type) {
  Allocator* a = g_allocators[static_cast<int>(type)];
  if (!a) {
    throw Error(str_cat("Ember was built without ", device_type_name(type) == std::string("cuda") ? "CUDA" : device_type_name(type),
                        " support, or no ", device_type_name(type), " device is available"));
  }
  return a;
}

void set_allocator(DeviceType type, Allocator* allocator) {
  g_allocators[static_cast<int>(type)] = allocator;
}

}  // namespace ember
