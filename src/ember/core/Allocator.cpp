#include "ember/core/Allocator.h"
#include "ember/core/NotCompiledError.h"

#include <pthread.h>
#include <sys/mman.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <new>

#include "ember/core/Error.h"

namespace ember {

namespace {

[[noreturn]] void out_of_memory(size_t nbytes, int err = ENOMEM) {
  throw Error(str_cat("DefaultCPUAllocator: can't allocate memory: you tried to allocate ", nbytes,
                      " bytes. Error code ", err, " (", std::strerror(err), ")"));
}

void free_small(void* ctx) { std::free(ctx); }

// Note [Large CPU blocks]
// A fresh page costs a fault and a zero fill when first written: for a 64 MiB
// output that is about 18 ms, more than an add over 16M floats takes. The C
// library maps every block above 32 MiB afresh and returns it on free, so a
// loop that makes one such tensor per step pays that cost every step.
// Blocks of kLargeBlock or more are therefore mapped here and kept on free,
// least recently freed first out, while the idle total stays within the
// cache limit (EMBER_CPU_CACHE_MB, default 1024; 0 turns the cache off).
// A request takes the smallest idle block that fits with at most 1/8 to
// spare. Sizes round to 64 KiB, or to 2 MiB from kHugeBlock up, where the
// mapping is 2 MiB aligned and asks for transparent huge pages.
constexpr size_t kLargeBlock = size_t(1) << 20;
constexpr size_t kHugeBlock = size_t(4) << 20;
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kPageRound = size_t(64) << 10;

struct LargeBlock {
  void* ptr;
  size_t size;
};

size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

size_t cache_limit_from_env() {
  unsigned long long mb = 1024;
  if (const char* v = std::getenv("EMBER_CPU_CACHE_MB")) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (end != v) mb = n;
  }
  return static_cast<size_t>(mb) << 20;
}

class LargeBlockCache {
 public:
  LargeBlockCache() : limit_(cache_limit_from_env()) {}

  // A child forked while another thread held the lock starts with it free.
  void reset_lock_after_fork() { new (&mutex_) std::mutex(); }

  LargeBlock* take(size_t nbytes) {
    if (nbytes > (SIZE_MAX >> 1)) out_of_memory(nbytes);
    const size_t size = nbytes >= kHugeBlock ? round_up(nbytes, kHugePage) : round_up(nbytes, kPageRound);
    {
      std::lock_guard<std::mutex> guard(mutex_);
      auto it = by_size_.lower_bound(size);
      if (it != by_size_.end() && it->first <= size + size / 8) {
        LargeBlock* b = *it->second;
        lru_.erase(it->second);
        by_size_.erase(it);
        idle_bytes_ -= b->size;
        return b;
      }
    }
    void* p = map_block(size);
    if (!p) {
      release_idle();  // give idle memory back and try once more
      p = map_block(size);
      if (!p) out_of_memory(nbytes, errno);
    }
    return new LargeBlock{p, size};
  }

  void give_back(LargeBlock* b) {
    if (b->size > limit_) {
      unmap(b);
      return;
    }
    std::list<LargeBlock*> evicted;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      lru_.push_back(b);
      by_size_.emplace(b->size, std::prev(lru_.end()));
      idle_bytes_ += b->size;
      while (idle_bytes_ > limit_) evicted.push_back(pop_oldest());
    }
    for (LargeBlock* e : evicted) unmap(e);
  }

  void release_idle() {
    std::list<LargeBlock*> evicted;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      while (!lru_.empty()) evicted.push_back(pop_oldest());
    }
    for (LargeBlock* e : evicted) unmap(e);
  }

  size_t idle_bytes() {
    std::lock_guard<std::mutex> guard(mutex_);
    return idle_bytes_;
  }

 private:
  static void* map_block(size_t size) {
    if (size < kHugeBlock) {
      void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      return p == MAP_FAILED ? nullptr : p;
    }
    // Over-map by one huge page, then trim to a 2 MiB aligned range.
    const size_t span = size + kHugePage;
    void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = round_up(start, kHugePage);
    if (aligned > start) munmap(raw, aligned - start);
    const uintptr_t tail = start + span - (aligned + size);
    if (tail) munmap(reinterpret_cast<void*>(aligned + size), tail);
    void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
  }

  static void unmap(LargeBlock* b) {
    munmap(b->ptr, b->size);
    delete b;
  }

  LargeBlock* pop_oldest() {
    LargeBlock* b = lru_.front();
    auto range = by_size_.equal_range(b->size);
    for (auto it = range.first; it != range.second; ++it) {
      if (*it->second == b) {
        by_size_.erase(it);
        break;
      }
    }
    lru_.pop_front();
    idle_bytes_ -= b->size;
    return b;
  }

  std::mutex mutex_;
  std::list<LargeBlock*> lru_;  // idle blocks, least recently freed first
  std::multimap<size_t, std::list<LargeBlock*>::iterator> by_size_;
  size_t idle_bytes_ = 0;
  const size_t limit_;
};

// Never destroyed: tensors may outlive static destruction.
LargeBlockCache& large_blocks() {
  static LargeBlockCache* cache = [] {
    auto* c = new LargeBlockCache();
    pthread_atfork(nullptr, nullptr, [] { large_blocks().reset_lock_after_fork(); });
    return c;
  }();
  return *cache;
}

void free_large(void* ctx) { large_blocks().give_back(static_cast<LargeBlock*>(ctx)); }

class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(DeviceType::CPU));
    if (nbytes >= kLargeBlock) {
      LargeBlock* b = large_blocks().take(nbytes);
      return DataPtr(b->ptr, b, &free_large, Device(DeviceType::CPU));
    }
    size_t rounded = (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
    void* p = std::aligned_alloc(kCpuAlignment, rounded);
    if (!p) out_of_memory(nbytes, errno);
    return DataPtr(p, p, &free_small, Device(DeviceType::CPU));
  }
};

// Note [Meta tensors]
// A meta tensor has sizes, strides and a dtype but no data: its storage knows
// its nbytes and holds a null pointer that nothing may read. Operators on meta
// compute their outputs' metadata and skip the kernel.
class MetaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t) override { return DataPtr(nullptr, nullptr, nullptr, Device(DeviceType::Meta)); }
};

CpuAllocator g_cpu_allocator;
MetaAllocator g_meta_allocator;
std::array<Allocator*, kNumDeviceTypes> g_allocators = [] {
  std::array<Allocator*, kNumDeviceTypes> a{};
  a[static_cast<int>(DeviceType::CPU)] = &g_cpu_allocator;
  a[static_cast<int>(DeviceType::Meta)] = &g_meta_allocator;
  return a;
}();

}  // namespace

Allocator* get_allocator(DeviceType type) {
  Allocator* a = g_allocators[static_cast<int>(type)];
  // libember_cuda registers its allocator when it loads: without it, this build has no CUDA.
  if (!a) no_backend_error(type, "empty.memory_format");
  return a;
}

void set_allocator(DeviceType type, Allocator* allocator) { g_allocators[static_cast<int>(type)] = allocator; }

void cpu_release_cached_blocks() { large_blocks().release_idle(); }

size_t cpu_cached_bytes() { return large_blocks().idle_bytes(); }

void Allocator::copy_data(void* dst, const void* src, size_t n) const { std::memcpy(dst, src, n); }

}  // namespace ember
