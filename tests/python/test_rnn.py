"""RNN, LSTM, GRU and their cells against PyTorch: parameter names, shapes and
seeded initial values, outputs and float64 gradients, initial states,
unbatched input, inter-layer dropout, grad_fn names, reprs and errors."""

from __future__ import annotations

import pytest
from _nn_helpers import close, from_torch, same_error
from conftest import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

HYP = settings(max_examples=12, deadline=None)


def make(name, *args, dtype="float64", seed=0, **kw):
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    mt = getattr(torch.nn, name)(*args, dtype=getattr(torch, dtype), **kw)
    me = getattr(ember.nn, name)(*args, dtype=getattr(ember, dtype), **kw)
    return me, mt


def check_params(me, mt):
    ne = [(n, tuple(p.shape)) for n, p in me.named_parameters()]
    nt = [(n, tuple(p.shape)) for n, p in mt.named_parameters()]
    assert ne == nt
    for (_, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
        close(pe.detach(), pt.detach())


def randn(*shape, dtype=torch.float64, seed=1, grad=True):
    t = torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))
    return t.requires_grad_(grad)


def outputs(res):
    out, h = res
    return [out, *h] if isinstance(h, tuple) else [out, h]


def compare_run(me, mt, x, hx=None, grads=True):
    xe = from_torch(x)
    if hx is None:
        rt, re_ = mt(x), me(xe)
        hxe = None
    elif isinstance(hx, tuple):
        hxe = tuple(from_torch(h) for h in hx)
        rt, re_ = mt(x, hx), me(xe, hxe)
    else:
        hxe = from_torch(hx)
        rt, re_ = mt(x, hx), me(xe, hxe)
    ot, oe = outputs(rt), outputs(re_)
    for a, b in zip(oe, ot):
        close(a, b)
        # GRU/RNN with batch_first: PyTorch transposes its output in place
        # (TransposeBackward1); Ember has no in-place transpose_ yet.
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__.replace("TransposeBackward1", "TransposeBackward0")
    if grads:
        lt = sum((o * (i + 1)).sum() for i, o in enumerate(ot))
        le = sum((o * (i + 1)).sum() for i, o in enumerate(oe))
        lt.backward()
        le.backward()
        close(xe.grad, x.grad)
        for (n, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
            close(pe.grad, pt.grad)
        if hx is not None:
            for a, b in zip(hxe if isinstance(hxe, tuple) else (hxe,), hx if isinstance(hx, tuple) else (hx,)):
                close(a.grad, b.grad)


@HYP
@given(name=st.sampled_from(["LSTM", "GRU", "RNN"]), layers=st.integers(1, 3), bias=st.booleans(),
       batch_first=st.booleans(), bidirectional=st.booleans(), T=st.integers(1, 4), B=st.integers(1, 3),
       with_state=st.booleans(), proj=st.booleans())
def test_recurrent_random(name, layers, bias, batch_first, bidirectional, T, B, with_state, proj):
    kw = dict(num_layers=layers, bias=bias, batch_first=batch_first, bidirectional=bidirectional)
    if name == "LSTM" and proj:
        kw["proj_size"] = 2
    me, mt = make(name, 3, 4, **kw)
    check_params(me, mt)
    assert repr(me) == repr(mt)
    x = randn(*((B, T, 3) if batch_first else (T, B, 3)))
    hx = None
    if with_state:
        D = 2 if bidirectional else 1
        hs = 2 if kw.get("proj_size") else 4
        h0 = randn(layers * D, B, hs, seed=2)
        hx = (h0, randn(layers * D, B, 4, seed=3)) if name == "LSTM" else h0
    compare_run(me, mt, x, hx)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_unbatched(name):
    me, mt = make(name, 3, 4, num_layers=2, bidirectional=True)
    compare_run(me, mt, randn(5, 3))
    h0 = randn(4, 4, seed=2)
    hx = (h0, randn(4, 4, seed=3)) if name == "LSTM" else h0
    compare_run(me, mt, randn(5, 3, seed=4), hx)


def test_rnn_relu_and_float32():
    me, mt = make("RNN", 3, 4, 2, "relu")
    compare_run(me, mt, randn(4, 2, 3))
    for name in ["LSTM", "GRU"]:
        me, mt = make(name, 3, 5, num_layers=2, dtype="float32")
        x = randn(6, 2, 3, dtype=torch.float32, grad=False)
        for a, b in zip(outputs(me(from_torch(x))), outputs(mt(x))):
            close(a, b)


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_dropout_between_layers(name):
    me, mt = make(name, 3, 4, num_layers=3, dropout=0.4)
    x = randn(5, 2, 3)
    torch.manual_seed(7)
    ember.manual_seed(7)
    ot = outputs(mt(x))
    oe = outputs(me(from_torch(x)))
    for a, b in zip(oe, ot):
        close(a, b)
    me.eval()
    mt.eval()
    compare_run(me, mt, randn(5, 2, 3, seed=5))


@pytest.mark.parametrize("name,args", [("LSTMCell", (3, 4)), ("GRUCell", (3, 4)), ("RNNCell", (3, 4)),
                                       ("RNNCell", (3, 4, True, "relu")), ("LSTMCell", (3, 4, False))])
def test_cells(name, args):
    me, mt = make(name, *args)
    check_params(me, mt)
    assert repr(me) == repr(mt)
    for shape in [(2, 3), (3,)]:
        x = randn(*shape)
        xe = from_torch(x)
        st_ = (2, 4) if len(shape) == 2 else (4,)
        h = randn(*st_, seed=2)
        hx = (h, randn(*st_, seed=3)) if name == "LSTMCell" else h
        for use_state in (False, True):
            if use_state:
                hxe = tuple(from_torch(v) for v in hx) if isinstance(hx, tuple) else from_torch(hx)
                rt, re_ = mt(x, hx), me(xe, hxe)
            else:
                rt, re_ = mt(x), me(xe)
            rt = rt if isinstance(rt, tuple) else (rt,)
            re_ = re_ if isinstance(re_, tuple) else (re_,)
            for a, b in zip(re_, rt):
                close(a, b)
                assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
            sum((o * (i + 1)).sum() for i, o in enumerate(rt)).backward()
            sum((o * (i + 1)).sum() for i, o in enumerate(re_)).backward()
            close(xe.grad, x.grad)
            for pe, pt in zip(me.parameters(), mt.parameters()):
                close(pe.grad, pt.grad)


def test_state_dict_copy_float32():
    torch.manual_seed(3)
    mt = torch.nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True)
    me = ember.nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True)
    me.load_state_dict({k: from_torch(v) for k, v in mt.state_dict().items()})
    x = torch.randn(3, 5, 4)
    for a, b in zip(outputs(me(from_torch(x))), outputs(mt(x))):
        close(a, b)


