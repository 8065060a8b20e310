"""A PyTorch-style CUDA extension (a .cu kernel, C++ registration) shared by
tests/python/test_cpp_extension_cuda.py (it builds and loads here, where
there may be no GPU) and tests/cuda/test_cpp_extension.py (it runs)."""

CPP = r"""
torch::Tensor scale_add_cuda(torch::Tensor x, torch::Tensor y, double alpha);

torch::Tensor scale_add_cpu(torch::Tensor x, torch::Tensor y, double alpha) { return x * alpha + y; }

TORCH_LIBRARY(cuda_ext, m) { m.def("scale_add(Tensor x, Tensor y, float alpha) -> Tensor"); }
TORCH_LIBRARY_IMPL(cuda_ext, CPU, m) { m.impl("scale_add", &scale_add_cpu); }
TORCH_LIBRARY_IMPL(cuda_ext, CUDA, m) { m.impl("scale_add", &scale_add_cuda); }
"""

CUDA = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

__global__ void scale_add_kernel(const float* x, const float* y, float* out, float alpha, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = alpha * x[i] + y[i];
}

torch::Tensor scale_add_cuda(torch::Tensor x, torch::Tensor y, double alpha) {
  TORCH_CHECK(x.is_cuda() && y.is_cuda(), "scale_add_cuda: expected CUDA tensors");
  TORCH_CHECK(x.sizes() == y.sizes(), "scale_add_cuda: shapes differ");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && y.scalar_type() == torch::kFloat32);
  const at::cuda::OptionalCUDAGuard device_guard(at::device_of(x));
  auto xc = x.contiguous();
  auto yc = y.contiguous();
  auto out = torch::empty_like(xc);
  const int64_t n = xc.numel();
  const int threads = 256;
  const int blocks = static_cast<int>((n + threads - 1) / threads);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (n > 0)
    scale_add_kernel<<<blocks, threads, 0, stream>>>(xc.data_ptr<float>(), yc.data_ptr<float>(),
                                                     out.data_ptr<float>(), static_cast<float>(alpha), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
"""


def build(build_directory):
    from ember.utils import cpp_extension

    return cpp_extension.load_inline(
        "cuda_ext", CPP, cuda_sources=CUDA, functions=["scale_add_cuda"], build_directory=str(build_directory)
    )
