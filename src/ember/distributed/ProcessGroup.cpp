// Work handles, and the Gloo stand-in when the build has no Gloo.
#include "ember/distributed/ProcessGroup.h"

namespace ember::distributed {

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
