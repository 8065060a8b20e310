// The second half of a full R2C spectrum on CUDA: X[k] = conj(X[-k]) of a
// real signal's transform, one thread per element written (FftFill.h).
#include <cuda_runtime.h>

#include <algorithm>

#include "ember/core/Error.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/CudaStream.h"
#include "ember/cuda/fft/FftFill.h"
#include "ember/cuda/kernels/IndexGeometry.h"

namespace ember::cuda::fft {
namespace {

constexpr int kThreads = 256;

struct FillGeometry {
  int ndim = 0;
  int last = 0;
  int64_t half = 0;  // first index written along `last`
  int64_t count = 0;  // elements written
  int64_t sizes[kMaxIndexDims] = {};
  int64_t strides[kMaxIndexDims] = {};
  bool mirrored[kMaxIndexDims] = {};
};

template <typename C>
__global__ void fill_conjugate_kernel(C* data, FillGeometry g) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t linear = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; linear < g.count; linear += step) {
    int64_t rest = linear, dst = 0, src = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t size = g.sizes[d];
      const int64_t extent = d == g.last ? size - g.half : size;
      int64_t i = rest % extent;
      rest /= extent;
      if (d == g.last) i += g.half;
      dst += i * g.strides[d];
      src += (g.mirrored[d] && i != 0 ? size - i : i) * g.strides[d];
    }
    const C v = data[src];
    data[dst] = C{v.x, -v.y};
  }
}

}  // namespace

void fill_conjugate_symmetry(const Tensor& out, const std::vector<int64_t>& dims) {
  const int64_t ndim = out.dim();
  EMBER_CHECK(ndim <= kMaxIndexDims, "fft: tensors of more than ", kMaxIndexDims, " dims are not supported on CUDA");
  FillGeometry g;
  g.ndim = static_cast<int>(ndim);
  g.last = static_cast<int>(dims.back());
  const int64_t n = out.size(g.last);
  g.half = n / 2 + 1;
  if (g.half >= n) return;
  g.count = 1;
  for (int64_t d = 0; d < ndim; ++d) {
    g.sizes[d] = out.size(d);
    g.strides[d] = out.stride(d);
    g.count *= d == g.last ? n - g.half : out.size(d);
  }
  for (int64_t d : dims) g.mirrored[d] = true;
  if (g.count == 0) return;
  const int device = out.device().index;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((g.count + kThreads - 1) / kThreads, 65535));
  if (out.dtype() == ScalarType::ComplexDouble) {
    fill_conjugate_kernel<double2><<<blocks, kThreads, 0, stream>>>(static_cast<double2*>(out.data_ptr()), g);
  } else {
    fill_conjugate_kernel<float2><<<blocks, kThreads, 0, stream>>>(static_cast<float2*>(out.data_ptr()), g);
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace ember::cuda::fft
