"""repr/str of tensors byte-identical to PyTorch: precision, int and sci modes,
summarisation, 80-column wrapping, nesting, suffixes and set_printoptions."""

from __future__ import annotations

import math

import pytest
from conftest import DTYPE_NAMES, FLOAT_NAMES, dtypes, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember


def both(values, dname="float32", shape=None):
    ed, td = dtypes(dname)
    e, t = ember.tensor(values, dtype=ed), torch.tensor(values, dtype=td)
    if shape is not None:
        e, t = e.reshape(shape), t.reshape(shape)
    return e, t


CASES = [
    [0.4963, 0.7682, 0.0885, 0.1320, 0.3074],
    [1.0, 2.0, 3.0],
    [1e-5, 1.0],
    [1e-5, 1e5],
    [123456789.0, 1.0],
    [-1.5, 2.25, -3.125],
    [0.0, 0.0],
    [float("inf"), float("-inf"), float("nan")],
    [float("nan"), 1.5, -2.0],
    [1e10, 1.0, 0.0],
    [0.1, 0.2, 1000.5],
    [100.0, -100.0, 5.0],
    [1e-8],
    [12345.678],
    list(range(30)),
    [x / 7 for x in range(40)],
]


@pytest.mark.parametrize("vals", CASES)
@pytest.mark.parametrize("dname", FLOAT_NAMES)
def test_float_vectors(vals, dname):
    e, t = both(vals, dname)
    assert repr(e) == repr(t)
    assert str(e) == str(t)


@pytest.mark.parametrize("dname", DTYPE_NAMES)
def test_integer_bool_and_shapes(dname):
    for vals, shape in [([1, 0, 1, 1], (2, 2)), ([1] * 24, (2, 3, 4)), ([0] * 6, (1, 6, 1)), ([1], ())]:
        e, t = both(vals, dname, shape)
        assert repr(e) == repr(t)


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3, 1), (3, 0, 0)])
@pytest.mark.parametrize("dname", ["float32", "float64", "int64", "int32", "bool"])
def test_empty(shape, dname):
    ed, td = dtypes(dname)
    assert repr(ember.zeros(shape, dtype=ed)) == repr(torch.zeros(shape, dtype=td))


@pytest.mark.parametrize("n", [999, 1000, 1001, 2000])
def test_summarisation_1d(n):
    e, t = both(list(range(n)), "int64")
    assert repr(e) == repr(t)
    e, t = both([x * 0.5 for x in range(n)], "float32")
    assert repr(e) == repr(t)


def test_summarisation_nd():
    for shape in [(40, 40), (3, 400), (2, 3, 200), (1001, 1)]:
        n = math.prod(shape)
        e, t = both([float(i % 97) - 40.5 for i in range(n)], "float32", shape)
        assert repr(e) == repr(t)


def test_suffixes():
    e, t = both([1.0, 2.0], "float32")
    e.requires_grad_(True)
    t.requires_grad_(True)
    assert repr(e) == repr(t)
    assert repr(e * 2) == repr(t * 2)
    assert repr((e * 2).sum()) == repr((t * 2).sum())
    e, t = both([1, 2], "int32")
    assert repr(e) == repr(t)
    e, t = both([[0.123456] * 9] * 2, "float64")
    assert repr(e) == repr(t)  # dtype suffix on its own line when the last line is long


def test_set_printoptions_matches():
    e, t = both([1.123456789, 2.0, 3e-3], "float64")
    try:
        for kwargs in [dict(precision=2), dict(precision=8), dict(sci_mode=True), dict(sci_mode=False),
                       dict(linewidth=30), dict(threshold=5, edgeitems=1), dict(profile="short"),
                       dict(profile="full")]:
            ember.set_printoptions(**kwargs)
            torch.set_printoptions(**kwargs)
            assert repr(e) == repr(t), kwargs
            big_e, big_t = both([x * 1.5 for x in range(50)], "float32")
            assert repr(big_e) == repr(big_t), kwargs
    finally:
        ember.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


@settings(max_examples=150, deadline=None)
@given(
    vals=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1, max_size=40),
    rows=st.integers(1, 3),
)
def test_random_float_tensors(vals, rows):
    n = len(vals) - len(vals) % rows or rows
    vals = (vals * rows)[:n]
    e, t = both(vals, "float32", (rows, n // rows))
    assert repr(e) == repr(t)
