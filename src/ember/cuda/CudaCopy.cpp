// copy_ with a CUDA operand: host<->device and device<->device transfers.
//
// Note [Cross-device copies]
// As in PyTorch: a transfer moves one contiguous block of the destination's
// dtype with cudaMemcpyAsync on the current stream of the CUDA side. The
// source is first made contiguous (cast and broadcast) on its own device and
// a strided destination receives the block through a contiguous temporary.
// The copy waits for the stream unless non_blocking is set and the host
// side is pinned; then the pinned block is kept from reuse until the copy
// is done. Same-device copies with equal dtype of contiguous tensors are
// one device memcpy; anything else is copy_kernel_cuda's.
#include <cuda_runtime_api.h>

#include "ember/cuda/CudaAllocator.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/CudaStream.h"
#include "ember/cuda/kernels/CopyKernel.h"
#include "ember/ops/MathBits.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {

// Defined by cuda/kernels/Copy.cu; weak so that a build without that file
// still loads (and says so when a kernel copy is needed).
__attribute__((weak)) void copy_kernel_cuda(TensorIterator& iter);

namespace {

size_t nbytes_of(const Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

// A contiguous tensor holding src cast to `dtype` and broadcast to `sizes`, on src's device.
Tensor contiguous_as(const Tensor& src, ScalarType dtype, IntArrayRef sizes) {
  const bool same_shape = src.sizes().equals(sizes);
  if (src.dtype() == dtype && same_shape && src.is_contiguous()) return src;
  Tensor out = ember::empty(sizes, dtype, src.device());
  out.copy_(src);
  return out;
}

void kernel_copy(Tensor& self, const Tensor& src) {
  if (copy_kernel_cuda == nullptr) {
    throw NotImplementedError("copy_ between these CUDA tensors needs the CUDA copy kernel, not built in");
  }
  auto it = TensorIterator::copy_op(self, src);
  copy_kernel_cuda(it);
}

void finish(cudaStream_t stream, bool non_blocking, const Tensor& host) {
  if (non_blocking && is_pinned_pointer(host.data_ptr())) {
    record_pinned_use(host.data_ptr(), stream);
  } else {
    EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

Tensor& copy_cuda(Tensor& self, const Tensor& src, bool non_blocking) {
  if (src.is_meta()) throw NotImplementedError("Cannot copy out of meta tensor; no data!");
  EMBER_CHECK(!self.is_meta(), "copy_ from a CUDA tensor to a meta tensor is not supported");
  if (self.is_same(src) || self.numel() == 0) return self;
  if (self.has_math_bits() || src.has_math_bits()) return dispatch::copy_with_math_bits(self, src, non_blocking);

  if (self.is_cuda() && src.is_cuda()) {
    const int dst_device = self.device().index;
    const int src_device = src.device().index;
    if (dst_device == src_device) {
      DeviceGuard guard(dst_device);
      if (self.dtype() == src.dtype() && self.sizes().equals(src.sizes()) && self.is_contiguous() &&
          src.is_contiguous()) {
        EMBER_CUDA_CHECK(cudaMemcpyAsync(self.data_ptr(), src.data_ptr(), nbytes_of(self), cudaMemcpyDeviceToDevice,
                                         current_stream(dst_device)));
        return self;
      }
      kernel_copy(self, src);
      return self;
    }
    // Between devices: a contiguous block of self's dtype moves peer to peer.
    Tensor block;
    {
      DeviceGuard guard(src_device);
      block = contiguous_as(src, self.dtype(), self.sizes());
    }
    DeviceGuard guard(dst_device);
    Tensor dst = self.is_contiguous() ? self : ember::empty(self.sizes(), self.dtype(), self.device());
    // The source device's work producing `block` must be done before the peer copy reads it.
    EMBER_CUDA_CHECK(cudaStreamSynchronize(current_stream(src_device)));
    EMBER_CUDA_CHECK(cudaMemcpyPeerAsync(dst.data_ptr(), dst_device, block.data_ptr(), src_device, nbytes_of(dst),
                                         current_stream(dst_device)));
    EMBER_CUDA_CHECK(cudaStreamSynchronize(current_stream(dst_device)));  // `block` is freed on return
    if (!dst.is_same(self)) self.copy_(dst);
    return self;
  }

  if (self.is_cuda()) {  // host to device
    const int device = self.device().index;
    DeviceGuard guard(device);
    const Tensor host = contiguous_as(src, self.dtype(), self.sizes());
    Tensor dst = self.is_contiguous() ? self : ember::empty(self.sizes(), self.dtype(), self.device());
    const cudaStream_t stream = current_stream(device);
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), host.data_ptr(), nbytes_of(dst), cudaMemcpyHostToDevice, stream));
    // A temporary host block is freed on return: wait for it whatever non_blocking says.
    finish(stream, non_blocking && host.is_same(src), host);
    if (!dst.is_same(self)) self.copy_(dst);
    return self;
  }

  // device to host
  const int device = src.device().index;
  DeviceGuard guard(device);
  const Tensor block = contiguous_as(src, self.dtype(), self.sizes());
  Tensor dst = self.is_contiguous() ? self : ember::empty(self.sizes(), self.dtype(), self.device());
  const cudaStream_t stream = current_stream(device);
  EMBER_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), block.data_ptr(), nbytes_of(dst), cudaMemcpyDeviceToHost, stream));
  finish(stream, non_blocking && dst.is_same(self), dst);
  if (!dst.is_same(self)) self.copy_(dst);
  return self;
}

const bool g_registered = [] {
  dispatch::copy__kernels[static_cast<int>(DeviceType::CUDA)] = &copy_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
