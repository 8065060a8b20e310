// The CUDA caching allocator's bookkeeping against a fake device: no GPU needed.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "ember/cuda/CachingAllocatorCore.h"

namespace ember::cuda {
namespace {

// A device with `capacity` bytes; addresses are handed out from a counter,
// events complete when the test says so.
class FakeDevice : public DeviceMemory {
 public:
  explicit FakeDevice(size_t capacity) : capacity_(capacity) {}
  bool malloc(int, size_t size, void** ptr) override {
    ++malloc_calls;
    if (used_ + size > capacity_) return false;
    used_ += size;
    *ptr = reinterpret_cast<void*>(next_);
    segments_[next_] = size;
    next_ += size + 4096;
    return true;
  }
  void free(int, void* ptr) override {
    auto it = segments_.find(reinterpret_cast<std::uintptr_t>(ptr));
    ASSERT_NE(it, segments_.end()) << "freeing an address that is not a segment";
    used_ -= it->second;
    segments_.erase(it);
    ++free_calls;
  }
  void mem_get_info(int, size_t* free_bytes, size_t* total_bytes) override {
    *free_bytes = capacity_ - used_;
    *total_bytes = capacity_;
  }
  void* record_event(int, StreamId stream) override {
    auto* e = new int(static_cast<int>(stream));
    pending_.insert(e);
    return e;
  }
  bool event_done(void* e) override { return completed_ || !pending_.count(e); }
  void event_synchronize(void* e) override { pending_.erase(e); }
  void event_destroy(void* e) override {
    pending_.erase(e);
    delete static_cast<int*>(e);
  }
  void complete_all() { completed_ = true; }
  size_t used() const { return used_; }
  size_t segments() const { return segments_.size(); }
  int malloc_calls = 0;
  int free_calls = 0;

 private:
  size_t capacity_;
  size_t used_ = 0;
  std::uintptr_t next_ = 0x10000;
  std::map<std::uintptr_t, size_t> segments_;
  std::set<void*> pending_;
  bool completed_ = false;
};

constexpr size_t kMiB = 1048576;
constexpr size_t kGiB = 1024 * kMiB;
constexpr StreamId kStream0 = 0;
constexpr StreamId kStream1 = 0x1111;

std::uintptr_t addr(const Block* b) { return reinterpret_cast<std::uintptr_t>(b->ptr); }

TEST(CudaAllocatorSizes, RoundingAndSegmentSizes) {
  EXPECT_EQ(round_size(0), 512u);
  EXPECT_EQ(round_size(1), 512u);
  EXPECT_EQ(round_size(512), 512u);
  EXPECT_EQ(round_size(513), 1024u);
  EXPECT_EQ(allocation_size(512), 2 * kMiB);
  EXPECT_EQ(allocation_size(kMiB), 2 * kMiB);
  EXPECT_EQ(allocation_size(kMiB + 512), 20 * kMiB);
  EXPECT_EQ(allocation_size(10 * kMiB - 512), 20 * kMiB);
  EXPECT_EQ(allocation_size(10 * kMiB), 10 * kMiB);
  EXPECT_EQ(allocation_size(11 * kMiB + 1), 12 * kMiB);
}

TEST(CudaAllocatorSizes, FormatSize) {
  EXPECT_EQ(format_size(100), "100 bytes");
  EXPECT_EQ(format_size(1024), "1024 bytes");
  EXPECT_EQ(format_size(1536), "1.50 KiB");
  EXPECT_EQ(format_size(20 * kMiB), "20.00 MiB");
  EXPECT_EQ(format_size(2 * kGiB), "2.00 GiB");
}

TEST(CudaAllocator, SmallRequestsShareOneSegment) {
  FakeDevice dev(kGiB);
  DeviceCachingAllocator a(0, &dev);
  Block* x = a.malloc(100, kStream0);
  Block* y = a.malloc(1000, kStream0);
  EXPECT_EQ(x->size, 512u);
  EXPECT_EQ(y->size, 1024u);
  EXPECT_EQ(dev.malloc_calls, 1);
  EXPECT_EQ(addr(y), addr(x) + 512);  // best fit: the split remainder, lowest address first
  EXPECT_EQ(a.find_allocated(y->ptr), y);
  EXPECT_EQ(a.find_allocated(static_cast<char*>(y->ptr) + 512), nullptr);
  const DeviceStats s = a.stats();
  EXPECT_EQ(s.allocated_bytes[kAggregate].current, 1536);
  EXPECT_EQ(s.requested_bytes[kAggregate].current, 1100);
  EXPECT_EQ(s.reserved_bytes[kAggregate].current, int64_t(2 * kMiB));
  EXPECT_EQ(s.reserved_bytes[kSmallPool].current, int64_t(2 * kMiB));
  EXPECT_EQ(s.reserved_bytes[kLargePool].current, 0);
  EXPECT_EQ(s.segment[kAggregate].current, 1);
  EXPECT_EQ(s.allocation[kAggregate].current, 2);
  EXPECT_EQ(s.inactive_split[kAggregate].current, 1);
  EXPECT_EQ(s.inactive_split_bytes[kAggregate].current, int64_t(2 * kMiB - 1536));
  a.free(x);
  EXPECT_EQ(a.find_allocated(x->ptr), nullptr);
  a.free(y);
}

TEST(CudaAllocator, FreeMergesNeighboursAndReuses) {
  FakeDevice dev(kGiB);
  DeviceCachingAllocator a(0, &dev);
  Block* x = a.malloc(512, kStream0);
  Block* y = a.malloc(512, kStream0);
  Block* z = a.malloc(512, kStream0);
  const std::uintptr_t base = addr(x);
  a.free(y);
  EXPECT_EQ(a.stats().inactive_split[kAggregate].current, 2);  // y's hole and the tail
  a.free(x);  // merges with y
  EXPECT_EQ(a.stats().inactive_split[kAggregate].current, 2);
  a.free(z);  // merges everything back into one segment
  DeviceStats s = a.stats();
  EXPECT_EQ(s.inactive_split[kAggregate].current, 0);
  EXPECT_EQ(s.inactive_split_bytes[kAggregate].current, 0);
  EXPECT_EQ(s.active[kAggregate].current, 0);
  EXPECT_EQ(s.allocated_bytes[kAggregate].current, 0);
  EXPECT_EQ(s.reserved_bytes[kAggregate].current, int64_t(2 * kMiB));
  // The cached segment serves the next request without the device.
  Block* w = a.malloc(4096, kStream0);
  EXPECT_EQ(addr(w), base);
  EXPECT_EQ(dev.malloc_calls, 1);
  a.free(w);
  const auto segs = a.snapshot();
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].blocks.size(), 1u);
  EXPECT_EQ(segs[0].total_size, 2 * kMiB);
}

