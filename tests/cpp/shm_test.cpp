// Shared-memory blocks: memory files passed by descriptor, named segments
// counted in the segment and removed with the last reference.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "ember/core/SharedMemory.h"

using namespace ember;

namespace {

bool segment_exists(const std::string& name) {
  int fd = shm_open(name.c_str(), O_RDONLY, 0);
  if (fd < 0) return false;
  close(fd);
  return true;
}

}  // namespace

TEST(SharedMemory, FdBlockHoldsContentsAndMapsElsewhere) {
  const char text[] = "shared bytes";
  DataPtr block = shm::new_fd_block(sizeof(text), text);
  EXPECT_EQ(std::memcmp(block.get(), text, sizeof(text)), 0);
  shm::BlockInfo info;
  ASSERT_TRUE(shm::lookup(block.get(), &info));
  EXPECT_GE(info.fd, 0);
  EXPECT_TRUE(info.name.empty());

  DataPtr other = shm::map_fd_block(info.fd, sizeof(text), /*keep_fd=*/true, /*populate=*/false);
  EXPECT_NE(other.get(), block.get());
  static_cast<char*>(other.get())[0] = 'S';
  EXPECT_EQ(static_cast<char*>(block.get())[0], 'S');
  shm::BlockInfo other_info;
  ASSERT_TRUE(shm::lookup(other.get(), &other_info));
  EXPECT_GE(other_info.fd, 0);
  EXPECT_NE(other_info.fd, info.fd);  // a duplicate of its own

  void* address = block.get();
  block.reset();
  EXPECT_FALSE(shm::lookup(address, nullptr));
  EXPECT_EQ(static_cast<char*>(other.get())[1], 'h');  // the file lives on
}

TEST(SharedMemory, NamedSegmentRemovedWithLastReference) {
  DataPtr block = shm::new_named_block(8);
  shm::BlockInfo info;
  ASSERT_TRUE(shm::lookup(block.get(), &info));
  ASSERT_FALSE(info.name.empty());
  EXPECT_EQ(info.fd, -1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block.get()) % 64, 0u);

  DataPtr opened = shm::open_named_block(info.name, 8);
  static_cast<char*>(opened.get())[7] = 42;
  EXPECT_EQ(static_cast<char*>(block.get())[7], 42);

  // a reference held by a message in transit keeps the name after both go
  EXPECT_TRUE(shm::named_block_add_ref(block.get(), 1));
  block.reset();
  opened.reset();
  ASSERT_TRUE(segment_exists(info.name));
  DataPtr received = shm::open_named_block(info.name, 8);
  EXPECT_EQ(static_cast<char*>(received.get())[7], 42);
  EXPECT_TRUE(shm::named_block_add_ref(received.get(), -1));
  received.reset();
  EXPECT_FALSE(segment_exists(info.name));
}

TEST(SharedMemory, ReleasedCountsAreNotDroppedTwice) {
  DataPtr block = shm::new_named_block(4);
  shm::BlockInfo info;
  ASSERT_TRUE(shm::lookup(block.get(), &info));
  DataPtr opened = shm::open_named_block(info.name, 4);
  shm::release_named_refs();  // what a process does at its exit
  EXPECT_FALSE(segment_exists(info.name));
  block.reset();  // freeing afterwards leaves the counts alone
  opened.reset();
  EXPECT_FALSE(shm::named_block_add_ref(nullptr, 1));
}

TEST(SharedMemory, OpeningAMissingSegmentThrows) {
  EXPECT_THROW(shm::open_named_block("/ember_no_such_segment", 4), Error);
}
