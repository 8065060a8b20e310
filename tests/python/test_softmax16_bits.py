"""float16/bfloat16 softmax along the last dim (log_softmax forward, both
backwards) and weighted cross entropy's gradient, bit for bit against PyTorch."""

import numpy as np
import pytest
import torch

import ember

ROW_LENGTHS = [0, 1, 5, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 200, 4097]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("log", [True, False])
@pytest.mark.parametrize("n", ROW_LENGTHS)
def test_lastdim_bits(dtype, log, n):
    rng = np.random.default_rng(n)
    x, g = rng.standard_normal((7, n)) * 4, rng.standard_normal((7, n))
    if n > 3:
        x[1, 2], x[2, 1], x[4, 0], g[5, 1] = np.inf, np.nan, 1e4, np.nan
        x[3, :] = -np.inf
    out = []
    for lib in (torch, ember):
        X = lib.tensor(x, dtype=getattr(lib, dtype)).requires_grad_()
        y = X.log_softmax(1) if log else X.softmax(1)
        y.backward(lib.tensor(g, dtype=getattr(lib, dtype)))
        out.append((y.detach().float().numpy(), X.grad.float().numpy()))
    for a, e in zip(out[1], out[0]):
        np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(20,), (8, 20), (4, 20, 3), (2, 20, 3, 4)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_cross_entropy_grad_bits(dtype, shape, reduction):
    """The mean's 1/total_weight is rounded to the element type before it
    scales each class weight, as PyTorch's nll_loss backward does."""
    rng = np.random.default_rng(len(shape))
    tshape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    for _ in range(10):
        x, t, w = rng.standard_normal(shape), rng.integers(0, 20, tshape), rng.random(20)
        out = []
        for lib in (torch, ember):
            X = lib.tensor(x, dtype=getattr(lib, dtype)).requires_grad_()
            loss = lib.nn.functional.cross_entropy(
                X, lib.tensor(t), weight=lib.tensor(w, dtype=getattr(lib, dtype)), reduction=reduction
            )
            loss.sum().backward()
            out.append((loss.detach().float().numpy(), X.grad.float().numpy()))
        for a, e in zip(out[1], out[0]):
            np.testing.assert_array_equal(a, e)
