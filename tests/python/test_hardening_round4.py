"""Findings of a fourth held-out fuzzing round (tools/fuzz/fuzz.py, new
seeds), one class each, compared with PyTorch: values, exception classes and
messages."""

from __future__ import annotations

import pytest
from conftest import torch
from test_hardening import check_same

import ember

X = "torch.tensor([0.0, -0.0, -1.0, 1.0, float('nan'), 2.5, -3.0, 0.0, -0.0])"


# Zero takes elu's linear branch: a NaN alpha (or input scale) leaves it zero.
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize(
    "call",
    [
        "F.elu({x}, alpha=float('nan'))",
        "F.celu({x}, alpha=float('nan'))",
        "F.elu_({x}.clone(), alpha=float('nan'))",
        "F.elu({x}, alpha=2.0)",
        "F.selu({x})",
    ],
)
def test_elu_at_zero_as_torch(call, dtype):
    x = f"{X}.repeat(5).to(torch.{dtype})"
    check_same(call.format(x=x))


# Integer hardtanh converts its bounds to int64_t, then to the element type.
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
@pytest.mark.parametrize(
    "bounds",
    [
        "-float('inf'), 0.0",
        "0.0, float('inf')",
        "float('nan'), 2.0",
        "-2.0**63, 2.0",
        "-2.0**64, 2.0",
        "-40000, 2.0",
        "0, 300",
        "0.5, 2.0",
        "-1, 2**63 - 1",
        "-1, 2**63",
        "-(2**63), 2",
        "-1, 2",
    ],
)
def test_integer_hardtanh_bounds_as_torch(dtype, bounds):
    x = f"torch.arange(-3, 4).to(torch.{dtype})"
    check_same(f"F.hardtanh({x}, {bounds})")
    check_same(f"F.hardtanh_({x}, {bounds})")


@pytest.mark.parametrize(
    "code",
    [
        # Tolerances are Python numbers: a huge one gives inf, never an error.
        "torch.allclose(torch.tensor([1.0, 2.0]), torch.tensor(1.0), rtol=1e300)",
        "torch.isclose(torch.tensor([1.0, 2.0, float('inf')]).half(), torch.tensor(1.0).half(), atol=1e300)",
        "torch.isclose(torch.tensor([1.0, 2.5]).bfloat16(), torch.tensor([1.0, 2.0]).bfloat16())",
        "torch.isclose(torch.tensor([1, 2]), torch.tensor([3, 2]), rtol=1e300)",
        # Samplers check their dtype even when there is nothing to draw, except
        # bernoulli's CPU kernel, which picks its loop only when it draws.
        "torch.poisson(torch.zeros(2, 0, 3, dtype=torch.int64))",
        "torch.poisson(torch.zeros(0, dtype=torch.bool))",
        "torch.zeros(2, 0, 3, dtype=torch.bool).bernoulli()",
        "torch.zeros(0).bernoulli_(torch.zeros(0, dtype=torch.bool))",
        "torch.zeros(3, dtype=torch.bool).bernoulli()",
        # An empty input comes back from pixel_unshuffle with its shape.
        "F.pixel_unshuffle(torch.zeros(2, 0, 3, dtype=torch.complex64), 3)",
        "F.pixel_unshuffle(torch.zeros(1, 2, 0, 3), 3)",
        "F.pixel_unshuffle(torch.zeros(2, 0, 4), 3)",
        "F.pixel_unshuffle(torch.arange(36.0).reshape(1, 6, 6), 3)",
        # vecdot: floating or complex operands of one dtype; x is conjugated.
        "torch.linalg.vecdot(torch.tensor([1j, 2]), torch.tensor([1j, 1 + 1j]))",
        "torch.linalg.vecdot(torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.int32))",
        "torch.linalg.vecdot(torch.ones(2), torch.ones(3, dtype=torch.float64))",
        "torch.linalg.vecdot(torch.ones(1, dtype=torch.complex128), torch.ones(4, 3, 2, dtype=torch.float64))",
        "torch.linalg.vecdot(torch.ones(2, 3), torch.ones(3), dim=0)",
    ],
)
def test_checks_and_results_as_torch(code):
    check_same(code)


