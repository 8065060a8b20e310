// The Gloo backend: collectives from Gloo's library, run in order on one
// worker thread per group; send and recv post Gloo's unbound buffers at once.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>

#include "ember/distributed/ProcessGroup.h"

namespace ember::distributed {

bool gloo_available() { return true; }

namespace {

// Gloo's rendezvous reads and writes through one of our stores.
class GlooStore : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(std::shared_ptr<distributed::Store> store) : store_(std::move(store)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, Bytes(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    Bytes v = store_->get(key);
    return std::vector<char>(v.begin(), v.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<distributed::Store> store_;
};

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

template <typename T, typename Op>
void combine(void* c, const void* a, const void* b, size_t n) {
  auto* out = static_cast<T*>(c);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  Op op;
  for (size_t i = 0; i < n; ++i) out[i] = op(x[i], y[i]);
}

// 16-bit floats combine in float and round once.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
template <typename T>
struct Sum {
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>)
      return a || b;
    else
      return T(static_cast<Acc<T>>(a) + static_cast<Acc<T>>(b));
  }
};
template <typename T>
struct Prod {
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>)
      return a && b;
    else
      return T(static_cast<Acc<T>>(a) * static_cast<Acc<T>>(b));
  }
};
template <typename T>
struct Min {
  T operator()(T a, T b) const { return static_cast<Acc<T>>(b) < static_cast<Acc<T>>(a) ? b : a; }
};
template <typename T>
struct Max {
  T operator()(T a, T b) const { return static_cast<Acc<T>>(b) > static_cast<Acc<T>>(a) ? b : a; }
};
template <typename T>
struct BitAnd {
  T operator()(T a, T b) const { return a & b; }
};
template <typename T>
struct BitOr {
  T operator()(T a, T b) const { return a | b; }
};
template <typename T>
struct BitXor {
  T operator()(T a, T b) const { return a ^ b; }
};

ReduceFn reduce_fn(ScalarType dtype, ReduceOp op) {
  return EMBER_DISPATCH_ALL_TYPES(dtype, "all_reduce", [&]() -> ReduceFn {
    using T = scalar_t;
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::AVG: return &combine<T, Sum<T>>;
      case ReduceOp::PRODUCT: return &combine<T, Prod<T>>;
      case ReduceOp::MIN: return &combine<T, Min<T>>;
      case ReduceOp::MAX: return &combine<T, Max<T>>;
      default: break;
    }
    if constexpr (std::is_integral_v<T>) {
      switch (op) {
        case ReduceOp::BAND: return &combine<T, BitAnd<T>>;
        case ReduceOp::BOR: return &combine<T, BitOr<T>>;
        case ReduceOp::BXOR: return &combine<T, BitXor<T>>;
        default: break;
      }
    }
    throw DistBackendError(std::string("Cannot use ReduceOp.") + reduce_op_name(op) + " with non-integral dtype");
  });
}

// AVG: the sum divided by the group's size, in the tensor's dtype.
void divide(void* data, ScalarType dtype, size_t n, int size) {
  EMBER_DISPATCH_ALL_TYPES(dtype, "all_reduce", [&] {
    using T = scalar_t;
    auto* p = static_cast<T*>(data);
    if constexpr (std::is_same_v<T, bool>) {
      throw DistBackendError("Cannot use ReduceOp.AVG with bool tensors");
    } else if constexpr (std::is_integral_v<T>) {
      for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(p[i] / size);
    } else {
      for (size_t i = 0; i < n; ++i) p[i] = T(static_cast<Acc<T>>(p[i]) / static_cast<Acc<T>>(size));
    }
  });
}

// Runs f with a pointer type whose size is the element size, since Gloo's
// buffer setters take the element size from their template argument.
template <typename F>
void with_element(size_t element_size, F&& f) {
  switch (element_size) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f(uint64_t{}); break;
    default: throw DistBackendError("unsupported element size");
  }
}

void check_tensor(const Tensor& t) {
  EMBER_CHECK_TYPE(ValueError, t.defined(), "expected a tensor");
  EMBER_CHECK(t.is_cpu(), "No backend type associated with device type ", t.device().str());
  EMBER_CHECK_TYPE(ValueError, t.is_contiguous(), "Tensors must be contiguous");
}

