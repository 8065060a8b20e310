// HashStore, PrefixStore and FileStore.
#include "ember/distributed/Store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace ember::distributed {

std::string timeout_text(Millis t) { return std::to_string(t.count()) + "ms"; }

namespace {

int64_t parse_int(const Bytes& v) { return v.empty() ? 0 : std::stoll(std::string(v.begin(), v.end())); }
Bytes int_bytes(int64_t v) {
  std::string s = std::to_string(v);
  return Bytes(s.begin(), s.end());
}

// The compare-and-set rule shared by the stores.
Bytes apply_compare_set(std::map<std::string, Bytes>& data, const std::string& key, const Bytes& expected,
                        const Bytes& desired, bool* changed) {
  auto it = data.find(key);
  *changed = false;
  if (it == data.end()) {
    if (!expected.empty()) return expected;
    data[key] = desired;
    *changed = true;
    return desired;
  }
  if (it->second == expected) {
    it->second = desired;
    *changed = true;
  }
  return it->second;
}

}  // namespace

// ---- HashStore ----------------------------------------------------------------

void HashStore::set(const std::string& key, const Bytes& value) {
  std::lock_guard<std::mutex> g(mutex_);
  data_[key] = value;
  changed_.notify_all();
}

Bytes HashStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::lock_guard<std::mutex> g(mutex_);
  return data_.at(key);
}

int64_t HashStore::add(const std::string& key, int64_t value) {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = data_.find(key);
  int64_t sum = (it == data_.end() ? 0 : parse_int(it->second)) + value;
  data_[key] = int_bytes(sum);
  changed_.notify_all();
  return sum;
}

Bytes HashStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  std::lock_guard<std::mutex> g(mutex_);
  bool changed;
  Bytes r = apply_compare_set(data_, key, expected, desired, &changed);
  if (changed) changed_.notify_all();
  return r;
}

bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> g(mutex_);
  for (const auto& k : keys) {
    if (!data_.count(k)) return false;
  }
  return true;
}

bool HashStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> g(mutex_);
  return data_.erase(key) > 0;
}

int64_t HashStore::num_keys() {
  std::lock_guard<std::mutex> g(mutex_);
  return static_cast<int64_t>(data_.size());
}

void HashStore::wait(const std::vector<std::string>& keys, Millis timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto ready = [&] {
    for (const auto& k : keys) {
      if (!data_.count(k)) return false;
    }
    return true;
  };
  if (timeout.count() <= 0) {
    changed_.wait(lock, ready);
  } else if (!changed_.wait_for(lock, timeout, ready)) {
    throw DistStoreError("Wait timeout");
  }
}

// ---- PrefixStore --------------------------------------------------------------

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> store)
    : Store(store->timeout()), prefix_(std::move(prefix)), store_(std::move(store)) {}

std::vector<std::string> PrefixStore::full(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.push_back(full(k));
  return out;
}

void PrefixStore::set(const std::string& key, const Bytes& value) { store_->set(full(key), value); }
Bytes PrefixStore::get(const std::string& key) { return store_->get(full(key)); }
int64_t PrefixStore::add(const std::string& key, int64_t value) { return store_->add(full(key), value); }
Bytes PrefixStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  return store_->compare_set(full(key), expected, desired);
}
bool PrefixStore::check(const std::vector<std::string>& keys) { return store_->check(full(keys)); }
bool PrefixStore::delete_key(const std::string& key) { return store_->delete_key(full(key)); }
int64_t PrefixStore::num_keys() { return store_->num_keys(); }
void PrefixStore::wait(const std::vector<std::string>& keys, Millis timeout) { store_->wait(full(keys), timeout); }
void PrefixStore::set_timeout(Millis t) {
  Store::set_timeout(t);
  store_->set_timeout(t);
}

// ---- FileStore ----------------------------------------------------------------
// Note [FileStore log]
// The file is a log of records [op u8][key length u64][key][value length
// u64][value]; op 0 sets a key, op 1 deletes it. Every operation takes an
// exclusive flock, replays the records written since this instance last read,
// then appends its own. Deleted keys stay in the log.

class FileStore::Locked {
 public:
  Locked(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd_ < 0) throw DistStoreError("FileStore: cannot open " + path + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd_);
        throw DistStoreError(std::string("FileStore: flock failed: ") + std::strerror(errno));
      }
    }
  }
  ~Locked() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

namespace {

void read_all(int fd, void* dst, size_t n) {
  auto* p = static_cast<char*>(dst);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw DistStoreError("FileStore: truncated file");
    p += r;
    n -= static_cast<size_t>(r);
  }
}

