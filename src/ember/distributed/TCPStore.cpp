// TCPStore: a key-value server in the master process and a client in every
// process (the master's client talks to its own server).
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "ember/distributed/Store.h"

namespace ember::distributed {

namespace {

// Note [TCPStore protocol]
// A request is [command u8][fields]; a field is [length u64][bytes]. The reply
// is [status u8][fields]: status 0 ok, 1 timed out. Blocking commands (GET,
// WAIT) carry their timeout in milliseconds and the server waits for them, so
// the client needs no polling.
enum Command : uint8_t { SET, GET, ADD, CHECK, COMPARE_SET, DELETE_KEY, NUM_KEYS, WAIT };

void put_u64(Bytes& out, uint64_t v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + 8);
}
void put_field(Bytes& out, const void* data, size_t n) {
  put_u64(out, n);
  const auto* p = static_cast<const uint8_t*>(data);
  out.insert(out.end(), p, p + n);
}
void put_field(Bytes& out, const std::string& s) { put_field(out, s.data(), s.size()); }
void put_field(Bytes& out, const Bytes& b) { put_field(out, b.data(), b.size()); }

bool send_all(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t r = ::send(fd, p, n, MSG_NOSIGNAL);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}
bool recv_all(int fd, void* data, size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}
// A framed message: [length u64][payload].
bool send_message(int fd, const Bytes& payload) {
  uint64_t n = payload.size();
  return send_all(fd, &n, 8) && send_all(fd, payload.data(), payload.size());
}
bool recv_message(int fd, Bytes& payload) {
  uint64_t n;
  if (!recv_all(fd, &n, 8)) return false;
  payload.resize(n);
  return recv_all(fd, payload.data(), n);
}

struct Reader {
  const Bytes& b;
  size_t pos = 0;
  uint64_t u64() {
    EMBER_CHECK(pos + 8 <= b.size(), "TCPStore: malformed message");
    uint64_t v;
    std::memcpy(&v, b.data() + pos, 8);
    pos += 8;
    return v;
  }
  Bytes bytes() {
    uint64_t n = u64();
    EMBER_CHECK(pos + n <= b.size(), "TCPStore: malformed message");
    Bytes out(b.begin() + static_cast<ptrdiff_t>(pos), b.begin() + static_cast<ptrdiff_t>(pos + n));
    pos += n;
    return out;
  }
  std::string str() {
    Bytes v = bytes();
    return std::string(v.begin(), v.end());
  }
};

}  // namespace

