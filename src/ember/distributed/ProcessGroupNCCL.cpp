// The NCCL backend (c10d's ProcessGroupNCCL), built into its own library,
// libember_distributed_nccl.so, with CUDA (Note [Backend plug-ins]).
//
// Note [NCCL streams and work]
// Each device gets one communicator, made on its first collective: rank 0
// asks NCCL for a unique id and publishes it in the group's store under the
// communicator's number; the others read it there. Every operation runs on
// the group's own stream for that device (a pool stream), after that stream
// waited (an event) for the caller's current stream, so the inputs are
// ready. The tensors' blocks are recorded on the NCCL stream, so the caching
// allocator does not hand them out again before NCCL is done with them. The
// Work's wait() makes the caller's current stream wait for an event recorded
// after the operation; the host does not block, as in PyTorch. A wait with a
// timeout blocks the host until the event completes or the timeout passes.
// Communicators are non-blocking (config.blocking = 0), so creating one gives
// up after the group's timeout instead of hanging when a rank never comes.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "ember/distributed/ProcessGroup.h"
#include "ember/ops/BuildInfo.h"
#include "ember/ops/CudaRuntime.h"

namespace ember::distributed {
namespace {

std::string version_text() {
  int v = 0;
  ncclGetVersion(&v);
  // NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch from 2.9 on.
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

[[noreturn]] void throw_nccl(ncclResult_t result, ncclComm_t comm) {
  std::string text = std::string("NCCL error: ") + ncclGetErrorString(result) + ", NCCL version " + version_text();
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && last[0] != '\0') text += std::string("\nLast error:\n") + last;
  throw DistBackendError(text);
}

void cuda_check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw Error(std::string("CUDA error: ") + cudaGetErrorString(err) + " (" + what + ")");
  }
}
#define EMBER_NCCL_CUDA_CHECK(expr) cuda_check((expr), #expr)

cudaStream_t as_stream(uint64_t s) { return reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(s)); }
uint64_t as_id(cudaStream_t s) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(s)); }

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    cudaGetDevice(&previous_);
    if (device != previous_) EMBER_NCCL_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() {
    int now = -1;
    cudaGetDevice(&now);
    if (now != previous_) cudaSetDevice(previous_);
  }

 private:
  int previous_ = 0;
};

ncclDataType_t nccl_type(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Char: return ncclInt8;
    case ScalarType::Byte: return ncclUint8;
    case ScalarType::Bool: return ncclUint8;
    case ScalarType::Int: return ncclInt32;
    case ScalarType::Long: return ncclInt64;
    case ScalarType::Half: return ncclFloat16;
    case ScalarType::Float: return ncclFloat32;
    case ScalarType::Double: return ncclFloat64;
    case ScalarType::BFloat16: return ncclBfloat16;
    default: break;
  }
  throw TypeError("Input tensor data type is not supported for NCCL process group: " +
                  std::string(scalar_type_name(dtype)));
}

ncclRedOp_t nccl_op(ReduceOp op, ScalarType dtype) {
  const bool is_bool = dtype == ScalarType::Bool;
  switch (op) {
    // Booleans travel as bytes: or is max, and is min.
    case ReduceOp::SUM: return is_bool ? ncclMax : ncclSum;
    case ReduceOp::PRODUCT: return is_bool ? ncclMin : ncclProd;
    case ReduceOp::MIN: return ncclMin;
    case ReduceOp::MAX: return ncclMax;
    case ReduceOp::AVG: EMBER_CHECK(!is_bool, "Cannot use ReduceOp.AVG with boolean inputs"); return ncclAvg;
    default: break;
  }
  throw ValueError(std::string("Cannot use ReduceOp.") + reduce_op_name(op) + " with NCCL");
}

void check_tensor(const Tensor& t) {
  EMBER_CHECK_TYPE(ValueError, t.defined(), "expected a tensor");
  // A group of NCCL alone has no backend for other devices, as in c10d.
  EMBER_CHECK(t.is_cuda(), "No backend type associated with device type ", t.device().str());
  EMBER_CHECK(t.is_contiguous(), "Tensors must be contiguous");
  nccl_type(t.scalar_type());
}

