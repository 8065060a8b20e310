"""Unary elementwise math against torch, part 2: long inputs through the
SIMD loops, round(decimals), GELU variants, integer-to-float promotion,
printing and error messages."""

from __future__ import annotations

import math

import pytest
from conftest import DTYPE_NAMES, FLOAT_NAMES, dtypes, torch
from elementwise_util import check, from_torch, run_both
from test_elementwise import POSITIVE_DOMAIN, UNARY, exact_for, fns

import ember

LONG_CASES = [(op, d) for op in sorted(UNARY) for d in ("float32", "float64")] + [
    (op, d)
    for op in ("exp", "log", "tanh", "sigmoid", "gelu", "silu", "sqrt", "sin")
    for d in ("float16", "bfloat16")
]


@pytest.mark.parametrize(("op", "dname"), LONG_CASES)
def test_unary_long_inputs(op, dname):
    # Long enough for the vector loops, their tails and a parallel split.
    g = torch.Generator().manual_seed(len(op) * 31 + ord(op[0]))
    t = (torch.randn(33001, generator=g, dtype=torch.float64) * 6).to(getattr(torch, dname))
    if op in POSITIVE_DOMAIN:
        t = t.abs()
    e = from_torch(t)
    fe, ft = fns(op)
    got, want = run_both(lambda: fe(e), lambda: ft(t))
    if want is None:
        return
    check(got, want, exact_for(op, dname))
    # Same values through a strided view give the same results.
    check(
        fe(e.as_strided((16500,), (2,), 1)),
        ft(t.as_strided((16500,), (2,), 1)),
        exact_for(op, dname),
    )


@pytest.mark.parametrize("dname", DTYPE_NAMES)
@pytest.mark.parametrize("decimals", [0, 1, 2, -1, -2])
def test_round_decimals(dname, decimals):
    vals = (
        [1.2345, 125.0, -2.675, 1234.5, 0.5, -0.05, 1e-3]
        if dname in FLOAT_NAMES
        else [1, 5, 15, -7]
    )
    if dname == "bool":
        vals = [True, False]
    if dname == "uint8":
        vals = [1, 5, 15, 7]
    ed, td = dtypes(dname)
    e, t = ember.tensor(vals, dtype=ed), torch.tensor(vals, dtype=td)
    got, want = run_both(
        lambda: ember.round(e, decimals=decimals),
        lambda: torch.round(t, decimals=decimals),
        match_message=True,
    )
    if want is not None:
        check(got, want)
        check(e.round(decimals=decimals), t.round(decimals=decimals))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dname", FLOAT_NAMES)
def test_gelu_approximate(approximate, dname):
    vals = [-6.0, -3.0, -1.0, -0.5, 0.0, 0.3, 1.0, 2.0, 4.0, math.inf, -math.inf, math.nan]
    ed, td = dtypes(dname)
    e, t = ember.tensor(vals, dtype=ed), torch.tensor(vals, dtype=td)
    check(
        ember.gelu(e, approximate=approximate),
        torch.nn.functional.gelu(t, approximate=approximate),
        exact=False,
    )


def test_gelu_bad_approximate():
    run_both(
        lambda: ember.gelu(ember.ones(2), approximate="fast"),
        lambda: torch.nn.functional.gelu(torch.ones(2), approximate="fast"),
    )


@pytest.mark.parametrize("dname", DTYPE_NAMES)
def test_integer_inputs_promote_to_default_float(dname):
    ed, td = dtypes(dname)
    vals = [1, 0, 1] if dname == "bool" else [1, 2, 3]
    e, t = ember.tensor(vals, dtype=ed), torch.tensor(vals, dtype=td)
    for op in ("exp", "log", "sqrt", "sin", "sigmoid", "reciprocal", "tanh", "rsqrt"):
        check(getattr(ember, op)(e), getattr(torch, op)(t), exact=False)
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        check(ember.exp(e), torch.exp(t), exact=False)
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


def test_unary_printing_matches_torch():
    e, t = ember.tensor([1.5, -2.0, 0.0]), torch.tensor([1.5, -2.0, 0.0])
    for op in ("exp", "abs", "sign", "floor", "isnan", "logical_not", "sigmoid", "neg"):
        assert repr(getattr(ember, op)(e)) == repr(getattr(torch, op)(t))
    i_e, i_t = ember.tensor([3, -4]), torch.tensor([3, -4])
    assert repr(ember.sqrt(i_e)) == repr(torch.sqrt(i_t))
    assert repr(~i_e) == repr(~i_t)


def test_unary_errors_match_torch():
    e, t = ember.tensor([1, 2]), torch.tensor([1, 2])
    b_e, b_t = ember.tensor([True]), torch.tensor([True])
    cases = [
        (lambda lib, x, b: x.exp_()),  # float result into an int64 tensor
        (lambda lib, x, b: lib.exp(x, out=lib.empty(2, dtype=lib.int64))),
        (lambda lib, x, b: lib.abs(b)),
        (lambda lib, x, b: lib.floor(b)),
        (lambda lib, x, b: lib.relu(b)),
        (lambda lib, x, b: lib.bitwise_not(x.to(lib.float32))),
        (lambda lib, x, b: lib.logical_not(x, out=lib.empty(2))),  # allowed
        (lambda lib, x, b: lib.sqrt(x, out=lib.empty(2, dtype=lib.float16))),  # allowed
        (lambda lib, x, b: lib.sqrt(x.to(lib.float32).requires_grad_(), out=lib.empty(2))),
        (lambda lib, x, b: lib.abs(x, out=lib.empty(2, dtype=lib.bool))),
        (lambda lib, x, b: ~x.to(lib.float32)),
    ]
    for case in cases:
        got, want = run_both(
            lambda case=case: case(ember, e, b_e),
            lambda case=case: case(torch, t, b_t),
            match_message=True,
        )
        if want is not None:
            check(got, want)
