"""Gradients of the elementwise math ops against torch (float64 values),
with broadcasting, in-place forms, double backward, finite differences and
the names of the backward nodes."""

from __future__ import annotations

import math

import pytest
from conftest import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember


def F(lib):
    return torch.nn.functional if lib is torch else lib


# name -> (function of (lib, x, y, w), domain of x: "any" or "pos")
GRAD_CASES = {
    "abs": (lambda L, x, y, w: L.abs(x), "any"),
    "sign": (lambda L, x, y, w: L.sign(x), "any"),
    "exp": (lambda L, x, y, w: L.exp(x), "any"),
    "log": (lambda L, x, y, w: L.log(x), "pos"),
    "log1p": (lambda L, x, y, w: L.log1p(x), "pos"),
    "expm1": (lambda L, x, y, w: L.expm1(x), "any"),
    "log2": (lambda L, x, y, w: L.log2(x), "pos"),
    "sqrt": (lambda L, x, y, w: L.sqrt(x), "pos"),
    "rsqrt": (lambda L, x, y, w: L.rsqrt(x), "pos"),
    "sin": (lambda L, x, y, w: L.sin(x), "any"),
    "cos": (lambda L, x, y, w: L.cos(x), "any"),
    "tan": (lambda L, x, y, w: L.tan(x), "any"),
    "asin": (lambda L, x, y, w: L.asin(L.tanh(x)), "any"),
    "acos": (lambda L, x, y, w: L.acos(L.tanh(x)), "any"),
    "atan": (lambda L, x, y, w: L.atan(x), "any"),
    "sinh": (lambda L, x, y, w: L.sinh(x), "any"),
    "cosh": (lambda L, x, y, w: L.cosh(x), "any"),
    "asinh": (lambda L, x, y, w: L.asinh(x), "any"),
    "acosh": (lambda L, x, y, w: L.acosh(x + 1), "pos"),
    "atanh": (lambda L, x, y, w: L.atanh(L.tanh(x)), "any"),
    "erf": (lambda L, x, y, w: L.erf(x), "any"),
    "erfc": (lambda L, x, y, w: L.erfc(x), "any"),
    "erfinv": (lambda L, x, y, w: L.erfinv(L.tanh(x)), "any"),
    "exp2": (lambda L, x, y, w: L.exp2(x), "any"),
    "log10": (lambda L, x, y, w: L.log10(x), "pos"),
    "tanh": (lambda L, x, y, w: L.tanh(x), "any"),
    "sigmoid": (lambda L, x, y, w: L.sigmoid(x), "any"),
    "relu": (lambda L, x, y, w: L.relu(x), "any"),
    "gelu": (lambda L, x, y, w: F(L).gelu(x), "any"),
    "gelu_tanh": (lambda L, x, y, w: F(L).gelu(x, approximate="tanh"), "any"),
    "silu": (lambda L, x, y, w: F(L).silu(x), "any"),
    "reciprocal": (lambda L, x, y, w: L.reciprocal(x), "pos"),
    "floor": (lambda L, x, y, w: L.floor(x), "any"),
    "ceil": (lambda L, x, y, w: L.ceil(x), "any"),
    "round": (lambda L, x, y, w: L.round(x), "any"),
    "round_decimals": (lambda L, x, y, w: L.round(x, decimals=1), "any"),
    "trunc": (lambda L, x, y, w: L.trunc(x), "any"),
    "square": (lambda L, x, y, w: L.square(x), "any"),
    "neg": (lambda L, x, y, w: -x, "any"),
    "div": (lambda L, x, y, w: x / y, "any"),
    "div_scalar": (lambda L, x, y, w: x / 3, "any"),
    "rdiv_scalar": (lambda L, x, y, w: 3 / x, "pos"),
    "div_trunc": (lambda L, x, y, w: L.div(x, y, rounding_mode="trunc"), "any"),
    "div_floor": (lambda L, x, y, w: L.div(x, y, rounding_mode="floor"), "any"),
    "true_divide": (lambda L, x, y, w: L.true_divide(x, y), "any"),
    "remainder": (lambda L, x, y, w: x % y, "any"),
    "remainder_scalar": (lambda L, x, y, w: x % 1.5, "any"),
    "fmod": (lambda L, x, y, w: L.fmod(x, y), "any"),
    "fmod_scalar": (lambda L, x, y, w: L.fmod(x, 1.5), "any"),
    "pow_scalar": (lambda L, x, y, w: x**2.5, "pos"),
    "pow_int": (lambda L, x, y, w: x**3, "any"),
    "pow_zero": (lambda L, x, y, w: x**0, "any"),
    "pow_tensor": (lambda L, x, y, w: x**y, "pos"),
    "rpow": (lambda L, x, y, w: 2.5**x, "any"),
    "rpow_zero": (lambda L, x, y, w: 0**x, "any"),
    "maximum": (lambda L, x, y, w: L.maximum(x, y), "any"),
    "minimum": (lambda L, x, y, w: L.minimum(x, y), "any"),
    "fmax": (lambda L, x, y, w: L.fmax(x, y), "any"),
    "fmin": (lambda L, x, y, w: L.fmin(x, y), "any"),
    "atan2": (lambda L, x, y, w: L.atan2(x, y), "any"),
    "where": (lambda L, x, y, w: L.where(x > y, x, y), "any"),
    "where_scalar_other": (lambda L, x, y, w: L.where(x > 0, x, 2.0), "any"),
    "where_scalar_self": (lambda L, x, y, w: L.where(x > 0, 2.0, y), "any"),
    "clamp": (lambda L, x, y, w: L.clamp(x, -0.5, 0.5), "any"),
    "clamp_min_only": (lambda L, x, y, w: L.clamp(x, min=0.1), "any"),
    "clamp_max_only": (lambda L, x, y, w: L.clamp(x, max=0.1), "any"),
    "clamp_tensor": (lambda L, x, y, w: L.clamp(x, y, w), "any"),
    "clamp_tensor_min": (lambda L, x, y, w: L.clamp(x, min=y), "any"),
    "clamp_tensor_max": (lambda L, x, y, w: L.clamp(x, max=w), "any"),
    "clamp_min": (lambda L, x, y, w: L.clamp_min(x, 0.2), "any"),
    "clamp_min_tensor": (lambda L, x, y, w: L.clamp_min(x, y), "any"),
    "clamp_max": (lambda L, x, y, w: L.clamp_max(x, 0.2), "any"),
    "clamp_max_tensor": (lambda L, x, y, w: L.clamp_max(x, y), "any"),
    "clip": (lambda L, x, y, w: L.clip(x, -0.5, 0.5), "any"),
    "lerp_scalar": (lambda L, x, y, w: L.lerp(x, y, 0.3), "any"),
    "lerp_scalar_big": (lambda L, x, y, w: L.lerp(x, y, 0.8), "any"),
    "lerp_tensor": (lambda L, x, y, w: L.lerp(x, y, w), "any"),
}


