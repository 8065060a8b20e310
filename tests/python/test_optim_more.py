"""Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop and LBFGS against torch.optim:
bit-identical parameters after every step (the same single-tensor update
arithmetic), state and state_dict contents, state dicts exchanged between the
libraries, param groups, argument errors and repr."""

from __future__ import annotations

import io

import numpy as np
import pytest
from _nn_helpers import from_torch
from conftest import torch

import ember


def _bits_equal(e, t):
    got = torch.tensor(e.detach().tolist(), dtype=t.dtype).reshape(t.shape)
    assert torch.equal(got, t.detach()), f"max diff {(got - t.detach()).abs().max()}"


@pytest.fixture
def exact_torch_sqrt(monkeypatch):
    """PyTorch's CPU sqrt is MKL's, not correctly rounded; Ember's is (see
    Note [Optimiser arithmetic]). With torch's made exact the updates agree bit for bit."""

    def sqrt(self):
        return torch.from_numpy(np.sqrt(self.detach().numpy()))

    def sqrt_(self):
        self.copy_(sqrt(self))
        return self

    monkeypatch.setattr(torch.Tensor, "sqrt", sqrt)
    monkeypatch.setattr(torch.Tensor, "sqrt_", sqrt_)


def _params(dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    ts = [torch.randn(4, 3, generator=g, dtype=torch.float64).to(dtype).requires_grad_(True),
          torch.randn(5, generator=g, dtype=torch.float64).to(dtype).requires_grad_(True)]
    es = [from_torch(t.detach()).requires_grad_(True) for t in ts]
    return es, ts


def _grads(step, params_t, dtype):
    g = torch.Generator().manual_seed(100 + step)
    # A drift keeps some gradient signs steady between steps (Rprop's step sizes grow).
    return [(torch.randn(p.shape, generator=g, dtype=torch.float64) + 0.5).to(dtype) for p in params_t]


def _lr(kw, lib):
    """kw with a tensor learning rate made in lib's tensor type."""
    kw = dict(kw)
    if "tensor_lr" in kw:
        kw["lr"] = lib.tensor(kw.pop("tensor_lr"))
    return kw


def _make(cls, es, ts, kw, groups=False):
    ke, kt = _lr(kw, ember), _lr(kw, torch)
    if groups:
        return (getattr(ember.optim, cls)([{"params": [es[0]]}, {"params": [es[1]], "lr": 0.05}], **ke),
                getattr(torch.optim, cls)([{"params": [ts[0]]}, {"params": [ts[1]], "lr": 0.05}], **kt))
    return getattr(ember.optim, cls)(es, **ke), getattr(torch.optim, cls)(ts, **kt)


def _feed(s, es, ts, dtype):
    for pe, pt, g in zip(es, ts, _grads(s, ts, dtype)):
        pt.grad = g.clone()
        pe.grad = from_torch(g)


def _run(cls, kw, dtype=torch.float32, steps=20, groups=False):
    es, ts = _params(dtype)
    oe, ot = _make(cls, es, ts, kw, groups)
    for s in range(steps):
        _feed(s, es, ts, dtype)
        oe.step()
        ot.step()
        for pe, pt in zip(es, ts):
            _bits_equal(pe, pt)
    return oe, ot, es, ts


def _state_equal(se, st):
    assert list(se["state"].keys()) == list(st["state"].keys())
    for k in st["state"]:
        assert list(se["state"][k].keys()) == list(st["state"][k].keys())
        for name, vt in st["state"][k].items():
            ve = se["state"][k][name]
            if isinstance(vt, torch.Tensor):
                assert str(ve.dtype) == str(vt.dtype), name
                _bits_equal(ve, vt)
            else:
                assert ve == vt, name


CONFIGS = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.1}),
    ("Adadelta", {"maximize": True, "foreach": False}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.05, "eps": 1e-3, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.02, "maximize": True, "eps": 1e-6}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.02, "betas": (0.9, 0.5), "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 5, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05, "t0": 0, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"lr": 0.001, "maximize": True}),
]

