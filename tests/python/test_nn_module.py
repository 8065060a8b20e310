"""The module system against torch.nn: registration, traversal, repr, state_dict,
hooks, train/eval, zero_grad, and the SGD update."""

from __future__ import annotations

import pytest
from conftest import torch

import ember


def build(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.ones(2, 3))
            self.register_buffer("running", lib.zeros(3))
            self.register_buffer("scratch", lib.zeros(1), persistent=False)
            self.body = nn.Sequential(nn.ReLU(), nn.Sigmoid(), nn.Tanh())
            self.blocks = nn.ModuleList([nn.ReLU(inplace=True)])
            self.plain = 5

        def forward(self, x):
            return (x * self.w).sum()

    return Net()


def test_registration_and_traversal_match():
    e, t = build(ember), build(torch)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]
    assert list(e.state_dict().keys()) == list(t.state_dict().keys())
    assert e.plain == 5


def test_repr_matches():
    e, t = build(ember), build(torch)
    assert repr(e) == repr(t)
    assert repr(ember.nn.Sequential()) == repr(torch.nn.Sequential())


def test_parameter_repr_matches():
    pe = ember.nn.Parameter(ember.tensor([1.0, 2.5]))
    pt = torch.nn.Parameter(torch.tensor([1.0, 2.5]))
    assert repr(pe) == repr(pt)
    assert pe.requires_grad and pe.is_leaf
    assert isinstance(pe, ember.Tensor)


def test_assignment_errors_match():
    for lib in (ember, torch):
        m = build(lib)
        with pytest.raises(TypeError):
            m.w = lib.ones(2, 3)  # a plain tensor where a Parameter lives
        with pytest.raises(TypeError):
            m.body = 3
        with pytest.raises(AttributeError):
            _ = m.nope
        with pytest.raises(KeyError):
            m.register_parameter("a.b", None)


def test_train_eval_and_zero_grad():
    for lib in (ember, torch):
        m = build(lib)
        m.eval()
        assert not m.training and not m.body[0].training
        m.train()
        assert m.body[1].training
        loss = m(lib.ones(2, 3))
        loss.backward()
        assert m.w.grad is not None
        m.zero_grad()
        assert m.w.grad is None


def test_state_dict_round_trip_and_errors():
    e = build(ember)
    sd = e.state_dict()
    assert not sd["w"].requires_grad
    sd["w"] = ember.full((2, 3), 2.0)
    assert repr(e.load_state_dict(sd)) == "<All keys matched successfully>"
    assert e.w.tolist() == [[2.0] * 3] * 2
    bad = dict(sd)
    bad.pop("running")
    bad["extra"] = ember.zeros(1)
    bad["w"] = ember.zeros(3, 3)
    t = build(torch)
    tbad = {k: torch.tensor(v.tolist()) for k, v in bad.items()}
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(tbad)
    with pytest.raises(RuntimeError) as ee:
        e.load_state_dict(bad)
    assert str(ee.value) == str(te.value)
    r = e.load_state_dict({k: v for k, v in sd.items() if k != "running"}, strict=False)
    assert r.missing_keys == ["running"] and r.unexpected_keys == []


def test_forward_hooks():
    for lib in (ember, torch):
        m = build(lib)
        seen = []
        h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        h2 = m.register_forward_hook(lambda mod, args, out: seen.append(out.item()) or out * 10)
        out = m(lib.ones(2, 3))
        assert out.item() == 120.0 and seen == [12.0]
        h1.remove()
        h2.remove()
        assert m(lib.ones(2, 3)).item() == 6.0


@pytest.mark.parametrize("kw", [{}, {"momentum": 0.9}, {"momentum": 0.9, "nesterov": True},
                                {"momentum": 0.5, "dampening": 0.1, "weight_decay": 0.01}, {"maximize": True}])
def test_sgd_updates_match(kw):
    we = ember.nn.Parameter(ember.tensor([[0.5, -1.0, 2.0]]))
    wt = torch.nn.Parameter(torch.tensor([[0.5, -1.0, 2.0]]))
    oe = ember.optim.SGD([we], lr=0.1, **kw)
    ot = torch.optim.SGD([wt], lr=0.1, **kw)
    x_e, x_t = ember.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[1.0, 2.0, 3.0]])
    for _ in range(3):
        for w, x, o in ((we, x_e, oe), (wt, x_t, ot)):
            o.zero_grad()
            ((w * x) * (w * x)).sum().backward()
            o.step()
    torch.testing.assert_close(torch.tensor(we.tolist()), wt.detach(), rtol=1e-6, atol=1e-6)
    assert repr(oe) == repr(ot)