class TCPStore::Server {
 public:
  Server(int port, int* bound_port) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM, 0);
    bool v6 = listen_fd_ >= 0;
    if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listen_fd_ < 0) throw DistNetworkError(std::string("TCPStore: socket: ") + std::strerror(errno));
    int one = 1, zero = 0;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    int rc;
    if (v6) {
      ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
      sockaddr_in6 addr{};
      addr.sin6_family = AF_INET6;
      addr.sin6_addr = in6addr_any;
      addr.sin6_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    } else {
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_ANY);
      addr.sin_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    }
    if (rc != 0 || ::listen(listen_fd_, 128) != 0) {
      int err = errno;
      ::close(listen_fd_);
      throw DistNetworkError("The server socket has failed to listen on any local network address. port: " +
                             std::to_string(port) + ", useIpv6: " + (v6 ? "true" : "false") + ", code: -" +
                             std::to_string(err) + ", name: " + std::strerror(err));
    }
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len);
    *bound_port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                           : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    accept_thread_ = std::thread([this] { accept_loop(); });
  }

  ~Server() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    accept_thread_.join();
    ::close(listen_fd_);
    {
      std::lock_guard<std::mutex> g(mutex_);
      for (int fd : client_fds_) ::shutdown(fd, SHUT_RDWR);
      changed_.notify_all();
    }
    for (auto& t : client_threads_) t.join();
  }

 private:
  void accept_loop() {
    while (!stopping_) {
      pollfd p{listen_fd_, POLLIN, 0};
      int r = ::poll(&p, 1, 100);
      if (r <= 0 || stopping_) continue;
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      std::lock_guard<std::mutex> g(mutex_);
      client_fds_.push_back(fd);
      client_threads_.emplace_back([this, fd] { serve(fd); });
    }
  }

  void serve(int fd) {
    Bytes msg;
    while (!stopping_ && recv_message(fd, msg)) {
      Bytes reply;
      try {
        reply = handle(msg);
      } catch (...) {
        break;
      }
      if (!send_message(fd, reply)) break;
    }
    std::lock_guard<std::mutex> g(mutex_);
    for (auto& c : client_fds_) {
      if (c == fd) c = -1;
    }
    ::close(fd);
  }

  bool has_all(const std::vector<std::string>& keys) {
    for (const auto& k : keys) {
      if (!data_.count(k)) return false;
    }
    return true;
  }

  // Waits for keys under the lock; false on timeout or shutdown.
  bool wait_keys(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys, int64_t timeout_ms) {
    auto ready = [&] { return stopping_ || has_all(keys); };
    if (timeout_ms <= 0) {
      changed_.wait(lock, ready);
    } else {
      changed_.wait_for(lock, Millis(timeout_ms), ready);
    }
    return has_all(keys);
  }

  Bytes handle(const Bytes& msg) {
    Reader in{msg};
    EMBER_CHECK(!msg.empty(), "TCPStore: empty message");
    in.pos = 1;
    Bytes out{0};
    std::unique_lock<std::mutex> lock(mutex_);
    switch (msg[0]) {
      case SET: {
        std::string key = in.str();
        data_[key] = in.bytes();
        changed_.notify_all();
        break;
      }
      case GET: {
        std::string key = in.str();
        int64_t timeout_ms = static_cast<int64_t>(in.u64());
        if (!wait_keys(lock, {key}, timeout_ms)) return Bytes{1};
        put_field(out, data_[key]);
        break;
      }
      case ADD: {
        std::string key = in.str();
        int64_t value = static_cast<int64_t>(in.u64());
        auto it = data_.find(key);
        int64_t sum = value + (it == data_.end() || it->second.empty()
                                   ? 0
                                   : std::stoll(std::string(it->second.begin(), it->second.end())));
        std::string s = std::to_string(sum);
        data_[key] = Bytes(s.begin(), s.end());
        changed_.notify_all();
        put_u64(out, static_cast<uint64_t>(sum));
        break;
      }
      case CHECK:
      case WAIT: {
        uint64_t n = in.u64();
        std::vector<std::string> keys;
        for (uint64_t i = 0; i < n; ++i) keys.push_back(in.str());
        if (msg[0] == CHECK) {
          out.push_back(has_all(keys) ? 1 : 0);
        } else if (!wait_keys(lock, keys, static_cast<int64_t>(in.u64()))) {
          return Bytes{1};
        }
        break;
      }
      case COMPARE_SET: {
        std::string key = in.str();
        Bytes expected = in.bytes(), desired = in.bytes();
        auto it = data_.find(key);
        if (it == data_.end()) {
          if (expected.empty()) {
            data_[key] = desired;
            changed_.notify_all();
            put_field(out, desired);
          } else {
            put_field(out, expected);
          }
        } else {
          if (it->second == expected) {
            it->second = desired;
            changed_.notify_all();
          }
          put_field(out, it->second);
        }
        break;
      }
      case DELETE_KEY: out.push_back(data_.erase(in.str()) > 0 ? 1 : 0); break;
      case NUM_KEYS: put_u64(out, data_.size()); break;
      default: throw Error("TCPStore: unknown command");
    }
    return out;
  }

  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Bytes> data_;
  std::vector<int> client_fds_;
  std::vector<std::thread> client_threads_;
};

