"""Optimisers against torch.optim: bit-identical parameters after several steps
(the same single-tensor update arithmetic), state and state_dict structure,
param groups, argument errors and repr."""

from __future__ import annotations

import pytest
from _nn_helpers import from_torch
from conftest import torch

import ember


def _bits_equal(e, t):
    got = torch.tensor(e.detach().tolist(), dtype=t.dtype).reshape(t.shape)
    assert torch.equal(got, t.detach()), f"max diff {(got - t.detach()).abs().max()}"


def _params(dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    ts = [torch.randn(4, 3, generator=g, dtype=torch.float64).to(dtype).requires_grad_(True),
          torch.randn(5, generator=g, dtype=torch.float64).to(dtype).requires_grad_(True)]
    es = [from_torch(t.detach()).requires_grad_(True) for t in ts]
    return es, ts


def _grads(step, params_t, dtype):
    g = torch.Generator().manual_seed(100 + step)
    return [torch.randn(p.shape, generator=g, dtype=torch.float64).to(dtype) for p in params_t]


def _run(cls_name, kw, dtype=torch.float32, steps=6, groups=False):
    es, ts = _params(dtype)
    if groups:
        oe = getattr(ember.optim, cls_name)([{"params": [es[0]]}, {"params": [es[1]], "lr": 0.05}], **kw)
        ot = getattr(torch.optim, cls_name)([{"params": [ts[0]]}, {"params": [ts[1]], "lr": 0.05}], **kw)
    else:
        oe, ot = getattr(ember.optim, cls_name)(es, **kw), getattr(torch.optim, cls_name)(ts, **kw)
    for s in range(steps):
        for pe, pt, g in zip(es, ts, _grads(s, ts, dtype)):
            pt.grad = g.clone()
            pe.grad = from_torch(g)
        oe.step()
        ot.step()
        for pe, pt in zip(es, ts):
            _bits_equal(pe, pt)
    return oe, ot, es, ts


CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "maximize": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.02, "weight_decay": 0.1, "amsgrad": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.05}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True, "maximize": True, "alpha": 0.9}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.5}),
    ("Adagrad", {"lr": 0.1, "maximize": True, "eps": 1e-6}),
]


