#include "ember/autograd/Profiler.h"

#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

namespace ember::profiler {

namespace detail {
std::atomic<bool> g_active{false};
std::atomic<bool> g_record_shapes{false};
}  // namespace detail

namespace {
std::mutex g_mutex;
std::vector<Event> g_events;  // guarded by g_mutex; only written while active
}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void start(bool record_shapes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_events.clear();
  detail::g_record_shapes = record_shapes;
  detail::g_active = true;
}

std::vector<Event> stop() {
  detail::g_active = false;
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<Event> out = std::move(g_events);
  g_events.clear();
  std::stable_sort(out.begin(), out.end(), [](const Event& a, const Event& b) { return a.start_ns < b.start_ns; });
  return out;
}

RecordScope::RecordScope(std::string name) {
  event_.name = std::move(name);
  event_.thread = std::hash<std::thread::id>{}(std::this_thread::get_id());
  event_.start_ns = now_ns();
}

RecordScope::~RecordScope() {
  event_.end_ns = now_ns();
  if (!is_active()) return;  // stopped meanwhile: not part of the recording
  std::lock_guard<std::mutex> lock(g_mutex);
  g_events.push_back(std::move(event_));
}

}  // namespace ember::profiler
