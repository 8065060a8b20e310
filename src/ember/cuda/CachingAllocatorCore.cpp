// Note [Caching allocator]
// PyTorch's CUDA caching allocator, by its observable behaviour:
// - every request is rounded up to a multiple of 512 bytes;
// - requests up to 1 MiB come from 2 MiB segments (small pool), larger ones
//   from segments of 20 MiB (requests under 10 MiB) or their own size rounded
//   to 2 MiB (large pool);
// - a free block is reused only by the stream it was allocated for; the
//   best fit (smallest block, then lowest address) is taken and split when
//   the rest is worth keeping (>= 512 bytes small, > 1 MiB large, and never
//   blocks of max_split_size or more);
// - freeing merges a block with free neighbours of its segment;
// - a block used by other streams (record_stream) returns to its pool only
//   after events recorded on those streams complete;
// - when the device is full: free one cached block large enough (only with
//   max_split_size set), then every unsplit cached segment, and retry; then
//   OutOfMemoryError.
#include "ember/cuda/CachingAllocatorCore.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <sstream>

namespace ember::cuda {

size_t round_size(size_t size) {
  if (size < kMinBlockSize) return kMinBlockSize;
  return kMinBlockSize * ((size + kMinBlockSize - 1) / kMinBlockSize);
}

size_t allocation_size(size_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((rounded + kRoundLarge - 1) / kRoundLarge);
}

std::string format_size(uint64_t size) {
  std::ostringstream os;
  os.precision(2);
  os << std::fixed;
  if (size <= 1024) {
    os << size << " bytes";
  } else if (size <= 1048576) {
    os << (static_cast<double>(size) / 1024.0) << " KiB";
  } else if (size <= 1073741824ULL) {
    os << (static_cast<double>(size) / 1048576.0) << " MiB";
  } else {
    os << (static_cast<double>(size) / 1073741824.0) << " GiB";
  }
  return os.str();
}

// ---- configuration ----------------------------------------------------------------

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

double parse_number(const std::string& key, const std::string& value) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end == nullptr || *end != '\0') {
    throw Error(str_cat("Expected a number for ", key, " in the allocator config, got '", value, "'"));
  }
  return v;
}

}  // namespace

AllocatorConfig AllocatorConfig::parse(const std::string& text) {
  AllocatorConfig config;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    EMBER_CHECK(colon != std::string::npos, "Error parsing the allocator config: expected key:value, got '", item, "'");
    const std::string key = trim(item.substr(0, colon));
    const std::string value = trim(item.substr(colon + 1));
    if (key == "max_split_size_mb") {
      const double mb = parse_number(key, value);
      EMBER_CHECK(mb * 1048576.0 > static_cast<double>(kLargeBuffer),
                  "CachingAllocator option max_split_size_mb too small, must be > ", kLargeBuffer / 1048576);
      config.max_split_size = static_cast<size_t>(mb) * 1048576;
    } else if (key == "garbage_collection_threshold") {
      const double t = parse_number(key, value);
      EMBER_CHECK(t > 0.0 && t < 1.0, "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
      config.garbage_collection_threshold = t;
    } else if (key == "expandable_segments") {
      EMBER_CHECK(value == "True" || value == "False", "Expected a single True/False argument for expandable_segments");
      config.expandable_segments = value == "True";
    } else if (key == "roundup_power2_divisions" || key == "backend" || key == "release_lock_on_cudamalloc" ||
               key == "pinned_use_cuda_host_register" || key == "pinned_num_register_threads" ||
               key == "pinned_use_background_threads") {
      // Accepted and ignored: Ember's allocator has one rounding and one backend.
    } else {
      throw Error(str_cat("Unrecognized key '", key, "' in Caching Allocator Config."));
    }
  }
  return config;
}

// ---- the allocator ----------------------------------------------------------------

DeviceCachingAllocator::DeviceCachingAllocator(int device, DeviceMemory* memory, AllocatorConfig config)
    : device_(device), memory_(memory), config_(config) {
  stats_.max_split_size = config_.max_split_size == SIZE_MAX ? -1 : static_cast<int64_t>(config_.max_split_size);
}

