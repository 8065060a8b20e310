"""Gradients of the reductions against PyTorch's: the same formulas in the
same dtype, with ties, zeros and NaN, and second derivatives. Values agree to
the last bits of the forward results (sums of a different order, exp)."""

import numpy as np
import pytest
import torch

import ember

REDUCTIONS = {
    "norm2": lambda x: x.norm(dim=1),
    "norm2_all": lambda x: x.norm(),
    "norm1": lambda x: x.norm(p=1, dim=1),
    "norm_inf": lambda x: x.norm(p=float("inf"), dim=1),
    "norm_-inf": lambda x: x.norm(p=float("-inf"), dim=0),
    "norm3": lambda x: x.norm(p=3, dim=1, keepdim=True),
    "norm1.5": lambda x: x.norm(p=1.5, dim=0),
    "logsumexp": lambda x: x.logsumexp(1),
    "logsumexp_all": lambda x: x.logsumexp((0, 1)),
    "std": lambda x: x.std(1),
    "std_all": lambda x: x.std(),
    "var": lambda x: x.var(0, correction=0),
    "amax": lambda x: x.amax(1),
    "amin": lambda x: x.amin(0, keepdim=True),
    "max_all": lambda x: x.max(),
    "min_all": lambda x: x.min(),
    "nansum": lambda x: x.nansum(1),
}


def _input(kind):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 40)).astype("float32")
    if kind == "ties":
        x = np.round(x)  # many equal maxima and exact zeros
        x[2] = 0.0  # a zero row: norm 0, std 0
    elif kind == "nan":
        x[1, 3] = np.nan
        x[4, :] = np.nan
    return x


def _grads(lib, x, g, f):
    xl = lib.from_numpy(x.copy()).requires_grad_(True)
    y = f(xl)
    y.backward(lib.from_numpy(g.copy()).reshape(y.shape))
    return xl.grad.numpy()


@pytest.mark.parametrize("kind", ["plain", "ties", "nan"])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_gradient_bits(name, kind):
    x = _input(kind)
    f = REDUCTIONS[name]
    y = f(torch.from_numpy(x))
    g = np.random.default_rng(6).standard_normal(y.numel()).astype("float32")
    e, t = _grads(ember, x, g, f), _grads(torch, x, g, f)
    np.testing.assert_array_equal(np.isnan(e), np.isnan(t))
    np.testing.assert_allclose(e, t, rtol=3e-6, atol=1e-7)


def test_vector_norm_with_wider_dtype():
    x = _input("plain")
    results = []
    for lib in (ember, torch):
        xl = lib.from_numpy(x.copy()).requires_grad_(True)
        y = lib.linalg.vector_norm(xl, dim=1, dtype=lib.float64)
        assert y.dtype == lib.float64
        y.sum().backward()
        assert xl.grad.dtype == lib.float32
        results.append(xl.grad.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=3e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["norm2", "norm3", "norm1.5", "logsumexp", "std"])
def test_reduction_second_derivative(name):
    x = np.random.default_rng(8).standard_normal((4, 9))
    f = REDUCTIONS[name]
    results = []
    for lib in (ember, torch):
        xl = lib.from_numpy(x.copy()).requires_grad_(True)
        (gx,) = lib.autograd.grad(f(xl).sum(), xl, create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum(), xl, allow_unused=True)
        results.append((gx.detach().numpy(), None if ggx is None else ggx.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-12)
    if results[1][1] is None:
        assert results[0][1] is None
    else:
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("name", ["norm2", "logsumexp", "std", "amax", "max_all"])
def test_reduction_gradient_dtypes(name, dtype):
    x = _input("ties")
    f = REDUCTIONS[name]
    results = []
    for lib in (ember, torch):
        xl = lib.from_numpy(x.copy()).to(getattr(lib, dtype)).requires_grad_(True)
        f(xl).sum().backward()
        assert xl.grad.dtype == getattr(lib, dtype)
        results.append(xl.grad.double().numpy())
    tol = {"float16": 1e-3, "bfloat16": 8e-3, "float64": 1e-14}[dtype]
    np.testing.assert_allclose(results[0], results[1], rtol=tol, atol=tol * 1e-2)
