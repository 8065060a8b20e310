"""Adafactor against torch.optim.Adafactor: parameters after every step
(factored row/column moments for matrices and batches of matrices, a full
moment for vectors), state, argument errors."""

from __future__ import annotations

import pytest
from conftest import torch

import ember

# Ember's rsqrt and norm are correctly rounded / summed in another order than
# PyTorch's vector kernels: parameters agree to about one float32 ulp.
RTOL, ATOL = 2e-6, 1e-7


def _params():
    g = torch.Generator().manual_seed(0)
    ts = [torch.randn(s, generator=g).requires_grad_() for s in [(4, 3), (5,), (2, 3, 4)]]
    es = [ember.tensor(t.detach().numpy()).requires_grad_() for t in ts]
    return es, ts


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"lr": 0.05, "weight_decay": 0.1, "maximize": True},
        {"eps": (1e-30, 1e-3), "d": 1.5, "beta2_decay": -0.5},
        {"lr": 0.02, "foreach": False},
    ],
)
def test_same_parameters(kw):
    es, ts = _params()
    oe, ot = ember.optim.Adafactor(es, **kw), torch.optim.Adafactor(ts, **kw)
    for s in range(12):
        g = torch.Generator().manual_seed(100 + s)
        for pe, pt in zip(es, ts):
            grad = torch.randn(pt.shape, generator=g)
            pt.grad = grad.clone()
            pe.grad = ember.tensor(grad.numpy())
        oe.step()
        ot.step()
        for pe, pt in zip(es, ts):
            torch.testing.assert_close(torch.tensor(pe.detach().numpy()), pt.detach(), rtol=RTOL, atol=ATOL)
    for pe, pt in zip(es, ts):
        se, st = oe.state[pe], ot.state[pt]
        assert sorted(se) == sorted(st)
        for k in st:
            got = torch.tensor(se[k].numpy()).reshape(st[k].shape)
            torch.testing.assert_close(got, st[k], rtol=1e-5, atol=1e-7, msg=k)


@pytest.mark.parametrize(
    "kw",
    [
        {"lr": -1.0},
        {"beta2_decay": 0.5},
        {"eps": (-1.0, 1e-3)},
        {"eps": (None, -1.0)},
        {"d": 0.5},
        {"weight_decay": -0.1},
    ],
)
def test_errors(kw):
    with pytest.raises(ValueError) as t:
        torch.optim.Adafactor([torch.zeros(2, requires_grad=True)], **kw)
    with pytest.raises(ValueError) as e:
        ember.optim.Adafactor([ember.zeros(2, requires_grad=True)], **kw)
    assert str(e.value) == str(t.value)


def test_defaults_and_repr():
    pe, pt = ember.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    oe, ot = ember.optim.Adafactor([pe]), torch.optim.Adafactor([pt])
    assert oe.defaults == ot.defaults
    assert repr(oe) == repr(ot)