def test_errors_and_reprs():
    me, mt = make("LSTM", 3, 4, num_layers=2)
    for x, hx in [(randn(5, 2, 2), None), (randn(2, 2, 2, 3), None), (randn(5, 2, 3), (randn(2, 3, 4), randn(2, 3, 4))),
                  (randn(5, 2, 3), (randn(2, 2, 4), randn(1, 2, 4))), (randn(5, 3), (randn(2, 1, 4), randn(2, 1, 4)))]:
        xe = from_torch(x)
        hxe = None if hx is None else tuple(from_torch(h) for h in hx)
        same_error(lambda: me(xe, hxe), lambda: mt(x, hx), match_message=True)
    me, mt = make("GRU", 3, 4)
    same_error(lambda: me(from_torch(randn(5, 2, 3)), from_torch(randn(1, 3, 4))),
               lambda: mt(randn(5, 2, 3), randn(1, 3, 4)), match_message=True)
    same_error(lambda: me(from_torch(randn(5, 2, 3, dtype=torch.float32))),
               lambda: mt(randn(5, 2, 3, dtype=torch.float32)), match_message=True)
    for args, kw in [((3, 4), {"dropout": 1.5}), ((3, 0), {}), ((3, 4), {"num_layers": 0})]:
        same_error(lambda: ember.nn.GRU(*args, **kw), lambda: torch.nn.GRU(*args, **kw), match_message=True)
    same_error(lambda: ember.nn.RNN(3, 4, nonlinearity="sig"), lambda: torch.nn.RNN(3, 4, nonlinearity="sig"),
               match_message=True)
    for ctor in [lambda m: m.LSTM(3, 4, 2, bias=False, batch_first=True, dropout=0.5, bidirectional=True, proj_size=2),
                 lambda m: m.RNN(3, 4, nonlinearity="relu"), lambda m: m.GRU(3, 4, 3), lambda m: m.GRUCell(3, 4),
                 lambda m: m.LSTMCell(3, 4, bias=False), lambda m: m.RNNCell(3, 4, nonlinearity="relu")]:
        assert repr(ctor(ember.nn)) == repr(ctor(torch.nn))
    with pytest.warns(UserWarning, match="dropout option adds dropout"):
        ember.nn.LSTM(3, 4, dropout=0.5)


@pytest.mark.parametrize("hidden", [1, 5, 16, 37])
@pytest.mark.parametrize("use", ["both", "h", "c"])
def test_fused_lstm_cell_matches_the_composite(hidden, use):
    # ember._lstm_cell_fused (Note [Fused LSTM cell]) against torch's gate math, float64
    g = torch.Generator().manual_seed(hidden)
    gates = torch.randn(3, 4 * hidden, generator=g, dtype=torch.float64, requires_grad=True)
    cx = torch.randn(3, hidden, generator=g, dtype=torch.float64, requires_grad=True)
    i, f, gg, o = gates.chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * gg.tanh()
    hy = o.sigmoid() * cy.tanh()
    eg = ember.tensor(gates.tolist(), dtype=ember.float64, requires_grad=True)
    ec = ember.tensor(cx.tolist(), dtype=ember.float64, requires_grad=True)
    ehy, ecy = ember._lstm_cell_fused(eg, ec)
    pick = {"both": lambda h, c: (h * 3).sum() + (c * c).sum(), "h": lambda h, c: h.sum(), "c": lambda h, c: c.sum()}
    pick[use](hy, cy).backward()
    pick[use](ehy, ecy).backward()
    for e, t in ((ehy, hy), (ecy, cy), (eg.grad, gates.grad), (ec.grad, cx.grad)):
        assert torch.allclose(torch.tensor(e.tolist(), dtype=torch.float64), t.detach(), rtol=1e-12, atol=1e-12)
    assert ember.autograd.gradcheck(lambda a, b: ember._lstm_cell_fused(a, b), (eg.detach().requires_grad_(),
                                                                              ec.detach().requires_grad_()))
