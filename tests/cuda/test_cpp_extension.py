"""A PyTorch-style CUDA extension (tests/python/cuda_extension_source.py)
built with load_inline(cuda_sources=...) runs its kernel on Ember's CUDA
tensors; results against torch's (CPU) computation of the same values."""

import os
import sys

import numpy as np
import torch

import ember

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from cuda_extension_source import build  # noqa: E402


def test_kernel_runs_on_ember_cuda_tensors(tmp_path):
    ext = build(tmp_path)
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    ex, ey = ember.tensor(x, device="cuda"), ember.tensor(y, device="cuda")
    expected = torch.from_numpy(x) * 2.5 + torch.from_numpy(y)
    direct = ext.scale_add_cuda(ex, ey, 2.5)
    assert direct.device.type == "cuda" and direct.dtype == ember.float32
    np.testing.assert_allclose(direct.cpu().numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)
    # The same kernel through TORCH_LIBRARY_IMPL(cuda_ext, CUDA, m): dispatch by device.
    dispatched = ember.ops.cuda_ext.scale_add(ex, ey, 2.5)
    np.testing.assert_allclose(dispatched.cpu().numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)
    on_cpu = ember.ops.cuda_ext.scale_add(ex.cpu(), ey.cpu(), 2.5)
    np.testing.assert_allclose(on_cpu.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)
    # A strided input goes through .contiguous() first.
    strided = ext.scale_add_cuda(ex[::2], ey[::2], 1.0)
    np.testing.assert_allclose(strided.cpu().numpy(), x[::2] + y[::2], rtol=1e-6, atol=1e-6)
