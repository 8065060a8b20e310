// The CudaRuntime interface (ops/CudaRuntime.h) over the CUDA runtime API.
#include <cuda_runtime_api.h>

#include "ember/core/Error.h"
#include "ember/cuda/CudaAllocator.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/CudaStream.h"
#include "ember/ops/CudaRuntime.h"

namespace ember::cuda {
namespace {

cudaStream_t as_stream(uint64_t s) { return reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(s)); }
cudaEvent_t as_event(uint64_t e) { return reinterpret_cast<cudaEvent_t>(static_cast<uintptr_t>(e)); }
uint64_t as_id(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }
int resolve(int device) { return device < 0 ? current_device() : device; }

std::map<std::string, std::map<std::string, int64_t>> stat_groups(const StatArray& a) {
  std::map<std::string, std::map<std::string, int64_t>> out;
  const char* names[kNumStatTypes] = {"all", "small_pool", "large_pool"};
  for (size_t i = 0; i < kNumStatTypes; ++i) {
    out[names[i]] = {
        {"current", a[i].current}, {"peak", a[i].peak}, {"allocated", a[i].allocated}, {"freed", a[i].freed}};
  }
  return out;
}

class Runtime final : public CudaRuntime {
 public:
  std::string arch_flags() const override { return EMBER_CUDA_ARCH_FLAGS; }
  std::string cublas_version() const override { return EMBER_CUBLAS_VERSION; }

  uint64_t current_stream(int device) const override { return as_id(cuda::current_stream(resolve(device))); }
  void set_current_stream(int device, uint64_t stream) const override {
    cuda::set_current_stream(resolve(device), as_stream(stream));
  }
  uint64_t stream_from_pool(int device, int priority) const override {
    return as_id(cuda::stream_from_pool(resolve(device), priority));
  }
  bool stream_query(int device, uint64_t stream) const override {
    DeviceGuard guard(device);
    const cudaError_t err = cudaStreamQuery(as_stream(stream));
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    EMBER_CUDA_CHECK(err);
    return true;
  }
  void stream_synchronize(int device, uint64_t stream) const override {
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
  }
  int stream_priority(int device, uint64_t stream) const override {
    DeviceGuard guard(device);
    int priority = 0;
    EMBER_CUDA_CHECK(cudaStreamGetPriority(as_stream(stream), &priority));
    return priority;
  }
  std::pair<int, int> stream_priority_range() const override {
    int least = 0, greatest = 0;
    cuda::stream_priority_range(&least, &greatest);
    return {least, greatest};
  }

