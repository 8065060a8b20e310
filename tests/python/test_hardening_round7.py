"""Values that differed from PyTorch's in a seventh fuzzing round
(tools/fuzz/fuzz.py): one case per class, compared with PyTorch (dtype,
shape and values; the exception class and message where PyTorch refuses)."""

from __future__ import annotations

import warnings

import pytest
import torch
from test_hardening import check_same

import ember

warnings.filterwarnings("ignore", message="ComplexHalf support is experimental")

C128 = "((torch.arange(24, dtype=torch.float64) * 0.73 - 1.9) * (1 - 0.5j) + 0.25j).to(torch.complex128)"


@pytest.mark.parametrize(
    "code",
    [
        # A 0-dim complex operand with a float16 tensor: complex32, as PyTorch (bfloat16 stays complex64).
        "torch.multiply(torch.tensor(1 - 0.5j).to(torch.complex64), torch.full((3, 4), 0.5).to(torch.float16))",
        "torch.tensor([1.5, -2.0]).to(torch.float16) * 1j",
        "torch.add(torch.tensor([1.5, -2.0]).to(torch.float16), torch.tensor(1j))",
        "torch.result_type(torch.tensor(1j).to(torch.complex64), torch.zeros(2).to(torch.float16))",
        "torch.result_type(torch.tensor(1j).to(torch.complex64), torch.zeros(2).to(torch.bfloat16))",
        # 16-bit pooling of a transposed (non-contiguous) input read it as contiguous.
        "F.adaptive_avg_pool1d(torch.arange(6.).to(torch.bfloat16).reshape(2, 3).t(), 2)",
        "F.avg_pool1d(torch.arange(12.).to(torch.float16).reshape(4, 3).t(), 2)",
        "F.max_pool1d(torch.arange(12.).to(torch.bfloat16).reshape(4, 3).t(), 2)",
        "F.adaptive_avg_pool2d(torch.arange(24.).to(torch.bfloat16).reshape(2, 3, 4).transpose(1, 2), 2)",
        # matrix_rank of empty matrices: zeros of the batch shape, whatever the tolerance's shape.
        "torch.linalg.matrix_rank(torch.zeros(2, 0, 3).double(), torch.full((2, 2), 0.5).double())",
        "torch.linalg.matrix_rank(torch.zeros(0, 3, 3).double(), atol=torch.full((2, 1), 0.5).double())",
        "torch.linalg.matrix_rank(torch.zeros(2, 0, 3).double(), hermitian=True)",
        # cholesky_inverse is LAPACK's potri: one triangle read, complex diagonals as LAPACK takes them.
        f"{C128}.reshape(2, 3, 2, 2).cholesky_inverse(False)",
        f"{C128}.reshape(2, 3, 2, 2).cholesky_inverse(True)",
        "torch.cholesky_inverse(torch.tensor([[2.0, 5.0], [1.0, 3.0]]), True)",
        "torch.cholesky_inverse(torch.tensor([[1.0, 0.0], [2.0, 0.0]]).double())",
        "torch.cholesky_inverse(torch.stack([torch.eye(2), torch.tensor([[1.0, 0.0], [2.0, 0.0]])]))",
    ],
)
def test_values_as_torch(code):
    check_same(code)


def test_cholesky_inverse_strides_column_major():
    a = [[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [0.5, -1.0, 4.0]]
    assert ember.cholesky_inverse(ember.tensor(a)).stride() == torch.cholesky_inverse(torch.tensor(a)).stride()


def _nextafter_grads(lib):
    x = lib.tensor([[1.0], [2.0]], dtype=lib.float64, requires_grad=True)
    other = lib.tensor([3.0, 0.0, 5.0], dtype=lib.float32, requires_grad=True)
    y = lib.nextafter(x, other)
    grads = lib.autograd.grad((y * lib.arange(6.0).reshape(2, 3)).sum(), [x, other])
    x32 = lib.tensor([1.0, 2.0], requires_grad=True)
    (g32,) = lib.autograd.grad(lib.nextafter(x32, lib.tensor([3.0, 0.0], dtype=lib.float64)).sum(), x32)
    return type(y.grad_fn).__name__, [(str(g.dtype), g.tolist()) for g in (*grads, g32)]


def test_nextafter_gradient_passes_to_input():
    """PyTorch's formula: the gradient reaches input unchanged (summed to its shape, in its
    dtype); other gets zeros."""
    assert _nextafter_grads(ember) == _nextafter_grads(torch)
