// The device's side of the caching allocator (cudaMalloc, events) and the
// pinned host allocator.
#include "ember/cuda/CudaAllocator.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ember/cuda/CudaContext.h"
#include "ember/cuda/CudaStream.h"
#include "ember/ops/BuildInfo.h"

namespace ember::cuda {
namespace {

class CudaDeviceMemory final : public DeviceMemory {
 public:
  bool malloc(int device, size_t size, void** ptr) override {
    DeviceGuard guard(device);
    const cudaError_t err = cudaMalloc(ptr, size);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // out of memory is not sticky; clear it for the retry
      return false;
    }
    EMBER_CUDA_CHECK(err);
    return true;
  }
  void free(int device, void* ptr) override {
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaFree(ptr));
  }
  void mem_get_info(int device, size_t* free_bytes, size_t* total_bytes) override {
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
  }
  void* record_event(int device, StreamId stream) override {
    DeviceGuard guard(device);
    cudaEvent_t event = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    EMBER_CUDA_CHECK(cudaEventRecord(event, reinterpret_cast<cudaStream_t>(stream)));
    return event;
  }
  bool event_done(void* event) override {
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    EMBER_CUDA_CHECK(err);
    return true;
  }
  void event_synchronize(void* event) override {
    EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  }
  void event_destroy(void* event) override {
    if (cudaEventDestroy(static_cast<cudaEvent_t>(event)) != cudaSuccess) cudaGetLastError();
  }
};

AllocatorConfig config_from_environment() {
  const char* text = std::getenv("EMBER_CUDA_ALLOC_CONF");
  if (!text) text = std::getenv("PYTORCH_CUDA_ALLOC_CONF");
  return AllocatorConfig::parse(text ? text : "");
}

struct Allocators {
  CudaDeviceMemory memory;
  std::mutex mutex;
  std::vector<std::unique_ptr<DeviceCachingAllocator>> per_device;
};

// Never destroyed: tensors may be freed during interpreter shutdown.
Allocators& allocators() {
  static auto* a = [] {
    auto* all = new Allocators();
    all->per_device.resize(static_cast<size_t>(device_count()));
    return all;
  }();
  return *a;
}

// A deleter runs in destructors: a failing runtime (e.g. unloading at exit)
// must not take the process down.
void free_block(void* ctx) noexcept {
  auto* block = static_cast<Block*>(ctx);
  try {
    device_allocator(block->device).free(block);
  } catch (const std::exception&) {}
}

class CudaCachingAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (device_count() == 0) throw Error(cuda_hooks()->init_error());  // PyTorch's lazy-init message
    const int device = current_device();
    return allocate_on_stream(nbytes, current_stream(device));
  }
  void copy_data(void* dst, const void* src, size_t n) const override {
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, current_stream(current_device())));
  }
};

}  // namespace

DeviceCachingAllocator& device_allocator(int device) {
  Allocators& all = allocators();
  EMBER_CHECK(device >= 0 && device < static_cast<int>(all.per_device.size()), "CUDA error: invalid device ordinal");
  std::lock_guard<std::mutex> lock(all.mutex);
  auto& slot = all.per_device[device];
  if (!slot) slot = std::make_unique<DeviceCachingAllocator>(device, &all.memory, config_from_environment());
  return *slot;
}

bool device_allocator_exists(int device) {
  Allocators& all = allocators();
  std::lock_guard<std::mutex> lock(all.mutex);
  return device >= 0 && device < static_cast<int>(all.per_device.size()) && all.per_device[device] != nullptr;
}

DataPtr allocate_on_stream(size_t nbytes, cudaStream_t stream) {
  const int device = current_device();
  if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(DeviceType::CUDA, device));
  Block* block = device_allocator(device).malloc(nbytes, reinterpret_cast<StreamId>(stream));
  return DataPtr(block->ptr, block, &free_block, Device(DeviceType::CUDA, device));
}

void empty_all_caches() {
  for (int d = 0; d < device_count(); ++d) {
    if (device_allocator_exists(d)) device_allocator(d).empty_cache();
  }
}

// ---- pinned host memory -------------------------------------------------------------

namespace {

struct PinnedBlock {
  size_t size = 0;
  bool in_use = false;
  std::vector<cudaEvent_t> events;  // copies still reading or writing it
};

class PinnedAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(DeviceType::CPU));
    size_t size = 1;
    while (size < nbytes) size <<= 1;  // power-of-two sizes, as PyTorch's host allocator
    std::lock_guard<std::mutex> lock(mutex_);
    process_events();
    auto& free_list = free_[size];
    void* ptr = nullptr;
    if (!free_list.empty()) {
      ptr = free_list.back();
      free_list.pop_back();
    } else {
      EMBER_CUDA_CHECK(cudaHostAlloc(&ptr, size, cudaHostAllocDefault));
      blocks_[ptr].size = size;
    }
    blocks_[ptr].in_use = true;
    return DataPtr(ptr, ptr, &PinnedAllocator::release, Device(DeviceType::CPU));
  }

  bool owns(const void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.upper_bound(const_cast<void*>(ptr));
    if (it == blocks_.begin()) return false;
    --it;
    return static_cast<const char*>(ptr) < static_cast<char*>(it->first) + it->second.size;
  }

  void record(const void* ptr, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.upper_bound(const_cast<void*>(ptr));
    if (it == blocks_.begin()) return;
    --it;
    if (static_cast<const char*>(ptr) >= static_cast<char*>(it->first) + it->second.size) return;
    cudaEvent_t event = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    EMBER_CUDA_CHECK(cudaEventRecord(event, stream));
    it->second.events.push_back(event);
  }

 private:
  static void release(void* ctx);

  void free_ptr(void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end()) return;
    it->second.in_use = false;
    if (it->second.events.empty()) {
      free_[it->second.size].push_back(ptr);
    } else {
      pending_.push_back(ptr);
    }
  }

  // Returns pending blocks whose copies have finished.
  void process_events() {
    std::vector<void*> still;
    for (void* ptr : pending_) {
      PinnedBlock& b = blocks_[ptr];
      std::vector<cudaEvent_t> left;
      for (cudaEvent_t e : b.events) {
        const cudaError_t err = cudaEventQuery(e);
        if (err == cudaErrorNotReady) {
          cudaGetLastError();
          left.push_back(e);
        } else {
          cudaEventDestroy(e);
        }
      }
      b.events = std::move(left);
      if (b.events.empty()) {
        free_[b.size].push_back(ptr);
      } else {
        still.push_back(ptr);
      }
    }
    pending_ = std::move(still);
  }

  std::mutex mutex_;
  std::map<void*, PinnedBlock> blocks_;
  std::map<size_t, std::vector<void*>> free_;
  std::vector<void*> pending_;
};

PinnedAllocator& pinned() {
  static auto* a = new PinnedAllocator();  // never destroyed, as the device allocators
  return *a;
}

void PinnedAllocator::release(void* ctx) {
  try {
    pinned().free_ptr(ctx);
  } catch (const std::exception&) {  // as free_block
  }
}

CudaCachingAllocator g_device_allocator;
const bool g_registered = [] {
  set_allocator(DeviceType::CUDA, &g_device_allocator);
  return true;
}();

}  // namespace

Allocator* pinned_host_allocator() { return &pinned(); }
bool is_pinned_pointer(const void* ptr) { return ptr != nullptr && pinned().owns(ptr); }
void record_pinned_use(const void* ptr, cudaStream_t stream) { pinned().record(ptr, stream); }

}  // namespace ember::cuda
