#pragma once
// Streams and the current device beyond CudaContext.h: per-thread current
// streams, the stream pool, and a guard that sets and restores the device.
#include <cuda_runtime_api.h>

namespace ember::cuda {

// Note [Streams]
// As in PyTorch: each device's default stream is the legacy default stream
// (handle 0); each thread has its own current stream per device, the default
// until set_current_stream; Stream() hands out pool streams round-robin (32
// per priority per device, created on first use, never destroyed).

int device_count();
// Selects a device for this thread (cudaSetDevice) when it is not current already.
void set_device(int device);
// A pool stream of `device`; priority < 0 is high priority, as CUDA orders them.
cudaStream_t stream_from_pool(int device, int priority);
// Makes `stream` current on `device` for the calling thread.
void set_current_stream(int device, cudaStream_t stream);
// CUDA's priority range: {least, greatest} (greatest is the most negative).
void stream_priority_range(int* least, int* greatest);

// Sets the current device for a scope and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);  // -1: leaves the device alone
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace ember::cuda
