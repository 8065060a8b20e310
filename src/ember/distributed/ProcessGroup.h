#pragma once
// The ProcessGroup interface (c10d's Backend) and its Work handles. A
// backend runs collectives over CPU tensors; every call returns a Work that
// completes when the operation has finished on this rank.

#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ember/distributed/Store.h"
#include "ember/ops/Tensor.h"

namespace ember::distributed {

// PyTorch's ReduceOp values, in its order.
enum class ReduceOp : uint8_t { SUM = 0, AVG = 1, PRODUCT = 2, MIN = 3, MAX = 4, BAND = 5, BOR = 6, BXOR = 7 };

// The Python name of a ReduceOp, for error messages.
inline const char* reduce_op_name(ReduceOp op) {
  static const char* names[] = {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"};
  return names[static_cast<int>(op)];
}

class EMBER_DIST_API Work {
 public:
  virtual ~Work() = default;
  // Blocks until the operation finished (or timeout, when positive, ran out);
  // rethrows its error. Returns true.
  virtual bool wait(Millis timeout = Millis(0));
  virtual bool is_completed();
  bool is_success();
  std::exception_ptr exception();
  // Tensors the operation wrote (for Work.result()).
  std::vector<Tensor> result() const { return outputs_; }
  // The rank a receive from any source got its message from; -1 otherwise.
  virtual int source_rank() { return -1; }

  void finish(std::exception_ptr error = nullptr);
  std::vector<Tensor> outputs_;

 protected:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool completed_ = false;
  std::exception_ptr error_;
};

struct AllToAllSplits {
  std::vector<int64_t> output, input;  // elements per rank; empty: equal
};

class EMBER_DIST_API ProcessGroup {
 public:
  ProcessGroup(int rank, int size) : rank_(rank), size_(size) {}
  virtual ~ProcessGroup() = default;
  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual std::string backend_name() const = 0;

  virtual std::shared_ptr<Work> allreduce(Tensor t, ReduceOp op) = 0;
  virtual std::shared_ptr<Work> broadcast(Tensor t, int root) = 0;
  virtual std::shared_ptr<Work> reduce(Tensor t, int root, ReduceOp op) = 0;
  // outputs[i] receives rank i's input.
  virtual std::shared_ptr<Work> allgather(std::vector<Tensor> outputs, Tensor input) = 0;
  // output holds every rank's input, one after another.
  virtual std::shared_ptr<Work> allgather_into(Tensor output, Tensor input) = 0;
  // Rank r's output is the reduction of every rank's r-th chunk of input.
  virtual std::shared_ptr<Work> reduce_scatter(Tensor output, Tensor input, ReduceOp op) = 0;
  virtual std::shared_ptr<Work> gather(std::vector<Tensor> outputs, Tensor input, int root) = 0;
  virtual std::shared_ptr<Work> scatter(Tensor output, std::vector<Tensor> inputs, int root) = 0;
  virtual std::shared_ptr<Work> alltoall(Tensor output, Tensor input, AllToAllSplits splits) = 0;
  virtual std::shared_ptr<Work> send(Tensor t, int dst, int tag) = 0;
  virtual std::shared_ptr<Work> recv(Tensor t, int src, int tag) = 0;
  // A receive from whichever rank sends first (Work::source_rank names it).
  virtual std::shared_ptr<Work> recv_anysource(Tensor t, int tag);
  virtual std::shared_ptr<Work> barrier() = 0;

 protected:
  int rank_, size_;
};

// Whether the Gloo backend was built into this library.
EMBER_DIST_API bool gloo_available();
// A Gloo process group over store; raises when Gloo was not built.
EMBER_DIST_API std::shared_ptr<ProcessGroup> make_gloo_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                                     Millis timeout);

// Whether the MPI backend was built (libember_distributed_mpi next to this
// library) and its MPI library loads.
EMBER_DIST_API bool mpi_available();
// A group over MPI_COMM_WORLD (ranks empty) or over the given world ranks,
// initialising MPI on first use; every world rank calls it. nullptr on a
// rank outside ranks.
EMBER_DIST_API std::shared_ptr<ProcessGroup> make_mpi_process_group(const std::vector<int>& ranks);

// Whether the NCCL backend was built (libember_distributed_nccl next to this library).
EMBER_DIST_API bool nccl_available();
// NCCL's version as (major, minor, patch); raises when libnccl cannot be loaded.
EMBER_DIST_API std::vector<int> nccl_version();
// A NCCL group over store (rank 0 publishes the unique id there); CUDA tensors only.
EMBER_DIST_API std::shared_ptr<ProcessGroup> make_nccl_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                                     Millis timeout);

// The NCCL unique id exchange of a group's first communicator: rank 0 makes
// the id and sets it under key; the others get it (128 bytes).
EMBER_DIST_API Bytes nccl_exchange_unique_id(std::shared_ptr<Store> store, int rank, const std::string& key);

// What a backend plug-in library exports (Note [Backend plug-ins]).
using MpiFactory = std::shared_ptr<ProcessGroup> (*)(const std::vector<int>& ranks);
using NcclFactory = std::shared_ptr<ProcessGroup> (*)(std::shared_ptr<Store> store, int rank, int size, Millis timeout);
using NcclVersion = std::vector<int> (*)();
using NcclExchangeId = Bytes (*)(std::shared_ptr<Store> store, int rank, const std::string& key);

}  // namespace ember::distributed
