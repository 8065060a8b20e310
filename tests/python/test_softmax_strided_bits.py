"""softmax and log_softmax along a dim that is not the last, and their
gradients, bit for bit against PyTorch (Note [Softmax along a strided dim]):
vector and scalar columns, chunks of the inner dim, the thread split, NaN
and infinities, every floating dtype."""

import numpy as np
import pytest
import torch

import ember

SHAPES = [
    ((2, 1000), 0),
    ((7, 33, 5), 1),
    ((7, 33, 5), 0),
    ((4, 8, 100), 1),
    ((3, 50, 37), 1),
    ((2, 3, 70000), 1),  # several chunks of columns
    ((5, 2, 1), 0),
    ((3, 1, 40), 1),
    ((2, 5, 4096), 1),  # blocks of vector columns (kSoftmaxBlockBytes)
]


def _bits(e, t):
    np.testing.assert_array_equal(e.to(ember.float64).numpy(), t.to(torch.float64).numpy())


def _run(lib, x, g, dtype, fn, dim):
    xl = lib.from_numpy(x.copy()).to(getattr(lib, dtype)).requires_grad_(True)
    y = getattr(lib, fn)(xl, dim)
    y.backward(lib.from_numpy(g.copy()).to(getattr(lib, dtype)))
    return y.detach(), xl.grad


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape,dim", SHAPES)
def test_strided_softmax_bits(shape, dim, dtype, fn, threads):
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 3).astype("float32")
    g = rng.standard_normal(shape).astype("float32")
    flat = x.reshape(-1)
    flat[: min(flat.size, 3)] = [np.nan, np.inf, -np.inf][: min(flat.size, 3)]
    out = []
    for lib in (ember, torch):
        before = lib.get_num_threads()
        lib.set_num_threads(threads)
        try:
            out.append(_run(lib, x, g, dtype, fn, dim))
        finally:
            lib.set_num_threads(before)
    for e, t in zip(*out):
        _bits(e, t)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_strided_softmax_module_and_dtype_argument(fn):
    x = np.random.default_rng(3).standard_normal((4, 6, 9)).astype("float32")
    res = []
    for lib in (ember, torch):
        xl = lib.from_numpy(x.copy())
        mod = (lib.nn.Softmax if fn == "softmax" else lib.nn.LogSoftmax)(dim=1)
        res.append((mod(xl), getattr(lib.nn.functional, fn)(xl.half(), dim=0, dtype=lib.float64)))
    for e, t in zip(*res):
        _bits(e, t)
