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
  DataPtr fresh = allocator_->allocate(nbytes);
  size_t keep = nbytes < nbytes_ ? nbytes : nbytes_;
  if (keep && !device().is_meta()) allocator_->copy_data(fresh.get(), data_.get(), keep);
  data_ = std::move(fresh);
  nbytes_ = nbytes;
}

}  // namespace ember
