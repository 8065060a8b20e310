#include "ember/ops/Parallel.h"

#include <pthread.h>

#include <cstdlib>

namespace ember {

namespace {
int initial_threads() {
#ifdef _OPENMP
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  return omp_get_num_procs();
#else
  return 1;
#endif
}
// GNU OpenMP's workers do not exist in a forked child, where a parallel
// region would wait on them forever: a child starts on one thread.
int g_num_threads = [] {
  pthread_atfork(nullptr, nullptr, [] { g_num_threads = 1; });
  return initial_threads();
}();
}  // namespace

int get_num_threads() { return g_num_threads; }

void set_num_threads(int n) {
  if (n > 0) g_num_threads = n;
}

void sync_openmp_threads(bool serial) {
#ifdef _OPENMP
  // OpenMP's thread count is per calling thread, so it is set at each call.
  if (!omp_in_parallel()) omp_set_num_threads(serial ? 1 : g_num_threads);
#else
  (void)serial;
#endif
}

bool in_parallel_region() {
#ifdef _OPENMP
  return omp_in_parallel();
#else
  return false;
#endif
}

}  // namespace ember
