#include "ember/ops/CudaRuntime.h"

#include "ember/core/Error.h"

namespace ember {

namespace {
CudaRuntime* g_runtime = nullptr;
}

void register_cuda_runtime(CudaRuntime* runtime) { g_runtime = runtime; }

const CudaRuntime& cuda_runtime() {
  if (!g_runtime) throw Error("ember was built without CUDA");
  return *g_runtime;
}

const CudaRuntime* cuda_runtime_or_null() { return g_runtime; }

}  // namespace ember