TEST(CudaAllocator, LargePoolSegmentsAndSplitting) {
  FakeDevice dev(kGiB);
  DeviceCachingAllocator a(0, &dev);
  Block* mid = a.malloc(3 * kMiB, kStream0);  // 1..10 MiB: a 20 MiB segment, split
  EXPECT_EQ(mid->size, 3 * kMiB);
  EXPECT_EQ(a.stats().reserved_bytes[kLargePool].current, int64_t(20 * kMiB));
  Block* big = a.malloc(50 * kMiB + 1, kStream0);  // its own segment, rounded to 2 MiB
  EXPECT_EQ(a.stats().reserved_bytes[kLargePool].current, int64_t(20 * kMiB + 52 * kMiB));
  EXPECT_EQ(big->size, 50 * kMiB + 512);
  EXPECT_TRUE(big->is_split());  // 2 MiB - 512 left over: more than 1 MiB, worth keeping
  Block* mid2 = a.malloc(16 * kMiB, kStream0);  // fits the 17 MiB left of the first segment
  EXPECT_EQ(addr(mid2), addr(mid) + 3 * kMiB);
  EXPECT_EQ(dev.malloc_calls, 2);
  EXPECT_EQ(mid2->size, 17 * kMiB);  // the 1 MiB left is not split off (must be more than 1 MiB)
  Block* mid3 = a.malloc(1 * kMiB + 512, kStream0);  // the rest of the big segment
  EXPECT_EQ(addr(mid3), addr(big) + big->size);
  EXPECT_EQ(dev.malloc_calls, 2);
  for (Block* b : {mid, big, mid2, mid3}) a.free(b);
  EXPECT_EQ(a.stats().allocated_bytes[kAggregate].current, 0);
}

TEST(CudaAllocator, BlocksAreReusedOnlyByTheirStream) {
  FakeDevice dev(kGiB);
  DeviceCachingAllocator a(0, &dev);
  Block* x = a.malloc(4 * kMiB, kStream0);
  const std::uintptr_t xa = addr(x);
  a.free(x);
  Block* y = a.malloc(4 * kMiB, kStream1);
  EXPECT_NE(addr(y), xa);
  EXPECT_EQ(dev.malloc_calls, 2);
  Block* z = a.malloc(4 * kMiB, kStream0);
  EXPECT_EQ(addr(z), xa);
  EXPECT_EQ(dev.malloc_calls, 2);
  a.free(y);
  a.free(z);
}

