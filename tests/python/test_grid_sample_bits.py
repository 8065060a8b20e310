"""grid_sample's bilinear forward bit for bit against PyTorch's vectorised
kernel (Note [Vectorised bilinear grid sampling]): zeros and border padding,
both align_corners, point counts off the vector width, and grids with NaN,
infinite and huge coordinates. The default capability (PyTorch's scalar
fallback) is left to the other grid_sample tests."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import torch

import ember


def _grid(rng, shape, dtype):
    g = rng.standard_normal(shape) * 1.3
    g[0, 0, 0] = np.nan
    g[0, 1, 1, 0] = np.inf
    g[-1, 2, 0, 1] = -np.inf
    g[-1, 0, 1] = 1e10
    g[0, -1, -1] = [1.0, -1.0]
    return g.astype(dtype)


@pytest.mark.skipif(ember.backends.cpu.get_cpu_capability() == "DEFAULT", reason="the vectorised kernels")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size, out", [((2, 3, 7, 9), (5, 6)), ((3, 16, 32, 32), (24, 24)), ((1, 5, 13, 11), (17, 3))])
def test_bilinear_forward_bits(dtype, padding_mode, align_corners, size, out):
    rng = np.random.default_rng(sum(size))
    x = rng.standard_normal(size).astype(dtype)
    g = _grid(rng, (size[0], *out, 2), dtype)
    got, want = (
        L.nn.functional.grid_sample(
            L.from_numpy(x.copy()), L.from_numpy(g.copy()), padding_mode=padding_mode, align_corners=align_corners
        ).numpy()
        for L in (ember, torch)
    )
    assert np.array_equal(got, want, equal_nan=True)