size_t nbytes(const Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }
char* bytes_of(const Tensor& t) { return static_cast<char*>(t.data_ptr()); }

// Rank 0 makes the id and publishes it under key; the others read it there.
Bytes exchange_unique_id(Store& store, int rank, const std::string& key) {
  ncclUniqueId id;
  if (rank == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) throw_nccl(r, nullptr);
    Bytes b(id.internal, id.internal + sizeof(id.internal));
    store.set(key, b);
    return b;
  }
  Bytes b = store.get(key);
  EMBER_CHECK(b.size() == sizeof(id.internal), "ProcessGroupNCCL: the unique id in the store has ", b.size(),
              " bytes, expected ", sizeof(id.internal));
  return b;
}

class NCCLWork : public Work {
 public:
  NCCLWork(int device, cudaEvent_t done, std::vector<Tensor> keep)
      : device_(device), done_(done), keep_(std::move(keep)) {
    finish();  // completion is the event's (is_completed); Work::wait must not block the host
  }
  ~NCCLWork() override {
    if (done_ != nullptr) cudaEventDestroy(done_);
  }

  bool wait(Millis timeout) override {
    DeviceGuard guard(device_);
    if (timeout.count() > 0) {
      const auto start = std::chrono::steady_clock::now();
      while (!query()) {
        if (std::chrono::steady_clock::now() - start > timeout) {
          throw DistBackendError("Work timed out after " + timeout_text(timeout));
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
    // The caller's current stream waits for the NCCL stream's work.
    const auto current = as_stream(cuda_runtime().current_stream(device_));
    EMBER_NCCL_CUDA_CHECK(cudaStreamWaitEvent(current, done_, 0));
    return true;
  }

  bool is_completed() override { return query(); }

  // Whether the device finished the operation.
  bool query() {
    const cudaError_t err = cudaEventQuery(done_);
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    EMBER_NCCL_CUDA_CHECK(err);
    return true;
  }

 private:
  int device_;
  cudaEvent_t done_;
  std::vector<Tensor> keep_;  // inputs kept alive until the work is gone
};

class ProcessGroupNCCL : public ProcessGroup {
 public:
  ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size, Millis timeout)
      : ProcessGroup(rank, size), store_(std::move(store)), timeout_(timeout) {
    EMBER_CHECK(cuda_device_count() > 0, "ProcessGroupNCCL is only supported with GPUs, no GPUs found!");
  }

  ~ProcessGroupNCCL() override {
    for (auto& [device, c] : comms_) {
      DeviceGuard guard(device);
      ncclCommDestroy(c.comm);
    }
  }

  std::string backend_name() const override { return "nccl"; }

  std::shared_ptr<Work> allreduce(Tensor t, ReduceOp op) override {
    check_tensor(t);
    const ncclRedOp_t nop = nccl_op(op, t.scalar_type());
    return run({t}, {t}, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclAllReduce(t.data_ptr(), t.data_ptr(), t.numel(), nccl_type(t.scalar_type()), nop, comm, s);
    });
  }

  std::shared_ptr<Work> broadcast(Tensor t, int root) override {
    check_tensor(t);
    check_rank(root, "root");
    return run({t}, {t}, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclBroadcast(t.data_ptr(), t.data_ptr(), t.numel(), nccl_type(t.scalar_type()), root, comm, s);
    });
  }