namespace {

int connect_to(const std::string& host, int port, Millis timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error = "no address";
  while (true) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int gai = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (gai == 0) {
      for (addrinfo* a = res; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          ::freeaddrinfo(res);
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          return fd;
        }
        last_error = std::strerror(errno);
        ::close(fd);
      }
      ::freeaddrinfo(res);
    } else {
      last_error = ::gai_strerror(gai);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw DistNetworkError("The client socket has timed out after " +
                             std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) +
                             "s while trying to connect to (" + host + ", " + std::to_string(port) +
                             "). Last error: " + last_error);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

TCPStore::TCPStore(std::string host, int port, bool is_master, Millis timeout, int world_size, bool wait_for_workers)
    : Store(timeout), host_(std::move(host)), port_(port) {
  if (is_master) server_ = std::make_unique<Server>(port, &port_);
  fd_ = connect_to(host_, port_, timeout);
  // Every client counts itself in; the master waits for world_size of them.
  add("init/", 1);
  if (is_master && wait_for_workers && world_size > 0) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    int64_t joined;
    while ((joined = add("init/", 0)) < world_size) {
      if (std::chrono::steady_clock::now() >= deadline) {
        throw DistStoreError("Timed out after " +
                             std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) +
                             " seconds waiting for clients. " + std::to_string(joined) + "/" +
                             std::to_string(world_size) + " clients joined.");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

TCPStore::~TCPStore() {
  if (fd_ >= 0) ::close(fd_);
  server_.reset();
}

Bytes TCPStore::request(const Bytes& message, Millis timeout, const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> g(mutex_);
  Bytes reply;
  if (!send_message(fd_, message) || !recv_message(fd_, reply) || reply.empty()) {
    throw DistNetworkError("TCPStore: the connection to the store at " + host_ + ":" + std::to_string(port_) +
                           " was closed by the server (has the master process exited?)");
  }
  if (reply[0] == 1) {
    std::string names;
    for (const auto& k : keys) names += (names.empty() ? "/" : ", /") + k;
    throw DistStoreError("wait timeout after " + timeout_text(timeout) + ", keys: " + names);
  }
  return reply;
}

void TCPStore::set(const std::string& key, const Bytes& value) {
  Bytes m{SET};
  put_field(m, key);
  put_field(m, value);
  request(m, timeout_);
}

Bytes TCPStore::get(const std::string& key) {
  Bytes m{GET};
  put_field(m, key);
  put_u64(m, static_cast<uint64_t>(timeout_.count()));
  Bytes r = request(m, timeout_, {key});
  Reader in{r};
  in.pos = 1;
  return in.bytes();
}

int64_t TCPStore::add(const std::string& key, int64_t value) {
  Bytes m{ADD};
  put_field(m, key);
  put_u64(m, static_cast<uint64_t>(value));
  Bytes r = request(m, timeout_);
  Reader in{r};
  in.pos = 1;
  return static_cast<int64_t>(in.u64());
}

Bytes TCPStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  Bytes m{COMPARE_SET};
  put_field(m, key);
  put_field(m, expected);
  put_field(m, desired);
  Bytes r = request(m, timeout_);
  Reader in{r};
  in.pos = 1;
  return in.bytes();
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  Bytes m{CHECK};
  put_u64(m, keys.size());
  for (const auto& k : keys) put_field(m, k);
  return request(m, timeout_).at(1) == 1;
}

bool TCPStore::delete_key(const std::string& key) {
  Bytes m{DELETE_KEY};
  put_field(m, key);
  return request(m, timeout_).at(1) == 1;
}

int64_t TCPStore::num_keys() {
  Bytes r = request(Bytes{NUM_KEYS}, timeout_);
  Reader in{r};
  in.pos = 1;
  return static_cast<int64_t>(in.u64());
}

void TCPStore::wait(const std::vector<std::string>& keys, Millis timeout) {
  Bytes m{WAIT};
  put_u64(m, keys.size());
  for (const auto& k : keys) put_field(m, k);
  put_u64(m, static_cast<uint64_t>(timeout.count()));
  request(m, timeout, keys);
}

}  // namespace ember::distributed
