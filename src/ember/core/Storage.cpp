#include "ember/core/Storage.h"

#include <cstring>

#include "ember/core/Error.h"

namespace ember {

namespace {
thread_local bool t_inference_mode = false;
}

bool inference_mode_enabled() { return t_inference_mode; }
void set_inference_mode_enabled(bool enabled) { t_inference_mode = enabled; }

void StorageImpl::resize(size_t nbytes) {
  EMBER_CHECK(resizable(), "Trying to resize storage that is not resizable");
  EMBER_CHECK(device().is_cpu() || device().is_meta(), "resize of a non-CPU storage is not supported");
  DataPtr fresh = allocator_->allocate(nbytes);
  size_t keep = nbytes < nbytes_ ? nbytes : nbytes_;
  if (keep && device().is_cpu()) std::memcpy(fresh.get(), data_.get(), keep);
  data_ = std::move(fresh);
  nbytes_ = nbytes;
}

}  // namespace ember