def values(draw, n, domain):
    lo = 0.05 if domain == "pos" else -3.0
    # Multiples of 1/8 give exact ties (x == y, x at clamp bounds) now and then.
    return [draw(st.integers(int(lo * 8) if domain == "any" else 1, 24)) / 8.0 for _ in range(n)]


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_gradients_match_torch(name, data):
    fn, domain = GRAD_CASES[name]
    shape_x = data.draw(st.sampled_from([(3,), (2, 3), (), (2, 1)]))
    shape_y = data.draw(st.sampled_from([shape_x, (3,), (1,), ()]))
    n = math.prod(shape_x)
    xs = values(data.draw, n, domain)
    ys = values(data.draw, math.prod(shape_y), "pos" if domain == "pos" else "any")
    ws = values(data.draw, math.prod(shape_y), "any")
    inputs = []
    for lib in (ember, torch):
        x = lib.tensor(xs, dtype=lib.float64).reshape(shape_x).requires_grad_()
        y = lib.tensor(ys, dtype=lib.float64).reshape(shape_y).requires_grad_()
        w = lib.tensor(ws, dtype=lib.float64).reshape(shape_y).requires_grad_()
        inputs.append((x, y, w))
    (xe, ye, we), (xt, yt, wt) = inputs
    try:
        rt = fn(torch, xt, yt, wt)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            fn(ember, xe, ye, we)
        return
    re = fn(ember, xe, ye, we)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__
    torch.testing.assert_close(
        torch.tensor(re.tolist(), dtype=torch.float64),
        rt.detach(),
        rtol=1e-12,
        atol=1e-12,
        equal_nan=True,
    )
    gvals = values(data.draw, rt.numel(), "any")
    ge = ember.tensor(gvals, dtype=ember.float64).reshape(tuple(rt.shape))
    gt = torch.tensor(gvals, dtype=torch.float64).reshape(tuple(rt.shape))
    rt.backward(gt)
    re.backward(ge)
    for a, b in ((xe, xt), (ye, yt), (we, wt)):
        if b.grad is None:
            assert a.grad is None
            continue
        assert a.grad is not None
        torch.testing.assert_close(
            torch.tensor(a.grad.tolist(), dtype=torch.float64),
            b.grad,
            rtol=1e-10,
            atol=1e-12,
            equal_nan=True,
        )


