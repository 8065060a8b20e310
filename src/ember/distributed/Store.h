#pragma once
// Key-value stores for rendezvous (c10d's stores): ranks exchange addresses
// and counters through them before any collective runs.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ember/core/Error.h"
#include "ember/core/Macros.h"

#define EMBER_DIST_API EMBER_EXPORT

namespace ember::distributed {

using Bytes = std::vector<uint8_t>;
using Millis = std::chrono::milliseconds;

// Errors of the distributed layer; Python sees DistError and its subclasses.
class EMBER_DIST_API DistError : public Error {
 public:
  using Error::Error;
};
class EMBER_DIST_API DistBackendError : public DistError {
 public:
  using DistError::DistError;
};
class EMBER_DIST_API DistStoreError : public DistError {
 public:
  using DistError::DistError;
};
class EMBER_DIST_API DistNetworkError : public DistError {
 public:
  using DistError::DistError;
};

class EMBER_DIST_API Store {
 public:
  static constexpr Millis kDefaultTimeout = std::chrono::seconds(300);
  explicit Store(Millis timeout = kDefaultTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;

  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Waits up to the store's timeout for the key to exist.
  virtual Bytes get(const std::string& key) = 0;
  // Adds to the integer stored under key (0 when missing); returns the sum.
  virtual int64_t add(const std::string& key, int64_t value) = 0;
  // Sets desired when the current value equals expected (or the key is
  // missing and expected is empty); returns the value now stored.
  virtual Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) = 0;
  virtual bool check(const std::vector<std::string>& keys) = 0;
  virtual bool delete_key(const std::string& key) = 0;
  virtual int64_t num_keys() = 0;
  // Waits until every key exists; DistStoreError after the timeout.
  virtual void wait(const std::vector<std::string>& keys, Millis timeout) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

  Millis timeout() const { return timeout_; }
  virtual void set_timeout(Millis t) { timeout_ = t; }

 protected:
  Millis timeout_;
};

// An in-process store (a map behind a mutex).
class EMBER_DIST_API HashStore : public Store {
 public:
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Millis timeout) override;
  using Store::wait;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Bytes> data_;
};

// Every key prefixed with "<prefix>/" in an underlying store.
class EMBER_DIST_API PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Millis timeout) override;
  using Store::wait;
  void set_timeout(Millis t) override;
  const std::shared_ptr<Store>& underlying_store() const { return store_; }

 private:
  std::string full(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> full(const std::vector<std::string>& keys) const;
  std::string prefix_;
  std::shared_ptr<Store> store_;
};

// A store in a file shared by the processes (an append-only log of
// operations under flock). The last of world_size instances to close removes
// the file; world_size -1 leaves it.
class EMBER_DIST_API FileStore : public Store {
 public:
  FileStore(std::string path, int world_size);
  ~FileStore() override;
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Millis timeout) override;
  using Store::wait;
  const std::string& path() const { return path_; }
  int world_size() const { return world_size_; }

 private:
  class Locked;
  std::string path_;
  int world_size_;
  std::mutex mutex_;
  int64_t read_offset_ = 0;
  std::map<std::string, Bytes> cache_;
};

// A store served over TCP by the master process; the others connect to it.
class EMBER_DIST_API TCPStore : public Store {
 public:
  // port 0 on the master picks a free port (see port()).
  TCPStore(std::string host, int port, bool is_master, Millis timeout, int world_size = -1,
           bool wait_for_workers = true);
  ~TCPStore() override;
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Millis timeout) override;
  using Store::wait;
  const std::string& host() const { return host_; }
  int port() const { return port_; }

  class Server;

 private:
  // Sends one request; on a server-side timeout, raises naming the keys.
  Bytes request(const Bytes& message, Millis timeout, const std::vector<std::string>& keys = {});
  std::string host_;
  int port_;
  std::unique_ptr<Server> server_;
  std::mutex mutex_;  // one request at a time on the socket
  int fd_ = -1;
};

// "100ms": a duration as the stores' messages print it.
EMBER_DIST_API std::string timeout_text(Millis t);

}  // namespace ember::distributed
