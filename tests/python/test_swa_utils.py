"""optim.swa_utils against torch: AveragedModel (SWA, EMA, per-tensor and
list averaging functions, buffers), update_bn and the SWALR schedule."""

from __future__ import annotations

import warnings

import pytest
from conftest import torch
from test_lr_scheduler import _opts

import ember


def models(seed=0):
    torch.manual_seed(seed)
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    e = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4), ember.nn.Linear(4, 2))
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return e, t


def assert_state_equal(e, t, rtol=0.0, atol=0.0):
    te, tt = e.state_dict(), t.state_dict()
    assert list(te) == list(tt)
    for k in tt:
        got = torch.tensor(te[k].numpy()).reshape(tt[k].shape)
        torch.testing.assert_close(got, tt[k], rtol=rtol, atol=atol, msg=k)


def perturb(e, t, i):
    g = torch.Generator().manual_seed(100 + i)
    with torch.no_grad(), ember.no_grad():
        for (_, pe), (_, pt) in zip(e.named_parameters(), t.named_parameters()):
            step = torch.randn(pt.shape, generator=g)
            pt.add_(step)
            pe.add_(ember.tensor(step.numpy()))
    x = torch.randn(5, 3, generator=g)
    e(ember.tensor(x.numpy()))
    t(x)


AVERAGING = {
    "swa": lambda m: {},
    "ema-avg_fn": lambda m: {"avg_fn": m.optim.swa_utils.get_ema_avg_fn(0.9)},
    "ema-multi": lambda m: {"multi_avg_fn": m.optim.swa_utils.get_ema_multi_avg_fn(0.8)},
    "swa-multi": lambda m: {"multi_avg_fn": m.optim.swa_utils.get_swa_multi_avg_fn()},
    "swa-avg_fn": lambda m: {"avg_fn": m.optim.swa_utils.get_swa_avg_fn()},
}


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", sorted(AVERAGING))
def test_averaged_model(kind, use_buffers):
    e, t = models()
    ae = ember.optim.swa_utils.AveragedModel(e, use_buffers=use_buffers, **AVERAGING[kind](ember))
    at = torch.optim.swa_utils.AveragedModel(t, use_buffers=use_buffers, **AVERAGING[kind](torch))
    for i in range(4):
        perturb(e, t, i)
        try:
            at.update_parameters(t)
        except RuntimeError as err:  # integer buffers averaged by addcdiv: torch refuses, so must Ember
            with pytest.raises(RuntimeError) as mine:
                ae.update_parameters(e)
            assert str(mine.value) == str(err)
            return
        ae.update_parameters(e)
        assert_state_equal(ae, at, rtol=1e-6, atol=1e-7)
    x = torch.randn(2, 3)
    ae.eval()
    at.eval()
    got = ae(ember.tensor(x.numpy()))
    torch.testing.assert_close(torch.tensor(got.detach().numpy()), at(x).detach(), rtol=1e-5, atol=1e-6)


def test_averaged_model_errors():
    e, t = models()
    f = ember.optim.swa_utils
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        f.AveragedModel(e, avg_fn=f.get_swa_avg_fn(), multi_avg_fn=f.get_swa_multi_avg_fn())
    for name in ("get_ema_avg_fn", "get_ema_multi_avg_fn"):
        with pytest.raises(ValueError) as te:
            getattr(torch.optim.swa_utils, name)(1.5)
        with pytest.raises(ValueError) as ee:
            getattr(f, name)(1.5)
        assert str(ee.value) == str(te.value)


def test_update_bn():
    e, t = models(1)
    g = torch.Generator().manual_seed(3)
    batches = [torch.randn(6, 3, generator=g) * 2 + 1 for _ in range(3)]
    ember.optim.swa_utils.update_bn([(ember.tensor(b.numpy()), 0) for b in batches], e)
    torch.optim.swa_utils.update_bn([(b, 0) for b in batches], t)
    assert_state_equal(e, t, rtol=1e-5, atol=1e-6)
    assert e.training == t.training
    assert e[1].momentum == t[1].momentum


@pytest.mark.parametrize(
    "kw",
    [
        {"swa_lr": 0.05},
        {"swa_lr": [0.01, 0.02], "anneal_epochs": 3, "anneal_strategy": "linear"},
        {"swa_lr": 0.03, "anneal_epochs": 0},
    ],
)
def test_swalr(kw):
    oe, ot = _opts("SGD", 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        se = ember.optim.swa_utils.SWALR(oe, **kw)
        st = torch.optim.swa_utils.SWALR(ot, **kw)
        assert se.get_last_lr() == st.get_last_lr()
        for _ in range(15):
            oe.step()
            ot.step()
            se.step()
            st.step()
            assert se.get_last_lr() == st.get_last_lr()
    de, dt = se.state_dict(), st.state_dict()
    assert sorted(de) == sorted(dt)


@pytest.mark.parametrize(
    "kw", [{"swa_lr": 0.1, "anneal_strategy": "foo"}, {"swa_lr": 0.1, "anneal_epochs": -1}, {"swa_lr": [0.1]}]
)
def test_swalr_errors(kw):
    oe, ot = _opts("SGD", 2)
    with pytest.raises(ValueError) as te:
        torch.optim.swa_utils.SWALR(ot, **kw)
    with pytest.raises(ValueError) as ee:
        ember.optim.swa_utils.SWALR(oe, **kw)
    assert str(ee.value) == str(te.value)