size_t nbytes(const Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

class ProcessGroupGloo;

// Note [Waiting thread runs the work]
// Collectives run in order on the group's worker thread. A thread that waits
// for a work still at the head of the queue, while the worker is idle, runs
// it itself: a blocking collective then costs no thread hand-over, which on
// a busy machine is most of a small all_reduce's time.
class GlooWork : public Work {
 public:
  bool wait(Millis timeout) override;
  std::function<void()> run;
  std::weak_ptr<ProcessGroupGloo> group;
};

class SendRecvWork : public Work {
 public:
  SendRecvWork(std::unique_ptr<gloo::transport::UnboundBuffer> buffer, bool is_send, Millis timeout)
      : buffer_(std::move(buffer)), is_send_(is_send), timeout_(timeout) {}
  bool wait(Millis timeout) override {
    if (!is_completed()) {
      Millis t = timeout.count() > 0 ? timeout : timeout_;
      try {
        if (is_send_) {
          buffer_->waitSend(t);
        } else {
          buffer_->waitRecv(t);
        }
        finish();
      } catch (const std::exception& e) {
        finish(std::make_exception_ptr(Error(e.what())));
      }
    }
    return Work::wait();
  }

 private:
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer_;
  bool is_send_;
  Millis timeout_;
};

std::shared_ptr<gloo::transport::Device> make_device() {
  gloo::transport::tcp::attr attr;
  if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME")) {
    attr.iface = iface;
    return gloo::transport::tcp::CreateDevice(attr);
  }
  // This host's name when it resolves to an address Gloo can bind, else loopback.
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) == 0 && host[0]) {
    try {
      attr.hostname = host;
      return gloo::transport::tcp::CreateDevice(attr);
    } catch (const std::exception&) {}
  }
  attr.hostname = "127.0.0.1";
  return gloo::transport::tcp::CreateDevice(attr);
}

