"""optim.swap_in_optimizer_params_and_state and nn.utils.rnn.copy_method_params
against PyTorch."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import ember


def run(lib):
    lib.manual_seed(0)
    w = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
    b = lib.tensor([0.1, -0.2], requires_grad=True)
    opt = lib.optim.Adam([w, b], lr=0.1)
    w.grad, b.grad = lib.ones_like(w) * 0.5, lib.ones_like(b) * -0.25
    opt.step()
    osd = copy.deepcopy(opt.state_dict())
    osd["param_groups"][0]["lr"] = 0.5
    params = {"w": w.detach().clone().requires_grad_(), "b": b.detach().clone().requires_grad_()}
    for p in params.values():
        p.grad = lib.ones_like(p)
    out = {}
    with lib.optim.swap_in_optimizer_params_and_state(opt, params, osd):
        out["inside"] = (
            opt.param_groups[0]["lr"],
            [p is q for p, q in zip(opt.param_groups[0]["params"], params.values())],
        )
        opt.step()
    out["after_lr"] = opt.param_groups[0]["lr"]
    out["live_params"] = [p is q for p, q in zip(opt.param_groups[0]["params"], (w, b))]
    out["swapped"] = [t.tolist() for t in params.values()]
    out["live"] = [w.tolist(), b.tolist()]
    out["swap_state"] = (float(osd["state"][0]["step"]), osd["state"][0]["exp_avg"].tolist())
    out["live_step"] = float(opt.state[w]["step"])
    errors = []
    for bad in (
        {"state": [], "param_groups": []},
        {"state": {}, "param_groups": [{}]},
        {"state": {5: {}}, "param_groups": copy.deepcopy(opt.state_dict()["param_groups"])},
        "not a dict",
    ):
        with pytest.raises(RuntimeError) as info:
            with lib.optim.swap_in_optimizer_params_and_state(opt, params, bad):
                pass
        errors.append(str(info.value))
    out["errors"] = errors
    return out


def flat(x):
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in flat(item)]
    return [x]


def test_swap_in_as_torch():
    got, want = run(ember), run(torch)
    for key in want:
        if key in ("swapped", "live", "swap_state"):
            np.testing.assert_allclose(flat(got[key]), flat(want[key]), rtol=1e-6)
        else:
            assert got[key] == want[key], key


def test_swap_in_needs_initialised_state():
    w = ember.ones(2, requires_grad=True)
    opt = ember.optim.SGD([w], lr=0.1)
    with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
        with ember.optim.swap_in_optimizer_params_and_state(opt, {"w": w}, opt.state_dict()):
            pass


def test_copy_method_params_keeps_the_method():
    decorate = ember.nn.utils.rnn.copy_method_params(ember.nn.Linear.forward)
    assert decorate(len) is len
