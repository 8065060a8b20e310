#include "ember/core/SharedMemory.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <random>
#include <unordered_map>
#include <vector>

#include "ember/core/Error.h"

// Note [Shared-memory storages]
// A shared storage is memory mapped MAP_SHARED that another process can map
// too, so a tensor crosses the process boundary without its bytes being
// copied or pickled. There are two kinds of block, one per sharing strategy:
//
// - file_descriptor: an anonymous memory file (memfd_create). Another process
//   receives the descriptor (SCM_RIGHTS over a Unix socket) and maps it. The
//   file has no name, so nothing can leak: the kernel frees the pages when the
//   last mapping and the last descriptor are gone, even after a crash. A block
//   keeps its descriptor (so it can be passed on again); the registry below
//   maps the block's address to it.
// - file_system: a named segment in /dev/shm (shm_open), passed on by name.
//   The first 64 bytes of the segment count the mappings of all processes (and
//   the references of messages in transit); the last one to go removes the
//   name.
//
// A process that crashes never drops its counts, so its segments would stay.
// Instead of a daemon watching the processes, segments belong to a family: the
// processes descending from the first one that created a segment (the family
// id travels in EMBER_SHM_FAMILY). Every member holds a shared flock on the
// family's lock segment for its lifetime; the kernel drops the lock when a
// process dies. When a process joins a family it looks for other families
// whose lock nobody holds (all their processes are gone) and removes their
// segments; a process without a family joins that of the first segment it
// opens (its sender may have exited while the segment was in transit). So a crash leaks segments only until the next
// Ember process shares memory by name.

namespace ember::shm {
namespace {

constexpr size_t kHeader = 64;  // keeps the data 64-byte aligned
constexpr size_t kPopulateLimit = size_t(16) << 20;
constexpr const char* kFamilyEnv = "EMBER_SHM_FAMILY";

struct Block {
  void* map_addr;
  size_t map_len;
  int fd;  // owned; -1 when none is kept
  std::string name;  // named segments only
  std::atomic<int32_t>* refs;  // named segments only
  bool counted;  // this mapping is one of the segment's refs
};

std::mutex g_mutex;
std::unordered_map<const void*, Block*> g_blocks;

// A forked child maps its parent's segments without having counted them.
void forget_counts_in_child() {
  for (auto& entry : g_blocks) entry.second->counted = false;
}
const int g_atfork = pthread_atfork(nullptr, nullptr, &forget_counts_in_child);

[[noreturn]] void throw_errno(const char* what) { throw Error(str_cat(what, " failed: ", std::strerror(errno))); }

void free_block(void* ctx) {
  auto* b = static_cast<Block*>(ctx);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_blocks.erase(static_cast<char*>(b->map_addr) + (b->refs ? kHeader : 0));
  }
  if (b->refs && b->counted && b->refs->fetch_sub(1) == 1) shm_unlink(b->name.c_str());
  munmap(b->map_addr, b->map_len);
  if (b->fd >= 0) close(b->fd);
  delete b;
}

DataPtr register_block(Block* b) {
  void* data = static_cast<char*>(b->map_addr) + (b->refs ? kHeader : 0);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_blocks[data] = b;
  }
  return DataPtr(data, b, &free_block, Device(DeviceType::CPU));
}

void* map_fd(int fd, size_t len, bool populate = true) {
  // Prefaulting a batch-sized block at once is cheaper than a fault per page;
  // large blocks (a whole dataset moved to shared memory) map lazily.
  int flags = MAP_SHARED | (populate && len <= kPopulateLimit ? MAP_POPULATE : 0);
  void* addr = mmap(nullptr, len, PROT_READ | PROT_WRITE, flags, fd, 0);
  if (addr == MAP_FAILED) throw_errno("mmap of a shared-memory block");
  return addr;
}

// Fills a new memory file by write(): its pages are then allocated and filled
// once, where a mapping would have them zeroed first and copied into after.
void write_all(int fd, const void* src, size_t n, size_t offset) {
  const char* p = static_cast<const char*>(src);
  while (n > 0) {
    ssize_t done = pwrite(fd, p, n, static_cast<off_t>(offset));
    if (done < 0) {
      if (errno == EINTR) continue;
      throw_errno("write to a shared-memory block");
    }
    p += done;
    offset += static_cast<size_t>(done);
    n -= static_cast<size_t>(done);
  }
}

// ---- families (crash clean-up of named segments) -------------------------------------

std::mutex g_family_mutex;
std::string g_family;  // empty until this process creates or opens a named segment
int g_family_lock = -1;

std::string lock_name(const std::string& family) { return "/ember_" + family + "_lock"; }

bool valid_family(const char* s) {
  if (!s || !*s || std::strlen(s) > 64) return false;
  for (const char* p = s; *p; ++p) {
    if (!(std::isalnum(static_cast<unsigned char>(*p)))) return false;
  }
  return true;
}

// Holds a shared lock on the family's lock segment, recreating it if a sweep
// removed its name meanwhile.
void lock_family(const std::string& family) {
  std::string name = lock_name(family);
  for (int attempt = 0; attempt < 8; ++attempt) {
    int fd = shm_open(name.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) throw_errno("shm_open of the shared-memory family lock");
    if (flock(fd, LOCK_SH) != 0) {
      close(fd);
      throw_errno("flock of the shared-memory family lock");
    }
    struct stat held, named;
    if (fstat(fd, &held) == 0 && stat(("/dev/shm" + name).c_str(), &named) == 0 && held.st_ino == named.st_ino) {
      g_family_lock = fd;
      return;
    }
    close(fd);
  }
  throw Error("could not lock the shared-memory family of this process");
}

