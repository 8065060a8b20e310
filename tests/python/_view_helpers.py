"""Helpers shared by test_views.py and test_indexing.py: building the same
tensor in both libraries, comparing results that may be views (strides,
offsets, storage sharing, version counters), gradients and grad_fn chains."""

from __future__ import annotations

import pytest
from conftest import FLOAT_NAMES, assert_same, dtypes, torch
from hypothesis import strategies as st

import ember

LIBS = (ember, torch)


def values_for(dtype_name, numel, draw):
    if dtype_name == "bool":
        return [draw(st.booleans()) for _ in range(numel)]
    if dtype_name in FLOAT_NAMES:
        return [float(draw(st.integers(-20, 20))) / 4 for _ in range(numel)]
    lo, hi = (0, 30) if dtype_name == "uint8" else (-15, 15)
    return [draw(st.integers(lo, hi)) for _ in range(numel)]


def numel_of(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def build(lib, values, dtype_name, shape, layout):
    """values laid out in shape; layout 'contig', 'perm' (non-contiguous:
    built transposed, then permuted back) or 'offset' (a view with a storage
    offset: the last row of a larger tensor)."""
    dt = getattr(lib, dtype_name)
    if layout == "perm" and len(shape) >= 2:
        rev = tuple(reversed(shape))
        # Values of x[i0..in] placed at xt[in..i0].
        idx = _transposed_order(shape)
        base = lib.tensor([values[i] for i in idx], dtype=dt).reshape(rev)
        return base.permute(*reversed(range(len(shape))))
    if layout == "offset":
        pad = values[:1] * 3 if values else [0, 0, 0]
        base = lib.tensor(pad + list(values), dtype=dt)
        return base[3:].view(shape) if shape else base[3:].view(())
    return lib.tensor(values, dtype=dt).reshape(shape)


def _transposed_order(shape):
    """Flat indices of x (row-major over shape) in row-major order of the reversed shape."""
    n = len(shape)
    rev = tuple(reversed(shape))
    strides = [1] * n
    for i in range(n - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    out = []

    def rec(d, coords):
        if d == n:
            # coords index rev; x index is reversed coords
            out.append(sum(c * strides[n - 1 - k] for k, c in enumerate(coords)))
            return
        for i in range(rev[d]):
            rec(d + 1, coords + [i])

    rec(0, [])
    return out


@st.composite
def shapes(draw, max_dims=4, max_size=4, min_dims=0):
    n = draw(st.integers(min_dims, max_dims))
    return tuple(draw(st.integers(0 if draw(st.integers(0, 5)) == 0 else 1, max_size)) for _ in range(n))


def make_pair(draw, dtype_name, shape, layout=None, requires_grad=False):
    values = values_for(dtype_name, numel_of(shape), draw)
    if layout is None:
        layout = draw(st.sampled_from(["contig", "perm", "offset"]))
    e = build(ember, values, dtype_name, shape, layout)
    t = build(torch, values, dtype_name, shape, layout)
    if requires_grad:
        # A leaf with the same values and strides.
        e = e.detach().requires_grad_(True)
        t = t.detach().requires_grad_(True)
    return e, t


def run_both(fn_e, fn_t):
    """Runs both; if torch raises, Ember must raise the same exception type.
    Returns (ember result, torch result) or (None, None) after an error."""
    try:
        expected = fn_t()
    except Exception as err:  # noqa: BLE001
        with pytest.raises(type(err)):
            fn_e()
        return None, None, err
    return fn_e(), expected, None


def grad_fn_chain(t):
    """Names of the grad_fn and its first-input ancestors, up to a leaf."""
    out = []
    fn = t.grad_fn
    while fn is not None and len(out) < 8:
        out.append(type(fn).__name__)
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt else None
    return out


def _root(t):
    b = t._base
    return t if b is None else b


def check_result(e, t, xe, xt):
    """Same values, dtype, shape; for views, the same strides, offset,
    position relative to the input, and view flags."""
    assert_same(e, t)
    assert e._is_view() == t._is_view(), f"_is_view {e._is_view()} != {t._is_view()}"
    if t._is_view():
        assert e.stride() == t.stride(), f"stride {e.stride()} != {t.stride()}"
        assert e.storage_offset() == t.storage_offset()
        assert e.is_contiguous() == t.is_contiguous()
        shares_t = _root(t) is _root(xt)
        assert (_root(e) is _root(xe)) == shares_t
        if shares_t and t.numel() > 0 and xt.numel() > 0:
            assert e.data_ptr() - xe.data_ptr() == t.data_ptr() - xt.data_ptr()


def check_results(re, rt, xe, xt):
    if isinstance(rt, (tuple, list)):
        assert isinstance(re, tuple) == isinstance(rt, tuple)
        assert len(re) == len(rt)
        for a, b in zip(re, rt):
            check_result(a, b, xe, xt)
    else:
        check_result(re, rt, xe, xt)


def one_value(dtype_name):
    return True if dtype_name == "bool" else 1


def check_write_through(re, rt, xe, xt, dtype_name):
    """Writing into each view shows in the input the same way in both
    libraries, and bumps the shared version counter alike."""
    outs_e = re if isinstance(re, (tuple, list)) else [re]
    outs_t = rt if isinstance(rt, (tuple, list)) else [rt]
    for a, b in zip(outs_e, outs_t):
        if not b._is_view() or b.numel() == 0:
            continue
        with torch.no_grad():
            b.fill_(one_value(dtype_name))
        with ember.no_grad():
            a.fill_(one_value(dtype_name))
        assert_same(xe.detach(), xt.detach())
        assert xe._version == xt._version, f"version {xe._version} != {xt._version}"


def weights_like(lib, t):
    """Deterministic float64 weights of t's shape (so gradients differ per element)."""
    n = t.numel()
    w = lib.tensor([((i * 7) % 5 - 2) / 2 for i in range(n)], dtype=lib.float64)
    return w.reshape(tuple(t.shape))


def loss_of(lib, r):
    outs = r if isinstance(r, (tuple, list)) else [r]
    total = None
    for o in outs:
        term = (o * weights_like(lib, o)).sum()
        total = term if total is None else total + term
    return total


def dtype_pair(name):
    return dtypes(name)