DeviceCachingAllocator::~DeviceCachingAllocator() {
  // The process is ending or a test is done: drop the bookkeeping, not the memory of live tensors.
  for (auto& [event, block] : events_) {
    (void)block;
    memory_->event_destroy(event);
  }
  for (BlockPool* pool : {&small_pool_, &large_pool_}) {
    for (Block* b : pool->blocks) delete b;
  }
  for (Block* b : active_blocks_) delete b;
}

Block* DeviceCachingAllocator::find_free_block(BlockPool& pool, size_t size, StreamId stream) {
  if (config_.garbage_collection_threshold > 0.0 && fraction_ < 1.0) {
    for (Block* b : pool.blocks) ++b->gc_count;
  }
  Block key;
  key.stream = stream;
  key.size = size;
  key.ptr = nullptr;
  auto it = pool.blocks.lower_bound(&key);
  if (it == pool.blocks.end() || (*it)->stream != stream) return nullptr;
  // Oversize blocks serve only requests of about their size.
  const size_t max_split = config_.max_split_size;
  if (size < max_split && (*it)->size >= max_split) return nullptr;
  if (size >= max_split && (*it)->size >= size + kLargeBuffer) return nullptr;
  Block* block = *it;
  pool.blocks.erase(it);
  return block;
}

Block* DeviceCachingAllocator::device_alloc(BlockPool& pool, size_t alloc_size, StreamId stream) {
  if (total_reserved_ + alloc_size > allowed_max_) return nullptr;
  void* ptr = nullptr;
  if (!memory_->malloc(device_, alloc_size, &ptr)) return nullptr;
  ++stats_.num_device_alloc;
  total_reserved_ += alloc_size;
  auto* block = new Block();
  block->device = device_;
  block->stream = stream;
  block->size = alloc_size;
  block->pool = &pool;
  block->ptr = ptr;
  for (StatType t : {kAggregate, pool_stat(pool)}) {
    stats_.segment[t].increase(1);
    stats_.reserved_bytes[t].increase(static_cast<int64_t>(alloc_size));
  }
  if (alloc_size >= config_.max_split_size) stats_.oversize_segments.increase(1);
  return block;
}

bool DeviceCachingAllocator::should_split(const Block* block, size_t size) const {
  const size_t remaining = block->size - size;
  if (block->pool->is_small) return remaining >= kMinBlockSize;
  return size < config_.max_split_size && remaining > kSmallSize;
}

Block* DeviceCachingAllocator::malloc(size_t orig_size, StreamId stream) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  process_events();
  const size_t size = round_size(orig_size);
  BlockPool& pool = pool_for(size);
  const size_t alloc_size = allocation_size(size);

  Block* block = find_free_block(pool, size, stream);
  if (!block) {
    if (config_.garbage_collection_threshold > 0.0 && fraction_ < 1.0) garbage_collect();
    block = device_alloc(pool, alloc_size, stream);
    if (!block && release_available_cached_blocks(size)) block = device_alloc(pool, alloc_size, stream);
    if (!block) {
      release_cached_blocks();
      ++stats_.num_alloc_retries;
      block = device_alloc(pool, alloc_size, stream);
    }
    if (!block) raise_oom(alloc_size);
  }

  const StatType pst = pool_stat(pool);
  const bool already_split = block->is_split();
  if (should_split(block, size)) {
    Block* remaining = block;
    block = new Block();
    block->device = device_;
    block->stream = stream;
    block->size = size;
    block->pool = &pool;
    block->ptr = remaining->ptr;
    block->prev = remaining->prev;
    if (block->prev) block->prev->next = block;
    block->next = remaining;
    remaining->prev = block;
    remaining->ptr = static_cast<char*>(remaining->ptr) + size;
    remaining->size -= size;
    remaining->gc_count = 0;
    pool.blocks.insert(remaining);
    for (StatType t : {kAggregate, pst}) {
      if (already_split) {
        // The taken piece was counted as an inactive split; the rest still is.
        stats_.inactive_split_bytes[t].decrease(static_cast<int64_t>(block->size));
      } else {
        stats_.inactive_split_bytes[t].increase(static_cast<int64_t>(remaining->size));
        stats_.inactive_split[t].increase(1);
      }
    }
  } else if (already_split) {
    for (StatType t : {kAggregate, pst}) {
      stats_.inactive_split_bytes[t].decrease(static_cast<int64_t>(block->size));
      stats_.inactive_split[t].decrease(1);
    }
  }

  block->allocated = true;
  block->requested_size = orig_size;
  block->gc_count = 0;
  active_blocks_.insert(block);
  allocated_[block->ptr] = block;
  for (StatType t : {kAggregate, pst}) {
    stats_.allocation[t].increase(1);
    stats_.allocated_bytes[t].increase(static_cast<int64_t>(block->size));
    stats_.active[t].increase(1);
    stats_.active_bytes[t].increase(static_cast<int64_t>(block->size));
    stats_.requested_bytes[t].increase(static_cast<int64_t>(orig_size));
  }
  if (block->size >= config_.max_split_size) stats_.oversize_allocations.increase(1);
  return block;
}

