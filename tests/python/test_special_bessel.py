"""Bessel functions j0/j1/y0/y1, modified Bessel functions k0/k1 (plain and
exponentially scaled) and Airy's Ai against PyTorch: bit-identical values over wide
ranges of both signs (zeros, poles, infinities, NaN), every dtype (integers
promoted, 16-bit floats refused as PyTorch refuses them), layouts, out=, no
gradients."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DTYPE_NAMES, pair, to_torch, torch
from hypothesis import given
from hypothesis import strategies as st
from test_special_more import FEW, INF, NAN, shaped, wide
from test_special_ops import check_close, run_both, ulps

import ember

NAMES = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
]

# Branch points of the formulas (5 for j/y, 2 for k, +-2.09, 8.32 and 103.892
# for Ai), the first zeros of j0/j1/y0/y1, tiny and huge arguments.
SPECIAL_POINTS = [
    5.0,
    4.999999,
    5.000001,
    2.0,
    1.9999999,
    2.0000001,
    2.09,
    -2.09,
    2.0899999,
    -2.0900001,
    8.3203353,
    8.32034,
    103.892,
    103.8921,
    -103.892,
    2.404825557695773,
    3.8317059702075125,
    0.8935769662791675,
    2.197141326031017,
    5.520078110286311,
    1e-5,
    9.99e-6,
    1.0001e-5,
    1e-300,
    5e-324,
    1e-45,
    1e15,
    1e17,
    -1e15,
    700.0,
    710.0,
    88.0,
    89.0,
    -30.0,
    -50.0,
    -1000.0,
    -1e6,
    NAN,
    INF,
    -INF,
    0.0,
    -0.0,
]


def values(dtype, count=400):
    return SPECIAL_POINTS + wide(dtype, count) if dtype in ("float32", "float64") else wide(dtype, count)


def fn(module, name):
    return getattr(module.special, name)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_values_every_dtype(name, dtype):
    """PyTorch's formulas bit for bit on float32/float64; integers and bool
    promote to float32; float16/bfloat16 raise PyTorch's NotImplementedError."""
    e, t = pair(values(dtype), dtype)
    re, rt = run_both(lambda: fn(ember, name)(e), lambda: fn(torch, name)(t))
    if rt is not None:
        check_close(re, rt, 0)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dense_sweep(name, dtype):
    """A dense sweep: log-spaced magnitudes of both signs and uniform draws
    around the branch points."""
    rng = np.random.default_rng(3)
    sweep = np.logspace(-40 if dtype == "float32" else -300, 38 if dtype == "float32" else 300, 4000)
    vals = np.concatenate(
        [
            sweep,
            -sweep,
            rng.uniform(-12, 12, 4000),
            rng.uniform(-120, 120, 2000),
            rng.uniform(1.9, 2.2, 500),
            rng.uniform(4.9, 5.1, 500),
            rng.uniform(-2.2, -2.0, 500),
        ]
    )
    e, t = pair(vals.tolist(), dtype)
    assert ulps(fn(ember, name)(e), fn(torch, name)(t)) <= 0


@pytest.mark.parametrize("name", NAMES)
@FEW
@given(data=st.data())
def test_layouts(name, data):
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    e, t = data.draw(shaped(dtype))
    re, rt = fn(ember, name)(e), fn(torch, name)(t)
    check_close(re, rt, 0)
    if re.numel() > 1:
        assert re.stride() == rt.stride()


@pytest.mark.parametrize("name", NAMES)
def test_out_and_keywords(name):
    e, t = pair([[0.5, 1.5], [2.5, -3.0]], "float64")
    oe, ot = ember.empty(0, dtype=ember.float64), torch.empty(0, dtype=torch.float64)
    re, rt = fn(ember, name)(e, out=oe), fn(torch, name)(t, out=ot)
    assert re is oe and rt is ot
    check_close(oe, ot, 0)
    # the argument's keyword name follows PyTorch's schema (x or input)
    keyword = "x" if name in ("airy_ai", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1") else "input"
    check_close(fn(ember, name)(**{keyword: e}), fn(torch, name)(**{keyword: t}), 0)
    with pytest.raises(RuntimeError):
        fn(ember, name)(e, out=ember.empty(4, dtype=ember.int64))


@pytest.mark.parametrize("name", NAMES)
def test_no_gradient_and_errors(name):
    e, t = pair([0.5, 1.5], "float64", requires_grad=True)
    re, rt = fn(ember, name)(e), fn(torch, name)(t)
    assert re.requires_grad == rt.requires_grad is False
    for dtype in ("float16", "bfloat16"):
        eh, th = pair([0.5], dtype)
        with pytest.raises(NotImplementedError) as expected:
            fn(torch, name)(th)
        with pytest.raises(NotImplementedError) as got:
            fn(ember, name)(eh)
        assert str(got.value) == str(expected.value)
    for bad in (1.0, [1.0]):
        with pytest.raises(TypeError):
            fn(ember, name)(bad)
    assert not hasattr(ember.Tensor, name) and not hasattr(torch.Tensor, name)


def test_zero_dim_and_empty():
    for name in NAMES:
        for vals, shape in (([1.25], ()), ([], (0, 3))):
            e, t = pair(vals, "float32", shape)
            re, rt = fn(ember, name)(e), fn(torch, name)(t)
            check_close(re, rt, 0)
    assert ember.special.Tensor is ember.Tensor


def test_known_values():
    """A few textbook values, independent of the oracle."""
    x = ember.tensor([0.0, 1.0, 2.0], dtype=ember.float64)
    np.testing.assert_allclose(
        to_torch(ember.special.bessel_j0(x)).numpy(), [1.0, 0.7651976865579666, 0.22389077914123567], rtol=1e-13
    )
    np.testing.assert_allclose(
        to_torch(ember.special.airy_ai(x)).numpy(),
        [0.3550280538878172, 0.1352924163128814, 0.03492413042327437],
        rtol=1e-13,
    )
    np.testing.assert_allclose(
        to_torch(ember.special.modified_bessel_k0(x[1:])).numpy(),
        [0.42102443824070834, 0.11389387274953344],
        rtol=1e-13,
    )
