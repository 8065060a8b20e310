// Work handles, the Gloo stand-in when the build has no Gloo, and the
// loading of the MPI and NCCL plug-ins.
#include "ember/distributed/ProcessGroup.h"

#include <dlfcn.h>
#include <unistd.h>

#include <mutex>
#include <string>

namespace ember::distributed {

std::shared_ptr<Work> ProcessGroup::recv_anysource(Tensor, int) {
  throw Error("ProcessGroup " + backend_name() + " does not support recv from any source; pass src");
}

namespace {

// Note [Backend plug-ins]
// The MPI and NCCL backends live in libraries of their own,
// libember_distributed_mpi.so and libember_distributed_nccl.so, beside this
// one. They link libmpi and libnccl (found through their RUNPATH in the
// mpich and nvidia-nccl wheels), which this library must not need: Ember
// imports without them, and a process that never asks for these backends
// never maps them. The first request dlopens the plug-in and looks up its
// factory; a failure is kept and raised again, with dlerror's text, on every
// later request. A backend counts as built when its plug-in is there, so a
// distribution ships a backend by shipping its file.
struct Plugin {
  std::once_flag once;
  void* handle = nullptr;
  std::string error;
};

std::string library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&library_dir), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

Plugin& load(Plugin& plugin, const char* file) {
  std::call_once(plugin.once, [&] {
    const std::string path = library_dir() + file;
    plugin.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (plugin.handle == nullptr) {
      const char* e = dlerror();
      plugin.error = e ? e : path + ": cannot be loaded";
    }
  });
  return plugin;
}

template <typename F>
F symbol(Plugin& plugin, const char* name, const char* what) {
  if (plugin.handle == nullptr) throw DistBackendError(std::string(what) + " cannot be loaded: " + plugin.error);
  void* f = dlsym(plugin.handle, name);
  if (f == nullptr) throw DistBackendError(std::string(what) + " lacks " + name);
  return reinterpret_cast<F>(f);
}

constexpr const char* kMpiPlugin = "libember_distributed_mpi.so";
constexpr const char* kNcclPlugin = "libember_distributed_nccl.so";

bool plugin_present(const char* file) { return access((library_dir() + file).c_str(), F_OK) == 0; }

Plugin& mpi_plugin() {
  static Plugin plugin;
  return load(plugin, kMpiPlugin);
}

Plugin& nccl_plugin() {
  static Plugin plugin;
  return load(plugin, kNcclPlugin);
}

}  // namespace

bool mpi_available() { return mpi_plugin().handle != nullptr; }

std::shared_ptr<ProcessGroup> make_mpi_process_group(const std::vector<int>& ranks) {
  if (!plugin_present(kMpiPlugin)) {
    throw Error(
        "Distributed package doesn't have MPI built in. MPI is only included if you build Ember on a host that has "
        "MPI installed (pip install mpich).");
  }
  return symbol<MpiFactory>(mpi_plugin(), "ember_make_mpi_process_group", "the MPI backend")(ranks);
}

// Present, not loaded: libnccl is large, and loads only when a group is made.
bool nccl_available() { return plugin_present(kNcclPlugin); }

std::vector<int> nccl_version() {
  if (!nccl_available()) throw Error("Distributed package doesn't have NCCL built in");
  return symbol<NcclVersion>(nccl_plugin(), "ember_nccl_version", "the NCCL backend")();
}

Bytes nccl_exchange_unique_id(std::shared_ptr<Store> store, int rank, const std::string& key) {
  if (!nccl_available()) throw Error("Distributed package doesn't have NCCL built in");
  return symbol<NcclExchangeId>(nccl_plugin(), "ember_nccl_exchange_unique_id", "the NCCL backend")(std::move(store),
                                                                                                    rank, key);
}

std::shared_ptr<ProcessGroup> make_nccl_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                      Millis timeout) {
  if (!nccl_available()) throw Error("Distributed package doesn't have NCCL built in");
  return symbol<NcclFactory>(nccl_plugin(), "ember_make_nccl_process_group", "the NCCL backend")(std::move(store), rank,
                                                                                                 size, timeout);
}

bool Work::wait(Millis timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (timeout.count() > 0) {
    if (!done_cv_.wait_for(lock, timeout, [&] { return completed_; })) {
      throw DistBackendError("Work timed out after " + timeout_text(timeout));
    }
  } else {
    done_cv_.wait(lock, [&] { return completed_; });
  }
  if (error_) std::rethrow_exception(error_);
  return true;
}

bool Work::is_completed() {
  std::lock_guard<std::mutex> g(mutex_);
  return completed_;
}

bool Work::is_success() {
  std::lock_guard<std::mutex> g(mutex_);
  return completed_ && !error_;
}

std::exception_ptr Work::exception() {
  std::lock_guard<std::mutex> g(mutex_);
  return error_;
}

void Work::finish(std::exception_ptr error) {
  std::lock_guard<std::mutex> g(mutex_);
  completed_ = true;
  error_ = error;
  done_cv_.notify_all();
}

#ifndef EMBER_USE_GLOO
bool gloo_available() { return false; }
std::shared_ptr<ProcessGroup> make_gloo_process_group(std::shared_ptr<Store>, int, int, Millis) {
  throw DistBackendError("ember was built without Gloo (Debian's libgloo-dev); the gloo backend is not available");
}
#endif

}  // namespace ember::distributed
