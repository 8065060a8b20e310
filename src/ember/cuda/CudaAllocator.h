#pragma once
// The CUDA caching allocator (registered for DeviceType::CUDA) and the
// pinned host allocator, over CachingAllocatorCore.h.
#include <cuda_runtime_api.h>

#include "ember/core/Allocator.h"
#include "ember/cuda/CachingAllocatorCore.h"

namespace ember::cuda {

// The caching allocator of `device` (created on first use, with the
// configuration from PYTORCH_CUDA_ALLOC_CONF / EMBER_CUDA_ALLOC_CONF).
DeviceCachingAllocator& device_allocator(int device);
// Whether device_allocator(device) was created (statistics are empty before).
bool device_allocator_exists(int device);
// A block for `stream` on the current device, as a DataPtr that frees it.
DataPtr allocate_on_stream(size_t nbytes, cudaStream_t stream);
// Returns every cached block of every device (torch.cuda.empty_cache).
void empty_all_caches();

// Page-locked host memory, cached by size; freed blocks are reused once the
// copies recorded on them have finished.
Allocator* pinned_host_allocator();
bool is_pinned_pointer(const void* ptr);
// Records that `ptr` (from the pinned allocator) is read or written by work on `stream`.
void record_pinned_use(const void* ptr, cudaStream_t stream);

}  // namespace ember::cuda
