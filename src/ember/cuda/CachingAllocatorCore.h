#pragma once
// The CUDA caching allocator's bookkeeping, free of CUDA headers: the device
// is reached through DeviceMemory, so tests drive it with a fake device.
// Observable behaviour follows PyTorch's CUDACachingAllocator (Note [Caching
// allocator] in CachingAllocatorCore.cpp).

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ember/core/Error.h"
#include "ember/core/OutOfMemoryError.h"

namespace ember::cuda {

// A stream as the allocator sees it: an opaque handle (cudaStream_t's bits).
using StreamId = std::uintptr_t;

// Sizes (PyTorch's constants).
constexpr size_t kMinBlockSize = 512;  // every size is rounded up to a multiple of this
constexpr size_t kSmallSize = 1048576;  // largest request served by the small pool
constexpr size_t kSmallBuffer = 2097152;  // segment size of the small pool
constexpr size_t kMinLargeAlloc = 10485760;  // requests below this get a kLargeBuffer segment
constexpr size_t kLargeBuffer = 20971520;  // that segment
constexpr size_t kRoundLarge = 2097152;  // larger segments are rounded up to a multiple of this

// What the allocator needs from a device. The real one wraps cudaMalloc,
// cudaFree, cudaMemGetInfo and events; tests use a fake.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // False when the device is out of memory (the error is cleared); throws on other errors.
  virtual bool malloc(int device, size_t size, void** ptr) = 0;
  virtual void free(int device, void* ptr) = 0;
  virtual void mem_get_info(int device, size_t* free_bytes, size_t* total_bytes) = 0;
  // An event recorded on `stream` now; done when the stream's work so far has finished.
  virtual void* record_event(int device, StreamId stream) = 0;
  virtual bool event_done(void* event) = 0;
  virtual void event_synchronize(void* event) = 0;
  virtual void event_destroy(void* event) = 0;
};

// One statistic: PyTorch's current/peak/allocated/freed.
struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;
  void increase(int64_t amount) {
    current += amount;
    peak = current > peak ? current : peak;
    allocated += amount;
  }
  void decrease(int64_t amount) {
    current -= amount;
    freed += amount;
  }
  void reset_accumulated() { allocated = freed = 0; }
  void reset_peak() { peak = current; }
};

// Indices into a StatArray: all, small pool, large pool.
enum StatType : size_t { kAggregate = 0, kSmallPool = 1, kLargePool = 2, kNumStatTypes = 3 };
using StatArray = std::array<Stat, kNumStatTypes>;

// The statistics memory_stats() reports, under the same names.
struct DeviceStats {
  StatArray allocation;  // blocks handed out
  StatArray segment;  // device allocations (cudaMalloc)
  StatArray active;  // handed out or waiting for their streams
  StatArray inactive_split;  // free pieces of split segments
  StatArray allocated_bytes;
  StatArray reserved_bytes;
  StatArray active_bytes;
  StatArray inactive_split_bytes;
  StatArray requested_bytes;  // bytes asked for, before rounding
  int64_t num_alloc_retries = 0;  // device allocations retried after freeing the cache
  int64_t num_ooms = 0;
  int64_t num_sync_all_streams = 0;
  int64_t num_device_alloc = 0;
  int64_t num_device_free = 0;
  Stat oversize_allocations;  // allocations of blocks >= max_split_size
  Stat oversize_segments;
  int64_t max_split_size = 0;
};

// PYTORCH_CUDA_ALLOC_CONF / EMBER_CUDA_ALLOC_CONF: "key:value,key:value".
struct AllocatorConfig {
  size_t max_split_size = SIZE_MAX;  // blocks this large or larger are never split
  double garbage_collection_threshold = 0.0;  // 0: off; else free cached blocks past this fraction
  bool expandable_segments = false;  // parsed; Ember always uses fixed segments
  // Throws ember::Error for an unknown key or a bad value.
  static AllocatorConfig parse(const std::string& text);
};

struct BlockPool;

// A piece of one segment. Free blocks live in their pool; neighbours of one
// segment are linked through prev/next so that freeing merges them.
struct Block {
  int device = 0;
  StreamId stream = 0;  // the stream it was allocated for
  size_t size = 0;
  size_t requested_size = 0;
  BlockPool* pool = nullptr;
  void* ptr = nullptr;
  bool allocated = false;
  Block* prev = nullptr;
  Block* next = nullptr;
  std::unordered_set<StreamId> stream_uses;  // other streams that used it (record_stream)
  int event_count = 0;  // outstanding events before it can be reused
  int gc_count = 0;  // allocations since it was freed (garbage collection age)
  bool is_split() const { return prev != nullptr || next != nullptr; }
};

