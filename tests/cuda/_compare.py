"""Moving data between Ember on CUDA and the PyTorch oracle (PyTorch on CUDA
where this PyTorch has it, else on the CPU). EMBER_CUDA_TESTS_DEVICE=cpu runs
the same tests with Ember on the CPU: a check of the tests themselves on a
machine without a GPU."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import ember

TORCH_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DEVICE = os.environ.get("EMBER_CUDA_TESTS_DEVICE", "cuda")
# Behaviour only CUDA has (TF32 products, half_to_float softmax, its dtype errors).
cuda_only = pytest.mark.skipif(DEVICE != "cuda", reason="CUDA-only behaviour")


def pair(t: torch.Tensor):
    """The same values as an Ember tensor on DEVICE and a PyTorch tensor on TORCH_DEVICE."""
    if t.dtype == torch.bfloat16:
        e = ember.from_numpy(t.float().numpy()).to(ember.bfloat16)
    else:
        e = ember.from_numpy(t.numpy().copy())
    return e.to(DEVICE), t.to(TORCH_DEVICE)


def to_torch(e) -> torch.Tensor:
    e = e.cpu()
    if e.dtype == ember.bfloat16:
        return torch.from_numpy(np.asarray(e.float().numpy())).bfloat16()
    return torch.from_numpy(np.asarray(e.numpy()).copy())


def check(e, t, rtol=None, atol=None, equal_nan=True):
    """Ember's result e matches PyTorch's t in dtype, shape and values."""
    assert e.device.type == DEVICE
    assert str(e.dtype) == str(t.dtype), (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    got = to_torch(e)
    want = t.cpu()
    if rtol is None:
        torch.testing.assert_close(got, want, equal_nan=equal_nan)
    else:
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=equal_nan)


def make(shape, dtype=torch.float32, seed=0, low=-2.0, high=2.0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if not dtype.is_floating_point:
        return torch.randint(-5 if dtype != torch.uint8 else 0, 6, shape, generator=g, dtype=dtype)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)


# The floating dtypes of the nn kernels' tests and their forward tolerances (rtol, atol).
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
FLOAT_TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-12, 1e-12),
    torch.float16: (2e-3, 2e-3),
    torch.bfloat16: (2e-2, 2e-2),
}


def check_detached(e, t, rtol=None, atol=None):
    """check on detached results (gradients' graphs are not compared)."""
    check(e.detach(), t.detach(), rtol, atol)