def test_isclose_default_tolerances_match_torch():
    a = [1.0, 1.0 + 1e-6, 1.0 + 1e-4, 100.0, float("nan")]
    b = [1.0, 1.0, 1.0, 100.001, float("nan")]
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        t = torch.isclose(torch.tensor(a).to(getattr(torch, dtype)), torch.tensor(b).to(getattr(torch, dtype)))
        e = ember.isclose(ember.tensor(a).to(getattr(ember, dtype)), ember.tensor(b).to(getattr(ember, dtype)))
        assert e.tolist() == t.tolist(), dtype


# Floating hardtanh converts its bounds to the element type; max_val wins over
# a larger min_val (hardtanh_ has no min_val > max_val check), as clamp.
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32", "int8"])
@pytest.mark.parametrize(
    "call",
    [
        "F.hardtanh_({x}, min_val=-1.5, max_val=1e300)",
        "F.hardtanh({x}, min_val=-1.5, max_val=70000.0)",
        "F.hardtanh({x}, min_val=-1e300, max_val=1.0)",
        "F.hardtanh({x}, -float('inf'), float('inf'))",
        "F.hardtanh_({x}, min_val=4, max_val=-1.5)",
        "F.hardtanh({x}, min_val=4, max_val=-1.5)",
        "F.hardtanh({x}, min_val=-2, max_val=2)",
    ],
)
def test_hardtanh_bounds_as_torch(call, dtype):
    x = f"torch.tensor([0.0, 1.0, -3.0, 7.0, float('nan'), 2.5] * 7).to(torch.{dtype})"
    check_same(call.format(x=x))


@pytest.mark.parametrize(
    "code",
    [
        # In place on real (or integer) tensors, conj_physical_ and nan_to_num_
        # write nothing: an expanded tensor is no error.
        "torch.full((1,), 0.5).expand((3, 4)).conj_physical_()",
        "torch.full((1,), 1).to(torch.int16).expand((3, 4)).conj_physical_()",
        "torch.full((1,), 1j).expand((3, 4)).conj_physical_()",
        "torch.full((1,), 1).to(torch.int32).expand((2, 3, 4)).nan_to_num_(nan=True)",
        "torch.full((1,), 1.0).expand((2, 3)).nan_to_num_()",
        # A Python int fits int64_t whole (2**63-1 is no float).
        "torch.zeros(2, 3, dtype=torch.int64).clamp_min_(2**63 - 1)",
        "torch.zeros(2, 3, dtype=torch.int64).clamp(max=-(2**63))",
        "torch.zeros(2, 3, dtype=torch.int32).clamp_min_(2**63 - 1)",
        # all/any write bool or uint8 results, whatever the input.
        "torch.any(torch.ones(1, 4, 1, dtype=torch.int64), out=torch.zeros(6, dtype=torch.uint8))",
        "torch.all(torch.ones(2, 3), 1, out=torch.zeros(3, 1, dtype=torch.uint8))",
        "torch.all(torch.ones(2, 3), 1, out=torch.zeros(3, 1, dtype=torch.int32))",
        # A dtype= and out= (or the in-place form) must agree.
        "torch.cumsum(torch.ones(3), 0, dtype=torch.float64, out=torch.zeros(3, dtype=torch.float32))",
        "torch.cumsum(torch.ones(1, 4, 1).double(), 1, dtype=torch.float64, out=torch.zeros(1, 4, 1).long())",
        "torch.cumprod(torch.ones(3), 0, dtype=torch.float64, out=torch.zeros(3, dtype=torch.float32))",
        "torch.cumsum(torch.ones(3), 0, out=torch.zeros(3, dtype=torch.int64))",
        "torch.sum(torch.ones(3), 0, dtype=torch.float64, out=torch.zeros((), dtype=torch.float32))",
        "torch.sum(torch.ones(3), 0, dtype=torch.float64, out=torch.zeros((), dtype=torch.float64))",
        "torch.prod(torch.ones(3), 0, dtype=torch.float64, out=torch.zeros((), dtype=torch.float32))",
        "torch.nansum(torch.ones(3), 0, dtype=torch.float64, out=torch.zeros((), dtype=torch.float32))",
        "torch.arange(3.0).cumprod_(0, dtype=torch.float64)",
        "torch.arange(3.0).cumsum_(0, dtype=torch.float32)",
        # The deprecated cholesky returns an empty input of any shape and dtype.
        "torch.cholesky(torch.zeros(2, 0, 3, dtype=torch.bool), upper=True)",
        "torch.cholesky(torch.zeros(0, dtype=torch.complex64))",
        "torch.cholesky(torch.zeros(0, dtype=torch.int8))",
        "torch.linalg.cholesky(torch.zeros(0))",
    ],
)
def test_inplace_reduction_and_bound_rules_as_torch(code):
    check_same(code)