void DeviceCachingAllocator::free(Block* block) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  EMBER_INTERNAL_ASSERT(block->allocated, "freeing a block that is not allocated");
  block->allocated = false;
  allocated_.erase(block->ptr);
  const StatType pst = pool_stat(*block->pool);
  for (StatType t : {kAggregate, pst}) {
    stats_.allocation[t].decrease(1);
    stats_.allocated_bytes[t].decrease(static_cast<int64_t>(block->size));
    stats_.requested_bytes[t].decrease(static_cast<int64_t>(block->requested_size));
  }
  if (block->size >= config_.max_split_size) stats_.oversize_allocations.decrease(1);
  if (!block->stream_uses.empty()) {
    insert_events(block);
  } else {
    free_block(block);
  }
}

void DeviceCachingAllocator::record_stream(Block* block, StreamId stream) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (stream == block->stream) return;  // its own stream orders its uses already
  block->stream_uses.insert(stream);
}

size_t DeviceCachingAllocator::try_merge(Block* dst, Block* src, BlockPool& pool) {
  if (!src || src->allocated || src->event_count > 0 || !src->stream_uses.empty()) return 0;
  if (dst->prev == src) {
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev) dst->prev->next = dst;
  } else {
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
  }
  const size_t subsumed = src->size;
  dst->size += subsumed;
  pool.blocks.erase(src);
  delete src;
  return subsumed;
}

void DeviceCachingAllocator::free_block(Block* block) {
  BlockPool& pool = *block->pool;
  const size_t original_size = block->size;
  int64_t net_inactive_blocks = 0;
  int64_t net_inactive_bytes = 0;
  for (Block* candidate : {block->prev, block->next}) {
    const size_t subsumed = try_merge(block, candidate, pool);
    if (subsumed > 0) {
      net_inactive_blocks -= 1;
      net_inactive_bytes -= static_cast<int64_t>(subsumed);
    }
  }
  active_blocks_.erase(block);
  block->gc_count = 0;
  pool.blocks.insert(block);
  if (block->is_split()) {
    net_inactive_blocks += 1;
    net_inactive_bytes += static_cast<int64_t>(block->size);
  }
  for (StatType t : {kAggregate, pool_stat(pool)}) {
    if (net_inactive_blocks >= 0) {
      stats_.inactive_split[t].increase(net_inactive_blocks);
    } else {
      stats_.inactive_split[t].decrease(-net_inactive_blocks);
    }
    if (net_inactive_bytes >= 0) {
      stats_.inactive_split_bytes[t].increase(net_inactive_bytes);
    } else {
      stats_.inactive_split_bytes[t].decrease(-net_inactive_bytes);
    }
    stats_.active[t].decrease(1);
    stats_.active_bytes[t].decrease(static_cast<int64_t>(original_size));
  }
}

void DeviceCachingAllocator::release_block(Block* block) {
  memory_->free(device_, block->ptr);
  ++stats_.num_device_free;
  total_reserved_ -= block->size;
  BlockPool& pool = *block->pool;
  for (StatType t : {kAggregate, pool_stat(pool)}) {
    stats_.segment[t].decrease(1);
    stats_.reserved_bytes[t].decrease(static_cast<int64_t>(block->size));
  }
  if (block->size >= config_.max_split_size) stats_.oversize_segments.decrease(1);
  pool.blocks.erase(block);
  delete block;
}

