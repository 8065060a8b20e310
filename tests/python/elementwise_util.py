"""Helpers shared by the elementwise-math tests: input strategies (shapes,
broadcasting, strided views, every dtype) and the comparison with torch."""

from __future__ import annotations

import math

import pytest
from conftest import DTYPE_NAMES, FLOAT_NAMES, dtypes, torch
from hypothesis import strategies as st

import ember

INT_NAMES = ["uint8", "int8", "int16", "int32", "int64"]

# Tolerances for results that go through a transcendental function: both
# libraries are within 1-2 ulp of the exact value, so they may differ by a
# few ulp (GELU's erf in float32 by ~1e-6 absolute).
APPROX_TOL = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-2, 1e-2),
    "float32": (2e-6, 2e-6),
    "float64": (1e-12, 1e-12),
}


def run_both(fn_e, fn_t, match_message=False):
    """Runs torch then ember; if torch raises, ember must raise the same type
    (and message when asked). Returns (ember_result, torch_result) or (None, None)."""
    try:
        expected = fn_t()
    except Exception as err:  # noqa: BLE001
        with pytest.raises(type(err)) as info:
            fn_e()
        # Argument-parser TypeErrors word the list of overloads differently.
        if match_message and not isinstance(err, TypeError):
            assert str(info.value) == str(err)
        return None, None
    return fn_e(), expected


def from_torch(t):
    """An ember tensor with the values of torch tensor t (fast path for long inputs)."""
    name = str(t.dtype).split(".")[1]
    return ember._C._tensor_from_flat(t.reshape(-1).tolist(), tuple(t.shape), getattr(ember, name))


def to_torch(e):
    t = torch.tensor(e.tolist(), dtype=getattr(torch, str(e.dtype).split(".")[1]))
    return t.reshape(tuple(e.shape))


def check(e, t, exact=True, tol_dtype=None, zero_signs=True):
    """Same dtype, shape and values; exact values (and signs of zeros) unless
    exact is False, then within APPROX_TOL of the result dtype (or of
    tol_dtype, the dtype the result was computed in). zero_signs=False skips
    the sign of zeros (torch's maximum/minimum/clamp pick either zero on a
    tie depending on whether its vector or scalar loop ran)."""
    assert isinstance(e, ember.Tensor), type(e)
    assert str(e.dtype) == str(t.dtype), f"dtype {e.dtype} != {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} != {tuple(t.shape)}"
    got = to_torch(e)
    t = t.detach()
    if not t.dtype.is_floating_point:
        assert torch.equal(got, t), f"\nember {got}\ntorch {t}"
        return
    # Values compare in float64 (exact for every float dtype, and much faster
    # than torch's float16 isclose).
    dname = str(t.dtype).split(".")[1]
    got, t = got.double(), t.double()
    if exact:
        torch.testing.assert_close(got, t, rtol=0, atol=0, equal_nan=True)
        zeros = (t == 0) & ~torch.isnan(t)
        assert not zero_signs or torch.equal(torch.signbit(got[zeros]), torch.signbit(t[zeros])), (
            f"signs of zeros differ\n{got}\n{t}"
        )
    else:
        rtol, atol = APPROX_TOL[tol_dtype or dname]
        torch.testing.assert_close(got, t, rtol=rtol, atol=atol, equal_nan=True)


# ---- inputs -------------------------------------------------------------------------

small_dim = st.integers(min_value=0, max_value=4)


@st.composite
def shapes(draw, max_dims=3):
    return tuple(draw(st.lists(small_dim, max_size=max_dims)))


@st.composite
def broadcast_shapes(draw):
    """Two shapes that broadcast together (dims of 1, missing leading dims)."""
    n = draw(st.integers(0, 3))
    base = [draw(small_dim) for _ in range(n)]
    a = [d if draw(st.booleans()) else 1 for d in base]
    b = [d if draw(st.booleans()) else 1 for d in base]
    a = a[draw(st.integers(0, n)) :]
    return tuple(a), tuple(b)


def values(draw, dtype_name, numel, lo=-8, hi=8, positive=False):
    if dtype_name == "bool":
        return [draw(st.booleans()) for _ in range(numel)]
    if dtype_name in FLOAT_NAMES:
        low = 0.0 if positive else float(lo)
        # float16-representable values: exact in every float dtype but bfloat16,
        # where both libraries round them the same way.
        return [draw(st.floats(low, float(hi), allow_nan=False, width=16)) for _ in range(numel)]
    if dtype_name == "uint8":
        lo = 0
    if positive:
        lo = max(lo, 0)
    return [draw(st.integers(lo, hi)) for _ in range(numel)]


def make_pair(draw, dtype_name, shape, layout="contiguous", **kw):
    """The same values as an (ember, torch) pair with the given layout:
    contiguous, transposed (permuted strides), strided (every other element)
    or expanded (a stride-0 dim)."""
    numel = math.prod(shape)
    ed, td = dtypes(dtype_name)
    if layout == "transposed" and len(shape) >= 2:
        rev = tuple(reversed(shape))
        vals = values(draw, dtype_name, numel, **kw)
        e = ember.tensor(vals, dtype=ed).reshape(rev)
        t = torch.tensor(vals, dtype=td).reshape(rev)
        perm = tuple(reversed(range(len(shape))))
        return e.permute(*perm), t.permute(*perm)
    if layout == "strided" and numel > 0:
        vals = values(draw, dtype_name, 2 * numel, **kw)
        e = ember.tensor(vals, dtype=ed)
        t = torch.tensor(vals, dtype=td)
        strides = []
        acc = 2
        for d in reversed(shape):
            strides.append(acc)
            acc *= max(d, 1)
        strides = tuple(reversed(strides))
        return e.as_strided(shape, strides, 1), t.as_strided(shape, strides, 1)
    if layout == "expanded" and len(shape) >= 1 and shape[-1] > 1:
        inner = shape[:-1] + (1,)
        vals = values(draw, dtype_name, math.prod(inner), **kw)
        e = ember.tensor(vals, dtype=ed).reshape(inner).expand(shape)
        t = torch.tensor(vals, dtype=td).reshape(inner).expand(shape)
        return e, t
    vals = values(draw, dtype_name, numel, **kw)
    return ember.tensor(vals, dtype=ed).reshape(shape), torch.tensor(vals, dtype=td).reshape(shape)


layouts = st.sampled_from(["contiguous", "transposed", "strided", "expanded"])

# Python numbers used as scalar operands.
PY_SCALARS = [2, -3, 0, 1, 2.5, -0.5, 0.0, True, False]


def libs_call(name, *args, **kwargs):
    """(ember call, torch call) of lib.<name>; torch.nn.functional for gelu/silu."""

    def fe():
        return getattr(ember, name)(*[a[0] if isinstance(a, tuple) else a for a in args], **kwargs)

    def ft():
        fn = (
            getattr(torch.nn.functional, name) if name in ("gelu", "silu") else getattr(torch, name)
        )
        return fn(*[a[1] if isinstance(a, tuple) else a for a in args], **kwargs)

    return fe, ft


ALL_DTYPES = DTYPE_NAMES
