// The MPI backend (c10d's ProcessGroupMPI), built into its own library,
// libember_distributed_mpi.so (Note [Backend plug-ins]). Collectives run in
// order on one worker thread per group; send and recv start MPI's
// non-blocking calls at once and complete in wait(). MPI is initialised once
// with MPI_THREAD_SERIALIZED, and every MPI call holds one process-wide mutex.
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>

#include "ember/distributed/ProcessGroup.h"

namespace ember::distributed {
namespace {

std::mutex& mpi_mutex() {
  static std::mutex m;
  return m;
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "error code " + std::to_string(code);
  return std::string(text, static_cast<size_t>(len));
}

void mpi_check(int code, const char* call) {
  if (code != MPI_SUCCESS) throw Error(std::string("MPI error in ") + call + ": " + mpi_error_text(code));
}
#define EMBER_MPI_CHECK(call) mpi_check((call), #call)

void finalize_mpi() {
  std::lock_guard<std::mutex> g(mpi_mutex());
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// MPI_Init_thread once per process, with c10d's minimum threading level.
void init_mpi_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    EMBER_MPI_CHECK(MPI_Initialized(&initialized));
    int provided = 0;
    if (initialized) {
      EMBER_MPI_CHECK(MPI_Query_thread(&provided));
    } else {
      EMBER_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
      std::atexit(finalize_mpi);
    }
    // Errors come back as codes, so they become exceptions instead of aborts.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    EMBER_CHECK(provided >= MPI_THREAD_SERIALIZED,
                "Used MPI implementation doesn't have the minimum level of threading support: "
                "MPI_THREAD_SERIALIZED. This is required by c10d package");
  });
}

MPI_Datatype mpi_type(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Byte: return MPI_UNSIGNED_CHAR;
    case ScalarType::Char: return MPI_CHAR;
    case ScalarType::Short: return MPI_SHORT;
    case ScalarType::Int: return MPI_INT;
    case ScalarType::Long: return MPI_LONG;
    case ScalarType::Float: return MPI_FLOAT;
    case ScalarType::Double: return MPI_DOUBLE;
    case ScalarType::Bool: return MPI_C_BOOL;
    default: break;
  }
  throw Error(std::string("ProcessGroupMPI does not support tensors of dtype ") + std::string(scalar_type_name(dtype)));
}

MPI_Op mpi_op(ReduceOp op, ScalarType dtype) {
  const bool is_bool = dtype == ScalarType::Bool;
  const bool integral = is_integral_type(dtype, /*include_bool=*/true);
  switch (op) {
    case ReduceOp::SUM: return is_bool ? MPI_LOR : MPI_SUM;
    case ReduceOp::PRODUCT: return is_bool ? MPI_LAND : MPI_PROD;
    case ReduceOp::MIN: return is_bool ? MPI_LAND : MPI_MIN;
    case ReduceOp::MAX: return is_bool ? MPI_LOR : MPI_MAX;
    case ReduceOp::BAND:
      if (integral) return is_bool ? MPI_LAND : MPI_BAND;
      break;
    case ReduceOp::BOR:
      if (integral) return is_bool ? MPI_LOR : MPI_BOR;
      break;
    case ReduceOp::BXOR:
      if (integral) return is_bool ? MPI_LXOR : MPI_BXOR;
      break;
    case ReduceOp::AVG: throw Error("Cannot use ReduceOp.AVG with MPI");
  }
  throw Error(std::string("Cannot use ReduceOp.") + reduce_op_name(op) + " with non-integral dtype");
}

int count_of(const Tensor& t) {
  EMBER_CHECK(t.numel() <= std::numeric_limits<int>::max(), "ProcessGroupMPI: tensor too large for one MPI call");
  return static_cast<int>(t.numel());
}

void check_tensor(const Tensor& t) {
  EMBER_CHECK_TYPE(ValueError, t.defined(), "expected a tensor");
  EMBER_CHECK(t.is_contiguous(), "input tensor has to be contiguous");
  EMBER_CHECK(!t.is_cuda(), "CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support");
  EMBER_CHECK(t.is_cpu(), "No backend type associated with device type ", t.device().str());
  mpi_type(t.scalar_type());
}

void check_same(const Tensor& like, const std::vector<Tensor>& list) {
  for (const auto& t : list) {
    EMBER_CHECK(t.numel() == like.numel() && t.scalar_type() == like.scalar_type(),
                "Tensors are not equal in size or data type");
    check_tensor(t);
  }
}