TEST(CudaAllocator, RecordStreamDefersReuse) {
  FakeDevice dev(kGiB);
  DeviceCachingAllocator a(0, &dev);
  Block* x = a.malloc(4096, kStream0);
  const std::uintptr_t xa = addr(x);
  a.record_stream(x, kStream1);
  a.record_stream(x, kStream0);  // its own stream: nothing to wait for
  a.free(x);
  EXPECT_EQ(a.pending_event_count(), 1u);
  DeviceStats s = a.stats();
  EXPECT_EQ(s.allocated_bytes[kAggregate].current, 0);
  EXPECT_EQ(s.active[kAggregate].current, 1);  // still active until kStream1's event completes
  Block* y = a.malloc(4096, kStream0);
  EXPECT_NE(addr(y), xa);  // the deferred block is not handed out
  dev.complete_all();
  a.free(y);
  Block* z = a.malloc(4096, kStream0);  // processing events returned x's memory
  EXPECT_EQ(a.pending_event_count(), 0u);
  EXPECT_EQ(addr(z), xa);
  a.free(z);
  EXPECT_EQ(a.stats().active[kAggregate].current, 0);
}

TEST(CudaAllocator, EmptyCacheReleasesUnusedSegmentsOnly) {
  FakeDevice dev(kGiB);
  DeviceCachingAllocator a(0, &dev);
  Block* keep = a.malloc(512, kStream0);
  Block* drop = a.malloc(30 * kMiB, kStream0);
  Block* deferred = a.malloc(12 * kMiB, kStream0);
  a.record_stream(deferred, kStream1);
  a.free(drop);
  a.free(deferred);
  a.empty_cache();  // waits for the deferred block's event, then frees both large segments
  EXPECT_EQ(dev.segments(), 1u);
  DeviceStats s = a.stats();
  EXPECT_EQ(s.reserved_bytes[kAggregate].current, int64_t(2 * kMiB));
  EXPECT_EQ(s.segment[kAggregate].current, 1);
  EXPECT_EQ(s.segment[kAggregate].freed, 2);
  EXPECT_EQ(s.num_device_free, 2);
  EXPECT_GE(s.num_sync_all_streams, 1);
  a.free(keep);
  a.empty_cache();
  EXPECT_EQ(dev.segments(), 0u);
  EXPECT_EQ(a.stats().reserved_bytes[kAggregate].current, 0);
}

TEST(CudaAllocator, PeakAndAccumulatedStatsReset) {
  FakeDevice dev(kGiB);
  DeviceCachingAllocator a(0, &dev);
  Block* x = a.malloc(40 * kMiB, kStream0);
  Block* y = a.malloc(40 * kMiB, kStream0);
  a.free(x);
  DeviceStats s = a.stats();
  EXPECT_EQ(s.allocated_bytes[kAggregate].peak, int64_t(80 * kMiB));
  EXPECT_EQ(s.allocated_bytes[kAggregate].current, int64_t(40 * kMiB));
  EXPECT_EQ(s.allocated_bytes[kAggregate].allocated, int64_t(80 * kMiB));
  EXPECT_EQ(s.allocated_bytes[kAggregate].freed, int64_t(40 * kMiB));
  a.reset_peak_stats();
  s = a.stats();
  EXPECT_EQ(s.allocated_bytes[kAggregate].peak, int64_t(40 * kMiB));
  EXPECT_EQ(s.reserved_bytes[kAggregate].peak, int64_t(80 * kMiB));  // still reserved
  a.reset_accumulated_stats();
  s = a.stats();
  EXPECT_EQ(s.allocated_bytes[kAggregate].allocated, 0);
  EXPECT_EQ(s.allocated_bytes[kAggregate].freed, 0);
  EXPECT_EQ(s.allocated_bytes[kAggregate].current, int64_t(40 * kMiB));
  a.free(y);
}