void DeviceCachingAllocator::release_blocks(BlockPool& pool, size_t min_size) {
  for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
    Block* block = *it++;
    if (!block->is_split() && block->size >= min_size) release_block(block);
  }
}

bool DeviceCachingAllocator::release_available_cached_blocks(size_t size) {
  // Only oversize blocks are candidates, so this applies with max_split_size set.
  if (config_.max_split_size == SIZE_MAX) return false;
  const size_t want = std::max(size, config_.max_split_size);
  std::vector<Block*> candidates;
  for (Block* b : large_pool_.blocks) {
    if (!b->is_split() && b->size >= config_.max_split_size) candidates.push_back(b);
  }
  if (candidates.empty()) return false;
  std::sort(candidates.begin(), candidates.end(), [](Block* a, Block* b) { return a->size < b->size; });
  // The smallest single block that suffices, else the largest ones until enough is free.
  for (Block* b : candidates) {
    if (b->size >= want) {
      release_block(b);
      return true;
    }
  }
  size_t released = 0;
  while (!candidates.empty() && released < size) {
    released += candidates.back()->size;
    release_block(candidates.back());
    candidates.pop_back();
  }
  return released >= size;
}

void DeviceCachingAllocator::release_cached_blocks() {
  synchronize_and_free_events();
  release_blocks(large_pool_, 0);
  release_blocks(small_pool_, 0);
}

void DeviceCachingAllocator::garbage_collect() {
  // Frees unsplit cached large segments, oldest first, until reserved memory
  // is back under the threshold (a fraction of the allowed maximum).
  const double threshold = config_.garbage_collection_threshold * static_cast<double>(allowed_max_);
  if (static_cast<double>(total_reserved_) <= threshold) return;
  const size_t target = total_reserved_ - static_cast<size_t>(threshold);
  size_t reclaimed = 0;
  while (reclaimed < target) {
    int64_t total_age = 0;
    int64_t count = 0;
    for (Block* b : large_pool_.blocks) {
      if (!b->is_split()) {
        total_age += b->gc_count;
        ++count;
      }
    }
    if (count == 0) return;
    const int64_t age_threshold = total_age / count;
    std::vector<Block*> old;
    for (Block* b : large_pool_.blocks) {
      if (!b->is_split() && b->gc_count >= age_threshold) old.push_back(b);
    }
    for (Block* b : old) {
      if (reclaimed >= target) break;
      reclaimed += b->size;
      release_block(b);
    }
  }
}

void DeviceCachingAllocator::insert_events(Block* block) {
  for (StreamId s : block->stream_uses) {
    events_.emplace_back(memory_->record_event(device_, s), block);
    ++block->event_count;
  }
  block->stream_uses.clear();
}

void DeviceCachingAllocator::process_events() {
  size_t kept = 0;
  for (size_t i = 0; i < events_.size(); ++i) {
    auto [event, block] = events_[i];
    if (!memory_->event_done(event)) {
      events_[kept++] = events_[i];
      continue;
    }
    memory_->event_destroy(event);
    if (--block->event_count == 0) free_block(block);
  }
  events_.resize(kept);
}

void DeviceCachingAllocator::synchronize_and_free_events() {
  ++stats_.num_sync_all_streams;
  for (auto& [event, block] : events_) {
    memory_->event_synchronize(event);
    memory_->event_destroy(event);
    if (--block->event_count == 0) free_block(block);
  }
  events_.clear();
}

void DeviceCachingAllocator::empty_cache() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  release_cached_blocks();
}

