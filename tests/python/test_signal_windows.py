"""torch.signal.windows against PyTorch: values (to a few float32 ulps: sin, cos, exp and i0 round their last
bit differently), dtypes, periodic forms, errors."""

from __future__ import annotations

import pytest
from conftest import torch

import ember

WINDOWS = {
    "bartlett": {},
    "blackman": {},
    "cosine": {},
    "exponential": {"tau": 2.5},
    "gaussian": {"std": 1.7},
    "general_cosine": {"a": [0.46, 0.23, 0.31]},
    "general_hamming": {"alpha": 0.6},
    "hamming": {},
    "hann": {},
    "kaiser": {"beta": 8.0},
    "nuttall": {},
}


def _same(e, t):
    assert str(e.dtype).replace("ember", "torch") == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    got = torch.tensor(e.tolist(), dtype=t.dtype)
    tol = 1e-13 if t.dtype == torch.float64 else 4e-7
    torch.testing.assert_close(got, t, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(WINDOWS))
@pytest.mark.parametrize("m", [0, 1, 2, 7, 10])
@pytest.mark.parametrize("sym", [True, False])
def test_window_values(name, m, sym):
    kw = WINDOWS[name]
    e = getattr(ember.signal.windows, name)(m, sym=sym, **kw)
    t = getattr(torch.signal.windows, name)(m, sym=sym, **kw)
    _same(e, t)


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_window_float64_and_grad(name):
    kw = WINDOWS[name]
    e = getattr(ember.signal.windows, name)(9, dtype=ember.float64, requires_grad=True, **kw)
    t = getattr(torch.signal.windows, name)(9, dtype=torch.float64, requires_grad=True, **kw)
    _same(e.detach(), t.detach())
    assert e.requires_grad == t.requires_grad


def test_exponential_center():
    e = ember.signal.windows.exponential(8, center=2.0, sym=False)
    t = torch.signal.windows.exponential(8, center=2.0, sym=False)
    _same(e, t)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.signal.windows.hann(-1),
        lambda m: m.signal.windows.hann(4, dtype=m.int64),
        lambda m: m.signal.windows.gaussian(4, std=0),
        lambda m: m.signal.windows.exponential(4, tau=-1),
        lambda m: m.signal.windows.exponential(4, center=1.0),
        lambda m: m.signal.windows.kaiser(4, beta=-1.0),
        lambda m: m.signal.windows.general_cosine(4, a=[]),
        lambda m: m.signal.windows.general_cosine(4, a=3),
    ],
)
def test_window_errors(call):
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(type(te.value)) as ee:
        call(ember)
    assert str(ee.value) == str(te.value)


def test_namespaces():
    assert ember.windows is ember.signal.windows
    assert sorted(ember.signal.windows.__all__) == sorted(torch.signal.windows.__all__)