  std::shared_ptr<Work> reduce(Tensor t, int root, ReduceOp op) override {
    check_tensor(t);
    check_rank(root, "root");
    const ncclRedOp_t nop = nccl_op(op, t.scalar_type());
    return run({t}, {t}, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclReduce(t.data_ptr(), t.data_ptr(), t.numel(), nccl_type(t.scalar_type()), nop, root, comm, s);
    });
  }

  std::shared_ptr<Work> allgather(std::vector<Tensor> outputs, Tensor input) override {
    check_tensor(input);
    check_list(outputs, input, "output_tensor_list");
    // Into separate tensors: one send to and one receive from every rank.
    std::vector<Tensor> all = outputs;
    all.push_back(input);
    return run(all, outputs, [&](ncclComm_t comm, cudaStream_t s) {
      const auto type = nccl_type(input.scalar_type());
      ncclResult_t r = ncclGroupStart();
      for (int peer = 0; peer < size_ && r == ncclSuccess; ++peer) {
        r = ncclSend(input.data_ptr(), input.numel(), type, peer, comm, s);
        if (r == ncclSuccess) r = ncclRecv(outputs[peer].data_ptr(), input.numel(), type, peer, comm, s);
      }
      const ncclResult_t end = ncclGroupEnd();
      return r != ncclSuccess ? r : end;
    });
  }

  std::shared_ptr<Work> allgather_into(Tensor output, Tensor input) override {
    check_tensor(input);
    check_tensor(output);
    EMBER_CHECK_TYPE(ValueError, output.numel() == input.numel() * size_,
                     "output tensor size must be equal to world_size times input tensor size");
    EMBER_CHECK_TYPE(ValueError, output.scalar_type() == input.scalar_type(),
                     "output tensor must have the same type as input tensor");
    return run({output, input}, {output}, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclAllGather(input.data_ptr(), output.data_ptr(), input.numel(), nccl_type(input.scalar_type()), comm, s);
    });
  }

  std::shared_ptr<Work> reduce_scatter(Tensor output, Tensor input, ReduceOp op) override {
    check_tensor(input);
    check_tensor(output);
    EMBER_CHECK_TYPE(ValueError, input.numel() == output.numel() * size_,
                     "input tensor must be the same size as output size times world size");
    EMBER_CHECK_TYPE(ValueError, output.scalar_type() == input.scalar_type(),
                     "input tensor must be the same type as the output tensor.");
    const ncclRedOp_t nop = nccl_op(op, input.scalar_type());
    return run({output, input}, {output}, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclReduceScatter(input.data_ptr(), output.data_ptr(), output.numel(), nccl_type(input.scalar_type()), nop,
                               comm, s);
    });
  }

  std::shared_ptr<Work> gather(std::vector<Tensor> outputs, Tensor input, int root) override {
    check_tensor(input);
    check_rank(root, "root");
    if (rank_ == root) check_list(outputs, input, "gather_list");
    std::vector<Tensor> all = outputs;
    all.push_back(input);
    return run(all, outputs, [&](ncclComm_t comm, cudaStream_t s) {
      const auto type = nccl_type(input.scalar_type());
      ncclResult_t r = ncclGroupStart();
      if (rank_ == root) {
        for (int peer = 0; peer < size_ && r == ncclSuccess; ++peer) {
          r = ncclRecv(outputs[peer].data_ptr(), input.numel(), type, peer, comm, s);
        }
      }
      if (r == ncclSuccess) r = ncclSend(input.data_ptr(), input.numel(), type, root, comm, s);
      const ncclResult_t end = ncclGroupEnd();
      return r != ncclSuccess ? r : end;
    });
  }

  std::shared_ptr<Work> scatter(Tensor output, std::vector<Tensor> inputs, int root) override {
    check_tensor(output);
    check_rank(root, "root");
    if (rank_ == root) check_list(inputs, output, "scatter_list");
    std::vector<Tensor> all = inputs;
    all.push_back(output);
    return run(all, {output}, [&](ncclComm_t comm, cudaStream_t s) {
      const auto type = nccl_type(output.scalar_type());
      ncclResult_t r = ncclGroupStart();
      if (rank_ == root) {
        for (int peer = 0; peer < size_ && r == ncclSuccess; ++peer) {
          r = ncclSend(inputs[peer].data_ptr(), output.numel(), type, peer, comm, s);
        }
      }
      if (r == ncclSuccess) r = ncclRecv(output.data_ptr(), output.numel(), type, root, comm, s);
      const ncclResult_t end = ncclGroupEnd();
      return r != ncclSuccess ? r : end;
    });
  }

  std::shared_ptr<Work> alltoall(Tensor output, Tensor input, AllToAllSplits splits) override {
    check_tensor(input);
    check_tensor(output);
    EMBER_CHECK_TYPE(ValueError, output.scalar_type() == input.scalar_type(),
                     "all_to_all: input and output must have the same dtype");
    auto counts = [this](const std::vector<int64_t>& split, const Tensor& t) {
      EMBER_CHECK(split.empty() || static_cast<int>(split.size()) == size_,
                  "Number of tensor splits not equal to group size");
      std::vector<int64_t> c(size_);
      int64_t total = 0;
      for (int r = 0; r < size_; ++r) total += c[r] = split.empty() ? t.numel() / size_ : split[r];
      EMBER_CHECK(total == t.numel(), "Split sizes doesn't match total dim 0 size");
      return c;
    };
    const auto send = counts(splits.input, input), recv = counts(splits.output, output);
    return run({output, input}, {output}, [&](ncclComm_t comm, cudaStream_t s) {
      const auto type = nccl_type(input.scalar_type());
      const size_t element = input.element_size();
      ncclResult_t r = ncclGroupStart();
      size_t send_offset = 0, recv_offset = 0;
      for (int peer = 0; peer < size_ && r == ncclSuccess; ++peer) {
        r = ncclSend(bytes_of(input) + send_offset * element, send[peer], type, peer, comm, s);
        if (r == ncclSuccess) r = ncclRecv(bytes_of(output) + recv_offset * element, recv[peer], type, peer, comm, s);
        send_offset += send[peer];
        recv_offset += recv[peer];
      }
      const ncclResult_t end = ncclGroupEnd();
      return r != ncclSuccess ? r : end;
    });
  }

  std::shared_ptr<Work> send(Tensor t, int dst, int /*tag: NCCL has none*/) override {
    check_tensor(t);
    check_rank(dst, "dst");
    return run({t}, {}, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclSend(t.data_ptr(), t.numel(), nccl_type(t.scalar_type()), dst, comm, s);
    });
  }

  std::shared_ptr<Work> recv(Tensor t, int src, int /*tag*/) override {
    check_tensor(t);
    check_rank(src, "src");
    return run({t}, {t}, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclRecv(t.data_ptr(), t.numel(), nccl_type(t.scalar_type()), src, comm, s);
    });
  }

  // An all_reduce of one float on the last device used (rank % devices
  // before any), then the host waits for it, as c10d's NCCL barrier does.
  std::shared_ptr<Work> barrier() override {
    const int device = last_device_ >= 0 ? last_device_ : rank_ % cuda_device_count();
    Comm& c = comm_for(device);
    DeviceGuard guard(device);
    const uint64_t ptr = cuda_runtime().raw_alloc(sizeof(float), as_id(c.stream));
    void* data = reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
    EMBER_NCCL_CUDA_CHECK(cudaMemsetAsync(data, 0, sizeof(float), c.stream));
    launch(c, [&] { return ncclAllReduce(data, data, 1, ncclFloat32, ncclSum, c.comm, c.stream); });
    wait_stream(c);
    cuda_runtime().raw_delete(ptr);
    auto w = std::make_shared<Work>();
    w->finish();
    return w;
  }

 private:
  struct Comm {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
  };

  void check_rank(int r, const char* what) const {
    EMBER_CHECK_TYPE(ValueError, r >= 0 && r < size_, "Invalid ", what, " rank ", r);
  }

  void check_list(const std::vector<Tensor>& list, const Tensor& like, const char* what) const {
    EMBER_CHECK_TYPE(ValueError, static_cast<int>(list.size()) == size_, what,
                     " must have the same size as the group (", size_, "), got ", list.size());
    for (const auto& t : list) {
      check_tensor(t);
      EMBER_CHECK(t.device() == like.device(), "Tensors must be on the same device");
      EMBER_CHECK_TYPE(ValueError, t.numel() == like.numel() && t.scalar_type() == like.scalar_type(), "Tensors in ",
                       what, " must match the input's size and dtype");
    }
  }

  // Polls a non-blocking communicator until its last call finished, for at most the group's timeout.
  void settle(ncclComm_t comm) {
    const auto start = std::chrono::steady_clock::now();
    ncclResult_t state = ncclInProgress;
    while (true) {
      const ncclResult_t r = ncclCommGetAsyncError(comm, &state);
      if (r != ncclSuccess) throw_nccl(r, comm);
      if (state != ncclInProgress) break;
      if (std::chrono::steady_clock::now() - start > timeout_) {
        ncclCommAbort(comm);
        throw DistBackendError("ProcessGroupNCCL: NCCL communicator not ready after " + timeout_text(timeout_) +
                               " (a rank did not join, or died)");
      }
      std::this_thread::yield();
    }
    if (state != ncclSuccess) throw_nccl(state, comm);
  }

  Comm& comm_for(int device) {
    std::lock_guard<std::mutex> g(mutex_);
    auto it = comms_.find(device);
    if (it != comms_.end()) return it->second;
    ncclUniqueId id;
    const Bytes b = exchange_unique_id(*store_, rank_, std::to_string(comm_counter_++));
    std::memcpy(id.internal, b.data(), sizeof(id.internal));
    DeviceGuard guard(device);
    Comm c;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t r = ncclCommInitRankConfig(&c.comm, size_, id, rank_, &config);
    if (r != ncclSuccess && r != ncclInProgress) throw_nccl(r, c.comm);
    settle(c.comm);
    c.stream = as_stream(cuda_runtime().stream_from_pool(device, 0));
    return comms_.emplace(device, c).first->second;
  }

  template <typename F>
  void launch(Comm& c, F&& call) {
    const ncclResult_t r = call();
    if (r != ncclSuccess && r != ncclInProgress) throw_nccl(r, c.comm);
    settle(c.comm);
  }

  void wait_stream(Comm& c) { EMBER_NCCL_CUDA_CHECK(cudaStreamSynchronize(c.stream)); }

  // Runs an operation on the device's NCCL stream (Note [NCCL streams and work]).
  template <typename F>
  std::shared_ptr<Work> run(const std::vector<Tensor>& used, std::vector<Tensor> outputs, F&& call) {
    const int device = used.front().device().index;
    for (const auto& t : used) EMBER_CHECK(t.device().index == device, "Tensors must be on the same device");
    Comm& c = comm_for(device);
    last_device_ = device;
    DeviceGuard guard(device);
    const auto current = as_stream(cuda_runtime().current_stream(device));
    cudaEvent_t ready = nullptr;
    EMBER_NCCL_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    EMBER_NCCL_CUDA_CHECK(cudaEventRecord(ready, current));
    EMBER_NCCL_CUDA_CHECK(cudaStreamWaitEvent(c.stream, ready, 0));
    cudaEventDestroy(ready);
    for (const auto& t : used) {
      cuda_runtime().record_stream(t.unsafeGetTensorImpl()->storage()->data(), device, as_id(c.stream));
    }
    launch(c, [&] { return call(c.comm, c.stream); });
    cudaEvent_t done = nullptr;
    EMBER_NCCL_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    EMBER_NCCL_CUDA_CHECK(cudaEventRecord(done, c.stream));
    auto w = std::make_shared<NCCLWork>(device, done, used);
    w->outputs_ = std::move(outputs);
    return w;
  }

  std::shared_ptr<Store> store_;
  Millis timeout_;
  std::mutex mutex_;
  std::map<int, Comm> comms_;
  int64_t comm_counter_ = 0;
  int last_device_ = -1;
};

}  // namespace
}  // namespace ember::distributed

// The plug-in's factories (Note [Backend plug-ins]).
extern "C" EMBER_EXPORT std::shared_ptr<ember::distributed::ProcessGroup> ember_make_nccl_process_group(
    std::shared_ptr<ember::distributed::Store> store, int rank, int size, ember::distributed::Millis timeout) {
  return std::make_shared<ember::distributed::ProcessGroupNCCL>(std::move(store), rank, size, timeout);
}

extern "C" EMBER_EXPORT ember::distributed::Bytes ember_nccl_exchange_unique_id(
    std::shared_ptr<ember::distributed::Store> store, int rank, const std::string& key) {
  return ember::distributed::exchange_unique_id(*store, rank, key);
}

extern "C" EMBER_EXPORT std::vector<int> ember_nccl_version() {
  int v = 0;
  ncclGetVersion(&v);
  return {v / 10000, (v % 10000) / 100, v % 100};
}
