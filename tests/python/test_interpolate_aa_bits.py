"""Antialiased interpolation bit for bit against PyTorch (Note [Antialiased
interpolation kernels]): the input gradient of the bilinear and bicubic
forms, and the bilinear forward where the windows fit their vectors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import torch

import ember


def _run(L, x, size, mode, align_corners):
    t = L.from_numpy(x.copy()).requires_grad_()
    y = L.nn.functional.interpolate(t, size=size, mode=mode, align_corners=align_corners, antialias=True)
    g = np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(x.dtype)
    y.backward(L.from_numpy(g))
    return y.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize(
    "shape, size",
    [((8, 16, 40, 40), (24, 24)), ((2, 3, 17, 23), (9, 31)), ((1, 4, 9, 9), (20, 4)), ((3, 2, 50, 13), (7, 13))],
)
def test_backward_bits(dtype, mode, align_corners, shape, size):
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    (_, got), (_, want) = (_run(L, x, size, mode, align_corners) for L in (ember, torch))
    assert np.array_equal(got, want)


@pytest.mark.parametrize(
    "shape, size", [((8, 16, 40, 40), (24, 24)), ((2, 3, 40, 40), (24, 40)), ((2, 3, 17, 23), (9, 23))]
)
def test_bilinear_forward_bits(shape, size):
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype("float32")
    (got, _), (want, _) = (_run(L, x, size, "bilinear", False) for L in (ember, torch))
    assert np.array_equal(got, want)