size_t nbytes(const Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

// A non-blocking send or receive: polls MPI_Test, releasing the MPI mutex
// between polls, so collectives of the worker thread are not held up.
class RequestWork : public Work {
 public:
  RequestWork(MPI_Request request, std::vector<Tensor> outputs) : request_(request) { outputs_ = std::move(outputs); }

  bool wait(Millis timeout) override {
    if (!is_completed()) poll(timeout);
    return Work::wait();
  }
  int source_rank() override { return source_; }

 private:
  void poll(Millis timeout) {
    const auto start = std::chrono::steady_clock::now();
    for (int spins = 0;; ++spins) {
      int done = 0;
      MPI_Status status{};
      int code;
      {
        std::lock_guard<std::mutex> g(mpi_mutex());
        code = MPI_Test(&request_, &done, &status);
      }
      if (code != MPI_SUCCESS) {
        finish(std::make_exception_ptr(Error("MPI error in MPI_Test: " + mpi_error_text(code))));
        return;
      }
      if (done) {
        source_ = status.MPI_SOURCE;
        finish();
        return;
      }
      if (timeout.count() > 0 && std::chrono::steady_clock::now() - start > timeout) {
        throw DistBackendError("Work timed out after " + timeout_text(timeout));
      }
      if (spins < 200) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }

  MPI_Request request_;
  int source_ = -1;
};

class ProcessGroupMPI : public ProcessGroup {
 public:
  ProcessGroupMPI(int rank, int size, MPI_Comm comm) : ProcessGroup(rank, size), comm_(comm) {
    worker_ = std::thread([this] { work_loop(); });
  }

  ~ProcessGroupMPI() override {
    {
      std::lock_guard<std::mutex> g(mutex_);
      stopping_ = true;
      queue_cv_.notify_all();
    }
    worker_.join();
  }

  std::string backend_name() const override { return "mpi"; }

  std::shared_ptr<Work> allreduce(Tensor t, ReduceOp op) override {
    check_tensor(t);
    MPI_Op mop = mpi_op(op, t.scalar_type());
    return enqueue({t}, [this, t, mop] {
      EMBER_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, t.data_ptr(), count_of(t), mpi_type(t.scalar_type()), mop, comm_));
    });
  }

  std::shared_ptr<Work> broadcast(Tensor t, int root) override {
    check_tensor(t);
    check_rank(root, "root");
    return enqueue({t}, [this, t, root] {
      EMBER_MPI_CHECK(MPI_Bcast(t.data_ptr(), count_of(t), mpi_type(t.scalar_type()), root, comm_));
    });
  }

  std::shared_ptr<Work> reduce(Tensor t, int root, ReduceOp op) override {
    check_tensor(t);
    check_rank(root, "root");
    MPI_Op mop = mpi_op(op, t.scalar_type());
    return enqueue({t}, [this, t, root, mop] {
      const bool is_root = rank_ == root;
      EMBER_MPI_CHECK(MPI_Reduce(is_root ? MPI_IN_PLACE : t.data_ptr(), is_root ? t.data_ptr() : nullptr, count_of(t),
                                 mpi_type(t.scalar_type()), mop, root, comm_));
    });
  }

  std::shared_ptr<Work> allgather(std::vector<Tensor> outputs, Tensor input) override {
    check_tensor(input);
    EMBER_CHECK(static_cast<int>(outputs.size()) == size_,
                "All gather: number of output tensors should equal to the world size");
    check_same(input, outputs);
    return enqueue(outputs, [this, outputs, input] {
      std::vector<char> flat(nbytes(input) * static_cast<size_t>(size_));
      const MPI_Datatype type = mpi_type(input.scalar_type());
      EMBER_MPI_CHECK(
          MPI_Allgather(input.data_ptr(), count_of(input), type, flat.data(), count_of(input), type, comm_));
      for (int r = 0; r < size_; ++r)
        std::memcpy(outputs[r].data_ptr(), flat.data() + r * nbytes(input), nbytes(input));
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
      const MPI_Datatype type = mpi_type(input.scalar_type());
      EMBER_MPI_CHECK(
          MPI_Allgather(input.data_ptr(), count_of(input), type, output.data_ptr(), count_of(input), type, comm_));
    });
  }

  std::shared_ptr<Work> reduce_scatter(Tensor output, Tensor input, ReduceOp op) override {
    check_tensor(input);
    check_tensor(output);
    EMBER_CHECK_TYPE(ValueError, input.numel() == output.numel() * size_,
                     "input tensor must be the same size as output size times world size");
    EMBER_CHECK_TYPE(ValueError, output.scalar_type() == input.scalar_type(),
                     "input tensor must be the same type as the output tensor.");
    MPI_Op mop = mpi_op(op, input.scalar_type());
    return enqueue({output}, [this, output, input, mop] {
      EMBER_MPI_CHECK(MPI_Reduce_scatter_block(input.data_ptr(), output.data_ptr(), count_of(output),
                                               mpi_type(input.scalar_type()), mop, comm_));
    });
  }

  std::shared_ptr<Work> gather(std::vector<Tensor> outputs, Tensor input, int root) override {
    check_tensor(input);
    check_rank(root, "root");
    if (rank_ == root) {
      EMBER_CHECK(static_cast<int>(outputs.size()) == size_,
                  "Gather: number of output tensors should equal to the world size");
      check_same(input, outputs);
    } else {
      EMBER_CHECK(outputs.empty(), "Gather: number of output tensors should be 0 for non-root");
    }
    return enqueue(outputs, [this, outputs, input, root] {
      std::vector<char> flat(rank_ == root ? nbytes(input) * size_ : 0);
      const MPI_Datatype type = mpi_type(input.scalar_type());
      EMBER_MPI_CHECK(MPI_Gather(input.data_ptr(), count_of(input), type, rank_ == root ? flat.data() : nullptr,
                                 count_of(input), type, root, comm_));
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
    if (rank_ == root) {
      EMBER_CHECK(static_cast<int>(inputs.size()) == size_,
                  "Scatter: number of input tensors should equal to the world size");
      check_same(output, inputs);
    } else {
      EMBER_CHECK(inputs.empty(), "Scatter: number of input tensors should be 0 for non-root");
    }
    return enqueue({output}, [this, output, inputs, root] {
      std::vector<char> flat(rank_ == root ? nbytes(output) * size_ : 0);
      if (rank_ == root) {
        for (int r = 0; r < size_; ++r) {
          std::memcpy(flat.data() + r * nbytes(output), inputs[r].data_ptr(), nbytes(output));
        }
      }
      const MPI_Datatype type = mpi_type(output.scalar_type());
      EMBER_MPI_CHECK(MPI_Scatter(rank_ == root ? flat.data() : nullptr, count_of(output), type, output.data_ptr(),
                                  count_of(output), type, root, comm_));
    });
  }

  std::shared_ptr<Work> alltoall(Tensor output, Tensor input, AllToAllSplits splits) override {
    check_tensor(input);
    check_tensor(output);
    EMBER_CHECK(output.scalar_type() == input.scalar_type(), "Tensors are not equal in size or data type");
    if (splits.input.empty() && splits.output.empty()) {
      EMBER_CHECK(output.numel() == input.numel(), "Tensors are not equal in size or data type");
      EMBER_CHECK(input.numel() % size_ == 0, "Tensor's dim 0 does not divide equally across group size");
      return enqueue({output}, [this, output, input] {
        const MPI_Datatype type = mpi_type(input.scalar_type());
        const int n = count_of(input) / size_;
        EMBER_MPI_CHECK(MPI_Alltoall(input.data_ptr(), n, type, output.data_ptr(), n, type, comm_));
      });
    }
    auto lengths = [this](const std::vector<int64_t>& split, const Tensor& t) {
      std::vector<int> counts(size_), offsets(size_);
      int64_t offset = 0;
      for (int r = 0; r < size_; ++r) {
        const int64_t n = split.empty() ? t.numel() / size_ : split[r];
        counts[r] = static_cast<int>(n);
        offsets[r] = static_cast<int>(offset);
        offset += n;
      }
      EMBER_CHECK(offset == t.numel(), "Split sizes doesn't match total dim 0 size");
      return std::make_pair(counts, offsets);
    };
    EMBER_CHECK(splits.input.empty() || static_cast<int>(splits.input.size()) == size_,
                "Number of tensor splits not equal to group size");
    EMBER_CHECK(splits.output.empty() || static_cast<int>(splits.output.size()) == size_,
                "Number of tensor splits not equal to group size");
    auto send = lengths(splits.input, input);
    auto recv = lengths(splits.output, output);
    return enqueue({output}, [this, output, input, send, recv] {
      const MPI_Datatype type = mpi_type(input.scalar_type());
      EMBER_MPI_CHECK(MPI_Alltoallv(input.data_ptr(), send.first.data(), send.second.data(), type, output.data_ptr(),
                                    recv.first.data(), recv.second.data(), type, comm_));
    });
  }

  std::shared_ptr<Work> send(Tensor t, int dst, int tag) override {
    check_tensor(t);
    check_rank(dst, "dst");
    MPI_Request request = MPI_REQUEST_NULL;
    {
      std::lock_guard<std::mutex> g(mpi_mutex());
      EMBER_MPI_CHECK(MPI_Isend(t.data_ptr(), count_of(t), mpi_type(t.scalar_type()), dst, tag, comm_, &request));
    }
    return std::make_shared<RequestWork>(request, std::vector<Tensor>{t});
  }

  std::shared_ptr<Work> recv(Tensor t, int src, int tag) override { return receive(t, src, tag); }

  std::shared_ptr<Work> recv_anysource(Tensor t, int tag) override { return receive(t, MPI_ANY_SOURCE, tag); }

  std::shared_ptr<Work> barrier() override {
    return enqueue({}, [this] { EMBER_MPI_CHECK(MPI_Barrier(comm_)); });
  }

 private:
  std::shared_ptr<Work> receive(Tensor t, int src, int tag) {
    check_tensor(t);
    if (src != MPI_ANY_SOURCE) check_rank(src, "src");
    MPI_Request request = MPI_REQUEST_NULL;
    {
      std::lock_guard<std::mutex> g(mpi_mutex());
      EMBER_MPI_CHECK(MPI_Irecv(t.data_ptr(), count_of(t), mpi_type(t.scalar_type()), src, tag, comm_, &request));
    }
    return std::make_shared<RequestWork>(request, std::vector<Tensor>{t});
  }

  void check_rank(int r, const char* what) const {
    EMBER_CHECK_TYPE(ValueError, r >= 0 && r < size_, "Invalid ", what, " rank ", r);
  }

  std::shared_ptr<Work> enqueue(std::vector<Tensor> outputs, std::function<void()> run) {
    auto w = std::make_shared<Work>();
    w->outputs_ = std::move(outputs);
    std::lock_guard<std::mutex> g(mutex_);
    queue_.emplace_back(w, std::move(run));
    queue_cv_.notify_one();
    return w;
  }

  void work_loop() {
    while (true) {
      std::pair<std::shared_ptr<Work>, std::function<void()>> item;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        item = std::move(queue_.front());
        queue_.pop_front();
      }
      try {
        std::lock_guard<std::mutex> g(mpi_mutex());
        item.second();
        item.first->finish();
      } catch (...) {
        item.first->finish(std::current_exception());
      }
    }
  }

  MPI_Comm comm_;
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable queue_cv_;
  std::deque<std::pair<std::shared_ptr<Work>, std::function<void()>>> queue_;
  bool stopping_ = false;
};

}  // namespace
}  // namespace ember::distributed

// The plug-in's factory (Note [Backend plug-ins]).
extern "C" EMBER_EXPORT std::shared_ptr<ember::distributed::ProcessGroup> ember_make_mpi_process_group(
    const std::vector<int>& ranks) {
  using namespace ember::distributed;
  init_mpi_once();
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = -1, size = -1;
  {
    std::lock_guard<std::mutex> g(mpi_mutex());
    if (!ranks.empty()) {
      // Every world rank takes part in creating the communicator; the ones
      // outside `ranks` get MPI_COMM_NULL.
      MPI_Group world_group, group;
      EMBER_MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
      EMBER_MPI_CHECK(MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &group));
      EMBER_MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, group, &comm));
      MPI_Group_free(&world_group);
      MPI_Group_free(&group);
    }
    if (comm == MPI_COMM_NULL) return nullptr;
    if (comm != MPI_COMM_WORLD) MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    EMBER_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    EMBER_MPI_CHECK(MPI_Comm_size(comm, &size));
  }
  return std::make_shared<ProcessGroupMPI>(rank, size, comm);
}