void write_all(int fd, const void* src, size_t n) {
  const auto* p = static_cast<const char*>(src);
  while (n > 0) {
    ssize_t r = ::write(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw DistStoreError(std::string("FileStore: write failed: ") + std::strerror(errno));
    p += r;
    n -= static_cast<size_t>(r);
  }
}

void replay(int fd, int64_t& offset, std::map<std::string, Bytes>& cache) {
  off_t end = ::lseek(fd, 0, SEEK_END);
  ::lseek(fd, offset, SEEK_SET);
  while (offset < end) {
    uint8_t op;
    uint64_t klen, vlen;
    read_all(fd, &op, 1);
    read_all(fd, &klen, 8);
    std::string key(klen, '\0');
    read_all(fd, key.data(), klen);
    read_all(fd, &vlen, 8);
    Bytes value(vlen);
    read_all(fd, value.data(), vlen);
    offset += 17 + static_cast<int64_t>(klen + vlen);
    if (op == 0) {
      cache[key] = std::move(value);
    } else {
      cache.erase(key);
    }
  }
}

void append(int fd, int64_t& offset, uint8_t op, const std::string& key, const Bytes& value) {
  ::lseek(fd, 0, SEEK_END);
  uint64_t klen = key.size(), vlen = value.size();
  std::vector<char> rec(17 + klen + vlen);
  rec[0] = static_cast<char>(op);
  std::memcpy(rec.data() + 1, &klen, 8);
  std::memcpy(rec.data() + 9, key.data(), klen);
  std::memcpy(rec.data() + 9 + klen, &vlen, 8);
  if (vlen) std::memcpy(rec.data() + 17 + klen, value.data(), vlen);
  write_all(fd, rec.data(), rec.size());
  offset += static_cast<int64_t>(rec.size());
}

constexpr const char* kCleanupKey = "cleanup/";
constexpr const char* kRefCountKey = "refcount/";

}  // namespace

FileStore::FileStore(std::string path, int world_size) : path_(std::move(path)), world_size_(world_size) {
  add(kRefCountKey, 1);
}

FileStore::~FileStore() {
  try {
    std::lock_guard<std::mutex> g(mutex_);
    Locked f(path_);
    replay(f.fd(), read_offset_, cache_);
    auto it = cache_.find(kCleanupKey);
    int64_t done = (it == cache_.end() ? 0 : parse_int(it->second)) + 1;
    append(f.fd(), read_offset_, 0, kCleanupKey, int_bytes(done));
    if (world_size_ > 0 && done >= world_size_) ::unlink(path_.c_str());
  } catch (...) {}
}

void FileStore::set(const std::string& key, const Bytes& value) {
  std::lock_guard<std::mutex> g(mutex_);
  Locked f(path_);
  replay(f.fd(), read_offset_, cache_);
  append(f.fd(), read_offset_, 0, key, value);
  cache_[key] = value;
}

Bytes FileStore::get(const std::string& key) {
  try {
    wait({key}, timeout_);
  } catch (const DistError&) {
    throw;
  } catch (const Error&) {
    throw Error("Timeout waiting for key: " + key + " after " + std::to_string(timeout_.count()) + " ms");
  }
  std::lock_guard<std::mutex> g(mutex_);
  return cache_.at(key);
}

int64_t FileStore::add(const std::string& key, int64_t value) {
  std::lock_guard<std::mutex> g(mutex_);
  Locked f(path_);
  replay(f.fd(), read_offset_, cache_);
  auto it = cache_.find(key);
  int64_t sum = (it == cache_.end() ? 0 : parse_int(it->second)) + value;
  Bytes v = int_bytes(sum);
  append(f.fd(), read_offset_, 0, key, v);
  cache_[key] = v;
  return sum;
}

Bytes FileStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  std::lock_guard<std::mutex> g(mutex_);
  Locked f(path_);
  replay(f.fd(), read_offset_, cache_);
  bool changed;
  Bytes r = apply_compare_set(cache_, key, expected, desired, &changed);
  if (changed) append(f.fd(), read_offset_, 0, key, desired);
  return r;
}

bool FileStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> g(mutex_);
  Locked f(path_);
  replay(f.fd(), read_offset_, cache_);
  for (const auto& k : keys) {
    if (!cache_.count(k)) return false;
  }
  return true;
}

bool FileStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> g(mutex_);
  Locked f(path_);
  replay(f.fd(), read_offset_, cache_);
  // As c10d's FileStore: true whether or not the key existed.
  append(f.fd(), read_offset_, 1, key, {});
  cache_.erase(key);
  return true;
}

int64_t FileStore::num_keys() {
  std::lock_guard<std::mutex> g(mutex_);
  Locked f(path_);
  replay(f.fd(), read_offset_, cache_);
  // The reference count is a key as in c10d; the clean-up counter is not.
  return static_cast<int64_t>(cache_.size() - cache_.count(kCleanupKey));
}

void FileStore::wait(const std::vector<std::string>& keys, Millis timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!check(keys)) {
    if (timeout.count() > 0 && std::chrono::steady_clock::now() >= deadline) {
      throw Error("Wait timeout");  // a RuntimeError, as c10d's FileStore
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace ember::distributed
