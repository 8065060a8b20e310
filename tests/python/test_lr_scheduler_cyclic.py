"""CyclicLR, CosineAnnealingWarmRestarts and ChainedScheduler against
torch.optim.lr_scheduler: the same float learning rates (and momenta) at
every step, state_dict, errors."""

from __future__ import annotations

import warnings

import pytest
from conftest import torch
from test_lr_scheduler import ES, TS, _lockstep, _opts

import ember  # noqa: F401

SCHEDULES = {
    "CyclicLR": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=4),
    "CyclicLR-triangular2": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=2, mode="triangular2"),
    "CyclicLR-exp_range": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.97),
    "CyclicLR-scale_fn": lambda m, o: m.CyclicLR(
        o, 0.01, 0.1, step_size_up=2, scale_fn=lambda x: 0.9**x, scale_mode="iterations", cycle_momentum=False
    ),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=4, eta_min=0.001),
    "CosineAnnealingWarmRestarts-mult": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=3), m.ExponentialLR(o, gamma=0.9)]
    ),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_same_learning_rates(name):
    se, st, oe, ot = _lockstep(SCHEDULES[name], steps=30, cls="SGD", momentum=0.9)
    assert [g["momentum"] for g in oe.param_groups] == [g["momentum"] for g in ot.param_groups]


def test_cyclic_with_adam_betas():
    _, _, oe, ot = _lockstep(lambda m, o: m.CyclicLR(o, 0.001, 0.01, step_size_up=3), steps=12, cls="Adam")
    assert [g["betas"] for g in oe.param_groups] == [g["betas"] for g in ot.param_groups]


@pytest.mark.parametrize("epochs", [[0, 1, 5, 2, 9], [3, 7, 15, 1]])
def test_warm_restarts_with_epochs(epochs):
    oe, ot = _opts("SGD", 2)
    se = ES.CosineAnnealingWarmRestarts(oe, T_0=3, T_mult=2)
    st = TS.CosineAnnealingWarmRestarts(ot, T_0=3, T_mult=2)
    for e in epochs:
        se.step(e)
        st.step(e)
        assert se.get_last_lr() == st.get_last_lr()
        assert (se.T_cur, se.T_i) == (st.T_cur, st.T_i)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_state_dict(name):
    se, st, _, _ = _lockstep(SCHEDULES[name], steps=5, cls="SGD", momentum=0.9)
    de, dt = se.state_dict(), st.state_dict()
    assert sorted(de) == sorted(dt)
    for k in dt:
        if k != "_schedulers":
            assert de[k] == dt[k], k
    oe, _ = _opts("SGD", 2, momentum=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        se2 = SCHEDULES[name](ES, oe)
        se2.load_state_dict(de)
    assert se2.get_last_lr() == se.get_last_lr()


ERRORS = [
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="a"),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    lambda m, o: m.CyclicLR(o, 0.1, 1.0, mode="foo"),
    lambda m, o: m.CyclicLR(o, [0.1], 1.0),
    lambda m, o: m.ChainedScheduler([]),
    lambda m, o: m.ChainedScheduler([m.ReduceLROnPlateau(o)]),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    oe, ot = _opts("SGD", 2, momentum=0.9)
    with pytest.raises(Exception) as t:
        ERRORS[i](TS, ot)
    with pytest.raises(t.type) as e:
        ERRORS[i](ES, oe)
    assert str(e.value) == str(t.value)


def test_cyclic_needs_momentum():
    pe, pt = ember.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    with pytest.raises(ValueError) as t:
        TS.CyclicLR(torch.optim.Adagrad([pt]), 0.1, 1.0)
    with pytest.raises(ValueError) as e:
        ES.CyclicLR(ember.optim.Adagrad([pe]), 0.1, 1.0)
    assert str(e.value) == str(t.value)
