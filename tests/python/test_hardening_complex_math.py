"""Complex asinh, acosh, atanh, log10, log2, log1p, expm1, exp2 and sinc on
the CPU, compared with PyTorch: values near and on the branch cuts, signed
zeros, inf and nan, both complex dtypes, layouts, out= and gradients."""

from __future__ import annotations

import math

import pytest
from conftest import torch

import ember

FUNCTIONS = ["asinh", "acosh", "atanh", "log10", "log2", "log1p", "expm1", "exp2", "sinc"]

inf, nan = math.inf, math.nan
# Points on and beside the branch cuts (the real axis past +-1 for atanh,
# below 1 for acosh; the imaginary axis past +-i for asinh; the negative
# real axis for the logarithms), signed zeros, tiny and huge parts, inf, nan.
PARTS = [
    (0.0, 0.0),
    (-0.0, 0.0),
    (0.0, -0.0),
    (-0.0, -0.0),
    (1e-20, 1e-20),
    (-1e-9, 3e-9),
    (0.5, -0.25),
    (-1.0, 0.0),
    (-1.0, -0.0),
    (1.0, 0.0),
    (2.0, 0.0),
    (2.0, -0.0),
    (-2.0, 0.0),
    (-2.0, -0.0),
    (0.3, 0.0),
    (0.0, 2.0),
    (-0.0, 2.0),
    (0.0, -2.0),
    (-0.0, -2.0),
    (0.0, 0.5),
    (-1.5, 1e-12),
    (3.0, -4.0),
    (-0.999, 0.0),
    (1e30, 1e30),
    (-1e30, 1.0),
    (40.0, 3.0),
    (-40.0, -3.0),
    (700.0, 1.0),
    (1.0, 1e30),
    (inf, 0.0),
    (-inf, 0.0),
    (0.0, inf),
    (0.0, -inf),
    (inf, inf),
    (-inf, -inf),
    (inf, nan),
    (nan, inf),
    (nan, 0.0),
    (0.0, nan),
    (nan, nan),
    (1.0, inf),
    (-inf, 2.0),
    (inf, -2.0),
]


def _input(lib, dtype):
    re = lib.tensor([p[0] for p in PARTS], dtype=lib.float64)
    im = lib.tensor([p[1] for p in PARTS], dtype=lib.float64)
    return lib.complex(re, im).to(getattr(lib, dtype))


def _same(e, t, rtol):
    # Non-finite parts must match (nan equals nan, inf needs its sign); a
    # finite value is within rtol of PyTorch's, relative to its modulus.
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert list(e.shape) == list(t.shape)
    for k, (a, b) in enumerate(zip(e.resolve_conj().tolist(), t.resolve_conj().tolist())):
        where = f"element {k} ({PARTS[k % len(PARTS)]}): ember {a}, torch {b}"
        if not (math.isfinite(b.real) and math.isfinite(b.imag)):
            for x, y in ((a.real, b.real), (a.imag, b.imag)):
                assert (math.isnan(x) and math.isnan(y)) or x == y, where
        else:
            assert abs(a - b) <= rtol * abs(b), where


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("fn", FUNCTIONS)
def test_values_as_torch(fn, dtype):
    e = getattr(ember, fn)(_input(ember, dtype))
    t = getattr(torch, fn)(_input(torch, dtype))
    _same(e, t, 2e-6 if dtype == "complex64" else 1e-13)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_method_inplace_and_out(fn):
    z = _input(ember, "complex128")
    t = _input(torch, "complex128")
    # A strided view, the method, the in-place form and out=.
    _same(getattr(z[::2], fn)(), getattr(t[::2], fn)(), 1e-13)
    e_in, t_in = z.clone(), t.clone()
    getattr(e_in, fn + "_")()
    getattr(t_in, fn + "_")()
    _same(e_in, t_in, 1e-13)
    e_out = ember.empty(0, dtype=ember.complex128)
    getattr(ember, fn)(z, out=e_out)
    _same(e_out, getattr(torch, fn)(t), 1e-13)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_complex_result_into_real_out_refused(fn):
    # The complex result cannot be cast to a float out= tensor, as in PyTorch.
    with pytest.raises(RuntimeError) as t:
        getattr(torch, fn)(_input(torch, "complex64"), out=torch.empty(len(PARTS)))
    with pytest.raises(RuntimeError) as e:
        getattr(ember, fn)(_input(ember, "complex64"), out=ember.empty(len(PARTS)))
    assert str(e.value) == str(t.value)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_gradients_as_torch(fn):
    # Wirtinger convention: the conjugated derivative, as PyTorch.
    vals = [0.3 + 0.2j, -0.7 + 1.1j, 2.5 - 0.4j, -0.2 - 0.9j]
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(vals, dtype=lib.complex128, requires_grad=True)
        y = getattr(lib, fn)(x)
        (y * lib.tensor([1.0 - 2j, 0.5j, 3.0, -1.0 + 1j], dtype=lib.complex128)).sum().abs().backward()
        grads.append(x.grad)
    _same(grads[0], grads[1], 1e-10)


def test_real_inputs_unchanged():
    for fn in FUNCTIONS:
        for dtype in ("float32", "float64", "int64", "bool"):
            x = [0.5, 1.5, -0.25, 2.0] if dtype.startswith("float") else [0, 1, 3, 1]
            e = getattr(ember, fn)(ember.tensor(x).to(getattr(ember, dtype)))
            t = getattr(torch, fn)(torch.tensor(x).to(getattr(torch, dtype)))
            assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
            assert torch.allclose(torch.tensor(e.tolist(), dtype=t.dtype), t, equal_nan=True), (fn, dtype)
