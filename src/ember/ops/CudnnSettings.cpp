#include "ember/ops/CudnnSettings.h"

#include <atomic>
#include <mutex>

namespace ember {
namespace {
std::mutex g_mutex;
CudnnSettings g_settings;
std::atomic<bool> g_deterministic{false};
std::atomic<bool> g_onednn{true};
std::atomic<const CudnnLibrary*> g_library{nullptr};
}  // namespace

CudnnSettings cudnn_settings() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_settings;
}

void set_cudnn_settings(const CudnnSettings& s) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_settings = s;
}

bool deterministic_algorithms() { return g_deterministic.load(); }
void set_deterministic_algorithms(bool on) { g_deterministic.store(on); }

bool user_enabled_onednn() { return g_onednn.load(std::memory_order_relaxed); }
void set_user_enabled_onednn(bool on) { g_onednn.store(on); }

void register_cudnn_library(const CudnnLibrary* lib) { g_library.store(lib); }
const CudnnLibrary* cudnn_library() { return g_library.load(); }

}  // namespace ember
