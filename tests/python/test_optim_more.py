"""Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop and LBFGS against torch.optim:
bit-identical parameters after every step (the same single-tensor update
arithmetic), state and state_dict contents, state dicts exchanged between the
libraries, param groups, argument errors and repr."""

from __future__ import annotations

import io

import numpy as np
import pytest
from _nn_helpers import from_torch
from conftest import HAS_MKL, torch
from test_optim import _params

import ember


def _bits_equal(e, t):
    got = torch.tensor(e.detach().tolist(), dtype=t.dtype).reshape(t.shape)
    assert torch.equal(got, t.detach()), f"max diff {(got - t.detach()).abs().max()}"


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
        return (
            getattr(ember.optim, cls)([{"params": [es[0]]}, {"params": [es[1]], "lr": 0.05}], **ke),
            getattr(torch.optim, cls)([{"params": [ts[0]]}, {"params": [ts[1]], "lr": 0.05}], **kt),
        )
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


@pytest.mark.parametrize(
    "cls,kw",
    [
        ("Adadelta", {"weight_decay": 0.01}),
        ("Adamax", {"lr": 0.01}),
        ("NAdam", {"decoupled_weight_decay": True, "weight_decay": 0.1}),
        ("RAdam", {"lr": 0.01}),
        ("ASGD", {"t0": 3, "lr": 0.1}),
        ("Rprop", {}),
    ],
)
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


@pytest.mark.parametrize(
    "cls,kw",
    [
        ("Adadelta", {"weight_decay": 0.1}),
        ("Adamax", {}),
        ("NAdam", {"weight_decay": 0.1}),
        ("RAdam", {}),
        ("ASGD", {"t0": 2}),
        ("Rprop", {}),
    ],
)
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


@pytest.mark.parametrize(
    "cls,kw",
    [
        ("Adadelta", {}),
        ("Adamax", {"weight_decay": 0.1}),
        ("NAdam", {"decoupled_weight_decay": True}),
        ("RAdam", {"weight_decay": 0.1}),
        ("ASGD", {"t0": 2}),
        ("Rprop", {}),
    ],
)
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


@pytest.mark.parametrize(
    "cls,kw",
    [
        ("Adadelta", {"lr": -1.0}),
        ("Adadelta", {"rho": 1.5}),
        ("Adadelta", {"eps": -1}),
        ("Adadelta", {"weight_decay": -1}),
        ("Adamax", {"lr": -1.0}),
        ("Adamax", {"eps": -1}),
        ("Adamax", {"betas": (1.0, 0.9)}),
        ("Adamax", {"betas": (0.9, -0.1)}),
        ("Adamax", {"weight_decay": -0.5}),
        ("NAdam", {"lr": -1.0}),
        ("NAdam", {"betas": (0.9, 1.0)}),
        ("NAdam", {"momentum_decay": -1}),
        ("NAdam", {"weight_decay": -1}),
        ("RAdam", {"lr": -0.1}),
        ("RAdam", {"eps": -1e-8}),
        ("RAdam", {"betas": (-0.1, 0.9)}),
        ("ASGD", {"lr": -1.0}),
        ("ASGD", {"weight_decay": -1}),
        ("Rprop", {"lr": -1.0}),
        ("Rprop", {"etas": (1.5, 1.2)}),
        ("Rprop", {"etas": (0.5, 0.9)}),
    ],
)
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


# ---- LBFGS ---------------------------------------------------------------------------------------


@pytest.fixture
def lbfgs_oracle(monkeypatch):
    """torch's sqrt made exact (as exact_torch_sqrt, for LBFGS's 0-dim tensors too), and its
    dot and full sum computed by Ember: PyTorch's CPU dot (BLAS) and sum (vectorised
    multi-accumulator) add in other orders than Ember's, which changes their last bits; with
    the reductions made the same, every other operation of LBFGS must agree bit for bit."""
    dot, total = torch.Tensor.dot, torch.Tensor.sum

    def via_ember(fn, *ts):
        out = fn(*[from_torch(t.detach()) for t in ts])
        return torch.tensor(out.item(), dtype=ts[0].dtype)

    def sqrt(self):
        return torch.from_numpy(np.asarray(np.sqrt(self.detach().numpy())))

    def dot_(self, other):
        return dot(self, other) if self.requires_grad or other.requires_grad else via_ember(ember.dot, self, other)

    def sum_(self, *args, **kw):
        return total(self, *args, **kw) if self.requires_grad or args or kw else via_ember(ember.sum, self)

    monkeypatch.setattr(torch.Tensor, "sum", sum_)
    if HAS_MKL:
        return  # Ember's sqrt and dot are MKL's, as PyTorch's (Note [MKL for elementwise functions])
    monkeypatch.setattr(torch.Tensor, "sqrt", sqrt)
    monkeypatch.setattr(torch.Tensor, "dot", dot_)