// Free blocks ordered by (stream, size, address): a lower_bound finds the
// best fit for a stream.
struct BlockLess {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream) return a->stream < b->stream;
    if (a->size != b->size) return a->size < b->size;
    return reinterpret_cast<std::uintptr_t>(a->ptr) < reinterpret_cast<std::uintptr_t>(b->ptr);
  }
};
struct BlockPool {
  explicit BlockPool(bool small) : is_small(small) {}
  std::set<Block*, BlockLess> blocks;
  const bool is_small;
};

// Segment and block layout for memory_snapshot().
struct SegmentInfo {
  int device = 0;
  std::uintptr_t address = 0;
  size_t total_size = 0;
  size_t allocated_size = 0;
  size_t active_size = 0;
  size_t requested_size = 0;
  StreamId stream = 0;
  bool is_large = false;
  struct BlockInfo {
    size_t size = 0;
    size_t requested_size = 0;
    bool allocated = false;
    bool active = false;
  };
  std::vector<BlockInfo> blocks;
};

// Rounds a request up to the allocator's granularity (512 bytes).
size_t round_size(size_t size);
// The segment size requested from the device for a rounded request.
size_t allocation_size(size_t rounded);
// "1.50 GiB": PyTorch's format of byte counts in messages.
std::string format_size(uint64_t size);

// The caching allocator of one device. Thread-safe.
class DeviceCachingAllocator {
 public:
  DeviceCachingAllocator(int device, DeviceMemory* memory, AllocatorConfig config = {});
  ~DeviceCachingAllocator();
  DeviceCachingAllocator(const DeviceCachingAllocator&) = delete;
  DeviceCachingAllocator& operator=(const DeviceCachingAllocator&) = delete;

  // A block of at least `size` bytes for use on `stream`; throws
  // OutOfMemoryError. size 0 is not passed here (the caller hands out null).
  Block* malloc(size_t size, StreamId stream);
  // Returns a block; reused at once by its stream, or after the streams
  // recorded by record_stream finish.
  void free(Block* block);
  // Marks the block used by `stream` (not its own), deferring its reuse.
  void record_stream(Block* block, StreamId stream);
  // Waits for deferred blocks and returns every unused segment to the device.
  void empty_cache();

  DeviceStats stats() const;
  void reset_peak_stats();
  void reset_accumulated_stats();
  // Caps reserved memory at fraction * total device memory.
  void set_memory_fraction(double fraction);
  double memory_fraction() const;
  std::vector<SegmentInfo> snapshot() const;
  // Blocks whose events are still pending (for tests and diagnostics).
  size_t pending_event_count() const;
  // The allocated block starting at `ptr`; nullptr when there is none.
  Block* find_allocated(void* ptr) const;

 private:
  BlockPool& pool_for(size_t size) { return size <= kSmallSize ? small_pool_ : large_pool_; }
  StatType pool_stat(const BlockPool& pool) const { return pool.is_small ? kSmallPool : kLargePool; }
  Block* find_free_block(BlockPool& pool, size_t size, StreamId stream);
  Block* device_alloc(BlockPool& pool, size_t alloc_size, StreamId stream);
  bool should_split(const Block* block, size_t size) const;
  void free_block(Block* block);
  size_t try_merge(Block* dst, Block* src, BlockPool& pool);
  void release_block(Block* block);
  void release_blocks(BlockPool& pool, size_t min_size);
  bool release_available_cached_blocks(size_t size);
  void release_cached_blocks();
  void garbage_collect();
  void process_events();
  void synchronize_and_free_events();
  void insert_events(Block* block);
  [[noreturn]] void raise_oom(size_t alloc_size);

  const int device_;
  DeviceMemory* const memory_;
  AllocatorConfig config_;
  mutable std::recursive_mutex mutex_;
  BlockPool small_pool_{true};
  BlockPool large_pool_{false};
  std::set<Block*> active_blocks_;  // allocated or awaiting events
  std::map<void*, Block*> allocated_;  // allocated blocks by address
  std::vector<std::pair<void*, Block*>> events_;  // in record order
  DeviceStats stats_;
  size_t total_reserved_ = 0;
  size_t allowed_max_ = SIZE_MAX;  // from set_memory_fraction
  double fraction_ = 1.0;
};

}  // namespace ember::cuda
