"""Shared pieces of the tensor-operation tests (gather, scatter, sort, ...)."""

from __future__ import annotations

import pytest
from conftest import FLOAT_NAMES, assert_same, dtypes, torch
from hypothesis import strategies as st

import ember

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
NUMERIC = [d for d in ALL if d != "bool"]


def values(draw, dtype_name, n, distinct=False, nan=False):
    if dtype_name == "bool":
        return [draw(st.booleans()) for _ in range(n)]
    if distinct:
        pool = {"uint8": range(0, 256), "int8": range(-128, 128)}.get(dtype_name, range(-150, 150))
        pool = list(pool)
        vals = draw(st.permutations(pool))[:n]
        return [float(v) / 2 if dtype_name in FLOAT_NAMES else v for v in vals]
    if dtype_name in FLOAT_NAMES:
        choices = [float(draw(st.integers(-6, 6))) / 2 for _ in range(n)]
        if nan and n:
            for _ in range(draw(st.integers(0, 2))):
                choices[draw(st.integers(0, n - 1))] = draw(
                    st.sampled_from([float("nan"), float("inf"), -float("inf")])
                )
        return choices
    lo, hi = (0, 9) if dtype_name == "uint8" else (-5, 5)
    return [draw(st.integers(lo, hi)) for _ in range(n)]


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def build(vals, dtype_name, shape, noncontig=False, requires_grad=False):
    """(ember, torch) pair; noncontig builds the transposed layout and permutes back."""
    ed, td = dtypes(dtype_name)
    if noncontig and len(shape) >= 2:
        rev = tuple(reversed(shape))
        # vals are in row-major order of shape: lay them out for rev.
        t = torch.tensor(vals, dtype=td).reshape(shape).permute(*reversed(range(len(shape)))).contiguous()
        e = ember.tensor(t.tolist(), dtype=ed).reshape(rev)
        perm = tuple(reversed(range(len(shape))))
        e, t = e.permute(*perm), t.permute(*perm)
    else:
        e = ember.tensor(vals, dtype=ed).reshape(shape)
        t = torch.tensor(vals, dtype=td).reshape(shape)
    if requires_grad:
        e.requires_grad_(True)
        t.requires_grad_(True)
    return e, t


def index_pair(vals, shape, dtype="int64"):
    e = ember.tensor(vals, dtype=getattr(ember, dtype)).reshape(shape)
    t = torch.tensor(vals, dtype=getattr(torch, dtype)).reshape(shape)
    return e, t


@st.composite
def shapes(draw, min_dims=0, max_dims=3, max_size=4):
    n = draw(st.integers(min_dims, max_dims))
    return tuple(draw(st.integers(0 if draw(st.integers(0, 6)) == 0 else 1, max_size)) for _ in range(n))


def run_both(fn_e, fn_t, match=True):
    """Runs both; when torch raises, Ember raises the same type (and message)."""
    try:
        expected = fn_t()
    except Exception as err:  # noqa: BLE001
        with pytest.raises(type(err)) as info:
            fn_e()
        if match:
            got, want = str(info.value).split("\n")[0], str(err).split("\n")[0]
            assert got == want, f"message {got!r} != {want!r}"
        return None, None
    return fn_e(), expected


def same(e, t, **kw):
    if isinstance(t, tuple):
        assert type(e).__name__ == type(t).__name__ or isinstance(e, tuple)
        assert len(e) == len(t)
        for a, b in zip(e, t):
            same(a, b, **kw)
        return
    assert_same(e, t, **kw)


def grad_check(fn_e, fn_t, e_inputs, t_inputs, node=None):
    """Backward of sum(result * w) in both; grads and grad_fn names equal."""
    re, rt = fn_e(*e_inputs), fn_t(*t_inputs)
    if node is not None:
        assert type(rt.grad_fn).__name__ == node
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__
    w = torch.linspace(-1, 1, rt.numel(), dtype=rt.dtype).reshape(rt.shape)
    we = ember.tensor(w.tolist(), dtype=getattr(ember, str(rt.dtype).split(".")[1])).reshape(tuple(rt.shape))
    (re * we).sum().backward()
    (rt * w).sum().backward()
    for a, b in zip(e_inputs, t_inputs):
        if isinstance(b, torch.Tensor) and b.requires_grad:
            assert_same(a.grad, b.grad)
