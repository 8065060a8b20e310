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
    for args, kw in [((3, 4), {"dropout": 1.5}), ((3, 0), {}), ((3, 4), {"num_layers": 0}), ((0, 4), {}),
                     ((3.0, 4), {}), ((3, 4), {"bias": 1}), ((3, 4), {"batch_first": None})]:
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


# ---- the LSTM layer op (ember.mkldnn_rnn_layer, Note [LSTM layer op]) ----------------------


def _grad_fn_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _layer_case(dtype, batch_first, bidirectional, layers, with_state, grad_on, seed=0):
    """nn.LSTM in ember and torch on one input; gradients of a weighted sum of
    the outputs that are used (`grad_on` picks among output, h_n, c_n)."""
    me, mt = make("LSTM", 3, 5, dtype=dtype, seed=seed, num_layers=layers, batch_first=batch_first,
                  bidirectional=bidirectional)
    tdt = getattr(torch, dtype)
    x = randn(*((2, 4, 3) if batch_first else (4, 2, 3)), dtype=tdt, seed=seed + 1)
    hx = None
    if with_state:
        D = 2 if bidirectional else 1
        hx = (randn(layers * D, 2, 5, dtype=tdt, seed=seed + 2),
              randn(layers * D, 2, 5, dtype=tdt, seed=seed + 3))
    xe = from_torch(x)
    hxe = None if hx is None else tuple(from_torch(h) for h in hx)
    rt, re_ = outputs(mt(x, hx)), outputs(me(xe, hxe))
    tol = {"rtol": 1e-12, "atol": 1e-13} if dtype == "float64" else {"rtol": 1e-5, "atol": 1e-6}
    for a, b in zip(re_, rt):
        close(a, b, **tol)
        assert _grad_fn_name(a) == _grad_fn_name(b)
        assert a.stride() == b.stride()
    weights = [torch.linspace(-1, 1, o.numel(), dtype=tdt).reshape(o.shape) for o in rt]
    lt = sum((o * w).sum() for o, w, use in zip(rt, weights, grad_on) if use)
    le = sum((o * from_torch(w)).sum() for o, w, use in zip(re_, weights, grad_on) if use)
    lt.backward()
    le.backward()
    close(xe.grad, x.grad, **tol)
    for (n, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
        close(pe.grad, pt.grad, **tol)
    if hx is not None:
        for a, b in zip(hxe, hx):
            close(a.grad, b.grad, **tol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("batch_first,bidirectional,layers,with_state", [
    (False, False, 1, False), (True, False, 2, True), (False, True, 2, False),
    (True, True, 1, True)])
def test_lstm_layer_op_against_torch(dtype, batch_first, bidirectional, layers, with_state):
    # float32 takes PyTorch's oneDNN layer path, float64 its step-by-step one; values,
    # gradients (float64 to ~1e-12), grad_fn names and strides agree with both
    _layer_case(dtype, batch_first, bidirectional, layers, with_state, (True, True, True))


@pytest.mark.parametrize("grad_on", [(True, False, False), (False, True, False),
                                     (False, False, True), (False, True, True)])
def test_lstm_layer_op_unused_outputs(grad_on):
    # the grads of output, h_n or c_n may be undefined in the backward
    _layer_case("float64", False, True, 2, True, grad_on, seed=3)
    _layer_case("float32", True, False, 2, True, grad_on, seed=4)


def test_lstm_layer_op_graph():
    torch.manual_seed(0)
    ember.manual_seed(0)
    me, mt = ember.nn.LSTM(3, 4), torch.nn.LSTM(3, 4)
    me.load_state_dict({k: from_torch(v) for k, v in mt.state_dict().items()})
    x = randn(5, 2, 3, dtype=torch.float32)
    xe = from_torch(x)

    def names(out):
        return [None if f is None else type(f).__name__ for f, _ in out.grad_fn.next_functions]

    assert names(me(xe)[0]) == names(mt(x)[0])  # input, w_ih, w_hh, b_ih, b_hh, hx, cx
    me.requires_grad_(False)
    mt.requires_grad_(False)
    assert names(me(xe)[0]) == names(mt(x)[0])
    assert me(xe.detach())[0].grad_fn is None
    me.requires_grad_(True)
    with ember.no_grad():
        assert me(xe)[0].grad_fn is None
    # without bias the op gets zeros for b_ih, b_hh, as in PyTorch
    me, mt = ember.nn.LSTM(3, 4, bias=False), torch.nn.LSTM(3, 4, bias=False)
    assert names(me(xe)[0]) == names(mt(x)[0])
    # two layers: h_n stacks the layer ops' h outputs
    me, mt = ember.nn.LSTM(3, 4, num_layers=2), torch.nn.LSTM(3, 4, num_layers=2)
    he, ht = me(xe)[1][0], mt(x)[1][0]
    assert [(type(f).__name__, i) for f, i in he.grad_fn.next_functions] == \
        [(type(f).__name__, i) for f, i in ht.grad_fn.next_functions]
    # float64 runs the op too, its output restacked as PyTorch's float64 graph shows
    me = ember.nn.LSTM(3, 4, dtype=ember.float64)
    out = me(from_torch(randn(5, 2, 3)))[0]
    assert _grad_fn_name(out) == "StackBackward0"
    unbind = out.grad_fn.next_functions[0][0]
    assert type(unbind).__name__ == "UnbindBackward0"
    assert type(unbind.next_functions[0][0]).__name__ == "MkldnnRnnLayerBackward0"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lstm_layer_op_dropout_training(dtype):
    # dropout between layers draws the same masks as PyTorch's layer path
    me, mt = make("LSTM", 3, 4, dtype=dtype, num_layers=3, dropout=0.4)
    x = randn(5, 2, 3, dtype=getattr(torch, dtype))
    torch.manual_seed(7)
    ember.manual_seed(7)
    rt = outputs(mt(x))
    re_ = outputs(me(from_torch(x)))
    for a, b in zip(re_, rt):
        close(a, b)
        assert _grad_fn_name(a) == _grad_fn_name(b)


def test_lstm_layer_op_gradcheck():
    g = torch.Generator().manual_seed(5)
    for reverse, bias, batch_first in [(False, True, False), (True, True, True),
                                       (False, False, False)]:
        T, B, IN, H = 3, 2, 3, 2
        shapes = [(B, T, IN) if batch_first else (T, B, IN), (4 * H, IN), (4 * H, H), (4 * H,),
                  (4 * H,), (B, H), (B, H)]
        args = [from_torch(torch.randn(*s, generator=g, dtype=torch.float64) * 0.7,
                           requires_grad=True) for s in shapes]

        def f(*a):
            out, hy, cy, _ = ember.mkldnn_rnn_layer(*a, reverse, [], 2, H, 1, bias, False,
                                                    batch_first, True)
            return out, hy, cy

        assert ember.autograd.gradcheck(f, tuple(args))


def test_lstm_layer_op_edge_cases():
    # zero-size batch: PyTorch's step-by-step path, in ember too
    for dtype in ["float32", "float64"]:
        me, mt = make("LSTM", 3, 4, dtype=dtype, num_layers=2, bidirectional=True)
        x = randn(5, 0, 3, dtype=getattr(torch, dtype))
        xe = from_torch(x)
        rt, re_ = outputs(mt(x)), outputs(me(xe))
        for a, b in zip(re_, rt):
            close(a, b)
            assert _grad_fn_name(a) == _grad_fn_name(b)
        sum(o.sum() for o in rt).backward()
        sum(o.sum() for o in re_).backward()
        close(xe.grad, x.grad)
    # zero-length sequence: an error in every recurrent layer
    for name in ["LSTM", "GRU", "RNN"]:
        me, mt = make(name, 3, 4)
        same_error(lambda: me(ember.zeros((0, 2, 3), dtype=ember.float64)),
                   lambda: mt(torch.zeros((0, 2, 3), dtype=torch.float64)))
    # unsupported modes and bad shapes of the op itself
    x, w, b = ember.zeros((2, 1, 3)), ember.zeros((8, 3)), ember.zeros(8)
    h = ember.zeros((1, 2))
    with pytest.raises(RuntimeError, match="mode"):
        ember.mkldnn_rnn_layer(x, w, ember.zeros((8, 2)), b, b, h, h, False, [], 3, 2, 1, True,
                               False, False, True)
    with pytest.raises(RuntimeError, match="shape"):
        ember.mkldnn_rnn_layer(x, w, ember.zeros((8, 3)), b, b, h, h, False, [], 2, 2, 1, True,
                               False, False, True)


_CAPABILITY_SCRIPT = """
import ember, json, sys
T, B, I, H = 3, 11, 7, 40
def make(shape, seed, scale=0.3):
    n = 1
    for s in shape:
        n *= s
    v = (ember.arange(n, dtype=ember.float64) * 0.731 + seed).sin() * scale
    return v.to(ember.float32).reshape(shape).requires_grad_()
args = [make((T, B, I), 1, 1.0), make((4 * H, I), 2), make((4 * H, H), 3), make((4 * H,), 4),
        make((4 * H,), 5), make((B, H), 6, 1.0), make((B, H), 7, 1.0)]
res = []
for reverse in (False, True):
    out, hy, cy, _ = ember.mkldnn_rnn_layer(*args, reverse, [], 2, H, 1, True, False, False, True)
    (out.sin().sum() + (hy * 2).sum() + cy.cos().sum()).backward()
    res += [out, hy, cy] + [a.grad.clone() for a in args]
    for a in args:
        a.grad = None
print(json.dumps([r.reshape(-1).tolist() for r in res]))
"""


def test_lstm_layer_op_every_capability():
    # the float32 step kernel (Note [Recurrent step GEMM]) has per-capability tiles:
    # odd sizes (B = 11 rows, 4H = 160 and H = 40 columns) against PyTorch on each
    import json
    import os
    import subprocess
    import sys

    T, B, IN, H = 3, 11, 7, 40

    def make(shape, seed, scale=0.3):
        n = 1
        for s in shape:
            n *= s
        v = (torch.arange(n, dtype=torch.float64) * 0.731 + seed).sin() * scale
        return v.to(torch.float32).reshape(shape).requires_grad_()

    args = [make((T, B, IN), 1, 1.0), make((4 * H, IN), 2), make((4 * H, H), 3), make((4 * H,), 4),
            make((4 * H,), 5), make((B, H), 6, 1.0), make((B, H), 7, 1.0)]
    want = []
    for reverse in (False, True):
        x = args[0].flip(0) if reverse else args[0]
        out, hy, cy = torch._VF.lstm(x, (args[5][None], args[6][None]), args[1:5], True, 1, 0.0,
                                     False, False, False)
        out = out.flip(0) if reverse else out
        hy, cy = hy[0], cy[0]
        grads = torch.autograd.grad(out.sin().sum() + (hy * 2).sum() + cy.cos().sum(), args)
        want += [out, hy, cy, *grads]
    for cap in ("default", "avx2", "avx512"):
        r = subprocess.run([sys.executable, "-c", _CAPABILITY_SCRIPT], capture_output=True,
                           text=True, timeout=120, check=False,
                           env=dict(os.environ, EMBER_CPU_CAPABILITY=cap))
        assert r.returncode == 0, r.stderr
        for got, w in zip(json.loads(r.stdout), want):
            torch.testing.assert_close(torch.tensor(got), w.detach().reshape(-1), rtol=1e-5,
                                       atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lstm_layer_op_rows_split_over_threads(dtype):
    # large enough for the recurrence to split the batch rows over two threads
    threads = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        me, mt = make("LSTM", 6, 48, dtype=dtype, bidirectional=True)
        x = randn(5, 10, 6, dtype=getattr(torch, dtype))
        h = (randn(2, 10, 48, dtype=x.dtype, seed=2), randn(2, 10, 48, dtype=x.dtype, seed=3))
        compare_run(me, mt, x, h)
    finally:
        ember.set_num_threads(threads)


@pytest.mark.parametrize("dtype,batch_first,bidirectional", [
    ("float64", False, False), ("float64", True, True), ("float32", False, True)])
def test_lstm_layer_op_double_backward(dtype, batch_first, bidirectional):
    # with create_graph the layer's gradients are built from differentiable operators
    me, mt = make("LSTM", 3, 4, dtype=dtype, num_layers=2, batch_first=batch_first,
                  bidirectional=bidirectional)
    x = randn(2, 5, 3, dtype=getattr(torch, dtype))
    xe = from_torch(x)
    got = []
    for lib, m, xx in ((torch, mt, x), (ember, me, xe)):
        o, (hn, cn) = m(xx)
        g, = lib.autograd.grad((o * o).sum() + hn.sum() + (cn ** 2).sum(), xx, create_graph=True)
        assert g.requires_grad
        (g * g).sum().backward()
        got.append([g.detach(), xx.grad] + [p.grad for p in m.parameters()])
    tol = {"rtol": 1e-12, "atol": 1e-13} if dtype == "float64" else {}
    for t, e in zip(*got):
        close(e, t, **tol)


# ---- float32 bits: oneDNN's RNN arithmetic (Note [oneDNN LSTM arithmetic]) ------------------

# T, B, I, H, layers, bidirectional, batch_first
_BITS_CASES = [
    (4, 3, 6, 8, 2, False, False),  # the language model of tests/scripts/programs_examples.py
    (3, 11, 7, 40, 1, False, True),
    (5, 2, 10, 10, 1, True, False),  # I == H: without grad one product chain over [x, h]
    (3, 1, 5, 12, 1, True, False),  # one row: the layer products merged over the steps
    (2, 130, 8, 16, 1, False, False),  # from 128 rows the layer product runs per step
    (3, 5, 300, 64, 1, True, True),
]


def _lstm_bits(lib, case, grad):
    """Outputs (and with grad, the gradients of a weighted sum of them) of a
    float32 nn.LSTM with torch's seeded parameters, as flat lists."""
    T, B, IN, H, L, bi, bf = case
    torch.manual_seed(0)
    ref = torch.nn.LSTM(IN, H, L, bidirectional=bi, batch_first=bf)
    m = ref if lib is torch else ember.nn.LSTM(IN, H, L, bidirectional=bi, batch_first=bf)
    if lib is ember:
        with ember.no_grad():
            for (_, p), (_, q) in zip(m.named_parameters(), ref.named_parameters()):
                p.copy_(from_torch(q))
    D = 2 if bi else 1
    shapes = [(B, T, IN) if bf else (T, B, IN), (L * D, B, H), (L * D, B, H)]
    vals = [(torch.arange(n, dtype=torch.float64) * 0.731 + k).sin().reshape(s).float()
            for k, s in enumerate(shapes) for n in [s[0] * s[1] * s[2]]]
    x, h0, c0 = [(v if lib is torch else from_torch(v)).requires_grad_(grad) for v in vals]
    with lib.set_grad_enabled(grad):
        out, (hn, cn) = m(x, (h0, c0))
    res = [out, hn, cn]
    if grad:
        loss = sum((r * lib.linspace(-1, 1, r.numel()).reshape(r.shape)).sum() for r in res)
        loss.backward()
        res += [x.grad, h0.grad, c0.grad] + [p.grad for p in m.parameters()]
    return [r.detach().reshape(-1).tolist() for r in res]


@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("case", _BITS_CASES)
def test_lstm_float32_bits_match_torch(case, grad):
    # PyTorch's oneDNN RNN: forward_training and the backward with grad, the
    # brgemm forward_inference without; every value and gradient bit for bit
    got, want = _lstm_bits(ember, case, grad), _lstm_bits(torch, case, grad)
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert a == b, f"result {i} differs"


def test_lstm_float32_bits_match_torch_on_avx2_onednn():
    # with oneDNN held to AVX2 (its kernels on an AVX2 machine) in both libraries
    import os
    import subprocess
    import sys

    script = ("import sys; sys.path.insert(0, sys.argv[1]); import ember, test_rnn as t\n"
              "for case in t._BITS_CASES:\n"
              "    for grad in (True, False):\n"
              "        assert t._lstm_bits(ember, case, grad) == t._lstm_bits(t.torch, case, grad), (case, grad)\n")
    r = subprocess.run([sys.executable, "-c", script, os.path.dirname(__file__)], capture_output=True,
                       text=True, timeout=300, check=False,
                       env=dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2"))
    assert r.returncode == 0, r.stderr[-2000:]