void DeviceCachingAllocator::raise_oom(size_t alloc_size) {
  ++stats_.num_ooms;
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  memory_->mem_get_info(device_, &free_bytes, &total_bytes);
  const int64_t allocated = stats_.allocated_bytes[kAggregate].current;
  const int64_t reserved = stats_.reserved_bytes[kAggregate].current;
  std::string allowed;
  if (allowed_max_ != SIZE_MAX) allowed = format_size(allowed_max_) + " allowed; ";
  throw OutOfMemoryError(
      str_cat("CUDA out of memory. Tried to allocate ", format_size(alloc_size), ". GPU ", device_,
              " has a total capacity of ", format_size(total_bytes), " of which ", format_size(free_bytes),
              " is free. Including non-PyTorch memory, this process has ", format_size(total_bytes - free_bytes),
              " memory in use. ", allowed, "Of the allocated memory ", format_size(static_cast<uint64_t>(allocated)),
              " is allocated by PyTorch, and ", format_size(static_cast<uint64_t>(reserved - allocated)),
              " is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
              "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
              "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"));
}

DeviceStats DeviceCachingAllocator::stats() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return stats_;
}

void DeviceCachingAllocator::reset_peak_stats() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  for (StatArray* a :
       {&stats_.allocation, &stats_.segment, &stats_.active, &stats_.inactive_split, &stats_.allocated_bytes,
        &stats_.reserved_bytes, &stats_.active_bytes, &stats_.inactive_split_bytes, &stats_.requested_bytes}) {
    for (Stat& s : *a) s.reset_peak();
  }
  stats_.oversize_allocations.reset_peak();
  stats_.oversize_segments.reset_peak();
}

void DeviceCachingAllocator::reset_accumulated_stats() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  for (StatArray* a :
       {&stats_.allocation, &stats_.segment, &stats_.active, &stats_.inactive_split, &stats_.allocated_bytes,
        &stats_.reserved_bytes, &stats_.active_bytes, &stats_.inactive_split_bytes, &stats_.requested_bytes}) {
    for (Stat& s : *a) s.reset_accumulated();
  }
  stats_.oversize_allocations.reset_accumulated();
  stats_.oversize_segments.reset_accumulated();
  stats_.num_alloc_retries = 0;
  stats_.num_ooms = 0;
  stats_.num_sync_all_streams = 0;
  stats_.num_device_alloc = 0;
  stats_.num_device_free = 0;
}

void DeviceCachingAllocator::set_memory_fraction(double fraction) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  memory_->mem_get_info(device_, &free_bytes, &total_bytes);
  fraction_ = fraction;
  allowed_max_ = static_cast<size_t>(fraction * static_cast<double>(total_bytes));
}

double DeviceCachingAllocator::memory_fraction() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return fraction_;
}

size_t DeviceCachingAllocator::pending_event_count() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return events_.size();
}

Block* DeviceCachingAllocator::find_allocated(void* ptr) const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  auto it = allocated_.find(ptr);
  return it == allocated_.end() ? nullptr : it->second;
}

std::vector<SegmentInfo> DeviceCachingAllocator::snapshot() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  // Segment heads: blocks without a predecessor, free or active.
  std::vector<const Block*> heads;
  for (const BlockPool* pool : {&large_pool_, &small_pool_}) {
    for (const Block* b : pool->blocks) {
      if (!b->prev) heads.push_back(b);
    }
  }
  for (const Block* b : active_blocks_) {
    if (!b->prev) heads.push_back(b);
  }
  std::sort(heads.begin(), heads.end(), [](const Block* a, const Block* b) {
    return reinterpret_cast<std::uintptr_t>(a->ptr) < reinterpret_cast<std::uintptr_t>(b->ptr);
  });
  std::vector<SegmentInfo> out;
  for (const Block* head : heads) {
    SegmentInfo seg;
    seg.device = device_;
    seg.address = reinterpret_cast<std::uintptr_t>(head->ptr);
    seg.stream = head->stream;
    seg.is_large = !head->pool->is_small;
    for (const Block* b = head; b; b = b->next) {
      const bool active = b->allocated || b->event_count > 0 || !b->stream_uses.empty();
      seg.total_size += b->size;
      if (b->allocated) {
        seg.allocated_size += b->size;
        seg.requested_size += b->requested_size;
      }
      if (active) seg.active_size += b->size;
      seg.blocks.push_back({b->size, b->allocated ? b->requested_size : 0, b->allocated, active});
    }
    out.push_back(std::move(seg));
  }
  return out;
}

}  // namespace ember::cuda