// Joins the family this process inherited, else `of_segment` (the family of
// the first segment it opens: the sender may have exited, with its segment
// still in transit), else a new one.
void join_family(const std::string& of_segment = "") {
  std::lock_guard<std::mutex> lock(g_family_mutex);
  if (!g_family.empty()) return;
  const char* inherited = std::getenv(kFamilyEnv);
  std::string family;
  if (valid_family(inherited)) {
    family = inherited;
  } else if (valid_family(of_segment.c_str())) {
    family = of_segment;
    setenv(kFamilyEnv, family.c_str(), 1);
  } else {
    std::random_device rd;
    family = std::to_string(getpid()) + "x" + std::to_string(rd() & 0xffffff);
    setenv(kFamilyEnv, family.c_str(), 1);
  }
  g_family = family;
  sweep_dead_families();
  lock_family(family);
}

}  // namespace

DataPtr new_fd_block(size_t nbytes, const void* contents) {
  size_t len = nbytes ? nbytes : 1;
  int fd = memfd_create("ember-shm", MFD_CLOEXEC);
  if (fd < 0) throw_errno("memfd_create");
  try {
    if (ftruncate(fd, static_cast<off_t>(len)) != 0) throw_errno("ftruncate of a shared-memory block");
    if (contents) write_all(fd, contents, nbytes, 0);
    // written pages exist already: faulting them in later is cheap, and often not needed
    void* addr = map_fd(fd, len, /*populate=*/contents == nullptr);
    return register_block(new Block{addr, len, fd, {}, nullptr, false});
  } catch (...) {
    close(fd);
    throw;
  }
}

DataPtr map_fd_block(int fd, size_t nbytes, bool keep_fd, bool populate) {
  size_t len = nbytes ? nbytes : 1;
  void* addr = map_fd(fd, len, populate);
  int kept = -1;
  if (keep_fd) {
    kept = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (kept < 0) {
      munmap(addr, len);
      throw_errno("dup of a shared-memory descriptor");
    }
  }
  return register_block(new Block{addr, len, kept, {}, nullptr, false});
}

DataPtr new_named_block(size_t nbytes, const void* contents) {
  static std::atomic<uint64_t> counter{0};
  join_family();
  std::random_device rd;
  std::string name = str_cat("/ember_", g_family, "_", getpid(), "_", counter++, "_", rd() & 0xffff);
  size_t len = kHeader + nbytes;
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) throw_errno(str_cat("shm_open of ", name).c_str());
  void* addr = nullptr;
  try {
    if (ftruncate(fd, static_cast<off_t>(len)) != 0) throw_errno("ftruncate of a shared-memory segment");
    if (contents) write_all(fd, contents, nbytes, kHeader);
    addr = map_fd(fd, len);
  } catch (...) {
    close(fd);
    shm_unlink(name.c_str());
    throw;
  }
  close(fd);
  auto* refs = new (addr) std::atomic<int32_t>(1);
  return register_block(new Block{addr, len, -1, name, refs, true});
}

DataPtr open_named_block(const std::string& name, size_t nbytes) {
  // names are /ember_<family>_<pid>_<n>_<tag>
  size_t start = name.find('_') + 1, end = name.find('_', start);
  join_family(start > 0 && end != std::string::npos ? name.substr(start, end - start) : std::string());
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) throw_errno(str_cat("shm_open of ", name).c_str());
  size_t len = kHeader + nbytes;
  struct stat st;
  void* addr = nullptr;
  try {
    if (fstat(fd, &st) != 0) throw_errno("fstat of a shared-memory segment");
    EMBER_CHECK(static_cast<size_t>(st.st_size) >= len, "shared-memory segment ", name, " holds ", st.st_size,
                " bytes, expected ", len);
    addr = map_fd(fd, len, /*populate=*/false);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  auto* refs = reinterpret_cast<std::atomic<int32_t>*>(addr);
  refs->fetch_add(1);
  return register_block(new Block{addr, len, -1, name, refs, true});
}

bool named_block_add_ref(const void* data, int delta) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_blocks.find(data);
  if (it == g_blocks.end() || !it->second->refs) return false;
  it->second->refs->fetch_add(delta);
  return true;
}

void release_named_refs() {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& entry : g_blocks) {
    Block* b = entry.second;
    if (b->refs && b->counted) {
      b->counted = false;
      if (b->refs->fetch_sub(1) == 1) shm_unlink(b->name.c_str());
    }
  }
}

bool lookup(const void* data, BlockInfo* info) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_blocks.find(data);
  if (it == g_blocks.end()) return false;
  if (info) {
    info->fd = it->second->fd;
    info->name = it->second->name;
  }
  return true;
}

void sweep_dead_families() {
  DIR* dir = opendir("/dev/shm");
  if (!dir) return;
  std::vector<std::string> entries;
  while (dirent* e = readdir(dir)) {
    if (std::strncmp(e->d_name, "ember_", 6) == 0) entries.emplace_back(e->d_name);
  }
  closedir(dir);
  const std::string suffix = "_lock";
  for (const std::string& entry : entries) {
    if (entry.size() <= 6 + suffix.size() || entry.compare(entry.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    std::string family = entry.substr(6, entry.size() - 6 - suffix.size());
    if (family == g_family) continue;
    int fd = shm_open(("/" + entry).c_str(), O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      std::string prefix = "ember_" + family + "_";
      for (const std::string& other : entries) {
        if (other != entry && other.compare(0, prefix.size(), prefix) == 0) shm_unlink(("/" + other).c_str());
      }
      shm_unlink(("/" + entry).c_str());
    }
    close(fd);
  }
}

}  // namespace ember::shm