class ProcessGroupGloo : public ProcessGroup, public std::enable_shared_from_this<ProcessGroupGloo> {
 public:
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, Millis timeout)
      : ProcessGroup(rank, size), timeout_(timeout) {
    auto device = make_device();
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(timeout);
    GlooStore gloo_store(store);
    try {
      context->connectFullMesh(gloo_store, device);
    } catch (const DistError&) {
      throw;
    } catch (const std::exception& e) {
      throw DistBackendError(std::string("Gloo connectFullMesh failed: ") + e.what());
    }
    context_ = context;
    worker_ = std::thread([this] { work_loop(); });
  }

  ~ProcessGroupGloo() override {
    {
      std::lock_guard<std::mutex> g(mutex_);
      stopping_ = true;
      queue_cv_.notify_all();
    }
    worker_.join();
  }

  std::string backend_name() const override { return "gloo"; }

  std::shared_ptr<Work> allreduce(Tensor t, ReduceOp op) override {
    check_tensor(t);
    ReduceFn fn = reduce_fn(t.scalar_type(), op);
    return enqueue({t}, [this, t, op, fn] {
      gloo::AllreduceOptions opts(context_);
      with_element(t.element_size(), [&](auto e) {
        using E = decltype(e);
        opts.setOutput(static_cast<E*>(t.data_ptr()), static_cast<size_t>(t.numel()));
      });
      opts.setReduceFunction(fn);
      opts.setTimeout(timeout_);
      const uint32_t tag = next_tag();
      opts.setTag(tag);
      if (t.numel() > 0 && nbytes(t) <= kExchangeMaxBytes) {
        exchange_allreduce(t, fn, tag);
      } else if (t.numel() > 0 && size_ == 2) {
        pair_ring_allreduce(t, fn, tag);
      } else if (t.numel() > 0) {
        gloo::allreduce(opts);
      }
      if (op == ReduceOp::AVG) divide(t.data_ptr(), t.scalar_type(), static_cast<size_t>(t.numel()), size_);
    });
  }

  std::shared_ptr<Work> broadcast(Tensor t, int root) override {
    check_tensor(t);
    check_rank(root, "root");
    return enqueue({t}, [this, t, root] {
      gloo::BroadcastOptions opts(context_);
      with_element(t.element_size(), [&](auto e) {
        using E = decltype(e);
        opts.setOutput(static_cast<E*>(t.data_ptr()), static_cast<size_t>(t.numel()));
      });
      opts.setRoot(root);
      opts.setTimeout(timeout_);
      opts.setTag(next_tag());
      gloo::broadcast(opts);
    });
  }

  std::shared_ptr<Work> reduce(Tensor t, int root, ReduceOp op) override {
    check_tensor(t);
    check_rank(root, "root");
    ReduceFn fn = reduce_fn(t.scalar_type(), op);
    return enqueue({t}, [this, t, root, op, fn] {
      gloo::ReduceOptions opts(context_);
      with_element(t.element_size(), [&](auto e) {
        using E = decltype(e);
        opts.setOutput(static_cast<E*>(t.data_ptr()), static_cast<size_t>(t.numel()));
      });
      opts.setRoot(root);
      opts.setReduceFunction(fn);
      opts.setTimeout(timeout_);
      opts.setTag(next_tag());
      if (t.numel() > 0) gloo::reduce(opts);
      if (op == ReduceOp::AVG && rank_ == root) {
        divide(t.data_ptr(), t.scalar_type(), static_cast<size_t>(t.numel()), size_);
      }
    });
  }

  std::shared_ptr<Work> allgather(std::vector<Tensor> outputs, Tensor input) override {
    check_tensor(input);
    check_list(outputs, input, "output_tensor_list");
    return enqueue(outputs, [this, outputs, input] {
      std::vector<char> flat(nbytes(input) * static_cast<size_t>(size_));
      gloo::AllgatherOptions opts(context_);
      with_element(input.element_size(), [&](auto e) {
        using E = decltype(e);
        opts.setInput(static_cast<E*>(input.data_ptr()), static_cast<size_t>(input.numel()));
        opts.setOutput(reinterpret_cast<E*>(flat.data()), static_cast<size_t>(input.numel()) * size_);
      });
      opts.setTimeout(timeout_);
      opts.setTag(next_tag());
      gloo::allgather(opts);
      for (int r = 0; r < size_; ++r) {
        std::memcpy(outputs[r].data_ptr(), flat.data() + r * nbytes(input), nbytes(input));
      }
    });
  }

  std::shared_ptr<Work> allgather_into(Tensor output, Tensor input) override {
    check_tensor(input);
    check_tensor(output);
    EMBER_CHECK_TYPE(ValueError, output.numel() == input.numel() * size_,
                     "output tensor size must be equal to world_size times input tensor size");
    EMBER_CHECK_TYPE(ValueError, output.scalar_type() == input.scalar_type(),
                     "output tensor must have the same type as input tensor");
    return enqueue({output}, [this, output, input] {
      gloo::AllgatherOptions opts(context_);
      with_element(input.element_size(), [&](auto e) {
        using E = decltype(e);
        opts.setInput(static_cast<E*>(input.data_ptr()), static_cast<size_t>(input.numel()));
        opts.setOutput(static_cast<E*>(output.data_ptr()), static_cast<size_t>(output.numel()));
      });
      opts.setTimeout(timeout_);
      opts.setTag(next_tag());
      gloo::allgather(opts);
    });
  }

  std::shared_ptr<Work> reduce_scatter(Tensor output, Tensor input, ReduceOp op) override {
    check_tensor(input);
    check_tensor(output);
    EMBER_CHECK_TYPE(ValueError, input.numel() == output.numel() * size_,
                     "input tensor must be the same size as output size times world size");
    EMBER_CHECK_TYPE(ValueError, output.scalar_type() == input.scalar_type(),
                     "input tensor must be the same type as the output tensor.");
    ReduceFn fn = reduce_fn(input.scalar_type(), op);
    return enqueue({output}, [this, output, input, op, fn] {
      std::vector<char> buf(nbytes(input));
      std::memcpy(buf.data(), input.data_ptr(), buf.size());
      gloo::AllreduceOptions opts(context_);
      with_element(input.element_size(), [&](auto e) {
        using E = decltype(e);
        opts.setOutput(reinterpret_cast<E*>(buf.data()), static_cast<size_t>(input.numel()));
      });
      opts.setReduceFunction(fn);
      opts.setTimeout(timeout_);
      opts.setTag(next_tag());
      if (input.numel() > 0) gloo::allreduce(opts);
      std::memcpy(output.data_ptr(), buf.data() + rank_ * nbytes(output), nbytes(output));
      if (op == ReduceOp::AVG) {
        divide(output.data_ptr(), output.scalar_type(), static_cast<size_t>(output.numel()), size_);
      }
    });
  }

  std::shared_ptr<Work> gather(std::vector<Tensor> outputs, Tensor input, int root) override {
    check_tensor(input);
    check_rank(root, "root");
    if (rank_ == root) check_list(outputs, input, "gather_list");
    return enqueue(outputs, [this, outputs, input, root] {
      std::vector<char> flat(rank_ == root ? nbytes(input) * size_ : 0);
      gloo::GatherOptions opts(context_);
      with_element(input.element_size(), [&](auto e) {
        using E = decltype(e);
        opts.setInput(static_cast<E*>(input.data_ptr()), static_cast<size_t>(input.numel()));
        if (rank_ == root) {
          opts.setOutput(reinterpret_cast<E*>(flat.data()), static_cast<size_t>(input.numel()) * size_);
        }
      });
      opts.setRoot(root);
      opts.setTimeout(timeout_);
      opts.setTag(next_tag());
      gloo::gather(opts);
      if (rank_ == root) {
        for (int r = 0; r < size_; ++r) {
          std::memcpy(outputs[r].data_ptr(), flat.data() + r * nbytes(input), nbytes(input));
        }
      }
    });
  }

  std::shared_ptr<Work> scatter(Tensor output, std::vector<Tensor> inputs, int root) override {
    check_tensor(output);
    check_rank(root, "root");
    if (rank_ == root) check_list(inputs, output, "scatter_list");
    return enqueue({output}, [this, output, inputs, root] {
      gloo::ScatterOptions opts(context_);
      with_element(output.element_size(), [&](auto e) {
        using E = decltype(e);
        if (rank_ == root) {
          std::vector<E*> ptrs;
          for (const auto& t : inputs) ptrs.push_back(static_cast<E*>(t.data_ptr()));
          opts.setInputs(ptrs, static_cast<size_t>(output.numel()));
        }
        opts.setOutput(static_cast<E*>(output.data_ptr()), static_cast<size_t>(output.numel()));
      });
      opts.setRoot(root);
      opts.setTimeout(timeout_);
      opts.setTag(next_tag());
      gloo::scatter(opts);
    });
  }

  std::shared_ptr<Work> alltoall(Tensor output, Tensor input, AllToAllSplits splits) override {
    check_tensor(input);
    check_tensor(output);
    EMBER_CHECK_TYPE(ValueError, output.scalar_type() == input.scalar_type(),
                     "all_to_all: input and output must have the same dtype");
    return enqueue({output}, [this, output, input, splits] {
      if (splits.input.empty() && splits.output.empty()) {
        gloo::AlltoallOptions opts(context_);
        with_element(input.element_size(), [&](auto e) {
          using E = decltype(e);
          opts.setInput(static_cast<E*>(input.data_ptr()), static_cast<size_t>(input.numel()));
          opts.setOutput(static_cast<E*>(output.data_ptr()), static_cast<size_t>(output.numel()));
        });
        opts.setTimeout(timeout_);
        opts.setTag(next_tag());
        gloo::alltoall(opts);
        return;
      }
      gloo::AlltoallvOptions opts(context_);
      with_element(input.element_size(), [&](auto e) {
        using E = decltype(e);
        opts.setInput(static_cast<E*>(input.data_ptr()), splits.input);
        opts.setOutput(static_cast<E*>(output.data_ptr()), splits.output);
      });
      opts.setTimeout(timeout_);
      opts.setTag(next_tag());
      gloo::alltoallv(opts);
    });
  }

  std::shared_ptr<Work> send(Tensor t, int dst, int tag) override {
    check_tensor(t);
    check_rank(dst, "dst");
    auto buf = context_->createUnboundBuffer(t.data_ptr(), nbytes(t));
    buf->send(dst, gloo::Slot::build(kSendRecvPrefix, static_cast<uint32_t>(tag)));
    auto w = std::make_shared<SendRecvWork>(std::move(buf), true, timeout_);
    w->outputs_ = {t};
    return w;
  }

  std::shared_ptr<Work> recv(Tensor t, int src, int tag) override {
    check_tensor(t);
    check_rank(src, "src");
    auto buf = context_->createUnboundBuffer(t.data_ptr(), nbytes(t));
    buf->recv(src, gloo::Slot::build(kSendRecvPrefix, static_cast<uint32_t>(tag)));
    auto w = std::make_shared<SendRecvWork>(std::move(buf), false, timeout_);
    w->outputs_ = {t};
    return w;
  }

  std::shared_ptr<Work> barrier() override {
    return enqueue({}, [this] {
      gloo::BarrierOptions opts(context_);
      opts.setTimeout(timeout_);
      opts.setTag(next_tag());
      gloo::barrier(opts);
    });
  }

 private:
  static constexpr uint8_t kSendRecvPrefix = 0x21;
  static constexpr uint8_t kExchangePrefix = 0x22;
  static constexpr uint8_t kRingScatterPrefix = 0x23;
  static constexpr uint8_t kRingGatherPrefix = 0x24;
  // Up to this size an all_reduce is one exchange (Note [Small all_reduce]).
  static constexpr size_t kExchangeMaxBytes = 256 * 1024;
  // Note [Two-rank ring]'s segment and window.
  static constexpr size_t kRingSegmentMinBytes = 1024 * 1024;
  static constexpr size_t kRingSegmentMaxBytes = 4 * 1024 * 1024;
  static constexpr size_t kRingWindowMax = 8;
  static constexpr size_t kRingStagingBytes = 16 * 1024 * 1024;
  static constexpr size_t kRegisteredMax = 16;

  // Note [Small all_reduce]
  // A small all_reduce is latency-bound: the ring takes 2(n-1) steps, each
  // a wake-up of the receiving thread. Here every rank sends its whole
  // buffer to every other rank at once and combines the n contributions in
  // rank order, so one step suffices and every rank computes the very same
  // bits. It moves (n-1) times the buffer per rank instead of about twice,
  // which is why it stops at kExchangeMaxBytes. The tensor is sent from its
  // own memory (Note [Registered buffers]); the peers' contributions land in
  // a staging buffer made once per group.
  void exchange_allreduce(const Tensor& t, ReduceFn fn, uint32_t tag) {
    const size_t bytes = nbytes(t);
    const size_t count = static_cast<size_t>(t.numel());
    gloo::transport::UnboundBuffer* theirs =
        staging(exchange_theirs_storage_, exchange_theirs_, kExchangeMaxBytes * static_cast<size_t>(size_ - 1));
    gloo::transport::UnboundBuffer* mine = registered(t.data_ptr(), bytes);
    char* others = exchange_theirs_storage_.data();
    const uint64_t slot = gloo::Slot::build(kExchangePrefix, tag);
    auto index = [&](int peer) { return static_cast<size_t>(peer < rank_ ? peer : peer - 1); };
    guard_registered([&] {
      for (int peer = 0; peer < size_; ++peer) {
        if (peer == rank_) continue;
        theirs->recv(peer, slot, index(peer) * bytes, bytes);
        mine->send(peer, slot, 0, bytes);
      }
      for (int i = 0; i < size_ - 1; ++i) theirs->waitRecv(timeout_);
      for (int i = 0; i < size_ - 1; ++i) mine->waitSend(timeout_);
    });
    // result = contribution 0 (op) 1 (op) ... in rank order.
    auto part = [&](int r) -> const void* {
      return r == rank_ ? t.data_ptr() : static_cast<const void*>(others + index(r) * bytes);
    };
    if (rank_ == 0) {
      for (int r = 1; r < size_; ++r) fn(t.data_ptr(), t.data_ptr(), part(r), count);
      return;
    }
    exchange_acc_.resize(bytes);
    std::memcpy(exchange_acc_.data(), part(0), bytes);
    for (int r = 1; r < size_; ++r) fn(exchange_acc_.data(), exchange_acc_.data(), part(r), count);
    std::memcpy(t.data_ptr(), exchange_acc_.data(), bytes);
  }

  // Note [Two-rank ring]
  // Above kExchangeMaxBytes two ranks run a ring of their own: rank r owns
  // half r of the tensor. Each sends the other half to its peer in segments
  // straight from the tensor's memory, combines each segment of its own half
  // with the peer's as it arrives (contribution 0 (op) contribution 1, the
  // order of Gloo's ring on two ranks, so both ranks hold the same bits) and
  // sends the finished segment back at once, so transfer and reduction
  // overlap. The peer's finished half lands directly in the tensor: its
  // region is free once our own segments of it have been read out, which
  // the peer has seen before it sends the result back. Both ranks cut the
  // halves alike: segments of an eighth of a half, 1 to 4 MB (larger ones
  // cost fewer hand-overs at 64 MB); only a window of them, at most 8 and
  // 16 MB, is staged, in a buffer made once per group.
  // Gloo's allreduce made and registered its buffers on every call, which
  // cost as much as moving a megabyte here.
  void pair_ring_allreduce(const Tensor& t, ReduceFn fn, uint32_t tag) {
    const size_t count = static_cast<size_t>(t.numel());
    const size_t elem = t.element_size();
    const size_t half = (count + 1) / 2;
    // An eighth of a half per segment, within [1 MB, 4 MB]; at most 16 MB staged.
    const size_t seg_bytes = std::clamp((count - half) * elem / 8, kRingSegmentMinBytes, kRingSegmentMaxBytes);
    const size_t seg = std::max<size_t>(1, seg_bytes / elem);
    const size_t window_max = std::min(kRingWindowMax, kRingStagingBytes / seg_bytes);
    const int peer = 1 - rank_;
    const size_t mine_begin = rank_ == 0 ? 0 : half, mine_end = rank_ == 0 ? half : count;
    const size_t theirs_begin = rank_ == 0 ? half : 0, theirs_end = rank_ == 0 ? count : half;
    const size_t mine_segments = (mine_end - mine_begin + seg - 1) / seg;
    const size_t theirs_segments = (theirs_end - theirs_begin + seg - 1) / seg;
    char* data = static_cast<char*>(t.data_ptr());
    gloo::transport::UnboundBuffer* out = registered(data, count * elem);
    gloo::transport::UnboundBuffer* window =
        staging(ring_storage_, ring_window_, std::min(window_max, mine_segments) * seg * elem);
    const uint64_t scatter_slot = gloo::Slot::build(kRingScatterPrefix, tag);
    const uint64_t gather_slot = gloo::Slot::build(kRingGatherPrefix, tag);
    auto length = [&](size_t begin, size_t end, size_t k) { return std::min(seg, end - begin - k * seg); };
    auto post_window = [&](size_t k) {
      window->recv(peer, scatter_slot, (k % window_max) * seg * elem, length(mine_begin, mine_end, k) * elem);
    };
    guard_registered([&] {
      for (size_t k = 0; k < std::min(window_max, mine_segments); ++k) post_window(k);
      for (size_t k = 0; k < theirs_segments; ++k) {
        const size_t n = length(theirs_begin, theirs_end, k);
        out->send(peer, scatter_slot, (theirs_begin + k * seg) * elem, n * elem);
        out->recv(peer, gather_slot, (theirs_begin + k * seg) * elem, n * elem);
      }
      for (size_t k = 0; k < mine_segments; ++k) {
        window->waitRecv(timeout_);  // segments complete in the order posted
        const size_t n = length(mine_begin, mine_end, k);
        char* own = data + (mine_begin + k * seg) * elem;
        const char* peer_part = ring_storage_.data() + (k % window_max) * seg * elem;
        if (rank_ == 0) {
          fn(own, own, peer_part, n);
        } else {
          fn(own, peer_part, own, n);
        }
        if (k + window_max < mine_segments) post_window(k + window_max);
        out->send(peer, gather_slot, (mine_begin + k * seg) * elem, n * elem);
      }
      for (size_t k = 0; k < theirs_segments; ++k) out->waitRecv(timeout_);
      for (size_t k = 0; k < theirs_segments + mine_segments; ++k) out->waitSend(timeout_);
    });
  }

  // Note [Registered buffers]
  // Making and destroying a Gloo unbound buffer costs about a millisecond of
  // CPU in Debian's Gloo, whose device thread spins meanwhile; a tensor that
  // is all-reduced again and again (a DDP bucket, a benchmark's tensor) keeps
  // its buffer here, keyed by address and size. A buffer holds no more than
  // the address, and is only used while its tensor is being reduced. After a
  // failure every one is dropped, which also drops their posted receives.
  gloo::transport::UnboundBuffer* registered(void* ptr, size_t bytes) {
    for (auto& entry : registered_) {
      if (entry.ptr == ptr && entry.bytes == bytes) return entry.buffer.get();
    }
    if (registered_.size() >= kRegisteredMax) registered_.pop_front();
    registered_.push_back({ptr, bytes, context_->createUnboundBuffer(ptr, bytes)});
    return registered_.back().buffer.get();
  }

  template <typename F>
  void guard_registered(F&& f) {
    try {
      f();
    } catch (...) {
      registered_.clear();
      exchange_theirs_.reset();
      ring_window_.reset();
      throw;
    }
  }

  // A staging buffer of at least bytes, registered once and kept.
  gloo::transport::UnboundBuffer* staging(std::vector<char>& storage,
                                          std::unique_ptr<gloo::transport::UnboundBuffer>& buffer, size_t bytes) {
    if (!buffer || storage.size() < bytes) {
      buffer.reset();
      storage.resize(std::max(bytes, storage.size()));
      buffer = context_->createUnboundBuffer(storage.data(), storage.size());
    }
    return buffer.get();
  }

  void check_rank(int r, const char* what) const {
    EMBER_CHECK_TYPE(ValueError, r >= 0 && r < size_, "Invalid ", what, " rank ", r);
  }

  void check_list(const std::vector<Tensor>& list, const Tensor& like, const char* what) const {
    EMBER_CHECK_TYPE(ValueError, static_cast<int>(list.size()) == size_, what,
                     " must have the same size as the group (", size_, "), got ", list.size());
    for (const auto& t : list) {
      check_tensor(t);
      EMBER_CHECK_TYPE(ValueError, t.numel() == like.numel() && t.scalar_type() == like.scalar_type(), "Tensors in ",
                       what, " must match the input's size and dtype");
    }
  }

 public:
  // Runs w on this thread when it is next in line and the worker is idle.
  void run_if_next(GlooWork* w) {
    {
      std::lock_guard<std::mutex> g(mutex_);
      if (busy_ || queue_.empty() || queue_.front().get() != w) return;
      queue_.pop_front();
      busy_ = true;
    }
    execute(*w);
    std::lock_guard<std::mutex> g(mutex_);
    busy_ = false;
    queue_cv_.notify_all();
  }

 private:
  std::shared_ptr<Work> enqueue(std::vector<Tensor> outputs, std::function<void()> run) {
    auto w = std::make_shared<GlooWork>();
    w->group = weak_from_this();
    w->outputs_ = std::move(outputs);
    w->run = std::move(run);
    std::lock_guard<std::mutex> g(mutex_);
    queue_.push_back(w);
    queue_cv_.notify_one();
    return w;
  }

  void work_loop() {
    while (true) {
      std::shared_ptr<GlooWork> w;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        queue_cv_.wait(lock, [&] { return (stopping_ && queue_.empty()) || (!queue_.empty() && !busy_); });
        if (queue_.empty()) return;
        w = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
      }
      execute(*w);
      std::lock_guard<std::mutex> g(mutex_);
      busy_ = false;
    }
  }

  void execute(GlooWork& w) {
    try {
      w.run();
      w.run = nullptr;
      w.finish();
    } catch (const Error&) {
      w.run = nullptr;
      w.finish(std::current_exception());
    } catch (const std::exception& e) {
      w.run = nullptr;
      // A RuntimeError, as c10d's Gloo backend raises.
      w.finish(std::make_exception_ptr(
          Error(std::string("[ember.distributed gloo, rank ") + std::to_string(rank_) + "] " + e.what())));
    }
  }

  Millis timeout_;
  std::shared_ptr<gloo::Context> context_;
  // Staging buffers (Note [Small all_reduce], Note [Two-rank ring]), made on first use.
  std::vector<char> exchange_theirs_storage_, exchange_acc_, ring_storage_;
  std::unique_ptr<gloo::transport::UnboundBuffer> exchange_theirs_, ring_window_;
  struct Registered {
    void* ptr;
    size_t bytes;
    std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
  };
  std::deque<Registered> registered_;  // Note [Registered buffers]
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable queue_cv_;
  std::deque<std::shared_ptr<GlooWork>> queue_;
  bool stopping_ = false;
  bool busy_ = false;  // a work is running, on the worker or a waiting thread
  uint32_t tag_ = 0;  // collectives run one at a time, each with its own tag
  uint32_t next_tag() { return tag_++; }
};

bool GlooWork::wait(Millis timeout) {
  if (auto pg = group.lock()) pg->run_if_next(this);
  return Work::wait(timeout);
}

}  // namespace

std::shared_ptr<ProcessGroup> make_gloo_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                      Millis timeout) {
  return std::make_shared<ProcessGroupGloo>(std::move(store), rank, size, timeout);
}

}  // namespace ember::distributed
