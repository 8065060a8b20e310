#pragma once
// CPU memory that other processes can map: blocks behind an anonymous memory
// file (passed on as a file descriptor) or behind a named segment in /dev/shm
// (passed on by name). See Note [Shared-memory storages].

#include <cstddef>
#include <string>

#include "ember/core/Allocator.h"

namespace ember::shm {

// What this process knows about the shared block at a data address.
struct BlockInfo {
  int fd = -1;  // the block's memory file when this process keeps one, else -1
  std::string name;  // the segment's name for a named block, else empty
};

// A new block of nbytes behind an anonymous memory file, holding a copy of
// contents when given (else zeros); the block keeps the fd.
EMBER_CORE_API DataPtr new_fd_block(size_t nbytes, const void* contents = nullptr);
// Maps the memory file behind fd. With keep_fd the block keeps a duplicate of
// fd (so it can be passed on again); the caller always keeps fd itself. With
// populate the pages are mapped at once (for a receiver that reads them all).
EMBER_CORE_API DataPtr map_fd_block(int fd, size_t nbytes, bool keep_fd, bool populate);
// A new named segment of nbytes (a copy of contents when given); its mappings
// are counted in the segment and the last one to go removes the name.
EMBER_CORE_API DataPtr new_named_block(size_t nbytes, const void* contents = nullptr);
// Maps the named segment `name` (as new_named_block gave it) of nbytes, lazily.
EMBER_CORE_API DataPtr open_named_block(const std::string& name, size_t nbytes);
// Adds delta to the mapping count of the named block at data (a reference held
// by a message in transit); returns false when data is not a named block.
EMBER_CORE_API bool named_block_add_ref(const void* data, int delta);

// Drops this process's counts of the named segments it maps, at its exit
// (processes of multiprocessing end without destroying their objects).
EMBER_CORE_API void release_named_refs();

// True when data is the start of a shared block mapped in this process.
EMBER_CORE_API bool lookup(const void* data, BlockInfo* info);
// Removes the segments of process families whose processes have all exited.
EMBER_CORE_API void sweep_dead_families();

}  // namespace ember::shm