def _rosenbrock(ts):
    x = torch.cat([t.reshape(-1) for t in ts])
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def _lbfgs_pair(kw, dtype, seed=0):
    """LBFGS in both libraries on the same parameters. The Ember closure evaluates the
    function and its gradient with torch at Ember's parameter values, so both optimisers see
    bit-identical losses and gradients and any difference is the optimiser's."""
    es, ts = _params(dtype, seed)
    oe, ot = ember.optim.LBFGS(es, **_lr(kw, ember)), torch.optim.LBFGS(ts, **_lr(kw, torch))

    def closure_t():
        ot.zero_grad()
        loss = _rosenbrock(ts)
        loss.backward()
        return loss

    def closure_e():
        oe.zero_grad()
        xs = [torch.tensor(p.detach().tolist(), dtype=dtype).reshape(tuple(p.shape)).requires_grad_(True) for p in es]
        loss = _rosenbrock(xs)
        loss.backward()
        for p, x in zip(es, xs):
            p.grad = from_torch(x.grad)
        return ember.tensor(loss.item(), dtype=getattr(ember, str(dtype).split(".")[1]))

    return oe, ot, es, ts, closure_e, closure_t


def _values_equal(ve, vt, name=""):
    if isinstance(vt, torch.Tensor):
        assert isinstance(ve, ember.Tensor) and str(ve.dtype) == str(vt.dtype), name
        _bits_equal(ve, vt)
    elif isinstance(vt, list):
        assert isinstance(ve, list) and len(ve) == len(vt), name
        for a, b in zip(ve, vt):
            _values_equal(a, b, name)
    else:
        assert type(ve) is type(vt) and ve == vt, (name, ve, vt)


def _lbfgs_state_equal(oe, ot):
    se, st = oe.state_dict(), ot.state_dict()
    for ge, gt in zip(se["param_groups"], st["param_groups"], strict=True):
        assert list(ge.keys()) == list(gt.keys())
        for name in gt:
            _values_equal(ge[name], gt[name], name)
    assert list(se["state"].keys()) == list(st["state"].keys())
    for k in st["state"]:
        assert list(se["state"][k].keys()) == list(st["state"][k].keys())
        for name in st["state"][k]:
            _values_equal(se["state"][k][name], st["state"][k][name], name)


LBFGS_CONFIGS = [
    {},
    {"lr": 0.5, "max_iter": 5, "history_size": 3},
    {"max_iter": 4, "max_eval": 6, "tolerance_change": 1e-6},
    {"line_search_fn": "strong_wolfe"},
    {"line_search_fn": "strong_wolfe", "max_iter": 7, "history_size": 2, "lr": 0.8},
    {"line_search_fn": "strong_wolfe", "max_iter": 3, "max_eval": 5},
    {"tensor_lr": 0.5, "max_iter": 5},
    {"tensor_lr": 1.0, "line_search_fn": "strong_wolfe", "max_iter": 5},
]