@pytest.mark.parametrize("cls,kw", CONFIGS, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_updates_bit_identical(cls, kw, dtype, exact_torch_sqrt):
    oe, ot, _, _ = _run(cls, kw, dtype)
    se, st = oe.state_dict(), ot.state_dict()
    assert se["param_groups"] == st["param_groups"]
    assert list(se["state"].keys()) == list(st["state"].keys())
    for k in st["state"]:
        assert list(se["state"][k].keys()) == list(st["state"][k].keys())
        for name, vt in st["state"][k].items():
            ve = se["state"][k][name]
            assert str(ve.dtype) == str(vt.dtype), name
            _bits_equal(ve, vt)


@pytest.mark.parametrize("cls,kw", [c for c in CONFIGS if c[0] != "SGD"], ids=lambda v: str(v))
def test_updates_close_with_mkl_sqrt(cls, kw):
    """Against PyTorch's own (MKL) sqrt: the same values to a few ulps."""
    es, ts = _params(torch.float32)
    oe, ot = getattr(ember.optim, cls)(es, **kw), getattr(torch.optim, cls)(ts, **kw)
    for s in range(6):
        for pe, pt, g in zip(es, ts, _grads(s, ts, torch.float32)):
            pt.grad = g.clone()
            pe.grad = from_torch(g)
        oe.step()
        ot.step()
    for pe, pt in zip(es, ts):
        got = torch.tensor(pe.detach().tolist())
        torch.testing.assert_close(got, pt.detach(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_param_groups(cls, exact_torch_sqrt):
    kw = {"lr": 0.1, "momentum": 0.5} if cls in ("SGD", "RMSprop") else {"lr": 0.1}
    oe, ot, es, ts = _run(cls, kw, groups=True)
    assert [g["lr"] for g in oe.param_groups] == [g["lr"] for g in ot.param_groups]
    assert oe.state_dict()["param_groups"] == ot.state_dict()["param_groups"]


def test_add_param_group_and_errors(exact_torch_sqrt):
    es, ts = _params(torch.float32)
    oe, ot = ember.optim.Adam([es[0]], lr=0.1), torch.optim.Adam([ts[0]], lr=0.1)
    oe.add_param_group({"params": es[1], "lr": 0.5})
    ot.add_param_group({"params": ts[1], "lr": 0.5})
    assert oe.state_dict()["param_groups"] == ot.state_dict()["param_groups"]
    for opt, p in ((oe, es[0]), (ot, ts[0])):
        with pytest.raises(ValueError, match="more than one parameter group"):
            opt.add_param_group({"params": [p]})


@pytest.mark.parametrize("cls,kw", [
    ("Adam", {"lr": -1}), ("Adam", {"eps": -1}), ("Adam", {"betas": (1.0, 0.9)}), ("Adam", {"betas": (0.9, -0.1)}),
    ("Adam", {"weight_decay": -1}), ("AdamW", {"lr": -0.1}), ("RMSprop", {"alpha": -1}),
    ("RMSprop", {"momentum": -1}), ("Adagrad", {"lr_decay": -1}), ("Adagrad", {"initial_accumulator_value": -1}),
    ("SGD", {"momentum": 0.0, "nesterov": True}), ("SGD", {"lr": -1}),
])
def test_argument_errors(cls, kw):
    es, ts = _params(torch.float32)
    with pytest.raises(ValueError) as et:
        getattr(torch.optim, cls)(ts, **kw)
    with pytest.raises(ValueError) as ee:
        getattr(ember.optim, cls)(es, **kw)
    assert str(ee.value) == str(et.value)


@pytest.mark.parametrize("cls", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_repr_and_defaults(cls):
    es, ts = _params(torch.float32)
    oe, ot = getattr(ember.optim, cls)(es), getattr(torch.optim, cls)(ts)
    assert oe.defaults == ot.defaults
    assert repr(oe) == repr(ot)


@pytest.mark.parametrize("cls,kw", [("Adam", {"amsgrad": True}), ("RMSprop", {"momentum": 0.9, "centered": True}),
                                    ("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adagrad", {})])
def test_load_state_dict_resumes_identically(cls, kw, exact_torch_sqrt):
    oe, ot, es, ts = _run(cls, kw, steps=3)
    sd = oe.state_dict()
    es2 = [from_torch(p.detach()).requires_grad_(True) for p in ts]
    oe2 = getattr(ember.optim, cls)(es2, **kw)
    oe2.load_state_dict(sd)
    for s in range(3, 6):
        for pe, pt, g in zip(es2, ts, _grads(s, ts, torch.float32)):
            pt.grad = g.clone()
            pe.grad = from_torch(g)
        oe2.step()
        ot.step()
    for pe, pt in zip(es2, ts):
        _bits_equal(pe, pt)


def test_zero_grad_and_closure():
    es, ts = _params(torch.float32)
    oe = ember.optim.Adam(es, lr=0.1)
    for p in es:
        p.grad = ember.ones(p.shape)
    oe.zero_grad()
    assert all(p.grad is None for p in es)

    def closure():
        oe.zero_grad()
        loss = (es[0] * es[0]).sum()
        loss.backward()
        return loss

    loss = oe.step(closure)
    assert isinstance(loss, ember.Tensor)


def test_training_loop_matches(exact_torch_sqrt):
    """A small float64 model trained with Adam in both libraries from the same weights."""
    torch.manual_seed(0)
    mt = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)).double()
    d = ember.float64
    me = ember.nn.Sequential(ember.nn.Linear(4, 8, dtype=d), ember.nn.ReLU(), ember.nn.Linear(8, 3, dtype=d))
    with ember.no_grad():
        for pe, pt in zip(me.parameters(), mt.parameters()):
            pe.copy_(from_torch(pt.detach()))
    oe, ot = ember.optim.Adam(me.parameters(), lr=0.01), torch.optim.Adam(mt.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 4, generator=g, dtype=torch.float64), torch.randint(0, 3, (16,), generator=g)
    for _ in range(5):
        oe.zero_grad()
        ot.zero_grad()
        le = ember.nn.functional.cross_entropy(me(from_torch(x)), from_torch(y))
        lt = torch.nn.functional.cross_entropy(mt(x), y)
        le.backward()
        lt.backward()
        oe.step()
        ot.step()
        assert abs(le.item() - lt.item()) < 1e-12
    for pe, pt in zip(me.parameters(), mt.parameters()):
        torch.testing.assert_close(torch.tensor(pe.detach().tolist(), dtype=torch.float64), pt.detach(),
                                   rtol=1e-12, atol=1e-12)


# ---- nn.utils: gradient clipping, parameter vectors ------------------------------------------------


def _with_grads(dtype=torch.float64, scale=1.0):
    es, ts = _params(dtype)
    for pe, pt, g in zip(es, ts, _grads(0, ts, dtype)):
        pt.grad = g * scale
        pe.grad = from_torch(g * scale)
    return es, ts


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm(norm_type, max_norm):
    es, ts = _with_grads()
    ne = ember.nn.utils.clip_grad_norm_(es, max_norm, norm_type)
    nt = torch.nn.utils.clip_grad_norm_(ts, max_norm, norm_type)
    assert isinstance(ne, ember.Tensor) and ne.dim() == 0 and str(ne.dtype) == str(nt.dtype)
    assert abs(ne.item() - nt.item()) <= 1e-12 * nt.item()
    for pe, pt in zip(es, ts):
        got = torch.tensor(pe.grad.tolist(), dtype=torch.float64)
        torch.testing.assert_close(got, pt.grad, rtol=1e-12, atol=1e-12)


def test_clip_grad_norm_float32_single_tensor_and_empty():
    es, ts = _with_grads(torch.float32)
    ne = ember.nn.utils.clip_grad_norm_(es[0], 0.1)
    nt = torch.nn.utils.clip_grad_norm_(ts[0], 0.1)
    assert abs(ne.item() - nt.item()) <= 1e-6 * nt.item()
    e0 = ember.nn.utils.clip_grad_norm_([ember.zeros(2, requires_grad=True)], 1.0)
    t0 = torch.nn.utils.clip_grad_norm_([torch.zeros(2, requires_grad=True)], 1.0)
    assert e0.item() == t0.item() and str(e0.dtype) == str(t0.dtype)


def test_clip_grad_norm_nonfinite():
    es, ts = _with_grads()
    es[0].grad[0, 0] = float("inf")
    ts[0].grad[0, 0] = float("inf")
    with pytest.raises(RuntimeError) as et:
        torch.nn.utils.clip_grad_norm_(ts, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as ee:
        ember.nn.utils.clip_grad_norm_(es, 1.0, error_if_nonfinite=True)
    assert str(ee.value) == str(et.value)


def test_clip_grad_value_and_vectors():
    es, ts = _with_grads()
    ember.nn.utils.clip_grad_value_(es, 0.3)
    torch.nn.utils.clip_grad_value_(ts, 0.3)
    for pe, pt in zip(es, ts):
        _bits_equal(pe.grad, pt.grad)
    ve, vt = ember.nn.utils.parameters_to_vector(es), torch.nn.utils.parameters_to_vector(ts)
    _bits_equal(ve, vt)
    assert type(ve.grad_fn).__name__ == type(vt.grad_fn).__name__
    with ember.no_grad():
        ember.nn.utils.vector_to_parameters(ve * 2, es)
    with torch.no_grad():
        torch.nn.utils.vector_to_parameters(vt * 2, ts)
    for pe, pt in zip(es, ts):
        _bits_equal(pe, pt)
    with pytest.raises(TypeError):
        ember.nn.utils.vector_to_parameters([1.0], es)


COMPLEX_CONFIGS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.1, "maximize": True}),
    ("AdamW", {"lr": 0.1, "amsgrad": True}),
    ("Adagrad", {"lr": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
    ("Adadelta", {}),
    ("Adamax", {"lr": 0.1}),
    ("NAdam", {"lr": 0.1}),
    ("RAdam", {"lr": 0.1}),
    ("ASGD", {"lr": 0.1, "weight_decay": 0.1}),
    ("Rprop", {"lr": 0.1}),
]


@pytest.mark.parametrize("cls,kw", COMPLEX_CONFIGS, ids=lambda v: str(v))
def test_complex_parameters_update_as_two_reals(cls, kw, exact_torch_sqrt):
    """A complex parameter is updated as its real and imaginary parts, each on its own; the state
    stays complex (PyTorch's view_as_real in every optimizer)."""
    results = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        p = lib.nn.Parameter(lib.randn(3, dtype=lib.complex64))
        r = lib.nn.Parameter(lib.randn(2))
        opt = getattr(lib.optim, cls)([p, r], **kw)
        for _ in range(4):
            opt.zero_grad()
            ((p * p.conj()).real.sum() + (p.real * 2).sum() + (p.imag**3).sum() + (r**2).sum()).backward()
            opt.step()
        state = {k: (str(v.dtype), v.tolist()) for k, v in opt.state[p].items()}
        results.append((p.tolist(), r.tolist(), state))
    assert results[0] == results[1]


def test_fused_argument_checks():
    for kw in ({"fused": True, "foreach": True}, {"fused": True, "differentiable": True}):
        for cls in ("Adam", "SGD", "Adagrad"):
            with pytest.raises(RuntimeError) as want:
                getattr(torch.optim, cls)([torch.nn.Parameter(torch.ones(2))], **kw)
            with pytest.raises(RuntimeError) as got:
                getattr(ember.optim, cls)([ember.nn.Parameter(ember.ones(2))], **kw)
            assert str(got.value) == str(want.value)
    for cls in ("Adam", "SGD", "Adagrad"):
        errors = []
        for lib in (ember, torch):
            p = lib.nn.Parameter(lib.ones(2, dtype=lib.complex64))
            try:
                opt = getattr(lib.optim, cls)([p], lr=0.1, fused=True)
                p.grad = lib.ones_like(p)
                opt.step()
                errors.append(None)
            except RuntimeError as e:
                errors.append(str(e))
        assert errors[0] == errors[1] and errors[0] is not None