@pytest.mark.parametrize(
    "name", ["exp", "sigmoid", "tanh", "sqrt", "reciprocal", "abs", "relu", "sin", "floor"]
)
def test_inplace_gradients_match_torch(name):
    xs = [0.25, 1.5, 2.0, 0.75]
    grads = []
    for lib in (ember, torch):
        leaf = lib.tensor(xs, dtype=lib.float64, requires_grad=True)
        y = leaf * 1.0
        getattr(y, name + "_")()
        assert type(y.grad_fn).__name__ == f"{name.title()}Backward0"
        (y * lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64)).sum().backward()
        grads.append(leaf.grad.tolist())
    torch.testing.assert_close(
        torch.tensor(grads[0]), torch.tensor(grads[1]), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize(
    "name",
    [
        "exp",
        "sigmoid",
        "tanh",
        "pow_tensor",
        "where",
        "clamp",
        "maximum",
        "div",
        "silu",
        "atan2",
        "log",
        "lerp_tensor",
    ],
)
def test_double_backward_matches_torch(name):
    fn, _ = GRAD_CASES[name]
    results = []
    for lib in (ember, torch):
        x = lib.tensor([0.5, 1.25, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([1.5, 0.75, 2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([0.25, 0.5, 3.0], dtype=lib.float64, requires_grad=True)
        out = fn(lib, x, y, w).sum()
        (gx,) = lib.autograd.grad(out, x, create_graph=True)
        if not gx.requires_grad:  # piecewise-linear ops: the first derivative is constant
            results.append(None)
            continue
        (gx * lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64)).sum().backward()
        results.append([None if t.grad is None else t.grad.tolist() for t in (x, y, w)])
    if results[1] is None:
        assert results[0] is None
        return
    for a, b in zip(results[0], results[1]):
        assert (a is None) == (b is None)
        if a is not None:
            assert a == pytest.approx(b, rel=1e-12)


@pytest.mark.parametrize(
    "name",
    [
        "exp",
        "log",
        "tanh",
        "sigmoid",
        "gelu",
        "gelu_tanh",
        "silu",
        "atan2",
        "pow_tensor",
        "rsqrt",
        "tan",
        "asin",
        "acosh",
        "erfinv",
        "log10",
        "expm1",
        "log1p",
        "lerp_tensor",
        "div",
        "rpow",
    ],
)
def test_gradients_match_finite_differences(name):
    # Central differences in float64 check Ember's formulas on their own.
    fn, _ = GRAD_CASES[name]
    xs, ys, ws = [0.3, 1.1, 2.2], [0.7, 1.9, 0.4], [0.2, 0.9, 0.6]

    def total(xv, yv, wv):
        t = [ember.tensor(v, dtype=ember.float64) for v in (xv, yv, wv)]
        return fn(ember, *t).sum().item()

    x = ember.tensor(xs, dtype=ember.float64, requires_grad=True)
    y = ember.tensor(ys, dtype=ember.float64, requires_grad=True)
    w = ember.tensor(ws, dtype=ember.float64, requires_grad=True)
    fn(ember, x, y, w).sum().backward()
    h = 1e-6
    for k, (vals, leaf) in enumerate(((xs, x), (ys, y), (ws, w))):
        for i in range(3):
            up = [list(xs), list(ys), list(ws)]
            down = [list(xs), list(ys), list(ws)]
            up[k][i] += h
            down[k][i] -= h
            numeric = (total(*up) - total(*down)) / (2 * h)
            analytic = 0.0 if leaf.grad is None else leaf.grad.tolist()[i]
            assert analytic == pytest.approx(numeric, rel=1e-6, abs=1e-7), (k, i)


def test_not_differentiable_ops():
    for lib in (ember, torch):
        x = lib.tensor([1.5, -2.0], requires_grad=True)
        for y in (x // 2, lib.remainder(2, x)):
            assert y.requires_grad
            with pytest.raises(RuntimeError):
                y.sum().backward()
        for y in (x > 0, x == x * 1, lib.isnan(x), lib.logical_not(x), lib.isfinite(x)):
            assert not y.requires_grad and y.grad_fn is None


def test_out_variants_refuse_grad():
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        for call in (
            lambda lib=lib, x=x: lib.exp(x, out=lib.empty(2)),
            lambda lib=lib, x=x: lib.pow(x, 2, out=lib.empty(2)),
            lambda lib=lib, x=x: lib.clamp(x, 0, 1, out=lib.empty(2)),
        ):
            with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
                call()


def test_grad_fn_printing_matches_torch():
    for name in (
        "exp",
        "pow_scalar",
        "rpow",
        "pow_tensor",
        "where",
        "clamp",
        "clamp_tensor",
        "div",
        "remainder",
        "lerp_scalar",
        "lerp_tensor",
        "log1p",
        "expm1",
        "round_decimals",
        "square",
        "rdiv_scalar",
    ):
        fn, _ = GRAD_CASES[name]
        reprs = []
        for lib in (ember, torch):
            x = lib.tensor([0.5, 1.5], requires_grad=True)
            y = lib.tensor([1.0, 2.0], requires_grad=True)
            reprs.append(repr(fn(lib, x, y, y)))
        assert reprs[0] == reprs[1]