@pytest.mark.parametrize("kw", LBFGS_CONFIGS, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_lbfgs_bit_identical(kw, dtype, lbfgs_oracle):
    oe, ot, es, ts, closure_e, closure_t = _lbfgs_pair(kw, dtype)
    for _ in range(20):
        le, lt = oe.step(closure_e), ot.step(closure_t)
        assert le.item() == lt.item()
        for pe, pt in zip(es, ts):
            _bits_equal(pe, pt)
        _lbfgs_state_equal(oe, ot)


def test_lbfgs_converges_with_mkl_sqrt():
    """Against PyTorch's own sqrt: the same minimum."""
    oe, ot, es, ts, closure_e, closure_t = _lbfgs_pair({"line_search_fn": "strong_wolfe"}, torch.float64)
    for _ in range(10):
        oe.step(closure_e)
        ot.step(closure_t)
    for pe, pt in zip(es, ts):
        torch.testing.assert_close(
            torch.tensor(pe.detach().tolist(), dtype=torch.float64), pt.detach(), rtol=1e-6, atol=1e-6
        )


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_ember_model(line_search_fn):
    """A least-squares fit with Ember's own autograd in the closure: PyTorch's result, to rounding."""
    g = torch.Generator().manual_seed(2)
    x, y = torch.randn(32, 3, generator=g, dtype=torch.float64), torch.randn(32, 2, generator=g, dtype=torch.float64)
    w0 = torch.randn(3, 2, generator=g, dtype=torch.float64)
    wt, we = w0.clone().requires_grad_(True), from_torch(w0).requires_grad_(True)
    xe, ye = from_torch(x), from_torch(y)
    ot = torch.optim.LBFGS([wt], line_search_fn=line_search_fn, max_iter=10)
    oe = ember.optim.LBFGS([we], line_search_fn=line_search_fn, max_iter=10)

    def closure_t():
        ot.zero_grad()
        loss = ((x @ wt - y) ** 2).mean()
        loss.backward()
        return loss

    def closure_e():
        oe.zero_grad()
        loss = ((xe @ we - ye) ** 2).mean()
        loss.backward()
        return loss

    for _ in range(3):
        le, lt = oe.step(closure_e), ot.step(closure_t)
        assert abs(le.item() - lt.item()) <= 1e-12
    torch.testing.assert_close(
        torch.tensor(we.detach().tolist(), dtype=torch.float64), wt.detach(), rtol=1e-9, atol=1e-9
    )


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_state_dict_round_trips(line_search_fn, lbfgs_oracle):
    """Saved after some steps by either library and loaded into a fresh optimiser of the
    other (and of its own), LBFGS continues as the original."""
    kw = {"line_search_fn": line_search_fn, "max_iter": 4, "history_size": 5}
    oe, ot, es, ts, closure_e, closure_t = _lbfgs_pair(kw, torch.float64)
    for _ in range(3):
        oe.step(closure_e)
        ot.step(closure_t)
    buf = io.BytesIO()
    torch.save(ot.state_dict(), buf)
    buf.seek(0)
    oe2, ot2, es2, ts2, closure_e2, closure_t2 = _lbfgs_pair(kw, torch.float64)
    with ember.no_grad():
        for p, q in zip(es2, es):
            p.copy_(q)
    with torch.no_grad():
        for p, q in zip(ts2, ts):
            p.copy_(q)
    oe2.load_state_dict(ember.load(buf))
    buf = io.BytesIO()
    ember.save(oe.state_dict(), buf)
    buf.seek(0)
    ot2.load_state_dict(torch.load(buf))
    for _ in range(3):
        for opt, closure in ((oe, closure_e), (ot, closure_t), (oe2, closure_e2), (ot2, closure_t2)):
            opt.step(closure)
        for pe, pt, pe2, pt2 in zip(es, ts, es2, ts2):
            _bits_equal(pe, pt)
            _bits_equal(pe2, pt)
            assert torch.equal(pt2, pt)


def test_lbfgs_errors_and_repr():
    es, ts = _params(torch.float32)
    for kw in ({"lr": -1.0}, {"lr": -0.5, "max_iter": 3}):
        with pytest.raises(ValueError) as et:
            torch.optim.LBFGS(ts, **kw)
        with pytest.raises(ValueError) as ee:
            ember.optim.LBFGS(es, **kw)
        assert str(ee.value) == str(et.value)
    with pytest.raises(ValueError) as et:
        torch.optim.LBFGS([{"params": [ts[0]]}, {"params": [ts[1]]}])
    with pytest.raises(ValueError) as ee:
        ember.optim.LBFGS([{"params": [es[0]]}, {"params": [es[1]]}])
    assert str(ee.value) == str(et.value)
    oe, ot = ember.optim.LBFGS(es, line_search_fn="backtracking"), torch.optim.LBFGS(ts, line_search_fn="backtracking")
    assert oe.defaults == ot.defaults and repr(oe) == repr(ot)
    _feed(0, es, ts, torch.float32)
    with pytest.raises(RuntimeError) as et:
        ot.step(lambda: (ts[0] ** 2).sum())
    with pytest.raises(RuntimeError) as ee:
        oe.step(lambda: (es[0] ** 2).sum())
    assert str(ee.value) == str(et.value)
    assert ember.optim.lbfgs.LBFGS is ember.optim.LBFGS


def test_lbfgs_stops_at_optimum():
    """A gradient below tolerance_grad: one evaluation, no step, the closure's loss returned."""
    es, ts = _params(torch.float64)
    oe, ot = ember.optim.LBFGS(es), torch.optim.LBFGS(ts)
    for p, q in zip(es, ts):
        p.grad, q.grad = ember.zeros(p.shape, dtype=ember.float64), torch.zeros(q.shape, dtype=torch.float64)
    le, lt = oe.step(lambda: ember.tensor(3.0)), ot.step(lambda: torch.tensor(3.0))
    assert le.item() == lt.item() == 3.0
    _lbfgs_state_equal(oe, ot)
