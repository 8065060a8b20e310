#pragma once
// Intra-op parallelism over OpenMP (or serial when built without it).

#include <algorithm>
#include <cstdint>

#include "ember/core/Macros.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ember {

EMBER_API int get_num_threads();
EMBER_API void set_num_threads(int n);
// True inside a parallel region (nested regions run serially).
EMBER_API bool in_parallel_region();
// Before calling a library that runs its own OpenMP regions (oneDNN): gives
// this thread's regions Ember's thread count, or one thread when serial.
EMBER_API void sync_openmp_threads(bool serial = false);

// Calls f(begin, end) on chunks of [begin, end) of at least grain_size
// elements, in parallel when the range is large enough.
template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain_size, const F& f) {
  if (begin >= end) return;
  int64_t n = end - begin;
#ifdef _OPENMP
  int max_threads = get_num_threads();
  if (n > grain_size && max_threads > 1 && !in_parallel_region()) {
    int64_t chunks = std::min<int64_t>(max_threads, (n + grain_size - 1) / std::max<int64_t>(grain_size, 1));
#pragma omp parallel num_threads(static_cast<int>(chunks))
    {
      int64_t tid = omp_get_thread_num();
      int64_t nt = omp_get_num_threads();
      int64_t chunk = (n + nt - 1) / nt;
      int64_t b = begin + tid * chunk;
      int64_t e = std::min(end, b + chunk);
      if (b < e) f(b, e);
    }
    return;
  }
#endif
  (void)grain_size;
  f(begin, end);
}

}  // namespace ember
