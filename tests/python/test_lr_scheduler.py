"""Learning-rate schedulers against torch.optim.lr_scheduler: the same float
learning rates at every step, get_last_lr, state_dict, errors."""

from __future__ import annotations

import math
import warnings

import pytest
from conftest import torch

import ember

ES, TS = ember.optim.lr_scheduler, torch.optim.lr_scheduler


def _opts(cls="SGD", groups=1, **kw):
    pe = [ember.zeros(2, requires_grad=True) for _ in range(groups)]
    pt = [torch.zeros(2, requires_grad=True) for _ in range(groups)]
    ge = [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(pe)]
    gt = [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(pt)]
    return getattr(ember.optim, cls)(ge, **kw), getattr(torch.optim, cls)(gt, **kw)


def _lockstep(make, steps=25, cls="SGD", groups=2, metric=None, **okw):
    oe, ot = _opts(cls, groups, **okw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        se, st = make(ES, oe), make(TS, ot)
        assert se.get_last_lr() == st.get_last_lr()
        for i in range(steps):
            oe.step()
            ot.step()
            if metric is None:
                se.step()
                st.step()
            else:
                se.step(metric(i))
                st.step(metric(i))
            assert se.get_last_lr() == st.get_last_lr(), i
            assert [g["lr"] for g in oe.param_groups] == [g["lr"] for g in ot.param_groups]
    return se, st, oe, ot


SCHEDULES = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=3, gamma=0.7),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[2, 5, 5, 11], gamma=0.3),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "LambdaLR": lambda m, o: m.LambdaLR(o, lambda e: 0.95**e),
    "LambdaLR-list": lambda m, o: m.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.9**e]),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.97),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=6),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=4),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=10, power=2.0),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=26),
    "OneCycleLR-linear-3phase": lambda m, o: m.OneCycleLR(o, max_lr=0.8, total_steps=30, anneal_strategy="linear",
                                                          three_phase=True),
    "SequentialLR": lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=4), m.ExponentialLR(o, gamma=0.9),
            m.CosineAnnealingLR(o, T_max=5)], milestones=[4, 12]),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_same_learning_rates(name):
    se, st, oe, ot = _lockstep(SCHEDULES[name], cls="SGD", momentum=0.9)
    if name.startswith("OneCycleLR"):
        assert [g["momentum"] for g in oe.param_groups] == [g["momentum"] for g in ot.param_groups]


def test_one_cycle_with_adam_betas():
    se, st, oe, ot = _lockstep(lambda m, o: m.OneCycleLR(o, max_lr=0.3, epochs=2, steps_per_epoch=10), steps=19,
                               cls="Adam")
    assert [g["betas"] for g in oe.param_groups] == [g["betas"] for g in ot.param_groups]


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
                                  "SequentialLR", "OneCycleLR", "LambdaLR"])
def test_state_dict(name):
    se, st, _, _ = _lockstep(SCHEDULES[name], steps=5)
    de, dt = se.state_dict(), st.state_dict()
    assert sorted(de) == sorted(dt)
    for k in dt:
        if k in ("_schedulers", "lr_lambdas", "_schedule_phases"):
            continue
        assert de[k] == dt[k], k
    # load into a fresh scheduler and continue identically
    oe, _ = _opts("SGD", 2, momentum=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        se2 = SCHEDULES[name](ES, oe)
        se2.load_state_dict(de)
        assert se2.last_epoch == se.last_epoch


@pytest.mark.parametrize("mode,threshold_mode", [("min", "rel"), ("min", "abs"), ("max", "rel"), ("max", "abs")])
def test_reduce_lr_on_plateau(mode, threshold_mode):
    losses = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.89, 0.9, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97] * 2
    sign = 1 if mode == "min" else -1
    se, st, _, _ = _lockstep(
        lambda m, o: m.ReduceLROnPlateau(o, mode=mode, factor=0.5, patience=2, threshold=0.01,
                                         threshold_mode=threshold_mode, cooldown=1, min_lr=[0.01, 0.02]),
        steps=len(losses), metric=lambda i: sign * losses[i])
    de, dt = se.state_dict(), st.state_dict()
    assert sorted(de) == sorted(dt)
    assert de["best"] == dt["best"] and de["num_bad_epochs"] == dt["num_bad_epochs"]


def test_errors_and_warnings():
    oe, ot = _opts()
    for make in (lambda m, o: m.LinearLR(o, start_factor=0), lambda m, o: m.ReduceLROnPlateau(o, factor=1.5),
                 lambda m, o: m.ReduceLROnPlateau(o, mode="up"), lambda m, o: m.OneCycleLR(o, max_lr=1.0),
                 lambda m, o: m.ConstantLR(o, factor=2.0), lambda m, o: m.SequentialLR(o, [], [])):
        with pytest.raises(Exception) as et:
            make(TS, ot)
        with pytest.raises(Exception) as ee:
            make(ES, oe)
        assert type(ee.value) is type(et.value) and str(ee.value) == str(et.value)
    with pytest.raises(TypeError):
        ES.StepLR(object(), 3)
    with pytest.raises(KeyError):
        ES.StepLR(oe, 3, last_epoch=5)
    # stepping the scheduler before the optimiser warns, as torch
    oe, ot = _opts()
    se = ES.StepLR(oe, 2)
    st = TS.StepLR(ot, 2)
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        se.step()
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        st.step()
    assert [str(w.message) for w in we] == [str(w.message) for w in wt]


def test_closed_form_with_epoch_argument():
    oe, ot = _opts()
    se, st = ES.CosineAnnealingLR(oe, T_max=10), TS.CosineAnnealingLR(ot, T_max=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for e in (3, 7, 2):
            se.step(e)
            st.step(e)
            assert se.get_last_lr() == st.get_last_lr()
    assert math.isfinite(se.get_last_lr()[0])