TEST(CudaAllocator, OutOfMemoryRetriesAfterFreeingTheCache) {
  FakeDevice dev(100 * kMiB);
  DeviceCachingAllocator a(0, &dev);
  Block* x = a.malloc(60 * kMiB, kStream0);
  a.free(x);  // cached, 60 MiB reserved
  Block* y = a.malloc(70 * kMiB, kStream0);  // device full: frees the cache, retries
  EXPECT_EQ(a.stats().num_alloc_retries, 1);
  EXPECT_EQ(a.stats().reserved_bytes[kAggregate].current, int64_t(70 * kMiB));
  try {
    a.malloc(50 * kMiB, kStream0);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("CUDA out of memory. Tried to allocate 50.00 MiB. GPU 0 has a total "
                                          "capacity of 100.00 MiB of which 30.00 MiB is free. Including non-PyTorch "
                                          "memory, this process has 70.00 MiB memory in use. Of the allocated memory "
                                          "70.00 MiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but "
                                          "unallocated.",
                                          0),
              0u)
        << e.what();
  }
  DeviceStats s = a.stats();
  EXPECT_EQ(s.num_ooms, 1);
  EXPECT_EQ(s.num_alloc_retries, 2);
  EXPECT_EQ(s.allocated_bytes[kAggregate].current, int64_t(70 * kMiB));  // the failure changed nothing
  a.free(y);
}

TEST(CudaAllocator, MemoryFractionCapsReserved) {
  FakeDevice dev(100 * kMiB);
  DeviceCachingAllocator a(0, &dev);
  a.set_memory_fraction(0.5);
  Block* x = a.malloc(40 * kMiB, kStream0);
  EXPECT_THROW(a.malloc(20 * kMiB, kStream0), OutOfMemoryError);
  try {
    a.malloc(20 * kMiB, kStream0);
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("50.00 MiB allowed; "), std::string::npos) << e.what();
  }
  a.free(x);
}

TEST(CudaAllocator, MaxSplitSizeKeepsOversizeBlocksWhole) {
  FakeDevice dev(kGiB);
  DeviceCachingAllocator a(0, &dev, AllocatorConfig::parse("max_split_size_mb:64"));
  EXPECT_EQ(a.stats().max_split_size, int64_t(64 * kMiB));
  Block* x = a.malloc(100 * kMiB, kStream0);
  EXPECT_FALSE(x->is_split());
  EXPECT_EQ(a.stats().oversize_allocations.current, 1);
  EXPECT_EQ(a.stats().oversize_segments.current, 1);
  a.free(x);
  // A small request does not take the oversize block...
  Block* y = a.malloc(30 * kMiB, kStream0);
  EXPECT_EQ(dev.malloc_calls, 2);
  // ...a request within 20 MiB of it does, whole.
  Block* z = a.malloc(90 * kMiB, kStream0);
  EXPECT_EQ(dev.malloc_calls, 2);
  EXPECT_EQ(z->size, 100 * kMiB);
  a.free(y);
  a.free(z);
}

TEST(CudaAllocatorConfig, Parses) {
  AllocatorConfig c = AllocatorConfig::parse("max_split_size_mb:128, garbage_collection_threshold:0.6");
  EXPECT_EQ(c.max_split_size, 128 * kMiB);
  EXPECT_DOUBLE_EQ(c.garbage_collection_threshold, 0.6);
  EXPECT_TRUE(AllocatorConfig::parse("expandable_segments:True").expandable_segments);
  EXPECT_EQ(AllocatorConfig::parse("").max_split_size, SIZE_MAX);
  EXPECT_THROW(AllocatorConfig::parse("max_split_size_mb:10"), Error);
  EXPECT_THROW(AllocatorConfig::parse("garbage_collection_threshold:1.5"), Error);
  EXPECT_THROW(AllocatorConfig::parse("no_such_key:1"), Error);
  EXPECT_THROW(AllocatorConfig::parse("max_split_size_mb"), Error);
}

TEST(CudaAllocator, GarbageCollectionFreesCachedSegmentsPastTheThreshold) {
  FakeDevice dev(100 * kMiB);
  DeviceCachingAllocator a(0, &dev, AllocatorConfig::parse("garbage_collection_threshold:0.5"));
  a.set_memory_fraction(1.0 - 1e-9);  // PyTorch applies the threshold with a memory fraction set
  Block* x = a.malloc(40 * kMiB, kStream0);
  Block* y = a.malloc(20 * kMiB, kStream0);
  a.free(x);  // 60 MiB reserved, 40 cached
  Block* z = a.malloc(12 * kMiB, kStream1);  // another stream: no cached fit, so collect first
  EXPECT_EQ(dev.free_calls, 1);  // the cached 40 MiB segment went back
  EXPECT_EQ(a.stats().reserved_bytes[kAggregate].current, int64_t(32 * kMiB));
  a.free(y);
  a.free(z);
}

}  // namespace
}  // namespace ember::cuda