Z = "torch.tensor([1 + 1j, 0j, -2 + 0.5j, 1j, -1 + 0j, 3 - 2j])"


# Complex powers of a tensor by a tensor: std::complex's pow, as PyTorch's.
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(
    "call",
    [
        "torch.pow({z}, {z}.flip(0))",
        "torch.pow(2, {z})",
        "torch.pow(torch.tensor([2.0, 0.0, -1.0, 0.5, 3.0, -0.5]), {z})",
        "{z}.pow(torch.tensor([0.5, 2.0, 0.0, -1.0, 3.0, 1.0]))",
        "{z}.clone().pow_(torch.tensor([0.5, 2.0, 0.0, -1.0, 3.0, 1.0]))",
        "torch.float_power({z}, torch.tensor([2, 3, 0, 1, -1, 2]).to(torch.int16))",
        "torch.tensor([1, 2, 3, 4, 5, 6]).pow({z})",
        "{z}.reshape(2, 3).pow({z}[:3])",
    ],
)
def test_complex_tensor_powers_as_torch(call, dtype):
    check_same(call.format(z=f"{Z}.to(torch.{dtype})"))


@pytest.mark.parametrize(
    "code",
    [
        # A complex logsumexp over nothing is -inf in the input's dtype.
        "torch.zeros(2, 0, 3, dtype=torch.complex128).logsumexp(1)",
        "torch.zeros(2, 0, 3, dtype=torch.complex64).logsumexp(1, keepdim=True)",
        "torch.zeros(0, dtype=torch.complex64).logsumexp(0)",
        "torch.tensor([[1 + 1j, -2j], [0.5 + 0j, 3 - 1j]]).logsumexp(1)",
        "torch.zeros(2, 0, 3).logsumexp(1)",
    ],
)
def test_complex_logsumexp_of_nothing_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        "torch.gradient(torch.ones(2, 2, 3, dtype=torch.complex128), dim=(0, -3))",
        "torch.gradient(torch.ones(2, 2, 3), dim=(1, -2))",
        "torch.gradient(torch.arange(12.0).reshape(3, 4) ** 2, dim=(0, 1))",
        # An empty dim gives an empty result.
        "torch.cumulative_trapezoid(torch.zeros(0, dtype=torch.uint8))",
        "torch.cumulative_trapezoid(torch.zeros(2, 0))",
        "torch.cumulative_trapezoid(torch.zeros(0, 2))",
        "torch.cumulative_trapezoid(torch.arange(5.0))",
        # unravel_index has no range check: coordinates are floor remainders.
        "torch.unravel_index(torch.tensor([-7, 7, 11, -1, -13, 25]), (3, 4))",
        "torch.unravel_index(torch.tensor([[[-3], [0], [1], [2]]]).to(torch.int32), 1)",
        "torch.unravel_index(torch.tensor(-13), (3, 4))",
        "torch.unravel_index(torch.tensor([0]), (0,))",
        "torch.unravel_index(torch.tensor([1]), (-3,))",
        "torch.unravel_index(torch.zeros(0, dtype=torch.complex128), 0)",
        "torch.unravel_index(torch.tensor([1.5]), (3,))",
    ],
)
def test_python_level_rules_as_torch(code):
    check_same(code)