  uint64_t event_create(int device, bool enable_timing, bool blocking, bool interprocess) const override {
    DeviceGuard guard(device);
    unsigned flags = (enable_timing ? cudaEventDefault : cudaEventDisableTiming) |
                     (blocking ? cudaEventBlockingSync : 0u) | (interprocess ? cudaEventInterprocess : 0u);
    cudaEvent_t event = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&event, flags));
    return as_id(event);
  }
  void event_destroy(int device, uint64_t event) const override {
    DeviceGuard guard(device);
    if (cudaEventDestroy(as_event(event)) != cudaSuccess) cudaGetLastError();
  }
  void event_record(int device, uint64_t event, uint64_t stream) const override {
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaEventRecord(as_event(event), as_stream(stream)));
  }
  void event_wait(int device, uint64_t event, uint64_t stream) const override {
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaStreamWaitEvent(as_stream(stream), as_event(event), 0));
  }
  bool event_query(uint64_t event) const override {
    const cudaError_t err = cudaEventQuery(as_event(event));
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    EMBER_CUDA_CHECK(err);
    return true;
  }
  void event_synchronize(uint64_t event) const override { EMBER_CUDA_CHECK(cudaEventSynchronize(as_event(event))); }
  float event_elapsed_ms(uint64_t start, uint64_t end) const override {
    float ms = 0.f;
    EMBER_CUDA_CHECK(cudaEventElapsedTime(&ms, as_event(start), as_event(end)));
    return ms;
  }

  NestedStats memory_stats(int device, std::map<std::string, int64_t>* counters) const override {
    device = resolve(device);
    const DeviceStats s = device_allocator(device).stats();
    NestedStats out;
    out["allocation"] = stat_groups(s.allocation);
    out["segment"] = stat_groups(s.segment);
    out["active"] = stat_groups(s.active);
    out["inactive_split"] = stat_groups(s.inactive_split);
    out["allocated_bytes"] = stat_groups(s.allocated_bytes);
    out["reserved_bytes"] = stat_groups(s.reserved_bytes);
    out["active_bytes"] = stat_groups(s.active_bytes);
    out["inactive_split_bytes"] = stat_groups(s.inactive_split_bytes);
    out["requested_bytes"] = stat_groups(s.requested_bytes);
    *counters = {{"num_alloc_retries", s.num_alloc_retries},       {"num_ooms", s.num_ooms},
                 {"num_sync_all_streams", s.num_sync_all_streams}, {"num_device_alloc", s.num_device_alloc},
                 {"num_device_free", s.num_device_free},           {"max_split_size", s.max_split_size}};
    const auto single = [](const Stat& st) {
      return std::map<std::string, int64_t>{
          {"current", st.current}, {"peak", st.peak}, {"allocated", st.allocated}, {"freed", st.freed}};
    };
    out["oversize_allocations"][""] = single(s.oversize_allocations);
    out["oversize_segments"][""] = single(s.oversize_segments);
    return out;
  }
  void reset_peak_memory_stats(int device) const override { device_allocator(resolve(device)).reset_peak_stats(); }
  void reset_accumulated_memory_stats(int device) const override {
    device_allocator(resolve(device)).reset_accumulated_stats();
  }
  void empty_cache() const override { empty_all_caches(); }
  void set_memory_fraction(double fraction, int device) const override {
    device_allocator(resolve(device)).set_memory_fraction(fraction);
  }
  double memory_fraction(int device) const override { return device_allocator(resolve(device)).memory_fraction(); }
  std::pair<int64_t, int64_t> mem_get_info(int device) const override {
    DeviceGuard guard(resolve(device));
    size_t free_bytes = 0, total = 0;
    EMBER_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return {static_cast<int64_t>(free_bytes), static_cast<int64_t>(total)};
  }
  std::vector<CudaSegmentInfo> memory_snapshot() const override {
    std::vector<CudaSegmentInfo> out;
    for (int d = 0; d < device_count(); ++d) {
      if (!device_allocator_exists(d)) continue;
      for (const SegmentInfo& seg : device_allocator(d).snapshot()) {
        CudaSegmentInfo s;
        s.device = seg.device;
        s.address = seg.address;
        s.total_size = static_cast<int64_t>(seg.total_size);
        s.allocated_size = static_cast<int64_t>(seg.allocated_size);
        s.active_size = static_cast<int64_t>(seg.active_size);
        s.requested_size = static_cast<int64_t>(seg.requested_size);
        s.stream = seg.stream;
        s.segment_type = seg.is_large ? "large" : "small";
        for (const auto& b : seg.blocks) {
          const char* state = b.allocated ? "active_allocated" : b.active ? "active_pending_free" : "inactive";
          s.blocks.push_back({static_cast<int64_t>(b.size), static_cast<int64_t>(b.requested_size), state});
        }
        out.push_back(std::move(s));
      }
    }
    return out;
  }
  uint64_t raw_alloc(int64_t nbytes, uint64_t stream) const override {
    if (nbytes <= 0) return 0;
    const int device = current_device();
    Block* block = device_allocator(device).malloc(static_cast<size_t>(nbytes), static_cast<StreamId>(stream));
    return as_id(block->ptr);
  }
  void raw_delete(uint64_t ptr) const override {
    if (ptr == 0) return;
    void* p = reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
    for (int d = 0; d < device_count(); ++d) {
      if (!device_allocator_exists(d)) continue;
      if (Block* block = device_allocator(d).find_allocated(p)) {
        device_allocator(d).free(block);
        return;
      }
    }
    throw Error("invalid device pointer: " + std::to_string(ptr));
  }
  void record_stream(const void* storage_data, int device, uint64_t stream) const override {
    if (!storage_data || device < 0) return;
    if (Block* block = device_allocator(device).find_allocated(const_cast<void*>(storage_data))) {
      device_allocator(device).record_stream(block, static_cast<StreamId>(stream));
    }
  }
  Allocator* pinned_allocator() const override { return pinned_host_allocator(); }
  bool is_pinned(const void* ptr) const override { return is_pinned_pointer(ptr); }
};

Runtime g_runtime;
const bool g_registered = [] {
  register_cuda_runtime(&g_runtime);
  return true;
}();

}  // namespace
}  // namespace ember::cuda
