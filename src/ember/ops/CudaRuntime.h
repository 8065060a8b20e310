#pragma once
// The CUDA runtime as the CPU side and the Python layer reach it: streams,
// events, the caching allocator's controls, pinned host memory. libember_cuda
// registers the implementation when it loads; without it cuda_runtime()
// throws "ember was built without CUDA". Streams and events travel as
// integers (the cudaStream_t / cudaEvent_t bits; stream 0 is the legacy
// default stream), so no CUDA header is needed here.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/Allocator.h"
#include "ember/core/Macros.h"

namespace ember {

// One block of a segment, and segments, as memory_snapshot() reports them.
struct CudaBlockInfo {
  int64_t size = 0;
  int64_t requested_size = 0;
  std::string state;  // "active_allocated", "active_pending_free", "inactive"
};
struct CudaSegmentInfo {
  int device = 0;
  uint64_t address = 0;
  int64_t total_size = 0;
  int64_t allocated_size = 0;
  int64_t active_size = 0;
  int64_t requested_size = 0;
  uint64_t stream = 0;
  std::string segment_type;  // "small" or "large"
  std::vector<CudaBlockInfo> blocks;
};

class CudaRuntime {
 public:
  virtual ~CudaRuntime() = default;
  // "sm_90 compute_90": the architectures compiled in.
  virtual std::string arch_flags() const = 0;
  // cuBLAS version compiled against ("13.1.1").
  virtual std::string cublas_version() const = 0;

  // Streams (device -1: the current device).
  virtual uint64_t current_stream(int device) const = 0;
  virtual void set_current_stream(int device, uint64_t stream) const = 0;
  virtual uint64_t stream_from_pool(int device, int priority) const = 0;
  virtual bool stream_query(int device, uint64_t stream) const = 0;
  virtual void stream_synchronize(int device, uint64_t stream) const = 0;
  virtual int stream_priority(int device, uint64_t stream) const = 0;
  virtual std::pair<int, int> stream_priority_range() const = 0;

  // Events: created on `device` with PyTorch's flags.
  virtual uint64_t event_create(int device, bool enable_timing, bool blocking, bool interprocess) const = 0;
  virtual void event_destroy(int device, uint64_t event) const = 0;
  virtual void event_record(int device, uint64_t event, uint64_t stream) const = 0;
  virtual void event_wait(int device, uint64_t event, uint64_t stream) const = 0;
  virtual bool event_query(uint64_t event) const = 0;
  virtual void event_synchronize(uint64_t event) const = 0;
  virtual float event_elapsed_ms(uint64_t start, uint64_t end) const = 0;

  // The caching allocator: statistics keyed as memory_stats() nests them
  // ("allocated_bytes" -> "all"/"small_pool"/"large_pool" -> "current"/...).
  using NestedStats = std::map<std::string, std::map<std::string, std::map<std::string, int64_t>>>;
  virtual NestedStats memory_stats(int device, std::map<std::string, int64_t>* counters) const = 0;
  virtual void reset_peak_memory_stats(int device) const = 0;
  virtual void reset_accumulated_memory_stats(int device) const = 0;
  virtual void empty_cache() const = 0;
  virtual void set_memory_fraction(double fraction, int device) const = 0;
  virtual double memory_fraction(int device) const = 0;
  virtual std::pair<int64_t, int64_t> mem_get_info(int device) const = 0;
  virtual std::vector<CudaSegmentInfo> memory_snapshot() const = 0;
  virtual uint64_t raw_alloc(int64_t nbytes, uint64_t stream) const = 0;
  virtual void raw_delete(uint64_t ptr) const = 0;
  // Keeps the block at `storage_data` (a storage's data pointer on `device`)
  // from reuse until `stream`'s work so far is done.
  virtual void record_stream(const void* storage_data, int device, uint64_t stream) const = 0;

  // Page-locked host memory (cudaHostAlloc, cached) for CPU tensors.
  virtual Allocator* pinned_allocator() const = 0;
  virtual bool is_pinned(const void* ptr) const = 0;
};

EMBER_API void register_cuda_runtime(CudaRuntime* runtime);
// The registered runtime; throws ember::Error when Ember was built without CUDA.
EMBER_API const CudaRuntime& cuda_runtime();
// nullptr when Ember was built without CUDA.
EMBER_API const CudaRuntime* cuda_runtime_or_null();

}  // namespace ember