TENSOR_LR = [
    ("Adadelta", {"tensor_lr": 0.5}),
    ("Adamax", {"tensor_lr": 0.01}),
    ("NAdam", {"tensor_lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"tensor_lr": 0.01, "weight_decay": 0.1}),
    ("Rprop", {"tensor_lr": 0.05}),
    ("ASGD", {"tensor_lr": 0.05, "t0": 2}),
]


@pytest.mark.parametrize("cls,kw", CONFIGS, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_updates_bit_identical(cls, kw, dtype, exact_torch_sqrt):
    oe, ot, _, _ = _run(cls, kw, dtype)
    se, st = oe.state_dict(), ot.state_dict()
    assert se["param_groups"] == st["param_groups"]
    _state_equal(se, st)


@pytest.mark.parametrize("cls,kw", TENSOR_LR, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_tensor_lr(cls, kw, dtype, exact_torch_sqrt):
    _run(cls, kw, dtype)


@pytest.mark.parametrize("cls", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_updates_close_with_mkl_sqrt(cls):
    """Against PyTorch's own (MKL) sqrt: the same values to a few ulps."""
    es, ts = _params(torch.float32)
    oe, ot = _make(cls, es, ts, {})
    for s in range(10):
        _feed(s, es, ts, torch.float32)
        oe.step()
        ot.step()
    for pe, pt in zip(es, ts):
        torch.testing.assert_close(torch.tensor(pe.detach().tolist()), pt.detach(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_param_groups_and_missing_grads(cls, exact_torch_sqrt):
    oe, ot, es, ts = _run(cls, {}, groups=True, steps=5)
    assert oe.state_dict()["param_groups"] == ot.state_dict()["param_groups"]
    # A parameter without a gradient is left alone, and gets no state.
    es2, ts2 = _params(torch.float32, seed=3)
    oe, ot = _make(cls, es2, ts2, {})
    for s in range(4):
        es2[0].grad, ts2[0].grad = from_torch(_grads(s, ts2, torch.float32)[0]), _grads(s, ts2, torch.float32)[0]
        oe.step()
        ot.step()
        for pe, pt in zip(es2, ts2):
            _bits_equal(pe, pt)
    _state_equal(oe.state_dict(), ot.state_dict())


@pytest.mark.parametrize("cls,kw", [
    ("Adadelta", {"weight_decay": 0.01}), ("Adamax", {"lr": 0.01}), ("NAdam", {"decoupled_weight_decay": True,
                                                                            "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01}), ("ASGD", {"t0": 3, "lr": 0.1}), ("Rprop", {}),
])
def test_model_training_matches(cls, kw, exact_torch_sqrt):
    """A small float64 model trained for 20 steps in both libraries from the same weights."""
    torch.manual_seed(0)
    mt = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    d = ember.float64
    me = ember.nn.Sequential(ember.nn.Linear(4, 8, dtype=d), ember.nn.Tanh(), ember.nn.Linear(8, 3, dtype=d))
    with ember.no_grad():
        for pe, pt in zip(me.parameters(), mt.parameters()):
            pe.copy_(from_torch(pt.detach()))
    oe, ot = getattr(ember.optim, cls)(me.parameters(), **kw), getattr(torch.optim, cls)(mt.parameters(), **kw)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 4, generator=g, dtype=torch.float64), torch.randn(16, 3, generator=g, dtype=torch.float64)
    xe, ye = from_torch(x), from_torch(y)
    for _ in range(20):
        oe.zero_grad()
        ot.zero_grad()
        le = ((me(xe) - ye) ** 2).sum()
        lt = ((mt(x) - y) ** 2).sum()
        le.backward()
        lt.backward()
        # Gradients of a matmul may differ in the last bit (summation order); give both the same.
        for pe, pt in zip(me.parameters(), mt.parameters()):
            pe.grad = from_torch(pt.grad)
        oe.step()
        ot.step()
        for pe, pt in zip(me.parameters(), mt.parameters()):
            _bits_equal(pe, pt)


@pytest.mark.parametrize("cls,kw", [
    ("Adadelta", {"weight_decay": 0.1}), ("Adamax", {}), ("NAdam", {"weight_decay": 0.1}), ("RAdam", {}),
    ("ASGD", {"t0": 2}), ("Rprop", {}),
])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_load_state_dict_resumes_identically(cls, kw, dtype, exact_torch_sqrt):
    """Both reloaded, as loading casts floating state other than "step" (NAdam's float32
    mu_product, ASGD's eta and mu) to the parameter's dtype."""
    oe, ot, es, ts = _run(cls, kw, dtype=dtype, steps=8)
    es2 = [from_torch(p.detach()).requires_grad_(True) for p in ts]
    ts2 = [p.detach().clone().requires_grad_(True) for p in ts]
    oe2, ot2 = getattr(ember.optim, cls)(es2, **kw), getattr(torch.optim, cls)(ts2, **kw)
    oe2.load_state_dict(oe.state_dict())
    ot2.load_state_dict(ot.state_dict())
    _state_equal(oe2.state_dict(), ot2.state_dict())
    for s in range(8, 16):
        _feed(s, es2, ts2, dtype)
        oe2.step()
        ot2.step()
        for pe, pt in zip(es2, ts2):
            _bits_equal(pe, pt)
    _state_equal(oe2.state_dict(), ot2.state_dict())


@pytest.mark.parametrize("cls,kw", [
    ("Adadelta", {}), ("Adamax", {"weight_decay": 0.1}), ("NAdam", {"decoupled_weight_decay": True}),
    ("RAdam", {"weight_decay": 0.1}), ("ASGD", {"t0": 2}), ("Rprop", {}),
])
def test_state_dict_exchanged_between_libraries(cls, kw, exact_torch_sqrt):
    """A state dict saved by one library (torch.save / ember.save) loads in the other, and the
    optimisers continue in step."""
    oe, ot, es, ts = _run(cls, kw, steps=6)
    buf = io.BytesIO()
    torch.save(ot.state_dict(), buf)
    buf.seek(0)
    es2 = [from_torch(p.detach()).requires_grad_(True) for p in ts]
    oe2 = getattr(ember.optim, cls)(es2, **kw)
    oe2.load_state_dict(ember.load(buf))
    _state_equal(oe2.state_dict(), ot.state_dict())
    buf = io.BytesIO()
    ember.save(oe.state_dict(), buf)
    buf.seek(0)
    ts2 = [p.detach().clone().requires_grad_(True) for p in ts]
    ot2 = getattr(torch.optim, cls)(ts2, **kw)
    ot2.load_state_dict(torch.load(buf))
    for s in range(6, 12):
        _feed(s, es2, ts2, torch.float32)
        _feed(s, es, ts, torch.float32)
        for opt in (oe2, ot2, ot):
            opt.step()
        for pe, pt, pt2 in zip(es2, ts, ts2):
            _bits_equal(pe, pt)
            assert torch.equal(pt, pt2)


@pytest.mark.parametrize("cls,kw", [
    ("Adadelta", {"lr": -1.0}), ("Adadelta", {"rho": 1.5}), ("Adadelta", {"eps": -1}),
    ("Adadelta", {"weight_decay": -1}),
    ("Adamax", {"lr": -1.0}), ("Adamax", {"eps": -1}), ("Adamax", {"betas": (1.0, 0.9)}),
    ("Adamax", {"betas": (0.9, -0.1)}), ("Adamax", {"weight_decay": -0.5}),
    ("NAdam", {"lr": -1.0}), ("NAdam", {"betas": (0.9, 1.0)}), ("NAdam", {"momentum_decay": -1}),
    ("NAdam", {"weight_decay": -1}),
    ("RAdam", {"lr": -0.1}), ("RAdam", {"eps": -1e-8}), ("RAdam", {"betas": (-0.1, 0.9)}),
    ("ASGD", {"lr": -1.0}), ("ASGD", {"weight_decay": -1}),
    ("Rprop", {"lr": -1.0}), ("Rprop", {"etas": (1.5, 1.2)}), ("Rprop", {"etas": (0.5, 0.9)}),
])
def test_argument_errors(cls, kw):
    es, ts = _params(torch.float32)
    with pytest.raises(ValueError) as et:
        getattr(torch.optim, cls)(ts, **kw)
    with pytest.raises(ValueError) as ee:
        getattr(ember.optim, cls)(es, **kw)
    assert str(ee.value) == str(et.value)


@pytest.mark.parametrize("cls", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_tensor_lr_must_have_one_element(cls):
    es, ts = _params(torch.float32)
    with pytest.raises(ValueError) as et:
        getattr(torch.optim, cls)(ts, lr=torch.tensor([0.1, 0.2]))
    with pytest.raises(ValueError) as ee:
        getattr(ember.optim, cls)(es, lr=ember.tensor([0.1, 0.2]))
    assert str(ee.value) == str(et.value)


@pytest.mark.parametrize("cls", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_capturable_on_cpu(cls):
    """capturable=True is accepted at construction and fails at the first step, as PyTorch on CPU tensors."""
    es, ts = _params(torch.float32)
    oe, ot = _make(cls, es, ts, {"capturable": True})
    _feed(0, es, ts, torch.float32)
    with pytest.raises(AssertionError) as et:
        ot.step()
    with pytest.raises(AssertionError) as ee:
        oe.step()
    assert str(ee.value) == str(et.value)


@pytest.mark.parametrize("cls", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_differentiable_steps_with_grad_enabled(cls):
    """differentiable=True runs the step with grad enabled: an in-place update of a leaf that
    requires grad fails, as in PyTorch."""
    _, ts = _params(torch.float32)
    es = [ember.tensor(t.detach().tolist(), requires_grad=True) for t in ts]  # leaves, not views (as ts)
    oe, ot = _make(cls, es, ts, {"differentiable": True})
    _feed(0, es, ts, torch.float32)
    with pytest.raises(RuntimeError) as et:
        ot.step()
    with pytest.raises(RuntimeError) as ee:
        oe.step()
    assert str(ee.value) == str(et.value)


@pytest.mark.parametrize("cls", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_repr_defaults_and_module_paths(cls):
    es, ts = _params(torch.float32)
    oe, ot = getattr(ember.optim, cls)(es), getattr(torch.optim, cls)(ts)
    assert oe.defaults == ot.defaults
    assert repr(oe) == repr(ot)
    module = type(ot).__module__.rsplit(".", 1)[1]
    assert getattr(getattr(ember.optim, module), cls) is getattr(ember.optim, cls)
    assert cls in ember.optim.__all__


@pytest.mark.parametrize("cls", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_zero_grad_and_closure(cls):
    es, _ = _params(torch.float32)
    oe = getattr(ember.optim, cls)(es)
    for p in es:
        p.grad = ember.ones(p.shape)
    oe.zero_grad(set_to_none=False)
    assert all(p.grad is not None and p.grad.abs().sum().item() == 0 for p in es)
    oe.zero_grad()
    assert all(p.grad is None for p in es)

    def closure():
        oe.zero_grad()
        loss = (es[0] * es[0]).sum()
        loss.backward()
        return loss

    assert isinstance(oe.step(closure), ember.Tensor)
