#ifdef EMBER_USE_CUDNN
#include "ember/cuda/nn/CudnnLoader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ember/core/Error.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/LibraryLoad.h"
#include "ember/ops/CudnnSettings.h"

namespace ember::cuda::cudnn {
namespace {

// Note [Finding cuDNN]
// libcudnn.so.9 is opened by path, first match wins:
// 1. $EMBER_CUDNN_LIBRARY (a file);
// 2. <dir>/libcudnn.so.9 for each directory Python registered: the lib
//    folder of the nvidia-cudnn wheel in every `nvidia` package path
//    (ember/backends/__init__.py), as PyTorch's wheels depend on it;
// 3. ../../nvidia/cudnn/lib beside libember_cuda (an installed wheel);
// 4. the soname alone: the loader's search path, or a copy already loaded
//    (by PyTorch, for one).
// libcudnn.so.9 finds its sub-libraries beside itself.
constexpr const char* kSoname = "libcudnn.so.9";

struct Loader {
  std::mutex mutex;
  bool tried = false;
  void* lib = nullptr;
  Api fns;
  std::string error;
  std::vector<std::string> dirs;
};

Loader& loader() {
  static Loader* l = new Loader();  // never destroyed: handles outlive static destructors
  return *l;
}

std::string own_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&own_dir), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

void load_locked(Loader& l) {
  if (l.tried) return;
  l.tried = true;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("EMBER_CUDNN_LIBRARY"); env != nullptr && *env) candidates.emplace_back(env);
  for (const std::string& d : l.dirs) candidates.push_back(d + "/" + kSoname);
  const std::string here = own_dir();
  if (!here.empty()) candidates.push_back(here + "/../../nvidia/cudnn/lib/" + kSoname);
  candidates.emplace_back(kSoname);
  std::string tried;
  l.lib = open_first_library(candidates, tried);
  if (l.lib == nullptr) {
    l.error = "cuDNN (" + std::string(kSoname) +
              ") could not be loaded; install the nvidia-cudnn-cu13 wheel or set EMBER_CUDNN_LIBRARY. Tried:" + tried;
    return;
  }
  std::string missing;
#define EMBER_CUDNN_FN(name)                                             \
  l.fns.name = reinterpret_cast<decltype(&::name)>(dlsym(l.lib, #name)); \
  if (l.fns.name == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #name;
#include "ember/cuda/nn/CudnnFunctions.inc"
#undef EMBER_CUDNN_FN
  if (!missing.empty()) {
    l.error = "the loaded cuDNN lacks: " + missing;
    l.lib = nullptr;
  }
}

Loader& loaded() {
  Loader& l = loader();
  std::lock_guard<std::mutex> lock(l.mutex);
  load_locked(l);
  return l;
}

struct Library final : CudnnLibrary {
  long version() const override { return cudnn::version(); }
  std::string load_error() const override { return cudnn::load_error(); }
  void add_search_dir(const std::string& dir) const override { cudnn::add_search_dir(dir); }
};

const bool registered = [] {
  static Library lib;
  register_cudnn_library(&lib);
  return true;
}();

}  // namespace

const Api& api() {
  Loader& l = loaded();
  if (l.lib == nullptr) throw Error(l.error);
  return l.fns;
}

bool available() { return loaded().lib != nullptr; }

long version() {
  Loader& l = loaded();
  return l.lib ? static_cast<long>(l.fns.cudnnGetVersion()) : -1;
}

std::string load_error() { return loaded().error; }

void add_search_dir(const std::string& dir) {
  Loader& l = loader();
  std::lock_guard<std::mutex> lock(l.mutex);
  l.dirs.push_back(dir);
}

cudnnHandle_t handle() {
  const Api& a = api();
  const int device = current_device();
  // One handle per thread and device, as PyTorch's pool hands them out.
  thread_local std::unordered_map<int, cudnnHandle_t> handles;
  auto it = handles.find(device);
  if (it == handles.end()) {
    cudnnHandle_t h = nullptr;
    EMBER_CUDNN_CHECK(a.cudnnCreate(&h));
    it = handles.emplace(device, h).first;
  }
  EMBER_CUDNN_CHECK(a.cudnnSetStream(it->second, current_stream(device)));
  return it->second;
}

void throw_cudnn_error(cudnnStatus_t status, const char* expr) {
  const Loader& l = loader();
  const char* msg = l.lib ? l.fns.cudnnGetErrorString(status) : "cuDNN error";
  throw Error(std::string("cuDNN error: ") + msg + " (" + expr + ")");
}

}  // namespace ember::cuda::cudnn
#endif  // EMBER_USE_CUDNN
