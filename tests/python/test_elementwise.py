"""Unary elementwise math against torch: every dtype, broadcasting-free
shapes incl. 0-dim and empty, strided inputs, method / in-place / out=
variants, special values, the SIMD paths on long inputs, and the errors
torch raises for unsupported dtypes."""

from __future__ import annotations

import math
import warnings

import pytest
from conftest import DTYPE_NAMES, FLOAT_NAMES, HAS_MKL, VML_OPS, dtypes, torch
from elementwise_util import check, layouts, make_pair, run_both, shapes
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

warnings.filterwarnings("ignore", message="An output with one or more elements was resized")

# op -> exact (bit-for-bit) results expected; False means within a few ulp.
UNARY = {
    "abs": True,
    "sign": True,
    "floor": True,
    "ceil": True,
    "round": True,
    "trunc": True,
    "relu": True,
    "square": True,
    "sqrt": False,
    "rsqrt": True,
    "reciprocal": True,
    "neg": True,
    "logical_not": True,
    "bitwise_not": True,
    "isnan": True,
    "isinf": True,
    "isfinite": True,
    "exp": False,
    "log": False,
    "log1p": False,
    "expm1": False,
    "log2": False,
    "sin": False,
    "cos": False,
    "tan": False,
    "tanh": False,
    "sigmoid": False,
    "gelu": False,
    "silu": False,
    "asin": False,
    "acos": False,
    "atan": False,
    "sinh": False,
    "cosh": False,
    "asinh": False,
    "acosh": False,
    "atanh": False,
    "erf": False,
    "erfc": False,
    "erfinv": False,
    "exp2": False,
    "log10": False,
}
NN = {"gelu", "silu"}
# Ops whose domain is the positive reals get positive inputs half of the time.
POSITIVE_DOMAIN = {"log", "log1p", "log2", "sqrt", "rsqrt", "acosh", "log10"}
HAS_INPLACE = {op for op in UNARY if op not in ("isnan", "isinf", "isfinite")}
HAS_OUT = {op for op in UNARY if op not in ("isnan", "isinf", "isfinite", "relu", "square")}


def fns(op):
    """(ember function, torch function) for op."""
    fe = getattr(ember, op)
    ft = getattr(torch._C._nn, op) if op in NN else getattr(torch, op)
    return fe, ft




def exact_for(op, dname):
    # rsqrt in float16/bfloat16: torch rounds the square root to 16 bits first
    # in its scalar loop but not in its vector loop.
    if op == "rsqrt" and dname in ("float16", "bfloat16"):
        return False
    if HAS_MKL and op in VML_OPS and dname in ("float32", "float64"):
        return True
    return UNARY[op]


@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("dname", DTYPE_NAMES)
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_unary_matches_torch(op, dname, data):
    shape = data.draw(shapes())
    layout = data.draw(layouts)
    positive = op in POSITIVE_DOMAIN and data.draw(st.booleans())
    e, t = make_pair(data.draw, dname, shape, layout, positive=positive)
    fe, ft = fns(op)
    got, want = run_both(lambda: fe(e), lambda: ft(t), match_message=True)
    if want is None:
        return
    check(got, want, exact_for(op, dname))
    assert tuple(e.shape) == shape  # the input is untouched
    # Tensor method, where torch has one.
    if hasattr(torch.Tensor, op):
        check(getattr(e, op)(), getattr(t, op)(), exact_for(op, dname))


@pytest.mark.parametrize("op", sorted(HAS_INPLACE))
@pytest.mark.parametrize("dname", DTYPE_NAMES)
def test_unary_inplace(op, dname):
    vals = [1, 0, 1] if dname == "bool" else [1.5, -2.0, 0.25, 0.0, 3.0, -0.5]
    if dname != "bool" and dname not in FLOAT_NAMES:
        vals = [1, -2, 0, 3, 7, -5] if dname != "uint8" else [1, 2, 0, 3, 7, 5]
    ed, td = dtypes(dname)
    e, t = ember.tensor(vals, dtype=ed), torch.tensor(vals, dtype=td)
    if op in NN:
        # torch has silu(inplace=True) but no in-place gelu; compare with its out-of-place result.
        fe = lambda: getattr(e, op + "_")()
        ft = lambda: torch.nn.functional.silu(t, inplace=True) if op == "silu" else t.copy_(fns(op)[1](t))
    else:
        fe = lambda: getattr(e, op + "_")()
        ft = lambda: getattr(t, op + "_")()
    got, want = run_both(fe, ft, match_message=True)
    if want is None:
        return
    assert got is e  # in-place returns self
    check(e, t, exact_for(op, dname))


@pytest.mark.parametrize("op", sorted(HAS_OUT))
@pytest.mark.parametrize("dname", DTYPE_NAMES)
@settings(max_examples=4, deadline=None)
@given(data=st.data())
def test_unary_out(op, dname, data):
    e, t = make_pair(data.draw, dname, data.draw(shapes(max_dims=2)))
    out_name = data.draw(st.sampled_from(DTYPE_NAMES))
    out_shape = data.draw(st.sampled_from(["same", "empty", "other"]))
    shape = {"same": tuple(t.shape), "empty": (0,), "other": (2, 1)}[out_shape]
    oe, ot = (
        ember.empty(shape, dtype=dtypes(out_name)[0]),
        torch.empty(shape, dtype=dtypes(out_name)[1]),
    )
    fe, ft = fns(op)
    got, want = run_both(lambda: fe(e, out=oe), lambda: ft(t, out=ot), match_message=True)
    if want is None:
        return
    assert got is oe
    computed_in = str(ft(t).dtype).split(".")[1]
    check(oe, ot, exact_for(op, dname), tol_dtype=computed_in if computed_in in FLOAT_NAMES else None)


SPECIAL = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    2.5,
    -2.5,
    1e-3,
    -1e-3,
    3.0,
    10.0,
    -10.0,
    20.0,
    -20.0,
    88.0,
    -88.0,
    89.0,
    -104.0,
    1e4,
    -1e4,
    math.inf,
    -math.inf,
    math.nan,
    6e-8,
    1e-30,
    1e-40,
    0.625,
    -0.625,
]


@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("dname", FLOAT_NAMES)
def test_unary_special_values(op, dname):
    ed, td = dtypes(dname)
    e, t = ember.tensor(SPECIAL, dtype=ed), torch.tensor(SPECIAL, dtype=td)
    fe, ft = fns(op)
    got, want = run_both(lambda: fe(e), lambda: ft(t))
    if want is not None:
        check(got, want, exact_for(op, dname))
