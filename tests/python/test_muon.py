"""Muon against torch.optim.Muon: parameters and momentum buffers after every
step (bfloat16 Newton-Schulz orthogonalisation of the update), argument errors."""

from __future__ import annotations

import pytest
from conftest import torch

import ember


def _params():
    g = torch.Generator().manual_seed(0)
    ts = [torch.randn(s, generator=g).requires_grad_() for s in [(4, 3), (3, 5), (6, 6)]]
    es = [ember.tensor(t.detach().numpy()).requires_grad_() for t in ts]
    return es, ts


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"lr": 0.02, "nesterov": False, "adjust_lr_fn": "match_rms_adamw"},
        {"momentum": 0.8, "weight_decay": 0.0, "ns_steps": 3, "adjust_lr_fn": "original"},
        {"ns_coefficients": (2.0, -1.5, 0.5), "eps": 1e-5},
    ],
)
def test_same_parameters(kw):
    es, ts = _params()
    oe, ot = ember.optim.Muon(es, **kw), torch.optim.Muon(ts, **kw)
    for s in range(8):
        g = torch.Generator().manual_seed(100 + s)
        for pe, pt in zip(es, ts):
            grad = torch.randn(pt.shape, generator=g)
            pt.grad = grad.clone()
            pe.grad = ember.tensor(grad.numpy())
        oe.step()
        ot.step()
        for pe, pt in zip(es, ts):
            torch.testing.assert_close(torch.tensor(pe.detach().numpy()), pt.detach(), rtol=1e-6, atol=1e-7)
    for pe, pt in zip(es, ts):
        buf_e, buf_t = oe.state[pe]["momentum_buffer"], ot.state[pt]["momentum_buffer"]
        torch.testing.assert_close(torch.tensor(buf_e.numpy()), buf_t, rtol=0, atol=0)


@pytest.mark.parametrize(
    "kw,shape",
    [
        ({"lr": -1.0}, (2, 2)),
        ({"momentum": -0.5}, (2, 2)),
        ({"weight_decay": -1.0}, (2, 2)),
        ({"adjust_lr_fn": "foo"}, (2, 2)),
        ({}, (3,)),
        ({}, (2, 2, 2)),
    ],
)
def test_errors(kw, shape):
    with pytest.raises(ValueError) as t:
        torch.optim.Muon([torch.zeros(shape, requires_grad=True)], **kw)
    with pytest.raises(ValueError) as e:
        ember.optim.Muon([ember.zeros(shape, requires_grad=True)], **kw)
    assert str(e.value) == str(t.value)


def test_defaults_and_repr():
    pe, pt = ember.zeros(2, 2, requires_grad=True), torch.zeros(2, 2, requires_grad=True)
    oe, ot = ember.optim.Muon([pe]), torch.optim.Muon([pt])
    assert oe.defaults == ot.defaults
    assert repr(oe) == repr(ot)
