#include "ember/cuda/CudaContext.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ember/core/Error.h"
#include "ember/cuda/CudaStream.h"

namespace ember::cuda {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  cudaGetLastError();  // clear the sticky error so later calls can proceed
  (void)expr, (void)file, (void)line;
  throw Error(std::string("CUDA error: ") + cudaGetErrorString(err));
}

int device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // no driver or no device: zero devices, not an error
      n = 0;
    }
    return n;
  }();
  return count;
}

namespace {

void check_device(int device) {
  if (device < 0 || device >= device_count()) {
    if (device_count() == 0) {
      throw Error("CUDA error: no CUDA-capable device is detected");
    }
    throw Error("CUDA error: invalid device ordinal");
  }
}

constexpr int kStreamsPerPool = 32;

// Pool streams of one device: [0] low priority, [1] high priority.
struct DevicePools {
  std::once_flag created;
  std::array<std::array<cudaStream_t, kStreamsPerPool>, 2> streams{};
  std::array<std::atomic<uint32_t>, 2> next{};
};

DevicePools& pools(int device) {
  static std::vector<std::unique_ptr<DevicePools>> all = [] {
    std::vector<std::unique_ptr<DevicePools>> v;
    for (int i = 0; i < device_count(); ++i) v.push_back(std::make_unique<DevicePools>());
    return v;
  }();
  return *all[device];
}

// The calling thread's current stream per device (null: the default stream).
std::vector<cudaStream_t>& thread_streams() {
  thread_local std::vector<cudaStream_t> streams(static_cast<size_t>(device_count()), nullptr);
  return streams;
}

}  // namespace

int current_device() {
  int index = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&index));
  return index;
}

void set_device(int device) {
  check_device(device);
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess) cudaGetLastError();
  if (current != device) EMBER_CUDA_CHECK(cudaSetDevice(device));
}

cudaStream_t current_stream(int device) {
  if (device < 0) device = current_device();
  check_device(device);
  return thread_streams()[device];
}

void set_current_stream(int device, cudaStream_t stream) {
  check_device(device);
  thread_streams()[device] = stream;
}

void stream_priority_range(int* least, int* greatest) {
  EMBER_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(least, greatest));
}

cudaStream_t stream_from_pool(int device, int priority) {
  if (device < 0) device = current_device();
  check_device(device);
  DevicePools& p = pools(device);
  std::call_once(p.created, [&] {
    DeviceGuard guard(device);
    int least = 0, greatest = 0;
    stream_priority_range(&least, &greatest);
    for (int kind = 0; kind < 2; ++kind) {
      for (auto& s : p.streams[kind]) {
        EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, kind == 0 ? least : greatest));
      }
    }
  });
  const int kind = priority < 0 ? 1 : 0;
  const uint32_t i = p.next[kind].fetch_add(1) % kStreamsPerPool;
  return p.streams[kind][i];
}

DeviceGuard::DeviceGuard(int device) {
  if (device < 0) return;
  previous_ = current_device();
  if (previous_ != device) {
    set_device(device);
  } else {
    previous_ = -1;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

const cudaDeviceProp& device_properties(int device) {
  static std::once_flag once;
  static std::vector<std::unique_ptr<cudaDeviceProp>> props;
  static std::mutex mutex;
  std::call_once(once, [] { props.resize(static_cast<size_t>(device_count())); });
  if (device < 0) device = current_device();
  check_device(device);
  std::lock_guard<std::mutex> lock(mutex);
  if (!props[device]) {
    auto p = std::make_unique<cudaDeviceProp>();
    EMBER_CUDA_CHECK(cudaGetDeviceProperties(p.get(), device));
    props[device] = std::move(p);
  }
  return *props[device];
}

}  // namespace ember::cuda
